// SPDX-License-Identifier: GPL-2.0-only
/*
 * sqlbench: the qNVRAM paper's SQLite workload (Luo et al., HotStorage'14,
 * Fig. 4 and 5), with every journal mode side by side.
 *
 * Each case starts from a fresh database holding a table of --rows rows
 * (INTEGER PRIMARY KEY, 100-character text value), then runs --ops
 * operations of one kind, one transaction per operation (autocommit):
 *
 *	seq-insert   keys after the last one, ascending
 *	rand-insert  new keys between the existing ones, random order
 *	seq-update   the first --ops rows in key order
 *	rand-update  --ops distinct rows, random order
 *	seq-delete   the first --ops rows in key order
 *	rand-delete  --ops distinct rows, random order
 *
 * Modes (--modes, comma separated; all by default):
 *
 *	wal-full     journal_mode=WAL, synchronous=FULL (the paper's baseline)
 *	wal-normal   journal_mode=WAL, synchronous=NORMAL
 *	delete-full  journal_mode=DELETE, synchronous=FULL
 *	ppcache      VFS ppcache, threshold=0: every commit flushed, with an
 *	             fdatasync (plain pPCache, the conservative reading)
 *	ppcache-wt   the same with writethrough=1: every commit's pages written
 *	             into the file, the fdatasync batched (the paper's reading:
 *	             the persistent page cache stands in for the fsync)
 *	lazy5        VFS ppcache, threshold=5: LazyFlush as in the paper
 *	lazyinf      VFS ppcache, threshold=-1: LazyFlush never flushes
 *	memory       ":memory:" database (the upper bound)
 *	nosync       the file with journal_mode=MEMORY, synchronous=OFF: no
 *	             durability at all; a diagnostic that shows what a file
 *	             database costs over :memory: without any I/O wait
 *	lazyinf-excl lazyinf with locking_mode=EXCLUSIVE: a diagnostic without
 *	             the pager's per-transaction lock and change-counter work,
 *	             which a :memory: database never does
 *
 * Within a run, every case runs every mode back to back (the mode order
 * rotates from run to run), so a mode and its baseline are measured minutes,
 * not hours, apart. Keys and values come from a PRNG seeded by (seed, run,
 * case): every mode sees the same operations.
 *
 * Output, one CSV line per (run, case, mode) on stdout:
 *
 *	CSV,model,mode,case,run,ops,usec,tps,wr_ios,wr_bytes,flushes,wr_bytes_ops,extra
 *
 * usec: wall time of the --ops transactions (CLOCK_MONOTONIC). wr_ios,
 * wr_bytes, flushes: write requests, bytes written and flush requests that
 * /sys/block/DEV/stat counted from just before the first operation until
 * after a syncfs() that follows the last one (so deferred writeback counts
 * too); wr_bytes_ops: bytes written during the operations alone. extra:
 * PRAGMA ppcache_stats, spaces turned into ';' (ppcache modes), else "-".
 * Lines starting with "#" are comments; "SKIP,mode,reason" says a mode
 * could not run.
 *
 *	sqlbench --probe DIR   the device's effective latency as a program
 *	                       sees it: 4 KiB O_DIRECT writes, and 4 KiB
 *	                       overwrites each followed by fdatasync()
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
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>
#ifdef HAVE_PPCACHE
#include <ppcache.h>
#endif

#define SB_VALUE_LEN	100
#define SB_SECTOR	512
/* Initial keys are spaced so that random inserts land between them. */
#define SB_KEY_STRIDE	1000

enum sb_case {
	SB_SEQ_INSERT,
	SB_RAND_INSERT,
	SB_SEQ_UPDATE,
	SB_RAND_UPDATE,
	SB_SEQ_DELETE,
	SB_RAND_DELETE,
	SB_NR_CASES,
};

static const char *const sb_case_names[SB_NR_CASES] = {
	[SB_SEQ_INSERT] = "seq-insert",
	[SB_RAND_INSERT] = "rand-insert",
	[SB_SEQ_UPDATE] = "seq-update",
	[SB_RAND_UPDATE] = "rand-update",
	[SB_SEQ_DELETE] = "seq-delete",
	[SB_RAND_DELETE] = "rand-delete",
};

#define SB_NOT_PPCACHE	(-2)

