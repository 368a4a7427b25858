#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# qnvram.ko against a hostile or clumsy app, a careless admin and damaged
# media, on a small pool (4 MiB windows of the 32 MiB reservation) so that
# regions are swapped out all the time:
#  - raw ioctl/mmap lifetime games (qnvstress lifetime): bad requests, rebinding
#    a bound file, mmap rules, close before munmap, fork in both exit orders,
#    mremap/mprotect/MADV_DONTNEED/holes, /proc/pid/mem, SCM_RIGHTS to another uid;
#  - an mmap while ALLOC/RETRIEVE fails with EFAULT (qnvstress efault-mmap,
#    deterministic with userfaultfd; efault-race, racing threads as a user,
#    near the end);
#  - netlink: malformed attributes, another uid's regions, the events group;
#  - 4 processes x 3 threads (two uids) creating, checking, mapping, forking,
#    freeing and peeking at overlapping regions while flush, list and free loop,
#    then every byte, the stats and the table checked; rmmod right after, reload;
#  - the power key: hold_ms=0, quick presses, a hold during a flush;
#  - rmmod during a flush; metadata slots corrupted in RAM (through /dev/mem
#    while the module is out: the range is then unclaimed);
#  - flash images corrupted (region data, header, metadata, a crafted swapped
#    entry, both headers), restored into fresh windows of the reservation;
#  - the image's swapped regions after later swap-outs, across a cold cycle;
#  - a swapped region retrieved when the module was loaded without backing=.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-timeout: 900
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

POOL=0x400000			# 4 MiB: one window of the 32 MiB reservation
SLOT_BYTES=$((4096 + POOL))	# one image slot on the flash disk
SWAP_BYTES=$((128 * 1048576 - 2 * SLOT_BYTES))
MB=1048576

win() {
	printf '0x%x' $((0x30000000 + $1 * POOL))
}

# load_at WINDOW [param=value...]: the pool in window WINDOW (0-7), backing
# flash; no per-uid limits: the stress's two uids keep up to 24 regions of
# up to 512 KiB each in the 4 MiB pool, to swap all the time (the limits
# have their own test, qnvram-privilege)
load_at() {
	local w=$1
	shift
	insmod /mobio/qnvram.ko phys="$(win "$w")" size=$POOL backing="$DISK_flash" \
		uid_quota_pct=0 uid_regions=0 "$@"
}


# dmesg lines since the last mark
mark() {
	echo "mobio: mark $1" >/dev/kmsg
}
since() {
	dmesg | sed -n "/mobio: mark $1\$/,\$p"
}
check_since() {
	if since "$1" | grep -q "$3"; then
		pass "$2"
	else
		fail "$2" "expected '$3' in dmesg, saw: $(since "$1" | grep qnvram | tail -n 3 | tr '\n' ' ')"
	fi
}

# the flash disk through the page cache: drop it around every access, the
# module's bios bypass it
flash_read() {	# OFF LEN
	echo 3 >/proc/sys/vm/drop_caches
	dd if="$DISK_flash" bs=4096 iflag=skip_bytes,count_bytes skip="$1" count="$2" 2>/dev/null
}
flash_write() {	# OFF <data
	echo 3 >/proc/sys/vm/drop_caches
	dd of="$DISK_flash" bs=4096 oflag=seek_bytes seek="$1" conv=notrunc,fsync 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
}
u64_at() {	# OFF: little-endian u64 on the flash disk
	flash_read "$1" 8 | od -An -t u8 | tr -d ' '
}
# slot of the newest image: image magic "QNVMIMG1" and the higher sequence number
IMG_MAGIC=3550891808430378577
newest_slot() {
	local s0=0 s1=0
	[ "$(u64_at 0)" = $IMG_MAGIC ] && s0=$(u64_at 24)
	[ "$(u64_at "$SLOT_BYTES")" = $IMG_MAGIC ] && s1=$(u64_at $((SLOT_BYTES + 24)))
	if [ "$s1" -gt "$s0" ]; then echo 1; else echo 0; fi
}
region_field() {	# UID MAGIC FIELD(offset|size|state): from mobioctl as root
	mobioctl qnvram list | awk -v u="$1" -v m="$2" -v f="$3" \
		'$2 == u && $4 == m { for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }'
}

