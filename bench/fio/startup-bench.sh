#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# SmartIO benchmark, app start-up under background writes (issue 15), guest
# side; bench/fio/run-bench.py --parts startup boots it once per --boots.
#
# The apps' ext4 image (bench/fio/startup_app.py: python3 + stdlib, sqlite3 +
# a ~5 MiB database, gdb) is written onto the device under test and mounted
# there; writers use the raw region of the same device after the image. In
# each round every scheduler config (shuffled) runs its writer levels
# (shuffled, "0" = idle) and at each level REPS cold start-ups of every app
# (startup-run: drop caches, chroot, exec, wait), then a wakeup phase: a
# 4 KiB O_DIRECT reader beside one O_DIRECT writer for WAKE_S seconds, with
# /proc/interrupts and /proc/softirqs sampled before and after.
#
# Config "apart" is the control: the app's device alone under none and the
# writers on a second null_blk of the same model (nullb1). What the writers
# cost the app there is not the app's device's doing (the guest's CPUs,
# memory, page cache and writeback): a floor no scheduler of the app's
# device can go below. It has no wakeup phase; the virtio model skips it.
#
# A config with the suffix ":pinned" (apart:pinned, smartio:pinned) runs the
# apps on CPU 0 and the writers on the other CPUs: beside its unpinned twin it
# tells what the writers cost the app through the CPU it would share with them
# (the writers' kernel threads, writeback and completions, are not pinned).
# It has no wakeup phase. Each wphase also notes the guest's CPU ticks in the
# cell (/proc/stat's cpu line, every CPU: busy = user + nice + system + irq +
# softirq + steal, all = busy + idle + iowait).
#
#   CSV,sparams,k=v,...
#   CSV,start,boot,round,pos,model,config,writers,app,rep,wall_us,majflt,status
#   CSV,wphase,boot,round,model,config,writers,ms,write_sectors,read_sectors,cpu_busy,cpu_all
#   CSV,wake,boot,round,model,config,ms,loc,res,timer_softirq,hrtimer_softirq,all_irqs
# vm-kmod: null_blk kyber-iosched bfq ext4
# vm-bin: /usr/bin/fio build/bench-smartio/startup-run
# vm-tree: build/bench-smartio/startup-app.img /app.img
# vm-disk: data 448M
# vm-disk: out 256M
# vm-mem: 2048
# vm-timeout: 43200
. /mobio/tests/lib.sh

opt() { # KEY DEFAULT
	local v
	v=$(tr ' ' '\n' </proc/cmdline | sed -n "s/^startup\.$1=//p" | tail -n 1)
	echo "${v:-$2}"
}
MODELS=$(opt models nullb | tr ',' ' ')
CONFIGS=$(opt configs apart,none,mq-deadline,kyber,bfq,smartio,mq-deadline-tuned,kyber-tuned,bfq-tuned,smartio-tuned | tr ',' ' ')
WRITERS=$(opt writers 0,buf1,buf5,dio1,dio5 | tr ',' ' ')
APPS=$(opt apps python,sqlite,gdb | tr ',' ' ')
ROUNDS=$(opt rounds 2)
REPS=$(opt reps 3)
SEED=$(opt seed 1)
BOOT=$(opt boot 1)
MBPS=$(opt mbps 16)
WAKE_S=$(opt wake_s 5)
WARM_S=$(opt warm_s 2)
# the tuned points: smartio-lib.sh's defaults unless the command line says
. /mobio/tests/smartio-lib.sh
KYBER_READ_LAT=$(opt kyber_read_lat_nsec "$KYBER_READ_LAT")
DL_READ_EXPIRE=$(opt dl_read_expire "$DL_READ_EXPIRE")
DL_WRITES_STARVED=$(opt dl_writes_starved "$DL_WRITES_STARVED")
BFQ_SLICE_IDLE=$(opt bfq_slice_idle "$BFQ_SLICE_IDLE")
SIO_TARGET_PCT=$(opt smartio_target_pct "$SIO_TARGET_PCT")
TRACE=$(opt trace 0)
TRACEFS=/sys/kernel/tracing
APP=/mnt/app

