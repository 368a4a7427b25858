// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Differential test of the ppcache VFS: the same seeded random transactions
 * (inserts, updates, deletes, savepoints, rollbacks, statements that fail
 * half way, large rows that spill the page cache, CREATE/DROP TABLE and
 * INDEX, VACUUM, page size changes, reopening) run against stock SQLite
 * (unix VFS) and against ppcache over fake_qnvram.c; after every
 * transaction the schema and every table's rows must be equal, read both
 * by the writing connection and by a second ppcache connection of the same
 * process, and integrity_check must be ok.
 *
 * QNVRAM_TEST_SEED=<n> replays another seed; PPCACHE_DIFF_TXNS=<n> sets the
 * number of transactions (default 2000).
 */
#define _GNU_SOURCE
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fake_qnvram.h"
#include "ppcache.h"

#define NTABLES		6	/* t0..t5 */
#define MAX_ROWS	400	/* per table, kept by deleting */

static char tdir[256], qdir[300], refpath[320], pppath[320];
static unsigned int seed;

/* The three connections under comparison. */
static sqlite3 *ref;		/* stock SQLite */
static sqlite3 *pp;		/* ppcache, the writer */
static sqlite3 *pp2;		/* ppcache, a second reader in this process */

static int rm_cb(const char *p, const struct stat *s, int f, struct FTW *w)
{
	(void)s;
	(void)f;
	(void)w;
	return remove(p);
}

static unsigned int rnd(unsigned int n)
{
	return n ? (unsigned int)rand_r(&seed) % n : 0;
}

static void open_all(int threshold, int writethrough)
{
	char u[512];

	if (sqlite3_open_v2(refpath, &ref, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE, "unix") != SQLITE_OK)
		fail_msg("open %s: %s", refpath, sqlite3_errmsg(ref));
	snprintf(u, sizeof(u), "file:%s?vfs=ppcache&threshold=%d&writethrough=%d",
		 pppath, threshold, writethrough);
	if (sqlite3_open_v2(u, &pp, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_URI, NULL) != SQLITE_OK)
		fail_msg("open %s: %s", u, sqlite3_errmsg(pp));
	if (sqlite3_open_v2(u, &pp2, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI,
			    NULL) != SQLITE_OK)
		fail_msg("open %s read-only: %s", u, sqlite3_errmsg(pp2));
}

static void close_all(void)
{
	assert_int_equal(sqlite3_close(pp2), SQLITE_OK);
	assert_int_equal(sqlite3_close(pp), SQLITE_OK);
	assert_int_equal(sqlite3_close(ref), SQLITE_OK);
	pp2 = pp = ref = NULL;
}

