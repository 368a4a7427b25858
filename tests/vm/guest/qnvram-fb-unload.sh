#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# rmmod qnvram while freeblock is calling it back (issue 12 item 7): freeblock
# runs qnvram's callbacks on its worker, and the last final callback of a
# write-back or background swap-out wakes whoever waits for the tasks (the
# commit, rmmod) and then still returns through qnvram's code. qnvram's
# test_fb_tail_ms knob makes every final callback sleep that long at its very
# end, as a preempted worker would stay there; qnvram's exit must wait until
# freeblock has returned from it, or the worker resumes in freed module text
# ("BUG: unable to handle page fault", which the runner catches); so an
# rmmod that aborts N tasks takes at least N x test_fb_tail_ms. Two rounds
# of: rmmod during a write-back waiting for idle time (aborted), rmmod during
# a background swap-out waiting for idle time (aborted), rmmod right after a
# write-back committed (its last callback still sleeping; in the second round
# with rmmod freeblock at the same time). After each, insmod again: every
# rmmod works, freeblock is released and has no task left, nothing failed,
# and the pool's regions are intact at the end.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-timeout: 300
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

MB=1048576
NREG=12
TAIL_MS=500
WB=/sys/kernel/debug/qnvram/writeback
QP=/sys/module/qnvram/parameters
FBP=/sys/module/freeblock/parameters
dev=${DISK_flash#/dev/}

fb_stat() {
	local v
	v=$(mobioctl fb stats "$dev" 2>/dev/null | sed -n "s/^$1 //p")
	echo "${v:-0}"
}

now_ms() {
	awk '{ printf "%d", $1 * 1000 }' /proc/uptime
}

# fb_busy: the disk is never idle for freeblock (a 10 s idle window; a
# back-to-back reader runs for the whole test)
fb_busy() {
	echo 10000000 >$FBP/idle_max_us
	echo 10000000 >$FBP/idle_min_us
}

load() {
	qnvram_load swap_free_low_pct=0 test_fb_tail_ms=$TAIL_MS "$@"
}

# unload NAME: rmmod qnvram; freeblock released, no task of it left. Then
# no insmod until a callback still sleeping would have woken up: a new
# qnvram.ko may be loaded where the old one was, and the worker would
# return into its (identical) code unnoticed.
unload() {
	local t0 t1
	t0=$(now_ms)
	check_ok "${1}_rmmod" rmmod qnvram
	t1=$(now_ms)
	echo $((t1 - t0)) >/tmp/unload.ms
	log "$1: rmmod qnvram took $((t1 - t0)) ms"
	sleep $((TAIL_MS / 1000 + 1))
	# freeblock may be unloading beside (round 2)
	[ "$(cat /sys/module/freeblock/initstate 2>/dev/null)" = live ] || return 0
	check_eq "${1}_freeblock_released" 0 "$(cat /sys/module/freeblock/refcnt)"
	check_eq "${1}_no_task_left" 0 "$(fb_stat tasks_active)"
}

check_ok insmod_freeblock insmod /mobio/freeblock.ko
fb_busy
check_ok load load reformat=1
for m in $(seq 1 $NREG); do
	qnvtest alloc 0 "$m" $((2 * MB)) $((100 + m)) >/dev/null ||
		fail "alloc_$m" "expected qnvtest alloc of region $m to work"
done
fbtest load "$DISK_flash" 200 >/tmp/load.out &
lp=$!
sleep 1

for r in 1 2; do
	# --- a write-back waiting for idle time, aborted by rmmod ----------
	a0=$(fb_stat aborts)
	check_ok "r${r}_wb_starts" sh -c "echo 1 >$WB"
	sleep 1
	check_eq "r${r}_wb_waits_for_idle_time" 1 "$(qnvram_stat wb_running)"
	unload "r${r}_wb_pending"
	n=$(($(fb_stat aborts) - a0))
	check_ge "r${r}_wb_tasks_aborted" 1 "$n"
	check_ge "r${r}_wb_rmmod_waited_for_every_callback" $((n * TAIL_MS)) "$(cat /tmp/unload.ms)"
	check_ok "r${r}_reload_after_wb" load

	# --- a background swap-out waiting for idle time, aborted by rmmod -
	a0=$(fb_stat aborts)
	echo 25 >$QP/swap_free_low_pct
	qnvtest alloc 0 99 $((2 * MB)) 199 >/dev/null ||
		fail "r${r}_alloc_99" "expected qnvtest alloc of region 99 to work"
	wait_stat bg_swap_running 1 30
	sleep 1
	check_eq "r${r}_bg_swap_waits_for_idle_time" "1 0" "$(qnvram_stat bg_swap_running) $(qnvram_stat bg_swap_outs)"
	unload "r${r}_bg_pending"
	n=$(($(fb_stat aborts) - a0))
	check_ge "r${r}_bg_tasks_aborted" 1 "$n"
	check_ge "r${r}_bg_rmmod_waited_for_every_callback" $((n * TAIL_MS)) "$(cat /tmp/unload.ms)"
	check_ok "r${r}_reload_after_bg" load
	check_ok "r${r}_free_99" qnvtest free 0 99

	# --- a write-back that committed; its last callback still sleeps ---
	if [ $r = 2 ]; then
		# The reader stops before freeblock unloads below: removing
		# its block_rq_issue probe patches blk_mq_start_request(), and
		# under TCG a CPU issuing requests meanwhile once hit the int3
		# of that patch after it was done ("Oops: int3", 6.12).
		kill $lp 2>/dev/null
		wait $lp
	fi
	echo 1000000 >$QP/writeback_floor_kbps
	i0=$(qnvram_stat wb_images)
	check_ok "r${r}_wb_floor_starts" sh -c "echo 1 >$WB"
	wait_stat wb_images $((i0 + 1)) 60
	if [ $r = 2 ]; then
		# freeblock is free to go once the write-back ended: its exit
		# and qnvram's both wait for the sleeping callback
		(
			i=0
			while [ -d /sys/module/freeblock ] && [ $i -lt 100 ]; do
				rmmod freeblock 2>/dev/null || sleep 0.1
				i=$((i + 1))
			done
		) &
		rp=$!
	fi
	check_eq "r${r}_wb_committed" $((i0 + 1)) "$(qnvram_stat wb_images)"
	unload "r${r}_wb_done"
	if [ $r = 2 ]; then
		wait $rp
		check_eq r2_freeblock_unloaded_beside 0 "$([ -d /sys/module/freeblock ] && echo 1 || echo 0)"
		check_ok insmod_freeblock_again insmod /mobio/freeblock.ko
		fb_busy
	fi
	check_ok "r${r}_reload_after_wb_done" load
done

check_eq no_block_failed 0 "$(fb_stat blocks_failed)"
check_eq no_wb_error 0 "$(qnvram_stat wb_errors)"
bad=0
for m in $(seq 1 $NREG); do
	qnvtest verify 0 "$m" $((100 + m)) >/dev/null 2>&1 || bad=$((bad + 1))
done
check_eq regions_intact 0 "$bad"
check_eq dmesg_clean 0 "$(dmesg | grep -cE 'BUG:|Oops|WARNING:|general protection|Call Trace')"
check_ok rmmod_qnvram rmmod qnvram
check_ok rmmod_freeblock rmmod freeblock
finish
