#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# asap-prefetch.ko with zram swap and an ext4 file: an app (asapapp) is
# evicted (MADV_PAGEOUT, drop_caches), switched to with mobioctl, touches
# its footprint and is switched away from, 12 times. Checks: faults are
# logged (counts against the app's own), the file profile ends after 10
# switches, prepaging brings pages back (counters, mincore), hits and the
# reported precision/recall agree with the counts, a switch away cancels,
# bad requests get clear errors, moving the app into the foreground cgroup
# and SIGCONT of the stopped app switch to it, app exit frees its tables,
# rmmod during prepaging is clean (the netlink fuzz is asap-fuzz's); a profile
# saved with mobioctl asap save survives rmmod + insmod (loaded back, the
# next switch prepages it), bad profiles are refused.
# vm-kmod: zram ext4
# vm-bin: /sbin/mkfs.ext4
# vm-disk: data 64M
# vm-timeout: 900
. /mobio/tests/lib.sh
. /mobio/tests/asap-lib.sh

KO=/mobio/asap-prefetch.ko
ANON_MB=8
FILE_MB=4
ROUNDS=12
CMD=/tmp/asap.cmd
ACK=/tmp/asap.ack
MNT=/mnt/data

# --- setup: zram swap, ext4 file ----------------------------------------------
asap_setup 256M

CG=/sys/fs/cgroup
mount -t cgroup2 none $CG && mkdir -p $CG/top-app ||
	fail cgroup2_mount "expected cgroup2 on $CG with top-app"
bad_fg=$(insmod $KO fg_cgroup=/no-such-cgroup 2>&1)
check_eq insmod_rejects_missing_fg_cgroup 0 "$(ls -d /sys/module/asap_prefetch 2>/dev/null | wc -l)"
# The counts below follow the seed's rules (rules=seed); asap-mech and
# the host tests cover the default recall rules.
check_ok insmod_asap insmod $KO window_ms=0 fg_cgroup=/top-app rules=seed
ncpu=$(grep -c ^processor /proc/cpuinfo)
check_eq workers_default_cpus_minus_one "$((ncpu > 1 ? ncpu - 1 : 1))" \
	"$(cat /sys/module/asap_prefetch/parameters/workers)"


start_app() {
	rm -f $CMD $ACK
	mkfifo $CMD $ACK
	asapapp $ANON_MB $MNT/app.dat $CMD $ACK &
	read -r -t 60 REPLY_LINE <$ACK
	APP=$(field pid)
	ANON_PAGES=$(field anon_pages)
	FILE_PAGES=$(field file_pages)
}

# evict: the app's pages out (anon to zram, file dropped)
evict() {
	app_cmd p
	sync
	echo 1 >/proc/sys/vm/drop_caches
}

start_app
check_ge app_started 1 "$APP"
evict
check_eq pageout_evicts_anon "anon=0" "$(echo "$REPLY_LINE" | tr ' ' '\n' | grep ^anon=)"

# --- bad requests ---------------------------------------------------------------
# bad NAME EXIT PATTERN CMD...: mobioctl exits EXIT and stderr has PATTERN
bad() {
	local name=$1 want=$2 pat=$3 err rc
	shift 3
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq "$want" ] && echo "$err" | grep -q "$pat"; then
		pass "$name"
	else
		fail "$name" "expected exit $want and '$pat', saw exit $rc: $err"
	fi
}
bad rejects_missing_pid 1 "No such process (no such process)" mobioctl asap switch 999999
bad rejects_pid_above_limit 1 "Numerical result out of range\|out of range" mobioctl asap switch 4194305
bad rejects_pid_zero 2 "pid 0" mobioctl asap switch 0
bad rejects_pid_junk 2 "bad pid" mobioctl asap switch 12x
bad rejects_kernel_thread 1 "kernel thread" mobioctl asap switch 2
bad rejects_bad_cgroup 1 "no such cgroup" mobioctl asap switch /no/such/cgroup
bad cgroup_of_many_refused 1 "holds several" mobioctl asap switch /
mkdir -p $CG/apps/empty
bad cgroup_empty_refused 1 "no process in this cgroup" mobioctl asap switch /apps/empty
long=$(head -c 5000 /dev/zero | tr '\0' a)
bad kernel_rejects_long_cgroup 1 "Invalid argument\|out of range" mobioctl asap switch "/$long"
bad tool_rejects_huge_cgroup 2 "longer than" mobioctl asap switch "/$long$long"
bad stats_unknown_app 1 "no tracked app" mobioctl asap stats 999999
check_eq no_app_tracked_yet 0 "$(st apps)"

