#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# freeblock.ko: blocks larger than one request of the disk are issued as
# pieces that each fit one (none is split by the block layer, so none is
# counted as foreground: a 1 MiB-block scrub of an idle disk raises
# fg_requests by nothing and runs at the rate of 64 KiB blocks, through
# /dev/freeblock (vmalloc ring) and the kernel API (kmalloc and vmalloc
# buffers), also with max_sectors_kb lowered); a write task under a rate
# ceiling whose getbuffer says "not yet" for every block keeps its ceiling
# (the slot is given back); speculative tasks (FB_SCRUB_F_SPECULATIVE,
# fb_read_opts): every block delivered exactly once with the right data,
# idle, beside a foreground parked in the middle of the range, away from
# both ends and from where the previous task ended (the first blocks
# issued are near it, where an ordinary task starts at block 0), under a
# back-to-back reader with a floor, as a write task, from the kernel API,
# from fb-scrub --any-order and fb-backup --any-order.
# On a disk with chunk_sectors and a virtual boundary (null_blk zoned, every
# zone conventional, virt_boundary=1) blocks of a zone each are read whole,
# none split or seen as foreground.
# vm-disk: data 32M
# vm-bin: tools/fb-backup
# vm-kmod: null_blk
# vm-timeout: 360
# vm-alone: a scrub and write rate checked against elapsed time
. /mobio/tests/lib.sh
. /mobio/tests/freeblock-lib.sh
. /mobio/tests/smartio-lib.sh

