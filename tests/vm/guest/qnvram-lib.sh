# SPDX-License-Identifier: GPL-2.0
# Helpers for the qnvram guest tests; source after lib.sh.
# The tests reserve 32 MiB at 768 MiB with "# vm-memmap: 32M$0x30000000".

QNVRAM_PHYS=0x30000000
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
