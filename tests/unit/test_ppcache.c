// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Host tests of the ppcache VFS (sqlite-ppcache/ppcache.c) over
 * fake_qnvram.c: regions are files in a scratch directory, so a SIGKILLed
 * child leaves them exactly as an app kill leaves qNVRAM.
 *
 * QNVRAM_TEST_SEED=<n> replays the randomized tests with another seed;
 * PPCACHE_CRASH_RUNS=<n> sets the number of SIGKILL runs (default 200).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fake_qnvram.h"
#include "qnvram.h"
#include "ppcache.h"

static char tdir[256];		/* this test's scratch directory */
static char qdir[300];		/* its fake qNVRAM */
static char dbpath[320];	/* its database */
static unsigned int seed;
static char last_log[1024];	/* the last sqlite3_log() message */
static char all_log[8192];	/* every message since the test began */

/* SQLite's log, from any thread (threads_keep_the_database_consistent). */
static void log_cb(void *arg, int rc, const char *msg)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

	(void)arg;
	(void)rc;
	pthread_mutex_lock(&mu);
	snprintf(last_log, sizeof(last_log), "%s", msg);
	if (strlen(all_log) + strlen(msg) + 2 < sizeof(all_log)) {
		strcat(all_log, msg);
		strcat(all_log, "\n");
	}
	pthread_mutex_unlock(&mu);
}

static int rm_cb(const char *p, const struct stat *s, int f, struct FTW *w)
{
	(void)s;
	(void)f;
	(void)w;
	return remove(p);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tdir, sizeof(tdir), "/tmp/ppcache-test.XXXXXX");
	if (!mkdtemp(tdir))
		return -1;
	snprintf(qdir, sizeof(qdir), "%s/qnvram", tdir);
	snprintf(dbpath, sizeof(dbpath), "%s/x.db", tdir);
	if (mkdir(qdir, 0700) < 0)
		return -1;
	setenv("QNVRAM_FAKE_DIR", qdir, 1);
	unsetenv("QNVRAM_FAKE_SHADOW");
	unsetenv("QNVRAM_FAKE_MAX_BYTES");
	last_log[0] = 0;
	all_log[0] = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(tdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* --- Helpers ------------------------------------------------------------- */

/*
 * "file:<dbpath>?vfs=ppcache&<params>", in a buffer of the calling thread:
 * thr_main's threads build theirs while others open (a shared buffer once
 * gave one of them a torn URI, a new empty database, "no such table").
 */
static const char *uri(const char *params)
{
	static __thread char buf[512];

	snprintf(buf, sizeof(buf), "file:%s?vfs=ppcache%s%s", dbpath,
		 params && *params ? "&" : "", params ? params : "");
	return buf;
}

static int open_rc(const char *u, sqlite3 **db)
{
	int rc = sqlite3_open_v2(u, db, SQLITE_OPEN_READWRITE |
				 SQLITE_OPEN_CREATE | SQLITE_OPEN_URI, NULL);

	if (rc == SQLITE_OK)
		sqlite3_busy_timeout(*db, 0);
	return rc;
}

static sqlite3 *open_db(const char *params)
{
	sqlite3 *db = NULL;
	int rc = open_rc(uri(params), &db);

	if (rc != SQLITE_OK)
		fail_msg("open %s: rc %d (%s), log: %s", uri(params), rc,
			 db ? sqlite3_errmsg(db) : "-", last_log);
	return db;
}

static void exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &err);

	if (rc != SQLITE_OK)
		fail_msg("%s: rc %d: %s (log: %s)", sql, rc,
			 err ? err : "-", last_log);
	sqlite3_free(err);
}

static int exec_rc(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL);
}

static long long q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("prepare %s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The first column of the first row, copied into a static buffer. */
static const char *q_text(sqlite3 *db, const char *sql)
{
	static char buf[2048];
	sqlite3_stmt *st;
	int rc;

	buf[0] = 0;
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK)
		fail_msg("prepare %s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, sizeof(buf), "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return buf;
}

/* A counter of PRAGMA ppcache_stats. */
static long long stat_of(sqlite3 *db, const char *name)
{
	const char *s = q_text(db, "PRAGMA ppcache_stats");
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "%s ", name);
	for (p = s; (p = strstr(p, key)); p++)
		if (p == s || p[-1] == ' ')
			return strtoll(p + strlen(key), NULL, 0);
	fail_msg("no %s in ppcache_stats: %s", name, s);
	return -1;
}

static void assert_integrity(sqlite3 *db)
{
	const char *r = q_text(db, "PRAGMA integrity_check");

	if (strcmp(r, "ok") != 0)
		fail_msg("integrity_check: %s", r);
}

static int file_exists(const char *sfx)
{
	char p[400];

	snprintf(p, sizeof(p), "%s%s", dbpath, sfx);
	return access(p, F_OK) == 0;
}

static long long file_size(void)
{
	struct stat st;

	return stat(dbpath, &st) == 0 ? (long long)st.st_size : -1;
}

/* Copy file @from to @to (created or truncated). Return 0 or -1. */
static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out, rc = 0;

	if (in < 0)
		return -1;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -1;
	close(in);
	close(out);
	return n < 0 ? -1 : rc;
}

/* 1 if files @a and @b hold the same bytes, else 0. */
static int same_bytes(const char *a, const char *b)
{
	char x[4096], y[4096];
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	size_t na, nb;
	int same = fa && fb;

	while (same) {
		na = fread(x, 1, sizeof(x), fa);
		nb = fread(y, 1, sizeof(y), fb);
		same = na == nb && !memcmp(x, y, na);
		if (!na)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/*
 * A plain (unix VFS) connection to a copy of the database file with the
 * fence taken off: what the file itself holds, whatever qNVRAM holds.
 */
static sqlite3 *open_unfenced_copy(void)
{
	static const unsigned char v1[2] = { 1, 1 }, zero[8];
	char copy[400];
	sqlite3 *db = NULL;
	int fd;

	snprintf(copy, sizeof(copy), "%s/unfenced.db", tdir);
	assert_int_equal(copy_file(dbpath, copy), 0);
	fd = open(copy, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, v1, 2, 18), 2);
	assert_int_equal(pwrite(fd, zero, 8, 72), 8);
	close(fd);
	assert_int_equal(sqlite3_open_v2(copy, &db, SQLITE_OPEN_READONLY,
					 "unix"), SQLITE_OK);
	return db;
}

/* Header byte @i of the database file. */
static int file_byte(int i)
{
	unsigned char b = 0;
	int fd = open(dbpath, O_RDONLY);

	if (fd < 0 || pread(fd, &b, 1, i) != 1)
		b = 0;
	if (fd >= 0)
		close(fd);
	return b;
}

/*
 * In a child, open @u and run @sql, then die by SIGKILL: committed pages
 * are left in qNVRAM (threshold=-1 keeps them all there).
 */
static void kill_after(const char *u, const char *sql)
{
	pid_t pid;
	int status;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *c = NULL;

		if (open_rc(u, &c) != SQLITE_OK ||
		    sqlite3_exec(c, sql, NULL, NULL, NULL))
			_exit(2);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
}

/* SQL that makes table t with rows 1..@n, one transaction each. */
static const char *rows_sql(int from, int n)
{
	static char buf[8192];
	size_t len = 0;
	int i;

	buf[0] = 0;
	if (from == 1)
		len = (size_t)snprintf(buf, sizeof(buf),
				       "CREATE TABLE t(a INTEGER PRIMARY KEY, "
				       "b TEXT);");
	for (i = from; i < from + n && len < sizeof(buf) - 100; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len,
					"INSERT INTO t VALUES(%d, hex(randomblob"
					"(300)));", i);
	return buf;
}

/* --- Commit, rollback, savepoints ----------------------------------------- */

static void commit_reads_back_after_reopen(void **state)
{
	sqlite3 *db;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
	exec(db, "INSERT INTO t VALUES(1, 'one'), (2, 'two')");
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 2);
	assert_int_equal(stat_of(db, "commits"), 2);
	assert_false(file_exists("-journal"));
	sqlite3_close(db);
	assert_int_equal(fake_qnvram_count(), 0);	/* freed at close */

	db = open_db(NULL);
	assert_string_equal(q_text(db, "SELECT b FROM t WHERE a=2"), "two");
	assert_integrity(db);
	sqlite3_close(db);
}

static void rollback_drops_pending_pages(void **state)
{
	sqlite3 *db;

	(void)state;
	db = open_db("threshold=-1");
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)");
	exec(db, "INSERT INTO t VALUES(1, randomblob(100))");
	/* a tiny cache spills pages into pending slots before ROLLBACK */
	exec(db, "PRAGMA cache_size=5");
	exec(db, "BEGIN");
	exec(db, "WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i+1 FROM n "
		 "WHERE i<400) INSERT INTO t SELECT i, randomblob(1500) FROM n");
	assert_true(stat_of(db, "pending") > 0);
	exec(db, "ROLLBACK");
	assert_int_equal(stat_of(db, "pending"), 0);
	assert_int_equal(stat_of(db, "rollbacks"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 1);
	assert_integrity(db);
	sqlite3_close(db);

	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 1);
	assert_integrity(db);
	sqlite3_close(db);
}

static void savepoint_and_statement_rollback(void **state)
{
	sqlite3 *db;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT UNIQUE)");
	exec(db, "PRAGMA cache_size=5");
	exec(db, "BEGIN");
	exec(db, "INSERT INTO t VALUES(1, 'a')");
	exec(db, "SAVEPOINT s1");
	exec(db, "WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT i+1 FROM n "
		 "WHERE i<300) INSERT INTO t SELECT i, hex(randomblob(400)) "
		 "FROM n");
	exec(db, "ROLLBACK TO s1");
	exec(db, "INSERT INTO t VALUES(2, 'b')");
	exec(db, "RELEASE s1");
	/* a statement that fails half way is rolled back alone */
	assert_int_equal(exec_rc(db, "INSERT INTO t VALUES(3, 'c'), (4, 'a')"),
			 SQLITE_CONSTRAINT);
	exec(db, "COMMIT");
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 2);
	assert_string_equal(q_text(db, "SELECT group_concat(b) FROM t"), "a,b");
	assert_integrity(db);
	sqlite3_close(db);

	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 2);
	sqlite3_close(db);
}

