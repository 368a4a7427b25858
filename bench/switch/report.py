#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn switch-bench VM boots into a CSV, a summary, a markdown table and a chart.

USAGE
    bench/switch/report.py --events BOOT1.events [--events BOOT2.events ...]
        --kver KVER --csv OUT.csv [--cmd "make bench-asap"] [--vm-seconds S]
        [--md docs/asap-results.md] [--png docs/asap-bench.png] [--notes notes.md]

Each boot's guest (bench/switch/switch-bench.sh running switchbench) sends its
results as notes ("guest: MOBIO NOTE CSV,<kind>,..." in run.py's events.txt):

    CSV,setup,...                the VM (kernel, RAM, swap, disk, boot, order seed)
    CSV,params,...               switchbench's options
    CSV,columns,switch,...       the column names of the switch rows
    CSV,order,ROUND,MEASURED,M1,M2,...   the shuffled order of the modes in a round
    CSV,switch,MODE,APP,ROUND,POS,...    one measured switch
    CSV,asapstat,asap,APP,KEY,DELTA      an asap app's module counter over the
                                 measured rounds (mobioctl asap stats PID)
    CSV,asaptracked,...          the apps the module tracks (asap's and home only)
    CSV,asapglobal,KEY,VALUE     the module's global counters at the end

Ratios are paired: a mode's switch time over demand paging's in the same boot,
round and app. Per mode: the median of those ratios with a 95% percentile
bootstrap interval that resamples the boots, then the rounds of each boot
drawn, then the apps of each round drawn (bench/stats.py). Intervals that
overlap are "not separable".
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from guest_csv import parse  # noqa: E402
import stats  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODE_ORDER = ["ideal", "demand", "pc0", "novma", "daemon", "oracle", "asap"]
MODE_DESC = {
    "ideal": "no eviction (lower bound)",
    "demand": "evicted, demand paging (page-cluster 3, vma readahead on)",
    "pc0": "demand paging, vm.page-cluster = 0",
    "novma": "demand paging, vma_ra_enabled = false",
    "daemon": "userspace daemon: replays what was mapped at the end of the last turn",
    "oracle": "UPPER BOUND, not a peer: prefetches the generator's last footprint",
    "asap": "asap-prefetch.ko",
}
LABEL = {"oracle": "oracle (upper bound)"}
TICK_MS = 10.0                       # /proc/stat counts USER_HZ (100) ticks
TARGET_REDUCTION = 50.0              # issue 13: >= 50% below demand paging
TARGET_VS_DAEMON = 20.0              # ... and >= 20% below the daemon
TARGET_PRECISION = 85.0
TARGET_RECALL = 80.0


def label(m):
    return LABEL.get(m, m)


median = stats.median


def mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def pct(a, b):
    return 100.0 * a / b if b else None


def fmt(v, d=1, suffix=""):
    return "-" if v is None else "%.*f%s" % (d, v, suffix)


class Boot:
    def __init__(self, path, index):
        self.path = path
        self.boot = index
        self.setup = ""
        self.params = ""
        self.cols = None
        self.switches = []
        self.orders = {}
        self.asap = {}               # app -> {key: delta}
        self.asapglobal = {}
        self.tracked = ""
        self.asapparams = ""
        self.runtime = None
        for r in parse(path):
            kind = r[0]
            if kind == "setup":
                self.setup = ",".join(r[1:])
            elif kind == "asapparams":
                self.asapparams = ",".join(r[1:])
            elif kind == "params":
                self.params = ",".join(r[1:])
            elif kind == "columns":
                self.cols = r[1:]
            elif kind == "order" and len(r) >= 3:
                self.orders[int(r[1])] = r[3:]
            elif kind == "switch" and self.cols and len(r) == len(self.cols):
                d = dict(zip(self.cols, r))
                for k in self.cols[2:]:
                    d[k] = float(d[k])
                d["boot"] = self.boot
                self.switches.append(d)
            elif kind == "asapstat" and len(r) == 5:
                self.asap.setdefault(int(r[2]), {})[r[3]] = int(r[4])
            elif kind == "asapglobal" and len(r) == 3:
                try:
                    self.asapglobal[r[1]] = int(r[2])
                except ValueError:
                    pass
            elif kind == "asaptracked":
                self.tracked = ",".join(r[1:])
            elif kind == "runtime" and len(r) == 2:
                self.runtime = float(r[1])


class Runs:
    def __init__(self, boots):
        self.boots = boots
        self.switches = [s for b in boots for s in b.switches]
        present = {s["label"] for s in self.switches}
        self.modes = [m for m in MODE_ORDER if m in present] + sorted(present - set(MODE_ORDER))
        self.by = {}
        for s in self.switches:
            self.by[(s["boot"], s["label"], int(s["round"]), int(s["app"]))] = s
        self.rounds = {b.boot: sorted({int(s["round"]) for s in b.switches}) for b in boots}

    def of(self, mode, boot=None):
        return [s for s in self.switches
                if s["label"] == mode and (boot is None or s["boot"] == boot)]

    def ratios(self, mode, base, boot=None):
        """{(boot, round): [paired ratios of the apps]}"""
        out = {}
        for s in self.of(mode, boot):
            d = self.by.get((s["boot"], base, int(s["round"]), int(s["app"])))
            if d and d["switch_us"] > 0:
                out.setdefault((s["boot"], int(s["round"])), []).append(
                    s["switch_us"] / d["switch_us"])
        return out

    def interval(self, mode, base="demand", boot=None):
        """(median, lo, hi, n) of the paired ratios (bench/stats.py: boots,
        rounds within them and apps within those, resampled)."""
        return stats.interval(self.ratios(mode, base, boot))

    def counters(self, mode, boot=None):
        rows = self.of(mode, boot)
        if not rows:
            return {}
        n = float(len(rows))
        c = {"n": len(rows)}
        c["switch_ms"] = median([s["switch_us"] / 1e3 for s in rows])
        # before the app's touch starts (the switch event, the wakeup), and the
        # touch itself; absent in runs before 2026-12-05
        c["start_ms"] = median([s["start_us"] / 1e3 for s in rows]) \
            if all(s.get("start_us") is not None for s in rows) else None
        # of which the cgroup writes (the switch event); absent before 2026-12-05
        c["moved_ms"] = median([s["moved_us"] / 1e3 for s in rows]) \
            if all(s.get("moved_us") is not None for s in rows) else None
        c["touch_ms"] = median([s["touch_us"] / 1e3 for s in rows])
        c["cpu_busy_ms"] = sum(s["cpu_busy_ticks_dwell"] for s in rows) * TICK_MS / n
        c["app_cpu_ms"] = sum(s["app_cpu_us"] for s in rows) / 1e3 / n
        c["pf_cpu_ms"] = sum(s["pf_cpu_us"] + s["obs_cpu_us"] for s in rows) / 1e3 / n
        c["zram_mb"] = sum(s["swap_rd_bytes_dwell"] for s in rows) / float(1 << 20) / n
        c["disk_mb"] = sum(s["disk_rd_bytes_dwell"] for s in rows) / float(1 << 20) / n
        for k in ("anon", "file"):
            for key in ("majflt", "needed", "hits", "wasted", "pages", "pf_asked"):
                col = "%s_pages" % k if key == "pages" else "%s_%s" % (key, k)
                c["%s_%s" % (key, k)] = sum(s[col] for s in rows)
        # sqlite apps count major faults for the whole turn (majflt_file -1):
        # hits, precision and recall only for both kinds together ("all")
        c["per_kind"] = all(s["majflt_file"] >= 0 for s in rows)
        if not c["per_kind"]:
            c["majflt_all"] = sum(s["majflt_anon"] for s in rows)
            c["majflt_anon"] = c["majflt_file"] = None
            c["hits_anon"] = c["hits_file"] = None
        else:
            c["majflt_all"] = c["majflt_anon"] + c["majflt_file"]
        for k in ("anon", "file"):
            h, w, nd = c["hits_" + k], c["wasted_" + k], c["needed_" + k]
            c["precision_" + k] = pct(h, h + w) if h is not None else None
            c["recall_" + k] = pct(h, nd) if h is not None else None
        nd = c["needed_anon"] + c["needed_file"]
        h = max(0, nd - c["majflt_all"]) if c["per_kind"] is False else \
            c["hits_anon"] + c["hits_file"]
        w = c["wasted_anon"] + c["wasted_file"]
        c["precision_all"] = pct(h, h + w)
        c["recall_all"] = pct(h, nd)
        c["left_max"] = max(s["left_anon"] + s["left_file"] for s in rows)
        return c

    def asap_module(self):
        """The module's own per-app counters summed over apps and boots."""
        tot = {}
        for b in self.boots:
            for st in b.asap.values():
                for k, v in st.items():
                    tot[k] = tot.get(k, 0) + v
        if not tot:
            return tot
        for k in ("anon", "file"):
            p, h, f = (tot.get("%s_%s" % (k, x), 0) for x in ("prepaged_pages", "hits", "faults"))
            tot["precision_" + k] = pct(h, p)
            tot["recall_" + k] = pct(h, h + f)
        return tot


def verdict(iv, other, lower_is_better=True):
    """Compare interval @iv with @other (an interval, or a number for a baseline)."""
    if iv is None or other is None:
        return "-"
    lo, hi = iv[1], iv[2]
    if isinstance(other, tuple):
        olo, ohi = other[1], other[2]
    else:
        olo = ohi = other
    if hi < olo:
        return "faster (separable)" if lower_is_better else "lower"
    if lo > ohi:
        return "slower (separable)" if lower_is_better else "higher"
    return "not separable"


def civ(iv, d=2):
    if iv is None:
        return "-"
    return "%.*f [%.*f, %.*f]" % (d, iv[0], d, iv[1], d, iv[2])


def write_csvs(runs, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    cols = runs.boots[0].cols if runs.boots and runs.boots[0].cols else []
    cols = ["boot", "label"] + [c for c in cols if c not in ("switch", "label")]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols + ["ratio_vs_demand"])
        for s in runs.switches:
            d = runs.by.get((s["boot"], "demand", int(s["round"]), int(s["app"])))
            ratio = s["switch_us"] / d["switch_us"] if d and d["switch_us"] else None
            w.writerow([s["boot"], s["label"]] + ["%g" % s[c] for c in cols[2:]] +
                       ["" if ratio is None else "%.4f" % ratio])
    spath = path[:-4] + "-summary.csv" if path.endswith(".csv") else path + ".summary"
    keys = ["switch_ms", "cpu_busy_ms", "app_cpu_ms", "pf_cpu_ms", "zram_mb", "disk_mb",
            "majflt_anon", "majflt_file", "needed_anon", "needed_file", "hits_anon",
            "hits_file", "wasted_anon", "wasted_file", "precision_anon", "recall_anon",
            "precision_file", "recall_file"]
    with open(spath, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "boot", "n", "ratio_median", "ratio_lo95", "ratio_hi95"] +
                   [k if k.endswith(("_ms", "_mb")) or k.startswith(("precision", "recall"))
                    else k + "_total" for k in keys])
        for m in runs.modes:
            for b in [x.boot for x in runs.boots] + ["pooled"]:
                bb = None if b == "pooled" else b
                iv = runs.interval(m, boot=bb)
                c = runs.counters(m, bb)
                if not c:
                    continue
                w.writerow([m, b, c["n"]] +
                           (["%.4f" % x for x in iv[:3]] if iv else ["", "", ""]) +
                           ["" if c.get(k) is None else "%.3f" % c[k] for k in keys])
    return spath


def markdown(runs, a, spath):
    L = []
    modes = runs.modes
    boots = [b.boot for b in runs.boots]
    ivs = {m: runs.interval(m) for m in modes}
    ivb = {(m, b): runs.interval(m, boot=b) for m in modes for b in boots}
    cnt = {m: runs.counters(m) for m in modes}
    daemon = ivs.get("daemon")

    wl = "sqlite" if runs.boots and "workload=sqlite" in runs.boots[0].params else "synthetic"
    L.append("# ASAP switch benchmark: results (%s workload)" % wl)
    L.append("")
    L.append("Made by `%s` (`make bench-asap`), kernel %s, %d boot(s)." %
             (a.cmd, a.kver, len(runs.boots)))
    if runs.boots:
        L.append("VM: %s." % runs.boots[0].setup.replace(",", " "))
        L.append("Workload (switchbench): %s." % runs.boots[0].params)
        if runs.boots[0].asapparams:
            L.append("asap-prefetch.ko: %s." % runs.boots[0].asapparams.replace(",", " "))
    L.append("Boots: %s; VM time of all boots (boot included): %s s." % (
        "; ".join("boot %d (order seed %s), %s s in switchbench" %
                  (b.boot, next((w[11:] for w in b.setup.split() if w.startswith("order_seed=")),
                                "?"), fmt(b.runtime, 0))
                  for b in runs.boots), a.vm_seconds or "?"))
    L.append("Raw rows (per boot, round, mode, app): `%s`; per mode and boot: `%s`." %
             (os.path.relpath(a.csv, TOP), os.path.relpath(spath, TOP)))
    L.append("")
    L.append("## Switch time against demand paging (paired, median, 95% interval)")
    L.append("")
    L.append("Ratio = the mode's switch time over demand paging's in the same boot, round "
             "and app; median over rounds and apps; [interval] = 95% bootstrap over boots, "
             "rounds within them and apps within those (bench/stats.py). "
             "Overlapping intervals are not separable.")
    L.append("")
    few = min(len(v) for v in runs.rounds.values()) if runs.rounds else 0
    if few < 5:
        L.append("**Only %d measured round(s) per boot: the intervals (and so the verdicts) "
                 "below mean nothing; this run only shows that every mode works.**" % few)
        L.append("")
    L.append("| mode | what | pooled | " + " | ".join("boot %d" % b for b in boots) +
             " | vs demand | vs daemon |")
    L.append("| --- | --- | --- |" + " --- |" * len(boots) + " --- | --- |")
    for m in modes:
        if m == "demand":
            L.append("| demand | %s | 1 (baseline) | %s | - | %s |" % (
                MODE_DESC["demand"], " | ".join("1" for _ in boots),
                verdict((1.0, 1.0, 1.0), daemon) if daemon else "-"))
            continue
        L.append("| %s | %s | %s | %s | %s | %s |" % (
            label(m), MODE_DESC.get(m, ""), civ(ivs[m]),
            " | ".join(civ(ivb[(m, b)]) for b in boots),
            verdict(ivs[m], 1.0), "-" if m == "daemon" else verdict(ivs[m], daemon)))
    L.append("")
    # asap against daemon, paired
    if "asap" in modes and "daemon" in modes:
        ad = runs.interval("asap", base="daemon")
        if ad:
            L.append("asap over daemon, paired (same boot, round, app): %s." % civ(ad))
            L.append("")
    L.append("## Targets (issue 13)")
    L.append("")
    L.append("| target | asap | met? |")
    L.append("| --- | --- | --- |")
    ia = ivs.get("asap")
    if ia:
        L.append("| switch time >= %.0f%% below demand (ratio <= %.2f, interval included) | %s "
                 "| %s |" % (TARGET_REDUCTION, 1 - TARGET_REDUCTION / 100, civ(ia),
                             "yes" if ia[2] <= 1 - TARGET_REDUCTION / 100 else "no"))
        ad = runs.interval("asap", base="daemon") if "daemon" in modes else None
        if ad:
            L.append("| >= %.0f%% below the daemon, separable (asap/daemon <= %.2f) | %s | %s |" %
                     (TARGET_VS_DAEMON, 1 - TARGET_VS_DAEMON / 100, civ(ad),
                      "yes" if ad[2] <= 1 - TARGET_VS_DAEMON / 100 else "no"))
        c = cnt["asap"]
        for k in ("anon", "file"):
            p, r = c.get("precision_" + k), c.get("recall_" + k)
            L.append("| %s precision >= %.0f%% / recall >= %.0f%% (kernel's counters, this "
                     "benchmark) | %s / %s | %s |" % (
                         k, TARGET_PRECISION, TARGET_RECALL, fmt(p, 1, "%"), fmt(r, 1, "%"),
                         "yes" if p is not None and r is not None and p >= TARGET_PRECISION
                         and r >= TARGET_RECALL else "no"))
    else:
        L.append("| - | no asap mode in this run | - |")
    L.append("")
    mod = runs.asap_module()
    asap_pf = "%s (workers' prepage_ns)" % fmt(
        mod.get("prepage_ns", 0) / 1e6 / mod["switches"] if mod.get("switches") else None, 1)
    L.append("## Counters per mode (all boots, per switch)")
    L.append("")
    L.append("| mode | switch ms (median) | before the touch ms | of it cgroup writes ms | touch ms | CPU busy ms | "
             "app CPU ms | prefetcher CPU ms | "
             "zram read MB | ext4 read MB | major faults anon/file | needed anon/file | "
             "wasted anon/file | precision anon/file | recall anon/file | "
             "precision / recall, both kinds |")
    L.append("| --- |" + " --- |" * 15)
    for m in modes:
        c = cnt[m]
        n = float(c["n"])
        per = (lambda v: fmt(v / n, 0)) if c["per_kind"] else (lambda v: "-")
        L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | %s / %s "
                 "| %s / %s | %s / %s | %s / %s |" % (
                     label(m), fmt(c["switch_ms"], 1), fmt(c["start_ms"], 1), fmt(c["moved_ms"], 1),
                     fmt(c["touch_ms"], 1), fmt(c["cpu_busy_ms"], 0),
                     fmt(c["app_cpu_ms"], 0),
                     asap_pf if m == "asap" else fmt(c["pf_cpu_ms"], 1),
                     fmt(c["zram_mb"], 2), fmt(c["disk_mb"], 2),
                     per(c["majflt_anon"]) if c["per_kind"] else
                     "%s (all)" % fmt(c["majflt_all"] / n, 0), per(c["majflt_file"]),
                     fmt(c["needed_anon"] / n, 0), fmt(c["needed_file"] / n, 0),
                     fmt(c["wasted_anon"] / n, 0), fmt(c["wasted_file"] / n, 0),
                     fmt(c["precision_anon"], 1, "%"), fmt(c["precision_file"], 1, "%"),
                     fmt(c["recall_anon"], 1, "%"), fmt(c["recall_file"], 1, "%"),
                     fmt(c["precision_all"], 1, "%"), fmt(c["recall_all"], 1, "%")))
    L.append("")
    L.append("Every mode is counted the same way, from the kernel: residency of the app's "
             "regions (mincore) just before the switch event and after its turn, its major "
             "faults per kind (getrusage per chunk touched). needed = touched pages not "
             "resident at the switch; hits = needed - major faults; wasted = resident after "
             "the turn, not at the switch, not touched; precision = hits / (hits + wasted), "
             "recall = hits / needed (bench/switch/notes.md). CPU busy: all CPUs "
             "(/proc/stat) from the switch event to the end of the dwell; app CPU: the app's "
             "getrusage over its touch; prefetcher CPU: the daemon's or oracle's threads "
             "(CLOCK_THREAD_CPUTIME_ID) plus the daemon's observation at the end of the turn.")
    if mod:
        sw = mod.get("switches", 0)
        pages = mod.get("anon_prepaged_pages", 0) + mod.get("file_prepaged_pages", 0)

        def late(k):
            """Late misses of kind @k and their share of its misses ("-" from a
            module without the counter)."""
            if "%s_faults_late" % k not in mod:
                return "-"
            n = mod["%s_faults_late" % k]
            return "%d (%s)" % (n, fmt(pct(n, mod.get("%s_faults" % k, 0)), 0, "%"))

        L.append("")
        L.append("asap-prefetch.ko's own counters for its apps over the measured rounds "
                 "(`mobioctl asap stats PID`, summed): %d switches, prepaged anon %d / file %d "
                 "pages, precision anon %s / file %s, recall anon %s / file %s (the module's "
                 "definitions, docs/asap.md); misses anon %d / file %d, of them late (the table "
                 "held the page, the app reached it before a worker) anon %s / file %s; "
                 "workers %s ms per switch (prepage_ns), %s us per "
                 "prepaged page; %s MB read per switch (prepage_read_bytes)." % (
                     sw, mod.get("anon_prepaged_pages", 0), mod.get("file_prepaged_pages", 0),
                     fmt(mod.get("precision_anon"), 1, "%"), fmt(mod.get("precision_file"), 1, "%"),
                     fmt(mod.get("recall_anon"), 1, "%"), fmt(mod.get("recall_file"), 1, "%"),
                     mod.get("anon_faults", 0), mod.get("file_faults", 0),
                     late("anon"), late("file"),
                     fmt(mod.get("prepage_ns", 0) / 1e6 / sw if sw else None, 1),
                     fmt(mod.get("prepage_ns", 0) / 1e3 / pages if pages else None, 0),
                     fmt(mod.get("prepage_read_bytes", 0) / float(1 << 20) / sw if sw and
                         "prepage_read_bytes" in mod else None, 2)))
    tr = [b.tracked for b in runs.boots if b.tracked]
    if tr:
        L.append("")
        L.append("Apps the module tracked at the end of each boot (/sys/kernel/debug/asap/apps; "
                 "home is the stand-in launcher that takes top-app between asap turns): %s." %
                 "; ".join(tr))
    left = max([cnt[m]["left_max"] for m in modes if m != "ideal"] or [0])
    L.append("")
    L.append("Eviction check: at most %d pages of an app were still resident after its "
             "eviction (process_madvise MADV_PAGEOUT + fadvise DONTNEED)." % left)
    if a.notes and os.path.exists(a.notes):
        with open(a.notes) as f:
            L.append("")
            L.append(f.read().rstrip("\n"))
    return "\n".join(L) + "\n"