struct sb_mode {
	const char *name;
	const char *journal;	/* PRAGMA journal_mode, NULL: the VFS's choice */
	const char *sync;	/* PRAGMA synchronous */
	int threshold;		/* ppcache LazyFlush threshold, or SB_NOT_PPCACHE */
	bool writethrough;	/* ppcache writethrough=1 */
	bool exclusive;		/* PRAGMA locking_mode=EXCLUSIVE */
	bool memory;
	bool skip;		/* could not open: not run again */
};

static struct sb_mode sb_modes[] = {
	{ "wal-full",     "WAL",    "FULL",   SB_NOT_PPCACHE, false, false, false, false },
	{ "wal-normal",   "WAL",    "NORMAL", SB_NOT_PPCACHE, false, false, false, false },
	{ "delete-full",  "DELETE", "FULL",   SB_NOT_PPCACHE, false, false, false, false },
	{ "ppcache",      NULL,     "FULL",   0,              false, false, false, false },
	{ "ppcache-wt",   NULL,     "FULL",   0,              true,  false, false, false },
	{ "lazy5",        NULL,     "FULL",   5,              false, false, false, false },
	{ "lazyinf",      NULL,     "FULL",   -1,             false, false, false, false },
	{ "memory",       NULL,     "OFF",    SB_NOT_PPCACHE, false, false, true,  false },
	{ "nosync",       "MEMORY", "OFF",    SB_NOT_PPCACHE, false, false, false, false },
	{ "lazyinf-excl", NULL,     "FULL",   -1,             false, true,  false, false },
};

#define SB_NR_MODES	((int)(sizeof(sb_modes) / sizeof(sb_modes[0])))

struct sb_opts {
	const char *dir;
	const char *model;
	const char *dev;
	const char *ext;	/* loadable extension path, or NULL */
	int runs;
	int first_run;		/* number of the first run (seeds differ per run) */
	int rows;
	int ops;
	uint64_t seed;
	bool mode_on[SB_NR_MODES];
	bool case_on[SB_NR_CASES];
};

struct sb_devstat {
	uint64_t wr_ios;
	uint64_t wr_sectors;
	uint64_t flushes;
};

static void sb_die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("sqlbench: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

/* --- PRNG (splitmix64) -------------------------------------------------- */

static uint64_t sb_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void sb_shuffle(int64_t *a, int n, uint64_t *s)
{
	int i;

	for (i = n - 1; i > 0; i--) {
		int j = (int)(sb_rand(s) % (uint64_t)(i + 1));
		int64_t t = a[i];

		a[i] = a[j];
		a[j] = t;
	}
}

static void sb_value(char *buf, uint64_t *s)
{
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	int i;

	for (i = 0; i < SB_VALUE_LEN; i++)
		buf[i] = alpha[sb_rand(s) % (sizeof(alpha) - 1)];
	buf[SB_VALUE_LEN] = '\0';
}

/* --- device counters ---------------------------------------------------- */

static bool sb_devstat_read(const char *dev, struct sb_devstat *st)
{
	uint64_t f[17] = { 0 };
	char path[256];
	FILE *fp;
	int n;

	memset(st, 0, sizeof(*st));
	if (!dev)
		return false;
	snprintf(path, sizeof(path), "/sys/block/%s/stat", dev);
	fp = fopen(path, "r");
	if (!fp)
		sb_die("%s: %s", path, strerror(errno));
	n = fscanf(fp, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %" SCNu64,
		   &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8],
		   &f[9], &f[10], &f[11], &f[12], &f[13], &f[14], &f[15], &f[16]);
	fclose(fp);
	if (n < 7)
		sb_die("%s: unexpected format", path);
	/* Documentation/block/stat.rst: fields 5 and 7, 16 (since 5.5) */
	st->wr_ios = f[4];
	st->wr_sectors = f[6];
	st->flushes = n >= 16 ? f[15] : 0;
	return true;
}

static void sb_syncfs(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0)
		sb_die("open %s: %s", dir, strerror(errno));
	if (syncfs(fd) < 0)
		sb_die("syncfs %s: %s", dir, strerror(errno));
	close(fd);
}

static uint64_t sb_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* --- SQL helpers -------------------------------------------------------- */

static void sb_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		sb_die("%s: %s", sql, err ? err : sqlite3_errmsg(db));
}

/* First column of the first row of @sql, into @buf ("" if no row). */
static void sb_query_text(sqlite3 *db, const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *st;
	const unsigned char *t;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW) {
		t = sqlite3_column_text(st, 0);
		if (t)
			snprintf(buf, len, "%s", (const char *)t);
	}
	sqlite3_finalize(st);
}

