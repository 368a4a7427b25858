# SPDX-License-Identifier: GPL-2.0-only
"""The statistics every bench/*/report.py reports with: the median, and its
95% interval from a hierarchical percentile bootstrap: boots, the rounds
within them, the values within those.

Why the boots are drawn. A benchmark here is boots of a VM, each running
rounds of every mode interleaved. Rounds of one boot share that boot's state
(page cache layout, where the host's other load fell, the module's learned
state), and boots differ from each other by more than rounds do. Resampling
only the rounds within each boot (what the reports did until 2026-12-06)
gave intervals that describe one run: two runs of the same code (bench/fio,
H6 and H7) had separable intervals, [1.12, 1.15] and [1.16, 1.20]. Drawing
the boots first puts the variation between boots into the interval (with 2
boots, half of the resamples are all of one boot); drawing the values of a
round as well puts the spread within a boot into it when a boot has a
single round. This errs wide, the safe side for "not separable".

    import stats                      # bench/ on sys.path, as for guest_csv
    med, lo, hi, n = stats.interval({(boot, round): [values], ...})
"""

import random

BOOTSTRAP = 2000        # resamples
SEED = 13               # fixed: a report is the same every time it is made


def median(v):
    """The median of @v (the mean of the middle two for an even count), or
    None for no values."""
    v = sorted(v)
    n = len(v)
    if not n:
        return None
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def interval(groups, reps=BOOTSTRAP, seed=SEED):
    """(median, lo, hi, n) of {(boot, round): [values]}, or None for no values.

    median and n are of all the values. [lo, hi] is the 2.5th and 97.5th
    percentile of the medians of @reps resamples, each drawn in three stages,
    every draw with replacement and as many as there are: the boots; the
    rounds of each boot drawn; the values of each round drawn (so a single
    round in all is the bootstrap of its values)."""
    groups = {k: list(v) for k, v in groups.items() if v}
    if not groups:
        return None
    allv = [x for v in groups.values() for x in v]
    boots = {}
    for (b, _), v in sorted(groups.items(), key=lambda kv: repr(kv[0])):
        boots.setdefault(b, []).append(v)
    boots = list(boots.values())
    rng = random.Random(seed)
    meds = []
    for _ in range(reps):
        sample = []
        for _ in range(len(boots)):
            rounds = boots[rng.randrange(len(boots))]
            for _ in range(len(rounds)):
                vals = rounds[rng.randrange(len(rounds))]
                sample.extend(vals[rng.randrange(len(vals))] for _ in vals)
        meds.append(median(sample))
    meds.sort()
    return median(allv), meds[int(0.025 * reps)], meds[int(0.975 * reps) - 1], len(allv)
