#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Replay smartio's read-slowdown signal from a start-up bench's block traces.

startup-bench.sh with startup.trace=2 saves, per cell, the smartio_dispatch,
block_rq_issue and block_rq_complete events of the app's device
(trace-CONFIG-LEVEL.txt) into a tar on its "out" disk. This reads them and
prints, per cell:

  - per size class (smartio_size_class(): 4 KiB and below .. 512 KiB and
    above): reads, how many ran alone (no write on the device, none done
    within --read-idle-us before their dispatch, none dispatched while they
    ran), and the latency p50/p90 of the alone ones and of all, from
    smartio's dispatch to completion (under another scheduler, from the
    first issue: that misses the wait for a busy driver, which on null_blk's
    bandwidth limit is most of it);
  - the mean latency of reads that overlapped a write over the mean of their
    class alone in this config's cells so far (the idle cell, "-0", sorts
    first): what writes cost a read here;
  - the controller's windows replayed with the kernel's rules (window_ms;
    --signal sum, the kernel's since the signal change: a window's summed
    latency over its reads' baselines, each the mean of 32 alone reads at a
    time, down by half the step and up by an eighth; --signal p90, the rule
    before: the p90 of each read's slowdown, baselines the p90 of 32 alone
    reads, down at once and up by an eighth; the fastest read standing in
    before a class has a baseline; baselines carried from cell to cell in
    the order given): how many windows were over the target, and how many
    of those had no write at all (which the controller ignores).

