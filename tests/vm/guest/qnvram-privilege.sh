#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# qnvram.ko's privileges with its default parameters (issue 12, items 2-4;
# docs/qnvram.md "Threat model"):
#  - one unprivileged uid cannot exhaust the pool: it stops at its byte
#    quota (12% of the data area) and its region cap (24) with EDQUOT, and
#    a second uid still gets its whole quota; an allocation over the quota
#    retires no image and swaps nobody out; root is not limited and can
#    raise the limits;
#  - FLUSH needs CAP_SYS_ADMIN: an unprivileged uid and a uid with only
#    CAP_NET_ADMIN get EPERM, one with only CAP_SYS_ADMIN and root flush;
#  - identity comes from the socket and the file, not the calling task: a
#    socket or a file opened by a user and used by root acts as that user;
#  - a process that is root only inside its own user namespace is no admin,
#    sees and gets only its real uid's regions, and netlink uids are those of
#    the initial user namespace.
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-timeout: 600
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh

MB=1048576
P=/sys/module/qnvram/parameters
DATA=$((0x2000000 - 65536))		# the pool's data area, bytes
QUOTA=$((DATA * 12 / 100))		# the default byte quota
A=5000					# two unprivileged uids
B=5001

# fill UID SIZE FIRST: allocate regions FIRST, FIRST+1... of SIZE bytes as
# UID until one fails; prints "N ERRNO" (regions made, errno name of the
# failure)
fill() {
	local n=0 m=$3 out
	while out=$(as_uid "$1" qnvtest alloc "$1" $m "$2" $m 2>&1); do
		n=$((n + 1))
		m=$((m + 1))
		[ $n -gt 300 ] && break
	done
	echo "$n $(echo "$out" | sed -n 's/.*(\(E[A-Z]*\)).*/\1/p')"
}

check_ok load_with_defaults qnvram_load
check_eq default_limits "0 12 24" "$(cat $P/uid_quota) $(cat $P/uid_quota_pct) $(cat $P/uid_regions)"
check_ok modinfo_documents_quota_pct sh -c 'strings /mobio/qnvram.ko | grep -q "^parm=uid_quota_pct:.*(default 12"'

# --- exhaustion: the byte quota --------------------------------------------------
check_eq uid_a_stops_at_byte_quota "$((QUOTA / MB)) EDQUOT" "$(fill $A $MB 0x100)"
check_ok uid_a_small_region_within_quota_ok as_uid $A qnvtest alloc $A 0x1ff 4096 1
check_ge pool_keeps_the_rest_free "$((DATA - QUOTA))" "$(qnvram_stat free_bytes)"
check_eq uid_b_gets_its_whole_quota "$((QUOTA / MB)) EDQUOT" "$(fill $B $MB 0x100)"
log "after two uids at their quota: free $(qnvram_stat free_bytes) of $DATA bytes, $(qnvram_stat regions_resident) regions"

# --- exhaustion: the region cap ------------------------------------------------
# uid B: 3 regions of 1 MiB now; 4 KiB ones up to the cap of 24
check_eq uid_b_stops_at_region_cap "$((24 - QUOTA / MB)) EDQUOT" "$(fill $B 4096 0x200)"
check_eq uid_b_holds_24_regions 24 "$(mobioctl qnvram list | grep -c "^uid $B ")"
check_ok root_can_raise_region_cap sh -c "echo 30 >$P/uid_regions"
check_ok uid_b_after_raise as_uid $B qnvtest alloc $B 0x2ff 4096 1
C=4004
check_ok uid_c_over_default_quota_edquot as_uid $C qnvtest expect-errno EDQUOT alloc $C 0x300 $((5 * MB)) 1
check_ok root_can_set_byte_quota sh -c "echo $((8 * MB)) >$P/uid_quota"
check_ok uid_c_after_byte_quota as_uid $C qnvtest alloc $C 0x300 $((5 * MB)) 1
check_ok user_cannot_raise_limits sh -c "! qnvtest setuid $A sh -c 'echo 0 >$P/uid_quota' 2>/dev/null"
echo 0 >$P/uid_quota
echo 24 >$P/uid_regions
# the last two made: the free space is one range again, at the end
qnvtest free $C 0x300 >/dev/null
qnvtest free $B 0x2ff >/dev/null

