#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn startup-bench VM boots into a CSV, the "App start-up under background
writes" section of docs/smartio-results.md and its chart.

USAGE
    bench/fio/startup_report.py --events BOOT1.events [--events BOOT2.events ...]
        (one file a boot, numbered in the order given: runs made apart pool)
        --kver KVER --csv OUT.csv [--cmd "..."] [--vm-seconds S]
        [--md docs/smartio-results.md] [--png docs/smartio-startup.png]

Input: the "CSV,start|wphase|wake|sparams|smodel,..." notes of
bench/fio/startup-bench.sh. A start-up's ratio is its wall time over the
median idle (writers "0") start-up of the same app, config, model, boot and
round. Every figure is the median with a 95% percentile bootstrap interval
that resamples the boots, then the rounds of each boot drawn, then the
start-ups of each round drawn (bench/stats.py). Two intervals that overlap
are "not separable". The targets (issue
15): smartio's start-up beside writers <= 1.15x of idle, and at least as good
as bfq's (defaults, low_latency on) in the same runs; each other scheduler
config of the run (not smartio's own points, not the control) is compared
with smartio of the same pinning too. Only the section between
the markers <!-- startup:begin --> and <!-- startup:end --> of --md is
rewritten (appended when missing); the rest of the file is kept.
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from guest_csv import parse, splice_section  # noqa: E402

import stats  # noqa: E402

median = stats.median
interval = stats.interval

BEGIN, END = "<!-- startup:begin -->", "<!-- startup:end -->"
CONFIGS = ["apart", "none", "mq-deadline", "kyber", "bfq", "smartio", "mq-deadline-tuned",
           "kyber-tuned", "bfq-tuned", "smartio-tuned"]
APPS = ["python", "sqlite", "gdb"]
TARGET = 1.15
START = ["boot", "round", "pos", "model", "config", "writers", "app", "rep", "wall_us",
         "majflt", "status"]
WPHASE = ["boot", "round", "model", "config", "writers", "ms", "write_sectors", "read_sectors"]
# since 2026-12-06 a wphase also counts the guest's CPU ticks, busy and all
WPHASE_CPU = WPHASE + ["cpu_busy", "cpu_all"]
WAKE = ["boot", "round", "model", "config", "ms", "loc", "res", "timer", "hrtimer", "irqs"]
# since 2026-12-05 the wake phase also counts the I/Os completed in it
WAKE_IOS = WAKE + ["reads", "writes"]


def rows_of(rows, kind, names):
    out = []
    for r in rows:
        if r[0] == kind and len(r) == len(names) + 1:
            d = dict(zip(names, r[1:]))
            for k in names:
                if k in ("writers", "config", "model", "app"):
                    continue
                try:
                    d[k] = int(d[k])
                except ValueError:
                    pass
            out.append(d)
    return out


def renumber(rows, boot):
    for r in rows:
        r["boot"] = boot
    return rows


def pct(v, p):
    v = sorted(v)
    if not v:
        return None
    i = p / 100.0 * (len(v) - 1)
    lo = int(i)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (i - lo)


def level_order(levels):
    def key(w):
        return (0, 0) if w == "0" else (1 if w.startswith("buf") else 2, int(w[3:]))
    return sorted(levels, key=key)


def level_name(w):
    if w == "0":
        return "idle"
    return "%s %s" % (w[3:], "buffered+fsync" if w.startswith("buf") else "O_DIRECT")


class Data:
    def __init__(self, paths):
        self.start, self.wphase, self.wake, self.params, self.models = [], [], [], [], {}
        self.bad = []
        for i, p in enumerate(paths):
            rows = parse(p)
            # an events file is one boot: boot i + 1 in the order given, so
            # that runs made apart (each numbering its boots from 1) pool
            start = renumber(rows_of(rows, "start", START), i + 1)
            self.start += [s for s in start if s["status"] == 0]
            self.bad += [s for s in start if s["status"] != 0]
            self.wphase += renumber(rows_of(rows, "wphase", WPHASE) +
                                    rows_of(rows, "wphase", WPHASE_CPU), i + 1)
            self.wake += renumber(rows_of(rows, "wake", WAKE) + rows_of(rows, "wake", WAKE_IOS),
                                  i + 1)
            self.params += [",".join(r[1:]) for r in rows if r[0] == "sparams"]
            self.models.update({r[1]: ",".join(r[2:]) for r in rows if r[0] == "smodel"})
        present = {s["config"] for s in self.start}
        self.configs = [c for c in CONFIGS if c in present] + sorted(present - set(CONFIGS))
        self.levels = level_order({s["writers"] for s in self.start})
        self.apps = [a for a in APPS if a in {s["app"] for s in self.start}]
        self.boots = sorted({s["boot"] for s in self.start})
        base = {}
        for s in self.start:
            if s["writers"] == "0":
                base.setdefault((s["boot"], s["round"], s["model"], s["config"], s["app"]),
                                []).append(s["wall_us"])
        self.base = {k: median(v) for k, v in base.items()}

    def groups(self, model, config, writers, app=None, boot=None, ref=None):
        """{(boot, round): [ratios]}: each start-up over the median idle start-up
        of the same app, config, boot and round, or with REF over the median
        start-up of config REF at the same writers, app, boot and round"""
        base = self.base
        if ref:
            walls = {}
            for s in self.start:
                if (s["model"], s["config"], s["writers"]) == (model, ref, writers):
                    walls.setdefault((s["boot"], s["round"], model, config, s["app"]),
                                     []).append(s["wall_us"])
            base = {k: median(v) for k, v in walls.items()}
        out = {}
        for s in self.start:
            if (s["model"], s["config"], s["writers"]) != (model, config, writers) or \
                    (app and s["app"] != app) or (boot and s["boot"] != boot):
                continue
            b = base.get((s["boot"], s["round"], model, config, s["app"]))
            if b:
                out.setdefault((s["boot"], s["round"]), []).append(s["wall_us"] / b)
        return out

    def iv(self, *args, **kw):
        return interval(self.groups(*args, **kw))

    def walls(self, model, config, writers, app):
        return [s["wall_us"] / 1000.0 for s in self.start
                if (s["model"], s["config"], s["writers"], s["app"]) ==
                (model, config, writers, app)]

    def wmib(self, model, config, writers):
        v = [w["write_sectors"] * 512 / 1048576.0 / (w["ms"] / 1000.0) for w in self.wphase
             if (w["model"], w["config"], w["writers"]) == (model, config, writers) and w["ms"]]
        return median(v) if v else None

    def cpu_busy(self, model, config, writers):
        """median share of the guest's CPU time busy in the cells (0-1), or None"""
        v = [w["cpu_busy"] / float(w["cpu_all"]) for w in self.wphase
             if (w["model"], w["config"], w["writers"]) == (model, config, writers) and
             w.get("cpu_all")]
        return median(v) if v else None

    def wake_rates(self, model, config):
        v = [w for w in self.wake if (w["model"], w["config"]) == (model, config) and w["ms"]]
        if not v:
            return None
        r = {k: median([w[k] * 1000.0 / w["ms"] for w in v]) for k in WAKE_RATES}
        # per I/O: on null_blk (irqmode=2) every completion is a timer interrupt
        io = [w for w in v if w.get("reads", 0) + w.get("writes", 0) > 0]
        r["ios"] = median([(w["reads"] + w["writes"]) * 1000.0 / w["ms"] for w in io]) \
            if io else None
        for k in ("loc", "irqs"):
            r[k + "_io"] = median([w[k] / float(w["reads"] + w["writes"]) for w in io]) \
                if io else None
        return r


WAKE_RATES = ("loc", "res", "timer", "hrtimer", "irqs")
WAKE_PER_IO = ("ios", "loc_io", "irqs_io")


def wake_cells(r, missing):
    """A wake_rates row as text: the per-second rates, then I/Os/s and the per-I/O
    ratios (MISSING where the phase counted no I/O)."""
    return (["%.0f" % r[k] for k in WAKE_RATES] +
            [missing if r[k] is None else "%.*f" % (0 if k == "ios" else 2, r[k])
             for k in WAKE_PER_IO])


def civ(iv, d=2):
    return "-" if iv is None else "%.*f [%.*f, %.*f]" % (d, iv[0], d, iv[1], d, iv[2])


# how smartio compares with a peer, in words (compare()'s results)
VERDICT = {"better": "better than", "not separable": "not separable from",
           "worse": "worse than"}


def pin_of(config):
    """":pinned" for a pinned config, else ""."""
    return ":pinned" if config.endswith(":pinned") else ""


def is_peer(config):
    """A scheduler config smartio is compared with: not smartio's own points,
    not the control."""
    sched = config.split(":")[0].split("@")[0]
    return sched != "apart" and not sched.startswith("smartio")


def compare(a, b):
    """a vs b (lower is better): better, worse or not separable"""
    if a is None or b is None:
        return "-"
    if a[2] < b[1]:
        return "better"
    if a[1] > b[2]:
        return "worse"
    return "not separable"


def write_csv(d, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "config", "writers", "app", "n", "median_ms", "p90_ms",
                    "ratio_median", "ratio_lo", "ratio_hi", "writers_mib_s", "cpu_busy"])
        for m in d.models:
            for c in d.configs:
                for lv in d.levels:
                    for app in d.apps + ["all"]:
                        walls = [x for a in d.apps for x in d.walls(m, c, lv, a)] \
                            if app == "all" else d.walls(m, c, lv, app)
                        if not walls:
                            continue
                        iv = d.iv(m, c, lv, None if app == "all" else app)
                        wm, cb = d.wmib(m, c, lv), d.cpu_busy(m, c, lv)
                        w.writerow([m, c, lv, app, len(walls), "%.1f" % median(walls),
                                    "%.1f" % pct(walls, 90)] +
                                   (["%.3f" % x for x in iv[:3]] if iv else ["", "", ""]) +
                                   ["%.2f" % wm if wm is not None else "",
                                    "%.3f" % cb if cb is not None else ""])
        w.writerow([])
        w.writerow(["model", "config", "wake_ms", "loc_per_s", "res_per_s", "timer_softirq_per_s",
                    "hrtimer_softirq_per_s", "all_irqs_per_s", "ios_per_s", "loc_per_io",
                    "all_irqs_per_io"])
        for m in d.models:
            for c in d.configs:
                r = d.wake_rates(m, c)
                if r:
                    w.writerow([m, c, ""] + wake_cells(r, ""))


