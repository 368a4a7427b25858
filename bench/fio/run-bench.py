#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""SmartIO benchmark, host side: --boots VM boots of bench/fio/smartio-bench.sh
(--rounds rounds each, every config once a round in a shuffled order), then
the CSV, the markdown tables and the charts (bench/fio/report.py).

USAGE
    bench/fio/run-bench.py --kver KVER [--parts slowdown,curve,mixed,startup]
        [--models nullb,virtio] [--scheds none,mq-deadline,kyber,bfq,smartio]
        [--runtime 8] [--throttle-bps 16777216] [--out docs]
        [--boots 2] [--rounds 2] [--seed 1] [--reps 3] [--startup-models nullb,virtio]
        [--startup-writers 0,buf1,buf5,dio1,dio5] [--startup-configs ...]

Part "startup" (issue 15, app start-up under background writes) is its own
guest script, bench/fio/startup-bench.sh, booted --boots times (boot b with
order seed SEED+b-1, --rounds rounds each); its report is
bench/fio/startup_report.py, which replaces only its own section of
smartio-results.md and draws smartio-startup.png. The other parts' boots run
first; report.py likewise replaces only its own section. Boot b of either
script shuffles with seed SEED+b-1, and each boot's events are kept beside the
CSV (<csv>-boot<b>.events).

