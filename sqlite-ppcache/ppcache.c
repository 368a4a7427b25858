/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
** ppcache: a persistent page cache for SQLite in qNVRAM, with LazyFlush.
**
** This file implements a VFS shim named "ppcache" over the "unix" VFS. Each
** main database gets a region of qNVRAM (see libqnvram/qnvram.h): reserved
** DRAM that survives an app kill and a warm reboot and that the kernel
** writes to flash when the power key is held. Pages written by a
** transaction are kept in the region as PENDING; at the commit point they
** become COMMITTED in one atomic step (a checksummed commit record and a
** persist barrier). Committed pages reach the database file only when more
** than "threshold" of them are dirty: then LazyFlush writes them in place
** and calls fdatasync() once. A commit therefore writes no journal and
** calls no fsync. The idea and the numbers are from Luo et al., "qNVRAM:
** quasi Non-Volatile RAM for Low Overhead Persistency Enforcement in
** Smartphones" (HotStorage'14), "pPCache" and "LazyFlush".
**
** COMPILING
**
**   The loadable extension (for the stock libsqlite3 and sqlite3 shell):
**
**       make -C sqlite-ppcache            # libppcache.so and libppcache.a
**
**   which runs, in essence:
**
**       gcc -O2 -fPIC -shared ppcache.c -o libppcache.so -lqnvram
**
**   For static linking into an app that calls sqlite3_ppcache_register()
**   itself, compile the same file with -DSQLITE_PPCACHE_STATIC:
**
**       gcc -O2 -DSQLITE_PPCACHE_STATIC -c ppcache.c
**       ... app.o ppcache.o -lqnvram -lsqlite3 -lpthread
**
** LOADING
**
**   From the sqlite3 shell:
**
**       .load ./libppcache
**       .open file:app.db?vfs=ppcache&threshold=5
**
**   ".load ./libppcache sqlite3_ppcache_default_init" also makes ppcache
**   the default VFS of the process. From C, statically linked:
**
**       #include "ppcache.h"
**
**       sqlite3 *db;
**       sqlite3_ppcache_register(0);    // 1: make it the default VFS
**       sqlite3_open_v2("file:app.db?vfs=ppcache", &db,
**                       SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
**                       SQLITE_OPEN_URI, NULL);
**
**   With the loadable build, sqlite3_load_extension(db, "libppcache", 0, 0)
**   on any connection registers the VFS for the whole process (the
**   extension stays loaded); open the databases after that. Any language
**   binding reaches it through the URI: "file:app.db?vfs=ppcache".
**
** USING
**
**   URI parameters (main database only):
**
**     threshold=N   LazyFlush threshold, committed pages held in the region
**                   before they are written to the file (default 5).
**                   0 flushes at every commit (plain pPCache); -1 never
**                   flushes except when the region is full (and at close).
**     writethrough=1  a flush writes the pages into the file but does not
**                   fdatasync; the written slots stay (committed, so a
**                   crash still replays them) until one fdatasync frees
**                   them: when they fill half the region, when room is
**                   needed, at PRAGMA ppcache_flush and at the last close.
**                   With threshold=0 this is the paper's plain pPCache
**                   (every commit's pages reach the file, no fsync on the
**                   commit path). Default 0: every flush syncs.
**     max_pages=N   the region's cap, page slots (default 8192). The region
**                   starts at 256 slots and doubles while a transaction
**                   fills it with pending pages; a transaction that needs
**                   more than N pages fails with SQLITE_FULL.
**     fallback=wal  where no region can be had (no /dev/qnvram, no room,
**                   over quota), open the database through the plain unix
**                   VFS instead and switch the connection to
**                   journal_mode=WAL. Without it such an open fails with
**                   SQLITE_CANTOPEN and sqlite3_log() says why.
**
**   Pragmas (through SQLITE_FCNTL_PRAGMA, on a ppcache database):
**
**     PRAGMA ppcache_threshold;        the connection's threshold
**     PRAGMA ppcache_threshold=N;      set it
**     PRAGMA ppcache_writethrough[=0|1];  the connection's writethrough
**     PRAGMA ppcache_stats;            one line: "commits N pages_written N
**                                      pages_flushed N flushes N
**                                      fsyncs_saved N recoveries N
**                                      region_bytes N ..." (see
**                                      ppc_stats_text())
**     PRAGMA ppcache_flush;            write every committed page now
**
**   journal_mode: DELETE, TRUNCATE, PERSIST, MEMORY and OFF all work and
**   all commit through the region; the rollback journal lives in memory.
**   WAL is not offered: "PRAGMA journal_mode=WAL" leaves the connection in
**   its rollback mode (the VFS has no shared-memory methods).
**
** VERIFICATION
**
**   make -C tests/unit check runs test_ppcache (commit, rollback,
**   savepoints, cache spill, every synchronous and journal_mode, flush
**   counts, region growth and cap, SIGKILL at random points with recovery,
**   concurrency, fallback, the stock sqlite3 shell) and test_ppcache_diff
**   (random transactions against stock SQLite, compared after each one),
**   both over a file-backed stand-in for libqnvram.
**
** IMPLEMENTATION NOTES
**
**   Region layout, little-endian: a 4 KiB header (static part with
**   "PPCACHE1", version, page size, capacity, epoch and the database's
**   identity: realpath, inode, birth time, CRC-32; then two commit records
**   {txn, db_bytes, CRC-32} in cache lines of their own; then counters),
**   then one 16-byte metadata entry {txn, pgno, state} per slot, then the
**   slots' page bytes. A page written by transaction T goes to a free slot
**   tagged T; committed means txn <= the newest valid commit record's txn;
**   the commit record of T goes to record T&1, so the previous one stays
**   valid until the new one is whole. Older copies of a page are freed only
**   after the commit record that supersedes them is persisted; every free
**   is persisted before a slot can be reused or a newer copy flushed.
**
**   Naming: magic = FNV-1a of the realpath (31 bits), probing up to 4
**   consecutive magics on a collision; a region grows into magic^0x80000000
**   and back, and recovery keeps the valid copy with the higher epoch.
**
**   Commit point: SQLITE_FCNTL_COMMIT_PHASETWO on the main database (sent by
**   the pager when a transaction commits, whatever journal_mode and
**   synchronous are). SQLITE_FCNTL_SYNC and xSync persist the pending slots
**   so that only the commit record is left for PHASETWO. A connection that
**   drops to SHARED or no lock with pending pages rolled back: they are
**   freed. A real hot journal left by stock SQLite is rolled back through
**   the lower VFS and that rollback commits at its sync.
**
**   One region and one in-memory index per database and process, shared by
**   all connections of the process. Another process gets SQLITE_BUSY at
**   open: an flock(LOCK_EX) on an extra descriptor is held while any
**   connection of this process has the database open (LOCK_SH in fallback
**   mode, so fallback=wal processes share). With every other process out,
**   SQLite's locks among this process's connections are kept in memory
**   (no fcntl per transaction). All processes must therefore open the
**   database through ppcache; a process using plain SQLite on the same
**   file would not see the pages held in qNVRAM.
**
**   Rollback journals are memory files private to the connection; their
**   names never exist on disk, so xAccess and xDelete answer without a
**   system call. LazyFlush writes with pwrite/ftruncate/fdatasync on that
**   extra descriptor (it outlives any one connection). The region is
**   flushed and freed when the last connection of the process closes, so
**   a cleanly closed database is a plain SQLite file again.
**
**   Design notes, the reasons and the limits: docs/ppcache.md.
*/
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qnvram.h"

#ifdef SQLITE_PPCACHE_STATIC
# include <sqlite3.h>
#else
# include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#endif

#include "ppcache.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
# error "ppcache's region format is little-endian; add byte swaps to port it"
#endif

#define PPC_EXPORT	__attribute__((visibility("default")))

/* --- Region format ------------------------------------------------------ */

#define PPC_MAGIC		"PPCACHE1"
#define PPC_VERSION		1U
#define PPC_HDR_BYTES		(4U * 1024)	/* header block, one page */
#define PPC_ALIGN		(4U * 1024)	/* meta and data start on pages */
#define PPC_PATH_BYTES		2048U		/* path prefix kept in the header */
#define PPC_REC_OFF		2560U		/* commit records, one line each */
#define PPC_STATS_OFF		(PPC_REC_OFF + 2U * 64)
#define PPC_LINE		64U		/* cache line, bytes */
#define PPC_SLOT_FREE		0U
#define PPC_SLOT_USED		0x44455355U	/* "USED": never a stray zero */
#define PPC_ALT_BIT		0x80000000U	/* a grown region's other name */
#define PPC_PROBES		4		/* magics tried on hash collisions */
#define PPC_INITIAL_SLOTS	256U		/* 1 MiB of 4 KiB pages */
#define PPC_MIN_SLOTS		8U
#define PPC_MAX_SLOTS		(1U << 24)
#define PPC_MIN_PAGE		512U
#define PPC_MAX_PAGE		65536U
#define PPC_DEFAULT_PAGE	4096U

/* The static part of the header: written once per format or growth. */
struct ppc_hdr {
	char magic[8];		/* PPC_MAGIC, stored last */
	uint32_t version;
	uint32_t page_size;	/* bytes per slot */
	uint32_t capacity;	/* slots */
	uint32_t path_len;	/* strlen of the full realpath */
	uint64_t epoch;		/* bumped by each growth */
	uint64_t meta_off;	/* byte offset of the slot metadata */
	uint64_t data_off;	/* byte offset of slot 0's page */
	uint64_t region_bytes;	/* bytes the layout needs */
	uint64_t path_hash;	/* FNV-1a 64 of the full realpath */
	uint64_t ino;		/* st_ino of the database file */
	int64_t btime_sec;	/* birth time, 0 where the fs has none */
	uint32_t btime_nsec;
	uint32_t pad;
	char path[PPC_PATH_BYTES];	/* realpath prefix, NUL padded */
	uint32_t cksum;		/* CRC-32 of the bytes above */
};

/* A commit record: txn is committed with the database at db_bytes. */
struct ppc_rec {
	uint64_t txn;
	uint64_t db_bytes;
	uint32_t cksum;		/* CRC-32 of txn and db_bytes */
	uint32_t pad;
	uint64_t unused[5];	/* fills the cache line */
};

/* Counters, kept in the region so they survive a crash. */
struct ppc_stats {
	uint64_t commits;
	uint64_t pages_written;	/* page writes taken into slots */
	uint64_t pages_flushed;	/* pages written into the file */
	uint64_t flushes;	/* LazyFlush runs that wrote or truncated */
	uint64_t fsyncs_saved;	/* xSync calls served by a persist barrier */
	uint64_t recoveries;	/* opens that replayed committed pages */
	uint64_t growths;
	uint64_t rollbacks;	/* transactions whose pending pages were dropped */
	uint64_t syncs;		/* fdatasync calls made by flushes */
	uint64_t unused[7];	/* fills the second cache line */
};

/* Per-slot metadata. state is stored last with release order. */
struct ppc_meta {
	uint64_t txn;
	uint32_t pgno;
	uint32_t state;		/* PPC_SLOT_FREE or PPC_SLOT_USED */
};

_Static_assert(sizeof(struct ppc_hdr) <= PPC_REC_OFF, "header overlaps");
_Static_assert(sizeof(struct ppc_rec) == PPC_LINE, "record is one line");
_Static_assert(sizeof(struct ppc_stats) == 2 * PPC_LINE, "stats: two lines");
_Static_assert(PPC_STATS_OFF + 2 * PPC_LINE <= PPC_HDR_BYTES, "header block");
_Static_assert(sizeof(struct ppc_meta) == 16, "meta entry is 16 bytes");

/* What a region's header says about it, for the database being opened. */
enum ppc_class {
	PPC_ABSENT,	/* no region by that name */
	PPC_BLANK,	/* header all zero: a format that never finished */
	PPC_OURS,	/* valid and ours */
	PPC_TORN,	/* ours by its path, but not valid: a torn format */
	PPC_STALE,	/* valid for our path, but for an older file there */
	PPC_FOREIGN,	/* another database's or another program's */
};

/* The database identity a region must carry. */
struct ppc_id {
	const char *path;
	uint32_t path_len;
	uint64_t path_hash;
	uint64_t ino;
	int64_t btime_sec;
	uint32_t btime_nsec;
};

/* --- In-process state --------------------------------------------------- */

struct ppc_file;

/*
 * One per database file and process, shared by its connections. The
 * registry lock protects next and nref; mu protects everything from it
 * down. Lock order: registry, then mu.
 */
struct ppc_shared {
	struct ppc_shared *next;
	int nref;
	dev_t dev;
	ino_t ino;
	char *path;		/* realpath of the database */
	char *name;		/* the name SQLite opened it by */
	int fd;			/* holds the flock; data I/O of reads and flush */
	int fallback;		/* no region: the WAL pass-through */
	pid_t pid;		/* the process that made the entry */

	pthread_mutex_t mu;
	int real_journals;	/* hot journals open through the lower VFS */
	int disk_journal;	/* a <name>-journal file may exist on disk */

