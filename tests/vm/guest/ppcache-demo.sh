#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make demo`, part 2: an app's SQLite database on ppcache (pPCache with
# LazyFlush(5), no journal, no fsync per commit) survives what a phone goes
# through. The app (ppcache-crash write) commits transactions and logs each
# id after COMMIT returns; after every blow the checker opens the database
# (ppcache recovers it) and verifies integrity, every logged transaction and
# nothing past the one in flight:
#   boot 1: 5 SIGKILLs at random points, then a warm reboot (sysrq b) mid-run;
#   boot 2: the pool is adopted from RAM; then the app is frozen, the power
#           key held 6 s (qNVRAM writes the pool to flash at 5 s) and the
#           power cut (a new QEMU: RAM gone);
#   boot 3: the pool is restored from flash and the database checked.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 256M
# vm-kmod: ext4
# vm-bin: /sbin/mkfs.ext4
# vm-timeout: 420
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/ppcache-crash-lib.sh

KILLS=5
THRESHOLD=5

# verdict WHAT NAME: narrate and record the last check's outcome
verdict() {
	if pc_check "$2"; then
		pass "$2"
		note "$1: database OK: $(pc_field committed) transactions, every one of the" \
			"$(pc_field logged) the app was told were committed is there" \
			"$( [ "$(pc_field inflight)" = 1 ] && echo "(+1 committed, not yet logged)" || echo "(nothing more)");" \
			"ppcache replayed $(pc_recovered) committed pages from qNVRAM"
	else
		note "$1: FAILED: $(tail -n 1 $PC_OUT)"
	fi
}

pc_setup || finish
case $MOBIO_BOOT in
1)
	note "boot 1: qNVRAM pool 32 MiB at 0x30000000, its flash $DISK_flash;" \
		"the database on ext4 ($DISK_data), opened file:app.db?vfs=ppcache&threshold=$THRESHOLD"
	n=0
	while [ $n -lt $KILLS ]; do
		pc_writer_start $THRESHOLD
		usleep "$(pc_rand 100000 800000)"
		pc_writer_alive "writer_runs_until_killed_$n" || finish
		kill -9 "$PC_WRITER"
		wait "$PC_WRITER" 2>/dev/null
		n=$((n + 1))
		verdict "kill -9 #$n mid-transaction" "sigkill_${n}_keeps_every_logged_txn"
	done
	pc_writer_start $THRESHOLD
	usleep "$(pc_rand 300000 1000000)"
	pc_writer_alive writer_runs_until_reboot || finish
	note "warm reboot (sysrq b, no sync) while the app commits"
	pc_warm_reboot
	;;
2)
	note "boot 2: pool adopted from RAM (boot source $(qnvram_stat boot_source): 1 = adopted)"
	verdict "after the warm reboot" warm_reboot_keeps_every_logged_txn
	pc_writer_start $THRESHOLD
	usleep "$(pc_rand 300000 1000000)"
	pc_writer_alive writer_runs_until_power_key || finish
	kill -STOP "$PC_WRITER"
	before=$(qnvram_stat power_key_flushes)
	note "the app is frozen mid-run; power key held 6 s (the pool goes to flash at 5 s)"
	request_power_key 6000
	i=0
	while [ "$(qnvram_stat power_key_flushes)" = "$before" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check_eq power_key_flushed_pool $((before + 1)) "$(qnvram_stat power_key_flushes)"
	note "$(dmesg | grep -o 'qnvram: power key held.*' | tail -n 1)"
	note "power cut: this QEMU ends without a sync; a new one boots with zeroed RAM"
	pc_cold_cycle
	;;
*)
	note "boot 3: pool restored from flash (boot source $(qnvram_stat boot_source): 2 = flash)"
	check_eq cold_boot_restores_pool_from_flash 2 "$(qnvram_stat boot_source)"
	verdict "after the power cut" power_cut_keeps_every_logged_txn
	finish
	;;
esac
