# SPDX-License-Identifier: GPL-2.0-only
"""Host tests of the benchmark helpers a VM adds nothing to: the CSV notes and
the results-page sections (bench/guest_csv.py), the "separable" verdict of the
SmartIO report (bench/fio/report.py), the seeded shuffle every SmartIO
benchmark orders its configs with (order_shuffle in
tests/vm/guest/smartio-lib.sh, run by the host's sh and awk) and the VM
runner's retry of a flaked boot (tests/vm/run.py's run_one).
python3 -m unittest test_bench_helpers.py (make unit runs it)."""

import contextlib
import importlib.util
import io
import os
import subprocess
import sys
import shutil
import tempfile
import unittest

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(TOP, "bench"))
sys.path.insert(0, os.path.join(TOP, "bench", "fio"))
import guest_csv  # noqa: E402
import report  # noqa: E402

LIB = os.path.join(TOP, "tests", "vm", "guest", "smartio-lib.sh")


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


class Parse(unittest.TestCase):
    def test_only_csv_notes_in_order(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "events.txt")
            write(p, "12.0 MOBIO NOTE CSV,lat,nullb,a,1\n"
                     "12.5 MOBIO NOTE not a row\n"
                     "noise\n"
                     "13.0 MOBIO NOTE CSV,model,nullb,null_blk x=1\n")
            self.assertEqual(guest_csv.parse(p), [["lat", "nullb", "a", "1"],
                                                  ["model", "nullb", "null_blk x=1"]])


class SpliceSection(unittest.TestCase):
    B, E = "<!-- x:begin -->", "<!-- x:end -->"

    def section(self, body):
        return "%s\n%s\n%s\n" % (self.B, body, self.E)

    def test_appends_when_missing_and_creates_the_file(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "sub", "r.md")
            guest_csv.splice_section(p, self.B, self.E, self.section("one"))
            self.assertEqual(read(p), self.section("one"))
            write(p, "# Title\n\ntext\n")
            guest_csv.splice_section(p, self.B, self.E, self.section("two"))
            self.assertEqual(read(p), "# Title\n\ntext\n\n" + self.section("two"))

    def test_replaces_only_its_own_section(self):
        other = "<!-- y:begin -->\nkept\n<!-- y:end -->"
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "r.md")
            write(p, "head\n\n%s\n\n%s\n\ntail\n" % (other, self.section("old")))
            guest_csv.splice_section(p, self.B, self.E, self.section("new"))
            text = read(p)
            self.assertEqual(text, "head\n\n%s\n\n%s\n\ntail\n" % (other, self.section("new")))
            # twice is once
            guest_csv.splice_section(p, self.B, self.E, self.section("new"))
            self.assertEqual(read(p), text)


class Separable(unittest.TestCase):
    # (median, low, high, rounds): the shape bench/stats.py gives
    def test_apart_and_below(self):
        self.assertTrue(report.separable_below((1.0, 0.9, 1.1, 4), (2.0, 1.5, 2.5, 4)))
        self.assertFalse(report.separable_below((2.0, 1.5, 2.5, 4), (1.0, 0.9, 1.1, 4)))

    def test_overlap_is_not_separable(self):
        self.assertFalse(report.separable_below((1.0, 0.9, 1.6, 4), (2.0, 1.5, 2.5, 4)))
        # touching ends overlap
        self.assertFalse(report.separable_below((1.0, 0.9, 1.5, 4), (2.0, 1.5, 2.5, 4)))

    def test_one_round_or_none_is_no_verdict(self):
        self.assertFalse(report.separable_below((1.0, 1.0, 1.0, 1), (2.0, 1.5, 2.5, 4)))
        self.assertFalse(report.separable_below((1.0, 0.9, 1.1, 4), (2.0, 2.0, 2.0, 1)))
        self.assertFalse(report.separable_below(None, (2.0, 1.5, 2.5, 4)))


