#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A flash image that the pool no longer matches is never restored as if it
# did (issue 11 item 7). Control: a checkpoint flush, reads only, a cold cut:
# the image is restored (boot 1 -> 2). A checkpoint (mobioctl qnvram flush),
# then an app rewrites a region, a cold cut: the next boot formats the pool,
# says the image was stale, and neither that image nor the older one in the
# other slot comes back (2 -> 3). The power key held, the power stays, the
# frozen app resumes after freeze_ms and writes: a warm reboot then adopts
# the pool from RAM as before, and the cold cut after it restores nothing
# (3 -> 4 -> 5). Creating and freeing regions (ioctl and netlink) retire the
# image too (5 -> 6). A background write-back after the change makes a new
# current image, which a warm reboot keeps current and a cold cut restores
# (6 -> 7 -> 8); a write-back whose snapshot the app changes before it
# commits is not committed (8 -> 9).
# vm-memmap: 32M$0x30000000
# vm-disk: flash 80M
# vm-timeout: 900
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

SZ=$((256 * 1024))
WB=/sys/kernel/debug/qnvram/writeback
FREEZE=/sys/module/qnvram/parameters/freeze_ms

# rewrite MAGIC SEED: qnvram_rewrite with this test's size of MAGIC
rewrite() {
	qnvram_rewrite "$1" "$2" $SZ
}

# stale_boot NAME: this cold boot found only a stale image and formatted
stale_boot() {
	check_ok "$1_loads" qnvram_load
	check_eq "$1_formats_instead_of_restoring" 0 "$(qnvram_stat boot_source)"
	check_dmesg "$1_says_image_was_stale" "stale (superseded after flush $(state_get seq))"
	check_eq "$1_counted" 1 "$(qnvram_stat restore_stale)"
	check_eq "$1_no_current_image" 0 "$(qnvram_stat img_current)"
}

case $MOBIO_BOOT in
1)
	check_ok load qnvram_load
	check_eq fresh_pool_has_no_current_image 0 "$(qnvram_stat img_current)"
	check_ok alloc_1 qnvtest alloc 0 1 $SZ 101
	check_ok alloc_2 qnvtest alloc 0 2 $SZ 102
	check_ok checkpoint_flush mobioctl qnvram flush
	# Nothing changed in between: both image slots hold this state.
	check_ok second_flush_without_change mobioctl qnvram flush
	check_eq flushed_image_is_current 1 "$(qnvram_stat img_current)"
	check_eq flush_without_change_retires_nothing 0 "$(qnvram_stat img_retired)"
	check_ok read_after_flush qnvtest verify 0 1 101
	check_eq reading_leaves_image_current 1 "$(qnvram_stat img_current)"
	request_cold_cycle
	;;
2)
	check_ok load_after_unchanged_cold_cut qnvram_load
	check_eq unchanged_image_is_restored 2 "$(qnvram_stat boot_source)"
	check_ok unchanged_image_restores_region_1 qnvtest verify 0 1 101
	check_ok unchanged_image_restores_region_2 qnvtest verify 0 2 102
	check_eq restored_image_is_current 1 "$(qnvram_stat img_current)"
	check_eq no_stale_image_at_this_boot 0 "$(qnvram_stat restore_stale)"

	# --- a checkpoint, then the app writes, then a cold cut ---------------
	check_ok checkpoint_flush mobioctl qnvram flush
	rewrite 1 201 || fail rewrite_1 "expected the app to fill region 1"
	check_eq store_after_checkpoint_retires_image 0 "$(qnvram_stat img_current)"
	check_eq one_image_retired 1 "$(qnvram_stat img_retired)"
	check_eq marker_written_without_error 0 "$(qnvram_stat img_retire_errors)"
	check_ok pool_holds_the_new_bytes qnvtest verify 0 1 201
	state_set seq "$(qnvram_stat img_seq)"
	request_cold_cycle
	;;
3)
	stale_boot stale_checkpoint
	check_ok changed_region_not_restored_old qnvtest expect-errno ENOENT verify 0 1 101
	check_ok other_region_not_restored_either qnvtest expect-errno ENOENT verify 0 2 102
	check_eq pool_is_empty 0 "$(qnvram_stat regions_resident)"

	# --- the power key held, the power stays, the app goes on -------------
	echo 8000 >$FREEZE
	check_ok alloc_3 qnvtest alloc 0 3 $SZ 103
	request_power_key 6000
	wait_stat power_key_flushes 1 90
	check_eq power_key_flushed 1 "$(qnvram_stat power_key_flushes)"
	# The app stores into its region during the freeze: it waits, and the
	# image stays current until the freeze is over.
	rm -f /tmp/hold.out
	qnvtest hold 0 3 $SZ 203 >/tmp/hold.out 2>&1 &
	hp=$!
	sleep 1
	check_ge app_waits_in_the_freeze 1 "$(qnvram_stat frozen_faults)"
	check_eq image_current_while_frozen 1 "$(qnvram_stat img_current)"
	i=0
	while ! grep -q ready /tmp/hold.out 2>/dev/null && [ $i -lt 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check_eq app_resumes_after_the_freeze ready "$(cat /tmp/hold.out)"
	check_eq store_after_freeze_retires_image 0 "$(qnvram_stat img_current)"
	check_eq power_key_image_retired 1 "$(qnvram_stat img_retired)"
	kill $hp
	wait $hp 2>/dev/null
	state_set seq "$(qnvram_stat img_seq)"
	request_warm_reboot
	;;
4)
	check_ok load_after_warm_reboot qnvram_load
	check_eq warm_reboot_adopts_the_pool 1 "$(qnvram_stat boot_source)"
	check_ok warm_reboot_keeps_the_newest_bytes qnvtest verify 0 3 203
	check_eq adopted_pool_has_no_current_image 0 "$(qnvram_stat img_current)"
	request_cold_cycle
	;;
