#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The cost of asap-prefetch.ko's fault logging, two ways:
#  - in the probes: the module's logged / log_ns counters (ns from probe
#    entry to the log written) over the app's fault loop;
#  - in the app: asapapp evicted (MADV_PAGEOUT to zram, drop_caches), then
#    the time it takes to touch its anon and file pages again, in three
#    setups per repetition: "off" (module not loaded), "idle" (loaded, a
#    window open for another process: probes run and filter) and "on"
#    (the app's own window: every fault logged), in an order that rotates
#    with each repetition. Prepaging is off (prepage=0) so every page is a
#    fault.
# Checks that the counters move (every anon swap-in logged) and the data
# stays intact; the numbers are notes for docs/asap.md.
# Repetitions: mobio.asap_overhead_reps=N on the kernel command line, 2 by
# default (make check: the checks need no more); `make bench-asap-overhead`
# runs 9 for the numbers in docs/asap.md.
# vm-kmod: zram ext4
# vm-bin: /sbin/mkfs.ext4
# vm-disk: data 64M
# vm-timeout: 600
# vm-alone: measures the cost of logging and prepaging
. /mobio/tests/lib.sh
. /mobio/tests/asap-lib.sh

KO=/mobio/asap-prefetch.ko
ANON_MB=${ASAP_OVH_ANON_MB:-32}
FILE_MB=${ASAP_OVH_FILE_MB:-16}
REPS=$(mobio_param asap_overhead_reps 2)
CMD=/tmp/asap.cmd
ACK=/tmp/asap.ack
MNT=/mnt/data

# --- setup: zram swap, ext4 file ----------------------------------------------
asap_setup 512M

evict() {
	app_cmd p
	sync
	echo 1 >/proc/sys/vm/drop_caches
}

rm -f $CMD $ACK
mkfifo $CMD $ACK
asapapp $ANON_MB $MNT/app.dat $CMD $ACK &
read -r -t 60 REPLY_LINE <$ACK
APP=$(field pid)
ANON_PAGES=$(field anon_pages)
FILE_PAGES=$(field file_pages)
check_ge app_started 1 "$APP"

# touch SETUP: evict, touch, record "SETUP anon_us file_us" in /tmp/ovh
bad=0
touch_as() {
	evict
	[ "$(field anon)" = 0 ] || fail "evicted_$1" "expected anon=0 after pageout, saw $REPLY_LINE"
	[ "$1" = on ] && mobioctl asap switch $APP
	app_cmd t
	[ "$1" = on ] && mobioctl asap switch $$
	log "$1: $REPLY_LINE"
	[ "$(field anon)" = 0 ] || fail "no_prepaging_$1" "expected nothing resident before the touch, saw $REPLY_LINE"
	bad=$((bad + $(field bad)))
	echo "$1 $(field anon_us) $(field file_us)" >>/tmp/ovh
}

: >/tmp/ovh
logged=0
log_ns=0
loaded=0
# setup NAME: the module loaded or not as NAME needs, then one touch
setup() {
	if [ "$1" = off ] && [ $loaded = 1 ]; then
		rmmod asap_prefetch || fail rmmod "expected rmmod to work"
		loaded=0
	elif [ "$1" != off ] && [ $loaded = 0 ]; then
		insmod $KO window_ms=0 prepage=0 || fail insmod "expected insmod to work"
		loaded=1
	fi
	[ "$1" = idle ] && mobioctl asap switch $$
	if [ "$1" = on ]; then
		l0=$(st logged)
		n0=$(st log_ns)
	fi
	touch_as "$1"
	if [ "$1" = on ] && [ $r -gt 0 ]; then
		l1=$(st logged)
		n1=$(st log_ns)
		check_ge "logs_every_swapin_rep_$r" "$ANON_PAGES" $((l1 - l0))
		logged=$((logged + l1 - l0))
		log_ns=$((log_ns + n1 - n0))
	fi
}
# The first repetition warms up (zram, page tables) and is not counted;
# the order of the setups rotates so that none always comes first.
r=0
while [ $r -le "$REPS" ]; do
	case $((r % 3)) in
	0) order="off idle on" ;;
	1) order="idle on off" ;;
	*) order="on off idle" ;;
	esac
	for o in $order; do
		setup $o
	done
	[ $r -eq 0 ] && : >/tmp/ovh
	r=$((r + 1))
done
[ $loaded = 1 ] && rmmod asap_prefetch
check_eq app_data_intact 0 "$bad"
app_cmd q
wait

note "fault loop: $ANON_PAGES anon pages (zram) + $FILE_PAGES file pages (ext4, virtio), $REPS repetitions, prepage=0"
note "probes: $logged faults logged in the app's windows, $log_ns ns: $((log_ns / (logged > 0 ? logged : 1))) ns per logged fault"
# Per setup: mean, median and min of anon+file loop time; the min is the
# least disturbed by other load on the host (TCG shares its cores).
awk -v ns="$log_ns" '
	function sort(a, n,   i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
	}
	{
		n[$1]++; v = $2 + $3; sum[$1] += v
		if ($1 == "off") off[n[$1]] = v
		if ($1 == "idle") idle[n[$1]] = v
		if ($1 == "on") on[n[$1]] = v
	}
	END {
		sort(off, n["off"]); sort(idle, n["idle"]); sort(on, n["on"])
		m["off"] = off[int((n["off"] + 1) / 2)]; lo["off"] = off[1]; hi["off"] = off[n["off"]]
		m["idle"] = idle[int((n["idle"] + 1) / 2)]; lo["idle"] = idle[1]; hi["idle"] = idle[n["idle"]]
		m["on"] = on[int((n["on"] + 1) / 2)]; lo["on"] = on[1]; hi["on"] = on[n["on"]]
		for (s in n)
			printf "%s: anon+file loop %.0f us mean, %.0f median, %.0f min, %.0f max (%d runs)\n",
				s, sum[s] / n[s], m[s], lo[s], hi[s], n[s]
		printf "on vs off: mean %+.1f%%, median %+.1f%%, min %+.1f%%\n",
			100 * (sum["on"] / n["on"] - sum["off"] / n["off"]) / (sum["off"] / n["off"]),
			100 * (m["on"] - m["off"]) / m["off"], 100 * (lo["on"] - lo["off"]) / lo["off"]
		printf "idle vs off: mean %+.1f%%, median %+.1f%%, min %+.1f%%\n",
			100 * (sum["idle"] / n["idle"] - sum["off"] / n["off"]) / (sum["off"] / n["off"]),
			100 * (m["idle"] - m["off"]) / m["off"], 100 * (lo["idle"] - lo["off"]) / lo["off"]
		printf "probe time / on loop time: %.2f%%\n", 100 * ns / 1000 / sum["on"]
	}' /tmp/ovh >/tmp/ovh.sum
while read -r line; do note "$line"; done </tmp/ovh.sum
swapoff /dev/zram0
umount $MNT
finish