# --- switch rounds ----------------------------------------------------------------
touched_bad=0
r=1
while [ $r -le $ROUNDS ]; do
	[ $r -gt 1 ] && evict
	mobioctl asap switch $APP || fail "switch_round_$r" "expected mobioctl asap switch $APP to work"
	# Let the workers start before the app runs (the last round checks them).
	[ $r -eq $ROUNDS ] && sleep 5 && app_cmd r && LAST_RES="$REPLY_LINE"
	app_cmd t
	log "round $r: $REPLY_LINE"
	touched_bad=$((touched_bad + $(field bad)))
	mobioctl asap switch $$ || fail "switch_away_round_$r" "expected a switch to the shell to work"
	if [ $r -eq 1 ]; then
		# Round 1 faulted the whole footprint in on demand.
		check_ge round1_logs_anon_faults "$ANON_PAGES" "$(st anon_faults $APP)"
		check_ge round1_logs_file_faults "$FILE_PAGES" "$(st file_faults $APP)"
		check_eq round1_nothing_prepaged 0 "$(st anon_prepaged_pages $APP)"
	fi
	if [ $r -eq 10 ]; then
		check_eq profile_done_after_10 10 "$(st file_profile_switches $APP)"
		check_eq no_file_prepaged_while_profiling 0 "$(st file_prepaged_pages $APP)"
		check_ge file_table_after_profile "$FILE_PAGES" "$(st file_table_pages $APP)"
	fi
	r=$((r + 1))
done
check_eq app_data_intact 0 "$touched_bad"
check_eq app_switches $ROUNDS "$(st switches $APP)"
check_eq global_switches $((2 * ROUNDS)) "$(st switches)"
mobioctl asap stats $APP >/tmp/asap.stats
log "app stats: $(tr '\n' ' ' </tmp/asap.stats)"
s() { awk -v k="$1" '$1 == k { print $2 }' /tmp/asap.stats; }

# Anon: candidates after round 1, table after round 2, prepaged from round 3.
check_ge anon_prepaged "$ANON_PAGES" "$(s anon_prepaged_pages)"
check_ge anon_hits $((ANON_PAGES / 2)) "$(s anon_hits)"
# File: prepaged in rounds 11 and 12.
check_ge file_prepaged "$((FILE_PAGES / 2))" "$(s file_prepaged_pages)"
check_ge file_hits "$((FILE_PAGES / 2))" "$(s file_hits)"
for k in anon file; do
	h=$(s ${k}_hits)
	p=$(s ${k}_prepaged_pages)
	f=$(s ${k}_faults)
	u=$(s ${k}_unused)
	check_eq ${k}_hits_plus_unused_is_prepaged "$p" $((h + u))
	[ "${p:-0}" -gt 0 ] && pr=$((100 * h / p)) || pr=0
	[ $((h + f)) -gt 0 ] && rc=$((100 * h / (h + f))) || rc=0
	check_eq ${k}_precision_from_counts $pr "$(s ${k}_precision_pct)"
	check_eq ${k}_recall_from_counts $rc "$(s ${k}_recall_pct)"
done
# The app touches all it has: what is prepaged is used. Anon pages the app
# touches while a worker is between faulting a chunk in and clearing its
# accessed bits count as unused, so measured precision is below 100.
check_ge anon_precision_high 70 "$(s anon_precision_pct)"
check_ge file_precision_high 90 "$(s file_precision_pct)"
check_ge prepage_time_counted 1 "$(s prepage_ns)"
check_ge prepage_bytes_counted $(((ANON_PAGES + FILE_PAGES / 2) * 4096)) "$(s prepage_read_bytes)"
log "last round, 5 s after the switch: $LAST_RES"
REPLY_LINE=$LAST_RES
check_ge prepaging_brings_anon_back $((ANON_PAGES * 9 / 10)) "$(field anon)"
check_ge prepaging_brings_file_back $((FILE_PAGES / 2)) "$(field file)"

