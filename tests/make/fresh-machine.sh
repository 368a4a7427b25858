#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The top-level Makefile on a machine that has never run the project (issue 11):
# no supported kernel is installed when make starts, `deps` (scripts/deps.sh)
# installs them. Every variable computed from the installed kernels when make
# reads its makefiles (KERNELS, KVER, VM_KVER, VM_KVERS, SQLBENCH_KVER,
# CHECKPATCH...) is then empty in that make, so a recipe of a target that
# depends on deps must not use them itself: it hands the rest to a fresh
# $(MAKE), which reads the makefiles again after deps has run.
#
# How: a scratch copy of the Makefile, the .mk files it includes and
# scripts/kernels.sh, with every sub-directory's Makefile a no-op stub;
# kernels.sh looks at an empty BOOT_DIR/MODULES_DIR; `deps` is replaced
# (-f tests/.../stub.mk, a recipe that runs under -n) by a fake that "installs"
# a 6.1 and a 6.12 kernel there and the checkpatch cache; `arm64-root`
# (scripts/arm64-root.sh, for make arm64) likewise by a fake that puts their
# arm64 twins into .cache/arm64-root. Then `make -n <target>`
# for every target that depends on deps (found in make's database, directly or
# through another such target): the printed commands of the whole tree of
# sub-makes must name the fake kernels wherever a kernel is passed (--kver,
# KVER=, KVERS=, for k in, test -n), and never an empty one. Nothing is built,
# booted or installed; no root needed, a few seconds.
#
# Usage: tests/make/fresh-machine.sh [-v]   (-v: print each dry run's log)
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
verbose=0
[ "${1:-}" = -v ] && verbose=1

k61=6.1.0-9999-amd64
k612=6.12.9999+bpo-amd64
newest=$k612
all_k="$k61 $k612"
k61a=6.1.0-9999-arm64
k612a=6.12.9999+bpo-arm64
all_a="$k61a $k612a"
cache_ver=9999.fake

tmp=$(mktemp -d /tmp/mobio-fresh-machine.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# each dry run's output, kept for a look afterwards (build/ is not tracked)
logdir=$top/build/make-selftest
rm -rf "$logdir" && mkdir -p "$logdir" || logdir=$tmp

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   - $*"; }
fail() { failed=$((failed + 1)); echo "FAIL - $*"; }

# regex-quote a fixed string for grep -E
q() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }

