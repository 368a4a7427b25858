# SPDX-License-Identifier: GPL-2.0-only
# The SQLite benchmark (bench/sqlite/) and the guest programs that need SQLite
# (tests/vm/guest/ppcache*.c); included at the end of the top-level Makefile.
#
#   make bench-sqlite [KVER=<kver>]   the paper's workload, 10 runs, both device
#                                     models; writes bench/sqlite/results/*.csv,
#                                     docs/results-sqlite.md, docs/sqlite-bench.png
#   make bench-sqlite-quick           the short form (flash-like model, 1 run of
#                                     300 operations per case) that `make demo`
#                                     runs; prints the table, writes build/ only
# (bench/sqlite/run-bench.sh does the work: one boot per run and model.)
#   make sqlite-guest                 build the guest programs below
#
# Knobs: SQLBENCH_RUNS, SQLBENCH_OPS, SQLBENCH_MODELS (virtio,flash,flash-w0:3;
# MODEL:N runs that model N times only),
# SQLBENCH_MODES (all), SQLBENCH_WRITE_MS (1), SQLBENCH_FLUSH_MS (5);
# VM_BUILD=0 uses what is in build/.
#
# The guest programs link the stock libsqlite3 and, once sqlite-ppcache/ has
# built libppcache.a, the ppcache VFS statically (-DHAVE_PPCACHE); without it
# their ppcache modes say "no ppcache VFS in this build".

PPCACHE_DIR := sqlite-ppcache
PPCACHE_LIB = $(wildcard $(PPCACHE_DIR)/libppcache.a)
SQLITE_GUEST_CFLAGS ?= -O2 -g -Wall -Wextra
SQLITE_GUEST_CPPFLAGS = -Ilibqnvram -Iinclude/uapi \
	$(if $(PPCACHE_LIB),-DHAVE_PPCACHE -I$(PPCACHE_DIR))
SQLITE_GUEST_LIBS = $(PPCACHE_LIB) -lsqlite3 -Llibqnvram -lqnvram -lmnl -lpthread -ldl -lm
PPCACHE_GUEST_BINS := $(patsubst tests/vm/guest/%.c,build/user/guest/%,\
	$(wildcard tests/vm/guest/ppcache*.c))
SQLITE_GUEST_BINS := build/user/guest/sqlbench $(PPCACHE_GUEST_BINS)

SQLBENCH_RUNS ?= 10
SQLBENCH_OPS ?= 1000
SQLBENCH_MODELS ?= virtio,flash,flash-w0:3
SQLBENCH_MODES ?=
SQLBENCH_WRITE_MS ?= 1
SQLBENCH_FLUSH_MS ?= 5
SQLBENCH_KVER = $(VM_KVER)
SQLBENCH_ENV = KVER=$(SQLBENCH_KVER) MODELS=$(SQLBENCH_MODELS) MODES=$(SQLBENCH_MODES) \
	WRITE_MS=$(SQLBENCH_WRITE_MS) FLUSH_MS=$(SQLBENCH_FLUSH_MS)

.PHONY: bench-sqlite bench-sqlite-quick sqlite-guest sqlite-ppcache-lib sqlite-check-dev

sqlite-check-dev:
	@test -f /usr/include/sqlite3.h || { echo "libsqlite3-dev missing: apt-get install libsqlite3-dev" >&2; exit 1; }

# Static pattern rules: explicit, so they win over vm.mk's build/user/guest/% rule.
$(PPCACHE_GUEST_BINS): build/user/guest/%: tests/vm/guest/%.c $(PPCACHE_LIB) \
		$(wildcard libqnvram/*.h) | sqlite-check-dev
	@mkdir -p $(@D)
	$(CC) $(SQLITE_GUEST_CFLAGS) $(SQLITE_GUEST_CPPFLAGS) -o $@ $< $(SQLITE_GUEST_LIBS)

build/user/guest/sqlbench: bench/sqlite/sqlbench.c $(PPCACHE_LIB) | sqlite-check-dev
	@mkdir -p $(@D)
	$(CC) $(SQLITE_GUEST_CFLAGS) $(SQLITE_GUEST_CPPFLAGS) -o $@ $< $(SQLITE_GUEST_LIBS)

sqlite-guest: $(SQLITE_GUEST_BINS)
vm-guest: $(SQLITE_GUEST_BINS)

# The same for arm64 (make arm64-user, in its copy of the sources): with the
# VFS always, as arm64-user builds sqlite-ppcache first.
ARM64_SRC_FILES += bench/sqlite/sqlbench.c
ARM64_GUEST_BINS += $(ARM64_SRC)/guest/sqlbench
arm64-guest: $(ARM64_SRC)/guest/sqlbench
ARM64_PPCACHE_GUEST_BINS = $(filter $(ARM64_SRC)/guest/ppcache%,$(ARM64_GUEST_BINS))
ARM64_SQLITE_GUEST_CPPFLAGS = -I$(ARM64_SRC)/libqnvram -I$(ARM64_SRC)/include/uapi \
	-DHAVE_PPCACHE -I$(ARM64_SRC)/$(PPCACHE_DIR)
ARM64_SQLITE_GUEST_LIBS = $(ARM64_SRC)/$(PPCACHE_DIR)/libppcache.a -lsqlite3 \
	-L$(ARM64_SRC)/libqnvram -lqnvram -lmnl -lpthread -ldl -lm

$(ARM64_PPCACHE_GUEST_BINS): $(ARM64_SRC)/guest/%: $(ARM64_SRC)/tests/vm/guest/%.c \
		$(wildcard $(ARM64_SRC)/$(PPCACHE_DIR)/libppcache.a $(ARM64_SRC)/libqnvram/*.h)
	@mkdir -p $(@D)
	$(ARM64_CC) $(SQLITE_GUEST_CFLAGS) $(ARM64_SQLITE_GUEST_CPPFLAGS) -o $@ $< $(ARM64_SQLITE_GUEST_LIBS)

$(ARM64_SRC)/guest/sqlbench: $(ARM64_SRC)/bench/sqlite/sqlbench.c $(wildcard $(ARM64_SRC)/$(PPCACHE_DIR)/libppcache.a)
	@mkdir -p $(@D)
	$(ARM64_CC) $(SQLITE_GUEST_CFLAGS) $(ARM64_SQLITE_GUEST_CPPFLAGS) -o $@ $< $(ARM64_SQLITE_GUEST_LIBS)

# The VFS first (when its tree is there), then a fresh make so that the
# wildcard above sees libppcache.a.
sqlite-ppcache-lib:
	@if [ -f $(PPCACHE_DIR)/Makefile ]; then $(MAKE) --no-print-directory -C $(PPCACHE_DIR) || exit 1; fi

bench-sqlite:
ifneq ($(VM_BUILD),0)
	@$(MAKE) --no-print-directory sqlite-ppcache-lib
	@$(MAKE) --no-print-directory vm-build KVERS="$(SQLBENCH_KVER)"
endif
	$(SQLBENCH_ENV) RUNS=$(SQLBENCH_RUNS) OPS=$(SQLBENCH_OPS) bench/sqlite/run-bench.sh full

bench-sqlite-quick:
ifneq ($(VM_BUILD),0)
	@$(MAKE) --no-print-directory sqlite-ppcache-lib
	@$(MAKE) --no-print-directory vm-build KVERS="$(SQLBENCH_KVER)"
endif
	$(SQLBENCH_ENV) OPS=$(if $(filter command line environment,$(origin SQLBENCH_OPS)),$(SQLBENCH_OPS),300) \
		bench/sqlite/run-bench.sh quick
