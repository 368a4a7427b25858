#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The cost of asap-prefetch.ko's fault logging, two ways:
#  - in the probes: the module's logged / log_ns counters (with log_timing:
#    ns from the probe's match to the log written) over the app's fault loop;
#  - in the app: asapapp evicted (MADV_PAGEOUT to zram, drop_caches), then
#    the time it takes to touch its anon and file pages again, in five
#    setups per round, in a shuffled order: "off" (module not loaded),
#    "idle" (loaded, a window open for another process: probes run and
#    filter), "on" (the app's own window: every fault logged, with the
#    default entry probes), "ontimed" (the same with log_timing=1, the
#    probes' own time counted) and "onkret" (as "on" with
#    swapin_kretprobe=1, the return probe the entry probes replaced).
#    Prepaging is off (prepage=0) so every page is a fault.
# Checks that the counters move (every anon swap-in logged, each a miss in
# both methods), that log_ns moves only with log_timing, and that the data
# stays intact. Every touch is a CSV note
# (round 0 warms up and is not one); bench/switch/overhead.py turns the
# notes of two or more boots into ratios with intervals (docs/asap.md).
# Rounds: mobio.asap_overhead_reps=N on the kernel command line, 2 by
# default (make check: the checks need no more); the order's seed:
# mobio.asap_overhead_seed (default 1).
# vm-kmod: zram ext4
# vm-bin: /sbin/mkfs.ext4
# vm-disk: data 64M
# vm-timeout: 900
# vm-alone: measures the cost of logging and prepaging
. /mobio/tests/lib.sh
. /mobio/tests/asap-lib.sh

KO=/mobio/asap-prefetch.ko
ANON_MB=${ASAP_OVH_ANON_MB:-32}
FILE_MB=${ASAP_OVH_FILE_MB:-16}
REPS=$(mobio_param asap_overhead_reps 2)
SEED=$(mobio_param asap_overhead_seed 1)
CMD=/tmp/asap.cmd
ACK=/tmp/asap.ack
MNT=/mnt/data
TIMING=/sys/module/asap_prefetch/parameters/log_timing

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

# touch SETUP: evict, touch, one CSV note "ovh,ROUND,SETUP,anon_us,file_us"
bad=0
touch_as() {
	evict
	[ "$(field anon)" = 0 ] || fail "evicted_$1" "expected anon=0 after pageout, saw $REPLY_LINE"
	case $1 in on*) mobioctl asap switch $APP ;; esac
	[ "$1" = ontimed ] && echo 1 >$TIMING
	app_cmd t
	[ "$1" = ontimed ] && echo 0 >$TIMING
	case $1 in on*) mobioctl asap switch $$ ;; esac
	log "$1: $REPLY_LINE"
	[ "$(field anon)" = 0 ] || fail "no_prepaging_$1" "expected nothing resident before the touch, saw $REPLY_LINE"
	bad=$((bad + $(field bad)))
}

# The module's parameters each setup needs ("" = not loaded).
params_of() {
	case $1 in
	off) echo "" ;;
	onkret) echo "window_ms=0 prepage=0 swapin_kretprobe=1" ;;
	*) echo "window_ms=0 prepage=0" ;;
	esac
}

loaded=""
# setup NAME ROUND: the module loaded as NAME needs, then one touch
setup() {
	want=$(params_of "$1")
	if [ "$want" != "$loaded" ]; then
		if [ -n "$loaded" ]; then
			rmmod asap_prefetch || fail rmmod "expected rmmod to work"
		fi
		if [ -n "$want" ]; then
			# shellcheck disable=SC2086 # the parameters are words
			insmod $KO $want || fail insmod "expected insmod $want to work"
		fi
		loaded=$want
	fi
	[ "$1" = idle ] && mobioctl asap switch $$
	l0=0 n0=0 f0=0
	if [ -n "$loaded" ]; then
		l0=$(st logged)
		n0=$(st log_ns)
		f0=$(st anon_faults)
	fi
	touch_as "$1"
	dl=0 dn=0
	if [ -n "$loaded" ]; then
		dl=$(($(st logged) - l0))
		dn=$(($(st log_ns) - n0))
	fi
	case $1 in
	on*)
		check_ge "logs_every_swapin_${1}_round_$2" "$ANON_PAGES" "$dl"
		# Each of the app's swap-ins read its page: all misses (stats
		# wait for the closed window to be learned from).
		check_ge "every_swapin_a_miss_${1}_round_$2" "$ANON_PAGES" \
			$(($(st anon_faults) - f0))
		if [ "$1" = ontimed ]; then
			check_ge "log_timed_${1}_round_$2" 1 "$dn"
		else
			check_eq "log_untimed_${1}_round_$2" 0 "$dn"
		fi
		;;
	esac
	[ "$2" -gt 0 ] &&
		note "CSV,ovh,$2,$1,$(field anon_us),$(field file_us),$dl,$dn"
}

# Round 0 warms up (zram, page tables) and is not noted; every round runs
# the five setups in an order shuffled with the seed and the round.
r=0
while [ $r -le "$REPS" ]; do
	order=$(awk -v s=$((SEED * 1000 + r)) 'BEGIN {
		srand(s); n = split("off idle on ontimed onkret", a, " ")
		for (i = n; i > 1; i--) {
			j = int(rand() * i) + 1; t = a[i]; a[i] = a[j]; a[j] = t
		}
		for (i = 1; i <= n; i++) printf "%s ", a[i]
	}')
	log "round $r: $order"
	for o in $order; do
		setup "$o" $r
	done
	r=$((r + 1))
done
[ -n "$loaded" ] && rmmod asap_prefetch
check_eq app_data_intact 0 "$bad"
app_cmd q
wait

note "fault loop: $ANON_PAGES anon pages (zram) + $FILE_PAGES file pages (ext4, virtio), $REPS rounds, seed $SEED, prepage=0"
swapoff /dev/zram0
umount $MNT
finish
