#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A ppcache database survives its app being SIGKILLed at random points: 50
# times in one boot (mobio.ppcache_kills=N; `make soak-ppcache` runs 300), a writer (ppcache-crash write) runs transactions and is
# killed after a random 20-800 ms (during its open and recovery, inside a
# transaction, during a LazyFlush...); after each kill the checker opens the
# database and verifies integrity, every logged transaction, and nothing past
# the one in flight. LazyFlush thresholds rotate 5, 0, -1.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 256M
# vm-kmod: ext4
# vm-bin: /sbin/mkfs.ext4
# vm-timeout: 420
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/ppcache-crash-lib.sh

KILLS=$(mobio_param ppcache_kills 50)

pc_setup || finish
n=0
present=0
absent=0
recoveries=0
pages=0
while [ $n -lt $KILLS ]; do
	pc_writer_start "$(pc_threshold $n)"
	usleep "$(pc_rand 20000 800000)"
	pc_writer_alive writer_runs_until_killed || break
	kill -9 "$PC_WRITER"
	wait "$PC_WRITER" 2>/dev/null
	pc_check "sigkill_keeps_every_logged_txn_round_$n" || break
	if [ "$(pc_field inflight)" = 1 ]; then
		present=$((present + 1))
	else
		absent=$((absent + 1))
	fi
	if [ "$(pc_recovered)" -gt 0 ]; then
		recoveries=$((recoveries + 1))
		pages=$((pages + $(pc_recovered)))
	fi
	n=$((n + 1))
done
note "ppcache-crash-kill ($PC_VFS): $n SIGKILLs, $(pc_field committed) transactions" \
	"committed in all; the one in flight present after $present kills, absent after $absent;" \
	"$recoveries opens recovered committed pages ($pages in all)"
check_eq sigkill_${KILLS}_times_keeps_every_logged_txn $KILLS $n
finish