# --- the footprint shrinks: estimators forget what is not used ----------------------------
# The app now touches only the first half of each mapping. File: a prepaged
# page not used in a switch leaves the table at once. Anon: an entry not
# accessed for anon_timeout (4) switches is dropped.
r=1
while [ $r -le 4 ]; do
	evict
	mobioctl asap switch $APP
	sleep 3
	app_cmd h
	log "half round $r: $REPLY_LINE"
	mobioctl asap switch $$
	if [ $r -eq 1 ]; then
		check_ge file_unused_after_half $((FILE_PAGES / 2 - 16)) "$(($(st file_unused $APP) - $(s file_unused)))"
		t=$(st file_table_pages $APP)
		if [ "$t" -le $((FILE_PAGES / 2 + 16)) ] && [ "$t" -ge $((FILE_PAGES / 2)) ]; then
			pass file_unused_pages_evicted
		else
			fail file_unused_pages_evicted "expected $((FILE_PAGES / 2))..$((FILE_PAGES / 2 + 16)) file table pages, saw $t"
		fi
	fi
	if [ $r -eq 3 ]; then
		check_eq anon_kept_before_timeout "$ANON_PAGES" "$(st anon_entries $APP)"
	fi
	r=$((r + 1))
done
e=$(st anon_entries $APP)
if [ "$e" -le $((ANON_PAGES / 2 + 16)) ] && [ "$e" -ge $((ANON_PAGES / 2)) ]; then
	pass anon_unused_dropped_after_timeout
else
	fail anon_unused_dropped_after_timeout "expected $((ANON_PAGES / 2))..$((ANON_PAGES / 2 + 16)) anon entries after 4 switches without access, saw $e"
fi
check_ge anon_table_kept_used_half $((ANON_PAGES / 2)) "$(st anon_table_pages $APP)"
# The whole footprint again: evicted file candidates that fault re-enter
# the table; the dropped anon pages come back as candidates only.
evict
mobioctl asap switch $APP
sleep 3
app_cmd t
log "full round again: $REPLY_LINE"
mobioctl asap switch $$
check_eq file_candidates_reenter_table "$FILE_PAGES" "$(st file_table_pages $APP)"
check_eq anon_faults_make_candidates "$ANON_PAGES" "$(st anon_entries $APP)"
check_eq anon_candidates_not_in_table "$e" "$(st anon_table_pages $APP)"

# --- profile save / load across a module reload ------------------------------------
P=/tmp/app.prof
ae=$(st anon_entries $APP); at=$(st anon_table_pages $APP)
fe=$(st file_entries $APP); ft=$(st file_table_pages $APP)
check_ok profile_save mobioctl asap save $APP $P
log "saved: $(grep -c . $P) lines: $(head -c 300 $P | tr '\n' ';')"
check_eq profile_saves_anon_pages "$ae" "$(awk '$1 == "anon" { n += $3 } END { print n + 0 }' $P)"
check_eq profile_saves_file_pages "$fe" "$(awk '$1 == "run" { n += $3 } END { print n + 0 }' $P)"
check_eq profile_saves_one_file 1 "$(grep -c '^file ' $P)"
check_eq profile_file_is_app_dat "$(ls -i $MNT/app.dat | awk '{ print $1 }')" "$(awk '$1 == "file" { print $3 }' $P)"
bad profile_save_unknown_app 1 "no tracked app" mobioctl asap save 999999 /tmp/x.prof
check_ok profile_reload_rmmod rmmod asap_prefetch
check_ok profile_reload_insmod insmod $KO window_ms=0 fg_cgroup=/top-app rules=seed
check_eq profile_gone_after_reload 0 "$(st apps)"
check_ok profile_load mobioctl asap load $APP $P
check_eq profile_loads_anon_entries "$ae" "$(st anon_entries $APP)"
check_eq profile_loads_anon_table "$at" "$(st anon_table_pages $APP)"
check_eq profile_loads_file_entries "$fe" "$(st file_entries $APP)"
check_eq profile_loads_file_table "$ft" "$(st file_table_pages $APP)"
check_eq profile_loads_profile_state 10 "$(st file_profile_switches $APP)"
mobioctl asap save $APP $P.2
check_ok profile_round_trip cmp $P $P.2
# Loaded twice: the same pages, no duplicates.
mobioctl asap load $APP $P >/dev/null
check_eq profile_load_replaces "$((ae + fe))" "$(( $(st anon_entries $APP) + $(st file_entries $APP) ))"
# The next switch prepages what was loaded.
evict
mobioctl asap switch $APP
sleep 3
bad profile_load_refused_in_window 1 "switch away first" mobioctl asap load $APP $P
app_cmd r
log "after load + switch, 3 s: $REPLY_LINE"
check_ge profile_prepages_anon $((at * 9 / 10)) "$(field anon)"
check_ge profile_prepages_file $((ft * 9 / 10)) "$(field file)"
app_cmd t
mobioctl asap switch $$
check_ge profile_prepaged_counted $((at * 9 / 10)) "$(st anon_prepaged_pages $APP)"
# Bad profiles: a file that is not the one saved (another inode number),
# runs the kernel refuses, a profile that is not one.
awk '$1 == "file" { $3 = $3 + 100000 } { print }' $P >$P.other
out=$(mobioctl asap load $APP $P.other 2>&1)
if echo "$out" | grep -q "skipped: the app maps no file" && echo "$out" | grep -q "(1 skipped"; then
	pass profile_other_file_skipped
