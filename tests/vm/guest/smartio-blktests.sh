#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# blktests' block group with smartio-iosched.ko loaded (issue 15). blktests
# iterates over every scheduler /sys/block/*/queue/scheduler lists, so with
# smartio loaded block/005 switches into and out of smartio (and none,
# mq-deadline, kyber, bfq) under fio on the virtio disk, and 020 (one hardware
# tag) and 021 (nr_requests) run null_blk under each scheduler, smartio among
# them (015 too, where null_blk can inject requeues). The group's other null_blk
# tests (016 signal on a frozen queue, 017 inflight counter, ...) never select a
# scheduler: they run under null_blk's default, mq-deadline, with smartio only
# loaded, so only the whole group (make check-blktests) runs them.
#
# blktests is not in the project: an unmodified snapshot lives in
# ../shared/blktests beside the repo root ($MOBIO_SHARED overrides ../shared;
# CI has shared/ beside its clone). Without it every case fails, saying so.
#
# Which tests: the kernel command line's mobio.blktests=LIST (comma-separated,
# "block" = the whole group; `make check-blktests` passes it through
# MOBIO_VM_APPEND), else the make-check subset SMARTIO_BLKTESTS_QUICK below:
# the tests that put smartio on a queue (the whole group takes ~11 min on
# TCG). Each test blktests ran is one case ("blktests_block_005"); a "not run"
# is logged with blktests' reason, never passed. Timed tests run TIMEOUT s
# (mobio.blktests_timeout, default 15).
# mobio.blktests_smartio=0 runs the same without smartio-iosched.ko: the
# baseline to compare a failure against.
#
# "Not run" in this guest (blktests' own reasons; 6.1 and 6.12 alike):
#   015, 014, 030  null_blk has no requeue/timeout/init_hctx parameter
#                  (Debian builds it without CONFIG_BLK_DEV_NULL_BLK_FAULT_INJECTION)
#   036            no fail_make_request in debugfs (CONFIG_FAULT_INJECTION off)
#   002            blktrace not installed on the host
#   009, 012, 032  xfs_io / XFS not installed on the host
#   011, 019       setpci not installed (and they disable the PCI device)
#   033            ublk: blktests' src/miniublk is not built (the snapshot is kept unmodified)
#   039            6.12 only: no block size > 4 KiB (6.1 runs it)
#
# vm-disk: data 256M
# vm-mem: 1536
# vm-timeout: 1500
# vm-kmod: null_blk scsi_debug sd_mod sr_mod loop kyber_iosched bfq
# vm-tree: $MOBIO_SHARED/blktests /opt/blktests
# vm-tree: /boot/config-$KVER /boot/config-$KVER
# vm-tree: /lib/modules/$KVER/modules.builtin /lib/modules/$KVER/modules.builtin
# vm-bin: bash fio getopt findmnt blockdev lsblk losetup blkdiscard blkzone
# vm-bin: taskset column hexdump diff cmp awk grep sed find xargs
# vm-bin: stat timeout date dd nproc realpath readlink mktemp sort uniq comm cut tr
# vm-bin: head tail wc sleep cat ls cp mv rm ln mkdir rmdir chmod touch tee truncate
# vm-bin: seq env basename dirname id uname sync expr gzip zgrep
# vm-bin: modprobe depmod modinfo
. /mobio/tests/lib.sh
. /mobio/tests/smartio-lib.sh

SMARTIO_BLKTESTS_QUICK="block/005 block/015 block/020 block/021"
BT=/opt/blktests
kver=$(uname -r)
dev=${DISK_data#/dev/}

tests=$SMARTIO_BLKTESTS_QUICK
timeout=15
with_smartio=1
for w in $(cat /proc/cmdline); do
	case "$w" in
	mobio.blktests=*) tests=$(echo "${w#*=}" | tr ',' ' ') ;;
	mobio.blktests_timeout=*) timeout=${w#*=} ;;
	mobio.blktests_smartio=0) with_smartio=0 ;;
	esac
done

