#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# freeblock.ko on a virtio disk: background scrubs through /dev/freeblock
# deliver every block exactly once with the right data (idle, with a tiny
# ring and a slow reader, under a back-to-back foreground reader with a rate
# floor, with promotion), foreground requests are not delayed by idle-time
# work, abort and promote semantics, a killed owner aborts its task, rmmod
# is refused while a task's file is open and clean after, malformed
# requests are rejected with the right errno, counters (mobioctl fb stats)
# match what was done, fb-scrub works, the kernel API (debugfs selftest)
# writes and reads with late buffer binding, fuzzing the ioctls splats
# nothing (the genl family's fuzz, with tasks running: freeblock-fuzz), and
# a disk removed mid-task ends its tasks with ENODEV.
# vm-disk: data 32M
# vm-timeout: 420
# vm-alone: foreground delay 1%, floor rate and wait times in ms
. /mobio/tests/lib.sh
. /mobio/tests/freeblock-lib.sh

dev=${DISK_data#/dev/}
SEED=0x5eedf00d
SIZE=$((32 * 1024 * 1024))
P=/sys/module/freeblock/parameters

# once NAME NBLOCKS OUTPUT: every block delivered once, data right
once() {
	check_eq "${1}_every_block_once" "nblocks=$2 got=$2 dup=0" \
		"$(echo "$3" | grep -o 'nblocks=[0-9]* got=[0-9]* dup=[0-9]*')"
	check_eq "${1}_data_matches_pattern" 0 "$(kv bad "$3")"
	check_eq "${1}_no_block_outside_range" 0 "$(kv outside "$3")"
	check_eq "${1}_no_read_error" 0 "$(kv failed "$3")"
}

check_ok fill_pattern fbtest fill "$DISK_data" $SEED
check_ok insmod_freeblock insmod $FB_KO
check_ok dev_node_is_char test -c /dev/freeblock
check_eq dev_node_mode_0666 crw-rw-rw- "$(ls -l /dev/freeblock | cut -c1-10)"

# --- parameters -------------------------------------------------------------
check_eq param_depth_default 2 "$(cat $P/depth)"
for v in 0 65 -1 abc; do
	echo "$v" >$P/depth 2>/dev/null
	check_eq "param_depth_rejects_$v" 2 "$(cat $P/depth)"
done
echo 1000 >$P/idle_min_us
check_eq param_idle_min_us_set 1000 "$(cat $P/idle_min_us)"
echo 2000 >$P/idle_min_us

# --- counters before any task -------------------------------------------------
out=$(mobioctl fb stats "$dev" 2>&1)
check_eq stats_unknown_disk_exit 1 $?
check_eq stats_unknown_disk_says_why 1 "$(echo "$out" | grep -c 'no task or setting on a disk of that name')"

# --- idle: the whole disk -----------------------------------------------------
out=$(fbtest scrub "$DISK_data" --bs 65536 --slots 16 --seed $SEED)
check_eq idle_scrub_exit 0 $?
log "idle scrub: $out"
once idle_scrub 512 "$out"
check_eq idle_scrub_result_0 0 "$(kv result "$out")"
check_eq stats_tasks 1 "$(fb_stat tasks)"
check_eq stats_blocks_done 512 "$(fb_stat blocks_done)"
check_eq stats_bytes_done $SIZE "$(fb_stat bytes_done)"
check_eq stats_tasks_active_0 0 "$(fb_stat tasks_active)"
check_eq stats_bg_inflight_0 0 "$(fb_stat bg_inflight)"
check_eq stats_idle_issues_all 512 "$(fb_stat bg_issued_idle)"
check_ge stats_idle_time_ns 1 "$(fb_stat idle_time_ns)"
check_ge stats_service_ns 1 "$(fb_stat service_ns)"
out=$(mobioctl --json fb stats "/dev/$dev")
check_eq stats_json_names_dev 1 "$(echo "$out" | grep -c "\"dev\": *\"$dev\"")"
check_eq stats_json_blocks_done 1 "$(echo "$out" | grep -c '"blocks_done": *512')"

# --- a 2-slot ring and a slow reader: the task stalls, nothing is lost ----
out=$(fbtest scrub "$DISK_data" --bs 4096 --slots 2 --start 4194304 \
	--len 1048576 --seed $SEED --consume-delay-us 3000)
check_eq small_ring_exit 0 $?
once small_ring 256 "$out"

# --- partial range at the end of the disk is cut there ------------------------
out=$(fbtest scrub "$DISK_data" --bs 65536 --start $((SIZE - 131072)) \
	--len 1048576 --seed $SEED)
