#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# smartio under dm-crypt, the stack a phone's data partition has (dm-crypt or
# dm-default-key over the flash's request queue). dm-crypt is bio-based:
# smartio schedules the requests its clones make on the null_blk below.
# - The foreground survives the stack: dm-crypt submits a read's clone from
#   the reader's own task, so with fg_cgroup set every read of a top-app
#   reader of the dm disk is counted as foreground on the null_blk, other
#   apps' reads through it are held to bg_read_cap, and the foreground
#   reader's mean latency is lower than with fg_cgroup unset (each round's
#   against the other's, background readers 32 deep through dm-crypt).
# - Writes come from dm-crypt's own threads (encryption, then its write
#   thread), not from the writer: they are writes all the same, paced beside
#   the reader (write_held counts them) and still done.
# - What is written through the crypt comes back: fio writes and verifies
#   through dm-crypt while the null_blk's scheduler is switched between
#   smartio and none under it, with reads beside.
# vm-kmod: null_blk dm_crypt xts aesni_intel
# vm-bin: /usr/bin/fio /usr/sbin/dmsetup
# vm-timeout: 300
# vm-alone: foreground read latency compared between two rounds
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

MB=256
export DM_DISABLE_UDEV=1	# no udev in the initramfs
cgroups_top_app_bg

# 8 tags, 2 ms a request: a queue a foreground read can wait in; memory
# backed, so what is written can be read back
smartio_nullb0 hw_queue_depth=8 completion_nsec=2000000 memory_backed=1
echo 64 >/sys/block/nullb0/queue/nr_requests
io=/sys/block/nullb0/queue/iosched
kmod_load dm_crypt
kmod_load xts
kmod_load aesni_intel 2>/dev/null || log "aesni_intel did not load: generic AES"
key=$(od -An -tx1 -N64 /dev/urandom | tr -d ' \n')
check_ok dm_crypt_create dmsetup create --noudevsync siocrypt \
	--table "0 $((MB * 2048)) crypt aes-xts-plain64 $key 0 /dev/nullb0 0"
crypt=/dev/mapper/siocrypt
# fio would write a regular file of that name
[ -b $crypt ] || { fail dm_crypt_node "expected the block device $crypt"; finish; }


# --- the foreground through dm-crypt ----------------------------------------------
# round MODE: background readers of the dm disk for 6 s, a foreground reader
# of it for 3 s from 1.5 s in; fg_cgroup set (on) or not (off)
round() {
	local mode=$1 fg0 held0 bg_pid fg_pid
	if [ "$mode" = on ]; then echo /top-app >$io/fg_cgroup; else echo >$io/fg_cgroup; fi
	fg0=$(smartio_stat nullb0 dispatched_fg_read)
	held0=$(smartio_stat nullb0 bg_read_held)
	in_cgroup bg fio --filename=$crypt --output-format=json --time_based \
		--runtime=6 --name=bg --direct=1 --ioengine=libaio --iodepth=16 \
		--numjobs=2 --group_reporting --rw=randread --bs=4k --size=128M \
		>/tmp/bg-$mode.json 2>&1 &
	bg_pid=$!
	sleep 1.5
	in_cgroup top-app fio --filename=$crypt --output-format=json \
		--time_based --runtime=3 --name=fg --direct=1 --ioengine=psync \
		--rw=randread --bs=4k --offset=128M --size=64M \
		>/tmp/fg-$mode.json 2>&1 &
	fg_pid=$!
	wait $fg_pid
	check_eq "fg_${mode}_fio_ok" 0 $?
	wait $bg_pid
	check_eq "bg_${mode}_fio_ok" 0 $?
	lat=$(fio_mean_lat_us /tmp/fg-$mode.json read)
	fg_ios=$(fio_total_ios /tmp/fg-$mode.json read)
	fg_counted=$(($(smartio_stat nullb0 dispatched_fg_read) - fg0))
	bg_held=$(($(smartio_stat nullb0 bg_read_held) - held0))
	log "$mode: foreground through dm-crypt: mean latency $lat us over $fg_ios reads ($fg_counted counted as foreground on nullb0); background $(fio_total_ios /tmp/bg-$mode.json read) reads, held $bg_held times"
}