def gnuplot(script):
    if not shutil.which("gnuplot"):
        print("report: gnuplot missing (apt-get install gnuplot-nox): no chart", file=sys.stderr)
        return False
    r = subprocess.run(["gnuplot"], input=script, text=True, stderr=subprocess.PIPE)
    if r.returncode != 0:
        print("report: gnuplot: %s" % r.stderr.strip(), file=sys.stderr)
        return False
    return True


def chart(runs, png, kver):
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    boots = [b.boot for b in runs.boots]
    modes = [m for m in runs.modes if m != "demand"]
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "ratio.dat")
        with open(dat, "w") as f:
            for i, m in enumerate(modes):
                iv = runs.interval(m)
                f.write('%d "%s" %s\n' % (i, label(m).replace(" ", "\\n", 1),
                                          " ".join("%.4f" % x for x in iv[:3]) if iv
                                          else "NaN NaN NaN"))
        bdat = os.path.join(tmp, "boots.dat")
        with open(bdat, "w") as f:
            for j, b in enumerate(boots):
                for i, m in enumerate(modes):
                    iv = runs.interval(m, boot=b)
                    if iv:
                        f.write("%.3f %.4f %.4f %.4f\n" % (
                            i + 0.25 + 0.12 * j, iv[0], iv[1], iv[2]))
                f.write("\n\n")
        prd = os.path.join(tmp, "pr.dat")
        with open(prd, "w") as f:
            for m in runs.modes:
                if m == "ideal":
                    continue
                c = runs.counters(m)
                f.write('"%s" %s\n' % (label(m), " ".join(
                    fmt(c.get(k), 1).replace("-", "NaN")
                    for k in ("precision_anon", "recall_anon", "precision_file",
                              "recall_file", "precision_all", "recall_all"))))
        per_kind = all(runs.counters(m).get("per_kind") for m in runs.modes)
        prplot = ("'%s' using 2:xtic(1) title 'anon precision', '' using 3 title 'anon recall', "
                  "'' using 4 title 'file precision', '' using 5 title 'file recall'" % prd
                  if per_kind else
                  "'%s' using 6:xtic(1) title 'precision (both kinds)', "
                  "'' using 7 title 'recall (both kinds)'" % prd)
        bplots = "".join(", '%s' index %d using 1:2:3:4 with yerrorbars pt 7 ps 0.8 "
                         "title 'boot %d'" % (bdat, j, b) for j, b in enumerate(boots))
        return gnuplot("""
set terminal pngcairo size 1400,600 font ',10'
set output '%s'
set bmargin 5
set multiplot layout 1,2 title "ASAP switch benchmark, %s (TCG), %d boot(s): every mode interleaved, paired against demand paging in the same round"
set size 0.6,0.92
set origin 0,0
set ylabel 'switch time / demand paging (median, 95%% bootstrap interval)'
set grid ytics
set yrange [0:*]
set xrange [-0.6:%g]
set xtics rotate by -20 font ',9'
set key top left
set arrow 1 from -0.6,1 to %g,1 nohead dt 2 lc rgb 'gray30'
set arrow 2 from -0.6,0.5 to %g,0.5 nohead dt 3 lc rgb 'dark-green'
set label 1 'demand = 1' at -0.5,1.04 tc rgb 'gray30'
set label 2 'target: asap <= 0.5' at -0.5,0.54 tc rgb 'dark-green'
set style fill solid 0.5 border -1
set boxwidth 0.4
plot '%s' using 1:3:xtic(2) with boxes lc rgb '#7799cc' title 'pooled median', \\
     '' using 1:3:4:5 with yerrorbars pt 0 lc rgb 'black' lw 2 title 'pooled 95%% interval'%s
unset arrow 1
unset arrow 2
unset label 1
unset label 2
set size 0.4,0.92
set origin 0.6,0
set ylabel 'percent (kernel counters: mincore + major faults)'
set yrange [0:130]
set xrange [*:*]
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set key top center horizontal font ',9'
set xtics rotate by -30
plot %s
unset multiplot
""" % (png, kver, len(boots), len(modes) - 0.4, len(modes) - 0.4, len(modes) - 0.4, dat,
       bplots, prplot))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", action="append", required=True,
                    help="a boot's events.txt (repeat for several boots)")
    ap.add_argument("--kver", required=True)
    ap.add_argument("--cmd", default="make bench-asap")
    ap.add_argument("--csv", required=True)
    ap.add_argument("--md", default=None)
    ap.add_argument("--png", default=None)
    ap.add_argument("--vm-seconds", default=None)
    ap.add_argument("--notes", default=None,
                    help="markdown put after the tables (the method; run-bench.py passes "
                    "bench/switch/notes.md when it writes docs/)")
    a = ap.parse_args()
    boots = []
    for i, e in enumerate(a.events):
        if not os.path.exists(e):
            sys.exit("report: %s missing (did the VM run?)" % e)
        b = Boot(e, i + 1)
        if b.switches:
            boots.append(b)
        else:
            print("report: no switch rows in %s, boot left out" % e, file=sys.stderr)
    if not boots:
        sys.exit("report: no switch rows in any boot")
    runs = Runs(boots)
    spath = write_csvs(runs, a.csv)
    md = markdown(runs, a, spath)
    print(md)
    if a.md:
        os.makedirs(os.path.dirname(os.path.abspath(a.md)), exist_ok=True)
        with open(a.md, "w") as f:
            f.write(md)
    if a.png and chart(runs, a.png, a.kver):
        print("report: chart %s" % a.png)
    print("report: CSV %s and %s%s" % (a.csv, spath, "; table %s" % a.md if a.md else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
