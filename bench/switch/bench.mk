# SPDX-License-Identifier: GPL-2.0-only
# The ASAP app-switch benchmark (bench/switch/); included at the end of the
# top-level Makefile.
#
#   make bench-asap [KVER=<kver>]   8 synthetic apps switched round robin under
#                        emulated memory pressure, in one VM boot (384 MB RAM,
#                        256 MB zram swap, ext4 data disk, TCG): ideal (no
#                        eviction), demand paging, page-cluster 0, vma swap
#                        readahead off, a userspace "prefetch everything last
#                        touched" peer and asap-prefetch.ko (10 profile
#                        switches, then 5 measured rounds), demand paging
#                        again at the end (drift); writes
#                        bench/switch/results/<date>-<kver>.csv (+ -summary.csv),
#                        docs/asap-results.md and docs/asap-bench.png
#                        (6.12, TCG: 305 s in the VM without demand2, about
#                        6 min with it; the 15-minute budget holds)
#   make bench-asap-quick           3 apps, 3 profile switches, 2 measured
#                        rounds, every mode; writes build/bench-asap/ only
#                        (72 s in the VM)
#
# Knobs: ASAP_BENCH_ARGS (more bench/switch/run-bench.py options, e.g.
# "--apps 4 --rounds 3 --modes demand,asap --lead-ms 50"); VM_BUILD=0 uses
# what is in build/. The guest program is bench/switch/switchbench.c
# (`switchbench --help`); the guest script bench/switch/switch-bench.sh.

ASAP_BENCH_ARGS ?=
SWITCHBENCH_BIN := build/user/guest/switchbench

.PHONY: bench-asap bench-asap-quick

$(SWITCHBENCH_BIN): bench/switch/switchbench.c
	@mkdir -p $(@D)
	$(CC) $(VM_GUEST_CFLAGS) -o $@ $< -lpthread

vm-guest: $(SWITCHBENCH_BIN)

bench-asap:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/switch/run-bench.py --kver $(VM_KVER) $(ASAP_BENCH_ARGS)

bench-asap-quick:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	python3 bench/switch/run-bench.py --kver $(VM_KVER) --apps 3 --rounds 2 \
		--profile-switches 3 --profile-min 3 --out build/bench-asap \
		--csv build/bench-asap/quick.csv $(ASAP_BENCH_ARGS)