static sqlite3_stmt *sb_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		sb_die("%s: %s", sql, sqlite3_errmsg(db));
	return st;
}

static void sb_step_done(sqlite3 *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE)
		sb_die("%s: %s", sqlite3_sql(st), sqlite3_errmsg(db));
	sqlite3_reset(st);
}

static void sb_unlink_db(const char *path)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	char p[512];
	size_t i;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		if (unlink(p) < 0 && errno != ENOENT)
			sb_die("unlink %s: %s", p, strerror(errno));
	}
}

/*
 * Open the database of @m at @path; NULL and a reason in @why when the mode
 * cannot run here (no ppcache VFS, no qNVRAM).
 */
static sqlite3 *sb_open(const struct sb_mode *m, const char *path, char *why,
			size_t whylen)
{
	char uri[640], sql[128];
	sqlite3 *db = NULL;
	int rc;

	if (m->memory)
		snprintf(uri, sizeof(uri), ":memory:");
	else if (m->threshold != SB_NOT_PPCACHE)
		snprintf(uri, sizeof(uri), "file:%s?vfs=ppcache&threshold=%d%s", path,
			 m->threshold, m->writethrough ? "&writethrough=1" : "");
	else
		snprintf(uri, sizeof(uri), "file:%s", path);
	if (m->threshold != SB_NOT_PPCACHE && !sqlite3_vfs_find("ppcache")) {
		snprintf(why, whylen, "no ppcache VFS in this build");
		return NULL;
	}
	rc = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			     SQLITE_OPEN_URI, NULL);
	if (rc != SQLITE_OK) {
		snprintf(why, whylen, "open %.300s: %.200s", uri,
			 db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
		sqlite3_close(db);
		return NULL;
	}
	if (m->journal) {
		snprintf(sql, sizeof(sql), "PRAGMA journal_mode=%s", m->journal);
		sb_query_text(db, sql, why, whylen);
		if (strcasecmp(why, m->journal) != 0) {
			char got[64];

			snprintf(got, sizeof(got), "%.60s", why);
			snprintf(why, whylen, "journal_mode=%s gave '%s'", m->journal, got);
			sqlite3_close(db);
			return NULL;
		}
	}
	snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s", m->sync);
	sb_exec(db, sql);
	if (m->exclusive)
		sb_exec(db, "PRAGMA locking_mode=EXCLUSIVE");
	why[0] = '\0';
	return db;
}

/* --- one case ----------------------------------------------------------- */

struct sb_result {
	uint64_t usec;
	struct sb_devstat d_ops;	/* during the operations */
	struct sb_devstat d_all;	/* including the syncfs after them */
	char extra[512];
};

static void sb_devstat_sub(struct sb_devstat *d, const struct sb_devstat *a,
			   const struct sb_devstat *b)
{
	d->wr_ios = b->wr_ios - a->wr_ios;
	d->wr_sectors = b->wr_sectors - a->wr_sectors;
	d->flushes = b->flushes - a->flushes;
}

/*
 * Keys of the initial table: SB_KEY_STRIDE * (1..rows). Operation keys
 * (@keys, @ops of them) follow from the case and the PRNG @s.
 */
static void sb_case_keys(enum sb_case c, int rows, int ops, int64_t *keys,
			 uint64_t *s)
{
	int64_t *all;
	int i, n;

	switch (c) {
	case SB_SEQ_INSERT:
		for (i = 0; i < ops; i++)
			keys[i] = (int64_t)SB_KEY_STRIDE * (rows + 1) + i;
		break;
	case SB_RAND_INSERT:
		/* distinct keys in the gaps: gap g, offset 1..STRIDE-1 */
		n = 0;
		while (n < ops) {
			int64_t k = (int64_t)(sb_rand(s) % (uint64_t)rows + 1) * SB_KEY_STRIDE +
				    (int64_t)(sb_rand(s) % (SB_KEY_STRIDE - 1)) + 1;

			for (i = 0; i < n && keys[i] != k; i++)
				;
			if (i == n)
				keys[n++] = k;
		}
		break;
	case SB_SEQ_UPDATE:
	case SB_SEQ_DELETE:
		for (i = 0; i < ops; i++)
			keys[i] = (int64_t)SB_KEY_STRIDE * (i + 1);
		break;
	case SB_RAND_UPDATE:
	case SB_RAND_DELETE:
		all = malloc(sizeof(*all) * (size_t)rows);
		if (!all)
			sb_die("out of memory");
		for (i = 0; i < rows; i++)
			all[i] = (int64_t)SB_KEY_STRIDE * (i + 1);
		sb_shuffle(all, rows, s);
		memcpy(keys, all, sizeof(*keys) * (size_t)ops);
		free(all);
		break;
	default:
		break;
	}
}