	/*
	 * SQLite's file locks, among this process's connections; the flock
	 * keeps every other process out, so no POSIX lock is needed.
	 */
	int nshared;		/* connections holding SHARED or more */
	struct ppc_file *writer;	/* the one at RESERVED or above */

	/* the region */
	uint32_t uid, magic;
	unsigned char *rgn;
	size_t rgn_len;
	struct ppc_hdr *hdr;
	struct ppc_rec *rec;	/* [2] */
	struct ppc_stats *st;
	struct ppc_meta *meta;
	unsigned char *data;
	uint32_t ps, cap, max_pages;

	/* the committed state */
	uint64_t txn;		/* newest committed transaction */
	uint64_t db_bytes;	/* logical file size it committed */
	uint32_t ncommitted;	/* committed slots not yet flushed */
	uint32_t nwritten;	/* of those, written to the file, not synced */
	uint8_t *written;	/* [cap] committed and written, not synced */

	/* index: pgno -> slots, chained per bucket; free slot stack */
	int32_t *bucket;
	uint32_t nbucket;	/* a power of two */
	int32_t *chain;		/* [cap] */
	uint32_t *freel;	/* [cap] */
	uint32_t nfree;

	/* the open write transaction: at most one per database */
	struct ppc_file *owner;
	uint64_t pend_bytes;	/* logical size the transaction sees */
	uint32_t *pend;		/* [cap] its slots */
	uint32_t npend;
	uint8_t *dirty;		/* [cap] written since the last persist */
	uint32_t *scratch;	/* [cap] commit's list of superseded slots */
};

/* What the URI asked for. */
struct ppc_opts {
	int threshold;
	int writethrough;
	uint32_t max_pages;
	int fallback;
	int readonly;
};

/*
 * An open file of the VFS. For the main database the lower VFS's file
 * follows this struct in the same allocation (ORIGFILE); a memory journal
 * uses the mj_* fields and no lower file.
 */
struct ppc_file {
	sqlite3_file base;
	struct ppc_shared *sh;	/* database (or its journal's database) */
	int threshold;		/* main db: LazyFlush threshold, -1 never */
	int writethrough;	/* main db: flushes write, sync later */
	int lock;		/* main db: SQLITE_LOCK_* held */
	int excl_mode;		/* main db: locking_mode=exclusive was asked */
	char jmode[12];		/* main db: journal_mode last set */
	unsigned char *mj_buf;	/* memory journal bytes */
	sqlite3_int64 mj_size;
	sqlite3_int64 mj_alloc;
};

#define ORIGVFS(p)	((sqlite3_vfs *)((p)->pAppData))
#define ORIGFILE(p)	((sqlite3_file *)(((struct ppc_file *)(p)) + 1))

_Static_assert(sizeof(struct ppc_file) % 8 == 0, "lower file alignment");

/* --- Forward declarations ----------------------------------------------- */

/* Methods of the main database file (no shared memory: no WAL). */
static int ppcClose(sqlite3_file *);
static int ppcRead(sqlite3_file *, void *, int, sqlite3_int64);
static int ppcWrite(sqlite3_file *, const void *, int, sqlite3_int64);
static int ppcTruncate(sqlite3_file *, sqlite3_int64);
static int ppcSync(sqlite3_file *, int);
static int ppcFileSize(sqlite3_file *, sqlite3_int64 *);
static int ppcLock(sqlite3_file *, int);
static int ppcUnlock(sqlite3_file *, int);
static int ppcCheckReservedLock(sqlite3_file *, int *);
static int ppcFileControl(sqlite3_file *, int, void *);
static int ppcSectorSize(sqlite3_file *);
static int ppcDeviceCharacteristics(sqlite3_file *);

/* Methods of a rollback journal held in memory. */
static int memjClose(sqlite3_file *);
static int memjRead(sqlite3_file *, void *, int, sqlite3_int64);
static int memjWrite(sqlite3_file *, const void *, int, sqlite3_int64);
static int memjTruncate(sqlite3_file *, sqlite3_int64);
static int memjSync(sqlite3_file *, int);
static int memjFileSize(sqlite3_file *, sqlite3_int64 *);
static int memjLock(sqlite3_file *, int);
static int memjCheckReservedLock(sqlite3_file *, int *);
static int memjFileControl(sqlite3_file *, int, void *);
static int memjSectorSize(sqlite3_file *);
static int memjDeviceCharacteristics(sqlite3_file *);

/* Methods of a pass-through file: fallback databases, hot journals. */
static int passClose(sqlite3_file *);
static int passRead(sqlite3_file *, void *, int, sqlite3_int64);
static int passWrite(sqlite3_file *, const void *, int, sqlite3_int64);
static int passTruncate(sqlite3_file *, sqlite3_int64);
static int passSync(sqlite3_file *, int);
static int passFileSize(sqlite3_file *, sqlite3_int64 *);
static int passLock(sqlite3_file *, int);
static int passUnlock(sqlite3_file *, int);
static int passCheckReservedLock(sqlite3_file *, int *);
static int passFileControl(sqlite3_file *, int, void *);
static int passSectorSize(sqlite3_file *);
static int passDeviceCharacteristics(sqlite3_file *);
static int passShmMap(sqlite3_file *, int, int, int, void volatile **);
static int passShmLock(sqlite3_file *, int, int, int);
static void passShmBarrier(sqlite3_file *);
static int passShmUnmap(sqlite3_file *, int);
static int passFetch(sqlite3_file *, sqlite3_int64, int, void **);
static int passUnfetch(sqlite3_file *, sqlite3_int64, void *);

/* Methods of the VFS. */
static int ppcOpen(sqlite3_vfs *, sqlite3_filename, sqlite3_file *, int,
		   int *);
static int ppcDelete(sqlite3_vfs *, const char *, int);
static int ppcAccess(sqlite3_vfs *, const char *, int, int *);
static int ppcFullPathname(sqlite3_vfs *, const char *, int, char *);
static void *ppcDlOpen(sqlite3_vfs *, const char *);
static void ppcDlError(sqlite3_vfs *, int, char *);
static void (*ppcDlSym(sqlite3_vfs *, void *, const char *))(void);
static void ppcDlClose(sqlite3_vfs *, void *);
static int ppcRandomness(sqlite3_vfs *, int, char *);
static int ppcSleep(sqlite3_vfs *, int);
static int ppcCurrentTime(sqlite3_vfs *, double *);
static int ppcGetLastError(sqlite3_vfs *, int, char *);
static int ppcCurrentTimeInt64(sqlite3_vfs *, sqlite3_int64 *);
static int ppcSetSystemCall(sqlite3_vfs *, const char *, sqlite3_syscall_ptr);
static sqlite3_syscall_ptr ppcGetSystemCall(sqlite3_vfs *, const char *);
static const char *ppcNextSystemCall(sqlite3_vfs *, const char *);

static sqlite3_vfs ppc_vfs = {
	3,			/* iVersion (set from the lower VFS) */
	0,			/* szOsFile (set when registered) */
	1024,			/* mxPathname (set from the lower VFS) */
	0,			/* pNext */
	PPCACHE_VFS_NAME,	/* zName */
	0,			/* pAppData: the lower VFS */
	ppcOpen,		/* xOpen */
	ppcDelete,		/* xDelete */
	ppcAccess,		/* xAccess */
	ppcFullPathname,	/* xFullPathname */
	ppcDlOpen,		/* xDlOpen */
	ppcDlError,		/* xDlError */
	ppcDlSym,		/* xDlSym */
	ppcDlClose,		/* xDlClose */
	ppcRandomness,		/* xRandomness */
	ppcSleep,		/* xSleep */
	ppcCurrentTime,		/* xCurrentTime */
	ppcGetLastError,	/* xGetLastError */
	ppcCurrentTimeInt64,	/* xCurrentTimeInt64 */
	ppcSetSystemCall,	/* xSetSystemCall */
	ppcGetSystemCall,	/* xGetSystemCall */
	ppcNextSystemCall,	/* xNextSystemCall */
};

static const sqlite3_io_methods ppc_db_io = {
	1,			/* iVersion: no xShm*, so no WAL */
	ppcClose,		/* xClose: drop pending, release the region */
	ppcRead,		/* xRead: own pending, committed, then the file */
	ppcWrite,		/* xWrite: into a pending slot */
	ppcTruncate,		/* xTruncate: the logical size only */
	ppcSync,		/* xSync: persist barrier, no fsync */
	ppcFileSize,		/* xFileSize: the logical size */
	ppcLock,		/* xLock: lower VFS */
	ppcUnlock,		/* xUnlock: a drop to SHARED ends a rollback */
	ppcCheckReservedLock,	/* xCheckReservedLock: lower VFS */
	ppcFileControl,		/* xFileControl: commit point, pragmas */
	ppcSectorSize,		/* xSectorSize: lower VFS */
	ppcDeviceCharacteristics, /* xDeviceCharacteristics: lower VFS */
	0, 0, 0, 0, 0, 0	/* xShm*, xFetch, xUnfetch: none */
};

static const sqlite3_io_methods ppc_memj_io = {
	1,			/* iVersion */
	memjClose,		/* xClose: free the bytes */
	memjRead,		/* xRead */
	memjWrite,		/* xWrite */
	memjTruncate,		/* xTruncate */
	memjSync,		/* xSync: nothing to do; counted as saved */
	memjFileSize,		/* xFileSize */
	memjLock,		/* xLock: private, always granted */
	memjLock,		/* xUnlock */
	memjCheckReservedLock,	/* xCheckReservedLock */
	memjFileControl,	/* xFileControl */
	memjSectorSize,		/* xSectorSize */
	memjDeviceCharacteristics, /* xDeviceCharacteristics */
	0, 0, 0, 0, 0, 0
};

static const sqlite3_io_methods ppc_pass_io = {
	3,			/* iVersion: WAL works in fallback mode */
	passClose,		/* xClose: also releases the shared entry */
	passRead,		/* the rest: the lower VFS's */
	passWrite,
	passTruncate,
	passSync,
	passFileSize,
	passLock,
	passUnlock,
	passCheckReservedLock,
	passFileControl,	/* xFileControl: ppcache_stats says "fallback" */
	passSectorSize,
	passDeviceCharacteristics,
	passShmMap,
	passShmLock,
	passShmBarrier,
	passShmUnmap,
	passFetch,
	passUnfetch,
};

/* --- Helpers: checksums, persistence ------------------------------------ */

static uint32_t ppc_crc32(const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint32_t c = 0xffffffffU;
	int k;

	while (n--) {
		c ^= *p++;
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320U & (0U - (c & 1U)));
	}
	return ~c;
}

static uint64_t ppc_fnv64(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static uint32_t ppc_fnv32(const char *s)
{
	uint32_t h = 0x811c9dc5U;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 0x01000193U;
	}
	return h;
}

static void ppc_persist(const void *addr, size_t len)
{
	qnvm_persist(addr, len);
}

static uint32_t ppc_rec_sum(const struct ppc_rec *r)
{
	uint64_t v[2] = { r->txn, r->db_bytes };

	return ppc_crc32(v, sizeof(v));
}

static uint32_t ppc_hdr_sum(const struct ppc_hdr *h)
{
	return ppc_crc32(h, offsetof(struct ppc_hdr, cksum));
}

static size_t ppc_meta_bytes(uint32_t cap)
{
	size_t n = (size_t)cap * sizeof(struct ppc_meta);

	return (n + PPC_ALIGN - 1) / PPC_ALIGN * PPC_ALIGN;
}

static size_t ppc_layout_bytes(uint32_t cap, uint32_t ps)
{
	return PPC_HDR_BYTES + ppc_meta_bytes(cap) + (size_t)cap * ps;
}

/* The most slots of @ps bytes that fit in @len bytes, at most @want. */
static uint32_t ppc_fit_slots(size_t len, uint32_t ps, uint32_t want)
{
	uint32_t cap;

	if (len <= PPC_HDR_BYTES)
		return 0;
	cap = (uint32_t)((len - PPC_HDR_BYTES) / (ps + sizeof(struct ppc_meta)));
	if (cap > want)
		cap = want;
	while (cap && ppc_layout_bytes(cap, ps) > len)
		cap--;
	return cap;
}

static int ppc_valid_page_size(uint64_t ps)
{
	return ps >= PPC_MIN_PAGE && ps <= PPC_MAX_PAGE && !(ps & (ps - 1));
}

static unsigned char *ppc_slot_data(const struct ppc_shared *sh, uint32_t s)
{
	return sh->data + (size_t)s * sh->ps;
}

static int ppc_is_committed(const struct ppc_shared *sh, uint32_t s)
{
	return sh->meta[s].state == PPC_SLOT_USED && sh->meta[s].txn <= sh->txn;
}

static void ppc_stats_persist(struct ppc_shared *sh)
{
	ppc_persist(sh->st, sizeof(*sh->st));
}

/* --- Helpers: the slot index -------------------------------------------- */

static uint32_t ppc_hash(const struct ppc_shared *sh, uint32_t pgno)
{
	return (pgno * 2654435761U) & (sh->nbucket - 1);
}

static void ppc_idx_add(struct ppc_shared *sh, uint32_t s)
{
	uint32_t h = ppc_hash(sh, sh->meta[s].pgno);

	sh->chain[s] = sh->bucket[h];
	sh->bucket[h] = (int32_t)s;
}

