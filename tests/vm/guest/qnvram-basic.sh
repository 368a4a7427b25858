#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# qnvram.ko on one boot: load checks, alloc/retrieve/free round trips through
# libqnvram, clean errors for bad requests, uid isolation, data surviving a
# SIGKILLed app, the netlink CLI, rmmod with a mapped region, fallback mode.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 80M
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

# --- load-time checks ---------------------------------------------------------
insmod /mobio/qnvram.ko 2>/dev/null
check_eq load_without_pool_refused 1 "$([ -e /dev/qnvram ] && echo 0 || echo 1)"
check_dmesg load_without_pool_says_why "no pool: give phys= and size="
insmod /mobio/qnvram.ko phys=$(printf '0x%x' $((MOBIO_RAM_BASE + 0x1000000))) size=0x1000000 2>/dev/null
check_eq load_on_system_ram_refused 1 "$([ -e /dev/qnvram ] && echo 0 || echo 1)"
check_dmesg load_on_system_ram_says_why "overlaps System RAM"
# Not System RAM either, but a device: formatting a pool there wrote into it
# (arm64's flash bank: a soft lockup). amd64: the IOAPIC's page in the PCI
# hole, e820 "reserved" like a memmap=$ range; arm64: the first flash bank.
# And a range above the end of RAM.
case $(uname -m) in
aarch64) device=0x1000000 ;;
*) device=0xfec00000 ;;
esac
insmod /mobio/qnvram.ko phys=$device size=0x1000000 2>/dev/null
check_eq load_on_device_refused 1 "$([ -e /dev/qnvram ] && echo 0 || echo 1)"
check_dmesg load_on_device_says_why "$(printf '%#x' $device)-.* is not RAM"
ram_end=$(sed -n 's/^[0-9a-f]*-\([0-9a-f]*\) : System RAM$/\1/p' /proc/iomem | tail -n 1)
beyond=$(printf '0x%x' $(((0x$ram_end >> 28) + 4 << 28)))
insmod /mobio/qnvram.ko phys=$beyond size=0x1000000 2>/dev/null
check_eq load_beyond_ram_refused 1 "$([ -e /dev/qnvram ] && echo 0 || echo 1)"
check_dmesg load_beyond_ram_says_why "$beyond-.* is not RAM"
insmod /mobio/qnvram.ko phys=$QNVRAM_PHYS size=12345 2>/dev/null
check_eq load_with_unaligned_size_refused 1 "$([ -e /dev/qnvram ] && echo 0 || echo 1)"

# Proves the /dev/mem check below can fail: unclaimed, the range is readable
# on x86. arm64's /dev/mem reads only memory of the linear map, so a no-map
# reservation is refused (EFAULT) whether claimed or not.
if [ "$(uname -m)" = aarch64 ]; then
	check_ok devmem_refuses_nomap_range sh -c "! dd if=/dev/mem bs=4096 skip=$((QNVRAM_PHYS / 4096)) count=1 of=/dev/null 2>/dev/null"
else
	check_ok devmem_reads_unclaimed_range dd if=/dev/mem bs=4096 skip=$((QNVRAM_PHYS / 4096)) count=1 of=/dev/null
fi
check_ok load_reserved_pool qnvram_load
check_dmesg fresh_pool_is_formatted "formatted pool of 33554432 bytes"
check_eq pool_claimed_in_iomem 1 "$(grep -c "$(printf '%x-%x : qnvram' $((QNVRAM_PHYS)) $((QNVRAM_PHYS + 0x1ffffff)))" /proc/iomem)"
check_ok devmem_cannot_read_pool sh -c "! dd if=/dev/mem bs=4096 skip=$((QNVRAM_PHYS / 4096)) count=1 of=/dev/null 2>/dev/null"
check_eq stats_pool_bytes 33554432 "$(qnvram_stat pool_bytes)"
check_eq stats_not_fallback 0 "$(qnvram_stat fallback)"

# --- round trips as root and as a user ----------------------------------------
check_ok root_alloc_1m qnvtest alloc 0 1 1048576 11
check_ok root_verify_1m qnvtest verify 0 1 11
check_ok user_alloc_3_pages as_uid 1000 qnvtest alloc 1000 1 12288 21
check_ok user_verify_3_pages as_uid 1000 qnvtest verify 1000 1 21
check_ok user_alloc_odd_size_rounds_up as_uid 1000 qnvtest alloc 1000 2 5000 22
check_ok user_verify_odd_size as_uid 1000 qnvtest verify 1000 2 22
check_ok alloc_existing_is_eexist qnvtest expect-errno EEXIST alloc 0 1 4096 11
check_ok alloc_zero_size_is_einval qnvtest expect-errno EINVAL alloc 0 3 0 1
check_ok alloc_larger_than_pool_is_enospc qnvtest expect-errno ENOSPC alloc 0 3 67108864 1
check_ok retrieve_unknown_is_enoent qnvtest expect-errno ENOENT verify 0 99 1
check_ok mmap_beyond_region_refused qnvtest mmap-beyond 0 1
check_ok free_then_double_free_is_enoent qnvtest double-free 1000 2

