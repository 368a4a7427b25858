#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn smartio-bench VM boots into a CSV, markdown tables and charts.

USAGE
    bench/fio/report.py --events B1.events [--events B2.events ...]
        --kver KVER --cmd "make bench-smartio" [--csv OUT.csv]
        [--md docs/smartio-results.md] [--png docs/smartio-bench.png]

Only the section between <!-- slowdown:begin --> and <!-- slowdown:end --> of
--md is rewritten (appended when missing); the rest of the file is kept.

The guest (bench/fio/smartio-bench.sh) sends its results as notes; each
boot's events file holds them as "guest: MOBIO NOTE CSV,<kind>,...":

    CSV,lat,boot,round,model,label,pattern,phase,r_mean_us,r_p99_us,r_ios,w_mean_us,w_p99_us,w_ios,w_kib_s
    CSV,mixed,boot,round,model,sched,read_pct,ms,r_mean_us,w_mean_us,r_ios,w_ios
    CSV,model,name,description / CSV,params,... / CSV,smartio,... (counters)

Slowdowns are ratios within a round: read slowdown = reader latency beside
the writer / reader latency alone (phase "read"), write slowdown = writer
latency beside the reader / writer latency alone (phase "write"), both of
the same scheduler in the same round of the same boot; the curve's points
(labels SCHED-tuned and SCHED@...) run only "together" and take the alone
phases of SCHED in that round. Every figure is the median over the rounds
of every boot with its 95% interval (bench/stats.py: boots, then rounds);
two intervals that overlap are "not separable".
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from guest_csv import parse, splice_section  # noqa: E402
import stats  # noqa: E402

SCHEDS = ["none", "mq-deadline", "kyber", "bfq", "smartio"]
PATTERNS = ["seq", "rand"]
# issue 4 targets: (read slowdown, write slowdown) bounds per pattern
TARGETS = {"seq": (1.3, 1.5), "rand": (1.3, 1.6)}
SEED = {"seq": (1.72, 1.51), "rand": (1.97, 1.83)}
MIXED_TARGET = 0.49
BEGIN, END = "<!-- slowdown:begin -->", "<!-- slowdown:end -->"
RATIOS = ("r_mean", "r_p99", "w_mean", "w_p99")


def num(v):
    try:
        return float(v)
    except ValueError:
        return None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, d=2):
    return "-" if v is None else ("%.*f" % (d, v))


def base_of(label):
    """The scheduler whose alone phases a label's ratios are against."""
    name = label.split("@")[0]
    return name[:-len("-tuned")] if name.endswith("-tuned") else name


def slowdowns(rows):
    """{(model, label, pattern): {(boot, round): dict of ratios and raw values}}"""
    lat = {}
    for r in rows:
        if r[0] == "lat" and len(r) >= 14:
            boot, rnd, model, label, pat, phase = r[1:7]
            lat[(boot, rnd, model, label, pat, phase)] = [num(x) for x in r[7:14]]
    out = {}
    for (boot, rnd, model, label, pat, phase), v in lat.items():
        if phase != "both":
            continue
        base = label if (boot, rnd, model, label, pat, "read") in lat else base_of(label)
        ra = lat.get((boot, rnd, model, base, pat, "read"))
        wa = lat.get((boot, rnd, model, base, pat, "write"))
        if not ra or not wa:
            continue
        out.setdefault((model, label, pat), {})[(boot, rnd)] = {
            "r_mean": ratio(v[0], ra[0]), "r_p99": ratio(v[1], ra[1]),
            "w_mean": ratio(v[3], wa[3]), "w_p99": ratio(v[4], wa[4]),
            "r_alone_us": ra[0], "r_both_us": v[0], "w_alone_us": wa[3], "w_both_us": v[3],
            "w_alone_kib": wa[6], "w_both_kib": v[6],
        }
    return out


def iv(per_round, key):
    """(median, lo, hi, n) of @key over {(boot, round): dict}, or None."""
    return stats.interval({k: [d[key]] for k, d in per_round.items()
                           if d.get(key) is not None})


def med(per_round, key):
    v = [d[key] for d in per_round.values() if d.get(key) is not None]
    return stats.median(v) if v else None


