#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# fb-backup (tools/fb-backup.c over libfreeblock) on a pattern-written
# virtio disk: the image equals the disk (cmp, sha256sum) after a backup on
# an idle disk and one beside a back-to-back foreground reader; zero blocks
# stay holes; an interrupted backup prints a --start that completes it; a
# corrupted or short image is detected by the verification (exit 3, the
# differing block named); a full filesystem and bad arguments give clear
# errors.
# vm-disk: data 32M
# vm-bin: tools/fb-backup
# vm-timeout: 300
# vm-alone: the foreground may be delayed 1%, measured in time
. /mobio/tests/lib.sh
. /mobio/tests/freeblock-lib.sh

dev=${DISK_data#/dev/}
SEED=0x5eedf00d
SIZE=$((32 * 1024 * 1024))
IMG=/tmp/img

# check_grep NAME PATTERN FILE: pass if FILE has a line matching PATTERN
check_grep() {
	if grep -q -- "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "expected '$2' in $3, saw: $(tail -n 3 "$3" | tr '\n' ' ')"
	fi
}

# same NAME IMAGE: the image is byte for byte the disk
same() {
	check_ok "${1}_cmp_equal" cmp "$DISK_data" "$2"
	check_eq "${1}_image_size" $SIZE "$(wc -c <"$2")"
}

check_ok fill_pattern fbtest fill "$DISK_data" $SEED
# a zeroed MiB at 20 MiB: 16 blocks of 64 KiB a new image leaves as holes
check_ok zero_one_mib dd if=/dev/zero of="$DISK_data" bs=1M seek=20 count=1 conv=notrunc,fsync
check_ok insmod_freeblock insmod $FB_KO

# --- usage and bad arguments ---------------------------------------------
check_ok help_exit_0 fb-backup --help
check_eq help_names_exit_codes 1 "$(fb-backup --help | grep -c '3 FILE differs')"
fb-backup 2>/tmp/err
check_eq no_args_exit_2 2 $?
check_grep no_args_says_why 'expected DEV FILE' /tmp/err
fb-backup --bs 3000 "$DISK_data" $IMG 2>/tmp/err
check_eq bad_bs_exit_2 2 $?
check_grep bad_bs_says_why 'power of two' /tmp/err
fb-backup --bs 1X "$DISK_data" $IMG 2>/tmp/err
check_eq bad_number_exit_2 2 $?
check_grep bad_number_says_why "bad number '1X'" /tmp/err
fb-backup --start 4096 --bs 65536 "$DISK_data" $IMG 2>/tmp/err
check_eq start_not_multiple_exit_2 2 $?
fb-backup --verify-only --start 0 "$DISK_data" $IMG 2>/tmp/err
check_eq verify_only_with_start_exit_2 2 $?
fb-backup /dev/nonexistent $IMG 2>/tmp/err
check_eq missing_dev_exit_1 1 $?
check_grep missing_dev_says_why '/dev/nonexistent: No such file' /tmp/err
echo hello >/tmp/regfile
fb-backup /tmp/regfile $IMG 2>/tmp/err
check_eq regular_file_dev_exit_1 1 $?
check_grep regular_file_dev_says_why 'Block device required' /tmp/err
fb-backup "$DISK_data" "$DISK_data" 2>/tmp/err
check_eq same_device_exit_1 1 $?
check_grep same_device_says_why 'are the same device' /tmp/err
fb-backup --start 65536 "$DISK_data" /tmp/nonexistent.img 2>/tmp/err
check_eq resume_without_image_exit_1 1 $?
check_grep resume_without_image_says_why 'resumes into the image' /tmp/err
fb-backup --verify-only "$DISK_data" /tmp/nonexistent.img 2>/tmp/err
check_eq verify_without_image_exit_1 1 $?
check_eq bad_args_left_no_image 0 "$([ -e $IMG ] && echo 1 || echo 0)"

# --- idle: copy, verify, compare ------------------------------------------
d0=$(fb_stat blocks_done 2>/dev/null)
fb-backup "$DISK_data" $IMG >/tmp/out 2>/tmp/err
check_eq idle_exit_0 0 $?
log "idle backup: $(cat /tmp/out /tmp/err | tr '\n' ' ')"
same idle $IMG
check_eq idle_sha256_line "sha256 $(sha256sum $IMG | cut -d' ' -f1)  $IMG" "$(cat /tmp/out)"
check_eq idle_sha256_is_disks "$(sha256sum "$DISK_data" | cut -d' ' -f1)" "$(cut -d' ' -f2 /tmp/out)"
check_grep idle_zero_blocks_holes '16 zero blocks left as holes, 0 unreadable' /tmp/err
check_grep idle_verified 'matches' /tmp/err
# the copy and the verification: 512 blocks of 64 KiB each, through freeblock
check_eq idle_blocks_through_freeblock 1024 "$(($(fb_stat blocks_done) - ${d0:-0}))"
check_le idle_image_has_holes $((SIZE / 1024 - 1024)) "$(du -k $IMG | cut -f1)"

# --- a corrupted image is detected ----------------------------------------
# 8 bytes at 12345678, in the 64 KiB block at 12320768
printf 'CORRUPT!' | dd of=$IMG bs=1 seek=12345678 conv=notrunc 2>/dev/null
fb-backup --verify-only "$DISK_data" $IMG >/tmp/out 2>/tmp/err
check_eq corrupt_exit_3 3 $?
check_eq corrupt_block_named "differs 12320768 65536" "$(cat /tmp/out)"
check_grep corrupt_says_differs 'differs from .* in 1 blocks' /tmp/err
# the image verifies again once repaired from the disk
dd if="$DISK_data" of=$IMG bs=65536 skip=188 seek=188 count=1 conv=notrunc 2>/dev/null
fb-backup --verify-only -q "$DISK_data" $IMG >/tmp/out 2>/tmp/err
check_eq repaired_exit_0 0 $?
# a short image: the 16 blocks past its end differ, and the size is named
dd if=$IMG of=/tmp/short.img bs=1M count=31 2>/dev/null
fb-backup --verify-only -q "$DISK_data" /tmp/short.img >/tmp/out 2>/tmp/err
check_eq short_image_exit_3 3 $?
check_grep short_image_size_named 'is 32505856 bytes' /tmp/err
check_eq short_image_blocks_named 16 "$(grep -c '^differs' /tmp/out)"
check_eq short_image_first_named "differs 32505856 65536" "$(head -n 1 /tmp/out)"
rm -f /tmp/short.img $IMG

# --- beside a back-to-back foreground reader --------------------------------
r0=$(fb_stat fg_requests)
f0=$(fb_stat fg_delayed)
fbtest load "$DISK_data" 6 >/tmp/load.out &
lp=$!
sleep 1
t0=$(cut -d' ' -f1 /proc/uptime)
fb-backup "$DISK_data" $IMG >/tmp/out 2>/tmp/err
check_eq busy_exit_0 0 $?
t1=$(cut -d' ' -f1 /proc/uptime)
wait $lp
check_eq busy_load_ran 0 $?
log "backup beside a reader: $(cat /tmp/load.out), $t0 -> $t1 s: $(cat /tmp/err | tr '\n' ' ')"
same busy $IMG
check_eq busy_sha256_line "sha256 $(sha256sum $IMG | cut -d' ' -f1)  $IMG" "$(cat /tmp/out)"
fr=$(($(fb_stat fg_requests) - r0))
fd=$(($(fb_stat fg_delayed) - f0))
log "foreground requests $fr, delayed by background $fd"
check_ge busy_fg_requests_seen 1000 "$fr"
check_le busy_fg_delayed_at_most_1pct $((fr / 100)) "$fd"
# the reader ran ~5 s after the backup began: progress lines meanwhile
check_ge busy_progress_lines 2 "$(grep -c 'copy .*% (.* MiB), .* MiB/s' /tmp/err)"
rm -f $IMG

# --- interrupted, then resumed into the same image ---------------------------
fb-backup --ceiling 2048 --quiet "$DISK_data" $IMG >/tmp/out 2>/tmp/err &
bp=$!
sleep 3
kill -INT $bp
wait $bp
check_eq interrupted_exit_1 1 $?
log "interrupted: $(cat /tmp/err | tr '\n' ' ')"
check_grep interrupted_says_canceled 'copy stopped: Operation canceled' /tmp/err
resume=$(sed -n 's/.*resume with --start \([0-9]*\).*/\1/p' /tmp/err)
check_ge interrupted_resume_after_progress 65536 "$resume"
check_le interrupted_resume_before_end $((SIZE - 65536)) "$resume"
check_eq interrupted_no_sha256 "" "$(cat /tmp/out)"
fb-backup --start "$resume" "$DISK_data" $IMG >/tmp/out 2>/tmp/err
check_eq resumed_exit_0 0 $?
check_grep resumed_copied_the_rest "copy: $(((SIZE - resume) / 65536)) of $(((SIZE - resume) / 65536)) blocks" /tmp/err
same resumed $IMG
rm -f $IMG

# --- no space for the image: the write error is named -------------------------
mkdir -p /mnt/small
mount -t tmpfs -o size=4m tmpfs /mnt/small
fb-backup "$DISK_data" /mnt/small/img >/tmp/out 2>/tmp/err
check_eq no_space_exit_1 1 $?
check_grep no_space_says_why 'writing bytes .*: No space left on device' /tmp/err
umount /mnt/small
sleep 1
check_eq no_task_left 0 "$(fb_stat tasks_active)"
check_eq nothing_in_flight 0 "$(fb_stat bg_inflight)"
check_ok rmmod rmmod freeblock
finish
