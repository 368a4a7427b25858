#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Freeblock benchmark, guest side (bench/freeblock/run-bench.py boots it once
# per boot): background MiB/s obtained vs foreground load, and what the
# background costs the foreground, for freeblock.ko (fb-scrub) and its peers,
# on a plain and on stacked device models, every configuration interleaved.
#
# Device model: null_blk nullb0, one hardware queue of depth 1, timer
# completion after SERVICE_US per request, requests cut at MAX_KB: a serial,
# non-preemptible device whose service time does not depend on the offset
# (a disk whose seek dominates), so "utilization" is what it says and a
# background request in service delays a foreground arrival by up to one
# service time. No data is stored (not memory_backed): a scrub here proves
# nothing about data, only scheduling.
# Models (fbbench.models), all on that same nullb0, all set up at boot:
#   plain   nullb0 itself (top = leaf = nullb0)
#   crypt   dm-crypt over nullb0 (dmsetup crypt table, the kernel's own
#           crypto, aes-xts-plain64, a 512-bit key from /dev/urandom)
#   linear  dm-linear over nullb0 (what an LVM logical volume is)
# A dm device is bio-based: it has no I/O scheduler of its own, the elevator
# is the leaf's. So the foreground, the background and freeblock's task all
# go to the top device, and the elevator of a mode (BFQ for the ionice -c3
# peer) is set on the leaf nullb0. Counters are the top device's.
#
# Foreground: fio random 4 KiB O_DIRECT reads, one at a time (psync),
# Poisson arrivals at LEVEL % of the model's calibrated maximum IOPS (100 %:
# back to back). With fbbench.fg_write_pct=W (1-90) W % of the same job's
# requests are random 4 KiB O_DIRECT writes (fio rw=randrw, still one at a
# time, calibration included). Background bytes come from the read counters,
# which the writes do not touch.
# Modes, each a "METHOD:ELEVATOR" pair (elevator of the leaf):
#   alone     the foreground alone: the baseline, a cell of every round
#   again     the same once more, elsewhere in the round: how far two runs of
#             the same thing differ (the noise floor of an impact)
#   fb        freeblock-scrub of the whole top device (64 KiB blocks), the
#             disk inherits the module parameters (defaults)
#   fbt       the same at one tuned point (fbbench.fb_tuned, e.g. depth=1):
#             `mobioctl fb set TOP k=v` (the disk's own tunables), reset to
#             "default" after the cell; the module parameters if that fails.
#             fbbench.fb_tuned may hold several points separated by "+"
#             (collide_pct=10+collide_pct=30): fbt is the first, fbt2,
#             fbt3, ... the others, each a mode of its own
#   ionice    ionice -c3 dd iflag=direct bs=64k of the whole top device
#   ionicet   the same with the elevator's tunables fbbench.bfq_tuned
#             (e.g. slice_idle=0) written after the elevator is set
#   ratecap   a rate-limited sequential reader (fio rate=, 64 KiB): the
#             btrfs scrub_speed_max / md speed_limit approach
# Rounds: every round runs every (model, level, mode) cell once, in an order
# shuffled with seed ORDER_SEED*1000+round (awk srand/rand); the elevator is
# set anew for every cell, so its tunables start from its defaults.
# Background bytes come from the top device's own counters
# (/sys/block/X/stat) over a window inside the foreground run (from WARM s
# after fio's first job starts, marked by its exec_prerun, to 0.5 s before
# its end): every background request is 64 KiB and every foreground one
# 4 KiB, so the two request counts follow from the reads and sectors
# completed.
#
# Every result is a "CSV,..." note (bench/freeblock/report.py reads them):
#   CSV,params,k=v,...                 CSV,fbparams,name=value,... (what exists)
#   CSV,model,NAME,TOP,LEAF,description  CSV,skip,WHAT,WHY
#   CSV,calib,MODEL,max_iops,util_pct,mean_us,p99_us,w_mean_us,w_p99_us
#   CSV,seqtop,MODEL,bytes,ms          (dd bs=1M of the top device, idle)
#   CSV,seq,round,bytes,ms             CSV,fullscrub,round,bytes,ms,rc,blksize
#   CSV,cap,KiB/s                      CSV,fbtuned,via,settings
#   CSV,round,ROUND,SEED,CELLS,ms      CSV,runtime,seconds
#   CSV,cell,round,pos,model,level,method,sched,rate_iops,window_ms,d_reads,
#       d_sectors,d_rticks_ms,d_ioticks_ms,leaf_d_ioticks_ms,fg_ios,
#       fg_runtime_ms,fg_mean_us,fg_p99_us,fb_bytes,fb_fg_requests,
#       fb_fg_delayed,fgw_ios,fgw_mean_us,fgw_p99_us
#   CSV,fbstats,MODEL,k=v ...
# Parameters come from the kernel command line (fbbench.<key>=<value>).
# vm-kmod: null_blk kyber-iosched bfq dm_mod dm_crypt xts aesni_intel
# vm-bin: /usr/bin/fio /usr/sbin/dmsetup
# vm-timeout: 3600
# shellcheck source=tests/vm/guest/lib.sh
. /mobio/tests/lib.sh
# shellcheck source=tests/vm/guest/smartio-lib.sh
. /mobio/tests/smartio-lib.sh
cd /tmp || exit 1