if [ ! -x "$BT/check" ]; then
	for t in $tests; do
		fail "blktests_$(echo "$t" | tr / _)" "no blktests in the guest: the host has no blktests snapshot at \$MOBIO_SHARED/blktests (default ../shared/blktests beside the repo root; CI puts shared/ beside its clone)"
	done
	finish
fi

# --- a guest blktests can use --------------------------------------------------
# This sh is busybox's, which runs its own applets before PATH: the GNU and
# kmod tools shipped in /usr/local/bin are called by path here. bash (blktests)
# goes by PATH.
B=/usr/local/bin
# modprobe/modinfo are kmod's (busybox "modprobe -r null_blk" fails when it
# cannot also remove configfs, which is mounted): the shipped Debian modules
# under /lib/modules, indexed by kmod's depmod
mkdir -p "/lib/modules/$kver/kernel/mobio"
cp /kmod/*.ko "/lib/modules/$kver/kernel/mobio/"
$B/depmod -a "$kver" || fail depmod "kmod depmod failed"
check_ok modprobe_finds_null_blk $B/modprobe -n null_blk
# zgrep (blktests reads /boot/config with it) is a /bin/sh script, and busybox
# sh would run busybox gzip, which cannot pass a plain file through: run it in bash
mv $B/zgrep /usr/local/lib/zgrep.gnu
printf '#!%s/bash\nexec %s/bash /usr/local/lib/zgrep.gnu "$@"\n' $B $B >$B/zgrep
chmod 755 $B/zgrep
# configfs is a module on Debian (null_blk's configfs interface needs it mounted)
$B/modprobe configfs
mount -t configfs none /sys/kernel/config
# what udev would load for scsi_debug's disks: sd (and sr for block/001)
$B/modprobe sd_mod
$B/modprobe sr_mod
# every scheduler Debian has, so that blktests switches among all of them
$B/modprobe kyber-iosched
$B/modprobe bfq
# block/027 and 037 want the io controller of a cgroup2 hierarchy
mkdir -p /sys/fs/cgroup
mount -t cgroup2 none /sys/fs/cgroup
# no udev: devtmpfs makes the nodes; "udevadm settle" only has to wait a moment
printf '#!/bin/sh\nsleep 0.2\n' >$B/udevadm
chmod 755 $B/udevadm
# bash's process substitution wants /dev/fd, which devtmpfs does not make
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
for i in 0:stdin 1:stdout 2:stderr; do
	[ -e "/dev/${i#*:}" ] || ln -s "/proc/self/fd/${i%%:*}" "/dev/${i#*:}"
done
# blktests reads /proc/mounts through findmnt and mtab
[ -e /etc/mtab ] || ln -s /proc/mounts /etc/mtab

if [ $with_smartio = 1 ]; then
	smartio_load
	check_ok smartio_listed grep -qw smartio "/sys/block/$dev/queue/scheduler"
else
	log "baseline run: smartio-iosched.ko NOT loaded (mobio.blktests_smartio=0)"
fi
log "scheduler list of $dev: $(cat /sys/block/$dev/queue/scheduler)"
echo "<4>mobio: blktests start" >/dev/kmsg

cat >"$BT/config" <<EOF
TEST_DEVS=($DISK_data)
TIMEOUT=$timeout
EOF

# --- run -----------------------------------------------------------------------
# blktests_run OUT TESTS...: run blktests, its output into OUT, and print it with
# the whole diff and dmesg of every failed test, for the console log
blktests_run() {
	local out=$1 t0 t1 rc f t
	shift
	rm -rf "$BT/results"
	t0=$(cut -d. -f1 /proc/uptime)
	log "blktests: $* (TIMEOUT=$timeout)"
	(cd "$BT" && $B/bash ./check "$@") >"$out" 2>&1
	rc=$?
	t1=$(cut -d. -f1 /proc/uptime)
	cat "$out"
	log "blktests: exit $rc after $((t1 - t0)) s"
	for f in "$BT"/results/*/*/*.out.bad "$BT"/results/*/*/*.dmesg; do
		[ -e "$f" ] || continue
		t=${f#"$BT"/results/*/}
		t=${t%.*}
		t=${t%.out}
		echo "---- $f"
		case "$f" in
		*.out.bad) diff -u "$BT/tests/$t.out" "$f" | head -n 200 ;;
		*) head -n 200 "$f" ;;
		esac
	done
	return $rc
}

