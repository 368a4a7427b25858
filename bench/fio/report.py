#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Turn a smartio-bench VM run into a CSV, a markdown table and charts.

USAGE
    bench/fio/report.py --events build/vm/KVER/smartio-bench/events.txt
        --kver KVER --cmd "make bench-smartio" [--csv OUT.csv]
        [--md docs/smartio-results.md] [--png docs/smartio-bench.png]

The guest (bench/fio/smartio-bench.sh) sends its results as notes; events.txt
holds them as "guest: MOBIO NOTE CSV,<kind>,...":

    CSV,lat,model,label,pattern,phase,r_mean_us,r_p99_us,r_ios,w_mean_us,w_p99_us,w_ios,w_kib_s
    CSV,mixed,model,sched,read_pct,ms,r_mean_us,w_mean_us
    CSV,launch,model,sched,alone_ms,beside_writer_ms
    CSV,model,name,description / CSV,params,... / CSV,smartio,... (counters)

Slowdowns are ratios within the run: read slowdown = reader latency beside the
writer / reader latency alone (phase "read"), write slowdown = writer latency
beside the reader / writer latency alone (phase "write"); the curve's points
(labels smartio-*) take the alone phases of the "smartio" label.
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

SCHEDS = ["none", "mq-deadline", "kyber", "bfq", "smartio"]
PATTERNS = ["seq", "rand"]
# issue 4 targets: (read slowdown, write slowdown) bounds per pattern
TARGETS = {"seq": (1.3, 1.5), "rand": (1.3, 1.6)}
SEED = {"seq": (1.72, 1.51), "rand": (1.97, 1.83)}
MIXED_TARGET = 0.49


def num(v):
    try:
        return float(v)
    except ValueError:
        return None


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt(v, d=2):
    return "-" if v is None else ("%.*f" % (d, v))


def slowdowns(rows):
    """{(model, label, pattern): dict of slowdowns and raw latencies}"""
    lat = {}
    for r in rows:
        if r[0] == "lat" and len(r) >= 12:
            model, label, pat, phase = r[1:5]
            lat[(model, label, pat, phase)] = [num(x) for x in r[5:12]]
    out = {}
    for (model, label, pat, phase), v in lat.items():
        if phase != "both":
            continue
        base = label if (model, label, pat, "read") in lat else "smartio"
        ra = lat.get((model, base, pat, "read"))
        wa = lat.get((model, base, pat, "write"))
        if not ra or not wa:
            continue
        out[(model, label, pat)] = {
            "r_mean": ratio(v[0], ra[0]), "r_p99": ratio(v[1], ra[1]),
            "w_mean": ratio(v[3], wa[3]), "w_p99": ratio(v[4], wa[4]),
            "w_tput": ratio(wa[6], v[6]),
            "r_alone_us": ra[0], "r_both_us": v[0], "w_alone_us": wa[3], "w_both_us": v[3],
            "w_alone_kib": wa[6], "w_both_kib": v[6], "r_alone_ios": ra[2], "r_both_ios": v[2],
        }
    return out


