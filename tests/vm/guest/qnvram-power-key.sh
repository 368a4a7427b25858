#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Holding the power key flushes the pool to the backing disk; after a cold
# power cycle (new QEMU: RAM gone) the pool is restored from it. A short press
# does not flush. A clean power-off flushes too (reboot notifier).
# vm-memmap: 32M$0x30000000
# vm-disk: flash 80M
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

case $MOBIO_BOOT in
1)
	# uid 1000's 8 MiB is past the default quota (12% of the data area)
	check_ok load qnvram_load uid_quota_pct=0
	check_dmesg fresh_pool_is_formatted "formatted pool"
	check_ok alloc_a as_uid 1000 qnvtest alloc 1000 1 8388608 201
	check_ok alloc_b qnvtest alloc 0 2 4096 202
	request_power_key 1000
	sleep 1
	check_eq short_press_does_not_flush 0 "$(qnvram_stat flushes)"
	request_power_key 6000
	i=0
	while [ "$(qnvram_stat power_key_flushes)" != 1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check_eq power_key_held_flushes_once 1 "$(qnvram_stat power_key_flushes)"
	check_dmesg power_key_flush_logged "power key held 5000 ms: flush done"
	log "flush: $(qnvram_stat last_flush_bytes) bytes in $(qnvram_stat last_flush_ns) ns = $(qnvram_stat last_flush_kbps) KB/s"
	state_set flush_kbps "$(qnvram_stat last_flush_kbps)"
	request_cold_cycle
	;;
2)
	check_ok load_after_cold_cycle qnvram_load uid_quota_pct=0
	check_dmesg cold_boot_restores_from_flash "restored pool from image"
	check_eq cold_boot_source_restored 2 "$(qnvram_stat boot_source)"
	check_ok cold_cycle_keeps_a as_uid 1000 qnvtest verify 1000 1 201
	check_ok cold_cycle_keeps_b qnvtest verify 0 2 202
	# A region written after the restore, saved by a clean power-off.
	check_ok alloc_c qnvtest alloc 0 3 65536 203
	request_poweroff_cycle
	;;
3)
	check_ok load_after_poweroff qnvram_load uid_quota_pct=0
	check_dmesg poweroff_flush_restored "restored pool from image"
	check_ok poweroff_keeps_c qnvtest verify 0 3 203
	check_ok poweroff_keeps_a as_uid 1000 qnvtest verify 1000 1 201
	finish
	;;
esac
