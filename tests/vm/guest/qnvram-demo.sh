#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make demo`: what survives what. An app keeps 4 MiB of state in a qNVRAM
# region; we kill it, warm-reboot the machine, hold the power key and cut the
# power, and after each step check every byte of the state.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

APP_UID=1000
MAGIC=0xd3e0
SEED=2026
BYTES=4194304

survived() {
	local out
	out=$(as_uid $APP_UID qnvtest verify $APP_UID $MAGIC $SEED 2>&1)
	note "$1: ${out:-no output} -> $( [ "${out#mismatches 0 }" != "$out" ] && echo SURVIVED || echo LOST)"
	check_ok "$2" as_uid $APP_UID qnvtest verify $APP_UID $MAGIC $SEED
}

case $MOBIO_BOOT in
1)
	note "boot 1: reserved 32 MiB at 0x30000000 (memmap=32M\$0x30000000), flash = virtio disk $DISK_flash"
	# the app's 4 MiB is past the default quota (12% of the data area)
	check_ok load qnvram_load uid_quota_pct=0
	note "$(dmesg | grep -o 'qnvram: formatted pool.*')"
	as_uid $APP_UID qnvtest hold $APP_UID $MAGIC $BYTES $SEED >/tmp/app.out 2>&1 &
	i=0
	while ! grep -q ready /tmp/app.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	note "app (uid $APP_UID) wrote 4 MiB of state into region $MAGIC and persisted it"
	note "$(mobioctl qnvram list)"
	pkill -9 -f "qnvtest hold"
	sleep 0.5
	note "app killed with SIGKILL"
	survived "after the app crash" state_survives_app_kill
	note "warm reboot (sysrq b): the CPU resets, RAM keeps its contents"
	request_warm_reboot
	;;
2)
	check_ok load_after_warm_reboot qnvram_load uid_quota_pct=0
	note "boot 2: $(dmesg | grep -o 'qnvram: adopted pool.*')"
	survived "after the warm reboot" state_survives_warm_reboot
	note "holding the power key for 6 s (qNVRAM flushes after 5 s)"
	request_power_key 6000
	i=0
	while [ "$(qnvram_stat power_key_flushes)" != 1 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	check_eq power_key_flush 1 "$(qnvram_stat power_key_flushes)"
	note "flushed $(qnvram_stat last_flush_bytes) bytes to flash in $(( $(qnvram_stat last_flush_ns) / 1000000 )) ms ($(( $(qnvram_stat last_flush_kbps) / 1024 )) MiB/s)"
	note "power cut: QEMU exits, a new QEMU starts with zeroed RAM and the same flash"
	request_cold_cycle
	;;
3)
	check_ok load_after_power_cut qnvram_load uid_quota_pct=0
	note "boot 3: $(dmesg | grep -o 'qnvram: restored pool.*')"
	survived "after the power cut" state_survives_power_cut
	note "pool: $(mobioctl qnvram stats | grep -E '^(used_bytes|regions_resident|flushes) ' | tr '\n' ' ')"
	finish
	;;
esac
