#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn a switch-bench VM run into CSVs, a markdown table and a chart.

USAGE
    bench/switch/report.py --events build/vm/KVER/switch-bench/events.txt
        --kver KVER [--cmd "make bench-asap"] [--csv OUT.csv] [--vm-seconds S]
        [--md docs/asap-results.md] [--png docs/asap-bench.png]

The guest (bench/switch/switch-bench.sh running bench/switch/switchbench)
sends its results as notes; events.txt holds them as
"guest: MOBIO NOTE CSV,<kind>,...":

    CSV,setup,...            the VM (kernel, RAM, swap, disk)
    CSV,params,LABEL,...     switchbench's options for one mode
    CSV,columns,switch,...   the column names of the switch rows
    CSV,switch,LABEL,APP,ROUND,...   one measured switch
    CSV,asapstat,LABEL,APP,KEY,DELTA asap-prefetch.ko counter over the
                             measured rounds (mobioctl asap stats PID)
    CSV,modetime,LABEL,S     guest seconds the mode took

Switch time is from the switch event (the cgroup move into top-app) until
the app has touched its footprint. Every ratio is against "demand" of the
same run. Precision = hits / prepaged pages, recall = hits / (hits +
pages the app faulted in itself): asap from the module's counters, peer from
its own sets (what it asked for against what the app touched).
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

MODE_ORDER = ["ideal", "demand", "pc0", "novma", "peer", "asap", "demand2"]
MODE_DESC = {
    "ideal": "no eviction (lower bound)",
    "demand": "evicted, demand paging (page-cluster 3, vma readahead on)",
    "pc0": "evicted, demand paging, vm.page-cluster = 0",
    "novma": "evicted, demand paging, vma_ra_enabled = false",
    "peer": "evicted, userspace prefetch of everything touched at the last switch",
    "asap": "evicted, asap-prefetch.ko",
    "demand2": "demand again, last in the boot (drift of the baseline)",
}
TICK_MS = 10.0                       # /proc/stat counts USER_HZ (100) ticks
TARGET_REDUCTION = 35.0              # issue 5: >= 35% lower switch time
TARGET_PRECISION = 85.0
TARGET_RECALL = 75.0
SEED = {"reduction": "22.2% (Pixel 4) / 28.3% (Pixel 3a)",
        "anon": (68.4, 60.4), "file": (79.3, 52.2), "cpu": "1.18x", "disk": "+25.2%"}


def mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def pct(a, b):
    return 100.0 * a / b if b else None


def fmt(v, d=1, suffix=""):
    return "-" if v is None else "%.*f%s" % (d, v, suffix)


class Run:
    def __init__(self, rows):
        self.setup = ""
        self.params = {}
        self.cols = None
        self.switches = []           # dicts
        self.asap = {}               # (label, app) -> {key: delta}
        self.modetime = {}
        self.asapparams = ""
        for r in rows:
            kind = r[0]
            if kind == "setup":
                self.setup = ",".join(r[1:])
            elif kind == "asapparams":
                self.asapparams = ",".join(r[1:])
            elif kind == "params" and len(r) >= 3:
                self.params[r[1]] = ",".join(r[2:])
            elif kind == "columns":
                self.cols = r[1:]
            elif kind == "switch" and self.cols and len(r) == len(self.cols):
                d = dict(zip(self.cols, r))
                for k in self.cols[1:]:
                    if k != "label":
                        d[k] = float(d[k])
                self.switches.append(d)
            elif kind == "asapstat" and len(r) == 5:
                self.asap.setdefault((r[1], int(r[2])), {})[r[3]] = int(r[4])
            elif kind == "modetime" and len(r) == 3:
                self.modetime[r[1]] = float(r[2])
        present = {s["label"] for s in self.switches}
        self.modes = [m for m in MODE_ORDER if m in present] + \
            sorted(present - set(MODE_ORDER))
        self.apps = sorted({int(s["app"]) for s in self.switches})

    def of(self, label, app=None):
        return [s for s in self.switches
                if s["label"] == label and (app is None or int(s["app"]) == app)]

    def per_app(self, label, key, scale=1.0):
        """{app: mean of key over the measured rounds}"""
        out = {}
        for app in self.apps:
            v = [s[key] * scale for s in self.of(label, app)]
            if v:
                out[app] = mean(v)
        return out

    def avg(self, label, key, scale=1.0):
        """mean over apps of the per-app means"""
        return mean(list(self.per_app(label, key, scale).values()))

    def prec_recall(self, label):
        """{kind: (precision %, recall %, prepaged, hits, faults)}"""
        out = {}
        if label == "peer":
            for k in ("anon", "file"):
                asked = sum(s["peer_%s_asked" % k] for s in self.of(label))
                hits = sum(s["peer_%s_hits" % k] for s in self.of(label))
                used = sum(s["%s_pages" % k] for s in self.of(label))
                out[k] = (pct(hits, asked), pct(hits, used), asked, hits, used - hits)
        elif any(lbl == label for lbl, _ in self.asap):
            for k in ("anon", "file"):
                tot = {}
                for (lbl, _), st in self.asap.items():
                    if lbl != label:
                        continue
                    for key in ("prepaged_pages", "hits", "faults"):
                        tot[key] = tot.get(key, 0) + st.get("%s_%s" % (k, key), 0)
                p, h, f = tot["prepaged_pages"], tot["hits"], tot["faults"]
                out[k] = (pct(h, p), pct(h, h + f), p, h, f)
        return out


