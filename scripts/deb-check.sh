#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Check the packages `make deb` built: every expected file is in its package
# (dpkg-deb -c), the files under /etc are its conffiles, and
# debian/libqnvram1.symbols matches the packaged library exactly
# (dpkg-gensymbols -c4). Run from the top of the tree (make deb-check).
#
# Usage: scripts/deb-check.sh DEBDIR VERSION    (e.g. build/deb 0.1.0-1)
set -euo pipefail

dir=${1:?usage: $0 DEBDIR VERSION}
ver=${2:?usage: $0 DEBDIR VERSION}
arch=$(dpkg-architecture -qDEB_HOST_ARCH)
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
src=/usr/src/mobio-${ver%-*}
fail=0

deb_of() { # package -> its .deb
	local a=$arch
	[ "$1" = mobio-dkms ] && a=all
	echo "$dir/${1}_${ver}_$a.deb"
}

# "package path" per line; conffiles are marked "conf".
expected="
mobio-dkms $src/dkms.conf
mobio-dkms $src/Makefile
mobio-dkms $src/scripts/kernels.sh
mobio-dkms $src/include/uapi/linux/mobio.h
mobio-dkms $src/modules/qnvram/Kbuild
mobio-dkms $src/modules/qnvram/qnvram_main.c
mobio-dkms $src/modules/smartio-iosched/Kbuild
mobio-dkms $src/modules/smartio-iosched/smartio-iosched.c
mobio-dkms $src/modules/freeblock/Kbuild
mobio-dkms $src/modules/freeblock/fb_core.c
mobio-dkms $src/modules/asap-prefetch/Kbuild
mobio-dkms $src/modules/asap-prefetch/asap_main.c
mobio-dkms $src/modules/common/mobio_compat.h
mobio-dkms /etc/modprobe.d/mobio.conf conf
mobio-dkms /etc/modules-load.d/mobio.conf conf
mobio-dkms /lib/udev/rules.d/65-mobio-smartio.rules
mobio-dkms /lib/udev/rules.d/60-mobio-devices.rules
mobio-dkms /usr/share/doc/mobio-dkms/README.Debian
libqnvram1 /usr/lib/$ma/libqnvram.so.1
libqnvram1 /usr/lib/$ma/libqnvram.so.1.0.0
libqnvram-dev /usr/include/qnvram.h
libqnvram-dev /usr/include/linux/qnvram.h
libqnvram-dev /usr/include/linux/mobio.h
libqnvram-dev /usr/lib/$ma/libqnvram.so
libqnvram-dev /usr/lib/$ma/libqnvram.a
libqnvram-dev /usr/lib/$ma/pkgconfig/libqnvram.pc
libsqlite3-ppcache /usr/lib/$ma/sqlite3/libppcache.so
mobio-tools /usr/bin/mobioctl
mobio-tools /usr/bin/fb-scrub
mobio-tools /usr/bin/fb-backup
mobio-tools /usr/bin/ppcache
mobio-tools /usr/share/man/man1/mobioctl.1.gz
mobio-tools /usr/share/man/man1/fb-scrub.1.gz
mobio-tools /usr/share/man/man1/fb-backup.1.gz
mobio-tools /usr/share/man/man1/ppcache.1.gz
mobio-tools /lib/systemd/system/fb-scrub@.service
mobio-tools /lib/systemd/system/fb-scrub@.timer
"

declare -A listing conffiles
while read -r pkg path conf; do
	[ -n "$pkg" ] || continue
	deb=$(deb_of "$pkg")
	if [ -z "${listing[$pkg]+x}" ]; then
		[ -f "$deb" ] || { echo "deb-check: $deb missing" >&2; exit 1; }
		listing[$pkg]=$(dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\.||')
		conffiles[$pkg]=$(dpkg-deb -I "$deb" conffiles 2>/dev/null || true)
	fi
	if grep -qxF "$path" <<<"${listing[$pkg]}"; then
		echo "ok: $pkg: $path"
	else
		echo "FAIL: $pkg lacks $path" >&2
		fail=1
	fi
	if [ "$conf" = conf ]; then
		if grep -qxF "$path" <<<"${conffiles[$pkg]}"; then
			echo "ok: $pkg: conffile $path"
		else
			echo "FAIL: $pkg: $path is not a conffile (conffiles: ${conffiles[$pkg]:-none})" >&2
			fail=1
		fi
	fi
done <<<"$expected"

# No build artefacts in the DKMS source.
if grep -E '\.(o|ko|mod|cmd|a|so)$|/modules\.order$|/Module\.symvers$' <<<"${listing[mobio-dkms]}"; then
	echo "FAIL: mobio-dkms ships build artefacts (above)" >&2
	fail=1
fi

# The symbols file against the library as packaged: any new or lost symbol
# or version fails (-c4).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dpkg-deb -x "$(deb_of libqnvram1)" "$tmp/root"
lib=$(readlink -f "$tmp/root/usr/lib/$ma/libqnvram.so.1")
if dpkg-gensymbols -c4 -q -plibqnvram1 -v"$ver" -e"$lib" -Idebian/libqnvram1.symbols -O"$tmp/symbols"; then
	echo "ok: debian/libqnvram1.symbols matches $(basename "$lib") ($(grep -c '^ ' "$tmp/symbols") symbols)"
else
	echo "FAIL: debian/libqnvram1.symbols does not match the packaged library (diff above)" >&2
	fail=1
fi
if ! dpkg-deb -I "$(deb_of libqnvram1)" symbols >/dev/null 2>&1; then
	echo "FAIL: libqnvram1 has no symbols control file" >&2
	fail=1
fi

[ $fail = 0 ] && echo "deb-check: all packages as expected"
exit $fail