static void cache_spill_transaction_commits(void **state)
{
	sqlite3 *db;

	(void)state;
	db = open_db("threshold=5");
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)");
	exec(db, "PRAGMA cache_size=8");
	exec(db, "BEGIN");
	exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n "
		 "WHERE i<2000) INSERT INTO t SELECT i, randomblob(700) FROM n");
	exec(db, "UPDATE t SET b = randomblob(300) WHERE a % 3 = 0");
	exec(db, "COMMIT");
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 2000);
	assert_int_equal(q_int(db, "SELECT sum(length(b)) FROM t"),
			 666LL * 300 + 1334LL * 700);
	assert_integrity(db);
	sqlite3_close(db);

	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 2000);
	assert_integrity(db);
	sqlite3_close(db);
}

/* --- The commit point in every mode --------------------------------------- */

static void every_synchronous_setting_commits_at_phasetwo(void **state)
{
	static const char *const modes[] = { "OFF", "NORMAL", "FULL", "EXTRA" };
	sqlite3 *db;
	size_t m;
	int i;

	(void)state;
	db = open_db("threshold=-1");
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
	for (m = 0; m < 4; m++) {
		char sql[128];
		long long c0, s0;

		snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s", modes[m]);
		exec(db, sql);
		c0 = stat_of(db, "commits");
		s0 = stat_of(db, "fsyncs_saved");
		for (i = 0; i < 5; i++) {
			exec(db, "INSERT INTO t(b) VALUES('x')");
			/* committed: nothing pending between transactions */
			assert_int_equal(stat_of(db, "pending"), 0);
		}
		if (stat_of(db, "commits") != c0 + 5)
			fail_msg("synchronous=%s: %lld commits for 5 "
				 "transactions", modes[m],
				 stat_of(db, "commits") - c0);
		if (m == 0)
			assert_int_equal(stat_of(db, "fsyncs_saved"), s0);
		else if (stat_of(db, "fsyncs_saved") < s0 + 5)
			fail_msg("synchronous=%s saved %lld fsyncs in 5 "
				 "commits", modes[m],
				 stat_of(db, "fsyncs_saved") - s0);
	}
	/* threshold -1: the file was never written after the first commit */
	assert_int_equal(stat_of(db, "flushes"), 0);
	sqlite3_close(db);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 20);
	sqlite3_close(db);
}

static void every_journal_mode_commits_and_rolls_back(void **state)
{
	static const char *const modes[] = {
		"delete", "truncate", "persist", "memory", "off",
	};
	sqlite3 *db;
	size_t m;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
	for (m = 0; m < 5; m++) {
		char sql[128];
		long long c0 = stat_of(db, "commits");
		long long n0 = q_int(db, "SELECT count(*) FROM t");

		snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s", modes[m]);
		assert_string_equal(q_text(db, sql), modes[m]);
		exec(db, "INSERT INTO t(b) VALUES('x')");
		exec(db, "BEGIN; INSERT INTO t(b) VALUES('y'); "
			 "INSERT INTO t(b) VALUES('z'); COMMIT");
		assert_int_equal(stat_of(db, "commits"), c0 + 2);
		if (m != 4) {	/* journal_mode=OFF cannot roll back */
			exec(db, "BEGIN; DELETE FROM t; ROLLBACK");
			assert_int_equal(q_int(db, "SELECT count(*) FROM t"),
					 n0 + 3);
		}
		assert_false(file_exists("-journal"));
		assert_integrity(db);
	}
	sqlite3_close(db);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 15);
	sqlite3_close(db);
}

static void wal_is_refused_however_it_is_asked_for(void **state)
{
	char aux[400], sql[600];
	sqlite3 *db, *plain = NULL;
	unsigned char h[20];
	FILE *f;

	(void)state;
	snprintf(aux, sizeof(aux), "%s/aux.db", tdir);
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(a)");
	assert_int_not_equal(exec_rc(db, "PRAGMA journal_mode=WAL"), SQLITE_OK);
	if (!strstr(sqlite3_errmsg(db), "WAL is not supported"))
		fail_msg("no clear error: %s", sqlite3_errmsg(db));
	/* the back door: exclusive locking, then an ATTACHed one */
	snprintf(sql, sizeof(sql), "ATTACH 'file:%s?vfs=ppcache' AS aux", aux);
	exec(db, sql);
	exec(db, "CREATE TABLE aux.u(a)");
	exec(db, "PRAGMA locking_mode=EXCLUSIVE");
	assert_int_not_equal(exec_rc(db, "PRAGMA aux.journal_mode=WAL"),
			     SQLITE_OK);
	assert_int_not_equal(exec_rc(db, "PRAGMA journal_mode=WAL"), SQLITE_OK);
	exec(db, "INSERT INTO t VALUES(1); INSERT INTO aux.u VALUES(2)");
	assert_string_equal(q_text(db, "PRAGMA aux.journal_mode"), "delete");
	assert_false(file_exists("-wal"));
	assert_int_not_equal(access("aux.db-wal", F_OK), 0);
	sqlite3_close(db);
	snprintf(sql, sizeof(sql), "%s-wal", aux);
	assert_int_not_equal(access(sql, F_OK), 0);

	/* a plain database in WAL beside an attached ppcache one */
	snprintf(sql, sizeof(sql), "%s/plain.db", tdir);
	assert_int_equal(sqlite3_open_v2(sql, &plain, SQLITE_OPEN_READWRITE |
					 SQLITE_OPEN_CREATE, "unix"), SQLITE_OK);
	snprintf(sql, sizeof(sql), "ATTACH 'file:%s?vfs=ppcache' AS aux; "
		 "PRAGMA locking_mode=EXCLUSIVE", aux);
	exec(plain, sql);
	assert_int_not_equal(exec_rc(plain, "PRAGMA journal_mode=WAL; "
				     "SELECT * FROM aux.u"), SQLITE_OK);
	sqlite3_close(plain);
	snprintf(sql, sizeof(sql), "%s-wal", aux);
	assert_int_not_equal(access(sql, F_OK), 0);

	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 1);
	assert_integrity(db);
	sqlite3_close(db);
	f = fopen(dbpath, "rb");
	assert_non_null(f);
	assert_int_equal(fread(h, 1, sizeof(h), f), sizeof(h));
	fclose(f);
	assert_int_equal(h[18], 1);	/* file format: rollback journal */
	assert_int_equal(h[19], 1);
}

/* --- LazyFlush ------------------------------------------------------------ */

static void run_commits(sqlite3 *db, int n)
{
	int i;

	for (i = 0; i < n; i++)
		exec(db, "INSERT INTO t(b) VALUES(hex(randomblob(50)))");
}

static void threshold_zero_flushes_every_commit(void **state)
{
	sqlite3 *db;
	long long c0, f0;

	(void)state;
	db = open_db("threshold=0");
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
	c0 = stat_of(db, "commits");
	f0 = stat_of(db, "flushes");
	run_commits(db, 20);
	assert_int_equal(stat_of(db, "commits") - c0, 20);
	assert_int_equal(stat_of(db, "flushes") - f0, 20);
	assert_true(stat_of(db, "pages_flushed") >= 40);
	assert_int_equal(stat_of(db, "dirty"), 0);
	assert_true(stat_of(db, "fsyncs_saved") >= 20);
	sqlite3_close(db);
}

static void threshold_five_holds_up_to_five_pages(void **state)
{
	sqlite3 *db;
	long long f0;
	int i;

	(void)state;
	db = open_db(NULL);	/* default: 5 */
	assert_string_equal(q_text(db, "PRAGMA ppcache_threshold"), "5");
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
	exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n "
		 "WHERE i<2000) INSERT INTO t SELECT i, hex(randomblob(50)) "
		 "FROM n");
	f0 = stat_of(db, "flushes");
	for (i = 0; i < 60; i++) {
		char sql[128];

		/* page 1 and one leaf far from the last one */
		snprintf(sql, sizeof(sql), "UPDATE t SET b='%d' WHERE a=%d", i,
			 1 + (i * 397) % 2000);
		exec(db, sql);
		if (stat_of(db, "dirty") > 5)
			fail_msg("commit %d left %lld dirty pages", i,
				 stat_of(db, "dirty"));
	}
	/* two pages per commit, page 1 shared: a flush every 5 commits */
	if (stat_of(db, "flushes") - f0 < 8 || stat_of(db, "flushes") - f0 > 20)
		fail_msg("%lld flushes for 60 commits of 2 pages",
			 stat_of(db, "flushes") - f0);
	assert_true(stat_of(db, "fsyncs_saved") >= 60);
	assert_string_equal(q_text(db, "PRAGMA ppcache_threshold=7"), "7");
	sqlite3_close(db);
}

static void threshold_minus_one_never_writes_the_file(void **state)
{
	sqlite3 *db;
	long long sz;
	struct stat st0, st1;

	(void)state;
	db = open_db("threshold=-1");
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
	sz = file_size();
	assert_int_equal(stat(dbpath, &st0), 0);
	run_commits(db, 200);
	assert_int_equal(stat(dbpath, &st1), 0);
	assert_int_equal(stat_of(db, "flushes"), 0);
	assert_int_equal(file_size(), sz);
	assert_true(st1.st_mtim.tv_sec == st0.st_mtim.tv_sec &&
		    st1.st_mtim.tv_nsec == st0.st_mtim.tv_nsec);
	assert_true(stat_of(db, "dirty") > 5);
	/* PRAGMA ppcache_flush writes them all now */
	assert_true(atoi(q_text(db, "PRAGMA ppcache_flush")) > 5);
	assert_int_equal(stat_of(db, "dirty"), 0);
	assert_true(file_size() > sz);
	sqlite3_close(db);
}

