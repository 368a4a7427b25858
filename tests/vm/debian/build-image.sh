#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The Debian guest of the VM bench (docs/vm-bench.md, "The Debian guest"): a
# Debian 12 system the way a laptop user has one, on an ext4 image that
# tests/vm/run.py boots with systemd for tests whose header says
# "# vm-root: debian".
#
# Two stages, each rebuilt only when its inputs change (a stamp beside it):
#   OUTDIR/base/     base.sh: mmdebstrap from Debian's archive (the host's apt
#                    sources): systemd, udev, sqlite3, dkms and, for every
#                    supported kernel (scripts/kernels.sh), linux-image,
#                    linux-headers and linux-source at the host's exact
#                    versions. Inputs: base.sh, the sources, those versions.
#   OUTDIR/root.img  a copy of base/ in which the project's .debs are installed
#                    with `apt install ./*.deb`, as a user would: DKMS builds the
#                    modules for both kernels in this chroot (on the host, not at
#                    the guest's first boot: TCG would take ~10x longer), then
#                    the configuration a user edits (tests/vm/debian/setup.sh)
#                    and the bench's test agent; ext4, label mobio-root.
#                    Inputs: base's stamp, the .debs, the files in this
#                    directory, tests/vm/guest/lib.sh and the tests that boot it.
#   OUTDIR/boot/initrd.img-KVER  that image's own initramfs of each kernel.
#
# Usage (as root): tests/vm/debian/build-image.sh OUTDIR DEBDIR [TEST.sh...]
#                  tests/vm/debian/build-image.sh --base-only OUTDIR
# --base-only builds stage 1 alone (it needs no .deb): make check starts it
# beside the host steps. Every run holds OUTDIR/.lock, so a second one waits
# for the first and then finds what it built up to date.
set -euo pipefail

base_only=
if [ "${1:-}" = --base-only ]; then
	base_only=1
	shift
	set -- "${1:?usage: $0 --base-only OUTDIR}" -
fi

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=${1:?usage: $0 OUTDIR DEBDIR [TEST.sh...]}
debdir=${2:?usage: $0 OUTDIR DEBDIR [TEST.sh...]}
shift 2
tests=("$@")

log() { echo "debian-image: $*" >&2; }
die() { log "$*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (mmdebstrap, chroot)"
for t in mmdebstrap mkfs.ext4 chroot flock; do
	command -v $t >/dev/null || die "$t missing: run 'make deps' (as root)"
done
# the five packages a user installs (not the -dbgsym ones)
debs=()
if [ -z "$base_only" ]; then
	for d in "$debdir"/*.deb; do
		case "$d" in *-dbgsym_*) ;; *.deb) [ -e "$d" ] && debs+=("$d") ;; esac
	done
	[ ${#debs[@]} -gt 0 ] || die "no .deb in $debdir: run 'make deb' first"
fi

pkg_version() {
	dpkg-query -W -f='${db:Status-Abbrev} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "ii" { print $2 }'
}

# The kernel packages, at the host's versions: the guest boots the host's
# /boot/vmlinuz-KVER of the same package version.
kpkgs=()
for k in $("$top/scripts/kernels.sh"); do
	v=$(pkg_version "linux-image-$k")
	series=$(echo "$k" | cut -d. -f1,2)
	[ -n "$v" ] || die "linux-image-$k is not installed on the host"
	[ "$(pkg_version "linux-source-$series")" = "$v" ] ||
		die "linux-source-$series is not at $v on the host: run 'make deps'"
	kpkgs+=("linux-image-$k=$v" "linux-headers-$k=$v" "linux-source-$series=$v")
done
[ ${#kpkgs[@]} -gt 0 ] || die "no supported kernel installed: run 'make deps'"

sources=/etc/apt/sources.list.d/debian.sources
[ -e $sources ] || sources=/etc/apt/sources.list
[ -e $sources ] || die "no apt sources on the host ($sources)"

mkdir -p "$out"
exec 9>"$out/.lock"
if ! flock -n 9; then
	log "waiting for another build of $out"
	flock 9
fi
# fingerprints of contents, not of paths (run.py passes absolute ones)
content_sums() {
	sha256sum "$@" | cut -d' ' -f1
}
base_fp=$( { content_sums "$here/base.sh" "$sources"; printf '%s\n' "${kpkgs[@]}"; } | sha256sum | cut -c1-16)

# --- stage 1: the base system ------------------------------------------------
if [ "$(cat "$out/base.stamp" 2>/dev/null)" != "$base_fp" ] || [ ! -d "$out/base" ]; then
	log "base: mmdebstrap bookworm with ${kpkgs[*]}"
	rm -rf "$out/base" "$out/base.tmp" "$out/base.stamp"
	t0=$(date +%s)
	"$here/base.sh" "$out/base.tmp" "$sources" "${kpkgs[@]}"
	mv "$out/base.tmp" "$out/base"
	echo "$base_fp" >"$out/base.stamp"
	log "base: built in $(( $(date +%s) - t0 )) s, $(du -sh "$out/base" | cut -f1)"
fi
if [ -n "$base_only" ]; then
	log "base up to date"
	exit 0
fi

# --- stage 2: the project's packages, configured, as an ext4 image --------------
img_fp=$( { echo "$base_fp"; content_sums "${debs[@]}" "$here"/* "$top/tests/vm/guest/lib.sh" ${tests[@]+"${tests[@]}"}; } |
	sha256sum | cut -c1-16)
if [ "$(cat "$out/root.stamp" 2>/dev/null)" = "$img_fp" ] && [ -e "$out/root.img" ]; then
	log "root.img up to date"
	exit 0
fi
log "root.img: installing ${debs[*]##*/}"
t0=$(date +%s)
root="$out/root"
rm -rf "$root" "$out/root.img" "$out/root.stamp"
cp -a "$out/base" "$root"
mounted=()
cleanup() {
	local m
	for m in "${mounted[@]}"; do
		umount -l "$m" 2>/dev/null || true
	done
}
trap cleanup EXIT
for m in proc sys dev dev/pts; do
	mount --bind "/$m" "$root/$m"
	mounted=("$root/$m" "${mounted[@]}")
