#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn fb-bench VM boots into CSVs, markdown tables and a chart.

USAGE
    bench/freeblock/report.py --events BOOT1.events [--events BOOT2.events ...]
        --kver KVER --csv OUT.csv [--cmd "make bench-freeblock"] [--vm-seconds S]
        [--md docs/freeblock-results.md] [--png docs/freeblock-bench.png]

Each boot's guest (bench/freeblock/fb-bench.sh) sends "CSV,..." notes
("guest: MOBIO NOTE CSV,<kind>,..." in run.py's events.txt); one CSV,cell row
per (round, model, level, mode). Per cell the guest gives the top device's
counter deltas over a window inside the foreground run; with every
foreground request 4 KiB and every background one max_kb, the request counts
are
    n_bg = (sectors - 8 * reads) / (2 * max_kb - 8),   n_fg = reads - n_bg.

Ratios are paired: a mode's foreground mean (or p99) response time over the
foreground alone's ("alone:none") in the same boot, round, model and level.
The background target is paired too: freeblock's MiB/s minus ionice -c3
under BFQ's in the same boot, round, model and level. Every figure is the
median over rounds and boots with a 95% percentile bootstrap interval that
resamples the boots, then the rounds within them, then the values within
those (bench/stats.py). A target is "met" when the whole interval is on the
right side of it, "not met" when the whole interval is on the wrong side,
else "not separable".
"""

import argparse
import csv
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
from guest_csv import parse  # noqa: E402
import stats  # noqa: E402

median = stats.median
interval = stats.interval

MODELS = ["plain", "crypt", "linear"]
# fbt2, fbt3, ...: the further tuned points of a sweep (run-bench.py --fb-tuned A+B+...)
FBT_POINTS = ["fbt"] + ["fbt%d" % i for i in range(2, 10)]
METHOD_ORDER = ["alone", "again", "fb"] + FBT_POINTS + ["ionice", "ionicet", "ratecap"]
TARGET_MEAN_RATIO = 1.02       # issue 14: fg mean response time within 2% of alone
BASE = "alone:none"
BFQ = "ionice:bfq"
FB_MODES = ["fb:none"] + ["%s:none" % m for m in FBT_POINTS]
CELL_FIELDS = ["round", "pos", "model", "level", "method", "sched", "rate_iops",
               "window_ms", "d_reads", "d_sectors", "d_rticks_ms", "d_ioticks_ms",
               "leaf_d_ioticks_ms", "fg_ios", "fg_runtime_ms", "fg_mean_us", "fg_p99_us",
               "fb_bytes", "fb_fg_requests", "fb_fg_delayed", "fgw_ios", "fgw_mean_us",
               "fgw_p99_us"]
MODEL_DESC = {"plain": "null_blk", "crypt": "dm-crypt over it", "linear": "dm-linear over it"}


def kv(fields):
    out = {}
    for f in fields:
        if "=" in f:
            k, v = f.split("=", 1)
            out[k] = v
    return out


def fmt(v, d=1, sign=False):
    if v is None:
        return "-"
    return ("%+.*f" if sign else "%.*f") % (d, v)


def civ(iv, d=2):
    return "-" if iv is None else "%.*f [%.*f, %.*f]" % (d, iv[0], d, iv[1], d, iv[2])


def split_mode(mode):
    m, s = mode.split(":", 1)
    return m, s


class Boot:
    def __init__(self, path, index):
        self.path, self.boot = path, index
        self.params, self.fbparams, self.fbtuned = {}, {}, ""
        self.models = {}            # name -> (top, leaf, description)
        self.calib, self.seqtop, self.fbstats = {}, {}, {}
        self.seq, self.scrub, self.skips, self.rounds = [], [], [], []
        self.cap_kibs = self.runtime = None
        self.cells = []
        for r in parse(path):
            k = r[0]
            if k == "params":
                self.params = kv(r[1:])
            elif k == "fbparams":
                self.fbparams = kv(r[1:])
            elif k == "fbtuned" and len(r) >= 3:
                self.fbtuned = "%s via %s" % (r[2].replace("/", " "), r[1])
            elif k == "model" and len(r) >= 5:
                self.models[r[1]] = (r[2], r[3], ",".join(r[4:]))
            elif k == "calib" and len(r) >= 6:
                self.calib[r[1]] = {"max_iops": int(r[2]), "util_pct": int(r[3]),
                                    "mean_us": float(r[4]), "p99_us": float(r[5])}
            elif k == "seqtop" and len(r) >= 4 and int(r[3]) > 0:
                self.seqtop[r[1]] = int(r[2]) / 1048576.0 / (int(r[3]) / 1000.0)
            elif k == "seq" and len(r) >= 4:
                self.seq.append((int(r[1]), int(r[2]), int(r[3])))
            elif k == "fullscrub" and len(r) >= 6:
                self.scrub.append((int(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5])))
            elif k == "cap":
                self.cap_kibs = int(r[1])
            elif k == "skip":
                self.skips.append(",".join(r[1:]))
            elif k == "round" and len(r) >= 5:
                self.rounds.append((int(r[1]), int(r[2]), int(r[3]), int(r[4])))
            elif k == "runtime":
                self.runtime = float(r[1])
            elif k == "fbstats" and len(r) >= 2:
                self.fbstats[r[1]] = kv(r[2:])
            elif k == "cell" and len(r) == len(CELL_FIELDS) + 1:
                c = dict(zip(CELL_FIELDS, r[1:]))
                for f in CELL_FIELDS:
                    if f not in ("model", "method", "sched"):
                        c[f] = float(c[f])
                for f in ("round", "pos", "level"):
                    c[f] = int(c[f])
                c["boot"] = index
                c["mode"] = "%s:%s" % (c["method"], c["sched"])
                self.derive(c)
                self.cells.append(c)

    def derive(self, c):
        max_kb = int(self.params.get("bg_block", "64KiB").replace("KiB", ""))
        w = c["window_ms"] / 1000.0
        n_bg = max(0.0, (c["d_sectors"] - 8 * c["d_reads"]) / (2 * max_kb - 8))
        c["bg_mib_s"] = n_bg * max_kb / 1024.0 / w if w > 0 else None
        c["util_top_pct"] = 100.0 * c["d_ioticks_ms"] / c["window_ms"] if w > 0 else None
        c["util_leaf_pct"] = 100.0 * c["leaf_d_ioticks_ms"] / c["window_ms"] if w > 0 else None
        if self.params.get("fg_write_pct", "0") == "0":
            # fb-bench.sh before its fio_job fix read a later job's reads
            # (the rate cap's) as the foreground's writes
            c["fgw_ios"] = c["fgw_mean_us"] = c["fgw_p99_us"] = 0.0
        n = c["fg_ios"] + c["fgw_ios"]
        c["fg_iops"] = 1000.0 * n / c["fg_runtime_ms"] if c["fg_runtime_ms"] > 0 else None
        # the foreground's mean response time over all its requests
        c["fg_all_mean_us"] = ((c["fg_ios"] * c["fg_mean_us"] + c["fgw_ios"] * c["fgw_mean_us"])
                               / n if n > 0 else None)


class Runs:
    def __init__(self, boots):
        self.boots = boots
        self.cells = [c for b in boots for c in b.cells]
        self.by = {}
        for c in self.cells:
            self.by[(c["model"], c["level"], c["mode"], c["boot"], c["round"])] = c
        present = {c["model"] for c in self.cells}
        self.models = [m for m in MODELS if m in present] + sorted(present - set(MODELS))
        self.levels = sorted({c["level"] for c in self.cells})
        modes = {c["mode"] for c in self.cells}
        self.modes = sorted(modes, key=lambda m: (
            METHOD_ORDER.index(split_mode(m)[0]) if split_mode(m)[0] in METHOD_ORDER else 99, m))
        self.base = BASE if BASE in modes else next((m for m in self.modes
                                                     if m.startswith("alone:")), None)
        for c in self.cells:
            b = self.by.get((c["model"], c["level"], self.base, c["boot"], c["round"]))
            ok = b and b["fg_all_mean_us"] and c["fg_all_mean_us"]
            c["base_mean_us"] = b["fg_all_mean_us"] if b else None
            c["base_p99_us"] = b["fg_p99_us"] if b else None
            c["mean_ratio"] = c["fg_all_mean_us"] / b["fg_all_mean_us"] if ok else None
            c["p99_ratio"] = (c["fg_p99_us"] / b["fg_p99_us"]
                              if ok and b["fg_p99_us"] and c["fg_p99_us"] else None)
        self._iv = {}

    def groups(self, model, level, mode, key):
        g = {}
        for c in self.cells:
            if c["model"] == model and c["level"] == level and c["mode"] == mode and \
                    c.get(key) is not None:
                g.setdefault((c["boot"], c["round"]), []).append(c[key])
        return g

    def iv(self, model, level, mode, key):
        k = (model, level, mode, key)
        if k not in self._iv:
            self._iv[k] = interval(self.groups(model, level, mode, key))
        return self._iv[k]

    def diff_iv(self, model, level, mode, other, key="bg_mib_s"):
        """mode's key minus other's, paired per boot and round"""
        k = (model, level, mode, "-" + other, key)
        if k not in self._iv:
            g = {}
            for c in self.cells:
                if c["model"] != model or c["level"] != level or c["mode"] != mode:
                    continue
                o = self.by.get((model, level, other, c["boot"], c["round"]))
                if o and c.get(key) is not None and o.get(key) is not None:
                    g.setdefault((c["boot"], c["round"]), []).append(c[key] - o[key])
            self._iv[k] = interval(g)
        return self._iv[k]

    def has(self, model, level, mode):
        return any(c["model"] == model and c["level"] == level and c["mode"] == mode
                   for c in self.cells)


def label(mode, boots):
    m, s = split_mode(mode)
    b0 = boots[0] if boots else None
    points = (b0.params.get("fb_tuned", "") if b0 else "").split("+")
    fbt = points[FBT_POINTS.index(m)].replace("/", " ") \
        if m in FBT_POINTS and FBT_POINTS.index(m) < len(points) else ""
    bfqt = b0.params.get("bfq_tuned", "").replace("/", " ") if b0 else ""
    el = "" if s == "none" else ", %s" % s
    return {"alone": "fg alone%s" % el, "again": "fg alone again%s (noise)" % el,
            "fb": "freeblock%s" % el,
            "ionice": "ionice -c3 dd, %s" % s, "ionicet": "ionice -c3 dd, %s %s" % (s, bfqt),
            "ratecap": "rate cap%s" % el}.get(m, "freeblock %s%s" % (fbt, el)
                                               if m in FBT_POINTS else mode)


def verdict_pair(dbg, dmean):
    """freeblock - BFQ on both axes, each +1 (more background; less impact),
    -1 (less; more) or 0 (the interval holds 0)"""
    if dbg is None or dmean is None:
        return "-"
    bg = 1 if dbg[1] > 0 else -1 if dbg[2] < 0 else 0
    mean = 1 if dmean[2] < 0 else -1 if dmean[1] > 0 else 0
    return {(1, 1): "better", (-1, -1): "worse", (1, -1): "trade-off", (-1, 1): "trade-off",
            (1, 0): "more bg, impact not separable", (0, 1): "less impact, bg not separable",
            (-1, 0): "less bg, impact not separable", (0, -1): "more impact, bg not separable",
            (0, 0): "not separable"}[(bg, mean)]


def verdict_bg(d):
    """freeblock - BFQ, MiB/s: >= 0 is the target"""
    if d is None:
        return "-"
    if d[1] > 0:
        return "met"
    if d[2] < 0:
        return "not met"
    if d[1] == d[2] == 0:
        return "not separable (always equal)"
    return "not separable"


def verdict_mean(r):
    if r is None:
        return "-"
    if r[2] <= TARGET_MEAN_RATIO:
        return "met"
    if r[1] > TARGET_MEAN_RATIO:
        return "not met"
    return "not separable"


def gap_bg(d, fb, bfq):
    if d is None:
        return "-"
    pct = " (%+.0f%% of BFQ's)" % (100.0 * d[0] / bfq[0]) if bfq and bfq[0] > 0 else ""
    return "%+.2f MiB/s%s" % (d[0], pct)


def gap_mean(r):
    if r is None:
        return "-"
    return "%+.1f points" % (100.0 * (r[0] - TARGET_MEAN_RATIO))


def write_csvs(runs, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    cols = ["boot", "round", "pos", "model", "level", "method", "sched", "rate_iops",
            "window_ms", "bg_mib_s", "fg_iops", "fg_all_mean_us", "fg_mean_us", "fg_p99_us",
            "fgw_mean_us", "fgw_p99_us", "base_mean_us", "base_p99_us", "mean_ratio",
            "p99_ratio", "util_top_pct", "util_leaf_pct", "fb_bytes", "fb_fg_requests",
            "fb_fg_delayed"]
    INT_COLS = {"rate_iops", "window_ms", "fb_bytes", "fb_fg_requests", "fb_fg_delayed"}
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for c in sorted(runs.cells, key=lambda c: (c["boot"], c["round"], c["pos"])):
            w.writerow(["" if c.get(k) is None else
                        "%d" % c[k] if k in INT_COLS else
                        ("%.4f" % c[k] if isinstance(c[k], float) else c[k]) for k in cols])
    spath = path[:-4] + "-summary.csv" if path.endswith(".csv") else path + ".summary"
    with open(spath, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["model", "level", "mode", "n", "bg_mib_s", "bg_lo95", "bg_hi95",
                    "mean_ratio", "mean_lo95", "mean_hi95", "p99_ratio", "p99_lo95",
                    "p99_hi95", "bg_minus_bfq", "bg_minus_bfq_lo95", "bg_minus_bfq_hi95",
                    "target_bg_ge_bfq", "target_mean_le_1.02"])
        for model in runs.models:
            for level in runs.levels:
                for mode in runs.modes:
                    if not runs.has(model, level, mode):
                        continue
                    bg = runs.iv(model, level, mode, "bg_mib_s")
                    mr = runs.iv(model, level, mode, "mean_ratio")
                    pr = runs.iv(model, level, mode, "p99_ratio")
                    d = runs.diff_iv(model, level, mode, BFQ) if mode in FB_MODES else None
                    row = [model, level, mode, bg[3] if bg else 0]
                    for iv in (bg, mr, pr, d):
                        row += ["%.4f" % x for x in iv[:3]] if iv else ["", "", ""]
                    row += [verdict_bg(d) if mode in FB_MODES else "",
                            verdict_mean(mr) if mode in FB_MODES and level > 0 else ""]
                    w.writerow(row)
    return spath


def gnuplot(script):
    if not shutil.which("gnuplot"):
        print("report: gnuplot missing (apt-get install gnuplot-nox): no chart", file=sys.stderr)
        return False
    r = subprocess.run(["gnuplot"], input=script, text=True, stderr=subprocess.PIPE)
    if r.returncode:
        print("report: gnuplot: %s" % r.stderr.strip(), file=sys.stderr)
    return r.returncode == 0


def chart(runs, png, kver):
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    modes = [m for m in runs.modes if m != runs.base]
    tmp = tempfile.mkdtemp(prefix="fb-report-")
    try:
        panels = []
        for key, ylabel, extra in (
                ("bg_mib_s", "background MiB/s (median, 95% interval)", ""),
                ("mean_ratio", "fg mean response time / alone",
                 "set arrow from graph 0, first 1.02 to graph 1, first 1.02 nohead dt 2 "
                 "lc rgb 'red'\n"),
                ("p99_ratio", "fg p99 / alone (log)", "set logscale y\n")):
            for model in runs.models:
                plots = []
                for i, mode in enumerate(modes):
                    if split_mode(mode)[0] == "alone" or \
                            (key == "bg_mib_s" and split_mode(mode)[0] == "again"):
                        continue
                    dat = os.path.join(tmp, "%s-%s-%d.dat" % (key, model, i))
                    with open(dat, "w") as f:
                        for level in runs.levels:
                            iv = runs.iv(model, level, mode, key)
                            if iv:
                                f.write("%.2f %.4f %.4f %.4f\n" % (
                                    level + (i - len(modes) / 2.0) * 0.6, iv[0], iv[1], iv[2]))
                    dash = " dt 2" if split_mode(mode)[0] == "again" else ""
                    plots.append("'%s' using 1:2:3:4 with yerrorlines lw %s lc %d%s title '%s'"
                                 % (dat, 2.5 if mode in FB_MODES else 1.2, i + 1, dash,
                                    label(mode, runs.boots)))
                panels.append("set title '%s (%s)'\nset ylabel '%s'\n%s%s\nplot %s\n"
                              "unset logscale y\nunset arrow\n" % (
                                  model, MODEL_DESC.get(model, model), ylabel,
                                  "set yrange [0:*]\n" if key == "bg_mib_s" else
                                  "set yrange [*:*]\n", extra, ", ".join(plots) or "NaN"))
        n = len(runs.models)
        return gnuplot("""
set terminal pngcairo size %d,1300 font ',9' noenhanced
set output '%s'
set multiplot layout 3,%d title "Freeblock benchmark, %s (TCG), %d boot(s): cells interleaved in shuffled rounds"
set xlabel "foreground load (%% of the model's max random 4 KiB IOPS, Poisson)"
set xrange [-4:104]
set grid
set key top right font ',8'
%s
unset multiplot
""" % (520 * n + 100, png, n, kver, len(runs.boots), "\n".join(panels)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def markdown(runs, a, spath):
    L = []
    boots = runs.boots
    b0 = boots[0]
    nrounds = sum(len({c["round"] for c in b.cells}) for b in boots)
    L.append("# Freeblock benchmark results")
    L.append("")
    L.append("Written by `bench/freeblock/report.py` from %d VM boot(s) (TCG, 2 vCPUs) on "
             "kernel %s; VM time of all boots %s s. Command:" % (
                 len(boots), a.kver, a.vm_seconds or "?"))
    L.append("")
    L.append("    %s" % a.cmd)
    L.append("")
    L.append("Boots: %s." % "; ".join(
        "boot %d: order seed %s, %d rounds of %s cells, %s s of rounds" % (
            b.boot, b.params.get("order_seed", "?"), len(b.rounds),
            b.rounds[0][2] if b.rounds else "?",
            fmt(sum(r[3] for r in b.rounds) / 1000.0, 0)) for b in boots))
    for m in runs.models:
        d = next((b.models[m] for b in boots if m in b.models), None)
        if d:
            L.append("Model %s: top /dev/%s, leaf %s: %s." % (m, d[0], d[1],
                                                              d[2].replace(";", ",")))
    L.append("Calibration (the foreground back to back, each boot): %s." % "; ".join(
        "%s %s" % (m, " / ".join("%d IOPS, mean %.0f us" % (b.calib[m]["max_iops"],
                                                           b.calib[m]["mean_us"])
                                 for b in boots if m in b.calib)) for m in runs.models))
    L.append("Sequential read of the idle top device (dd bs=1M iflag=direct): %s." % "; ".join(
        "%s %s MiB/s" % (m, " / ".join(fmt(b.seqtop.get(m), 1) for b in boots))
        for m in runs.models))
    L.append("Parameters: %s." % ", ".join("%s=%s" % x for x in b0.params.items()
                                           if x[0] not in ("boot", "order_seed")))
    L.append("freeblock.ko's module parameters as loaded: %s." % (
        ", ".join("%s=%s" % x for x in b0.fbparams.items()) or "none listed"))
    if b0.fbtuned:
        L.append("Tuned freeblock point (fbt): %s." % b0.fbtuned)
    if b0.cap_kibs:
        L.append("Rate cap: %d KiB/s (%s%% of the plain null_blk's sequential bandwidth)." % (
            b0.cap_kibs, b0.params.get("cap_pct", "?")))
    for s in sorted({s for b in boots for s in b.skips}):
        L.append("Skipped: %s." % s)
    L.append("Raw cells: `%s`; medians and intervals: `%s`." % (
        os.path.relpath(a.csv, os.getcwd()), os.path.relpath(spath, os.getcwd())))
    L.append("")
    L.append("Every figure: median over rounds and boots [95% bootstrap interval: boots, "
             "rounds within them and values within those resampled]. Ratios are paired with the foreground alone "
             "(elevator none) of the same boot, round, model and level; the background "
             "target pairs freeblock with ionice -c3 under BFQ the same way. On the dm "
             "models the elevator (BFQ for the ionice peers) is on the leaf null_blk: a "
             "bio-based dm device has none; freeblock's task, the foreground and every "
             "background reader are on the top device.")
    if nrounds < 5:
        L.append("")
        L.append("**Only %d round(s) over all boots: the intervals (and so the verdicts) "
                 "below mean nothing; this run only shows that every cell works.**" % nrounds)
    L.append("")

    # --- targets
    L.append("## Targets (issue 14)")
    L.append("")
    L.append("Per model and level, for each freeblock mode: (1) background MiB/s >= ionice "
             "-c3 under BFQ (defaults) on the same device, paired difference; (2) the "
             "foreground's mean response time within 2%% of the foreground alone "
             "(ratio <= %.2f). met / not met: the whole interval on that side; otherwise "
             "not separable. The noise column is the foreground alone run twice in the "
             "same round (again / alone)." % TARGET_MEAN_RATIO)
    L.append("")
    fbm = [m for m in FB_MODES if m in runs.modes]
    for model in runs.models:
        L.append("### %s (%s)" % (model, MODEL_DESC.get(model, model)))
        L.append("")
        L.append("| load | mode | bg MiB/s | BFQ bg MiB/s | bg - BFQ | bg >= BFQ | "
                 "fg mean / alone | mean <= 1.02 | gap | fg p99 / alone | noise: mean, "
                 "again / alone |")
        L.append("|---" * 11 + "|")
        for level in runs.levels:
            noise = runs.iv(model, level, "again:none", "mean_ratio")
            for mode in fbm:
                if not runs.has(model, level, mode):
                    continue
                bg = runs.iv(model, level, mode, "bg_mib_s")
                bq = runs.iv(model, level, BFQ, "bg_mib_s")
                d = runs.diff_iv(model, level, mode, BFQ)
                mr = runs.iv(model, level, mode, "mean_ratio")
                pr = runs.iv(model, level, mode, "p99_ratio")
                v1 = verdict_bg(d)
                v2 = verdict_mean(mr) if level > 0 else "-"
                L.append("| %d%% | %s | %s | %s | %s | %s%s | %s | %s | %s | %s | %s |" % (
                    level, label(mode, boots), civ(bg), civ(bq), civ(d), v1,
                    "" if v1 in ("met", "-", "not separable (always equal)") else " (%s)" % gap_bg(d, bg, bq), civ(mr, 3),
                    v2, gap_mean(mr) if v2 not in ("met", "-") else "-", civ(pr),
                    civ(noise, 3)))
        L.append("")

    # --- freeblock's points against BFQ's, both axes at once
    bfqs = [m for m in runs.modes if split_mode(m)[0] in ("ionice", "ionicet")
            and split_mode(m)[1] == "bfq"]
    if len(fbm) > 1 and bfqs:
        L.append("## Trade-off: every freeblock point against BFQ's idle class")
        L.append("")
        L.append("A target pair (more background and the foreground within 2%) can be out of "
                 "reach for every policy, so each freeblock point (defaults and the tuned "
                 "ones: a collide_pct sweep trades impact for progress) is also compared with "
                 "each BFQ point on both axes at once, paired per boot and round: "
                 "background MiB/s (freeblock - BFQ) and foreground mean / alone (freeblock - "
                 "BFQ). **better**: more background and less impact, both intervals on that "
                 "side; **worse**: the reverse; **trade-off**: one better and one worse; "
                 "otherwise not separable.")
        L.append("")
        for model in runs.models:
            L.append("### %s" % model)
            L.append("")
            L.append("| load | freeblock point | bg MiB/s | fg mean / alone | " +
                     " | ".join("vs %s: bg, mean" % label(b, boots) for b in bfqs) + " |")
            L.append("|---" * (4 + len(bfqs)) + "|")
            for level in runs.levels:
                if level == 0:
                    continue
                for mode in fbm:
                    if not runs.has(model, level, mode):
                        continue
                    row = [str(level) + "%", label(mode, boots),
                           civ(runs.iv(model, level, mode, "bg_mib_s")),
                           civ(runs.iv(model, level, mode, "mean_ratio"), 3)]
                    for b in bfqs:
                        db = runs.diff_iv(model, level, mode, b)
                        dm = runs.diff_iv(model, level, mode, b, "mean_ratio")
                        row.append("%s, %s: %s" % (civ(db), civ(dm, 3), verdict_pair(db, dm)))
                    L.append("| " + " | ".join(row) + " |")
            L.append("")

    # --- best points
    L.append("## Best point of each curve")
    L.append("")
    L.append("Per model and mode, over the levels: the highest background median, and the "
             "lowest and highest foreground mean ratio median (load > 0). For freeblock: "
             "the level of the largest margin over BFQ, and the levels where each target "
             "is met.")
    L.append("")
    L.append("| model | mode | best bg MiB/s (load) | lowest fg mean / alone (load) | "
             "highest fg mean / alone (load) | best bg - BFQ (load) | bg >= BFQ met at | "
             "mean <= 1.02 met at |")
    L.append("|---" * 8 + "|")
    for model in runs.models:
        for mode in runs.modes:
            if split_mode(mode)[0] in ("alone", "again"):
                continue
            bgs = [(runs.iv(model, l, mode, "bg_mib_s"), l) for l in runs.levels]
            bgs = [(iv, l) for iv, l in bgs if iv]
            mrs = [(runs.iv(model, l, mode, "mean_ratio"), l) for l in runs.levels if l > 0]
            mrs = [(iv, l) for iv, l in mrs if iv]
            best_bg = max(bgs, key=lambda x: x[0][0]) if bgs else None
            lo_mr = min(mrs, key=lambda x: x[0][0]) if mrs else None
            hi_mr = max(mrs, key=lambda x: x[0][0]) if mrs else None
            extra = ["-", "-", "-"]
            if mode in FB_MODES:
                ds = [(runs.diff_iv(model, l, mode, BFQ), l) for l in runs.levels]
                ds = [(iv, l) for iv, l in ds if iv]
                if ds:
                    bd = max(ds, key=lambda x: x[0][0])
                    extra[0] = "%s (%d%%)" % (civ(bd[0]), bd[1])
                extra[1] = ", ".join("%d%%" % l for iv, l in ds if verdict_bg(iv) == "met") \
                    or "none"
                extra[2] = ", ".join("%d%%" % l for iv, l in mrs
                                     if verdict_mean(iv) == "met") or "none"
            L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                model, label(mode, boots),
                "%s (%d%%)" % (civ(best_bg[0]), best_bg[1]) if best_bg else "-",
                "%s (%d%%)" % (civ(lo_mr[0], 3), lo_mr[1]) if lo_mr else "-",
                "%s (%d%%)" % (civ(hi_mr[0], 3), hi_mr[1]) if hi_mr else "-", *extra))
    L.append("")

    # --- per model tables
    others = [m for m in runs.modes if m != runs.base]
    for key, title, d in (("bg_mib_s", "Background MiB/s", 2),
                          ("mean_ratio", "Foreground mean response time / alone", 3),
                          ("p99_ratio", "Foreground p99 response time / alone", 2)):
        L.append("## %s" % title)
        L.append("")
        if key != "bg_mib_s":
            L.append("Paired per round with the foreground alone; the first column is the "
                     "foreground alone's %s response time in us (median over rounds)." %
                     ("mean" if key == "mean_ratio" else "p99"))
            L.append("")
        cols = runs.modes if key == "bg_mib_s" else others
        for model in runs.models:
            L.append("%s (%s):" % (model, MODEL_DESC.get(model, model)))
            L.append("")
            L.append("| load | %s%s |" % ("fg alone, us | " if key != "bg_mib_s" else "",
                                         " | ".join(label(m, boots) for m in cols)))
            L.append("|---" * (1 + len(cols) + (key != "bg_mib_s")) + "|")
            for level in runs.levels:
                if key != "bg_mib_s" and level == 0:
                    continue
                cells = [civ(runs.iv(model, level, m, key), d) if runs.has(model, level, m)
                         else "-" for m in cols]
                base = ""
                if key != "bg_mib_s":
                    bk = "fg_all_mean_us" if key == "mean_ratio" else "fg_p99_us"
                    base = "%s | " % fmt(runs.iv(model, level, runs.base, bk)[0]
                                         if runs.iv(model, level, runs.base, bk) else None, 0)
                L.append("| %d%% | %s%s |" % (level, base, " | ".join(cells)))
            L.append("")

    # --- idle
    seq = [x for b in boots for x in b.seq]
    scrub = [x for b in boots for x in b.scrub]
    if seq:
        L.append("## Idle disk: full-device scrub vs sequential read (plain null_blk)")
        L.append("")
        best_seq = max(byt / 1048576.0 / (ms / 1000.0) for _, byt, ms in seq)
        for bs in sorted({x[4] for x in scrub}):
            ok = [byt / 1048576.0 / (ms / 1000.0) for _, byt, ms, rc, b_ in scrub
                  if b_ == bs and rc == 0 and ms > 0]
            L.append("- fb-scrub --bs %dK: best %s MiB/s of dd's %.1f (%s%%), %d run(s), "
                     "%d failed" % (bs >> 10, fmt(max(ok) if ok else None, 1), best_seq,
                                    fmt(100.0 * max(ok) / best_seq if ok else None, 1),
                                    len([x for x in scrub if x[4] == bs]),
                                    len([x for x in scrub if x[4] == bs and x[3] != 0])))
        L.append("")
    for b in boots:
        for model, st in b.fbstats.items():
            if st:
                L.append("freeblock counters at the end of boot %d, %s: %s." % (
                    b.boot, model, ", ".join("%s %s" % x for x in st.items())))
    L.append("")
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", action="append", required=True,
                    help="a boot's events.txt (repeat for several boots)")
    ap.add_argument("--kver", required=True)
    ap.add_argument("--cmd", default="make bench-freeblock")
    ap.add_argument("--csv", required=True)
    ap.add_argument("--md", default=None)
    ap.add_argument("--png", default=None)
    ap.add_argument("--vm-seconds", default=None)
    a = ap.parse_args()
    boots = []
    for i, e in enumerate(a.events):
        if not os.path.exists(e):
            sys.exit("report: %s missing (did the VM run?)" % e)
        b = Boot(e, i + 1)
        if b.cells:
            boots.append(b)
        else:
            print("report: no CSV,cell rows in %s, boot left out" % e, file=sys.stderr)
    if not boots:
        sys.exit("report: no CSV,cell rows in any boot")
    runs = Runs(boots)
    if runs.base is None:
        sys.exit("report: no alone:* mode: no baseline")
    spath = write_csvs(runs, a.csv)
    md = markdown(runs, a, spath)
    print(md)
    if a.md:
        os.makedirs(os.path.dirname(os.path.abspath(a.md)), exist_ok=True)
        with open(a.md, "w") as f:
            f.write(md)
    ok = True
    if a.png:
        ok = chart(runs, a.png, a.kver)
        if ok:
            print("report: chart %s" % a.png)
    print("report: CSV %s and %s%s" % (a.csv, spath, "; table %s" % a.md if a.md else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
