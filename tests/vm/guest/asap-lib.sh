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

# app_cmd LETTER: one command to the app, its answer in $REPLY_LINE
app_cmd() {
	echo "$1" >"$CMD"
	REPLY_LINE=
	read -r -t 300 REPLY_LINE <"$ACK"
}

# field NAME: NAME=value from $REPLY_LINE
field() {
	echo "$REPLY_LINE" | tr ' ' '\n' | sed -n "s/^$1=//p"
}
# st NAME [PID]: one counter
st() {
	mobioctl asap stats $2 | awk -v k="$1" '$1 == k { print $2 }'
}
