#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Freeblock benchmark, host side: --boots VM boots of bench/freeblock/fb-bench.sh
(every model, level and mode interleaved in each), then the CSVs, the markdown
tables and the chart (bench/freeblock/report.py), the boots merged.

USAGE
    bench/freeblock/run-bench.py --kver KVER [--boots 2] [--rounds 3]
        [--models plain,crypt,linear] [--levels 0,20,40,60,80,100]
        [--modes alone:none,again:none,fb:none,fbt:none,ionice:bfq,ionicet:bfq,ratecap:none]
        [--fb-tuned depth=1[+collide_pct=30+...]] [--bfq-tuned slice_idle=0] [--seed 1]
        [--runtime 3] [--service-us 1000] [--cap-pct 10] [--fg-write-pct 0]
        [--guest-idle poll|default] [--out docs] [--csv FILE]

Models: plain (the null_blk), crypt (dm-crypt aes-xts-plain64 over it), linear
(dm-linear over it). Modes are METHOD:ELEVATOR, the elevator of the leaf
null_blk: alone (the foreground alone, the baseline of every ratio), again
(the same again: the noise floor), fb (freeblock-scrub, defaults), fbt
(freeblock at the --fb-tuned point; with several points, "+"-separated, fbt is
the first and fbt2, fbt3, ... the others: a sweep of one tunable, e.g.
collide_pct=10+collide_pct=30+collide_pct=100, in the same rounds as its
peers), ionice (ionice -c3 dd), ionicet (the
same with --bfq-tuned written to the elevator's tunables), ratecap (fio
rate=, --cap-pct of the sequential bandwidth).

Boot b shuffles each round's cells with seed (SEED+b-1)*1000+round; every
boot runs --rounds rounds. The events of boot b are kept beside the CSV as
<csv>-boot<b>.events.

--fg-write-pct W makes W % of the foreground's random 4 KiB requests writes
(fio rw=randrw, the same rates); its outputs get a "-wW" suffix
(docs/freeblock-results-wW.md, ...), so they sit beside the read-only run.

The guest script is an ad-hoc test of tests/vm/run.py (a path to a .sh):
run.py ships it in the test's extra cpio with its vm-kmod and vm-bin (fio,
dmsetup) and takes the machine-wide VM lock, so this never runs beside
another VM of this tree. The guest's parameters go on the kernel command line
(fbbench.<key>=...).

--guest-idle poll boots the guest with idle=poll. Under TCG a halted vCPU
wakes late for the device's completion timer (a request took ~3 ms on an
idle guest against ~1.4 ms on a busy one), so background work that keeps a
vCPU busy can make the foreground look faster than alone. idle=poll did not
cure it here (2 host cores: the spinning vCPUs starve QEMU's own threads;
back-to-back IOPS fell from 685 to 549), so the default is the plain idle.
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
LEVELS = "0,20,40,60,80,100"
MODELS = ["plain", "crypt", "linear"]
METHODS = ["alone", "again", "fb", "fbt", "ionice", "ionicet", "ratecap"]
MODES = "alone:none,again:none,fb:none,fbt:none,ionice:bfq,ionicet:bfq,ratecap:none"
KV_LIST = r"^[a-z_]+=[0-9a-z]+(,[a-z_]+=[0-9a-z]+)*$"
MAX_FB_POINTS = 9


