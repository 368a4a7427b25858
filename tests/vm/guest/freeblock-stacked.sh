#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# freeblock.ko on stacked and misbehaving disks. On dm-crypt, dm-linear and
# md RAID1 (bio-based) over null_blk, the foreground is seen per bio: beside an
# O_DIRECT reader of the dm disk with collide_pct 0 a scrub gets only the
# gaps longer than every recent one (about 1 in 256) and the reader's
# arrivals almost never meet a block (fg_delayed <= 1%); with the default
# budget at most ~2% (x2 for depth 2) do; the dm's clones of freeblock's
# idle-class blocks are background on the leaf null_blk (its record counts
# no foreground for them, but counts the reader's clones). On a null_blk
# whose bandwidth throttle turns requests away (mbps=), requeues of started
# requests are counted (6.1), unstarted ones are not taken off the count
# (6.12), and the foreground count ends at 0. A foreground count stuck by
# lost completions (debugfs fg_stuck) is reset by the watchdog after the
# disk's stale_ms and the scrub completes alone. FB_IOC_SET_RATE raising a
# task's ceiling takes effect at once (not after the slot of the old
# ceiling); malformed ones are refused. Per-disk tunables (mobioctl fb
# set): conf_* of that disk only, "default" follows the module parameter
# again, out-of-range values change nothing and say why, CAP_SYS_ADMIN is
# needed, and a setting made before the disk exists is the disk's once a
# task runs there.
# vm-kmod: null_blk dm_crypt xts aesni_intel raid1
# vm-bin: /usr/sbin/dmsetup
# vm-timeout: 300
# vm-alone: foreground delay, watchdog and rate checks in ms
. /mobio/tests/lib.sh
. /mobio/tests/freeblock-lib.sh
. /mobio/tests/smartio-lib.sh

P=/sys/module/freeblock/parameters
STUCK=/sys/kernel/debug/freeblock/fg_stuck
M=1048576
MB=64				# each null_blk, MiB
SECTORS=$((MB * 2048))
CONF="depth idle_min_us idle_max_us collide_pct floor_kbps ceiling_kbps stale_ms"
# no udev in the initramfs: libdevmapper makes its nodes itself
export DM_DISABLE_UDEV=1

# fbs DEV NAME: freeblock's counter NAME of DEV
fbs() {
	mobioctl fb stats "$1" 2>/dev/null | sed -n "s/^$2 //p"
}

# snap DEV FILE: every counter of DEV into FILE; sv FILE NAME: one of them
snap() {
	mobioctl fb stats "$1" >"$2" 2>&1
}

sv() {
	sed -n "s/^$2 //p" "$1"
}

# delta NAME OLD NEW: NAME in snapshot NEW minus in OLD ("" if missing)
delta() {
	local a b
	a=$(sv "$2" "$1")
	b=$(sv "$3" "$1")
	[ -n "$a" ] && [ -n "$b" ] && echo $((b - a))
}

# param NAME: the module parameter NAME ("missing" if there is none)
param() {
	cat "$P/$1" 2>/dev/null || echo missing
}

# confs FILE: the conf_* lines of a snapshot, on one line
confs() {
	grep '^conf_' "$1" | tr '\n' ' ' | grep . || echo "no conf_ counters"
}

# dm_disk NAME: the dm device's disk name (dm-N)
dm_disk() {
	local d
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name" 2>/dev/null)" = "$1" ] && basename "$d"
	done
}

# once NAME NBLOCKS OUTPUT: every block delivered once, no error
once() {
	check_eq "${1}_every_block_once" "nblocks=$2 got=$2 dup=0" \
		"$(echo "$3" | grep -o 'nblocks=[0-9]* got=[0-9]* dup=[0-9]*')"
	check_eq "${1}_no_read_error" 0 "$(kv failed "$3")"
	check_eq "${1}_result_0" 0 "$(kv result "$3")"
}

