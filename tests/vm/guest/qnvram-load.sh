#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What a load does with what it finds (issue 12 item 6), in one boot: each
# load takes a 2 MiB (or 4 MiB) piece of the reservation that no load used
# before to find RAM as a cold boot leaves it, or the piece an earlier load
# left a pool in to find it as a warm reboot does.
#  g  a write-back merges live regions across the gaps freed regions left:
#     the gaps reach the image as zeros, not as the freed regions' bytes
#  d  reformat=1, then a reload (a warm reset before the first operation):
#     the discarded regions do not come back
#  a  an image of this size in slot 0 is restored although slot 1 holds a
#     header of another size; a resize finds the other size's image in slot
#     0 and refuses, salvage=1 discards it and the next flush overwrites it
#  b  a warm reboot after a resize back: RAM holds a pool of another size,
#     the device a current image of this size: refused, salvage=1 restores
#     the image (reformat=1 would have thrown it away)
#  c  a region of the image that cannot be read (null_blk bad blocks): the
#     load is refused and the image kept, a reload once the device reads
#     restores it whole; salvage=1 restores the rest, the image stays and
#     the next flush writes the other slot
#  e  the pool in RAM has a region swapped to a bigger device than the one
#     given: refused, the right device reads it back; salvage=1 drops it
# vm-memmap: 32M$0x30000000
# vm-disk: flash 80M
# vm-kmod: null_blk
# vm-timeout: 420
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/smartio-lib.sh

MB=1048576
SLOT=$((4096 + 2 * MB))		# an image slot of a 2 MiB pool
WB=/sys/kernel/debug/qnvram/writeback

# ld IDX SIZE_MB DEV [PARAM=V...]: insmod a SIZE_MB pool at 2 MiB piece IDX
ld() {
	local idx=$1 mb=$2 dev=$3 b=
	shift 3
	[ -n "$dev" ] && b="backing=$dev"
	insmod /mobio/qnvram.ko phys=$((0x30000000 + idx * 2 * MB)) \
		size=$((mb * MB)) $b "$@"
}

# refused NAME CMD...: CMD (a load) must fail; if it loads, unload it
refused() {
	local name=$1
	shift
	if "$@" >/tmp/refused.out 2>&1; then
		fail "$name" "expected the load to be refused, it loaded: $(dmesg | tail -n 3 | tr '\n' ' ')"
		rmmod qnvram
	else
		pass "$name"
	fi
}

# phase NAME: a clean kernel log for the next checks
phase() {
	log "--- $1"
	dmesg -c >/dev/null
}

# blk DEV OFFSET: the 4 KiB block at OFFSET as the device holds it now (qnvram
# writes with its own bios, past the page cache of earlier reads)
blk() {
	echo 3 >/proc/sys/vm/drop_caches
	dd if="$1" bs=4096 skip=$(($2 / 4096)) count=1 2>/dev/null
}

# magic DEV OFFSET: the 8 magic bytes of the header block at OFFSET
magic() {
	blk "$1" "$2" | head -c 8
}

# u64 DEV OFFSET: the little-endian u64 at byte OFFSET
u64() {
	blk "$1" "$2" | od -A n -t u8 -j $(($2 % 4096)) -N 8 | tr -d ' '
}

# nonzero DEV OFFSET: bytes other than 0 in the 4 KiB block at OFFSET
nonzero() {
	blk "$1" "$2" | tr -d '\000' | wc -c
}

# offset MAGIC: the pool offset of region (0, MAGIC)
offset() {
	mobioctl qnvram list | sed -n "s/^uid 0 magic $(printf '%#x' "$1") .* offset \(0x[0-9a-f]*\).*/\1/p"
}

zero_head() {
	dd if=/dev/zero of="$1" bs=$MB count=12 conv=fsync 2>/dev/null
}

kmod_load null_blk nr_devices=0

# --- g: no freed region's bytes in a write-back's gaps ----------------------
phase g
check_ok g_load ld 0 2 "$DISK_flash"
m=1
while [ $m -le 24 ]; do
	qnvtest alloc 0 $m 4096 $((1000 + m)) >/dev/null || fail "g_alloc_$m" "expected an alloc of region $m"
	m=$((m + 1))
done
freed=
m=2
while [ $m -le 24 ]; do
	freed="$freed $(offset $m)"
	qnvtest free 0 $m >/dev/null || fail "g_free_$m" "expected a free of region $m"
	m=$((m + 2))
done
check_eq g_twelve_live_regions_with_gaps 12 "$(qnvram_stat regions_resident)"
check_ok g_insmod_freeblock insmod /mobio/freeblock.ko
check_ok g_writeback_starts sh -c "echo 1 >$WB"
wait_stat wb_images 1 60
check_eq g_writeback_committed 1 "$(qnvram_stat wb_images)"
# The first image goes to slot 0; 12 extents over 10 are merged across gaps.
leak=0
for o in $freed; do
	leak=$((leak + $(nonzero "$DISK_flash" $((4096 + o)))))
