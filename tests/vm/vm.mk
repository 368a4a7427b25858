# SPDX-License-Identifier: GPL-2.0
# The QEMU VM bench (tests/vm/run.py), included by the top-level Makefile.
#
#   make vm-test T=<test> [KVER=<kver>]   one guest test (tests/vm/guest/<test>.sh),
#                                         on KVER or the newest supported kernel
#   make vm-check [KVER=<kver>]           every guest test on every kernel (or KVER)
#   make vm-shell [KVER=<kver>]           interactive VM with the same initramfs
#   make vm-guest                         build tests/vm/guest/*.c into build/user/guest/
#                                         (arm64: make arm64-user, build/arm64/user/guest/)
#   make vm-bootprobe [KVER=<kver>]       time bzImage against PVH vmlinux boots
#   make check-blktests [KVER=<kver>]     blktests' whole block group with smartio
#                                         loaded (make check runs a subset)
#   make soak-ppcache [KVER=<kver>]       the ppcache kill and warm-reset tests
#                                         with 6x the kills and 5x the resets
#   make check-arm64                      DKMS's cross-build (dkms-check KARCH=arm64),
#                                         then the arm64 smoke (ARM64_SMOKE) on Debian's
#                                         arm64 6.1 and 6.12 under qemu-system-aarch64
#                                         (make arm64 first; not in make check: ~12 min)
#
# Every target first builds what the guest ships (modules for the kernel(s),
# libqnvram, mobioctl, guest programs; for an arm64 kernel, KVER=<kver>-arm64,
# its modules with KARCH=arm64 and make arm64-user, from the sysroot that
# make arm64 made); VM_BUILD=0 skips that and uses what is in build/.
# VM_ARGS passes options to run.py.

VM_RUN := python3 tests/vm/run.py
# KVER counts only when given on the command line or in the environment: the
# top-level Makefile gives it a default, and vm-check means "every kernel".
VM_KVER_GIVEN := $(if $(filter command line environment,$(origin KVER)),$(filter-out all,$(KVER)))
VM_KVER := $(or $(VM_KVER_GIVEN),$(shell scripts/kernels.sh newest 2>/dev/null))
VM_KVERS := $(or $(VM_KVER_GIVEN),$(shell scripts/kernels.sh 2>/dev/null))

