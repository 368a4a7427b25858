#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 10,000 random and malformed messages to the qnvram genl family, as root and
# as a user, and 10,000 random ioctls on /dev/qnvram: no oops (the bench
# checks dmesg), and the module still works afterwards.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 80M
# vm-timeout: 900
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

check_ok load qnvram_load
check_ok alloc_before qnvtest alloc 1000 1 65536 401
out=$(genl-fuzz qnvram 10000 1 2>&1)
check_eq fuzz_root_sent_10000 1 "$(echo "$out" | grep -q 'sent 10000' && echo 1 || echo 0)"
log "root: $out"
out=$(as_uid 1000 genl-fuzz qnvram 10000 2 2>&1)
check_eq fuzz_user_sent_10000 1 "$(echo "$out" | grep -q 'sent 10000' && echo 1 || echo 0)"
log "uid 1000: $out"
check_ok ioctl_fuzz_as_user as_uid 1000 qnvtest ioctl-fuzz 10000 3
check_ok still_verifies qnvtest verify 1000 1 401
check_ok still_allocates qnvtest alloc 0 2 4096 402
check_ok still_lists mobioctl qnvram list
check_ok still_flushes mobioctl qnvram flush
check_ok rmmod_after_fuzz sh -c 'qnvtest free 0 2 && rmmod qnvram'
finish
