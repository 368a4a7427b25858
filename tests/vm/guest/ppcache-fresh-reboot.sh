#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A database created just before a reset is there after it: 3 times, a new
# database file is made by a ppcache writer that commits for 0.3-1.5 s (its
# pages stay in qNVRAM: threshold -1), then the machine resets without a
# sync (sysrq b: RAM and the pool kept, the page cache not). The next boot
# finds the file (its creation was made durable at the first commit) and
# every transaction the writer logged as committed.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 256M
# vm-kmod: ext4
# vm-bin: /sbin/mkfs.ext4
# vm-timeout: 420
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/ppcache-crash-lib.sh

ROUNDS=3

pc_setup || finish
n=$(state_get pf_rounds)
n=${n:-0}
if [ "$MOBIO_BOOT" -gt 1 ]; then
	db=$PC_MNT/fresh-$n.db
	if [ -e "$db" ]; then
		pass "fresh_database_exists_after_reset_$n"
		if ppcache-crash check "$db" $PC_MNT/fresh-$n.log >$PC_OUT 2>&1; then
			pass "fresh_database_keeps_every_logged_txn_$n"
			log "check: $(cat $PC_OUT)"
		else
			fail "fresh_database_keeps_every_logged_txn_$n" "$(tail -n 3 $PC_OUT | tr '\n' ' ')"
		fi
	else
		fail "fresh_database_exists_after_reset_$n" \
			"expected $db (logged $(wc -l <$PC_MNT/fresh-$n.log) txns) to exist; saw: $(ls $PC_MNT | tr '\n' ' ')"
	fi
fi
if [ "$n" -lt $ROUNDS ]; then
	n=$((n + 1))
	state_set pf_rounds $n
	# the log is the harness's: made durable first; the database is new
	: >$PC_MNT/fresh-$n.log
	sync
	ppcache-crash write $PC_MNT/fresh-$n.db $PC_MNT/fresh-$n.log --threshold -1 \
		>/tmp/pc-writer.out 2>&1 &
	PC_WRITER=$!
	usleep "$(pc_rand 300000 1500000)"
	pc_writer_alive "writer_runs_until_reset_$n" || finish
	check_ge "writer_logged_txns_$n" 1 "$(wc -l <$PC_MNT/fresh-$n.log)"
	pc_warm_reboot
fi
check_eq fresh_database_through_${ROUNDS}_resets $ROUNDS "$n"
finish
