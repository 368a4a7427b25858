#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Stage 1 of the Debian guest (build-image.sh): a minimal Debian 12 system
# with systemd, udev, sqlite3, dkms and the given kernel packages, from the
# host's apt sources. Its own file so that the cached base is rebuilt only
# when this changes, not when stage 2 does.
#
# Usage (as root): base.sh DIR SOURCES PKG=VERSION...
set -euo pipefail
dir=${1:?usage: $0 DIR SOURCES PKG=VERSION...}
sources=${2:?usage: $0 DIR SOURCES PKG=VERSION...}
shift 2

# The host's apt cache seeds the download (the kernel packages are there
# after make deps); mmdebstrap empties the cache again at the end. The lists
# stay, for stage 2's apt.
mmdebstrap --mode=root --variant=minbase \
	--aptopt='APT::Install-Recommends "false"' \
	--skip=download/empty --skip=cleanup/apt/lists \
	--setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
	--setup-hook='cp -l /var/cache/apt/archives/*.deb "$1/var/cache/apt/archives/" 2>/dev/null || cp /var/cache/apt/archives/*.deb "$1/var/cache/apt/archives/" 2>/dev/null || true' \
	--include="systemd-sysv,udev,kmod,procps,sqlite3,libsqlite3-0,libmnl0,dkms,make,xz-utils,initramfs-tools,e2fsprogs,$(IFS=,; echo "$*")" \
	bookworm "$dir" "$sources"
