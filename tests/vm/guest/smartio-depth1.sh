#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# smartio with a single driver tag: null_blk hw_queue_depth=1 (one and two
# hardware queues), the scheduler's nr_requests at its default (2) and at
# the sysfs minimum (writing 1 gives 4: BLKDEV_MIN_RQ), mixed verified I/O
# with flushes and discards completes, nothing left in flight.
# vm-kmod: null_blk
# vm-bin: /usr/bin/fio
# vm-timeout: 240
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

kmod_load null_blk nr_devices=0
smartio_load

depth1() {
	local name=$1 d=$2 nr=$3
	sched_set "$d" smartio || fail "${name}_uses_smartio" "saw $(cat /sys/block/$d/queue/scheduler)"
	[ -n "$nr" ] && echo "$nr" >/sys/block/$d/queue/nr_requests
	log "$name: nr_requests $(cat /sys/block/$d/queue/nr_requests), async_depth $(smartio_stat "$d" async_depth)"
	fio_ok "${name}_mixed_io_completes" --filename=/dev/$d --max_latency=5s \
		--verify=crc32c --verify_fatal=1 \
		--name=rw --direct=1 --ioengine=libaio --iodepth=4 --rw=randrw \
		--bs=4k --offset=0 --size=4M --verify_backlog=16 --fsync=8 \
		--name=seqw --direct=1 --ioengine=libaio --iodepth=4 --rw=write \
		--bs=16k --offset=4M --size=4M \
		--name=trim --direct=1 --ioengine=psync --rw=randtrim --bs=16k \
		--offset=8M --size=2M --verify=0 \
		--name=rd --direct=1 --ioengine=libaio --iodepth=4 --rw=randread \
		--bs=4k --offset=10M --size=2M --verify=0
	check_eq "${name}_nothing_in_flight" "0 0" \
		"$(smartio_stat "$d" reads_inflight) $(smartio_stat "$d" writes_inflight)"
}

nullb_make nullb0 size=32 memory_backed=1 discard=1 cache_size=8 \
	submit_queues=1 hw_queue_depth=1 irqmode=2 completion_nsec=20000 >/dev/null
check_eq one_driver_tag 1 "$(cat /sys/block/nullb0/mq/0/nr_tags)"
sched_set nullb0 smartio
check_eq sched_nr_requests_default 2 "$(cat /sys/block/nullb0/queue/nr_requests)"
depth1 hwq1_nr2 nullb0 ""
depth1 hwq1_nr_min nullb0 1
check_eq nr_requests_1_clamped_to_4 4 "$(cat /sys/block/nullb0/queue/nr_requests)"

nullb_make nullb1 size=32 memory_backed=1 discard=1 submit_queues=2 \
	hw_queue_depth=1 irqmode=2 completion_nsec=20000 >/dev/null
depth1 hwq2_depth1 nullb1 ""
finish
