#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A ppcache database survives warm reboots at random points: 6 times
# (mobio.ppcache_reboots=N; `make soak-ppcache` runs 30), a
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

# 6: the 3 fresh-database rounds, and every LazyFlush threshold
# (pc_threshold) twice
REBOOTS=$(mobio_param ppcache_reboots 6)
FRESH=3

# fresh_start N: a writer on a database file that does not exist yet; its
# log is the harness's, made durable first
fresh_start() {
	: >$PC_MNT/fresh-$1.log
	sync
	ppcache-crash write $PC_MNT/fresh-$1.db $PC_MNT/fresh-$1.log --threshold -1 \
		>/tmp/pc-fresh.out 2>&1 &
}

# fresh_check N: the database made before the reset of round N
fresh_check() {
	local db=$PC_MNT/fresh-$1.db
	if [ ! -e "$db" ]; then
		fail "fresh_database_exists_after_reset_$1" \
			"expected $db ($(wc -l <$PC_MNT/fresh-$1.log) logged txns); saw: $(ls $PC_MNT | tr '\n' ' ')"
		return
	fi
	pass "fresh_database_exists_after_reset_$1"
	if ppcache-crash check "$db" $PC_MNT/fresh-$1.log >/tmp/pc-fresh.chk 2>&1; then
		pass "fresh_database_keeps_every_logged_txn_$1"
		log "fresh check: $(cat /tmp/pc-fresh.chk)"
	else
		fail "fresh_database_keeps_every_logged_txn_$1" "$(tail -n 3 /tmp/pc-fresh.chk | tr '\n' ' ')"
	fi
}

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
	if [ "$done_n" -le $FRESH ]; then
		fresh_check "$done_n"
	fi
fi
if [ "$done_n" -lt $REBOOTS ]; then
	pc_writer_start "$(pc_threshold "$done_n")"
	if [ "$done_n" -lt $FRESH ]; then
		fresh_start $((done_n + 1))
	fi
	usleep "$(pc_rand 300000 1500000)"
	if [ "$done_n" -lt $FRESH ]; then
		# the reset comes after its first acknowledged commit
		i=0
		while [ ! -s $PC_MNT/fresh-$((done_n + 1)).log ] && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		check_ge "fresh_writer_commits_before_reset_$((done_n + 1))" 1 \
			"$(wc -l <$PC_MNT/fresh-$((done_n + 1)).log)"
	fi
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