# A fresh tree in $1: what make reads, stubs for what it descends into.
make_tree() {
	local d=$1 f sub
	mkdir -p "$d"
	(cd "$top" && cp --parents Makefile dkms.conf scripts/kernels.sh "$d/") || return 1
	# shellcheck disable=SC2013 # words: one include line may name several files
	for f in $(sed -n 's/^-\{0,1\}include[[:space:]]\{1,\}//p' "$top/Makefile"); do
		[ -f "$top/$f" ] && (cd "$top" && cp --parents "$f" "$d/")
	done
	# sources named by rules (empty: a dry run compiles nothing)
	for f in "$top"/tests/vm/guest/*.c "$top"/bench/*/*.c; do
		[ -f "$f" ] || continue
		f=${f#"$top"/}
		mkdir -p "$d/$(dirname "$f")" && : >"$d/$f"
	done
	# every sub-directory make -C's into: a Makefile that does nothing
	for f in "$top"/*/Makefile "$top"/tests/*/Makefile; do
		sub=$(dirname "${f#"$top"/}")
		mkdir -p "$d/$sub"
		printf 'all:\n\t@:\n.DEFAULT:\n\t@:\n' >"$d/$sub/Makefile"
	done
	# modules/ and include/ are copied by recipes; build/ stands for the
	# mkdir lines a dry run does not execute
	mkdir -p "$d/modules" "$d/include" "$d/build" "$d/.fake/boot" "$d/.fake/modules"
	cat >"$d/.fake/deps.sh" <<-EOF
		#!/bin/sh
		# the fake scripts/deps.sh: both kernels and the checkpatch cache appear now
		set -e
		for k in $all_k; do
			mkdir -p "\$MODULES_DIR/\$k/build"
			: >"\$BOOT_DIR/vmlinuz-\$k"
		done
		mkdir -p .cache/linux-source-$cache_ver/scripts
		: >.cache/linux-source-$cache_ver/scripts/checkpatch.pl
		echo "FAKE-DEPS: installed $all_k"
	EOF
	chmod +x "$d/.fake/deps.sh"
	cat >"$d/.fake/arm64-root.sh" <<-EOF
		#!/bin/sh
		# the fake scripts/arm64-root.sh: the arm64 sysroot's kernels appear now
		set -e
		for k in $all_a; do
			mkdir -p ".cache/arm64-root/usr/src/linux-headers-\$k" .cache/arm64-root/boot
			: >".cache/arm64-root/boot/vmlinuz-\$k"
		done
		echo "FAKE-ARM64-ROOT: $all_a"
	EOF
	chmod +x "$d/.fake/arm64-root.sh"
	# `+`: runs under make -n, as the real deps would run before the rest
	printf 'deps:\n\t+@.fake/deps.sh\narm64-root:\n\t+@.fake/arm64-root.sh\n' >"$d/.fake/stub.mk"
}

# make in tree $1 as on a fresh machine: nothing of the caller's make or
# environment leaks in (MAKEFLAGS, KVER, T...).
fresh_make() {
	local d=$1
	shift
	(cd "$d" && env -i PATH="$PATH" HOME="${HOME:-/root}" LC_ALL=C \
		BOOT_DIR="$d/.fake/boot" MODULES_DIR="$d/.fake/modules" make "$@")
}

# --- the simulation itself --------------------------------------------------
base=$tmp/base
if ! make_tree "$base"; then
	fail "copy the Makefile and its .mk files"
	echo "$passed passed, $failed failed"
	exit 1
fi
out=$(cd "$base" && BOOT_DIR="$base/.fake/boot" MODULES_DIR="$base/.fake/modules" scripts/kernels.sh; \
	BOOT_DIR="$base/.fake/boot" MODULES_DIR="$base/.fake/modules" scripts/kernels.sh newest)
if [ -z "$out" ]; then
	ok "fresh machine: scripts/kernels.sh finds no kernel before deps"
else
	fail "fresh machine: scripts/kernels.sh finds '$out' before deps"
fi
(cd "$base" && BOOT_DIR="$base/.fake/boot" MODULES_DIR="$base/.fake/modules" .fake/deps.sh >/dev/null)
out=$(cd "$base" && BOOT_DIR="$base/.fake/boot" MODULES_DIR="$base/.fake/modules" scripts/kernels.sh | tr '\n' ' ')
if [ "$out" = "$all_k " ]; then
	ok "after the fake deps: scripts/kernels.sh finds $all_k"
else
	fail "after the fake deps: scripts/kernels.sh finds '$out', not '$all_k'"
fi

# --- targets that depend on deps, directly or through one that does ---------
rules=$(cd "$base" && env -i PATH="$PATH" LC_ALL=C make -pRrq -f Makefile : 2>/dev/null |
	awk '/^# Not a target:/ { skip = 1; next } /^$/ { skip = 0 }
		!skip && /^[^#.\t][^=]*:([^=]|$)/ { print }')
targets=""
set_=" deps "
while :; do
	added=0
	while IFS= read -r line; do
		t=${line%%:*}
		case "$set_" in *" $t "*) continue ;; esac
		for p in ${line#*:}; do
			case "$set_" in *" $p "*)
				set_+="$t "
				targets+="$t "
				added=1
				break ;;
			esac
		done
	done <<<"$rules"
	[ $added = 0 ] && break
done
for t in demo check arm64 check-arm64; do
	case " $targets" in
	*" $t "*) ok "make's database: '$t' depends on deps" ;;
	*) fail "make's database: '$t' does not depend on deps (targets found: ${targets:-none})" ;;
	esac
done

# --- a dry run of each -------------------------------------------------------
# What a dry run printed from the fake deps on, one command per line (a
# recipe line's backslash continuations joined).
after_deps() {
	sed -n '/^FAKE-DEPS: installed/,$p' "$1" | sed -e :a -e '/\\$/N; s/\\\n//; ta'
}

