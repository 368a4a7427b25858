#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# mobio on a real Debian 12 system, the way a laptop user has it: the
# project's .debs installed with apt (DKMS built the modules), configured in
# the files the packages document (tests/vm/debian/setup.sh), booted by
# systemd with memmap= on the command line as GRUB would put it.
#   boot 1: everything is up without a manual step (modules-load.d, the udev
#           rule's scheduler, the device modes, a normal user's mobioctl);
#           the app (uid 1000) commits rows to a ppcache database that
#           LazyFlush never writes to the file (stock sqlite3 finds it
#           fenced), keeps it open: systemctl reboot
#   boot 2: every row is there (the warm reboot kept the pool in RAM); more
#           rows, the app keeps it open: systemctl poweroff (the reboot
#           notifier flushes the pool to the backing disk), a cold boot
#   boot 3: every row is there (the pool came back from flash); apt remove,
#           while an app still has /dev/qnvram open, unloads every module not
#           in use, says that qnvram is, and leaves nothing registered; purge
#           leaves nothing in /etc
# vm-root: debian
# vm-memmap: 32M$0x30000000
# vm-disk: backing 80M
# vm-disk: data 64M
# vm-mem: 1024
# vm-timeout: 900
. /mobio/tests/lib.sh

DB=/home/app/app.db
VFS_LIB=$(ls /usr/lib/*/sqlite3/libppcache.so 2>/dev/null | head -n 1)
ROWS=100
PKGS="mobio-dkms libqnvram1 libqnvram-dev libsqlite3-ppcache mobio-tools"

as_app() {
	runuser -u app -- "$@"
}

# one ppcache statement batch as the app: the shell opens the database
# only after the extension registered the VFS
pc_sql() {
	printf '.load %s\n.open file:%s?vfs=ppcache\n%s\n' "${VFS_LIB%.so}" "$DB" "$1" |
		as_app sqlite3 -batch 2>&1
}

# pc_writer FROM N: the app inserts rows FROM..FROM+N-1, one transaction per
# 5, with threshold=-1 (LazyFlush never writes the file), touches
# /tmp/pc-committed, and keeps the database open until it is killed
pc_writer() {
	local i=$1 end=$(($1 + $2))
	rm -f /tmp/pc-committed
	{
		echo ".load ${VFS_LIB%.so}"
		echo ".open file:$DB?vfs=ppcache&threshold=-1"
		echo "CREATE TABLE IF NOT EXISTS t(i INTEGER PRIMARY KEY, v TEXT);"
		while [ $i -lt $end ]; do
			echo "BEGIN; INSERT INTO t VALUES($i, hex(randomblob(200))); INSERT INTO t VALUES($((i + 1)), 'r$((i + 1))');"
			echo "INSERT INTO t VALUES($((i + 2)), 'r'); INSERT INTO t VALUES($((i + 3)), 'r'); INSERT INTO t VALUES($((i + 4)), 'r'); COMMIT;"
			i=$((i + 5))
		done
		echo ".system touch /tmp/pc-committed"
		sleep 100000
	} | as_app sqlite3 -batch >/tmp/pc-writer.out 2>&1 &
	i=0
	while [ ! -e /tmp/pc-committed ] && [ $i -lt 600 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	if [ -e /tmp/pc-committed ]; then
		pass "app_committed_rows_boot_$MOBIO_BOOT"
	else
		fail "app_committed_rows_boot_$MOBIO_BOOT" "no commit in 120 s: $(tail -n 3 /tmp/pc-writer.out | tr '\n' ' ')"
	fi
}

# pc_check N: a second process of the app sees N rows, ids 0..N-1, intact
pc_check() {
	local out
	out=$(pc_sql "SELECT count(*), coalesce(sum(i), -1) FROM t; PRAGMA integrity_check;" | tr '\n' ' ')
	check_eq "database_has_every_row_boot_$MOBIO_BOOT" "$1|$(($1 * ($1 - 1) / 2)) ok " "$out"
}

# The file alone is fenced, so the new rows are only in qNVRAM. (No second
# ppcache process looks before the reboot: its clean last close, with the
# writer holding no lock, would flush every page into the file.)
only_in_qnvram() {
	local out
	out=$(as_app sqlite3 "$DB" "SELECT count(*) FROM t" 2>&1)
	case "$out" in
	*"not a database"*) pass "stock_sqlite_refuses_the_fenced_file_boot_$MOBIO_BOOT" ;;
	*) fail "stock_sqlite_refuses_the_fenced_file_boot_$MOBIO_BOOT" "saw: $out" ;;
	esac
}

# apt_get remove|purge PKG...: the case apt_<action>, as a user runs it
apt_get() {
	local action=$1
	shift
	if DEBIAN_FRONTEND=noninteractive apt-get "$action" -y "$@" >/tmp/apt-$action.out 2>&1; then
		pass "apt_$action"
	else
		fail "apt_$action" "$(tail -n 5 /tmp/apt-$action.out | tr '\n' ' ')"
	fi
}

system_is_up() {
	local st
	st=$(systemctl is-system-running --wait 2>&1)
	if [ "$st" = running ]; then
		pass "systemd_running_boot_$MOBIO_BOOT"
	else
		fail "systemd_running_boot_$MOBIO_BOOT" "$st: $(systemctl --failed --no-legend --plain | tr '\n' ' ')"
	fi
}

modules_as_configured() {
	local m data
	for m in freeblock qnvram asap_prefetch; do
		if [ -d /sys/module/$m ]; then
			pass "modules_load_d_loaded_${m}_boot_$MOBIO_BOOT"
		else
			fail "modules_load_d_loaded_${m}_boot_$MOBIO_BOOT" "lsmod: $(lsmod | awk 'NR > 1 { print $1 }' | tr '\n' ' ')"
		fi
	done
	data=${DISK_data#/dev/}
	check_ok "udev_chose_smartio_for_the_tagged_disk_boot_$MOBIO_BOOT" \
		grep -q '\[smartio\]' /sys/block/$data/queue/scheduler
	check_ok "untagged_disk_keeps_its_scheduler_boot_$MOBIO_BOOT" \
		sh -c "! grep -q '\[smartio\]' /sys/block/${DISK_backing#/dev/}/queue/scheduler"
	check_dmesg "qnvram_took_the_reserved_pool_boot_$MOBIO_BOOT" \
		"qnvram: pool 33554432 bytes at reserved RAM, backing /dev/disk/by-id/virtio-mobio-backing"
}

if [ -z "$VFS_LIB" ]; then
	fail packages_installed "no /usr/lib/*/sqlite3/libppcache.so"
	finish
fi

case $MOBIO_BOOT in
1)
	system_is_up
	check_eq dkms_built_for_both_kernels 2 \
		"$(dkms status mobio 2>/dev/null | grep -c ': installed')"
	modules_as_configured
	check_eq dev_qnvram_mode 666 "$(stat -c %a /dev/qnvram 2>&1)"
	check_eq dev_freeblock_mode 666 "$(stat -c %a /dev/freeblock 2>&1)"
	check_ok normal_user_mobioctl_qnvram_stats as_app mobioctl qnvram stats
	check_ok normal_user_mobioctl_qnvram_list as_app mobioctl qnvram list
	pc_writer 0 $ROWS
	only_in_qnvram
	request_systemctl_reboot
	;;
