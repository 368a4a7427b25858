#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# qnvram's background write-back through freeblock (qnvram_wb.c). Without
# freeblock a write-back is a direct flush, and qnvram.ko does not depend on
# freeblock.ko. With it, a write-back under a bursty foreground reader on the
# same disk is issued in idle time only, delays (almost) no foreground
# request, and its image restores after a cold power cycle (boot 1 -> 2).
# The power key during a write-back under a never-idle foreground promotes
# its tasks and the flush finishes it, writing itself only what the
# write-back had not written or apps touched since its snapshot: the image
# after the cold cycle holds every region's newest bytes (boot 2 -> 3).
# Boot 3 measures the fraction of dirty regions that periodic write-backs
# cleaned, with an app dirtying two regions a second, through a power-key
# flush, and a final direct flush for what it dirtied last.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 80M
# vm-timeout: 600
# vm-alone: the foreground may be delayed 1%, measured in time
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

NREG=16
KB=1024
dev=${DISK_flash#/dev/}
WB=/sys/kernel/debug/qnvram/writeback

# size_of MAGIC: 256 KiB to 1 MiB, by magic
size_of() {
	echo $(((($1 % 4) + 1) * 256 * KB))
}

fb_stat() {
	local v
	v=$(mobioctl fb stats "$dev" 2>/dev/null | sed -n "s/^$1 //p")
	echo "${v:-0}"
}


# rewrite MAGIC SEED: qnvram_rewrite with this test's size of MAGIC
rewrite() {
	qnvram_rewrite "$1" "$2" "$(size_of "$1")"
}

# app_loop: dirty two regions a round, one round a second, until /tmp/stop
app_loop() {
	local r=1
	while [ ! -e /tmp/stop ]; do
		rewrite $(((r * 5) % NREG + 1)) $((600 + r)) || fail "rewrite_round_$r" "expected the app to fill a region"
		rewrite $(((r * 7 + 3) % NREG + 1)) $((700 + r)) || fail "rewrite_round_$r" "expected the app to fill a region"
		sleep 1
		r=$((r + 1))
	done
	echo "$r" >/tmp/app.rounds
}

# verify_all SEEDBASE NAME: every region holds SEEDBASE+magic's pattern,
# except those named in $SEEDS_OVERRIDE ("magic:seed ...")
verify_all() {
	local m s bad=0 o
	for m in $(seq 1 $NREG); do
		s=$(($1 + m))
		for o in $SEEDS_OVERRIDE; do
			[ "${o%%:*}" = "$m" ] && s=${o#*:}
		done
		qnvtest verify 0 "$m" "$s" >/dev/null 2>&1 || {
			bad=$((bad + 1))
			log "region $m: not seed $s: $(qnvtest verify 0 "$m" "$s" 2>&1)"
		}
	done
	check_eq "$2" 0 "$bad"
}

# fg_bursts SECONDS: a foreground reader on the disk, 1 s back-to-back
# 4 KiB O_DIRECT reads then 0.5 s thinking, until SECONDS have passed
fg_bursts() {
	local end=$(($(cut -d. -f1 /proc/uptime) + $1))
	: >/tmp/fg.out
	while [ "$(cut -d. -f1 /proc/uptime)" -lt $end ]; do
		fbtest load "$DISK_flash" 1 >>/tmp/fg.out
		sleep 0.5
	done
}

case $MOBIO_BOOT in
1)
	# --- soft dependency, and qnvram alone ---------------------------------
	check_eq no_module_dependency "depends=" \
		"$(strings /mobio/qnvram.ko | grep '^depends=')"
	check_ok load_without_freeblock qnvram_load
	check_eq freeblock_not_loaded 0 "$([ -d /sys/module/freeblock ] && echo 1 || echo 0)"
	for m in $(seq 1 $NREG); do
		qnvtest alloc 0 "$m" "$(size_of "$m")" $((100 + m)) >/dev/null ||
			fail "alloc_$m" "expected qnvtest alloc to work"
	done
	check_eq all_regions_resident $NREG "$(qnvram_stat regions_resident)"
	check_eq default_period_off 0 "$(cat /sys/module/qnvram/parameters/writeback_s)"
	check_ok writeback_without_freeblock sh -c "echo 1 >$WB"
	check_eq without_freeblock_counted 1 "$(qnvram_stat wb_no_freeblock)"
	check_eq without_freeblock_no_background 0 "$(qnvram_stat wb_started)"
	check_eq without_freeblock_flushes_directly 1 "$(qnvram_stat flushes)"
	check_eq without_freeblock_direct_regions $NREG "$(qnvram_stat direct_regions)"
	check_ok genl_flush_without_freeblock mobioctl qnvram flush
	check_eq genl_flush_direct 2 "$(qnvram_stat flushes)"
	check_eq genl_flush_direct_regions $((2 * NREG)) "$(qnvram_stat direct_regions)"
	echo 100000 >/sys/module/qnvram/parameters/writeback_s 2>/dev/null
	check_eq period_over_a_day_refused 0 "$(cat /sys/module/qnvram/parameters/writeback_s)"

	# --- a background write-back beside a bursty reader --------------------
	for m in $(seq 1 $NREG); do
		rewrite "$m" $((200 + m)) || fail "rewrite_$m" "expected the app to fill region $m"
	done
	# Twelve scattered 4 KiB regions too: more extents than tasks allow,
	# so the write-back merges them across the holes.
	for m in $(seq 1001 1024); do
		qnvtest alloc 0 "$m" 4096 "$m" >/dev/null || fail "alloc_$m" "expected qnvtest alloc to work"
		[ $((m % 2)) = 0 ] && qnvtest free 0 "$m" >/dev/null
	done
	check_eq scattered_regions_resident $((NREG + 12)) "$(qnvram_stat regions_resident)"
	check_ok insmod_freeblock insmod /mobio/freeblock.ko
	check_eq freeblock_unused_when_idle 0 "$(cat /sys/module/freeblock/refcnt)"
	fg_bursts 14 &
	fgp=$!
	sleep 1
	d0=$(qnvram_stat direct_regions)
	t0=$(cut -d' ' -f1 /proc/uptime)
	check_ok writeback_starts sh -c "echo 1 >$WB"
	wait_stat wb_images 1 120
	t1=$(cut -d' ' -f1 /proc/uptime)
	wait $fgp
	check_eq background_image_committed 1 "$(qnvram_stat wb_images)"
	check_eq background_wrote_every_region $((NREG + 12)) "$(qnvram_stat wb_regions)"
	check_eq background_cleaned_every_dirty_region $((NREG + 12)) "$(qnvram_stat wb_dirty_regions)"
	check_eq background_wrote_nothing_directly "$d0" "$(qnvram_stat direct_regions)"
	check_eq background_no_error 0 "$(qnvram_stat wb_errors)"
	check_eq writeback_result_0 "seq 1 done 1 result 0" "$(cat $WB)"
	check_eq freeblock_released_after 0 "$(cat /sys/module/freeblock/refcnt)"
	idle=$(fb_stat bg_issued_idle)
	floor=$(fb_stat bg_issued_floor)
	prom=$(fb_stat bg_issued_promoted)
	fr=$(fb_stat fg_requests)
	fd=$(fb_stat fg_delayed)
	log "background write-back: $(qnvram_stat wb_bytes) bytes in $(echo "$t0 $t1" | awk '{printf "%.1f", $2 - $1}') s beside $(awk -F= '{n += $2} END {print n}' /tmp/fg.out) foreground reads; blocks idle $idle floor $floor promoted $prom; foreground requests $fr, delayed $fd"
	check_ge blocks_issued_in_idle_time 1 "$idle"
	check_eq no_block_by_floor_or_promotion "0 0" "$floor $prom"
	check_ge foreground_requests_seen 1000 "$fr"
	check_le foreground_delayed_at_most_1pct $((fr / 100)) "$fd"
	state_set a_fg_requests "$fr"
	state_set a_fg_delayed "$fd"
	request_cold_cycle
	;;
2)
	check_ok load_after_cold_cycle qnvram_load
	check_eq restored_from_background_image 2 "$(qnvram_stat boot_source)"
	verify_all 200 background_image_restores_every_region
	bad=0
	for m in $(seq 1001 2 1023); do
		qnvtest verify 0 "$m" "$m" >/dev/null 2>&1 || bad=$((bad + 1))
	done
	check_eq background_image_restores_scattered_regions 0 "$bad"
	check_ok freed_region_not_restored qnvtest expect-errno ENOENT verify 0 1002 1002
	for m in $(seq 1001 2 1023); do
		qnvtest free 0 "$m" >/dev/null || fail "free_$m" "expected qnvtest free to work"
	done

	# --- power key during a write-back under a never-idle reader ----------
	for m in $(seq 1 8); do
		rewrite "$m" $((300 + m)) || fail "rewrite_$m" "expected the app to fill region $m"
	done
	# A 20 ms idle window: with the default (4 x the fast virtio disk's
	# service time, 2 ms) TCG's scheduling gaps in the back-to-back reader
	# look idle, and the write-back ended within 2 s in 2 of about 6 runs.
	check_ok insmod_freeblock insmod /mobio/freeblock.ko idle_min_us=20000
	fbtest load "$DISK_flash" 40 >/tmp/load.out &
	lp=$!
	sleep 1
	check_ok writeback_starts sh -c "echo 1 >$WB"
	sleep 2
	check_eq writeback_waits_for_idle_time 1 "$(qnvram_stat wb_running)"
	check_ge freeblock_held_while_running 1 "$(cat /sys/module/freeblock/refcnt)"
	rmmod freeblock 2>/dev/null
	check_eq freeblock_cannot_unload_while_running 1 "$([ -d /sys/module/freeblock ] && echo 1 || echo 0)"
	check_ok second_writeback_is_ebusy sh -c "! echo 1 >$WB 2>/dev/null"
	# Touched after the snapshot: the flush must write these itself.
	rewrite 1 401 || fail rewrite_1 "expected the app to fill region 1"
	rewrite 2 402 || fail rewrite_2 "expected the app to fill region 2"
	request_power_key 6000
	wait_stat power_key_flushes 1 90
	check_eq power_key_flushed 1 "$(qnvram_stat power_key_flushes)"
	check_eq power_key_took_over 1 "$(qnvram_stat wb_takeovers)"
	check_ge power_key_promoted_tasks 1 "$(qnvram_stat wb_promotions)"
	check_ge freeblock_counted_promotions 1 "$(fb_stat promotions)"
	check_ge promoted_blocks_issued 1 "$(fb_stat bg_issued_promoted)"
	check_eq no_background_image 0 "$(qnvram_stat wb_images)"
	check_eq writeback_not_running_after 0 "$(qnvram_stat wb_running)"
	# Regions 1 and 2 were touched: written by the flush, whatever the
	# write-back had done.
	check_ge touched_regions_written_directly 2 "$(qnvram_stat direct_regions)"
	check_eq takeover_regions_add_up $NREG \
		$(($(qnvram_stat wb_regions) + $(qnvram_stat direct_regions)))
	log "power key took over: $(qnvram_stat wb_regions) regions written by the write-back (promoted), $(qnvram_stat direct_regions) by the flush; $(qnvram_stat wb_promotions) tasks promoted"
	kill $lp 2>/dev/null
	wait $lp
	request_cold_cycle
	;;
