#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Who may do what with asap-prefetch.ko: only CAP_SYS_ADMIN switches,
# saves a profile (PROFILE_GET: an app's addresses and file identities) or
# loads one, and only CAP_SYS_ADMIN joins the events group; CAP_NET_ADMIN
# alone is not enough for any of them. Any user reads the counters and the
# app list. The module parameters are root's (sysfs mode 0644).
# vm-timeout: 180
. /mobio/tests/lib.sh

KO=/mobio/asap-prefetch.ko
P=/sys/module/asap_prefetch/parameters
U=1000

as_uid() {
	local uid=$1
	shift
	qnvtest setuid "$uid" "$@"
}

# refused NAME PATTERN CMD...: CMD exits 1 and says PATTERN on stderr
refused() {
	local name=$1 pat=$2 err rc
	shift 2
	err=$("$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 1 ] && echo "$err" | grep -q "$pat"; then
		pass "$name"
	else
		fail "$name" "expected exit 1 and '$pat', saw exit $rc: $err"
	fi
}

# wait_comm PID COMM: until the background child has exec'd COMM (asap
# records the comm it sees at the first switch; between fork and exec it is
# the shell's, or busybox's "exe")
wait_comm() {
	local i=0
	while [ "$(cat /proc/$1/comm 2>/dev/null)" != "$2" ] && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

check_ok insmod_asap insmod $KO window_ms=0
# the recall rules drop an entry after one unused window unless told otherwise
check_eq unused_windows_default 1 "$(cat /sys/module/asap_prefetch/parameters/unused_windows)"
sleep 1000 &
app=$!
wait_comm $app sleep
check_ok root_switch_tracks_app mobioctl asap switch $app
# a profile loads only outside the app's switch window
check_ok root_switches_away mobioctl asap switch $$
check_ok root_saves_profile mobioctl asap save $app /tmp/root.prof
check_ok root_loads_profile mobioctl asap load $app /tmp/root.prof

# --- an unprivileged user -----------------------------------------------------
chmod 0644 /tmp/root.prof
refused user_profile_get_eperm "Operation not permitted" \
	as_uid $U mobioctl asap save $app /tmp/user.prof
check_eq user_profile_get_wrote_nothing 0 "$(cat /tmp/user.prof 2>/dev/null | grep -c '^anon\|^file')"
refused user_profile_set_eperm "Operation not permitted" \
	as_uid $U mobioctl asap load $app /tmp/root.prof
refused user_switch_eperm "Operation not permitted" \
	as_uid $U mobioctl asap switch $app
# not even to a process of its own
as_uid $U sleep 1000 &
own=$!
wait_comm $own sleep
refused user_switch_own_process_eperm "Operation not permitted" \
	as_uid $U mobioctl asap switch $own
check_ok user_reads_stats as_uid $U mobioctl asap stats
check_ok user_reads_app_stats as_uid $U mobioctl asap stats $app
check_ok user_lists_apps sh -c "qnvtest setuid $U mobioctl asap apps | grep -q '^app $app sleep'"
for p in sigcont prepage window_ms anon_timeout entries_max; do
	v=$(cat $P/$p)
	as_uid $U sh -c "echo 7 >$P/$p" 2>/dev/null
	check_eq "user_cannot_set_param_$p" "$v" "$(cat $P/$p)"
done
check_eq params_mode_0644 "-rw-r--r--" "$(ls -l $P/sigcont | cut -c1-10)"

# --- CAP_SYS_ADMIN is what counts, not CAP_NET_ADMIN ---------------------------
refused net_admin_only_profile_get_eperm "Operation not permitted" \
	capdrop sys_admin mobioctl asap save $app /tmp/na.prof
refused net_admin_only_profile_set_eperm "Operation not permitted" \
	capdrop sys_admin mobioctl asap load $app /tmp/root.prof
refused net_admin_only_switch_eperm "Operation not permitted" \
	capdrop sys_admin mobioctl asap switch $app
check_ok sys_admin_without_net_admin_saves \
	capdrop net_admin mobioctl asap save $app /tmp/sa.prof
check_ok sys_admin_without_net_admin_loads \
	capdrop net_admin mobioctl asap load $app /tmp/root.prof
check_ok sys_admin_without_net_admin_switches \
	capdrop net_admin mobioctl asap switch $app
mobioctl asap switch $$

# --- events: root's listener hears switches, the others cannot join ------------
mobioctl asap watch 2 >/tmp/root.watch 2>&1 &
rw=$!
as_uid $U mobioctl asap watch 2 >/tmp/user.watch 2>&1 &
uw=$!
capdrop sys_admin mobioctl asap watch 2 >/tmp/na.watch 2>&1 &
nw=$!
sleep 1
mobioctl asap switch $$
mobioctl asap switch $app
sleep 1
kill $rw $uw $nw 2>/dev/null
wait $rw $uw $nw 2>/dev/null
log "root heard: $(tr '\n' ';' </tmp/root.watch) user: $(tr '\n' ';' </tmp/user.watch) net_admin: $(tr '\n' ';' </tmp/na.watch)"
check_eq root_watch_hears_switch "switch $$ sh netlink" "$(sed -n 1p /tmp/root.watch)"
check_eq root_watch_hears_second "switch $app sleep netlink" "$(sed -n 2p /tmp/root.watch)"
check_eq user_watch_hears_nothing 0 "$(grep -c '^switch' /tmp/user.watch)"
check_eq user_watch_refused_eperm 1 "$(grep -c 'Operation not permitted' /tmp/user.watch)"
check_eq net_admin_watch_hears_nothing 0 "$(grep -c '^switch' /tmp/na.watch)"
check_eq net_admin_watch_refused_eperm 1 "$(grep -c 'Operation not permitted' /tmp/na.watch)"

# (the fuzzer as the user, with a tracked app: asap-fuzz)

kill $app $own 2>/dev/null
wait $app $own 2>/dev/null
check_ok rmmod_asap rmmod asap_prefetch
finish
