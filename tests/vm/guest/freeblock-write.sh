#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Userspace write tasks on /dev/freeblock (FB_IOC_WRITE, FB_IOC_FILL,
# through tools/libfreeblock.c): the kernel asks for each block when it is
# about to issue it (late binding: in order, never more than 2 x depth
# blocks handed over ahead of their completion), every block is written
# once with the data given and nothing outside the range changes, idle and
# beside a foreground reader; abort stops the writes after the blocks in
# flight; promotion; malformed registrations and fills are refused with
# the right errno.
# vm-disk: data 32M
# vm-timeout: 240
# vm-alone: foreground delay 1% and wait for idle in ms
. /mobio/tests/lib.sh
. /mobio/tests/freeblock-lib.sh

dev=${DISK_data#/dev/}
SEED=0x5eedf00d
SEED2=0xabcdef01
SEED3=0x13572468
M=1048576
P=/sys/module/freeblock/parameters

# holds NAME START LEN SEED: the disk has SEED's pattern in that range
holds() {
	local out
	out=$(fbtest scrub "$DISK_data" --bs 65536 --start "$2" --len "$3" --seed "$4")
	check_eq "${1}_pattern" "got=$(($3 / 65536)) dup=0 bad=0" \
		"$(echo "$out" | grep -o 'got=[0-9]* dup=[0-9]* bad=[0-9]*')"
}

# written NAME NBLOCKS OUTPUT: a complete write task's summary
written() {
	check_eq "${1}_every_block_once" "nblocks=$2 fills=$2 done=$2 failed=0 bad=0 order_bad=0" \
		"$(echo "$3" | grep -o 'nblocks=.* order_bad=[0-9]*')"
	check_eq "${1}_result_0" 0 "$(kv result "$3")"
	# late binding: a block is asked for when it is about to be issued
	check_le "${1}_late_binding" $((2 * $(cat $P/depth))) "$(kv max_ahead "$3")"
}

check_ok fill_pattern fbtest fill "$DISK_data" $SEED
check_ok insmod_freeblock insmod $FB_KO

# --- malformed requests ---------------------------------------------------------
fbtest badwrite "$DISK_data" >/tmp/bad.out
check_eq bad_writes_exit 0 $?
while read -r st name rest; do
	case "$st" in
	ok) pass "rejects_$name" ;;
	bad) fail "rejects_$name" "$rest" ;;
	esac
done </tmp/bad.out
check_ge bad_write_cases 15 "$(wc -l </tmp/bad.out)"
holds bad_writes_changed_nothing 0 $M $SEED

# --- idle: 8 MiB at 8 MiB --------------------------------------------------------
d0=$(fb_stat blocks_done)
out=$(fbtest write "$DISK_data" $SEED2 --start $((8 * M)) --len $((8 * M)))
check_eq idle_write_exit 0 $?
log "idle write: $out"
written idle_write 128 "$out"
check_eq idle_write_counted 128 $(($(fb_stat blocks_done) - d0))
holds idle_write_range $((8 * M)) $((8 * M)) $SEED2
holds idle_write_before_range 0 $((8 * M)) $SEED
holds idle_write_after_range $((16 * M)) $((16 * M)) $SEED
# a 1-slot ring: every fill waits for the previous block's slot
out=$(fbtest write "$DISK_data" $SEED3 --bs 4096 --slots 1 --start $((8 * M)) --len $M)
check_eq one_slot_write_exit 0 $?
written one_slot_write 256 "$out"
holds one_slot_write_range $((8 * M)) $M $SEED3

# --- beside a back-to-back foreground reader ---------------------------------
# collide_pct 0: the window outlasts every recent gap of the reader, so the
# write waits for the reader's end (the default lets the longest 2% of its
# gaps be used: freeblock-stacked.sh checks that bound)
old_collide=$(cat /sys/module/freeblock/parameters/collide_pct)
echo 0 >/sys/module/freeblock/parameters/collide_pct
r0=$(fb_stat fg_requests)
f0=$(fb_stat fg_delayed)
fbtest load "$DISK_data" 5 >/tmp/load.out &
lp=$!
sleep 1
out=$(fbtest write "$DISK_data" $SEED2 --start $((20 * M)) --len $((4 * M)))
check_eq busy_write_exit 0 $?
wait $lp
log "write beside a reader: $out; $(cat /tmp/load.out)"
written busy_write 64 "$out"
holds busy_write_range $((20 * M)) $((4 * M)) $SEED2
fr=$(($(fb_stat fg_requests) - r0))
fd=$(($(fb_stat fg_delayed) - f0))
log "foreground requests $fr, delayed by background $fd"
check_ge busy_fg_requests_seen 1000 "$fr"
check_le busy_fg_delayed_at_most_1pct $((fr / 100)) "$fd"
# idle-time writes wait for the reader's end (~4 s after the write began)
check_ge busy_write_waited_for_idle 3000 "$(kv elapsed_ms "$out")"
echo "$old_collide" >/sys/module/freeblock/parameters/collide_pct

# --- promoted under the same load: done while the reader still runs ---------
fbtest load "$DISK_data" 8 >/tmp/load.out &
lp=$!
sleep 1
out=$(fbtest write "$DISK_data" $SEED3 --start $((20 * M)) --len $((2 * M)) --promote 1)
check_eq promoted_write_exit 0 $?
log "promoted write: $out"
written promoted_write 32 "$out"
check_eq promoted_write_before_load_end 1 "$(kill -0 $lp 2>/dev/null && echo 1 || echo 0)"
wait $lp
holds promoted_write_range $((20 * M)) $((2 * M)) $SEED3

# --- abort: the writes stop after the blocks in flight -------------------------
a0=$(fb_stat aborts)
out=$(fbtest write "$DISK_data" $SEED3 --bs 65536 --start $((24 * M)) --len $((4 * M)) \
	--ceil 512 --abort-after 8)
check_eq abort_write_exit 0 $?
log "aborted write: $out"
check_eq abort_write_result_ecanceled -125 "$(kv result "$out")"
check_eq abort_write_data_right 0 "$(kv bad "$out")"
done_n=$(kv done "$out")
fills=$(kv fills "$out")
check_ge abort_write_did_some 8 "$done_n"
check_le abort_write_stopped_early 32 "$fills"
check_eq abort_write_done_is_prefix "$done_n" "$(kv prefix "$out")"
check_eq abort_counted $((a0 + 1)) "$(fb_stat aborts)"
holds abort_write_done_blocks $((24 * M)) $((done_n * 65536)) $SEED3
holds abort_write_rest_untouched $((24 * M + fills * 65536)) $((4 * M - fills * 65536)) $SEED

sleep 1
check_eq no_task_left 0 "$(fb_stat tasks_active)"
check_eq nothing_in_flight 0 "$(fb_stat bg_inflight)"
check_ok rmmod rmmod freeblock
finish