kmod_load null_blk nr_devices=0
kmod_load ext4
command insmod /kmod/kyber_iosched.ko
command insmod /kmod/bfq.ko
smartio_load

# config DEV NAME: the scheduler of config NAME at its settings. NAME is a
# config of sched_config (smartio-lib.sh) or apart; either may end in
# :pinned. WDEV: the writers' device, DEV but for apart; APP_PIN,
# WRITER_PIN: the taskset command the apps and the writers run under (empty:
# unpinned; a word list, expanded unquoted, so that a writer's $! is fio's pid)
config() {
	local d=$1 c=${2%:pinned}
	WDEV=$d
	APP_PIN= WRITER_PIN=
	if [ "$c" != "$2" ]; then
		[ "$(nproc)" -ge 2 ] || return 1
		APP_PIN="taskset -c 0" WRITER_PIN="taskset -c 1-$(($(nproc) - 1))"
	fi
	if [ "$c" = apart ]; then
		sched_set "$d" none
		[ -b "/dev/$APART_DEV" ] || return 1
		WDEV=$APART_DEV
		return 0
	fi
	sched_config "$d" "$c"
}

now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
# dstat WDEV DEV: sectors written to WDEV, read from DEV, and the CPU ticks
# busy and all
dstat() {
	echo "$(awk '{ print $7 }' "/sys/block/$1/stat") $(awk '{ print $3 }' "/sys/block/$2/stat")" \
		"$(awk '$1 == "cpu" { b = $2 + $3 + $4 + $7 + $8 + $9; print b, b + $5 + $6 }' /proc/stat)"
}

# writers DEV KIND N: N writers of KIND (buf: 16 KiB buffered, fsync every 32;
# dio: 128 KiB O_DIRECT, 8 in flight), each on its own 32 MiB of the raw
# region after the image, under WRITER_PIN; their pids in WPIDS
WPIDS=
writers_start() {
	local dev=$1 kind=$2 n=$3 i=0 off
	WPIDS=
	while [ $i -lt "$n" ]; do
		off=$((WOFF_MB + i * 32))M
		case $kind in
		buf) $WRITER_PIN fio --name=w$i --filename="$dev" --offset=$off --size=32M --rw=write \
			--bs=16k --ioengine=psync --fsync=32 --time_based --runtime=36000 \
			>/dev/null 2>&1 & ;;
		dio) $WRITER_PIN fio --name=w$i --filename="$dev" --offset=$off --size=32M --rw=write \
			--bs=128k --direct=1 --ioengine=libaio --iodepth=8 --time_based \
			--runtime=36000 >/dev/null 2>&1 & ;;
		esac
		WPIDS="$WPIDS $!"
		i=$((i + 1))
	done
}
writers_stop() {
	local p
	for p in $WPIDS; do kill "$p" 2>/dev/null; done
	for p in $WPIDS; do wait "$p" 2>/dev/null; done
	WPIDS=
	# a writer left running would write through the next cells
	if pidof fio >/dev/null; then
		fail startup_writers_stop "fio still running after the writers were stopped"
		killall -9 fio
	fi
}

# app_run APP: one cold start-up of APP from the image, under APP_PIN;
# "wall_us majflt status"
PYMODS=json,decimal,email.parser,sqlite3,asyncio,xml.etree.ElementTree,http.client,argparse,logging,csv
app_run() {
	case $1 in
	python) $APP_PIN startup-run $APP /usr/bin/python3.11 -c "import $PYMODS" ;;
	sqlite) $APP_PIN startup-run $APP /usr/bin/sqlite3 /data/app.db \
		"select count(*), max(ts) from msg where peer = 42; select body from msg where id = 31337; pragma integrity_check" ;;
	gdb) $APP_PIN startup-run $APP /usr/bin/gdb -nx -batch -ex "show version" ;;
	esac
}