def prefetch_cost(run):
    """What the prefetchers spent: asap's worker time (prepage_ns), the peer's
    threads' time, per switch and per page brought in / asked for."""
    out = []
    for m in run.modes:
        if m == "peer":
            rows = [s for s in run.of(m) if "peer_anon_us" in s]
            if not rows:
                continue
            us = sum(s["peer_anon_us"] + s["peer_file_us"] for s in rows)
            pages = sum(s["peer_anon_asked"] + s["peer_file_asked"] for s in rows)
            out.append("peer threads %.0f ms per switch, %.0f us per page asked for" %
                       (us / 1000.0 / len(rows), us / pages if pages else 0))
        elif any(lbl == m for lbl, _ in run.asap):
            ns = sum(st.get("prepage_ns", 0) for (lbl, _), st in run.asap.items() if lbl == m)
            sw = sum(st.get("switches", 0) for (lbl, _), st in run.asap.items() if lbl == m)
            pages = sum(st.get("anon_prepaged_pages", 0) + st.get("file_prepaged_pages", 0)
                        for (lbl, _), st in run.asap.items() if lbl == m)
            rb = sum(st.get("prepage_read_bytes", 0) for (lbl, _), st in run.asap.items()
                     if lbl == m)
            out.append("%s workers %.0f ms per switch (prepage_ns, all workers), %.0f us per "
                       "prepaged page, %.1f MB read per switch (prepage_read_bytes)" %
                       (m, ns / 1e6 / sw if sw else 0, ns / 1e3 / pages if pages else 0,
                        rb / float(1 << 20) / sw if sw else 0))
    return out


def summary_rows(run):
    """One row per (mode, app) and per mode ("avg")."""
    rows = []
    keys = [("switch_ms", "switch_us", 1e-3), ("touch_ms", "touch_us", 1e-3),
            ("cpu_busy_ms", "cpu_busy_ticks_dwell", TICK_MS),
            ("disk_rd_mb", "disk_rd_bytes_dwell", 1.0 / (1 << 20)),
            ("swap_rd_mb", "swap_rd_bytes_dwell", 1.0 / (1 << 20)),
            ("majflt", "majflt", 1.0), ("extra_anon", "extra_anon", 1.0),
            ("extra_file", "extra_file", 1.0), ("left_anon", "left_anon", 1.0),
            ("left_file", "left_file", 1.0), ("anon_pages", "anon_pages", 1.0),
            ("file_pages", "file_pages", 1.0)]
    demand = run.per_app("demand", "switch_us", 1e-3)
    for m in run.modes:
        for app in run.apps + ["avg"]:
            r = {"mode": m, "app": app, "n": len(run.of(m, None if app == "avg" else app))}
            for name, key, scale in keys:
                if app == "avg":
                    r[name] = run.avg(m, key, scale)
                else:
                    r[name] = run.per_app(m, key, scale).get(app)
            d = mean(list(demand.values())) if app == "avg" else demand.get(app)
            r["ratio_vs_demand"] = r["switch_ms"] / d if d and r["switch_ms"] is not None else None
            rows.append(r)
    return rows