else
	fail profile_other_file_skipped "expected the file skipped, saw: $out"
fi
printf 'asap-profile 1\nanon 0x1001 1 1 0\n' >$P.bad
bad profile_rejects_unaligned 1 "not page aligned" mobioctl asap load $APP $P.bad
printf 'asap-profile 1\nanon 0x1000 1 0 0\n' >$P.bad
bad profile_rejects_timeout_0 1 "timeout 0" mobioctl asap load $APP $P.bad
printf 'asap-profile 1\nanon 0x1000 1 1 2\n' >$P.bad
bad profile_rejects_flags 1 "unknown flags" mobioctl asap load $APP $P.bad
printf 'asap-profile 1\nanon 0xfffffffffffff000 1 1 0\n' >$P.bad
bad profile_rejects_beyond_end 1 "beyond the end" mobioctl asap load $APP $P.bad
printf 'asap-profile 1\nfile 1 2 3\nrun 1 0 1 0\n' >$P.bad
bad profile_rejects_empty_run 1 "0 pages" mobioctl asap load $APP $P.bad
printf 'hello\n' >$P.bad
bad profile_rejects_not_a_profile 1 "not an asap profile" mobioctl asap load $APP $P.bad
bad profile_load_missing_pid 1 "no such process" mobioctl asap load 999999 $P
check_eq profile_bad_loads_change_nothing "$((ae + fe))" "$(( $(st anon_entries $APP) + $(st file_entries $APP) ))"

# --- switch by cgroup: its one process ------------------------------------------------
mkdir -p $CG/apps/one
echo $APP >$CG/apps/one/cgroup.procs
s0=$(st switches $APP)
check_ok cgroup_switch mobioctl asap switch /apps/one
check_eq cgroup_switch_counts $((s0 + 1)) "$(st switches $APP)"
check_ok cgroup_switch_foreground sh -c "mobioctl asap apps | grep -q '^app $APP asapapp foreground'"
mobioctl asap switch $$
sleep 1000 &
sl=$!
echo $sl >$CG/apps/one/cgroup.procs
bad cgroup_of_two_refused 1 "holds several" mobioctl asap switch /apps/one
kill $sl
wait $sl 2>/dev/null
echo $APP >$CG/cgroup.procs

# --- apps list and JSON ----------------------------------------------------------
check_ok apps_lists_app sh -c "mobioctl asap apps | grep -q '^app $APP asapapp'"
check_ok apps_json sh -c "mobioctl --json asap apps | grep -q '\"pid\":$APP,\"comm\":\"asapapp\"'"
sw=$(st switches)
check_ok stats_json sh -c "mobioctl --json asap stats | grep -q '\"switches\":$sw,'"

