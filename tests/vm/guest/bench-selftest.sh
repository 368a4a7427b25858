#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Bench self-test, no project module: every scenario the bench offers.
#   boot 1: plain pass, state_set, warm reboot
#   boot 2: state kept over the warm reboot; power key held 1000 ms reaches
#           evdev as KEY_POWER down then up; cold cycle
#   boot 3: state kept over a new QEMU; request_reset
#   boot 4: state kept over system_reset; request_reset_after 300 while working
#   boot 5: state kept; finish
# vm-timeout: 400
# vm-disk: scratch 4M
. /mobio/tests/lib.sh

KEY_POWER=116
EV_KEY=1

# event device of the AT keyboard (i8042), where QMP key events land
kbd_event_dev() {
	local d
	for d in /sys/class/input/event*; do
		case "$(cat "$d/device/name" 2>/dev/null)" in
		*"AT Translated"* | *"AT Raw"*)
			echo "/dev/input/${d##*/}"
			return
			;;
		esac
	done
}

# power key request, read back from evdev; sets case results
power_key_case() {
	local dev ms=1000 down up held
	dev=$(kbd_event_dev)
	if [ -z "$dev" ]; then
		fail power_key_reaches_evdev "expected an AT keyboard event device, saw none"
		return
	fi
	cat "$dev" >/tmp/ev.bin &
	pid=$!
	sleep 0.2
	if ! request_power_key $ms; then
		kill $pid
		fail power_key_request_answered "expected DONE from the host, saw nothing"
		return
	fi
	pass power_key_request_answered
	sleep 0.2
	kill $pid
	# input_event: tv_sec s64, tv_usec s64, type u16, code u16, value s32
	# (busybox hexdump has no 8-byte %d: low and high words; both fit in 32 bits here)
	hexdump -v -e '1/4 "%u " 1/4 "%u " 1/4 "%u " 1/4 "%u " 1/2 "%u " 1/2 "%u " 1/4 "%d" "\n"' /tmp/ev.bin |
		awk -v t=$EV_KEY -v c=$KEY_POWER '$5 == t && $6 == c { print $7, $1 * 1000 + int($3 / 1000) }' >/tmp/ev.txt
	down=$(awk '$1 == 1 { print $2; exit }' /tmp/ev.txt)
	up=$(awk '$1 == 0 { print $2; exit }' /tmp/ev.txt)
	check_eq power_key_down_seen yes "$([ -n "$down" ] && echo yes || echo no)"
	check_eq power_key_up_seen yes "$([ -n "$up" ] && echo yes || echo no)"
	if [ -n "$down" ] && [ -n "$up" ]; then
		held=$((up - down))
		log "KEY_POWER held $held ms"
		if [ $held -ge $((ms - 100)) ] && [ $held -le $((ms + 2000)) ]; then
			pass power_key_held_as_requested
		else
			fail power_key_held_as_requested "expected ${ms} ms, saw ${held} ms"
		fi
	fi
}

case "$MOBIO_BOOT" in
1)
	pass plain_boot_reports
	check_eq disk_declared_is_vdb /dev/vdb "$DISK_scratch"
	echo "scratch-before-warm" | dd of="$DISK_scratch" conv=fsync 2>/dev/null
	state_set warm_token "w$$-$(cat /proc/sys/kernel/random/boot_id)"
	state_set boot_id_1 "$(cat /proc/sys/kernel/random/boot_id)"
	request_warm_reboot
	;;
2)
	check_eq warm_reboot_counts_boot 2 "$MOBIO_BOOT"
	check_eq warm_reboot_keeps_state "$(state_get warm_token)" "w$(state_get warm_token | sed 's/^w//')"
	[ -n "$(state_get warm_token)" ] && pass warm_reboot_state_nonempty ||
		fail warm_reboot_state_nonempty "expected a token, saw nothing"
	[ "$(state_get boot_id_1)" != "$(cat /proc/sys/kernel/random/boot_id)" ] &&
		pass warm_reboot_is_a_new_kernel || fail warm_reboot_is_a_new_kernel "expected a new boot_id, saw the same"
	check_eq warm_reboot_keeps_disk scratch-before-warm "$(head -n 1 "$DISK_scratch")"
	power_key_case
	state_set cold_token "c-$(cat /proc/sys/kernel/random/boot_id)"
	request_cold_cycle
	;;
3)
	check_eq cold_cycle_counts_boot 3 "$MOBIO_BOOT"
	t=$(state_get cold_token)
	check_eq cold_cycle_keeps_state c- "$(echo "$t" | cut -c1-2)"
	check_eq cold_cycle_keeps_disk scratch-before-warm "$(head -n 1 "$DISK_scratch")"
	state_set reset_token r3
	request_reset
	;;
4)
	check_eq reset_counts_boot 4 "$MOBIO_BOOT"
	check_eq reset_keeps_state r3 "$(state_get reset_token)"
	state_set reset_after_requested yes
	# one value before the reset can come, so an empty one means a torn slot
	state_set work_counter start
	request_reset_after 300
	# keep working (state writes) until the host resets us; A/B slots keep it sane
	i=0
	while [ $i -lt 600 ]; do
		state_set work_counter $i
		i=$((i + 1))
	done
	fail reset_after_arrives "expected a reset within 300 ms, saw none after 600 state writes"
	finish
	;;
5)
	check_eq reset_after_counts_boot 5 "$MOBIO_BOOT"
	check_eq reset_after_keeps_state yes "$(state_get reset_after_requested)"
	w=$(state_get work_counter)
	log "work_counter at reset: ${w:-none}"
	case "$w" in
	start) pass reset_after_state_readable ;;
	'' | *[!0-9]*) fail reset_after_state_readable "expected start or a number, saw '$w'" ;;
	*) pass reset_after_state_readable ;;
	esac
	finish
	;;
*)
	fail unexpected_boot "expected boots 1-5, saw $MOBIO_BOOT"
	finish
	;;
esac