static void ppc_idx_del(struct ppc_shared *sh, uint32_t s)
{
	int32_t *pp = &sh->bucket[ppc_hash(sh, sh->meta[s].pgno)];

	while (*pp >= 0 && *pp != (int32_t)s)
		pp = &sh->chain[*pp];
	if (*pp >= 0)
		*pp = sh->chain[s];
}

/* The slot holding @pgno: the pending copy if @pending, else committed. */
static int32_t ppc_idx_find(const struct ppc_shared *sh, uint32_t pgno,
			    int pending)
{
	int32_t s;

	for (s = sh->bucket[ppc_hash(sh, pgno)]; s >= 0; s = sh->chain[s]) {
		if (sh->meta[s].pgno != pgno)
			continue;
		if ((sh->meta[s].txn > sh->txn) == !!pending)
			return s;
	}
	return -1;
}

/* (Re)build the in-memory arrays for @cap slots. Return 0 or -1. */
static int ppc_idx_alloc(struct ppc_shared *sh, uint32_t cap)
{
	uint32_t nb = 16;
	int32_t *bucket, *chain;
	uint32_t *freel, *pend, *scratch;
	uint8_t *dirty, *written;

	while (nb < cap)
		nb <<= 1;
	bucket = malloc(nb * sizeof(*bucket));
	chain = malloc(cap * sizeof(*chain));
	freel = malloc(cap * sizeof(*freel));
	pend = malloc(cap * sizeof(*pend));
	scratch = malloc(cap * sizeof(*scratch));
	dirty = calloc(cap, 1);
	written = calloc(cap, 1);
	if (!bucket || !chain || !freel || !pend || !scratch || !dirty ||
	    !written) {
		free(bucket);
		free(chain);
		free(freel);
		free(pend);
		free(scratch);
		free(dirty);
		free(written);
		return -1;
	}
	if (sh->npend)
		memcpy(pend, sh->pend, sh->npend * sizeof(*pend));
	if (sh->dirty)
		memcpy(dirty, sh->dirty, sh->cap < cap ? sh->cap : cap);
	if (sh->written)
		memcpy(written, sh->written, sh->cap < cap ? sh->cap : cap);
	free(sh->bucket);
	free(sh->chain);
	free(sh->freel);
	free(sh->pend);
	free(sh->scratch);
	free(sh->dirty);
	free(sh->written);
	sh->written = written;
	sh->bucket = bucket;
	sh->chain = chain;
	sh->freel = freel;
	sh->pend = pend;
	sh->scratch = scratch;
	sh->dirty = dirty;
	sh->nbucket = nb;
	return 0;
}

/* Index every used slot and stack every free one; slots must be sane. */
static void ppc_idx_rebuild(struct ppc_shared *sh)
{
	uint32_t s;

	memset(sh->bucket, 0xff, sh->nbucket * sizeof(*sh->bucket));
	sh->nfree = 0;
	for (s = sh->cap; s-- > 0;) {
		if (sh->meta[s].state == PPC_SLOT_USED)
			ppc_idx_add(sh, s);
		else
			sh->freel[sh->nfree++] = s;
	}
}

/* Free slot @s: unindex it, mark it free in the region and persist that. */
static void ppc_slot_free(struct ppc_shared *sh, uint32_t s)
{
	ppc_idx_del(sh, s);
	__atomic_store_n(&sh->meta[s].state, PPC_SLOT_FREE, __ATOMIC_RELEASE);
	ppc_persist(&sh->meta[s], sizeof(sh->meta[s]));
	sh->dirty[s] = 0;
	if (sh->written[s]) {
		sh->written[s] = 0;
		sh->nwritten--;
	}
	sh->freel[sh->nfree++] = s;
}

/* Tag free slot @s as holding @pgno for transaction @txn. */
static void ppc_slot_use(struct ppc_shared *sh, uint32_t s, uint32_t pgno,
			 uint64_t txn)
{
	sh->meta[s].txn = txn;
	sh->meta[s].pgno = pgno;
	__atomic_store_n(&sh->meta[s].state, PPC_SLOT_USED, __ATOMIC_RELEASE);
	ppc_idx_add(sh, s);
}

/* --- Helpers: the database file ----------------------------------------- */

static int ppc_pread_full(int fd, void *buf, size_t n, uint64_t off,
			  size_t *got)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pread(fd, (char *)buf + done, n - done,
				  (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	*got = done;
	return 0;
}

static int ppc_pwrite_full(int fd, const void *buf, size_t n, uint64_t off)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = pwrite(fd, (const char *)buf + done, n - done,
				   (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		done += (size_t)r;
	}
	return 0;
}

static int ppc_file_bytes(int fd, uint64_t *bytes)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -1;
	*bytes = (uint64_t)st.st_size;
	return 0;
}

/* Read the bytes of the file, zero past its end. */
static int ppc_read_file(struct ppc_shared *sh, void *buf, size_t n,
			 uint64_t off)
{
	size_t got;

	if (ppc_pread_full(sh->fd, buf, n, off, &got) < 0)
		return SQLITE_IOERR_READ;
	if (got < n)
		memset((char *)buf + got, 0, n - got);
	return SQLITE_OK;
}

/* --- Helpers: flush, commit, rollback ----------------------------------- */

/*
 * LazyFlush: write the newest committed copy of every dirty page into the
 * file, set its size to the committed size, fdatasync, then free those
 * slots. Every page written is committed, so a crash at any point leaves
 * slots that recovery writes again. Called with mu held.
 */
static int ppc_write_committed(struct ppc_shared *sh, uint32_t *nwrote);

static int ppc_flush_locked(struct ppc_shared *sh, uint32_t *nflushed)
{
	uint64_t fbytes;
	uint32_t s, n = 0;
	int rc;

	if (nflushed)
		*nflushed = 0;
	if (ppc_file_bytes(sh->fd, &fbytes) < 0)
		return SQLITE_IOERR_FSTAT;
	if (!sh->ncommitted && fbytes == sh->db_bytes)
		return SQLITE_OK;
	rc = ppc_write_committed(sh, &n);
	if (rc != SQLITE_OK)
		return rc;
	if (fdatasync(sh->fd) < 0) {
		sqlite3_log(SQLITE_IOERR_FSYNC, "ppcache: flush of %s: %s",
			    sh->path, strerror(errno));
		return SQLITE_IOERR_FSYNC;
	}
	for (s = 0; s < sh->cap; s++)
		if (ppc_is_committed(sh, s))
			ppc_slot_free(sh, s);
	sh->ncommitted = 0;
	sh->st->syncs++;
	if (n)
		sh->st->flushes++;
	ppc_stats_persist(sh);
	if (nflushed)
		*nflushed = n;
	return SQLITE_OK;
}

/*
 * Write every committed page not yet in the file into it (no sync) and set
 * the file to the committed size; the slots stay committed, marked written.
 * Every byte written is committed: the file is never ahead of the region.
 */
static int ppc_write_committed(struct ppc_shared *sh, uint32_t *nwrote)
{
	uint64_t fbytes;
	uint32_t s, n = 0;

	for (s = 0; s < sh->cap; s++) {
		uint64_t off;
		size_t len;

		if (!ppc_is_committed(sh, s) || sh->written[s])
			continue;
		off = (uint64_t)(sh->meta[s].pgno - 1) * sh->ps;
		if (off < sh->db_bytes) {
			len = sh->db_bytes - off < sh->ps ?
				sh->db_bytes - off : sh->ps;
			if (ppc_pwrite_full(sh->fd, ppc_slot_data(sh, s), len,
					    off) < 0) {
				sqlite3_log(SQLITE_IOERR_WRITE,
					    "ppcache: flush of %s: write: %s",
					    sh->path, strerror(errno));
				return SQLITE_IOERR_WRITE;
			}
			n++;
		}
		sh->written[s] = 1;
		sh->nwritten++;
	}
	if (ppc_file_bytes(sh->fd, &fbytes) < 0)
		return SQLITE_IOERR_FSTAT;
	if (fbytes != sh->db_bytes && ftruncate(sh->fd, (off_t)sh->db_bytes)) {
		sqlite3_log(SQLITE_IOERR_TRUNCATE, "ppcache: flush of %s: %s",
			    sh->path, strerror(errno));
		return SQLITE_IOERR_TRUNCATE;
	}
	sh->st->pages_flushed += n;
	*nwrote = n;
	return SQLITE_OK;
}

/*
 * After a commit: LazyFlush when more than the threshold of committed
 * pages are not yet in the file. With writethrough the flush only writes
 * them; one fdatasync frees the written slots once they fill half the
 * region (or room is needed, or at the last close). Called with mu held.
 */
static void ppc_lazyflush_locked(struct ppc_shared *sh, const struct ppc_file *p)
{
	uint32_t n;
	int rc = SQLITE_OK;

	if (p->threshold < 0 ||
	    sh->ncommitted - sh->nwritten <= (uint32_t)p->threshold)
		return;
	if (!p->writethrough) {
		rc = ppc_flush_locked(sh, NULL);
	} else {
		rc = ppc_write_committed(sh, &n);
		if (rc == SQLITE_OK && n) {
			sh->st->flushes++;
			ppc_stats_persist(sh);
		}
		if (rc == SQLITE_OK && sh->nwritten > sh->cap / 2)
			rc = ppc_flush_locked(sh, NULL);
	}
	if (rc != SQLITE_OK)
		sqlite3_log(SQLITE_WARNING, "ppcache: %s: LazyFlush failed; "
			    "pages stay in qNVRAM", sh->path);
}

/* Persist the pending slots written since the last barrier. */
static void ppc_persist_pending(struct ppc_shared *sh)
{
	uint32_t i;

	for (i = 0; i < sh->npend; i++) {
		uint32_t s = sh->pend[i];

		if (!sh->dirty[s])
			continue;
		ppc_persist(ppc_slot_data(sh, s), sh->ps);
		ppc_persist(&sh->meta[s], sizeof(sh->meta[s]));
		sh->dirty[s] = 0;
	}
}

/* Start @p's write transaction if none is open. */
static int ppc_txn_begin(struct ppc_shared *sh, struct ppc_file *p)
{
	if (sh->owner == p)
		return SQLITE_OK;
	if (sh->owner) {
		sqlite3_log(SQLITE_IOERR_WRITE,
			    "ppcache: %s: a second writer without the lock",
			    sh->path);
		return SQLITE_IOERR_WRITE;
	}
	sh->owner = p;
	sh->pend_bytes = sh->db_bytes;
	sh->npend = 0;
	return SQLITE_OK;
}

/* Free @p's pending slots: its transaction rolled back. */
static void ppc_drop_pending(struct ppc_shared *sh, struct ppc_file *p)
{
	uint32_t i;

	if (sh->owner != p)
		return;
	for (i = 0; i < sh->npend; i++)
		ppc_slot_free(sh, sh->pend[i]);
	if (sh->npend) {
		sh->st->rollbacks++;
		ppc_stats_persist(sh);
	}
	sh->npend = 0;
	sh->owner = NULL;
	sh->pend_bytes = sh->db_bytes;
}

/* Drop to @eLock with mu held; below RESERVED, pending pages rolled back. */
static void ppc_unlock_locked(struct ppc_shared *sh, struct ppc_file *p,
			      int eLock)
{
	if (eLock <= SQLITE_LOCK_SHARED) {
		/* no COMMIT_PHASETWO came: what is pending rolled back */
		ppc_drop_pending(sh, p);
		if (sh->writer == p)
			sh->writer = NULL;
	}
	if (eLock == SQLITE_LOCK_NONE && p->lock >= SQLITE_LOCK_SHARED)
		sh->nshared--;
	if (eLock < p->lock)
		p->lock = eLock;
}

/*
 * The commit point: persist what is pending, write and persist the commit
 * record, then free the copies it superseded and the pages past the end.
 */
static int ppc_commit_locked(struct ppc_shared *sh, struct ppc_file *p)
{
	uint64_t t = sh->txn + 1, old_bytes = sh->db_bytes;
	struct ppc_rec *r = &sh->rec[t & 1];
	uint32_t i, nold = 0, s;

	if (sh->owner != p)
		return SQLITE_OK;
	if (!sh->npend && sh->pend_bytes == sh->db_bytes) {
		sh->owner = NULL;
		return SQLITE_OK;
	}
	ppc_persist_pending(sh);
	for (i = 0; i < sh->npend; i++) {
		int32_t old = ppc_idx_find(sh, sh->meta[sh->pend[i]].pgno, 0);

		if (old >= 0)
			sh->scratch[nold++] = (uint32_t)old;
	}

	r->txn = t;
	r->db_bytes = sh->pend_bytes;
	r->cksum = ppc_rec_sum(r);
	ppc_persist(r, sizeof(*r));
	sh->txn = t;
	sh->db_bytes = sh->pend_bytes;

	for (i = 0; i < nold; i++)
		ppc_slot_free(sh, sh->scratch[i]);
	sh->ncommitted += sh->npend - nold;
	for (i = 0; i < sh->npend; i++)
		sh->dirty[sh->pend[i]] = 0;
	sh->npend = 0;
	sh->owner = NULL;
	if (sh->db_bytes < old_bytes) {
		for (s = 0; s < sh->cap; s++) {
			if (ppc_is_committed(sh, s) &&
			    (uint64_t)(sh->meta[s].pgno - 1) * sh->ps >=
			    sh->db_bytes) {
				ppc_slot_free(sh, s);
				sh->ncommitted--;
			}
		}
	}
	sh->st->commits++;
	ppc_stats_persist(sh);
	return SQLITE_OK;
}

