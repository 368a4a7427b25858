#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A ppcache database survives the power key held while its app keeps
# committing (as apps on a phone do until the power goes): 3 times, a writer
# runs, the power key is held 6 s with the writer still running through the
# hold and through qnvram's flush of the pool to flash at 5 s; then QEMU is
# ended without a sync and a new one started. The flush unmaps the regions
# before it copies and freezes the pool after it (freeze_ms), so the writer
# stops at its next access of its region: the image is one state, and the
# file is never newer than it. The next boot restores the pool, and the
# checker verifies integrity, every logged transaction (none may be lost:
# the app logs an id only after its commit reached the region) and nothing
# past the one in flight. LazyFlush thresholds rotate 5, 0, -1.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 256M
# vm-kmod: ext4
# vm-bin: /sbin/mkfs.ext4
# vm-timeout: 420
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/ppcache-crash-lib.sh

CYCLES=3

pc_setup || finish
done_n=$(state_get pc_cycles)
done_n=${done_n:-0}
if [ "$MOBIO_BOOT" -gt 1 ]; then
	check_eq "cold_boot_${MOBIO_BOOT}_restores_pool_from_flash" 2 "$(qnvram_stat boot_source)"
	pc_check "race_power_cycle_keeps_every_logged_txn_boot_$MOBIO_BOOT" || finish
	pc_count pc_committed_at_key "$(($(pc_field committed) - $(state_get pc_logged_at_key)))" >/dev/null
fi
if [ "$done_n" -lt $CYCLES ]; then
	pc_writer_start "$(pc_threshold "$done_n")"
	usleep "$(pc_rand 200000 1000000)"
	pc_writer_alive "writer_runs_$MOBIO_BOOT" || finish
	# the writer may not have logged a commit yet (an empty log: tail succeeds
	# and prints nothing): none logged is 0
	last=$(tail -n 1 $PC_LOG 2>/dev/null)
	state_set pc_logged_at_key "${last:-0}"
	state_set pc_cycles $((done_n + 1))
	before=$(qnvram_stat power_key_flushes)
	frozen=$(qnvram_stat frozen_faults)
	request_power_key 6000
	i=0
	while [ "$(qnvram_stat power_key_flushes)" = "$before" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check_eq "power_key_flush_$MOBIO_BOOT" $((before + 1)) "$(qnvram_stat power_key_flushes)"
	# the writer ran through the hold, and is now stopped at its region
	pc_writer_alive "writer_alive_after_flush_$MOBIO_BOOT" || finish
	sleep 0.5
	a=$(tail -n 1 $PC_LOG)
	sleep 1
	check_eq "writer_frozen_after_flush_$MOBIO_BOOT" "$a" "$(tail -n 1 $PC_LOG)"
	check_ge "writer_waits_in_a_frozen_fault_$MOBIO_BOOT" $((frozen + 1)) "$(qnvram_stat frozen_faults)"
	log "race boot $MOBIO_BOOT: log at $(state_get pc_logged_at_key) at key down, $a after the flush;" \
		"frozen_faults $frozen -> $(qnvram_stat frozen_faults)"
	pc_cold_cycle
fi
note "ppcache-crash-race ($PC_VFS): $done_n power-key flushes with the writer running," \
	"$(pc_field committed) transactions committed in all," \
	"$(pc_count pc_committed_at_key 0) of them between key down and the flush"
check_eq power_key_race_${CYCLES}_times_keeps_every_logged_txn $CYCLES "$done_n"
finish
