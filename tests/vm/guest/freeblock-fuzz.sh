#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# 20,000 genl-fuzz requests to the freeblock family as root and 20,000 as
# an unprivileged user (uid 65534), half of them well formed with real and
# unknown disk names, while the data disk has tasks in progress: a scrub
# through /dev/freeblock whose reader is slow (it checks every block), an
# idle registered scrub (fbtest hold), a kernel-API read task (debugfs) and
# a foreground reader. The family has two commands: GET_STATS, for anyone,
# served for both, and SET_DISK, CAP_SYS_ADMIN only: for root random
# values are refused as out of range (EINVAL: mobioctl fb set in
# freeblock-stacked serves good ones), EPERM for the user; no other
# command is served. Root's random settings are reset afterwards. Then the scrub has
# delivered every block once with the right data, the counters moved, a
# new scrub works, rmmod is clean (it aborts the kernel task), so is dmesg.
# vm-disk: data 32M
# vm-timeout: 300
. /mobio/tests/lib.sh
. /mobio/tests/freeblock-lib.sh
. /mobio/tests/genl-fuzz-lib.sh

dev=${DISK_data#/dev/}
SEED=0x5eedf00d
SIZE=$((32 * 1024 * 1024))
U=65534
COUNT=20000
# disk names: the one with tasks, one without (the state disk), one that
# does not exist, a path, an empty and a 31-character name
HINTS="-a 2:str:$dev -a 2:str:vda -a 2:str:nosuchdisk -a 2:str:/dev/$dev
	-a 2:str: -a 2:str:abcdefghijklmnopqrstuvwxyz01234"

# once NAME NBLOCKS OUTPUT: every block delivered once, data right
once() {
	check_eq "${1}_every_block_once" "nblocks=$2 got=$2 dup=0" \
		"$(echo "$3" | grep -o 'nblocks=[0-9]* got=[0-9]* dup=[0-9]*')"
	check_eq "${1}_data_matches_pattern" 0 "$(kv bad "$3")"
	check_eq "${1}_no_read_error" 0 "$(kv failed "$3")"
}

check_ok fill_pattern fbtest fill "$DISK_data" $SEED
check_ok insmod_freeblock insmod $FB_KO

# --- tasks in progress ------------------------------------------------------------
fbtest hold "$DISK_data" >/tmp/hold.out &
holder=$!
# 8 MiB in 4 KiB blocks, 3 ms per block for the reader: at least 6 s
fbtest scrub "$DISK_data" --bs 4096 --slots 4 --len $((8 * 1024 * 1024)) \
	--seed $SEED --consume-delay-us 3000 >/tmp/scrub.out 2>&1 &
scrub=$!
echo read $DISK_data 0 $SIZE 4096 $SEED 64 >$ST
fbtest load "$DISK_data" 600 >/tmp/load.out 2>&1 &
load=$!
sleep 1
check_eq tasks_active_before_fuzz 3 "$(fb_stat tasks_active)"
check_eq kernel_task_running_before_fuzz 1 "$(grep -c state=running $ST)"
done0=$(fb_stat blocks_done)

# --- root, then the user --------------------------------------------------------------
# shellcheck disable=SC2086 # HINTS are words
fuzz root /tmp/fz-root.out $HINTS freeblock $COUNT 1
check_fuzz_ge root_get_stats_served /tmp/fz-root.out 1 ok 500
check_fuzz_ge root_get_stats_sends_counters /tmp/fz-root.out 1 data 500
check_fuzz_ge root_set_disk_refuses_bad_values /tmp/fz-root.out 2 EINVAL 100
check_fuzz_eq root_set_disk_not_eperm /tmp/fz-root.out 2 EPERM 0
# what root's random settings did to the data disk: back to the parameters
check_ok reset_disk_settings mobioctl fb set "$dev" depth=default \
	idle_min_us=default idle_max_us=default collide_pct=default \
	floor_kbps=default ceiling_kbps=default stale_ms=default
check_eq conf_depth_follows_param_again "$(cat /sys/module/freeblock/parameters/depth)" \
	"$(fb_stat conf_depth)"
check_fuzz_ge root_get_stats_unknown_disk_enodev /tmp/fz-root.out 1 ENODEV 100
check_fuzz_eq root_no_other_command_served /tmp/fz-root.out other ok 0
check_eq tasks_active_after_root_fuzz 3 "$(fb_stat tasks_active)"
check_dmesg_clean dmesg_clean_after_root_fuzz

# shellcheck disable=SC2086 # HINTS are words
fuzz user /tmp/fz-user.out -u $U $HINTS freeblock $COUNT 2
check_fuzz_ge user_get_stats_served /tmp/fz-user.out 1 ok 500
check_fuzz_ge user_get_stats_sends_counters /tmp/fz-user.out 1 data 500
check_fuzz_ge user_set_disk_eperm /tmp/fz-user.out 2 EPERM 1000
check_fuzz_eq user_set_disk_never_served /tmp/fz-user.out 2 ok 0
check_fuzz_ge user_get_stats_unknown_disk_enodev /tmp/fz-user.out 1 ENODEV 100
check_fuzz_eq user_no_other_command_served /tmp/fz-user.out other ok 0
check_eq tasks_active_after_user_fuzz 3 "$(fb_stat tasks_active)"
check_eq kernel_task_running_after_fuzz 1 "$(grep -c state=running $ST)"
check_eq scrub_in_progress_through_fuzz 1 "$(kill -0 $scrub 2>/dev/null && echo 1 || echo 0)"
check_dmesg_clean dmesg_clean_after_user_fuzz

# --- still works ----------------------------------------------------------------------
# the scrub has only idle time: the foreground reader goes first
kill $load
wait $load 2>/dev/null
wait $scrub
check_eq slow_scrub_exit 0 $?
out=$(cat /tmp/scrub.out)
log "scrub through the fuzz: $out"
once slow_scrub 2048 "$out"
check_ge blocks_done_grew $((done0 + 1)) "$(fb_stat blocks_done)"
kill $holder
wait $holder 2>/dev/null
out=$(fbtest scrub "$DISK_data" --bs 65536 --len 1048576 --seed $SEED)
once new_scrub 16 "$out"
check_eq only_kernel_task_left 1 "$(fb_stat tasks_active)"
check_ok rmmod_aborts_kernel_task rmmod freeblock
check_dmesg_clean dmesg_clean_after_rmmod
finish