/* --- Helpers: the region ------------------------------------------------ */

static void ppc_region_point(struct ppc_shared *sh, unsigned char *rgn,
			     size_t len, uint32_t magic)
{
	sh->rgn = rgn;
	sh->rgn_len = len;
	sh->magic = magic;
	sh->hdr = (struct ppc_hdr *)rgn;
	sh->rec = (struct ppc_rec *)(rgn + PPC_REC_OFF);
	sh->st = (struct ppc_stats *)(rgn + PPC_STATS_OFF);
	sh->meta = (struct ppc_meta *)(rgn + sh->hdr->meta_off);
	sh->data = rgn + sh->hdr->data_off;
	sh->ps = sh->hdr->page_size;
	sh->cap = sh->hdr->capacity;
}

/*
 * Write the static header of a region laid out for @cap slots of @ps
 * bytes; the magic goes last so a torn header never looks valid.
 */
static void ppc_hdr_write(unsigned char *rgn, const struct ppc_id *id,
			  uint32_t ps, uint32_t cap, uint64_t epoch)
{
	struct ppc_hdr h, *dst = (struct ppc_hdr *)rgn;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, PPC_MAGIC, sizeof(h.magic));
	h.version = PPC_VERSION;
	h.page_size = ps;
	h.capacity = cap;
	h.path_len = id->path_len;
	h.epoch = epoch;
	h.meta_off = PPC_HDR_BYTES;
	h.data_off = PPC_HDR_BYTES + ppc_meta_bytes(cap);
	h.region_bytes = ppc_layout_bytes(cap, ps);
	h.path_hash = id->path_hash;
	h.ino = id->ino;
	h.btime_sec = id->btime_sec;
	h.btime_nsec = id->btime_nsec;
	strncpy(h.path, id->path, sizeof(h.path) - 1);
	h.cksum = ppc_hdr_sum(&h);

	memcpy(dst->magic, "\0\0\0\0\0\0\0\0", sizeof(dst->magic));
	ppc_persist(dst->magic, sizeof(dst->magic));
	memcpy((char *)dst + sizeof(h.magic), (char *)&h + sizeof(h.magic),
	       sizeof(h) - sizeof(h.magic));
	ppc_persist(dst, sizeof(h));
	memcpy(dst->magic, h.magic, sizeof(h.magic));
	ppc_persist(dst->magic, sizeof(dst->magic));
}

/* The identity a valid header carries (path is its prefix). */
static void ppc_hdr_id(const struct ppc_hdr *h, struct ppc_id *id)
{
	memset(id, 0, sizeof(*id));
	id->path = h->path;
	id->path_len = h->path_len;
	id->path_hash = h->path_hash;
	id->ino = h->ino;
	id->btime_sec = h->btime_sec;
	id->btime_nsec = h->btime_nsec;
}

/*
 * Format a region as empty, with @ps-byte slots; commit records and
 * counters are kept when @keep.
 */
static void ppc_format(unsigned char *rgn, size_t len, const struct ppc_id *id,
		       uint32_t ps, uint32_t want, uint64_t epoch, int keep)
{
	uint32_t cap = ppc_fit_slots(len, ps, want);

	memcpy(rgn, "\0\0\0\0\0\0\0\0", 8);
	ppc_persist(rgn, 8);
	if (!keep)
		memset(rgn + PPC_REC_OFF, 0, PPC_HDR_BYTES - PPC_REC_OFF);
	memset(rgn + PPC_HDR_BYTES, 0, ppc_meta_bytes(cap));
	ppc_persist(rgn + PPC_REC_OFF, PPC_HDR_BYTES - PPC_REC_OFF);
	ppc_persist(rgn + PPC_HDR_BYTES, ppc_meta_bytes(cap));
	ppc_hdr_write(rgn, id, ps, cap, epoch);
}

static int ppc_all_zero(const unsigned char *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i])
			return 0;
	return 1;
}

static enum ppc_class ppc_classify(const unsigned char *rgn, size_t len,
				   const struct ppc_id *id)
{
	const struct ppc_hdr *h = (const struct ppc_hdr *)rgn;
	size_t plen;

	if (len < PPC_HDR_BYTES)
		return PPC_FOREIGN;
	if (ppc_all_zero(rgn, PPC_HDR_BYTES))
		return PPC_BLANK;
	plen = id->path_len < PPC_PATH_BYTES - 1 ? id->path_len :
		PPC_PATH_BYTES - 1;
	if (h->path_hash != id->path_hash || h->path_len != id->path_len ||
	    memcmp(h->path, id->path, plen) != 0)
		return PPC_FOREIGN;
	if (memcmp(h->magic, PPC_MAGIC, 8) != 0 || h->version != PPC_VERSION ||
	    h->cksum != ppc_hdr_sum(h) || !ppc_valid_page_size(h->page_size) ||
	    !h->capacity || h->meta_off != PPC_HDR_BYTES ||
	    h->data_off != PPC_HDR_BYTES + ppc_meta_bytes(h->capacity) ||
	    h->region_bytes != ppc_layout_bytes(h->capacity, h->page_size) ||
	    h->region_bytes > len)
		return PPC_TORN;
	if (h->ino != id->ino ||
	    (h->btime_sec && id->btime_sec &&
	     (h->btime_sec != id->btime_sec ||
	      h->btime_nsec != id->btime_nsec)))
		return PPC_STALE;
	return PPC_OURS;
}

static const struct ppc_rec *ppc_newest_rec(const unsigned char *rgn)
{
	const struct ppc_rec *r = (const struct ppc_rec *)(rgn + PPC_REC_OFF);
	const struct ppc_rec *best = NULL;
	int i;

	for (i = 0; i < 2; i++) {
		if (r[i].cksum != ppc_rec_sum(&r[i]) || !r[i].txn)
			continue;
		if (!best || r[i].txn > best->txn)
			best = &r[i];
	}
	return best;
}

/* The page size to start with: the file's, or SQLite's default. */
static uint32_t ppc_guess_page_size(int fd)
{
	unsigned char h[100];
	size_t got;
	uint32_t ps;

	if (ppc_pread_full(fd, h, sizeof(h), 0, &got) < 0 || got < sizeof(h) ||
	    memcmp(h, "SQLite format 3", 16) != 0)
		return PPC_DEFAULT_PAGE;
	ps = (uint32_t)h[16] << 8 | h[17];
	if (ps == 1)
		ps = 65536;
	return ppc_valid_page_size(ps) ? ps : PPC_DEFAULT_PAGE;
}

/*
 * Take a region mapping as this database's: read the committed state, drop
 * pending slots, keep the newest committed copy of each page, build the
 * index. Return 0 or -1 (out of memory).
 */
static int ppc_region_adopt(struct ppc_shared *sh, unsigned char *rgn,
			    size_t len, uint32_t magic)
{
	const struct ppc_rec *r = ppc_newest_rec(rgn);
	uint32_t s;

	ppc_region_point(sh, rgn, len, magic);
	if (r) {
		sh->txn = r->txn;
		sh->db_bytes = r->db_bytes;
	} else {
		sh->txn = 0;
		if (ppc_file_bytes(sh->fd, &sh->db_bytes) < 0)
			return -1;
	}
	if (ppc_idx_alloc(sh, sh->cap) < 0)
		return -1;
	memset(sh->bucket, 0xff, sh->nbucket * sizeof(*sh->bucket));
	sh->nfree = 0;
	sh->ncommitted = 0;
	sh->nwritten = 0;
	for (s = sh->cap; s-- > 0;) {
		struct ppc_meta *m = &sh->meta[s];
		int32_t old;

		if (m->state != PPC_SLOT_USED || m->txn > sh->txn ||
		    m->pgno == 0) {
			if (m->state != PPC_SLOT_FREE) {
				m->state = PPC_SLOT_FREE;
				ppc_persist(m, sizeof(*m));
			}
			sh->freel[sh->nfree++] = s;
			continue;
		}
		old = ppc_idx_find(sh, m->pgno, 0);
		if (old >= 0 && sh->meta[old].txn >= m->txn) {
			m->state = PPC_SLOT_FREE;
			ppc_persist(m, sizeof(*m));
			sh->freel[sh->nfree++] = s;
			continue;
		}
		if (old >= 0) {
			ppc_slot_free(sh, (uint32_t)old);
			sh->ncommitted--;
		}
		ppc_idx_add(sh, s);
		sh->ncommitted++;
	}
	return 0;
}

/* Fill @id from @sh->path. */
static int ppc_identity(struct ppc_shared *sh, struct ppc_id *id)
{
	struct statx stx;

	memset(id, 0, sizeof(*id));
	id->path = sh->path;
	id->path_len = (uint32_t)strlen(sh->path);
	id->path_hash = ppc_fnv64(sh->path);
	if (statx(sh->fd, "", AT_EMPTY_PATH, STATX_INO | STATX_BTIME, &stx) < 0)
		return -1;
	id->ino = stx.stx_ino;
	if (stx.stx_mask & STATX_BTIME) {
		id->btime_sec = stx.stx_btime.tv_sec;
		id->btime_nsec = stx.stx_btime.tv_nsec;
	}
	return 0;
}

static uint32_t ppc_probe_magic(uint32_t h, int i)
{
	return ((h + (uint32_t)i - 1U) % 0x7fffffffU) + 1U;
}

/*
 * Find this database's region, or make one. Return 0, or an errno value:
 * ENODEV/EACCES (no qNVRAM), ENOSPC/EDQUOT (no room), ENOMEM, ...
 */
static int ppc_region_attach(struct ppc_shared *sh, uint32_t max_pages,
			     int drop_ours)
{
	struct ppc_id id;
	uint32_t h, first_free = 0;
	int i, k, have_free = 0;

	if (ppc_identity(sh, &id) < 0)
		return errno ? errno : EIO;
	sh->uid = geteuid();
	h = ppc_fnv32(sh->path) & 0x7fffffffU;
	for (i = 0; i < PPC_PROBES; i++) {
		uint32_t name[2];
		unsigned char *addr[2] = { NULL, NULL };
		size_t len[2] = { 0, 0 };
		enum ppc_class cls[2];
		int pick = -1;

		name[0] = ppc_probe_magic(h, i);
		name[1] = name[0] | PPC_ALT_BIT;
		for (k = 0; k < 2; k++) {
			addr[k] = qnvm_retrieve(sh->uid, name[k], &len[k]);
			if (!addr[k] && errno != ENOENT) {
				int err = errno;

				if (k)
					qnvm_unmap(addr[0]);
				return err;
			}
			cls[k] = addr[k] ? ppc_classify(addr[k], len[k], &id) :
				PPC_ABSENT;
			if (cls[k] == PPC_OURS && drop_ours)
				cls[k] = PPC_STALE;
			if (cls[k] == PPC_STALE)
				sqlite3_log(SQLITE_NOTICE,
					    "ppcache: region %08x was for an "
					    "older file at %s: dropped",
					    name[k], sh->path);
			if (cls[k] == PPC_STALE || cls[k] == PPC_TORN ||
			    cls[k] == PPC_BLANK) {
				/* EBUSY: someone still maps it; leave it be */
				if (qnvm_free(sh->uid, name[k]) == 0)
					cls[k] = PPC_ABSENT;
				else
					cls[k] = PPC_FOREIGN;
				addr[k] = NULL;
			}
		}
		if (cls[0] == PPC_OURS && cls[1] == PPC_OURS)
			pick = ((struct ppc_hdr *)addr[1])->epoch >
			       ((struct ppc_hdr *)addr[0])->epoch;
		else if (cls[0] == PPC_OURS)
			pick = 0;
		else if (cls[1] == PPC_OURS)
			pick = 1;
		if (pick >= 0) {
			if (cls[!pick] == PPC_OURS) {
				/* a growth that did not finish its free */
				qnvm_free(sh->uid, name[!pick]);
			} else if (addr[!pick]) {
				qnvm_unmap(addr[!pick]);
			}
			if (ppc_region_adopt(sh, addr[pick], len[pick],
					     name[pick]) < 0) {
				qnvm_unmap(addr[pick]);
				sh->rgn = NULL;
				return ENOMEM;
			}
			if (max_pages > sh->max_pages)
				sh->max_pages = max_pages;
			return 0;
		}
		for (k = 0; k < 2; k++)
			if (addr[k])
				qnvm_unmap(addr[k]);
		if (!have_free && cls[0] == PPC_ABSENT && cls[1] == PPC_ABSENT) {
			have_free = 1;
			first_free = name[0];
		}
	}
	if (!have_free) {
		sqlite3_log(SQLITE_CANTOPEN,
			    "ppcache: %s: qNVRAM names %08x..+%d are all taken "
			    "by other regions", sh->path,
			    ppc_probe_magic(h, 0), PPC_PROBES);
		return ENOSPC;
	}
	{
		uint32_t ps = ppc_guess_page_size(sh->fd);
		uint32_t want = max_pages < PPC_INITIAL_SLOTS ? max_pages :
			PPC_INITIAL_SLOTS;
		size_t len = 0;
		unsigned char *rgn;

		rgn = qnvm_alloc(sh->uid, first_free,
				 ppc_layout_bytes(want, ps), 0, &len);
		if (!rgn)
			return errno;
		ppc_format(rgn, len, &id, ps, want, 1, 0);
		sh->max_pages = max_pages;
		if (ppc_region_adopt(sh, rgn, len, first_free) < 0) {
			qnvm_free(sh->uid, first_free);
			sh->rgn = NULL;
			return ENOMEM;
		}
	}
	return 0;
}

