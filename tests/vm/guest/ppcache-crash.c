// SPDX-License-Identifier: GPL-2.0-only
/*
 * ppcache-crash: the writer and the checker of the ppcache crash tests
 * (tests/vm/guest/ppcache-crash-*.sh).
 *
 *	ppcache-crash write DB LOG [--vfs ppcache|wal] [--threshold N] [--count N]
 *			[--writers N]
 *		Runs transactions 1, 2, 3, ... against DB (continuing after the
 *		highest one already in it) until killed, or COUNT of them. After
 *		each COMMIT returns it appends "<id>\n" to LOG and fdatasync()s
 *		LOG: a logged id is one the app was told is committed. At start
 *		it logs the highest id it finds if that is not logged yet (its
 *		writer was killed between the commit and the log). With
 *		--writers N (N > 1) other processes write DB at the same time,
 *		each with its own LOG: every transaction takes the next id
 *		inside its write lock.
 *	ppcache-crash check DB LOG [--vfs ppcache|wal] [--after-flush N]
 *			[--writers N]
 *		Opens DB (ppcache recovers it) and verifies it; prints one line
 *		"ok committed=M logged=L inflight=0..N ..." and exits 0, or
 *		"FAIL <what>: expected ..., saw ..." and exits 1. With
 *		--writers N, LOG is the writers' logs merged (sort -nu) and up
 *		to N transactions may have been in flight.
 *	ppcache-crash peek DB LOG [--vfs ppcache|wal]
 *		Reads the newest committed id (meta.last) as a second process
 *		beside a running writer would, waiting for its lock; prints
 *		"peek last=M logged=L" (L: the log read before the database)
 *		and exits 0; M < L fails.
 *
 * --vfs ppcache (the default) opens file:DB?vfs=ppcache&threshold=N (LazyFlush
 * threshold, default 5); --vfs wal opens DB with the unix VFS, journal_mode=WAL,
 * synchronous=FULL (to test the harness itself on stock SQLite).
 *
 * Transaction <id> (every one is deterministic in its id, so that the checker
 * can compute the exact database that transactions 1..M leave):
 *   - inserts tx(id, payload(id)): 16-215 bytes; every 10th 3-20 KB
 *     (overflow pages); every 50th 300 KB (more dirty pages than the page
 *     cache holds: the pager spills them before the commit);
 *   - sets meta.last = id and meta.sum += id;
 *   - 1-4 operations on churn(k < CHURN_KEYS): delete, or insert-or-replace
 *     a value of 20-1500 bytes that names (id, k);
 *   - every 5th: a savepoint with junk (churn rows k >= CHURN_KEYS, meta
 *     scribbled) rolled back to before the commit;
 *   - every 7th is preceded by a whole transaction of junk (tx row id, junk
 *     churn, meta scribbled), rolled back.
 *
 * The check: PRAGMA integrity_check is "ok"; tx holds exactly ids 1..M with
 * their payloads; meta is (M, M(M+1)/2); churn is exactly what 1..M leave
 * and has no junk; M >= the last logged id L and M <= L + 1 (the one in
 * flight may be either). --after-flush N replaces M >= L by M >= N, for a
 * writer that kept committing while the power key flush took the pool's
 * image: N is the last id logged before the flush began; ids logged after
 * it may be lost with the image, and their number is reported as "lost".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>
#ifdef HAVE_PPCACHE
#include <ppcache.h>
#endif

#define CHURN_KEYS	400
#define PAGE_CACHE	64	/* pages: small, so that big transactions spill */
#define PC_STR2(x)	#x
#define PC_STR(x)	PC_STR2(x)

enum pc_exit {
	PC_OK = 0,
	PC_FAIL = 1,
	PC_USAGE = 2,
	PC_ERROR = 3,		/* could not run (open failed, no VFS) */
};

struct pc_opts {
	const char *db;
	const char *log;
	bool wal;
	int threshold;
	int64_t count;
	int64_t after_flush;
	int writers;		/* processes writing DB at once (>= 1) */
};

static sqlite3 *pc_db;

static void pc_die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(code == PC_FAIL ? "FAIL " : "ppcache-crash: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
	exit(code);
}

