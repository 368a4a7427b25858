#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 20,000 genl-fuzz requests to the asap family as root and 20,000 as
# another user, half of them well formed, with a tracked app (asapapp in
# its own cgroup, with learnt tables: a saved profile gives real runs):
# the app's pid, the shell's, the app's cgroup, its profile state, anon
# runs and file runs (device, inode, generation) as attributes. As root
# every command is served (switches to the app and away, its profile read
# and loaded); the user is served the counters and the app list, and
# never a switch or a profile: the switch count and the app's profile do
# not change. Afterwards a switch still prepages, the app's data is
# intact, the profile still saves, rmmod is clean and so is dmesg.
# vm-kmod: zram ext4
# vm-bin: /sbin/mkfs.ext4
# vm-disk: data 64M
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/asap-lib.sh
. /mobio/tests/genl-fuzz-lib.sh

KO=/mobio/asap-prefetch.ko
ANON_MB=4
FILE_MB=4
CMD=/tmp/asap.cmd
ACK=/tmp/asap.ack
MNT=/mnt/data
CG=/sys/fs/cgroup
P=/tmp/app.prof
U=1000
COUNT=20000

# le BYTES VALUE: VALUE as BYTES little-endian bytes, in hex
le() {
	local n=$1 v=$(($2)) out=
	while [ "$n" -gt 0 ]; do
		out=$out$(printf %02x $((v & 255)))
		v=$((v >> 8))
		n=$((n - 1))
	done
	echo "$out"
}

# runs_hex KEYWORD: the first 4 runs of lines "KEYWORD START NR COUNT FLAGS"
# of the saved profile as struct asap_profile_run, in hex (reserved 0)
runs_hex() {
	local kw start nr count flags out= i=0
	while read -r kw start nr count flags; do
		[ "$kw" = "$1" ] || continue
		out=$out$(le 8 "$start")$(le 4 "$nr")$(le 1 "$count")$(le 1 "$flags")0000
		i=$((i + 1))
		[ $i -eq 4 ] && break
	done <$P
	echo "$out"
}

# evict: the app's pages out (anon to zram, file dropped)
evict() {
	app_cmd p
	sync
	echo 1 >/proc/sys/vm/drop_caches
}

# --- setup: zram swap, ext4 file, cgroups, the app -------------------------------
asap_setup 128M
mount -t cgroup2 none $CG && mkdir -p $CG/top-app $CG/apps/cam ||
	fail cgroup2_mount "expected cgroup2 on $CG with top-app and apps/cam"
check_ok insmod_asap insmod $KO window_ms=0 fg_cgroup=/top-app
rm -f $CMD $ACK
mkfifo $CMD $ACK
asapapp $ANON_MB $MNT/app.dat $CMD $ACK &
read -r -t 60 REPLY_LINE <$ACK
APP=$(field pid)
check_ge app_started 1 "$APP"
echo "$APP" >$CG/apps/cam/cgroup.procs

# three switches to learn the app's footprint
r=1
while [ $r -le 3 ]; do
	evict
	mobioctl asap switch "$APP" || fail "learn_switch_$r" "expected a switch to the app"
	app_cmd t
	mobioctl asap switch $$ || fail "learn_switch_away_$r" "expected a switch to the shell"
	r=$((r + 1))
done
check_ok profile_saves mobioctl asap save "$APP" $P
log "profile: $(grep -c . $P) lines: $(head -c 300 $P | tr '\n' ';')"
anon=$(runs_hex anon)
file_runs=$(runs_hex run)
set -- $(awk '$1 == "file" { print $2, $3, $4; exit }' $P)
fdev=$1 fino=$2 fgen=$3
check_eq profile_has_anon_runs 1 "$([ -n "$anon" ] && echo 1 || echo 0)"
check_eq profile_has_a_file 1 "$([ -n "$file_runs" ] && [ -n "$fgen" ] && echo 1 || echo 0)"

