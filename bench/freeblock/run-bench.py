#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Freeblock benchmark, host side: one VM boot with bench/freeblock/fb-bench.sh,
then the CSV, the markdown table and the chart (bench/freeblock/report.py).

USAGE
    bench/freeblock/run-bench.py --kver KVER [--levels 0,10,...,100]
        [--methods base:none,fb:none,...] [--runtime 5] [--service-us 1000]
        [--cap-pct 10] [--fg-write-pct 0] [--guest-idle poll|default]
        [--out docs] [--csv FILE]

--fg-write-pct W makes W % of the foreground's random 4 KiB requests writes
(fio rw=randrw, the same rates); its outputs get a "-wW" suffix
(docs/freeblock-results-wW.md, ...), so they sit beside the read-only run.

The guest script is an ad-hoc test of tests/vm/run.py (a path to a .sh):
run.py ships it in the test's extra cpio with its vm-kmod and vm-bin (fio)
and takes the machine-wide VM lock, so this never runs beside another VM.
The guest's parameters go on the kernel command line (fbbench.<key>=...).

--guest-idle poll boots the guest with idle=poll. Under TCG a halted vCPU
wakes late for the device's completion timer (a request took ~3 ms on an
idle guest against ~1.4 ms on a busy one), so background work that keeps a
vCPU busy can make the foreground look faster than alone. idle=poll did not
cure it here (2 host cores: the spinning vCPUs starve QEMU's own threads;
back-to-back IOPS fell from 685 to 549), so the default is the plain idle.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
LEVELS = "0,10,20,30,40,50,60,70,80,90,100"
# base:ELEVATOR is the foreground alone under that elevator; a method without
# its own base is compared with base:none (bfq has its own: it is the target);
# again:none repeats base:none at the end of each level (the noise floor)
METHODS = ("base:none,fb:none,fbd1:none,ratecap:none,ionice:none,ionice:mq-deadline,"
           "ionice:kyber,base:bfq,ionice:bfq,ionice:smartio,again:none")


def check_list(ap, name, value, pattern):
    import re
    if not re.match(pattern, value):
        ap.error("bad --%s %r" % (name, value))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kver", required=True, help="kernel to boot (full name)")
    ap.add_argument("--levels", default=LEVELS,
                    help="foreground levels, %% of the calibrated max IOPS")
    ap.add_argument("--methods", default=METHODS,
                    help="METHOD:ELEVATOR pairs; METHOD is base, fb, ionice, ratecap")
    ap.add_argument("--runtime", type=int, default=4, help="seconds per phase (>= 2)")
    ap.add_argument("--service-us", type=int, default=1000,
                    help="null_blk completion time per request, us")
    ap.add_argument("--max-kb", type=int, default=64, help="largest request, KiB")
    ap.add_argument("--cap-pct", type=int, default=10,
                    help="rate-capped peer: %% of the sequential bandwidth")
    ap.add_argument("--fg-write-pct", type=int, default=0,
                    help="%% of the foreground's requests that are writes (0-90)")
    ap.add_argument("--guest-idle", choices=["poll", "default"], default="default",
                    help="guest idle loop (idle=poll: no late timer wake-ups on TCG)")
    ap.add_argument("--out", default=os.path.join(TOP, "docs"),
                    help="where freeblock-results.md and freeblock-bench.png go")
    ap.add_argument("--csv", default=None,
                    help="default bench/freeblock/results/<date>-<kver>.csv")
    a = ap.parse_args()
    check_list(ap, "levels", a.levels, r"^\d{1,3}(,\d{1,3})*$")
    check_list(ap, "methods", a.methods,
               r"^(base|again|fb|fbd1|ionice|ratecap):[a-z-]+"
               r"(,(base|again|fb|fbd1|ionice|ratecap):[a-z-]+)*$")
    if a.runtime < 2 or a.service_us < 10 or not 4 <= a.max_kb <= 1024 or \
            not 1 <= a.cap_pct <= 100 or any(int(x) > 100 for x in a.levels.split(",")) or \
            not 0 <= a.fg_write_pct <= 90:
        ap.error("--runtime >= 2, --service-us >= 10, --max-kb 4..1024, "
                 "--cap-pct 1..100, --fg-write-pct 0..90, levels 0..100")
    suffix = "-w%d" % a.fg_write_pct if a.fg_write_pct else ""

    append = ("fbbench.levels=%s fbbench.methods=%s fbbench.runtime=%d "
              "fbbench.service_us=%d fbbench.max_kb=%d fbbench.cap_pct=%d "
              "fbbench.fg_write_pct=%d" %
              (a.levels, a.methods, a.runtime, a.service_us, a.max_kb, a.cap_pct,
               a.fg_write_pct))
    if a.guest_idle == "poll":
        append += " idle=poll"
    os.environ["MOBIO_VM_APPEND"] = (os.environ.get("MOBIO_VM_APPEND", "") + " " +
                                     append).strip()
    cmd = ("bench/freeblock/run-bench.py --kver %s --levels %s --methods %s "
           "--runtime %d --service-us %d --max-kb %d --cap-pct %d --fg-write-pct %d "
           "--guest-idle %s" %
           (a.kver, a.levels, a.methods, a.runtime, a.service_us, a.max_kb, a.cap_pct,
            a.fg_write_pct, a.guest_idle))
    print("bench-freeblock: %s" % cmd, flush=True)

    spec = importlib.util.spec_from_file_location(
        "mobio_vm_run", os.path.join(TOP, "tests", "vm", "run.py"))
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    t0 = time.time()
    sys.argv = ["run.py", "test", "--kver", a.kver, os.path.join(HERE, "fb-bench.sh")]
    rc = run.main()
    vm_s = time.time() - t0
    events = os.path.join(TOP, "build", "vm", a.kver, "fb-bench", "events.txt")
    print("bench-freeblock: VM done in %.0f s (rc %d; includes any wait for the VM "
          "lock); events in %s" % (vm_s, rc, os.path.relpath(events, TOP)), flush=True)

    csv_path = a.csv or os.path.join(HERE, "results", "%s-%s%s.csv" %
                                     (time.strftime("%Y%m%d"), a.kver, suffix))
    rep = [sys.executable, os.path.join(HERE, "report.py"), "--events", events,
           "--kver", a.kver, "--cmd", cmd, "--csv", csv_path,
           "--md", os.path.join(a.out, "freeblock-results%s.md" % suffix),
           "--png", os.path.join(a.out, "freeblock-bench%s.png" % suffix)]
    return max(rc, subprocess.call(rep))


if __name__ == "__main__":
    sys.exit(main())
