# SPDX-License-Identifier: GPL-2.0-only
# The Freeblock benchmark (bench/freeblock/); included at the end of the
# top-level Makefile.
#
#   make bench-freeblock [KVER=<kver>]   background MiB/s vs foreground load
#                        (0..100% of the disk's random 4 KiB IOPS) and the
#                        foreground's p99/mean/throughput impact, for
#                        freeblock.ko (fb-scrub) and its peers (ionice -c3 dd
#                        under none, mq-deadline, kyber, bfq, smartio; a
#                        rate-capped reader), plus an idle full-device scrub
#                        vs sequential read, in one VM boot on a null_blk
#                        model; writes bench/freeblock/results/<date>-<kver>.csv,
#                        docs/freeblock-results.md, docs/freeblock-bench.png
#                        (~12 min of VM time on TCG)
#   make bench-freeblock-writes          the same with 30% of the foreground's
#                        requests random 4 KiB writes, levels 0..100 step 20,
#                        freeblock against ionice -c3 under bfq and
#                        mq-deadline; writes docs/freeblock-results-w30.md,
#                        docs/freeblock-bench-w30.png and a -w30 CSV (~5 min)
#   make bench-freeblock-quick           levels 0, 50, 100; freeblock (depth 2, 1) and
#                        ionice -c3 under bfq and a rate cap only; 3 s phases;
#                        writes build/bench-freeblock/ only (~2 min)
#
# Knobs: FREEBLOCK_BENCH_ARGS (more bench/freeblock/run-bench.py options, e.g.
# "--runtime 8 --service-us 500"); VM_BUILD=0 uses what is in build/.

FREEBLOCK_BENCH_ARGS ?=

.PHONY: bench-freeblock bench-freeblock-writes bench-freeblock-quick

bench-freeblock:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/freeblock/run-bench.py --kver $(VM_KVER) $(FREEBLOCK_BENCH_ARGS)

bench-freeblock-writes:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/freeblock/run-bench.py --kver $(VM_KVER) --fg-write-pct 30 \
		--levels 0,20,40,60,80,100 \
		--methods base:none,fb:none,ratecap:none,ionice:mq-deadline,base:bfq,ionice:bfq,again:none \
		$(FREEBLOCK_BENCH_ARGS)

bench-freeblock-quick:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/freeblock/run-bench.py --kver $(VM_KVER) --levels 0,50,100 \
		--methods base:none,fb:none,fbd1:none,ratecap:none,base:bfq,ionice:bfq,again:none --runtime 3 \
		--out build/bench-freeblock --csv build/bench-freeblock/quick.csv \
		$(FREEBLOCK_BENCH_ARGS)