# attributes: 3 MOBIO_A_PID, 32 ASAP_A_CGROUP, 36 ASAP_A_PROFILED,
# 37 ASAP_A_ANON_RUNS, 38-41 ASAP_A_FILE_DEV, _INO, _GEN, _RUNS
HINTS="-a 3:u32:$APP -a 3:u32:$$ -a 3:u32:999999 -a 32:str:/apps/cam
	-a 32:str:/top-app -a 32:str:/no/such/cgroup
	-a 3:u32:$APP,36:u32:3 -a 3:u32:$APP,37:hex:$anon
	-a 3:u32:$APP,38:u64:$fdev,39:u64:$fino,40:u32:$fgen,41:hex:$file_runs
	-a 3:u32:$APP,38:u64:$fdev,39:u64:$((fino + 1)),40:u32:$fgen,41:hex:$file_runs"

# --- root ---------------------------------------------------------------------------
s0=$(st switches)
# shellcheck disable=SC2086 # HINTS are words
fuzz root /tmp/fz-root.out $HINTS asap $COUNT 6
R=/tmp/fz-root.out
check_fuzz_ge root_get_stats_served $R 1 ok 100
check_fuzz_ge root_switch_served $R 16 ok 100
check_fuzz_ge root_get_apps_served $R 17 ok 100
check_fuzz_ge root_get_apps_sends_apps $R 17 data 100
check_fuzz_ge root_profile_get_served $R 18 ok 100
check_fuzz_ge root_profile_set_served $R 19 ok 10
check_fuzz_eq root_no_other_command_served $R other ok 0
log "root: $(($(st switches) - s0)) switches, app $(mobioctl asap stats "$APP" | tr '\n' ' ')"
check_dmesg_clean dmesg_clean_after_root_fuzz

# --- the user -------------------------------------------------------------------------
mobioctl asap switch $$
mobioctl asap save "$APP" $P.before
s0=$(st switches)
# shellcheck disable=SC2086 # HINTS are words
fuzz user /tmp/fz-user.out -u $U $HINTS asap $COUNT 7
R=/tmp/fz-user.out
check_fuzz_ge user_get_stats_served $R 1 ok 100
check_fuzz_ge user_get_apps_served $R 17 ok 100
check_fuzz_eq user_switch_never_served $R 16 ok 0
check_fuzz_ge user_switch_eperm $R 16 EPERM 100
check_fuzz_eq user_profile_get_never_served $R 18 ok 0
check_fuzz_eq user_profile_get_sends_nothing $R 18 data 0
check_fuzz_ge user_profile_get_eperm $R 18 EPERM 100
check_fuzz_eq user_profile_set_never_served $R 19 ok 0
check_fuzz_ge user_profile_set_eperm $R 19 EPERM 100
check_fuzz_eq user_no_other_command_served $R other ok 0
check_eq user_fuzz_switched_nothing "$s0" "$(st switches)"
mobioctl asap save "$APP" $P.after
check_ok user_fuzz_changed_no_profile cmp $P.before $P.after
check_dmesg_clean dmesg_clean_after_user_fuzz

# --- still works: it learns again and prepages (the fuzz's switches timed the
# anon entries out; as in asap-basic, the third switch prepages) ------------------------
r=1
while [ $r -le 2 ]; do
	evict
	check_ok "learn_switch_${r}_after_fuzz" mobioctl asap switch "$APP"
	app_cmd t
	check_eq "app_data_intact_${r}_after_fuzz" 0 "$(field bad)"
	check_ok "learn_switch_away_${r}_after_fuzz" mobioctl asap switch $$
	r=$((r + 1))
done
check_ge anon_entries_learnt_after_fuzz 1 "$(st anon_entries "$APP")"
evict
check_eq evicted_after_fuzz 0 "$(field anon)"
p0=$(st anon_prepaged_pages "$APP")
check_ok switch_after_fuzz mobioctl asap switch "$APP"
sleep 2
app_cmd t
log "after the fuzz: $REPLY_LINE"
check_eq app_data_intact_after_prepage 0 "$(field bad)"
check_ge switch_after_fuzz_prepaged_anon 1 "$(field anon)"
check_ok switch_away_after_fuzz mobioctl asap switch $$
check_ge switch_after_fuzz_counts_prepaged $((p0 + 1)) "$(st anon_prepaged_pages "$APP")"
check_ok profile_still_saves sh -c "mobioctl asap save $APP $P.end && grep -q '^anon ' $P.end"
app_cmd q
wait
check_ok rmmod_asap rmmod asap_prefetch
check_dmesg_clean dmesg_clean_after_rmmod
finish