done
mkdir -p "$root/tmp/mobio-debs"
cp "${debs[@]}" "$root/tmp/mobio-debs/"
# apt as a user runs it; DKMS in the package's postinst builds for each
# kernel with headers, and fails the step if a module does not build
in_chroot=()
for d in "${debs[@]}"; do
	in_chroot+=("/tmp/mobio-debs/${d##*/}")
done
chroot "$root" env DEBIAN_FRONTEND=noninteractive \
	apt-get install -y --no-install-recommends "${in_chroot[@]}" >"$out/apt-install.log" 2>&1 ||
	{ tail -n 30 "$out/apt-install.log" >&2; die "apt install of the .debs failed ($out/apt-install.log)"; }
for k in $("$top/scripts/kernels.sh"); do
	for m in qnvram smartio-iosched freeblock asap-prefetch; do
		# DKMS compresses them as the kernel's own are (6.12: .ko.xz)
		ls "$root/lib/modules/$k/updates/dkms/$m.ko"* >/dev/null 2>&1 ||
			die "DKMS did not install $m.ko for $k ($out/apt-install.log)"
	done
done
rm -rf "$root/tmp/mobio-debs"

# what a user of the packages configures, and the bench's agent
install -m 0755 "$here/setup.sh" "$root/tmp/setup.sh"
mkdir -p "$root/tmp/mobio-guest"
cp "$here/agent.sh" "$here"/*.service "$root/tmp/mobio-guest/"
mkdir -p "$root/mobio/tests"
cp "$top/tests/vm/guest/lib.sh" ${tests[@]+"${tests[@]}"} "$root/mobio/tests/"
chroot "$root" /tmp/setup.sh /tmp/mobio-guest >"$out/setup.log" 2>&1 ||
	{ cat "$out/setup.log" >&2; die "setup.sh failed"; }
rm -rf "$root/tmp/setup.sh" "$root/tmp/mobio-guest"
chroot "$root" apt-get clean

mkdir -p "$out/boot"
for k in $("$top/scripts/kernels.sh"); do
	cp "$root/boot/initrd.img-$k" "$out/boot/initrd.img-$k"
done
cleanup
mounted=()
mb=$(( $(du -sm "$root" | cut -f1) * 13 / 10 + 256 ))
mkfs.ext4 -q -F -L mobio-root -d "$root" "$out/root.img.tmp" "${mb}M"
mv "$out/root.img.tmp" "$out/root.img"
rm -rf "$root"
echo "$img_fp" >"$out/root.stamp"
log "root.img: ${mb} MiB, built in $(( $(date +%s) - t0 )) s"
