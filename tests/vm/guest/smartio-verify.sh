#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Data through smartio comes back intact: fio verify (crc32c) with mixed
# reads, writes (direct, O_SYNC = FUA, buffered + fsync = flushes) and
# discards, on a null_blk device with two hardware queues, a volatile cache
# and discard, on a bandwidth-throttled one (requests bounced back by the
# driver), and on a virtio disk. No I/O may take more than 5 s (fio
# max_latency), and every request leaves the scheduler.
# vm-disk: data 256M
# vm-kmod: null_blk
# vm-bin: /usr/bin/fio
# vm-timeout: 300
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

kmod_load null_blk nr_devices=0
smartio_load

# verify_mix NAME DEV: the mixed verify workload on DEV, through smartio
verify_mix() {
	local name=$1 dev=$2 d=${2#/dev/}
	if ! sched_set "$d" smartio; then
		fail "${name}_uses_smartio" "expected [smartio], saw '$(cat /sys/block/$d/queue/scheduler)'"
		return
	fi
	fio_ok "${name}_fio_verify_mixed" --filename="$dev" --max_latency=5s \
		--verify=crc32c --verify_fatal=1 --do_verify=1 --group_reporting=0 \
		--name=randrw --direct=1 --ioengine=libaio --iodepth=8 --rw=randrw \
		--bsrange=4k-64k --offset=0 --size=24M --verify_backlog=64 --fsync=16 \
		--name=fua --direct=1 --sync=1 --ioengine=psync --rw=randwrite \
		--bs=8k --offset=24M --size=8M --verify_backlog=32 \
		--name=buffered --direct=0 --ioengine=psync --rw=write --bs=16k \
		--offset=32M --size=16M --fsync=8 \
		--name=trim --direct=1 --ioengine=psync --rw=randtrim --bs=64k \
		--offset=48M --size=16M --verify=0 --do_verify=0 \
		--name=reader --direct=1 --ioengine=libaio --iodepth=4 --rw=randread \
		--bs=4k --offset=64M --size=16M --verify=0 --do_verify=0
	check_eq "${name}_reads_all_completed" 0 "$(smartio_stat "$d" reads_inflight)"
	check_eq "${name}_writes_all_completed" 0 "$(smartio_stat "$d" writes_inflight)"
	log "$name: $(tr '\n' ' ' </sys/kernel/debug/block/$d/sched/stats)"
	check_ge "${name}_writes_dispatched" 1 "$(smartio_stat "$d" dispatched_be_write)"
	check_ok "${name}_switch_away" sched_set "$d" none
}

nb=$(nullb_make nullb0 size=128 memory_backed=1 discard=1 cache_size=32 \
	submit_queues=2 hw_queue_depth=16 irqmode=2 completion_nsec=20000)
check_ge nullb_several_hw_queues 2 "$(ls /sys/block/nullb0/mq | grep -c "^[0-9]")"
verify_mix nullb_cache_discard_2hwq "$nb"

nb=$(nullb_make nullb1 size=128 memory_backed=1 discard=1 mbps=64 submit_queues=1 \
	hw_queue_depth=8 irqmode=2 completion_nsec=20000)
verify_mix nullb_throttled "$nb"

verify_mix virtio "$DISK_data"
finish
