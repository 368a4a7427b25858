#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn a sqlite-bench VM run into a CSV, a markdown table and a chart.

USAGE
    bench/sqlite/report.py --events build/vm/KVER/sqlite-bench/events.txt
                           --kver KVER --cmd "make bench-sqlite"
                           [--csv OUT.csv] [--md docs/results-sqlite.md]
                           [--png docs/sqlite-bench.png]

The guest (bench/sqlite/sqlite-bench.sh) sends every line of sqlbench as a
note; events.txt holds them as "guest: MOBIO NOTE <line>". Rows are

    CSV,model,mode,case,run,ops,usec,tps,wr_ios,wr_bytes,flushes,wr_bytes_ops,extra

Everything reported is a mean over the runs; speedups are ratios of the mean
transactions/s of a mode and of WAL + FULL on the same device model, in the
same boot (the modes of one case run back to back).
"""

import argparse
import csv
import os
import re
import statistics
import subprocess
import sys
import time

MODES = [
    ("wal-full", "WAL+FULL"),
    ("wal-normal", "WAL+NORMAL"),
    ("delete-full", "DELETE+FULL"),
    ("ppcache", "pPCache"),
    ("ppcache-wt", "pPCache wt"),
    ("lazy5", "LazyFlush(5)"),
    ("lazyinf", "LazyFlush(inf)"),
    ("memory", "in-memory"),
    ("nosync", "no-sync file (diag.)"),
    ("lazyinf-excl", "LazyFlush(inf) EXCLUSIVE (diag.)"),
]
CASES = ["seq-insert", "rand-insert", "seq-update", "rand-update", "seq-delete",
         "rand-delete"]
MODELS = [
    ("virtio", "ext4 on the plain virtio disk"),
    ("flash", "ext4 on dm-delay over the virtio disk (flash-like)"),
    ("flash-w0", "sensitivity: the flash-like model without its write delay (flush delay only)"),
]
FIELDS = ["model", "mode", "case", "run", "ops", "usec", "tps", "wr_ios", "wr_bytes",
          "flushes", "wr_bytes_ops", "extra"]
# Paper (Galaxy S4, vs WAL): pPCache 1.80-2.64x, LazyFlush(5) 3.29-13.93x,
# in-memory 14.1-16.3x; bytes per 100 inserts WAL 1.72 MB, pPCache 1.16 MB,
# LazyFlush 0.07 MB. Targets (issue 3), flash-like model:
TARGET_PPCACHE = 2.5
PAPER_LAZY_MIN, PAPER_LAZY_MAX = 3.29, 13.93
TARGET_LAZYINF_OF_MEMORY = 0.9
PAPER_BYTES_MB = {"wal-full": 1.72, "ppcache": 1.16, "lazy5": 0.07}


def parse_events(path):
    rows, probes, skips, comments = [], [], [], []
    with open(path) as f:
        for line in f:
            i = line.find("MOBIO NOTE ")
            if i < 0:
                continue
            text = line[i + len("MOBIO NOTE "):].rstrip("\n")
            if text.startswith("CSV,"):
                v = text.split(",")[1:]
                if len(v) != len(FIELDS):
                    continue
                r = dict(zip(FIELDS, v))
                for k in ("run", "ops", "usec", "wr_ios", "wr_bytes", "flushes",
                          "wr_bytes_ops"):
                    r[k] = int(r[k])
                r["tps"] = float(r["tps"])
                rows.append(r)
            elif text.startswith("PROBE,"):
                probes.append(text.split(",")[1:])
            elif text.startswith("SKIP,"):
                skips.append(text)
            elif text.startswith("#"):
                comments.append(text)
    return rows, probes, skips, comments


def mean(xs):
    return statistics.mean(xs) if xs else None


def summarize(rows):
    """(model, mode, case) -> dict of means and spread."""
    groups = {}
    for r in rows:
        groups.setdefault((r["model"], r["mode"], r["case"]), []).append(r)
    out = {}
    for k, rs in groups.items():
        tps = [r["tps"] for r in rs]
        out[k] = {
            "n": len(rs),
            "tps": mean(tps),
            "sd": statistics.stdev(tps) if len(tps) > 1 else 0.0,
            "bytes_per_op": mean([r["wr_bytes"] / r["ops"] for r in rs]),
            "bytes_ops_per_op": mean([r["wr_bytes_ops"] / r["ops"] for r in rs]),
            "flushes_per_op": mean([r["flushes"] / r["ops"] for r in rs]),
            "ios_per_op": mean([r["wr_ios"] / r["ops"] for r in rs]),
        }
    return out


def fmt_tps(x):
    if x is None:
        return "-"
    return "%.0f" % x if x >= 100 else "%.1f" % x


def speedup(s, model, mode, case):
    a, b = s.get((model, mode, case)), s.get((model, "wal-full", case))
    if not a or not b or not b["tps"]:
        return None
    return a["tps"] / b["tps"]


def tables(s, models):
    md = []
    for model, desc in models:
        md.append("### %s: %s\n" % (model, desc))
        md.append("Transactions/s (mean of runs) and speedup against WAL + FULL:\n")
        md.append("| case | " + " | ".join(lbl for _, lbl in MODES) + " |")
        md.append("|---|" + "---|" * len(MODES))
        for case in CASES:
            cells = []
            for mode, _ in MODES:
                g = s.get((model, mode, case))
                if not g:
                    cells.append("-")
                    continue
                x = speedup(s, model, mode, case)
                cells.append("%s (%.2fx)" % (fmt_tps(g["tps"]), x) if x else fmt_tps(g["tps"]))
            md.append("| %s | %s |" % (case, " | ".join(cells)))
        sds = [g["sd"] / g["tps"] for (m, _, _), g in s.items() if m == model and g["tps"]]
        ns = sorted({g["n"] for (m, _, _), g in s.items() if m == model})
        if sds:
            md.append("\nRuns per cell: %s; largest relative standard deviation of a "
                      "cell: %.0f%%.\n" % ("/".join(map(str, ns)), 100 * max(sds)))
        md.append("Device writes (from /sys/block/<disk>/stat, counted from the first "
                  "transaction until a syncfs() after the last one): per 100 inserts (the "
                  "paper's Fig. 4 measure; the paper does not say which insert order), and per "
                  "transaction over all six cases:\n")
        md.append("| mode | MB per 100 seq inserts | MB per 100 rand inserts | KiB written / txn "
                  "| write requests / txn | flushes / txn |")
        md.append("|---|---|---|---|---|---|")
        for mode, lbl in MODES:
            gs = [s.get((model, mode, c)) for c in CASES]
            gs = [g for g in gs if g]
            if not gs:
                continue
            mb = []
            for c in ("seq-insert", "rand-insert"):
                g = s.get((model, mode, c))
                mb.append("%.3f" % (g["bytes_per_op"] * 100 / 1e6) if g else "-")
            paper = PAPER_BYTES_MB.get(mode)
            md.append("| %s | %s%s | %s | %.1f | %.2f | %.2f |" % (
                lbl, mb[0], " (paper %.2f)" % paper if paper is not None else "", mb[1],
                mean([g["bytes_per_op"] for g in gs]) / 1024,
                mean([g["ios_per_op"] for g in gs]),
                mean([g["flushes_per_op"] for g in gs])))
        md.append("")
    return md


def summary(s, model):
    """A plain-text speedup table (x WAL+FULL) of the main modes, for a terminal."""
    modes = [(m, l) for m, l in MODES if "(diag.)" not in l and m != "wal-full"]
    w = max(len(l) for _, l in modes)
    out = ["Speedup over WAL + synchronous=FULL (%s model; transactions/s ratio, "
           "same boot):" % model, "",
           "%-*s  %s" % (w, "mode", "  ".join("%11s" % c for c in CASES))]
    for mode, lbl in modes:
        cells = []
        for case in CASES:
            x = speedup(s, model, mode, case)
            cells.append("%11s" % ("%.2fx" % x if x else "-"))
        out.append("%-*s  %s" % (w, lbl, "  ".join(cells)))
    base = ["%11s" % (fmt_tps(s[(model, "wal-full", c)]["tps"]) + " t/s"
                      if (model, "wal-full", c) in s else "-") for c in CASES]
    out.append("%-*s  %s" % (w, "(WAL+FULL)", "  ".join(base)))
    return "\n".join(out) + "\n"


def targets(s, model="flash"):
    md = ["### Targets (flash-like model)\n",
          "| target | case | measured | met |", "|---|---|---|---|"]
    met_all = True
    for mode, lbl in (("ppcache", "pPCache (fdatasync per commit)"),
                      ("ppcache-wt", "pPCache wt (writethrough=1)")):
        for case in CASES:
            x = speedup(s, model, mode, case)
            ok = x is not None and x >= TARGET_PPCACHE
            if mode == "ppcache":
                met_all &= ok
            md.append("| %s >= %.1fx WAL+FULL | %s | %s | %s |" % (
                lbl, TARGET_PPCACHE, case, "%.2fx" % x if x else "not run",
                "yes" if ok else "**no**"))
    for case in CASES:
        x = speedup(s, model, "lazy5", case)
        ok = x is not None and x >= PAPER_LAZY_MIN
        met_all &= ok
        md.append("| LazyFlush(5) >= paper (%.2f-%.2fx) | %s | %s | %s |" % (
            PAPER_LAZY_MIN, PAPER_LAZY_MAX, case, "%.2fx" % x if x else "not run",
            ("yes, above the paper's top" if x >= PAPER_LAZY_MAX else "yes, >= the paper's lowest")
            if ok else "**no**"))
    for case in CASES:
        a, b = s.get((model, "lazyinf", case)), s.get((model, "memory", case))
        x = a["tps"] / b["tps"] if a and b and b["tps"] else None
        ok = x is not None and x >= TARGET_LAZYINF_OF_MEMORY
        met_all &= ok
        md.append("| LazyFlush(inf) >= %.1f of in-memory | %s | %s | %s |" % (
            TARGET_LAZYINF_OF_MEMORY, case, "%.2f" % x if x else "not run",
            "yes" if ok else "**no**"))
    md.append("")
    return md, met_all


def write_csv(rows, path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        for r in rows:
            w.writerow(r)


def chart(s, models, png, workdir):
    """Speedup against WAL+FULL per case, one panel per model, log scale."""
    os.makedirs(workdir, exist_ok=True)
    present = [(m, d) for m, d in models if any(k[0] == m for k in s)]
    if not present:
        return False
    plot = ["set terminal pngcairo size 1200,%d font 'sans,10'" % (420 * len(present)),
            "set output '%s'" % png,
            "set multiplot layout %d,1" % len(present),
            "set style data histogram", "set style histogram clustered gap 1",
            "set style fill solid 0.85 border -1", "set boxwidth 0.9",
            "set logscale y", "set yrange [0.1:*]", "set grid ytics",
            "set ylabel 'speedup vs WAL+FULL (log)'", "set key outside right top",
            "set xtics nomirror"]
    for model, desc in present:
        dat = os.path.join(workdir, "chart-%s.dat" % model)
        modes = [(m, lbl) for m, lbl in MODES
                 if any(speedup(s, model, m, c) for c in CASES)]
        with open(dat, "w") as f:
            f.write("case " + " ".join('"%s"' % lbl for _, lbl in modes) + "\n")
            for case in CASES:
                vals = []
                for mode, _ in modes:
                    x = speedup(s, model, mode, case)
                    vals.append("%.4f" % x if x else "NaN")
                f.write("%s %s\n" % (case, " ".join(vals)))
        plot.append("set title '%s'" % desc)
        cols = ", ".join("'%s' using %d:xtic(1) title columnheader(%d)" %
                         (dat, i + 2, i + 2) for i in range(len(modes)))
        plot.append("plot " + cols)
    plot.append("unset multiplot")
    gp = os.path.join(workdir, "chart.gp")
    with open(gp, "w") as f:
        f.write("\n".join(plot) + "\n")
    r = subprocess.run(["gnuplot", gp], stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        print("report: gnuplot failed: %s" % r.stderr.strip(), file=sys.stderr)
        return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", required=True, nargs="+",
                    help="events.txt of one or more VM runs (one per run and model)")
    ap.add_argument("--kver", required=True)
    ap.add_argument("--cmd", default="make bench-sqlite")
    ap.add_argument("--csv")
    ap.add_argument("--md")
    ap.add_argument("--png")
    ap.add_argument("--workdir", default="build/bench-sqlite")
    ap.add_argument("--notes", help="markdown appended after the tables (the analysis)")
    ap.add_argument("--summary", metavar="MODEL",
                    help="print only a plain-text speedup table for MODEL (e.g. flash)")
    a = ap.parse_args()

    rows, probes, skips, comments = [], [], [], []
    for ev in a.events:
        r, p, sk, c = parse_events(ev)
        rows += r
        probes += p
        skips += sk
        comments += c
    if not rows:
        print("report: no CSV rows in %s" % " ".join(a.events), file=sys.stderr)
        return 1
    s = summarize(rows)
    if a.summary:
        print(summary(s, a.summary))
        return 0
    models = [(m, d) for m, d in MODELS if any(r["model"] == m for r in rows)]
    head = ["Command: `%s`; kernel %s; %s." % (a.cmd, a.kver, time.strftime("%Y-%m-%d")),
            "VM: QEMU TCG, 2 vCPUs, 1 GiB, qNVRAM pool 32 MiB reserved "
            "(memmap=32M$0x30000000) backed by its own 128 MiB virtio disk; the database "
            "on ext4 (mkfs.ext4 defaults, mounted with defaults) on a 1 GiB virtio disk "
            "(cache=writeback)."]
    seen = set()
    for c in comments:
        c = re.sub(r" runs=\S+", "", c.lstrip("# ").rstrip(";"))
        if (c.startswith("device models") or c.startswith("sqlbench")) and c not in seen:
            seen.add(c)
            head.append("`%s`" % c)
    if probes:
        pm = {}
        for p in probes:
            if len(p) >= 3:
                pm.setdefault((p[2], p[0]), []).append(int(p[1]) / 1000)
        head.append("Effective device latency seen by a program (4 KiB requests, mean of "
                    "50 per boot, mean over %d boots): " % max(len(v) for v in pm.values()) +
                    "; ".join("%s %s %.2f ms" % (m, k.replace("_us", ""), mean(v))
                              for (m, k), v in sorted(pm.items())) + ".")
    for sk in sorted(set(skips)):
        head.append("Not run: `%s`." % sk)
    md = ["## SQLite: the qNVRAM paper's workload (pPCache, LazyFlush)\n"] + \
        [h + "\n" for h in head] + tables(s, models)
    met = None
    if any(m == "flash" for m, _ in models):
        t, met = targets(s)
        md += t
    text = "\n".join(md) + "\n"
    print(text)
    if a.notes and os.path.exists(a.notes):
        with open(a.notes) as f:
            text += "\n" + f.read()
    if a.csv:
        write_csv(rows, a.csv)
        print("CSV: %s" % a.csv)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text)
            if a.png:
                f.write("![speedup vs WAL+FULL](%s)\n" % os.path.relpath(a.png, os.path.dirname(a.md)))
            if a.csv:
                f.write("\nRaw rows: `%s`.\n" % a.csv)
        print("table: %s" % a.md)
    if a.png and chart(s, models, os.path.abspath(a.png), a.workdir):
        print("chart: %s" % a.png)
    if met is not None:
        print("targets: %s" % ("all met" if met else "not all met (see the table)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
