# SPDX-License-Identifier: GPL-2.0
# Helpers for the smartio-*.sh guest tests (sourced after lib.sh).
#
#   smartio_load                 insmod smartio-iosched.ko (once)
#   sched_set DEV NAME           echo NAME > /sys/block/DEV/queue/scheduler; 0 if it took
#   sched_now DEV                the scheduler in use ("smartio")
#   sched_config DEV NAME        a benchmark config: a scheduler, its -tuned point or
#                                SCHED@TUNABLE=V[+TUNABLE=V...]
#   order_shuffle TAG WORD...    the words in a random order seeded by SEED, BOOT, TAG
#   smartio_stat DEV NAME        one counter from debugfs block/DEV/sched/stats
#   check_ok NAME CMD...         pass if CMD exits 0, else fail with its output
#   check_ge NAME MIN VALUE      pass if VALUE >= MIN
#   check_le NAME MAX VALUE      pass if VALUE <= MAX
#   nullb_make NAME PARAM=V...   a configfs null_blk device (modprobe null_blk first);
#                                prints its /dev node
#   smartio_nullb0 PARAM=V...    null_blk + smartio loaded, nullb0 on smartio
#   fio_ok NAME FIO-ARGS...      run fio; pass if it exits 0 with no "err=" != 0
#   fio_max_lat_ms, fio_mean_lat_us, fio_total_ios FILE DIR   from fio JSON output
#   cgroups_top_app_bg           cgroup2 on $CG with top-app and bg (the fg tests' apps)
#   in_cgroup NAME CMD...        run CMD as a task of cgroup NAME

SMARTIO_KO=/mobio/smartio-iosched.ko

smartio_load() {
	[ -d /sys/module/smartio_iosched ] || insmod $SMARTIO_KO
}

sched_set() {
	echo "$2" >"/sys/block/$1/queue/scheduler" 2>/dev/null &&
		[ "$(sched_now "$1")" = "$2" ]
}

sched_now() {
	sed -n 's/.*\[\(.*\)\].*/\1/p' "/sys/block/$1/queue/scheduler"
}

# The peers' tuned points of the benchmarks (bench/fio): a user's first
# move for each scheduler beside writers; the scripts may set them from
# their kernel command line options first.
: "${KYBER_READ_LAT:=500000}"	# kyber read_lat_nsec (default 2 ms)
: "${DL_READ_EXPIRE:=100}"	# mq-deadline read_expire, ms (default 500)
: "${DL_WRITES_STARVED:=4}"	# mq-deadline writes_starved (default 2)
: "${BFQ_SLICE_IDLE:=0}"	# bfq slice_idle with low_latency 1 (default 8 ms)
: "${SIO_TARGET_PCT:=130}"	# smartio target_slowdown_pct

# sched_config DEV NAME: DEV on the scheduler of config NAME at its settings.
# NAME is a scheduler, its -tuned point (the values above), or
# SCHED@TUNABLE=VALUE[+TUNABLE=VALUE...] (a point of a sweep, e.g.
# smartio@target_slowdown_pct=200). The scheduler is switched through none,
# so every config starts from the scheduler's defaults. 1 if refused.
sched_config() {
	local d=$1 c=$2 s io=/sys/block/$1/queue/iosched kv
	s=${c%%@*}
	s=${s%-tuned}
	sched_set "$d" none
	sched_set "$d" "$s" || return 1
	case $c in
	*@*)
		for kv in $(echo "${c#*@}" | tr '+' ' '); do
			echo "${kv#*=}" >"$io/${kv%%=*}" || return 1
		done ;;
	kyber-tuned) echo "$KYBER_READ_LAT" >$io/read_lat_nsec ;;
	mq-deadline-tuned)
		echo "$DL_READ_EXPIRE" >$io/read_expire &&
			echo "$DL_WRITES_STARVED" >$io/writes_starved ;;
	bfq-tuned)
		echo 1 >$io/low_latency && echo "$BFQ_SLICE_IDLE" >$io/slice_idle ;;
	smartio-tuned) echo "$SIO_TARGET_PCT" >$io/target_slowdown_pct ;;
	esac
}

