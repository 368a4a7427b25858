#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The foreground app's reads (tasks of the cgroup fg_cgroup names) go ahead
# of other apps' reads, and other apps keep at most bg_read_cap reads in
# flight beside them. A null_blk of 8 tags, 2 ms a request: a background app
# with 32 reads outstanding, a foreground app reading one at a time. With
# fg_cgroup unset a foreground read queues behind the background's; set, it
# goes at the next free tag, and the controller's read latency stays the
# device's (a background read held for the cap is not latency). Modes
# interleaved (off on on off); then bad paths, a removed cgroup, and clearing.
# vm-kmod: null_blk
# vm-bin: /usr/bin/fio
# vm-timeout: 200
# vm-alone: foreground read latency against a 60% bound
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

cgroups_top_app_bg

smartio_nullb0 hw_queue_depth=8 completion_nsec=2000000
echo 64 >/sys/block/nullb0/queue/nr_requests
io=/sys/block/nullb0/queue/iosched
check_eq fg_cgroup_default_empty "" "$(cat $io/fg_cgroup)"
check_eq bg_read_cap_default 4 "$(cat $io/bg_read_cap)"


# round MODE: background readers in bg for 7 s, a foreground reader in
# top-app for 4 s from 1.5 s in; fg_cgroup set (on) or not (off)
round() {
	local mode=$1 fg0 fg1 held0 held1
	if [ "$mode" = on ]; then echo /top-app >$io/fg_cgroup; else echo >$io/fg_cgroup; fi
	fg0=$(smartio_stat nullb0 dispatched_fg_read)
	held0=$(smartio_stat nullb0 bg_read_held)
	in_cgroup bg fio --filename=/dev/nullb0 --output-format=json --time_based \
		--runtime=7 --name=bg --direct=1 --ioengine=libaio --iodepth=16 \
		--numjobs=2 --group_reporting --rw=randread --bs=4k --size=128M \
		>/tmp/bg-$mode.json 2>&1 &
	bg_pid=$!
	sleep 1.5
	in_cgroup top-app fio --filename=/dev/nullb0 --output-format=json \
		--time_based --runtime=4 --name=fg --direct=1 --ioengine=libaio \
		--iodepth=1 --rw=randread --bs=4k --offset=128M --size=64M \
		>/tmp/fg-$mode.json 2>&1 &
	fg_pid=$!
	# the controller's read latency (at read_lat_pct) of windows while both
	# run; lat_min: the least from 1.5 s in (earlier ones may still be the
	# background's alone)
	lat_seen=
	lat_min=
	for i in 1 2 3 4 5 6; do
		sleep 0.5
		l=$(smartio_stat nullb0 read_lat_us)
		lat_seen="$lat_seen $l"
		[ $i -ge 3 ] && { [ -z "$lat_min" ] || [ "$l" -lt "$lat_min" ]; } && lat_min=$l
	done
	wait $fg_pid
	check_eq "fg_${mode}_fio_ok" 0 $?
	wait $bg_pid
	check_eq "bg_${mode}_fio_ok" 0 $?
	fg1=$(smartio_stat nullb0 dispatched_fg_read)
	held1=$(smartio_stat nullb0 bg_read_held)
	lat=$(fio_mean_lat_us /tmp/fg-$mode.json read)
	fg_ios=$(fio_total_ios /tmp/fg-$mode.json read)
	bg_ios=$(fio_total_ios /tmp/bg-$mode.json read)
	fg_counted=$((fg1 - fg0))
	bg_held=$((held1 - held0))
	log "$mode: foreground mean latency $lat us over $fg_ios reads ($fg_counted counted as foreground), background $bg_ios reads ($bg_held times held); controller's read_lat_us:$lat_seen"
	check_ge "bg_${mode}_progresses" 2000 "$bg_ios"
}

round off
off1=$lat
check_eq off_nothing_counted_fg 0 "$fg_counted"
round on
on1=$lat
check_ge on_fg_reads_counted "$fg_ios" "$fg_counted"
check_le on_only_fg_reads_counted $((fg_ios + 10)) "$fg_counted"
check_ge on_bg_reads_held 1 "$bg_held"
# No write anywhere: what the controller sees is the device's 2 ms. A
# background read held for bg_read_cap starts its latency at its dispatch;
# counted from the read before it, the hold showed as 3.4-3.9 ms (6.12).
check_le on_held_reads_not_latency 2800 "$lat_min"
round on
on2=$lat
check_le on2_held_reads_not_latency 2800 "$lat_min"
round off
off2=$lat
# the foreground waits behind ~24 queued background reads (off: ~8 ms) or
# for the next free tag (on: 2-4 ms); each on round against both off rounds
for on in $on1 $on2; do
	for off in $off1 $off2; do
		check_le "fg_faster_${on}us_vs_${off}us" $((off * 6 / 10)) "$on"
	done
done

# --- bad values, a removed cgroup, clearing --------------------------------------
echo /top-app >$io/fg_cgroup
err=$(echo /no-such-cgroup 2>&1 >$io/fg_cgroup)
rc=$?
if [ $rc -ne 0 ] && echo "$err" | grep -q "No such file"; then
	pass rejects_missing_cgroup
else
	fail rejects_missing_cgroup "expected ENOENT, saw rc $rc '$err'"
fi
check_eq missing_cgroup_keeps_old /top-app "$(cat $io/fg_cgroup)"
echo "  /bg  " >$io/fg_cgroup
check_eq path_trimmed /bg "$(cat $io/fg_cgroup)"
# the cgroup goes away while it is the foreground: a reference keeps it
rmdir $CG/bg
check_ok io_after_fg_cgroup_removed dd if=/dev/nullb0 of=/dev/null bs=4k count=100 iflag=direct
check_eq removed_cgroup_still_shown /bg "$(cat $io/fg_cgroup)"
echo "   " >$io/fg_cgroup
check_eq blank_clears "" "$(cat $io/fg_cgroup)"
echo /top-app >$io/fg_cgroup
sched_set nullb0 none
check_eq exit_with_fg_cgroup_set none "$(sched_now nullb0)"
sched_set nullb0 smartio
check_eq new_instance_fg_cgroup_empty "" "$(cat $io/fg_cgroup)"
finish
