#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The write controller on a throttled null_blk (16 MB/s, what the bench's
# nullb model is): a 4 KiB random reader beside 128 KiB O_DIRECT writes (16
# in flight), the same in one boot with the controller off (no rate) and on
# (the defaults). With it on, the reads' 90th percentile is lower than with
# it off, the rate came down from "no limit", writes still go at the floor
# at least, the controller's own view (read_lat_us, read_slowdown_pct,
# read_target_pct, the 4 KiB class's baseline) is set, and it gets there
# without polling the queue. Before the writer, 64 KiB reads alone after
# the 4 KiB ones: their size class learns its own baseline, the 4 KiB one
# stays, and the slowdown the controller holds stays near 1 although the
# latency percentile is many times the small reads' (one baseline learnt
# from 4 KiB reads would take the large reads for a slowdown of 10x or
# more). One reader of one size at a time: null_blk's bandwidth limit is a
# budget per 20 ms tick, so in a mix a small read waits for the tick the
# large ones emptied, whatever its size. 64 KiB, not 128: null_blk's
# requests stop at 255 sectors, and a 128 KiB read's 512-byte tail would be
# a small read waiting for that tick.
# Then the reads stop: writes go unthrottled (the rate does not matter
# without reads). Then a read target far above what reads see: the rate
# climbs back (at most 2x a window, and no further than twice what the
# writes take), and writes get more than under the default target.
# Then, back at the slowdown target, 4 KiB and 128 KiB reads together
# without writes: the small ones are many times slower than alone (they
# wait for the ticks the large ones empty) and the rate stays where it
# was, since no write made them slow.
# Last, a fresh instance with a writer when reads start: cold until
# reads alone give the 4 KiB class a baseline; a reader walking every size
# class beside a writer; and a class read too sparsely ever to get a
# baseline, whose budget ends the hold (below).
# vm-kmod: null_blk
# vm-bin: /usr/bin/fio
# vm-timeout: 300
# vm-alone: read latency compared between two phases of one boot
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

RUNTIME=8

kmod_load null_blk nr_devices=0
smartio_load
dev=$(nullb_make nullb0 size=512 queue_mode=2 submit_queues=1 \
	hw_queue_depth=32 irqmode=2 completion_nsec=200000 mbps=16)
sched_set nullb0 smartio || fail sched_smartio "expected smartio on nullb0"
io=/sys/block/nullb0/queue/iosched

# fio_p90_us FILE DIR: the 90th percentile of DIR's completion latency, µs
fio_p90_us() {
	awk -v dir="\"$2\"" '
		$1 == dir && $2 == ":" { in_dir = 1; next }
		in_dir && $1 == "\"90.000000\"" { v = $3; sub(",", "", v); print int(v / 1000); exit }' "$1"
}

# phase NAME [writer]: the reader (READ_BS, 4k) and the writer for RUNTIME s
phase() {
	local w=
	[ -n "$2" ] && w="--name=writer --rw=randwrite --bs=128k --ioengine=libaio
		--iodepth=16 --offset=128M --size=128M"
	# shellcheck disable=SC2086
	fio --filename="$dev" --output-format=json --direct=1 --time_based \
		--runtime=$RUNTIME --lat_percentiles=1 --clat_percentiles=0 \
		--name=reader --rw=randread --bs="${READ_BS:-4k}" --ioengine=psync --size=128M \
		$w >/tmp/ctl-$1.json 2>/tmp/ctl-$1.err
	check_eq "${1}_fio_ok" 0 $?
	p90=$(fio_p90_us /tmp/ctl-$1.json read)
	wios=$(fio_total_ios /tmp/ctl-$1.json write)
	rios=$(fio_total_ios /tmp/ctl-$1.json read)
	log "$1: read p90 $p90 us, $rios reads, $wios writes; $(tr '\n' ' ' </sys/kernel/debug/block/nullb0/sched/stats | grep -o 'write_rate_kbps [0-9]*\|read_lat_us [0-9]*\|read_target_us [0-9]*\|read_slowdown_pct [0-9]*\|read_baseline_4k_us [0-9]*\|controller_adjusts [0-9]*\|dispatch_empty [0-9]*\|queue_kicks [0-9]*' | tr '\n' ' ')"
}