3)
	check_ok load_after_second_cold_cycle qnvram_load
	check_eq restored_from_takeover_image 2 "$(qnvram_stat boot_source)"
	SEEDS_OVERRIDE="1:401 2:402 3:303 4:304 5:305 6:306 7:307 8:308"
	verify_all 200 takeover_image_has_newest_bytes
	SEEDS_OVERRIDE=

	# --- periodic write-back, an app dirtying regions, bursty reader -------
	# The app goes on through the power key: no freeze, so that what it
	# dirties during the hold and after the flush counts too.
	check_ok insmod_freeblock insmod /mobio/freeblock.ko
	echo 0 >/sys/module/qnvram/parameters/freeze_ms
	fg_bursts 45 &
	fgp=$!
	echo 1 >/sys/module/qnvram/parameters/writeback_s
	rm -f /tmp/stop
	app_loop &
	ap=$!
	sleep 30
	request_power_key 6000
	wait_stat power_key_flushes 1 90
	: >/tmp/stop
	wait $ap
	echo 0 >/sys/module/qnvram/parameters/writeback_s
	wait $fgp
	# The last write-back (if one runs) ends in an image; what the app
	# dirtied after it is left for a direct flush, as a power-off would.
	wait_stat wb_running 0 60
	check_ok final_flush mobioctl qnvram flush
	wbd=$(qnvram_stat wb_dirty_regions)
	ddy=$(qnvram_stat direct_dirty_regions)
	fr=$(fb_stat fg_requests)
	fd=$(fb_stat fg_delayed)
	log "periodic write-back, $(cat /tmp/app.rounds) app rounds: $(qnvram_stat wb_images) background images, $(qnvram_stat wb_takeovers) taken over, $(qnvram_stat wb_stale) not committed (the app wrote after the snapshot); dirty regions cleaned in the background $wbd, by the power-key and final flushes $ddy; foreground requests $fr, delayed $fd; blocks idle $(fb_stat bg_issued_idle) promoted $(fb_stat bg_issued_promoted)"
	check_eq power_key_flushed_at_the_end 1 "$(qnvram_stat power_key_flushes)"
	check_ge periodic_images_committed 3 "$(qnvram_stat wb_images)"
	check_eq periodic_no_error 0 "$(qnvram_stat wb_errors)"
	check_ge dirty_regions_seen 20 $((wbd + ddy))
	pct=$((wbd * 100 / (wbd + ddy + (wbd + ddy == 0))))
	note "dirty regions cleaned by background write-back: $wbd of $((wbd + ddy)) = $pct% (target 95%); foreground requests delayed: $fd of $fr"
	check_ge dirty_regions_cleaned_in_background_pct 85 "$pct"
	check_le periodic_foreground_delayed_at_most_1pct $((fr / 100)) "$fd"
	finish
	;;
esac