def write_csvs(run, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    cols = ["label"] + [c for c in run.cols if c not in ("switch", "label")]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for s in run.switches:
            w.writerow([s["label"]] + ["%g" % s[c] for c in cols[1:]])
    spath = path[:-4] + "-summary.csv" if path.endswith(".csv") else path + ".summary"
    rows = summary_rows(run)
    with open(spath, "w", newline="") as f:
        w = csv.writer(f)
        keys = list(rows[0].keys()) if rows else []
        w.writerow(keys + ["precision_anon", "recall_anon", "precision_file", "recall_file"])
        for r in rows:
            pr = run.prec_recall(r["mode"]) if r["app"] == "avg" else {}
            extra = []
            for k in ("anon", "file"):
                p = pr.get(k)
                extra += [fmt(p[0], 1) if p else "", fmt(p[1], 1) if p else ""]
            w.writerow([("%.3f" % v) if isinstance(v, float) else ("" if v is None else v)
                        for v in r.values()] + extra)
    return spath


def gap(value, target, higher=True):
    if value is None:
        return "-", "no data"
    g = value - target if higher else target - value
    return ("%+.1f points" % g), ("met" if g >= 0 else "missed")


def markdown(run, a, csv_path, spath):
    lines = []
    sw = {m: run.avg(m, "switch_us", 1e-3) for m in run.modes}
    dem = sw.get("demand")
    cpu = {m: run.avg(m, "cpu_busy_ticks_dwell", TICK_MS) for m in run.modes}
    disk = {m: run.avg(m, "disk_rd_bytes_dwell", 1.0 / (1 << 20)) for m in run.modes}
    swap = {m: run.avg(m, "swap_rd_bytes_dwell", 1.0 / (1 << 20)) for m in run.modes}
    red = {m: (100.0 * (1 - sw[m] / dem) if dem and sw[m] is not None else None)
           for m in run.modes}
    pr = {m: run.prec_recall(m) for m in run.modes}

    lines.append("# ASAP switch benchmark: results")
    lines.append("")
    lines.append("Made by `%s` (`make bench-asap`), kernel %s, on %s." %
                 (a.cmd, a.kver, run.setup.replace(",", " ")))
    if run.asapparams:
        lines.append("asap-prefetch.ko: %s." % run.asapparams.replace(",", " "))
    lines.append("VM: QEMU TCG, 2 vCPUs. Guest time per mode: %s; VM time of the whole "
                 "run (boot included): %s s." %
                 (", ".join("%s %.0f s" % (m, run.modetime[m]) for m in run.modes
                            if m in run.modetime), a.vm_seconds or "?"))
    lines.append("Raw rows: `%s`; per app and mode: `%s`." %
                 (os.path.relpath(csv_path, TOP), os.path.relpath(spath, TOP)))
    if run.params:
        p = next(iter(run.params.values()))
        lines.append("Workload (switchbench): %s." % " ".join(
            w for w in p.split() if not w.startswith("mode=")))
    lines.append("")
    lines.append("## Targets (issue 5) against asap-prefetch.ko")
    lines.append("")
    lines.append("| metric | target | asap | gap | | peer (last touched) | seed (ATC'21) |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- |")
    g, ok = gap(red.get("asap"), TARGET_REDUCTION)
    lines.append("| switch time reduction vs demand paging, average | >= %.0f%% | %s | %s | %s | %s | %s |" %
                 (TARGET_REDUCTION, fmt(red.get("asap"), 1, "%"), g, ok,
                  fmt(red.get("peer"), 1, "%"), SEED["reduction"]))
    for k in ("anon", "file"):
        for i, (what, target) in enumerate((("precision", TARGET_PRECISION),
                                            ("recall", TARGET_RECALL))):
            v = pr.get("asap", {}).get(k)
            pv = pr.get("peer", {}).get(k)
            g, ok = gap(v[i] if v else None, target)
            lines.append("| %s %s | >= %.0f%% | %s | %s | %s | %s | %.1f%% |" %
                         (k, what, target, fmt(v[i] if v else None, 1, "%"), g, ok,
                          fmt(pv[i] if pv else None, 1, "%"), SEED[k][i]))
    if sw.get("demand2") and dem:
        both = (dem + sw["demand2"]) / 2
        lines.append("")
        lines.append("Baseline drift: demand paging measured again at the end of the boot "
                     "(demand2) took %.2fx the first demand run; against the mean of the two "
                     "asap is %s lower, peer %s lower." % (
                         sw["demand2"] / dem,
                         fmt(100.0 * (1 - sw["asap"] / both) if sw.get("asap") else None, 1, "%"),
                         fmt(100.0 * (1 - sw["peer"] / both) if sw.get("peer") else None, 1, "%")))
    lines.append("")
    lines.append("## Every mode, averaged over apps (per switch)")
    lines.append("")
    lines.append("| mode | what | switch ms | vs demand | CPU busy ms | vs demand | "
                 "ext4 read MB | zram read MB | major faults | read, unused pages (anon/file) |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for m in run.modes:
        ea = run.avg(m, "extra_anon")
        ef = run.avg(m, "extra_file")
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            m, MODE_DESC.get(m, ""), fmt(sw[m], 1),
            fmt(sw[m] / dem if dem and sw[m] is not None else None, 2, "x"),
            fmt(cpu[m], 0),
            fmt(cpu[m] / cpu["demand"] if cpu.get("demand") and cpu[m] is not None else None, 2, "x"),
            fmt(disk[m], 2), fmt(swap[m], 2), fmt(run.avg(m, "majflt"), 0),
            "-" if m == "ideal" else "%s / %s" % (fmt(ea, 0), fmt(ef, 0))))
    lines.append("")
    cost = prefetch_cost(run)
    if cost:
        lines.append("Prefetch work: " + "; ".join(cost) + ".")
        lines.append("")
    lines.append("CPU busy ms: busy time of all CPUs (/proc/stat, 10 ms ticks) from the "
                 "switch event until the end of the app's %s ms in front; read MB over the "
                 "same span (/sys/block/<dev>/stat). \"read, unused\": pages of the app "
                 "resident at the end of its turn that it did not touch (readahead and "
                 "prefetch waste; for ideal everything is resident)." %
                 (run.params and next(iter(run.params.values())).split("dwell_ms=")[1].split()[0]
                  or "?"))
    lines.append("")
    lines.append("## Switch time per app (ms, mean of the measured rounds)")
    lines.append("")
    lines.append("| app | anon/file pages touched | " + " | ".join(run.modes) +
                 " | asap vs demand |")
    lines.append("| --- | --- |" + " --- |" * (len(run.modes) + 1))
    per = {m: run.per_app(m, "switch_us", 1e-3) for m in run.modes}
    for app in run.apps:
        d = per.get("demand", {}).get(app)
        s = per.get("asap", {}).get(app)
        lines.append("| app%d | %s / %s | %s | %s |" % (
            app, fmt(run.per_app("demand", "anon_pages").get(app), 0),
            fmt(run.per_app("demand", "file_pages").get(app), 0),
            " | ".join(fmt(per[m].get(app), 0) for m in run.modes),
            fmt(100.0 * (s / d - 1) if s is not None and d else None, 1, "%")))
    lines.append("")
    lines.append("## Precision and recall")
    lines.append("")
    lines.append("| mode | kind | prepaged pages | hits | faulted by the app | precision | recall |")
    lines.append("| --- | --- | --- | --- | --- | --- | --- |")
    for m in run.modes:
        for k, v in sorted(pr[m].items()):
            lines.append("| %s | %s | %d | %d | %d | %s | %s |" % (
                m, k, v[2], v[3], v[4], fmt(v[0], 1, "%"), fmt(v[1], 1, "%")))
    lines.append("")
    lines.append("asap: the module's per-app counters over the measured rounds "
                 "(`mobioctl asap stats PID`, see docs/asap.md): prepaged = brought in by "
                 "its workers, hits = prepaged and used in the window, faulted = pages the "
                 "app faulted in itself. peer: its requests against the app's footprint "
                 "(what it asked for, not what the kernel read).")
    left = max([s["left_anon"] + s["left_file"] for s in run.switches
                if s["label"] != "ideal"] or [0])
    lines.append("")
    lines.append("Eviction check: at most %d pages of an app were still resident after its "
                 "eviction (process_madvise MADV_PAGEOUT + fadvise DONTNEED)." % left)
    if a.notes and os.path.exists(a.notes):
        with open(a.notes) as f:
            lines.append("")
            lines.append(f.read().rstrip("\n"))
    lines.append("")
    lines.append(METHOD)
    return "\n".join(lines) + "\n"


