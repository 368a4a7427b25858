#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# smartio-iosched.ko on a virtio disk: autoload by its alias, tunables (bad
# values rejected, old value kept), counters through debugfs and mobioctl,
# ionice classes reaching their queues, discard and flush, the tracepoint,
# nr_requests changes, and rmmod refused while in use, accepted after.
# vm-disk: data 64M
# vm-timeout: 240
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

dev=${DISK_data#/dev/}
kver=$(uname -r)

# --- autoload: "echo smartio > scheduler" finds smartio-iosched by alias ----
mkdir -p "/lib/modules/$kver/extra"
cp $SMARTIO_KO "/lib/modules/$kver/extra/"
depmod "$kver" 2>/dev/null || depmod
: >/tmp/.mobio_first_insmod
echo "<4>mobio: first insmod (smartio autoload)" >/dev/kmsg
check_eq modinfo_alias smartio-iosched "$(modinfo -F alias $SMARTIO_KO 2>/dev/null | grep -x smartio-iosched)"
if sched_set "$dev" smartio; then
	pass autoload_by_scheduler_name
else
	fail autoload_by_scheduler_name "expected [smartio] after echo smartio, saw '$(cat /sys/block/$dev/queue/scheduler)'"
	smartio_load
	sched_set "$dev" smartio
fi
check_eq scheduler_in_use smartio "$(sched_now "$dev")"

# --- tunables -----------------------------------------------------------------
io=/sys/block/$dev/queue/iosched
for t in read_expire_ms write_expire_ms write_cap controller \
	target_slowdown_pct read_lat_target_us read_lat_pct write_rate_kbps write_budget_kb \
	window_ms read_idle_us write_merge_kb idle_grace_ms idle_expire_ms \
	bg_read_cap; do
	[ -f "$io/$t" ] || fail "tunable_$t" "expected $io/$t"
done
check_eq default_write_expire_ms 500 "$(cat $io/write_expire_ms)"
check_eq default_controller 1 "$(cat $io/controller)"
check_eq default_write_budget_kb 512 "$(cat $io/write_budget_kb)"
check_eq default_write_rate_kbps 0 "$(cat $io/write_rate_kbps)"
check_eq default_read_idle_us 100000 "$(cat $io/read_idle_us)"
check_eq default_target_slowdown_pct 110 "$(cat $io/target_slowdown_pct)"
check_eq default_read_lat_pct 90 "$(cat $io/read_lat_pct)"
check_eq default_idle_grace_ms 20 "$(cat $io/idle_grace_ms)"
check_eq default_idle_expire_ms 500 "$(cat $io/idle_expire_ms)"

# bad_value TUNABLE VALUE: the write fails with EINVAL and the value stays
bad_value() {
	local before after err
	before=$(cat "$io/$1")
	err=$(printf '%s\n' "$2" | dd of="$io/$1" 2>&1)
	rc=$?
	after=$(cat "$io/$1")
	if [ "$before" = "$after" ] && echo "$err" | grep -q "Invalid argument"; then
		pass "rejects_${1}_$3"
	else
		fail "rejects_${1}_$3" "expected EINVAL and $before kept for '$2', saw rc $rc '$err', value $after"
	fi
}
for t in read_expire_ms write_expire_ms write_cap controller \
	target_slowdown_pct read_lat_target_us read_lat_pct write_rate_kbps write_budget_kb \
	window_ms read_idle_us write_merge_kb idle_grace_ms idle_expire_ms \
	bg_read_cap; do
	bad_value $t -1 negative
	bad_value $t 99999999999999999999 huge
	bad_value $t abc non_numeric
done
bad_value write_cap 0 below_min
bad_value write_cap 4097 above_max
bad_value controller 2 above_max
bad_value write_budget_kb 3 below_min
bad_value write_rate_kbps 67108865 above_max
bad_value target_slowdown_pct 99 below_min
bad_value read_lat_pct 49 below_min
bad_value read_lat_pct 100 above_max
bad_value read_expire_ms 0 zero
bad_value write_expire_ms 60001 above_max
bad_value write_cap "" empty
bad_value write_cap 1.5 fraction
bad_value write_merge_kb 1048577 above_max
bad_value idle_grace_ms 60001 above_max
bad_value idle_expire_ms 0 zero
bad_value idle_expire_ms 60001 above_max
bad_value bg_read_cap 0 zero
bad_value bg_read_cap 4097 above_max
check_eq default_write_merge_kb 128 "$(cat $io/write_merge_kb)"
echo 8 >$io/write_cap
check_eq accepts_write_cap_8 8 "$(cat $io/write_cap)"
echo 16 >$io/write_cap

# --- counters -----------------------------------------------------------------
s=/sys/kernel/debug/block/$dev/sched/stats
check_ok debugfs_stats_exist test -r $s
r0=$(smartio_stat "$dev" dispatched_be_read)
dd if=$DISK_data of=/dev/null bs=4k count=200 iflag=direct 2>/dev/null
check_ge be_reads_counted $((r0 + 200)) "$(smartio_stat "$dev" dispatched_be_read)"
w0=$(smartio_stat "$dev" dispatched_be_write)
dd if=/dev/zero of=$DISK_data bs=64k count=32 oflag=direct conv=fsync 2>/dev/null
check_ge be_writes_counted $((w0 + 32)) "$(smartio_stat "$dev" dispatched_be_write)"

rt0=$(smartio_stat "$dev" dispatched_rt_read)
ionice -c 1 -n 0 dd if=$DISK_data of=/dev/null bs=4k count=50 iflag=direct 2>/dev/null
check_ge ionice_rt_reads_in_rt_queue $((rt0 + 50)) "$(smartio_stat "$dev" dispatched_rt_read)"
id0=$(smartio_stat "$dev" dispatched_idle_write)
ionice -c 3 dd if=/dev/zero of=$DISK_data bs=4k count=50 oflag=direct 2>/dev/null
check_ge ionice_idle_writes_in_idle_queue $((id0 + 50)) "$(smartio_stat "$dev" dispatched_idle_write)"

if [ "$(cat /sys/block/$dev/queue/discard_max_bytes)" != 0 ]; then
	check_ok discard_through_smartio blkdiscard -o 0 -l 1048576 $DISK_data
else
	log "no discard on $dev: skipped"
fi
check_ok flush_through_smartio dd if=/dev/zero of=$DISK_data bs=4k count=8 conv=fsync

# mobioctl over the genl family
out=$(mobioctl smartio stats "$dev")
check_eq mobioctl_stats_has_reads 1 "$(echo "$out" | grep -c '^dispatched_be_read [1-9]')"
out=$(mobioctl --json smartio stats "/dev/$dev")
check_eq mobioctl_json_names_dev 1 "$(echo "$out" | grep -c "\"dev\": *\"$dev\"")"
out=$(mobioctl smartio stats nosuchdisk 2>&1)
rc=$?
check_eq mobioctl_unknown_dev_exit 1 $rc
check_eq mobioctl_unknown_dev_says_why 1 "$(echo "$out" | grep -c 'no disk of that name uses smartio')"