kmod_load null_blk nr_devices=0
kmod_load dm_crypt
kmod_load xts
kmod_load aesni_intel 2>/dev/null || log "aesni_intel did not load: generic AES"
check_ok insmod_freeblock insmod $FB_KO
log "kernel $(uname -r); parameters: $(for n in $CONF; do printf '%s=%s ' $n "$(cat $P/$n 2>/dev/null)"; done)"
check_eq param_collide_pct_exists 1 "$([ -e $P/collide_pct ] && echo 1 || echo 0)"
check_eq param_idle_mult_gone 0 "$([ -e $P/idle_mult ] && echo 1 || echo 0)"

# --- a. dm-crypt and dm-linear over null_blk -------------------------------
# stacked NAME DMDEV LEAF: a scrub of the dm disk alone, then beside a
# reader of it; the leaf null_blk has a record of its own (fb set)
stacked() {
	local name=$1 dm=$2 leaf=$3 out fr fd bi lf lp sp
	check_ok "${name}_leaf_record" mobioctl fb set "$leaf" depth=2
	# alone: freeblock's blocks reach the leaf as the dm's clones, in
	# the idle class: background there
	snap "$leaf" /tmp/l0
	out=$(fbtest scrub "/dev/$dm" --bs 65536 --len $((8 * M)))
	check_eq "${name}_alone_exit" 0 $?
	log "$name alone: $out"
	once "${name}_alone" 128 "$out"
	snap "$leaf" /tmp/l1
	snap "$dm" /tmp/d1
	lf=$(delta fg_requests /tmp/l0 /tmp/l1)
	log "$name alone: leaf $leaf fg_requests +$lf; dm $dm bg_issued_idle $(sv /tmp/d1 bg_issued_idle) fg_requests $(sv /tmp/d1 fg_requests)"
	check_le "${name}_clones_not_fg_on_leaf" 3 "$lf"
	check_eq "${name}_alone_issued_idle" 128 "$(sv /tmp/d1 bg_issued_idle)"
	check_le "${name}_alone_no_fg_on_dm" 3 "$(sv /tmp/d1 fg_requests)"

	# beside a reader of the dm disk: the reader runs 6 s, the scrub
	# starts 1 s in; the counters are compared 3.5 s later, the reader
	# still running. collide_pct 0: no recent gap of the reader may be
	# used, so the scrub must wait for its end (the default's bound is
	# checked below)
	check_ok "${name}_strict" mobioctl fb set "$dm" collide_pct=0
	fbtest load "/dev/$dm" 6 >/tmp/load.out &
	lp=$!
	sleep 1
	snap "$dm" /tmp/d2
	snap "$leaf" /tmp/l2
	fbtest scrub "/dev/$dm" --bs 65536 --len $((4 * M)) \
		--report-at-ms 3500 >/tmp/scrub.out &
	sp=$!
	sleep 3.5
	snap "$dm" /tmp/d3
	snap "$leaf" /tmp/l3
	wait $lp
	wait $sp
	check_eq "${name}_busy_exit" 0 $?
	out=$(cat /tmp/scrub.out)
	log "$name beside a reader: $out; $(cat /tmp/load.out)"
	once "${name}_busy" 64 "$out"
	fr=$(delta fg_requests /tmp/d2 /tmp/d3)
	fd=$(delta fg_delayed /tmp/d2 /tmp/d3)
	bi=$(delta bg_issued_idle /tmp/d2 /tmp/d3)
	lf=$(delta fg_requests /tmp/l2 /tmp/l3)
	log "$name over 3.5 s of reading: dm fg_requests +$fr fg_delayed +$fd bg_issued_idle +$bi (blocks got by then $(kv got_at "$out")); leaf fg_requests +$lf"
	log "$name dm window then: idle_window_us $(sv /tmp/d3 idle_window_us) service_ns $(sv /tmp/d3 service_ns) fg_gaps +$(delta fg_gaps /tmp/d2 /tmp/d3) conf_idle_min_us $(sv /tmp/d3 conf_idle_min_us) conf_collide_pct $(sv /tmp/d3 conf_collide_pct)"
	check_ge "${name}_fg_seen_on_dm" 100 "$fr"
	# collide_pct 0 still lets a gap longer than every one of the last
	# 256 be used (about one gap in 256, by symmetry), at most depth
	# blocks each
	check_le "${name}_strict_blocks_only_in_record_gaps" $((${fr:-0} * 2 / 256 + 3)) "$bi"
	check_le "${name}_fg_delayed_at_most_1pct" $((${fr:-0} / 100 + 3)) "$fd"
	check_ge "${name}_reader_clones_fg_on_leaf" 100 "$lf"
	check_eq "${name}_fg_inflight_0_after" 0 "$(fbs "$dm" fg_inflight)"

	# the default budget (collide_pct 2): the longest 1% of the reader's
	# gaps may be used after the window, and blocks that fit before the
	# 1%-shortest gap at a gap's start: at most ~2% of its arrivals meet a
	# background block (twice that with depth 2: one in service, one
	# queued), however much background that leaves
	check_ok "${name}_default_budget" mobioctl fb set "$dm" collide_pct=default
	fbtest load "/dev/$dm" 4 >/tmp/load.out &
	lp=$!
	sleep 0.5
	snap "$dm" /tmp/d4
	fbtest scrub "/dev/$dm" --bs 65536 --len $((4 * M)) --deadline-ms 20000 \
		>/tmp/scrub.out &
	sp=$!
	sleep 3
	snap "$dm" /tmp/d5
	wait $lp
	wait $sp
	fr=$(delta fg_requests /tmp/d4 /tmp/d5)
	fd=$(delta fg_delayed /tmp/d4 /tmp/d5)
	log "$name default budget over 3 s of reading: fg_requests +$fr fg_delayed +$fd bg_issued_idle +$(delta bg_issued_idle /tmp/d4 /tmp/d5) (gap start +$(delta bg_issued_gap_start /tmp/d4 /tmp/d5)); idle_window_us $(sv /tmp/d5 idle_window_us) idle_horizon_us $(sv /tmp/d5 idle_horizon_us)"
	check_ge "${name}_default_fg_seen" 100 "$fr"
	check_le "${name}_default_fg_delayed_within_budget" $((${fr:-0} * 4 / 100 + 3)) "$fd"
}