# irqs: LOC RES TIMER HRTIMER ALL (sums over CPUs)
irqs() {
	awk 'FILENAME ~ /interrupts/ && $1 ~ /^(LOC|RES):$/ {
			for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) v[$1] += $i }
		FILENAME ~ /interrupts/ && $1 ~ /:$/ {
			for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) all += $i }
		FILENAME ~ /softirqs/ && $1 ~ /^(TIMER|HRTIMER):$/ {
			for (i = 2; i <= NF; i++) v[$1] += $i }
		END { print v["LOC:"] + 0, v["RES:"] + 0, v["TIMER:"] + 0, v["HRTIMER:"] + 0, all + 0 }' \
		/proc/interrupts /proc/softirqs
}

# startup.trace=2: as 1, and every cell (any scheduler) also saves the app's
# device's block_rq_issue/block_rq_complete events with smartio's, one file
# per cell (trace-CONFIG-LEVEL.txt), as a tar on the "out" disk
# (build/vm/KVER/startup-bench/disk-out.img: one boot's) for
# bench/fio/signal_replay.py.
# startup.trace=1: each smartio cell also notes the bytes smartio dispatched
# by direction and reason (its smartio_dispatch tracepoint), to tell writes
# let through beside reads from those sent while reads were idle, and its
# controller's windows (smartio_control: their number, the mean read latency
# and slowdown percentiles and the mean write rate). The
# events are enabled once, before any load: enabling one patches kernel text, and
# under TCG that patching beside busy CPUs once oopsed (int3 in
# ttwu_do_activate during text_poke_bp); per cell only the ring buffer is
# switched on and off
trace_setup() {
	[ "$TRACE" = 1 ] || [ "$TRACE" = 2 ] || return 0
	[ -d $TRACEFS/events ] || mount -t tracefs none $TRACEFS
	echo 0 >$TRACEFS/tracing_on
	echo 16384 >$TRACEFS/buffer_size_kb
	echo 1 >$TRACEFS/events/smartio/smartio_dispatch/enable
	echo 1 >$TRACEFS/events/smartio/smartio_control/enable
	[ "$TRACE" = 2 ] || return 0
	echo 1 >$TRACEFS/events/block/block_rq_issue/enable
	echo 1 >$TRACEFS/events/block/block_rq_complete/enable
	mkdir -p /tmp/traces
}
# traced DEV: whether this cell is traced (trace=1: smartio's, trace=2: all)
traced() {
	[ "$TRACE" = 2 ] ||
		{ [ "$TRACE" = 1 ] && grep -q '\[smartio\]' "/sys/block/$1/queue/scheduler"; }
}
why_start() { # DEV
	traced "$1" || return 0
	echo >$TRACEFS/trace
	echo 1 >$TRACEFS/tracing_on
}
why_end() { # DEV MODEL ROUND CONFIG LEVEL
	local dev=$1
	shift
	traced "$dev" || return 0
	echo 0 >$TRACEFS/tracing_on
	[ "$TRACE" = 2 ] && cp $TRACEFS/trace "/tmp/traces/trace-$3-$4.txt"
	awk -v pre="CSV,why,$BOOT,$2,$1,$3,$4" '
		function val(k,   i) {
			for (i = 1; i <= NF; i++)
				if (index($i, k "=") == 1)
					return substr($i, length(k) + 2) + 0
		}
		/smartio_control:/ {
			cn++
			clat += val("read_lat_us")
			cslow += val("slowdown_pct")
			crate += val("write_rate_kbps")
			next
		}
		/smartio_dispatch:/ {
			for (i = 1; i <= NF; i++) {
				if ($i == "smartio_dispatch:")
					t = substr($(i - 1), 1, length($(i - 1)) - 1) * 1000
				if ($i ~ /^bytes=/) {
					b[$(i - 3) " " $(i - 2)] += substr($i, 7)
					break
				}
			}
			if ($(i - 3) != "read")
				next
			# gaps between reads (ms), by length: count, and ms in them
			if (last)
				for (g = 5; g <= 320; g *= 2)
					if (t - last > g) { n[g]++; ms[g] += t - last }
			last = t
		}
		END {
			for (k in b) { split(k, f, " "); print pre "," f[1] "," f[2] "," b[k] }
			for (g = 5; g <= 320; g *= 2)
				print pre ",read-gaps,gt" g "ms," n[g] + 0 "," int(ms[g])
			if (cn)
				print pre ",control,windows," cn ",mean_read_lat_us," int(clat / cn) \
					",mean_slowdown_pct," int(cslow / cn) ",mean_rate_kbps," int(crate / cn)
		}' \
		$TRACEFS/trace | while read -r l; do note "$l"; done
	grep -q "LOST" $TRACEFS/trace && note "CSV,why,$BOOT,$2,$1,$3,$4,lost,events,1"
	return 0
}