# --- tracepoint ---------------------------------------------------------------
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
tr=/sys/kernel/tracing
if [ -d $tr/events/smartio ]; then
	echo 1 >$tr/events/smartio/smartio_dispatch/enable
	dd if=$DISK_data of=/dev/null bs=4k count=10 iflag=direct 2>/dev/null
	echo 0 >$tr/events/smartio/smartio_dispatch/enable
	check_ge tracepoint_dispatch_read_first 1 "$(grep -c 'smartio_dispatch:.* be read read-first' $tr/trace)"
else
	fail tracepoint_dispatch_read_first "expected $tr/events/smartio"
fi

# --- nr_requests ----------------------------------------------------------------
check_ok nr_requests_16 sh -c "echo 16 >/sys/block/$dev/queue/nr_requests"
check_eq nr_requests_seen_16 16 "$(smartio_stat "$dev" nr_requests)"
a16=$(smartio_stat "$dev" async_depth)
echo 1 >/sys/block/$dev/queue/nr_requests
n1=$(cat /sys/block/$dev/queue/nr_requests)
check_eq nr_requests_seen_min "$n1" "$(smartio_stat "$dev" nr_requests)"
a1=$(smartio_stat "$dev" async_depth)
check_ge async_depth_at_least_1 1 "$a1"
log "nr_requests 16 -> async_depth $a16; nr_requests $n1 -> async_depth $a1"
check_ok io_with_min_nr_requests dd if=$DISK_data of=/dev/null bs=4k count=100 iflag=direct
echo 64 >/sys/block/$dev/queue/nr_requests

# --- rmmod ----------------------------------------------------------------------
rmmod smartio_iosched 2>/dev/null
check_eq rmmod_in_use_refused smartio "$([ -d /sys/module/smartio_iosched ] && sched_now "$dev")"
check_ok switch_away sched_set "$dev" mq-deadline
check_ok rmmod_not_in_use rmmod smartio_iosched
check_eq module_gone 0 "$([ -d /sys/module/smartio_iosched ] && echo 1 || echo 0)"
check_ok reload_and_use sh -c "insmod $SMARTIO_KO && echo smartio >/sys/block/$dev/queue/scheduler"
check_ok io_after_reload dd if=$DISK_data of=/dev/null bs=4k count=10 iflag=direct
sched_set "$dev" none
rmmod smartio_iosched
finish
