#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""ASAP switch benchmark, host side: --boots VM boots of bench/switch/switch-bench.sh
(every mode interleaved in each), then the CSV, the markdown table and the chart
(bench/switch/report.py), the boots merged.

USAGE
    bench/switch/run-bench.py --kver KVER [--boots 2] [--workload synthetic|sqlite]
        [--modes ideal,demand,pc0,novma,daemon,oracle,asap]
        [--apps 4] [--rounds 20] [--profile-switches 10] [--profile-min 8]
        [--anon-mb 4-8] [--file-mb 2-4] [--dwell-ms 100] [--lead-ms 0]
        [--asap-args rules=seed,...] [--out docs] [--csv FILE]

Boot b shuffles the modes' order with seed b (switchbench --order-seed; the
footprints are the same in every boot). Every mode gets --profile-switches
warm-up rounds, then --rounds measured ones. The events of boot b are kept
beside the CSV as <csv>-boot<b>.events.

The VM runs through tests/vm/run.py (its machine-wide lock: never beside
another VM); the guest script is an ad-hoc test, its parameters go on the
kernel command line as switchbench.<key>=<value>. The guest program
(build/user/guest/switchbench, from bench/switch/switchbench.c) must have been
built: `make bench-asap` does that.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from guest_csv import load_runner, require_module, run_boot  # noqa: E402 (bench/ is on the path now)
MODES = ["ideal", "demand", "pc0", "novma", "daemon", "oracle", "asap"]


def mb_range(s):
    if not re.match(r"^\d+(-\d+)?$", s):
        raise argparse.ArgumentTypeError("expected MIN-MAX in MiB, e.g. 8-16")
    return s


