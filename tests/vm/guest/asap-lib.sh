#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Helpers of the ASAP guest tests: the test sets MNT, FILE_MB, CMD and ACK
# (asapapp's command and answer FIFOs) first.

# asap_setup ZRAM_SIZE: zram swap of ZRAM_SIZE (e.g. 256M), ext4 on
# $DISK_data mounted at $MNT, $MNT/app.dat of FILE_MB MiB of random data
asap_setup() {
	kmod_load zram num_devices=1 || fail zram_load "expected zram to load"
	echo "$1" >/sys/block/zram0/disksize
	mkswap /dev/zram0 >/dev/null && swapon /dev/zram0 ||
		fail swap_on "expected swapon /dev/zram0 to work"
	kmod_load ext4 || fail kmod_ext4 "expected ext4 to load"
	mkfs.ext4 -q -F "$DISK_data" >/tmp/mkfs.out 2>&1 ||
		fail mkfs_data "expected mkfs.ext4 to work: $(cat /tmp/mkfs.out)"
	mkdir -p "$MNT" && mount -t ext4 "$DISK_data" "$MNT" ||
		fail mount_data "expected $DISK_data to mount"
	dd if=/dev/urandom of="$MNT/app.dat" bs=1M count="$FILE_MB" 2>/dev/null
	sync
}

# app_alive NAME PID: pass if PID still runs; else fail NAME with how it
# ended (exit status, 128 + the signal) and the kernel's last lines, and
# return 1 (app_cmd would block for good opening the FIFOs of a gone app)
app_alive() {
	local rc
	if kill -0 "$2" 2>/dev/null &&
	    [ "$(awk '{ print $3 }' /proc/"$2"/stat 2>/dev/null)" != Z ]; then
		pass "$1"
		return 0
	fi
	wait "$2"
	rc=$?
	fail "$1" "expected app $2 running, it is gone: exit status $rc; dmesg: $(dmesg | tail -n 8 | tr '\n' ';')"
	return 1
}

# app_quit NAME PID: tell the app to quit; NAME passes once PID is gone,
# fails after 60 s with the app's stacks (dump_stuck) and returns 1
app_quit() {
	app_alive "${1}_before_q" "$2" || return 1
	app_cmd q
	if ! gone_within "$2" 60; then
		dump_stuck "$2" "app $2 after q"
		fail "$1" "expected the app to exit within 60 s of q"
		return 1
	fi
	wait "$2"
	pass "$1"
}

# app_cmd LETTER: one command to the app, its answer in $REPLY_LINE. Both
# FIFOs are opened read-write first (fds 5 and 6): such an open never waits
# for the other end, and the answer stays in the FIFO while the shell holds
# it. Opened plainly, an app that answered "bye" and exited before the
# shell's "<$ACK" took the answer with it (a FIFO's data goes when its last
# holder closes it), and that open then waited for a writer for good: the
# asap-basic hang of stops 20 and 27 on a loaded machine.
app_cmd() {
	REPLY_LINE=
	exec 5<>"$CMD" 6<>"$ACK"
	echo "$1" >&5
	read -r -t 300 REPLY_LINE <&6
	exec 5>&- 6<&-
}

# field NAME: NAME=value from $REPLY_LINE
field() {
	echo "$REPLY_LINE" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
# st NAME [PID]: one counter
st() {
	mobioctl asap stats $2 | awk -v k="$1" '$1 == k { print $2 }'
}

# asap_app_start ANON_MB FILE CMD ACK: asapapp in the background on new
# FIFOs CMD and ACK (which app_cmd then uses); its pid in $APP, its page
# counts in $ANON_PAGES and $FILE_PAGES
asap_app_start() {
	CMD=$3
	ACK=$4
	rm -f "$CMD" "$ACK"
	mkfifo "$CMD" "$ACK"
	asapapp "$1" "$2" "$CMD" "$ACK" &
	REPLY_LINE=
	read -r -t 60 REPLY_LINE <"$ACK"
	APP=$(field pid)
	ANON_PAGES=$(field anon_pages)
	FILE_PAGES=$(field file_pages)
}

# asap_wait_resident MIN SECS: ask the app ('r') until at least MIN anon
# pages are resident or SECS seconds have passed; its last answer in
# $REPLY_LINE
asap_wait_resident() {
	local end=$(($(cut -d. -f1 /proc/uptime) + $2))
	while :; do
		app_cmd r
		[ "$(field anon)" -ge "$1" ] 2>/dev/null && return 0
		[ "$(cut -d. -f1 /proc/uptime)" -ge $end ] && return 1
		sleep 0.2
	done
}

# uptime_ms: milliseconds since boot (10 ms resolution)
uptime_ms() {
	awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime
}

# check_near NAME WANT TOL ACTUAL: pass if ACTUAL is within WANT +- TOL
check_near() {
	if [ -n "$4" ] && [ "$4" -ge $(($2 - $3)) ] 2>/dev/null &&
	   [ "$4" -le $(($2 + $3)) ]; then
		pass "$1"
	else
		fail "$1" "expected $2 +- $3, saw '$4'"
	fi
}

# check_dmesg_clean NAME: no kernel splat in dmesg (the runner's SPLAT_RE)
check_dmesg_clean() {
	local bad
	bad=$(dmesg | grep -E 'WARNING:|BUG:|Oops|general protection|lockdep|KASAN|Kernel panic|Call Trace' | head -n 3 | tr '\n' ' ')
	if [ -z "$bad" ]; then
		pass "$1"
	else
		fail "$1" "expected no kernel splat in dmesg, saw: $bad"
	fi
}