/*
 * Free region @name if it is a leftover of this database (an older copy,
 * a torn or blank format); never another database's. Return 0 if freed.
 */
static int ppc_free_if_ours(struct ppc_shared *sh, uint32_t name)
{
	struct ppc_id id;
	enum ppc_class cls;
	unsigned char *addr;
	size_t len = 0;

	ppc_hdr_id(sh->hdr, &id);
	id.path = sh->path;
	addr = qnvm_retrieve(sh->uid, name, &len);
	if (!addr)
		return -1;
	cls = ppc_classify(addr, len, &id);
	if (cls == PPC_FOREIGN) {
		qnvm_unmap(addr);
		errno = EEXIST;
		return -1;
	}
	return qnvm_free(sh->uid, name);
}

/*
 * Double the region (up to max_pages) into its other name: copy, persist,
 * then write the header with a higher epoch, switch, free the old one.
 * Called with mu held.
 */
static int ppc_grow_locked(struct ppc_shared *sh)
{
	uint32_t newcap = sh->cap * 2 > sh->max_pages ? sh->max_pages :
		sh->cap * 2;
	uint32_t newmagic = sh->magic ^ PPC_ALT_BIT, oldmagic = sh->magic;
	uint32_t oldcap = sh->cap;
	unsigned char *rgn, *old = sh->rgn;
	size_t len = 0, meta_off = PPC_HDR_BYTES, data_off;
	struct ppc_id id;
	struct ppc_hdr *oh = sh->hdr;

	if (newcap <= sh->cap)
		return SQLITE_FULL;
	rgn = qnvm_alloc(sh->uid, newmagic, ppc_layout_bytes(newcap, sh->ps),
			 0, &len);
	if (!rgn && errno == EEXIST && ppc_free_if_ours(sh, newmagic) == 0)
		rgn = qnvm_alloc(sh->uid, newmagic,
				 ppc_layout_bytes(newcap, sh->ps), 0, &len);
	if (!rgn) {
		sqlite3_log(SQLITE_FULL,
			    "ppcache: %s: cannot grow the qNVRAM region to %u "
			    "pages: %s", sh->path, newcap, strerror(errno));
		return SQLITE_FULL;
	}
	if (ppc_idx_alloc(sh, newcap) < 0) {
		qnvm_free(sh->uid, newmagic);
		return SQLITE_NOMEM;
	}
	data_off = PPC_HDR_BYTES + ppc_meta_bytes(newcap);
	memcpy(rgn + PPC_REC_OFF, old + PPC_REC_OFF,
	       PPC_HDR_BYTES - PPC_REC_OFF);
	memcpy(rgn + meta_off, sh->meta, (size_t)oldcap * sizeof(*sh->meta));
	memcpy(rgn + data_off, sh->data, (size_t)oldcap * sh->ps);
	ppc_persist(rgn, len);

	ppc_hdr_id(oh, &id);
	ppc_hdr_write(rgn, &id, sh->ps, newcap, oh->epoch + 1);

	ppc_region_point(sh, rgn, len, newmagic);
	ppc_idx_rebuild(sh);
	sh->st->growths++;
	ppc_stats_persist(sh);
	if (qnvm_free(sh->uid, oldmagic) < 0) {
		sqlite3_log(SQLITE_WARNING, "ppcache: %s: old region %08x not "
			    "freed: %s", sh->path, oldmagic, strerror(errno));
		qnvm_unmap(old);
	}
	return SQLITE_OK;
}

/*
 * Make a free slot for a pending page: flush committed pages or grow the
 * region, as the threshold prefers. Called with mu held.
 */
static int ppc_make_room(struct ppc_shared *sh, const struct ppc_file *p)
{
	int grow_first = sh->cap < sh->max_pages &&
		(p->threshold < 0 || sh->ncommitted <= (uint32_t)p->threshold);
	int rc;

	if (sh->nwritten) {
		/* written already: one fdatasync frees them */
		rc = ppc_flush_locked(sh, NULL);
		if (rc != SQLITE_OK)
			return rc;
		if (sh->nfree)
			return SQLITE_OK;
	}
	if (!grow_first && sh->ncommitted) {
		rc = ppc_flush_locked(sh, NULL);
		if (rc != SQLITE_OK)
			return rc;
		if (sh->nfree)
			return SQLITE_OK;
	}
	if (sh->cap < sh->max_pages) {
		rc = ppc_grow_locked(sh);
		if (rc == SQLITE_OK || !sh->ncommitted)
			goto out;
	}
	if (sh->ncommitted) {
		rc = ppc_flush_locked(sh, NULL);
		if (rc != SQLITE_OK)
			return rc;
		if (sh->nfree)
			return SQLITE_OK;
	}
	rc = SQLITE_FULL;
out:
	if (rc == SQLITE_FULL)
		sqlite3_log(SQLITE_FULL,
			    "ppcache: %s: a transaction needs more than %u "
			    "pages of qNVRAM; raise the URI parameter "
			    "max_pages", sh->path, sh->max_pages);
	return rc;
}

/* Reformat an empty region for SQLite's page size @ps. mu held. */
static void ppc_reformat_locked(struct ppc_shared *sh, uint32_t ps)
{
	struct ppc_id id;
	char saved[PPC_PATH_BYTES];
	uint32_t want = ppc_fit_slots(sh->rgn_len, ps, sh->max_pages);
	uint64_t epoch = sh->hdr->epoch;

	if (want < PPC_MIN_SLOTS || ppc_idx_alloc(sh, want) < 0)
		return;
	ppc_hdr_id(sh->hdr, &id);
	memcpy(saved, sh->hdr->path, sizeof(saved));
	id.path = saved;
	ppc_format(sh->rgn, sh->rgn_len, &id, ps, want, epoch, 1);
	ppc_region_point(sh, sh->rgn, sh->rgn_len, sh->magic);
	ppc_idx_rebuild(sh);
}

/* Non-zero if @name-journal exists (left by stock SQLite, say). */
static int ppc_journal_on_disk(const char *name)
{
	char *j = sqlite3_mprintf("%s-journal", name);
	int r;

	if (!j)
		return 1;
	r = access(j, F_OK) == 0 || errno != ENOENT;
	sqlite3_free(j);
	return r;
}

/* Non-zero if the file's header says WAL (format bytes 18 and 19 are 2). */
static int ppc_is_wal_format(int fd)
{
	unsigned char h[20];
	size_t got;

	return ppc_pread_full(fd, h, sizeof(h), 0, &got) == 0 &&
	       got == sizeof(h) && !memcmp(h, "SQLite format 3", 16) &&
	       (h[18] == 2 || h[19] == 2);
}

/* Non-zero if @name-wal holds frames: a WAL that needs SQLite's recovery. */
static int ppc_wal_has_frames(const char *name)
{
	char *w = sqlite3_mprintf("%s-wal", name);
	struct stat st;
	int r;

	if (!w)
		return 1;
	r = stat(w, &st) == 0 && st.st_size > 0;
	sqlite3_free(w);
	return r;
}

/*
 * Turn a cleanly closed WAL-format file back into a rollback-journal one,
 * as PRAGMA journal_mode=DELETE would. Only with the flock held.
 */
static int ppc_unwal(int fd)
{
	static const unsigned char v1[2] = { 1, 1 };

	if (ppc_pwrite_full(fd, v1, sizeof(v1), 18) < 0 || fdatasync(fd) < 0)
		return -1;
	return 0;
}

/* --- The registry of databases ------------------------------------------ */

static pthread_mutex_t ppc_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ppc_shared *ppc_reg;

static void ppc_shared_destroy(struct ppc_shared *sh)
{
	if (sh->fd >= 0)
		close(sh->fd);
	pthread_mutex_destroy(&sh->mu);
	free(sh->bucket);
	free(sh->chain);
	free(sh->freel);
	free(sh->pend);
	free(sh->scratch);
	free(sh->dirty);
	free(sh->written);
	free(sh->path);
	free(sh->name);
	free(sh);
}

static const char *ppc_errno_why(int err)
{
	switch (err) {
	case ENODEV:
		return "no /dev/qnvram (qnvram.ko not loaded?)";
	case EACCES:
		return "/dev/qnvram is not writable by this user";
	case ENOSPC:
		return "the qNVRAM pool has no room";
	case EDQUOT:
		return "the region would exceed this uid's qNVRAM quota";
	default:
		return strerror(err);
	}
}

/* Replay committed pages left by a crash. Called with mu held. */
static void ppc_recover_locked(struct ppc_shared *sh)
{
	uint32_t had = sh->ncommitted, n = 0;
	int rc;

	if (!had) {
		uint64_t fbytes;

		if (ppc_file_bytes(sh->fd, &fbytes) == 0 &&
		    fbytes == sh->db_bytes)
			return;
	}
	rc = ppc_flush_locked(sh, &n);
	if (rc != SQLITE_OK) {
		sqlite3_log(rc, "ppcache: %s: recovery could not write the "
			    "file; the %u committed pages stay in qNVRAM",
			    sh->path, had);
		return;
	}
	if (had) {
		sh->st->recoveries++;
		ppc_stats_persist(sh);
		sqlite3_log(SQLITE_NOTICE_RECOVER_ROLLBACK,
			    "ppcache: %s: recovered %u committed pages",
			    sh->path, n);
	}
}

/*
 * Get the shared entry of database @zName (already opened by the lower
 * VFS), creating it, its region and its flock if this process has none.
 */
static int ppc_shared_get(const char *zName, const struct ppc_opts *o,
			  struct ppc_shared **out)
{
	struct ppc_shared *sh;
	struct stat st;
	int err, rc = SQLITE_OK, drop_ours = 0;

	if (stat(zName, &st) < 0)
		return SQLITE_CANTOPEN;
	pthread_mutex_lock(&ppc_reg_mu);
	for (sh = ppc_reg; sh; sh = sh->next) {
		if (sh->dev != st.st_dev || sh->ino != st.st_ino)
			continue;
		if (sh->fallback && !o->fallback) {
			sqlite3_log(SQLITE_CANTOPEN, "ppcache: %s is open in "
				    "fallback=wal mode in this process; open "
				    "it with fallback=wal too", sh->path);
			rc = SQLITE_CANTOPEN;
		} else {
			sh->nref++;
			pthread_mutex_lock(&sh->mu);
			if (o->max_pages > sh->max_pages)
				sh->max_pages = o->max_pages;
			pthread_mutex_unlock(&sh->mu);
			*out = sh;
		}
		pthread_mutex_unlock(&ppc_reg_mu);
		return rc;
	}

	sh = calloc(1, sizeof(*sh));
	if (!sh) {
		pthread_mutex_unlock(&ppc_reg_mu);
		return SQLITE_NOMEM;
	}
	sh->fd = -1;
	sh->pid = getpid();
	pthread_mutex_init(&sh->mu, NULL);
	sh->dev = st.st_dev;
	sh->ino = st.st_ino;
	sh->nref = 1;
	sh->path = realpath(zName, NULL);
	sh->name = strdup(zName);
	if (!sh->path || !sh->name) {
		rc = SQLITE_CANTOPEN;
		goto err;
	}
	sh->fd = open(sh->path, O_RDWR | O_CLOEXEC);
	if (sh->fd < 0 && (errno == EACCES || errno == EROFS))
		sh->fd = open(sh->path, O_RDONLY | O_CLOEXEC);
	if (sh->fd < 0) {
		rc = SQLITE_CANTOPEN;
		goto err;
	}
	if (flock(sh->fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK && o->fallback &&
		    flock(sh->fd, LOCK_SH | LOCK_NB) == 0) {
			/* another process uses it through fallback=wal */
			sh->fallback = 1;
			goto done;
		}
		sqlite3_log(SQLITE_BUSY, "ppcache: %s is open in another "
			    "process", sh->path);
		rc = SQLITE_BUSY;
		goto err;
	}
	if (ppc_is_wal_format(sh->fd)) {
		/*
		 * Left by a fallback=wal session (or stock SQLite in WAL
		 * mode). A region from before it is older than the file.
		 */
		if (ppc_wal_has_frames(sh->name)) {
			if (o->fallback) {
				flock(sh->fd, LOCK_SH | LOCK_NB);
				sh->fallback = 1;
				goto done;
			}
			sqlite3_log(SQLITE_CANTOPEN, "ppcache: %s is in WAL "
				    "mode and its -wal file has frames; open "
				    "it once with fallback=wal (or plain "
				    "SQLite) to checkpoint it", sh->path);
			rc = SQLITE_CANTOPEN;
			goto err;
		}
		if (ppc_unwal(sh->fd) < 0) {
			rc = SQLITE_IOERR_WRITE;
			goto err;
		}
		drop_ours = 1;
	}
	err = ppc_region_attach(sh, o->max_pages, drop_ours);
	if (err) {
		if (o->fallback) {
			sqlite3_log(SQLITE_NOTICE, "ppcache: %s: no qNVRAM "
				    "region (%s): fallback=wal", sh->path,
				    ppc_errno_why(err));
			flock(sh->fd, LOCK_SH | LOCK_NB);
			sh->fallback = 1;
			goto done;
		}
		sqlite3_log(SQLITE_CANTOPEN, "ppcache: cannot open %s: no "
			    "qNVRAM region: %s (add fallback=wal to the URI to "
			    "open it without one)", sh->path,
			    ppc_errno_why(err));
		rc = SQLITE_CANTOPEN;
		goto err;
	}
	pthread_mutex_lock(&sh->mu);
	ppc_recover_locked(sh);
	pthread_mutex_unlock(&sh->mu);
done:
	sh->disk_journal = ppc_journal_on_disk(sh->name);
	sh->next = ppc_reg;
	ppc_reg = sh;
	*out = sh;
	pthread_mutex_unlock(&ppc_reg_mu);
	return SQLITE_OK;
err:
	ppc_shared_destroy(sh);
	pthread_mutex_unlock(&ppc_reg_mu);
	return rc;
}

