#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Hot-unplug from the host: QMP device_del removes the virtio disk while a
# /dev/freeblock scrub, a kernel API task (debugfs selftest, fb_read) and
# an fb-backup run on it. Every task ends with ENODEV, no block is
# delivered twice or wrong, fb-backup exits 1 naming the resume point,
# nothing is left in flight, rmmod is clean and the kernel log has no
# splat (the bench checks).
# vm-disk: data 32M
# vm-bin: tools/fb-backup
# vm-timeout: 240
. /mobio/tests/lib.sh
. /mobio/tests/freeblock-lib.sh

dev=${DISK_data#/dev/}
SEED=0x5eedf00d
SIZE=$((32 * 1024 * 1024))


check_ok fill_pattern fbtest fill "$DISK_data" $SEED
check_ok insmod_freeblock insmod $FB_KO

# three slow tasks on the disk (256 KiB/s ceilings: 128 s each)
fbtest scrub "$DISK_data" --bs 4096 --ceil 256 --seed $SEED >/tmp/scrub.out &
sp=$!
fb-backup --ceiling 256 "$DISK_data" /tmp/img >/tmp/backup.out 2>/tmp/backup.err &
bp=$!
echo read $DISK_data 0 $SIZE 4096 $SEED 256 >$ST
sleep 2
check_eq kernel_task_running 1 "$(grep -c state=running $ST)"
check_eq three_tasks_active 3 "$(fb_stat tasks_active)"
before=$(fb_stat blocks_done)
check_ge tasks_made_progress 8 "$before"

check_ok host_device_del request_device_del data
check_eq disk_gone_from_sysfs 0 "$([ -e /sys/block/$dev ] && echo 1 || echo 0)"

wait $sp
out=$(cat /tmp/scrub.out)
log "scrub at unplug: $out"
check_eq scrub_ended_enodev -19 "$(kv result "$out")"
check_eq scrub_no_duplicate 0 "$(kv dup "$out")"
check_eq scrub_data_right 0 "$(kv bad "$out")"
check_eq scrub_no_block_outside 0 "$(kv outside "$out")"
check_ge scrub_got_blocks_before 1 "$(kv got "$out")"

wait $bp
check_eq backup_exit_1 1 $?
log "fb-backup at unplug: $(cat /tmp/backup.err | tr '\n' ' ')"
check_eq backup_says_enodev 1 "$(grep -c 'copy stopped: No such device' /tmp/backup.err)"
resume=$(sed -n 's/.*resume with --start \([0-9]*\).*/\1/p' /tmp/backup.err)
check_ge backup_names_resume_point 0 "$resume"
# the block that failed as the disk went is named and copied again on resume
bad=$(sed -n 's/.*bytes \([0-9]*\)-[0-9]* unreadable.*/\1/p' /tmp/backup.err | sort -n | head -n 1)
check_ge backup_names_failed_block 0 "$bad"
check_le backup_resume_redoes_failed_block "$bad" "$resume"
check_eq backup_no_sha256 "" "$(cat /tmp/backup.out)"

out=$(st_wait)
log "kernel task at unplug: $out"
check_eq kernel_task_ended_enodev -19 "$(kv result "$out")"
check_eq kernel_task_buffers_returned 0 "$(kv outstanding "$out")"

check_eq no_task_left 0 "$(fb_stat tasks_active)"
check_eq nothing_in_flight 0 "$(fb_stat bg_inflight)"
check_eq unplug_counted_as_aborts 3 "$(fb_stat aborts)"
# a new task on the dead disk is refused
fbtest scrub "$DISK_data" --bs 4096 >/tmp/scrub.out 2>&1
check_eq no_scrub_on_gone_disk 1 $?
check_ok rmmod_after_unplug rmmod freeblock
# the bench's own disk still works after the hot-unplug
check_ok state_disk_still_works state_set unplug_done 1
check_eq state_disk_reads_back 1 "$(state_get unplug_done)"
finish