def write_csv(path, sd, rows):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["kind", "model", "label", "pattern", "read_slowdown_mean",
                    "read_slowdown_p99", "write_slowdown_mean", "write_slowdown_p99",
                    "write_tput_loss", "read_alone_us", "read_beside_us",
                    "write_alone_us", "write_beside_us", "write_alone_kib_s",
                    "write_beside_kib_s"])
        for (model, label, pat), s in sorted(sd.items()):
            w.writerow(["slowdown", model, label, pat] +
                       [fmt(s[k], 3) for k in ("r_mean", "r_p99", "w_mean", "w_p99", "w_tput")] +
                       [fmt(s[k], 1) for k in ("r_alone_us", "r_both_us", "w_alone_us",
                                               "w_both_us", "w_alone_kib", "w_both_kib")])
        for r in rows:
            if r[0] in ("mixed", "launch"):
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
                v = sd.get((model, s, pat), {})
                vals += [v.get("r_mean") or 0, v.get("w_mean") or 0]
            f.write("%s %s\n" % (s, " ".join("%.3f" % x for x in vals)))
    ok = gnuplot("""
set terminal png size 1000,520
set output '%s'
set title "Slowdown beside the other stream (mean latency ratio), %s model"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set logscale y
set yrange [0.8:*]
set ylabel "latency together / alone (log)"
set key top right
set grid ytics
plot '%s' using 2:xtic(1) title 'seq read', '' using 3 title 'seq write', \\
     '' using 4 title 'rand read', '' using 5 title 'rand write'
""" % (png, model, dat))
    if not any(l.startswith("smartio-") for (m, l, _) in sd if m == model):
        return ok
    plots = []
    for pat in PATTERNS:
        cdat = os.path.join(tmp, "curve-%s.dat" % pat)
        pdat = os.path.join(tmp, "peers-%s.dat" % pat)
        with open(cdat, "w") as f, open(pdat, "w") as g:
            for (m, label, p), v in sorted(sd.items()):
                if m != model or p != pat or not v["r_mean"] or not v["w_mean"]:
                    continue
                name = label.replace("smartio-", "").replace("0000us", "0ms").replace("000us", "ms")
                (f if label.startswith("smartio") else g).write(
                    "%.3f %.3f %s\n" % (v["w_mean"], v["r_mean"], name))
        plots.append("""
set title "%s: read vs write slowdown"
plot '%s' using 1:2 with points pt 7 ps 1.3 title 'smartio (settings)', \\
     '' using 1:2:3 with labels offset 0,0.8 font ',7' notitle, \\
     '%s' using 1:2 with points pt 5 ps 1.3 title 'peers', \\
     '' using 1:2:3 with labels offset 0,-0.8 font ',7' notitle
""" % (pat, cdat, pdat))
    ok = gnuplot("""
set terminal png size 1200,560
set output '%s'
set multiplot layout 1,2 title "Trade-off, %s model: smartio with fixed write rates (controller off) and controller targets; peers"
set logscale xy
set xrange [0.8:4]
set yrange [0.8:400]
set xlabel "write slowdown (mean)"
set ylabel "read slowdown (mean)"
set grid
set key top right
%s
unset multiplot
""" % (curve_png, model, "".join(plots))) and ok
    return ok


def mixed_bound(mixed, sd, pcts, mq_avg_ms, params):
    """The shortest completion time a scheduler can reach on the shared budget.

    The model of the slowdown targets: read and write KiB/s together stay
    within B (the writer alone), and the qd-1 reader never beats R (4 KiB /
    its latency alone). A mix of Rb read and Wb written KiB then takes at
    least max((Rb + Wb) / B, Rb / R) seconds, whatever the scheduler does;
    fio's own start-up time comes on top.
    """
    model = mixed[0][1]
    alone = [sd.get((model, s, p)) for s in SCHEDS for p in PATTERNS]
    alone = [v for v in alone if v and v["w_alone_kib"] and v["r_alone_us"]]
    if not alone:
        return []
    B = max(v["w_alone_kib"] for v in alone)
    R = max(4.0e6 / v["r_alone_us"] for v in alone)
    mix_kib = num(next((kv.split("=")[1] for kv in params.split(",")
                        if kv.startswith("mix_mb=")), "32")) * 1024
    tmin = {p: 1000 * max(mix_kib / B, mix_kib * p / 100 / R) for p in pcts}
    best = 1 - sum(tmin.values()) / len(tmin) / mq_avg_ms
    return ["", "Lower bound (budget arithmetic, model %s): writer alone B = %.0f KiB/s, reader "
            "alone R = %.0f KiB/s (best of every scheduler's alone phases); %.0f MiB of I/O with p%% "
            "reads takes at least max(total / B, reads / R): %s ms, mean %.0f ms. So no scheduler "
            "can be more than %.0f%% better than mq-deadline's %.0f ms here; the %.0f%% target "
            "is %s on this model." % (
                model, B, R, mix_kib / 1024,
                ", ".join("%d%%: %.0f" % (p, tmin[p]) for p in pcts),
                sum(tmin.values()) / len(tmin), best * 100, mq_avg_ms, MIXED_TARGET * 100,
                "out of reach" if best < MIXED_TARGET else "reachable")]