def shuffle(seed, boot, tag, words):
    out = subprocess.run(
        ["sh", "-c", '. "$1"; shift; order_shuffle "$@"', "sh", LIB, tag] + words,
        env=dict(os.environ, SEED=str(seed), BOOT=str(boot)),
        stdout=subprocess.PIPE, check=True, universal_newlines=True).stdout
    return out.split()


class OrderShuffle(unittest.TestCase):
    WORDS = ["none", "mq-deadline", "kyber", "bfq", "smartio", "smartio@target_slowdown_pct=200"]

    def test_a_permutation_and_the_same_for_the_same_seed(self):
        a = shuffle(1, 1, "nullb-seq-r1", self.WORDS)
        self.assertEqual(sorted(a), sorted(self.WORDS))
        self.assertEqual(shuffle(1, 1, "nullb-seq-r1", self.WORDS), a)

    def test_the_tag_changes_the_order(self):
        # awk's srand("1 1 r1") kept the numeric prefix: every round of a boot
        # had one order (start-up runs H8-H12)
        orders = {tuple(shuffle(1, 1, "r%d" % r, self.WORDS)) for r in range(1, 9)}
        self.assertGreater(len(orders), 4)

    def test_the_boot_and_the_seed_change_the_order(self):
        by_boot = {tuple(shuffle(1, b, "r1", self.WORDS)) for b in range(1, 9)}
        by_seed = {tuple(shuffle(s, 1, "r1", self.WORDS)) for s in range(1, 9)}
        self.assertGreater(len(by_boot), 4)
        self.assertGreater(len(by_seed), 4)

    def test_every_word_comes_first_somewhere(self):
        firsts = {shuffle(7, 1, "t%d" % t, self.WORDS)[0] for t in range(60)}
        self.assertEqual(firsts, set(self.WORDS))


def load_runner():
    spec = importlib.util.spec_from_file_location(
        "vm_run", os.path.join(TOP, "tests", "vm", "run.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class FlakeRetry(unittest.TestCase):
    """run_one retries a boot that splatted before the first insmod, and keeps
    that boot's consoles (not its disk images) beside the retry's."""

    def test_flaked_console_kept_and_retry_counted(self):
        run = load_runner()
        with tempfile.TemporaryDirectory() as d:
            outdir = os.path.join(d, "vm", "k1", "t1")
            attempts = []

            class FakeRun:
                def __init__(self, kver, spec, image, initrd):
                    self.outdir, self.boots = outdir, [("cold", 1.0)]

                def run(self):
                    # as TestRun.run: the directory starts empty
                    shutil.rmtree(outdir, ignore_errors=True)
                    os.makedirs(outdir)
                    attempts.append(1)
                    first = len(attempts) == 1
                    write(os.path.join(outdir, "console.txt"),
                          "Oops: int3\n" if first else "fine\n")
                    write(os.path.join(outdir, "state.img"), "x")
                    self.flake = "splat: Oops: int3" if first else None
                    self.cases = [] if first else [run.Case("k1", "t1", "c", True)]
                    return self

            class Spec:
                name = "t1"

            run.TestRun = FakeRun
            flakes = []
            with contextlib.redirect_stdout(io.StringIO()), \
                    contextlib.redirect_stderr(io.StringIO()):
                cases, _ = run.run_one("k1", Spec, None, None, flakes)
            self.assertEqual(len(attempts), 2)
            self.assertEqual([c.name for c in cases], ["c"])
            self.assertEqual(len(flakes), 1)
            self.assertIn("t1.flake", flakes[0])
            self.assertIn("Oops: int3", flakes[0])
            self.assertEqual(read(os.path.join(outdir + ".flake", "console.txt")),
                             "Oops: int3\n")
            self.assertFalse(os.path.exists(os.path.join(outdir + ".flake", "state.img")))
            self.assertEqual(read(os.path.join(outdir, "console.txt")), "fine\n")


if __name__ == "__main__":
    unittest.main()
