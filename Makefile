# SPDX-License-Identifier: GPL-2.0-only
#
# mobio: the one entry point. `make help` lists the targets.
#
# Kernel modules are built per kernel into build/<kver>/ (a copy of
# modules/ and include/, so the source tree stays clean and several kernels
# can be built side by side). KVER defaults to the newest installed
# supported kernel; KVER=all builds for every one.

SHELL := /bin/bash
TOP := $(abspath .)
MODULES := $(patsubst modules/%/Kbuild,%,$(wildcard modules/*/Kbuild))
KERNELS := $(shell scripts/kernels.sh 2>/dev/null)
KVER ?= $(shell scripts/kernels.sh newest 2>/dev/null)
BUILD_KVERS := $(if $(filter all,$(KVER)),$(KERNELS),$(KVER))
KBUILD_FLAGS ?= W=1
PREFIX ?= /usr/local
DESTDIR ?=
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)

.PHONY: all help deps modules lib tools unit sqlite-tests sqlite-testfixture checkpatch sparse check demo demo-qnvram install-check make-selftest \
	install dkms-install dkms-build clean deb deb-check

all: modules lib tools

help:
	@echo "make               build modules (KVER=<kver>|all), libqnvram, the ppcache VFS and tools"
	@echo "make deps          install the Debian packages and kernels (root)"
	@echo "make check         every test: unit, SQLite's suite on ppcache, checkpatch, sparse, dkms, VM suite on 6.1 and 6.12"
	@echo "make demo          the main job in a VM: SQLite on ppcache vs WAL, then kills, reboot, power cut"
	@echo "make demo-qnvram   qNVRAM alone in a VM: app state surviving kills, reboots, power loss"
	@echo "make vm-test T=<test> [KVER=<kver>]   one guest test (tests/vm/guest/<test>.sh)"
	@echo "make vm-check [KVER=<kver>] [T=...]   every guest test (or T's) on both kernels (or KVER)"
	@echo "make vm-shell [KVER=<kver>]           an interactive VM with the modules"
	@echo "make check-blktests [KVER=<kver>]     blktests' whole block group with smartio loaded (make check: 005 015-017 020 021); needs ../shared/blktests (MOBIO_SHARED)"
	@echo "make soak-ppcache [KVER=<kver>]      the ppcache crash tests as soaks: 300 kills and 30 warm resets per kernel (make check: 50 and 6)"
	@echo "make unit | sqlite-tests | checkpatch | sparse | dkms-check | install-check | make-selftest   the parts of make check"
	@echo "make sqlite-tests  SQLite's own TCL tests against ppcache as the default VFS, on the host (T=\"pager1 crash*\": those files)"
	@echo "make make-selftest the Makefile on a fresh machine: no step of demo or check gets an empty kernel (dry run, seconds)"
	@echo "make bench-qnvram  flush bandwidth vs dd on the same disk, in the VM"
	@echo "make bench-freeblock  background MiB/s vs foreground load, freeblock vs ionice -c3 and a rate cap, in the VM (-quick: 2 min; -writes: 30% fg writes)"
	@echo "make bench-asap    ASAP app switches under memory pressure: modes interleaved, 2 boots, medians with 95% intervals (bench-asap-quick: short; bench-asap-sqlite: real-program workload; bench-asap-overhead: the logging cost, 9 reps per kernel)"
	@echo "make install       libqnvram and mobioctl (PREFIX=$(PREFIX) DESTDIR=)"
	@echo "make dkms-install  register and build the modules with DKMS (KVER=<kver>)"

# KERNELS, KVER, BUILD_KVERS, VM_KVER, VM_KVERS, SQLBENCH_KVER... are computed
# from the installed kernels when make starts, before deps can install them:
# on a fresh machine they are empty in that make. So a target that depends on
# deps does nothing else itself: each of its recipe lines is a fresh $(MAKE),
# which computes them again (demo -> demo-nodeps). `make make-selftest` checks
# it (tests/make/fresh-machine.sh).
deps:
	scripts/deps.sh

# --- kernel modules ---------------------------------------------------------
# Private block headers for the elevator (DESIGN.md §3), for kernel $$k:
# block/*.h from Debian's linux-source-<series> at the exact version of
# linux-headers-$$k, cached in .cache/linux-source-<version>/block (deps.sh
# fills it; this extracts it on demand, e.g. in a DKMS tree). Sets $$blk_h
# and $$blk_pkg; modules/smartio-iosched/Kbuild names the package if missing.
BLOCK_HEADERS = hv=$$(dpkg-query -W -f='$${Version}' linux-headers-$$k 2>/dev/null); \
	series=$$(echo $$k | cut -d. -f1,2); blk_pkg="linux-source-$$series=$$hv"; \
	blk_h=$(TOP)/.cache/linux-source-$$hv/block; \
	if [ ! -e $$blk_h/elevator.h ] && [ -n "$$hv" ] && [ -e /usr/src/linux-source-$$series.tar.xz ] && \
	   [ "$$(dpkg-query -W -f='$${Version}' linux-source-$$series 2>/dev/null)" = "$$hv" ]; then \
		rm -rf $$blk_h.tmp && mkdir -p $$blk_h.tmp && \
		tar -xJf /usr/src/linux-source-$$series.tar.xz -C $$blk_h.tmp --strip-components=2 \
			--wildcards "linux-source-$$series/block/*.h" && mv $$blk_h.tmp $$blk_h; \
	fi

# One target per kernel, so that make -j builds the kernels side by side.
modules:
	@test -n "$(BUILD_KVERS)" || { echo "no supported kernel headers installed: run 'make deps' (as root)" >&2; exit 1; }
	@$(MAKE) --no-print-directory $(addprefix module-build-,$(BUILD_KVERS))

module-build-%:
	@$(MAKE) --no-print-directory module-build K=$*

module-build:
	@test -d /lib/modules/$(K)/build || { echo "no headers for $(K): apt-get install linux-headers-$(K)" >&2; exit 1; }
	@mkdir -p build/$(K)
	@cp -ru modules include build/$(K)/
	@k=$(K); $(BLOCK_HEADERS); \
	for m in $(MODULES); do \
		echo "  MODULE  $$m for $(K)"; \
		$(MAKE) --no-print-directory -C /lib/modules/$(K)/build \
			M=$(TOP)/build/$(K)/modules/$$m $(KBUILD_FLAGS) $(EXTRA) \
			MOBIO_BLOCK_H=$$blk_h MOBIO_BLOCK_PKG=$$blk_pkg modules \
			2>&1 | tee build/$(K)/$$m.log | grep -E 'warning|error|WARNING' ; \
		test -f build/$(K)/modules/$$m/$$m.ko || { echo "build of $$m for $(K) failed: build/$(K)/$$m.log" >&2; exit 1; }; \
		! grep -qE 'warning:|error:|WARNING:' build/$(K)/$$m.log || { echo "$$m: warnings for $(K) (see build/$(K)/$$m.log)" >&2; exit 1; }; \
	done

# Sparse over every module, for every kernel.
sparse:
	@for k in $(KERNELS); do \
		rm -rf build/$$k/sparse && mkdir -p build/$$k/sparse && cp -r modules include build/$$k/sparse/; \
		$(BLOCK_HEADERS); \
		for m in $(MODULES); do \
			$(MAKE) --no-print-directory -C /lib/modules/$$k/build M=$(TOP)/build/$$k/sparse/modules/$$m C=2 \
				MOBIO_BLOCK_H=$$blk_h MOBIO_BLOCK_PKG=$$blk_pkg modules >build/$$k/sparse-$$m.log 2>&1 || { cat build/$$k/sparse-$$m.log; exit 1; }; \
			if grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error)' build/$$k/sparse-$$m.log; then echo "sparse: $$m on $$k is not clean" >&2; exit 1; fi; \
			echo "sparse clean: $$m on $$k"; \
		done; \
	done

# checkpatch --strict from the kernel source package of a supported kernel.
CHECKPATCH = $(lastword $(sort $(wildcard .cache/linux-source-*/scripts/checkpatch.pl)))
checkpatch:
	@test -n "$(CHECKPATCH)" || { echo "checkpatch.pl missing: run 'make deps' (extracts it from linux-source)" >&2; exit 1; }
	@# LINUX_VERSION_CODE: out-of-tree code must build on 6.1 and 6.12; those tests live in modules/common/mobio_compat.h only.
	@files=$$(git ls-files 'modules/*.c' 'modules/*.h' 'include/uapi/*.h'); \
	perl $(CHECKPATCH) --no-tree --strict --terse --show-types \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG,LINUX_VERSION_CODE -f $$files \
		| tee build/checkpatch.log; \
	! grep -qE 'ERROR|WARNING|CHECK' build/checkpatch.log && echo "checkpatch --strict clean: $$(echo $$files | wc -w) files"
	@files=$$(git ls-files 'modules/*.c' 'modules/*.h' 'include/uapi/*.h'); \
	perl $(dir $(CHECKPATCH))kernel-doc -none -Wall $$files 2>&1 | tee build/kernel-doc.log; \
	test ! -s build/kernel-doc.log && echo "kernel-doc clean: $$(echo $$files | wc -w) files"

