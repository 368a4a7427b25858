# SPDX-License-Identifier: GPL-2.0
# mobio VM bench guest library: sourced by /init and by every test script.
#
# Results and requests go to the host as "MOBIO ..." lines on the result
# channel (/dev/ttyS1; /dev/hvc0 on arm64); the host answers on the same port
# (read through fd 7, opened by /init).  The state disk (/dev/vda) holds a
# small key/value store in two 64 KiB A/B slots, so a reset in the middle of
# a write leaves the previous state readable.
#
# API (see docs/vm-bench.md):
#   pass NAME / fail NAME "expected X, saw Y" / check_eq NAME EXPECTED ACTUAL
#   check_ok NAME CMD... / check_ge NAME MIN ACTUAL / check_dmesg NAME PATTERN
#   check_ok_within NAME SECS CMD...  check_ok, but a CMD still running after
#                         SECS fails NAME with its kernel stack and sysrq w
#   dump_stuck PID WHAT   log PID's state and every thread's kernel stack, sysrq w
#   MOBIO_BOOT            1 on the first boot of the test, +1 on every later boot
#   state_set K V / state_get K
#   request_warm_reboot   sysrq b: QEMU resets, RAM kept
#   request_power_key MS  the host holds the power key MS ms; returns when released
#   request_cold_cycle    the host ends this QEMU and starts a new one (RAM gone)
#   request_poweroff_cycle  the guest powers off cleanly, then a new QEMU starts
#   request_systemctl_reboot / request_systemctl_poweroff  the same through
#                         systemd (the Debian guest, "# vm-root: debian")
#   request_reset         the host does QMP system_reset now
#   request_reset_after MS|MIN-MAX|random  the host resets after that delay; returns at once
#   request_device_del NAME  the host hot-unplugs disk NAME ("# vm-disk: NAME ...")
#                         with QMP device_del; returns 0 once QEMU has deleted it
#   finish                the test is done: power off
#   log MSG               a line on the console
#   note MSG              a line the host prints at once (demos)
#   kmod_load NAME [PARAM=V...]  insmod a Debian module declared with "# vm-kmod: NAME"
#                         (dependencies first; parameters go to NAME)
#   mobio_param NAME DEFAULT  mobio.NAME=V from the kernel command line, else DEFAULT
#                         (a soak or bench target passes V through MOBIO_VM_APPEND)

MOBIO_STATE_DEV=${MOBIO_STATE_DEV:-/dev/vda}
MOBIO_STATE_SLOT=65536

mobio_param() {
	local w
	for w in $(cat /proc/cmdline); do
		case "$w" in
		"mobio.$1="*)
			echo "${w#*=}"
			return
			;;
		esac
	done
	echo "$2"
}

# The result channel: the second UART on amd64, a virtio console on arm64
# (run.py says which); where RAM starts (0 on amd64, 1 GiB on arm64's virt):
# "# vm-memmap: SIZE$OFFSET" reserves RAM base + OFFSET.
MOBIO_RES=$(mobio_param res /dev/ttyS1)
MOBIO_RAM_BASE=$(mobio_param ram_base 0)

_mobio_say() {
	echo "MOBIO $*" >$MOBIO_RES
}

log() {
	echo "mobio: $*"
}

# note MSG: a line the host prints as it arrives (narration for demos)
note() {
	_mobio_say "NOTE $*"
	echo "mobio: $*"
}

pass() {
	_mobio_say "RESULT PASS $1"
	echo "mobio: PASS $1"
}

fail() {
	_mobio_say "RESULT FAIL $1 $2"
	echo "mobio: FAIL $1: $2"
}

# check_ok NAME CMD...: pass if CMD exits 0, else fail with its last output
check_ok() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "expected success of '$*', saw exit $?: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

# dump_stuck PID WHAT: PID's state and the kernel stack of each of its
# threads to the log, then sysrq w (every blocked task) to the console
dump_stuck() {
	local t
	log "$2 (pid $1) stuck: $(grep -E '^(State|VmRSS|VmSwap)' /proc/"$1"/status 2>/dev/null | tr '\n\t' '; ')"
	for t in /proc/"$1"/task/*; do
		log "task ${t##*/} wchan $(cat "$t"/wchan 2>/dev/null): $(tr '\n' ';' <"$t"/stack 2>/dev/null)"
	done
	echo w >/proc/sysrq-trigger
}

# gone_within PID SECS: 0 once PID has exited (or is a zombie) within SECS
gone_within() {
	local t=0
	while [ $t -lt $(($2 * 10)) ]; do
		kill -0 "$1" 2>/dev/null || return 0
		[ "$(awk '{ print $3 }' /proc/"$1"/stat 2>/dev/null)" = Z ] && return 0
		sleep 0.1
		t=$((t + 1))
	done
	return 1
}