2)
	system_is_up
	modules_as_configured
	pc_check $ROWS
	pc_writer $ROWS $ROWS
	only_in_qnvram
	request_systemctl_poweroff
	;;
3)
	system_is_up
	modules_as_configured
	check_dmesg qnvram_restored_the_pool_from_flash "qnvram: restored pool from image"
	pc_check $((2 * ROWS))
	# An app still has /dev/qnvram open: the removal must go through, unload
	# what is not in use and say what stays loaded.
	as_app sh -c 'exec 3</dev/qnvram; exec sleep 1000' &
	holder=$!
	sleep 1
	apt_get remove $PKGS
	check_eq apt_remove_unloads_the_modules_not_in_use "" \
		"$(lsmod | awk '$1 ~ /^(smartio_iosched|asap_prefetch)$/ { print $1 }' | tr '\n' ' ')"
	check_ok apt_remove_keeps_qnvram_while_an_app_has_it_open test -d /sys/module/qnvram
	check_ok apt_remove_says_qnvram_is_in_use grep -q "mobio-dkms: qnvram is in use" /tmp/apt-remove.out
	pkill -u app -x sleep
	wait $holder 2>/dev/null
	for m in qnvram freeblock; do
		[ -d /sys/module/$m ] && rmmod $m
	done
	check_eq nothing_loaded_once_the_app_is_gone "" \
		"$(lsmod | awk '$1 ~ /^(qnvram|smartio_iosched|freeblock|asap_prefetch)$/ { print $1 }' | tr '\n' ' ')"
	check_eq apt_remove_leaves_nothing_in_dkms "" \
		"$(dkms status -m mobio 2>/dev/null; ls -d /var/lib/dkms/mobio /usr/src/mobio-* 2>/dev/null)"
	check_eq apt_remove_leaves_no_ko "" "$(ls /lib/modules/*/updates/dkms/ 2>/dev/null | tr '\n' ' ')"
	check_ok apt_remove_leaves_no_dev_qnvram test ! -e /dev/qnvram
	check_ok apt_remove_leaves_the_data_disk_a_scheduler \
		sh -c "! grep -q smartio /sys/block/${DISK_data#/dev/}/queue/scheduler"
	check_ok apt_remove_keeps_the_conffiles test -e /etc/modprobe.d/mobio.conf
	# what remove left: the packages with conffiles, in dpkg's "rc" state
	rc_pkgs=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $PKGS 2>/dev/null |
		awk '$1 == "rc" { print $2 }')
	apt_get purge $rc_pkgs
	check_eq apt_purge_leaves_nothing_in_etc "" \
		"$(ls /etc/modprobe.d/mobio.conf /etc/modules-load.d/mobio.conf 2>/dev/null)"
	check_eq apt_purge_leaves_no_package "" \
		"$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $PKGS 2>/dev/null | awk '$1 != "un" && $1 != "pn" { print $2 }' | tr '\n' ' ')"
	finish
	;;
*)
	fail boots "boot $MOBIO_BOOT: the test ends at boot 3"
	finish
	;;
esac
