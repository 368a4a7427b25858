#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 20,000 genl-fuzz requests to the qnvram family as root and 20,000 as a
# user, half of them well formed with the uid and magic of real regions,
# while the pool holds regions of both uids: resident ones, a swapped one,
# and one of each uid mapped by a live process. The state is checked before
# each of 4 rounds of 5,000, and while they run a loop makes again every
# 10 ms what FREE took (only the user's regions in the user's rounds).
# Then 10,000 random ioctls on /dev/qnvram as the user. Every command is
# served (answers without error) where it should be, the user is refused
# FLUSH and root's regions, mapped regions are never freed, no data
# changes, the module still works, rmmod is clean and so is dmesg.
# FLUSH is kept in: with this 1 MiB pool it writes at most 1 MiB.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 16M
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/genl-fuzz-lib.sh

KB=1024
U=1000
ROUNDS=4
PER_ROUND=5000
REGIONS=/sys/kernel/debug/qnvram/regions

# Regions (uid magic KiB); the pattern's seed is the magic. The data area
# is 960 KiB: all of them (1120 KiB) do not fit, one is always swapped.
#   0 0x103 384  allocated first: the least recently used, swapped out
#   0 0x101 256  resident
#   U 0x201  32  resident, the user's
#   0 0x102  32  mapped by a root process
#   U 0x202  32  mapped by a process of the user
#   0 0x104 384  makes 0x103 swap out
# genl-fuzz -a groups: those regions, by uid and by default uid (the
# sender's), an invalid uid, a missing region.
HINTS="-a 4:u32:0,32:u32:0x101 -a 4:u32:0,32:u32:0x102
	-a 4:u32:0,32:u32:0x103 -a 4:u32:0,32:u32:0x104
	-a 4:u32:$U,32:u32:0x201 -a 4:u32:$U,32:u32:0x202
	-a 32:u32:0x101 -a 32:u32:0x201 -a 32:u32:0x202
	-a 4:u32:4294967295,32:u32:0x101 -a 4:u32:7,32:u32:0x999"

# region_state MAGIC: resident, swapped, or nothing
region_state() {
	awk -v m="$1" '$3 == m { print $6 }' $REGIONS
}

# hold NAME UID MAGIC KIB: a process of UID maps the region (made if
# missing) until killed; its pid in $held. Not in a subshell: the holder
# dies with its parent (PR_SET_PDEATHSIG), and a $(...) would wait for it.
hold() {
	local out=/tmp/hold-$3.out i=0
	rm -f "$out"
	qnvtest setuid "$2" qnvtest hold "$2" "$3" $(($4 * KB)) "$3" >"$out" 2>&1 &
	held=$!
	while ! grep -q ready "$out" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	check_eq "$1" ready "$(cat "$out")"
}

# alloc_missing UID MAGIC KIB: make the region if it is not there (says so)
alloc_missing() {
	[ -n "$(region_state "$2")" ] && return 0
	qnvtest setuid "$1" qnvtest alloc "$1" "$2" $(($3 * KB)) "$2" >/dev/null &&
		echo "made $2"
}

# make_state ROUND: every region there, one of them swapped
make_state() {
	alloc_missing 0 0x103 384 &&
		alloc_missing 0 0x101 256 &&
		alloc_missing $U 0x201 32 &&
		alloc_missing 0 0x104 384 ||
		fail "state_round_$1" "expected the regions to be made: $(cat $REGIONS | tr '\n' ';')"
	check_eq "state_round_$1_has_6_regions" 6 "$(($(wc -l <$REGIONS) - 1))"
	check_ge "state_round_$1_has_a_swapped_region" 1 "$(grep -c ' swapped ' $REGIONS)"
	check_eq "state_round_$1_mapped_regions_held" "1 1" \
		"$(awk '$3 == "0x102" || $3 == "0x202" { printf "%s%d", s, ($8 > 0); s = " " }' $REGIONS)"
}

# keeper all|user: while a round runs, make again what FREE took (every
# region, or only the user's), every 10 ms, until /tmp/keeper.stop; one
# "made MAGIC" line per region made in /tmp/keeper.log. Allocations then
# race the fuzzer's requests, and the state stays.
keeper_start() {
	rm -f /tmp/keeper.stop /tmp/keeper.log
	(
		while [ ! -e /tmp/keeper.stop ]; do
			if [ "$1" = all ]; then
				alloc_missing 0 0x103 384
				alloc_missing 0 0x101 256
				alloc_missing 0 0x104 384
			fi
			alloc_missing $U 0x201 32
			sleep 0.01
		done
	) >/tmp/keeper.log 2>&1 &
	keeper=$!
}

keeper_stop() {
	: >/tmp/keeper.stop
	wait $keeper
	log "keeper: $(grep -c '^made' /tmp/keeper.log) regions made again during the round"
}

