#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ASAP switch benchmark, guest side (bench/switch/run-bench.py boots it once
# per boot): one switchbench run, every mode interleaved in the same boot.
#
#  ideal   no eviction: the app's pages stay in RAM (the lower bound)
#  demand  the app is evicted in the background (process_madvise PAGEOUT +
#          fadvise DONTNEED), demand paging at the switch; page-cluster 3,
#          vma-based swap readahead on (the kernel's defaults)
#  pc0     demand with vm.page-cluster = 0 (set and restored around its turn)
#  novma   demand with /sys/kernel/mm/swap/vma_ra_enabled = false (same)
#  daemon  demand + a userspace prefetcher: it observes the app's mapped pages
#          at the end of its turn (/proc/PID/pagemap) and replays them at the
#          next switch (process_madvise WILLNEED, fadvise WILLNEED)
#  oracle  demand + the generator's chunks of the last turn prefetched: an
#          upper bound, not a peer
#  asap    demand + asap-prefetch.ko (loaded for the whole boot, fg_cgroup=
#          /top-app; only the asap apps enter top-app, the others go to fg)
#
# Every round runs every mode in a shuffled order (switchbench --order-seed);
# every mode gets the same warm-up rounds (profile_switches, ASAP's learning).
# Every result is a "CSV,..." note on the result channel (report.py turns
# them into the CSV, the table and the chart). Parameters come from the
# kernel command line (switchbench.<key>=<value>, see run-bench.py).
# vm-kmod: zram ext4
# vm-bin: /sbin/mkfs.ext4 /usr/bin/sqlite3 /usr/bin/perf?
# vm-mem: 384
# vm-disk: data 256M
# vm-timeout: 1500
# shellcheck source=tests/vm/guest/lib.sh
. /mobio/tests/lib.sh

opt() { # KEY DEFAULT
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^switchbench\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}
MODES=$(opt modes ideal,demand,pc0,novma,daemon,oracle,asap)
APPS=$(opt apps 4)
ROUNDS=$(opt rounds 20)
PROFILE_SWITCHES=$(opt profile_switches 10)
PROFILE_MIN=$(opt profile_min 8)
ANON_MB=$(opt anon_mb 4-8)
FILE_MB=$(opt file_mb 2-4)
DWELL_MS=$(opt dwell_ms 100)
LEAD_MS=$(opt lead_ms 0)
ORDER_SEED=$(opt order_seed 1)
BOOT=$(opt boot 1)
WORKLOAD=$(opt workload synthetic)
# more asap-prefetch.ko parameters, comma-separated (e.g. rules=seed,workers=1)
ASAP_ARGS=$(opt asap_args "" | tr ',' ' ')
# 1: profile the measured switches (perf record -a, sampling on from each
# switch event to the end of the app's touch; PERF notes: each command
# class's share of the samples, and the top kernel symbols of every class
# over 2% of them)
PERF=$(opt perf 0)
KO=/mobio/asap-prefetch.ko
MNT=/mnt/data
CG=/sys/fs/cgroup
# ASAP needs PROFILE_SWITCHES windows per app before it prepages file pages
# (and 2 for anon): every mode warms up that many rounds.
WARMUP=$PROFILE_SWITCHES
[ "$WARMUP" -lt 2 ] && WARMUP=2

now_s() { cut -d' ' -f1 /proc/uptime; }
# --- setup: zram swap, ext4 data disk, cgroups ----------------------------------
kmod_load zram num_devices=1 || fail zram_load "expected zram to load"
echo 384M >/sys/block/zram0/disksize
if ! mkswap /dev/zram0 >/dev/null || ! swapon /dev/zram0; then
	fail swap_on "expected swapon /dev/zram0 to work"
fi
kmod_load ext4 || fail kmod_ext4 "expected ext4 to load"
DATA=${DISK_data:?run.py exports DISK_data for "vm-disk: data"}
mkfs.ext4 -q -F "$DATA" >/tmp/mkfs.out 2>&1 ||
	fail mkfs_data "expected mkfs.ext4 to work: $(cat /tmp/mkfs.out)"