def expand_fbt(modes, points):
    """--modes with fbt:ELEVATOR standing for one mode per tuned point:
    fbt (the first point), fbt2, fbt3, ..."""
    out = []
    for m in modes.split(","):
        out.append(m)
        if m.startswith("fbt:"):
            out += ["fbt%d:%s" % (i, m.split(":", 1)[1]) for i in range(2, len(points) + 1)]
    return ",".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kver", required=True, help="kernel to boot (full name)")
    ap.add_argument("--boots", type=int, default=2, help="VM boots, results merged")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per boot")
    ap.add_argument("--seed", type=int, default=1, help="order seed of boot 1 (+1 a boot)")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--levels", default=LEVELS,
                    help="foreground levels, %% of the model's calibrated max IOPS")
    ap.add_argument("--modes", default=MODES, help="METHOD:ELEVATOR pairs")
    ap.add_argument("--fb-tuned", default="depth=1",
                    help="freeblock's tuned point (fbt): NAME=VALUE,... of `mobioctl fb set`; "
                    "several points +-separated (fbt, fbt2, ...)")
    ap.add_argument("--bfq-tuned", default="slice_idle=0",
                    help="the tuned elevator (ionicet): NAME=VALUE,... of queue/iosched/")
    ap.add_argument("--runtime", type=int, default=3, help="seconds per cell (>= 2)")
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
    require_module(TOP, a.kver, "freeblock", "bench-freeblock")
    if not re.match(r"^\d{1,3}(,\d{1,3})*$", a.levels) or \
            any(int(x) > 100 for x in a.levels.split(",")):
        ap.error("bad --levels %r (0..100, comma-separated)" % a.levels)
    models = a.models.split(",")
    if not models or any(m not in MODELS for m in models):
        ap.error("bad --models %r: %s" % (a.models, ",".join(MODELS)))
    for m in a.modes.split(","):
        if not re.match(r"^(%s):[a-z-]+$" % "|".join(METHODS), m):
            ap.error("bad mode %r: METHOD:ELEVATOR, METHOD one of %s" % (m, ",".join(METHODS)))
    if not any(m.startswith("alone:") for m in a.modes.split(",")):
        ap.error("--modes needs an alone:ELEVATOR mode (the baseline of every ratio)")
    points = a.fb_tuned.split("+")
    for name, v in [("fb-tuned", p) for p in points] + [("bfq-tuned", a.bfq_tuned)]:
        if not re.match(KV_LIST, v):
            ap.error("bad --%s %r: NAME=VALUE,..." % (name, v))
    if len(points) > MAX_FB_POINTS:
        ap.error("--fb-tuned: at most %d points" % MAX_FB_POINTS)
    guest_modes = expand_fbt(a.modes, points)
    if a.runtime < 2 or a.service_us < 10 or not 4 <= a.max_kb <= 1024 or \
            not 1 <= a.cap_pct <= 100 or not 0 <= a.fg_write_pct <= 90 or \
            a.boots < 1 or a.rounds < 1:
        ap.error("--runtime >= 2, --service-us >= 10, --max-kb 4..1024, "
                 "--cap-pct 1..100, --fg-write-pct 0..90, --boots >= 1, --rounds >= 1")
    suffix = "-w%d" % a.fg_write_pct if a.fg_write_pct else ""
    cmd = ("bench/freeblock/run-bench.py --kver %s --boots %d --rounds %d --seed %d "
           "--models %s --levels %s --modes %s --fb-tuned %s --bfq-tuned %s --runtime %d "
           "--service-us %d --max-kb %d --cap-pct %d --fg-write-pct %d --guest-idle %s" %
           (a.kver, a.boots, a.rounds, a.seed, a.models, a.levels, a.modes, a.fb_tuned,
            a.bfq_tuned, a.runtime, a.service_us, a.max_kb, a.cap_pct, a.fg_write_pct,
            a.guest_idle))
    print("bench-freeblock: %s" % cmd, flush=True)
    csv_path = a.csv or os.path.join(HERE, "results", "%s-%s%s.csv" %
                                     (time.strftime("%Y%m%d"), a.kver, suffix))
    os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
    base_append = os.environ.get("MOBIO_VM_APPEND", "")

    run = load_runner(TOP)
    events = os.path.join(TOP, "build", "vm", a.kver, "fb-bench", "events.txt")
    rc, kept, vm_total, t_all = 0, [], 0.0, time.time()
    for boot in range(1, a.boots + 1):
        seed = a.seed + boot - 1
        append = ("fbbench.models=%s fbbench.levels=%s fbbench.modes=%s fbbench.rounds=%d "
                  "fbbench.order_seed=%d fbbench.boot=%d fbbench.fb_tuned=%s "
                  "fbbench.bfq_tuned=%s fbbench.runtime=%d fbbench.service_us=%d "
                  "fbbench.max_kb=%d fbbench.cap_pct=%d fbbench.fg_write_pct=%d" %
                  (a.models, a.levels, guest_modes, a.rounds, seed, boot, a.fb_tuned,
                   a.bfq_tuned, a.runtime, a.service_us, a.max_kb, a.cap_pct,
                   a.fg_write_pct))
        if a.guest_idle == "poll":
            append += " idle=poll"
        os.environ["MOBIO_VM_APPEND"] = (base_append + " " + append).strip()
        print("bench-freeblock: boot %d of %d, order seed %d" % (boot, a.boots, seed),
              flush=True)
        brc, vm_s, dst = run_boot(run, "bench-freeblock", a.kver,
                                  os.path.join(HERE, "fb-bench.sh"), events,
                                  csv_path, boot, a.boots)
        rc = max(rc, brc)
        vm_total += vm_s or 0
        if dst:
            kept.append(dst)
    if not kept:
        sys.exit("bench-freeblock: no boot left events")
    print("bench-freeblock: %d boot(s) in %.0f s (%.0f s in the VMs)" %
          (a.boots, time.time() - t_all, vm_total), flush=True)

    rep = [sys.executable, os.path.join(HERE, "report.py"), "--kver", a.kver, "--cmd", cmd,
           "--csv", csv_path, "--vm-seconds", "%.0f" % vm_total,
           "--md", os.path.join(a.out, "freeblock-results%s.md" % suffix),
           "--png", os.path.join(a.out, "freeblock-bench%s.png" % suffix)]
    for e in kept:
        rep += ["--events", e]
    return max(rc, subprocess.call(rep))


if __name__ == "__main__":
    sys.exit(main())
