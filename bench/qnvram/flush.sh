#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# qNVRAM flush bandwidth (paper: 20 MB in 1.3 s = 15.1 MB/s on a Galaxy S4's
# flash). The pool (32 MiB, 31 MiB of regions) is flushed 3 times; the
# baseline, measured first on the same disk in the same boot, is dd writing
# the same amount with O_DIRECT and fsync. Prints "BENCH key value" notes.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-timeout: 900
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

MB=1048576
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# Baseline: plain sequential writes past where the two pool images live.
t0=$(now_ms)
dd if=/dev/zero of="$DISK_flash" bs=1M count=31 seek=80 oflag=direct conv=fsync 2>/dev/null
t1=$(now_ms)
dd_ms=$((t1 - t0))
check_eq baseline_dd_ran 1 "$([ "$dd_ms" -gt 0 ] && echo 1 || echo 0)"

check_ok load qnvram_load
i=1
while [ $i -le 7 ]; do
	qnvtest alloc 0 $i $((4 * MB)) $i >/dev/null
	i=$((i + 1))
done
check_ok fill_31_mib qnvtest alloc 0 8 $((3 * MB)) 8
total_ns=0
total_bytes=0
for run in 1 2 3; do
	check_ok "flush_$run" mobioctl qnvram flush
	total_ns=$((total_ns + $(qnvram_stat last_flush_ns)))
	total_bytes=$((total_bytes + $(qnvram_stat last_flush_bytes)))
done
flush_kbps=$((total_bytes / 1024 * 1000000 / (total_ns / 1000)))
dd_kbps=$((31 * 1024 * 1000 / dd_ms))
note "BENCH flush_bytes $((total_bytes / 3))"
note "BENCH flush_ms $((total_ns / 3000000))"
note "BENCH flush_kib_s $flush_kbps"
note "BENCH dd_direct_ms $dd_ms"
note "BENCH dd_direct_kib_s $dd_kbps"
note "BENCH flush_vs_dd_ratio $((flush_kbps * 100 / dd_kbps))%"
rmmod qnvram
finish
