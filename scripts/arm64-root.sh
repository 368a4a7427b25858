#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The arm64 sysroot the project cross-builds against (issue 16, `make arm64`):
# Debian 12 arm64 packages, only extracted (mmdebstrap --variant=extract, from
# the host's apt sources; the host's dpkg state is not touched, no foreign
# architecture is added), in .cache/arm64-root/.
#
# Kernels: the arm64 twin of every supported installed amd64 kernel
# (scripts/kernels.sh): <abi>-arm64 for <abi>-amd64, linux-image and
# linux-headers at the Debian version of the installed linux-image-<abi>-amd64.
# Userspace: what the guest programs, libqnvram, sqlite-ppcache and tools link
# (libc6-dev, libmnl-dev, libsqlite3-dev, libssl-dev) and what an arm64 guest
# runs (busybox-static, fio, sqlite3, e2fsprogs' mkfs.ext4). The modules get
# their modules.dep (depmod -b: the package's postinst, which extract skips),
# so tests/vm/run.py resolves a test's kernel modules with modprobe -d.
#
# The headers' scripts/ and tools/ point to ../../lib/linux-kbuild-<x>, the
# arm64 kbuild binaries, which do not run here: each
# usr/lib/linux-kbuild-<x> of the sysroot is replaced by a symlink to the
# host's /usr/lib/linux-kbuild-<x> (installed with the amd64 headers at the
# same version; linux-kbuild is Multi-Arch: foreign for this).  The headers'
# Makefile includes /usr/src/linux-headers-<abi>-common/Makefile by absolute
# path; it is pointed at the sysroot's own copy (architecture all, the same
# files), so the host's -common is not needed.
#
# Stamp: .cache/arm64-root/.mobio-stamp, written before the sysroot is moved
# into place: "fingerprint <fp>" (this script, the apt sources, the package
# list with versions, the sysroot's path) and "kernel <kver> <version>" per
# arm64 kernel (the Makefile takes the smartio block headers' version from
# it).  The sysroot is rebuilt only when the fingerprint changes; it is built
# in .cache/arm64-root.tmp and renamed, so it is either complete or absent.
#
# Host tools: mmdebstrap, gcc-aarch64-linux-gnu, and for the arm64 VM bench
# (make check-arm64) qemu-system-arm and device-tree-compiler, are installed
# with apt-get when missing (as scripts/deps.sh installs its own).
#
# Usage (as root): scripts/arm64-root.sh [--help]
# Prints the sysroot's path; `scripts/kernels.sh arm64` lists its kernels.
# MOBIO_ARM64_ROOT=DIR: the sysroot elsewhere (tests/vm/run.py,
# scripts/kernels.sh and the Makefile read it too).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
root=${MOBIO_ARM64_ROOT:-$top/.cache/arm64-root}
case "$root" in /*) ;; *) root=$PWD/$root ;; esac
stamp_name=.mobio-stamp
userland="busybox-static e2fsprogs fio libc6-dev libmnl-dev libsqlite3-dev libssl-dev sqlite3"
host_pkgs="mmdebstrap gcc-aarch64-linux-gnu qemu-system-arm device-tree-compiler"

log() { echo "arm64-root: $*" >&2; }
die() { log "$*"; exit 1; }

usage() {
	sed -n '3,/^set -euo/{/^set -euo/d; s/^# \{0,1\}//; p}' "$0"
}

case "${1:-}" in
"") ;;
-h | --help) usage; exit 0 ;;
*) usage >&2; exit 2 ;;
esac

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap --mode=root): run it as root, or make arm64 as root"

installed_version() { # pkg -> version or nothing
	dpkg-query -W -f='${db:Status-Abbrev} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "ii" { print $2 }'
}

# --- host tools ----------------------------------------------------------------
missing=()
for p in $host_pkgs; do
	[ -n "$(installed_version "$p")" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "apt-get install -y --no-install-recommends ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" ||
		die "could not install ${missing[*]} (apt-get update first?)"
fi

# --- the arm64 kernels: twins of the installed amd64 ones ----------------------
amd64=$("$top/scripts/kernels.sh")
[ -n "$amd64" ] || die "no supported amd64 kernel installed (the arm64 kernels are their twins, built with their kbuild): run 'make deps' (as root)"
pkgs=()
kernels=()
for k in $amd64; do
	v=$(installed_version "linux-image-$k")
	[ -n "$v" ] || die "linux-image-$k is not installed (dpkg): run 'make deps' (as root)"
	[ "$(installed_version "linux-headers-$k")" = "$v" ] ||
		die "linux-headers-$k is not at $v, the version of linux-image-$k: run 'make deps' (as root)"
	# the host's kbuild of that kernel: the arm64 headers use it
	kb=$(readlink "/usr/src/linux-headers-$k/scripts" || true)
	kb=${kb%/scripts}
	kb=${kb##*/}
	case "$kb" in linux-kbuild-*) ;; *) die "/usr/src/linux-headers-$k/scripts is not a link to a linux-kbuild package: run 'make deps' (as root)" ;; esac
	if [ "$(installed_version "$kb")" != "$v" ] || [ ! -d "/usr/lib/$kb/scripts" ]; then
		die "$kb is not installed at $v (it comes with linux-headers-$k): run 'make deps' (as root)"
	fi
	a=${k%-amd64}-arm64
	pkgs+=("linux-image-$a=$v" "linux-headers-$a=$v")
	kernels+=("$a $v")