# fresh_instance NAME: a new smartio instance (no baseline, cold) at a 200%
# target, the bench's point that ran away (at 110% a stand-in slowed by
# writes is cut sooner, and its fastest read, alone by chance, often ends it)
fresh_instance() {
	sched_set nullb0 none
	sched_set nullb0 smartio || fail "$1_smartio" "expected smartio on nullb0"
	echo 200 >$io/target_slowdown_pct
}

# writer_ahead NAME SECONDS: the 128 KiB O_DIRECT writer (16 in flight) for
# SECONDS in the background, a second ahead of the reads so that its writes
# fill the device when the first read comes (fio's jobs started together let
# a few reads go first); sets writer (its pid) and w0 (writes dispatched so far)
writer_ahead() {
	fio --filename="$dev" --output-format=json --direct=1 --time_based \
		--runtime="$2" --name=writer --rw=randwrite --bs=128k \
		--ioengine=libaio --iodepth=16 --offset=128M --size=128M \
		>/tmp/ctl-$1-writer.json 2>&1 &
	writer=$!
	sleep 1
	w0=$(smartio_stat nullb0 dispatched_be_write)
}

phase alone
alone_p90=$p90
b4k=$(smartio_stat nullb0 read_baseline_4k_us)
alone_b4k=$b4k
check_ge alone_baseline_seen 1 "$b4k"

# --- large reads alone: a baseline of their own, slowdown near 1 ----------------
READ_BS=64k RUNTIME=4 phase large
b64k=$(smartio_stat nullb0 read_baseline_64k_us)
lat=$(smartio_stat nullb0 read_lat_us)
slow=$(smartio_stat nullb0 read_slowdown_pct)
log "large: baselines 4k $(smartio_stat nullb0 read_baseline_4k_us) us (before: $b4k), 64k $b64k us; last window p90 $lat us, slowdown $slow%"
# not raised to the large reads' latency (a stray small read, a probe of
# the disk, may move it a little)
check_le large_4k_baseline_kept $((b4k * 2)) \
	"$(smartio_stat nullb0 read_baseline_4k_us)"
check_ge large_baseline_64k_seen 1 "$b64k"
# 16 times the bytes at 16 MB/s: 4 ms against well under 1 ms on 6.12;
# on 6.1 null_blk's 4 KiB reads alone already wait for the bandwidth tick
# (their mean 2.3 ms, the 64 KiB ones' 3.8 ms), so only slower there
check_ge large_64k_slower_alone $((b4k + 1)) "$b64k"
check_ge large_lat_many_times_small $((b4k * 4)) "$lat"
check_le large_slowdown_near_one 150 "$slow"
check_ge large_slowdown_seen 1 "$slow"

echo 0 >$io/controller
check_eq off_no_rate 0 "$(smartio_stat nullb0 write_rate_kbps)"
phase off writer
off_p90=$p90
off_writes=$wios

echo 1 >$io/controller
e0=$(smartio_stat nullb0 dispatch_empty)
k0=$(smartio_stat nullb0 queue_kicks)
phase on writer
on_p90=$p90
on_writes=$wios
empty=$(($(smartio_stat nullb0 dispatch_empty) - e0))
kicks=$(($(smartio_stat nullb0 queue_kicks) - k0))
rate=$(smartio_stat nullb0 write_rate_kbps)
log "p90: alone $alone_p90 us, controller off $off_p90 us, on $on_p90 us; writes off $off_writes, on $on_writes; rate $rate KiB/s"
check_ge off_reads_slowed "$((alone_p90 * 2))" "$off_p90"
check_le on_lowers_read_p90 "$((off_p90 * 3 / 4))" "$on_p90"
check_le on_rate_came_down 1048575 "$rate"
# the floor: 512 KiB per 500 ms, 8 writes of 128 KiB a second
check_ge on_writes_at_floor_at_least $((RUNTIME * 8 * 3 / 4)) "$on_writes"
check_eq on_target_pct 110 "$(smartio_stat nullb0 read_target_pct)"
check_eq on_no_latency_target 0 "$(smartio_stat nullb0 read_target_us)"
# set, not a level: the controller's aim is to keep it near 110, and the
# last window may be below 100 as well as above
check_ge on_slowdown_seen 1 "$(smartio_stat nullb0 read_slowdown_pct)"
check_ge on_read_lat_seen 1 "$(smartio_stat nullb0 read_lat_us)"
check_ge on_adjusts 1 "$(smartio_stat nullb0 controller_adjusts)"
# each event (an insertion, a completion, a timer kick) runs the queue once
# and ends with one empty dispatch when writes are held. null_blk's bandwidth
# timer restarts its stopped queue 50 times a second, and once more when a
# refused request races that timer: 100 a second is allowed for both.
# Polling every 3 ms would add 333 a second on top.
log "empty dispatches $empty: reads $rios, writes $wios, kicks $kicks"
check_le on_no_polling $((rios + wios + kicks + RUNTIME * 100)) "$empty"

