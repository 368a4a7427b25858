#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Helpers of the freeblock guest tests; the test sets dev (a disk name as
# in /sys/block) before it calls fb_stat.

# the module under test
FB_KO=/mobio/freeblock.ko

# fb_stat NAME: freeblock's counter NAME for $dev (mobioctl fb stats)
fb_stat() {
	mobioctl fb stats "$dev" | sed -n "s/^$1 //p"
}

# kv KEY "k=v k=v ...": the value of KEY
kv() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}

# st_wait: until the kernel-API self-test task ($ST, debugfs) has ended (at
# most 60 s); prints its state
ST=/sys/kernel/debug/freeblock/selftest
st_wait() {
	local i=0
	while grep -q state=running $ST && [ $i -lt 600 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	cat $ST
}
