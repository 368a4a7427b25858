#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Switching the scheduler between smartio and each in-tree one (mq-deadline,
# kyber, bfq, none) every 0.2 s while fio verifies mixed I/O (as blktests
# block/005 does): at least 100 switches, no hang, no error, no bad data.
# vm-kmod: null_blk kyber-iosched bfq
# vm-bin: /usr/bin/fio
# vm-timeout: 240
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

kmod_load null_blk nr_devices=0
command insmod /kmod/kyber_iosched.ko
command insmod /kmod/bfq.ko
smartio_load
nullb_make nullb0 size=64 memory_backed=1 discard=1 cache_size=16 \
	submit_queues=2 hw_queue_depth=16 irqmode=2 completion_nsec=20000 >/dev/null
check_eq all_schedulers_offered 5 \
	"$(tr -d '[]' </sys/block/nullb0/queue/scheduler | tr ' ' '\n' | grep -cxE 'none|mq-deadline|kyber|bfq|smartio')"

# fio runs longer than the 120 switches take: on arm64's TCG a switch (queue
# freeze and drain) plus the 0.2 s sleep took 0.44 s, and 40 s gave only 96
fio --filename=/dev/nullb0 --max_latency=5s --verify=crc32c --verify_fatal=1 \
	--time_based --runtime=60 \
	--name=rw --direct=1 --ioengine=libaio --iodepth=8 --rw=randrw \
	--bsrange=4k-32k --offset=0 --size=16M --verify_backlog=32 --fsync=16 \
	--name=trim --direct=1 --ioengine=psync --rw=randtrim --bs=32k \
	--offset=16M --size=8M --verify=0 \
	--name=buffered --direct=0 --ioengine=psync --rw=randwrite --bs=4k \
	--offset=24M --size=8M --fsync=32 >/tmp/fio-switch.log 2>&1 &
fio_pid=$!
sleep 1

n=0
bad=0
start=$(cut -d' ' -f1 /proc/uptime)
while [ $n -lt 120 ] && kill -0 $fio_pid 2>/dev/null; do
	for other in mq-deadline kyber bfq none; do
		sched_set nullb0 smartio || bad=$((bad + 1))
		usleep 200000
		sched_set nullb0 $other || bad=$((bad + 1))
		usleep 200000
		n=$((n + 2))
	done
done
end=$(cut -d' ' -f1 /proc/uptime)
log "switches: $n in $(echo "$end - $start" | bc) s, $bad refused"
check_ge at_least_100_switches_during_fio 100 $n
check_eq every_switch_took 0 $bad
wait $fio_pid
rc=$?
check_eq fio_verify_through_switches 0 "$rc"
if [ $rc -ne 0 ]; then
	log "$(grep -iE 'err|verify|latency' /tmp/fio-switch.log | head -n 5)"
fi
sched_set nullb0 none
check_ok rmmod_after_switching rmmod smartio_iosched
finish