nullb_make nullbc size=$MB queue_mode=2 irqmode=2 completion_nsec=300000 >/dev/null
nullb_make nullbl size=$MB queue_mode=2 irqmode=2 completion_nsec=300000 >/dev/null
key=$(od -An -tx1 -N64 /dev/urandom | tr -d ' \n')
check_ok dm_crypt_create dmsetup create --noudevsync fbcrypt \
	--table "0 $SECTORS crypt aes-xts-plain64 $key 0 /dev/nullbc 0"
check_ok dm_linear_create dmsetup create --noudevsync fblinear \
	--table "0 $SECTORS linear /dev/nullbl 0"
crypt=$(dm_disk fbcrypt)
linear=$(dm_disk fblinear)
log "dm-crypt is $crypt over nullbc, dm-linear is $linear over nullbl"
stacked crypt "$crypt" nullbc
stacked linear "$linear" nullbl

# md_build NAME LEVEL DEV...: an md array of DEVs without a superblock (what
# mdadm --build makes), through md's sysfs files; prints its disk name
md_build() {
	local name=md_$1 level=$2 d i=0 kib m
	shift 2
	echo "$name" >/sys/module/md_mod/parameters/new_array || return 1
	m=/sys/block/$name/md
	echo none >$m/metadata_version && echo "$level" >$m/level &&
		echo $# >$m/raid_disks || return 1
	for d in "$@"; do
		kib=$(($(cat /sys/block/$d/size) / 2))
		cat /sys/block/$d/dev >$m/new_dev && echo $i >$m/dev-$d/slot &&
			echo $kib >$m/dev-$d/size || return 1
		i=$((i + 1))
	done
	echo $kib >$m/component_size && echo active >$m/array_state || return 1
	echo "$name"
}