static void sb_fill(sqlite3 *db, int rows, uint64_t *s)
{
	char v[SB_VALUE_LEN + 1];
	sqlite3_stmt *st;
	int i;

	sb_exec(db, "CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT NOT NULL)");
	sb_exec(db, "BEGIN");
	st = sb_prepare(db, "INSERT INTO t(k, v) VALUES(?1, ?2)");
	for (i = 1; i <= rows; i++) {
		sb_value(v, s);
		sqlite3_bind_int64(st, 1, (int64_t)SB_KEY_STRIDE * i);
		sqlite3_bind_text(st, 2, v, SB_VALUE_LEN, SQLITE_STATIC);
		sb_step_done(db, st);
	}
	sqlite3_finalize(st);
	sb_exec(db, "COMMIT");
}

/* Bring the fresh table to the device so that the case starts clean. */
static void sb_settle(sqlite3 *db, const struct sb_mode *m)
{
	char buf[256];

	if (m->memory)
		return;
	if (m->threshold != SB_NOT_PPCACHE)
		sb_query_text(db, "PRAGMA ppcache_flush", buf, sizeof(buf));
	else if (!strcmp(m->journal, "WAL"))
		sb_query_text(db, "PRAGMA wal_checkpoint(TRUNCATE)", buf, sizeof(buf));
}

static void sb_ppcache_stats(sqlite3 *db, char *out, size_t len)
{
	char *p;

	sb_query_text(db, "PRAGMA ppcache_stats", out, len);
	for (p = out; *p; p++)
		if (*p == ' ' || *p == ',' || *p == '\n')
			*p = ';';
	if (!out[0])
		snprintf(out, len, "-");
}

static bool sb_run_case(const struct sb_opts *o, struct sb_mode *m, enum sb_case c,
			int run, struct sb_result *r)
{
	uint64_t s = o->seed ^ ((uint64_t)run << 32) ^ ((uint64_t)c << 16);
	char path[512], why[512], v[SB_VALUE_LEN + 1];
	struct sb_devstat a, b, e;
	sqlite3_stmt *st;
	int64_t *keys;
	uint64_t t0;
	sqlite3 *db;
	int i;

	snprintf(path, sizeof(path), "%s/bench-%s.db", o->dir, m->name);
	if (!m->memory)
		sb_unlink_db(path);
	db = sb_open(m, path, why, sizeof(why));
	if (!db) {
		printf("SKIP,%s,%s\n", m->name, why);
		fflush(stdout);
		m->skip = true;
		return false;
	}
	sb_fill(db, o->rows, &s);
	keys = malloc(sizeof(*keys) * (size_t)o->ops);
	if (!keys)
		sb_die("out of memory");
	sb_case_keys(c, o->rows, o->ops, keys, &s);
	switch (c) {
	case SB_SEQ_INSERT:
	case SB_RAND_INSERT:
		st = sb_prepare(db, "INSERT INTO t(k, v) VALUES(?1, ?2)");
		break;
	case SB_SEQ_UPDATE:
	case SB_RAND_UPDATE:
		st = sb_prepare(db, "UPDATE t SET v = ?2 WHERE k = ?1");
		break;
	default:
		st = sb_prepare(db, "DELETE FROM t WHERE k = ?1");
		break;
	}
	sb_settle(db, m);
	if (!m->memory)
		sb_syncfs(o->dir);

	sb_devstat_read(o->dev, &a);
	t0 = sb_now_us();
	for (i = 0; i < o->ops; i++) {
		sqlite3_bind_int64(st, 1, keys[i]);
		if (c != SB_SEQ_DELETE && c != SB_RAND_DELETE) {
			sb_value(v, &s);
			sqlite3_bind_text(st, 2, v, SB_VALUE_LEN, SQLITE_STATIC);
		}
		sb_step_done(db, st);
		if (sqlite3_changes(db) != 1)
			sb_die("%s %s: key %" PRId64 ": %d rows changed", m->name,
			       sb_case_names[c], keys[i], sqlite3_changes(db));
	}
	r->usec = sb_now_us() - t0;
	sb_devstat_read(o->dev, &b);
	if (!m->memory)
		sb_syncfs(o->dir);
	sb_devstat_read(o->dev, &e);
	sb_devstat_sub(&r->d_ops, &a, &b);
	sb_devstat_sub(&r->d_all, &a, &e);

	if (m->threshold != SB_NOT_PPCACHE)
		sb_ppcache_stats(db, r->extra, sizeof(r->extra));
	else
		snprintf(r->extra, sizeof(r->extra), "-");
	sqlite3_finalize(st);
	free(keys);
	if (sqlite3_close(db) != SQLITE_OK)
		sb_die("close: %s", sqlite3_errmsg(db));
	if (!m->memory)
		sb_unlink_db(path);
	return true;
}