# --- reads gone: writes unthrottled, then the rate climbs back -------------------
fio --filename="$dev" --output-format=json --direct=1 --time_based \
	--runtime=3 --name=writer --rw=randwrite --bs=128k --ioengine=libaio \
	--iodepth=16 --offset=128M --size=128M >/tmp/ctl-wonly.json 2>&1
w_only=$(fio_total_ios /tmp/ctl-wonly.json write)
log "writer alone after: $w_only writes in 3 s (with the controller off beside reads: $off_writes in $RUNTIME s)"
check_ge writes_unthrottled_without_reads $((off_writes * 3 / RUNTIME / 2)) "$w_only"
echo 1000000 >$io/read_lat_target_us
phase relaxed writer
check_eq relaxed_target 1000000 "$(smartio_stat nullb0 read_target_us)"
check_eq relaxed_no_slowdown_target 0 "$(smartio_stat nullb0 read_target_pct)"
# the rate climbs until it no longer limits the writes (no further than
# twice what they take: no windup)
relaxed_rate=$(smartio_stat nullb0 write_rate_kbps)
check_ge relaxed_rate_climbs_back $((rate + 1)) "$relaxed_rate"
check_ge relaxed_rate_above_writes $((wios * 128 / RUNTIME)) "$relaxed_rate"
check_ge relaxed_writes_more $((on_writes + 1)) "$wios"

# --- reads slowed by reads: no write, so the rate stays --------------------------
# 4 KiB reads beside 128 KiB ones, 4 in flight: the small ones wait for the
# ticks the large ones empty, many times their latency alone, and no write
# rate is to blame (before, such windows cut the rate, and a rise is bounded
# by what writes take: a writer arriving later found it at the floor)
# (last: the small reads' baseline learns the mix, as it should, and a
# phase after it would start from that)
echo 0 >$io/read_lat_target_us
# one read past a window's length closes the window the writer was in
sleep 1
dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null
a0=$(smartio_stat nullb0 controller_adjusts)
r0=$(smartio_stat nullb0 write_rate_kbps)
fio --filename="$dev" --output-format=json --direct=1 --time_based --runtime=3 \
	--name=small --rw=randread --bs=4k --ioengine=psync --size=128M \
	--name=large --rw=read --bs=128k --ioengine=libaio --iodepth=4 --size=128M \
	>/tmp/ctl-mixed.json 2>&1
check_eq mixed_fio_ok 0 $?
# the first job's reads: the small ones
small_p90=$(fio_p90_us /tmp/ctl-mixed.json read)
log "reads alone, mixed sizes: 4 KiB p90 $small_p90 us (alone: $alone_p90 us), last window's slowdown $(smartio_stat nullb0 read_slowdown_pct)%, adjusts $a0 -> $(smartio_stat nullb0 controller_adjusts), rate $(smartio_stat nullb0 write_rate_kbps) KiB/s"
check_ge mixed_small_reads_slowed $((alone_p90 * 4)) "$small_p90"
check_eq mixed_rate_kept "$a0" "$(smartio_stat nullb0 controller_adjusts)"
check_eq mixed_rate_same "$r0" "$(smartio_stat nullb0 write_rate_kbps)"