static int setup(void **state)
{
	(void)state;
	snprintf(tdir, sizeof(tdir), "/tmp/ppcache-diff.XXXXXX");
	if (!mkdtemp(tdir))
		return -1;
	snprintf(qdir, sizeof(qdir), "%s/qnvram", tdir);
	snprintf(refpath, sizeof(refpath), "%s/ref.db", tdir);
	snprintf(pppath, sizeof(pppath), "%s/pp.db", tdir);
	if (mkdir(qdir, 0700) < 0)
		return -1;
	setenv("QNVRAM_FAKE_DIR", qdir, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	nftw(tdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

/* --- Running SQL on both sides ------------------------------------------- */

static int txn_no;		/* the transaction being run, for messages */

/* Run @sql on both databases: the result codes must agree. */
static int both(const char *fmt, ...)
{
	char *sql;
	va_list ap;
	int r1, r2;

	va_start(ap, fmt);
	sql = sqlite3_vmprintf(fmt, ap);
	va_end(ap);
	assert_non_null(sql);
	r1 = sqlite3_exec(ref, sql, NULL, NULL, NULL);
	r2 = sqlite3_exec(pp, sql, NULL, NULL, NULL);
	if (r1 != r2)
		fail_msg("txn %d: %.200s: stock rc %d (%s), ppcache rc %d (%s)",
			 txn_no, sql, r1, sqlite3_errmsg(ref), r2,
			 sqlite3_errmsg(pp));
	if ((r1 & 0xff) != SQLITE_OK && (r1 & 0xff) != SQLITE_CONSTRAINT &&
	    (r1 & 0xff) != SQLITE_ERROR)
		fail_msg("txn %d: %.200s: rc %d (%s)", txn_no, sql, r1,
			 sqlite3_errmsg(ref));
	sqlite3_free(sql);
	return r1;
}

/* FNV-1a over every row of every table and the schema. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint64_t hash_query(sqlite3 *db, const char *sql, uint64_t h,
			   long *rows)
{
	sqlite3_stmt *st;
	int i, rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("txn %d: %s: %s", txn_no, sql, sqlite3_errmsg(db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (i = 0; i < sqlite3_column_count(st); i++) {
			int t = sqlite3_column_type(st, i);

			h = fnv(h, &t, sizeof(t));
			if (t == SQLITE_INTEGER) {
				sqlite3_int64 v = sqlite3_column_int64(st, i);

				h = fnv(h, &v, sizeof(v));
			} else if (t != SQLITE_NULL) {
				const void *b = sqlite3_column_blob(st, i);

				h = fnv(h, b, (size_t)sqlite3_column_bytes(st, i));
			}
		}
		(*rows)++;
	}
	if (rc != SQLITE_DONE)
		fail_msg("txn %d: %s: rc %d %s", txn_no, sql, rc,
			 sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return h;
}

static uint64_t hash_db(sqlite3 *db, long *rows)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	sqlite3_stmt *st;
	char names[NTABLES][16];
	int n = 0, i;

	*rows = 0;
	h = hash_query(db, "SELECT type, name, tbl_name, sql FROM sqlite_schema "
		       "ORDER BY name", h, rows);
	if (sqlite3_prepare_v2(db, "SELECT name FROM sqlite_schema WHERE "
			       "type='table' ORDER BY name", -1, &st, NULL))
		fail_msg("schema: %s", sqlite3_errmsg(db));
	while (sqlite3_step(st) == SQLITE_ROW && n < NTABLES)
		snprintf(names[n++], sizeof(names[0]), "%s",
			 sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	for (i = 0; i < n; i++) {
		char sql[96];

		snprintf(sql, sizeof(sql), "SELECT rowid, * FROM %s ORDER BY "
			 "rowid", names[i]);
		h = hash_query(db, sql, h, rows);
	}
	return h;
}

static void compare(int integrity)
{
	long r1, r2, r3;
	uint64_t h1 = hash_db(ref, &r1), h2 = hash_db(pp, &r2);
	uint64_t h3 = hash_db(pp2, &r3);

	if (h1 != h2 || r1 != r2)
		fail_msg("txn %d: ppcache differs from stock SQLite (%ld vs "
			 "%ld rows)", txn_no, r2, r1);
	if (h1 != h3 || r1 != r3)
		fail_msg("txn %d: a second ppcache connection sees other "
			 "data (%ld vs %ld rows)", txn_no, r3, r1);
	if (integrity) {
		sqlite3_stmt *st;

		assert_int_equal(sqlite3_prepare_v2(pp, "PRAGMA integrity_check",
						    -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		if (strcmp((const char *)sqlite3_column_text(st, 0), "ok"))
			fail_msg("txn %d: integrity_check: %s", txn_no,
				 sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
}

/* --- The random workload -------------------------------------------------- */

static int exists[NTABLES];	/* table ti exists */
static int has_index[NTABLES];

/* A deterministic text value: @n characters, varied by the seed. */
static char *value(unsigned int n)
{
	static const char al[] = "abcdefghijklmnopqrstuvwxyz0123456789";

	return sqlite3_mprintf("printf('%%.*c', %u, '%c') || '%u'", n,
			       al[rnd(sizeof(al) - 1)], rnd(1000000));
}

static unsigned int row_len(void)
{
	switch (rnd(10)) {
	case 0:
		return 2000 + rnd(9000);	/* overflow pages */
	case 1:
	case 2:
		return 300 + rnd(1000);
	default:
		return rnd(80);
	}
}

static int pick_table(void)
{
	int i, t = (int)rnd(NTABLES);

	for (i = 0; i < NTABLES; i++, t = (t + 1) % NTABLES)
		if (exists[t])
			return t;
	return -1;
}

static void op_create_table(void)
{
	int t = (int)rnd(NTABLES);

	if (exists[t])
		return;
	both("CREATE TABLE t%d(a INTEGER PRIMARY KEY, b TEXT, c BLOB, d INT)",
	     t);
	exists[t] = 1;
	has_index[t] = 0;
}

static void op_drop_table(void)
{
	int t = pick_table();

	if (t < 0 || rnd(3))
		return;
	both("DROP TABLE t%d", t);
	exists[t] = 0;
}

static void op_index(void)
{
	int t = pick_table();

	if (t < 0)
		return;
	if (!has_index[t]) {
		/* may fail on duplicates: the same on both sides */
		if (both("CREATE %s INDEX i%d ON t%d(d)",
			 rnd(3) ? "" : "UNIQUE", t, t) == SQLITE_OK)
			has_index[t] = 1;
	} else {
		both("DROP INDEX i%d", t);
		has_index[t] = 0;
	}
}

static void op_insert(void)
{
	int t = pick_table(), n = 1 + (int)rnd(rnd(4) ? 5 : 60), i;

	if (t < 0)
		return;
	for (i = 0; i < n; i++) {
		char *v = value(row_len()), id[16] = "NULL";

		if (!rnd(3))
			snprintf(id, sizeof(id), "%u", 1 + rnd(500));
		both("INSERT OR %s INTO t%d(a, b, c, d) VALUES(%s, %s, "
		     "zeroblob(%u), %u)", rnd(4) ? "ABORT" : "REPLACE", t, id,
		     v, rnd(200), rnd(300));
		sqlite3_free(v);
	}
}

static void op_update(void)
{
	int t = pick_table();
	unsigned int lo = rnd(500);
	char *v;

	if (t < 0)
		return;
	v = value(row_len());
	both("UPDATE t%d SET b = %s, d = d + %u WHERE a BETWEEN %u AND %u", t,
	     v, rnd(3), lo, lo + rnd(40));
	sqlite3_free(v);
}

static void op_delete(void)
{
	int t = pick_table();
	unsigned int lo = rnd(500);

	if (t < 0)
		return;
	both("DELETE FROM t%d WHERE a BETWEEN %u AND %u", t, lo, lo + rnd(60));
	both("DELETE FROM t%d WHERE a IN (SELECT a FROM t%d ORDER BY a LIMIT "
	     "max(0, (SELECT count(*) FROM t%d) - %d))", t, t, t, MAX_ROWS);
}

static void op_statement(void)
{
	switch (rnd(8)) {
	case 0:
		op_create_table();
		break;
	case 1:
		op_drop_table();
		break;
	case 2:
		op_index();
		break;
	case 3:
	case 4:
		op_insert();
		break;
	case 5:
	case 6:
		op_update();
		break;
	default:
		op_delete();
		break;
	}
}

static void resync_tables(void);

/* Statements inside a transaction, maybe with savepoints. */
static void body(int depth)
{
	int n = 1 + (int)rnd(6), i;

	for (i = 0; i < n; i++) {
		if (depth < 2 && !rnd(6)) {
			both("SAVEPOINT s%d", depth);
			body(depth + 1);
			if (rnd(3))
				both("RELEASE s%d", depth);
			else {
				both("ROLLBACK TO s%d; RELEASE s%d", depth,
				     depth);
				resync_tables();
			}
		} else {
			op_statement();
		}
	}
}

/* Which tables exist, as the database says (after a rollback). */
static void resync_tables(void)
{
	sqlite3_stmt *st;
	int t;

	memset(exists, 0, sizeof(exists));
	memset(has_index, 0, sizeof(has_index));
	assert_int_equal(sqlite3_prepare_v2(ref, "SELECT type, name FROM "
					    "sqlite_schema", -1, &st, NULL),
			 SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);

		if (sscanf(name, "t%d", &t) == 1 && t >= 0 && t < NTABLES &&
		    !strcmp(type, "table"))
			exists[t] = 1;
		if (sscanf(name, "i%d", &t) == 1 && t >= 0 && t < NTABLES)
			has_index[t] = 1;
	}
	sqlite3_finalize(st);
}

static void random_transactions_match_stock_sqlite(void **state)
{
	static const int thresholds[] = { 0, 5, -1, 2, 20 };
	static const char *const jm[] = { "DELETE", "TRUNCATE", "PERSIST",
					  "MEMORY" };
	static const char *const sy[] = { "OFF", "NORMAL", "FULL" };
	const char *e = getenv("PPCACHE_DIFF_TXNS");
	int ntx = e ? atoi(e) : 2000, rollbacks = 0, vacuums = 0, reopens = 0;
	long long flushes = 0, commits = 0;

	(void)state;
	open_all(5, 0);
	for (txn_no = 0; txn_no < ntx; txn_no++) {
		unsigned int r = rnd(200);

		if (r < 2) {
			/* reopen: ppcache flushes and frees the region */
			close_all();
			assert_int_equal(fake_qnvram_count(), 0);
			open_all(thresholds[rnd(5)], (int)rnd(2));
			reopens++;
		} else if (r < 8) {
			char sql[64];

			both("PRAGMA cache_size=%d", rnd(2) ? 4 : 2000);
			both("PRAGMA journal_mode=%s", jm[rnd(4)]);
			both("PRAGMA synchronous=%s", sy[rnd(3)]);
			snprintf(sql, sizeof(sql), "PRAGMA ppcache_threshold=%d",
				 thresholds[rnd(5)]);
			assert_int_equal(sqlite3_exec(pp, sql, NULL, NULL,
						      NULL), SQLITE_OK);
			snprintf(sql, sizeof(sql), "PRAGMA ppcache_writethrough=%u",
				 rnd(2));
			assert_int_equal(sqlite3_exec(pp, sql, NULL, NULL,
						      NULL), SQLITE_OK);
		} else if (r < 12) {
			if (!rnd(4))
				both("PRAGMA page_size=%d", 1024 << rnd(4));
			both("VACUUM");
			vacuums++;
		} else if (r < 50) {
			op_statement();		/* autocommit */
		} else {
			both("BEGIN%s", rnd(2) ? "" : " IMMEDIATE");
			body(0);
			if (rnd(5)) {
				both("COMMIT");
			} else {
				both("ROLLBACK");
				rollbacks++;
				resync_tables();
			}
		}
		compare(txn_no % 10 == 0);
	}
	compare(1);
	{
		sqlite3_stmt *st;
		const char *s;

		assert_int_equal(sqlite3_prepare_v2(pp, "PRAGMA ppcache_stats",
						    -1, &st, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		s = (const char *)sqlite3_column_text(st, 0);
		if (strstr(s, "flushes "))
			flushes = atoll(strstr(s, "flushes ") + 8);
		if (strstr(s, "commits "))
			commits = atoll(strstr(s, "commits ") + 8);
		sqlite3_finalize(st);
	}
	print_message("transactions %d (rollbacks %d, VACUUMs %d, reopens %d); "
		      "since the last reopen: commits %lld, flushes %lld\n",
		      ntx, rollbacks, vacuums, reopens, commits, flushes);
	close_all();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			random_transactions_match_stock_sqlite, setup, teardown),
	};
	const char *s = getenv("QNVRAM_TEST_SEED");

	seed = s ? (unsigned int)strtoul(s, NULL, 0) : (unsigned int)time(NULL);
	print_message("QNVRAM_TEST_SEED=%u\n", seed);
	if (sqlite3_ppcache_register(0) != SQLITE_OK)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
