#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Print the installed kernels the project supports: the newest Debian 6.1 and the
# newest 6.12 that have both /boot/vmlinuz-<kver> and /lib/modules/<kver>/build,
# one per line, oldest series first.  `kernels.sh newest` prints only the newest.
#
# Environment: BOOT_DIR (default /boot), MODULES_DIR (default /lib/modules).
set -eu

boot=${BOOT_DIR:-/boot}
mods=${MODULES_DIR:-/lib/modules}

usage() {
	echo "usage: $0 [newest]" >&2
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

case "${1:-}" in
"") all ;;
newest) all | sort -V | tail -n 1 ;;
*) usage ;;
esac