def markdown(a, rows, sd):
    models = {r[1]: r[2] for r in rows if r[0] == "model"}
    params = next((",".join(r[1:]) for r in rows if r[0] == "params"), "")
    L = ["# SmartIO benchmark results", "",
         "Command: `%s` (kernel %s). Parameters: %s." % (a.cmd, a.kver, params), "",
         "One VM boot runs every scheduler back to back on the same device models; every "
         "ratio is against the alone phases of the same scheduler in the same boot "
         "(DESIGN.md section 8). TCG: absolute times mean little, ratios do.", ""]
    for m, desc in models.items():
        extra = (" (throttling.bps-total=%d)" % a.throttle_bps) if m == "virtio" else ""
        L.append("- model **%s**: %s%s" % (m, desc, extra))
    L.append("")
    for m in models:
        L += ["## Slowdown, model %s" % m, "",
              "| scheduler | seq read mean | seq read p99 | seq write mean | seq write p99 "
              "| rand read mean | rand read p99 | rand write mean | rand write p99 |",
              "|---|---|---|---|---|---|---|---|---|"]
        labels = SCHEDS + sorted(l for (mm, l, _) in sd if mm == m and l not in SCHEDS)
        seen = []
        for label in labels:
            if label in seen or not any((m, label, p) in sd for p in PATTERNS):
                continue
            seen.append(label)
            cells = []
            for p in PATTERNS:
                v = sd.get((m, label, p), {})
                cells += [fmt(v.get(k)) + "x" if v.get(k) else "-"
                          for k in ("r_mean", "r_p99", "w_mean", "w_p99")]
            L.append("| %s | %s |" % (label, " | ".join(cells)))
        L += ["", "Absolute (mean latency, µs; writer KiB/s):", "",
              "| scheduler | pattern | read alone | read beside | write alone | write beside "
              "| write KiB/s alone | beside |", "|---|---|---|---|---|---|---|---|"]
        for label in seen:
            for p in PATTERNS:
                v = sd.get((m, label, p))
                if v:
                    L.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                        label, p, fmt(v["r_alone_us"], 0), fmt(v["r_both_us"], 0),
                        fmt(v["w_alone_us"], 0), fmt(v["w_both_us"], 0),
                        fmt(v["w_alone_kib"], 0), fmt(v["w_both_kib"], 0)))
        L.append("")
    mixed = [r for r in rows if r[0] == "mixed"]
    if mixed:
        pcts = sorted({int(r[3]) for r in mixed})

        def resp(r):  # mean response time of every request of the mix, ms
            rm, wm, ri, wi = (num(x) for x in (r[5:9] + ["0", "0"])[:4])
            n = (ri or 0) + (wi or 0)
            return ((rm or 0) * (ri or 0) + (wm or 0) * (wi or 0)) / n / 1000 if n else None

        for title, get in (("mean response time of a request (reads and writes), ms", resp),
                           ("time until reader and writer are both done, ms",
                            lambda r: num(r[4]))):
            L += ["## Mixed workload: %s" % title, "",
                  "| scheduler | " + " | ".join("%d%% reads" % p for p in pcts) + " | mean |",
                  "|---|" + "---|" * (len(pcts) + 1)]
            avg = {}
            for s in SCHEDS:
                v = {int(r[3]): get(r) for r in mixed if r[2] == s and len(r) >= 9}
                v = {k: x for k, x in v.items() if x is not None}
                if not v:
                    continue
                avg[s] = sum(v.values()) / len(v)
                L.append("| %s | %s | %.1f |" % (s, " | ".join(fmt(v.get(p), 1) for p in pcts),
                                                 avg[s]))
            if "smartio" in avg and "mq-deadline" in avg:
                gain = 1 - avg["smartio"] / avg["mq-deadline"]
                L += ["", "smartio vs mq-deadline: %.0f%% %s on average (target: %.0f%% better)." %
                      (abs(gain) * 100, "better" if gain >= 0 else "worse", MIXED_TARGET * 100)]
                if title.startswith("time until"):
                    L += mixed_bound(mixed, sd, pcts, avg["mq-deadline"], params)
            L.append("")
    launch = [r for r in rows if r[0] == "launch"]
    if launch:
        L += ["## Cold app launch (read %s, ms; median of 3)" % params.split("launch=")[-1], "",
              "| scheduler | alone | beside a writer | slowdown |", "|---|---|---|---|"]
        for r in launch:
            L.append("| %s | %s | %s | %s |" % (r[2], r[3], r[4], fmt(ratio(num(r[4]), num(r[3])))))
        lb = {r[2]: num(r[4]) for r in launch}
        if lb.get("smartio") and lb.get("mq-deadline"):
            L += ["", "smartio vs mq-deadline beside the writer: %+.0f%% (seed: -21%%)." %
                  ((lb["smartio"] / lb["mq-deadline"] - 1) * 100)]
        L.append("")
    L += ["## Targets (issue 4)", ""]
    for m in models:
        for p in PATTERNS:
            v = sd.get((m, "smartio", p))
            if not v:
                continue
            tr, tw = TARGETS[p]
            L.append("- %s %s: smartio read %sx (target <= %.1fx, seed %.2fx), write %sx "
                     "(target <= %.1fx, seed %.2fx)" % (m, p, fmt(v["r_mean"]), tr, SEED[p][0],
                                                       fmt(v["w_mean"]), tw, SEED[p][1]))
            # Shared budget: the writer alone fills it (B = its KiB/s); the
            # reader alone moves R = 4 KiB / its latency. Beside each other,
            # R / r + B / w <= B: the best write slowdown at read slowdown r.
            B, R = v["w_alone_kib"], 4.0e6 / v["r_alone_us"] if v["r_alone_us"] else None
            if m == "nullb" and B and R:
                def wmin(r):
                    left = B - R / r
                    return B / left if left > 0 else float("inf")
                used = (R / v["r_mean"] + B / v["w_mean"]) / B if v["r_mean"] and v["w_mean"] else None
                L.append("  - budget arithmetic: writer alone B = %.0f KiB/s, reader alone R = "
                         "%.0f KiB/s; at read slowdown r the writer gets at most B - R/r, so "
                         "write >= B / (B - R/r): read %.1fx needs write >= %.2fx (target %.1fx); "
                         "at smartio's read %.2fx, write >= %.2fx; smartio uses %.0f%% of the "
                         "budget" % (B, R, tr, wmin(tr), tw, v["r_mean"], wmin(v["r_mean"]),
                                     (used or 0) * 100))
            peers = [(s, sd.get((m, s, p))) for s in SCHEDS if s != "smartio"]
            lower = all(x and x["r_mean"] and v["r_mean"] <= x["r_mean"] for _, x in peers)
            dl = sd.get((m, "mq-deadline", p))
            L.append("  - lower read slowdown than every peer: %s; write slowdown vs "
                     "mq-deadline: %s vs %s" % ("yes" if lower else "no", fmt(v["w_mean"]),
                                               fmt(dl["w_mean"] if dl else None)))
    L.append("")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", required=True)
    ap.add_argument("--kver", required=True)
    ap.add_argument("--cmd", default="make bench-smartio")
    ap.add_argument("--csv")
    ap.add_argument("--md")
    ap.add_argument("--png")
    ap.add_argument("--throttle-bps", type=int, default=0)
    a = ap.parse_args()
    rows = parse(a.events)
    if not rows:
        print("report: no CSV notes in %s" % a.events, file=sys.stderr)
        return 1
    sd = slowdowns(rows)
    if a.csv:
        write_csv(a.csv, sd, rows)
        print("report: CSV %s" % a.csv)
    md = markdown(a, rows, sd)
    print(md)
    if a.md:
        os.makedirs(os.path.dirname(os.path.abspath(a.md)), exist_ok=True)
        # keep the start-up section (bench/fio/startup_report.py writes it)
        keep = open(a.md).read() if os.path.exists(a.md) else ""
        b, e = "<!-- startup:begin -->", "<!-- startup:end -->"
        if b in keep and e in keep:
            md = md.rstrip("\n") + "\n\n" + keep[keep.index(b):keep.index(e) + len(e)] + "\n"
        with open(a.md, "w") as f:
            f.write(md)
        print("report: table %s" % a.md)
    if a.png:
        with tempfile.TemporaryDirectory() as tmp:
            model = "nullb" if any(k[0] == "nullb" for k in sd) else next(iter(sd), ("?",))[0]
            curve = a.png.replace(".png", "-curve.png")
            if charts(sd, model, a.png, curve, tmp):
                print("report: charts %s, %s" % (a.png, curve))
    return 0


if __name__ == "__main__":
    sys.exit(main())