def modes(s):
    m = s.split(",")
    bad = [x for x in m if x not in MODES]
    if bad or not m:
        raise argparse.ArgumentTypeError("unknown mode(s) %s; modes: %s" %
                                         (",".join(bad), ",".join(MODES)))
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kver", required=True, help="guest kernel, e.g. 6.12.117+deb12-amd64")
    ap.add_argument("--modes", type=modes, default=",".join(MODES))
    ap.add_argument("--boots", type=int, default=2, help="VM boots, results merged")
    ap.add_argument("--workload", choices=["synthetic", "sqlite"], default="synthetic",
                    help="sqlite: apps dlopen libsqlite3 (a copy per mode on the data disk) "
                    "and query a --file-mb database and an --anon-mb in-memory table; no "
                    "oracle; default --out build/bench-asap-sqlite")
    ap.add_argument("--apps", type=int, default=4, help="apps per mode, switched round robin")
    ap.add_argument("--rounds", type=int, default=20, help="measured rounds")
    ap.add_argument("--profile-switches", type=int, default=10,
                    help="asap-prefetch.ko profile_switches (= warm-up rounds of every mode)")
    ap.add_argument("--profile-min", type=int, default=8,
                    help="asap-prefetch.ko profile_min")
    ap.add_argument("--anon-mb", type=mb_range, default="4-8")
    ap.add_argument("--file-mb", type=mb_range, default="2-4")
    ap.add_argument("--asap-args", default="",
                    help="more asap-prefetch.ko parameters, comma-separated, e.g. "
                    "rules=seed,workers=1")
    ap.add_argument("--dwell-ms", type=int, default=100)
    ap.add_argument("--lead-ms", type=int, default=0,
                    help="delay from the switch event to the app running")
    ap.add_argument("--out", default=None,
                    help="where asap-results.md and asap-bench.png go (default docs/, for "
                    "--workload sqlite build/bench-asap-sqlite/)")
    ap.add_argument("--csv", default=None, help="default bench/switch/results/DATE-KVER.csv")
    a = ap.parse_args()
    if not 1 <= a.apps <= 32 or a.rounds < 1 or a.profile_switches < 1 or a.boots < 1 or \
            not 1 <= a.profile_min <= a.profile_switches:
        ap.error("need 1 <= apps <= 32, rounds >= 1, boots >= 1, "
                 "1 <= profile-min <= profile-switches")
    if not os.access(os.path.join(TOP, "build", "user", "guest", "switchbench"), os.X_OK):
        sys.exit("bench-asap: build/user/guest/switchbench missing: run 'make bench-asap' "
                 "(or 'make vm-guest')")
    if "asap" in a.modes.split(","):
        require_module(TOP, a.kver, "asap-prefetch", "bench-asap")

    if a.out is None:
        a.out = os.path.join(TOP, "docs") if a.workload == "synthetic" else \
            os.path.join(TOP, "build", "bench-asap-sqlite")
    cmd = ("bench/switch/run-bench.py --kver %s --workload %s --boots %d --modes %s "
           "--apps %d --rounds %d "
           "--profile-switches %d --profile-min %d --anon-mb %s --file-mb %s "
           "--dwell-ms %d --lead-ms %d" %
           (a.kver, a.workload, a.boots, a.modes, a.apps, a.rounds, a.profile_switches,
            a.profile_min, a.anon_mb, a.file_mb, a.dwell_ms, a.lead_ms))
    if a.asap_args:
        if not re.match(r"^[a-z_]+=[^ ,]+(,[a-z_]+=[^ ,]+)*$", a.asap_args):
            ap.error("--asap-args: key=value[,key=value...]")
        cmd += " --asap-args %s" % a.asap_args
    print("bench-asap: %s" % cmd, flush=True)
    csv_path = a.csv or os.path.join(HERE, "results", "%s-%s%s.csv" % (
        time.strftime("%Y%m%d"), a.kver, "" if a.workload == "synthetic" else "-sqlite"))
    os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
    base_append = os.environ.get("MOBIO_VM_APPEND", "")

    run = load_runner(TOP)
    script = os.path.relpath(os.path.join(HERE, "switch-bench.sh"), os.getcwd())
    if os.sep not in script:
        script = os.path.join(".", script)
    events = os.path.join(TOP, "build", "vm", a.kver, "switch-bench", "events.txt")
    rc, kept, vm_total = 0, [], 0.0
    for boot in range(1, a.boots + 1):
        append = ("switchbench.modes=%s switchbench.apps=%d switchbench.rounds=%d "
                  "switchbench.profile_switches=%d switchbench.profile_min=%d "
                  "switchbench.anon_mb=%s switchbench.file_mb=%s switchbench.dwell_ms=%d "
                  "switchbench.lead_ms=%d switchbench.order_seed=%d switchbench.boot=%d "
                  "switchbench.workload=%s%s" %
                  (a.modes, a.apps, a.rounds, a.profile_switches, a.profile_min,
                   a.anon_mb, a.file_mb, a.dwell_ms, a.lead_ms, boot, boot, a.workload,
                   " switchbench.asap_args=" + a.asap_args if a.asap_args else ""))
        os.environ["MOBIO_VM_APPEND"] = (base_append + " " + append).strip()
        print("bench-asap: boot %d of %d, order seed %d" % (boot, a.boots, boot), flush=True)
        brc, vm_s, dst = run_boot(run, "bench-asap", a.kver, script, events, csv_path,
                                  boot, a.boots)
        rc = max(rc, brc)
        vm_total += vm_s or 0
        if dst:
            kept.append(dst)
    if not kept:
        sys.exit("bench-asap: no boot left events")

    rep = [sys.executable, os.path.join(HERE, "report.py"), "--kver", a.kver, "--cmd", cmd,
           "--csv", csv_path, "--vm-seconds", "%.0f" % vm_total,
           "--md", os.path.join(a.out, "asap-results.md"),
           "--png", os.path.join(a.out, "asap-bench.png")]
    for e in kept:
        rep += ["--events", e]
    notes = os.path.join(HERE, "notes.md")
    if os.path.abspath(a.out) == os.path.join(TOP, "docs") and os.path.exists(notes):
        rep += ["--notes", notes]
    return max(rc, subprocess.call(rep))


if __name__ == "__main__":
    sys.exit(main())
