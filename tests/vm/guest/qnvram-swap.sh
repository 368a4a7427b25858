#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Pool pressure: regions that no process maps are swapped out to the backing
# disk to make room (least recently used first) and come back on retrieve.
# A region that is mapped is never swapped out.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

MB=1048576
check_ok load qnvram_load
# 32 MiB pool minus 64 KiB metadata: three 10 MiB regions fit, a fourth does not.
check_ok alloc_1 qnvtest alloc 0 1 $((10 * MB)) 301
check_ok alloc_2 qnvtest alloc 0 2 $((10 * MB)) 302
qnvtest hold 0 3 $((10 * MB)) 303 >/tmp/hold.out 2>&1 &
hold=$!
i=0
while ! grep -q ready /tmp/hold.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check_eq holder_ready ready "$(cat /tmp/hold.out)"
check_eq no_swap_yet 0 "$(qnvram_stat swap_outs)"

check_ok alloc_4_swaps_out_lru qnvtest alloc 0 4 $((10 * MB)) 304
check_eq one_swap_out 1 "$(qnvram_stat swap_outs)"
check_eq lru_region_1_swapped swapped "$(awk '$3 == "0x1" { print $6 }' /sys/kernel/debug/qnvram/regions)"
check_eq mapped_region_3_resident resident "$(awk '$3 == "0x3" { print $6 }' /sys/kernel/debug/qnvram/regions)"
check_ok cli_shows_swapped sh -c 'mobioctl qnvram list | grep "magic 0x1 " | grep -q swapped'

check_ok retrieve_swaps_in qnvtest verify 0 1 301
check_eq one_swap_in 1 "$(qnvram_stat swap_ins)"
check_eq second_swap_out 2 "$(qnvram_stat swap_outs)"
check_ok swapped_again_region_verifies qnvtest verify 0 2 302
check_ok region_4_verifies qnvtest verify 0 4 304
kill -9 $hold
wait $hold 2>/dev/null
check_ok held_region_verifies qnvtest verify 0 3 303
log "swap: outs $(qnvram_stat swap_outs) ins $(qnvram_stat swap_ins)"
rmmod qnvram
finish