check_ok load insmod /mobio/qnvram.ko phys=$QNVRAM_PHYS size=0x100000 backing=$DISK_flash
check_ok alloc_swapped_first qnvtest alloc 0 0x103 $((384 * KB)) 0x103
check_ok alloc_resident qnvtest alloc 0 0x101 $((256 * KB)) 0x101
check_ok alloc_user_resident as_uid $U qnvtest alloc $U 0x201 $((32 * KB)) 0x201
hold root_holds_region 0 0x102 32
holder_root=$held
hold user_holds_region $U 0x202 32
holder_user=$held
check_ok alloc_swaps_out_lru qnvtest alloc 0 0x104 $((384 * KB)) 0x104
check_eq lru_region_swapped swapped "$(region_state 0x103)"

# --- root -----------------------------------------------------------------------
r=1
while [ $r -le $ROUNDS ]; do
	make_state "root_$r"
	keeper_start all
	# shellcheck disable=SC2086 # HINTS are words
	fuzz "root_round_$r" /tmp/fz-root-$r.out $HINTS qnvram $PER_ROUND $((10 + r))
	keeper_stop
	r=$((r + 1))
done
R="/tmp/fz-root-*.out"
check_eq root_sent_20000 $((ROUNDS * PER_ROUND)) \
	"$(awk '$1 == "sent" { n += $2 } END { print n + 0 }' $R)"
check_fuzz_ge root_get_stats_served "$R" 1 ok 100
check_fuzz_ge root_list_served "$R" 16 ok 100
check_fuzz_ge root_list_sends_regions "$R" 16 data 100
check_fuzz_ge root_retrieve_served "$R" 17 ok 100
check_fuzz_ge root_retrieve_missing_enoent "$R" 17 ENOENT 1
check_fuzz_ge root_free_served "$R" 18 ok 20
check_fuzz_ge root_free_of_mapped_region_ebusy "$R" 18 EBUSY 1
check_fuzz_ge root_flush_served "$R" 19 ok 100
check_eq root_fuzz_kept_mapped_regions "resident resident" \
	"$(region_state 0x102) $(region_state 0x202)"
check_dmesg_clean dmesg_clean_after_root_fuzz

# --- the user ---------------------------------------------------------------------
r=1
while [ $r -le $ROUNDS ]; do
	make_state "user_$r"
	root_before=$(awk '$2 == 0 { print $3 }' $REGIONS | sort | tr '\n' ' ')
	keeper_start user
	# shellcheck disable=SC2086 # HINTS are words
	fuzz "user_round_$r" /tmp/fz-user-$r.out -u $U $HINTS qnvram $PER_ROUND $((20 + r))
	keeper_stop
	check_eq "user_round_${r}_freed_no_region_of_root" "$root_before" \
		"$(awk '$2 == 0 { print $3 }' $REGIONS | sort | tr '\n' ' ')"
	r=$((r + 1))
done
R="/tmp/fz-user-*.out"
check_eq user_sent_20000 $((ROUNDS * PER_ROUND)) \
	"$(awk '$1 == "sent" { n += $2 } END { print n + 0 }' $R)"
check_fuzz_ge user_get_stats_served "$R" 1 ok 100
check_fuzz_ge user_list_served "$R" 16 ok 100
check_fuzz_ge user_list_sends_own_regions "$R" 16 data 100
check_fuzz_ge user_retrieve_served "$R" 17 ok 100
check_fuzz_ge user_retrieve_of_root_eperm "$R" 17 EPERM 1
check_fuzz_ge user_free_served "$R" 18 ok 2
check_fuzz_ge user_free_of_mapped_region_ebusy "$R" 18 EBUSY 1
check_fuzz_eq user_flush_never_served "$R" 19 ok 0
check_fuzz_ge user_flush_eperm "$R" 19 EPERM 100
check_eq user_fuzz_kept_mapped_regions "resident resident" \
	"$(region_state 0x102) $(region_state 0x202)"
check_dmesg_clean dmesg_clean_after_user_fuzz

# --- ioctls as the user, with the regions there --------------------------------------
make_state ioctl
check_ok ioctl_fuzz_as_user as_uid $U qnvtest ioctl-fuzz 10000 3

# --- still works: every region's data, swap-in, alloc, list, flush, rmmod -----------------
kill $holder_root $holder_user
wait $holder_root $holder_user 2>/dev/null
check_ok mapped_root_region_data_intact qnvtest verify 0 0x102 0x102
check_ok mapped_user_region_data_intact as_uid $U qnvtest verify $U 0x202 0x202
check_ok resident_region_data_intact qnvtest verify 0 0x101 0x101
check_ok user_region_data_intact as_uid $U qnvtest verify $U 0x201 0x201
check_ok region_0x104_data_intact qnvtest verify 0 0x104 0x104
check_ok swapped_region_swaps_in_intact qnvtest verify 0 0x103 0x103
check_ok still_allocates qnvtest alloc 0 0x300 4096 0x300
check_ok still_lists sh -c 'mobioctl qnvram list | grep -q "magic 0x300 "'
check_ok still_flushes mobioctl qnvram flush
check_ok frees_all sh -c "for m in 0x101 0x102 0x103 0x104 0x300; do qnvtest free 0 \$m || exit 1; done &&
	qnvtest setuid $U qnvtest free $U 0x201 && qnvtest setuid $U qnvtest free $U 0x202"
check_ok rmmod_after_fuzz rmmod qnvram
check_dmesg_clean dmesg_clean_after_rmmod
finish