5)
	stale_boot stale_after_power_key
	check_ok power_key_region_not_restored_old qnvtest expect-errno ENOENT verify 0 3 103

	# --- creating and freeing regions are changes too ---------------------
	check_ok alloc_4 qnvtest alloc 0 4 $SZ 104
	check_ok flush_with_4 mobioctl qnvram flush
	check_eq image_with_4_current 1 "$(qnvram_stat img_current)"
	check_ok alloc_5 qnvtest alloc 0 5 $SZ 105
	check_eq create_retires_image 0 "$(qnvram_stat img_current)"
	check_eq create_counted 1 "$(qnvram_stat img_retired)"
	check_ok flush_with_4_and_5 mobioctl qnvram flush
	check_ok ioctl_free_4 qnvtest free 0 4
	check_eq ioctl_free_retires_image 0 "$(qnvram_stat img_current)"
	check_eq ioctl_free_counted 2 "$(qnvram_stat img_retired)"
	check_ok flush_with_5 mobioctl qnvram flush
	check_ok netlink_free_5 mobioctl qnvram free 0 5
	check_eq netlink_free_retires_image 0 "$(qnvram_stat img_current)"
	check_eq netlink_free_counted 3 "$(qnvram_stat img_retired)"
	state_set seq "$(qnvram_stat img_seq)"
	request_cold_cycle
	;;
6)
	stale_boot stale_after_free
	check_ok freed_region_4_not_resurrected qnvtest expect-errno ENOENT verify 0 4 104
	check_ok freed_region_5_not_resurrected qnvtest expect-errno ENOENT verify 0 5 105

	# --- a background write-back after the change is current again --------
	check_ok alloc_6 qnvtest alloc 0 6 $SZ 106
	check_ok flush_with_6 mobioctl qnvram flush
	rewrite 6 206 || fail rewrite_6 "expected the app to fill region 6"
	check_eq rewrite_retires_image 0 "$(qnvram_stat img_current)"
	check_ok insmod_freeblock insmod /mobio/freeblock.ko
	check_ok writeback_starts sh -c "echo 1 >$WB"
	wait_stat wb_images 1 120
	check_eq writeback_committed 1 "$(qnvram_stat wb_images)"
	check_eq writeback_image_is_current 1 "$(qnvram_stat img_current)"
	request_warm_reboot
	;;
7)
	check_ok load_after_warm_reboot_with_current_image qnvram_load
	check_eq warm_reboot_adopts_the_pool_again 1 "$(qnvram_stat boot_source)"
	check_eq adopted_pool_keeps_its_current_image 1 "$(qnvram_stat img_current)"
	check_eq adoption_retires_nothing 0 "$(qnvram_stat img_retired)"
	request_cold_cycle
	;;
8)
	check_ok load_after_writeback_image qnvram_load
	check_eq writeback_image_is_restored 2 "$(qnvram_stat boot_source)"
	check_ok writeback_image_has_the_newest_bytes qnvtest verify 0 6 206

	# --- a write-back whose snapshot changes before its commit -------------
	# A 1 s idle window: beside a back-to-back reader nothing of the
	# write-back is issued before the reader stops, so the app's store
	# surely lands between its snapshot and its commit.
	check_ok insmod_freeblock insmod /mobio/freeblock.ko idle_min_us=1000000 idle_max_us=1000000
	fbtest load "$DISK_flash" 40 >/tmp/load.out &
	lp=$!
	sleep 1
	check_ok writeback_starts sh -c "echo 1 >$WB"
	sleep 2
	check_eq writeback_waits_for_idle_time 1 "$(qnvram_stat wb_running)"
	rewrite 6 306 || fail rewrite_6 "expected the app to fill region 6"
	check_eq store_lands_before_the_commit 1 "$(qnvram_stat wb_running)"
	kill $lp 2>/dev/null
	wait $lp
	wait_stat wb_running 0 60
	check_eq changed_writeback_not_committed 0 "$(qnvram_stat wb_images)"
	check_eq changed_writeback_counted 1 "$(qnvram_stat wb_stale)"
	check_eq changed_writeback_no_error 0 "$(qnvram_stat wb_errors)"
	check_eq changed_writeback_result "seq 1 done 1 result -116" "$(cat $WB)"
	check_eq no_current_image_after_it 0 "$(qnvram_stat img_current)"
	state_set seq "$(qnvram_stat img_seq)"
	request_cold_cycle
	;;
9)
	stale_boot stale_after_writeback
	check_ok region_6_not_restored_old qnvtest expect-errno ENOENT verify 0 6 206
	finish
	;;
esac
