#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""SmartIO benchmark, host side: one VM boot with bench/fio/smartio-bench.sh,
then the CSV, the markdown table and the chart (bench/fio/report.py).

USAGE
    bench/fio/run-bench.py --kver KVER [--parts slowdown,curve,mixed,launch]
        [--models nullb,virtio] [--scheds none,mq-deadline,kyber,bfq,smartio]
        [--runtime 8] [--throttle-bps 16777216] [--out docs]

The VM runs through tests/vm/run.py (its machine-wide lock: never beside
another VM). Two things run.py has no header for are done here:
  - the fio job files (bench/fio/*.fio) are shipped as vm-bin files, by a copy
    of the guest script in build/bench-smartio/ whose vm-bin line names them;
  - the "virtio" device model is the data disk with QEMU's
    throttling.bps-total (DESIGN.md section 9): this adds it to that disk's
    -drive option when run.py starts QEMU.
"""

import argparse
import importlib.util
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
JOBS = ["reader.fio", "writer.fio", "mixed.fio"]


def guest_script(outdir):
    """The guest script with the job files on its vm-bin line."""
    src = os.path.join(HERE, "smartio-bench.sh")
    with open(src) as f:
        text = f.read()
    jobs = " ".join(os.path.join(HERE, j) for j in JOBS)
    text = re.sub(r"^# vm-bin: (.*)$", lambda m: "# vm-bin: %s %s" % (m.group(1), jobs),
                  text, count=1, flags=re.M)
    os.makedirs(outdir, exist_ok=True)
    dst = os.path.join(outdir, "smartio-bench.sh")
    with open(dst, "w") as f:
        f.write(text)
    return dst


def throttle_data_disk(bps):
    """Make run.py's QEMU give the data disk a bandwidth bucket of @bps."""
    real_popen = subprocess.Popen

    def popen(cmd, *args, **kwargs):
        if isinstance(cmd, list) and cmd and cmd[0].startswith("qemu-system"):
            cmd = [a + ",throttling.bps-total=%d" % bps
                   if a.startswith("file=") and "/disk-data.img," in a else a
                   for a in cmd]
        return real_popen(cmd, *args, **kwargs)

    subprocess.Popen = popen


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kver", required=True)
    ap.add_argument("--parts", default="slowdown,curve,mixed,launch")
    ap.add_argument("--models", default="nullb,virtio")
    ap.add_argument("--scheds", default="none,mq-deadline,kyber,bfq,smartio")
    ap.add_argument("--runtime", type=int, default=8, help="seconds per fio phase")
    ap.add_argument("--throttle-bps", type=int, default=16 << 20)
    ap.add_argument("--mbps", type=int, default=16, help="null_blk budget, MiB/s")
    ap.add_argument("--out", default=os.path.join(TOP, "docs"),
                    help="where smartio-results.md and smartio-bench.png go")
    ap.add_argument("--csv", default=None)
    a = ap.parse_args()

    outdir = os.path.join(TOP, "build", "bench-smartio")
    script = guest_script(outdir)
    append = ("fiobench.parts=%s fiobench.models=%s fiobench.scheds=%s "
              "fiobench.runtime=%d fiobench.mbps=%d" %
              (a.parts, a.models, a.scheds, a.runtime, a.mbps))
    os.environ["MOBIO_VM_APPEND"] = (os.environ.get("MOBIO_VM_APPEND", "") + " " + append).strip()
    cmd = ("bench/fio/run-bench.py --kver %s --parts %s --models %s --scheds %s "
           "--runtime %d --throttle-bps %d --mbps %d" %
           (a.kver, a.parts, a.models, a.scheds, a.runtime, a.throttle_bps, a.mbps))
    print("bench-smartio: %s" % cmd, flush=True)

    spec = importlib.util.spec_from_file_location("mobio_vm_run",
                                                  os.path.join(TOP, "tests", "vm", "run.py"))
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    throttle_data_disk(a.throttle_bps)
    t0 = time.time()
    sys.argv = ["run.py", "test", "--kver", a.kver, script]
    rc = run.main()
    events = os.path.join(TOP, "build", "vm", a.kver, "smartio-bench", "events.txt")
    print("bench-smartio: VM done in %.0f s (rc %d); events in %s" %
          (time.time() - t0, rc, os.path.relpath(events, TOP)), flush=True)

    csv_path = a.csv or os.path.join(HERE, "results", "%s-%s.csv" %
                                     (time.strftime("%Y%m%d"), a.kver))
    rep = [sys.executable, os.path.join(HERE, "report.py"), "--events", events,
           "--kver", a.kver, "--cmd", cmd, "--csv", csv_path,
           "--md", os.path.join(a.out, "smartio-results.md"),
           "--png", os.path.join(a.out, "smartio-bench.png"),
           "--throttle-bps", str(a.throttle_bps)]
    return max(rc, subprocess.call(rep))


if __name__ == "__main__":
    sys.exit(main())
