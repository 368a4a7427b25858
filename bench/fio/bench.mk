# SPDX-License-Identifier: GPL-2.0-only
# The SmartIO benchmark (bench/fio/); included at the end of the top-level
# Makefile.
#
#   make bench-smartio [KVER=<kver>]   every scheduler (none, mq-deadline, kyber,
#                        bfq, smartio) side by side in one VM boot on the
#                        null_blk and throttled-virtio device models: slowdown
#                        table, smartio's trade-off curve, mixed workload, cold
#                        app launch; writes bench/fio/results/<date>-<kver>.csv,
#                        docs/smartio-results.md, docs/smartio-bench.png and
#                        docs/smartio-bench-curve.png (~40 min on TCG)
#   make bench-smartio-quick           slowdown only, nullb model, 5 s phases;
#                        writes build/bench-smartio/ only
#
# Knobs: SMARTIO_BENCH_ARGS (more bench/fio/run-bench.py options, e.g.
# "--runtime 10 --mbps 16"); VM_BUILD=0 uses what is in build/.
# The fio job files (reader.fio, writer.fio, mixed.fio) run on a real device
# too: see docs/smartio.md.

SMARTIO_BENCH_ARGS ?=

.PHONY: bench-smartio bench-smartio-quick

bench-smartio:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/fio/run-bench.py --kver $(VM_KVER) $(SMARTIO_BENCH_ARGS)

bench-smartio-quick:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/fio/run-bench.py --kver $(VM_KVER) --parts slowdown --models nullb \
		--runtime 5 --out build/bench-smartio --csv build/bench-smartio/quick.csv \
		$(SMARTIO_BENCH_ARGS)