done

sources=/etc/apt/sources.list.d/debian.sources
[ -e $sources ] || sources=/etc/apt/sources.list
[ -e $sources ] || die "no apt sources on the host ($sources)"

# the path too: the headers' Makefile names it
# shellcheck disable=SC2086 # word lists
fp=$( { sha256sum "$0" "$sources" | cut -d' ' -f1; printf '%s\n' "$root" $userland "${pkgs[@]}"; } |
	sha256sum | cut -c1-16)

if [ -d "$root" ] && [ "$(sed -n 's/^fingerprint //p' "$root/$stamp_name" 2>/dev/null)" = "$fp" ]; then
	log "up to date: ${root#"$top"/} (${kernels[*]})"
	echo "$root"
	exit 0
fi

# --- build ---------------------------------------------------------------------
tmp=$root.tmp
rm -rf "$tmp"
trap 'rm -rf "$tmp"' EXIT	# a failed build leaves nothing behind
mkdir -p "$(dirname "$root")"
log "mmdebstrap --variant=extract --arch=arm64 bookworm: $userland ${pkgs[*]}"
t0=$(date +%s)
# shellcheck disable=SC2086 # $userland: a word list
mmdebstrap --mode=root --variant=extract --arch=arm64 --quiet \
	--aptopt='APT::Install-Recommends "false"' \
	--include="$(IFS=,; echo $userland,"${pkgs[*]}")" \
	bookworm "$tmp" "$sources" ||
	die "mmdebstrap failed (are ${pkgs[*]} still in the archive? a security update may have replaced them: 'scripts/deps.sh --update', then again)"

for kv in "${kernels[@]}"; do
	read -r a v <<<"$kv"
	h=$tmp/usr/src/linux-headers-$a
	if [ ! -e "$tmp/boot/vmlinuz-$a" ] || [ ! -e "$h/Makefile" ]; then
		die "the sysroot has no boot/vmlinuz-$a or usr/src/linux-headers-$a/Makefile"
	fi
	kb=$(readlink "$h/scripts")
	kb=${kb%/scripts}
	kb=${kb##*/}
	[ -d "/usr/lib/$kb" ] || die "the host has no /usr/lib/$kb for $a: run 'make deps' (as root)"
	depmod -b "$tmp" "$a" || die "depmod -b $tmp $a failed"
	rm -rf "${tmp:?}/usr/lib/$kb"
	ln -s "/usr/lib/$kb" "$tmp/usr/lib/$kb"
	# include /usr/src/linux-headers-<abi>-common/Makefile -> the sysroot's copy
	sed -i "s|^include /usr/src/|include $root/usr/src/|" "$h/Makefile"
	common=$(sed -n "s|^include $root/\(usr/src/linux-headers-.*-common/Makefile\)\$|\1|p" "$h/Makefile")
	if [ -z "$common" ] || [ ! -e "$tmp/$common" ]; then
		die "unexpected $h/Makefile: $(cat "$h/Makefile")"
	fi
	echo "kernel $kv"
done >"$tmp/$stamp_name.kernels"
{ echo "fingerprint $fp"; cat "$tmp/$stamp_name.kernels"; } >"$tmp/$stamp_name"
rm -f "$tmp/$stamp_name.kernels"

rm -rf "$root"
mv "$tmp" "$root"
trap - EXIT
log "built in $(( $(date +%s) - t0 )) s, $(du -sh "$root" | cut -f1): ${root#"$top"/} (${kernels[*]})"
echo "$root"