# order_shuffle TAG WORD...: the words in a random order, seeded by SEED and
# BOOT (the caller's globals) and TAG: the same run gives the same orders,
# every round and boot a different one. The seed string is hashed: awk's
# srand() of "12c3" would take its numeric prefix, 12, and lose the tag.
order_shuffle() {
	local tag=$1
	shift
	echo "$@" | tr ' ' '\n' | awk -v s="$SEED/$BOOT/$tag" \
		-v chars='0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ/:@=+-_.,' '
		BEGIN {
			for (i = 1; i <= length(s); i++)
				h = (h * 131 + index(chars, substr(s, i, 1)) + 1) % 2147483647
			srand(h)
		}
		NF { printf "%.9f\t%s\n", rand(), $0 }' |
		sort -n | cut -f 2 | tr '\n' ' '
}

smartio_stat() {
	awk -v n="$2" '$1 == n { print $2 }' "/sys/kernel/debug/block/$1/sched/stats"
}


# nullb_make NAME PARAM=VALUE...: configfs null_blk device, powered on
nullb_make() {
	local name=$1 d kv
	shift
	[ -d /sys/kernel/config/nullb ] || mount -t configfs none /sys/kernel/config 2>/dev/null
	d=/sys/kernel/config/nullb/$name
	mkdir "$d" || return 1
	for kv in "$@"; do
		echo "${kv#*=}" >"$d/${kv%%=*}" || { echo "nullb $name: ${kv%%=*} refused" >&2; return 1; }
	done
	echo 1 >"$d/power" || return 1
	echo "/dev/$name"
}

# smartio_nullb0 PARAM=VALUE...: null_blk and smartio loaded, nullb0 (256 MiB,
# one submit queue, timer completions, and PARAMs) powered on with smartio
smartio_nullb0() {
	kmod_load null_blk nr_devices=0
	smartio_load
	nullb_make nullb0 size=256 submit_queues=1 irqmode=2 "$@" >/dev/null
	sched_set nullb0 smartio
}

# fio_ok NAME ARGS...: fio must exit 0 and report no job error
fio_ok() {
	local name=$1 out rc
	shift
	out=$(fio "$@" 2>&1)
	rc=$?
	echo "$out" >"/tmp/fio-$name.log"
	if [ $rc -eq 0 ] && ! echo "$out" | grep -E 'err= *[1-9]' >/dev/null; then
		pass "$name"
	else
		fail "$name" "expected fio exit 0 and err=0, saw exit $rc: $(echo "$out" | grep -iE 'err|error|verify|latency' | head -n 4 | tr '\n' ' ')"
	fi
	return $rc
}

# _fio_lat_ns FILE DIR KEY: the largest KEY (min|max|mean) of the total
# latency of DIR (read|write) over the jobs of a fio --output-format=json FILE
_fio_lat_ns() {
	awk -v dir="\"$2\"" -v key="\"$3\"" '
		$1 == dir && $2 == ":" { in_dir = 1; next }
		in_dir && $1 == "\"lat_ns\"" { in_lat = 1; next }
		in_lat && $1 == key {
			v = $3; sub(",", "", v)
			if (v + 0 > best) best = v + 0
			in_lat = 0; in_dir = 0
		}
		END { printf "%.0f\n", best }' "$1"
}

# fio_max_lat_ms FILE DIR: the worst latency of DIR over all jobs, in ms
fio_max_lat_ms() {
	echo $(($(_fio_lat_ns "$1" "$2" max) / 1000000))
}

# fio_mean_lat_us FILE DIR: the mean latency of DIR of a one-job FILE, in µs
fio_mean_lat_us() {
	echo $(($(_fio_lat_ns "$1" "$2" mean) / 1000))
}

# fio_total_ios FILE DIR: completed I/Os of DIR over all jobs
fio_total_ios() {
	awk -v dir="\"$2\"" '
		$1 == dir && $2 == ":" { in_dir = 1; next }
		in_dir && $1 == "\"total_ios\"" { v = $3; sub(",", "", v); n += v; in_dir = 0 }
		END { print n + 0 }' "$1"
}

CG=/sys/fs/cgroup

# cgroups_top_app_bg: cgroup2 mounted on $CG, with a top-app and a bg cgroup
cgroups_top_app_bg() {
	grep -q cgroup2 /proc/mounts || mount -t cgroup2 none $CG
	mkdir -p $CG/top-app $CG/bg ||
		fail cgroup2_mount "expected cgroup2 on $CG with top-app and bg"
}

# in_cgroup NAME CMD...: run CMD as a task of cgroup NAME
in_cgroup() {
	local cg=$1
	shift
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG/$cg" "$@"
}
