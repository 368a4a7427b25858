# SPDX-License-Identifier: GPL-2.0-only
# Helpers for the ppcache crash tests (ppcache-crash-*.sh); source after lib.sh
# and qnvram-lib.sh. The tests declare:
#   # vm-memmap: 32M$0x30000000     the qNVRAM pool
#   # vm-disk: flash 128M           its backing device (power-key images)
#   # vm-disk: data 256M            ext4 with the database and the writer's log
#   # vm-kmod: ext4
#   # vm-bin: /sbin/mkfs.ext4
#
# The writer and checker are tests/vm/guest/ppcache-crash.c. PC_VFS=wal runs
# everything on stock SQLite (WAL, synchronous=FULL) to test the harness.

PC_MNT=/mnt/pc
PC_DB=$PC_MNT/app.db
PC_LOG=$PC_MNT/committed.log
PC_VFS=${PC_VFS:-ppcache}
PC_OUT=/tmp/pc-check.out

# pc_setup: qnvram (adopting or restoring the pool), ext4 (made on boot 1), mount
pc_setup() {
	qnvram_load || { fail qnvram_load "expected qnvram.ko to load: $(dmesg | grep qnvram | tail -n 2 | tr '\n' ' ')"; return 1; }
	kmod_load ext4 || { fail kmod_ext4 "expected ext4 to load"; return 1; }
	if [ "$MOBIO_BOOT" = 1 ]; then
		mkfs.ext4 -q -F "$DISK_data" >/tmp/mkfs.out 2>&1 ||
			{ fail mkfs_data "expected mkfs.ext4 $DISK_data to work: $(cat /tmp/mkfs.out)"; return 1; }
	fi
	mkdir -p $PC_MNT
	mount -t ext4 "$DISK_data" $PC_MNT ||
		{ fail mount_data "expected $DISK_data to mount (boot $MOBIO_BOOT)"; return 1; }
}

# pc_rand MIN MAX: a random integer in [MIN, MAX]
pc_rand() {
	local r
	r=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
	echo $(($1 + r % ($2 - $1 + 1)))
}

# pc_writer_start THRESHOLD: the writer in the background, pid in PC_WRITER
pc_writer_start() {
	ppcache-crash write $PC_DB $PC_LOG --vfs "$PC_VFS" --threshold "$1" \
		>/tmp/pc-writer.out 2>&1 &
	PC_WRITER=$!
}

# pc_writer_alive NAME: fail NAME if the writer stopped by itself
pc_writer_alive() {
	kill -0 "$PC_WRITER" 2>/dev/null && return 0
	wait "$PC_WRITER"
	fail "$1" "expected the writer to run until killed, saw it exit ($?): $(tail -n 3 /tmp/pc-writer.out | tr '\n' ' ')"
	return 1
}

# pc_threshold N: LazyFlush threshold for round N: 5 (the paper's), 0, -1
pc_threshold() {
	case $(($1 % 3)) in
	0) echo 5 ;;
	1) echo 0 ;;
	2) echo -1 ;;
	esac
}

# pc_check NAME [--after-flush N]: run the checker; on failure report NAME
# with its message and return 1; the "ok ..." line is in $PC_OUT
pc_check() {
	local name=$1
	shift
	if ppcache-crash check $PC_DB $PC_LOG --vfs "$PC_VFS" "$@" >$PC_OUT 2>&1; then
		log "check: $(cat $PC_OUT)"
		return 0
	fi
	fail "$name" "$(tail -n 3 $PC_OUT | tr '\n' ' ')"
	return 1
}

# pc_field NAME: a field of the last check's "ok ..." line (committed,
# logged, inflight, lost), or 0
pc_field() {
	local v
	v=$(sed -n "/^ok /s/.*[ ;]$1[ =]\([0-9-]*\).*/\1/p" $PC_OUT | head -n 1)
	echo "${v:-0}"
}

# pc_recovered: committed pages the last check's open replayed into the
# database file (ppcache's "recovered N committed pages" log line), or 0
pc_recovered() {
	local v
	v=$(sed -n 's/.*recovered \([0-9]*\) committed pages.*/\1/p' $PC_OUT | head -n 1)
	echo "${v:-0}"
}

# pc_count KEY [ADD]: add ADD (default 1) to the counter KEY on the state
# disk (survives every reboot); prints the new value
pc_count() {
	local v
	v=$(state_get "$1")
	v=$((${v:-0} + ${2:-1}))
	state_set "$1" "$v"
	echo "$v"
}

# Crashes without the lib's `sync` first: a real crash does not sync, and a
# sync would write back what the app left in the page cache. The host still
# has to be told (boot timing, cold cycle), so the request line goes first.
pc_warm_reboot() {
	_mobio_say "REQ warm_reboot"
	echo b >/proc/sysrq-trigger
	sleep 600
}

pc_cold_cycle() {
	_mobio_say "REQ cold_cycle"
	sleep 600
}