METHOD = """## How it is measured

    make bench-asap [KVER=<kver>]      # the table above: every mode, 8 apps, one VM boot
    make bench-asap-quick              # 3 apps, 3 profile switches, 2 rounds: build/bench-asap/
    make bench-asap ASAP_BENCH_ARGS="--modes demand,asap --apps 4 --lead-ms 50"

`bench/switch/run-bench.py --help` lists the knobs; `switchbench --help` (the guest
program, bench/switch/switchbench.c) the workload's.

- **VM** (bench/switch/switch-bench.sh): 384 MB RAM, 2 vCPUs (TCG), 256 MB zram swap,
  the apps' files on ext4 on a virtio disk, cgroup v2 with `top-app` and `bg`.
- **Apps**: switchbench forks N apps. App i has an anonymous region (8-16 MB, spread over
  the apps) filled with data that compresses about 2:1, and a file of 4-8 MB mapped
  read-only (MAP_SHARED). Both are cut into 16-page chunks; 60% of the chunks are used at
  every switch, 15% more (of the region) are drawn anew at every switch from the other
  40% by a hash of (app, chunk, round index): the footprint is 75% of each region, 80% of
  it stable and 20% varying, and every mode sees the same footprints in the same rounds.
  The app reads one word of every page of its footprint, anonymous and file chunks
  interleaved, and checks the pattern it wrote (a wrong page fails the run).
- **Switch**: the launcher (switchbench) leaves `top-app`, the app's pid is written into
  `top-app/cgroup.procs` (as Android's top-app move; asap-prefetch.ko's `fg_cgroup`
  trigger), the app touches its footprint and answers. **Switch time** = from just
  before the cgroup write until the answer. The app then stays in front 100 ms (dwell),
  the launcher comes back to `top-app` (the app's switch window closes), and the app is
  pushed out.
- **Memory pressure**, made reproducible (DESIGN.md section 9: a memory hog evicts
  0.2-106 MB per round): process_madvise(MADV_PAGEOUT) on both of the app's regions and
  POSIX_FADV_DONTNEED on its file, right after its turn; every app is evicted in full
  before it comes back (the eviction check above).
- **Modes**, in this order in one boot, each with fresh apps: ideal (never evicted),
  demand, pc0 (vm.page-cluster 0), novma (vma swap readahead off), peer (at the switch
  two threads ask for everything the app touched at its previous switch:
  process_madvise(MADV_WILLNEED) on the anonymous chunks, POSIX_FADV_WILLNEED on the
  file chunks, in parallel with the app), asap (asap-prefetch.ko loaded with
  `window_ms=0 fg_cgroup=/top-app`, `profile_switches` warm-up rounds per app first).
  Measured rounds are the same round indices in every mode; non-asap modes run one
  warm-up round (the peer needs a previous switch).
- **CPU and disk**: /proc/stat busy ticks (all CPUs, minus idle and iowait) and sectors
  read of the ext4 disk and of zram0, from the switch event to the end of the dwell, so
  prepaging that runs past the app's touch is counted.
- zram is a synchronous swap device: a swap-in of a page mapped once skips the swap
  cache and readahead (do_swap_page), so page-cluster and vma readahead are expected to
  change little here; on a real flash swap device they would.
"""


