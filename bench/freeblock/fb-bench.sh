#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Freeblock benchmark, guest side (bench/freeblock/run-bench.py boots it):
# background MB/s obtained vs foreground disk utilization, and what the
# background costs the foreground, for freeblock.ko (fb-scrub) and its peers
# side by side in one boot.
#
# Device model: null_blk, one hardware queue of depth 1, timer completion
# after SERVICE_US per request, requests cut at MAX_KB: a serial,
# non-preemptible device whose service time does not depend on the offset
# (a disk whose seek dominates), so "utilization" is what it says and a
# background request in service delays a foreground arrival by up to one
# service time. No data is stored (not memory_backed): a scrub here proves
# nothing about data, only scheduling.
#
# Foreground: fio random 4 KiB O_DIRECT reads, one at a time (psync),
# Poisson arrivals at LEVEL % of the calibrated maximum IOPS (100 %:
# back to back). With fbbench.fg_write_pct=W (1-90) W % of the same
# job's requests are random 4 KiB O_DIRECT writes (fio rw=randrw, still one
# at a time, calibration included). Background bytes still come from the
# read counters, which the writes do not touch.
# Methods, each a "METHOD:SCHED" pair run at every level:
#   base      the foreground alone (scan off) under SCHED
#   again     the same, once more at the end of the level: how far two runs
#             of the same thing differ here (the noise floor of an impact)
#   fb        freeblock-scrub of the whole disk (64 KiB blocks), module defaults
#   fbd1      the same with freeblock's depth=1 (one background request at a time)
#   ionice    ionice -c3 dd iflag=direct bs=64k of the whole disk
#   ratecap   a rate-limited sequential reader (fio rate=, 64 KiB): the
#             btrfs scrub_speed_max / md speed_limit approach
# Background bytes come from the disk's own counters (/sys/block/X/stat)
# over a window inside the foreground run (from WARM s after fio's first job
# starts, marked by its exec_prerun, to 0.5 s before its end): every
# background request is
# 64 KiB and every foreground one 4 KiB, so the two request counts follow
# from the reads and sectors completed.
#
# Every result is a "CSV,..." note (bench/freeblock/report.py reads them):
#   CSV,params,k=v,...            CSV,model,nullb,description
#   CSV,calib,max_iops,util_pct,mean_us,p99_us
#   CSV,seq,round,bytes,ms         CSV,fullscrub,round,bytes,ms,rc,blksize
#   CSV,phase,level,method,sched,rate_iops,window_ms,d_reads,d_sectors,
#       d_rticks_ms,d_ioticks_ms,fg_ios,fg_runtime_ms,fg_mean_us,fg_p99_us,
#       fb_bytes,fb_fg_requests,fb_fg_delayed,fgw_ios,fgw_mean_us,fgw_p99_us
#   CSV,fbstats,k=v ...            CSV,skip,method,sched,why
# Parameters come from the kernel command line (fbbench.<key>=<value>).
# vm-kmod: null_blk kyber-iosched bfq
# vm-bin: /usr/bin/fio
# vm-timeout: 1500
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh
cd /tmp || exit 1

opt() { # KEY DEFAULT
	local v
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^fbbench\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}
LEVELS=$(opt levels 0,10,20,30,40,50,60,70,80,90,100 | tr ',' ' ')
METHODS=$(opt methods base:none,fb:none,fbd1:none,ratecap:none,ionice:none,ionice:mq-deadline,ionice:kyber,base:bfq,ionice:bfq,ionice:smartio,again:none | tr ',' ' ')
RUNTIME=$(opt runtime 4)
WARM=$(opt warm 0.5)
SERVICE_US=$(opt service_us 1000)
MAX_KB=$(opt max_kb 64)
SIZE_MB=$(opt size_mb 4096)
SCRUB_MB=$(opt scrub_mb 128)
CAP_PCT=$(opt cap_pct 10)
FG_WRITE_PCT=$(opt fg_write_pct 0)
NR_REQUESTS=$(opt nr_requests 64)
BG_BS=$((MAX_KB * 1024))
DEV=nullb0
FB_KO=/mobio/freeblock.ko