/* --- deterministic content ---------------------------------------------- */

static uint64_t pc_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t pc_h(int64_t id, uint64_t salt)
{
	return pc_mix(pc_mix((uint64_t)id) ^ salt);
}

static size_t pc_payload_len(int64_t id)
{
	if (id % 50 == 0)
		return 300 * 1024;
	if (id % 10 == 0)
		return 3000 + pc_h(id, 1) % 17000;
	return 16 + pc_h(id, 1) % 200;
}

/* @len bytes named by (a, b): byte i is byte i % 8 of mix(mix(a) ^ b + i / 8) */
static void pc_fill(unsigned char *buf, size_t len, uint64_t a, uint64_t b)
{
	uint64_t seed = pc_mix(a) ^ b, w = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (i % 8 == 0)
			w = pc_mix(seed + i / 8);
		buf[i] = (unsigned char)(w >> (8 * (i % 8)));
	}
}

struct pc_churn_op {
	int key;
	bool del;
	size_t len;
};

static int pc_churn_ops(int64_t id, struct pc_churn_op *ops)
{
	int n = 1 + (int)(pc_h(id, 2) % 4), i;

	for (i = 0; i < n; i++) {
		uint64_t h = pc_h(id, 100 + (uint64_t)i);

		ops[i].key = (int)(h % CHURN_KEYS);
		ops[i].del = (h >> 32) % 8 < 2;
		ops[i].len = 20 + (size_t)((h >> 40) % 1481);
	}
	return n;
}

/* --- SQL helpers -------------------------------------------------------- */

static void pc_exec(const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(pc_db, sql, NULL, NULL, &err) != SQLITE_OK)
		pc_die(PC_ERROR, "%s: %s", sql, err ? err : sqlite3_errmsg(pc_db));
}

static sqlite3_stmt *pc_prepare(const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(pc_db, sql, -1, &st, NULL) != SQLITE_OK)
		pc_die(PC_ERROR, "%s: %s", sql, sqlite3_errmsg(pc_db));
	return st;
}

static void pc_step(sqlite3_stmt *st)
{
	if (sqlite3_step(st) != SQLITE_DONE)
		pc_die(PC_ERROR, "%s: %s", sqlite3_sql(st), sqlite3_errmsg(pc_db));
	sqlite3_reset(st);
}

static int64_t pc_query_int(const char *sql)
{
	sqlite3_stmt *st = pc_prepare(sql);
	int64_t v = -1;

	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* sqlite3_log(): ppcache says there why an open failed, and what it recovered. */
static void pc_sqlite_log(void *arg, int code, const char *msg)
{
	(void)arg;
	fprintf(stderr, "sqlite log (%d): %s\n", code, msg);
}

static void pc_open(const struct pc_opts *o)
{
	char uri[1024];
	int rc;

	if (o->wal) {
		snprintf(uri, sizeof(uri), "file:%s", o->db);
	} else {
#ifdef HAVE_PPCACHE
		if (sqlite3_ppcache_register(0) != SQLITE_OK)
			pc_die(PC_ERROR, "sqlite3_ppcache_register failed");
#endif
		if (!sqlite3_vfs_find("ppcache"))
			pc_die(PC_ERROR, "no ppcache VFS in this build (sqlite-ppcache/libppcache.a "
			       "was missing when it was compiled)");
		snprintf(uri, sizeof(uri), "file:%s?vfs=ppcache&threshold=%d", o->db,
			 o->threshold);
	}
	rc = sqlite3_open_v2(uri, &pc_db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_URI, NULL);
	if (rc != SQLITE_OK)
		pc_die(PC_ERROR, "open %s: %s", uri,
		       pc_db ? sqlite3_errmsg(pc_db) : sqlite3_errstr(rc));
	sqlite3_busy_timeout(pc_db, 5000);
	if (o->wal) {
		pc_exec("PRAGMA journal_mode=WAL");
		pc_exec("PRAGMA synchronous=FULL");
	}
	pc_exec("PRAGMA cache_size=" PC_STR(PAGE_CACHE));
	if (o->writers > 1)
		sqlite3_busy_timeout(pc_db, 60000);	/* TCG, 300 KB txns */
}

/*
 * The last id of the log's intact prefix. A line is intact when it is digits
 * and a newline; the first one that is not ends the prefix. A crash after
 * write() and before fdatasync() can leave such a tail: ext4 may have made
 * the size durable but not the bytes (they read as NULs). That line was
 * never acknowledged to anyone, so it is not part of the log. *lines gets
 * the prefix's line count and *bytes its length, where the writer cuts the
 * file before it appends (as an app repairs its own log at start).
 */
static int64_t pc_last_logged(const char *path, int64_t *lines, off_t *bytes)
{
	int64_t last = 0, v;
	char buf[64];
	size_t len;
	FILE *f;

	*lines = 0;
	*bytes = 0;
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		len = strspn(buf, "0123456789");
		if (!len || buf[len] != '\n')
			break;
		v = strtoll(buf, NULL, 10);
		if (v <= last)
			pc_die(PC_FAIL, "log_monotonic: expected ids to rise, saw %" PRId64
			       " after %" PRId64, v, last);
		last = v;
		(*lines)++;
		*bytes += (off_t)len + 1;
	}
	fclose(f);
	return last;
}