mkdir -p $MNT
mount -t ext4 "$DATA" $MNT || fail mount_data "expected $DATA to mount"
# favordynmods (6.0+): a task migration does not wait for an RCU grace
# period (cgroup_threadgroup_rwsem stays on its slow reader path). Without it
# a switch's cgroup.procs writes took 0.4 ms or 15-30 ms depending on whether
# a grace period had passed since the last write, which depends on what the
# mode ran before: a bench artefact of 0-25% of a switch that differed by mode
# (2026-12-06: medians 0.5 ms daemon, 16.5 demand, 19.8 asap). A system that
# moves tasks at every app switch is the case the option exists for.
if ! mount -t cgroup2 -o favordynmods none $CG 2>/dev/null; then
	mount -t cgroup2 none $CG || fail cgroup2_mount "expected cgroup2 on $CG"
fi
mkdir -p $CG/top-app $CG/fg $CG/bg ||
	fail cgroup2_mount "expected cgroup2 on $CG with top-app, fg and bg"
# what the kernel says it mounted (its options, comma-separated)
CGOPT=$(awk -v m="$CG" '$2 == m { gsub(",", ":", $4); print $4 }' /proc/mounts)
DISK=$(basename "$DATA")

note "CSV,setup,kernel=$(uname -r) mem_mb=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) cpus=$(grep -c ^processor /proc/cpuinfo) swap=zram0:384M:$(sed 's/.*\[\(.*\)\].*/\1/' /sys/block/zram0/comp_algorithm) disk=$DISK:ext4 page_cluster=$(cat /proc/sys/vm/page-cluster) vma_ra=$(cat /sys/kernel/mm/swap/vma_ra_enabled) profile_switches=$PROFILE_SWITCHES profile_min=$PROFILE_MIN boot=$BOOT order_seed=$ORDER_SEED cgroup2=$CGOPT"

mount -t debugfs none /sys/kernel/debug 2>/dev/null
SBARGS=
# sqlite: the apps dlopen a per-mode copy of the library run.py shipped with
# sqlite3 (vm-bin above) and query databases on the data disk
if [ "$WORKLOAD" = sqlite ]; then
	SBARGS="--sqlite-lib /lib/x86_64-linux-gnu/libsqlite3.so.0"
	MODES=$(echo ",$MODES," | sed 's/,oracle,/,/; s/^,//; s/,$//')
