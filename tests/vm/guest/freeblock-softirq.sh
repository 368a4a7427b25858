#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# freeblock's kernel API from softirq context, as documented: a soft
# hrtimer (debugfs selftest "bh") calls fb_kick(), fb_set_rate() and
# fb_promote() on a running kernel task 5000 times, 200 us apart, and
# fb_abort() at the last, while the issuer takes the same locks in process
# context: every call runs in softirq and succeeds, the task ends with
# -ECANCELED having delivered only right data, nothing hangs or splats;
# then a speculative task the same way, and a write task.
# vm-disk: data 32M
# vm-timeout: 240
. /mobio/tests/lib.sh
. /mobio/tests/freeblock-lib.sh

dev=${DISK_data#/dev/}
SEED=0x5eedf00d
SIZE=$((32 * 1024 * 1024))

check_ok fill_pattern fbtest fill "$DISK_data" $SEED
check_ok insmod_freeblock insmod $FB_KO
echo bh 10 >$ST 2>/dev/null
check_eq bh_without_task_refused 1 $?
echo bh 0 >$ST 2>/dev/null
check_eq bh_zero_refused 1 $?

# bh_run NAME OP FLAGS: a task of OP at 8 MiB/s over the disk (4 s), the
# softirq calls on it (1 s), checked
bh_run() {
	local name=$1 a0 p0 out
	a0=$(fb_stat aborts)
	p0=$(fb_stat promotions)
	check_ok "${name}_registers" sh -c "echo $2 $DISK_data 0 $SIZE 4096 $SEED 8192 $3 >$ST"
	check_ok "${name}_bh_starts" sh -c "echo bh 5000 >$ST"
	echo bh 5 >$ST 2>/dev/null
	check_eq "${name}_second_bh_ebusy" 1 $?
	out=$(st_wait)
	log "$name: $out"
	check_eq "${name}_calls" 5000 "$(kv bh_calls "$out")"
	check_eq "${name}_calls_in_softirq" 5000 "$(kv bh_in_softirq "$out")"
	check_eq "${name}_no_api_error" 0 "$(kv bh_errors "$out")"
	check_eq "${name}_aborted_while_running" 0 "$(kv bh_abort "$out")"
	check_eq "${name}_result_ecanceled" -125 "$(kv result "$out")"
	check_eq "${name}_data_right" 0 "$(kv bad "$out")"
	check_eq "${name}_buffers_returned" 0 "$(kv outstanding "$out")"
	check_eq "${name}_promoted_once" $((p0 + 1)) "$(fb_stat promotions)"
	check_eq "${name}_abort_counted" $((a0 + 1)) "$(fb_stat aborts)"
	check_eq "${name}_nothing_in_flight" 0 "$(fb_stat bg_inflight)"
}
bh_run read read 0
bh_run spec read 1
bh_run write write 0
check_eq no_task_left 0 "$(fb_stat tasks_active)"
check_ok rmmod_freeblock rmmod freeblock
finish