/* --- device latency probe ----------------------------------------------- */

static void sb_probe(const char *dir, int n)
{
	char path[512];
	uint64_t t0, direct_us, sync_us;
	void *buf;
	int fd, i;

	snprintf(path, sizeof(path), "%s/probe.dat", dir);
	if (posix_memalign(&buf, 4096, 4096))
		sb_die("out of memory");
	memset(buf, 0x5a, 4096);

	/* allocate the blocks first: the probes then overwrite in place */
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		sb_die("open %s: %s", path, strerror(errno));
	for (i = 0; i < n; i++)
		if (pwrite(fd, buf, 4096, (off_t)i * 8192) != 4096)
			sb_die("pwrite: %s", strerror(errno));
	fsync(fd);
	close(fd);

	fd = open(path, O_RDWR | O_DIRECT);
	if (fd < 0)
		sb_die("open %s O_DIRECT: %s", path, strerror(errno));
	t0 = sb_now_us();
	for (i = 0; i < n; i++)
		if (pwrite(fd, buf, 4096, (off_t)i * 8192) != 4096)
			sb_die("pwrite O_DIRECT: %s", strerror(errno));
	direct_us = sb_now_us() - t0;
	close(fd);

	fd = open(path, O_RDWR);
	t0 = sb_now_us();
	for (i = 0; i < n; i++) {
		if (pwrite(fd, buf, 4096, (off_t)i * 8192) != 4096)
			sb_die("pwrite: %s", strerror(errno));
		if (fdatasync(fd) < 0)
			sb_die("fdatasync: %s", strerror(errno));
	}
	sync_us = sb_now_us() - t0;
	close(fd);
	unlink(path);
	free(buf);
	printf("PROBE,write_4k_direct_us,%" PRIu64 "\n", direct_us / (uint64_t)n);
	printf("PROBE,write_4k_fdatasync_us,%" PRIu64 "\n", sync_us / (uint64_t)n);
}

/* --- main --------------------------------------------------------------- */

static void sb_usage(void)
{
	fprintf(stderr,
		"usage: sqlbench --dir DIR [--model NAME] [--dev BLOCKDEV] [--runs N] [--first-run N]\n"
		"                [--rows N] [--ops N] [--seed N] [--modes a,b,...]\n"
		"                [--cases a,b,...] [--ext LIBPPCACHE.so]\n"
		"       sqlbench --probe DIR [N]\n"
		"modes: wal-full wal-normal delete-full ppcache ppcache-wt lazy5 lazyinf memory nosync\n"
		"       lazyinf-excl\n"
		"cases: seq-insert rand-insert seq-update rand-update seq-delete rand-delete\n");
	exit(2);
}

static void sb_pick(const char *list, const char *const *names, int n, size_t stride,
		    bool *on)
{
	char *copy = strdup(list), *tok, *save = NULL;
	int i;

	for (i = 0; i < n; i++)
		on[i] = false;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < n; i++)
			if (!strcmp(tok, *(const char *const *)((const char *)names +
								 stride * (size_t)i)))
				break;
		if (i == n)
			sb_die("unknown mode or case '%s'", tok);
		on[i] = true;
	}
	free(copy);
}

/* sqlite3_log(): ppcache says there why an open failed. */
static void sb_sqlite_log(void *arg, int code, const char *msg)
{
	(void)arg;
	fprintf(stderr, "# sqlite log (%d): %s\n", code, msg);
}