once range_cut_at_end 2 "$out"

# --- foreground load, no floor: idle-time work does not delay it -------------
# A 20 ms idle window here, not the 2 ms the fast virtio disk gives: under
# TCG the reader is descheduled for a few ms often enough that, once in a
# while (CI, 6.12: all 64 blocks), a 2 ms window finds idle gaps all along.
# What is checked is that idle-only work waits for the load, not how TCG
# schedules; the adaptive window itself is issue 14's.
echo 20000 >$P/idle_min_us
r0=$(fb_stat fg_requests)
d0=$(fb_stat fg_delayed)
fbtest load "$DISK_data" 6 >/tmp/load.out &
lp=$!
sleep 1
# the load ends ~5 s after the scrub starts: got_at counts blocks before
out=$(fbtest scrub "$DISK_data" --bs 65536 --len 4194304 --seed $SEED \
	--report-at-ms 4000)
check_eq busy_idle_only_exit 0 $?
wait $lp
log "idle-only under load: $out; $(cat /tmp/load.out)"
once busy_idle_only 64 "$out"
fr=$(($(fb_stat fg_requests) - r0))
fd=$(($(fb_stat fg_delayed) - d0))
log "foreground requests $fr, delayed by background $fd"
check_ge fg_requests_seen 1000 "$fr"
# A request arriving while an idle-time block is in flight waits for it;
# at most 1% of them.
check_le fg_delayed_at_most_1pct $((fr / 100)) "$fd"
# Alone the 64 blocks take ~20 ms; beside a back-to-back reader they wait
# for its end. A gap of the reader longer than the window lets blocks in:
# with 2 ms, 0-64 of them did (mostly 0-20); with 20 ms, none in 4 runs.
check_ge busy_idle_only_waited_for_load_end 3900 "$(kv elapsed_ms "$out")"
check_le busy_idle_only_most_wait_for_load_end 48 "$(kv got_at "$out")"
echo 2000 >$P/idle_min_us

# --- foreground load with a floor: progress anyway -----------------------
f0=$(fb_stat bg_issued_floor)
fbtest load "$DISK_data" 30 >/tmp/load.out &
lp=$!
sleep 1
out=$(fbtest scrub "$DISK_data" --bs 65536 --len 4194304 --floor 2048 --seed $SEED)
check_eq busy_floor_exit 0 $?
log "floor 2 MiB/s under load: $out; $(($(fb_stat bg_issued_floor) - f0)) blocks issued by the floor"
once busy_floor 64 "$out"
check_ge floor_issued_blocks 1 $(($(fb_stat bg_issued_floor) - f0))
# 4 MiB at 2 MiB/s: 2 s (plus slack), where idle time alone waited ~5 s
check_le floor_rate_kept_under_load 4000 "$(kv elapsed_ms "$out")"
check_ge floor_finished_under_load 1 "$(kill -0 $lp 2>/dev/null && echo 1 || echo 0)"

# --- promote under the same load --------------------------------------------
p0=$(fb_stat promotions)
i0=$(fb_stat bg_issued_promoted)
out=$(fbtest scrub "$DISK_data" --bs 65536 --len 4194304 --seed $SEED \
	--promote-after-ms 300)
check_eq promote_exit 0 $?
log "promoted under load: $out"
once promote 64 "$out"
check_eq promote_counted $((p0 + 1)) "$(fb_stat promotions)"
check_ge promoted_blocks_issued $((i0 + 1)) "$(fb_stat bg_issued_promoted)"
check_eq promote_twice_ealready 0 "$(echo "$out" | grep -c promote_twice_errno)"
check_ge promote_finished_under_load 1 "$(kill -0 $lp 2>/dev/null && echo 1 || echo 0)"
kill $lp 2>/dev/null
wait $lp 2>/dev/null

# --- abort --------------------------------------------------------------------
a0=$(fb_stat aborts)
out=$(fbtest scrub "$DISK_data" --bs 4096 --ceil 256 --abort-after 8 --seed $SEED)
check_eq abort_exit 0 $?
log "aborted: $out"
check_eq abort_result_ecanceled -125 "$(kv result "$out")"
check_eq abort_no_duplicate 0 "$(kv dup "$out")"
check_eq abort_data_right 0 "$(kv bad "$out")"
got=$(kv got "$out")
check_le abort_stopped_early 8000 "$got"
check_ge abort_delivered_some 8 "$got"
check_eq abort_counted $((a0 + 1)) "$(fb_stat aborts)"
check_eq abort_nothing_in_flight 0 "$(fb_stat bg_inflight)"