static void writethrough_writes_the_file_without_syncing(void **state)
{
	sqlite3 *db, *plain = NULL;

	(void)state;
	db = open_db("threshold=0&writethrough=1");
	assert_string_equal(q_text(db, "PRAGMA ppcache_writethrough"), "1");
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
	run_commits(db, 50);
	/* one sync: the fence at the first commit (the file's creation) */
	assert_int_equal(stat_of(db, "syncs"), 1);
	assert_true(stat_of(db, "flushes") >= 50);
	assert_true(stat_of(db, "written") > 0);
	assert_true(stat_of(db, "fsyncs_saved") >= 50);
	/* the file alone already holds every commit (in the page cache) */
	plain = open_unfenced_copy();
	assert_int_equal(q_int(plain, "SELECT count(*) FROM t"), 50);
	sqlite3_close(plain);
	/* PRAGMA ppcache_flush syncs once and frees the written slots */
	exec(db, "PRAGMA ppcache_flush");
	assert_int_equal(stat_of(db, "syncs"), 2);
	assert_int_equal(stat_of(db, "dirty"), 0);
	assert_int_equal(stat_of(db, "written"), 0);
	assert_string_equal(q_text(db, "PRAGMA ppcache_writethrough=0"), "0");
	run_commits(db, 3);
	assert_true(stat_of(db, "syncs") >= 2);
	sqlite3_close(db);
}

/* --- Region growth and its cap -------------------------------------------- */

static void big_transaction_grows_the_region(void **state)
{
	sqlite3 *db;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)");
	assert_int_equal(stat_of(db, "capacity"), 256);
	exec(db, "PRAGMA cache_size=10");
	exec(db, "BEGIN");
	exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n "
		 "WHERE i<1500) INSERT INTO t SELECT i, randomblob(1000) FROM n");
	exec(db, "COMMIT");
	assert_true(stat_of(db, "growths") >= 1);
	assert_true(stat_of(db, "capacity") >= 512);
	assert_int_equal(fake_qnvram_count(), 1);	/* the old one is freed */
	assert_integrity(db);
	sqlite3_close(db);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 1500);
	assert_integrity(db);
	sqlite3_close(db);
}

static void transaction_past_the_cap_fails_with_full(void **state)
{
	sqlite3 *db;
	int rc;

	(void)state;
	db = open_db("max_pages=16");
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)");
	exec(db, "INSERT INTO t VALUES(1, 'keep')");
	exec(db, "PRAGMA cache_size=4");
	rc = exec_rc(db, "WITH RECURSIVE n(i) AS (SELECT 2 UNION ALL SELECT "
		     "i+1 FROM n WHERE i<200) INSERT INTO t SELECT i, "
		     "randomblob(2000) FROM n");
	assert_int_equal(rc & 0xff, SQLITE_FULL);
	if (!strstr(all_log, "max_pages"))
		fail_msg("log does not name max_pages: %s", all_log);
	/* the database is intact and small transactions still work */
	exec(db, "INSERT INTO t VALUES(2, 'small')");
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 2);
	assert_integrity(db);
	sqlite3_close(db);
}

/* --- Concurrency ---------------------------------------------------------- */

static void two_connections_share_one_region(void **state)
{
	sqlite3 *a, *b;

	(void)state;
	a = open_db("threshold=-1");
	b = open_db("threshold=-1");
	assert_int_equal(fake_qnvram_count(), 0);	/* made by a write */
	exec(a, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
	assert_int_equal(fake_qnvram_count(), 1);
	exec(a, "INSERT INTO t VALUES(1, 'from a')");
	assert_string_equal(q_text(b, "SELECT b FROM t WHERE a=1"), "from a");
	exec(b, "INSERT INTO t VALUES(2, 'from b')");
	assert_int_equal(q_int(a, "SELECT count(*) FROM t"), 2);

	/* a writer with spilled pending pages: b sees the committed state */
	exec(a, "PRAGMA cache_size=4");
	exec(a, "BEGIN IMMEDIATE");
	exec(a, "WITH RECURSIVE n(i) AS (SELECT 3 UNION ALL SELECT i+1 FROM n "
		 "WHERE i<200) INSERT INTO t SELECT i, hex(randomblob(600)) "
		 "FROM n");
	assert_true(stat_of(a, "pending") > 0);
	assert_int_equal(exec_rc(b, "INSERT INTO t VALUES(500, 'x')") & 0xff,
			 SQLITE_BUSY);
	exec(a, "ROLLBACK");
	assert_int_equal(q_int(b, "SELECT count(*) FROM t"), 2);
	exec(a, "BEGIN IMMEDIATE");
	exec(a, "WITH RECURSIVE n(i) AS (SELECT 3 UNION ALL SELECT i+1 FROM n "
		 "WHERE i<200) INSERT INTO t SELECT i, hex(randomblob(600)) "
		 "FROM n");
	exec(a, "COMMIT");
	assert_int_equal(q_int(b, "SELECT count(*) FROM t"), 200);
	assert_integrity(b);
	sqlite3_close(a);
	exec(b, "INSERT INTO t VALUES(1000, 'b alone')");
	assert_int_equal(fake_qnvram_count(), 1);
	sqlite3_close(b);
	assert_int_equal(fake_qnvram_count(), 0);
	a = open_db(NULL);
	assert_int_equal(q_int(a, "SELECT count(*) FROM t"), 201);
	sqlite3_close(a);
}

/* Run this binary as a new process (not a fork: that shares our entry). */
static int run_self(const char *mode, const char *u)
{
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", "test_ppcache", mode, u, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static pid_t start_self(const char *mode, const char *u)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", "test_ppcache", mode, u, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void second_process_shares_the_database(void **state)
{
	sqlite3 *db;
	pid_t pid;
	int status;

	(void)state;
	db = open_db("threshold=-1");
	exec(db, "CREATE TABLE t(a)");
	exec(db, "INSERT INTO t VALUES(1), (2), (3)");
	assert_true(stat_of(db, "dirty") > 0);	/* only in qNVRAM */
	/* another process reads every committed row, read-only too */
	assert_int_equal(run_self("--count", uri(NULL)), 3);
	assert_int_equal(run_self("--count-ro", uri(NULL)), 3);
	/* it waits through the busy handler while this one writes */
	exec(db, "BEGIN IMMEDIATE; INSERT INTO t VALUES(4)");
	pid = start_self("--insert", uri(NULL));
	usleep(300 * 1000);
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);	/* waiting */
	exec(db, "COMMIT");
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 5);	/* saw 4, wrote 1 */
	/* and this one sees the other's commit */
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 5);
	assert_int_equal(q_int(db, "SELECT max(a) FROM t"), 100);
	assert_integrity(db);
	sqlite3_close(db);
	assert_int_equal(fake_qnvram_count(), 0);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 5);
	sqlite3_close(db);
}

/*
 * The integer of a one-value query, or -1 with the reason in @err (if it
 * is still empty): safe off the main thread.
 */
static long long thr_int(sqlite3 *db, const char *sql, char *err, size_t len)
{
	sqlite3_stmt *st;
	long long v = -1;
	int rc;

	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	if (v < 0 && !err[0])
		snprintf(err, len, "%s: rc %d (%s): %s", sql, rc,
			 sqlite3_errstr(rc), sqlite3_errmsg(db));
	return v;
}

/* One thread of threads_keep_the_database_consistent. */
struct thr {
	int id, writer, commits, checks;
	char err[256];
};

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	unsigned int s = seed + (unsigned int)t->id;
	sqlite3 *db = NULL;
	int i;

	if (open_rc(uri("threshold=3"), &db) != SQLITE_OK) {
		snprintf(t->err, sizeof(t->err), "open failed");
		return NULL;
	}
	sqlite3_busy_timeout(db, 10000);
	for (i = 0; i < 150 && !t->err[0]; i++) {
		if (t->writer) {
			char sql[256];

			snprintf(sql, sizeof(sql), "BEGIN IMMEDIATE; UPDATE c SET "
				 "n=n+1; INSERT INTO log VALUES(%d, "
				 "randomblob(%u)); COMMIT", t->id,
				 rand_r(&s) % 2 ? 50 : 3000);
			if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
				snprintf(t->err, sizeof(t->err), "writer: %s",
					 sqlite3_errmsg(db));
				sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
				break;
			}
			t->commits++;
		} else {
			long long n, rows;

			/* one read transaction: both counts must agree */
			if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) !=
			    SQLITE_OK) {
				snprintf(t->err, sizeof(t->err), "reader: %s",
					 sqlite3_errmsg(db));
				break;
			}
			n = thr_int(db, "SELECT n FROM c", t->err,
				    sizeof(t->err));
			usleep(rand_r(&s) % 2000);
			rows = thr_int(db, "SELECT count(*) FROM log", t->err,
				       sizeof(t->err));
			if (n != rows && !t->err[0])
				snprintf(t->err, sizeof(t->err), "reader saw n=%lld "
					 "but %lld rows in one transaction", n,
					 rows);
			sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
			t->checks++;
		}
	}
	sqlite3_close(db);
	return NULL;
}

static void threads_keep_the_database_consistent(void **state)
{
	enum { NTHR = 6 };
	struct thr t[NTHR];
	pthread_t tid[NTHR];
	sqlite3 *db;
	int i, commits = 0;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE c(n INTEGER); INSERT INTO c VALUES(0); "
		 "CREATE TABLE log(who INTEGER, v BLOB)");
	for (i = 0; i < NTHR; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].id = i;
		t[i].writer = i % 2;
		assert_int_equal(pthread_create(&tid[i], NULL, thr_main, &t[i]),
				 0);
	}
	for (i = 0; i < NTHR; i++)
		pthread_join(tid[i], NULL);
	for (i = 0; i < NTHR; i++) {
		if (t[i].err[0])
			fail_msg("thread %d: %s (log: %s)", i, t[i].err,
				 all_log);
		commits += t[i].commits;
	}
	assert_int_equal(commits, 3 * 150);
	assert_int_equal(q_int(db, "SELECT n FROM c"), commits);
	assert_int_equal(q_int(db, "SELECT count(*) FROM log"), commits);
	assert_integrity(db);
	sqlite3_close(db);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT n FROM c"), commits);
	sqlite3_close(db);
}