round off
off_lat=$lat
check_eq off_nothing_counted_fg 0 "$fg_counted"
round on
on_lat=$lat
check_ge on_fg_reads_counted_below_crypt "$fg_ios" "$fg_counted"
check_le on_only_fg_reads_counted $((fg_ios + 10)) "$fg_counted"
check_ge on_bg_reads_held 1 "$bg_held"
# off: behind the background's queued reads; on: at the next free tag
check_le on_fg_faster_through_crypt $((off_lat * 6 / 10)) "$on_lat"
echo >$io/fg_cgroup

# --- writes from dm-crypt's threads beside a reader -----------------------------------
# dm-crypt's writes reach smartio from its kworkers: they are writes the rate
# holds. A latency target no read meets (100 us) makes the controller cut to
# the floor whatever these writes cost the reads, so a hold is certain if
# they are gated; under the slowdown target it depends on how much they slow
# the reader, which on 6.1 was 1.24x its fastest read (no hold). A fresh
# elevator: the rounds' reads taught the 4 KiB class a baseline of their own.
sched_set nullb0 none && sched_set nullb0 smartio
echo 100 >$io/read_lat_target_us
h0=$(smartio_stat nullb0 write_held)
fio --filename=$crypt --output-format=json --direct=1 --time_based --runtime=4 \
	--name=reader --rw=randread --bs=4k --ioengine=psync --size=128M \
	--name=writer --rw=randwrite --bs=128k --ioengine=libaio --iodepth=8 \
	--offset=128M --size=128M >/tmp/crypt-rw.json 2>&1
check_eq crypt_rw_fio_ok 0 $?
held=$(($(smartio_stat nullb0 write_held) - h0))
wios=$(fio_total_ios /tmp/crypt-rw.json write)
log "reader and writer through dm-crypt: $(fio_total_ios /tmp/crypt-rw.json read) reads, $wios writes, smartio held writes $held times; $(tr '\n' ' ' </sys/kernel/debug/block/nullb0/sched/stats | grep -o 'write_rate_kbps [0-9]*\|read_lat_us [0-9]*\|read_slowdown_pct [0-9]*\|read_baseline_4k_us [0-9]*\|controller_[a-z]* [0-9]*\|dispatched_be_[a-z]* [0-9]*\|expired_be_write [0-9]*' | tr '\n' ' ')"
check_ge crypt_writes_paced 1 "$held"
# the floor (512 KiB per 500 ms) lets 8 writes of 128 KiB a second at least
check_ge crypt_writes_done $((4 * 8 * 3 / 4)) "$wios"
echo 0 >$io/read_lat_target_us

# --- data through dm-crypt while the scheduler below changes -----------------------------
fio --filename=$crypt --name=verify --rw=randwrite --bs=4k-64k --direct=1 \
	--ioengine=libaio --iodepth=8 --size=64M --verify=crc32c --verify_fatal=1 \
	--do_verify=1 >/tmp/crypt-verify.log 2>&1 &
vpid=$!
fio --filename=$crypt --name=reads --rw=randread --bs=16k --direct=1 \
	--ioengine=psync --offset=128M --size=64M --time_based --runtime=3600 \
	>/dev/null 2>&1 &
rpid=$!
switched=0
while kill -0 $vpid 2>/dev/null; do
	s=smartio
	[ "$(sched_now nullb0)" = smartio ] && s=none
	sched_set nullb0 $s && switched=$((switched + 1))
	sleep 0.3
done
wait $vpid
rc=$?
kill $rpid 2>/dev/null
wait $rpid 2>/dev/null
log "verify through dm-crypt: $switched scheduler switches below it"
# verify_fatal: a block read back wrong ends fio with an error
if [ $rc -eq 0 ] && ! grep -qE 'err= *[1-9]|verify failed|bad (magic|header)' /tmp/crypt-verify.log; then
	pass crypt_verify_across_switches
else
	fail crypt_verify_across_switches "expected fio verify ok, saw exit $rc: $(grep -iE 'err=|failed|bad ' /tmp/crypt-verify.log | head -n 3 | tr '\n' ' ')"
fi
check_ge crypt_switched_under_io 2 "$switched"

check_ok dm_crypt_remove dmsetup remove siocrypt
sched_set nullb0 none
finish