It is a replay, not the kernel: the window and baseline arithmetic follow
smartio-iosched.c but the latency start is the read's dispatch, not the head
of the reads, and the histogram buckets are not modelled.
"""
import argparse
import io
import os
import re
import statistics
import sys
import tarfile

DSP = re.compile(r'\s(\d+\.\d+): smartio_dispatch: (\d+,\d+) \S+ (read|write) '
                 r'\S+ sector=(\d+) bytes=(\d+)')
ISS = re.compile(r'\s(\d+\.\d+): block_rq_issue: (\d+,\d+) (\S+) (\d+) \(.*?\) '
                 r'(\d+) \+ (\d+)')
CMP = re.compile(r'\s(\d+\.\d+): block_rq_complete: (\d+,\d+) (\S+) \(.*?\) '
                 r'(\d+) \+ (\d+)')
CLASSES = ['4k', '8k', '16k', '32k', '64k', '128k', '256k', '512k']


def size_class(nbytes):
    """smartio_size_class(): 0 for 4 KiB and below, 7 for above 256 KiB."""
    c = 0
    while c < 7 and nbytes > (4096 << c):
        c += 1
    return c


def pct(xs, p):
    """The p-th percentile sample (rank rounded up), as the kernel takes it."""
    if not xs:
        return float('nan')
    xs = sorted(xs)
    return xs[max(0, -(-len(xs) * p // 100) - 1)]


def requests(lines):
    """Completed requests of the busiest device: dict(write, t0, t1, bytes).

    t0 is smartio's dispatch when the trace has it, else the first issue."""
    events, per_dev = [], {}
    for line in lines:
        for kind, rx in (('d', DSP), ('i', ISS), ('c', CMP)):
            m = rx.search(line)
            if not m:
                continue
            t, dev = float(m.group(1)), m.group(2)
            if kind == 'd':
                key = (int(m.group(4)), int(m.group(5)) // 512, m.group(3) == 'write')
                nbytes = int(m.group(5))
            elif kind == 'i':
                key = (int(m.group(5)), int(m.group(6)), 'W' in m.group(3))
                nbytes = int(m.group(4)) or int(m.group(6)) * 512
                per_dev[dev] = per_dev.get(dev, 0) + 1
            else:
                key = (int(m.group(4)), int(m.group(5)), 'W' in m.group(3))
                nbytes = 0
            events.append((kind, t, dev, key, nbytes))
            break
    if not per_dev:
        return []
    dev = max(per_dev, key=per_dev.get)
    dispatched, started, done = {}, {}, []
    for kind, t, d, key, nbytes in events:
        if d != dev:
            continue
        if kind == 'd':
            dispatched[key] = (t, nbytes)
        elif kind == 'i':
            started.setdefault(key, dispatched.pop(key, (t, nbytes)))
        elif key in started:
            t0, nbytes = started.pop(key)
            done.append(dict(write=key[2], t0=t0, t1=t, bytes=nbytes))
    return sorted(done, key=lambda r: r['t1'])


def annotate(reqs, read_idle_us):
    """Reads with their class, latency and whether they ran alone."""
    writes = [r for r in reqs if r['write']]
    reads = [r for r in reqs if not r['write']]
    idle = read_idle_us / 1e6
    for r in reads:
        r['class'] = size_class(r['bytes'])
        r['lat'] = r['t1'] - r['t0']
        r['alone'] = not any(w['t0'] < r['t1'] and w['t1'] > r['t0'] - idle
                             for w in writes)
    return reads, writes


def next_baseline(old, batch, signal):
    """smartio_baseline_next() (sum), or the rule before it (p90)."""
    if signal == 'p90':
        b = pct(batch, 90)
        return b if not old or b < old else old + (b - old) / 8
    b = statistics.mean(batch)
    if not old:
        return b
    return old - (old - b) / 2 if b < old else old + (b - old) / 8


def replay(reads, writes, base, window_s, signal):
    """The controller's windows: (slowdown, whether a write was around)."""
    fastest, alone = {}, {c: [] for c in range(8)}
    out, lat, bases, start = [], [], [], None
    wt = sorted((w['t0'], w['t1']) for w in writes)
    for r in reads:
        start = r['t1'] if start is None else start
        c = r['class']
        fastest[c] = min(fastest.get(c, r['lat']), r['lat'])
        lat.append(r['lat'])
        bases.append(base.get(c) or fastest[c])
        if r['alone']:
            alone[c].append(r['lat'])
        if r['t1'] - start < window_s:
            continue
        had_write = any(w0 < r['t1'] and w1 > start for w0, w1 in wt)
        if signal == 'p90':
            out.append((pct([x / b for x, b in zip(lat, bases)], 90), had_write))
        else:
            out.append((sum(lat) / sum(bases), had_write))
        lat, bases, start = [], [], r['t1']
        for k in range(8):
            if len(alone[k]) < 32:
                continue
            base[k] = next_baseline(base.get(k), alone[k], signal)
            alone[k] = []
    return out


def cells(path):
    """(name, lines) per trace-*.txt in a directory or a tar (the out disk)."""
    if os.path.isdir(path):
        for f in sorted(os.listdir(path)):
            if f.startswith('trace-') and f.endswith('.txt'):
                with open(os.path.join(path, f), errors='replace') as fh:
                    yield f[6:-4], fh.readlines()
        return
    with tarfile.open(path) as tar:
        for m in sorted(tar.getmembers(), key=lambda m: m.name):
            f = os.path.basename(m.name)
            if f.startswith('trace-') and f.endswith('.txt'):
                data = tar.extractfile(m).read().decode(errors='replace')
                yield f[6:-4], io.StringIO(data).readlines()


def ms(x):
    return '%.2f' % (x * 1e3) if x == x else '-'


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('traces', help='a directory of trace-*.txt, or the tar '
                    '(build/vm/KVER/startup-bench*/disk-out.img)')
    ap.add_argument("--read-idle-us", type=int, default=100000,
                    help="smartio read_idle_us (default 100000)")
    ap.add_argument('--window-ms', type=int, default=100,
                    help='smartio window_ms (default 100)')
    ap.add_argument('--target-pct', type=int, default=110,
                    help='smartio target_slowdown_pct (default 110)')
    ap.add_argument('--signal', choices=('sum', 'p90'), default='sum',
                    help="the window's slowdown: sum (the kernel's: summed "
                    "latency over summed baselines) or p90 (of each read's "
                    "slowdown, the rule before; default sum)")
    args = ap.parse_args()
    bases, alone_seen = {}, {}
    found = False
    for name, lines in cells(args.traces):
        found = True
        reads, writes = annotate(requests(lines), args.read_idle_us)
        if not reads:
            print('== %s: no reads' % name)
            continue
        print('== %s: %d reads (%d alone), %d writes (%.1f MiB)' % (
            name, len(reads), sum(r['alone'] for r in reads), len(writes),
            sum(w['bytes'] for w in writes) / 2**20))
        over = []
        cfg = name.rsplit('-', 1)[0]
        seen = alone_seen.setdefault(cfg, {c: [] for c in range(8)})
        for r in reads:
            if r['alone']:
                seen[r['class']].append(r['lat'])
        for c in range(8):
            rc = [r for r in reads if r['class'] == c]
            if not rc:
                continue
            ra = [r['lat'] for r in rc if r['alone']]
            ro = [r['lat'] for r in rc if not r['alone']]
            if seen[c] and ro:
                over.append((len(ro), statistics.mean(ro) / statistics.mean(seen[c])))
            print('  %-5s %5d reads, %5d alone: p50/p90 ms alone %s/%s, all %s/%s' % (
                CLASSES[c], len(rc), len(ra), ms(pct(ra, 50)), ms(pct(ra, 90)),
                ms(pct([r['lat'] for r in rc], 50)), ms(pct([r['lat'] for r in rc], 90))))
        if over:
            n = sum(k for k, _ in over)
            print('  reads beside writes over their class alone (mean, weighted by '
                  'reads): %.2fx over %d reads' % (sum(k * v for k, v in over) / n, n))
        win = replay(reads, writes, bases.setdefault(cfg, {}),
                     args.window_ms / 1e3, args.signal)
        hot = [(s, w) for s, w in win if s > args.target_pct / 100]
        print('  replayed windows: %d, slowdown median %.2f; over the target: %d, '
              'of which without a write: %d' % (
                  len(win), statistics.median([s for s, _ in win]) if win else 0,
                  len(hot), sum(1 for _, w in hot if not w)))
    if not found:
        sys.exit('%s: no trace-*.txt' % args.traces)


if __name__ == '__main__':
    main()