/*
 * The entry whose database has rollback journal (or WAL file) @zName,
 * with a reference.
 */
static struct ppc_shared *ppc_shared_find_journal(const char *zName)
{
	static const char *const sfx[] = { "-journal", "-wal" };
	size_t n = strlen(zName), ns = 0, i;
	struct ppc_shared *sh;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t l = strlen(sfx[i]);

		if (n > l && strcmp(zName + n - l, sfx[i]) == 0) {
			ns = l;
			break;
		}
	}
	if (!ns)
		return NULL;
	pthread_mutex_lock(&ppc_reg_mu);
	for (sh = ppc_reg; sh; sh = sh->next) {
		if (strlen(sh->name) == n - ns &&
		    memcmp(sh->name, zName, n - ns) == 0) {
			sh->nref++;
			break;
		}
	}
	pthread_mutex_unlock(&ppc_reg_mu);
	return sh;
}

/*
 * Drop a reference; the last one flushes the region into the file, frees
 * it (unless that failed) and releases the flock.
 */
static void ppc_shared_put(struct ppc_shared *sh)
{
	struct ppc_shared **pp;

	pthread_mutex_lock(&ppc_reg_mu);
	if (--sh->nref > 0) {
		pthread_mutex_unlock(&ppc_reg_mu);
		return;
	}
	for (pp = &ppc_reg; *pp; pp = &(*pp)->next) {
		if (*pp == sh) {
			*pp = sh->next;
			break;
		}
	}
	if (sh->rgn && sh->pid != getpid()) {
		/* a child of fork() closing its copy: the region is the
		 * parent's; only drop this process's mapping */
		qnvm_unmap(sh->rgn);
		sh->rgn = NULL;
	}
	if (sh->rgn) {
		pthread_mutex_lock(&sh->mu);
		if (ppc_flush_locked(sh, NULL) == SQLITE_OK && !sh->npend &&
		    !sh->ncommitted) {
			if (qnvm_free(sh->uid, sh->magic) < 0)
				qnvm_unmap(sh->rgn);
		} else {
			sqlite3_log(SQLITE_WARNING, "ppcache: %s: closed with "
				    "unflushed pages; they stay in qNVRAM "
				    "region %08x", sh->path, sh->magic);
			qnvm_unmap(sh->rgn);
		}
		sh->rgn = NULL;
		pthread_mutex_unlock(&sh->mu);
	}
	ppc_shared_destroy(sh);
	pthread_mutex_unlock(&ppc_reg_mu);
}

/* --- Main database methods ---------------------------------------------- */

static int ppcClose(sqlite3_file *pFile)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	int rc;

	pthread_mutex_lock(&sh->mu);
	ppc_unlock_locked(sh, p, SQLITE_LOCK_NONE);
	pthread_mutex_unlock(&sh->mu);
	rc = ORIGFILE(p)->pMethods->xClose(ORIGFILE(p));
	ppc_shared_put(sh);
	return rc;
}

static int ppcRead(sqlite3_file *pFile, void *zBuf, int iAmt,
		   sqlite3_int64 iOfst)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	unsigned char *out = zBuf;
	uint64_t pos = (uint64_t)iOfst, end = pos + (uint64_t)iAmt, lsize;
	int mine, rc = SQLITE_OK;

	pthread_mutex_lock(&sh->mu);
	mine = sh->owner == p;
	lsize = mine ? sh->pend_bytes : sh->db_bytes;
	while (pos < end) {
		uint32_t pgno = (uint32_t)(pos / sh->ps) + 1;
		uint64_t in = pos % sh->ps;
		uint64_t n = sh->ps - in;
		int32_t s = -1;

		if (pos >= lsize) {
			memset(out, 0, end - pos);
			rc = SQLITE_IOERR_SHORT_READ;
			break;
		}
		if (n > end - pos)
			n = end - pos;
		if (n > lsize - pos)
			n = lsize - pos;
		if (mine)
			s = ppc_idx_find(sh, pgno, 1);
		if (s < 0)
			s = ppc_idx_find(sh, pgno, 0);
		if (s >= 0) {
			memcpy(out, ppc_slot_data(sh, s) + in, n);
		} else {
			rc = ppc_read_file(sh, out, n, pos);
			if (rc != SQLITE_OK)
				break;
		}
		out += n;
		pos += n;
	}
	pthread_mutex_unlock(&sh->mu);
	return rc;
}

/* Copy into the pending slot of @pgno bytes [@in, @in+@n) from @src. */
static int ppc_write_page(struct ppc_shared *sh, struct ppc_file *p,
			  uint32_t pgno, uint32_t in, uint32_t n,
			  const unsigned char *src)
{
	int32_t s = ppc_idx_find(sh, pgno, 1);
	int rc;

	if (s < 0) {
		int32_t c;
		uint32_t f;

		if (!sh->nfree) {
			rc = ppc_make_room(sh, p);
			if (rc != SQLITE_OK)
				return rc;
		}
		f = sh->freel[--sh->nfree];
		if (n < sh->ps) {
			/* a partial page: start from what is visible now */
			c = ppc_idx_find(sh, pgno, 0);
			if (c >= 0) {
				memcpy(ppc_slot_data(sh, f),
				       ppc_slot_data(sh, c), sh->ps);
			} else {
				uint64_t off = (uint64_t)(pgno - 1) * sh->ps;

				memset(ppc_slot_data(sh, f), 0, sh->ps);
				if (off < sh->pend_bytes) {
					uint64_t m = sh->pend_bytes - off;

					rc = ppc_read_file(sh,
						ppc_slot_data(sh, f),
						m < sh->ps ? m : sh->ps, off);
					if (rc != SQLITE_OK) {
						sh->nfree++;
						return rc;
					}
				}
			}
		}
		ppc_slot_use(sh, f, pgno, sh->txn + 1);
		sh->pend[sh->npend++] = f;
		s = (int32_t)f;
	}
	memcpy(ppc_slot_data(sh, s) + in, src, n);
	sh->dirty[s] = 1;
	return SQLITE_OK;
}

static int ppcWrite(sqlite3_file *pFile, const void *zBuf, int iAmt,
		    sqlite3_int64 iOfst)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	const unsigned char *src = zBuf;
	uint64_t pos = (uint64_t)iOfst, end = pos + (uint64_t)iAmt;
	int rc;

	pthread_mutex_lock(&sh->mu);
	rc = ppc_txn_begin(sh, p);
	if (rc != SQLITE_OK)
		goto out;
	if ((uint32_t)iAmt != sh->ps && ppc_valid_page_size((uint64_t)iAmt) &&
	    pos % (uint64_t)iAmt == 0 && !sh->ncommitted && !sh->npend)
		ppc_reformat_locked(sh, (uint32_t)iAmt);
	while (pos < end) {
		uint32_t pgno = (uint32_t)(pos / sh->ps) + 1;
		uint32_t in = (uint32_t)(pos % sh->ps);
		uint64_t n = sh->ps - in;

		if (n > end - pos)
			n = end - pos;
		rc = ppc_write_page(sh, p, pgno, in, (uint32_t)n, src);
		if (rc != SQLITE_OK)
			goto out;
		sh->st->pages_written++;
		src += n;
		pos += n;
	}
	if (end > sh->pend_bytes)
		sh->pend_bytes = end;
out:
	pthread_mutex_unlock(&sh->mu);
	return rc;
}

static int ppcTruncate(sqlite3_file *pFile, sqlite3_int64 size)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	int rc;

	pthread_mutex_lock(&sh->mu);
	rc = ppc_txn_begin(sh, p);
	if (rc == SQLITE_OK)
		sh->pend_bytes = (uint64_t)size;
	pthread_mutex_unlock(&sh->mu);
	return rc;
}

/*
 * The barrier that stands in for fsync: persist the pending slots. While a
 * hot journal of stock SQLite is being rolled back, that rollback commits
 * here (the pager sends no COMMIT_PHASETWO for it).
 */
static int ppc_sync_locked(struct ppc_shared *sh, struct ppc_file *p)
{
	if (sh->owner != p)
		return SQLITE_OK;
	ppc_persist_pending(sh);
	if (sh->real_journals)
		return ppc_commit_locked(sh, p);
	return SQLITE_OK;
}

static int ppcSync(sqlite3_file *pFile, int flags)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	int rc;

	(void)flags;
	pthread_mutex_lock(&sh->mu);
	rc = ppc_sync_locked(sh, p);
	sh->st->fsyncs_saved++;
	pthread_mutex_unlock(&sh->mu);
	return rc;
}

static int ppcFileSize(sqlite3_file *pFile, sqlite3_int64 *pSize)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;

	pthread_mutex_lock(&sh->mu);
	*pSize = (sqlite3_int64)(sh->owner == p ? sh->pend_bytes :
				 sh->db_bytes);
	pthread_mutex_unlock(&sh->mu);
	return SQLITE_OK;
}

/*
 * SQLite's lock protocol (see unixLock): any number of SHARED, one
 * RESERVED beside them, PENDING keeps new SHARED out while the writer
 * waits for the others to leave, EXCLUSIVE alone.
 */
static int ppcLock(sqlite3_file *pFile, int eLock)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	int rc = SQLITE_OK;

	pthread_mutex_lock(&sh->mu);
	if (p->lock >= eLock)
		goto out;
	if (eLock == SQLITE_LOCK_SHARED) {
		if (sh->writer && sh->writer->lock >= SQLITE_LOCK_PENDING) {
			rc = SQLITE_BUSY;
			goto out;
		}
		sh->nshared++;
		p->lock = SQLITE_LOCK_SHARED;
		goto out;
	}
	if (p->lock < SQLITE_LOCK_SHARED) {
		rc = SQLITE_IOERR_LOCK;		/* SQLite never does this */
		goto out;
	}
	if (sh->writer && sh->writer != p) {
		rc = SQLITE_BUSY;
		goto out;
	}
	sh->writer = p;
	if (eLock == SQLITE_LOCK_RESERVED) {
		p->lock = SQLITE_LOCK_RESERVED;
	} else if (sh->nshared > 1) {
		p->lock = SQLITE_LOCK_PENDING;
		rc = SQLITE_BUSY;
	} else {
		p->lock = SQLITE_LOCK_EXCLUSIVE;
	}
out:
	pthread_mutex_unlock(&sh->mu);
	return rc;
}

static int ppcUnlock(sqlite3_file *pFile, int eLock)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;

	pthread_mutex_lock(&sh->mu);
	ppc_unlock_locked(sh, p, eLock);
	pthread_mutex_unlock(&sh->mu);
	return SQLITE_OK;
}

static int ppcCheckReservedLock(sqlite3_file *pFile, int *pResOut)
{
	struct ppc_file *p = (struct ppc_file *)pFile;

	pthread_mutex_lock(&p->sh->mu);
	*pResOut = p->sh->writer != NULL;
	pthread_mutex_unlock(&p->sh->mu);
	return SQLITE_OK;
}

