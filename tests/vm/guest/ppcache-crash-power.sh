#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A ppcache database survives the power key held and a cold power cycle: 3
# times, a writer runs transactions and is frozen (SIGSTOP) at a random point
# 0.2-1.5 s in, mid-transaction or mid-flush as it happens; the power key is
# held 6 s (qnvram flushes the pool to its flash disk at 5 s); QEMU is then
# ended without a sync (RAM and the page cache gone) and a new one started.
# The next boot restores the pool from flash, mounts ext4 and the checker
# verifies integrity, every logged transaction, and nothing past the one in
# flight.
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
	pc_check "power_cycle_keeps_every_logged_txn_boot_$MOBIO_BOOT" || finish
	[ "$(pc_field inflight)" = 1 ] && pc_count pc_present >/dev/null
	if [ "$(pc_recovered)" -gt 0 ]; then
		pc_count pc_recoveries >/dev/null
		pc_count pc_pages "$(pc_recovered)" >/dev/null
	fi
fi
if [ "$done_n" -lt $CYCLES ]; then
	pc_writer_start "$(pc_threshold "$done_n")"
	usleep "$(pc_rand 200000 1500000)"
	pc_writer_alive "writer_runs_until_frozen_$MOBIO_BOOT" || finish
	kill -STOP "$PC_WRITER"
	state_set pc_cycles $((done_n + 1))
	before=$(qnvram_stat power_key_flushes)
	request_power_key 6000
	i=0
	while [ "$(qnvram_stat power_key_flushes)" = "$before" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ "$(qnvram_stat power_key_flushes)" = $((before + 1)) ]; then
		pass "power_key_flush_$MOBIO_BOOT"
	else
		why="expected power_key_flushes $((before + 1)), saw $(qnvram_stat power_key_flushes)"
		why="$why (key presses seen: $(qnvram_stat power_key_presses); dmesg:"
		fail "power_key_flush_$MOBIO_BOOT" "$why $(dmesg | grep -E 'qnvram|input' | tail -n 4 | tr '\n' ' '))"
	fi
	pc_cold_cycle
fi
note "ppcache-crash-power ($PC_VFS): $done_n power-key flushes + cold cycles," \
	"$(pc_field committed) transactions committed in all; the one in flight present after" \
	"$(pc_count pc_present 0) cycles; $(pc_count pc_recoveries 0) opens recovered" \
	"committed pages ($(pc_count pc_pages 0) in all)"
check_eq power_key_cold_cycle_${CYCLES}_times_keeps_every_logged_txn $CYCLES "$done_n"
finish