VM_GUEST_SRCS := $(wildcard tests/vm/guest/*.c)
VM_GUEST_BINS := $(patsubst tests/vm/guest/%.c,build/user/guest/%,$(VM_GUEST_SRCS))
VM_GUEST_CFLAGS ?= -O2 -g -Wall -Wextra
VM_GUEST_LDLIBS := -lqnvram -lmnl -lpthread

.PHONY: vm-test vm-check vm-shell vm-guest vm-build vm-bootprobe demo-nodeps check-blktests soak-ppcache \
	check-arm64

# Guest programs include tools' sources (fbtest, freeblock-scrub): those count too.
build/user/guest/%: tests/vm/guest/%.c $(wildcard libqnvram/*.h include/uapi/*/*.h include/uapi/*.h tools/*.c tools/*.h)
	@mkdir -p $(@D)
	$(CC) $(VM_GUEST_CFLAGS) -Ilibqnvram -Iinclude/uapi -o $@ $< \
		-Llibqnvram $(VM_GUEST_LDLIBS)

vm-guest: $(VM_GUEST_BINS)

# Tests that boot the Debian guest ("# vm-root: debian") ship the project's
# .debs: make deb, when a tracked file is newer than them (make check has
# just built them in deb-check).
VM_DEB_TESTS := $(basename $(notdir $(shell grep -l '^# vm-root:' tests/vm/guest/*.sh 2>/dev/null)))
VM_NEEDS_DEB = $(if $(T),$(filter $(VM_DEB_TESTS),$(T)),$(VM_DEB_TESTS))

# The Debian guest's base system in the background (make check); its log is
# build/vm/debian/base-bg.log. A failure there is only logged: vm-check's own
# build of the image tries again and stops with the error.
vm-debian-base-bg:
	@mkdir -p build/vm/debian
	@if [ -n "$(VM_DEB_TESTS)" ]; then \
		echo "vm-debian-base-bg: the Debian guest's base system in the background (build/vm/debian/base-bg.log)"; \
		nice -n 10 tests/vm/debian/build-image.sh --base-only build/vm/debian \
			</dev/null >build/vm/debian/base-bg.log 2>&1 & fi

# vm-build KVERS="..." : what the initramfs ships, for those kernels
vm-build:
ifneq ($(VM_BUILD),0)
	@for k in $(KVERS); do case $$k in \
		*-arm64) $(MAKE) --no-print-directory modules KVER=$$k KARCH=arm64 || exit 1 ;; \
		*) $(MAKE) --no-print-directory modules KVER=$$k || exit 1 ;; esac; done
	@if [ -n "$(filter %-arm64,$(KVERS))" ]; then $(MAKE) --no-print-directory arm64-user || exit 1; fi
	@if [ -n "$(VM_NEEDS_DEB)" ]; then \
		d=$$(ls build/deb/mobio-dkms_*.deb 2>/dev/null | head -n 1); \
		if [ -z "$$d" ] || [ -n "$$(git ls-files -z | xargs -0 sh -c 'find "$$@" -maxdepth 0 -type f -newer "$$0" 2>/dev/null' "$$d" | head -n 1)" ]; then \
			$(MAKE) --no-print-directory deb || exit 1; fi; fi
	@if [ -f libqnvram/Makefile ]; then $(MAKE) --no-print-directory -C libqnvram || exit 1; fi
	@if [ -f sqlite-ppcache/Makefile ]; then $(MAKE) --no-print-directory -C sqlite-ppcache || exit 1; fi
	@if [ -f tools/Makefile ]; then $(MAKE) --no-print-directory -C tools || exit 1; fi
	@$(MAKE) --no-print-directory vm-guest
endif

vm-test:
	@test -n "$(T)" || { echo "usage: make vm-test T=<test> [KVER=<kver>]; tests: $(notdir $(basename $(filter-out %lib.sh,$(wildcard tests/vm/guest/*.sh))))" >&2; exit 2; }
	@test -n "$(VM_KVER)" || { echo "no supported kernel installed: run 'make deps' (as root)" >&2; exit 1; }
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	$(VM_RUN) test --kver $(VM_KVER) $(VM_ARGS) $(T)

vm-check:
	@test -n "$(VM_KVERS)" || { echo "no supported kernel installed: run 'make deps' (as root)" >&2; exit 1; }
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVERS)"
	$(VM_RUN) check $(foreach k,$(VM_KVER_GIVEN),--kver $(k)) $(VM_ARGS) $(T)

# blktests' whole block group (tests/vm/guest/smartio-blktests.sh; make check's
# vm-check runs its subset, the tests that select smartio: 005, 015, 020, 021). The blktests snapshot comes
# from $(MOBIO_SHARED)/blktests, ../shared beside the repo root by default.
check-blktests:
	@test -n "$(VM_KVERS)" || { echo "no supported kernel installed: run 'make deps' (as root)" >&2; exit 1; }
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVERS)"
	MOBIO_VM_APPEND="$$MOBIO_VM_APPEND mobio.blktests=block" $(VM_RUN) check \
		$(foreach k,$(VM_KVER_GIVEN),--kver $(k)) $(VM_ARGS) smartio-blktests

# The ppcache crash tests as soaks: 300 kills (make check: 50) and 30 warm
# resets (make check: 6) in one boot each, on every kernel (or KVER); ~15 min.
soak-ppcache:
	@test -n "$(VM_KVERS)" || { echo "no supported kernel installed: run 'make deps' (as root)" >&2; exit 1; }
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVERS)"
	MOBIO_VM_APPEND="$$MOBIO_VM_APPEND mobio.ppcache_kills=300 mobio.ppcache_reboots=30" $(VM_RUN) check \
		$(foreach k,$(VM_KVER_GIVEN),--kver $(k)) $(VM_ARGS) ppcache-crash-kill ppcache-crash-reboot

# The arm64 smoke (issue 16): the paths a phone takes, on Debian's arm64
# kernels on QEMU's virt board (TCG), the pool reserved in the device tree:
# the pool's range checks (a flash bank and the space above RAM refused),
# regions through a warm reset and through a held power key + cold boot, a
# ppcache database through kills, smartio switched under fio and verified,
# a freeblock scrub, asap's switch and its accessed bits. Not in make check
# (its budget is 60 min): a clean-clone make check with it took
# 4482 s on 2026-12-05, of which the arm64 smoke's VMs 458 s (16 tests, 728
# cases, before qnvram-basic joined: 130 cases, ~15 s a kernel) and its
# builds ~2.5 min. Other tests run on arm64 with T=... or
# `tests/vm/run.py check --arch arm64 [NAME...]`.
ARM64_SMOKE := qnvram-basic qnvram-warm-reboot qnvram-power-key ppcache-crash-kill smartio-switch \
	smartio-verify freeblock-basic asap-basic asap-mech
check-arm64: arm64
	$(if $(T),,$(MAKE) --no-print-directory dkms-check KARCH=arm64)
	$(VM_RUN) check --arch arm64 $(VM_ARGS) $(or $(T),$(ARM64_SMOKE))

vm-shell:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVER)"
	$(VM_RUN) shell --kver $(VM_KVER)

vm-bootprobe:
	$(VM_RUN) bootprobe --kver $(VM_KVER)

# The project's main job, in a VM (see README.md): the SQLite benchmark's short
# form on the flash-like model, then an app's ppcache database through kills,
# a warm reboot and a power cut (tests/vm/guest/ppcache-demo.sh), then the
# speedup table again. `make demo-qnvram`: qNVRAM alone (raw app state).
# demo-nodeps is the same without deps: a fresh make after deps, so VM_KVER is
# computed once the kernels are installed (see deps: in the Makefile).
demo: deps
	@$(MAKE) --no-print-directory demo-nodeps

demo-nodeps:
	@$(MAKE) --no-print-directory bench-sqlite-quick
	@$(MAKE) --no-print-directory vm-test T=ppcache-demo VM_BUILD=0
	@echo
	@python3 bench/sqlite/report.py --kver $(VM_KVER) --summary flash \
		--events build/bench-sqlite/quick-events.txt

demo-qnvram: deps
	$(MAKE) vm-test T=qnvram-demo

# qNVRAM flush bandwidth against dd on the same disk (bench/qnvram/flush.sh).
bench-qnvram:
	@$(MAKE) --no-print-directory vm-build KVERS="$(VM_KVERS)"
	@for k in $(VM_KVERS); do $(VM_RUN) test --kver $$k bench/qnvram/flush.sh || exit 1; done