# --- userspace --------------------------------------------------------------
lib:
	$(MAKE) -C libqnvram
	$(MAKE) -C sqlite-ppcache

tools: lib
	$(MAKE) -C tools

unit:
	$(MAKE) -C tests/unit check

# SQLite's own TCL test suite against ppcache (tests/sqlite/, docs/ppcache.md):
# testfixture from Debian's source of the installed libsqlite3 (deps.sh
# fetches it), built once into build/sqlite-tests/; T="name glob..." runs
# only those files, SQLITE_TESTS_VFS=unix the same files on stock SQLite.
sqlite-tests:
	@t0=$$(date +%s.%N); $(MAKE) --no-print-directory -C tests/sqlite check SQLITE_TESTS_T0=$$t0

# Only the testfixture build (make check builds it beside the unit tests).
sqlite-testfixture:
	@$(MAKE) --no-print-directory -C tests/sqlite testfixture

install: lib tools
	$(MAKE) -C libqnvram install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C sqlite-ppcache install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools install PREFIX=$(PREFIX) DESTDIR=$(DESTDIR)

# Install into a scratch root, then build an app against it the way a user
# would: pkg-config for the flags, the paper's API, the shared library.
install-check:
	@rm -rf build/install-root
	@$(MAKE) --no-print-directory install PREFIX=/usr DESTDIR=$(TOP)/build/install-root >/dev/null
	@r=$(TOP)/build/install-root; \
	printf '#include <qnvram.h>\nint main(void) { int n = 0; return qnvmretrieve(0, 1, &n) != 0; }\n' >build/install-app.c; \
	flags=$$(PKG_CONFIG_SYSROOT_DIR=$$r PKG_CONFIG_LIBDIR=$$r/usr/lib/pkgconfig pkg-config --cflags --libs libqnvram) && \
	cc -o build/install-app build/install-app.c $$flags -Wl,-rpath-link,$$r/usr/lib && \
	test -x $$r/usr/bin/mobioctl -o -x $$r/usr/sbin/mobioctl && \
	echo "install ok: $$(cd $$r && find . -type f -o -type l | sort | tr '\n' ' ')"

