#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The cost of asap-prefetch.ko's fault logging: --boots VM boots of
tests/vm/guest/asap-overhead.sh (every round runs the five setups off, idle,
on, ontimed and onkret in a shuffled order), then each setup's fault loop as a ratio
to "off" of the same round, median and 95% interval (bench/stats.py), and
the probes' own ns per logged fault (measured in "ontimed" only).

USAGE
    bench/switch/overhead.py --kver KVER [--boots 2] [--rounds 30] [--md FILE]
    bench/switch/overhead.py --kver KVER --events E1 --events E2 [--md FILE]

The setups: off (module not loaded), idle (loaded, a window open for another
process: the probes run and filter), on (the app's own window, every fault
logged by the default entry probes), ontimed (the same with log_timing=1:
the probes time themselves), onkret (as on, with swapin_kretprobe=1). Boot b shuffles with seed b. The events of boot b are
kept as <csv>-boot<b>.events; --events reports on kept ones without a VM.
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import guest_csv  # noqa: E402 (bench/ is on the path now)
import stats  # noqa: E402

SETUPS = ["off", "idle", "on", "ontimed", "onkret"]
LABEL = {
    "off": "off (not loaded)",
    "idle": "idle (loaded, another app's window)",
    "on": "on: entry kprobes (default)",
    "ontimed": "on, log_timing=1",
    "onkret": "on: kretprobe (swapin_kretprobe=1)",
}


def rows_of(events, boot):
    """{(boot, round): {setup: (loop_us, logged, log_ns)}} of one events file."""
    out = {}
    for f in guest_csv.parse(events):
        if len(f) != 7 or f[0] != "ovh":
            continue
        try:
            rnd, setup = int(f[1]), f[2]
            row = (int(f[3]) + int(f[4]), int(f[5]), int(f[6]))
        except ValueError:
            # a field left empty (the app died mid-round): the boot's checks
            # fail; its other rounds still count
            print("bench-asap-overhead: %s: skipped a row: %s" % (events, ",".join(f)),
                  file=sys.stderr)
            continue
        if row[0] > 0:
            out.setdefault((boot, rnd), {})[setup] = row
    return out


def report(rounds, kver, cmd, vm_s):
    """The markdown table of @rounds ({(boot, round): {setup: ...}})."""
    boots = sorted({b for b, _ in rounds})
    lines = ["Fault loop (anon swap-ins from zram + file reads) of each setup as a ratio to "
             "\"off\" in the same round: median [95%% interval], %d rounds over %d boot(s) "
             "of %s%s." % (len(rounds), len(boots), kver,
                           ", %.0f s in the VM" % vm_s if vm_s else ""), ""]
    if cmd:
        lines += ["`%s`" % cmd, ""]
    lines += ["| setup | loop, ms (median) | ratio to off | probe ns per logged fault |",
              "| --- | --- | --- | --- |"]
    for s in SETUPS:
        loop = [r[s][0] / 1000.0 for r in rounds.values() if s in r]
        if not loop:
            continue
        ratio = {k: [r[s][0] / r["off"][0]] for k, r in rounds.items()
                 if s in r and "off" in r}
        iv = stats.interval(ratio) if s != "off" else None
        logged = sum(r[s][1] for r in rounds.values() if s in r)
        ns = sum(r[s][2] for r in rounds.values() if s in r)
        lines.append("| %s | %.0f | %s | %s |" % (
            LABEL[s], stats.median(loop),
            "%.3f [%.3f, %.3f]" % iv[:3] if iv else ("1" if s == "off" else "-"),
            "%.0f (%d faults)" % (ns / logged, logged) if s == "ontimed" and logged
            else "-"))
    on = {k: [r["on"][0] / r["onkret"][0]] for k, r in rounds.items()
          if "on" in r and "onkret" in r}
    if on:
        iv = stats.interval(on)
        verdict = "not separable" if iv[1] <= 1.0 <= iv[2] else \
            ("entry probes cheaper" if iv[2] < 1.0 else "kretprobe cheaper")
        lines += ["", "on / onkret in the same round: %.3f [%.3f, %.3f]: %s." %
                  (iv[0], iv[1], iv[2], verdict)]
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kver", required=True, help="guest kernel, e.g. 6.12.118+deb12-amd64")
    ap.add_argument("--boots", type=int, default=2, help="VM boots, results merged")
    ap.add_argument("--rounds", type=int, default=30, help="measured rounds per boot")
    ap.add_argument("--events", action="append", default=[],
                    help="report on these kept events files instead of booting")
    ap.add_argument("--csv", default=None,
                    help="where the events are kept: <csv>-boot<b>.events (default "
                    "bench/switch/results/DATE-KVER-overhead.csv)")
    ap.add_argument("--md", default=None, help="also write the table to this file")
    a = ap.parse_args()
    if a.boots < 1 or a.rounds < 1:
        ap.error("need boots >= 1 and rounds >= 1")
    cmd = "bench/switch/overhead.py --kver %s --boots %d --rounds %d" % (
        a.kver, a.boots, a.rounds)
    kept, vm_total, rc = list(a.events), 0.0, 0
    if not kept:
        guest_csv.require_module(TOP, a.kver, "asap-prefetch", "bench-asap-overhead")
        csv_path = a.csv or os.path.join(HERE, "results", "%s-%s-overhead.csv" % (
            time.strftime("%Y%m%d"), a.kver))
        os.makedirs(os.path.dirname(os.path.abspath(csv_path)), exist_ok=True)
        run = guest_csv.load_runner(TOP)
        script = os.path.relpath(os.path.join(TOP, "tests", "vm", "guest",
                                              "asap-overhead.sh"), os.getcwd())
        if os.sep not in script:
            script = os.path.join(".", script)
        events = os.path.join(TOP, "build", "vm", a.kver, "asap-overhead", "events.txt")
        base_append = os.environ.get("MOBIO_VM_APPEND", "")
        for boot in range(1, a.boots + 1):
            os.environ["MOBIO_VM_APPEND"] = (
                "%s mobio.asap_overhead_reps=%d mobio.asap_overhead_seed=%d" %
                (base_append, a.rounds, boot)).strip()
            brc, vm_s, dst = guest_csv.run_boot(run, "bench-asap-overhead", a.kver, script,
                                                events, csv_path, boot, a.boots)
            vm_total += vm_s or 0
            rc = max(rc, brc)
            if brc:
                print("bench-asap-overhead: boot %d failed (rc %d): its checks are in %s" %
                      (boot, brc, events), file=sys.stderr)
            if dst:
                kept.append(dst)
    else:
        cmd = None
        vm_total = sum(guest_csv.vm_seconds(e) or 0 for e in kept)
    rounds = {}
    for b, e in enumerate(kept, 1):
        rounds.update(rows_of(e, b))
    if not rounds:
        sys.exit("bench-asap-overhead: no rounds in %s" % ", ".join(kept) if kept else
                 "bench-asap-overhead: no boot left events")
    md = report(rounds, a.kver, cmd, vm_total)
    print(md, end="")
    if a.md:
        with open(a.md, "w") as f:
            f.write(md)
    return rc


if __name__ == "__main__":
    sys.exit(main())