# --- a killed owner: its task is aborted --------------------------------------
a0=$(fb_stat aborts)
fbtest hold "$DISK_data" >/tmp/hold.out &
hp=$!
sleep 1
check_eq hold_registered 1 "$(grep -c registered /tmp/hold.out)"
check_eq hold_task_active 1 "$(fb_stat tasks_active)"
kill -9 $hp
wait $hp 2>/dev/null
sleep 1
check_eq killed_owner_task_gone 0 "$(fb_stat tasks_active)"
check_eq killed_owner_task_aborted $((a0 + 1)) "$(fb_stat aborts)"
# the next task gets a new id, not the ended one's (an abort or promote by
# the old id must not reach it)
id1=$(sed -n 's/^registered id=\([0-9]*\).*/\1/p' /tmp/hold.out)
fbtest hold "$DISK_data" >/tmp/hold.out &
hp=$!
sleep 1
id2=$(sed -n 's/^registered id=\([0-9]*\).*/\1/p' /tmp/hold.out)
check_eq next_task_new_id 1 "$([ -n "$id1" ] && [ -n "$id2" ] && [ "$id2" -gt "$id1" ] && echo 1 || echo "0 ($id1 then $id2)")"
kill -9 $hp
wait $hp 2>/dev/null
sleep 1
check_eq second_killed_owner_task_gone 0 "$(fb_stat tasks_active)"

# --- malformed requests ---------------------------------------------------------
echo hello >/tmp/regfile
fbtest bad "$DISK_data" /tmp/regfile >/tmp/bad.out
check_eq bad_inputs_exit 0 $?
while read -r st name rest; do
	case "$st" in
	ok) pass "rejects_$name" ;;
	bad) fail "rejects_$name" "$rest" ;;
	esac
done </tmp/bad.out
check_ge bad_inputs_cases 30 "$(wc -l </tmp/bad.out)"

# --- the device's permissions decide ------------------------------------------
chmod 0600 "$DISK_data"
check_eq nobody_cannot_open_disk EACCES "$(fbtest open-as 65534 "$DISK_data")"
chmod 0660 "$DISK_data"

# --- fb-scrub -------------------------------------------------------------------
check_ok fb_scrub_help freeblock-scrub --help
freeblock-scrub --bs 3000 "$DISK_data" 2>/dev/null
check_eq fb_scrub_bad_bs_exit_2 2 $?
out=$(freeblock-scrub --bs 1M "$DISK_data" 2>/tmp/scrub.err)
check_eq fb_scrub_exit_0 0 $?
check_eq fb_scrub_no_unreadable "" "$out"
check_eq fb_scrub_summary 1 "$(grep -c '32 blocks of 1048576 bytes read.* 0 failed, 0 unreadable' /tmp/scrub.err)"

# interrupted and resumed: SIGINT aborts and names the --start to resume at
freeblock-scrub --bs 64K --ceiling 512 --quiet "$DISK_data" 2>/tmp/scrub.err &
sp=$!
sleep 2
kill -INT $sp
wait $sp
check_eq fb_scrub_interrupted_exit_1 1 $?
resume=$(sed -n 's/.*resume with --start \([0-9]*\).*/\1/p' /tmp/scrub.err)
check_ge fb_scrub_resume_point_after_progress 65536 "$resume"
check_le fb_scrub_resume_point_before_end $((SIZE - 65536)) "$resume"
freeblock-scrub --bs 64K --start "$resume" "$DISK_data" 2>/tmp/scrub.err
check_eq fb_scrub_resumed_exit_0 0 $?
check_eq fb_scrub_resumed_rest 1 "$(grep -c "$(((SIZE - resume) / 65536)) blocks of 65536 bytes read" /tmp/scrub.err)"

