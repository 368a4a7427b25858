# SPDX-License-Identifier: GPL-2.0-only
"""The rows a guest benchmark script printed with `note "CSV,..."`, read back
from run.py's events.txt, the VM time an events file covers, and one boot of
a guest benchmark script; shared by the bench/*/report.py and run-bench.py
scripts."""

import importlib.util
import os
import shutil
import sys
import time

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


def require_module(top, kver, name, prog):
    """Exit with a clear message when build/@kver/modules/@name/@name.ko is
    missing: the initramfs ships whatever .ko files are built, so a bench
    booted without it would run its cells with no module to load."""
    ko = os.path.join(top, "build", kver, "modules", name, name + ".ko")
    if not os.path.exists(ko):
        sys.exit("%s: %s is missing: run 'make modules KVER=%s' first" %
                 (prog, os.path.relpath(ko, top), kver))


def load_runner(top):
    """tests/vm/run.py of the tree at @top, loaded as a module: run_boot()
    calls its main() once per boot."""
    spec = importlib.util.spec_from_file_location("mobio_vm_run",
                                                  os.path.join(top, "tests", "vm", "run.py"))
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    return run


def run_boot(run, name, kver, script, events, csv_path, boot, boots):
    """Boot @kver once with the guest script @script through @run (the loaded
    tests/vm/run.py), printing progress as @name; keep its @events file as
    <csv_path without .csv>-boot<boot>.events. Returns (rc, VM seconds or
    None, the kept events path or None)."""
    t0 = time.time()
    if os.path.exists(events):
        os.unlink(events)
    sys.argv = ["run.py", "test", "--kver", kver, script]
    rc = run.main() or 0
    vm_s = vm_seconds(events)
    print("%s: boot %d of %d done in %.0f s, %s s of it in the VM (rc %d)" %
          (name, boot, boots, time.time() - t0, "%.0f" % vm_s if vm_s else "?", rc),
          flush=True)
    if not os.path.exists(events):
        return rc, vm_s, None
    dst = "%s-boot%d.events" % (csv_path[:-4] if csv_path.endswith(".csv") else csv_path, boot)
    shutil.copyfile(events, dst)
    return rc, vm_s, dst


def splice_section(path, begin, end, section):
    """Write @section (which starts with the marker @begin and ends with @end)
    into the markdown file @path in place of the text between those markers,
    or append it when they are missing; the rest of the file is kept: each
    report owns only its own section of a results page."""
    old = ""
    if os.path.exists(path):
        with open(path) as f:
            old = f.read()
    if begin in old and end in old:
        i, j = old.index(begin), old.index(end) + len(end)
        new = old[:i] + section.rstrip("\n") + old[j:]
    else:
        new = old.rstrip("\n") + ("\n\n" if old else "") + section
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(new)