def gnuplot(script):
    if not shutil.which("gnuplot"):
        print("startup_report: gnuplot missing (apt-get install gnuplot-nox): no chart",
              file=sys.stderr)
        return False
    r = subprocess.run(["gnuplot"], input=script, text=True, stderr=subprocess.PIPE)
    if r.returncode:
        print("startup_report: gnuplot: %s" % r.stderr.strip(), file=sys.stderr)
    return r.returncode == 0


def chart(d, png):
    model = "nullb" if "nullb" in d.models else next(iter(d.models))
    busy = [lv for lv in d.levels if lv != "0"]
    with tempfile.TemporaryDirectory() as tmp:
        bars = os.path.join(tmp, "bars.dat")
        with open(bars, "w") as f:
            for c in d.configs:
                vals = []
                for lv in busy:
                    iv = d.iv(model, c, lv)
                    vals += list(iv[:3]) if iv else [0, 0, 0]
                f.write("%s %s\n" % (c, " ".join("%.3f" % x for x in vals)))
        pts = os.path.join(tmp, "pts.dat")
        with open(pts, "w") as f:
            for i, lv in enumerate(busy):
                for c in d.configs:
                    iv, wm = d.iv(model, c, lv), d.wmib(model, c, lv)
                    if iv and wm is not None:
                        f.write("%d %.3f %.3f %s\n" % (i, wm, iv[0], c))
        cols = ", ".join(
            "'%s' using %d:%d:%d%s title '%s'" % (
                bars if i == 0 else "", 2 + 3 * i, 3 + 3 * i, 4 + 3 * i,
                ":xtic(1)" if i == 0 else "", level_name(lv))
            for i, lv in enumerate(busy))
        pplots = ", ".join(
            "'%s' using ($1 == %d ? $2 : 1/0):3 with points pt %d ps 1.4 title '%s', "
            "'' using ($1 == %d ? $2 : 1/0):3:4 with labels offset 0,0.7 font ',7' notitle"
            % (pts, i, 5 + 2 * i, level_name(lv), i) for i, lv in enumerate(busy))
        return gnuplot("""
set terminal png size 1300,560 noenhanced
set output '%s'
set multiplot layout 1,2 title "App start-up under background writes, %s model: start-up time / idle start-up (same scheduler, boot, round)"
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.7 border -1
set logscale y
set ylabel "start-up beside writers / idle (median, 95%% interval)"
set xtics rotate by -30
set grid ytics
set key top left
set arrow 1 from graph 0, first %g to graph 1, first %g nohead dt 2 lc rgb 'red'
plot %s
unset arrow 1
unset style
set style data points
set xtics norotate
set title "trade-off: writers' throughput vs start-up ratio"
set xlabel "writers' MiB/s during the start-ups"
set ylabel "start-up ratio (median)"
set logscale y
unset logscale x
set grid
set key top left
plot %s, %g with lines dt 2 lc rgb 'red' title 'target 1.15x'
unset multiplot
""" % (png, model, TARGET, TARGET, cols, pplots, TARGET))