# --- an allocation over the quota changes nothing ---------------------------------
# root is not limited: it fills the pool with an idle region, then flushes
fr=$(qnvram_stat free_bytes)
check_ok root_not_limited_by_quota qnvtest alloc 0 0x1 $((fr - 512 * 1024)) 11
check_ok root_flush_works mobioctl qnvram flush
s0=$(qnvram_stat swap_outs)
check_ok over_quota_alloc_is_edquot as_uid $A qnvtest expect-errno EDQUOT alloc $A 0x1fe $MB 1
check_eq over_quota_alloc_keeps_image_current 1 "$(qnvram_stat img_current)"
check_eq over_quota_alloc_evicts_nobody "$s0" "$(qnvram_stat swap_outs)"
# within its quota a uid may still swap out idle regions (docs: what remains)
check_ok uid_a_frees_one as_uid $A qnvtest free $A 0x100
check_ok root_takes_the_space qnvtest alloc 0 0x2 $MB 12
check_ok uid_a_within_quota_may_swap_out as_uid $A qnvtest alloc $A 0x100 $MB 3
check_ge within_quota_alloc_swapped_out $((s0 + 1)) "$(qnvram_stat swap_outs)"
log "the allocation within quota swapped out $(($(qnvram_stat swap_outs) - s0)) idle region(s)"
qnvtest free 0 0x1 >/dev/null
qnvtest free 0 0x2 >/dev/null

# --- FLUSH needs CAP_SYS_ADMIN ---------------------------------------------------
check_eq caps_helper_has_net_admin_only 0000000000001000 \
	"$(qnvtest caps 4002 net_admin cat /proc/self/status | sed -n 's/^CapEff:[[:space:]]*//p')"
f0=$(qnvram_stat flushes)
out=$(as_uid 4002 mobioctl qnvram flush 2>&1)
check_eq flush_as_user_eperm 1 "$(echo "$out" | grep -c 'Operation not permitted (flush needs CAP_SYS_ADMIN)')"
out=$(qnvtest caps 4002 net_admin mobioctl qnvram flush 2>&1)
check_eq flush_with_only_net_admin_eperm 1 "$(echo "$out" | grep -c 'Operation not permitted')"
check_eq refused_flushes_wrote_nothing "$f0" "$(qnvram_stat flushes)"
check_ok flush_with_only_sys_admin_works qnvtest caps 4002 sys_admin mobioctl qnvram flush
check_ok flush_as_root_works mobioctl qnvram flush
check_eq two_flushes_counted "$((f0 + 2))" "$(qnvram_stat flushes)"

# --- identity from the socket and the file, not the task -----------------------
qnvtest alloc 0 0x77 8192 1 >/dev/null
as_uid $A qnvtest alloc $A 0x77 4096 2 >/dev/null
qnvstress sock-identity $A 0x77 >/tmp/si.out 2>&1
qnvram_relay /tmp/si.out

# --- a user namespace: root inside, uid 4003 outside ----------------------------
[ -e /proc/sys/kernel/unprivileged_userns_clone ] && echo 1 >/proc/sys/kernel/unprivileged_userns_clone
U=4003
check_eq userns_maps_root_to_real_uid "0 $U" \
	"$(as_uid $U unshare -r sh -c 'echo "$(id -u) $(cat /proc/self/uid_map | tr -s " " | cut -d" " -f3)"')"
check_ok userns_root_allocates_as_itself as_uid $U unshare -r qnvtest alloc 0 0x88 4096 8
check_eq region_owned_by_real_uid 1 "$(mobioctl qnvram list | grep -c "^uid $U magic 0x88 ")"
check_ok userns_unmapped_uid_is_einval as_uid $U unshare -r qnvtest expect-errno EINVAL alloc $U 0x89 4096 9
as_uid $U unshare -r mobioctl qnvram list >/tmp/ns.list 2>&1
log "list inside the user namespace: $(tr '\n' ';' </tmp/ns.list)"
check_eq userns_list_uids_are_initial_ns "1 0" \
	"$(grep -c "^uid $U magic 0x88 " /tmp/ns.list) $(grep -vc "^uid $U " /tmp/ns.list)"
check_ok userns_list_shows_no_offsets sh -c '! grep -q offset /tmp/ns.list'
check_ok userns_show_own_region_by_real_uid sh -c \
	"qnvtest setuid $U unshare -r mobioctl qnvram show $U 0x88 | grep -q '^uid $U magic 0x88 size 4096'"
out=$(as_uid $U unshare -r mobioctl qnvram show 0 0x77 2>&1)
check_eq userns_root_cannot_show_roots_region 1 "$(echo "$out" | grep -c 'Operation not permitted (region of another uid)')"
out=$(as_uid $U unshare -r mobioctl qnvram free 0 0x77 2>&1)
check_eq userns_root_cannot_free_roots_region 1 "$(echo "$out" | grep -c 'Operation not permitted')"
check_ok roots_region_still_there qnvtest verify 0 0x77 1
out=$(as_uid $U unshare -r mobioctl qnvram flush 2>&1)
check_eq userns_root_cannot_flush 1 "$(echo "$out" | grep -c 'Operation not permitted')"
check_ok userns_root_frees_its_own as_uid $U unshare -r mobioctl qnvram free $U 0x88

