#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The power key is held, the pool is flushed and frozen, but the power does
# not go: the app resumes after freeze_ms and keeps committing (LazyFlush
# writes the file in place), then the power is cut with no newer flush (a
# user who cancelled the power menu, a battery that died later). The image
# on flash is older than the file, so it must not be restored as current
# (qnvram.ko retires it at the first change), and ppcache must then refuse
# the database, not open an older or mixed state: the next boot's open is
# SQLITE_CANTOPEN naming the missing region; `ppcache discard` then opens the
# file as it was last synced, which is a whole prefix of the transactions
# (integrity ok, ids 1..M exactly). Thresholds 5 and 0 (the file is written
# after the resume).
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 256M
# vm-kmod: ext4
# vm-bin: /sbin/mkfs.ext4
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/ppcache-crash-lib.sh

CYCLES=2

pc_setup || finish
echo 2000 >/sys/module/qnvram/parameters/freeze_ms
n=$(state_get pr_cycles)
n=${n:-0}
if [ "$MOBIO_BOOT" -gt 1 ]; then
	check_eq "cold_boot_${MOBIO_BOOT}_restores_no_stale_image" 0 "$(qnvram_stat boot_source)"
	if ppcache-crash check $PC_DB $PC_LOG >$PC_OUT 2>&1; then
		fail "stale_database_is_refused_$MOBIO_BOOT" \
			"expected the open to be refused, saw: $(cat $PC_OUT)"
	elif grep -q "not there" $PC_OUT; then
		pass "stale_database_is_refused_$MOBIO_BOOT"
	else
		fail "stale_database_is_refused_$MOBIO_BOOT" \
			"expected a refusal naming the missing region, saw: $(tail -n 3 $PC_OUT | tr '\n' ' ')"
	fi
	ppcache show $PC_DB >/tmp/show.out 2>&1
	if grep -q "verdict refused" /tmp/show.out; then
		pass "ppcache_show_says_refused_$MOBIO_BOOT"
	else
		fail "ppcache_show_says_refused_$MOBIO_BOOT" "$(cat /tmp/show.out | tr '\n' ' ')"
	fi
	check_ok "ppcache_discard_$MOBIO_BOOT" ppcache discard $PC_DB
	# a whole prefix 1..M, M >= 1 (the writer synced before the key);
	# ids logged after the last sync may be lost (0 would mean "not given")
	pc_check "after_discard_a_whole_prefix_$MOBIO_BOOT" --after-flush 1 || finish
	log "after discard: $(pc_field committed) of $(pc_field logged) logged transactions"
	# the writer's log restarts from what the database holds
	head -n "$(pc_field committed)" $PC_LOG >$PC_LOG.new && mv $PC_LOG.new $PC_LOG
	sync
fi
if [ "$n" -lt $CYCLES ]; then
	state_set pr_cycles $((n + 1))
	pc_writer_start "$([ "$n" = 0 ] && echo 5 || echo 0)"
	usleep "$(pc_rand 200000 800000)"
	pc_writer_alive "writer_runs_until_the_key_$MOBIO_BOOT" || finish
	before=$(qnvram_stat power_key_flushes)
	request_power_key 6000
	wait_stat power_key_flushes $((before + 1)) 20
	check_eq "power_key_flush_$MOBIO_BOOT" $((before + 1)) "$(qnvram_stat power_key_flushes)"
	at_flush=$(wc -l <$PC_LOG)
	# the freeze ends; the app goes on committing past the image
	sleep 4
	pc_writer_alive "writer_resumes_after_the_freeze_$MOBIO_BOOT" || finish
	check_ge "writer_commits_after_the_freeze_$MOBIO_BOOT" $((at_flush + 1)) "$(wc -l <$PC_LOG)"
	kill -STOP "$PC_WRITER"
	pc_cold_cycle
fi
check_eq stale_image_cycles_$CYCLES $CYCLES "$n"
finish