dev=${DISK_data#/dev/}
SEED=0x5eedf00d
SEED2=0xc0ffee
SEED3=0x13572468
SEED4=0x2468ace0
M=1048576
SIZE=$((32 * M))
Q=/sys/block/$dev/queue

# once NAME NBLOCKS OUTPUT: every block delivered once, data right
once() {
	check_eq "${1}_every_block_once" "nblocks=$2 got=$2 dup=0" \
		"$(echo "$3" | grep -o 'nblocks=[0-9]* got=[0-9]* dup=[0-9]*')"
	check_eq "${1}_data_matches_pattern" 0 "$(kv bad "$3")"
	check_eq "${1}_no_read_error" 0 "$(kv failed "$3")"
	check_eq "${1}_result_0" 0 "$(kv result "$3")"
}


# pow2_floor N: the largest power of two <= N
pow2_floor() {
	local p=1
	while [ $((p * 2)) -le "$1" ]; do
		p=$((p * 2))
	done
	echo $p
}

# piece BLKSIZE: bytes per bio freeblock uses (fb_piece_bytes())
piece() {
	local seg segs p
	seg=$(cat $Q/max_segment_size)
	[ "$seg" -gt 4096 ] && seg=4096
	segs=$(cat $Q/max_segments)
	[ "$segs" -lt 2 ] && segs=2
	p=$1
	[ $(($(cat $Q/max_sectors_kb) * 1024)) -lt $p ] && p=$(($(cat $Q/max_sectors_kb) * 1024))
	[ $(((segs - 1) * seg)) -lt $p ] && p=$(((segs - 1) * seg))
	[ $((255 * 4096)) -lt $p ] && p=$((255 * 4096))
	pow2_floor $p
}

check_ok fill_pattern fbtest fill "$DISK_data" $SEED
check_ok insmod_freeblock insmod $FB_KO
log "queue limits: max_sectors_kb=$(cat $Q/max_sectors_kb) max_hw_sectors_kb=$(cat $Q/max_hw_sectors_kb) max_segments=$(cat $Q/max_segments) max_segment_size=$(cat $Q/max_segment_size)"
# a first task creates the disk's record (counters)
out=$(fbtest scrub "$DISK_data" --bs 65536 --len 1048576 --seed $SEED)
once warmup 16 "$out"

# --- 1. big blocks are never split: not foreground, full speed ----------------
# Each foreground request seen costs an idle window before the next block:
# 50 ms here, so a piece counted as foreground shows in the time too (the
# virtio disk is fast, the default 2 ms window would hide it).
P=/sys/module/freeblock/parameters
old_min=$(cat $P/idle_min_us)
echo 50000 >$P/idle_min_us
r0=$(fb_stat fg_requests)
b0=$(fb_stat bg_bios)
out=$(fbtest scrub "$DISK_data" --bs 65536 --slots 16 --seed $SEED)
once scrub_64k 512 "$out"
e64=$(kv elapsed_ms "$out")
r1=$(fb_stat fg_requests)
b1=$(fb_stat bg_bios)
out=$(fbtest scrub "$DISK_data" --bs $M --slots 4 --seed $SEED)
once scrub_1m 32 "$out"
e1m=$(kv elapsed_ms "$out")
r2=$(fb_stat fg_requests)
b2=$(fb_stat bg_bios)
p1m=$(piece $M)
log "idle 32 MiB scrub: 64 KiB blocks ${e64} ms ($((b1 - b0)) bios), 1 MiB blocks ${e1m} ms ($((b2 - b1)) bios of $p1m bytes); foreground requests seen: $((r1 - r0)), $((r2 - r1))"
check_eq scrub_64k_no_foreground_seen 0 $((r1 - r0))
check_eq scrub_1m_no_foreground_seen 0 $((r2 - r1))
check_eq scrub_64k_one_bio_per_block 512 $((b1 - b0))
check_eq scrub_1m_bios_fit_queue_limits $((32 * M / p1m)) $((b2 - b1))
# as fast as 64 KiB blocks (a piece seen as foreground cost 50 ms each)
check_le scrub_1m_rate_like_64k $((e64 + 150)) "$e1m"
echo "$old_min" >$P/idle_min_us

# a smaller request limit: more pieces per block, still none split
old_kb=$(cat $Q/max_sectors_kb)
echo 128 >$Q/max_sectors_kb
check_eq max_sectors_kb_lowered 128 "$(cat $Q/max_sectors_kb)"
r0=$(fb_stat fg_requests)
b0=$(fb_stat bg_bios)
out=$(fbtest scrub "$DISK_data" --bs $M --slots 4 --len $((8 * M)) --seed $SEED)
once scrub_1m_at_128k_requests 8 "$out"
check_eq scrub_1m_at_128k_no_foreground_seen 0 $(($(fb_stat fg_requests) - r0))
check_eq scrub_1m_at_128k_eight_bios_per_block 64 $(($(fb_stat bg_bios) - b0))

# the kernel API with 1 MiB kmalloc and vmalloc buffers, write then read
r0=$(fb_stat fg_requests)
check_ok kapi_1m_write_registers sh -c "echo write $DISK_data $((8 * M)) $((8 * M)) $M $SEED2 0 >$ST"
out=$(st_wait)
log "kernel fb_write, 1 MiB blocks at 128 KiB requests: $out"
check_eq kapi_1m_write_result_0 0 "$(kv result "$out")"
check_eq kapi_1m_write_every_block 8 "$(kv blocks "$out")"
check_ok kapi_1m_read_registers sh -c "echo read $DISK_data $((8 * M)) $((8 * M)) $M $SEED2 0 >$ST"
out=$(st_wait)
check_eq kapi_1m_read_result_0 0 "$(kv result "$out")"
check_eq kapi_1m_read_every_block 8 "$(kv blocks "$out")"
check_eq kapi_1m_read_data_right 0 "$(kv bad "$out")"
check_eq kapi_1m_no_foreground_seen 0 $(($(fb_stat fg_requests) - r0))
echo "$old_kb" >$Q/max_sectors_kb
out=$(fbtest scrub "$DISK_data" --bs 65536 --start $((8 * M)) --len $((8 * M)) --seed $SEED2)
once kapi_1m_write_data_on_disk 128 "$out"
# put the first pattern back for what follows
check_ok kapi_1m_restore_pattern sh -c "echo write $DISK_data $((8 * M)) $((8 * M)) 65536 $SEED 0 >$ST"
st_wait >/dev/null

# --- 2. getbuffer "not yet" gives the ceiling slot back ------------------------
# Every block of a userspace write task is first refused (the process is
# asked for its data): 4 MiB at 2 MiB/s takes 2 s, not 4.
out=$(fbtest write "$DISK_data" $SEED3 --bs 65536 --start $((16 * M)) --len $((4 * M)) --ceil 2048)
check_eq ceiling_write_exit 0 $?
log "write task, ceiling 2048 KiB/s: $out"
check_eq ceiling_write_every_block "nblocks=64 fills=64 done=64 failed=0 bad=0 order_bad=0" \
	"$(echo "$out" | grep -o 'nblocks=.* order_bad=[0-9]*')"
check_le ceiling_write_keeps_ceiling_not_half 3300 "$(kv elapsed_ms "$out")"
check_ge ceiling_write_still_paced 1800 "$(kv elapsed_ms "$out")"
out=$(fbtest scrub "$DISK_data" --bs 65536 --start $((16 * M)) --len $((4 * M)) --seed $SEED3)
once ceiling_write_data_on_disk 64 "$out"
check_ok ceiling_write_restore fbtest write "$DISK_data" $SEED --bs 65536 --start $((16 * M)) --len $((4 * M))

# --- 3. speculative tasks ---------------------------------------------------------
s0=$(fb_stat bg_issued_any_order)
out=$(fbtest scrub "$DISK_data" --bs 65536 --any-order 1 --seed $SEED)
check_eq spec_idle_exit 0 $?
log "speculative, idle: $out"
once spec_idle 512 "$out"

# a foreground parked at 12..16 MiB (blocks 192..255), 20 ms think time
fbtest park "$DISK_data" 20 $((12 * M)) $((4 * M)) 20 >/tmp/park.out &
pp=$!
sleep 1
out=$(fbtest scrub "$DISK_data" --bs 65536 --seed $SEED)
log "in order, foreground parked at 12 MiB: $out"
once ordered_parked 512 "$out"
# two in flight may complete out of order: block 0 is among the first 8
# delivered, and they are among blocks 0..9
check_eq ordered_parked_starts_at_0 0 "$(kv first8_min "$out")"
check_le ordered_parked_first_8_lowest 9 "$(kv first8_max "$out")"
# the foreground reads again after the task before ended at 32 MiB
sleep 0.3
a0=$(fb_stat bg_issued_any_order)
r0=$(fb_stat fg_requests)
out=$(fbtest scrub "$DISK_data" --bs 65536 --any-order 1 --seed $SEED)
check_eq spec_parked_exit 0 $?
fr=$(($(fb_stat fg_requests) - r0))
log "speculative, foreground parked at 12 MiB: $out; $fr foreground requests meanwhile, $(($(fb_stat bg_issued_any_order) - a0)) blocks out of order"
once spec_parked 512 "$out"
check_ge spec_parked_foreground_ran 1 "$fr"
# the first blocks are where the foreground works: its last read ended in
# 12..16 MiB (blocks 192..256); the task before ended at 32 MiB
check_ge spec_parked_first_block_near_foreground_low 192 "$(kv first_lbn "$out")"
check_le spec_parked_first_block_near_foreground_high 256 "$(kv first_lbn "$out")"
check_ge spec_parked_first_8_blocks_near_foreground_low 176 "$(kv first8_min "$out")"
check_le spec_parked_first_8_blocks_near_foreground_high 272 "$(kv first8_max "$out")"
check_eq spec_parked_not_ascending 0 "$(kv ascending "$out")"
check_ge spec_parked_counted_any_order $((a0 + 1)) "$(fb_stat bg_issued_any_order)"
kill $pp 2>/dev/null
wait $pp 2>/dev/null

# under a back-to-back random reader, with a floor
fbtest load "$DISK_data" 8 >/tmp/load.out &
lp=$!
sleep 1
out=$(fbtest scrub "$DISK_data" --bs 65536 --len $((4 * M)) --floor 2048 --any-order 1 --seed $SEED)
check_eq spec_busy_floor_exit 0 $?
log "speculative, back-to-back reader, floor 2 MiB/s: $out"
once spec_busy_floor 64 "$out"
check_ge spec_busy_floor_finished_under_load 1 "$(kill -0 $lp 2>/dev/null && echo 1 || echo 0)"
wait $lp

# a speculative write task, the foreground parked inside its range
fbtest park "$DISK_data" 6 $((14 * M)) $((2 * M)) 20 >/tmp/park.out &
pp=$!
sleep 1
out=$(fbtest write "$DISK_data" $SEED4 --bs 65536 --start $((8 * M)) --len $((8 * M)) --any-order 1)
check_eq spec_write_exit 0 $?
log "speculative write, foreground parked at 14 MiB: $out"
check_eq spec_write_every_block_asked_once "nblocks=128 fills=128 done=128 failed=0 bad=0" \
	"$(echo "$out" | grep -o 'nblocks=.* bad=[0-9]*')"
check_eq spec_write_no_block_asked_twice 0 "$(kv fill_dup "$out")"
check_eq spec_write_result_0 0 "$(kv result "$out")"
check_ge spec_write_not_in_order 1 "$(kv order_bad "$out")"
# blocks 96..128 of the task are 14..16 MiB (a flush at the close of the
# device before does not count: it has no position)
check_ge spec_write_first_block_near_foreground_low 96 "$(kv first_lbn "$out")"
check_le spec_write_first_block_near_foreground_high 128 "$(kv first_lbn "$out")"
wait $pp
out=$(fbtest scrub "$DISK_data" --bs 65536 --start $((8 * M)) --len $((8 * M)) --seed $SEED4)
once spec_write_data_on_disk 128 "$out"
out=$(fbtest scrub "$DISK_data" --bs 65536 --len $((8 * M)) --seed $SEED)
once spec_write_nothing_before_range 128 "$out"
out=$(fbtest scrub "$DISK_data" --bs 65536 --start $((16 * M)) --seed $SEED)
once spec_write_nothing_after_range 256 "$out"
check_ok spec_write_restore fbtest write "$DISK_data" $SEED --bs 65536 --start $((8 * M)) --len $((8 * M))

# the kernel API: fb_read_opts(FB_TASK_F_SPECULATIVE), flags checked
check_ok kapi_spec_read_registers sh -c "echo read $DISK_data 0 $((8 * M)) 65536 $SEED 0 1 >$ST"
out=$(st_wait)
log "kernel speculative fb_read_opts: $out"
check_eq kapi_spec_read_result_0 0 "$(kv result "$out")"
check_eq kapi_spec_read_every_block 128 "$(kv blocks "$out")"
check_eq kapi_spec_read_data_right 0 "$(kv bad "$out")"
echo read $DISK_data 0 $((8 * M)) 65536 $SEED 0 2 >$ST 2>/dev/null
check_eq kapi_unknown_flag_einval 1 $?
check_eq kapi_unknown_flag_no_task 1 "$(grep -c state=ended $ST)"

# the tools
out=$(freeblock-scrub --any-order --bs 64K "$DISK_data" 2>/tmp/scrub.err)
check_eq fb_scrub_any_order_exit_0 0 $?
check_eq fb_scrub_any_order_summary 1 "$(grep -c '512 blocks of 65536 bytes read.* 0 failed, 0 unreadable' /tmp/scrub.err)"
out=$(fb-backup --any-order --quiet "$DISK_data" /tmp/img 2>/tmp/backup.err)
check_eq fb_backup_any_order_exit_0 0 $?
check_ok fb_backup_any_order_image_equal cmp "$DISK_data" /tmp/img
rm -f /tmp/img

# --- 4. a disk with chunk_sectors ----------------------------------------------
# 1 MiB zones, all conventional: chunk_sectors = 2048, which the block layer
# never lets a request cross; and a virtual boundary of a page (NVMe's), met
# by a buffer split at page boundaries, one bio_vec per page. Pieces divide the chunk and the range's offset
# (fb_piece.h; tests/unit/test_fb_piece.c checks the arithmetic, with
# chunks smaller than a piece and misaligned partitions that no disk here
# can have: a zoned disk has no partitions and null_blk's zones are >= 1 MiB,
# larger than any piece). Here: the limits are read from this kernel's
# queue, and 1 MiB blocks (FB_BLKSIZE_MAX), one zone each, are read whole,
# none split, none seen as foreground.
kmod_load null_blk nr_devices=0
zdev=$(nullb_make nullbz size=16 memory_backed=1 zoned=1 zone_size=1 zone_nr_conv=16 virt_boundary=1)
check_eq chunked_disk_made /dev/nullbz "$zdev"
check_eq chunked_disk_chunk_sectors 2048 "$(cat /sys/block/nullbz/queue/chunk_sectors)"
sched_set nullbz none
check_ok chunked_fill_pattern fbtest fill /dev/nullbz $SEED4
spec_dev=$dev
dev=nullbz
Q=/sys/block/$dev/queue
check_eq chunked_disk_virt_boundary 4095 "$(cat $Q/virt_boundary_mask)"
out=$(fbtest scrub /dev/nullbz --bs 65536 --len $M --seed $SEED4)
once chunked_warmup 16 "$out"
r0=$(fb_stat fg_requests)
b0=$(fb_stat bg_bios)
out=$(fbtest scrub /dev/nullbz --bs $M --slots 4 --start $M --len $((12 * M)) --seed $SEED4)
once chunked_1m_blocks 12 "$out"
log "chunked disk: max_sectors_kb=$(cat $Q/max_sectors_kb) max_segments=$(cat $Q/max_segments); 1 MiB blocks went as $(($(fb_stat bg_bios) - b0)) bios of $(piece $M) bytes"
check_eq chunked_no_foreground_seen 0 $(($(fb_stat fg_requests) - r0))
check_eq chunked_bios_fit_queue_limits $((12 * M / $(piece $M))) $(($(fb_stat bg_bios) - b0))
dev=$spec_dev
Q=/sys/block/$dev/queue

check_eq spec_tasks_all_ended 0 "$(fb_stat tasks_active)"
check_eq spec_nothing_in_flight 0 "$(fb_stat bg_inflight)"
log "blocks issued out of order in all: $(($(fb_stat bg_issued_any_order) - s0))"
check_ok rmmod_freeblock rmmod freeblock
finish