# The pool outlives rmmod: empty it for the next part.
mobioctl qnvram list | sed -n 's/^uid \([0-9]*\) magic \(0x[0-9a-f]*\) .*/\1 \2/p' |
	while read -r u m; do qnvtest free "$u" "$m" >/dev/null; done
check_eq pool_emptied 0 "$(mobioctl qnvram list | grep -c '^uid ')"
rmmod qnvram

# --- wear: swap traffic one uid causes is budgeted ------------------------------
# Root maps all but 2.5 MiB of the data area (never a victim); uid A's two
# 1.5 MiB regions do not fit together, so retrieving them in turn swaps one
# out and the other in, forever without a budget. With 8 MiB an hour, A's
# binds stop with ENOSPC before 8 MiB have moved; root is not limited.
check_ok reload_with_swap_budget qnvram_load uid_swap_mib_per_hour=8
check_eq swap_budget_param 8 "$(cat $P/uid_swap_mib_per_hour)"
qnvtest hold 0 0x500 $((DATA - 5 * MB / 2)) 5 >/tmp/wear-hold.out 2>&1 &
wh=$!
i=0
while ! grep -q ready /tmp/wear-hold.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
check_ok root_maps_most_of_the_pool grep -q ready /tmp/wear-hold.out
check_ok wear_a_first_region as_uid $A qnvtest alloc $A 0x600 $((3 * MB / 2)) 1
check_ok wear_a_second_region_swaps_first_out as_uid $A qnvtest alloc $A 0x601 $((3 * MB / 2)) 2
n=0
err=
while [ $n -lt 20 ]; do
	if ! out=$(as_uid $A qnvtest verify $A $((0x600 + n % 2)) $((1 + n % 2)) 2>&1); then
		err=$(echo "$out" | sed -n 's/.*(\(E[A-Z]*\)).*/\1/p')
		break
	fi
	n=$((n + 1))
done
moved=$(( $(qnvram_stat swap_bytes) ))
log "wear: uid A retrieved $n times in turn, then $err; swap_bytes $moved, swap_ins $(qnvram_stat swap_ins), refusals $(qnvram_stat swap_budget_refusals)"
check_eq wear_loop_stops_with_enospc ENOSPC "$err"
check_ge wear_loop_ran_until_budget 2 "$n"
check_ge wear_loop_swapped_out_regions $((3 * MB)) "$moved"
check_ok wear_swap_written_within_budget test "$moved" -le $((8 * MB))
check_ge wear_refusal_counted 1 "$(qnvram_stat swap_budget_refusals)"
# the budget is per uid: B's allocation, which swaps A's idle region out,
# is charged to B and works, while A stays over its own
check_ok wear_other_uid_has_its_own_budget as_uid $B qnvtest alloc $B 0x602 $((2 * MB)) 3
check_ok wear_a_still_over_budget as_uid $A qnvtest expect-errno ENOSPC verify $A $((0x600 + n % 2)) $((1 + n % 2))
check_ok wear_root_not_limited qnvtest verify $A $((0x600 + n % 2)) $((1 + n % 2))
check_ok wear_budget_off_again sh -c "echo 0 >$P/uid_swap_mib_per_hour"
check_ok wear_a_retrieves_without_budget as_uid $A qnvtest verify $A $((0x601 - n % 2)) $((2 - n % 2))
# what the budget stops: without it every retrieve in turn swaps 1.5 MiB out
b0=$(qnvram_stat swap_bytes)
for k in 0 1 2 3 4 5; do
	as_uid $A qnvtest verify $A $((0x600 + k % 2)) $((1 + k % 2)) >/dev/null || break
done
check_ge wear_unbudgeted_loop_keeps_writing $((b0 + 6 * 3 * MB / 2)) "$(qnvram_stat swap_bytes)"
kill $wh
wait $wh 2>/dev/null
qnvtest free $A 0x600 >/dev/null
qnvtest free $A 0x601 >/dev/null
qnvtest free $B 0x602 >/dev/null
qnvtest free 0 0x500 >/dev/null
rmmod qnvram
check_eq dmesg_clean "" "$(dmesg | grep -E 'BUG|WARNING|Oops|general protection' | head -n 3)"
finish