def cell(i, d=2, unit="x"):
    """median [lo, hi] of an interval; a single value has none"""
    if not i:
        return "-"
    if i[3] < 2:
        return "%.*f%s (1 round)" % (d, i[0], unit)
    return "%.*f%s [%.*f, %.*f]" % (d, i[0], unit, d, i[1], d, i[2])


def label_key(label):
    """Sort key: by name, then each sweep by its value (0, "no limit", last)"""
    name, _, rest = label.partition("@")
    value = rest.rsplit("=", 1)[-1]
    return (name, rest.rsplit("=", 1)[0], (int(value) or 1 << 62) if value.isdigit() else 0,
            label)


def write_csv(path, sd, rows):
    """One row per (model, label, pattern, boot, round), then the mixed rows."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    keys = ("r_mean", "r_p99", "w_mean", "w_p99", "r_alone_us", "r_both_us", "w_alone_us",
            "w_both_us", "w_alone_kib", "w_both_kib")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "model", "label", "pattern", "boot", "round", "read_slowdown_mean",
                    "read_slowdown_p99", "write_slowdown_mean", "write_slowdown_p99",
                    "read_alone_us", "read_beside_us", "write_alone_us", "write_beside_us",
                    "write_alone_kib_s", "write_beside_kib_s"])
        for (model, label, pat), per in sorted(sd.items()):
            for (boot, rnd), s in sorted(per.items()):
                w.writerow(["slowdown", model, label, pat, boot, rnd] +
                           [fmt(s[k], 3) for k in keys])
        for r in rows:
            if r[0] == "mixed":
                w.writerow(r)


def gnuplot(script):
    if not shutil.which("gnuplot"):
        print("report: gnuplot missing (apt-get install gnuplot-nox): no chart", file=sys.stderr)
        return False
    r = subprocess.run(["gnuplot"], input=script, text=True, stderr=subprocess.PIPE)
    if r.returncode:
        print("report: gnuplot: %s" % r.stderr.strip(), file=sys.stderr)
    return r.returncode == 0


def charts(sd, model, png, curve_png, tmp):
    dat = os.path.join(tmp, "bars.dat")
    with open(dat, "w") as f:
        for s in SCHEDS:
            vals = []
            for pat in PATTERNS:
                for k in ("r_mean", "w_mean"):
                    i = iv(sd.get((model, s, pat), {}), k) or (0, 0, 0, 0)
                    vals += i[:3]
            f.write("%s %s\n" % (s, " ".join("%.3f" % x for x in vals)))
    ok = gnuplot("""
set terminal png size 1000,520
set output '%s'
set title "Slowdown beside the other stream (mean latency ratio; median, 95%% interval), %s model"
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.8:*]
set ylabel "latency together / alone (log)"
set key top right
set grid ytics
plot '%s' using 2:3:4:xtic(1) title 'seq read', '' using 5:6:7 title 'seq write', \\
     '' using 8:9:10 title 'rand read', '' using 11:12:13 title 'rand write'
""" % (png, model, dat))
    plots = []
    for pat in PATTERNS:
        cdat = os.path.join(tmp, "curve-%s.dat" % pat)
        pdat = os.path.join(tmp, "peers-%s.dat" % pat)
        with open(cdat, "w") as f, open(pdat, "w") as g:
            for (m, label, p), per in sorted(sd.items(), key=lambda kv: label_key(kv[0][1])):
                r, w = iv(per, "r_mean"), iv(per, "w_mean")
                if m != model or p != pat or not r or not w:
                    continue
                name = label.replace("smartio@", "").replace("controller=0+write_rate_kbps=",
                                                             "rate ").replace(
                    "target_slowdown_pct=", "target ")
                (f if label.startswith("smartio") else g).write(
                    "%.3f %.3f %.3f %.3f %.3f %.3f \"%s\"\n" %
                    (w[0], r[0], w[1], w[2], r[1], r[2], name))
        plots.append("""
set title "%s: read vs write slowdown (median, 95%% interval)"
plot '%s' using 1:2:3:4:5:6 with xyerrorbars pt 7 ps 1.1 title 'smartio (settings)', \\
     '' using 1:2:7 with labels offset 0,0.8 font ',7' notitle, \\
     '%s' using 1:2:3:4:5:6 with xyerrorbars pt 5 ps 1.1 title 'peers (defaults, tuned)', \\
     '' using 1:2:7 with labels offset 0,-0.8 font ',7' notitle
