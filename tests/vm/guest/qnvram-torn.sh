#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Metadata updates are atomic: the host resets the machine at a random moment
# while a process allocates, fills and frees regions in a loop, three times.
# After each reset the pool must be adopted (never reformatted), and every
# region in it must hold exactly the bytes its allocation wrote.
# vm-memmap: 32M$0x30000000
# vm-timeout: 900
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

RESETS=3
BASE=4096

# The churn allocates magics in increasing order and keeps the last five.
# A reset can land after an alloc committed but before its fill finished, so
# the newest region may hold a partial pattern; every older one must verify,
# and the table must hold no more than the window.
verify_all() {
	local bad=0 n newest magic
	n=$(grep -c . /tmp/regions)
	newest=$(sort -n /tmp/regions | tail -n 1)
	while read -r magic; do
		[ "$magic" = "$newest" ] && continue
		if ! qnvtest verify 0 "$magic" $((magic - BASE)) >/tmp/v.out 2>&1; then
			bad=$((bad + 1))
			log "region $magic: $(cat /tmp/v.out)"
		fi
	done </tmp/regions
	check_eq "reset_${1}_older_regions_intact" 0 "$bad"
	check_eq "reset_${1}_window_at_most_5" 1 "$([ "$n" -ge 1 ] && [ "$n" -le 5 ] && echo 1 || echo 0)"
	# A clean slate for the next round.
	while read -r magic; do qnvtest free 0 "$magic" >/dev/null 2>&1; done </tmp/regions
}

if [ "$MOBIO_BOOT" -gt 1 ]; then
	check_ok "reset_$((MOBIO_BOOT - 1))_reload" qnvram_load
	check_dmesg "reset_$((MOBIO_BOOT - 1))_adopts_pool" "adopted pool"
	note "reset $((MOBIO_BOOT - 1)): $(dmesg | grep -o 'adopted pool.*')"
	mobioctl qnvram list | sed -n 's/^uid 0 magic \(0x[0-9a-f]*\) .*/\1/p' |
		while read -r m; do echo $((m)); done >/tmp/regions
	verify_all $((MOBIO_BOOT - 1))
	if [ "$MOBIO_BOOT" -gt $RESETS ]; then
		log "generation after $RESETS resets: $(qnvram_stat meta_generation)"
		finish
	fi
else
	check_ok load qnvram_load
fi

# Churn until the host resets us.
request_reset_after 1500-6000
qnvtest churn 0 $BASE 1000000 65536 >/tmp/churn.out 2>&1
fail churn_outlived_reset "the host did not reset within the churn"
finish
