#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The qNVRAM paper's SQLite benchmark (Fig. 4 and 5) in the VM: every journal
# mode and pPCache side by side, on ext4 over two device models:
#
#   virtio  the plain virtio disk (QEMU cache=writeback: a guest flush is a
#           host fdatasync of the image file)
#   flash   the same disk under dm-delay: every write request waits
#           SQLBENCH_WRITE_MS, every flush (REQ_PREFLUSH: ext4 journal
#           commits, fdatasync's cache flush) SQLBENCH_FLUSH_MS, reads none.
#           eMMC-like: a small write ~1 ms, a cache flush several ms. dm-delay
#           counts in jiffies (HZ=250 on Debian's kernels: 4 ms), so the
#           effective latencies are printed too ("PROBE" lines).
#   flash-w0  the same with no write delay (flushes only): a sensitivity
#           check, since dm-delay turns the 1 ms write delay into ~4 ms
#
# qNVRAM: the reserved 32 MiB pool, backed by its own flash disk.
# Settings from the kernel command line (make bench-sqlite passes them with
# MOBIO_VM_APPEND): sqlbench.runs=N sqlbench.first=N (number of the first
# run: make bench-sqlite boots once per run) sqlbench.ops=N sqlbench.models=a,b
# sqlbench.write_ms=N sqlbench.flush_ms=N sqlbench.modes=a,b.
# Every output line of sqlbench becomes a note; bench/sqlite/report.py turns
# events.txt into the CSV, the table and the chart.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 1024M
# vm-kmod: ext4 dm_delay
# vm-bin: /sbin/mkfs.ext4 /sbin/dmsetup
# vm-timeout: 14400
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

RUNS=10
FIRST=1
OPS=1000
MODELS=virtio,flash
MODES=
SQLBENCH_WRITE_MS=1
SQLBENCH_FLUSH_MS=5
for w in $(cat /proc/cmdline); do
	case "$w" in
	sqlbench.runs=*) RUNS=${w#*=} ;;
	sqlbench.first=*) FIRST=${w#*=} ;;
	sqlbench.ops=*) OPS=${w#*=} ;;
	sqlbench.models=*) MODELS=${w#*=} ;;
	sqlbench.modes=*) MODES=${w#*=} ;;
	sqlbench.write_ms=*) SQLBENCH_WRITE_MS=${w#*=} ;;
	sqlbench.flush_ms=*) SQLBENCH_FLUSH_MS=${w#*=} ;;
	esac
done

MNT=/mnt/db
DATA_DEV=${DISK_data#/dev/}
DM_NAME=flashdelay

# run_model NAME BLOCKDEV: mkfs, mount, probe, benchmark, unmount
run_model() {
	local model=$1 dev=$2 rc
	mkdir -p $MNT
	if ! mkfs.ext4 -q -F "$dev" >/tmp/mkfs.out 2>&1; then
		fail "mkfs_$model" "expected mkfs.ext4 $dev to work, saw: $(tail -n 2 /tmp/mkfs.out | tr '\n' ' ')"
		return 1
	fi
	if ! mount -t ext4 "$dev" $MNT; then
		fail "mount_$model" "expected mount of $dev to work"
		return 1
	fi
	sqlbench --probe $MNT 50 | while read -r l; do note "$l,$model"; done
	{
		sqlbench --dir $MNT --model "$model" --dev "$DATA_DEV" --runs "$RUNS" \
			--first-run "$FIRST" --ops "$OPS" ${MODES:+--modes "$MODES"} 2>&1
		echo "RC $?"
	} | while read -r l; do
		case "$l" in
		"RC "*) echo "${l#RC }" >/tmp/sqlbench.rc ;;
		*) note "$l" ;;
		esac
	done
	rc=$(cat /tmp/sqlbench.rc)
	check_eq "sqlbench_${model}_exit_status" 0 "$rc"
	umount $MNT
}

kmod_load ext4 || fail kmod_ext4 "expected ext4 to load"
kmod_load dm_delay || fail kmod_dm_delay "expected dm_delay to load"
check_ok qnvram_load qnvram_load
note "# device models: virtio=$DISK_data flash=dm-delay over $DISK_data" \
	"write_ms=$SQLBENCH_WRITE_MS flush_ms=$SQLBENCH_FLUSH_MS read_ms=0; runs=$FIRST..$((FIRST + RUNS - 1)) ops=$OPS"

for model in $(echo "$MODELS" | tr ',' ' '); do
	case $model in
	virtio)
		run_model virtio "$DISK_data"
		;;
	flash | flash-w0)
		# flash-w0: the same without the write delay, to show how much
		# the ratios owe to the write latency (dm-delay rounds 1 ms up to
		# a jiffy)
		wms=$SQLBENCH_WRITE_MS
		[ $model = flash-w0 ] && wms=0
		sectors=$(blockdev --getsz "$DISK_data")
		# <dev> <off> <read_ms> <wdev> <off> <write_ms> <fdev> <off> <flush_ms>
		table="0 $sectors delay $DISK_data 0 0 $DISK_data 0 $wms $DISK_data 0 $SQLBENCH_FLUSH_MS"
		if DM_DISABLE_UDEV=1 dmsetup create --noudevsync $DM_NAME --table "$table" 2>/tmp/dm.err; then
			pass "dmsetup_create_delay_$model"
			dmsetup mknodes $DM_NAME 2>/dev/null
			note "# model $model: dm-delay table: $table"
			run_model $model /dev/mapper/$DM_NAME
			DM_DISABLE_UDEV=1 dmsetup remove --noudevsync $DM_NAME
		else
			fail "dmsetup_create_delay_$model" "expected dm-delay table '$table' to load, saw: $(cat /tmp/dm.err)"
		fi
		;;
	*)
		fail "model_$model" "expected virtio or flash, saw $model"
		;;
	esac
done
rmmod qnvram
finish