The VM runs through tests/vm/run.py (its machine-wide lock: never beside
another VM). Two things run.py has no header for are done here:
  - the fio job files (bench/fio/*.fio) are shipped as vm-bin files, by a copy
    of the guest script in build/bench-smartio/ whose vm-bin line names them;
  - the "virtio" device model is the data disk with QEMU's
    throttling.bps-total (DESIGN.md section 9): this adds it to that disk's
    -drive option when run.py starts QEMU.
"""

import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from guest_csv import load_runner, require_module, run_boot  # noqa: E402 (bench/ is on the path now)
JOBS = ["reader.fio", "writer.fio", "mixed.fio"]
# a round of every part on both models with 8 s phases took ~20 min on TCG
VM_S_PER_ROUND = 3600


def guest_script(outdir, rounds):
    """The guest script with the job files on its vm-bin line and a timeout
    of VM_S_PER_ROUND a round."""
    src = os.path.join(HERE, "smartio-bench.sh")
    with open(src) as f:
        text = f.read()
    jobs = " ".join(os.path.join(HERE, j) for j in JOBS)
    text = re.sub(r"^# vm-bin: (.*)$", lambda m: "# vm-bin: %s %s" % (m.group(1), jobs),
                  text, count=1, flags=re.M)
    text = re.sub(r"^# vm-timeout: .*$", "# vm-timeout: %d" % (VM_S_PER_ROUND * rounds),
                  text, count=1, flags=re.M)
    os.makedirs(outdir, exist_ok=True)
    dst = os.path.join(outdir, "smartio-bench.sh")
    with open(dst, "w") as f:
        f.write(text)
    return dst


def throttle_data_disk(bps):
    """Make run.py's QEMU give the data disk a bandwidth bucket of @bps."""
    real_popen = subprocess.Popen
    if getattr(real_popen, "mobio_throttle", False):
        return

    def popen(cmd, *args, **kwargs):
        if isinstance(cmd, list) and cmd and cmd[0].startswith("qemu-system"):
            cmd = [a + ",throttling.bps-total=%d" % bps
                   if a.startswith("file=") and "/disk-data.img," in a else a
                   for a in cmd]
        return real_popen(cmd, *args, **kwargs)

    popen.mobio_throttle = True
    subprocess.Popen = popen


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kver", required=True)
    ap.add_argument("--parts", default="slowdown,curve,mixed")
    ap.add_argument("--models", default="nullb,virtio")
    ap.add_argument("--scheds", default="none,mq-deadline,kyber,bfq,smartio",
                    help="the schedulers of the slowdown and mixed parts (the curve adds "
                         "their tuned points and smartio's settings)")
    ap.add_argument("--runtime", type=int, default=8, help="seconds per fio phase")
    ap.add_argument("--throttle-bps", type=int, default=16 << 20)
    ap.add_argument("--mbps", type=int, default=16, help="null_blk budget, MiB/s")
    ap.add_argument("--out", default=os.path.join(TOP, "docs"),
                    help="where smartio-results.md and smartio-bench.png go")
    ap.add_argument("--csv", default=None,
                    help="default bench/fio/results/<date>-<kver>.csv (+ -boot<N>.events)")
    ap.add_argument("--boots", type=int, default=2,
                    help="VM boots of each guest script (smartio-bench.sh, startup-bench.sh)")
    ap.add_argument("--rounds", type=int, default=2,
                    help="rounds per boot, every config once a round in a shuffled order")
    ap.add_argument("--seed", type=int, default=1, help="order seed of boot 1 (+1 a boot)")
    g = ap.add_argument_group("part startup")
    g.add_argument("--reps", type=int, default=3,
                   help="start-ups of each app per (config, writers) cell and round")
    g.add_argument("--startup-models", default="nullb,virtio")
    g.add_argument("--startup-writers", default="0,buf1,buf5,dio1,dio5",
                   help="writer levels: 0 (idle), bufN (N buffered + fsync), dioN (N O_DIRECT)")
    g.add_argument("--startup-configs",
                   default="apart,none,mq-deadline,kyber,bfq,smartio,mq-deadline-tuned,"
                           "kyber-tuned,bfq-tuned,smartio-tuned",
                   help="schedulers (NAME, NAME-tuned, NAME@TUNABLE=V[+...]) and apart "
                        "(the control: writers on a second null_blk); any may end in "
                        ":pinned (apps on CPU 0, writers on the others)")
    g.add_argument("--wake-s", type=int, default=5, help="seconds of the wakeup phase")
    g.add_argument("--startup-csv", default=None,
                   help="default bench/fio/results/<date>-<kver>-startup.csv")
    a = ap.parse_args()
    require_module(TOP, a.kver, "smartio-iosched", "bench-smartio")
    if a.boots < 1 or a.rounds < 1 or a.reps < 1:
        ap.error("--boots, --rounds, --reps >= 1")
    parts = a.parts.split(",")
    unknown = set(parts) - {"slowdown", "curve", "mixed", "startup"}
    if unknown:
        ap.error("unknown part(s) %s" % ",".join(sorted(unknown)))
    if "curve" in parts and "slowdown" not in parts:
        ap.error("part curve needs part slowdown (its points' alone phases)")
    want_startup = "startup" in parts
    if want_startup:
        parts.remove("startup")
        if "0" not in a.startup_writers.split(","):
            ap.error("--startup-writers needs 0 (the idle baseline of every ratio)")
    rc = 0
    if parts:
        a.parts = ",".join(parts)
        rc = other_parts(a)
    if want_startup:
        rc = max(rc, startup(a))
    return rc


def run_boots(a, name, script, events, csv_path, append_of):
    """--boots boots of the guest @script, boot b with append_of(b) on the
    kernel command line and the data disk throttled; each boot's @events kept
    beside @csv_path. Returns (worst rc, kept events paths, VM seconds)."""
    base = os.environ.get("MOBIO_VM_APPEND", "")
    run = load_runner(TOP)
    throttle_data_disk(a.throttle_bps)
    rc, kept, vm_total = 0, [], 0.0
    for boot in range(1, a.boots + 1):
        os.environ["MOBIO_VM_APPEND"] = (base + " " + append_of(boot)).strip()
        brc, vm_s, dst = run_boot(run, name, a.kver, script, events, csv_path, boot, a.boots)
        rc = max(rc, brc)
        vm_total += vm_s or 0
        if dst:
            kept.append(dst)
    os.environ["MOBIO_VM_APPEND"] = base
    if not kept:
        print("%s: no boot left events" % name, file=sys.stderr)
    return rc, kept, vm_total


def startup(a):
    """Part startup: --boots boots of startup-bench.sh, then its report."""
    sys.path.insert(0, HERE)
    import startup_app
    outdir = os.path.join(TOP, "build", "bench-smartio")
    os.makedirs(outdir, exist_ok=True)
    startup_app.build(os.path.join(outdir, "startup-app.img"))
    subprocess.check_call(["cc", "-O2", "-Wall", "-Wextra", "-o",
                           os.path.join(outdir, "startup-run"),
                           os.path.join(HERE, "startup-run.c")])
    cmd = ("bench/fio/run-bench.py --kver %s --parts startup --boots %d --rounds %d "
           "--reps %d --seed %d --startup-models %s --startup-writers %s "
           "--startup-configs %s --wake-s %d --throttle-bps %d --mbps %d" %
           (a.kver, a.boots, a.rounds, a.reps, a.seed, a.startup_models, a.startup_writers,
            a.startup_configs, a.wake_s, a.throttle_bps, a.mbps))
    print("bench-smartio-startup: %s" % cmd, flush=True)
    csv_path = a.startup_csv or os.path.join(HERE, "results", "%s-%s-startup.csv" %
                                             (time.strftime("%Y%m%d"), a.kver))
    os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
    events = os.path.join(TOP, "build", "vm", a.kver, "startup-bench", "events.txt")
    t_all = time.time()
    rc, kept, vm_total = run_boots(
        a, "bench-smartio-startup", os.path.join(HERE, "startup-bench.sh"), events, csv_path,
        lambda boot: ("startup.models=%s startup.configs=%s startup.writers=%s "
                      "startup.rounds=%d startup.reps=%d startup.seed=%d startup.boot=%d "
                      "startup.mbps=%d startup.wake_s=%d" %
                      (a.startup_models, a.startup_configs, a.startup_writers, a.rounds,
                       a.reps, a.seed + boot - 1, boot, a.mbps, a.wake_s)))
    if not kept:
        return 1
    print("bench-smartio-startup: %d boot(s) in %.0f s (%.0f s in the VMs)" %
          (a.boots, time.time() - t_all, vm_total), flush=True)
    rep = [sys.executable, os.path.join(HERE, "startup_report.py"), "--kver", a.kver,
           "--cmd", cmd, "--csv", csv_path, "--vm-seconds", "%.0f" % vm_total,
           "--throttle-bps", str(a.throttle_bps),
           "--md", os.path.join(a.out, "smartio-results.md"),
           "--png", os.path.join(a.out, "smartio-startup.png")]
    for e in kept:
        rep += ["--events", e]
    return max(rc, subprocess.call(rep))


def other_parts(a):
    """The parts of smartio-bench.sh: --boots boots of --rounds rounds each."""
    outdir = os.path.join(TOP, "build", "bench-smartio")
    script = guest_script(outdir, a.rounds)
    cmd = ("bench/fio/run-bench.py --kver %s --parts %s --models %s --scheds %s "
           "--runtime %d --throttle-bps %d --mbps %d --boots %d --rounds %d --seed %d" %
           (a.kver, a.parts, a.models, a.scheds, a.runtime, a.throttle_bps, a.mbps,
            a.boots, a.rounds, a.seed))
    print("bench-smartio: %s" % cmd, flush=True)
    csv_path = a.csv or os.path.join(HERE, "results", "%s-%s.csv" %
                                     (time.strftime("%Y%m%d"), a.kver))
    os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
    events = os.path.join(TOP, "build", "vm", a.kver, "smartio-bench", "events.txt")
    t_all = time.time()
    rc, kept, _ = run_boots(
        a, "bench-smartio", script, events, csv_path,
        lambda boot: ("fiobench.parts=%s fiobench.models=%s fiobench.scheds=%s "
                      "fiobench.runtime=%d fiobench.mbps=%d fiobench.rounds=%d "
                      "fiobench.seed=%d fiobench.boot=%d" %
                      (a.parts, a.models, a.scheds, a.runtime, a.mbps, a.rounds,
                       a.seed + boot - 1, boot)))
    if not kept:
        return 1
    print("bench-smartio: %d boot(s) in %.0f s" % (a.boots, time.time() - t_all), flush=True)
    rep = [sys.executable, os.path.join(HERE, "report.py"), "--kver", a.kver,
           "--cmd", cmd, "--csv", csv_path,
           "--md", os.path.join(a.out, "smartio-results.md"),
           "--png", os.path.join(a.out, "smartio-bench.png"),
           "--throttle-bps", str(a.throttle_bps)]
    for e in kept:
        rep += ["--events", e]
    return max(rc, subprocess.call(rep))


if __name__ == "__main__":
    sys.exit(main())