opt() { # KEY DEFAULT
	local v
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^fbbench\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}
LEVELS=$(opt levels 0,20,40,60,80,100 | tr ',' ' ')
MODELS=$(opt models plain,crypt,linear | tr ',' ' ')
MODES=$(opt modes alone:none,again:none,fb:none,fbt:none,ionice:bfq,ionicet:bfq,ratecap:none | tr ',' ' ')
ROUNDS=$(opt rounds 3)
ORDER_SEED=$(opt order_seed 1)
BOOT=$(opt boot 1)
RUNTIME=$(opt runtime 3)
WARM=$(opt warm 0.5)
SERVICE_US=$(opt service_us 1000)
MAX_KB=$(opt max_kb 64)
SIZE_MB=$(opt size_mb 4096)
SCRUB_MB=$(opt scrub_mb 128)
CAP_PCT=$(opt cap_pct 10)
FG_WRITE_PCT=$(opt fg_write_pct 0)
NR_REQUESTS=$(opt nr_requests 64)
FB_TUNED_POINTS=$(opt fb_tuned depth=1)
# every setting of every tuned point, one a word
FB_TUNED=$(echo "$FB_TUNED_POINTS" | tr ',+' '  ')
BFQ_TUNED=$(opt bfq_tuned slice_idle=0 | tr ',' ' ')
BG_BS=$((MAX_KB * 1024))
LEAF=nullb0
FB_KO=/mobio/freeblock.ko
FBP=/sys/module/freeblock/parameters
T_START=$(cut -d. -f1 /proc/uptime)

kmod_load null_blk nr_devices=0
kmod_load bfq || note "CSV,skip,elevator bfq,bfq.ko did not load"
command insmod /kmod/kyber_iosched.ko
smartio_load || note "CSV,skip,elevator smartio,smartio-iosched.ko did not load"
insmod $FB_KO || { fail freeblock_loads "insmod $FB_KO failed"; finish; }

now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# The final notes: FINISH must reach the host after every note before it.
# lib.sh's finish waits 5 s for the host's answer; a backlog on ttyS1 (a busy
# host, TCG) took longer once and the power-off lost FINISH ("QEMU exited
# without finish" with every result there). The host answers every FINISH in
# the order the lines came, so one answered FINISH means all notes arrived;
# then lib.sh's finish (a second FINISH, answered at once) powers off.
bench_finish() {
	sync
	_mobio_say "FINISH"
	_mobio_wait_done finish 300 || log "no answer to FINISH in 300 s"
	finish
}

# mkdev NAME SIZE_MB: the null_blk device model, prints nothing
mkdev() {
	nullb_make "$1" size="$2" queue_mode=2 submit_queues=1 hw_queue_depth=1 \
		irqmode=2 completion_nsec=$((SERVICE_US * 1000)) >/dev/null || return 1
	echo "$MAX_KB" >"/sys/block/$1/queue/max_sectors_kb"
}

