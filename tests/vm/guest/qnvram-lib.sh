# SPDX-License-Identifier: GPL-2.0
# Helpers for the qnvram guest tests; source after lib.sh.
# The tests reserve 32 MiB at 768 MiB into RAM with "# vm-memmap: 32M$0x30000000"
# (RAM starts at MOBIO_RAM_BASE: 0 on amd64, 1 GiB on arm64).

QNVRAM_PHYS=$(printf '0x%x' $((MOBIO_RAM_BASE + 0x30000000)))
QNVRAM_SIZE=0x2000000

# qnvram_load [param=value...]: insmod with the reserved pool and, when the
# test declared a flash disk, the backing device.
qnvram_load() {
	local backing=
	[ -n "$DISK_flash" ] && backing="backing=$DISK_flash"
	insmod /mobio/qnvram.ko phys=$QNVRAM_PHYS size=$QNVRAM_SIZE $backing "$@"
}

# qnvram_stat NAME: one counter from debugfs
qnvram_stat() {
	sed -n "s/^$1 //p" /sys/kernel/debug/qnvram/stats
}

# as_uid UID CMD...: run CMD as another user (qnvtest drops privileges)
as_uid() {
	local uid=$1
	shift
	qnvtest setuid "$uid" "$@"
}

# wait_stat NAME VALUE [SECONDS]: until the qnvram counter NAME is VALUE (at
# most SECONDS, default 10)
wait_stat() {
	local i=0
	while [ "$(qnvram_stat "$1")" != "$2" ] && [ $i -lt $((${3:-10} * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# qnvram_rewrite MAGIC SEED SIZE: an app (qnvtest hold, uid 0) maps the
# existing region MAGIC of SIZE bytes, fills it with SEED's pattern (a store
# after whatever flush came last), and exits; 1 if it never got ready
qnvram_rewrite() {
	local p i=0
	# the job truncates the file only once it runs: no stale "ready"
	rm -f /tmp/rw.out
	qnvtest hold 0 "$1" "$3" "$2" >/tmp/rw.out 2>&1 &
	p=$!
	while ! grep -q ready /tmp/rw.out 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill $p
	wait $p 2>/dev/null
	grep -q ready /tmp/rw.out || {
		log "rewrite $1 $2: $(cat /tmp/rw.out 2>&1)"
		return 1
	}
}

# qnvram_relay FILE: qnvstress's "PASS name" / "FAIL name: why" / "info ..."
# lines as this test's results
qnvram_relay() {
	local res name why
	while read -r res name why; do
		case "$res" in
		PASS) pass "$name" ;;
		FAIL) fail "${name%:}" "$why" ;;
		info) log "$name $why" ;;
		esac
	done <"$1"
}