/* --- Without qNVRAM ------------------------------------------------------- */

static void no_qnvram_is_cantopen(void **state)
{
	sqlite3 *db = NULL;

	(void)state;
	unsetenv("QNVRAM_FAKE_DIR");
	assert_int_equal(open_rc(uri(NULL), &db), SQLITE_CANTOPEN);
	sqlite3_close(db);
	if (!strstr(all_log, "/dev/qnvram") || !strstr(all_log, "qnvram.ko") ||
	    !strstr(all_log, "fallback"))
		fail_msg("log does not say why: %s", all_log);
	assert_false(file_exists(""));		/* nothing left behind */
}

static void fallback_wal_works_without_qnvram(void **state)
{
	sqlite3 *db;

	(void)state;
	unsetenv("QNVRAM_FAKE_DIR");
	db = open_db("fallback=wal");
	assert_string_equal(q_text(db, "PRAGMA journal_mode"), "wal");
	assert_string_equal(q_text(db, "PRAGMA ppcache_stats"),
			    "mode fallback-wal");
	exec(db, "CREATE TABLE t(a)");
	exec(db, "INSERT INTO t VALUES(1), (2)");
	assert_true(file_exists("-wal"));
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 2);
	sqlite3_close(db);
	/* qNVRAM is back: the cleanly closed WAL database opens through
	 * ppcache again, in rollback mode */
	setenv("QNVRAM_FAKE_DIR", qdir, 1);
	db = open_db(NULL);
	assert_string_equal(q_text(db, "PRAGMA journal_mode"), "delete");
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 2);
	exec(db, "INSERT INTO t VALUES(3)");
	assert_integrity(db);
	sqlite3_close(db);
}

/* --- Crashes -------------------------------------------------------------- */

/* What the writer child reported through the pipe. */
struct crash_log {
	int *m;		/* rows of transaction k, 0 if never started */
	char *state;	/* 'B' started, 'C' committed, 'R' rolled back */
	int nk;
	int last;	/* highest k started */
};

static void crash_log_grow(struct crash_log *l, int k)
{
	if (k < l->nk)
		return;
	l->m = realloc(l->m, (size_t)(k + 1024) * sizeof(*l->m));
	l->state = realloc(l->state, (size_t)(k + 1024));
	memset(l->m + l->nk, 0, (size_t)(k + 1024 - l->nk) * sizeof(*l->m));
	memset(l->state + l->nk, 0, (size_t)(k + 1024 - l->nk));
	l->nk = k + 1024;
}

static void crash_log_line(struct crash_log *l, const char *line)
{
	int k, m;

	if (sscanf(line, "B %d %d", &k, &m) == 2) {
		crash_log_grow(l, k);
		l->m[k] = m;
		l->state[k] = 'B';
		if (k > l->last)
			l->last = k;
	} else if (sscanf(line, "C %d", &k) == 1) {
		l->state[k] = 'C';
	} else if (sscanf(line, "R %d", &k) == 1) {
		l->state[k] = 'R';
	}
}

static void wr(int fd, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(fd, buf, (size_t)n) != n)
		_exit(3);
}

/* The writer: numbered transactions until killed. */
static void crash_child(int fd, unsigned int s, int shadow)
{
	static const char *const th[] = { "0", "1", "5", "-1" };
	static const char *const sy[] = { "OFF", "NORMAL", "FULL", "EXTRA" };
	static const char *const jm[] = { "DELETE", "TRUNCATE", "PERSIST",
					  "MEMORY" };
	char params[64], sql[256];
	sqlite3 *db = NULL;
	int k;

	if (shadow)
		setenv("QNVRAM_FAKE_SHADOW", "1", 1);
	snprintf(params, sizeof(params), "threshold=%s&writethrough=%d",
		 th[rand_r(&s) % 4], rand_r(&s) % 2);
	if (open_rc(uri(params), &db) != SQLITE_OK)
		_exit(2);
	snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s; PRAGMA "
		 "journal_mode=%s; PRAGMA cache_size=%d", sy[rand_r(&s) % 4],
		 jm[rand_r(&s) % 4], rand_r(&s) % 2 ? 6 : 2000);
	if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		_exit(2);
	k = (int)q_int(db, "SELECT last FROM meta") + 1;
	wr(fd, "S\n");
	for (;; k++) {
		int m = 1 + rand_r(&s) % 12, i, big = rand_r(&s) % 4 == 0;
		int rb = rand_r(&s) % 10 == 0;

		wr(fd, "B %d %d\n", k, m);
		if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL))
			_exit(4);
		for (i = 0; i < m; i++) {
			snprintf(sql, sizeof(sql), "INSERT INTO t VALUES(%d, "
				 "%d, randomblob(%d))", k, i, big ? 3000 : 40);
			if (sqlite3_exec(db, sql, NULL, NULL, NULL))
				_exit(4);
		}
		snprintf(sql, sizeof(sql), "UPDATE t SET v=randomblob(60) WHERE "
			 "k=%d; UPDATE meta SET last=%d", k - 7, k);
		if (sqlite3_exec(db, sql, NULL, NULL, NULL))
			_exit(4);
		if (rb) {
			if (sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL))
				_exit(4);
			wr(fd, "R %d\n", k);
			continue;
		}
		if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL))
			_exit(4);
		wr(fd, "C %d\n", k);
	}
}

/* Read lines from @fd into @l until @want lines or EOF; -1 on timeout. */
static int crash_read(int fd, struct crash_log *l, int want, int timeout_ms)
{
	static char buf[1 << 16];
	static size_t have;
	int lines = 0;

	for (;;) {
		char *nl;

		while ((nl = memchr(buf, '\n', have))) {
			*nl = 0;
			crash_log_line(l, buf);
			lines++;
			memmove(buf, nl + 1, have - (size_t)(nl + 1 - buf));
			have -= (size_t)(nl + 1 - buf);
			if (want > 0 && lines >= want)
				return lines;
		}
		{
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			ssize_t n;

			if (poll(&pfd, 1, timeout_ms) <= 0)
				return -1;
			n = read(fd, buf + have, sizeof(buf) - have);
			if (n <= 0) {
				have = 0;
				return lines;
			}
			have += (size_t)n;
		}
	}
}

/* Check the database after a crash against all the children's reports. */
static void crash_verify(sqlite3 *db, struct crash_log *l, int run)
{
	sqlite3_stmt *st;
	char *seen = calloc((size_t)l->nk, 1);
	int maxk = 0, k;

	assert_non_null(seen);
	if (strcmp(q_text(db, "PRAGMA integrity_check"), "ok") != 0)
		fail_msg("run %d: integrity_check: %s", run,
			 q_text(db, "PRAGMA integrity_check"));
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT k, count(*) FROM t "
					    "GROUP BY k", -1, &st, NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		k = sqlite3_column_int(st, 0);
		if (k <= 0 || k >= l->nk || !l->state[k])
			fail_msg("run %d: rows of transaction %d, never "
				 "started", run, k);
		if (l->state[k] == 'R')
			fail_msg("run %d: rows of rolled back transaction %d",
				 run, k);
		if (sqlite3_column_int(st, 1) != l->m[k])
			fail_msg("run %d: transaction %d has %d of its %d "
				 "rows", run, k, sqlite3_column_int(st, 1),
				 l->m[k]);
		seen[k] = 1;
		if (k > maxk)
			maxk = k;
	}
	sqlite3_finalize(st);
	for (k = 1; k < l->nk; k++) {
		if (l->state[k] == 'C' && !seen[k])
			fail_msg("run %d: committed transaction %d is lost",
				 run, k);
		/* present now: committed for good, whatever the child said */
		if (seen[k])
			l->state[k] = 'C';
		else if (l->state[k] == 'B')
			l->state[k] = 'R';
	}
	if (q_int(db, "SELECT last FROM meta") < maxk)
		fail_msg("run %d: meta.last %lld behind transaction %d", run,
			 q_int(db, "SELECT last FROM meta"), maxk);
	free(seen);
}

static void sigkill_at_random_points_loses_no_commit(void **state)
{
	const char *e = getenv("PPCACHE_CRASH_RUNS");
	int runs = e ? atoi(e) : 200, run, recoveries = 0, reboots = 0;
	struct crash_log l = { 0 };
	unsigned int s = seed;
	sqlite3 *db;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(k INTEGER, i INTEGER, v BLOB); "
		 "CREATE INDEX tk ON t(k); CREATE TABLE meta(last INTEGER); "
		 "INSERT INTO meta VALUES(0)");
	sqlite3_close(db);
	crash_log_grow(&l, 1);

	for (run = 0; run < runs; run++) {
		int pfd[2], status, shadow = rand_r(&s) % 3 == 0;
		unsigned int cs = rand_r(&s);
		pid_t pid;

		assert_int_equal(pipe(pfd), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			close(pfd[0]);
			crash_child(pfd[1], cs, shadow);
			_exit(0);
		}
		close(pfd[1]);
		if (crash_read(pfd[0], &l, 1 + rand_r(&s) % 40, 20000) < 0)
			fail_msg("run %d: the writer did not start", run);
		usleep(rand_r(&s) % 3000);
		kill(pid, SIGKILL);
		crash_read(pfd[0], &l, 0, 20000);
		close(pfd[0]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFSIGNALED(status))
			fail_msg("run %d: the writer exited (status %d), log: "
				 "%s", run, status, last_log);
		if (shadow) {
			/* and a warm reboot drops unpersisted cache lines */
			fake_qnvram_warm_reboot((unsigned int)rand_r(&s) % 101,
						cs);
			reboots++;
		}
		db = open_db(NULL);
		recoveries += (int)stat_of(db, "recoveries");
		crash_verify(db, &l, run);
		sqlite3_close(db);
		assert_int_equal(fake_qnvram_count(), 0);
	}
	print_message("crash runs %d (of which %d warm reboots), recoveries "
		      "%d, transactions %d\n", runs, reboots, recoveries,
		      l.last);
	assert_true(recoveries > runs / 10);
	free(l.m);
	free(l.state);
}