# --- a switch away cancels ---------------------------------------------------------
echo 300 >/sys/module/asap_prefetch/parameters/prepage_throttle_ms
evict
c0=$(st prepage_cancelled $APP)
mobioctl asap switch $APP
mobioctl asap switch $$
check_eq switch_away_cancels $((c0 + 1)) "$(st prepage_cancelled $APP)"
app_cmd r
log "after the cancelled switch: $REPLY_LINE"
if [ "$(field anon)" -lt "$ANON_PAGES" ]; then
	pass cancel_stops_prepaging
else
	fail cancel_stops_prepaging "expected < $ANON_PAGES anon pages resident, saw $(field anon)"
fi
echo 0 >/sys/module/asap_prefetch/parameters/prepage_throttle_ms

# --- switch triggers: the foreground cgroup, SIGCONT; events ----------------------------
mobioctl asap watch 3 >/tmp/asap.watch 2>&1 &
watch_pid=$!
sleep 1
s0=$(st switches $APP)
t0=$(st triggers_cgroup)
echo $APP >$CG/top-app/cgroup.procs
sleep 1
check_eq cgroup_move_triggers $((t0 + 1)) "$(st triggers_cgroup)"
check_eq cgroup_move_switches $((s0 + 1)) "$(st switches $APP)"
check_ok cgroup_move_foreground sh -c "mobioctl asap apps | grep -q '^app $APP asapapp foreground'"
mobioctl asap switch $$
kill -STOP $APP; sleep 1; kill -CONT $APP; sleep 1
check_eq sigcont_off_no_switch $((s0 + 1)) "$(st switches $APP)"
echo 1 >/sys/module/asap_prefetch/parameters/sigcont
kill -CONT $APP; sleep 1
check_eq sigcont_running_no_switch $((s0 + 1)) "$(st switches $APP)"
kill -STOP $APP; sleep 1; kill -CONT $APP; sleep 1
check_eq sigcont_stopped_switches $((s0 + 2)) "$(st switches $APP)"
check_ge sigcont_counted 1 "$(st triggers_sigcont)"
echo 0 >/sys/module/asap_prefetch/parameters/sigcont
mobioctl asap switch $$
sleep 1
kill $watch_pid 2>/dev/null
log "events: $(tr '\n' ';' </tmp/asap.watch)"
check_eq event_cgroup_switch "switch $APP asapapp cgroup" "$(sed -n 1p /tmp/asap.watch)"
check_eq event_netlink_switch "switch $$ sh netlink" "$(sed -n 2p /tmp/asap.watch)"
check_eq event_sigcont_switch "switch $APP asapapp sigcont" "$(sed -n 3p /tmp/asap.watch)"

# --- app exit frees its tables -------------------------------------------------------
e_app=$(( $(st anon_entries $APP) + $(st file_entries $APP) ))
e0=$(st entries)
check_ge app_has_entries 1 "$e_app"
app_quit app_exits "$APP" || finish
sleep 3
check_eq exit_untracks_app 0 "$(mobioctl asap apps | grep -c "^app $APP ")"
check_eq exit_frees_entries $((e0 - e_app)) "$(st entries)"

# --- rmmod while prepaging ---------------------------------------------------------------
start_app
echo 200 >/sys/module/asap_prefetch/parameters/prepage_throttle_ms
r=1
while [ $r -le 3 ]; do
	evict
	mobioctl asap switch $APP
	app_cmd t
	mobioctl asap switch $$
	r=$((r + 1))
done
evict
mobioctl asap switch $APP
sleep 1
check_ok_within rmmod_while_prepaging 120 rmmod asap_prefetch || finish
check_eq module_gone 0 "$(ls -d /sys/module/asap_prefetch 2>/dev/null | wc -l)"
app_alive app_alive_after_rmmod "$APP" || finish
app_cmd t
check_eq app_fine_after_rmmod 0 "$(field bad)"
# an app that cannot exit would hang swapoff below too: end here, with the
# diagnostics app_quit logged
app_quit app_exits_after_rmmod "$APP" || finish
check_ok_within reload 120 insmod $KO fg_cgroup=/top-app || finish
check_ok_within unload 120 rmmod asap_prefetch || finish
check_ok_within swapoff 120 swapoff /dev/zram0 || finish
umount $MNT
finish