def markdown(d, a, png):
    L = [BEGIN, "## App start-up under background writes", "",
         "Command: `%s` (kernel %s), %d boot(s); %.0f s in the VMs. Parameters: %s." % (
             a.cmd, a.kver, len(d.boots), a.vm_seconds or 0,
             "; ".join(sorted(set(p.split(",boot=")[0] + "," + ",".join(
                 x for x in p.split(",") if not x.startswith(("boot=", "seed=", "kernel=")))
                 for p in d.params)))), "",
         "Cold start-ups (page cache dropped, then chroot + exec, bench/fio/startup-run.c) of "
         "python3.11 importing json, decimal, email, sqlite3, asyncio, xml.etree, http.client, "
         "argparse, logging and csv; sqlite3 (the CLI) running three queries on a ~5 MiB "
         "database; gdb -batch (10 MiB binary, ~60 libraries). Binaries, libraries and data "
         "are on an ext4 image on the device under test (bench/fio/startup_app.py); the "
         "writers write the raw region after it on the same device: N buffered writers "
         "(16 KiB, fsync every 32 writes) or N O_DIRECT streams (128 KiB, 8 in flight). "
         "In each round every scheduler config comes once, in a shuffled order, and runs "
         "its writer levels in a shuffled order. A ratio is a start-up over the median idle "
         "start-up of the same app, config, boot and round; figures are medians "
         "[95% bootstrap interval: boots, rounds within them, start-ups within those "
         "resampled]; overlapping intervals are "
         "\"not separable\". Tuned points: kyber-tuned read_lat_nsec, mq-deadline-tuned "
         "read_expire/writes_starved, bfq-tuned low_latency=1 + slice_idle, smartio-tuned "
         "target_slowdown_pct (values in the parameters). Config apart, where run, is the control: "
         "the app's device alone under none, the writers on a second null_blk of the same model, "
         "so its ratios are what the writers cost the app beside its device (CPUs, memory, "
         "writeback), a floor no scheduler of the device goes below. A config ending in "
         ":pinned runs the apps on CPU 0 and the writers on the other CPUs (their kernel "
         "threads are not pinned). "
         "TCG: absolute times mean little, ratios do.", ""]
    for m, desc in d.models.items():
        extra = (" (throttling.bps-total=%d)" % a.throttle_bps) if m == "virtio" else ""
        L.append("- model **%s**: %s%s" % (m, desc, extra))
    L.append("")
    if d.bad:
        L += ["%d start-ups exited non-zero and are left out." % len(d.bad), ""]
    busy = [lv for lv in d.levels if lv != "0"]
    for m in d.models:
        L += ["### Model %s: start-up beside writers / idle (all apps)" % m, "",
              "| config | " + " | ".join(level_name(lv) for lv in busy) + " |",
              "|---|" + "---|" * len(busy)]
        for c in d.configs:
            cells = []
            for lv in busy:
                iv, s = d.iv(m, c, lv), d.iv(m, "smartio" + pin_of(c), lv)
                cmp = "" if not is_peer(c) or not s else " (smartio %s)" % compare(s, iv)
                cells.append(civ(iv) + cmp)
            L.append("| %s | %s |" % (c, " | ".join(cells)))
        L += ["", "Writers' throughput during the start-ups (MiB/s written to the device, "
              "median%s):" % ("; apart's to its own device" if "apart" in d.configs else ""), "", "| config | " + " | ".join(level_name(lv) for lv in busy) + " |",
              "|---|" + "---|" * len(busy)]
        for c in d.configs:
            L.append("| %s | %s |" % (c, " | ".join(
                "%.1f" % x if x is not None else "-" for x in
                (d.wmib(m, c, lv) for lv in busy))))
        if any(d.cpu_busy(m, c, lv) is not None for c in d.configs for lv in d.levels):
            L += ["", "Guest CPU busy during the cells (share of all its CPUs' time, median):", "",
                  "| config | " + " | ".join(level_name(lv) for lv in d.levels) + " |",
                  "|---|" + "---|" * len(d.levels)]
            for c in d.configs:
                L.append("| %s | %s |" % (c, " | ".join(
                    "%.0f%%" % (100 * x) if x is not None else "-" for x in
                    (d.cpu_busy(m, c, lv) for lv in d.levels))))
        L += ["", "Per app: start-up median / p90 in ms (n), ratio to idle:", "",
              "| config | app | " + " | ".join(level_name(lv) for lv in d.levels) + " |",
              "|---|---|" + "---|" * len(d.levels)]
        for c in d.configs:
            for app in d.apps:
                cells = []
                for lv in d.levels:
                    w = d.walls(m, c, lv, app)
                    if not w:
                        cells.append("-")
                        continue
                    iv = d.iv(m, c, lv, app)
                    cells.append("%.0f / %.0f (%d)%s" % (
                        median(w), pct(w, 90), len(w),
                        "" if lv == "0" or not iv else ", %.2fx" % iv[0]))
                L.append("| %s | %s | %s |" % (c, app, " | ".join(cells)))
        woke = [c for c in d.configs if d.wake_rates(m, c)]
        if woke:
            L += ["", "Wakeups while a 4 KiB O_DIRECT reader runs beside one O_DIRECT "
                  "writer (per second, median; LOC = local timer interrupts, RES = "
                  "rescheduling IPIs, both CPUs; null_blk completes each I/O from a timer, "
                  "so the last columns divide by the I/Os completed):", "",
                  "| config | LOC/s | RES/s | TIMER softirq/s | HRTIMER softirq/s | "
                  "all IRQs/s | I/Os/s | LOC per I/O | IRQs per I/O |",
                  "|---|---|---|---|---|---|---|---|---|"]
            for c in woke:
                L.append("| %s | %s |" % (c, " | ".join(wake_cells(d.wake_rates(m, c),
                                                                  "-"))))
        L += ["", "Targets (issue 15), model %s:" % m, ""]
        for lv in busy:
            # each pair at its defaults, and pinned (apps on CPU 0) where run
            for pin in ("", ":pinned"):
                s, b = d.iv(m, "smartio" + pin, lv), d.iv(m, "bfq" + pin, lv)
                if not s:
                    continue
                t = "holds" if s[2] <= TARGET else "does not hold" if s[1] > TARGET else \
                    "not separable"
                L.append("- %s: smartio%s %s: <= %.2fx of idle %s; %s" % (
                    level_name(lv), pin, civ(s), TARGET, t,
                    "bfq%s not run" % pin if not b else "smartio %s bfq%s %s" % (
                        VERDICT[compare(s, b)], pin, civ(b))))
                by = {}
                for c in d.configs:
                    if is_peer(c) and pin_of(c) == pin and c != "bfq" + pin and \
                            d.iv(m, c, lv):
                        by.setdefault(compare(s, d.iv(m, c, lv)), []).append(c)
                if by:
                    L.append("  - vs the other scheduler configs of the run: smartio " + "; ".join(
                        "%s %s" % (VERDICT[k], ", ".join(by[k]))
                        for k in ("better", "not separable", "worse") if k in by))
                for boot in d.boots:
                    sb = d.iv(m, "smartio" + pin, lv, boot=boot)
                    bb = d.iv(m, "bfq" + pin, lv, boot=boot)
                    if sb and bb and len(d.boots) > 1:
                        L.append("  - boot %d: smartio%s %s, bfq%s %s" % (
                            boot, pin, civ(sb), pin, civ(bb)))
                ap = d.iv(m, "apart" + pin, lv)
                if not ap:
                    continue
                over = d.iv(m, "smartio" + pin, lv, ref="apart" + pin)
                L.append("  - the control apart%s (writers on another device%s) is %s of "
                         "idle%s; smartio%s's start-ups over apart%s's (same level, app, "
                         "boot): %s" % (
                             pin, pin and ", apps on their own CPU", civ(ap),
                             ": the target is below what the writers cost "
                             "without sharing the device" if ap[1] > TARGET else "",
                             pin, pin, civ(over)))
        L.append("")
    if png:
        L += ["![start-up chart](%s)" % os.path.basename(png), ""]
    L.append(END)
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", action="append", required=True)
    ap.add_argument("--kver", required=True)
    ap.add_argument("--cmd", default="make bench-smartio-startup")
    ap.add_argument("--csv")
    ap.add_argument("--md")
    ap.add_argument("--png")
    ap.add_argument("--vm-seconds", type=float, default=0)
    ap.add_argument("--throttle-bps", type=int, default=0)
    a = ap.parse_args()
    d = Data(a.events)
    if not d.start:
        print("startup_report: no start-ups in %s" % ", ".join(a.events), file=sys.stderr)
        return 1
    if a.csv:
        write_csv(d, a.csv)
        print("startup_report: CSV %s" % a.csv)
    ok = bool(a.png) and chart(d, a.png)
    if ok:
        print("startup_report: chart %s" % a.png)
    md = markdown(d, a, a.png if ok else None)
    print(md)
    if a.md:
        splice_section(a.md, BEGIN, END, md)
        print("startup_report: section in %s" % a.md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