static void recovery_replays_committed_pages(void **state)
{
	sqlite3 *db;
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *c = NULL;

		if (open_rc(uri("threshold=-1"), &c) != SQLITE_OK ||
		    sqlite3_exec(c, "CREATE TABLE t(a); INSERT INTO t VALUES(1);"
				 "INSERT INTO t VALUES(2)", NULL, NULL, NULL))
			_exit(2);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(fake_qnvram_count(), 1);
	assert_true(file_size() < 4096 * 2);	/* nothing was flushed */
	db = open_db(NULL);
	assert_int_equal(stat_of(db, "recoveries"), 1);
	assert_int_equal(q_int(db, "SELECT sum(a) FROM t"), 3);
	assert_integrity(db);
	sqlite3_close(db);
	assert_true(file_size() >= 4096 * 2);	/* replayed into the file */
	assert_int_equal(fake_qnvram_count(), 0);
}

static void stock_hot_journal_is_rolled_back(void **state)
{
	sqlite3 *db;
	pid_t pid;
	int status;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b BLOB)");
	exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n "
		 "WHERE i<300) INSERT INTO t SELECT i, randomblob(500) FROM n");
	sqlite3_close(db);

	/* stock SQLite dies with a spilled transaction and a hot journal */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *c = NULL;

		if (sqlite3_open_v2(dbpath, &c, SQLITE_OPEN_READWRITE, "unix") ||
		    sqlite3_exec(c, "PRAGMA cache_size=4; BEGIN; DELETE FROM t "
				 "WHERE a > 10; UPDATE t SET b=NULL",
				 NULL, NULL, NULL))
			_exit(2);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_true(file_exists("-journal"));

	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 300);
	assert_int_equal(q_int(db, "SELECT count(b) FROM t"), 300);
	assert_integrity(db);
	assert_false(file_exists("-journal"));
	exec(db, "INSERT INTO t VALUES(1000, 'after')");
	sqlite3_close(db);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 301);
	sqlite3_close(db);
}

static void region_of_a_replaced_file_is_dropped(void **state)
{
	sqlite3 *db;
	pid_t pid;
	int status;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *c = NULL;

		if (open_rc(uri("threshold=-1"), &c) != SQLITE_OK ||
		    sqlite3_exec(c, "CREATE TABLE old(a); INSERT INTO old "
				 "VALUES(1)", NULL, NULL, NULL))
			_exit(2);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(fake_qnvram_count(), 1);
	/* the app deletes its database and makes a new one */
	assert_int_equal(unlink(dbpath), 0);
	usleep(20000);
	db = NULL;
	assert_int_equal(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE |
					 SQLITE_OPEN_CREATE, "unix"), SQLITE_OK);
	exec(db, "CREATE TABLE fresh(a)");
	sqlite3_close(db);

	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE "
			       "name='fresh'"), 1);
	assert_int_equal(q_int(db, "SELECT count(*) FROM sqlite_master WHERE "
			       "name='old'"), 0);
	assert_int_equal(stat_of(db, "recoveries"), 0);
	assert_integrity(db);
	sqlite3_close(db);
}

/* --- Page sizes, VACUUM --------------------------------------------------- */

static void vacuum_to_another_page_size(void **state)
{
	sqlite3 *db;

	(void)state;
	db = open_db("threshold=-1");
	exec(db, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
	exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n "
		 "WHERE i<500) INSERT INTO t SELECT i, hex(randomblob(100)) "
		 "FROM n");
	exec(db, "PRAGMA page_size=8192");
	exec(db, "VACUUM");
	assert_int_equal(q_int(db, "PRAGMA page_size"), 8192);
	exec(db, "PRAGMA page_size=1024");
	exec(db, "VACUUM");
	assert_int_equal(q_int(db, "PRAGMA page_size"), 1024);
	exec(db, "DELETE FROM t WHERE a > 100");
	exec(db, "VACUUM");
	assert_integrity(db);
	sqlite3_close(db);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "PRAGMA page_size"), 1024);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 100);
	assert_integrity(db);
	sqlite3_close(db);
	db = NULL;
	assert_int_equal(sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READWRITE,
					 "unix"), SQLITE_OK);
	assert_integrity(db);
	sqlite3_close(db);
}

/* --- The stock sqlite3 shell ---------------------------------------------- */

/* --- File identity, other programs, other processes ---------------------- */

static void region_follows_the_file_through_link_and_rename(void **state)
{
	char link_path[400], new_path[400], u[600];
	sqlite3 *db;

	(void)state;
	snprintf(link_path, sizeof(link_path), "%s/link.db", tdir);
	snprintf(new_path, sizeof(new_path), "%s/renamed.db", tdir);
	kill_after(uri("threshold=-1"), rows_sql(1, 20));
	assert_int_equal(fake_qnvram_count(), 1);
	/* a hard link is the same file: the same region */
	assert_int_equal(link(dbpath, link_path), 0);
	snprintf(u, sizeof(u), "file:%s?vfs=ppcache&threshold=-1", link_path);
	assert_int_equal(open_rc(u, &db), SQLITE_OK);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 20);
	assert_integrity(db);
	exec(db, rows_sql(21, 5));
	sqlite3_close(db);
	assert_int_equal(fake_qnvram_count(), 0);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 25);
	sqlite3_close(db);

	/* a rename too, after another crash */
	kill_after(uri("threshold=-1"), rows_sql(26, 5));
	assert_int_equal(rename(dbpath, new_path), 0);
	unlink(link_path);
	snprintf(u, sizeof(u), "file:%s?vfs=ppcache", new_path);
	assert_int_equal(open_rc(u, &db), SQLITE_OK);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 30);
	assert_integrity(db);
	sqlite3_close(db);
	assert_int_equal(fake_qnvram_count(), 0);
}

static void two_names_of_one_file_in_one_process_share_the_journal(void **state)
{
	char link_path[400], jrnl[420], u[600];
	sqlite3 *a, *b;
	pid_t pid;
	int status;

	(void)state;
	snprintf(link_path, sizeof(link_path), "%s/link.db", tdir);
	snprintf(jrnl, sizeof(jrnl), "%s-journal", link_path);
	snprintf(u, sizeof(u), "file:%s?vfs=ppcache&threshold=-1", link_path);
	a = open_db("threshold=-1");
	exec(a, rows_sql(1, 10));
	assert_int_equal(link(dbpath, link_path), 0);
	assert_int_equal(open_rc(u, &b), SQLITE_OK);
	/* a transaction through the second name journals in memory */
	exec(b, "BEGIN; INSERT INTO t VALUES(11, 'via the link')");
	assert_false(access(jrnl, F_OK) == 0);
	exec(b, "COMMIT");
	assert_int_equal(q_int(a, "SELECT count(*) FROM t"), 11);
	sqlite3_close(b);
	sqlite3_close(a);

	/* a crash inside a transaction through the second name ... */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *c = NULL, *d = NULL;

		if (open_rc(uri("threshold=-1"), &c) != SQLITE_OK ||
		    open_rc(u, &d) != SQLITE_OK ||
		    sqlite3_exec(d, "PRAGMA cache_size=4; BEGIN; UPDATE t SET "
				 "b = hex(randomblob(900))", NULL, NULL,
				 NULL) ||
		    access(jrnl, F_OK) == 0)
			_exit(2);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	/* ... leaves no hot journal behind to roll back later commits */
	assert_false(access(jrnl, F_OK) == 0);
	a = open_db("threshold=-1");
	exec(a, rows_sql(12, 3));
	sqlite3_close(a);
	assert_int_equal(open_rc(u, &b), SQLITE_OK);
	assert_int_equal(q_int(b, "SELECT count(*) FROM t"), 14);
	assert_string_equal(q_text(b, "SELECT b FROM t WHERE a=11"),
			    "via the link");
	assert_integrity(b);
	sqlite3_close(b);
}

static void stock_sqlite_cannot_read_or_overwrite_pages_in_qnvram(void **state)
{
	sqlite3 *db, *plain = NULL;
	long long before;

	(void)state;
	kill_after(uri("threshold=-1"), rows_sql(1, 10));
	assert_int_equal(file_byte(19), 0x50);		/* fenced */
	before = file_size();
	assert_int_equal(sqlite3_open_v2(dbpath, &plain, SQLITE_OPEN_READWRITE,
					 "unix"), SQLITE_OK);
	assert_int_equal(exec_rc(plain, "SELECT count(*) FROM t"),
			 SQLITE_NOTADB);
	assert_int_equal(exec_rc(plain, "CREATE TABLE stock(a)"),
			 SQLITE_NOTADB);
	sqlite3_close(plain);
	assert_int_equal(file_size(), before);

	/* the same beside a live ppcache connection */
	db = open_db("threshold=-1");
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 10);
	exec(db, rows_sql(11, 3));
	plain = NULL;
	assert_int_equal(sqlite3_open_v2(dbpath, &plain, SQLITE_OPEN_READONLY,
					 "unix"), SQLITE_OK);
	assert_int_equal(exec_rc(plain, "SELECT count(*) FROM t"),
			 SQLITE_NOTADB);
	sqlite3_close(plain);
	sqlite3_close(db);
	/* closed cleanly: a plain SQLite file with everything */
	assert_int_equal(file_byte(19), 1);
	plain = NULL;
	assert_int_equal(sqlite3_open_v2(dbpath, &plain, SQLITE_OPEN_READWRITE,
					 "unix"), SQLITE_OK);
	assert_int_equal(q_int(plain, "SELECT count(*) FROM t"), 13);
	exec(plain, "INSERT INTO t VALUES(100, 'stock')");
	sqlite3_close(plain);
	/* and stock SQLite's write is there when ppcache opens it again */
	db = open_db(NULL);
	assert_string_equal(q_text(db, "SELECT b FROM t WHERE a=100"), "stock");
	assert_integrity(db);
	sqlite3_close(db);
}

