# SPDX-License-Identifier: GPL-2.0-only
# The SmartIO benchmark (bench/fio/); included at the end of the top-level
# Makefile.
#
#   make bench-smartio [KVER=<kver>]   every scheduler (none, mq-deadline, kyber,
#                        bfq, smartio) side by side on the null_blk and
#                        throttled-virtio device models, 2 boots x 2 rounds,
#                        the configs shuffled per round: slowdown table,
#                        smartio's trade-off curve with the peers' tuned
#                        points, mixed workload; writes
#                        bench/fio/results/<date>-<kver>.csv (+ the boots'
#                        events), its section of docs/smartio-results.md,
#                        docs/smartio-bench.png and docs/smartio-bench-curve.png
#                        (~20 min a round on TCG)
#   make bench-smartio-quick           slowdown only, nullb model, 5 s phases,
#                        1 boot x 1 round (a smoke run: no interval);
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
	python3 bench/fio/run-bench.py --kver $(VM_KVER) --parts $(SMARTIO_PARTS) \
		--boots $(BOOTS) --rounds $(ROUNDS) $(SMARTIO_BENCH_ARGS)

bench-smartio-quick:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/fio/run-bench.py --kver $(VM_KVER) --parts slowdown --models nullb \
		--runtime 5 --boots 1 --rounds 1 --out build/bench-smartio --csv build/bench-smartio/quick.csv \
		$(SMARTIO_BENCH_ARGS)

# App start-up under background writes (issue 15; bench/fio/startup-bench.sh,
# startup_app.py, startup-run.c, startup_report.py): cold start-ups of
# python3, sqlite3 and gdb read from an ext4 image on the device under test,
# beside 0, 1 and 5 buffered+fsync writers and 1 and 5 O_DIRECT streams, for
# none, mq-deadline, kyber, bfq, smartio and one tuned point per peer, and the
# control apart (the writers on a second null_blk: what they cost the app
# without sharing its device; nullb model only); every config shuffled in
# each round (SMARTIO_BENCH_ARGS="--startup-configs apart,apart:pinned,..."
# adds configs whose apps run on CPU 0 and writers on the others); BOOTS boots of ROUNDS rounds, REPS start-ups
# of each app per cell and round (>= 10 per cell at the defaults: 2 x 2 x 3).
# Writes bench/fio/results/<date>-<kver>-startup.csv, the "App start-up under
# background writes" section of docs/smartio-results.md and
# docs/smartio-startup.png. `make bench-smartio SMARTIO_PARTS=...,startup`
# runs it after the other parts.
#
#   make bench-smartio-startup [BOOTS=2] [ROUNDS=2] [REPS=3] [STARTUP_MODELS=nullb,virtio]
#   make bench-smartio-startup-quick   1 boot, 1 round, 2 start-ups per cell,
#                        nullb, writers 0/buf1/dio5; build/bench-smartio/quick/
#
# Duration, from the quick run (2026-12-02, 6.12, TCG): the quick run needs
# ~75 min (it was killed from outside after 55 min, at 5.5 of 8 configs);
# start-ups beside 5 O_DIRECT streams under none/mq-deadline/kyber take
# 50-300 s each (a cell of 6: 650-970 s). Extrapolated, one round of the
# full matrix (8 configs x 5 levels x 3 apps x REPS=3) on one model is
# ~6 h, so the defaults (2 boots x 2 rounds, nullb and virtio) are ~48 h;
# STARTUP_MODELS=nullb halves it. Not run yet.

BOOTS ?= 2
ROUNDS ?= 2
REPS ?= 3
STARTUP_MODELS ?= nullb,virtio
SMARTIO_PARTS ?= slowdown,curve,mixed

.PHONY: bench-smartio-startup bench-smartio-startup-quick

bench-smartio-startup:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	flock /tmp/mobio-build.lock python3 bench/fio/run-bench.py --kver $(VM_KVER) \
		--parts startup --boots $(BOOTS) --rounds $(ROUNDS) --reps $(REPS) \
		--startup-models $(STARTUP_MODELS) $(SMARTIO_BENCH_ARGS)

bench-smartio-startup-quick:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	flock /tmp/mobio-build.lock python3 bench/fio/run-bench.py --kver $(VM_KVER) \
		--parts startup --boots 1 --rounds 1 --reps 2 --startup-models nullb \
		--startup-writers 0,buf1,dio5 --wake-s 4 --out build/bench-smartio/quick \
		--startup-csv build/bench-smartio/quick/startup.csv $(SMARTIO_BENCH_ARGS)
