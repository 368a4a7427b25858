# SPDX-License-Identifier: GPL-2.0-only
# The Freeblock benchmark (bench/freeblock/); included at the end of the
# top-level Makefile.
#
#   make bench-freeblock [KVER=<kver>] [BOOTS=2] [FREEBLOCK_ROUNDS=3]
#                        background MiB/s vs foreground load (0..100% step 20
#                        of the model's random 4 KiB IOPS) and the
#                        foreground's mean and p99 response time against the
#                        foreground alone, on three models of one null_blk
#                        (plain; dm-crypt aes-xts-plain64 over it; dm-linear
#                        over it): fg alone (twice: the noise floor),
#                        freeblock (fb-scrub; defaults and one tuned point,
#                        depth=1), ionice -c3 dd under BFQ (defaults and
#                        slice_idle=0, BFQ on the leaf) and a rate-capped
#                        reader. Every round runs every (model, level, mode)
#                        cell in a seeded shuffled order; FREEBLOCK_ROUNDS
#                        rounds a boot, BOOTS boots merged; paired ratios
#                        with 95% bootstrap intervals and the issue 14
#                        targets per cell (met / not met / not separable);
#                        writes bench/freeblock/results/<date>-<kver>.csv
#                        (+ -summary.csv, -boot<b>.events),
#                        docs/freeblock-results.md, docs/freeblock-bench.png
#                        (~25 min of VM time a boot on TCG)
#   make bench-freeblock-writes          30% of the foreground's requests
#                        random 4 KiB writes, the plain model, freeblock
#                        against ionice -c3 under bfq and mq-deadline and the
#                        rate cap; writes docs/freeblock-results-w30.md,
#                        docs/freeblock-bench-w30.png and a -w30 CSV
#   make bench-freeblock-quick           every model and mode, levels 0, 50,
#                        100, one round a boot, 2 boots, 2 s cells; writes
#                        build/bench-freeblock/ only (~4 min a boot)
#
# Knobs: BOOTS, FREEBLOCK_ROUNDS; FREEBLOCK_BENCH_ARGS (more
# bench/freeblock/run-bench.py options, e.g. "--fb-tuned collide_pct=2
# --bfq-tuned low_latency=0 --runtime 4"); VM_BUILD=0 uses what is in build/.

FREEBLOCK_BENCH_ARGS ?=
FREEBLOCK_ROUNDS ?= 3
BOOTS ?= 2
FREEBLOCK_QUICK_CSV = build/bench-freeblock/$(shell date +%Y%m%d)-$(VM_KVER)-quick.csv

.PHONY: bench-freeblock bench-freeblock-writes bench-freeblock-quick

bench-freeblock:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/freeblock/run-bench.py --kver $(VM_KVER) --boots $(BOOTS) \
		--rounds $(FREEBLOCK_ROUNDS) $(FREEBLOCK_BENCH_ARGS)

bench-freeblock-writes:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/freeblock/run-bench.py --kver $(VM_KVER) --boots $(BOOTS) \
		--rounds $(FREEBLOCK_ROUNDS) --fg-write-pct 30 --models plain \
		--modes alone:none,again:none,fb:none,ratecap:none,ionice:mq-deadline,ionice:bfq \
		$(FREEBLOCK_BENCH_ARGS)

bench-freeblock-quick:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/freeblock/run-bench.py --kver $(VM_KVER) --boots 2 --rounds 1 \
		--levels 0,50,100 --runtime 2 --out build/bench-freeblock \
		--csv $(FREEBLOCK_QUICK_CSV) $(FREEBLOCK_BENCH_ARGS)
