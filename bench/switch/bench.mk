# SPDX-License-Identifier: GPL-2.0-only
# The ASAP app-switch benchmark (bench/switch/); included at the end of the
# top-level Makefile.
#
#   make bench-asap [KVER=<kver>] [BOOTS=2]
#                        every round runs every mode in a shuffled order
#                        (seed = boot number): ideal (no eviction), demand
#                        paging, pc0 (page-cluster 0), novma (vma swap
#                        readahead off), daemon (userspace prefetcher:
#                        pagemap at the end of a turn, WILLNEED at the next
#                        switch), oracle (generator-fed: an upper bound) and
#                        asap (asap-prefetch.ko loaded for the whole boot);
#                        4 apps per mode, 10 warm-up rounds for every mode
#                        (asap's profile_switches) + 20 measured, BOOTS VM
#                        boots (384 MB RAM, zram swap, ext4 data disk, TCG)
#                        merged; paired ratios against demand paging with 95%
#                        bootstrap intervals; writes
#                        bench/switch/results/<date>-<kver>.csv (+ -summary.csv,
#                        -boot<b>.events), docs/asap-results.md and
#                        docs/asap-bench.png
#   make bench-asap-sqlite [BOOTS=2]  the second workload: real sqlite code
#                        and databases (apps dlopen a per-mode copy of
#                        libsqlite3 on the data disk and run range queries
#                        over a database file read through mmap and an
#                        in-memory table), every mode but oracle, 2 apps,
#                        10 + 20 rounds; writes bench/switch/results/
#                        <date>-<kver>-sqlite.csv and build/bench-asap-sqlite/
#   make bench-asap-quick           2 apps, 3 warm-up + 2 measured rounds,
#                        every mode, 2 boots; writes build/bench-asap/ only
#
# Knobs: BOOTS; ASAP_BENCH_ARGS (more bench/switch/run-bench.py options, e.g.
# "--apps 3 --rounds 3 --modes demand,daemon,asap --lead-ms 50"); VM_BUILD=0 uses
# what is in build/. The guest program is bench/switch/switchbench.c
# (`switchbench --help`); the guest script bench/switch/switch-bench.sh.

ASAP_BENCH_ARGS ?=
SWITCHBENCH_BIN := build/user/guest/switchbench

.PHONY: bench-asap bench-asap-quick bench-asap-sqlite bench-asap-overhead

$(SWITCHBENCH_BIN): bench/switch/switchbench.c
	@mkdir -p $(@D)
	$(CC) $(VM_GUEST_CFLAGS) -o $@ $< -lpthread

vm-guest: $(SWITCHBENCH_BIN)

# for arm64 (make arm64-user)
ARM64_SRC_FILES += bench/switch/switchbench.c
ARM64_GUEST_BINS += $(ARM64_SRC)/guest/switchbench
arm64-guest: $(ARM64_SRC)/guest/switchbench
$(ARM64_SRC)/guest/switchbench: $(ARM64_SRC)/bench/switch/switchbench.c
	@mkdir -p $(@D)
	$(ARM64_CC) $(VM_GUEST_CFLAGS) -o $@ $< -lpthread

BOOTS ?= 2

bench-asap:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/switch/run-bench.py --kver $(VM_KVER) --boots $(BOOTS) $(ASAP_BENCH_ARGS)

bench-asap-quick:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/switch/run-bench.py --kver $(VM_KVER) --boots 2 --apps 2 --rounds 2 \
		--profile-switches 3 --profile-min 3 --out build/bench-asap \
		--csv build/bench-asap/quick.csv $(ASAP_BENCH_ARGS)

# The logging overhead (tests/vm/guest/asap-overhead.sh; make check runs it
# with 2 rounds for its checks): 2 boots of 30 shuffled rounds per kernel,
# ratios with intervals by bench/switch/overhead.py, for docs/asap.md.
bench-asap-overhead:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVERS)"
	$(foreach k,$(or $(VM_KVER_GIVEN),$(VM_KVERS)),python3 bench/switch/overhead.py --kver $(k) --boots $(BOOTS) &&) true

bench-asap-sqlite:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/switch/run-bench.py --kver $(VM_KVER) --boots $(BOOTS) --workload sqlite \
		--apps 2 $(ASAP_BENCH_ARGS)
