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

# KARCH=arm64: modules for the arm64 kernels of the cross-build sysroot
# (scripts/arm64-root.sh, `make arm64`), all of them unless KVER=<arm64 kver>
# is given, with ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- and the
# sysroot's headers; without KARCH, the host's (amd64) kernels.
ARM64_ROOT := $(abspath $(or $(MOBIO_ARM64_ROOT),.cache/arm64-root))
ARM64_CROSS := aarch64-linux-gnu-
ARM64_KERNELS = $(shell MOBIO_ARM64_ROOT=$(ARM64_ROOT) scripts/kernels.sh arm64 2>/dev/null)
ARM64_BUILD_KVERS = $(if $(and $(filter command line environment,$(origin KVER)),$(filter-out all,$(KVER))),$(KVER),$(ARM64_KERNELS))
ifeq ($(KARCH),arm64)
BUILD_KVERS := $(ARM64_BUILD_KVERS)
KDIR = $(ARM64_ROOT)/usr/src/linux-headers-$(K)
KCROSS := ARCH=arm64 CROSS_COMPILE=$(ARM64_CROSS)
NO_KERNEL_MSG := no arm64 kernel in $(ARM64_ROOT): run 'make arm64' (as root)
NO_HEADERS_MSG = no arm64 headers for $(K) in $(ARM64_ROOT) (it has: $(ARM64_KERNELS)): run 'make arm64' (as root)
# the version of the sysroot's linux-headers-$$k, from its stamp
HEADERS_VERSION = awk -v k=$$k '$$1 == "kernel" && $$2 == k { print $$3 }' $(ARM64_ROOT)/.mobio-stamp 2>/dev/null
else ifneq ($(filter-out amd64,$(KARCH)),)
$(error KARCH=$(KARCH): only arm64 (the cross-build), or amd64 or nothing (the host's kernels))
else
KDIR = /lib/modules/$(K)/build
KCROSS :=
NO_KERNEL_MSG := no supported kernel headers installed: run 'make deps' (as root)
NO_HEADERS_MSG = no headers for $(K): apt-get install linux-headers-$(K)
HEADERS_VERSION = dpkg-query -W -f='$${Version}' linux-headers-$$k 2>/dev/null
endif

.PHONY: all help deps modules lib tools unit sqlite-tests sqlite-testfixture checkpatch sparse check demo demo-qnvram install-check make-selftest vm-debian-base-bg \
	install dkms-install dkms-build clean deb deb-check arm64 arm64-root arm64-user arm64-guest arm64-verify

# make KARCH=arm64: the modules and the userspace cross-built (make arm64
# without the sysroot step, which needs root)
ifeq ($(KARCH),arm64)
all: modules arm64-user
else
all: modules lib tools
endif

help:
	@echo "make               build modules (KVER=<kver>|all), libqnvram, the ppcache VFS and tools (KARCH=arm64: cross-built, see make arm64)"
	@echo "make deps          install the Debian packages and kernels (root)"
	@echo "make check         every test: unit, SQLite's suite on ppcache, checkpatch, sparse, dkms, VM suite on 6.1 and 6.12 (arm64: make check-arm64)"
	@echo "make demo          the main job in a VM: SQLite on ppcache vs WAL, then kills, reboot, power cut"
	@echo "make demo-qnvram   qNVRAM alone in a VM: app state surviving kills, reboots, power loss"
	@echo "make vm-test T=<test> [KVER=<kver>]   one guest test (tests/vm/guest/<test>.sh)"
	@echo "make vm-check [KVER=<kver>] [T=...]   every guest test (or T's) on both kernels (or KVER)"
	@echo "make vm-shell [KVER=<kver>]           an interactive VM with the modules"
	@echo "make check-blktests [KVER=<kver>]     blktests' whole block group with smartio loaded (make check: 005 015 020 021, the ones that select smartio); needs ../shared/blktests (MOBIO_SHARED)"
	@echo "make soak-ppcache [KVER=<kver>]      the ppcache crash tests as soaks: 300 kills and 30 warm resets per kernel (make check: 50 and 6)"
	@echo "make unit | sqlite-tests | checkpatch | sparse | dkms-check | install-check | make-selftest   the parts of make check"
	@echo "make sqlite-tests  SQLite's own TCL tests against ppcache as the default VFS, on the host (T=\"pager1 crash*\": those files)"
	@echo "make make-selftest the Makefile on a fresh machine: no step of demo or check gets an empty kernel (dry run, seconds)"
	@echo "make bench-qnvram  flush bandwidth vs dd on the same disk, in the VM"
	@echo "make bench-freeblock  background MiB/s vs foreground load, freeblock vs ionice -c3 and a rate cap, in the VM (-quick: 2 min; -writes: 30% fg writes)"
	@echo "make bench-asap    ASAP app switches under memory pressure: modes interleaved, 2 boots, medians with 95% intervals (bench-asap-quick: short; bench-asap-sqlite: real-program workload; bench-asap-overhead: the logging cost, 2 boots of 30 shuffled rounds per kernel)"
	@echo "make arm64         cross-build for Debian 12's arm64 kernels (root): the sysroot .cache/arm64-root, modules, userspace in build/arm64/user/"
	@echo "make modules KARCH=arm64 [KVER=<arm64 kver>]   the modules for the sysroot's arm64 kernels (build/<kver>/)"
	@echo "make arm64-user    libqnvram, ppcache, tools and guest programs for arm64 (build/arm64/user/; needs the sysroot)"
	@echo "make check-arm64 [T=...]   make arm64, then the arm64 smoke tests (or T's) on arm64 6.1 and 6.12 (qemu-system-aarch64)"
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
# For KARCH=arm64 the version is the sysroot's (linux-source is arch all).
BLOCK_HEADERS = hv=$$($(HEADERS_VERSION)); \
	series=$$(echo $$k | cut -d. -f1,2); blk_pkg="linux-source-$$series=$$hv"; \
	blk_h=$(TOP)/.cache/linux-source-$$hv/block; \
	if [ ! -e $$blk_h/elevator.h ] && [ -n "$$hv" ] && [ -e /usr/src/linux-source-$$series.tar.xz ] && \
	   [ "$$(dpkg-query -W -f='$${Version}' linux-source-$$series 2>/dev/null)" = "$$hv" ]; then \
		rm -rf $$blk_h.tmp && mkdir -p $$blk_h.tmp && \
		tar -xJf /usr/src/linux-source-$$series.tar.xz -C $$blk_h.tmp --strip-components=2 \
			--wildcards "linux-source-$$series/block/*.h" && mv $$blk_h.tmp $$blk_h; \
	fi

# One target per kernel, so that make -j builds the kernels side by side.
# The test is on the $(MAKE) line, which a dry run (make -n) runs too: a
# make with no kernel and no target would build `all`, i.e. modules again.
modules:
	@test -n "$(BUILD_KVERS)" || { echo "$(NO_KERNEL_MSG)" >&2; exit 1; }; \
	$(MAKE) --no-print-directory $(addprefix module-build-,$(BUILD_KVERS))

module-build-%:
	@$(MAKE) --no-print-directory module-build K=$*

module-build:
	@test -d $(KDIR) || { echo "$(NO_HEADERS_MSG)" >&2; exit 1; }
	@mkdir -p build/$(K)
	@cp -ru modules include build/$(K)/
	@k=$(K); $(BLOCK_HEADERS); \
	for m in $(MODULES); do \
		echo "  MODULE  $$m for $(K)"; \
		$(MAKE) --no-print-directory -C $(KDIR) $(KCROSS) \
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
# A cross build for an arm64 kernel of the sysroot: KARCH=arm64 (and
# MOBIO_ARM64_ROOT) in DKMS's environment, as dkms-install passes them.
dkms-build: K = $(KVER)
dkms-build:
	@k=$(KVER); $(BLOCK_HEADERS); \
	for m in $(MODULES); do \
		$(MAKE) -C $(KDIR) $(KCROSS) M=$(TOP)/modules/$$m \
			MOBIO_BLOCK_H=$$blk_h MOBIO_BLOCK_PKG=$$blk_pkg modules || exit 1; \
	done

# DKMS_SRC and DKMS_FLAGS let `make dkms-check` run this very recipe in a
# scratch tree (--dkmstree, --sourcetree, --installtree) instead of the system.
# KARCH=arm64: DKMS cross-builds for the sysroot's arm64 kernels (-a aarch64,
# --kernelsourcedir the sysroot's headers; installed without depmod, which
# has no arm64 kernel here to run for: to be shipped, not loaded here). The
# host's strip says it cannot read the arm64 .ko: DKMS goes on unstripped.
DKMS_CROSS = $(if $(filter arm64,$(KARCH)),KARCH=arm64 MOBIO_ARM64_ROOT=$(ARM64_ROOT))
DKMS_ARCH = $(if $(filter arm64,$(KARCH)),-a aarch64 --no-depmod --kernelsourcedir $(ARM64_ROOT)/usr/src/linux-headers-$$k)
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
		$(DKMS_CROSS) dkms build $(DKMS_FLAGS) mobio/$(VERSION) -k $$k $(DKMS_ARCH) || exit 1; \
		$(DKMS_CROSS) dkms install $(DKMS_FLAGS) mobio/$(VERSION) -k $$k $(DKMS_ARCH) || exit 1; \
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

# --- arm64 (cross-build) ----------------------------------------------------
# Everything the VM guest needs for Debian 12's arm64 kernels, built on this
# amd64 machine (issue 16; README.md, "arm64 (cross-build)"):
#   arm64-root    scripts/arm64-root.sh (root): the sysroot .cache/arm64-root,
#                 the arm64 twins of the installed amd64 kernels (image and
#                 headers) and the libraries; rebuilt only when its inputs change
#   modules KARCH=arm64   build/<kver>-arm64/modules/<m>/<m>.ko, as for amd64
#   arm64-user    libqnvram, sqlite-ppcache, tools and tests/vm/guest/*.c,
#                 cross-built against the sysroot in a copy of their sources
#                 (build/arm64/src/: the tree's own amd64 builds, which the amd64
#                 guest ships, are never touched), installed into
#                 build/arm64/user/{libqnvram,sqlite-ppcache,tools,guest}/
#   arm64-verify  every file of those is AArch64, each .ko has its kernel's
#                 vermagic, libqnvram has the arm64 persist barrier (dc cvac)
# arm64-root depends on deps (the amd64 kernels: their kbuild runs the arm64
# build, their linux-source gives smartio's block headers); each step after it
# is a fresh make, which sees the sysroot's kernels (see deps:).
ARM64_SRC := build/arm64/src
ARM64_USER := build/arm64/user
ARM64_CC = $(ARM64_CROSS)gcc --sysroot=$(ARM64_ROOT)
# pkg-config (tools/Makefile) answers for the sysroot's libraries
ARM64_ENV = PKG_CONFIG_SYSROOT_DIR=$(ARM64_ROOT) \
	PKG_CONFIG_LIBDIR=$(ARM64_ROOT)/usr/lib/aarch64-linux-gnu/pkgconfig:$(ARM64_ROOT)/usr/share/pkgconfig
ARM64_VARS = CC="$(ARM64_CC)" AR=$(ARM64_CROSS)ar
# sources only: the tree's objects, libraries and programs stay out of the copy
ARM64_SRC_FILES = $(shell find include libqnvram sqlite-ppcache tools -type f \
	! -name '*.o' ! -name '*.so' ! -name '*.so.*' ! -name '*.a' ! -perm -u=x 2>/dev/null) \
	$(wildcard tests/vm/guest/*.c)
ARM64_GUEST_BINS = $(patsubst tests/vm/guest/%.c,$(ARM64_SRC)/guest/%,$(wildcard tests/vm/guest/*.c))
ARM64_LIBS := libqnvram/libqnvram.so.1.0.0 libqnvram/libqnvram.so.1 libqnvram/libqnvram.so \
	sqlite-ppcache/libppcache.so
ARM64_BINS := sqlite-ppcache/ppcache tools/mobioctl tools/fb-scrub tools/fb-backup

arm64: arm64-root
	$(MAKE) --no-print-directory modules KARCH=arm64
	$(MAKE) --no-print-directory arm64-user
	$(MAKE) --no-print-directory arm64-verify

arm64-root: deps
	scripts/arm64-root.sh

# The copy is refreshed with the sources' times (an unchanged file is not
# rebuilt), and started afresh when the sysroot was rebuilt. It runs in a dry
# run too (+): the sub-makes after it read the copy.
arm64-user:
	@test -e $(ARM64_ROOT)/.mobio-stamp || { echo "no arm64 sysroot in $(ARM64_ROOT): run 'make arm64' (as root)" >&2; exit 1; }
	@command -v $(ARM64_CROSS)gcc >/dev/null || { echo "$(ARM64_CROSS)gcc missing: apt-get install gcc-aarch64-linux-gnu" >&2; exit 1; }
	+@cmp -s $(ARM64_ROOT)/.mobio-stamp $(ARM64_SRC)/.sysroot-stamp || rm -rf $(ARM64_SRC); \
	mkdir -p $(ARM64_SRC) && cp -p --parents $(ARM64_SRC_FILES) $(ARM64_SRC)/ && \
	{ cp $(ARM64_ROOT)/.mobio-stamp $(ARM64_SRC)/.sysroot-stamp 2>/dev/null || true; }
	$(ARM64_ENV) $(MAKE) --no-print-directory -C $(ARM64_SRC)/libqnvram $(ARM64_VARS)
	$(ARM64_ENV) $(MAKE) --no-print-directory -C $(ARM64_SRC)/sqlite-ppcache $(ARM64_VARS)
	$(ARM64_ENV) $(MAKE) --no-print-directory -C $(ARM64_SRC)/tools $(ARM64_VARS)
	$(MAKE) --no-print-directory arm64-guest
	@rm -rf $(ARM64_USER) && mkdir -p $(addprefix $(ARM64_USER)/,libqnvram sqlite-ppcache tools guest)
	@for f in $(ARM64_LIBS) $(ARM64_BINS); do cp -pP $(ARM64_SRC)/$$f $(ARM64_USER)/$$f || exit 1; done
	@cp -p $(ARM64_GUEST_BINS) $(ARM64_USER)/guest/
	@echo "arm64 userspace: $$(cd $(ARM64_USER) && find . -type f -o -type l | sed 's|^\./||' | sort | tr '\n' ' ')in $(ARM64_USER)/"

# tests/vm/guest/*.c as vm.mk builds them for amd64, against the copy (the
# .mk files below add their programs: ppcache*.c with SQLite, sqlbench,
# switchbench)
arm64-guest: $(ARM64_GUEST_BINS)

$(ARM64_SRC)/guest/%: $(ARM64_SRC)/tests/vm/guest/%.c $(wildcard $(ARM64_SRC)/libqnvram/*.h \
		$(ARM64_SRC)/include/uapi/*/*.h $(ARM64_SRC)/include/uapi/*.h $(ARM64_SRC)/tools/*.c $(ARM64_SRC)/tools/*.h)
	@mkdir -p $(@D)
	$(ARM64_CC) $(VM_GUEST_CFLAGS) -I$(ARM64_SRC)/libqnvram -I$(ARM64_SRC)/include/uapi -o $@ $< \
		-L$(ARM64_SRC)/libqnvram $(VM_GUEST_LDLIBS)

arm64-verify:
	@bad=0; n=0; \
	for f in $$(find $(ARM64_USER) -type f) $(foreach k,$(ARM64_BUILD_KVERS),$(foreach m,$(MODULES),build/$(k)/modules/$(m)/$(m).ko)); do \
		if readelf -h $$f 2>/dev/null | grep -q 'Machine:.*AArch64'; then n=$$((n + 1)); \
		else echo "arm64-verify: $$f: missing or not AArch64" >&2; bad=1; fi; \
	done; \
	for k in $(ARM64_BUILD_KVERS); do for m in $(MODULES); do \
		v=$$(modinfo -F vermagic build/$$k/modules/$$m/$$m.ko 2>/dev/null); \
		case "$$v" in "$$k "*) ;; *) echo "arm64-verify: $$m.ko for $$k: vermagic '$$v'" >&2; bad=1 ;; esac; \
	done; done; \
	$(ARM64_CROSS)objdump -d $(ARM64_USER)/libqnvram/libqnvram.so.1.0.0 | grep -qE 'dc[[:space:]]+cvac' || \
		{ echo "arm64-verify: libqnvram has no dc cvac (qnvm_persist's arm64 barrier)" >&2; bad=1; }; \
	test $$bad = 0 && echo "arm64-verify: $$n files AArch64 ($(ARM64_USER)/ and the modules of $(ARM64_BUILD_KVERS)), vermagic ok, dc cvac in libqnvram"

# --- tests ------------------------------------------------------------------
-include tests/vm/vm.mk

# Independent host steps run two at a time (2 cores; -O keeps each step's
# output together); the VM suite runs alone. The Debian guest's base system
# (mmdebstrap: mostly downloads and unpacking, 2-4.5 min) is built beside the
# host steps, niced; vm-check's image build waits for it (the script's lock)
# and finds it up to date.
check: deps
	$(MAKE) make-selftest
	$(MAKE) --no-print-directory vm-debian-base-bg
	$(MAKE) -j2 -Otarget KVER=all modules lib tools
	$(MAKE) -j2 -Otarget unit sqlite-testfixture
	$(MAKE) sqlite-tests
	$(MAKE) -j2 -Otarget install-check checkpatch sparse dkms-check deb-check
	$(MAKE) vm-check

# The Makefile itself, without building or booting anything: every target that
# depends on deps, dry-run as on a machine that has never run the project.
make-selftest:
	tests/make/fresh-machine.sh

# DKMS build (not load) for every supported kernel, in a scratch copy;
# KARCH=arm64: DKMS's cross-build for the sysroot's arm64 kernels.
DKMS_CHECK = build/dkms$(if $(filter arm64,$(KARCH)),-arm64)
DKMS_CHECK_KVERS = $(if $(filter arm64,$(KARCH)),$(ARM64_KERNELS),$(KERNELS))
dkms-check:
	@rm -rf $(DKMS_CHECK) && mkdir -p $(DKMS_CHECK)/src $(DKMS_CHECK)/tree $(patsubst %,$(DKMS_CHECK)/install/%,$(DKMS_CHECK_KVERS))
	@$(MAKE) --no-print-directory dkms-install KVER=all DKMS_SRC=$(TOP)/$(DKMS_CHECK)/src \
		DKMS_FLAGS="--dkmstree $(TOP)/$(DKMS_CHECK)/tree --sourcetree $(TOP)/$(DKMS_CHECK)/src --installtree $(TOP)/$(DKMS_CHECK)/install" \
		>$(DKMS_CHECK).log 2>&1 || { cat $(DKMS_CHECK).log; echo "make dkms-install failed" >&2; exit 1; }
	@for k in $(DKMS_CHECK_KVERS); do for m in $(MODULES); do \
		f=$$(find $(DKMS_CHECK)/install/$$k -name "$$m.ko*" | head -n 1); \
		test -n "$$f" || { cat $(DKMS_CHECK).log; echo "dkms installed no $$m for $$k (is it in dkms.conf?)" >&2; exit 1; }; \
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