# check_ok_within NAME SECS CMD...: check_ok with a bound: a CMD that hangs
# (a task stuck in the kernel) fails NAME after SECS with its stacks, and
# returns 1 instead of hanging the test until its timeout
check_ok_within() {
	local name=$1 secs=$2 pid rc
	shift 2
	"$@" >/tmp/check_ok_within.out 2>&1 &
	pid=$!
	if ! gone_within $pid "$secs"; then
		dump_stuck $pid "$*"
		fail "$name" "expected '$*' to end within $secs s"
		return 1
	fi
	wait $pid
	rc=$?
	if [ $rc -eq 0 ]; then
		pass "$name"
	else
		fail "$name" "expected success of '$*', saw exit $rc: $(tail -n 3 /tmp/check_ok_within.out | tr '\n' ' ')"
	fi
}

# check_ge NAME MIN ACTUAL: pass if ACTUAL is a number >= MIN
check_ge() {
	if [ -n "$3" ] && [ "$3" -ge "$2" ] 2>/dev/null; then
		pass "$1"
	else
		fail "$1" "expected >= $2, saw '$3'"
	fi
}

# check_le NAME MAX ACTUAL: pass if ACTUAL is a number <= MAX
check_le() {
	if [ -n "$3" ] && [ "$3" -le "$2" ] 2>/dev/null; then
		pass "$1"
	else
		fail "$1" "expected <= $2, saw '$3'"
	fi
}

# check_dmesg NAME PATTERN: pass if the kernel log has PATTERN
check_dmesg() {
	if dmesg | grep -q "$2"; then
		pass "$1"
	else
		fail "$1" "expected '$2' in dmesg, saw: $(dmesg | tail -n 3 | tr '\n' ' ')"
	fi
}

check_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "expected $2, saw $3"
	fi
}