case $MOBIO_BOOT in
1)
	# --- load; /dev/mem ------------------------------------------------------
	check_ok load_4m_window load_at 0
	check_dmesg fresh_pool_formatted "formatted pool of 4194304 bytes"
	check_eq devmem_cannot_read_loaded_pool 0 \
		"$(dd if=/dev/mem bs=4096 skip=$((0x30000)) count=1 2>/dev/null | wc -c)"

	# --- a mapping made while ALLOC/RETRIEVE fails in copy_to_user ------------
	# (first, on the empty pool: the freed range is the next one handed out)
	qnvstress efault-mmap 4000 4001 >/tmp/ef.out 2>&1
	qnvram_relay /tmp/ef.out
	# the module's map counts may be off after that: start again from RAM
	check_ok rmmod_after_efault rmmod qnvram
	mark reload1
	check_ok reload_same_params load_at 0
	check_since reload1 reload_adopts_pool "adopted pool"

	# --- lifetime and request validation, raw ioctl/mmap ---------------------
	qnvstress lifetime 4000 4001 >/tmp/lt.out 2>&1
	qnvram_relay /tmp/lt.out
	grep -v '^PASS\|^FAIL\|^info' /tmp/lt.out | head -n 5 | while read -r l; do log "lifetime: $l"; done

	# --- netlink ---------------------------------------------------------------
	qnvstress netlink 4000 4001 >/tmp/nl.out 2>&1
	qnvram_relay /tmp/nl.out
	# the events group: a user listening must not learn other uids' regions
	as_uid 4001 timeout 20 mobioctl qnvram watch 1 >/tmp/watch.out 2>&1 &
	watcher=$!
	sleep 1
	qnvtest alloc 4000 0x70 $((2 * MB)) 700 >/dev/null
	qnvtest alloc 4000 0x71 $((2 * MB)) 701 >/dev/null	# swaps 0x70 out: an event
	wait $watcher
	log "uid 4001 watching events saw: $(cat /tmp/watch.out)"
	check_eq events_hide_other_uids_regions 0 "$(grep -c 'uid 4000' /tmp/watch.out)"
	qnvtest free 4000 0x70 >/dev/null
	qnvtest free 4000 0x71 >/dev/null

	# --- concurrency under pool pressure ---------------------------------------
	rm -f /tmp/stop
	(while [ ! -e /tmp/stop ]; do mobioctl qnvram flush >/dev/null 2>&1; sleep 0.2; done) &
	l1=$!
	(while [ ! -e /tmp/stop ]; do mobioctl qnvram list >/dev/null; as_uid 3001 mobioctl qnvram list >/dev/null; done) &
	l2=$!
	(while [ ! -e /tmp/stop ]; do mobioctl qnvram free 3000 $((RANDOM % 24 + 1)) >/dev/null 2>&1; sleep 0.3; done) &
	l3=$!
	qnvstress stress 20 4 3 24 3000 3001 >/tmp/stress.out 2>&1
	rc=$?
	: >/tmp/stop
	wait $l1 $l2 $l3
	while read -r l; do log "stress: $l"; done </tmp/stress.out
	check_eq stress_no_failed_check 0 "$rc"
	check_eq stress_final_check_clean 1 "$(grep -c '^regions .* bad 0$' /tmp/stress.out)"
	check_eq stress_did_swap 1 "$([ "$(qnvram_stat swap_outs)" -gt 20 ] && [ "$(qnvram_stat swap_ins)" -gt 20 ] && echo 1 || echo "outs $(qnvram_stat swap_outs) ins $(qnvram_stat swap_ins)")"
	# the loops are over: count what survived
	n=$(qnvstress verify-all 24 3000 3001 | sed -n 's/^regions \([0-9]*\) .* bad 0$/\1/p')
	log "surviving stress regions: ${n:-check failed}"
	mobioctl qnvram list >/tmp/list
	check_eq list_has_the_surviving_regions "$n" "$(grep -cE '^uid 300[01] ' /tmp/list)"
	check_eq stats_regions_match_list "$(grep -c '^uid ' /tmp/list)" \
		"$(($(qnvram_stat regions_resident) + $(qnvram_stat regions_swapped)))"
	check_eq stats_used_bytes_match_list "$(awk '$8 == "resident" { s += $6 } END { print s + 0 }' /tmp/list)" \
		"$(qnvram_stat used_bytes)"
	check_eq stats_swap_free_matches_list \
		"$((SWAP_BYTES - $(awk '$8 == "swapped" { s += $6 } END { print s + 0 }' /tmp/list)))" \
		"$(qnvram_stat swap_free_bytes)"
	check_eq no_binding_or_mapping_left "" \
		"$(awk 'NR > 1 && ($7 != 0 || $8 != 0)' /sys/kernel/debug/qnvram/regions | head -n 3 | tr '\n' ';')"
	check_eq flushes_during_stress_ok 0 "$(qnvram_stat flush_errors)"
	check_ok rmmod_right_after_last_unmap rmmod qnvram
	mark reload2
	check_ok reload_after_stress load_at 0
	check_since reload2 reload_after_stress_adopts "adopted pool"
	check_ok stress_regions_intact_after_reload sh -c "qnvstress verify-all 24 3000 3001 | grep -q '^regions $n .* bad 0\$'"

	# --- power key -------------------------------------------------------------
	P=/sys/module/qnvram/parameters/hold_ms
	p0=$(qnvram_stat power_key_presses)
	f0=$(qnvram_stat flushes)
	echo 0 >$P
	request_power_key 1500
	sleep 1
	check_eq hold_ms_0_counts_press "$((p0 + 1))" "$(qnvram_stat power_key_presses)"
	check_eq hold_ms_0_never_flushes "$f0" "$(qnvram_stat flushes)"
	echo 3000 >$P
	for i in 1 2 3 4; do request_power_key 100; done
	sleep 0.5
	check_eq quick_presses_counted "$((p0 + 5))" "$(qnvram_stat power_key_presses)"
	check_eq quick_presses_never_flush "$f0" "$(qnvram_stat flushes)"
	echo 300 >$P
	k0=$(qnvram_stat power_key_flushes)
	request_power_key 2000
	wait_stat power_key_flushes $((k0 + 1))
	sleep 1
	check_eq long_hold_flushes_exactly_once "$((k0 + 1))" "$(qnvram_stat power_key_flushes)"
	# held while a netlink flush runs: both flush, one after the other
	f1=$(qnvram_stat flushes)
	echo 100 >$P
	(mobioctl qnvram flush; mobioctl qnvram flush) >/dev/null 2>&1 &
	fl=$!
	request_power_key 600
	wait $fl
	wait_stat flushes $((f1 + 3))
	check_eq hold_during_flush_flushes_too "$((f1 + 3)) 0 $((k0 + 2))" \
		"$(qnvram_stat flushes) $(qnvram_stat flush_errors) $(qnvram_stat power_key_flushes)"
	echo 5000 >$P

	# --- rmmod while flushes run --------------------------------------------------
	(for i in 1 2 3 4; do mobioctl qnvram flush; done) >/tmp/fl.out 2>&1 &
	fl=$!
	sleep 0.1
	i=0
	while [ -e /sys/module/qnvram ] && [ $i -lt 50 ]; do rmmod qnvram 2>/dev/null || sleep 0.1; i=$((i + 1)); done
	wait $fl
	check_eq rmmod_during_flush_completes 0 "$([ -e /sys/module/qnvram ] && echo 1 || echo 0)"
	log "flushes racing rmmod said: $(sort /tmp/fl.out | uniq -c | tr '\n' ' ')"
	mark reload3
	check_ok reload_after_rmmod_during_flush load_at 0
	check_since reload3 reload_after_flush_race_adopts "adopted pool"
	check_ok regions_intact_after_flush_race sh -c "qnvstress verify-all 24 3000 3001 | grep -q '^regions $n .* bad 0\$'"

	# --- the pool's metadata slots, corrupted in RAM while the module is out -----
	check_ok flush_before_ram_corruption mobioctl qnvram flush
	rmmod qnvram
	g0=$(dd if=/dev/mem bs=8 skip=$(((0x30000000 + 24) / 8)) count=1 2>/dev/null | od -An -t u8 | tr -d ' ')
	g1=$(dd if=/dev/mem bs=8 skip=$(((0x30000000 + 16384 + 24) / 8)) count=1 2>/dev/null | od -An -t u8 | tr -d ' ')
	check_eq devmem_reads_unloaded_pool 1 "$([ -n "$g0" ] && [ -n "$g1" ] && echo 1 || echo "gen '$g0' '$g1'")"
	if [ "${g1:-0}" -gt "${g0:-0}" ]; then cur=1 gen=$g1 old=$g0; else cur=0 gen=$g0 old=$g1; fi
	dd if=/dev/urandom of=/dev/mem bs=1 seek=$((0x30000000 + cur * 16384 + 200)) count=16 conv=notrunc 2>/dev/null
	mark ram1
	check_ok load_with_current_slot_torn load_at 0
	check_since ram1 torn_slot_falls_back_to_other \
		"adopted pool: generation $old (slot $((cur ^ 1)); slot $cur: metadata checksum mismatch)"
	rmmod qnvram
	dd if=/dev/urandom of=/dev/mem bs=1 seek=$((0x30000000 + 200)) count=16 conv=notrunc 2>/dev/null
	dd if=/dev/urandom of=/dev/mem bs=1 seek=$((0x30000000 + 16384 + 200)) count=16 conv=notrunc 2>/dev/null
	mark ram2
	check_ok load_with_both_slots_torn load_at 0
	check_since ram2 both_torn_says_why "no valid pool in RAM (slot 0: metadata checksum mismatch; slot 1: metadata checksum mismatch)"
	check_eq both_torn_restores_from_flash 2 "$(qnvram_stat boot_source)"
	check_ok regions_intact_after_restore sh -c "qnvstress verify-all 24 3000 3001 | grep -q '^regions $n .* bad 0\$'"

	# --- damaged flash images, restored into fresh windows -------------------------
	qnvtest alloc 0 0x61 65536 601 >/dev/null
	qnvtest alloc 0 0x62 65536 602 >/dev/null
	qnvtest alloc 0 0x63 65536 603 >/dev/null
	mobioctl qnvram flush
	qnvtest free 0 0x63 >/dev/null
	qnvtest alloc 0 0x63 65536 613 >/dev/null
	mobioctl qnvram flush
	# Twice, with no change between: the older image, which (b) and (c)
	# fall back to, holds the same state. (The one before the free is
	# stale: a cold boot never restores it, docs/qnvram.md "Stale images".)
	mobioctl qnvram flush
	off62=$(region_field 0 0x62 offset)
	rmmod qnvram
	new=$(newest_slot)
	base=$((new * SLOT_BYTES))
	seq=$(u64_at $((base + 24)))
	log "newest image: slot $new seq $seq; region 0x62 at pool offset $off62"

	# (a) one region's bytes: that region alone is dropped, with a message
	flash_read $((base + 4096 + off62 + 512)) 16 >/tmp/save.a
	head -c 16 /dev/urandom | flash_write $((base + 4096 + off62 + 512))
	mark img_a
	check_ok img_region_damaged_loads load_at 1
	check_since img_a img_region_damaged_dropped_with_message "region uid 0 magic 0x62 fails its checksum: dropped"
	check_eq img_region_damaged_counted 1 "$(qnvram_stat restore_dropped_regions)"
	check_ok img_region_damaged_only_it_lost sh -c \
		'qnvtest expect-errno ENOENT verify 0 0x62 602 && qnvtest verify 0 0x61 601 && qnvtest verify 0 0x63 613'
	rmmod qnvram
	flash_write $((base + 4096 + off62 + 512)) </tmp/save.a

	# (b) the newest header: the older image is restored
	flash_read "$base" 4096 >/tmp/save.b
	head -c 16 /dev/urandom | flash_write $((base + 8))
	mark img_b
	check_ok img_header_damaged_loads load_at 2
	check_since img_b img_header_damaged_older_restored "restored pool from image $((seq - 1))"
	check_ok img_header_damaged_older_data qnvtest verify 0 0x63 613
	rmmod qnvram
	flash_write "$base" </tmp/save.b

	# (c) the newest image's metadata copy: said so; older image or empty pool
	flash_read $((base + 4096)) 12288 >/tmp/save.c
	head -c 16 /dev/urandom | flash_write $((base + 4096 + 300))
	mark img_c
	check_ok img_meta_damaged_loads load_at 3
	check_since img_c img_meta_damaged_says_why "image $seq (slot [01]): metadata checksum mismatch: trying the older image"
	check_since img_c img_meta_damaged_older_restored "restored pool from image $((seq - 1))"
	check_ok img_meta_damaged_older_data qnvtest verify 0 0x63 613
	rmmod qnvram
	flash_write $((base + 4096)) </tmp/save.c

	# (d) a hostile image with valid checksums: region 0x61 "swapped" far
	# past the disk. The load refuses it (a smaller backing device than the
	# one the region went to looks the same); salvage=1 drops that entry
	# alone and restores the rest.
	check_ok img_crafted qnvstress craft-swapped "$DISK_flash" $POOL 0 0x61
	echo 3 >/proc/sys/vm/drop_caches
	if load_at 4 2>/dev/null; then
		fail img_crafted_refused "expected the load to fail, it loaded"
		rmmod qnvram
	else
		pass img_crafted_refused
	fi
	check_ok img_crafted_refusal_names_entry sh -c \
		"dmesg | grep -q 'magic 0x61 .*swapped region outside the backing device.s swap area'"
	check_ok img_crafted_loads_with_salvage load_at 4 salvage=1
	check_ok img_crafted_swapped_region_dropped qnvtest expect-errno ENOENT verify 0 0x61 601
	check_eq img_crafted_drop_counted 1 "$(qnvram_stat load_dropped_regions)"
	check_ok img_crafted_others_fine qnvtest verify 0 0x63 613
	rmmod qnvram

	# (e) both headers garbage: an empty pool
	head -c 4096 /dev/urandom | flash_write 0
	head -c 4096 /dev/urandom | flash_write "$SLOT_BYTES"
	mark img_e
	check_ok img_both_headers_damaged_loads load_at 5
	check_since img_e img_both_headers_damaged_formats "formatted pool of 4194304 bytes"
	check_eq img_both_headers_damaged_empty "0 0" "$(qnvram_stat boot_source) $(qnvram_stat regions_resident)"

	# --- swapped regions of an image vs. later swap-outs (window 5, empty) -------
	# 1 MiB regions: three fit in the pool; a fourth swaps the oldest out.
	qnvtest alloc 0 0x51 $MB 501 >/dev/null
	qnvtest alloc 0 0x52 $MB 502 >/dev/null
	qnvtest alloc 0 0x53 $MB 503 >/dev/null
	qnvtest alloc 0 0x54 $MB 504 >/dev/null
	check_eq swap_setup_0x51_swapped "swapped 0x0" "$(region_field 0 0x51 state) $(region_field 0 0x51 offset)"
	check_ok swap_setup_flush mobioctl qnvram flush	# image: 0x51 swapped at swap offset 0
	check_ok swap_setup_retrieve_0x51 qnvtest verify 0 0x51 501	# swap-in; 0x52 goes out
	# Retrieves, not a create: a change would retire the image.
	check_ok swap_setup_retrieve_0x52 qnvtest verify 0 0x52 502	# 0x53 goes out: to swap offset 0?
	check_eq swap_ins_and_outs_leave_image_current 1 "$(qnvram_stat img_current)"
	log "after the flush: $(mobioctl qnvram list | tr '\n' ';')"
	# and the newest image's copy of 0x54 is damaged while the module is out
	off54=$(region_field 0 0x54 offset)
	rmmod qnvram
	base=$(($(newest_slot) * SLOT_BYTES))
	head -c 16 /dev/urandom | flash_write $((base + 4096 + off54 + 100))
	check_ok swap_setup_reload load_at 5
	state_set n "$n"
	request_cold_cycle
	;;
