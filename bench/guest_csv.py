# SPDX-License-Identifier: GPL-2.0-only
"""The rows a guest benchmark script printed with `note "CSV,..."`, read back
from run.py's events.txt, and the VM time an events file covers; shared by
the bench/*/report.py and run-bench.py scripts."""

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


def vm_seconds(events):
    """Seconds from QEMU's start to the last event of @events (run.py stamps
    events from the start of the test, after it got the VM lock), or None."""
    last = None
    try:
        with open(events) as f:
            for line in f:
                w = line.split(None, 1)
                try:
                    last = float(w[0])
                except (ValueError, IndexError):
                    pass
    except OSError:
        return None
    return last
