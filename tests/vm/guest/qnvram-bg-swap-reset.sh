#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# A reset in the middle of background swap-outs (qnvram_bgswap.c through
# freeblock) loses nothing: a process keeps twenty 2 MiB regions alive in a
# 32 MiB pool (allocate, fill, free the oldest), so about twelve stay
# resident and every allocation starts a background swap-out of the least
# recently used one, on an idle disk, each at most 4 MiB/s
# (swap_bg_ceiling_kbps, so that a 2 MiB copy takes 0.5 s and a swap-out is
# in flight most of the time); the host resets the machine at a random
# moment, three times. After each reset the pool is adopted (never
# reformatted) and every region holds its bytes, resident or read back
# from the swap area with its checksum; only the newest may be partly
# filled. A swap-out commits a region only after the device's cache flush,
# so a reset before that leaves the region resident with its bytes, and
# one after it leaves a valid copy on the disk.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-timeout: 900
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

RESETS=3
LIVE=20
MB=1048576
LOW=25
CEIL=4096

# verify_all ROUND: every region but the newest holds its pattern (seed =
# its magic); then a clean slate for the next round
verify_all() {
	local bad=0 n newest m swapped
	mobioctl qnvram list | sed -n 's/^uid 0 magic \(0x[0-9a-f]*\) .*/\1/p' |
		while read -r m; do echo $((m)); done >/tmp/regions
	n=$(grep -c . /tmp/regions)
	newest=$(sort -n /tmp/regions | tail -n 1)
	swapped=$(grep -c ' swapped' /sys/kernel/debug/qnvram/regions)
	log "reset $1: $n regions in the pool, $swapped of them swapped out"
	check_ge "reset_${1}_regions_kept" $((LIVE - 2)) "$n"
	check_ge "reset_${1}_some_swapped" 1 "$swapped"
	while read -r m; do
		[ "$m" = "$newest" ] && continue
		if ! qnvtest verify 0 "$m" "$m" >/tmp/v.out 2>&1; then
			bad=$((bad + 1))
			log "region $m: $(cat /tmp/v.out)"
		fi
	done </tmp/regions
	check_eq "reset_${1}_regions_intact" 0 "$bad"
	while read -r m; do qnvtest free 0 "$m" >/dev/null 2>&1; done </tmp/regions
}

check_ok "insmod_freeblock_$MOBIO_BOOT" insmod /mobio/freeblock.ko
if [ "$MOBIO_BOOT" -gt 1 ]; then
	check_ok "reset_$((MOBIO_BOOT - 1))_reload" qnvram_load swap_free_low_pct=$LOW swap_bg_ceiling_kbps=$CEIL
	check_dmesg "reset_$((MOBIO_BOOT - 1))_adopts_pool" "adopted pool"
	verify_all $((MOBIO_BOOT - 1))
	if [ "$MOBIO_BOOT" -gt $RESETS ]; then
		check_ok rmmod_qnvram rmmod qnvram
		finish
	fi
else
	check_ok load qnvram_load swap_free_low_pct=$LOW swap_bg_ceiling_kbps=$CEIL reformat=1
	P=/sys/module/qnvram/parameters/swap_bg_ceiling_kbps
	echo 4194305 >$P 2>/dev/null
	check_eq ceiling_over_4gib_refused $CEIL "$(cat $P)"
	echo -1 >$P 2>/dev/null
	check_eq ceiling_negative_refused $CEIL "$(cat $P)"
fi

# Fill to the window first, then churn until the host resets us. Magics
# grow from one round to the next (the seed is the magic).
m=$((MOBIO_BOOT * 100000))
first=$m
while [ $((m - first)) -lt $LIVE ]; do
	m=$((m + 1))
	qnvtest alloc 0 $m $((2 * MB)) $m >/dev/null ||
		fail "fill_$m" "expected qnvtest alloc of region $m to work"
done
check_ge "round_${MOBIO_BOOT}_background_swap_outs" 1 "$(qnvram_stat bg_swap_outs)"
request_reset_after 1000-5000
# busy: how many of the samples (one per allocation, just after it) found
# a background swap-out running, i.e. how often a reset lands in one
i=0
busy=0
while [ $i -lt 100000 ]; do
	m=$((m + 1))
	qnvtest alloc 0 $m $((2 * MB)) $m >/dev/null 2>&1
	busy=$((busy + $(qnvram_stat bg_swap_running)))
	qnvtest free 0 $((m - LIVE)) >/dev/null 2>&1
	i=$((i + 1))
	[ $((i % 10)) -eq 0 ] &&
		echo "mobio: churn $i: running in $busy of $i samples; bg_swap_started $(qnvram_stat bg_swap_started) outs $(qnvram_stat bg_swap_outs) sync swap_outs $(qnvram_stat swap_outs)"
done
fail churn_outlived_reset "the host did not reset within the churn"
finish
