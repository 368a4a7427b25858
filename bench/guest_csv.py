# SPDX-License-Identifier: GPL-2.0-only
"""The rows a guest benchmark script printed with `note "CSV,..."`, read back
from run.py's events.txt; shared by the bench/*/report.py scripts."""

MARK = "MOBIO NOTE CSV,"


def parse(path):
    """Every CSV note in @path, in order, as a list of fields (strings)."""
    rows = []
    with open(path) as f:
        for line in f:
            i = line.find(MARK)
            if i >= 0:
                rows.append(line[i + len(MARK):].rstrip("\n").split(","))
    return rows