done
check_eq g_gaps_in_writeback_image_are_zeros 0 "$leak"
check_ge g_live_regions_in_writeback_image 1 "$(nonzero "$DISK_flash" $((4096 + $(offset 1))))"
check_ok g_sync_flush mobioctl qnvram flush
leak=0
for o in $freed; do
	leak=$((leak + $(nonzero "$DISK_flash" $((SLOT + 4096 + o)))))
done
check_eq g_gaps_in_flush_image_are_not_written 0 "$leak"
check_ok g_rmmod rmmod qnvram
check_ok g_rmmod_freeblock rmmod freeblock

# --- d: reformat=1 invalidates both pool slots --------------------------------
phase d
check_ok d_reformat ld 0 2 "$DISK_flash" reformat=1
check_eq d_reformat_is_empty 0 "$(qnvram_stat regions_resident)"
check_dmesg d_reformat_says_so "reformat=1: the pool in RAM and the flash image are discarded"
check_ok d_rmmod rmmod qnvram
# A reload adopts the pool from RAM, as a warm reset before any operation.
check_ok d_reload ld 0 2 "$DISK_flash"
check_eq d_reload_adopts 1 "$(qnvram_stat boot_source)"
check_eq d_discarded_regions_stay_gone 0 "$(qnvram_stat regions_resident)"
check_ok d_discarded_region_not_back qnvtest expect-errno ENOENT verify 0 1 1001
check_ok d_rmmod_again rmmod qnvram

# --- a: another size's header in either image slot ----------------------------
phase a
zero_head "$DISK_flash"
BIG=$(nullb_make qbig size=16 memory_backed=1)
check_eq a_big_nullb /dev/qbig "$BIG"
check_ok a_load ld 1 2 "$DISK_flash"
check_ok a_alloc qnvtest alloc 0 1 65536 201
check_ok a_flush mobioctl qnvram flush
check_ok a_rmmod rmmod qnvram
# A 4 MiB pool's image header, copied to where the 2 MiB layout has slot 1.
check_ok a_load_4m ld 2 4 "$BIG"
check_ok a_flush_4m mobioctl qnvram flush
check_ok a_rmmod_4m rmmod qnvram
dd if="$BIG" of="$DISK_flash" bs=4096 count=1 seek=$((SLOT / 4096)) conv=notrunc,fsync 2>/dev/null
check_eq a_slot_1_holds_a_4m_header $((4 * MB)) "$(u64 "$DISK_flash" $((SLOT + 16)))"
phase a_restore
check_ok a_restores_beside_another_size_in_slot_1 ld 4 2 "$DISK_flash"
check_eq a_restored 2 "$(qnvram_stat boot_source)"
check_ok a_restored_bytes qnvtest verify 0 1 201
check_dmesg a_slot_1_header_ignored "image slot 1 looks like a header of a pool of 4194304 bytes"
check_ok a_rmmod_restored rmmod qnvram
# Resize to 4 MiB: slot 0 holds the 2 MiB pool's image, the newest state.
phase a_resize
refused a_resize_refused ld 5 4 "$DISK_flash"
check_dmesg a_resize_says_why "image slot 0 on $DISK_flash holds an image of a pool of 2097152 bytes"
check_dmesg a_resize_says_the_ways_out "load with size=2097152 to restore it, or salvage=1"
check_eq a_refusal_leaves_the_image QNVMIMG1 "$(magic "$DISK_flash" 0)"
check_ok a_resize_salvage ld 5 4 "$DISK_flash" salvage=1
check_eq a_salvage_formats 0 "$(qnvram_stat boot_source)"
check_dmesg a_salvage_says_the_next_flush_overwrites "is not restored, and the next flush overwrites it"
check_ok a_alloc_4m qnvtest alloc 0 2 65536 202
check_ok a_flush_after_resize mobioctl qnvram flush
check_eq a_next_flush_overwrote_slot_0 $((4 * MB)) "$(u64 "$DISK_flash" 16)"
check_ok a_rmmod_resized rmmod qnvram
check_ok a_cold_boot_after_resize ld 7 4 "$DISK_flash"
check_eq a_resized_pool_restored 2 "$(qnvram_stat boot_source)"
check_ok a_resized_bytes qnvtest verify 0 2 202
check_ok a_rmmod_last rmmod qnvram

# --- b: RAM of another size hides a current image of this size ---------------
phase b
zero_head "$DISK_flash"
check_ok b_load ld 9 2 "$DISK_flash"
check_ok b_alloc qnvtest alloc 0 1 65536 301
check_ok b_flush mobioctl qnvram flush
check_ok b_rmmod rmmod qnvram
refused b_4m_over_2m_pool_refused ld 9 4 ""
check_dmesg b_4m_says_why "the pool in RAM was made with other parameters"
check_ok b_4m_salvage ld 9 4 "" salvage=1
check_ok b_rmmod_4m rmmod qnvram
phase b_back
refused b_back_to_2m_refused ld 9 2 "$DISK_flash"
check_dmesg b_back_says_salvage_keeps_the_image "salvage=1 to discard it and restore the flash image of this size"
check_ok b_back_salvage ld 9 2 "$DISK_flash" salvage=1
check_eq b_image_restored 2 "$(qnvram_stat boot_source)"
check_ok b_image_bytes qnvtest verify 0 1 301
check_dmesg b_salvage_says_so "salvage=1: the pool in RAM, made for another size, is discarded"
check_ok b_rmmod_back rmmod qnvram