# use_sched DEV SCHED: the elevator, with NR_REQUESTS scheduler tags (the
# default with an elevator is twice the hardware depth: 2 here); set anew, so
# its tunables are its defaults
use_sched() {
	sched_set "$1" none
	sched_set "$1" "$2" || return 1
	[ "$2" = none ] || echo "$NR_REQUESTS" >"/sys/block/$1/queue/nr_requests"
}

# snap TOP: "ms reads sectors read_ticks_ms io_ticks_ms leaf_io_ticks_ms"
snap() {
	local leaf
	leaf=$(awk '{ print $10 }' /sys/block/$LEAF/stat)
	set -- $(cat /sys/block/$1/stat)
	echo "$(now_ms) $1 $3 $4 ${10} $leaf"
}

# fbstat DEV NAME: one freeblock counter of DEV (0 before its first task)
fbstat() {
	local v
	v=$(mobioctl fb stats "$1" 2>/dev/null | sed -n "s/^$2 //p")
	echo "${v:-0}"
}

# fio_job FILE JOB DIR: "ios,runtime_ms,mean_us,p99_us" of JOB's DIR (read
# or write) section in fio's JSON output; zeros when there is no such job
fio_job() {
	awk -v job="$2" -v dir="\"$3\"" '
		function num(s) { gsub(/[",]/, "", s); return s + 0 }
		# a job or a direction section ends the one before (a section
		# without samples has no percentiles to end it)
		$1 == "\"jobname\"" { v = $3; gsub(/[",]/, "", v); cur = (v == job); inr = inl = 0; next }
		$1 ~ /^"(read|write|trim|sync)"$/ && $3 == "{" { inr = cur && $1 == dir; inl = 0; next }
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

# fb_point METHOD: the settings of tuned point fbt (the first) or fbtN, one
# a word
fb_point() {
	local n=${1#fbt}
	echo "$FB_TUNED_POINTS" | cut -d+ -f"${n:-1}" | tr ',' ' '
}

# fb_tune TOP on|off METHOD: freeblock's tuned point of METHOD (fbt, fbt2,
# ...) for the disk TOP
fb_tune() {
	local kv point reset
	point=$(fb_point "$3")
	if [ "$FB_TUNED_VIA" = mobioctl ]; then
		if [ "$2" = on ]; then
			# shellcheck disable=SC2086 # one setting a word
			mobioctl fb set "$1" $point >/dev/null
		else
			reset=$(for kv in $point; do printf '%s=default ' "${kv%%=*}"; done)
			# shellcheck disable=SC2086
			mobioctl fb set "$1" $reset >/dev/null
		fi
		return
	fi
	for kv in $point; do
		if [ "$2" = on ]; then
			echo "${kv#*=}" >"$FBP/${kv%%=*}"
		else
			eval "echo \"\$FBDEF_${kv%%=*}\"" >"$FBP/${kv%%=*}"
		fi
	done
}

# cell ROUND POS MODEL LEVEL METHOD SCHED: one measurement, one CSV,cell line
cell() {
	local round=$1 pos=$2 model=$3 level=$4 method=$5 sched=$6
	local top max rate bg='' jobs='' f=/tmp/phase.json kv
	local s0 s1 fb0b=0 fb0r=0 fb0d=0 fbb=0 fbr=0 fbd=0 fg=0,0,0,0,0,0,0 fio=''
	eval "top=\$TOP_$model; max=\$IOPS_$model"
	# 100 %: back to back (rate 0 = no rate limit)
	rate=$((max * level / 100))
	[ "$level" -gt 0 ] && [ "$rate" -lt 1 ] && rate=1
	[ "$level" -ge 100 ] && rate=0
	use_sched $LEAF "$sched" || { note "CSV,skip,$method:$sched,no elevator $sched"; return; }
	if [ "$method" = ionicet ]; then
		for kv in $BFQ_TUNED; do
			echo "${kv#*=}" >"/sys/block/$LEAF/queue/iosched/${kv%%=*}" ||
				note "CSV,skip,$method:$sched,no tunable ${kv%%=*} in $sched"
		done
	fi
	[ "$level" -gt 0 ] && jobs=$(fg_opts "$rate")
	case $method in
	fb | fbt*)
		[ $method != fb ] && fb_tune "$top" on $method
		fb0b=$(fbstat "$top" bytes_done)
		fb0r=$(fbstat "$top" fg_requests)
		fb0d=$(fbstat "$top" fg_delayed)
		freeblock-scrub -q --bs $BG_BS /dev/$top >/dev/null 2>/tmp/fb-scrub.err &
		bg=$!
		;;
	ionice | ionicet)
		ionice -c3 dd if=/dev/$top of=/dev/null bs=$BG_BS iflag=direct 2>/dev/null &
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
		fio --filename=/dev/$top --direct=1 --ioengine=psync --time_based \
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
	s0=$(snap "$top")
	sleep $((RUNTIME - 1))
	s1=$(snap "$top")
	if [ -n "$fio" ]; then
		wait $fio || note "fio failed ($model $level $method $sched): $(head -c 200 /tmp/fio.err)"
		[ "$level" -gt 0 ] && fg=$(fio_fg $f)
	fi
	# SIGTERM: an asynchronous command of a script ignores SIGINT
	if [ -n "$bg" ]; then
		kill $bg 2>/dev/null ||
			note "background $model $method:$sched ended early: $(head -c 200 /tmp/fb-scrub.err)"
		wait $bg
	fi
	if [ "${method%%[0-9]*}" = fb ] || [ "${method%%[0-9]*}" = fbt ]; then
		fbb=$(($(fbstat "$top" bytes_done) - fb0b))
		fbr=$(($(fbstat "$top" fg_requests) - fb0r))
		fbd=$(($(fbstat "$top" fg_delayed) - fb0d))
		[ $method != fb ] && fb_tune "$top" off $method
	fi
	set -- $s0 $s1
	note "CSV,cell,$round,$pos,$model,$level,$method,$sched,$rate,$((${7} - $1)),$((${8} - $2)),$((${9} - $3)),$((${10} - $4)),$((${11} - $5)),$((${12} - $6)),$(echo "$fg" | cut -d, -f1-4),$fbb,$fbr,$fbd,$(echo "$fg" | cut -d, -f5-7)"
}

# --- the device models ------------------------------------------------------------
mkdev $LEAF "$SIZE_MB" || { fail nullb_model "could not make $LEAF"; bench_finish; }
mkdev nullb1 "$SCRUB_MB" || { fail nullb_model "could not make nullb1"; bench_finish; }
SECTORS=$(cat /sys/block/$LEAF/size)
NULLB_DESC="null_blk queue_mode=2 submit_queues=1 hw_queue_depth=1 irqmode=2 completion_nsec=$((SERVICE_US * 1000)) max_sectors_kb=$MAX_KB (${SIZE_MB} MiB; not memory_backed)"

# dm_make NAME TABLE: a dm device; prints its dm-N name
dm_make() {
	local d
	DM_DISABLE_UDEV=1 dmsetup create "$1" --table "$2" >/tmp/dm.err 2>&1 || {
		echo "dmsetup create $1: $(head -c 200 /tmp/dm.err | tr '\n,' '  ')" >&2
		return 1
	}
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name" 2>/dev/null)" = "$1" ] && { echo "${d##*/}"; return 0; }
	done
	echo "dmsetup create $1: no /sys/block/dm-*/dm/name $1" >&2
	return 1
}

DM_LOADED=
dm_load() {
	[ -n "$DM_LOADED" ] && return 0
	kmod_load dm_mod || return 1
	DM_LOADED=1
}

models=
for model in $MODELS; do
	case $model in
	plain)
		top=$LEAF
		desc=$NULLB_DESC
		;;
	crypt)
		# aesni_intel's xts-aes-aesni when the CPU has AES-NI (TCG -cpu max
		# does), else the xts template over the built-in aes_generic
		kmod_load aesni_intel 2>/dev/null || log "aesni_intel did not load"
		if ! dm_load || ! kmod_load xts || ! kmod_load dm_crypt; then
			note "CSV,skip,model crypt,dm-crypt or its crypto did not load"
			continue
		fi
		KEY=$(head -c 64 /dev/urandom | od -An -v -tx1 | tr -d ' \n')
		top=$(dm_make fbcrypt "0 $SECTORS crypt aes-xts-plain64 $KEY 0 /dev/$LEAF 0" 2>/tmp/dm.why) ||
			{ note "CSV,skip,model crypt,$(cat /tmp/dm.why)"; continue; }
		drv=$(awk '$1 == "name" { n = $3 } $1 == "driver" && n == "xts(aes)" { print $3 }' /proc/crypto | tr '\n' '/' | sed 's,/$,,')
		desc="dm-crypt aes-xts-plain64 (512-bit key from /dev/urandom; xts(aes) by ${drv:-?}) over $LEAF: $NULLB_DESC"
		;;
	linear)
		dm_load || { note "CSV,skip,model linear,dm_mod did not load"; continue; }
		top=$(dm_make fblinear "0 $SECTORS linear /dev/$LEAF 0" 2>/tmp/dm.why) ||
			{ note "CSV,skip,model linear,$(cat /tmp/dm.why)"; continue; }
		desc="dm-linear (an LVM logical volume's mapping) over $LEAF: $NULLB_DESC"
		;;
	*)
		note "CSV,skip,model $model,unknown model"
		continue
		;;
	esac
	eval "TOP_$model=$top"
	models="$models $model"
	note "CSV,model,$model,$top,$LEAF,$(echo "$desc" | tr ',' ';')"
done
MODELS=$models
[ -n "$MODELS" ] || { fail models "no device model could be set up"; bench_finish; }
pass models_ready

# what the module has (the tunables change: list them, name none)
FBPARAMS=$(for f in "$FBP"/*; do printf '%s=%s,' "${f##*/}" "$(cat "$f" 2>/dev/null)"; done | sed 's/,$//')
for f in "$FBP"/*; do eval "FBDEF_${f##*/}=\$(cat \"\$f\")"; done
note "CSV,params,kernel=$(uname -r),boot=$BOOT,order_seed=$ORDER_SEED,rounds=$ROUNDS,models=$(echo $MODELS | tr ' ' '/'),modes=$(echo $MODES | tr ' ' '/'),guest_idle=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^idle=//p' | tail -n 1 | grep . || echo default),service_us=$SERVICE_US,scrub_mb=$SCRUB_MB,size_mb=$SIZE_MB,runtime_s=$RUNTIME,warm_s=$WARM,levels=$(echo $LEVELS | tr ' ' '/'),bg_block=${MAX_KB}KiB,cap_pct=$CAP_PCT,fg_write_pct=$FG_WRITE_PCT,nr_requests=$NR_REQUESTS,fb_tuned=$(echo "$FB_TUNED_POINTS" | tr ',' '/'),bfq_tuned=$(echo $BFQ_TUNED | tr ' ' '/')"
note "CSV,fbparams,$FBPARAMS"

# freeblock's tuned point: the disk's own tunables if mobioctl can set them
# (and reset them to "default"), else the module parameters (every disk's
# defaults), saved above and restored after each cell
case " $MODES " in
*" fbt:"*)
	first=${MODELS# }
	first=${first%% *}
	eval "t=\$TOP_$first"
	FB_TUNED_VIA=mobioctl
	: >/tmp/fbset.out
	for m in $(echo " $MODES " | grep -o ' fbt[0-9]*:' | tr -d ' :'); do
		point=$(fb_point "$m")
		reset=$(for kv in $point; do printf '%s=default ' "${kv%%=*}"; done)
		# shellcheck disable=SC2086 # one setting a word
		mobioctl fb set "$t" $point >>/tmp/fbset.out 2>&1 &&
			mobioctl fb set "$t" $reset >>/tmp/fbset.out 2>&1 ||
			FB_TUNED_VIA=param
	done
	if [ $FB_TUNED_VIA = param ]; then
		for kv in $FB_TUNED; do
			[ -w "$FBP/${kv%%=*}" ] && continue
			note "CSV,skip,fbt,no per-disk setting ($(head -c 120 /tmp/fbset.out | tr '\n,' '  ')) and no module parameter ${kv%%=*}"
			MODES=$(echo " $MODES " | sed 's/ fbt[0-9]*:[a-z-]*//g')
			break
		done
	fi
	note "CSV,fbtuned,$FB_TUNED_VIA,$(echo "$FB_TUNED_POINTS" | tr ',' '/')"
	;;
esac

# --- sequential bandwidth and a full scrub of an idle disk (plain nullb1) ----------
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

# --- per model: idle sequential read and the calibration (foreground back to back) --
use_sched $LEAF none
for model in $MODELS; do
	eval "top=\$TOP_$model"
	t0=$(now_ms)
	dd if=/dev/$top of=/dev/null bs=1M count=$SCRUB_MB iflag=direct 2>/dev/null
	t1=$(now_ms)
	note "CSV,seqtop,$model,$((SCRUB_MB << 20)),$((t1 - t0))"
	s0=$(snap "$top")
	# shellcheck disable=SC2046
	fio --filename=/dev/$top --direct=1 --ioengine=psync --time_based \
		--runtime="$RUNTIME" --output-format=json $(fg_opts 0) >/tmp/calib.json 2>/tmp/fio.err
	s1=$(snap "$top")
	cal=$(fio_fg /tmp/calib.json)
	# reads and writes side by side: the two jobs' IOPS together
	ios=$(($(echo "$cal" | cut -d, -f1) + $(echo "$cal" | cut -d, -f5)))
	rt=$(echo "$cal" | cut -d, -f2)
	iops=$((ios * 1000 / (rt + 1)))
	set -- $s0 $s1
	note "CSV,calib,$model,$iops,$(((${11} - $5) * 100 / (${7} - $1 + 1))),$(echo "$cal" | cut -d, -f3,4,6,7)"
	if [ "$iops" -le 0 ]; then
		note "CSV,skip,model $model,no foreground IOPS: $(head -c 200 /tmp/fio.err | tr '\n,' '  ')"
		MODELS=$(echo " $MODELS " | sed "s/ $model / /")
		continue
	fi
	eval "IOPS_$model=$iops"
done

# --- the rounds -------------------------------------------------------------------
cells=/tmp/cells
: >$cells
for model in $MODELS; do
	for level in $LEVELS; do
		for m in $MODES; do
			method=${m%%:*}
			[ "$level" = 0 ] && { [ "$method" = alone ] || [ "$method" = again ]; } && continue
			echo "$model $level $method ${m#*:}" >>$cells
		done
	done
done
ncells=$(wc -l <$cells)
note "rounds: $ROUNDS x $ncells cells, order seed $ORDER_SEED (round r: $ORDER_SEED*1000+r)"
round=1
while [ $round -le "$ROUNDS" ]; do
	seed=$((ORDER_SEED * 1000 + round))
	awk -v seed=$seed 'BEGIN { srand(seed) } { a[NR] = $0 }
		END { for (i = NR; i > 1; i--) { j = int(rand() * i) + 1; t = a[i]; a[i] = a[j]; a[j] = t }
		      for (i = 1; i <= NR; i++) print a[i] }' $cells >/tmp/order
	t0=$(now_ms)
	pos=1
	while read -r model level method sched; do
		cell $round $pos "$model" "$level" "$method" "$sched" </dev/null
		pos=$((pos + 1))
	done </tmp/order
	note "CSV,round,$round,$seed,$ncells,$(($(now_ms) - t0))"
	round=$((round + 1))
done
use_sched $LEAF none
for model in $MODELS; do
	eval "top=\$TOP_$model"
	note "CSV,fbstats,$model,$(mobioctl fb stats "$top" 2>/dev/null | tr ' ' '=' | tr '\n' ',' | sed 's/,$//')"
done
note "CSV,runtime,$(($(cut -d. -f1 /proc/uptime) - T_START))"
pass bench_done
bench_finish
