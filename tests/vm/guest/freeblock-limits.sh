#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# What a /dev/freeblock user can cost others: the rings of one uid's files
# are capped (uid_ring_kib), those of all users too (total_ring_kib), and a
# registration past a cap, or past max_tasks, fails with its errno before
# any ring is allocated (a fresh memory cgroup's memory.peak stays below
# the ring's size); each ring is charged to the registering process's
# memory cgroup (memory.current grows by its size), and a cgroup whose
# memory.max is below the ring gets ENOMEM, without an OOM kill. The
# module's own count (debugfs freeblock/rings) and VmallocUsed stay
# within the caps.
# vm-disk: data 32M
# vm-timeout: 240
. /mobio/tests/lib.sh
. /mobio/tests/freeblock-lib.sh

dev=${DISK_data#/dev/}
P=/sys/module/freeblock/parameters
R=/sys/kernel/debug/freeblock/rings
CG=/sys/fs/cgroup
MIB=1048576
# a ring of 7 slots of 1 MiB: the header page, one page of descriptors
RING7=$((7 * MIB + 8192))

as_uid() {
	local uid=$1
	shift
	qnvtest setuid "$uid" "$@"
}

# ring_bytes [UID]: ring bytes held by UID (all uids: the total)
ring_bytes() {
	if [ -n "$1" ]; then
		awk -v u="$1" '$1 == "uid" && $2 == u { print $3; f = 1 } END { if (!f) print 0 }' $R
	else
		awk '$1 == "total" { print $2 }' $R
	fi
}

vmalloc_kb() {
	awk '$1 == "VmallocUsed:" { print $2 }' /proc/meminfo
}

# hold NAME UID CGROUP BS SLOTS COUNT: fbtest rings ... hold in the
# background ($CGROUP "" for the root cgroup); its first line in
# /tmp/NAME.out once it holds, its pid in $held
hold() {
	local name=$1 uid=$2 cg=$3 i=0
	shift 3
	rm -f /tmp/$name.out
	sh -c "[ -z '$cg' ] || echo \$\$ >$CG/$cg/cgroup.procs; exec qnvtest setuid $uid fbtest rings $DISK_data $* hold" >/tmp/$name.out 2>&1 &
	held=$!
	while ! grep -q holding /tmp/$name.out 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# once UID CGROUP BS SLOTS COUNT: fbtest rings without holding, in CGROUP
once() {
	local uid=$1 cg=$2
	shift 2
	sh -c "[ -z '$cg' ] || echo \$\$ >$CG/$cg/cgroup.procs; exec qnvtest setuid $uid fbtest rings $DISK_data $*" 2>&1
}

release() {
	kill "$@" 2>/dev/null
	wait "$@" 2>/dev/null
	sleep 0.2
}

check_ok insmod_freeblock insmod $FB_KO
chmod 0644 "$DISK_data"	# readable by everyone, as a disk group would give

# --- parameters -----------------------------------------------------------------
check_eq uid_ring_kib_default 131072 "$(cat $P/uid_ring_kib)"
check_eq total_ring_kib_default 262144 "$(cat $P/total_ring_kib)"
for v in -1 abc 16777217; do
	echo "$v" >$P/uid_ring_kib 2>/dev/null
	check_eq "uid_ring_kib_rejects_$v" 131072 "$(cat $P/uid_ring_kib)"
	echo "$v" >$P/total_ring_kib 2>/dev/null
	check_eq "total_ring_kib_rejects_$v" 262144 "$(cat $P/total_ring_kib)"
done
check_ok rings_counter_exists test -r $R
check_eq rings_none_at_start 0 "$(ring_bytes)"

# --- one uid's cap ---------------------------------------------------------------
echo 16384 >$P/uid_ring_kib
v0=$(vmalloc_kb)
hold a 1000 "" 1048576 7 3
log "uid 1000, three 7 MiB rings under a 16 MiB cap: $(head -n 1 /tmp/a.out)"
check_eq uid_cap_third_ring_enospc "registered=2 ring_bytes=$((2 * RING7)) refused=ENOSPC" \
	"$(head -n 1 /tmp/a.out)"
check_eq uid_cap_counted "$((2 * RING7))" "$(ring_bytes 1000)"
check_eq uid_cap_total_counted "$((2 * RING7))" "$(ring_bytes)"
dv=$(($(vmalloc_kb) - v0))
log "VmallocUsed grew by $dv kB for two rings of $((RING7 / 1024)) kB"
check_ge vmalloc_holds_the_rings $((2 * RING7 / 1024)) "$dv"
check_le vmalloc_bounded_by_uid_cap $((16384 + 2048)) "$dv"
err=$(as_uid 1000 freeblock-scrub --bs 1M --slots 7 "$DISK_data" 2>&1)
check_eq fb_scrub_past_cap_exit_1 1 $?
check_eq fb_scrub_past_cap_names_the_cap 1 "$(echo "$err" | grep -c 'No space left on device (the ring would pass the freeblock parameters uid_ring_kib')"
check_eq uid_cap_small_ring_still_fits "registered=1 ring_bytes=$((MIB + 8192)) refused=none" \
	"$(once 1000 "" 65536 16 1)"
check_eq uid_cap_other_uid_unaffected "registered=2 ring_bytes=$((2 * RING7)) refused=none" \
	"$(once 1001 "" 1048576 7 2)"
release $held
check_eq uid_cap_released_on_close 0 "$(ring_bytes)"
check_eq uid_cap_space_back "registered=2 ring_bytes=$((2 * RING7)) refused=none" \
	"$(once 1000 "" 1048576 7 2)"
# a speculative task's bitmap counts: 65536 blocks of 512 bytes, 8 KiB
hold s 1000 "" s512 1 1
check_eq spec_bitmap_counted $((12288 + 8192)) "$(ring_bytes 1000)"
release $held

# --- everyone's cap; root is no exception ----------------------------------------
echo 24576 >$P/total_ring_kib
hold a 1000 "" 1048576 7 2
ha=$held
hold b 1001 "" 1048576 7 2
check_eq total_cap_second_uid_refused "registered=1 ring_bytes=$RING7 refused=ENOSPC" \
	"$(head -n 1 /tmp/b.out)"
check_eq total_cap_root_refused "registered=0 ring_bytes=0 refused=ENOSPC" \
	"$(once 0 "" 1048576 7 1)"
check_le total_cap_bounds_count $((24576 * 1024)) "$(ring_bytes)"
check_eq total_cap_count "$((3 * RING7))" "$(ring_bytes)"
release $ha $held
check_eq total_cap_released 0 "$(ring_bytes)"
echo 262144 >$P/total_ring_kib

# --- memory cgroups: charged, refused before allocation, ENOMEM at memory.max ------
grep -q cgroup2 /proc/mounts || mount -t cgroup2 none $CG
if ! grep -qw memory $CG/cgroup.controllers 2>/dev/null; then
	fail memcg_available "expected the memory controller in $CG/cgroup.controllers, saw '$(cat $CG/cgroup.controllers 2>&1)'"
	finish
fi
echo +memory >$CG/cgroup.subtree_control
for g in base held tasks small; do
	mkdir -p $CG/fb-$g
done
echo 256M >$CG/fb-held/memory.max
# the same process registering nothing: what it costs by itself
once 1000 fb-base 1048576 7 0 >/dev/null
base=$(cat $CG/fb-base/memory.peak)
log "memcg: a process registering nothing peaks at $base bytes"
hold c 1000 fb-held 1048576 7 3
check_eq memcg_uid_cap_enospc "registered=2 ring_bytes=$((2 * RING7)) refused=ENOSPC" \
	"$(head -n 1 /tmp/c.out)"
cur=$(cat $CG/fb-held/memory.current)
log "memcg: holding two rings, memory.current $cur"
check_ge memcg_rings_charged $((2 * RING7)) "$cur"
release $held
peak=$(cat $CG/fb-held/memory.peak)
log "memcg: peak $peak with the third ring refused (it would add $RING7)"
check_le memcg_refused_ring_never_allocated $((base + 2 * RING7 + RING7 / 2)) "$peak"
check_eq memcg_uncharged_on_close 1 "$([ "$(cat $CG/fb-held/memory.current)" -lt $((base + RING7)) ] && echo 1 || echo "0 ($(cat $CG/fb-held/memory.current))")"

# max_tasks: refused before the ring too
echo 2 >$P/max_tasks
hold t 1001 "" 4096 1 2
check_eq max_tasks_two_held "registered=2 ring_bytes=$((2 * 12288)) refused=none" \
	"$(head -n 1 /tmp/t.out)"
check_eq max_tasks_third_ebusy "registered=0 ring_bytes=0 refused=EBUSY" \
	"$(once 1000 fb-tasks 1048576 7 1)"
peak=$(cat $CG/fb-tasks/memory.peak)
check_le max_tasks_ring_never_allocated $((base + RING7 / 2)) "$peak"
release $held
echo 256 >$P/max_tasks

# memory.max below the ring: ENOMEM, no OOM kill, a smaller ring fits
echo 4M >$CG/fb-small/memory.max
out=$(once 1000 fb-small 1048576 7 1)
check_eq memcg_max_below_ring_enomem "registered=0 ring_bytes=0 refused=ENOMEM" "$out"
check_ge memcg_max_hit_counted 1 "$(awk '$1 == "max" { print $2 }' $CG/fb-small/memory.events)"
check_eq memcg_no_oom_kill 0 "$(awk '$1 == "oom_kill" { print $2 }' $CG/fb-small/memory.events)"
check_eq memcg_small_ring_fits "registered=1 ring_bytes=$((MIB + 8192)) refused=none" \
	"$(once 1000 fb-small 65536 16 1)"
check_eq nothing_left 0 "$(ring_bytes)"
for g in base held tasks small; do
	rmdir $CG/fb-$g
done

check_ok rmmod_freeblock rmmod freeblock
finish
