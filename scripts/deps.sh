#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install everything mobio needs on a Debian 12 machine, then cache the kernel
# sources the build needs that Debian's header packages lack.
#
# Packages: the tool list below plus, for each kernel series (6.1 and 6.12), the
# newest version at which linux-image-<abi>-amd64, linux-headers-<abi>-amd64 and
# linux-source-<series> are all installable at the same Debian version.  They are
# installed by versioned name (pkg=version), never through meta packages, so
# nothing else is upgraded.
#
# Cache: for every supported installed kernel (scripts/kernels.sh) the private block
# headers and checkpatch are extracted from /usr/src/linux-source-<series>.tar.xz
# into .cache/linux-source-<headers-version>/{block/*.h,scripts/...}, where
# <headers-version> is the Debian version of linux-headers-<kver> (dpkg-query -W).
#
# SQLite's source with its TCL test suite (make sqlite-tests, tests/sqlite/): the
# Debian source package of the installed libsqlite3-0, at that exact version, in
# .cache/sqlite3-src/<version>/sqlite3-<upstream>/.  It needs a deb-src entry for
# the release's main suite; as root this writes /etc/apt/sources.list.d/
# mobio-deb-src.sources (the archive URI and Signed-By of apt's binary entry for
# that suite) and runs apt-get update once.
#
# Usage: scripts/deps.sh [--update]   (--update: apt-get update even if nothing
#                                      looks missing, to pick up newer kernels)
# As root it installs; otherwise it prints the apt-get command and exits 1 when
# something is missing.  Already installed and cached: a fast no-op.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
series_list="6.1 6.12"
tools="qemu-system-x86 qemu-utils busybox-static fio libcmocka-dev libmnl-dev libssl-dev dkms
sparse gnuplot-nox libsqlite3-dev sqlite3 kmod cpio xz-utils zstd pkg-config python3
gcc make tcl-dev dpkg-dev debhelper dh-dkms lintian help2man mmdebstrap e2fsprogs"

force_update=0
case "${1:-}" in
"") ;;
--update) force_update=1 ;;
*) echo "usage: $0 [--update]" >&2; exit 2 ;;
esac

log() { echo "deps: $*" >&2; }

installed_version() { # pkg -> version or nothing
	dpkg-query -W -f='${db:Status-Abbrev} ${Version}\n' "$1" 2>/dev/null |
		awk '$1 == "ii" { print $2 }'
}

# madison lines "pkg | version | origin" -> "pkg version"
madison() {
	apt-cache madison "$@" 2>/dev/null | awk -F'|' '{ gsub(/ /, "", $1); gsub(/ /, "", $2); print $1, $2 }'
}

# One apt-cache pass over every candidate: "pkg version" lines in $avail.
avail=""
load_avail() {
	local names series re
	names=""
	for series in $series_list; do
		re="^linux-image-${series//./\\.}\.[0-9]+(-[0-9]+|\+[a-z0-9]+)-amd64\$"
		names+=" $(apt-cache pkgnames "linux-image-$series." 2>/dev/null | grep -E "$re" || true)"
		names+=" linux-source-$series"
	done
	# shellcheck disable=SC2086
	avail=$(madison $names $(printf '%s\n' $names | sed -n 's/^linux-image-/linux-headers-/p'))
}