# --- the kernel API: fb_write and fb_read with late buffer binding ----------
SEED2=0xc0ffee
check_ok kapi_write_registers sh -c "echo write $DISK_data 8388608 2097152 65536 $SEED2 0 >$ST"
out=$(st_wait)
log "kernel fb_write: $out"
check_eq kapi_write_done "state=ended op=write" "$(echo "$out" | grep -o 'state=[a-z]* op=[a-z]*')"
check_eq kapi_write_result_0 0 "$(kv result "$out")"
check_eq kapi_write_every_block 32 "$(kv blocks "$out")"
check_eq kapi_write_getbuffer_once_per_block 32 "$(kv getbuffer_calls "$out")"
check_eq kapi_write_buffers_returned 0 "$(kv outstanding "$out")"
# late binding: a buffer is asked for only when its block is issued, so
# never more are held than background bios may be in flight (depth)
check_le kapi_late_binding_at_most_depth "$(cat $P/depth)" "$(kv max_outstanding "$out")"
check_ge kapi_late_binding_used_buffers 1 "$(kv max_outstanding "$out")"
out=$(fbtest scrub "$DISK_data" --bs 4096 --start 8388608 --len 2097152 --seed $SEED2)
once kapi_write_data_on_disk 512 "$out"
check_ok kapi_read_registers sh -c "echo read $DISK_data 8388608 2097152 65536 $SEED2 0 >$ST"
out=$(st_wait)
check_eq kapi_read_result_0 0 "$(kv result "$out")"
check_eq kapi_read_every_block 32 "$(kv blocks "$out")"
check_eq kapi_read_data_right 0 "$(kv bad "$out")"
echo read $DISK_data 8388608 2097152 65536 0x1234 0 >$ST
out=$(st_wait)
check_eq kapi_read_wrong_seed_detected 32 "$(kv bad "$out")"
echo read $DISK_data 0 1048576 3000 0 0 >$ST 2>/dev/null
check_eq kapi_bad_blksize_einval 1 $?
echo frob $DISK_data 0 1048576 4096 0 0 >$ST 2>/dev/null
check_eq kapi_bad_op_einval 1 $?

# --- fuzz: /dev/freeblock (the genl family: freeblock-fuzz) -------------------
out=$(fbtest fuzz "$DISK_data" 10000 7 2>&1)
check_eq ioctl_fuzz_10000 0 $?
log "ioctl fuzz: $out"
sleep 1
check_eq after_fuzz_no_task_left 0 "$(fb_stat tasks_active)"
check_eq after_fuzz_nothing_in_flight 0 "$(fb_stat bg_inflight)"

# --- rmmod with a kernel client's task pending: aborted, device closed -----
echo read $DISK_data 0 $SIZE 4096 $SEED 64 >$ST
sleep 1
check_eq kapi_slow_task_running 1 "$(grep -c state=running $ST)"
check_ok rmmod_aborts_kernel_task rmmod freeblock
check_eq module_gone_with_kernel_task 0 "$([ -d /sys/module/freeblock ] && echo 1 || echo 0)"
# the exclusive open was released: another exclusive opener gets the disk
check_ok insmod_again insmod $FB_KO
check_ok disk_released_by_aborted_task sh -c "echo read $DISK_data 0 65536 65536 $SEED 0 >$ST"
st_wait >/dev/null

# --- rmmod ----------------------------------------------------------------------
fbtest hold "$DISK_data" >/tmp/hold.out &
hp=$!
sleep 1
rmmod freeblock 2>/dev/null
check_eq rmmod_refused_while_task_open 1 "$([ -d /sys/module/freeblock ] && echo 1 || echo 0)"
check_eq rmmod_refused_task_still_active 1 "$(fb_stat tasks_active)"
kill -9 $hp
wait $hp 2>/dev/null
check_ok rmmod_after_owner_gone rmmod freeblock
check_eq module_gone 0 "$([ -d /sys/module/freeblock ] && echo 1 || echo 0)"
check_ok reload insmod $FB_KO
out=$(fbtest scrub "$DISK_data" --bs 65536 --len 1048576 --seed $SEED)
once after_reload 16 "$out"

# --- hot-unplug of the disk mid-task (guest-side PCI removal) ---------------
fbtest scrub "$DISK_data" --bs 4096 --ceil 256 >/tmp/unplug.out &
sp=$!
echo read $DISK_data 0 $SIZE 4096 $SEED 256 >$ST
sleep 1
check_eq unplug_kernel_task_running 1 "$(grep -c state=running $ST)"
pci=$(readlink -f /sys/block/$dev/device/..)
check_ok unplug_pci_remove sh -c "echo 1 >$pci/remove"
wait $sp
out=$(cat /tmp/unplug.out)
log "unplugged mid-scrub: $out"
check_eq unplug_disk_gone 0 "$([ -e /sys/block/$dev ] && echo 1 || echo 0)"
check_eq unplug_scrub_ended_enodev -19 "$(kv result "$out")"
check_eq unplug_scrub_no_duplicate 0 "$(kv dup "$out")"
check_eq unplug_scrub_data_right 0 "$(kv bad "$out")"
out=$(st_wait)
log "kernel task at unplug: $out"
check_eq unplug_kernel_task_ended_enodev -19 "$(kv result "$out")"
check_eq unplug_no_task_left 0 "$(fb_stat tasks_active)"
check_eq unplug_nothing_in_flight 0 "$(fb_stat bg_inflight)"
check_ok rmmod_after_unplug rmmod freeblock
finish