static void sb_register_ppcache(const struct sb_opts *o)
{
	if (o->ext) {
		sqlite3 *db;
		char *err = NULL;

		/* an extension that registers a VFS stays after the close */
		sqlite3_open(":memory:", &db);
		sqlite3_enable_load_extension(db, 1);
		if (sqlite3_load_extension(db, o->ext, NULL, &err) != SQLITE_OK)
			sb_die("load %s: %s", o->ext, err ? err : "?");
		sqlite3_close(db);
		return;
	}
#ifdef HAVE_PPCACHE
	if (sqlite3_ppcache_register(0) != SQLITE_OK)
		fprintf(stderr, "sqlbench: sqlite3_ppcache_register failed\n");
#endif
}

int main(int argc, char **argv)
{
	struct sb_opts o = {
		.model = "unknown", .runs = 10, .first_run = 1, .rows = 2000, .ops = 1000,
		.seed = 20140617,
	};
	struct utsname u;
	int run, c, k, i;

	for (i = 0; i < SB_NR_MODES; i++)
		o.mode_on[i] = true;
	for (i = 0; i < SB_NR_CASES; i++)
		o.case_on[i] = true;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--probe")) {
			if (!v)
				sb_usage();
			sb_probe(v, i + 2 < argc ? atoi(argv[i + 2]) : 50);
			return 0;
		}
		if (!v)
			sb_usage();
		i++;
		if (!strcmp(a, "--dir"))
			o.dir = v;
		else if (!strcmp(a, "--model"))
			o.model = v;
		else if (!strcmp(a, "--dev"))
			o.dev = v;
		else if (!strcmp(a, "--ext"))
			o.ext = v;
		else if (!strcmp(a, "--runs"))
			o.runs = atoi(v);
		else if (!strcmp(a, "--first-run"))
			o.first_run = atoi(v);
		else if (!strcmp(a, "--rows"))
			o.rows = atoi(v);
		else if (!strcmp(a, "--ops"))
			o.ops = atoi(v);
		else if (!strcmp(a, "--seed"))
			o.seed = strtoull(v, NULL, 0);
		else if (!strcmp(a, "--modes"))
			sb_pick(v, &sb_modes[0].name, SB_NR_MODES, sizeof(sb_modes[0]), o.mode_on);
		else if (!strcmp(a, "--cases"))
			sb_pick(v, sb_case_names, SB_NR_CASES, sizeof(sb_case_names[0]),
				o.case_on);
		else
			sb_usage();
	}
	if (!o.dir || o.runs < 1 || o.first_run < 1 || o.rows < 1 || o.ops < 1 || o.ops > o.rows)
		sb_usage();

	sqlite3_config(SQLITE_CONFIG_LOG, sb_sqlite_log, NULL);
	sb_register_ppcache(&o);
	uname(&u);
	printf("# sqlbench model=%s kernel=%s sqlite=%s rows=%d ops=%d runs=%d-%d dev=%s ppcache=%s\n",
	       o.model, u.release, sqlite3_libversion(), o.rows, o.ops, o.first_run,
	       o.first_run + o.runs - 1,
	       o.dev ? o.dev : "-", sqlite3_vfs_find("ppcache") ? "yes" : "no");
	fflush(stdout);
	for (run = o.first_run; run < o.first_run + o.runs; run++) {
		for (c = 0; c < SB_NR_CASES; c++) {
			if (!o.case_on[c])
				continue;
			for (k = 0; k < SB_NR_MODES; k++) {
				/* rotate the order: no mode always runs first */
				struct sb_mode *m = &sb_modes[(k + run - 1) % SB_NR_MODES];
				struct sb_result r;

				if (!o.mode_on[m - sb_modes] || m->skip)
					continue;
				memset(&r, 0, sizeof(r));
				if (!sb_run_case(&o, m, (enum sb_case)c, run, &r))
					continue;
				printf("CSV,%s,%s,%s,%d,%d,%" PRIu64 ",%.1f,%" PRIu64 ",%" PRIu64
				       ",%" PRIu64 ",%" PRIu64 ",%s\n",
				       o.model, m->name, sb_case_names[c], run, o.ops, r.usec,
				       r.usec ? o.ops * 1e6 / (double)r.usec : 0.0,
				       r.d_all.wr_ios, r.d_all.wr_sectors * SB_SECTOR,
				       r.d_all.flushes, r.d_ops.wr_sectors * SB_SECTOR, r.extra);
				fflush(stdout);
			}
		}
	}
	return 0;
}
