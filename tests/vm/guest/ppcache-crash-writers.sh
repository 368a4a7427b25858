#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Two ppcache processes write one database at the same time, on qnvram.ko:
# each takes the next transaction id inside its write lock (ppcache-crash
# write --writers 2) and logs what it was told is committed. Each round both
# run for a random 1-3 s and are SIGKILLed one after the other (a random gap
# between the kills: the survivor goes on alone, grows the region and
# recovers the other's crash); the checker then verifies integrity, every id
# either process logged, and nothing past the two in flight. Thresholds
# rotate 5, 0, -1 (with -1 every commit stays in qNVRAM and the region grows
# under both). The last round ends cleanly: both close, and the clean last
# close leaves no region behind.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 256M
# vm-kmod: ext4
# vm-bin: /sbin/mkfs.ext4
# vm-timeout: 420
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/ppcache-crash-lib.sh

ROUNDS=6
LOG_A=$PC_MNT/a.log
LOG_B=$PC_MNT/b.log

# pw_start THRESHOLD [COUNT]: both writers in the background (PW_A, PW_B)
pw_start() {
	local count=${2:+--count $2}

	ppcache-crash write $PC_DB $LOG_A --threshold "$1" --writers 2 $count \
		>/tmp/pw-a.out 2>&1 &
	PW_A=$!
	ppcache-crash write $PC_DB $LOG_B --threshold "$1" --writers 2 $count \
		>/tmp/pw-b.out 2>&1 &
	PW_B=$!
}

# pw_check NAME: both logs merged, checked with two in flight
pw_check() {
	sort -nu $LOG_A $LOG_B >$PC_LOG
	pc_check "$1" --writers 2
}

pc_setup || finish
n=0
while [ $n -lt $ROUNDS ]; do
	a0=$(wc -l <$LOG_A 2>/dev/null || echo 0)
	b0=$(wc -l <$LOG_B 2>/dev/null || echo 0)
	pw_start "$(pc_threshold $n)"
	usleep "$(pc_rand 1000000 3000000)"
	if ! kill -0 $PW_A 2>/dev/null || ! kill -0 $PW_B 2>/dev/null; then
		fail "both_writers_run_until_killed_round_$n" \
			"$(tail -n 2 /tmp/pw-a.out /tmp/pw-b.out | tr '\n' ' ')"
		break
	fi
	kill -9 $PW_A
	usleep "$(pc_rand 0 800000)"
	kill -9 $PW_B
	wait $PW_A $PW_B 2>/dev/null
	pw_check "two_writers_killed_keep_every_logged_txn_round_$n" || break
	a=$(($(wc -l <$LOG_A) - a0))
	b=$(($(wc -l <$LOG_B) - b0))
	log "round $n (threshold $(pc_threshold $n)): a logged $a, b logged $b; $(cat $PC_OUT)"
	# both wrote, or the round did not test two writers
	check_ge "writer_a_committed_in_round_$n" 1 "$a"
	check_ge "writer_b_committed_in_round_$n" 1 "$b"
	n=$((n + 1))
done
check_eq two_writers_${ROUNDS}_kill_rounds_keep_every_logged_txn $ROUNDS $n

# a clean end: 40 transactions each, both close, nothing left in qNVRAM
pw_start -1 40
wait $PW_A
ra=$?
wait $PW_B
rb=$?
check_eq writer_a_ends_cleanly 0 $ra
check_eq writer_b_ends_cleanly 0 $rb
pw_check two_writers_closed_cleanly_keep_every_txn
check_eq two_writers_closed_cleanly_none_in_flight 0 "$(pc_field inflight)"
regions=$(mobioctl qnvram list 2>/dev/null | grep -c '^uid ')
check_eq no_region_left_after_clean_closes 0 "$regions"
note "ppcache-crash-writers: $ROUNDS rounds of two writers killed, then a clean" \
	"end; $(pc_field committed) transactions committed in all"
finish
