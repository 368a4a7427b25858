#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 20,000 genl-fuzz requests to the smartio family as root and 20,000 as
# another user, half of them well formed with real and unknown disk names,
# while smartio schedules the data disk under fio's mixed reads and writes.
# The family has one command, GET_STATS, for anyone: it is served for both,
# no other command is; the user changes no tunable and not the scheduler.
# Afterwards the I/O has completed without error, the counters moved,
# verified I/O still passes, the disk goes back to none, rmmod is clean and
# so is dmesg.
# vm-disk: data 16M
# vm-bin: /usr/bin/fio
# vm-timeout: 300
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh
. /mobio/tests/genl-fuzz-lib.sh

dev=${DISK_data#/dev/}
io=/sys/block/$dev/queue/iosched
U=1000
COUNT=20000
# disk names: the one smartio schedules, one it does not (the state disk),
# one that does not exist, a path, an empty and a 31-character name
HINTS="-a 2:str:$dev -a 2:str:vda -a 2:str:nosuchdisk -a 2:str:/dev/$dev
	-a 2:str: -a 2:str:abcdefghijklmnopqrstuvwxyz01234"

smartio_load
check_ok scheduler_set sched_set "$dev" smartio
echo 16 >$io/write_cap

# --- I/O running: fio, mixed random reads and writes, until stopped -------------
fio --filename="$DISK_data" --direct=1 --ioengine=libaio --time_based --runtime=600 \
	--name=rd --rw=randread --bs=4k --iodepth=4 --size=8M \
	--name=wr --rw=randwrite --bs=16k --iodepth=4 --offset=8M --size=8M \
	>/tmp/fio-bg.log 2>&1 &
fio=$!
sleep 2
d0=$(smartio_stat "$dev" dispatched_be_read)
check_ge io_running_before_fuzz 1 "$d0"

# --- root, then the user -------------------------------------------------------------
# shellcheck disable=SC2086 # HINTS are words
fuzz root /tmp/fz-root.out $HINTS smartio $COUNT 4
check_fuzz_ge root_get_stats_served /tmp/fz-root.out 1 ok 1000
check_fuzz_ge root_get_stats_sends_counters /tmp/fz-root.out 1 data 1000
check_fuzz_ge root_get_stats_other_disk_enodev /tmp/fz-root.out 1 ENODEV 100
check_fuzz_eq root_no_other_command_served /tmp/fz-root.out other ok 0
check_dmesg_clean dmesg_clean_after_root_fuzz

# shellcheck disable=SC2086 # HINTS are words
fuzz user /tmp/fz-user.out -u $U $HINTS smartio $COUNT 5
check_fuzz_ge user_get_stats_served /tmp/fz-user.out 1 ok 1000
check_fuzz_ge user_get_stats_sends_counters /tmp/fz-user.out 1 data 1000
check_fuzz_ge user_get_stats_other_disk_enodev /tmp/fz-user.out 1 ENODEV 100
check_fuzz_eq user_no_other_command_served /tmp/fz-user.out other ok 0
check_eq user_fuzz_kept_write_cap 16 "$(cat $io/write_cap)"
check_eq user_fuzz_kept_scheduler smartio "$(sched_now "$dev")"
check_eq io_running_through_fuzz 1 "$(kill -0 $fio 2>/dev/null && echo 1 || echo 0)"
check_dmesg_clean dmesg_clean_after_user_fuzz

# --- still works ---------------------------------------------------------------------
kill -INT $fio
wait $fio
rc=$?
log "fio through the fuzz (exit $rc): $(grep -E 'IOPS|err=' /tmp/fio-bg.log | tr '\n' ' ')"
check_eq fio_through_fuzz_no_error 0 "$(grep -cE 'err= *[1-9]' /tmp/fio-bg.log)"
check_ge reads_dispatched_during_fuzz $((d0 + 1)) "$(smartio_stat "$dev" dispatched_be_read)"
check_ge writes_dispatched 1 "$(smartio_stat "$dev" dispatched_be_write)"
fio_ok verified_io_after_fuzz --filename="$DISK_data" --direct=1 --ioengine=libaio \
	--name=rw --rw=randrw --bs=4k --iodepth=4 --size=4M --verify=crc32c --verify_fatal=1
check_eq nothing_in_flight "0 0" \
	"$(smartio_stat "$dev" reads_inflight) $(smartio_stat "$dev" writes_inflight)"
check_ok stats_still_served mobioctl smartio stats "$dev"
check_ok scheduler_back_to_none sched_set "$dev" none
check_ok rmmod_smartio rmmod smartio_iosched
check_dmesg_clean dmesg_clean_after_rmmod
finish
