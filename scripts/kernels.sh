#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the installed kernels the project supports: the newest Debian 6.1 and the
# newest 6.12 that have both /boot/vmlinuz-<kver> and /lib/modules/<kver>/build,
# one per line, oldest series first.  `kernels.sh newest` prints only the newest.
# `kernels.sh arm64`: the same for the arm64 kernels of the cross-build sysroot
# (scripts/arm64-root.sh): the newest 6.1 and 6.12 <kver>-arm64 that have both
# boot/vmlinuz-<kver> and usr/src/linux-headers-<kver> in it.
#
# Environment: BOOT_DIR (default /boot), MODULES_DIR (default /lib/modules),
# MOBIO_ARM64_ROOT (default .cache/arm64-root of this tree).
set -eu

boot=${BOOT_DIR:-/boot}
mods=${MODULES_DIR:-/lib/modules}

usage() {
	echo "usage: $0 [newest|arm64]" >&2
	exit 2
}

# newest installed kver of one series (e.g. 6.1), or nothing
newest_of() {
	series=$1
	for d in "$mods"/"$series".*; do
		[ -d "$d/build" ] || continue
		kver=${d##*/}
		[ -e "$boot/vmlinuz-$kver" ] || continue
		case "$kver" in *-amd64) ;; *) continue ;; esac
		echo "$kver"
	done | sort -V | tail -n 1
}

all() {
	for series in 6.1 6.12; do
		newest_of "$series"
	done
}

# newest arm64 kver of one series in the sysroot, or nothing
newest_arm64_of() {
	series=$1
	for d in "$arm64_root"/usr/src/linux-headers-"$series".*; do
		[ -d "$d" ] || continue
		kver=${d##*/linux-headers-}
		case "$kver" in *-arm64) ;; *) continue ;; esac
		[ -e "$arm64_root/boot/vmlinuz-$kver" ] || continue
		echo "$kver"
	done | sort -V | tail -n 1
}

arm64() {
	arm64_root=${MOBIO_ARM64_ROOT:-$(cd "$(dirname "$0")/.." && pwd)/.cache/arm64-root}
	for series in 6.1 6.12; do
		newest_arm64_of "$series"
	done
}

case "${1:-}" in
"") all ;;
newest) all | sort -V | tail -n 1 ;;
arm64) arm64 ;;
*) usage ;;
esac