# md: a RAID1 of one mirror over null_blk (every read reaches that leaf)
kmod_load raid1
nullb_make nullbm size=$MB queue_mode=2 irqmode=2 completion_nsec=300000 >/dev/null
if md=$(md_build mobio raid1 nullbm) && [ "$(cat /sys/block/$md/size)" = "$SECTORS" ]; then
	pass md_raid1_create
	log "md raid1 is $md over nullbm: $(grep -A1 "^$md" /proc/mdstat | tr '\n' ' ')"
	# md disks are scanned for partitions at their first open (dm disks
	# are not): 3 foreground reads that would reach the leaf's record
	# during the first scrub
	dd if=/dev/$md of=/dev/null bs=4k count=1 iflag=direct 2>/dev/null
	stacked md "$md" nullbm
else
	fail md_raid1_create "expected an md raid1 of nullbm with $SECTORS sectors, saw: $(cat /proc/mdstat | tr '\n' ' ')"
fi

# --- b. a requeue storm: null_blk's bandwidth throttle ------------------------
# mbps=2: 40 KiB per 20 ms tick; past it the driver answers
# BLK_STS_DEV_RESOURCE (6.12: before blk_mq_start_request, 6.1: after).
# Four readers: a request turned away while others are in flight must not
# take one of theirs off the count.
nullb_make nullbr size=$MB mbps=2 >/dev/null
check_ok requeue_record mobioctl fb set nullbr depth=2 collide_pct=0
lp=
for i in 1 2 3 4; do
	fbtest load /dev/nullbr 6 >/tmp/load$i.out &
	lp="$lp $!"
done
sleep 1
snap nullbr /tmp/r0
fbtest scrub /dev/nullbr --bs 4096 --len 262144 --report-at-ms 3500 >/tmp/scrub.out &
sp=$!
sleep 3.5
snap nullbr /tmp/r1
wait $lp
wait $sp
check_eq requeue_scrub_exit 0 $?
sleep 0.2
snap nullbr /tmp/r2
out=$(cat /tmp/scrub.out)
log "throttled beside four readers: $out; $(cat /tmp/load?.out | tr '\n' ' ')"
rq=$(delta fg_requeues /tmp/r0 /tmp/r1)
ru=$(delta fg_requeues_unstarted /tmp/r0 /tmp/r1)
bi=$(delta bg_issued_idle /tmp/r0 /tmp/r1)
log "over 3.5 s of reading: fg_requests +$(delta fg_requests /tmp/r0 /tmp/r1) fg_requeues +$rq fg_requeues_unstarted +$ru bg_issued_idle +$bi fg_delayed +$(delta fg_delayed /tmp/r0 /tmp/r1); after: fg_inflight $(sv /tmp/r2 fg_inflight) fg_stale_resets $(sv /tmp/r2 fg_stale_resets)"
log "window then: idle_window_us $(sv /tmp/r1 idle_window_us) service_ns $(sv /tmp/r1 service_ns) fg_gaps +$(delta fg_gaps /tmp/r0 /tmp/r1)"
# 6.1 starts a request before throttling it and requeues it started; 6.12
# turns it away unstarted, mostly back through insertion (no requeue
# trace), sometimes through the requeue the probe must not count
case "$(uname -r)" in
6.1.*) check_ge requeues_counted 1 "$rq"
	log "6.1: null_blk starts a request before throttling it: fg_requeues_unstarted +$ru" ;;
*) log "6.12: fg_requeues +$rq, of them unstarted +$ru" ;;
esac
# Not checked: requests the throttle holds unstarted in the scheduler are
# not in flight to freeblock, so the disk looks idle during a hold longer
# than the window (docs/freeblock.md, "Not done yet").
log "requeue storm: blocks issued while reading +$bi (unstarted requests held by the throttle are not seen)"
once requeue 64 "$out"
check_eq requeue_fg_inflight_0_after 0 "$(sv /tmp/r2 fg_inflight)"

