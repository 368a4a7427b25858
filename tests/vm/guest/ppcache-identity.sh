#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A ppcache database's region belongs to the file, whatever name reaches it,
# and no other program sees or overwrites pages that live only in qNVRAM.
# Each round a writer (threshold -1: every commit stays in qNVRAM) is
# SIGKILLed at a random point, then:
#   bind   the database is checked through a bind mount of its directory,
#          then through its own name (a second open that way must not
#          truncate it);
#   link   through a hard link, then its own name;
#   rename after a rename, then renamed back;
#   stock  stock sqlite3 is refused ("file is not a database") for reads
#          and writes and leaves the file's bytes as they were;
#   shared a second ppcache process reads while the writer runs (every
#          read waits for the lock and sees at least what was logged);
#   none   without qnvram.ko a new database's open fails, names qnvram.ko,
#          and leaves no file behind.
# After each: integrity, every logged transaction, nothing past the one in
# flight (ppcache-crash check).
# vm-memmap: 32M$0x30000000
# vm-disk: flash 128M
# vm-disk: data 256M
# vm-kmod: ext4
# vm-bin: /sbin/mkfs.ext4 /usr/bin/sqlite3 /usr/bin/md5sum
# vm-timeout: 420
. /mobio/tests/lib.sh
. /mobio/tests/qnvram-lib.sh
. /mobio/tests/ppcache-crash-lib.sh

# pi_crash NAME: a writer that keeps everything in qNVRAM, killed -9
pi_crash() {
	pc_writer_start -1
	usleep "$(pc_rand 300000 1200000)"
	pc_writer_alive "writer_runs_until_killed_$1" || return 1
	kill -9 "$PC_WRITER"
	wait "$PC_WRITER" 2>/dev/null
	return 0
}

# pi_check NAME DB: the checker through path DB
pi_check() {
	if ppcache-crash check "$2" $PC_LOG >$PC_OUT 2>&1; then
		pass "$1"
		log "check $2: $(cat $PC_OUT)"
		return 0
	fi
	fail "$1" "$(tail -n 3 $PC_OUT | tr '\n' ' ')"
	return 1
}

pc_setup || finish

pi_crash bind || finish
mkdir -p /mnt/bind
mount --bind $PC_MNT /mnt/bind ||
	{ fail bind_mount "expected mount --bind $PC_MNT /mnt/bind to work"; finish; }
pi_check bind_mount_finds_every_logged_txn /mnt/bind/app.db
pi_check own_name_after_bind_mount_keeps_every_logged_txn $PC_DB
umount /mnt/bind

pi_crash link || finish
ln $PC_DB $PC_MNT/link.db
pi_check hard_link_finds_every_logged_txn $PC_MNT/link.db
pi_check own_name_after_hard_link_keeps_every_logged_txn $PC_DB
rm -f $PC_MNT/link.db

pi_crash rename || finish
mv $PC_DB $PC_MNT/renamed.db
pi_check rename_finds_every_logged_txn $PC_MNT/renamed.db
mv $PC_MNT/renamed.db $PC_DB

pi_crash stock || finish
before=$(md5sum $PC_DB | cut -d' ' -f1)
out=$(sqlite3 $PC_DB 'SELECT count(*) FROM tx' 2>&1)
case "$out" in
*"not a database"*) pass stock_sqlite_read_is_refused ;;
*) fail stock_sqlite_read_is_refused "expected 'file is not a database', saw: $out" ;;
esac
out=$(sqlite3 $PC_DB 'INSERT INTO meta VALUES(-1, -1)' 2>&1)
case "$out" in
*"not a database"*) pass stock_sqlite_write_is_refused ;;
*) fail stock_sqlite_write_is_refused "expected 'file is not a database', saw: $out" ;;
esac
check_eq stock_sqlite_leaves_the_file_as_it_was "$before" "$(md5sum $PC_DB | cut -d' ' -f1)"
pi_check after_stock_sqlite_every_logged_txn_is_there $PC_DB

pc_writer_start -1
usleep 300000
prev=0
ok=0
i=0
while [ $i -lt 6 ]; do
	if ppcache-crash peek $PC_DB $PC_LOG >/tmp/peek.out 2>&1; then
		last=$(sed -n 's/^peek last=\([0-9]*\).*/\1/p' /tmp/peek.out)
		[ "${last:-0}" -ge "$prev" ] && ok=$((ok + 1))
		prev=${last:-0}
	else
		log "peek: $(cat /tmp/peek.out)"
	fi
	i=$((i + 1))
done
pc_writer_alive writer_runs_beside_a_second_process || finish
kill -9 "$PC_WRITER"
wait "$PC_WRITER" 2>/dev/null
check_eq second_process_reads_6_times_beside_the_writer 6 $ok
pi_check after_two_processes_every_logged_txn_is_there $PC_DB
committed=$(pc_field committed)
check_le second_process_saw_no_more_than_was_committed "$committed" "$prev"

# a clean close leaves no region: qnvram.ko can go
pi_check before_unload_every_logged_txn_is_there $PC_DB
check_ok unload_qnvram rmmod qnvram
if ppcache-crash check $PC_MNT/new.db $PC_MNT/new.log >$PC_OUT 2>&1; then
	fail open_without_qnvram_fails "expected a refusal, saw: $(cat $PC_OUT)"
elif grep -q "qnvram.ko" $PC_OUT; then
	pass open_without_qnvram_fails_naming_qnvram_ko
else
	fail open_without_qnvram_fails_naming_qnvram_ko "$(tail -n 2 $PC_OUT | tr '\n' ' ')"
fi
if [ -e $PC_MNT/new.db ]; then
	fail open_without_qnvram_leaves_no_file "expected no $PC_MNT/new.db, saw one"
else
	pass open_without_qnvram_leaves_no_file
fi
finish