/* The text of PRAGMA ppcache_stats. Called with mu held. */
static char *ppc_stats_text(struct ppc_shared *sh, const struct ppc_file *p)
{
	const struct ppc_stats *st = sh->st;

	return sqlite3_mprintf(
		"commits %llu pages_written %llu pages_flushed %llu "
		"flushes %llu fsyncs_saved %llu recoveries %llu "
		"region_bytes %llu capacity %u page_size %u dirty %u "
		"pending %u growths %llu rollbacks %llu threshold %d "
		"max_pages %u txn %llu region %08x syncs %llu written %u "
		"writethrough %d",
		(unsigned long long)st->commits,
		(unsigned long long)st->pages_written,
		(unsigned long long)st->pages_flushed,
		(unsigned long long)st->flushes,
		(unsigned long long)st->fsyncs_saved,
		(unsigned long long)st->recoveries,
		(unsigned long long)sh->rgn_len, sh->cap, sh->ps,
		sh->ncommitted, sh->npend,
		(unsigned long long)st->growths,
		(unsigned long long)st->rollbacks, p->threshold,
		sh->max_pages, (unsigned long long)sh->txn, sh->magic,
		(unsigned long long)st->syncs, sh->nwritten, p->writethrough);
}

/* Parse a whole decimal integer in [@lo, @hi]. Return 0 or -1. */
static int ppc_parse_int(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int ppc_pragma(struct ppc_file *p, char **a)
{
	struct ppc_shared *sh = p->sh;
	const char *name = a[1], *val = a[2];
	static const char *const modes[] = {
		"delete", "truncate", "persist", "memory", "off",
	};
	uint32_t n;
	long v;
	int rc;
	size_t i;

	if (!sqlite3_stricmp(name, "ppcache_threshold")) {
		if (val) {
			if (ppc_parse_int(val, -1, INT_MAX, &v) < 0) {
				a[0] = sqlite3_mprintf("ppcache_threshold: "
						       "an integer >= -1");
				return SQLITE_ERROR;
			}
			p->threshold = (int)v;
		}
		a[0] = sqlite3_mprintf("%d", p->threshold);
		return SQLITE_OK;
	}
	if (!sqlite3_stricmp(name, "ppcache_writethrough")) {
		if (val) {
			if (ppc_parse_int(val, 0, 1, &v) < 0) {
				a[0] = sqlite3_mprintf("ppcache_writethrough: "
						       "0 or 1");
				return SQLITE_ERROR;
			}
			p->writethrough = (int)v;
		}
		a[0] = sqlite3_mprintf("%d", p->writethrough);
		return SQLITE_OK;
	}
	if (!sqlite3_stricmp(name, "ppcache_stats")) {
		pthread_mutex_lock(&sh->mu);
		a[0] = ppc_stats_text(sh, p);
		pthread_mutex_unlock(&sh->mu);
		return SQLITE_OK;
	}
	if (!sqlite3_stricmp(name, "ppcache_flush")) {
		pthread_mutex_lock(&sh->mu);
		rc = ppc_flush_locked(sh, &n);
		pthread_mutex_unlock(&sh->mu);
		if (rc != SQLITE_OK) {
			a[0] = sqlite3_mprintf("ppcache_flush failed: %s",
					       sqlite3_errstr(rc));
			return rc;
		}
		a[0] = sqlite3_mprintf("%u", n);
		return SQLITE_OK;
	}
	if (!sqlite3_stricmp(name, "locking_mode") && val) {
		p->excl_mode = !sqlite3_stricmp(val, "exclusive");
		return SQLITE_NOTFOUND;
	}
	if (!sqlite3_stricmp(name, "journal_mode") && val) {
		if (!sqlite3_stricmp(val, "wal")) {
			/*
			 * Without shared memory SQLite keeps the rollback
			 * mode by itself, except in exclusive locking mode
			 * (heap wal-index): answer for it there.
			 */
			if (!p->excl_mode)
				return SQLITE_NOTFOUND;
			a[0] = sqlite3_mprintf("%s", p->jmode);
			return SQLITE_OK;
		}
		for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (!sqlite3_stricmp(val, modes[i]))
				memcpy(p->jmode, modes[i],
				       strlen(modes[i]) + 1);
		return SQLITE_NOTFOUND;
	}
	return SQLITE_NOTFOUND;
}

static int ppcFileControl(sqlite3_file *pFile, int op, void *pArg)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	int rc;

	switch (op) {
	case SQLITE_FCNTL_COMMIT_PHASETWO:
		pthread_mutex_lock(&sh->mu);
		rc = ppc_commit_locked(sh, p);
		if (rc == SQLITE_OK)
			ppc_lazyflush_locked(sh, p);
		pthread_mutex_unlock(&sh->mu);
		return rc;
	case SQLITE_FCNTL_SYNC:
		pthread_mutex_lock(&sh->mu);
		rc = ppc_sync_locked(sh, p);
		pthread_mutex_unlock(&sh->mu);
		return rc;
	case SQLITE_FCNTL_PRAGMA:
		rc = ppc_pragma(p, (char **)pArg);
		if (rc != SQLITE_NOTFOUND)
			return rc;
		break;
	case SQLITE_FCNTL_LOCKSTATE:
		*(int *)pArg = p->lock;
		return SQLITE_OK;
	case SQLITE_FCNTL_HAS_MOVED: {
		/* unlinked under us? (no path walk: asked every transaction) */
		struct stat st;

		if (fstat(sh->fd, &st) < 0)
			return SQLITE_IOERR_FSTAT;
		*(int *)pArg = st.st_nlink == 0;
		return SQLITE_OK;
	}
	case SQLITE_FCNTL_SIZE_HINT:
	case SQLITE_FCNTL_CHUNK_SIZE:
		/* the file is written by LazyFlush alone */
		return SQLITE_OK;
	case SQLITE_FCNTL_VFSNAME:
		rc = ORIGFILE(p)->pMethods->xFileControl(ORIGFILE(p), op, pArg);
		if (rc == SQLITE_OK) {
			char **pz = pArg;
			char *z = sqlite3_mprintf("ppcache/%z", *pz);

			*pz = z;
		}
		return rc;
	default:
		break;
	}
	return ORIGFILE(p)->pMethods->xFileControl(ORIGFILE(p), op, pArg);
}

static int ppcSectorSize(sqlite3_file *pFile)
{
	return ORIGFILE(pFile)->pMethods->xSectorSize(ORIGFILE(pFile));
}

static int ppcDeviceCharacteristics(sqlite3_file *pFile)
{
	return ORIGFILE(pFile)->pMethods->xDeviceCharacteristics(
		ORIGFILE(pFile));
}

/* --- Memory journal methods --------------------------------------------- */

static int memjClose(sqlite3_file *pFile)
{
	struct ppc_file *p = (struct ppc_file *)pFile;

	sqlite3_free(p->mj_buf);
	p->mj_buf = NULL;
	if (p->sh)
		ppc_shared_put(p->sh);
	return SQLITE_OK;
}

static int memjRead(sqlite3_file *pFile, void *zBuf, int iAmt,
		    sqlite3_int64 iOfst)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	sqlite3_int64 n = 0;

	if (iOfst < p->mj_size)
		n = p->mj_size - iOfst < iAmt ? p->mj_size - iOfst : iAmt;
	if (n > 0)
		memcpy(zBuf, p->mj_buf + iOfst, (size_t)n);
	if (n < iAmt) {
		memset((char *)zBuf + n, 0, (size_t)(iAmt - n));
		return SQLITE_IOERR_SHORT_READ;
	}
	return SQLITE_OK;
}

static int memjWrite(sqlite3_file *pFile, const void *zBuf, int iAmt,
		     sqlite3_int64 iOfst)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	sqlite3_int64 end = iOfst + iAmt;

	if (end > p->mj_alloc) {
		sqlite3_int64 na = p->mj_alloc ? p->mj_alloc : 64 * 1024;
		unsigned char *nb;

		while (na < end)
			na *= 2;
		nb = sqlite3_realloc64(p->mj_buf, (sqlite3_uint64)na);
		if (!nb)
			return SQLITE_IOERR_NOMEM;
		p->mj_buf = nb;
		p->mj_alloc = na;
	}
	if (iOfst > p->mj_size)
		memset(p->mj_buf + p->mj_size, 0, (size_t)(iOfst - p->mj_size));
	memcpy(p->mj_buf + iOfst, zBuf, (size_t)iAmt);
	if (end > p->mj_size)
		p->mj_size = end;
	return SQLITE_OK;
}

static int memjTruncate(sqlite3_file *pFile, sqlite3_int64 size)
{
	struct ppc_file *p = (struct ppc_file *)pFile;

	if (size < p->mj_size)
		p->mj_size = size;
	return SQLITE_OK;
}

static int memjSync(sqlite3_file *pFile, int flags)
{
	struct ppc_file *p = (struct ppc_file *)pFile;

	(void)flags;
	if (p->sh) {
		pthread_mutex_lock(&p->sh->mu);
		if (p->sh->rgn)
			p->sh->st->fsyncs_saved++;
		pthread_mutex_unlock(&p->sh->mu);
	}
	return SQLITE_OK;
}

static int memjFileSize(sqlite3_file *pFile, sqlite3_int64 *pSize)
{
	*pSize = ((struct ppc_file *)pFile)->mj_size;
	return SQLITE_OK;
}

static int memjLock(sqlite3_file *pFile, int eLock)
{
	(void)pFile;
	(void)eLock;
	return SQLITE_OK;
}

static int memjCheckReservedLock(sqlite3_file *pFile, int *pResOut)
{
	(void)pFile;
	*pResOut = 0;
	return SQLITE_OK;
}

static int memjFileControl(sqlite3_file *pFile, int op, void *pArg)
{
	(void)pFile;
	if (op == SQLITE_FCNTL_VFSNAME) {
		*(char **)pArg = sqlite3_mprintf("ppcache/memjournal");
		return SQLITE_OK;
	}
	return SQLITE_NOTFOUND;
}

static int memjSectorSize(sqlite3_file *pFile)
{
	(void)pFile;
	return 512;
}

static int memjDeviceCharacteristics(sqlite3_file *pFile)
{
	(void)pFile;
	return SQLITE_IOCAP_SAFE_APPEND | SQLITE_IOCAP_SEQUENTIAL |
	       SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}

/* --- Pass-through methods ----------------------------------------------- */

static int passClose(sqlite3_file *pFile)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	int rc = ORIGFILE(p)->pMethods->xClose(ORIGFILE(p));

	if (p->sh) {
		if (p->sh->rgn) {
			/* a hot journal of stock SQLite is done */
			pthread_mutex_lock(&p->sh->mu);
			p->sh->real_journals--;
			pthread_mutex_unlock(&p->sh->mu);
		}
		ppc_shared_put(p->sh);
	}
	return rc;
}

static int passRead(sqlite3_file *f, void *b, int n, sqlite3_int64 o)
{
	return ORIGFILE(f)->pMethods->xRead(ORIGFILE(f), b, n, o);
}

static int passWrite(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
	return ORIGFILE(f)->pMethods->xWrite(ORIGFILE(f), b, n, o);
}

static int passTruncate(sqlite3_file *f, sqlite3_int64 size)
{
	return ORIGFILE(f)->pMethods->xTruncate(ORIGFILE(f), size);
}

static int passSync(sqlite3_file *f, int flags)
{
	return ORIGFILE(f)->pMethods->xSync(ORIGFILE(f), flags);
}

static int passFileSize(sqlite3_file *f, sqlite3_int64 *pSize)
{
	return ORIGFILE(f)->pMethods->xFileSize(ORIGFILE(f), pSize);
}

static int passLock(sqlite3_file *f, int eLock)
{
	return ORIGFILE(f)->pMethods->xLock(ORIGFILE(f), eLock);
}

static int passUnlock(sqlite3_file *f, int eLock)
{
	return ORIGFILE(f)->pMethods->xUnlock(ORIGFILE(f), eLock);
}

static int passCheckReservedLock(sqlite3_file *f, int *pResOut)
{
	return ORIGFILE(f)->pMethods->xCheckReservedLock(ORIGFILE(f), pResOut);
}

static int passFileControl(sqlite3_file *f, int op, void *pArg)
{
	struct ppc_file *p = (struct ppc_file *)f;

	if (op == SQLITE_FCNTL_PRAGMA && p->sh && p->sh->fallback) {
		char **a = pArg;

		if (!sqlite3_stricmp(a[1], "ppcache_stats")) {
			a[0] = sqlite3_mprintf("mode fallback-wal");
			return SQLITE_OK;
		}
		if (!sqlite3_strnicmp(a[1], "ppcache_", 8)) {
			a[0] = sqlite3_mprintf("ppcache: %s is open with "
					       "fallback=wal (no qNVRAM)",
					       p->sh->path);
			return SQLITE_ERROR;
		}
	}
	return ORIGFILE(f)->pMethods->xFileControl(ORIGFILE(f), op, pArg);
}

static int passSectorSize(sqlite3_file *f)
{
	return ORIGFILE(f)->pMethods->xSectorSize(ORIGFILE(f));
}

static int passDeviceCharacteristics(sqlite3_file *f)
{
	return ORIGFILE(f)->pMethods->xDeviceCharacteristics(ORIGFILE(f));
}

static int passShmMap(sqlite3_file *f, int iPg, int pgsz, int bExtend,
		      void volatile **pp)
{
	const sqlite3_io_methods *m = ORIGFILE(f)->pMethods;

	if (m->iVersion < 2 || !m->xShmMap)
		return SQLITE_IOERR_SHMMAP;
	return m->xShmMap(ORIGFILE(f), iPg, pgsz, bExtend, pp);
}