/* Become @uid in a child (root only); returns in the child. */
static void become(uid_t uid)
{
	if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
		_exit(3);
}

static void another_uid_uses_the_owners_region_or_is_refused(void **state)
{
	sqlite3 *db;
	pid_t pid;
	int status;

	(void)state;
	if (geteuid() != 0)
		skip();
	chmod(tdir, 0777);
	chmod(qdir, 0777);
	/* the app (uid 4242) crashes with pages in its region */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		become(4242);
		kill_after(uri("threshold=-1"), rows_sql(1, 8));
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* root (maintenance) opens it: the owner's region, every row */
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 8);
	if (stat_of(db, "uid") != 4242)
		fail_msg("region uid %lld, expected the owner's 4242",
			 stat_of(db, "uid"));
	exec(db, rows_sql(9, 2));
	sqlite3_close(db);
	/* the app again: sees root's rows, leaves pages in qNVRAM again */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		become(4242);
		kill_after(uri("threshold=-1"), rows_sql(11, 2));
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* a third uid cannot reach that region: refused, nothing touched */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *c = NULL;
		int rc;

		become(4343);
		rc = sqlite3_open_v2(uri(NULL), &c, SQLITE_OPEN_READONLY |
				     SQLITE_OPEN_URI, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(c, "SELECT count(*) FROM t", NULL,
					  NULL, NULL);
		_exit(rc == SQLITE_CANTOPEN && strstr(all_log, "owner") ? 0 :
		      10 + (rc & 0xff));
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("uid 4343: expected SQLITE_CANTOPEN naming the owner, "
			 "exit %d", WEXITSTATUS(status));
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 12);
	assert_integrity(db);
	sqlite3_close(db);
}

static sqlite3 *open_ro(void)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(uri(NULL), &db, SQLITE_OPEN_READONLY |
			    SQLITE_OPEN_URI, NULL) != SQLITE_OK)
		fail_msg("read-only open: %s (log: %s)",
			 db ? sqlite3_errmsg(db) : "-", last_log);
	return db;
}

static void read_only_connection_closing_last_cleans_up(void **state)
{
	char moved[400], before[400], u[600];
	sqlite3 *rw, *ro, *other;
	pid_t pid;
	int status;

	(void)state;
	rw = open_db("threshold=-1");
	exec(rw, rows_sql(1, 10));
	ro = open_ro();
	assert_int_equal(q_int(ro, "SELECT count(*) FROM t"), 10);
	sqlite3_close(rw);
	assert_int_equal(file_byte(19), 0x50);		/* ro still open */
	assert_int_equal(fake_qnvram_count(), 1);
	sqlite3_close(ro);
	/* the read-only close flushed, took the fence off, freed the region */
	assert_int_equal(file_byte(19), 1);
	assert_int_equal(fake_qnvram_count(), 0);
	ro = NULL;
	assert_int_equal(sqlite3_open_v2(dbpath, &ro, SQLITE_OPEN_READONLY,
					 "unix"), SQLITE_OK);
	assert_int_equal(q_int(ro, "SELECT count(*) FROM t"), 10);
	sqlite3_close(ro);

	/* the name now leads to another file: the close writes neither */
	rw = open_db("threshold=-1");
	exec(rw, rows_sql(11, 5));
	ro = open_ro();
	sqlite3_close(rw);
	snprintf(moved, sizeof(moved), "%s/moved.db", tdir);
	snprintf(before, sizeof(before), "%s/before.db", tdir);
	assert_int_equal(rename(dbpath, moved), 0);
	other = NULL;
	assert_int_equal(sqlite3_open_v2(dbpath, &other, SQLITE_OPEN_READWRITE |
					 SQLITE_OPEN_CREATE, "unix"), SQLITE_OK);
	exec(other, "CREATE TABLE o(x); INSERT INTO o VALUES(1)");
	sqlite3_close(other);
	assert_int_equal(copy_file(dbpath, before), 0);
	all_log[0] = 0;
	sqlite3_close(ro);
	if (!strstr(all_log, "until a read-write close"))
		fail_msg("expected the read-only close to leave it, log: %s",
			 all_log);
	assert_int_equal(same_bytes(dbpath, before), 1);
	assert_int_equal(fake_qnvram_count(), 1);
	snprintf(u, sizeof(u), "file:%s?vfs=ppcache", moved);
	assert_int_equal(open_rc(u, &rw), SQLITE_OK);
	assert_int_equal(q_int(rw, "SELECT count(*) FROM t"), 15);
	assert_integrity(rw);
	sqlite3_close(rw);
	assert_int_equal(fake_qnvram_count(), 0);
	assert_int_equal(rename(moved, dbpath), 0);

	/* a reader that may not write the file leaves it to the next writer */
	if (geteuid() != 0)
		return;
	chmod(tdir, 0777);
	chmod(qdir, 0777);
	assert_int_equal(chown(dbpath, 4242, 4242), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		become(4242);
		rw = open_db("threshold=-1");
		exec(rw, rows_sql(16, 5));
		if (chmod(dbpath, 0444))
			_exit(4);
		ro = open_ro();
		sqlite3_close(rw);
		last_log[0] = 0;
		sqlite3_close(ro);
		_exit(file_byte(19) == 0x50 && fake_qnvram_count() == 1 &&
		      strstr(last_log, "until a read-write close") ? 0 : 5);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(chmod(dbpath, 0644), 0);
	rw = open_db(NULL);
	assert_int_equal(q_int(rw, "SELECT count(*) FROM t"), 20);
	sqlite3_close(rw);
	assert_int_equal(file_byte(19), 1);
	assert_int_equal(fake_qnvram_count(), 0);
}

static void unlink_and_recreate_while_open_keeps_both(void **state)
{
	sqlite3 *a, *b;

	(void)state;
	a = open_db("threshold=-1");
	exec(a, rows_sql(1, 10));
	assert_int_equal(unlink(dbpath), 0);
	b = open_db("threshold=-1");
	exec(b, "CREATE TABLE other(x); INSERT INTO other VALUES(7)");
	assert_int_equal(fake_qnvram_count(), 2);	/* one per file */
	/* the first connection still reads its file and its region; it may
	 * not write, as with stock SQLite (SQLITE_READONLY_DBMOVED) */
	assert_int_equal(q_int(a, "SELECT count(*) FROM t"), 10);
	assert_int_equal(exec_rc(a, rows_sql(11, 2)), SQLITE_READONLY);
	assert_int_equal(sqlite3_extended_errcode(a), SQLITE_READONLY_DBMOVED);
	assert_int_equal(q_int(a, "SELECT count(*) FROM t"), 10);
	assert_integrity(a);
	sqlite3_close(a);
	assert_int_equal(q_int(b, "SELECT x FROM other"), 7);
	assert_integrity(b);
	sqlite3_close(b);
	assert_int_equal(fake_qnvram_count(), 0);
	b = open_db(NULL);
	assert_int_equal(q_int(b, "SELECT count(*) FROM sqlite_master WHERE "
			       "name='t'"), 0);
	assert_int_equal(q_int(b, "SELECT x FROM other"), 7);
	sqlite3_close(b);
}

/* Commit about @kib KiB of blobs into table u in one transaction. */
static void big_commit(sqlite3 *db, int kib)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
		 "SELECT i+1 FROM n WHERE i<%d) INSERT INTO u SELECT "
		 "randomblob(1000) FROM n", kib);
	exec(db, sql);
}

static void an_idle_process_on_an_old_copy_does_not_block_growth(void **state)
{
	char held[400], rel[400];
	sqlite3 *db;
	pid_t pid;
	int status;

	(void)state;
	snprintf(held, sizeof(held), "%s.held", dbpath);
	snprintf(rel, sizeof(rel), "%s.release", dbpath);
	db = open_db("threshold=-1");
	exec(db, rows_sql(1, 10));
	exec(db, "CREATE TABLE u(b BLOB); PRAGMA cache_size=10");
	pid = start_self("--hold", uri("threshold=-1"));
	while (access(held, F_OK) != 0)
		usleep(10000);
	/* two growths while the idle process maps the first copy */
	big_commit(db, 1200);
	big_commit(db, 1200);
	assert_true(stat_of(db, "growths") >= 2);
	exec(db, rows_sql(11, 5));
	assert_int_equal(close(open(rel, O_WRONLY | O_CREAT, 0644)), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 15);	/* it followed */
	/* a growth after it let go uses the names it held */
	big_commit(db, 4500);
	assert_true(stat_of(db, "growths") >= 3);
	assert_int_equal(fake_qnvram_count(), 1);	/* copies freed */
	assert_integrity(db);
	sqlite3_close(db);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 15);
	assert_int_equal(q_int(db, "SELECT count(*) FROM u"), 6900);
	sqlite3_close(db);
}

/* ppcache.c's crash points: SIGKILL at the step $PPC_KILL_AT names. */
void ppc_test_hook(const char *step)
{
	const char *at = getenv("PPC_KILL_AT");

	if (at && !strcmp(at, step))
		raise(SIGKILL);
}