# --- a writer after the mix: the baseline it left must not let writes run -------
# The mix raised the 4 KiB class's baseline (its reads waited for the large
# ones' ticks, no write around: 38x its value alone on 6.12). Then the 4 KiB
# reader alone beside a writer: its reads beat that baseline, so they looked
# unslowed, the rate rose, the writes left no gap for a read alone to bring
# the baseline back, and it stayed for as long as the writes did (before
# smartio_baseline_stale_next(): baseline 11915 us at the end, read p90
# 3.4x the "on" phase's, rate 1 -> 15 MB/s). A hostile or unlucky order, a
# game loading and then a download, would leave reads unprotected.
# Now a baseline no batch alone moved for a second is corrected by windows
# whose reads beat it: it ends within 4/3 of what reads beside the writes
# take, which the target holds near their time alone (a few times the
# baseline alone at most), and the reads are held as in the "on" phase.
mix_b4k=$(smartio_stat nullb0 read_baseline_4k_us)
check_ge mixed_baseline_inflated $((alone_b4k * 8)) "$mix_b4k"
fixes0=$(smartio_stat nullb0 baseline_stale_fixes)
phase stale writer
stale_b4k=$(smartio_stat nullb0 read_baseline_4k_us)
log "after the mix: 4 KiB baseline $alone_b4k us alone, $mix_b4k after the mix, $stale_b4k after the writer's phase ($(($(smartio_stat nullb0 baseline_stale_fixes) - fixes0)) stale fixes); read p90 $p90 us (controller off $off_p90, on $on_p90); rate $r0 -> $(smartio_stat nullb0 write_rate_kbps) KiB/s, $wios writes"
check_ge stale_fixed "$((fixes0 + 1))" "$(smartio_stat nullb0 baseline_stale_fixes)"
check_le stale_baseline_down "$((alone_b4k * 4))" "$stale_b4k"
check_le stale_reads_held "$((on_p90 * 2))" "$p90"

# --- read_lat_pct: the latency percentile only; the baselines are means -------
b4k=$(smartio_stat nullb0 read_baseline_4k_us)
b64k=$(smartio_stat nullb0 read_baseline_64k_us)
check_ge pct_baseline_before 1 "$b4k"
echo 99 >$io/read_lat_pct
check_eq pct_change_keeps_baseline "$b4k" "$(smartio_stat nullb0 read_baseline_4k_us)"
check_eq pct_change_keeps_baseline_64k "$b64k" \
	"$(smartio_stat nullb0 read_baseline_64k_us)"
echo 90 >$io/read_lat_pct

# --- a fresh instance, writes from the first read on: cold until a baseline ---
# A writer runs on a new instance when the reader starts: no read has
# run alone, so the fastest read, one beside writes, stood in for the
# baseline, the slowdown looked like 1, the rate stayed unlimited and no
# read ever ran alone to correct it (the bench's 200% target, one round:
# reads at 62x alone; here, at the same 200% target, the class had no
# baseline after 8 s). Now the windows stay cold (writes beside reads wait
# for their deadline and the floor) until the 4 KiB class has a baseline
# from reads alone, which is near the one learnt alone at the start, and
# then the controller holds the reads to the target.
fresh_instance cold
check_eq cold_fresh_no_baseline 0 "$(smartio_stat nullb0 read_baseline_4k_us)"
check_eq cold_fresh_is_cold 1 "$(smartio_stat nullb0 controller_cold)"
writer_ahead cold $((RUNTIME + 2))
phase cold
# the writes beside the reader only (fio's count has the writer's seconds
# alone before and after it)
wios=$(($(smartio_stat nullb0 dispatched_be_write) - w0))
wait $writer
check_eq cold_writer_ok 0 $?
cold_b4k=$(smartio_stat nullb0 read_baseline_4k_us)
cold_n=$(smartio_stat nullb0 cold_windows)
log "fresh instance beside a writer: 4 KiB baseline $cold_b4k us (alone at the start: $alone_b4k), $cold_n cold windows, read p90 $p90 us (controller off $off_p90, on $on_p90), rate $(smartio_stat nullb0 write_rate_kbps) KiB/s, $wios writes"
check_ge cold_baseline_learnt 1 "$cold_b4k"
# (on 6.1 the 4 KiB reads alone wait for null_blk's bandwidth tick: their
# mean varies more)
check_le cold_baseline_near_alone $((alone_b4k * 3)) "$cold_b4k"
# the fresh instance's first window, and at least one that
# smartio_cold_next() made cold; at most one class was read, so its
# SMARTIO_COLD_WINDOWS (10) and that first window
check_ge cold_windows_seen 2 "$cold_n"
check_le cold_windows_bounded 11 "$cold_n"
check_eq cold_ended 0 "$(smartio_stat nullb0 controller_cold)"
check_le cold_rate_came_down 1048575 "$(smartio_stat nullb0 write_rate_kbps)"
# at a 200% target (the "on" phase held 110%); a run-away is the
# controller-off phase's p90
check_le cold_reads_held "$((on_p90 * 3))" "$p90"
# held, not starved: the floor at least while the reader ran (512 KiB per
# 500 ms, 8 writes of 128 KiB a second, each 2 requests: null_blk's stop at
# 255 sectors)
check_ge cold_writes_at_floor_at_least $((RUNTIME * 8 * 2 * 3 / 4)) "$wios"