# The bench treats a kernel splat before this marker as its own flake.
insmod() {
	case "$1" in
	/mobio/*)
		if [ ! -e /tmp/.mobio_first_insmod ]; then
			: >/tmp/.mobio_first_insmod
			echo "<4>mobio: first insmod $1" >/dev/kmsg
		fi
		;;
	esac
	command insmod "$@"
}

kmod_load() {
	local name=$1 m
	shift
	if [ ! -e "/kmod/$name.deps" ]; then
		echo "mobio: kmod_load $name: not in the initramfs (declare '# vm-kmod: $name')" >&2
		return 1
	fi
	for m in $(cat "/kmod/$name.deps"); do
		[ "$m" = "$name" ] && break
		[ -d "/sys/module/$m" ] || command insmod "/kmod/$m.ko"
	done
	command insmod "/kmod/$name.ko" "$@"
}

# --- state disk ------------------------------------------------------------------
# slot N valid -> prints its sequence number; its body is left in /tmp/.mobio_st$N
_state_slot() {
	local h t seq
	dd if="$MOBIO_STATE_DEV" bs=$MOBIO_STATE_SLOT skip="$1" count=1 2>/dev/null |
		tr -d '\000' >/tmp/.mobio_st"$1"
	h=$(head -n 1 /tmp/.mobio_st"$1")
	t=$(tail -n 1 /tmp/.mobio_st"$1")
	case "$h" in
	"MOBIOSTATE "*)
		seq=${h#MOBIOSTATE }
		[ "$t" = "MOBIOEND $seq" ] && echo "$seq"
		;;
	esac
	return 0
}

# newest valid slot -> _st_seq, body (K=V lines) in /tmp/.mobio_state
_state_load() {
	local s0 s1 slot
	s0=$(_state_slot 0)
	s1=$(_state_slot 1)
	_st_seq=0
	slot=
	if [ -n "$s0" ]; then
		_st_seq=$s0
		slot=0
	fi
	if [ -n "$s1" ] && [ "$s1" -gt "$_st_seq" ]; then
		_st_seq=$s1
		slot=1
	fi
	if [ -n "$slot" ]; then
		sed '1d;$d' /tmp/.mobio_st$slot >/tmp/.mobio_state
	else
		: >/tmp/.mobio_state
	fi
}

state_get() {
	_state_load
	sed -n "s/^$1=//p" /tmp/.mobio_state | tail -n 1
}

state_set() {
	local seq
	_state_load
	seq=$((_st_seq + 1))
	{
		echo "MOBIOSTATE $seq"
		grep -v "^$1=" /tmp/.mobio_state || :
		echo "$1=$2"
		echo "MOBIOEND $seq"
	} >/tmp/.mobio_st.w
	if [ "$(wc -c </tmp/.mobio_st.w)" -gt $MOBIO_STATE_SLOT ]; then
		echo "mobio: state store full (64 KiB)" >&2
		return 1
	fi
	dd if=/tmp/.mobio_st.w of="$MOBIO_STATE_DEV" bs=$MOBIO_STATE_SLOT seek=$((seq % 2)) \
		count=1 conv=sync,notrunc,fsync 2>/dev/null
}

# Called once per boot by /init (the busybox guest) and by the Debian
# guest's agent (tests/vm/debian/agent.sh), before the test: MOBIO_TEST and
# DISK_<name> from the command line (the state disk is vda, the declared
# disks follow in order), the result channel on fd 7, the boot count.
mobio_guest_begin() {
	local w d
	MOBIO_TEST=
	MOBIO_DISKS=
	for w in $(cat /proc/cmdline); do
		case "$w" in
		mobio.test=*) MOBIO_TEST=${w#*=} ;;
		mobio.disks=*) MOBIO_DISKS=$(echo "${w#*=}" | tr ',' ' ') ;;
		esac
	done
	export MOBIO_TEST
	set -- b c d e f g h i j k l m n o p
	for d in $MOBIO_DISKS; do
		export "DISK_$d=/dev/vd$1"
		shift
	done
	# the result channel, raw; fd 7 stays open so the host's answers are never lost
	stty -F $MOBIO_RES raw -echo 2>/dev/null
	exec 7<$MOBIO_RES
	stty -F $MOBIO_RES raw -echo
	mobio_boot_begin
}

mobio_boot_begin() {
	local b
	b=$(state_get MOBIO_BOOT)
	MOBIO_BOOT=$((${b:-0} + 1))
	export MOBIO_BOOT
	state_set MOBIO_BOOT "$MOBIO_BOOT"
	_mobio_say "BOOT $MOBIO_BOOT"
}

# --- requests to the host ----------------------------------------------------------
request_warm_reboot() {
	sync
	_mobio_say "REQ warm_reboot"
	echo "mobio: warm reboot (sysrq b)"
	echo b >/proc/sysrq-trigger
	sleep 600
}

# wait for "DONE <id>" from the host on fd 7, at most $2 s; the whole line
# is left in $_mobio_done
_mobio_wait_done() {
	local line
	while read -t "$2" -r line <&7; do
		case "$line" in
		*"DONE $1"*)
			_mobio_done=$line
			return 0
			;;
		esac
	done
	echo "mobio: no answer from the host for $1" >&2
	return 1
}

request_power_key() {
	local id
	id="pk$$.$(cut -d' ' -f1 /proc/uptime)"
	_mobio_say "REQ power_key $1 $id"
	_mobio_wait_done "$id" $(($1 / 1000 + 60))
}

request_cold_cycle() {
	sync
	_mobio_say "REQ cold_cycle"
	echo "mobio: cold cycle requested"
	sleep 600
}

# a clean power-off (reboot notifiers run), then the host starts a new QEMU
request_poweroff_cycle() {
	sync
	_mobio_say "REQ poweroff_cycle"
	echo "mobio: power-off cycle requested"
	poweroff -f
	sleep 600
}

# The Debian guest ("# vm-root: debian"): a clean reboot or power-off through
# systemd, as a user does it; services stop, the reboot notifiers run. The
# host treats them as request_warm_reboot (RAM kept) and
# request_poweroff_cycle (a new QEMU, RAM gone).
# _mobio_systemctl REQ VERB: tell the host REQ, then `systemctl VERB`; the
# marker tells the agent that systemd stopping the test is no EXIT
_mobio_systemctl() {
	sync
	: >/run/mobio-vmtest-shutdown
	_mobio_say "REQ $1"
	echo "mobio: systemctl $2"
	systemctl --no-block "$2"
	sleep 600
}

request_systemctl_reboot() {
	_mobio_systemctl warm_reboot reboot
}

request_systemctl_poweroff() {
	_mobio_systemctl poweroff_cycle poweroff
}

request_reset() {
	sync
	_mobio_say "REQ reset"
	echo "mobio: reset requested"
	sleep 600
}

# The guest sees a PCI hot-unplug (ACPI eject): the disk goes away under its
# users. Prints the host's answer when it is not "ok".
request_device_del() {
	local id
	id="dd$$.$(cut -d' ' -f1 /proc/uptime)"
	_mobio_say "REQ device_del $1 $id"
	_mobio_wait_done "$id" 40 || return 1
	case "$_mobio_done" in
	*"DONE $id ok"*) return 0 ;;
	esac
	echo "mobio: device_del $1: ${_mobio_done#*DONE $id }" >&2
	return 1
}

request_reset_after() {
	_mobio_say "REQ reset_after ${1:-random}"
}

finish() {
	sync
	_mobio_say "FINISH"
	echo "mobio: finish"
	# the host answers once it has the line: QEMU may drop what its result
	# socket has not sent yet when the guest powers off at once
	_mobio_wait_done finish 5 || true
	poweroff -f
	sleep 600
}
