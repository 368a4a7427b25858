#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A ppcache database survives warm reboots at random points: 10 times, a
# writer runs transactions and after a random 0.2-1.5 s the machine resets
# (sysrq b, no sync: RAM and so the qNVRAM pool are kept, the page cache is
# not); the next boot adopts the pool, mounts ext4 and the checker verifies
# integrity, every logged transaction, and nothing past the one in flight.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 256M
# vm-kmod: ext4
# vm-bin: /sbin/mkfs.ext4
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/ppcache-crash-lib.sh

REBOOTS=10

pc_setup || finish
done_n=$(state_get pc_reboots)
done_n=${done_n:-0}
if [ "$MOBIO_BOOT" -gt 1 ]; then
	pc_check "warm_reboot_keeps_every_logged_txn_boot_$MOBIO_BOOT" || finish
	[ "$(pc_field inflight)" = 1 ] && pc_count pc_present >/dev/null
	if [ "$(pc_recovered)" -gt 0 ]; then
		pc_count pc_recoveries >/dev/null
		pc_count pc_pages "$(pc_recovered)" >/dev/null
	fi
fi
if [ "$done_n" -lt $REBOOTS ]; then
	pc_writer_start "$(pc_threshold "$done_n")"
	usleep "$(pc_rand 200000 1500000)"
	pc_writer_alive "writer_runs_until_reboot_$MOBIO_BOOT" || finish
	state_set pc_reboots $((done_n + 1))
	pc_warm_reboot
fi
note "ppcache-crash-reboot ($PC_VFS): $done_n warm reboots, $(pc_field committed)" \
	"transactions committed in all; the one in flight present after" \
	"$(pc_count pc_present 0) reboots; $(pc_count pc_recoveries 0) opens recovered" \
	"committed pages ($(pc_count pc_pages 0) in all)"
check_eq warm_reboot_${REBOOTS}_times_keeps_every_logged_txn $REBOOTS "$done_n"
finish