static void a_kill_at_each_step_of_a_growth_beside_a_reader(void **state)
{
	static const char *const steps[] = {
		"grow-built", "grow-sealed", "grow-moved" };
	sqlite3 *db;
	size_t i;
	pid_t pid;
	int status;

	(void)state;
	db = open_db("threshold=-1");
	exec(db, rows_sql(1, 20));
	exec(db, "CREATE TABLE u(b BLOB); PRAGMA cache_size=10");
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		/* this process maps the region, idle; a writer grows it */
		assert_int_equal(q_int(db, "SELECT count(*) FROM t"),
				 20 + 5 * (long long)i);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			sqlite3 *c = NULL;

			setenv("PPC_KILL_AT", steps[i], 1);
			if (open_rc(uri("threshold=-1"), &c) != SQLITE_OK)
				_exit(2);
			exec(c, "PRAGMA cache_size=10");
			big_commit(c, 1200 * (int)(i + 1));
			_exit(3);	/* no growth: the test is wrong */
		}
		assert_int_equal(waitpid(pid, &status, 0), pid);
		if (!WIFSIGNALED(status))
			fail_msg("%s: the writer exited %d, not killed",
				 steps[i], WEXITSTATUS(status));
		/* the reader sees every acknowledged row, none of the rest */
		assert_int_equal(q_int(db, "SELECT count(*) FROM t"),
				 20 + 5 * (long long)i);
		assert_int_equal(q_int(db, "SELECT count(*) FROM u"), 0);
		assert_integrity(db);
		/* and writes on, through a growth of its own */
		exec(db, rows_sql(21 + 5 * (int)i, 5));
		exec(db, "BEGIN");
		big_commit(db, 1200 * (int)(i + 1));
		exec(db, "DELETE FROM u; COMMIT");
	}
	sqlite3_close(db);
	assert_int_equal(fake_qnvram_count(), 0);	/* nothing left over */
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 35);
	assert_int_equal(q_int(db, "SELECT count(*) FROM u"), 0);
	assert_integrity(db);
	sqlite3_close(db);
}

static void growth_frees_the_scrap_a_crash_left(void **state)
{
	int round;

	(void)state;
	for (round = 0; round < 2; round++) {
		sqlite3 *db = open_db("threshold=-1&max_pages=4096");
		uint32_t name, alt;
		unsigned char *scrap;
		size_t len;

		exec(db, round ? "INSERT INTO t VALUES(1000 + 1, 'x')" :
		     "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
		name = (uint32_t)strtoul(strstr(q_text(db, "PRAGMA "
						"ppcache_stats"), "region ") + 7,
					 NULL, 16);
		alt = name ^ 0x80000000U;
		/* a growth killed after the allocation (round 0: blank) or
		 * while building it (round 1: a PPCBUILD header) */
		scrap = qnvm_alloc(getuid(), alt, 1 << 20, 0, &len);
		assert_non_null(scrap);
		if (round)
			memcpy(scrap, "PPCBUILD", 8);
		qnvm_unmap(scrap);
		exec(db, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 "
			 "FROM n WHERE i<400) INSERT OR REPLACE INTO t "
			 "SELECT i, hex(randomblob(2000)) FROM n");
		assert_int_equal(stat_of(db, "growths") >= 1, 1);
		assert_int_equal(fake_qnvram_count(), 1);
		assert_integrity(db);
		sqlite3_close(db);
	}
}

static void a_restored_older_copy_is_refused_and_left_alone(void **state)
{
	char backup[400], copy[400], u[600];
	sqlite3 *db = NULL;
	char *out = NULL;
	pid_t pid;
	int status;

	(void)state;
	snprintf(backup, sizeof(backup), "%s/backup.db", tdir);
	snprintf(copy, sizeof(copy), "%s/copy.db", tdir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		sqlite3 *c = NULL;

		if (open_rc(uri("threshold=-1"), &c) != SQLITE_OK ||
		    sqlite3_exec(c, rows_sql(1, 5), NULL, NULL, NULL) ||
		    sqlite3_exec(c, "PRAGMA ppcache_flush", NULL, NULL, NULL) ||
		    copy_file(dbpath, backup) ||
		    sqlite3_exec(c, rows_sql(6, 5), NULL, NULL, NULL) ||
		    sqlite3_exec(c, "PRAGMA ppcache_flush", NULL, NULL, NULL) ||
		    sqlite3_exec(c, rows_sql(11, 5), NULL, NULL, NULL))
			_exit(2);
		raise(SIGKILL);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));

	/* a copy of the file is not the file: refused */
	assert_int_equal(copy_file(dbpath, copy), 0);
	snprintf(u, sizeof(u), "file:%s?vfs=ppcache", copy);
	assert_int_equal(open_rc(u, &db), SQLITE_CANTOPEN);
	sqlite3_close(db);
	if (!strstr(last_log, "not there"))
		fail_msg("log: %s", last_log);

	/* an older copy restored in place: refused, nothing changed */
	assert_int_equal(copy_file(backup, dbpath), 0);
	db = NULL;
	assert_int_equal(open_rc(uri(NULL), &db), SQLITE_CANTOPEN);
	sqlite3_close(db);
	if (!strstr(last_log, "change counter"))
		fail_msg("log: %s", last_log);
	assert_int_equal(fake_qnvram_count(), 1);
	assert_int_equal(sqlite3_ppcache_show(dbpath, &out), SQLITE_OK);
	if (!strstr(out, "verdict refused"))
		fail_msg("show: %s", out);
	sqlite3_free(out);

	/* the way out: discard the region, keep the restored file */
	assert_int_equal(sqlite3_ppcache_discard(dbpath, &out), SQLITE_OK);
	if (!strstr(out, "lost"))
		fail_msg("discard: %s", out);
	sqlite3_free(out);
	assert_int_equal(fake_qnvram_count(), 0);
	db = open_db(NULL);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 5);
	assert_integrity(db);
	sqlite3_close(db);
}

static void tool_shows_and_exports_the_committed_state(void **state)
{
	char dest[400];
	sqlite3 *plain = NULL;
	char *out = NULL;
	long long size;

	(void)state;
	snprintf(dest, sizeof(dest), "%s/export.db", tdir);
	kill_after(uri("threshold=-1"), rows_sql(1, 12));
	size = file_size();
	assert_int_equal(sqlite3_ppcache_show(dbpath, &out), SQLITE_OK);
	if (!strstr(out, "verdict ok") || !strstr(out, "file_fenced 1"))
		fail_msg("show: %s", out);
	sqlite3_free(out);
	assert_int_equal(sqlite3_ppcache_export(dbpath, dest, &out), SQLITE_OK);
	sqlite3_free(out);
	assert_int_equal(sqlite3_open_v2(dest, &plain, SQLITE_OPEN_READONLY,
					 "unix"), SQLITE_OK);
	assert_int_equal(q_int(plain, "SELECT count(*) FROM t"), 12);
	assert_integrity(plain);
	sqlite3_close(plain);
	/* neither the file nor the region changed */
	assert_int_equal(file_size(), size);
	assert_int_equal(fake_qnvram_count(), 1);
	/* an export never overwrites */
	assert_int_not_equal(sqlite3_ppcache_export(dbpath, dest, &out),
			     SQLITE_OK);
	sqlite3_free(out);
}