static int passShmLock(sqlite3_file *f, int offset, int n, int flags)
{
	return ORIGFILE(f)->pMethods->xShmLock(ORIGFILE(f), offset, n, flags);
}

static void passShmBarrier(sqlite3_file *f)
{
	ORIGFILE(f)->pMethods->xShmBarrier(ORIGFILE(f));
}

static int passShmUnmap(sqlite3_file *f, int deleteFlag)
{
	return ORIGFILE(f)->pMethods->xShmUnmap(ORIGFILE(f), deleteFlag);
}

static int passFetch(sqlite3_file *f, sqlite3_int64 iOfst, int iAmt,
		     void **pp)
{
	const sqlite3_io_methods *m = ORIGFILE(f)->pMethods;

	if (m->iVersion < 3 || !m->xFetch) {
		*pp = 0;
		return SQLITE_OK;
	}
	return m->xFetch(ORIGFILE(f), iOfst, iAmt, pp);
}

static int passUnfetch(sqlite3_file *f, sqlite3_int64 iOfst, void *pPage)
{
	const sqlite3_io_methods *m = ORIGFILE(f)->pMethods;

	if (m->iVersion < 3 || !m->xUnfetch)
		return SQLITE_OK;
	return m->xUnfetch(ORIGFILE(f), iOfst, pPage);
}

/* --- VFS methods -------------------------------------------------------- */

/* Non-zero if the file at @path starts with a non-zero byte: a hot journal. */
static int ppc_journal_is_hot(const char *path)
{
	unsigned char b[8];
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (ppc_pread_full(fd, b, sizeof(b), 0, &got) < 0)
		got = 0;
	close(fd);
	return got > 0 && !ppc_all_zero(b, got);
}

/*
 * A rollback journal: in memory, unless the database is in fallback mode
 * or a hot journal of stock SQLite is on disk (rolled back for real).
 */
static int ppc_open_journal(sqlite3_vfs *pVfs, sqlite3_filename zName,
			    sqlite3_file *pFile, int flags, int *pOutFlags)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	sqlite3_vfs *lower = ORIGVFS(pVfs);
	struct ppc_shared *sh = ppc_shared_find_journal(zName);
	int rc;

	memset(p, 0, sizeof(*p));
	if ((sh && sh->fallback) ||
	    ((!sh || sh->disk_journal) && ppc_journal_is_hot(zName))) {
		rc = lower->xOpen(lower, zName, ORIGFILE(p), flags, pOutFlags);
		if (rc != SQLITE_OK) {
			if (ORIGFILE(p)->pMethods)
				ORIGFILE(p)->pMethods->xClose(ORIGFILE(p));
			if (sh)
				ppc_shared_put(sh);
			return rc;
		}
		if (sh && sh->rgn) {
			pthread_mutex_lock(&sh->mu);
			sh->real_journals++;
			pthread_mutex_unlock(&sh->mu);
		}
		p->sh = sh;
		p->base.pMethods = &ppc_pass_io;
		return SQLITE_OK;
	}
	p->sh = sh;
	p->base.pMethods = &ppc_memj_io;
	if (pOutFlags)
		*pOutFlags = flags;
	return SQLITE_OK;
}

static int ppcOpen(sqlite3_vfs *pVfs, sqlite3_filename zName,
		   sqlite3_file *pFile, int flags, int *pOutFlags)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	sqlite3_vfs *lower = ORIGVFS(pVfs);
	struct ppc_opts o;
	struct ppc_shared *sh = NULL;
	const char *fb;
	sqlite3_int64 v;
	int rc;

	if ((flags & SQLITE_OPEN_MAIN_JOURNAL) && zName)
		return ppc_open_journal(pVfs, zName, pFile, flags, pOutFlags);
	if (!(flags & SQLITE_OPEN_MAIN_DB) || !zName ||
	    (flags & SQLITE_OPEN_DELETEONCLOSE))
		return lower->xOpen(lower, zName, pFile, flags, pOutFlags);

	memset(p, 0, sizeof(*p));
	rc = lower->xOpen(lower, zName, ORIGFILE(p), flags, pOutFlags);
	if (rc != SQLITE_OK) {
		if (ORIGFILE(p)->pMethods)
			ORIGFILE(p)->pMethods->xClose(ORIGFILE(p));
		return rc;
	}
	memset(&o, 0, sizeof(o));
	v = sqlite3_uri_int64(zName, "threshold", PPCACHE_DEFAULT_THRESHOLD);
	o.threshold = v < 0 ? -1 : v > INT_MAX ? INT_MAX : (int)v;
	v = sqlite3_uri_int64(zName, "max_pages", PPCACHE_DEFAULT_MAX_PAGES);
	o.max_pages = v < PPC_MIN_SLOTS ? PPC_MIN_SLOTS :
		v > PPC_MAX_SLOTS ? PPC_MAX_SLOTS : (uint32_t)v;
	o.writethrough = sqlite3_uri_boolean(zName, "writethrough", 0);
	fb = sqlite3_uri_parameter(zName, "fallback");
	o.fallback = fb && !sqlite3_stricmp(fb, "wal");
	o.readonly = !!(flags & SQLITE_OPEN_READONLY);

	rc = ppc_shared_get(zName, &o, &sh);
	if (rc != SQLITE_OK) {
		ORIGFILE(p)->pMethods->xClose(ORIGFILE(p));
		return rc;
	}
	p->sh = sh;
	p->threshold = o.threshold;
	p->writethrough = o.writethrough;
	memcpy(p->jmode, "delete", sizeof("delete"));
	p->base.pMethods = sh->fallback ? &ppc_pass_io : &ppc_db_io;
	return SQLITE_OK;
}

/*
 * The registry entry of the ppcache database whose rollback journal or WAL
 * is @zName, if no such file of it can be on disk: the journal is one of
 * our memory files, and a ppcache database never has a WAL (open refused
 * or converted one). Then no system call is needed. A reference is taken.
 */
static struct ppc_shared *ppc_memory_journal_of(const char *zName)
{
	struct ppc_shared *sh = ppc_shared_find_journal(zName);
	size_t n = strlen(zName);

	if (sh && (sh->fallback || (sh->disk_journal &&
				    strcmp(zName + n - 4, "-wal") != 0))) {
		ppc_shared_put(sh);
		sh = NULL;
	}
	return sh;
}

/* A memory journal is never on disk: deleting it is not an error. */
static int ppcDelete(sqlite3_vfs *pVfs, const char *zName, int syncDir)
{
	struct ppc_shared *sh = ppc_memory_journal_of(zName);
	int rc;

	if (sh) {
		ppc_shared_put(sh);
		return SQLITE_OK;
	}
	rc = ORIGVFS(pVfs)->xDelete(ORIGVFS(pVfs), zName, syncDir);
	if (rc == SQLITE_IOERR_DELETE_NOENT)
		rc = SQLITE_OK;
	if (rc == SQLITE_OK && (sh = ppc_shared_find_journal(zName))) {
		sh->disk_journal = 0;
		ppc_shared_put(sh);
	}
	return rc;
}

static int ppcAccess(sqlite3_vfs *pVfs, const char *zName, int flags,
		     int *pResOut)
{
	struct ppc_shared *sh = ppc_memory_journal_of(zName);

	if (sh) {
		ppc_shared_put(sh);
		*pResOut = 0;
		return SQLITE_OK;
	}
	return ORIGVFS(pVfs)->xAccess(ORIGVFS(pVfs), zName, flags, pResOut);
}

static int ppcFullPathname(sqlite3_vfs *pVfs, const char *zName, int nOut,
			   char *zOut)
{
	return ORIGVFS(pVfs)->xFullPathname(ORIGVFS(pVfs), zName, nOut, zOut);
}

static void *ppcDlOpen(sqlite3_vfs *pVfs, const char *zPath)
{
	return ORIGVFS(pVfs)->xDlOpen(ORIGVFS(pVfs), zPath);
}

static void ppcDlError(sqlite3_vfs *pVfs, int nByte, char *zErrMsg)
{
	ORIGVFS(pVfs)->xDlError(ORIGVFS(pVfs), nByte, zErrMsg);
}

static void (*ppcDlSym(sqlite3_vfs *pVfs, void *p, const char *zSym))(void)
{
	return ORIGVFS(pVfs)->xDlSym(ORIGVFS(pVfs), p, zSym);
}

static void ppcDlClose(sqlite3_vfs *pVfs, void *pHandle)
{
	ORIGVFS(pVfs)->xDlClose(ORIGVFS(pVfs), pHandle);
}

static int ppcRandomness(sqlite3_vfs *pVfs, int nByte, char *zBufOut)
{
	return ORIGVFS(pVfs)->xRandomness(ORIGVFS(pVfs), nByte, zBufOut);
}

static int ppcSleep(sqlite3_vfs *pVfs, int nMicro)
{
	return ORIGVFS(pVfs)->xSleep(ORIGVFS(pVfs), nMicro);
}

static int ppcCurrentTime(sqlite3_vfs *pVfs, double *pTimeOut)
{
	return ORIGVFS(pVfs)->xCurrentTime(ORIGVFS(pVfs), pTimeOut);
}

static int ppcGetLastError(sqlite3_vfs *pVfs, int a, char *b)
{
	return ORIGVFS(pVfs)->xGetLastError(ORIGVFS(pVfs), a, b);
}

static int ppcCurrentTimeInt64(sqlite3_vfs *pVfs, sqlite3_int64 *p)
{
	sqlite3_vfs *o = ORIGVFS(pVfs);
	double r;
	int rc;

	if (o->iVersion >= 2 && o->xCurrentTimeInt64)
		return o->xCurrentTimeInt64(o, p);
	rc = o->xCurrentTime(o, &r);
	*p = (sqlite3_int64)(r * 86400000.0);
	return rc;
}

static int ppcSetSystemCall(sqlite3_vfs *pVfs, const char *zName,
			    sqlite3_syscall_ptr pCall)
{
	return ORIGVFS(pVfs)->xSetSystemCall(ORIGVFS(pVfs), zName, pCall);
}

static sqlite3_syscall_ptr ppcGetSystemCall(sqlite3_vfs *pVfs,
					    const char *zName)
{
	return ORIGVFS(pVfs)->xGetSystemCall(ORIGVFS(pVfs), zName);
}

static const char *ppcNextSystemCall(sqlite3_vfs *pVfs, const char *zName)
{
	return ORIGVFS(pVfs)->xNextSystemCall(ORIGVFS(pVfs), zName);
}

/* --- Registration ------------------------------------------------------- */

/*
 * Auto-extension: a connection whose main database opened in fallback mode
 * (no qNVRAM) is switched to WAL, as fallback=wal promises.
 */
static int ppc_autoext(sqlite3 *db, char **pzErrMsg,
		       const sqlite3_api_routines *pApi)
{
	sqlite3_file *f = NULL;
	int rc;

	(void)pzErrMsg;
	(void)pApi;
	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) !=
	    SQLITE_OK || !f || f->pMethods != &ppc_pass_io)
		return SQLITE_OK;
	rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		sqlite3_log(rc, "ppcache: fallback=wal: journal_mode=WAL: %s",
			    sqlite3_errmsg(db));
	return SQLITE_OK;
}

static int ppc_register(int make_default)
{
	sqlite3_vfs *lower;
	int rc;

	if (sqlite3_vfs_find(PPCACHE_VFS_NAME)) {
		if (make_default)
			return sqlite3_vfs_register(&ppc_vfs, 1);
		return SQLITE_OK;
	}
	lower = sqlite3_vfs_find("unix");
	if (!lower)
		lower = sqlite3_vfs_find(NULL);
	if (!lower)
		return SQLITE_ERROR;
	ppc_vfs.iVersion = lower->iVersion < 3 ? lower->iVersion : 3;
	ppc_vfs.szOsFile = (int)sizeof(struct ppc_file) + lower->szOsFile;
	ppc_vfs.mxPathname = lower->mxPathname;
	ppc_vfs.pAppData = lower;
	rc = sqlite3_vfs_register(&ppc_vfs, make_default);
	if (rc == SQLITE_OK)
		rc = sqlite3_auto_extension((void (*)(void))ppc_autoext);
	return rc;
}

#ifdef SQLITE_PPCACHE_STATIC
PPC_EXPORT int sqlite3_ppcache_register(int make_default)
{
	return ppc_register(make_default);
}
#else
PPC_EXPORT int sqlite3_ppcache_init(sqlite3 *db, char **pzErrMsg,
				    const sqlite3_api_routines *pApi)
{
	int rc;

	(void)db;
	(void)pzErrMsg;
	SQLITE_EXTENSION_INIT2(pApi);
	rc = ppc_register(0);
	return rc == SQLITE_OK ? SQLITE_OK_LOAD_PERMANENTLY : rc;
}

PPC_EXPORT int sqlite3_ppcache_default_init(sqlite3 *db, char **pzErrMsg,
					    const sqlite3_api_routines *pApi)
{
	int rc;

	(void)db;
	(void)pzErrMsg;
	SQLITE_EXTENSION_INIT2(pApi);
	rc = ppc_register(1);
	return rc == SQLITE_OK ? SQLITE_OK_LOAD_PERMANENTLY : rc;
}
#endif