# --- c. the watchdog: a stuck foreground count -------------------------------
nullb_make nullbs size=$MB >/dev/null
check_ok watchdog_set_stale_ms mobioctl fb set nullbs stale_ms=500
check_eq watchdog_conf_stale_ms 500 "$(fbs nullbs conf_stale_ms)"
r0=$(fbs nullbs fg_stale_resets)
# a real read first, so the count last moved now; then three lost
# completions; then the scrub, with no other I/O on the disk
fbtest load /dev/nullbs 1 >/dev/null
check_ok watchdog_inject sh -c "echo 'nullbs 3' >$STUCK"
check_eq watchdog_stuck_count 3 "$(fbs nullbs fg_inflight)"
out=$(fbtest scrub /dev/nullbs --bs 65536 --len $M --deadline-ms 10000)
check_eq watchdog_scrub_exit 0 $?
log "stuck count of 3, stale_ms 500: $out; fg_stale_resets $r0 -> $(fbs nullbs fg_stale_resets)"
once watchdog 16 "$out"
check_eq watchdog_scrub_not_aborted 0 "$(kv aborted "$out")"
check_ge watchdog_count_reset $((${r0:-0} + 1)) "$(fbs nullbs fg_stale_resets)"
check_eq watchdog_fg_inflight_0 0 "$(fbs nullbs fg_inflight)"
# held by the stuck count until the watchdog, then done at once
check_ge watchdog_scrub_held_by_stuck_count 250 "$(kv first_ms "$out")"
check_le watchdog_scrub_done_within_2s 2000 "$(kv elapsed_ms "$out")"

# --- d. FB_IOC_SET_RATE: a ceiling raised mid-task ---------------------------
# 1 MiB blocks at 64 KiB/s: one per 16 s; after the first, 1 GiB/s
out=$(fbtest scrub /dev/nullbs --bs $M --slots 4 --len $((9 * M)) --ceil 64 \
	--set-rate-after 1 --set-ceil 1048576 --deadline-ms 20000)
check_eq ceiling_raised_exit 0 $?
log "ceiling 64 KiB/s raised to 1 GiB/s after the first block: $out"
once ceiling_raised 9 "$out"
check_eq ceiling_raised_set_rate_ok 0 "$(kv rate_errno "$out")"
check_eq ceiling_raised_after_first_block 1 "$(kv rate_got "$out")"
check_eq ceiling_raised_not_aborted 0 "$(kv aborted "$out")"
check_le ceiling_raised_rest_within_2s 2000 "$(kv after_rate_ms "$out")"
fbtest badrate /dev/nullbs >/tmp/badrate.out
check_eq set_rate_bad_inputs_exit 0 $?
while read -r st name rest; do
	case "$st" in
	ok) pass "$name" ;;
	bad) fail "$name" "$rest" ;;
	esac
done </tmp/badrate.out
check_ge set_rate_bad_inputs_cases 8 "$(wc -l </tmp/badrate.out)"

# --- d2. the disk's own ceiling and floor (md's sync_speed_max / _min) -------
# a disk ceiling of 64 KiB/s with 1 MiB blocks: one per 16 s; lifted 1 s
# in: the rest goes at once
check_ok disk_ceiling_set mobioctl fb set nullbs ceiling_kbps=64
fbtest scrub /dev/nullbs --bs $M --slots 4 --len $((9 * M)) --deadline-ms 30000 \
	>/tmp/dceil.out &
sp=$!
sleep 1
check_ok disk_ceiling_lifted mobioctl fb set nullbs ceiling_kbps=default
wait $sp
check_eq disk_ceiling_exit 0 $?
out=$(cat /tmp/dceil.out)
log "disk ceiling 64 KiB/s lifted after 1 s: $out"
once disk_ceiling 9 "$out"
check_le disk_ceiling_lift_applies_at_once 3000 "$(kv elapsed_ms "$out")"
# beside a back-to-back reader of a disk whose window is 10 s (so no idle
# time) nothing but the disk floor (1 MiB/s: a 64 KiB block per 62.5 ms)
# moves the scrub
nullb_make nullbf size=$MB queue_mode=2 irqmode=2 completion_nsec=300000 >/dev/null
check_ok disk_floor_set mobioctl fb set nullbf floor_kbps=1024 \
	idle_min_us=10000000 idle_max_us=10000000
