#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Regions survive a warm reboot (sysrq b: reset with RAM kept), byte for byte,
# including one that a process still had mapped when the machine went down.
# vm-memmap: 32M$0x30000000
# vm-timeout: 300
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

case $MOBIO_BOOT in
1)
	check_ok load qnvram_load
	# libqnvram's persist barrier for this CPU (qnvm_persist_mechanism()):
	# dc cvac + dsb on arm64, a cache-line write-back on x86-64
	want="ok dc cvac"
	[ "$(uname -m)" = x86_64 ] && want=$(qnvtest persist | grep -xE 'ok (clwb|clflushopt|clflush)')
	check_eq persist_barrier_writes_back_lines "$want" "$(qnvtest persist)"
	check_ok alloc_small as_uid 1000 qnvtest alloc 1000 1 4096 101
	check_ok alloc_medium as_uid 1000 qnvtest alloc 1000 2 1048576 102
	check_ok alloc_large qnvtest alloc 0 3 16777216 103
	qnvtest hold 0 4 65536 104 >/tmp/hold.out 2>&1 &
	i=0
	while ! grep -q ready /tmp/hold.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check_eq holder_ready ready "$(cat /tmp/hold.out)"
	state_set generation "$(qnvram_stat meta_generation)"
	request_warm_reboot
	;;
2)
	check_ok reload qnvram_load
	check_dmesg warm_reboot_adopts_pool "adopted pool"
	check_eq warm_reboot_keeps_generation "$(state_get generation)" "$(qnvram_stat meta_generation)"
	check_eq warm_reboot_keeps_4_regions 4 "$(qnvram_stat regions_resident)"
	check_ok warm_reboot_keeps_small_bytes as_uid 1000 qnvtest verify 1000 1 101
	check_ok warm_reboot_keeps_medium_bytes as_uid 1000 qnvtest verify 1000 2 102
	check_ok warm_reboot_keeps_large_bytes qnvtest verify 0 3 103
	check_ok warm_reboot_keeps_mapped_region_bytes qnvtest verify 0 4 104
	log "verify output: $(qnvtest verify 0 3 103 2>&1)"
	finish
	;;
esac