def gnuplot(script):
    if not shutil.which("gnuplot"):
        print("report: gnuplot missing (apt-get install gnuplot-nox): no chart", file=sys.stderr)
        return False
    r = subprocess.run(["gnuplot"], input=script, text=True, stderr=subprocess.PIPE)
    if r.returncode != 0:
        print("report: gnuplot: %s" % r.stderr.strip(), file=sys.stderr)
        return False
    return True


def chart(run, png, kver):
    os.makedirs(os.path.dirname(os.path.abspath(png)), exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        dat = os.path.join(tmp, "sw.dat")
        per = {m: run.per_app(m, "switch_us", 1e-3) for m in run.modes}
        with open(dat, "w") as f:
            f.write("app " + " ".join(run.modes) + "\n")
            for app in run.apps:
                f.write("app%d %s\n" % (app, " ".join(fmt(per[m].get(app), 1).replace("-", "NaN")
                                                     for m in run.modes)))
            f.write("average %s\n" % " ".join(
                fmt(run.avg(m, "switch_us", 1e-3), 1).replace("-", "NaN") for m in run.modes))
        prd = os.path.join(tmp, "pr.dat")
        with open(prd, "w") as f:
            f.write("metric asap peer target\n")
            for k in ("anon", "file"):
                for i, what in enumerate(("precision", "recall")):
                    vals = []
                    for m in ("asap", "peer"):
                        v = run.prec_recall(m).get(k) if m in run.modes else None
                        vals.append(fmt(v[i] if v else None, 1).replace("-", "NaN"))
                    f.write('"%s %s" %s %s %.0f\n' % (
                        k, what, vals[0], vals[1],
                        TARGET_PRECISION if what == "precision" else TARGET_RECALL))
        plots = ", ".join("'%s' using %d:xtic(1) title col" % (dat, i + 2)
                          for i in range(len(run.modes)))
        pr_modes = [m for m in ("asap", "peer") if run.prec_recall(m)]
        if not pr_modes:
            pr_plot = "set label 1 'no asap or peer mode in this run' at graph 0.1,0.5\n" \
                "plot '%s' using 0:4 with points pt 7 ps 1.5 lc rgb 'black' title 'target'" % prd
        else:
            pr_plot = "plot " + ", ".join(
                "'%s' using %d:xtic(1) title '%s'" % (prd, 2 + ("asap", "peer").index(m),
                                                     "peer (last touched)" if m == "peer" else m)
                for m in pr_modes) + \
                ", '' using 0:4 with points pt 7 ps 1.5 lc rgb 'black' title 'target'"
        return gnuplot("""
set terminal pngcairo size 1400,560 font ',10'
set output '%s'
set multiplot layout 1,2 title 'ASAP switch benchmark, %s (TCG): %d apps round robin, evicted in the background'
set size 0.68,0.93
set origin 0,0
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set key top left
set ylabel 'switch time, ms (event to working set touched)'
set grid ytics
set yrange [0:*]
plot %s
set size 0.32,0.93
set origin 0.68,0
set ylabel 'percent'
set yrange [0:120]
set key top right
set xtics rotate by -30
%s
unset multiplot
""" % (png, kver, len(run.apps), plots, pr_plot))


TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", required=True)
    ap.add_argument("--kver", required=True)
    ap.add_argument("--cmd", default="make bench-asap")
    ap.add_argument("--csv", required=True)
    ap.add_argument("--md", default=None)
    ap.add_argument("--png", default=None)
    ap.add_argument("--vm-seconds", default=None)
    ap.add_argument("--notes", default=None,
                    help="markdown put after the tables, before the method (the analysis; "
                    "run-bench.py passes bench/switch/notes.md when it writes docs/)")
    a = ap.parse_args()
    if not os.path.exists(a.events):
        sys.exit("report: %s missing (did the VM run?)" % a.events)
    run = Run(parse(a.events))
    if not run.switches:
        sys.exit("report: no switch rows in %s" % a.events)
    spath = write_csvs(run, a.csv)
    md = markdown(run, a, a.csv, spath)
    print(md)
    if a.md:
        os.makedirs(os.path.dirname(os.path.abspath(a.md)), exist_ok=True)
        with open(a.md, "w") as f:
            f.write(md)
    if a.png and chart(run, a.png, a.kver):
        print("report: chart %s" % a.png)
    print("report: CSV %s and %s%s" % (a.csv, spath, "; table %s" % a.md if a.md else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