# --- a reader that walks every size class: cold stays bounded ---------------
# The hostile reader of the cold start: each size class read in turn for a
# second, so every class in turn has reads and no baseline. Cold windows add
# up over classes (at most SMARTIO_COLD_WINDOWS, 10, a class and the first
# window: 81; the budget itself is tested in the next section), writes keep
# at least the floor all along, and cold ends with the walk whether or not
# a class learnt a baseline (the 512 KiB reads
# are split at null_blk's 255 sectors, into the 128 KiB and 4 KiB classes).
fresh_instance walk
walk_s=8
writer_ahead walk $((walk_s + 4))
walk=
for bs in 4k 8k 16k 32k 64k 128k 256k 512k; do
	walk="$walk --name=r$bs --stonewall --bs=$bs --rw=randread --ioengine=psync --size=128M --runtime=1"
done
# shellcheck disable=SC2086
fio --filename="$dev" --output-format=json --direct=1 --time_based $walk \
	>/tmp/ctl-walk.json 2>/tmp/ctl-walk.err
check_eq walk_fio_ok 0 $?
wios=$(($(smartio_stat nullb0 dispatched_be_write) - w0))
walk_n=$(smartio_stat nullb0 cold_windows)
# a window past the walk with a read of a class that has a baseline (or a
# spent budget) closes the last cold window
sleep 1
dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null
wait $writer
check_eq walk_writer_ok 0 $?
bases=
for c in 4k 8k 16k 32k 64k 128k 256k 512k; do
	bases="$bases $c:$(smartio_stat nullb0 read_baseline_${c}_us)"
done
log "reader walking the size classes beside a writer: $walk_n cold windows, $wios writes in ~${walk_s} s, baselines (us)$bases"
check_ge walk_cold_seen 2 "$walk_n"
check_le walk_cold_bounded 81 "$walk_n"
check_eq walk_cold_ended 0 "$(smartio_stat nullb0 controller_cold)"
check_ge walk_writes_at_floor_at_least $((walk_s * 8 * 2 * 3 / 4)) "$wios"
check_ge walk_baseline_4k 1 "$(smartio_stat nullb0 read_baseline_4k_us)"

# --- a class that never gets a baseline: its budget ends the hold -------------
# The walk above cannot tell a bounded budget from none: each class is read
# for a second, 10 windows, and most learn a baseline sooner. Here 64 KiB
# reads come 5 a second for 5 s: 25 reads, fewer than the 32 alone a
# baseline takes, so the class never gets one, and every window with a read
# would make the next cold (about 25) were the budget not spent after 10.
fresh_instance sparse
writer_ahead sparse 7
fio --filename="$dev" --output-format=json --direct=1 --time_based --runtime=5 \
	--name=sparse --rw=randread --bs=64k --rate_iops=5 --ioengine=psync \
	--size=128M >/tmp/ctl-sparse.json 2>/tmp/ctl-sparse.err
check_eq sparse_fio_ok 0 $?
sparse_reads=$(fio_total_ios /tmp/ctl-sparse.json read)
sparse_n=$(smartio_stat nullb0 cold_windows)
wait $writer
check_eq sparse_writer_ok 0 $?
log "64 KiB reads 5 a second beside a writer: $sparse_reads reads, $sparse_n cold windows, 64 KiB baseline $(smartio_stat nullb0 read_baseline_64k_us) us"
check_le sparse_too_few_for_a_baseline 31 "$sparse_reads"
check_eq sparse_no_baseline 0 "$(smartio_stat nullb0 read_baseline_64k_us)"
# the class's 10 windows and the fresh instance's first; one more if a
# window ends between a read's insertion and its completion
check_ge sparse_budget_spent 10 "$sparse_n"
check_le sparse_budget_bounds_cold 12 "$sparse_n"

sched_set nullb0 none
finish