fi
case ",$MODES," in
*,asap,*)
	# shellcheck disable=SC2086 # ASAP_ARGS: one parameter a word
	if insmod $KO window_ms=0 fg_cgroup=/top-app \
		profile_switches="$PROFILE_SWITCHES" profile_min="$PROFILE_MIN" $ASAP_ARGS; then
		P=/sys/module/asap_prefetch/parameters
		# every parameter the module has (new ones appear by themselves)
		note "CSV,asapparams,$(for f in "$P"/*; do printf '%s=%s ' "${f##*/}" "$(cat "$f" 2>/dev/null)"; done | sed 's/,/;/g; s/ $//')"
		SBARGS="$SBARGS --asap-stats"
	else
		fail insmod_asap "expected asap-prefetch.ko to load"
		MODES=$(echo ",$MODES," | sed 's/,asap,/,/; s/^,//; s/,$//')
	fi
	;;
esac

PERF_RUN=
if [ "$PERF" = 1 ] && ! command -v perf >/dev/null; then
	fail perf_shipped "expected perf in the guest for switchbench.perf=1 (apt install linux-perf on the host)"
	PERF=0
fi
if [ "$PERF" = 1 ]; then
	rm -f /tmp/perf.ctl && mkfifo /tmp/perf.ctl
	PERF_RUN="perf record -q -a -F 999 -g -D -1 --control fifo:/tmp/perf.ctl -o /tmp/perf.data --"
	SBARGS="$SBARGS --perf-ctl /tmp/perf.ctl"
fi
t0=$(now_s)
note "switchbench: $WORKLOAD workload, modes $MODES, $APPS apps each, $WARMUP warm-up + $ROUNDS measured rounds, order seed $ORDER_SEED"
# shellcheck disable=SC2086 # SBARGS, PERF_RUN: options, one a word
$PERF_RUN switchbench --modes "$MODES" --apps "$APPS" --warmup "$WARMUP" --rounds "$ROUNDS" \
	--anon-mb "$ANON_MB" --file-mb "$FILE_MB" --dwell-ms "$DWELL_MS" \
	--lead-ms "$LEAD_MS" --order-seed "$ORDER_SEED" --dir $MNT --cgroup $CG \
	--disk "$DISK" --swapdev zram0 $SBARGS >/tmp/sb.out 2>/tmp/sb.err &
sb=$!
# Forward the rows as they come (a run that dies keeps what it measured).
sent=0
forward() {
	n=$(wc -l </tmp/sb.out)
	if [ "$n" -gt "$sent" ]; then
		sed -n "$((sent + 1)),${n}p" /tmp/sb.out | while read -r line; do
			case "$line" in
			CSV,*) note "$line" ;;
			esac
		done
		sent=$n
	fi
}
while kill -0 $sb 2>/dev/null; do
	sleep 5
	forward
done
wait $sb
rc=$?
forward
if [ "$PERF" = 1 ]; then
	# Samples by command class (the apps are named after their mode,
	# kworkers' names change with their work) and kernel symbol: one note
	# per class, the result channel loses lines sent in a burst.
	perf report -i /tmp/perf.data --stdio --no-children --sort comm,sym -g none 2>/dev/null |
		awk '!/^#/ && NF >= 4 {
			c = $2; sub(/[-\/].*/, "", c); sub(/[0-9]+$/, "", c)
			pct = $1 + 0; tot[c] += pct; s[c " " $NF] += pct
		}
		END {
			for (c in tot) printf "%.1f %s\n", tot[c], c > "/tmp/perf.class"
			for (k in s) if (s[k] >= 0.2) printf "%.2f %s\n", s[k], k > "/tmp/perf.sym"
		}'
	note "PERF share of samples: $(sort -rn /tmp/perf.class | awk '{ printf "%s %s%%; ", $2, $1 }')"
	for c in $(sort -rn /tmp/perf.class | awk '$1 >= 2 && $2 != "swapper" { print $2 }'); do
		sleep 1
		note "PERF $c: $(awk -v c="$c" '$2 == c' /tmp/perf.sym | sort -rn | head -n 20 | awk '{ printf "%s %s%%; ", $3, $1 }')"
	done
fi
note "CSV,runtime,$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }')"
if [ $rc -eq 0 ] && grep -q "^CSV,done" /tmp/sb.out; then
	pass switchbench_ran
else
	fail switchbench_ran "expected switchbench to finish, saw exit $rc: $(tail -n 3 /tmp/sb.err | tr '\n' ' ')"
fi
if echo "$SBARGS" | grep -q asap-stats; then
	tr=$(sed -n 's/^CSV,asaptracked,//p' /tmp/sb.out)
	case "$tr" in
	*other=0*) pass asap_tracks_only_asap_apps ;;
	*) fail asap_tracks_only_asap_apps "expected asap-prefetch.ko to track only the asap apps and home, saw: $tr" ;;
	esac
	log "asap global: $(mobioctl asap stats | tr '\n' ' ')"
	mobioctl asap stats | while read -r k v; do note "CSV,asapglobal,$k,$v"; done
	check_ok rmmod_asap rmmod asap_prefetch
fi
swapoff /dev/zram0
umount $MNT
# The notes of the last mode may still be on their way out of ttyS1: a
# power-off right away lost the tail of them and FINISH once.
sleep 3
finish