/* --- write -------------------------------------------------------------- */

static void pc_junk_churn(sqlite3_stmt *ins, int64_t id, int n, unsigned char *buf)
{
	int i;

	for (i = 0; i < n; i++) {
		size_t len = 100 + pc_h(id, 900 + (uint64_t)i) % 3000;

		pc_fill(buf, len, (uint64_t)id, 0xdead0000ULL + (uint64_t)i);
		sqlite3_bind_int(ins, 1, CHURN_KEYS + (int)(pc_h(id, 800 + (uint64_t)i) % 100000));
		sqlite3_bind_blob(ins, 2, buf, (int)len, SQLITE_STATIC);
		pc_step(ins);
	}
}

static int pc_write(const struct pc_opts *o)
{
	sqlite3_stmt *tx_ins, *meta_upd, *meta_junk, *ch_put, *ch_del;
	static unsigned char buf[300 * 1024];
	struct pc_churn_op ops[4];
	int64_t id, last, logged, lines, done = 0;
	off_t intact;
	char line[32];
	int logfd, n, i;

	pc_open(o);
	/* one transaction: a kill leaves all of the schema or none */
	pc_exec("BEGIN IMMEDIATE");
	pc_exec("CREATE TABLE IF NOT EXISTS tx(id INTEGER PRIMARY KEY, payload BLOB NOT NULL)");
	pc_exec("CREATE TABLE IF NOT EXISTS meta(k INTEGER PRIMARY KEY, last INTEGER, sum INTEGER)");
	pc_exec("CREATE TABLE IF NOT EXISTS churn(k INTEGER PRIMARY KEY, v BLOB NOT NULL)");
	pc_exec("INSERT OR IGNORE INTO meta VALUES(0, 0, 0)");
	pc_exec("COMMIT");
	last = pc_query_int("SELECT last FROM meta WHERE k = 0");
	if (last < 0)
		pc_die(PC_ERROR, "no meta row");

	logged = pc_last_logged(o->log, &lines, &intact);
	logfd = open(o->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (logfd < 0)
		pc_die(PC_ERROR, "open %s: %s", o->log, strerror(errno));
	if (ftruncate(logfd, intact) < 0 || fdatasync(logfd) < 0)
		pc_die(PC_ERROR, "cut the torn tail of %s: %s", o->log, strerror(errno));
	/*
	 * A transaction committed by a writer killed before it logged it is
	 * seen here: the app now knows it is committed, so log it, or a
	 * second such kill would leave two unlogged ones.
	 */
	if (last > logged) {
		n = snprintf(line, sizeof(line), "%" PRId64 "\n", last);
		if (write(logfd, line, (size_t)n) != n || fdatasync(logfd) < 0)
			pc_die(PC_ERROR, "log %s: %s", o->log, strerror(errno));
	}

	tx_ins = pc_prepare("INSERT INTO tx(id, payload) VALUES(?1, ?2)");
	meta_upd = pc_prepare("UPDATE meta SET last = ?1, sum = sum + ?1 WHERE k = 0");
	meta_junk = pc_prepare("UPDATE meta SET last = -1, sum = -1 WHERE k = 0");
	ch_put = pc_prepare("INSERT OR REPLACE INTO churn(k, v) VALUES(?1, ?2)");
	ch_del = pc_prepare("DELETE FROM churn WHERE k = ?1");
	printf("writer: starting at %" PRId64 "\n", last + 1);
	fflush(stdout);

	for (id = last + 1; !o->count || done < o->count; id++, done++) {
		size_t plen = pc_payload_len(id);

		if (id % 7 == 0) {
			int64_t jid = id;

			pc_exec("BEGIN IMMEDIATE");
			if (o->writers > 1)
				jid = pc_query_int("SELECT last FROM meta WHERE k = 0") + 1;
			pc_fill(buf, 4000, (uint64_t)jid, 0xbadULL);
			sqlite3_bind_int64(tx_ins, 1, jid);
			sqlite3_bind_blob(tx_ins, 2, buf, 4000, SQLITE_STATIC);
			pc_step(tx_ins);
			pc_step(meta_junk);
			pc_junk_churn(ch_put, id, 20, buf);
			pc_exec("ROLLBACK");
		}
		pc_exec("BEGIN IMMEDIATE");
		if (o->writers > 1) {
			/* the others may have committed since: the next id */
			id = pc_query_int("SELECT last FROM meta WHERE k = 0") + 1;
			plen = pc_payload_len(id);
		}
		pc_fill(buf, plen, (uint64_t)id, 0);
		sqlite3_bind_int64(tx_ins, 1, id);
		sqlite3_bind_blob(tx_ins, 2, buf, (int)plen, SQLITE_STATIC);
		pc_step(tx_ins);
		sqlite3_bind_int64(meta_upd, 1, id);
		pc_step(meta_upd);
		n = pc_churn_ops(id, ops);
		for (i = 0; i < n; i++) {
			if (ops[i].del) {
				sqlite3_bind_int(ch_del, 1, ops[i].key);
				pc_step(ch_del);
			} else {
				pc_fill(buf, ops[i].len, (uint64_t)id, (uint64_t)ops[i].key);
				sqlite3_bind_int(ch_put, 1, ops[i].key);
				sqlite3_bind_blob(ch_put, 2, buf, (int)ops[i].len, SQLITE_STATIC);
				pc_step(ch_put);
			}
		}
		if (id % 5 == 0) {
			pc_exec("SAVEPOINT junk");
			pc_step(meta_junk);
			pc_junk_churn(ch_put, id, 8, buf);
			pc_exec("ROLLBACK TO junk");
			pc_exec("RELEASE junk");
		}
		pc_exec("COMMIT");

		n = snprintf(line, sizeof(line), "%" PRId64 "\n", id);
		if (write(logfd, line, (size_t)n) != n || fdatasync(logfd) < 0)
			pc_die(PC_ERROR, "log %s: %s", o->log, strerror(errno));
	}
	sqlite3_finalize(tx_ins);
	sqlite3_finalize(meta_upd);
	sqlite3_finalize(meta_junk);
	sqlite3_finalize(ch_put);
	sqlite3_finalize(ch_del);
	if (sqlite3_close(pc_db) != SQLITE_OK)
		pc_die(PC_ERROR, "close: %s", sqlite3_errmsg(pc_db));
	close(logfd);
	printf("writer: %" PRId64 " transactions, last %" PRId64 "\n", done, id - 1);
	return PC_OK;
}

/* --- check -------------------------------------------------------------- */

struct pc_churn_state {
	int64_t writer;		/* id of the last write, 0: absent */
	size_t len;
};

static int pc_check(const struct pc_opts *o)
{
	static unsigned char want[300 * 1024];
	struct pc_churn_state ch[CHURN_KEYS] = { { 0, 0 } };
	struct pc_churn_op ops[4];
	int64_t lines, logged, m, cnt, id, j, k;
	off_t intact;
	char stats[512] = "-";
	sqlite3_stmt *st;
	const char *ic;
	int n, i, rows;

	logged = pc_last_logged(o->log, &lines, &intact);
	pc_open(o);

	st = pc_prepare("PRAGMA integrity_check");
	if (sqlite3_step(st) != SQLITE_ROW)
		pc_die(PC_FAIL, "integrity_check: expected a row, saw %s", sqlite3_errmsg(pc_db));
	ic = (const char *)sqlite3_column_text(st, 0);
	if (!ic || strcmp(ic, "ok"))
		pc_die(PC_FAIL, "integrity_check: expected ok, saw %s", ic ? ic : "NULL");
	sqlite3_finalize(st);

	if (!o->wal) {
		st = pc_prepare("PRAGMA ppcache_stats");
		if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
			snprintf(stats, sizeof(stats), "%s", sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}

	if (pc_query_int("SELECT count(*) FROM sqlite_schema WHERE name = 'tx'") != 1) {
		/* killed before the schema committed */
		if (logged)
			pc_die(PC_FAIL, "logged_present: expected table tx with ids up to %"
			       PRId64 ", saw no table", logged);
		printf("ok committed=0 logged=0 inflight=0 lines=0 (no schema yet) stats=%s\n",
		       stats);
		return PC_OK;
	}
	m = pc_query_int("SELECT coalesce(max(id), 0) FROM tx");
	cnt = pc_query_int("SELECT count(*) FROM tx");
	if (cnt != m)
		pc_die(PC_FAIL, "tx_contiguous: expected ids 1..%" PRId64 " (%" PRId64
		       " rows), saw %" PRId64 " rows", m, m, cnt);
	if (m < logged && !o->after_flush)
		pc_die(PC_FAIL, "logged_present: expected every logged id up to %" PRId64
		       ", saw the database end at %" PRId64, logged, m);
	if (m > logged + o->writers)
		pc_die(PC_FAIL, "none_beyond_inflight: expected at most id %" PRId64
		       " (last logged + %d), saw %" PRId64, logged + o->writers,
		       o->writers, m);
	if (o->after_flush > m)
		pc_die(PC_FAIL, "flushed_present: expected ids up to %" PRId64
		       " (logged before the flush), saw %" PRId64, o->after_flush, m);
	if (pc_query_int("SELECT last FROM meta WHERE k = 0") != m ||
	    pc_query_int("SELECT sum FROM meta WHERE k = 0") != m * (m + 1) / 2)
		pc_die(PC_FAIL, "meta: expected last %" PRId64 " sum %" PRId64 ", saw %" PRId64
		       " %" PRId64, m, m * (m + 1) / 2,
		       pc_query_int("SELECT last FROM meta WHERE k = 0"),
		       pc_query_int("SELECT sum FROM meta WHERE k = 0"));

	st = pc_prepare("SELECT id, payload FROM tx ORDER BY id");
	id = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		size_t len = pc_payload_len(++id);

		if (sqlite3_column_int64(st, 0) != id)
			pc_die(PC_FAIL, "tx_ids: expected %" PRId64 ", saw %" PRId64, id,
			       sqlite3_column_int64(st, 0));
		pc_fill(want, len, (uint64_t)id, 0);
		if ((size_t)sqlite3_column_bytes(st, 1) != len ||
		    memcmp(sqlite3_column_blob(st, 1), want, len))
			pc_die(PC_FAIL, "tx_payload: expected %zu bytes of tx %" PRId64
			       "'s pattern, saw %d other bytes", len, id,
			       sqlite3_column_bytes(st, 1));
	}
	sqlite3_finalize(st);

	for (j = 1; j <= m; j++) {
		n = pc_churn_ops(j, ops);
		for (i = 0; i < n; i++) {
			ch[ops[i].key].writer = ops[i].del ? 0 : j;
			ch[ops[i].key].len = ops[i].len;
		}
	}
	st = pc_prepare("SELECT k, v FROM churn ORDER BY k");
	k = -1;
	rows = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t key = sqlite3_column_int64(st, 0);
		int64_t x;

		rows++;
		if (key >= CHURN_KEYS)
			pc_die(PC_FAIL, "churn_no_junk: expected keys < %d, saw %" PRId64
			       " (a rolled-back write)", CHURN_KEYS, key);
		for (x = k + 1; x < key; x++)
			if (ch[x].writer)
				pc_die(PC_FAIL, "churn_rows: expected key %" PRId64
				       " (written by tx %" PRId64 "), saw none", x, ch[x].writer);
		if (!ch[key].writer)
			pc_die(PC_FAIL, "churn_rows: expected key %" PRId64 " deleted, saw it",
			       key);
		pc_fill(want, ch[key].len, (uint64_t)ch[key].writer, (uint64_t)key);
		if ((size_t)sqlite3_column_bytes(st, 1) != ch[key].len ||
		    memcmp(sqlite3_column_blob(st, 1), want, ch[key].len))
			pc_die(PC_FAIL, "churn_value: expected key %" PRId64 " as tx %" PRId64
			       " wrote it, saw other bytes", key, ch[key].writer);
		k = key;
	}
	sqlite3_finalize(st);
	for (k = k + 1; k < CHURN_KEYS; k++)
		if (ch[k].writer)
			pc_die(PC_FAIL, "churn_rows: expected key %" PRId64 " (written by tx %"
			       PRId64 "), saw none", k, ch[k].writer);

	if (sqlite3_close(pc_db) != SQLITE_OK)
		pc_die(PC_ERROR, "close: %s", sqlite3_errmsg(pc_db));
	printf("ok committed=%" PRId64 " logged=%" PRId64 " inflight=%d lost=%" PRId64
	       " churn_rows=%d stats=%s\n", m, logged, m > logged,
	       logged > m ? logged - m : (int64_t)0, rows, stats);
	return PC_OK;
}

