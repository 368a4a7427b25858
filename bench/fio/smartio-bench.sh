#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# SmartIO benchmark, guest side (bench/fio/run-bench.py boots it): every
# scheduler side by side on the same device models in one boot.
#
#  slowdown  1 reader (4 KiB psync) + 1 writer (WBS, WQD in flight), seq and
#            random: each alone, then together; latency mean and p99
#  curve     smartio's trade-off: the same pair under fixed write rates
#            (controller off; 0: no limit) and under other controller targets
#  mixed     MIX_MB of I/O, 10..90% of it random reads, the rest writes,
#            both at once: time until both are done
#  launch    cold "app launch": drop caches, read LAUNCH_FILES files of
#            LAUNCH_KB on ext2, alone and beside a writer
#
# Every result is a "CSV,..." note on the result channel (report.py turns
# them into the CSV, the table and the chart). Parameters come from the
# kernel command line (fiobench.<key>=<value>, see run-bench.py).
# vm-kmod: null_blk kyber-iosched bfq
# vm-bin: /usr/bin/fio
# vm-disk: data 512M
# vm-timeout: 5400
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

opt() { # KEY DEFAULT
	local v
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^fiobench\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}
MODELS=$(opt models nullb,virtio | tr ',' ' ')
SCHEDS=$(opt scheds none,mq-deadline,kyber,bfq,smartio | tr ',' ' ')
PARTS=$(opt parts slowdown,curve,mixed,launch | tr ',' ' ')
RUNTIME=$(opt runtime 8)
WBS=$(opt wbs 128k)
WQD=$(opt wqd 16)
MBPS=$(opt mbps 16)
MIX_MB=$(opt mix_mb 32)
LAUNCH_FILES=$(opt launch_files 24)
LAUNCH_KB=$(opt launch_kb 256)
JOBS=/usr/local/bin
export WBS WQD RUNTIME

kmod_load null_blk nr_devices=0
command insmod /kmod/kyber_iosched.ko
command insmod /kmod/bfq.ko
smartio_load

# fio_get FILE JOB DIR FIELD: mean_us | p99_us | ios | kib_s | runtime_ms of one job
fio_get() {
	awk -v job="\"$2\"" -v dir="\"$3\"" -v field="$4" '
		$1 == "\"jobname\"" { v = $3; sub(",", "", v); cur = (v == job); next }
		cur && $1 == dir && $2 == ":" { in_dir = 1; next }
		in_dir && $1 == "\"total_ios\"" { v = $3; sub(",", "", v); ios = v }
		in_dir && $1 == "\"runtime\"" { v = $3; sub(",", "", v); rt = v }
		in_dir && $1 == "\"bw\"" && bw == "" { v = $3; sub(",", "", v); bw = v }
		in_dir && $1 == "\"lat_ns\"" { in_lat = 1; next }
		in_lat && $1 == "\"mean\"" { v = $3; sub(",", "", v); mean = v }
		in_lat && $1 == "\"99.000000\"" { v = $3; sub(",", "", v); p99 = v }
		in_lat && $1 ~ /^}/ && !in_pct { in_lat = 0; in_dir = 0; cur = 0 }
		in_lat && $1 == "\"percentile\"" { in_pct = 1 }
		in_pct && $1 ~ /^}/ { in_pct = 0 }
		END {
			if (field == "mean_us") printf "%.1f\n", mean / 1000
			else if (field == "p99_us") printf "%.1f\n", p99 / 1000
			else if (field == "ios") print ios + 0
			else if (field == "kib_s") print bw + 0
			else if (field == "runtime_ms") print rt + 0
		}' "$1"
}

now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }

# run_pair DEV PATTERN PHASE OUT: PHASE is read, write or both
run_pair() {
	local dev=$1 pat=$2 phase=$3 out=$4 rp wp
	case $pat in
	seq) rp=read wp=write ;;
	rand) rp=randread wp=randwrite ;;
	esac
	case $phase in
	read) DEV=$dev PATTERN=$rp fio --output-format=json $JOBS/reader.fio >"$out" ;;
	write) DEV=$dev PATTERN=$wp fio --output-format=json $JOBS/writer.fio >"$out" ;;
	both)
		DEV=$dev PATTERN=$rp fio --output-format=json $JOBS/reader.fio >"$out.r" &
		DEV=$dev PATTERN=$wp fio --output-format=json $JOBS/writer.fio >"$out.w"
		wait
		cat "$out.r" "$out.w" >"$out"
		;;
	esac
}

# slowdown MODEL DEV SCHED LABEL: the three phases of both patterns, one
# CSV line per phase: CSV,lat,model,label,pattern,phase,r_mean,r_p99,r_ios,
# w_mean,w_p99,w_ios,w_kib_s
slowdown() {
	local model=$1 dev=$2 sched=$3 label=$4 pat phase f
	for pat in ${PATTERNS:-seq rand}; do
		sched_set "${dev#/dev/}" none
		sched_set "${dev#/dev/}" "$sched" || { fail "${model}_${label}_sched" "no $sched"; return; }
		[ -n "$TUNE" ] && eval "$TUNE"
		for phase in ${PHASES:-read write both}; do
			f=/tmp/$model-$label-$pat-$phase.json
			run_pair "$dev" $pat $phase "$f"
			note "CSV,lat,$model,$label,$pat,$phase,$(fio_get "$f" reader read mean_us),$(fio_get "$f" reader read p99_us),$(fio_get "$f" reader read ios),$(fio_get "$f" writer write mean_us),$(fio_get "$f" writer write p99_us),$(fio_get "$f" writer write ios),$(fio_get "$f" writer write kib_s)"
		done
		if [ "$sched" = smartio ]; then
			note "CSV,smartio,$model,$label,$pat,$(tr '\n' ' ' </sys/kernel/debug/block/${dev#/dev/}/sched/stats)"
		fi
	done
}