# Print "abi version" for the newest version of a series that has image, headers
# and source at the same Debian version; nothing if there is none.
resolve_series() {
	local series=$1 v abi best_v="" best_abi=""
	for v in $(awk -v p="linux-source-$series" '$1 == p { print $2 }' <<<"$avail"); do
		abi=$(awk -v v="$v" -v s="linux-image-$series." '
			$2 == v && index($1, s) == 1 { a = $1; sub(/^linux-image-/, "", a); sub(/-amd64$/, "", a); print a; exit }' <<<"$avail")
		[ -n "$abi" ] || continue
		grep -qxF "linux-headers-$abi-amd64 $v" <<<"$avail" || continue
		if [ -z "$best_v" ] || dpkg --compare-versions "$v" gt "$best_v"; then
			best_v=$v
			best_abi=$abi
		fi
	done
	[ -n "$best_v" ] && echo "$best_abi $best_v"
	return 0
}

# Fill $want (pkg=version list) and $missing (the subset not installed).
want=()
missing=()
chosen=()
resolve_all() {
	want=()
	missing=()
	chosen=()
	local p series r abi v
	load_avail
	for p in $tools; do
		want+=("$p")
		[ -n "$(installed_version "$p")" ] || missing+=("$p")
	done
	for series in $series_list; do
		r=$(resolve_series "$series")
		if [ -z "$r" ]; then
			log "no version of $series has linux-image, linux-headers and linux-source together (apt lists stale? try --update)"
			missing+=("linux-source-$series")
			continue
		fi
		read -r abi v <<<"$r"
		chosen+=("$series: linux-image-$abi-amd64 linux-headers-$abi-amd64 linux-source-$series = $v")
		for p in "linux-image-$abi-amd64" "linux-headers-$abi-amd64" "linux-source-$series"; do
			want+=("$p=$v")
			[ "$(installed_version "$p")" = "$v" ] || missing+=("$p=$v")
		done
	done
}

have_lists() { compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; }

updated=0
if [ $force_update = 1 ] || ! have_lists; then
	if [ "$(id -u)" = 0 ]; then
		log "apt-get update"
		apt-get update -qq
		updated=1
	fi
fi
resolve_all
if [ ${#missing[@]} -gt 0 ] && [ $updated = 0 ] && [ "$(id -u)" = 0 ]; then
	log "apt-get update (missing: ${missing[*]})"
	apt-get update -qq
	updated=1
	resolve_all
fi

for c in "${chosen[@]}"; do
	echo "kernel $c"
done

if [ ${#missing[@]} -gt 0 ]; then
	cmd="apt-get install -y --no-install-recommends ${missing[*]}"
	if [ "$(id -u)" != 0 ]; then
		echo "deps: not root; run as root:" >&2
		echo "apt-get update && $cmd"
		exit 1
	fi
	log "$cmd"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
	log "all packages installed"
fi

# --- kernel source cache -------------------------------------------------------
for kver in $("$top/scripts/kernels.sh"); do
	series=$(echo "$kver" | cut -d. -f1,2)
	hv=$(installed_version "linux-headers-$kver")
	sv=$(installed_version "linux-source-$series")
	dest="$top/.cache/linux-source-$hv"
	tarball="/usr/src/linux-source-$series.tar.xz"
	if [ -e "$dest/.complete-2" ]; then
		continue
	fi
	if [ -z "$hv" ] || [ "$sv" != "$hv" ] || [ ! -e "$tarball" ]; then
		log "$kver: need linux-source-$series=$hv (installed: ${sv:-none}) for block/*.h and checkpatch"
		continue
	fi
	log "$kver: extracting block/*.h, checkpatch and kernel-doc from $tarball into ${dest#"$top"/}"
	rm -rf "$dest.tmp"
	mkdir -p "$dest.tmp"
	tar -xJf "$tarball" -C "$dest.tmp" --strip-components=1 --wildcards \
		"linux-source-$series/block/*.h" \
		"linux-source-$series/scripts/checkpatch.pl" \
		"linux-source-$series/scripts/spelling.txt" \
		"linux-source-$series/scripts/const_structs.checkpatch" \
		"linux-source-$series/scripts/kernel-doc"
	touch "$dest.tmp/.complete-2"
	rm -rf "$dest"
	mv "$dest.tmp" "$dest"
done

# --- SQLite source (tests/sqlite) ----------------------------------------------
sqv=$(installed_version libsqlite3-0)
sqdest="$top/.cache/sqlite3-src/$sqv"
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
debsrc=/etc/apt/sources.list.d/mobio-deb-src.sources

have_src_lists() { compgen -G "/var/lib/apt/lists/*_dists_${codename}_main_source_Sources*" >/dev/null; }

# "URI SIGNED-BY" of apt's binary entry for suite $codename (deb822 or one-line
# format); Debian's defaults when there is none.
binary_entry() {
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] && [ "$f" != "$debsrc" ] || continue
		case "$f" in
		*.sources)
			awk -v s="$codename" '
				function flush() { if (deb && suite && uri != "") { print uri, (key == "" ? "-" : key); found = 1; exit } }
				/^[ \t]*#/ { next }
				/^[ \t]*$/ { flush(); deb = suite = 0; uri = key = ""; next }
				tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
				tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == s) suite = 1 }
				tolower($1) == "uris:" { uri = $2 }
				tolower($1) == "signed-by:" { key = $2 }
				END { if (!found) flush() }' "$f" ;;
		*)
			awk -v s="$codename" '
				$1 != "deb" { next }
				{ key = "-"; i = 2
				  if ($2 ~ /^\[/) { for (; i <= NF; i++) { if ($i ~ /^\[?signed-by=/) { key = $i; sub(/^\[?signed-by=/, "", key); sub(/\]$/, "", key) }
				                                           if ($i ~ /\]$/) { i++; break } } }
				  if ($(i + 1) == s) { print $i, key; exit } }' "$f" ;;
		esac
	done | head -n 1
}

if [ -z "$sqv" ]; then
	log "libsqlite3-0 not installed: no SQLite source for make sqlite-tests"
elif [ -e "$sqdest/.complete" ]; then
	:
elif [ -z "$codename" ]; then
	log "no VERSION_CODENAME in /etc/os-release: cannot name the deb-src suite for sqlite3"
else
	if ! have_src_lists; then
		if [ "$(id -u)" != 0 ]; then
			echo "deps: not root; for make sqlite-tests run as root:" >&2
			echo "scripts/deps.sh   (adds $debsrc, apt-get update, apt-get source sqlite3=$sqv)"
			exit 1
		fi
		if [ ! -e "$debsrc" ]; then
			read -r uri key <<<"$(binary_entry)" || true
			uri=${uri:-http://deb.debian.org/debian}
			[ -n "${key:-}" ] && [ "$key" != - ] || key=/usr/share/keyrings/debian-archive-keyring.gpg
			log "writing $debsrc (deb-src $uri $codename main)"
			printf '%s\n' "# mobio (scripts/deps.sh): SQLite's source and TCL tests for make sqlite-tests" \
				"Types: deb-src" "URIs: $uri" "Suites: $codename" "Components: main" \
				"Signed-By: $key" >"$debsrc"
		fi
		log "apt-get update (deb-src $codename main)"
		apt-get update -qq
	fi
	log "apt-get source sqlite3=$sqv into ${sqdest#"$top"/}"
	rm -rf "$sqdest.tmp"
	mkdir -p "$sqdest.tmp"
	# _apt (apt's download sandbox) must be able to write here, or apt warns.
	if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$sqdest.tmp"; fi
	(cd "$sqdest.tmp" && apt-get source -qq "sqlite3=$sqv" >/dev/null)
	compgen -G "$sqdest.tmp/sqlite3-*/test/tester.tcl" >/dev/null ||
		{ log "apt-get source sqlite3=$sqv gave no sqlite3-*/test/tester.tcl"; exit 1; }
	rm -f "$sqdest.tmp"/*.tar.*	# extracted; the .dsc stays as the record
	touch "$sqdest.tmp/.complete"
	rm -rf "$sqdest"
	mv "$sqdest.tmp" "$sqdest"
fi