# $1 target, $2 log; the rest: "description|regex" that must match a line
# printed after the fake deps ran.
expect() {
	local t=$1 log=$2 spec desc re after
	shift 2
	for spec in "$@"; do
		desc=${spec%%|*}
		re=${spec#*|}
		after=$(after_deps "$log")
		if grep -Eq -- "$re" <<<"$after"; then
			ok "make $t: $desc"
		else
			fail "make $t: $desc (no line matches /$re/ after deps; log: $log)"
		fi
	done
}

kn=$(q "$newest")
ka=$(q "$all_k")
for t in $targets; do
	d=$tmp/$t
	log=$logdir/$t.log
	make_tree "$d"
	fresh_make "$d" -n -f Makefile -f .fake/stub.mk "$t" >"$log" 2>&1
	rc=$?
	[ $verbose = 1 ] && { echo "--- make -n $t"; cat "$log"; echo "---"; }
	if [ $rc = 0 ]; then
		ok "make -n $t exits 0"
	else
		fail "make -n $t exits $rc (log: $log)"
	fi
	if grep -q '^FAKE-DEPS: installed' "$log"; then
		ok "make $t: deps runs"
	else
		fail "make $t: deps never ran (log: $log)"
		continue
	fi
	# an empty kernel anywhere: --kver with no value, KVER= / KVERS="" / K=
	# empty, a loop over no kernel, a test -n of nothing
	bad=$(after_deps "$log" | grep -E -- \
		'--kver([[:space:]]+-|[[:space:]]*$)|(^|[[:space:]])(KVERS?|K|SQLBENCH_KVER)=(""|[[:space:]]|$)|for k in *;|test -n ""')
	if [ -z "$bad" ]; then
		ok "make $t: no step gets an empty kernel"
	else
		fail "make $t: steps get an empty kernel:"
		while IFS= read -r line; do echo "       $line"; done <<<"$bad"
	fi
	case $t in
	demo)
		expect "$t" "$log" \
			"the report step gets --kver $newest|report\.py --kver $kn --summary" \
			"the benchmark gets KVER=$newest|^KVER=$kn .*run-bench\.sh quick" \
			"the benchmark's modules are built for $newest|vm-build KVERS=\"$kn\"" \
			"the ppcache demo boots $newest|run\.py test --kver $kn .*ppcache-demo"
		;;
	demo-qnvram)
		expect "$t" "$log" \
			"the qNVRAM demo boots $newest|run\.py test --kver $kn .*qnvram-demo"
		;;
	check)
		expect "$t" "$log" \
			"modules (KVER=all) are built for $all_k|test -n \"$ka\" \|\| \{ echo \"no supported kernel headers" \
			"module-build runs for each kernel|make .*module-build-$(q $k61) module-build-$(q $k612)" \
			"sparse runs on $all_k|for k in $ka; do .*sparse" \
			"checkpatch is found in the deps cache|test -n \"\.cache/linux-source-$(q $cache_ver)/scripts/checkpatch\.pl\"" \
			"dkms-check installs for $all_k|build/dkms/install/$(q $k61) build/dkms/install/$(q $k612)" \
			"vm-check builds for $all_k|vm-build KVERS=\"$ka\"" \
			"vm-check passes the kernel list|test -n \"$ka\" \|\| \{ echo \"no supported kernel installed"
		;;
	check-arm64)
		expect "$t" "$log" \
			"the sysroot is made first|^FAKE-ARM64-ROOT: $(q "$all_a")\$" \
			"the arm64 modules are built for $all_a|module-build-$(q $k61a) module-build-$(q $k612a)" \
			"DKMS cross-builds for $all_a|build/dkms-arm64/install/$(q $k61a) build/dkms-arm64/install/$(q $k612a)" \
			"the arm64 smoke boots the arm64 kernels|run\.py check --arch arm64 .*qnvram-warm-reboot"
		;;
	arm64)
		expect "$t" "$log" \
			"the sysroot is made before the builds|^FAKE-ARM64-ROOT: $(q "$all_a")\$" \
			"the modules are built for $all_a|test -n \"$(q "$all_a")\" \|\| \{ echo \"no arm64 kernel.*module-build-$(q $k61a) module-build-$(q $k612a)" \
			"module-build cross-compiles against the sysroot|-C [^ ]*/\.cache/arm64-root/usr/src/linux-headers-$(q $k61a) ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- " \
			"the userspace is cross-built in its copy|make .*-C build/arm64/src/libqnvram CC=\"aarch64-linux-gnu-gcc --sysroot=" \
			"arm64-verify checks $all_a|for k in $(q "$all_a"); do for m in"
		;;
	esac
done

# A kernel given on the command line reaches the steps through the fresh make.
d=$tmp/demo-kver
log=$logdir/demo-KVER.log
make_tree "$d"
if fresh_make "$d" -n -f Makefile -f .fake/stub.mk demo KVER="$k61" >"$log" 2>&1; then
	ok "make -n demo KVER=$k61 exits 0"
else
	fail "make -n demo KVER=$k61 exits $? (log: $log)"
fi
expect "demo KVER=$k61" "$log" \
	"the report step gets --kver $k61|report\.py --kver $(q "$k61") --summary" \
	"the benchmark gets KVER=$k61|^KVER=$(q "$k61") .*run-bench\.sh quick" \
	"the ppcache demo boots $k61|run\.py test --kver $(q "$k61") .*ppcache-demo"

echo "$passed passed, $failed failed"
[ $failed = 0 ]
