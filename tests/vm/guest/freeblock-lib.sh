#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Helpers of the freeblock guest tests; the test sets dev (a disk name as
# in /sys/block) before it calls fb_stat.

# fb_stat NAME: freeblock's counter NAME for $dev (mobioctl fb stats)
fb_stat() {
	mobioctl fb stats "$dev" | sed -n "s/^$1 //p"
}

# kv KEY "k=v k=v ...": the value of KEY
kv() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n 1
}