# blktests_results OUT: blktests' lines "block/005 => vdb (switch ...)  [passed]"
# and "block/015 (...) [not run]", each followed by indented details (runtime,
# skip reasons, the diff), as "NAME<TAB>STATUS" and "NAME<TAB>reason<TAB>LINE"
blktests_results() {
	awk '
		/^[a-z]+\/[0-9]+/ && /\[(passed|failed|not run)\]$/ {
			name = $1; st = $0; sub(/.*\[/, "", st); sub(/\]$/, "", st)
			print name "\t" st; last = name; next
		}
		/^    / && last != "" { r = $0; sub(/^ +/, "", r); print last "\t" "reason\t" r }
	' "$1"
}

# blktests_reason RES NAME: a test's details on one line
blktests_reason() {
	awk -F'\t' -v n="$2" '$1 == n && $2 == "reason" { print $3 }' "$1" | head -n 12 | tr '\n' ' '
}

blktests_run /tmp/blktests.out $tests
rc=$?
blktests_results /tmp/blktests.out >/tmp/blktests.res

# block/017 (whole group only) times itself: it keeps each I/O in flight 500 ms
# plus twice what one reading of the counters took, then reads them while a
# read, then a read and a write, are in flight. A stall of the TCG host between
# two readings lets the read complete early ("diskstats 1" where 2 is expected;
# reproduced by stopping QEMU for 0.2-0.9 s at random), whatever the scheduler.
# A failed 017 runs once more: the first failure is logged whole, and the case
# is the second run's result.
for t in block/017; do
	grep -q "^$t	failed" /tmp/blktests.res || continue
	log "RETRY $t (timed by the guest's clock) after: $(blktests_reason /tmp/blktests.res "$t")"
	blktests_run /tmp/blktests.retry.out "$t"
	blktests_results /tmp/blktests.retry.out >/tmp/blktests.retry.res
	grep -v "^$t	" /tmp/blktests.res >/tmp/blktests.res.new
	cat /tmp/blktests.retry.res >>/tmp/blktests.res.new
	mv /tmp/blktests.res.new /tmp/blktests.res
done

seen=
while IFS="	" read -r name st rest; do
	case_name="blktests_$(echo "$name" | tr / _)"
	case "$st" in
	passed) pass "$case_name" ;;
	failed)
		fail "$case_name" "blktests failed: $(blktests_reason /tmp/blktests.res "$name")"
		;;
	"not run")
		log "NOT RUN $name: $(blktests_reason /tmp/blktests.res "$name")"
		;;
	*) continue ;;
	esac
	seen="$seen $name"
done </tmp/blktests.res

# a requested test blktests printed no result for is a failure
for t in $tests; do
	case "$t" in
	*/*)
		case " $seen " in
		*" $t "*) ;;
		*) fail "blktests_$(echo "$t" | tr / _)" "no result from blktests (exit $rc): $(tail -n 3 /tmp/blktests.out | tr '\n' ' ')" ;;
		esac
		;;
	esac
done
[ -n "$seen" ] || fail blktests_ran "no blktests result at all (exit $rc): $(tail -n 5 /tmp/blktests.out | tr '\n' ' ')"

if [ $with_smartio = 1 ]; then
	check_eq smartio_still_loaded 1 "$([ -d /sys/module/smartio_iosched ] && echo 1)"
fi
# the runner also fails the run on a splat on the console; this names it
bad=$(dmesg | sed -n '/mobio: blktests start/,$p' |
	grep -E 'WARNING:|BUG:|Oops|general protection|lockdep|KASAN|Kernel panic|Call Trace' | head -n 3 | tr '\n' ' ')
check_eq dmesg_clean "" "$bad"
finish