# --- DKMS -------------------------------------------------------------------
# Called by DKMS in its copy of the tree (dkms.conf MAKE): build in place.
dkms-build:
	@k=$(KVER); $(BLOCK_HEADERS); \
	for m in $(MODULES); do \
		$(MAKE) -C /lib/modules/$(KVER)/build M=$(TOP)/modules/$$m \
			MOBIO_BLOCK_H=$$blk_h MOBIO_BLOCK_PKG=$$blk_pkg modules || exit 1; \
	done

# DKMS_SRC and DKMS_FLAGS let `make dkms-check` run this very recipe in a
# scratch tree (--dkmstree, --sourcetree, --installtree) instead of the system.
DKMS_SRC ?= /usr/src
DKMS_FLAGS ?=
dkms-install:
	@test "$$(id -u)" = 0 || { echo "dkms-install needs root" >&2; exit 1; }
	@command -v dkms >/dev/null || { echo "dkms missing: apt-get install dkms" >&2; exit 1; }
	rm -rf $(DKMS_SRC)/mobio-$(VERSION)
	mkdir -p $(DKMS_SRC)/mobio-$(VERSION)
	cp -r Makefile dkms.conf modules include scripts $(DKMS_SRC)/mobio-$(VERSION)/
	-dkms remove $(DKMS_FLAGS) mobio/$(VERSION) --all >/dev/null 2>&1
	dkms add $(DKMS_FLAGS) mobio/$(VERSION)
	@for k in $(BUILD_KVERS); do \
		dkms build $(DKMS_FLAGS) mobio/$(VERSION) -k $$k || exit 1; \
		dkms install $(DKMS_FLAGS) mobio/$(VERSION) -k $$k || exit 1; \
	done

