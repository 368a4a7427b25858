#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ASAP switch benchmark, guest side (bench/switch/run-bench.py boots it):
# every mode side by side in one boot, on the same apps and footprints.
#
#  ideal   no eviction: the app's pages stay in RAM (the lower bound)
#  demand  the app is evicted in the background (process_madvise PAGEOUT +
#          fadvise DONTNEED), demand paging at the switch; page-cluster 3,
#          vma-based swap readahead on (the kernel's defaults)
#  pc0     demand with vm.page-cluster = 0
#  novma   demand with /sys/kernel/mm/swap/vma_ra_enabled = false
#  peer    demand + "prefetch everything last touched" from userspace
#  asap    demand + asap-prefetch.ko (fg_cgroup=/top-app trigger), warmed up
#          with its profile switches first
#  demand2 demand again, last: how far the host's load moved the baseline
#
# Every result is a "CSV,..." note on the result channel (report.py turns
# them into the CSV, the table and the chart). Parameters come from the
# kernel command line (switchbench.<key>=<value>, see run-bench.py).
# vm-kmod: zram ext4
# vm-bin: /sbin/mkfs.ext4
# vm-mem: 384
# vm-disk: data 160M
# vm-timeout: 1500
# shellcheck source=tests/vm/guest/lib.sh
. /mobio/tests/lib.sh

opt() { # KEY DEFAULT
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^switchbench\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}
MODES=$(opt modes ideal,demand,pc0,novma,peer,asap,demand2 | tr ',' ' ')
APPS=$(opt apps 8)
ROUNDS=$(opt rounds 5)
PROFILE_SWITCHES=$(opt profile_switches 10)
PROFILE_MIN=$(opt profile_min 8)
ANON_MB=$(opt anon_mb 8-16)
FILE_MB=$(opt file_mb 4-8)
DWELL_MS=$(opt dwell_ms 100)
LEAD_MS=$(opt lead_ms 0)
KO=/mobio/asap-prefetch.ko
MNT=/mnt/data
CG=/sys/fs/cgroup
# ASAP needs PROFILE_SWITCHES windows per app before it prepages file pages
# (and 2 for anon); every mode measures the same rounds FIRST..FIRST+ROUNDS-1.
FIRST=$PROFILE_SWITCHES
[ "$FIRST" -lt 2 ] && FIRST=2

now_s() { cut -d' ' -f1 /proc/uptime; }

# --- setup: zram swap, ext4 data disk, cgroups ----------------------------------
kmod_load zram num_devices=1 || fail zram_load "expected zram to load"
echo 256M >/sys/block/zram0/disksize
if ! mkswap /dev/zram0 >/dev/null || ! swapon /dev/zram0; then
	fail swap_on "expected swapon /dev/zram0 to work"
fi
kmod_load ext4 || fail kmod_ext4 "expected ext4 to load"
DATA=${DISK_data:?run.py exports DISK_data for "vm-disk: data"}
mkfs.ext4 -q -F "$DATA" >/tmp/mkfs.out 2>&1 ||
	fail mkfs_data "expected mkfs.ext4 to work: $(cat /tmp/mkfs.out)"
mkdir -p $MNT
mount -t ext4 "$DATA" $MNT || fail mount_data "expected $DATA to mount"
if ! mount -t cgroup2 none $CG || ! mkdir -p $CG/top-app $CG/bg; then
	fail cgroup2_mount "expected cgroup2 on $CG with top-app and bg"
fi
DISK=$(basename "$DATA")

note "CSV,setup,kernel=$(uname -r) mem_mb=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo) cpus=$(grep -c ^processor /proc/cpuinfo) swap=zram0:256M:$(sed 's/.*\[\(.*\)\].*/\1/' /sys/block/zram0/comp_algorithm) disk=$DISK:ext4 page_cluster=$(cat /proc/sys/vm/page-cluster) vma_ra=$(cat /sys/kernel/mm/swap/vma_ra_enabled) profile_switches=$PROFILE_SWITCHES profile_min=$PROFILE_MIN"

# run_mode LABEL MODE WARMUP [switchbench options]
run_mode() {
	label=$1 mode=$2 warmup=$3
	shift 3
	sync
	echo 3 >/proc/sys/vm/drop_caches
	t0=$(now_s)
	note "mode $label: $APPS apps, $warmup warm-up + $ROUNDS measured rounds"
	switchbench --mode "$mode" --label "$label" --apps "$APPS" \
		--warmup "$warmup" --first "$FIRST" --rounds "$ROUNDS" \
		--anon-mb "$ANON_MB" --file-mb "$FILE_MB" --dwell-ms "$DWELL_MS" \
		--lead-ms "$LEAD_MS" --dir $MNT --cgroup $CG --disk "$DISK" \
		--swapdev zram0 "$@" >/tmp/sb.out 2>/tmp/sb.err
	rc=$?
	while read -r line; do
		case "$line" in
		CSV,*) note "$line" ;;
		esac
	done </tmp/sb.out
	note "CSV,modetime,$label,$(awk -v a="$t0" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }')"
	if [ $rc -eq 0 ] && grep -q "^CSV,done,$label" /tmp/sb.out; then
		pass "mode_${label}_ran"
	else
		fail "mode_${label}_ran" "expected switchbench to finish, saw exit $rc: $(tail -n 3 /tmp/sb.err | tr '\n' ' ')"
	fi
}

for m in $MODES; do
	case $m in
	ideal | demand | peer)
		run_mode "$m" "$m" 1
		;;
	demand2)
		run_mode demand2 demand 1
		;;
	pc0)
		echo 0 >/proc/sys/vm/page-cluster
		run_mode pc0 demand 1
		echo 3 >/proc/sys/vm/page-cluster
		;;
	novma)
		echo false >/sys/kernel/mm/swap/vma_ra_enabled
		run_mode novma demand 1
		echo true >/sys/kernel/mm/swap/vma_ra_enabled
		;;
	asap)
		if ! insmod $KO window_ms=0 fg_cgroup=/top-app \
			profile_switches="$PROFILE_SWITCHES" profile_min="$PROFILE_MIN"; then
			fail insmod_asap "expected asap-prefetch.ko to load"
			continue
		fi
		note "CSV,asapparams,workers=$(cat /sys/module/asap_prefetch/parameters/workers) profile_switches=$PROFILE_SWITCHES profile_min=$PROFILE_MIN file_merge_pages=$(cat /sys/module/asap_prefetch/parameters/file_merge_pages) anon_timeout=$(cat /sys/module/asap_prefetch/parameters/anon_timeout)"
		run_mode asap asap "$FIRST" --asap-stats
		log "asap global: $(mobioctl asap stats | tr '\n' ' ')"
		check_ok rmmod_asap rmmod asap_prefetch
		;;
	*)
		fail "mode_$m" "unknown mode $m"
		;;
	esac
done
swapoff /dev/zram0
umount $MNT
# The notes of the last mode may still be on their way out of ttyS1: a
# power-off right away lost the tail of them and FINISH once.
sleep 3
finish