# --- c: an image region that cannot be read -----------------------------------
phase c
BAD=$(nullb_make qbad size=8 memory_backed=1)
check_eq c_nullb /dev/qbad "$BAD"
BB=/sys/kernel/config/nullb/qbad/badblocks
check_ok c_load ld 11 2 "$BAD"
check_ok c_alloc_1 qnvtest alloc 0 1 65536 401
check_ok c_alloc_2 qnvtest alloc 0 2 65536 402
o1=$(offset 1)
check_ok c_flush mobioctl qnvram flush
check_ok c_rmmod rmmod qnvram
s=$(((4096 + o1) / 512))
bad="$s-$((s + 127))"
check_ok c_bad_blocks sh -c "echo +$bad >$BB"
check_eq c_bad_blocks_fail_reads 1 "$(dd if="$BAD" bs=512 skip=$s count=1 of=/dev/null 2>/dev/null || echo 1)"
refused c_read_error_refused ld 12 2 "$BAD"
check_dmesg c_says_which_region "region uid 0 magic 0x1 cannot be read"
check_dmesg c_says_the_image_is_kept "not loaded, the image is kept"
check_eq c_image_not_retired QNVMIMG1 "$(magic "$BAD" 0)"
check_ok c_bad_blocks_gone sh -c "echo -$bad >$BB"
phase c_fixed
check_ok c_load_once_it_reads ld 12 2 "$BAD"
check_eq c_restored 2 "$(qnvram_stat boot_source)"
check_ok c_region_1_back qnvtest verify 0 1 401
check_ok c_region_2_back qnvtest verify 0 2 402
check_ok c_rmmod_fixed rmmod qnvram
phase c_salvage
check_ok c_bad_blocks_again sh -c "echo +$bad >$BB"
check_ok c_salvage ld 13 2 "$BAD" salvage=1
check_eq c_salvage_restores 2 "$(qnvram_stat boot_source)"
check_eq c_salvage_drops_one 1 "$(qnvram_stat restore_dropped_regions)"
check_ok c_salvage_keeps_region_2 qnvtest verify 0 2 402
check_ok c_salvage_drops_region_1 qnvtest expect-errno ENOENT verify 0 1 401
check_eq c_salvage_keeps_the_image_current 1 "$(qnvram_stat img_current)"
seq0=$(u64 "$BAD" 24)
check_ok c_flush_after_salvage mobioctl qnvram flush
check_eq c_flush_spares_the_image QNVMIMG1 "$(magic "$BAD" 0)"
check_eq c_flush_spares_its_number "$seq0" "$(u64 "$BAD" 24)"
check_eq c_flush_writes_the_other_slot $((seq0 + 1)) "$(u64 "$BAD" $((SLOT + 24)))"
check_ok c_rmmod_salvage rmmod qnvram

# --- e: a region swapped to a device bigger than the one given ----------------
phase e
SMALL=$(nullb_make qsmall size=5 memory_backed=1)
check_eq e_small_nullb /dev/qsmall "$SMALL"
dd if=/dev/zero of="$BIG" bs=$MB count=16 conv=fsync 2>/dev/null
check_ok e_load ld 14 2 "$BIG"
check_ok e_alloc_1 qnvtest alloc 0 1 $MB 501
check_ok e_alloc_2_swaps_1_out qnvtest alloc 0 2 $MB 502
check_eq e_one_swapped 1 "$(qnvram_stat regions_swapped)"
check_ok e_rmmod rmmod qnvram
refused e_small_device_refused ld 14 2 "$SMALL"
check_dmesg e_says_which_entry "swapped region outside the backing device's swap area"
check_dmesg e_says_the_way_out "load with the backing= they were swapped to"
check_ok e_right_device ld 14 2 "$BIG"
check_eq e_right_device_adopts 1 "$(qnvram_stat boot_source)"
check_ok e_swapped_region_reads_back qnvtest verify 0 1 501
check_eq e_other_swapped_now 1 "$(qnvram_stat regions_swapped)"
check_ok e_rmmod_right rmmod qnvram
phase e_salvage
check_ok e_salvage ld 14 2 "$SMALL" salvage=1
check_eq e_salvage_adopts 1 "$(qnvram_stat boot_source)"
check_eq e_salvage_drops_the_swapped_one 1 "$(qnvram_stat load_dropped_regions)"
check_dmesg e_salvage_says_so "dropped (salvage=1)"
check_ok e_salvage_keeps_the_resident_one qnvtest verify 0 1 501
check_eq e_nothing_swapped_left 0 "$(qnvram_stat regions_swapped)"
check_ok e_rmmod_salvage rmmod qnvram
finish