kmod_load null_blk nr_devices=0
command insmod /kmod/kyber_iosched.ko
command insmod /kmod/bfq.ko
smartio_load || note "CSV,skip,ionice,smartio,smartio-iosched.ko did not load"
insmod $FB_KO || { fail freeblock_loads "insmod $FB_KO failed"; finish; }
FB_DEPTH=$(cat /sys/module/freeblock/parameters/depth)

now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# mkdev NAME SIZE_MB: the device model, prints nothing
mkdev() {
	nullb_make "$1" size="$2" queue_mode=2 submit_queues=1 hw_queue_depth=1 \
		irqmode=2 completion_nsec=$((SERVICE_US * 1000)) >/dev/null || return 1
	echo "$MAX_KB" >"/sys/block/$1/queue/max_sectors_kb"
}

# use_sched DEV SCHED: the elevator, with NR_REQUESTS scheduler tags (the
# default with an elevator is twice the hardware depth: 2 here)
use_sched() {
	sched_set "$1" none
	sched_set "$1" "$2" || return 1
	[ "$2" = none ] || echo "$NR_REQUESTS" >"/sys/block/$1/queue/nr_requests"
}

# snap: "ms reads sectors read_ticks_ms io_ticks_ms" of $DEV
snap() {
	set -- $(cat /sys/block/$DEV/stat)
	echo "$(now_ms) $1 $3 $4 ${10}"
}

# fbstat NAME: one freeblock counter of $DEV (0 before its first task)
fbstat() {
	local v
	v=$(mobioctl fb stats $DEV 2>/dev/null | sed -n "s/^$1 //p")
	echo "${v:-0}"
}