# the trade-off curve: smartio under other throttles, alone phases shared
curve() {
	local model=$1 dev=$2 io=/sys/block/${2#/dev/}/queue/iosched r t
	for r in 1024 2048 4096 8192 16384 0; do
		TUNE="echo 0 >$io/controller; echo $r >$io/write_rate_kbps" \
			PHASES=both slowdown "$model" "$dev" smartio "smartio-rate${r}k"
	done
	for t in 110 200 400; do
		TUNE="echo $t >$io/target_slowdown_pct" PHASES=both \
			slowdown "$model" "$dev" smartio "smartio-target$t"
	done
}

# mixed MODEL DEV SCHED: CSV,mixed,model,sched,read_pct,ms,r_mean,w_mean,r_ios,w_ios
mixed() {
	local model=$1 dev=$2 sched=$3 pct t0 t1 rb wb f
	sched_set "${dev#/dev/}" none
	sched_set "${dev#/dev/}" "$sched"
	for pct in 10 20 30 40 50 60 70 80 90; do
		rb=$((MIX_MB * 1024 * pct / 100))k
		wb=$((MIX_MB * 1024 * (100 - pct) / 100))k
		f=/tmp/mixed-$model-$sched-$pct.json
		t0=$(now_ms)
		DEV=$dev READ_BYTES=$rb WRITE_BYTES=$wb fio --output-format=json $JOBS/mixed.fio >"$f"
		t1=$(now_ms)
		note "CSV,mixed,$model,$sched,$pct,$((t1 - t0)),$(fio_get "$f" reader read mean_us),$(fio_get "$f" writer write mean_us),$(fio_get "$f" reader read ios),$(fio_get "$f" writer write ios)"
	done
}

# launch MODEL DEV SCHED: CSV,launch,model,sched,alone_ms,beside_writer_ms (medians of 3)
launch_once() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	# buffered reads of every file in turn, page cache dropped first
	fio --name=launch --filename="$APP_FILES" --rw=read --bs=128k \
		--ioengine=psync --invalidate=1 --file_service_type=sequential \
		--size=$((LAUNCH_FILES * LAUNCH_KB))k --output-format=json >/tmp/launch.json
	fio_get /tmp/launch.json launch read runtime_ms
}
median3() { echo "$1 $2 $3" | tr ' ' '\n' | sort -n | sed -n 2p; }
launch() {
	local model=$1 d=$2 sched=$3 a b c w
	sched_set "$d" none
	sched_set "$d" "$sched"
	a=$(launch_once); b=$(launch_once); c=$(launch_once)
	alone=$(median3 $a $b $c)
	fio --name=bg --filename=/mnt/bg --size=48M --direct=1 --ioengine=libaio \
		--iodepth=$WQD --bs=$WBS --rw=write --time_based --runtime=600 \
		>/dev/null 2>&1 &
	w=$!
	sleep 2
	a=$(launch_once); b=$(launch_once); c=$(launch_once)
	kill $w
	wait $w 2>/dev/null
	note "CSV,launch,$model,$sched,$alone,$(median3 $a $b $c)"
}

note "CSV,params,kernel=$(uname -r),runtime_s=$RUNTIME,writer_bs=$WBS,writer_qd=$WQD,nullb_mbps=$MBPS,mix_mb=$MIX_MB,launch=${LAUNCH_FILES}x${LAUNCH_KB}KiB"
for model in $MODELS; do
	case $model in
	nullb)
		# DESIGN.md section 9: a shared bandwidth budget refilled every 20 ms
		dev=$(nullb_make nullb0 size=512 queue_mode=2 submit_queues=1 \
			hw_queue_depth=32 irqmode=2 completion_nsec=200000 mbps=$MBPS)
		note "CSV,model,nullb,null_blk queue_mode=2 submit_queues=1 hw_queue_depth=32 irqmode=2 completion_nsec=200000 mbps=$MBPS"
		;;
	virtio)
		dev=$DISK_data
		note "CSV,model,virtio,virtio-blk raw image with QEMU throttling.bps-total (see run-bench.py)"
		;;
	esac
	for part in $PARTS; do
		case $part in
		slowdown)
			for s in $SCHEDS; do slowdown $model "$dev" $s $s; done ;;
		curve)
			[ $model = nullb ] && curve $model "$dev" ;;
		mixed)
			[ $model = nullb ] && for s in $SCHEDS; do mixed $model "$dev" $s; done ;;
		esac
	done
	sched_set "${dev#/dev/}" none
done

case " $PARTS " in
*" launch "*)
	nullb_make nullb9 size=160 memory_backed=1 queue_mode=2 submit_queues=1 \
		hw_queue_depth=32 irqmode=2 completion_nsec=200000 mbps=$MBPS >/dev/null
	mke2fs -q /dev/nullb9 >/dev/null
	mkdir -p /mnt
	mount -t ext2 /dev/nullb9 /mnt
	mkdir -p /mnt/app
	i=0
	while [ $i -lt "$LAUNCH_FILES" ]; do
		dd if=/dev/urandom of=/mnt/app/lib$i.so bs=1k count="$LAUNCH_KB" 2>/dev/null
		i=$((i + 1))
	done
	sync
	APP_FILES=$(ls /mnt/app/* | tr '\n' ':' | sed 's/:$//')
	for s in $SCHEDS; do launch nullb-ext2 nullb9 $s; done
	umount /mnt
	;;
esac
pass bench_done
finish
