#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Who may do what with smartio-iosched.ko: its tunables
# (/sys/block/DEV/queue/iosched/) and the choice of scheduler are root's
# (the block layer makes them root-owned, mode 0644): another user's writes
# are refused and change nothing; any user reads the counters (mobioctl
# smartio stats). The netlink fuzzer as that user, under I/O: smartio-fuzz.
# vm-disk: data 16M
# vm-timeout: 120
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

dev=${DISK_data#/dev/}
io=/sys/block/$dev/queue/iosched
U=1000

smartio_load
check_ok scheduler_set sched_set "$dev" smartio
check_eq tunables_root_owned "-rw-r--r-- root" \
	"$(ls -l $io/write_cap | awk '{ print $1, $3 }')"
check_eq scheduler_file_root_owned "-rw-r--r-- root" \
	"$(ls -l /sys/block/$dev/queue/scheduler | awk '{ print $1, $3 }')"
for t in write_cap write_rate_kbps controller target_slowdown_pct read_expire_ms; do
	v=$(cat $io/$t)
	err=$(qnvtest setuid $U sh -c "echo 1000 >$io/$t" 2>&1)
	check_eq "user_cannot_set_$t" "$v" "$(cat $io/$t)"
	check_eq "user_set_${t}_eacces" 1 "$(echo "$err" | grep -c 'Permission denied')"
done
check_ok user_reads_tunable qnvtest setuid $U cat $io/write_cap
# an app cannot make its own cgroup the foreground
err=$(qnvtest setuid $U sh -c "echo / >$io/fg_cgroup" 2>&1)
check_eq user_cannot_set_fg_cgroup "" "$(cat $io/fg_cgroup)"
check_eq user_set_fg_cgroup_eacces 1 "$(echo "$err" | grep -c 'Permission denied')"
qnvtest setuid $U sh -c "echo none >/sys/block/$dev/queue/scheduler" 2>/dev/null
check_eq user_cannot_change_scheduler smartio "$(sched_now "$dev")"
check_ok user_reads_counters qnvtest setuid $U mobioctl smartio stats "$dev"
echo 8 >$io/write_cap
check_eq root_sets_write_cap 8 "$(cat $io/write_cap)"
echo 16 >$io/write_cap

check_ok scheduler_back_to_none sched_set "$dev" none
check_ok rmmod_smartio rmmod smartio_iosched
finish
