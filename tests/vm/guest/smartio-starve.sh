#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Write starvation is bounded: under a continuous read stream a write still
# completes within write_expire_ms (+ a tolerance for TCG), first with the
# write rate set so that only the floor lets writes through (1 KiB/s, a 4 KiB
# write every 4 s; the floor 4 KiB per 200 ms), then with the defaults
# (the controller on, expire 500 ms, floor 512 KiB per 500 ms), then with
# the defaults after seconds of writes alone.
# vm-kmod: null_blk
# vm-bin: /usr/bin/fio
# vm-timeout: 200
# vm-alone: write latency within the expiry plus a tolerance
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

# TCG timer and scheduling noise on top of the deadline, ms
TOLERANCE_MS=300

smartio_nullb0 hw_queue_depth=32 completion_nsec=100000
io=/sys/block/nullb0/queue/iosched

# starve NAME EXPIRE_MS: readers flat out, one writer; its worst latency
starve() {
	fio --filename=/dev/nullb0 --output-format=json --time_based --runtime=8 \
		--name=readers --direct=1 --ioengine=libaio --iodepth=16 --numjobs=2 \
		--rw=randread --bs=4k --size=128M \
		--name=writer --direct=1 --ioengine=libaio --iodepth=1 --rw=randwrite \
		--bs=4k --offset=128M --size=64M --rate_iops=20 \
		>/tmp/starve-$1.json 2>/tmp/starve-$1.err
	check_eq "${1}_fio_ok" 0 $?
	lat=$(fio_max_lat_ms /tmp/starve-$1.json write)
	n=$(fio_total_ios /tmp/starve-$1.json write)
	r=$(fio_total_ios /tmp/starve-$1.json read)
	log "$1: $n writes (max latency $lat ms) beside $r reads; expired_be_write $(smartio_stat nullb0 expired_be_write)"
	check_ge "${1}_writes_progress" "$3" "$n"
	check_le "${1}_write_latency_within_expiry" $(($2 + TOLERANCE_MS)) "$lat"
}

echo 0 >$io/controller
echo 1 >$io/write_cap
echo 1 >$io/write_rate_kbps
echo 200 >$io/write_expire_ms
echo 4 >$io/write_budget_kb
# reads count as inactive only after 50 ms without one: on TCG the readers
# stall for a few ms now and then, and an inactive moment lets a write past
# the rate, which is not what this phase measures
echo 50000 >$io/read_idle_us
# one write in flight at a time, each waits for its deadline: 8 s / (200 ms
# + its service) is about 38
starve rate_1k_expire_200ms 200 30
check_ge deadline_released_most_writes $((n / 2)) "$(smartio_stat nullb0 expired_be_write)"

sched_set nullb0 none
sched_set nullb0 smartio
starve defaults_expire_500ms 500 40

# After seconds of writes alone (no read around: unthrottled, each charged
# to the buckets), readers come: the writes that went alone must not hold
# the next ones past the bound. Before the buckets' debt was bounded to one
# write, 2 s of writes alone owed both buckets hundreds of MiB at 1 MiB/s,
# and the measured writer waited out the whole phase. A fixed rate of
# 1 MiB/s, so that a debt is felt (the controller starts at no limit).
echo 0 >$io/controller
echo 1024 >$io/write_rate_kbps
fio --filename=/dev/nullb0 --output-format=json --time_based \
	--name=alone --direct=1 --ioengine=libaio --iodepth=16 --rw=write \
	--bs=128k --offset=192M --size=64M --runtime=2 \
	--name=readers --direct=1 --ioengine=libaio --iodepth=16 --numjobs=2 \
	--rw=randread --bs=4k --size=128M --startdelay=2 --runtime=6 \
	--name=writer --direct=1 --ioengine=libaio --iodepth=1 --rw=randwrite \
	--bs=4k --offset=128M --size=64M --rate_iops=20 --startdelay=2 --runtime=6 \
	>/tmp/starve-after.json 2>/tmp/starve-after.err
check_eq after_alone_fio_ok 0 $?
lat=$(fio_max_lat_ms /tmp/starve-after.json write)
n=$(fio_total_ios /tmp/starve-after.json write)
log "after writes alone: $n writes (max latency $lat ms)"
# the deadline, then one 128 KiB write's debt at the floor (1 MiB/s: 125 ms)
check_le after_alone_write_latency_within_bound $((500 + 125 + TOLERANCE_MS)) "$lat"
finish