# cell MODEL DEV ROUND CONFIG LEVEL
POS=0
cell() {
	local model=$1 dev=$2 r=$3 c=$4 lvl=$5 kind n rep a t0 t1 s0 s1 out
	case $lvl in
	0) kind= n=0 ;;
	buf*) kind=buf n=${lvl#buf} ;;
	dio*) kind=dio n=${lvl#dio} ;;
	esac
	[ "$n" -gt 0 ] && { writers_start "/dev/$WDEV" $kind "$n"; sleep "$WARM_S"; }
	why_start "$dev"
	s0=$(dstat "$WDEV" "$dev")
	t0=$(now_ms)
	rep=1
	while [ $rep -le "$REPS" ]; do
		for a in $(order_shuffle "$r$c$lvl$rep" $APPS); do
			POS=$((POS + 1))
			out=$(app_run $a)
			set -- $out
			note "CSV,start,$BOOT,$r,$POS,$model,$c,$lvl,$a,$rep,$1,$2,$3"
		done
		rep=$((rep + 1))
	done
	t1=$(now_ms)
	s1=$(dstat "$WDEV" "$dev")
	[ "$n" -gt 0 ] && writers_stop
	why_end "$dev" "$model" "$r" "$c" "$lvl"
	set -- $s0 $s1
	note "CSV,wphase,$BOOT,$r,$model,$c,$lvl,$((t1 - t0)),$(($5 - $1)),$(($6 - $2)),$(($7 - $3)),$(($8 - $4))"
}

# ios DEV: reads and writes the device completed (/sys/block/DEV/stat)
ios() {
	awk '{ print $1, $5 }' "/sys/block/$1/stat"
}

# wake MODEL DEV ROUND CONFIG: wakeups beside a reader and a writer, and the
# I/Os completed meanwhile (a scheduler that lets the reader do more reads
# has more completion interrupts: the report divides by I/Os too)
wake() {
	local model=$1 dev=$2 r=$3 c=$4 rp i0 i1 t0 t1 io0 io1
	writers_start "/dev/$dev" dio 1
	fio --name=r --filename="/dev/$dev" --offset=$((WOFF_MB + 192))M --size=32M \
		--rw=randread --bs=4k --direct=1 --ioengine=psync --time_based \
		--runtime=36000 >/dev/null 2>&1 &
	rp=$!
	sleep 1
	i0=$(irqs)
	io0=$(ios "$dev")
	t0=$(now_ms)
	sleep "$WAKE_S"
	i1=$(irqs)
	io1=$(ios "$dev")
	t1=$(now_ms)
	kill $rp 2>/dev/null
	wait $rp 2>/dev/null
	writers_stop
	set -- $i0 $i1 $io0 $io1
	note "CSV,wake,$BOOT,$r,$model,$c,$((t1 - t0)),$(($6 - $1)),$(($7 - $2)),$(($8 - $3)),$(($9 - $4)),$((${10} - $5)),$((${13} - ${11})),$((${14} - ${12}))"
}

