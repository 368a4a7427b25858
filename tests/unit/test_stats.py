# SPDX-License-Identifier: GPL-2.0-only
"""Host tests of bench/stats.py, the interval every benchmark report gives:
python3 -m unittest tests/unit/test_stats.py (make unit runs it)."""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bench"))
import stats  # noqa: E402


def boots(centres, rounds=10, per_round=4, spread=0.01, seed=1):
    """{(boot, round): [values]}: boot b's values near centres[b]."""
    rng = random.Random(seed)
    return {(b, r): [c + rng.uniform(-spread, spread) for _ in range(per_round)]
            for b, c in enumerate(centres) for r in range(rounds)}


class Interval(unittest.TestCase):
    def test_empty_is_none(self):
        self.assertIsNone(stats.interval({}))
        self.assertIsNone(stats.interval({(1, 1): []}))

    def test_median_and_count_of_all_values(self):
        med, lo, hi, n = stats.interval({(1, 1): [1, 2], (1, 2): [3], (2, 1): [4, 5]})
        self.assertEqual((med, n), (3, 5))
        self.assertTrue(lo <= med <= hi)

    def test_same_groups_same_interval(self):
        g = boots([1.0, 1.1])
        self.assertEqual(stats.interval(g), stats.interval(g))

    def test_boots_apart_widen_the_interval(self):
        # rounds within a boot agree, boots do not: the interval must reach
        # both boots, where resampling rounds within boots stays near 1.1
        med, lo, hi, _ = stats.interval(boots([1.0, 1.2]))
        self.assertLess(lo, 1.02)
        self.assertGreater(hi, 1.18)

    def test_boots_that_agree_give_a_narrow_interval(self):
        _, lo, hi, _ = stats.interval(boots([1.1, 1.1, 1.1]))
        self.assertLess(hi - lo, 0.02)

    def test_one_boot_spread_of_its_rounds(self):
        rng = random.Random(2)
        g = {(1, r): [rng.gauss(1.0, 0.1)] for r in range(40)}
        med, lo, hi, _ = stats.interval(g)
        self.assertTrue(0.9 < lo < med < hi < 1.1)

    def test_single_round_resamples_its_values(self):
        med, lo, hi, n = stats.interval({(1, 1): [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]})
        self.assertEqual(n, 6)
        self.assertLess(lo, med)
        self.assertGreater(hi, med)

    def test_one_round_a_boot_spread_within_boots_counts(self):
        # two boots with the same median but wide values: the values of a
        # boot's single round are drawn too, so the interval is not a point
        g = {(1, 1): [0.8, 1.0, 1.2, 1.4], (2, 1): [0.8, 1.0, 1.2, 1.4]}
        _, lo, hi, _ = stats.interval(g)
        self.assertLess(lo, 1.1)
        self.assertGreater(hi, 1.1)


class Median(unittest.TestCase):
    def test_odd_even_none(self):
        self.assertEqual(stats.median([3, 1, 2]), 2)
        self.assertEqual(stats.median([4, 1, 2, 3]), 2.5)
        self.assertIsNone(stats.median([]))


if __name__ == "__main__":
    unittest.main()
