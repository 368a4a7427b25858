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
#include "ppcache.h"

static char tdir[256];		/* this test's scratch directory */
static char qdir[300];		/* its fake qNVRAM */
static char dbpath[320];	/* its database */
static unsigned int seed;
static char last_log[1024];	/* the last sqlite3_log() message */
static char all_log[8192];	/* every message since the test began */

static void log_cb(void *arg, int rc, const char *msg)
{
	(void)arg;
	(void)rc;
	snprintf(last_log, sizeof(last_log), "%s", msg);
	if (strlen(all_log) + strlen(msg) + 2 < sizeof(all_log)) {
		strcat(all_log, msg);
		strcat(all_log, "\n");
	}
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

/* "file:<dbpath>?vfs=ppcache&<params>" */
static const char *uri(const char *params)
{
	static char buf[512];

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

static void wal_request_stays_in_rollback_mode(void **state)
{
	sqlite3 *db;
	unsigned char h[20];
	FILE *f;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(a)");
	assert_string_equal(q_text(db, "PRAGMA journal_mode=WAL"), "delete");
	exec(db, "PRAGMA journal_mode=TRUNCATE");
	exec(db, "PRAGMA locking_mode=EXCLUSIVE");
	/* exclusive mode would use a heap wal-index: answered by the VFS */
	assert_string_equal(q_text(db, "PRAGMA journal_mode=WAL"), "truncate");
	exec(db, "INSERT INTO t VALUES(1)");
	assert_false(file_exists("-wal"));
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
	assert_int_equal(stat_of(db, "syncs"), 0);
	assert_true(stat_of(db, "flushes") >= 50);
	assert_true(stat_of(db, "written") > 0);
	assert_true(stat_of(db, "fsyncs_saved") >= 50);
	/* the file alone already holds every commit (in the page cache) */
	assert_int_equal(sqlite3_open_v2(dbpath, &plain, SQLITE_OPEN_READONLY,
					 "unix"), SQLITE_OK);
	assert_int_equal(q_int(plain, "SELECT count(*) FROM t"), 50);
	sqlite3_close(plain);
	/* PRAGMA ppcache_flush syncs once and frees the written slots */
	exec(db, "PRAGMA ppcache_flush");
	assert_int_equal(stat_of(db, "syncs"), 1);
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
	assert_int_equal(fake_qnvram_count(), 1);
	exec(a, "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)");
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

static void second_process_gets_busy(void **state)
{
	sqlite3 *db;
	pid_t pid;
	int status;

	(void)state;
	db = open_db(NULL);
	exec(db, "CREATE TABLE t(a)");
	/* a new process (not a fork, which would share this one's entry) */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", "test_ppcache", "--try-open", uri(NULL),
		      (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), SQLITE_BUSY);
	sqlite3_close(db);
	/* once this process has closed it, another one may open it */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/proc/self/exe", "test_ppcache", "--try-open", uri(NULL),
		      (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), SQLITE_OK);
}

/* The integer of a one-value query, or -1: safe off the main thread. */
static long long thr_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
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
			n = thr_int(db, "SELECT n FROM c");
			usleep(rand_r(&s) % 2000);
			rows = thr_int(db, "SELECT count(*) FROM log");
			if (n != rows || n < 0)
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
	for (i = 0; i < NTHR; i++) {
		pthread_join(tid[i], NULL);
		if (t[i].err[0])
			fail_msg("thread %d: %s", i, t[i].err);
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
	if (!strstr(all_log, "/dev/qnvram") || !strstr(all_log, "fallback"))
		fail_msg("log does not say why: %s", all_log);
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
	assert_true(file_size() >= 4096 * 2);	/* replayed into the file */
	assert_int_equal(q_int(db, "SELECT sum(a) FROM t"), 3);
	assert_integrity(db);
	sqlite3_close(db);
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
		T(wal_request_stays_in_rollback_mode),
		T(threshold_zero_flushes_every_commit),
		T(threshold_five_holds_up_to_five_pages),
		T(threshold_minus_one_never_writes_the_file),
		T(writethrough_writes_the_file_without_syncing),
		T(big_transaction_grows_the_region),
		T(transaction_past_the_cap_fails_with_full),
		T(two_connections_share_one_region),
		T(threads_keep_the_database_consistent),
		T(second_process_gets_busy),
		T(no_qnvram_is_cantopen),
		T(fallback_wal_works_without_qnvram),
		T(recovery_replays_committed_pages),
		T(stock_hot_journal_is_rolled_back),
		T(region_of_a_replaced_file_is_dropped),
		T(vacuum_to_another_page_size),
		T(sigkill_at_random_points_loses_no_commit),
		T(stock_shell_loads_the_extension),
#undef T
	};
	const char *s = getenv("QNVRAM_TEST_SEED");

	if (argc == 3 && !strcmp(argv[1], "--try-open"))
		return try_open(argv[2]);
	seed = s ? (unsigned int)strtoul(s, NULL, 0) : (unsigned int)time(NULL);
	print_message("QNVRAM_TEST_SEED=%u\n", seed);
	sqlite3_config(SQLITE_CONFIG_LOG, log_cb, NULL);
	if (sqlite3_ppcache_register(0) != SQLITE_OK)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