2)
	# --- after the cold cycle: the image of boot 1 ------------------------------
	mark cold
	check_ok cold_load load_at 5
	check_since cold cold_restores_image "restored pool from image 1"
	check_since cold cold_damaged_region_dropped "region uid 0 magic 0x54 fails its checksum: dropped"
	check_ok cold_damaged_region_gone qnvtest expect-errno ENOENT verify 0 0x54 504
	check_ok cold_resident_regions_kept sh -c 'qnvtest verify 0 0x52 502 && qnvtest verify 0 0x53 503'
	# 0x51 was flushed as "swapped at swap offset 0"; 0x52 and 0x53 were
	# swapped out after the flush, into other swap space
	out=$(qnvtest verify 0 0x51 501 2>&1)
	check_eq cold_image_swapped_region_kept "mismatches 0 of 1048576" "$(echo $out)"
	log "0x51 after the cold cycle: $(dmesg | grep 'magic 0x51' | tail -n 1)"

	# --- the EFAULT window again, without userfaultfd, by any app --------------------
	# (mmap racing a RETRIEVE whose argument is read-only, so that it fails
	# with EFAULT; late in the test: with the bug, an unlucky interleaving
	# makes qnvram_mmap() count on pool->rt[-1] and the kernel oops later)
	as_uid 4000 qnvstress efault-race 5 4000 >/tmp/ef.out 2>&1
	qnvram_relay /tmp/ef.out

	# --- a swapped region, module loaded without backing= ---------------------------
	# something swapped, and room in the pool to swap it in
	qnvtest alloc 0 0x57 $((2 * MB)) 507 >/dev/null
	qnvtest free 0 0x57 >/dev/null
	sw=$(awk '$6 == "swapped" { print $3; exit }' /sys/kernel/debug/qnvram/regions)
	log "swapped region for the no-backing check: magic $sw"
	rmmod qnvram
	mark nobacking
	check_ok load_without_backing insmod /mobio/qnvram.ko phys="$(win 5)" size=$POOL
	check_since nobacking no_backing_adopts "adopted pool"
	out=$(qnvtest verify 0 "$sw" 0 2>&1)
	check_eq no_backing_swapped_region_clean_error 1 \
		"$(echo "$out" | grep -cE '^qnvtest: verify: .*\((EIO|ENODEV|ENXIO|ENOSPC)\)')"
	check_ok no_backing_flush_refused sh -c 'mobioctl qnvram flush 2>&1 | grep -q "no backing device"'
	rmmod qnvram
	finish
	;;
esac