# --- uid isolation ------------------------------------------------------------
check_ok other_uid_retrieve_is_eperm as_uid 1001 qnvtest expect-errno EPERM verify 1000 1 21
check_ok other_uid_free_is_eperm as_uid 1001 qnvtest expect-errno EPERM free 1000 1
check_ok other_uid_alloc_in_name_is_eperm as_uid 1001 qnvtest expect-errno EPERM alloc 1000 9 4096 1
check_ok same_magic_other_uid_is_separate as_uid 1001 qnvtest expect-errno ENOENT verify 1001 1 21
check_ok owner_still_verifies as_uid 1000 qnvtest verify 1000 1 21
check_ok root_may_inspect_other_uid qnvtest verify 1000 1 21

# --- an app killed with SIGKILL, then restarted -------------------------------
as_uid 1000 qnvtest hold 1000 7 2097152 77 >/tmp/hold.out 2>&1 &
hold=$!
i=0
while ! grep -q ready /tmp/hold.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check_eq holder_ready ready "$(cat /tmp/hold.out)"
check_eq region_mapped_once_while_held 1 "$(awk '$2 == 1000 && $3 == "0x7" { print $8 }' /sys/kernel/debug/qnvram/regions)"
check_ok free_while_mapped_is_ebusy as_uid 1000 qnvtest expect-errno EBUSY free 1000 7
rmmod qnvram 2>/dev/null
check_eq rmmod_with_region_mapped_refused 1 "$([ -e /dev/qnvram ] && echo 1 || echo 0)"
kill -9 $hold
wait $hold 2>/dev/null
check_ok data_survives_sigkill as_uid 1000 qnvtest verify 1000 7 77

# --- the netlink CLI ----------------------------------------------------------
check_eq cli_lists_user_regions_only 2 "$(as_uid 1000 mobioctl qnvram list | grep -c '^uid 1000')"
check_eq cli_root_lists_all 3 "$(mobioctl qnvram list | grep -c '^uid ')"
check_ok cli_json_stats sh -c 'mobioctl --json qnvram stats | grep -q "\"pool_bytes\": *33554432"'
check_ok cli_show_region sh -c 'mobioctl qnvram show 1000 7 | grep -q "size 2097152"'
check_ok cli_flush_as_root mobioctl qnvram flush
check_eq stats_flushes_1 1 "$(qnvram_stat flushes)"
log "flush: $(qnvram_stat last_flush_bytes) bytes in $(qnvram_stat last_flush_ns) ns = $(qnvram_stat last_flush_kbps) KB/s"
check_ok cli_flush_as_user_refused sh -c '! qnvtest setuid 1000 mobioctl qnvram flush'
check_ok cli_free_region mobioctl qnvram free 1000 7
check_ok cli_free_unknown_fails_with_message sh -c 'mobioctl qnvram free 1000 7 2>&1 | grep -q "no region"'

# --- module reload adopts the pool --------------------------------------------
check_ok rmmod_when_unmapped rmmod qnvram
insmod /mobio/qnvram.ko phys=$QNVRAM_PHYS size=0x1000000 2>/dev/null
check_eq load_with_other_size_refused 1 "$([ -e /dev/qnvram ] && echo 0 || echo 1)"
check_dmesg load_with_other_size_says_why "made with other parameters"
check_ok reload qnvram_load
check_dmesg reload_adopts_pool "adopted pool"
check_ok reload_keeps_data qnvtest verify 0 1 11
check_ok reload_keeps_user_data as_uid 1000 qnvtest verify 1000 1 21

# --- per-uid quota -----------------------------------------------------------
echo 1048576 >/sys/module/qnvram/parameters/uid_quota
check_ok quota_allows_up_to_limit as_uid 1002 qnvtest alloc 1002 1 1048576 31
check_ok quota_exceeded_is_edquot as_uid 1002 qnvtest expect-errno EDQUOT alloc 1002 2 4096 32
check_ok quota_other_uid_unaffected as_uid 1003 qnvtest alloc 1003 1 4096 33
check_ok quota_freed_space_counts_again sh -c 'qnvtest setuid 1002 free 1002 1 && qnvtest setuid 1002 alloc 1002 2 4096 32'
echo 0 >/sys/module/qnvram/parameters/uid_quota

# --- fallback pool in ordinary memory -----------------------------------------
rmmod qnvram
check_ok load_fallback insmod /mobio/qnvram.ko fallback=1 size=4194304
check_eq stats_fallback 1 "$(qnvram_stat fallback)"
check_dmesg fallback_says_so "fallback pool of 4194304 bytes"
check_ok fallback_alloc qnvtest alloc 0 5 65536 55
check_ok fallback_verify qnvtest verify 0 5 55
check_ok fallback_flush_without_backing_refused sh -c 'mobioctl qnvram flush 2>&1 | grep -q "no backing device"'
rmmod qnvram
finish