""" % (pat, cdat, pdat))
    ok = gnuplot("""
set terminal png size 1200,560
set output '%s'
set multiplot layout 1,2 title "Trade-off, %s model: smartio with fixed write rates (controller off) and controller targets; peers at defaults and tuned"
set logscale xy
set xrange [0.8:12]
set yrange [0.8:600]
set xlabel "write slowdown (mean)"
set ylabel "read slowdown (mean)"
set grid
set key top right
%s
unset multiplot
""" % (curve_png, model, "".join(plots))) and ok
    return ok


def mixed_rounds(mixed, get):
    """{sched: {(boot, round): {pct: value}}} of the mixed rows."""
    out = {}
    for r in mixed:
        v = get(r)
        if v is not None:
            out.setdefault(r[4], {}).setdefault((r[1], r[2]), {})[int(r[5])] = v
    return out


def mixed_bound(sd, model, pcts, mq_ms, params):
    """The shortest completion time a scheduler can reach on the shared budget.

    The model of the slowdown targets: read and write KiB/s together stay
    within B (the writer alone), and the qd-1 reader never beats R (4 KiB /
    its latency alone). A mix of Rb read and Wb written KiB then takes at
    least max((Rb + Wb) / B, Rb / R) seconds, whatever the scheduler does;
    fio's own start-up time comes on top.
    """
    alone = [sd.get((model, s, p)) for s in SCHEDS for p in PATTERNS]
    alone = [v for v in alone if v]
    B = max((med(v, "w_alone_kib") or 0 for v in alone), default=0)
    R = max((4.0e6 / (med(v, "r_alone_us") or float("inf")) for v in alone), default=0)
    if not B or not R:
        return []
    mix_kib = num(next((kv.split("=")[1] for kv in params.split(",")
                        if kv.startswith("mix_mb=")), "32")) * 1024
    tmin = {p: 1000 * max(mix_kib / B, mix_kib * p / 100 / R) for p in pcts}
    best = 1 - sum(tmin.values()) / len(tmin) / mq_ms
    return ["", "Lower bound (budget arithmetic, model %s): writer alone B = %.0f KiB/s, reader "
            "alone R = %.0f KiB/s (best of every scheduler's alone phases, medians); %.0f MiB of "
            "I/O with p%% reads takes at least max(total / B, reads / R): %s ms, mean %.0f ms. So "
            "no scheduler can be more than %.0f%% better than mq-deadline's %.0f ms here; the "
            "%.0f%% target is %s on this model." % (
                model, B, R, mix_kib / 1024,
                ", ".join("%d%%: %.0f" % (p, tmin[p]) for p in pcts),
                sum(tmin.values()) / len(tmin), best * 100, mq_ms, MIXED_TARGET * 100,
                "out of reach" if best < MIXED_TARGET else "reachable")]


def separable_below(a, b):
    """True when interval @a lies wholly below interval @b (both of >= 2 rounds)."""
    return bool(a and b and a[3] >= 2 and b[3] >= 2 and a[2] < b[1])


def markdown(a, rows, sd, boots):
    models = {r[1]: r[2] for r in rows if r[0] == "model"}
    params = [",".join(r[1:]) for r in rows if r[0] == "params"]
    rounds = {(r[1], r[2]) for r in rows if r[0] in ("lat", "mixed")}
    L = [BEGIN, "## Slowdown, trade-off and mixed workload", "",
         "Command: `%s` (kernel %s); %d boot(s), %d round(s) in all. Parameters of boot 1: %s." %
         (a.cmd, a.kver, boots, len(rounds), params[0] if params else "?"), "",
         "Each round runs every config once, in an order shuffled per round and boot; every "
         "ratio is against the alone phases of the same scheduler in the same round "
         "(DESIGN.md section 8). Figures are medians over the rounds with a 95% bootstrap "
         "interval (bench/stats.py: boots, then rounds within them); two intervals that "
         "overlap are not separable. TCG: absolute times mean little, ratios do.", ""]
    for m, desc in models.items():
        extra = (" (throttling.bps-total=%d)" % a.throttle_bps) if m == "virtio" else ""
        L.append("- model **%s**: %s%s" % (m, desc, extra))
    L.append("")
    for m in models:
        labels = [s for s in SCHEDS if any((m, s, p) in sd for p in PATTERNS)]
        labels += sorted({l for (mm, l, _) in sd if mm == m and l not in SCHEDS}, key=label_key)
        if not labels:
            continue
        L += ["### Slowdown, model %s" % m, "",
              "Mean latency beside the other stream / alone. Rows in italics are the "
              "trade-off curve's points (together phase only): the peers' tuned points, "
              "smartio with its controller off at a fixed write rate (KiB/s, 0 = no limit), "
              "smartio at other controller targets.", "",
              "| config | seq read | seq write | rand read | rand write |",
              "|---|---|---|---|---|"]
        for label in labels:
            cells = [cell(iv(sd.get((m, label, p), {}), k))
                     for p in PATTERNS for k in ("r_mean", "w_mean")]
            L.append("| %s | %s |" % (label if label in SCHEDS else "_%s_" % label,
                                      " | ".join(cells)))
        L += ["", "p99 latency beside / alone (median over rounds):", "",
              "| config | seq read p99 | seq write p99 | rand read p99 | rand write p99 |",
              "|---|---|---|---|---|"]
        for label in labels:
            L.append("| %s | %s |" % (label, " | ".join(
                fmt(med(sd.get((m, label, p), {}), k)) + "x"
                if med(sd.get((m, label, p), {}), k) else "-"
                for p in PATTERNS for k in ("r_p99", "w_p99"))))
        L += ["", "Absolute (medians over rounds; mean latency, µs; writer KiB/s):", "",
              "| config | pattern | read alone | read beside | write alone | write beside "
              "| write KiB/s alone | beside |", "|---|---|---|---|---|---|---|---|"]
        for label in labels:
            for p in PATTERNS:
                v = sd.get((m, label, p))
                if v:
                    L.append("| %s | %s | %s |" % (label, p, " | ".join(
                        fmt(med(v, k), 0) for k in ("r_alone_us", "r_both_us", "w_alone_us",
                                                    "w_both_us", "w_alone_kib", "w_both_kib"))))
        L.append("")
    mixed = [r for r in rows if r[0] == "mixed" and len(r) >= 11]
    if mixed:
        model = mixed[0][3]
        pcts = sorted({int(r[5]) for r in mixed})

        def resp(r):  # mean response time of every request of the mix, ms
            rm, wm, ri, wi = (num(x) for x in r[7:11])
            n = (ri or 0) + (wi or 0)
            return ((rm or 0) * (ri or 0) + (wm or 0) * (wi or 0)) / n / 1000 if n else None

        for title, get in (("mean response time of a request (reads and writes), ms", resp),
                           ("time until reader and writer are both done, ms",
                            lambda r: num(r[6]))):
            per = mixed_rounds(mixed, get)
            L += ["### Mixed workload (model %s): %s" % (model, title), "",
                  "Medians over rounds; the last column is the mean over the read shares, "
                  "median and 95% interval over rounds.", "",
                  "| scheduler | " + " | ".join("%d%% reads" % p for p in pcts) + " | mean |",
                  "|---|" + "---|" * (len(pcts) + 1)]
            means = {}
            for s in SCHEDS:
                if s not in per:
                    continue
                means[s] = {k: [sum(v.values()) / len(v)] for k, v in per[s].items()
                            if len(v) == len(pcts)}
                L.append("| %s | %s | %s |" % (s, " | ".join(
                    fmt(stats.median([v[p] for v in per[s].values() if p in v]), 1)
                    for p in pcts), cell(stats.interval(means[s]), 1, "")))
            if "smartio" in means and "mq-deadline" in means:
                paired = {k: [means["smartio"][k][0] / means["mq-deadline"][k][0]]
                          for k in means["smartio"] if k in means["mq-deadline"]}
                i = stats.interval(paired)
                if i:
                    verdict = ("one round: no interval" if i[3] < 2 else
                               "separably below 1" if i[2] < 1 else
                               "separably above 1" if i[1] > 1 else "not separable from 1")
                    L += ["", "smartio / mq-deadline, paired per round: %s, %s (target: "
                          "<= %.2f, %.0f%% better)." % (cell(i, 3), verdict, 1 - MIXED_TARGET,
                                                       MIXED_TARGET * 100)]
                if title.startswith("time until") and means["mq-deadline"]:
                    L += mixed_bound(sd, model, pcts,
                                     stats.median([v[0] for v in means["mq-deadline"].values()]),
                                     params[0] if params else "")
            L.append("")
    L += ["### Targets (issue 4)", ""]
    for m in models:
        for p in PATTERNS:
            v = sd.get((m, "smartio", p))
            if not v:
                continue
            tr, tw = TARGETS[p]
            r, w = iv(v, "r_mean"), iv(v, "w_mean")
            L.append("- %s %s: smartio read %s (target <= %.1fx, seed %.2fx), write %s "
                     "(target <= %.1fx, seed %.2fx)" % (m, p, cell(r), tr, SEED[p][0],
                                                       cell(w), tw, SEED[p][1]))
            # Shared budget: the writer alone fills it (B = its KiB/s); the
            # reader alone moves R = 4 KiB / its latency. Beside each other,
            # R / r + B / w <= B: the best write slowdown at read slowdown r.
            B = med(v, "w_alone_kib")
            R = 4.0e6 / med(v, "r_alone_us") if med(v, "r_alone_us") else None
            if m == "nullb" and B and R and r and w:
                def wmin(x):
                    left = B - R / x
                    return B / left if left > 0 else float("inf")
                used = (R / r[0] + B / w[0]) / B
                L.append("  - budget arithmetic (medians): writer alone B = %.0f KiB/s, reader "
                         "alone R = %.0f KiB/s; at read slowdown r the writer gets at most "
                         "B - R/r, so write >= B / (B - R/r): read %.1fx needs write >= %.2fx "
                         "(target %.1fx); at smartio's read %.2fx, write >= %.2fx; smartio "
                         "uses %.0f%% of the budget" % (B, R, tr, wmin(tr), tw, r[0],
                                                        wmin(r[0]), used * 100))
            below = [s for s in SCHEDS if s != "smartio" and
                     separable_below(r, iv(sd.get((m, s, p), {}), "r_mean"))]
            others = [s for s in SCHEDS if s != "smartio" and (m, s, p) in sd]
            if r and r[3] < 2:
                L.append("  - 1 round: no interval, nothing separable")
            else:
                L.append("  - read slowdown separably below: %s of %s" % (
                    ", ".join(below) or "none", ", ".join(others)))
    L.append(END)
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", action="append", required=True,
                    help="one boot's events file (repeat per boot)")
    ap.add_argument("--kver", required=True)
    ap.add_argument("--cmd", default="make bench-smartio")
    ap.add_argument("--csv")
    ap.add_argument("--md")
    ap.add_argument("--png")
    ap.add_argument("--throttle-bps", type=int, default=0)
    a = ap.parse_args()
    # Boots are numbered by the order of --events, not by the guest's own
    # number: runs made apart (each with its boot 1) pool.
    rows = []
    for n, e in enumerate(a.events, 1):
        for r in parse(e):
            if r[0] in ("lat", "mixed", "smartio") and len(r) > 1:
                r[1] = str(n)
            rows.append(r)
    if not rows:
        print("report: no CSV notes in %s" % ", ".join(a.events), file=sys.stderr)
        return 1
    sd = slowdowns(rows)
    if a.csv:
        write_csv(a.csv, sd, rows)
        print("report: CSV %s" % a.csv)
    md = markdown(a, rows, sd, len(a.events))
    print(md)
    if a.md:
        splice_section(a.md, BEGIN, END, md)
        print("report: section of %s" % a.md)
    if a.png and sd:
        with tempfile.TemporaryDirectory() as tmp:
            model = "nullb" if any(k[0] == "nullb" for k in sd) else next(iter(sd))[0]
            curve = a.png.replace(".png", "-curve.png")
            if charts(sd, model, a.png, curve, tmp):
                print("report: charts %s, %s" % (a.png, curve))
    return 0


if __name__ == "__main__":
    sys.exit(main())
