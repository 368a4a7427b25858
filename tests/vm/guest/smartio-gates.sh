#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The gates that hold requests back do it without polling, and the idle I/O
# class (ionice -c3) has idle semantics:
#  - writes held by the write rate (40 KiB/s: a 4 KiB write per 100 ms) go
#    when the rate lets them, by the kick timer (a slow reader's own events
#    could not release them that often), never earlier, and the core does
#    not re-run the queue every 3 ms while they wait (dispatch_empty stays
#    at the rate of real events);
#  - idle-class reads beside a best-effort load flat out get one request per
#    idle_expire_ms (the starvation guard), and the disk once it is quiet;
#  - with a long idle_grace_ms, no idle-class read goes until the others
#    have been quiet that long.
# vm-kmod: null_blk
# vm-bin: /usr/bin/fio
# vm-timeout: 180
# vm-alone: write releases counted against the rate's time
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

smartio_nullb0 hw_queue_depth=32 completion_nsec=100000
io=/sys/block/nullb0/queue/iosched

# snap NAME COUNTER...: the counters now, as NAME_COUNTER variables
snap() {
	local pfx=$1 c
	shift
	for c in "$@"; do
		eval "${pfx}_$c=$(smartio_stat nullb0 $c)"
	done
}

# ms_now: milliseconds since boot (busybox date has no %N)
ms_now() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

# --- no polling: writes held by the rate, released by the timer -----------------
echo 0 >$io/controller
echo 1 >$io/write_cap
echo 4 >$io/write_budget_kb
echo 60000 >$io/write_expire_ms
echo 40 >$io/write_rate_kbps
# the reads stay active (2 a second, idle only after 1 s): every write waits
# for the rate
echo 1000000 >$io/read_idle_us
fio --filename=/dev/nullb0 --time_based --runtime=6 \
	--name=reader --direct=1 --ioengine=libaio --iodepth=1 --rw=randread \
	--bs=4k --size=128M --rate_iops=2 \
	--name=writer --direct=1 --ioengine=libaio --iodepth=4 --rw=randwrite \
	--bs=4k --offset=128M --size=64M >/tmp/hold.log 2>&1 &
fio_pid=$!
# the window starts once both jobs run (fio starts slowly on TCG)
sleep 2
counters="dispatched_be_write dispatched_be_read dispatch_empty queue_kicks"
snap a $counters
t0=$(ms_now)
sleep 3
snap b $counters
t1=$(ms_now)
wait $fio_pid
check_eq rate_fio_ok 0 $?
ms=$((t1 - t0))
writes=$((b_dispatched_be_write - a_dispatched_be_write))
empty=$((b_dispatch_empty - a_dispatch_empty))
kicks=$((b_queue_kicks - a_queue_kicks))
log "rate 40 KiB/s, $ms ms: $writes writes, $((b_dispatched_be_read - a_dispatched_be_read)) reads, $empty empty dispatches, $kicks timer kicks"
# one write per 100 ms: at least half of them (TCG), at most one per 100 ms + 2
check_ge rate_writes_released_by_timer $((ms / 200)) "$writes"
check_le rate_writes_not_before_time $((ms / 100 + 2)) "$writes"
check_ge rate_timer_kicks $((writes / 2)) "$kicks"
# polling would be one empty dispatch per 3 ms (> 300/s); real events here
# are a few per write and read
check_le rate_no_polling $((ms / 10)) "$empty"

# --- the idle class: the starvation guard ---------------------------------------
# a fresh instance: default tunables (idle_grace_ms 20, idle_expire_ms 500)
sched_set nullb0 none
sched_set nullb0 smartio
check_eq idle_default_grace 20 "$(cat $io/idle_grace_ms)"
check_eq idle_default_expire 500 "$(cat $io/idle_expire_ms)"

ionice -c 3 fio --filename=/dev/nullb0 --time_based --runtime=30 \
	--name=idle --direct=1 --ioengine=libaio --iodepth=8 --rw=randread \
	--bs=4k --size=128M >/tmp/idle.log 2>&1 &
idle_pid=$!

# busy_window NAME GAP: best-effort readers flat out for 5 s; the
# idle-class reads in 2 s of it, in the first 0.5 s after it, and in 1 s
# from GAP s later
busy_window() {
	counters="dispatched_idle_read dispatched_be_read idle_guard"
	fio --filename=/dev/nullb0 --time_based --runtime=5 \
		--name=busy --direct=1 --ioengine=libaio --iodepth=16 --numjobs=2 \
		--rw=randread --bs=4k --size=128M >/tmp/busy-$1.log 2>&1 &
	busy_pid=$!
	sleep 2
	snap a $counters
	sleep 2
	snap b $counters
	wait $busy_pid
	check_eq "${1}_busy_fio_ok" 0 $?
	snap c $counters
	sleep 0.5
	snap d $counters
	sleep "$2"
	snap q $counters
	sleep 1
	snap e $counters
	busy_idle=$((b_dispatched_idle_read - a_dispatched_idle_read))
	busy_be=$((b_dispatched_be_read - a_dispatched_be_read))
	busy_guard=$((b_idle_guard - a_idle_guard))
	after_idle=$((d_dispatched_idle_read - c_dispatched_idle_read))
	quiet_idle=$((e_dispatched_idle_read - q_dispatched_idle_read))
	log "$1: 2 s busy: $busy_be be reads, $busy_idle idle reads ($busy_guard by the guard); 0.5 s after: $after_idle idle reads; 1 s from $2 s later: $quiet_idle"
	check_ge "${1}_busy_load_ran" 1000 "$busy_be"
}

busy_window guard 0
# 2 s / 500 ms = 4 by the guard; TCG may delay one or add one at the edges
check_ge guard_serves_idle_class 2 "$busy_idle"
check_le guard_only_every_expire 8 "$busy_idle"
check_ge guard_counted 2 "$busy_guard"
check_ge idle_class_gets_quiet_disk 100 "$quiet_idle"

# --- the idle class: the grace period -------------------------------------------
echo 1000 >$io/idle_grace_ms
echo 60000 >$io/idle_expire_ms
busy_window grace 1
check_le grace_holds_idle_beside_busy 1 "$busy_idle"
check_le grace_holds_idle_after_busy 1 "$after_idle"
check_ge grace_then_idle_goes 100 "$quiet_idle"

kill $idle_pid 2>/dev/null
wait $idle_pid
finish
