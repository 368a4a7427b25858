#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Experiment, not in `make check` (it fails today): the power-key test of
# tests/vm/guest/ppcache-crash-power.sh, except that the writer is NOT frozen
# before the key goes down. It keeps committing through the 6 s hold, through
# qnvram's flush of the pool to flash (at 5 s) and after it, as apps on a phone
# do until the hard reset; then QEMU is ended without a sync and restarted.
# What should hold after the restore: integrity ok, a consistent prefix, and
# every id logged before the key went down present (ids logged after the
# flush may be lost: "lost=N"). What happens (2026-11-30, 6.12): the database
# is corrupt with every threshold (5, -1, 0). Two causes fit what is seen:
# the image is older than the database file (LazyFlush kept writing pages in
# place after the flush, and recovery replays the older region copies over
# them), and the region is copied while the writer changes it (a torn image).
#
#   MOBIO_VM_APPEND="race.threshold=0" \
#   python3 tests/vm/run.py test --kver KVER bench/sqlite/ppcache-power-race.sh
#
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 256M
# vm-kmod: ext4
# vm-bin: /sbin/mkfs.ext4
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/ppcache-crash-lib.sh

CYCLES=3
THRESHOLD=
for w in $(cat /proc/cmdline); do
	case "$w" in
	race.threshold=*) THRESHOLD=${w#*=} ;;
	race.cycles=*) CYCLES=${w#*=} ;;
	esac
done

pc_setup || finish
done_n=$(state_get pc_cycles)
done_n=${done_n:-0}
if [ "$MOBIO_BOOT" -gt 1 ]; then
	if pc_check "race_power_cycle_keeps_txns_logged_before_key_down_boot_$MOBIO_BOOT" \
		--after-flush "$(state_get pc_logged)"; then
		pass "race_power_cycle_keeps_txns_logged_before_key_down_boot_$MOBIO_BOOT"
		note "race boot $MOBIO_BOOT: $(grep '^ok' $PC_OUT); logged before key down $(state_get pc_logged)"
	else
		note "race boot $MOBIO_BOOT: $(tr '\n' ' ' <$PC_OUT)"
		finish
	fi
fi
if [ "$done_n" -lt "$CYCLES" ]; then
	pc_writer_start "${THRESHOLD:-$(pc_threshold "$done_n")}"
	usleep "$(pc_rand 200000 1500000)"
	pc_writer_alive "writer_runs_$MOBIO_BOOT" || finish
	state_set pc_logged "$(tail -n 1 $PC_LOG 2>/dev/null || echo 0)"
	state_set pc_cycles $((done_n + 1))
	request_power_key 6000
	sleep 1
	note "race: power-key flushes $(qnvram_stat power_key_flushes); log at $(tail -n 1 $PC_LOG)" \
		"(it was at $(state_get pc_logged) when the key went down)"
	pc_cold_cycle
fi
finish