fbtest load /dev/nullbf 4 >/tmp/load.out &
lp=$!
sleep 0.5
snap nullbf /tmp/f0
out=$(fbtest scrub /dev/nullbf --bs 65536 --len $((2 * M)) --deadline-ms 20000)
check_eq disk_floor_exit 0 $?
snap nullbf /tmp/f1
wait $lp
log "disk floor 1 MiB/s beside a reader: $out; bg_issued_floor +$(delta bg_issued_floor /tmp/f0 /tmp/f1) bg_issued_idle +$(delta bg_issued_idle /tmp/f0 /tmp/f1) fg_requests +$(delta fg_requests /tmp/f0 /tmp/f1) fg_delayed +$(delta fg_delayed /tmp/f0 /tmp/f1)"
once disk_floor 32 "$out"
check_ge disk_floor_blocks_on_busy_disk 24 "$(delta bg_issued_floor /tmp/f0 /tmp/f1)"
check_le disk_floor_no_idle_time 3 "$(delta bg_issued_idle /tmp/f0 /tmp/f1)"
# 32 blocks at 62.5 ms: about 2 s, not the reader's end and more
check_le disk_floor_paced_not_waiting 3000 "$(kv elapsed_ms "$out")"
check_ge disk_floor_not_faster_than_the_floor 1500 "$(kv elapsed_ms "$out")"

# --- e. per-disk tunables -----------------------------------------------------
# A: nullbs (a setting of its own already); B: the dm-crypt disk, records
# made by tasks only: it follows the module parameters
A=nullbs
B=$crypt
for n in $CONF; do
	check_eq "other_disk_conf_${n}_is_param" "$(param $n)" "$(fbs $B conf_$n)"
done
check_ok set_all_seven mobioctl fb set $A depth=5 idle_min_us=300 \
	idle_max_us=40000 collide_pct=7 floor_kbps=100 ceiling_kbps=200000 \
	stale_ms=800
snap $A /tmp/a
snap $B /tmp/b
for nv in depth=5 idle_min_us=300 idle_max_us=40000 collide_pct=7 \
	floor_kbps=100 ceiling_kbps=200000 stale_ms=800; do
	n=${nv%%=*}
	check_eq "set_conf_$n" "${nv#*=}" "$(sv /tmp/a conf_$n)"
	check_eq "set_other_disk_conf_${n}_unchanged" "$(param $n)" "$(sv /tmp/b conf_$n)"
done
# the module parameter moves every disk that follows it
d0=$(cat $P/depth)
c0=$(cat $P/collide_pct)
echo 6 >$P/depth
echo 9 >$P/collide_pct
check_eq param_moves_other_disk_depth 6 "$(fbs $B conf_depth)"
check_eq param_moves_other_disk_collide_pct 9 "$(fbs $B conf_collide_pct)"
check_eq param_leaves_own_depth 5 "$(fbs $A conf_depth)"
check_eq param_leaves_own_collide_pct 7 "$(fbs $A conf_collide_pct)"
check_ok set_default mobioctl fb set $A depth=default collide_pct=default
check_eq default_follows_param_depth 6 "$(fbs $A conf_depth)"
check_eq default_follows_param_collide_pct 9 "$(fbs $A conf_collide_pct)"
echo 3 >$P/depth
check_eq default_follows_param_change 3 "$(fbs $A conf_depth)"
check_eq default_keeps_other_settings 800 "$(fbs $A conf_stale_ms)"
echo "$d0" >$P/depth
echo "$c0" >$P/collide_pct
check_ok set_depth_again mobioctl fb set $A depth=5