/* --- peek -------------------------------------------------------------- */

static int pc_peek(const struct pc_opts *o)
{
	int64_t lines, logged, last = -1;
	off_t intact;
	sqlite3_stmt *st;

	logged = pc_last_logged(o->log, &lines, &intact);
	pc_open(o);
	st = pc_prepare("SELECT last FROM meta");
	if (sqlite3_step(st) == SQLITE_ROW)
		last = sqlite3_column_int64(st, 0);
	else
		pc_die(PC_FAIL, "peek: expected meta's row, saw %s",
		       sqlite3_errmsg(pc_db));
	sqlite3_finalize(st);
	if (sqlite3_close(pc_db) != SQLITE_OK)
		pc_die(PC_ERROR, "close: %s", sqlite3_errmsg(pc_db));
	if (last < logged)
		pc_die(PC_FAIL, "peek: expected last >= logged %" PRId64
		       ", saw %" PRId64, logged, last);
	printf("peek last=%" PRId64 " logged=%" PRId64 "\n", last, logged);
	return PC_OK;
}

static void pc_usage(void)
{
	fprintf(stderr,
		"usage: ppcache-crash write DB LOG [--vfs ppcache|wal] [--threshold N] [--count N]\n"
		"                          [--writers N]\n"
		"       ppcache-crash check DB LOG [--vfs ppcache|wal] [--after-flush N]\n"
		"                          [--writers N]\n"
		"       ppcache-crash peek DB LOG [--vfs ppcache|wal]\n");
	exit(PC_USAGE);
}

int main(int argc, char **argv)
{
	struct pc_opts o = { .threshold = 5, .writers = 1 };
	int i;

	if (argc < 4)
		pc_usage();
	sqlite3_config(SQLITE_CONFIG_LOG, pc_sqlite_log, NULL);
	o.db = argv[2];
	o.log = argv[3];
	for (i = 4; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--vfs"))
			o.wal = !strcmp(argv[i + 1], "wal");
		else if (!strcmp(argv[i], "--threshold"))
			o.threshold = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--count"))
			o.count = strtoll(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--after-flush"))
			o.after_flush = strtoll(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--writers") && atoi(argv[i + 1]) >= 1)
			o.writers = atoi(argv[i + 1]);
		else
			pc_usage();
	}
	if (i != argc)
		pc_usage();
	if (!strcmp(argv[1], "write"))
		return pc_write(&o);
	if (!strcmp(argv[1], "check"))
		return pc_check(&o);
	if (!strcmp(argv[1], "peek"))
		return pc_peek(&o);
	pc_usage();
	return PC_USAGE;
}
