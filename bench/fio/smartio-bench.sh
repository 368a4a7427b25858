#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# SmartIO benchmark, guest side (bench/fio/run-bench.py boots it once per
# boot): every scheduler side by side on the same device models, ROUNDS
# rounds per boot, the configs of each round in an order shuffled by
# (SEED, BOOT, round), so no scheduler always runs first or after another.
#
#  slowdown  1 reader (4 KiB psync) + 1 writer (WBS, WQD in flight), seq and
#            random: each alone, then together; latency mean and p99
#  curve     the trade-off curve's points (points(): the peers' tuned
#            points, smartio under fixed write rates with its controller off
#            (0: no limit) and under other controller targets) run only
#            "together" and take the alone phases of their scheduler in the
#            same round (nullb model; needs slowdown)
#  mixed     MIX_MB of I/O, 10..90% of it random reads, the rest writes,
#            both at once: time until both are done (nullb model)
#
# Every result is a "CSV,..." note on the result channel (report.py turns
# them into the CSV, the tables and the charts). Parameters come from the
# kernel command line (fiobench.<key>=<value>, see run-bench.py).
#
#   CSV,params,k=v,...
#   CSV,lat,boot,round,model,label,pattern,phase,r_mean,r_p99,r_ios,w_mean,w_p99,w_ios,w_kib_s
#   CSV,mixed,boot,round,model,sched,read_pct,ms,r_mean,w_mean,r_ios,w_ios
#   CSV,smartio,boot,round,model,label,pattern,<debugfs stats>
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
PARTS=$(opt parts slowdown,curve,mixed | tr ',' ' ')
RUNTIME=$(opt runtime 8)
WBS=$(opt wbs 128k)
WQD=$(opt wqd 16)
MBPS=$(opt mbps 16)
MIX_MB=$(opt mix_mb 32)
ROUNDS=$(opt rounds 2)
SEED=$(opt seed 1)
BOOT=$(opt boot 1)
WARM_S=$(opt warm_s 2)
RATES="1024 2048 4096 8192 16384 0"	# curve: write_rate_kbps, controller off
TARGETS="110 200 400"			# curve: target_slowdown_pct
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

# slowdown MODEL DEV CONFIG ROUND PHASES: the PHASES (read, write, both) of
# both patterns under CONFIG (sched_config), one CSV,lat line per phase.
# Without a "read" phase the reader first runs alone for WARM_S s, not
# measured: the scheduler is new at each config (sched_config goes through
# none), and the slowdown rows' schedulers have seen reads alone before
# "both" too (smartio learns its read baselines from them).
slowdown() {
	local model=$1 dev=$2 c=$3 r=$4 phases=$5 pat phase f
	for pat in $(order_shuffle "p$r$model$c" seq rand); do
		sched_config "${dev#/dev/}" "$c" || { fail "${model}_${c}_config" "cannot set up $c"; return; }
		case " $phases " in
		*" read "*) ;;
		*)
			DEV=$dev PATTERN=$([ $pat = seq ] && echo read || echo randread) \
				RUNTIME=$WARM_S fio --output-format=json $JOBS/reader.fio >/dev/null ;;
		esac
		for phase in $phases; do
			f=/tmp/$model-$pat-$phase.json
			run_pair "$dev" $pat $phase "$f"
			note "CSV,lat,$BOOT,$r,$model,$c,$pat,$phase,$(fio_get "$f" reader read mean_us),$(fio_get "$f" reader read p99_us),$(fio_get "$f" reader read ios),$(fio_get "$f" writer write mean_us),$(fio_get "$f" writer write p99_us),$(fio_get "$f" writer write ios),$(fio_get "$f" writer write kib_s)"
		done
		if [ "${c%%@*}" = smartio ]; then
			note "CSV,smartio,$BOOT,$r,$model,$c,$pat,$(tr '\n' ' ' </sys/kernel/debug/block/${dev#/dev/}/sched/stats)"
		fi
	done
}

# points: the configs of the trade-off curve (see the header), of the
# schedulers in SCHEDS only (their alone phases are the slowdown part's)
points() {
	local s x
	for s in $SCHEDS; do
		case $s in
		mq-deadline | kyber | bfq) echo "$s-tuned" ;;
		smartio)
			for x in $RATES; do echo "smartio@controller=0+write_rate_kbps=$x"; done
			for x in $TARGETS; do echo "smartio@target_slowdown_pct=$x"; done
			;;
		esac
	done
}

# mixed MODEL DEV SCHED ROUND: CSV,mixed,boot,round,model,sched,read_pct,ms,r_mean,w_mean,r_ios,w_ios
mixed() {
	local model=$1 dev=$2 sched=$3 r=$4 pct t0 t1 rb wb f
	sched_config "${dev#/dev/}" "$sched" || { fail "mixed_${sched}_config" "cannot set up $sched"; return; }
	for pct in $(order_shuffle "m$r$sched" 10 20 30 40 50 60 70 80 90); do
		rb=$((MIX_MB * 1024 * pct / 100))k
		wb=$((MIX_MB * 1024 * (100 - pct) / 100))k
		f=/tmp/mixed-$model-$pct.json
		t0=$(now_ms)
		DEV=$dev READ_BYTES=$rb WRITE_BYTES=$wb fio --output-format=json $JOBS/mixed.fio >"$f"
		t1=$(now_ms)
		note "CSV,mixed,$BOOT,$r,$model,$sched,$pct,$((t1 - t0)),$(fio_get "$f" reader read mean_us),$(fio_get "$f" writer write mean_us),$(fio_get "$f" reader read ios),$(fio_get "$f" writer write ios)"
	done
}

note "CSV,params,kernel=$(uname -r),boot=$BOOT,seed=$SEED,rounds=$ROUNDS,runtime_s=$RUNTIME,warm_s=$WARM_S,writer_bs=$WBS,writer_qd=$WQD,nullb_mbps=$MBPS,mix_mb=$MIX_MB,kyber_read_lat_nsec=$KYBER_READ_LAT,dl_read_expire=$DL_READ_EXPIRE,dl_writes_starved=$DL_WRITES_STARVED,bfq_slice_idle=$BFQ_SLICE_IDLE"
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
	eval "DEV_$model=$dev"
done

r=1
while [ $r -le "$ROUNDS" ]; do
	for model in $(order_shuffle "d$r" $MODELS); do
		eval "dev=\$DEV_$model"
		work=
		case " $PARTS " in *" slowdown "*) work="$work $(echo $SCHEDS | sed 's/[^ ]*/slowdown:&/g')" ;; esac
		case " $PARTS " in *" curve "*)
			[ $model = nullb ] && work="$work $(points | sed 's/^/curve:/')" ;; esac
		case " $PARTS " in *" mixed "*)
			[ $model = nullb ] && work="$work $(echo $SCHEDS | sed 's/[^ ]*/mixed:&/g')" ;; esac
		log "round $r model $model: $(echo $work | wc -w) configs"
		for j in $(order_shuffle "j$r$model" $work); do
			case $j in
			slowdown:*) slowdown $model "$dev" "${j#*:}" $r "read write both" ;;
			curve:*) slowdown $model "$dev" "${j#*:}" $r both ;;
			mixed:*) mixed $model "$dev" "${j#*:}" $r ;;
			esac
		done
		sched_set "${dev#/dev/}" none
	done
	r=$((r + 1))
done
pass bench_done
finish