# out of range: exit 1, the kernel's message, nothing changed
snap $A /tmp/a0
for spec in depth=0 depth=65 collide_pct=101 stale_ms=99 stale_ms=600001 \
	idle_min_us=9 floor_kbps=300000 "floor_kbps=10 ceiling_kbps=5" \
	"depth=4 collide_pct=101"; do
	name=$(echo "$spec" | tr ' =' '__')
	mobioctl fb set $A $spec 2>/tmp/set.err
	check_eq "set_rejects_${name}_exit_1" 1 $?
	log "fb set $A $spec: $(cat /tmp/set.err)"
	check_eq "set_rejects_${name}_says_why" 1 "$(grep -c 'Invalid argument (.*)' /tmp/set.err)"
done
snap $A /tmp/a1
log "conf of $A before the rejected settings: $(confs /tmp/a0)"
check_eq set_rejected_changed_nothing "$(confs /tmp/a0 | sed 's/^no conf_ counters$/conf_ counters/')" "$(confs /tmp/a1)"
# usage errors: exit 2, nothing sent
mobioctl fb set $A frob=1 2>/dev/null
check_eq set_unknown_name_exit_2 2 $?
mobioctl fb set $A depth=four 2>/dev/null
check_eq set_not_a_number_exit_2 2 $?
mobioctl fb set $A depth=3 stale_ms=x 2>/dev/null
check_eq set_bad_second_exit_2 2 $?
check_eq set_usage_error_sent_nothing 5 "$(fbs $A conf_depth)"
check_ok set_help mobioctl fb set --help

# who may: CAP_SYS_ADMIN (any user reads the counters)
qnvtest setuid 1000 mobioctl fb set $A depth=3 2>/tmp/set.err
check_eq set_as_uid_1000_exit_1 1 $?
check_eq set_as_uid_1000_eperm 1 "$(grep -c 'Operation not permitted' /tmp/set.err)"
capdrop sys_admin mobioctl fb set $A depth=3 2>/tmp/set.err
check_eq set_without_cap_sys_admin_exit_1 1 $?
check_eq set_without_cap_sys_admin_eperm 1 "$(grep -c 'Operation not permitted' /tmp/set.err)"
check_eq set_refused_changed_nothing 5 "$(fbs $A conf_depth)"
check_ok set_without_cap_net_admin capdrop net_admin mobioctl fb set $A depth=3
check_eq set_without_cap_net_admin_took 3 "$(fbs $A conf_depth)"
check_ok stats_as_uid_1000 qnvtest setuid 1000 mobioctl fb stats $A

# a setting for a disk that does not exist yet waits for it
check_ok set_before_disk_exists mobioctl fb set nullbw depth=3 stale_ms=700
nullb_make nullbw size=$MB >/dev/null
fbtest hold /dev/nullbw >/tmp/hold.out &
hp=$!
sleep 1
snap nullbw /tmp/w
log "nullbw, set before it existed, with a task: $(grep -E '^(tasks|tasks_active|conf_depth|conf_stale_ms|conf_idle_min_us) ' /tmp/w | tr '\n' ' ')"
check_eq early_setting_task_active 1 "$(sv /tmp/w tasks_active)"
check_eq early_setting_depth 3 "$(sv /tmp/w conf_depth)"
check_eq early_setting_stale_ms 700 "$(sv /tmp/w conf_stale_ms)"
check_eq early_setting_rest_follow_params "$(param idle_min_us)" "$(sv /tmp/w conf_idle_min_us)"
kill -9 $hp
wait $hp 2>/dev/null
out=$(fbtest scrub /dev/nullbw --bs 65536 --len $M)
once early_setting_scrub 16 "$out"
check_eq early_setting_one_record 2 "$(fbs nullbw tasks)"

# --- teardown -------------------------------------------------------------------
sleep 0.5
for d in "$crypt" "$linear" nullbr nullbs nullbf nullbw; do
	check_eq "end_${d}_no_task_left" 0 "$(fbs "$d" tasks_active)"
done
check_ok dm_remove dmsetup remove --noudevsync fbcrypt fblinear
check_ok rmmod_freeblock rmmod freeblock
finish