# --- Debian packages --------------------------------------------------------
# Debian's tooling (debian/: debhelper, dh-dkms), in a copy of the files git
# tracks (as in the working tree; untracked ones are left out) under
# build/deb-src/, so neither the tree nor its parent is touched; the .debs
# and the .changes go to build/deb/, then lintian must pass (remaining tags
# are overridden in debian/*.lintian-overrides, each with its reason).
# deb-check: each package's expected files and conffiles (dpkg-deb), and the
# symbols file against the packaged library (scripts/deb-check.sh).
DEB_CHANGELOG_VERSION = $(shell dpkg-parsechangelog -l debian/changelog -S Version 2>/dev/null)
deb:
	@for t in dpkg-buildpackage dpkg-parsechangelog dh dh_dkms help2man lintian; do \
		command -v $$t >/dev/null || { echo "make deb: $$t missing: run 'make deps' (as root)" >&2; exit 1; }; done
	@v="$(DEB_CHANGELOG_VERSION)"; test "$${v%-*}" = "$(VERSION)" || { \
		echo "make deb: debian/changelog is at '$$v' but dkms.conf's PACKAGE_VERSION is $(VERSION): add a changelog entry $(VERSION)-1 (dch -v $(VERSION)-1)" >&2; exit 1; }
	@git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "make deb: needs a git checkout (it packages the files git tracks)" >&2; exit 1; }
	rm -rf build/deb-src build/deb
	mkdir -p build/deb-src/mobio-$(VERSION) build/deb
	git ls-files -z | while IFS= read -r -d '' f; do [ -e "$$f" ] && printf '%s\0' "$$f"; done | \
		xargs -0 cp -P --parents -t build/deb-src/mobio-$(VERSION)
	cd build/deb-src/mobio-$(VERSION) && dpkg-buildpackage -us -uc -b
	mv build/deb-src/*.deb build/deb-src/*.changes build/deb-src/*.buildinfo build/deb/
	lintian --fail-on error,warning --display-info build/deb/mobio_$(DEB_CHANGELOG_VERSION)_*.changes
	@echo "make deb: $$(cd build/deb && ls *.deb | tr '\n' ' ')in build/deb/"

deb-check: deb
	scripts/deb-check.sh build/deb $(DEB_CHANGELOG_VERSION)

# --- tests ------------------------------------------------------------------
-include tests/vm/vm.mk

# Independent host steps run two at a time (2 cores; -O keeps each step's
# output together); the VM suite runs alone.
check: deps
	$(MAKE) make-selftest
	$(MAKE) -j2 -Otarget KVER=all modules lib tools
	$(MAKE) -j2 -Otarget unit sqlite-testfixture
	$(MAKE) sqlite-tests
	$(MAKE) -j2 -Otarget install-check checkpatch sparse dkms-check deb-check
	$(MAKE) vm-check

# The Makefile itself, without building or booting anything: every target that
# depends on deps, dry-run as on a machine that has never run the project.
make-selftest:
	tests/make/fresh-machine.sh

# DKMS build (not load) for every supported kernel, in a scratch copy.
dkms-check:
	@rm -rf build/dkms && mkdir -p build/dkms/src build/dkms/tree $(patsubst %,build/dkms/install/%,$(KERNELS))
	@$(MAKE) --no-print-directory dkms-install KVER=all DKMS_SRC=$(TOP)/build/dkms/src \
		DKMS_FLAGS="--dkmstree $(TOP)/build/dkms/tree --sourcetree $(TOP)/build/dkms/src --installtree $(TOP)/build/dkms/install" \
		>build/dkms.log 2>&1 || { cat build/dkms.log; echo "make dkms-install failed" >&2; exit 1; }
	@for k in $(KERNELS); do for m in $(MODULES); do \
		f=$$(find build/dkms/install/$$k -name "$$m.ko*" | head -n 1); \
		test -n "$$f" || { cat build/dkms.log; echo "dkms installed no $$m for $$k (is it in dkms.conf?)" >&2; exit 1; }; \
		echo "dkms build + install ok: $$k: $$f"; \
	done; done

clean:
	rm -rf build
	-$(MAKE) -C libqnvram clean
	-$(MAKE) -C sqlite-ppcache clean
	-$(MAKE) -C tools clean
	-$(MAKE) -C tests/unit clean
-include bench/sqlite/sqlite.mk
-include bench/fio/bench.mk
-include bench/freeblock/bench.mk
-include bench/switch/bench.mk