static void stock_connection_with_a_warm_cache_is_refused(void **state)
{
	sqlite3 *db, *plain = NULL;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(a)");
	exec(db, "INSERT INTO t VALUES(1)");
	sqlite3_close(db);			/* a plain file again */
	assert_int_equal(sqlite3_open_v2(dbpath, &plain, SQLITE_OPEN_READWRITE,
					 "unix"), SQLITE_OK);
	assert_int_equal(q_int(plain, "SELECT count(*) FROM t"), 1);
	/* ppcache commits while stock SQLite holds a warm cache */
	db = open_db("threshold=-1");
	exec(db, "INSERT INTO t VALUES(2)");
	exec(db, "INSERT INTO t VALUES(3)");
	/* the fence changes the counter SQLite checks its cache by */
	assert_int_equal(exec_rc(plain, "SELECT count(*) FROM t"),
			 SQLITE_NOTADB);
	assert_int_not_equal(exec_rc(plain, "INSERT INTO t VALUES(100)"),
			     SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(q_int(plain, "SELECT count(*) FROM t"), 3);
	assert_int_equal(q_int(plain, "SELECT count(*) FROM t WHERE a=100"), 0);
	sqlite3_close(plain);
}

static void truncated_or_extended_file_is_refused(void **state)
{
	char junk[50000], *out = NULL;
	sqlite3 *db = NULL;
	long long size;
	int fd, round;

	(void)state;
	memset(junk, 0x5a, sizeof(junk));
	for (round = 0; round < 2; round++) {
		unlink(dbpath);
		db = open_db(NULL);
		exec(db, rows_sql(1, 40));
		sqlite3_close(db);
		kill_after(uri("threshold=-1"), "UPDATE t SET b='x' WHERE a=1");
		if (round == 0) {
			assert_int_equal(truncate(dbpath, 8192), 0);
		} else {
			fd = open(dbpath, O_WRONLY | O_APPEND);
			assert_true(fd >= 0);
			assert_int_equal(write(fd, junk, sizeof(junk)),
					 (ssize_t)sizeof(junk));
			close(fd);
		}
		size = file_size();
		db = NULL;
		assert_int_equal(open_rc(uri(NULL), &db), SQLITE_CANTOPEN);
		sqlite3_close(db);
		if (!strstr(last_log, "truncated or extended"))
			fail_msg("round %d log: %s", round, last_log);
		assert_int_equal(fake_qnvram_count(), 1);	/* untouched */
		assert_int_equal(file_size(), size);
		assert_int_equal(sqlite3_ppcache_discard(dbpath, &out), SQLITE_OK);
		sqlite3_free(out);
		out = NULL;
	}
}

static void tool_refuses_a_database_open_in_this_process(void **state)
{
	sqlite3 *db;
	char *out = NULL;

	(void)state;
	db = open_db("threshold=-1");
	exec(db, rows_sql(1, 3));
	assert_int_equal(sqlite3_ppcache_discard(dbpath, &out), SQLITE_BUSY);
	if (!strstr(out, "open in this process"))
		fail_msg("discard: %s", out);
	sqlite3_free(out);
	assert_int_equal(sqlite3_ppcache_show(dbpath, &out), SQLITE_BUSY);
	sqlite3_free(out);
	assert_int_equal(q_int(db, "SELECT count(*) FROM t"), 3);
	assert_integrity(db);
	sqlite3_close(db);
}

/* A lower VFS that counts what reaches it (ppcache sits over it). */
static sqlite3_vfs count_vfs;
static int count_super_opens;

static int count_open(sqlite3_vfs *v, sqlite3_filename z, sqlite3_file *f,
		      int flags, int *out)
{
	sqlite3_vfs *u = v->pAppData;

	if (flags & SQLITE_OPEN_SUPER_JOURNAL)
		count_super_opens++;
	return u->xOpen(u, z, f, flags, out);
}

static void attached_commit_keeps_sqlites_super_journal(void **state)
{
	char u[600], sql[600], aux[400];
	sqlite3 *db = NULL;

	(void)state;
	if (!sqlite3_vfs_find("count")) {
		sqlite3_vfs *unix_vfs = sqlite3_vfs_find("unix");

		count_vfs = *unix_vfs;
		count_vfs.zName = "count";
		count_vfs.pAppData = unix_vfs;
		count_vfs.xOpen = count_open;
		assert_int_equal(sqlite3_vfs_register(&count_vfs, 0), SQLITE_OK);
	}
	assert_int_equal(sqlite3_ppcache_register_over("count", 0), SQLITE_OK);
	snprintf(aux, sizeof(aux), "%s/aux.db", tdir);
	snprintf(u, sizeof(u), "file:%s?vfs=ppcache-count", dbpath);
	assert_int_equal(open_rc(u, &db), SQLITE_OK);
	snprintf(sql, sizeof(sql), "ATTACH 'file:%s?vfs=ppcache-count' AS aux",
		 aux);
	exec(db, sql);
	exec(db, "CREATE TABLE t(a); CREATE TABLE aux.u(a)");
	/*
	 * SQLite's super-journal stays real (through the lower VFS): a
	 * rollback after a failure in the middle of the commit reads its
	 * existence to decide (a memory one made that rollback keep
	 * half-committed pages; SQLite's malloc3 test).
	 */
	count_super_opens = 0;
	exec(db, "BEGIN; INSERT INTO t VALUES(1); INSERT INTO aux.u VALUES(2);"
		 "COMMIT");
	assert_int_equal(count_super_opens, 1);
	assert_int_equal(q_int(db, "SELECT (SELECT a FROM t) + "
			       "(SELECT a FROM aux.u)"), 3);
	assert_integrity(db);
	sqlite3_close(db);
}

static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void stock_shell_loads_the_extension(void **state)
{
	char fake[400], out[400], buf[4096];
	FILE *f;
	size_t n;

	(void)state;
	if (access("/usr/bin/sqlite3", X_OK) != 0)
		skip();
	/* the extension as installed, and libqnvram.so.1 played by the fake */
	assert_int_equal(sh("make -s -C ../../sqlite-ppcache libppcache.so "
			    ">%s/make.log 2>&1", tdir), 0);
	snprintf(fake, sizeof(fake), "%s/fakelib", tdir);
	mkdir(fake, 0700);
	assert_int_equal(sh("cc -O1 -fPIC -shared -I../../libqnvram -I. "
			    "-Wl,-soname,libqnvram.so.1 "
			    "-Wl,--version-script=../../libqnvram/libqnvram.map "
			    "-o %s/libqnvram.so.1 fake_qnvram.c -lpthread", fake),
			 0);
	snprintf(out, sizeof(out), "%s/shell.out", tdir);
	assert_int_equal(sh("cd %s && env -u ASAN_OPTIONS LD_LIBRARY_PATH=%s "
			    "/usr/bin/sqlite3 >%s 2>&1 <<'EOF'\n"
			    ".load %s/../../sqlite-ppcache/libppcache\n"
			    ".open file:%s?vfs=ppcache&threshold=-1\n"
			    "CREATE TABLE t(a);\n"
			    "INSERT INTO t VALUES(42);\n"
			    "SELECT 'rows', count(*) FROM t;\n"
			    "PRAGMA ppcache_stats;\n"
			    "EOF", tdir, fake, out, getcwd(buf, sizeof(buf)),
			    dbpath), 0);
	f = fopen(out, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	if (!strstr(buf, "rows|1") || !strstr(buf, "commits 2 "))
		fail_msg("shell output: %s", buf);
	/* closed cleanly: the plain file has everything, no region is left */
	assert_int_equal(fake_qnvram_count(), 0);
	assert_int_equal(sh("test \"$(/usr/bin/sqlite3 %s 'SELECT a FROM t')\" "
			    "= 42", dbpath), 0);
}

/* test_ppcache --try-open URI: exit with the open's result code. */
static int try_open(const char *u)
{
	sqlite3 *db = NULL;
	int rc;

	if (sqlite3_ppcache_register(0) != SQLITE_OK)
		return 100;
	rc = open_rc(u, &db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL,
				  NULL, NULL);
	sqlite3_close(db);
	return rc & 0xff;
}

/* test_ppcache --count[-ro] URI: exit with count(*) of t, or 200+rc. */
static int child_count(const char *u, int ro)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st;
	int rc, n = -1;

	if (sqlite3_ppcache_register(0) != SQLITE_OK)
		return 250;
	rc = sqlite3_open_v2(u, &db, (ro ? SQLITE_OPEN_READONLY :
				      SQLITE_OPEN_READWRITE) | SQLITE_OPEN_URI,
			     NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st,
					NULL);
	if (rc == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int(st, 0);
		rc = sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return rc == SQLITE_OK && n >= 0 && n < 200 ? n : 200 + (rc & 0x3f);
}

/*
 * test_ppcache --hold URI: count t, then stay idle with the connection open
 * (and the region mapped) until <db>.release exists; count again, close,
 * exit with that count. <db>.held tells the parent it is in.
 */
static int child_hold(const char *u)
{
	char held[400], rel[400];
	sqlite3 *db = NULL;
	int fd, n;

	if (sqlite3_ppcache_register(0) != SQLITE_OK)
		return 250;
	snprintf(held, sizeof(held), "%s.held", dbpath);
	snprintf(rel, sizeof(rel), "%s.release", dbpath);
	if (sqlite3_open_v2(u, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI,
			    NULL) != SQLITE_OK)
		return 201;
	sqlite3_busy_timeout(db, 10000);
	if (q_int(db, "SELECT count(*) FROM t") < 0)
		return 202;
	fd = open(held, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return 203;
	close(fd);
	for (n = 0; access(rel, F_OK) != 0; n++) {
		if (n > 6000)
			return 206;	/* the parent failed: 60 s */
		usleep(10000);
	}
	n = (int)q_int(db, "SELECT count(*) FROM t");
	if (strcmp(q_text(db, "PRAGMA integrity_check"), "ok"))
		n = 204;
	sqlite3_close(db);
	return n >= 0 && n < 200 ? n : 205;
}

/* test_ppcache --insert URI: wait for the lock, insert 100, exit count. */
static int child_insert(const char *u)
{
	sqlite3 *db = NULL;
	int rc;

	if (sqlite3_ppcache_register(0) != SQLITE_OK)
		return 250;
	rc = sqlite3_open_v2(u, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_URI,
			     NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_busy_timeout(db, 10000);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "INSERT INTO t VALUES(100)", NULL, NULL,
				  NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK ? child_count(u, 0) : 200 + (rc & 0x3f);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(commit_reads_back_after_reopen),
		T(rollback_drops_pending_pages),
		T(savepoint_and_statement_rollback),
		T(cache_spill_transaction_commits),
		T(every_synchronous_setting_commits_at_phasetwo),
		T(every_journal_mode_commits_and_rolls_back),
		T(wal_is_refused_however_it_is_asked_for),
		T(threshold_zero_flushes_every_commit),
		T(threshold_five_holds_up_to_five_pages),
		T(threshold_minus_one_never_writes_the_file),
		T(writethrough_writes_the_file_without_syncing),
		T(big_transaction_grows_the_region),
		T(transaction_past_the_cap_fails_with_full),
		T(two_connections_share_one_region),
		T(threads_keep_the_database_consistent),
		T(second_process_shares_the_database),
		T(no_qnvram_is_cantopen),
		T(fallback_wal_works_without_qnvram),
		T(recovery_replays_committed_pages),
		T(stock_hot_journal_is_rolled_back),
		T(region_of_a_replaced_file_is_dropped),
		T(vacuum_to_another_page_size),
		T(sigkill_at_random_points_loses_no_commit),
		T(stock_shell_loads_the_extension),
		T(region_follows_the_file_through_link_and_rename),
		T(two_names_of_one_file_in_one_process_share_the_journal),
		T(stock_sqlite_cannot_read_or_overwrite_pages_in_qnvram),
		T(another_uid_uses_the_owners_region_or_is_refused),
		T(read_only_connection_closing_last_cleans_up),
		T(an_idle_process_on_an_old_copy_does_not_block_growth),
		T(unlink_and_recreate_while_open_keeps_both),
		T(growth_frees_the_scrap_a_crash_left),
		T(a_kill_at_each_step_of_a_growth_beside_a_reader),
		T(a_restored_older_copy_is_refused_and_left_alone),
		T(tool_shows_and_exports_the_committed_state),
		T(attached_commit_keeps_sqlites_super_journal),
		T(stock_connection_with_a_warm_cache_is_refused),
		T(truncated_or_extended_file_is_refused),
		T(tool_refuses_a_database_open_in_this_process),
#undef T
	};
	const char *s = getenv("QNVRAM_TEST_SEED");

	if (argc == 3 && !strcmp(argv[1], "--try-open"))
		return try_open(argv[2]);
	if (argc == 3 && !strncmp(argv[1], "--count", 7))
		return child_count(argv[2], !strcmp(argv[1], "--count-ro"));
	if (argc == 3 && !strcmp(argv[1], "--insert"))
		return child_insert(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--hold")) {
		snprintf(dbpath, sizeof(dbpath), "%s", argv[2] + 5);
		*strchr(dbpath, '?') = 0;
		return child_hold(argv[2]);
	}
	seed = s ? (unsigned int)strtoul(s, NULL, 0) : (unsigned int)time(NULL);
	print_message("QNVRAM_TEST_SEED=%u\n", seed);
	if (getenv("PPCACHE_TEST_FILTER"))	/* e.g. "threads_*" */
		cmocka_set_test_filter(getenv("PPCACHE_TEST_FILTER"));
	sqlite3_config(SQLITE_CONFIG_LOG, log_cb, NULL);
	if (sqlite3_ppcache_register(0) != SQLITE_OK)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