# fio_job FILE JOB DIR: "ios,runtime_ms,mean_us,p99_us" of JOB's DIR (read
# or write) section in fio's JSON output; zeros when there is no such job
fio_job() {
	awk -v job="$2" -v dir="\"$3\"" '
		function num(s) { gsub(/[",]/, "", s); return s + 0 }
		$1 == "\"jobname\"" { v = $3; gsub(/[",]/, "", v); cur = (v == job); next }
		cur && $1 == dir && $3 == "{" { inr = 1; next }
		inr && $1 == "\"runtime\"" { rt = num($3) }
		inr && $1 == "\"total_ios\"" { ios = num($3) }
		inr && $1 == "\"lat_ns\"" { inl = 1; next }
		inl && $1 == "\"mean\"" && !got { mean = num($3); got = 1 }
		inl && $1 == "\"99.000000\"" { p99 = num($3); inl = 0; inr = 0; cur = 0 }
		END { printf "%d,%d,%.1f,%.1f\n", ios, rt, mean / 1000, p99 / 1000 }' "$1"
}

# fio_fg FILE: "ios,runtime_ms,mean_us,p99_us" of the foreground's reads
# (job "fg"), then "ios,mean_us,p99_us" of its writes (0,0,0 without)
fio_fg() {
	echo "$(fio_job "$1" fg read),$(fio_job "$1" fg write | cut -d, -f1,3,4)"
}

# fio options of the foreground, job "fg", at RATE IOPS (0: back to back);
# with FG_WRITE_PCT that share of them are writes, rate-limited apart
fg_opts() {
	local w=$(($1 * FG_WRITE_PCT / 100))
	if [ "$FG_WRITE_PCT" -eq 0 ]; then
		echo "--name=fg --rw=randread --bs=4k --lat_percentiles=1 --percentile_list=99"
		[ "$1" -gt 0 ] && echo "--rate_iops=$1 --rate_process=poisson"
		return 0
	fi
	[ "$1" -gt 0 ] && [ $w -lt 1 ] && w=1
	echo "--name=fg --rw=randrw --rwmixwrite=$FG_WRITE_PCT --bs=4k --lat_percentiles=1 --percentile_list=99"
	[ "$1" -gt 0 ] && echo "--rate_iops=$(($1 - w)),$w --rate_process=poisson"
	return 0
}

# phase LEVEL METHOD SCHED RATE: one measurement, one CSV,phase line
phase() {
	local level=$1 method=$2 sched=$3 rate=$4 bg='' jobs='' f=/tmp/phase.json
	local s0 s1 fb0b fb0r fb0d fbb=0 fbr=0 fbd=0 fg=0,0,0,0,0,0,0 fio=''
	use_sched $DEV "$sched" || { note "CSV,skip,$method,$sched,no elevator $sched"; return; }
	[ "$level" -gt 0 ] && jobs=$(fg_opts "$rate")
	case $method in
	fb | fbd1)
		[ $method = fbd1 ] && echo 1 >/sys/module/freeblock/parameters/depth
		fb0b=$(fbstat bytes_done); fb0r=$(fbstat fg_requests); fb0d=$(fbstat fg_delayed)
		freeblock-scrub -q --bs $BG_BS /dev/$DEV >/dev/null 2>/tmp/fb-scrub.err &
		bg=$!
		;;
	ionice)
		ionice -c3 dd if=/dev/$DEV of=/dev/null bs=$BG_BS iflag=direct 2>/dev/null &
		bg=$!
		;;
	ratecap)
		jobs="$jobs --name=bg --rw=read --bs=$BG_BS --rate=${CAP_KIBS}k"
		;;
	esac
	[ -n "$bg" ] && sleep 0.5
	rm -f /tmp/fio.started
	if [ -n "$jobs" ]; then
		# fio runs the prerun command of its first job just before its I/O
		# shellcheck disable=SC2086
		fio --filename=/dev/$DEV --direct=1 --ioengine=psync --time_based \
			--runtime="$RUNTIME" --output-format=json \
			--exec_prerun="touch /tmp/fio.started" $jobs >$f 2>/tmp/fio.err &
		fio=$!
		i=0
		while [ ! -e /tmp/fio.started ] && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	fi
	sleep "$WARM"
	s0=$(snap)
	sleep $((RUNTIME - 1))
	s1=$(snap)
	if [ -n "$fio" ]; then
		wait $fio || note "fio failed ($level $method $sched): $(head -c 200 /tmp/fio.err)"
		[ "$level" -gt 0 ] && fg=$(fio_fg $f)
	fi
	# SIGTERM: an asynchronous command of a script ignores SIGINT
	if [ -n "$bg" ]; then
		kill $bg 2>/dev/null ||
			note "background $method:$sched ended early: $(head -c 200 /tmp/fb-scrub.err)"
		wait $bg
	fi
	echo "$FB_DEPTH" >/sys/module/freeblock/parameters/depth
	if [ "$method" = fb ] || [ "$method" = fbd1 ]; then
		fbb=$(($(fbstat bytes_done) - fb0b))
		fbr=$(($(fbstat fg_requests) - fb0r))
		fbd=$(($(fbstat fg_delayed) - fb0d))
	fi
	set -- $s0 $s1
	# the writes' three fields go last (old reports read the first 16)
	note "CSV,phase,$level,$method,$sched,$rate,$(($6 - $1)),$(($7 - $2)),$(($8 - $3)),$(($9 - $4)),$((${10} - $5)),$(echo "$fg" | cut -d, -f1-4),$fbb,$fbr,$fbd,$(echo "$fg" | cut -d, -f5-7)"
}

# --- the device model -----------------------------------------------------------
mkdev $DEV "$SIZE_MB" || { fail nullb_model "could not make $DEV"; finish; }
mkdev nullb1 "$SCRUB_MB" || { fail nullb_model "could not make nullb1"; finish; }
note "CSV,params,kernel=$(uname -r),guest_idle=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^idle=//p' | tail -n 1 | grep . || echo default),service_us=$SERVICE_US,scrub_mb=$SCRUB_MB,size_mb=$SIZE_MB,runtime_s=$RUNTIME,warm_s=$WARM,levels=$(echo $LEVELS | tr ' ' '/'),bg_block=${MAX_KB}KiB,cap_pct=$CAP_PCT,fg_write_pct=$FG_WRITE_PCT,nr_requests=$NR_REQUESTS,fb_depth=$FB_DEPTH,fb_idle_min_us=$(cat /sys/module/freeblock/parameters/idle_min_us),fb_idle_mult=$(cat /sys/module/freeblock/parameters/idle_mult)"
note "CSV,model,nullb,null_blk queue_mode=2 submit_queues=1 hw_queue_depth=1 irqmode=2 completion_nsec=$((SERVICE_US * 1000)) max_sectors_kb=$MAX_KB (${SIZE_MB} MiB for the levels; ${SCRUB_MB} MiB for the full scrub; not memory_backed)"

# --- sequential bandwidth and a full scrub of an idle disk ------------------------
use_sched nullb1 none
best_ms=
for round in 1 2; do
	t0=$(now_ms)
	dd if=/dev/nullb1 of=/dev/null bs=1M iflag=direct 2>/dev/null
	t1=$(now_ms)
	note "CSV,seq,$round,$((SCRUB_MB << 20)),$((t1 - t0))"
	[ -z "$best_ms" ] || [ $((t1 - t0)) -lt "$best_ms" ] && best_ms=$((t1 - t0))
	# 1 MiB blocks go as MAX_KB bios each, like dd's 1 MiB reads
	for bs in $BG_BS 1048576; do
		t0=$(now_ms)
		freeblock-scrub -q --bs $bs /dev/nullb1
		rc=$?
		t1=$(now_ms)
		note "CSV,fullscrub,$round,$((SCRUB_MB << 20)),$((t1 - t0)),$rc,$bs"
	done
done
# the rate cap: CAP_PCT % of the best sequential bandwidth, KiB/s
CAP_KIBS=$(((SCRUB_MB << 10) * 10 * CAP_PCT / best_ms))
note "CSV,cap,$CAP_KIBS"

# --- calibration: the foreground back to back -------------------------------------
use_sched $DEV none
s0=$(snap)
fio --filename=/dev/$DEV --direct=1 --ioengine=psync --time_based \
	--runtime="$RUNTIME" --output-format=json $(fg_opts 0) >/tmp/calib.json 2>/tmp/fio.err
s1=$(snap)
cal=$(fio_fg /tmp/calib.json)
# reads and writes side by side: the two jobs' IOPS together
ios=$(($(echo "$cal" | cut -d, -f1) + $(echo "$cal" | cut -d, -f5)))
rt=$(echo "$cal" | cut -d, -f2)
MAX_IOPS=$((ios * 1000 / (rt + 1)))
set -- $s0 $s1
note "CSV,calib,$MAX_IOPS,$(((${10} - $5) * 100 / ($6 - $1))),$(echo "$cal" | cut -d, -f3,4,6,7)"
[ "$MAX_IOPS" -gt 0 ] || { fail calibration "no foreground IOPS: $(head -c 300 /tmp/fio.err)"; finish; }

# --- the levels -------------------------------------------------------------------
for level in $LEVELS; do
	# 100 %: back to back (rate 0 = no rate limit)
	rate=$((MAX_IOPS * level / 100))
	[ "$level" -gt 0 ] && [ "$rate" -lt 1 ] && rate=1
	[ "$level" -ge 100 ] && rate=0
	for m in $METHODS; do
		method=${m%%:*}
		sched=${m#*:}
		[ "$level" = 0 ] && { [ "$method" = base ] || [ "$method" = again ]; } && continue
		phase "$level" "$method" "$sched" "$rate"
	done
done
use_sched $DEV none
note "CSV,fbstats,$(mobioctl fb stats $DEV | tr ' ' '=' | tr '\n' ',' | sed 's/,$//')"
pass bench_done
finish