note "CSV,sparams,kernel=$(uname -r),boot=$BOOT,seed=$SEED,rounds=$ROUNDS,reps=$REPS,mbps=$MBPS,wake_s=$WAKE_S,warm_s=$WARM_S,kyber_read_lat_nsec=$KYBER_READ_LAT,dl_read_expire=$DL_READ_EXPIRE,dl_writes_starved=$DL_WRITES_STARVED,bfq_slice_idle=$BFQ_SLICE_IDLE,smartio_target_pct=$SIO_TARGET_PCT"
trace_setup
IMG_MB=$(( ($(stat -c %s /app.img) + 1048575) / 1048576 ))
WOFF_MB=$(( (IMG_MB + 15) / 16 * 16 ))
# startup_nullb DIR: a null_blk of the nullb model through configfs DIR
startup_nullb() {
	local kv
	mkdir "$1"
	for kv in size=$((WOFF_MB + 256)) memory_backed=1 queue_mode=2 submit_queues=1 \
		hw_queue_depth=32 irqmode=2 completion_nsec=200000 mbps=$MBPS blocksize=4096; do
		echo "${kv#*=}" >"$1/${kv%%=*}" || fail startup_nullb "${kv%%=*} refused"
	done
	echo 1 >"$1/power"
}
mkdir -p $APP
for model in $MODELS; do
	case $model in
	nullb)
		mkdir -p /sys/kernel/config 2>/dev/null
		[ -d /sys/kernel/config/nullb ] || mount -t configfs none /sys/kernel/config
		d=/sys/kernel/config/nullb/nullb0
		startup_nullb $d
		dev=nullb0
		note "CSV,smodel,nullb,null_blk memory_backed=1 queue_mode=2 submit_queues=1 hw_queue_depth=32 irqmode=2 completion_nsec=200000 mbps=$MBPS"
		# the apart config's writers: a twin of nullb0 (null_blk names
		# the disk after its configfs directory)
		APART_DEV=
		case " $CONFIGS " in
		*" apart "* | *" apart:pinned "*)
			startup_nullb ${d%/*}/nullb1
			APART_DEV=nullb1
			sched_set $APART_DEV none
			;;
		esac
		;;
	virtio)
		APART_DEV=
		dev=${DISK_data#/dev/}
		note "CSV,smodel,virtio,virtio-blk raw image with QEMU throttling.bps-total (see run-bench.py)"
		;;
	esac
	sched_set $dev none
	dd if=/app.img of=/dev/$dev bs=1M 2>/dev/null || fail startup_image "dd onto /dev/$dev"
	mount -t ext4 -o ro /dev/$dev $APP || { fail startup_mount "ext4 on /dev/$dev"; continue; }
	# a warm-up start-up of each app: it must exit 0
	for a in $APPS; do
		out=$(app_run $a)
		set -- $out
		[ "$3" = 0 ] && pass "startup_${model}_$a" || fail "startup_${model}_$a" "expected exit 0, saw '$out'"
	done
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for c in $(order_shuffle "c$r" $CONFIGS); do
			if [ "${c%:pinned}" = apart ] && [ -z "$APART_DEV" ]; then
				log "model $model: no second device, config apart skipped"
				continue
			fi
			config $dev $c || { fail "startup_${model}_$c" "cannot set up $c"; continue; }
			for lvl in $(order_shuffle "w$r$c" $WRITERS); do
				cell $model $dev $r $c $lvl
			done
			case $c in apart | *:pinned) ;; *) wake $model $dev $r $c ;; esac
		done
		r=$((r + 1))
	done
	umount $APP
	sched_set $dev none
	if [ $model = nullb ]; then
		echo 0 >$d/power
		rmdir $d
		[ -n "$APART_DEV" ] && { echo 0 >${d%/*}/nullb1/power; rmdir ${d%/*}/nullb1; }
	fi
done
rm -f /app.img
if [ "$TRACE" = 2 ]; then
	(cd /tmp/traces && tar cf "$DISK_out" .) && pass startup_traces_saved ||
		fail startup_traces_saved "tar onto $DISK_out"
fi
pass bench_done
finish
