#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Issue 12 items 1 and 5: an unprivileged uid that forces synchronous
# swap-outs to slow flash stalls nobody else. The backing device is a
# null_blk limited to 1 MiB/s, so each swap-out of a 4 MiB region takes
# about 4 s. While uid A, then uid C, allocate a region that needs one, uid
# B times its own page faults (retrieve its held region, store to each of
# its 256 pages, unmap) and `mobioctl qnvram stats`, then `list`: every
# one answers in well under a second, as the pool lock is not held across
# a swap's I/O, the family does not run under genl_mutex and GET_STATS and
# LIST read a snapshot. (Before: each waited out the whole swap-out.)
# vm-memmap: 32M$0x30000000
# vm-kmod: null_blk
# vm-timeout: 600
# vm-alone: uid B must answer within 500 ms while another uid swaps out: measured in time
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/smartio-lib.sh

MB=1048576
A=6000			# the uids that force swap-outs
C=6002
B=6001			# the uid that must not notice
LIMIT_MS=500		# "well under a second", with TCG's fork+exec in it

kmod_load null_blk nr_devices=0
# null_blk throttles by 20 ms ticks of mbps * 20 KiB and never lets a larger
# request through: 16 KiB requests at most.
dev=$(nullb_make nullbslow size=128 memory_backed=1 blocksize=4096 max_sectors=32 mbps=1)
check_ok slow_backing_made test -b "$dev"
check_ok load insmod /mobio/qnvram.ko phys=$QNVRAM_PHYS size=$QNVRAM_SIZE \
	backing="$dev"

# Root's idle regions fill the data area: 7 x 4 MiB of the 32 MiB pool.
for i in 1 2 3 4 5 6 7; do
	qnvtest alloc 0 $((100 + i)) $((4 * MB)) $i >/dev/null ||
		fail root_fills_pool "region $i: $(qnvtest alloc 0 $((100 + i)) $((4 * MB)) $i 2>&1)"
done
check_eq pool_full_no_swap_yet 0 "$(qnvram_stat swap_outs)"

# B maps its region for the whole test (never a swap-out victim).
as_uid $B qnvtest hold $B 1 $MB 9 >/tmp/hold.out 2>&1 &
hold=$!
i=0
while ! grep -q ready /tmp/hold.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check_ok b_holds_its_region grep -q ready /tmp/hold.out

# measure NAME UID CMD...: while UID allocates 3.5 MiB (one swap-out of a
# root region on the slow device), B times 3 s of fault passes, and at the
# same time 3 s of CMD, in two processes (so that neither hides the other's
# wait).
measure() {
	local name=$1 uid=$2 t0 t1 outs0 fmax cmax fpid
	shift 2
	outs0=$(qnvram_stat swap_outs)
	t0=$(cut -d' ' -f1 /proc/uptime)
	as_uid "$uid" qnvtest alloc "$uid" 1 $((7 * MB / 2)) 3 >/tmp/alloc-$name.out 2>&1 &
	apid=$!
	sleep 0.3
	as_uid $B qnvtest latency $B 1 $MB 3 true >/tmp/faults-$name.out 2>&1 &
	fpid=$!
	as_uid $B qnvtest latency $B 1 0 3 "$@" >/tmp/cmd-$name.out 2>&1
	wait $fpid
	log "$name: B while uid $uid allocates: faults: $(cat /tmp/faults-$name.out); $*: $(cat /tmp/cmd-$name.out)"
	wait $apid
	check_ok "${name}_alloc_ok" grep -q ok /tmp/alloc-$name.out
	t1=$(cut -d' ' -f1 /proc/uptime)
	log "$name: uid $uid's allocation took $(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }') s"
	check_eq "${name}_swapped_out_one" $((outs0 + 1)) "$(qnvram_stat swap_outs)"
	check_ok "${name}_swap_outlasted_b" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a >= 3) }'
	fmax=$(sed -n 's/.*fault_max_ms \([0-9.]*\).*/\1/p' /tmp/faults-$name.out)
	cmax=$(sed -n 's/.*cmd_max_ms \([0-9.]*\).*/\1/p' /tmp/cmd-$name.out)
	check_ok "${name}_b_faults_under_${LIMIT_MS}ms" awk -v v="$fmax" -v l=$LIMIT_MS 'BEGIN { exit !(v != "" && v + 0 < l) }'
	check_ok "${name}_b_cmd_under_${LIMIT_MS}ms" awk -v v="$cmax" -v l=$LIMIT_MS 'BEGIN { exit !(v != "" && v + 0 < l) }'
}

measure stats $A mobioctl qnvram stats
measure list $C mobioctl qnvram list

kill $hold 2>/dev/null
wait $hold 2>/dev/null
check_ok b_region_verifies as_uid $B qnvtest verify $B 1 9
check_ok a_region_verifies as_uid $A qnvtest verify $A 1 3
check_ok c_region_verifies as_uid $C qnvtest verify $C 1 3
check_ok root_resident_region_verifies qnvtest verify 0 107 7
check_ok rmmod sh -c 'for u in 0:101 0:102 0:103 0:104 0:105 0:106 0:107 '$A':1 '$B':1 '$C':1; do qnvtest free ${u%:*} ${u#*:} >/dev/null || exit 1; done; rmmod qnvram'
finish
