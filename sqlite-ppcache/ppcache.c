/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
** ppcache: a persistent page cache for SQLite in qNVRAM, with LazyFlush.
**
** This file implements a VFS shim named "ppcache" over a lower VFS ("unix"
** unless told otherwise). Each database file gets a region of qNVRAM (see
** libqnvram/qnvram.h): reserved DRAM that survives an app kill and a warm
** reboot and that the kernel writes to flash when the power key is held.
** Pages written by a transaction are kept in the region as PENDING; at the
** commit point they become COMMITTED in one atomic step (a checksummed
** commit record and a persist barrier). Committed pages reach the database
** file only when more than "threshold" of them are dirty: then LazyFlush
** writes them in place and syncs once. A commit therefore writes no journal
** and calls no fsync. The idea and the numbers are from Luo et al.,
** "qNVRAM: quasi Non-Volatile RAM for Low Overhead Persistency Enforcement
** in Smartphones" (HotStorage'14), "pPCache" and "LazyFlush".
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
**   sqlite3_ppcache_register_over(name, make_default) puts the shim over
**   another lower VFS (SQLite's test VFSes, say); its name is then
**   "ppcache-<name>".
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
**                   sync; the written slots stay (committed, so a crash
**                   still replays them) until one sync frees them: when
**                   they fill half the region, when room is needed, at
**                   PRAGMA ppcache_flush and at the last close. Default 0.
**     max_pages=N   the region's cap, page slots (default 8192). The region
**                   starts at 256 slots and doubles while a transaction
**                   fills it with pending pages; a transaction that needs
**                   more than N pages fails with SQLITE_FULL.
**     fallback=wal  where no region can be had (no /dev/qnvram, no room,
**                   over quota), open the database through the lower VFS
**                   instead and switch the connection to journal_mode=WAL.
**                   Without it such an open fails with SQLITE_CANTOPEN,
**                   leaves no file behind, and sqlite3_log() says why.
**
**   Pragmas (through SQLITE_FCNTL_PRAGMA, on a ppcache database):
**
**     PRAGMA ppcache_threshold[=N];    the connection's threshold
**     PRAGMA ppcache_writethrough[=0|1];  the connection's writethrough
**     PRAGMA ppcache_stats;            one line of counters (ppc_stats_text)
**     PRAGMA ppcache_flush;            write every committed page now
**
**   journal_mode: DELETE, TRUNCATE, PERSIST, MEMORY and OFF all commit
**   through the region; the rollback journal lives in memory. WAL is
**   refused, however it is asked for (pragma, ATTACH, a -wal file).
**
**   Other processes: ppcache processes share a database as SQLite
**   processes do (SQLite's own locks on the lower file; SQLITE_BUSY and
**   the busy handler). Stock SQLite cannot read the file while its newest
**   commits live only in qNVRAM: the file carries a fence (header byte 19,
**   the read version, is 0x50), so stock SQLite says "file is not a
**   database" instead of returning old data or overwriting new. The last
**   close of the last process flushes the region, removes the fence and
**   frees the region.
**
**   The ppcache(1) tool shows, exports or discards a database's region:
**   sqlite3_ppcache_show(), _export() and _discard() below.
**
** VERIFICATION
**
**   make -C tests/unit check runs test_ppcache and test_ppcache_diff over a
**   file-backed stand-in for libqnvram; make sqlite-tests runs SQLite's own
**   TCL suite with ppcache as the default VFS; tests/vm/guest/ppcache-*
**   run it on qnvram.ko through kills, warm reboots and power cuts.
**
** IMPLEMENTATION NOTES
**
**   Region (format 2), little-endian: a 4 KiB header block: the static
**   header (magic, page size, capacity, epoch, the file's identity
**   {filesystem id, inode, birth time, owner uid}, a random salt, CRC-32),
**   two commit records {seq, txn, db_bytes, base, fenced, CRC-32} in cache
**   lines of their own, counters, and a "live" line (a generation number
**   that every change bumps, so other processes know to re-read); then one
**   16-byte metadata entry {txn, pgno, state} per slot, then the slots'
**   page bytes. Committed means txn <= the newest valid record's txn.
**
**   A region belongs to a file, not a path: its name is a hash of the
**   file's (filesystem id, inode) under the file owner's uid, so a hard
**   link, a rename or a bind mount finds it. It replays only onto the
**   state of the file it was made for: the record keeps the file's size
**   and change counter at the last sync ("base"), and the file's fence
**   carries the region's salt (header bytes 72..79, reserved by SQLite).
**   Any mismatch refuses the open, leaving file and region as they are.
**
**   Everything that changes the region happens under SQLite's EXCLUSIVE
**   lock (SQLite writes the database only there), so readers of any
**   process see a stable region while they hold SHARED.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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

/*
 * Crash points for the host tests (tests/unit, built with
 * -DPPCACHE_TEST_HOOKS): the test's ppc_test_hook() may kill the process
 * at a named step. Nothing in other builds.
 */
#ifdef PPCACHE_TEST_HOOKS
void ppc_test_hook(const char *step);
# define PPC_HOOK(step)	ppc_test_hook(step)
#else
# define PPC_HOOK(step)	do { } while (0)
#endif

/* --- Region format ------------------------------------------------------ */

#define PPC_MAGIC		"PPCACHE2"	/* a valid region */
#define PPC_BUILD		"PPCBUILD"	/* being formatted or grown */
#define PPC_VERSION		2U
#define PPC_HDR_BYTES		(4U * 1024)	/* header block, one page */
#define PPC_ALIGN		(4U * 1024)	/* meta and data start on pages */
#define PPC_PATH_BYTES		2048U		/* path prefix, for people only */
#define PPC_REC_OFF		2560U		/* commit records, one line each */
#define PPC_STATS_OFF		(PPC_REC_OFF + 2U * 64)
#define PPC_LIVE_OFF		(PPC_STATS_OFF + 2U * 64)
#define PPC_LINE		64U		/* cache line, bytes */
#define PPC_SLOT_FREE		0U
#define PPC_SLOT_USED		0x44455355U	/* "USED": never a stray zero */
#define PPC_ALT_BIT		0x80000000U	/* a grown region's other name */
#define PPC_PROBES		4		/* name pairs tried on collisions */
#define PPC_INITIAL_SLOTS	256U		/* 1 MiB of 4 KiB pages */
#define PPC_MIN_SLOTS		8U
#define PPC_MAX_SLOTS		(1U << 24)
#define PPC_MIN_PAGE		512U
#define PPC_MAX_PAGE		65536U
#define PPC_DEFAULT_PAGE	4096U
#define PPC_PROBE_MAGIC		0x7fffffffU	/* "is qNVRAM there?" lookup */

/*
 * The fence in the database file's header: the read version (byte 19) above
 * 2 makes stock SQLite refuse the file ("file is not a database"); the
 * write version (byte 18) too, for good measure; the salt goes into bytes
 * 72..79, which SQLite reserves and writes as zero. ppcache hides all of it.
 */
#define PPC_FENCE_BYTE		0x50U
#define PPC_FH_WRITE_VER	18U
#define PPC_FH_READ_VER		19U
#define PPC_FH_COUNTER		24U		/* file change counter, BE32 */
#define PPC_FH_SALT		72U
#define PPC_FH_BYTES		100U		/* SQLite's file header */

/* The static part of the header: written once per format or growth. */
struct ppc_hdr {
	char magic[8];		/* PPC_MAGIC, stored last */
	uint32_t version;
	uint32_t page_size;	/* bytes per slot */
	uint32_t capacity;	/* slots */
	uint32_t owner_uid;	/* the file's owner: the region's uid */
	uint64_t epoch;		/* bumped by each growth */
	uint64_t meta_off;	/* byte offset of the slot metadata */
	uint64_t data_off;	/* byte offset of slot 0's page */
	uint64_t region_bytes;	/* bytes the layout needs */
	uint64_t fsid;		/* statfs f_fsid, or st_dev where it is 0 */
	uint64_t ino;		/* st_ino */
	int64_t btime_sec;	/* birth time, 0 where the fs has none */
	uint32_t btime_nsec;
	uint32_t path_len;	/* strlen of the realpath when made */
	uint64_t salt;		/* random; the file's fence carries it */
	char path[PPC_PATH_BYTES];	/* realpath prefix, NUL padded */
	uint32_t cksum;		/* CRC-32 of the bytes above but the magic */
};

/*
 * A commit record: txn is committed with the database at db_bytes; the
 * file was last synced at base_bytes with change counter base_counter, and
 * carries the fence if fenced. seq orders the records (a flush rewrites the
 * record with the same txn), so a torn one leaves the previous one valid.
 */
struct ppc_rec {
	uint64_t seq;
	uint64_t txn;
	uint64_t db_bytes;
	uint64_t base_bytes;
	uint32_t base_counter;
	uint32_t fenced;
	uint32_t cksum;		/* CRC-32 of the fields above */
	uint32_t pad;
	uint64_t unused[2];	/* fills the cache line */
};

/* Counters, kept in the region so they survive a crash. */
struct ppc_stats {
	uint64_t commits;
	uint64_t pages_written;	/* page writes taken into slots */
	uint64_t pages_flushed;	/* pages written into the file */
	uint64_t flushes;	/* LazyFlush runs that wrote or truncated */
	uint64_t fsyncs_saved;	/* xSync calls served by a persist barrier */
	uint64_t recoveries;	/* opens that found committed pages left */
	uint64_t growths;
	uint64_t rollbacks;	/* transactions whose pending pages were dropped */
	uint64_t syncs;		/* file syncs made by flushes and fences */
	uint64_t unused[7];	/* fills the second cache line */
};

/* Shared among processes, not crash-relevant: who must re-read. */
struct ppc_live {
	uint64_t gen;		/* bumped by every change of the region */
	uint32_t moved;		/* superseded by a grown copy */
	uint32_t pad;
	uint64_t unused[6];
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
_Static_assert(sizeof(struct ppc_live) == PPC_LINE, "live: one line");
_Static_assert(PPC_LIVE_OFF + PPC_LINE <= PPC_HDR_BYTES, "header block");
_Static_assert(sizeof(struct ppc_meta) == 16, "meta entry is 16 bytes");

/* What a region says about itself, for the file being opened. */
enum ppc_class {
	PPC_ABSENT,	/* no region by that name */
	PPC_SCRAP,	/* not valid (blank, being built, torn): holds no data */
	PPC_OURS,	/* valid and this file's */
	PPC_STALE,	/* valid, this inode's, but an older file's (birth time) */
	PPC_FOREIGN,	/* valid and another file's, or unreadable */
};

/* What identifies the database file. */
struct ppc_id {
	uint64_t fsid;
	uint64_t ino;
	int64_t btime_sec;
	uint32_t btime_nsec;
	uint32_t uid;		/* owner */
};

/* The file's header as it matters to the fence. */
struct ppc_fhdr {
	uint64_t bytes;		/* file size */
	int sqlite;		/* starts with "SQLite format 3" */
	int fenced;		/* carries a ppcache fence */
	uint64_t salt;		/* the fence's salt */
	uint32_t counter;	/* change counter */
};

/*
 * How the database file is reached: through a connection's lower file
 * (the VFS), or a plain descriptor (the ppcache tool, outside SQLite).
 */
struct ppc_io {
	sqlite3_file *lf;
	int fd;
};

/* --- In-process state --------------------------------------------------- */

struct ppc_file;

/*
 * One per database file and process, shared by its connections. The
 * registry lock protects next, nref and nconn; mu protects everything from
 * it down. Lock order: registry, then mu. The region changes only under
 * SQLite's EXCLUSIVE lock on the file, held by one connection of one
 * process (see ppc_txn_begin()).
 */
struct ppc_shared {
	struct ppc_shared *next;
	int nref;		/* files using the entry (with journals) */
	int nconn;		/* main-database connections among them */
	dev_t dev;
	ino_t ino;
	char *path;		/* realpath when opened (messages) */
	char *name;		/* the name SQLite opened it by */
	char **alias;		/* other names (hard links, other mounts) */
	int nalias;
	int fallback;		/* no region: the WAL pass-through */
	pid_t pid;		/* the process that made the entry */
	struct ppc_id id;

	pthread_mutex_t mu;
	struct ppc_file *mjs;	/* memory journals open on it (mu) */
	int real_journals;	/* hot journals open through the lower VFS */
	int disk_journal;	/* one was opened and not yet deleted */
	int refused;		/* SQLite error code once the check failed */
	int checked;		/* file and region checked against each other */

	/* the region */
	uint32_t uid, magic;
	uint32_t mapped;	/* magic while mapped, else 0 (atomic) */
	unsigned char *rgn;
	size_t rgn_len;
	struct ppc_hdr *hdr;
	struct ppc_rec *rec;	/* [2] */
	struct ppc_stats *st;
	struct ppc_live *live;
	struct ppc_meta *meta;
	unsigned char *data;
	uint32_t ps, cap, max_pages;
	int loaded;		/* the index below reflects the mapped region */
	uint64_t gen_seen;	/* live->gen this process's index reflects */
	int gc_ok;		/* free list valid for writing at gen_seen */

	/* the committed state (from the newest record) */
	uint64_t seq;
	uint64_t txn;		/* newest committed transaction */
	uint64_t db_bytes;	/* logical file size it committed */
	uint64_t base_bytes;	/* the file's size at its last sync */
	uint32_t base_counter;	/* its change counter then */
	int fenced;		/* the record says the file carries the fence */
	int fence_on;		/* this process saw or wrote the fence */
	uint32_t ncommitted;	/* committed slots not yet synced to the file */
	uint32_t nwritten;	/* of those, written to the file, not synced */
	uint8_t *written;	/* [cap] committed and written, not synced */
	int flush_due;		/* a LazyFlush waits for the next write */

	/* index: pgno -> slots, chained per bucket; free slot stack */
	int32_t *bucket;
	uint32_t nbucket;	/* a power of two */
	int32_t *chain;		/* [cap] */
	uint32_t *freel;	/* [cap] */
	uint32_t nfree;
	uint32_t idx_cap;	/* slots the arrays here and below have */

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
 * An open file of the VFS. For the main database and pass-through files the
 * lower VFS's file follows this struct in the same allocation (ORIGFILE); a
 * memory journal uses the mj_* fields and no lower file.
 */
struct ppc_file {
	sqlite3_file base;
	struct ppc_shared *sh;	/* database (or its journal's database) */
	int threshold;		/* main db: LazyFlush threshold, -1 never */
	int writethrough;	/* main db: flushes write, sync later */
	int lock;		/* main db: SQLITE_LOCK_* held on the lower file */
	int readonly;		/* main db: opened read-only */
	sqlite3_vfs *lower;	/* main db: the VFS below */
	sqlite3_filename zName;	/* main db: as opened (valid until xClose) */
	unsigned char *mj_buf;	/* memory journal bytes */
	sqlite3_int64 mj_size;
	sqlite3_int64 mj_alloc;
	struct ppc_file *mj_next;	/* the database's memory journals */
};

#define ORIGVFS(p)	((sqlite3_vfs *)((p)->pAppData))
#define ORIGFILE(p)	((sqlite3_file *)(((struct ppc_file *)(p)) + 1))

_Static_assert(sizeof(struct ppc_file) % 8 == 0, "lower file alignment");

/* Write transactions open in this process, over every database. */
static int ppc_open_txns;

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
static int memj_write_locked(struct ppc_file *, const void *, int,
			     sqlite3_int64);
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

/* The VFS template; each registration copies it (one per lower VFS). */
static const sqlite3_vfs ppc_vfs_template = {
	3,			/* iVersion (set from the lower VFS) */
	0,			/* szOsFile (set when registered) */
	1024,			/* mxPathname (set from the lower VFS) */
	0,			/* pNext */
	PPCACHE_VFS_NAME,	/* zName (set when registered) */
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
	ppcClose,		/* xClose: last one flushes, unfences, frees */
	ppcRead,		/* xRead: own pending, committed, then the file */
	ppcWrite,		/* xWrite: into a pending slot */
	ppcTruncate,		/* xTruncate: the logical size only */
	ppcSync,		/* xSync: persist barrier, no fsync */
	ppcFileSize,		/* xFileSize: the logical size */
	ppcLock,		/* xLock: lower file; SHARED re-reads the region */
	ppcUnlock,		/* xUnlock: a drop to SHARED ends a rollback */
	ppcCheckReservedLock,	/* xCheckReservedLock: lower file */
	ppcFileControl,		/* xFileControl: commit point, pragmas */
	ppcSectorSize,		/* xSectorSize: lower file */
	ppcDeviceCharacteristics, /* xDeviceCharacteristics: lower file */
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

/* --- Helpers: checksums, persistence, layout ---------------------------- */

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

static uint32_t ppc_fnv32(const void *buf, size_t n)
{
	const unsigned char *p = buf;
	uint32_t h = 0x811c9dc5U;

	while (n--) {
		h ^= *p++;
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
	return ppc_crc32(r, offsetof(struct ppc_rec, cksum));
}

/* Over everything but the magic, which sealing changes. */
static uint32_t ppc_hdr_sum(const struct ppc_hdr *h)
{
	return ppc_crc32((const char *)h + sizeof(h->magic),
			 offsetof(struct ppc_hdr, cksum) - sizeof(h->magic));
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

static uint32_t ppc_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint64_t ppc_le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* a <= b in serial-number arithmetic (change counters wrap). */
static int ppc_serial_le(uint32_t a, uint32_t b)
{
	return (int32_t)(b - a) >= 0;
}

/* Bump the generation other processes compare with; mu held, EXCLUSIVE. */
static void ppc_gen_bump(struct ppc_shared *sh)
{
	uint64_t g = __atomic_add_fetch(&sh->live->gen, 1, __ATOMIC_RELEASE);

	sh->gen_seen = g;
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

	if (!sh->rgn || !sh->loaded)
		return -1;
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
	uint32_t nb = 16, keep;
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
	/* sh->cap may be the new region's already: the arrays are idx_cap */
	keep = sh->idx_cap < cap ? sh->idx_cap : cap;
	if (sh->npend)
		memcpy(pend, sh->pend, (sh->npend < keep ? sh->npend : keep) *
		       sizeof(*pend));
	if (sh->dirty)
		memcpy(dirty, sh->dirty, keep);
	if (sh->written)
		memcpy(written, sh->written, keep);
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
	sh->idx_cap = cap;
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

/*
 * File I/O goes through the connection's lower sqlite3_file, so SQLite's
 * test VFSes (crash, fault injection, tracing) see every read, write and
 * sync; the tool uses a descriptor.
 */
static int ppc_io_read(const struct ppc_io *io, void *buf, size_t n,
		       uint64_t off)
{
	size_t done = 0;
	int rc;

	if (io->lf) {
		rc = io->lf->pMethods->xRead(io->lf, buf, (int)n,
					     (sqlite3_int64)off);
		return rc == SQLITE_IOERR_SHORT_READ ? SQLITE_OK : rc;
	}
	while (done < n) {
		ssize_t r = pread(io->fd, (char *)buf + done, n - done,
				  (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return SQLITE_IOERR_READ;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	memset((char *)buf + done, 0, n - done);
	return SQLITE_OK;
}

static int ppc_io_write(const struct ppc_io *io, const void *buf, size_t n,
			uint64_t off)
{
	size_t done = 0;

	if (io->lf)
		return io->lf->pMethods->xWrite(io->lf, buf, (int)n,
						(sqlite3_int64)off);
	while (done < n) {
		ssize_t r = pwrite(io->fd, (const char *)buf + done, n - done,
				   (off_t)(off + done));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return SQLITE_IOERR_WRITE;
		done += (size_t)r;
	}
	return SQLITE_OK;
}

static int ppc_io_size(const struct ppc_io *io, uint64_t *bytes)
{
	struct stat st;
	sqlite3_int64 sz;
	int rc;

	if (io->lf) {
		rc = io->lf->pMethods->xFileSize(io->lf, &sz);
		if (rc == SQLITE_OK)
			*bytes = (uint64_t)sz;
		return rc;
	}
	if (fstat(io->fd, &st) < 0)
		return SQLITE_IOERR_FSTAT;
	*bytes = (uint64_t)st.st_size;
	return SQLITE_OK;
}

static int ppc_io_truncate(const struct ppc_io *io, uint64_t bytes)
{
	if (io->lf)
		return io->lf->pMethods->xTruncate(io->lf,
						   (sqlite3_int64)bytes);
	return ftruncate(io->fd, (off_t)bytes) ? SQLITE_IOERR_TRUNCATE :
		SQLITE_OK;
}

/* Sync the file: data only, or with its metadata (size, inode) if @full. */
static int ppc_io_sync(const struct ppc_io *io, int full)
{
	if (io->lf)
		return io->lf->pMethods->xSync(io->lf, full ? SQLITE_SYNC_NORMAL :
					       SQLITE_SYNC_NORMAL |
					       SQLITE_SYNC_DATAONLY);
	if ((full ? fsync(io->fd) : fdatasync(io->fd)) < 0)
		return SQLITE_IOERR_FSYNC;
	return SQLITE_OK;
}

/* fsync the directory holding @path: its entry for the file is durable. */
static int ppc_sync_dir(const char *path)
{
	char *dir = strdup(path), *slash;
	int fd, rc = 0;

	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		strcpy(dir, ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fsync(fd) < 0)
		rc = -1;
	if (fd >= 0)
		close(fd);
	free(dir);
	return rc;
}

/* Read the file's header as far as the fence is concerned. */
static int ppc_fhdr_read(const struct ppc_io *io, struct ppc_fhdr *fh)
{
	unsigned char h[PPC_FH_BYTES];
	int rc;

	memset(fh, 0, sizeof(*fh));
	rc = ppc_io_size(io, &fh->bytes);
	if (rc != SQLITE_OK)
		return rc;
	rc = ppc_io_read(io, h, sizeof(h), 0);
	if (rc != SQLITE_OK)
		return rc;
	fh->sqlite = !memcmp(h, "SQLite format 3", 16);
	fh->fenced = fh->sqlite && h[PPC_FH_WRITE_VER] == PPC_FENCE_BYTE &&
		     h[PPC_FH_READ_VER] == PPC_FENCE_BYTE;
	fh->salt = fh->fenced ? ppc_le64(h + PPC_FH_SALT) : 0;
	fh->counter = ppc_be32(h + PPC_FH_COUNTER);
	if (fh->fenced)
		fh->counter = ~fh->counter;	/* the fence inverts it */
	return SQLITE_OK;
}

/*
 * Bytes [@off, @off + @n) of @buf go to the file: if @on, put the fence
 * with @salt over the header bytes they cover (@buf holds SQLite's own);
 * else take it off (@buf holds fenced bytes). The fence also inverts the
 * change counter, so a stock connection that cached the database before
 * the fence sees the file change and re-reads page 1 (and the fence).
 */
static void ppc_fence_put(unsigned char *buf, uint64_t off, size_t n,
			  int on, uint64_t salt)
{
	unsigned char f[PPC_FH_BYTES];
	uint64_t i;

	if (off >= PPC_FH_BYTES)
		return;
	memset(f, 0, sizeof(f));
	f[PPC_FH_WRITE_VER] = on ? PPC_FENCE_BYTE : 1;
	f[PPC_FH_READ_VER] = on ? PPC_FENCE_BYTE : 1;
	if (on)
		memcpy(f + PPC_FH_SALT, &salt, sizeof(salt));
	for (i = off; i < off + n && i < PPC_FH_BYTES; i++) {
		if (i == PPC_FH_WRITE_VER || i == PPC_FH_READ_VER ||
		    (i >= PPC_FH_SALT && i < PPC_FH_SALT + 8))
			buf[i - off] = f[i];
		else if (i >= PPC_FH_COUNTER && i < PPC_FH_COUNTER + 4)
			buf[i - off] ^= 0xffU;
	}
}

/* Bytes [@off, @off + @n) read from a fenced file: show SQLite its own. */
static void ppc_fence_hide(unsigned char *buf, uint64_t off, size_t n)
{
	ppc_fence_put(buf, off, n, 0, 0);
}

/*
 * Read the bytes of the file, zero past its end, any fence hidden: where
 * the read shows the version bytes they decide, else what this process
 * knows. A fence write that failed may have landed all the same, so this
 * does not trust what ppcache believes it wrote; and a ppcache database's
 * own bytes there are always 1, 1 and zeros (it is never in WAL format).
 */
static int ppc_read_file(const struct ppc_shared *sh, const struct ppc_io *io,
			 void *buf, size_t n, uint64_t off)
{
	unsigned char *b = buf;
	int rc = ppc_io_read(io, buf, n, off);
	int fenced = sh->fence_on;

	if (rc != SQLITE_OK || off >= PPC_FH_BYTES)
		return rc;
	if (off <= PPC_FH_READ_VER && off + n > PPC_FH_READ_VER)
		fenced = b[PPC_FH_READ_VER - off] == PPC_FENCE_BYTE;
	if (fenced)
		ppc_fence_hide(buf, off, n);
	return rc;
}

/* Write bytes of a committed page into the file, the fence kept on. */
static int ppc_write_file(const struct ppc_shared *sh, const struct ppc_io *io,
			  const unsigned char *src, size_t n, uint64_t off)
{
	unsigned char h[PPC_FH_BYTES];
	size_t k;
	int rc;

	if (off >= PPC_FH_BYTES || !sh->fence_on)
		return ppc_io_write(io, src, n, off);
	k = n < PPC_FH_BYTES - off ? n : PPC_FH_BYTES - off;
	memcpy(h, src, k);
	ppc_fence_put(h, off, k, 1, sh->hdr->salt);
	rc = ppc_io_write(io, h, k, off);
	if (rc == SQLITE_OK && n > k)
		rc = ppc_io_write(io, src + k, n - k, off + k);
	return rc;
}

/*
 * Take the fence off the file's header, in one write (never half a fence),
 * if the file's bytes carry one: they decide, not what a process believes
 * (a fence write reported failed may have landed). No sync.
 */
static int ppc_fence_remove(const struct ppc_io *io)
{
	unsigned char h[PPC_FH_BYTES];
	int rc = ppc_io_read(io, h, sizeof(h), 0);

	if (rc != SQLITE_OK || h[PPC_FH_READ_VER] != PPC_FENCE_BYTE)
		return rc;
	ppc_fence_hide(h, 0, sizeof(h));
	return ppc_io_write(io, h, sizeof(h), 0);
}

/* --- Helpers: records and the committed state --------------------------- */

static const struct ppc_rec *ppc_newest_rec(const unsigned char *rgn)
{
	const struct ppc_rec *r = (const struct ppc_rec *)(rgn + PPC_REC_OFF);
	const struct ppc_rec *best = NULL;
	int i;

	for (i = 0; i < 2; i++) {
		if (r[i].cksum != ppc_rec_sum(&r[i]) || !r[i].seq)
			continue;
		if (!best || r[i].seq > best->seq)
			best = &r[i];
	}
	return best;
}

/*
 * Write the record that makes the state in @sh durable: the other slot
 * than the newest, persisted, so a torn write leaves the previous state.
 */
static void ppc_rec_write(struct ppc_shared *sh)
{
	struct ppc_rec *r = &sh->rec[(sh->seq + 1) & 1];

	r->seq = sh->seq + 1;
	r->txn = sh->txn;
	r->db_bytes = sh->db_bytes;
	r->base_bytes = sh->base_bytes;
	r->base_counter = sh->base_counter;
	r->fenced = (uint32_t)sh->fenced;
	r->cksum = ppc_rec_sum(r);
	ppc_persist(r, sizeof(*r));
	sh->seq++;
}

/* The change counter the committed state's page 1 carries. */
static uint32_t ppc_committed_counter(const struct ppc_shared *sh)
{
	int32_t s = ppc_idx_find(sh, 1, 0);

	if (s < 0 || sh->ps < PPC_FH_BYTES)
		return sh->base_counter;
	return ppc_be32(ppc_slot_data(sh, (uint32_t)s) + PPC_FH_COUNTER);
}

/* Whether the region holds committed state that the file lacks. */
static int ppc_holds_changes(const struct ppc_shared *sh)
{
	return sh->rgn && (sh->ncommitted || sh->db_bytes != sh->base_bytes);
}

/* --- Helpers: flush, commit, rollback ----------------------------------- */

/*
 * Write every committed page not yet in the file into it (no sync) and set
 * the file to the committed size; the slots stay committed, marked written.
 * Every byte written is committed: the file is never ahead of the region.
 * Called with mu held, under EXCLUSIVE.
 */
static int ppc_write_committed(struct ppc_shared *sh, const struct ppc_io *io,
			       uint32_t *nwrote)
{
	uint64_t fbytes;
	uint32_t s, n = 0;
	int rc;

	for (s = 0; s < sh->cap; s++) {
		uint64_t off;
		size_t len;

		if (!ppc_is_committed(sh, s) || sh->written[s])
			continue;
		off = (uint64_t)(sh->meta[s].pgno - 1) * sh->ps;
		if (off < sh->db_bytes) {
			len = sh->db_bytes - off < sh->ps ?
				sh->db_bytes - off : sh->ps;
			rc = ppc_write_file(sh, io, ppc_slot_data(sh, s), len,
					    off);
			if (rc != SQLITE_OK) {
				sqlite3_log(rc, "ppcache: flush of %s: write "
					    "failed", sh->path);
				return rc;
			}
			n++;
		}
		sh->written[s] = 1;
		sh->nwritten++;
	}
	rc = ppc_io_size(io, &fbytes);
	if (rc != SQLITE_OK)
		return rc;
	if (fbytes != sh->db_bytes) {
		rc = ppc_io_truncate(io, sh->db_bytes);
		if (rc != SQLITE_OK) {
			sqlite3_log(rc, "ppcache: flush of %s: truncate failed",
				    sh->path);
			return rc;
		}
	}
	sh->st->pages_flushed += n;
	*nwrote = n;
	return SQLITE_OK;
}

/*
 * LazyFlush: write the newest committed copy of every dirty page into the
 * file, set its size to the committed size, sync, record the file's new
 * base, then free those slots. A crash at any point leaves slots that a
 * later flush writes again. Called with mu held, under EXCLUSIVE.
 */
static int ppc_flush_locked(struct ppc_shared *sh, const struct ppc_io *io,
			    uint32_t *nflushed)
{
	uint32_t s, n = 0;
	int rc;

	if (nflushed)
		*nflushed = 0;
	if (!sh->rgn || !ppc_holds_changes(sh))
		return SQLITE_OK;
	ppc_gen_bump(sh);
	rc = ppc_write_committed(sh, io, &n);
	if (rc != SQLITE_OK)
		return rc;
	rc = ppc_io_sync(io, 0);
	if (rc != SQLITE_OK) {
		sqlite3_log(rc, "ppcache: flush of %s: sync failed", sh->path);
		return rc;
	}
	sh->base_bytes = sh->db_bytes;
	sh->base_counter = ppc_committed_counter(sh);
	ppc_rec_write(sh);
	for (s = 0; s < sh->cap; s++)
		if (ppc_is_committed(sh, s))
			ppc_slot_free(sh, s);
	sh->ncommitted = 0;
	sh->flush_due = 0;
	sh->st->syncs++;
	if (n)
		sh->st->flushes++;
	ppc_stats_persist(sh);
	if (nflushed)
		*nflushed = n;
	return SQLITE_OK;
}

/*
 * LazyFlush when more than @p's threshold of committed pages are not yet
 * in the file. With writethrough the flush only writes them; one sync
 * frees the written slots once they fill half the region (or room is
 * needed, or at the last close). Called with mu held, under EXCLUSIVE.
 */
static void ppc_lazyflush_locked(struct ppc_shared *sh, const struct ppc_file *p)
{
	struct ppc_io io = { ORIGFILE(p), -1 };
	uint32_t n;
	int rc = SQLITE_OK;

	if (p->threshold < 0 ||
	    sh->ncommitted - sh->nwritten <= (uint32_t)p->threshold)
		return;
	if (!p->writethrough) {
		rc = ppc_flush_locked(sh, &io, NULL);
	} else {
		ppc_gen_bump(sh);
		rc = ppc_write_committed(sh, &io, &n);
		if (rc == SQLITE_OK && n) {
			sh->st->flushes++;
			ppc_stats_persist(sh);
		}
		if (rc == SQLITE_OK && sh->nwritten > sh->cap / 2)
			rc = ppc_flush_locked(sh, &io, NULL);
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

/* Free @p's pending slots: its transaction rolled back. mu, EXCLUSIVE. */
static void ppc_drop_pending(struct ppc_shared *sh, struct ppc_file *p)
{
	uint32_t i;


	if (sh->owner != p)
		return;
	if (sh->npend)
		ppc_gen_bump(sh);
	for (i = 0; i < sh->npend; i++)
		ppc_slot_free(sh, sh->pend[i]);
	if (sh->npend) {
		sh->st->rollbacks++;
		ppc_stats_persist(sh);
	}
	sh->npend = 0;
	sh->owner = NULL;
	sh->pend_bytes = sh->db_bytes;
	__atomic_sub_fetch(&ppc_open_txns, 1, __ATOMIC_RELAXED);
}

/*
 * Put the fence on the file before the first commit that the file will
 * lack, and make the file's existence durable: sync it with its metadata
 * and its directory once, here, not per commit. A file shorter than
 * SQLite's header (a new database) gets the header of the page 1 being
 * committed, fenced: stock SQLite then sees a database it may not read.
 * Called with mu held, under EXCLUSIVE, before the commit record.
 */
static int ppc_fence_file(struct ppc_shared *sh, struct ppc_file *p)
{
	struct ppc_io io = { ORIGFILE(p), -1 };
	struct ppc_fhdr fh;
	unsigned char h[PPC_FH_BYTES];
	uint32_t counter;
	int32_t s;
	int rc;

	rc = ppc_fhdr_read(&io, &fh);
	if (rc != SQLITE_OK)
		return rc;
	if (fh.bytes >= PPC_FH_BYTES) {
		rc = ppc_io_read(&io, h, sizeof(h), 0);
		if (rc == SQLITE_OK && fh.fenced)
			ppc_fence_hide(h, 0, sizeof(h));	/* a retry */
	} else {
		s = ppc_idx_find(sh, 1, 1);
		if (s < 0)
			s = ppc_idx_find(sh, 1, 0);
		if (s < 0 || sh->ps < PPC_FH_BYTES)
			return SQLITE_OK;	/* no page 1: nothing to fence */
		memcpy(h, ppc_slot_data(sh, (uint32_t)s), sizeof(h));
	}
	if (rc != SQLITE_OK)
		return rc;
	counter = ppc_be32(h + PPC_FH_COUNTER);
	ppc_fence_put(h, 0, sizeof(h), 1, sh->hdr->salt);
	rc = ppc_io_write(&io, h, sizeof(h), 0);
	if (rc == SQLITE_OK)
		rc = ppc_io_sync(&io, 1);
	if (rc != SQLITE_OK) {
		/* it may be on disk all the same: harmless (no commit needs
		 * it yet), and the next commit writes it again */
		sqlite3_log(rc, "ppcache: %s: cannot fence the file", sh->path);
		return rc;
	}
	if (ppc_sync_dir(sh->path) < 0) {
		sqlite3_log(SQLITE_IOERR_DIR_FSYNC, "ppcache: %s: cannot sync "
			    "its directory: %s", sh->path, strerror(errno));
		return SQLITE_IOERR_DIR_FSYNC;
	}
	sh->fence_on = 1;
	sh->fenced = 1;
	if (fh.bytes < PPC_FH_BYTES) {
		/* that header is no data: the logical size stays */
		sh->base_bytes = sh->db_bytes;
		sh->base_counter = counter;
	}
	sh->st->syncs++;
	return SQLITE_OK;
}

/*
 * The commit point: persist what is pending, fence the file if it is not
 * yet, write and persist the commit record, then free the copies it
 * superseded and the pages past the end. mu held, under EXCLUSIVE.
 */
static int ppc_commit_locked(struct ppc_shared *sh, struct ppc_file *p)
{
	uint64_t old_bytes = sh->db_bytes;
	uint32_t i, nold = 0, s;
	int rc;


	if (sh->owner != p)
		return SQLITE_OK;
	if (!sh->npend && sh->pend_bytes == sh->db_bytes) {
		sh->owner = NULL;
		__atomic_sub_fetch(&ppc_open_txns, 1, __ATOMIC_RELAXED);
		return SQLITE_OK;
	}
	ppc_persist_pending(sh);
	if (!sh->fenced) {
		rc = ppc_fence_file(sh, p);
		if (rc != SQLITE_OK)
			return rc;
	}
	for (i = 0; i < sh->npend; i++) {
		int32_t old = ppc_idx_find(sh, sh->meta[sh->pend[i]].pgno, 0);

		if (old >= 0)
			sh->scratch[nold++] = (uint32_t)old;
	}

	sh->txn++;
	sh->db_bytes = sh->pend_bytes;
	ppc_rec_write(sh);

	for (i = 0; i < nold; i++)
		ppc_slot_free(sh, sh->scratch[i]);
	sh->ncommitted += sh->npend - nold;
	for (i = 0; i < sh->npend; i++)
		sh->dirty[sh->pend[i]] = 0;
	sh->npend = 0;
	sh->owner = NULL;
	__atomic_sub_fetch(&ppc_open_txns, 1, __ATOMIC_RELAXED);
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
	ppc_gen_bump(sh);
	sh->st->commits++;
	ppc_stats_persist(sh);
	return SQLITE_OK;
}

/* --- Helpers: the region ------------------------------------------------ */

static void ppc_region_point(struct ppc_shared *sh, unsigned char *rgn,
			     size_t len, uint32_t magic)
{
	__atomic_store_n(&sh->mapped, magic, __ATOMIC_RELEASE);
	if (rgn != sh->rgn)
		sh->loaded = 0;		/* ppc_view_load() builds the index */
	sh->rgn = rgn;
	sh->rgn_len = len;
	sh->magic = magic;
	sh->hdr = (struct ppc_hdr *)rgn;
	sh->rec = (struct ppc_rec *)(rgn + PPC_REC_OFF);
	sh->st = (struct ppc_stats *)(rgn + PPC_STATS_OFF);
	sh->live = (struct ppc_live *)(rgn + PPC_LIVE_OFF);
	sh->meta = (struct ppc_meta *)(rgn + sh->hdr->meta_off);
	sh->data = rgn + sh->hdr->data_off;
	sh->ps = sh->hdr->page_size;
	sh->cap = sh->hdr->capacity;
}

static void ppc_region_forget(struct ppc_shared *sh)
{
	__atomic_store_n(&sh->mapped, 0, __ATOMIC_RELEASE);
	sh->loaded = 0;
	sh->rgn = NULL;
	sh->rgn_len = 0;
	sh->hdr = NULL;
	sh->rec = NULL;
	sh->st = NULL;
	sh->live = NULL;
	sh->meta = NULL;
	sh->data = NULL;
	sh->cap = 0;
	sh->ncommitted = 0;
	sh->nwritten = 0;
	sh->nfree = 0;
	sh->gc_ok = 0;
}

static uint64_t ppc_new_salt(void)
{
	uint64_t s = 0;

	sqlite3_randomness(sizeof(s), &s);
	return s ? s : 1;
}

/*
 * Write the static header of a region laid out for @cap slots of @ps bytes
 * for file @id. It is written under PPC_BUILD first; @magic (PPC_MAGIC)
 * goes last, so a torn header never looks valid.
 */
static void ppc_hdr_write(unsigned char *rgn, const struct ppc_id *id,
			  const char *path, uint64_t salt, uint32_t ps,
			  uint32_t cap, uint64_t epoch, const char *magic)
{
	struct ppc_hdr h, *dst = (struct ppc_hdr *)rgn;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, magic, sizeof(h.magic));
	h.version = PPC_VERSION;
	h.page_size = ps;
	h.capacity = cap;
	h.owner_uid = id->uid;
	h.epoch = epoch;
	h.meta_off = PPC_HDR_BYTES;
	h.data_off = PPC_HDR_BYTES + ppc_meta_bytes(cap);
	h.region_bytes = ppc_layout_bytes(cap, ps);
	h.fsid = id->fsid;
	h.ino = id->ino;
	h.btime_sec = id->btime_sec;
	h.btime_nsec = id->btime_nsec;
	h.path_len = (uint32_t)strlen(path);
	h.salt = salt;
	strncpy(h.path, path, sizeof(h.path) - 1);
	h.cksum = ppc_hdr_sum(&h);

	memset(dst->magic, 0, sizeof(dst->magic));
	ppc_persist(dst->magic, sizeof(dst->magic));
	memcpy((char *)dst + sizeof(h.magic), (char *)&h + sizeof(h.magic),
	       sizeof(h) - sizeof(h.magic));
	ppc_persist(dst, sizeof(h));
	memcpy(dst->magic, h.magic, sizeof(h.magic));
	ppc_persist(dst->magic, sizeof(dst->magic));
}

/* Turn a PPC_BUILD header into a valid one: the magic, stored last. */
static void ppc_hdr_seal(unsigned char *rgn)
{
	struct ppc_hdr *dst = (struct ppc_hdr *)rgn;

	memcpy(dst->magic, PPC_MAGIC, sizeof(dst->magic));
	ppc_persist(dst->magic, sizeof(dst->magic));
}

/* The identity a valid header carries. */
static void ppc_hdr_id(const struct ppc_hdr *h, struct ppc_id *id)
{
	memset(id, 0, sizeof(*id));
	id->fsid = h->fsid;
	id->ino = h->ino;
	id->btime_sec = h->btime_sec;
	id->btime_nsec = h->btime_nsec;
	id->uid = h->owner_uid;
}

static int ppc_hdr_valid(const struct ppc_hdr *h, size_t len)
{
	return len >= PPC_HDR_BYTES && !memcmp(h->magic, PPC_MAGIC, 8) &&
	       h->version == PPC_VERSION && h->cksum == ppc_hdr_sum(h) &&
	       ppc_valid_page_size(h->page_size) && h->capacity &&
	       h->meta_off == PPC_HDR_BYTES &&
	       h->data_off == PPC_HDR_BYTES + ppc_meta_bytes(h->capacity) &&
	       h->region_bytes == ppc_layout_bytes(h->capacity, h->page_size) &&
	       h->region_bytes <= len;
}

/*
 * Only a valid header can hold committed data (a commit needs one), so a
 * region without one is scrap: blank, being built, or torn while built.
 */
static enum ppc_class ppc_classify(const unsigned char *rgn, size_t len,
				   const struct ppc_id *id)
{
	const struct ppc_hdr *h = (const struct ppc_hdr *)rgn;

	if (len < PPC_HDR_BYTES)
		return PPC_FOREIGN;
	if (memcmp(h->magic, PPC_MAGIC, 8) != 0)
		return PPC_SCRAP;
	if (!ppc_hdr_valid(h, len))
		return PPC_FOREIGN;	/* a valid magic went bad: keep it */
	if (h->fsid != id->fsid || h->ino != id->ino)
		return PPC_FOREIGN;
	if (h->btime_sec && id->btime_sec &&
	    (h->btime_sec != id->btime_sec || h->btime_nsec != id->btime_nsec))
		return PPC_STALE;
	return PPC_OURS;
}

#define PPC_SUPERSEDED	"superseded by a grown copy"

/*
 * Why a region of class @cls found among a file's names (not the one in
 * use, which must be older if @cls is PPC_OURS) may be freed, or NULL to
 * keep it: a stale one always; scrap and older copies only with @gc (the
 * caller holds EXCLUSIVE, so nobody is building one now).
 */
static const char *ppc_leftover_why(enum ppc_class cls, int gc)
{
	switch (cls) {
	case PPC_STALE:
		return "it was an older file's at this inode";
	case PPC_SCRAP:
		return gc ? "a format or growth that did not finish" : NULL;
	case PPC_OURS:
		return gc ? PPC_SUPERSEDED : NULL;
	default:
		return NULL;
	}
}

static uint32_t ppc_name_hash(const struct ppc_id *id)
{
	uint64_t k[2] = { id->fsid, id->ino };

	return ppc_fnv32(k, sizeof(k)) & 0x7fffffffU;
}

static uint32_t ppc_probe_magic(uint32_t h, int i)
{
	return ((h + (uint32_t)i - 1U) % 0x7fffffffU) + 1U;
}

static pthread_mutex_t ppc_reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ppc_shared *ppc_reg;

/*
 * Whether a connection of this process maps region (@uid, @magic): such a
 * region is never freed from here (qnvm_free() would unmap it under it).
 * Called with the registry lock held (it keeps the list).
 */
static int ppc_mapped_here(uint32_t uid, uint32_t magic)
{
	const struct ppc_shared *e;

	for (e = ppc_reg; e; e = e->next)
		if (e->uid == uid &&
		    __atomic_load_n(&e->mapped, __ATOMIC_ACQUIRE) == magic)
			return 1;
	return 0;
}

/*
 * Free region (@uid, @name): only scrap, a superseded or stale copy of
 * this file's region, never a valid region of another file and never one
 * this process maps; another process that maps it keeps it (EBUSY).
 * Takes the registry lock: callers may hold an entry's mu, never it.
 */
static void ppc_free_leftover(uint32_t uid, uint32_t name, const char *why,
			      const char *path)
{
	int freed = 0;

	pthread_mutex_lock(&ppc_reg_mu);
	if (!ppc_mapped_here(uid, name))
		freed = qnvm_free(uid, name) == 0;
	pthread_mutex_unlock(&ppc_reg_mu);
	if (freed)
		sqlite3_log(SQLITE_NOTICE, "ppcache: %s: freed qNVRAM region "
			    "%08x (%s)", path, name, why);
}

/*
 * Find file @id's region: the valid one with the highest epoch among all
 * its names (a growth moves to the other name of its pair, or to another
 * pair while a superseded copy holds that one), or none (*@magic set to
 * the first free pair for a new one; 0 if every pair is taken). With @gc
 * (the caller holds EXCLUSIVE, so no other process can be building or
 * growing it) leftovers are freed. Stale regions (an older file at this
 * inode) are freed always. Return 0 with *@addr set (or NULL), or an
 * errno value: ENODEV, EPERM, ...
 */
static int ppc_region_find(const struct ppc_id *id, const char *path, int gc,
			   unsigned char **addr, size_t *len, uint32_t *magic)
{
	uint32_t h = ppc_name_hash(id), first_free = 0, best_m = 0;
	unsigned char *best = NULL;
	size_t best_l = 0;
	int i, k;

	*addr = NULL;
	*len = 0;
	*magic = 0;
	for (i = 0; i < PPC_PROBES; i++) {
		uint32_t name[2];
		unsigned char *a[2] = { NULL, NULL };
		size_t l[2] = { 0, 0 };
		enum ppc_class cls[2];
		int pick = -1;

		name[0] = ppc_probe_magic(h, i);
		name[1] = name[0] | PPC_ALT_BIT;
		for (k = 0; k < 2; k++) {
			a[k] = qnvm_retrieve(id->uid, name[k], &l[k]);
			if (!a[k] && errno != ENOENT) {
				int err = errno;

				if (k && a[0])
					qnvm_unmap(a[0]);
				return err;
			}
			cls[k] = a[k] ? ppc_classify(a[k], l[k], id) :
				PPC_ABSENT;
		}
		for (k = 0; k < 2; k++) {
			if (cls[k] == PPC_OURS &&
			    (pick < 0 || ((struct ppc_hdr *)a[k])->epoch >
			     ((struct ppc_hdr *)a[pick])->epoch))
				pick = k;
		}
		for (k = 0; k < 2; k++) {
			const char *why;

			if (k == pick || !a[k])
				continue;
			why = ppc_leftover_why(cls[k], gc);
			qnvm_unmap(a[k]);
			a[k] = NULL;
			if (why) {
				ppc_free_leftover(id->uid, name[k], why, path);
				cls[k] = PPC_ABSENT;
			}
		}
		if (pick >= 0 && best &&
		    ((struct ppc_hdr *)a[pick])->epoch <=
		    ((struct ppc_hdr *)best)->epoch) {
			/* an older copy in another pair (a tie is kept) */
			int older = ((struct ppc_hdr *)a[pick])->epoch <
				((struct ppc_hdr *)best)->epoch;

			qnvm_unmap(a[pick]);
			if (gc && older)
				ppc_free_leftover(id->uid, name[pick],
						  PPC_SUPERSEDED, path);
		} else if (pick >= 0) {
			if (best) {
				qnvm_unmap(best);
				if (gc)
					ppc_free_leftover(id->uid, best_m,
							  PPC_SUPERSEDED, path);
			}
			best = a[pick];
			best_l = l[pick];
			best_m = name[pick];
		}
		if (!first_free && pick < 0 && cls[0] != PPC_FOREIGN &&
		    cls[1] != PPC_FOREIGN)
			first_free = name[0];
	}
	if (best) {
		*addr = best;
		*len = best_l;
		*magic = best_m;
		return 0;
	}
	*magic = first_free;
	return 0;
}

/*
 * Make file @id's region with @want slots of @ps bytes at name @magic (or
 * its other half, if scrap someone else maps holds it): zeroed by qNVRAM,
 * built under PPC_BUILD, sealed last. Return the mapping or NULL (errno).
 */
static unsigned char *ppc_region_create(const struct ppc_id *id,
					const char *path, uint32_t magic,
					uint32_t ps, uint32_t want,
					size_t *len, uint32_t *made)
{
	unsigned char *rgn = NULL;
	uint32_t cap;
	int k;

	for (k = 0; k < 2 && !rgn; k++) {
		*made = k ? magic | PPC_ALT_BIT : magic;
		rgn = qnvm_alloc(id->uid, *made, ppc_layout_bytes(want, ps), 0,
				 len);
		if (!rgn && errno != EEXIST)
			return NULL;
	}
	if (!rgn)
		return NULL;
	cap = ppc_fit_slots(*len, ps, want);
	ppc_hdr_write(rgn, id, path, ppc_new_salt(), ps, cap, 1, PPC_BUILD);
	ppc_hdr_seal(rgn);
	return rgn;
}

/*
 * Take the region's committed state into this process: the newest record,
 * the newest committed copy of each page, the index. With @gc (EXCLUSIVE
 * held) also free what a crashed or rolled back writer left (slots of
 * transactions that never committed, older duplicates) and stack the free
 * slots; without it the region is only read. Return SQLITE_OK, the file's
 * I/O error, or SQLITE_NOMEM.
 */
static int ppc_view_load(struct ppc_shared *sh, const struct ppc_io *io,
			 int gc)
{
	const struct ppc_rec *r;
	struct ppc_fhdr fh;
	uint32_t s;
	int rc;

	sh->loaded = 0;
	rc = ppc_fhdr_read(io, &fh);
	if (rc != SQLITE_OK)
		return rc;
	ppc_region_point(sh, sh->rgn, sh->rgn_len, sh->magic);
	r = ppc_newest_rec(sh->rgn);
	if (r) {
		sh->seq = r->seq;
		sh->txn = r->txn;
		sh->db_bytes = r->db_bytes;
		sh->base_bytes = r->base_bytes;
		sh->base_counter = r->base_counter;
		sh->fenced = (int)r->fenced;
	} else {
		sh->seq = 0;
		sh->txn = 0;
		sh->fenced = 0;
	}
	if (!r || !r->fenced) {
		/* the file is all there is; a fenced header alone is no data */
		sh->db_bytes = fh.fenced && fh.bytes < PPC_MIN_PAGE ? 0 :
			fh.bytes;
		sh->base_bytes = sh->db_bytes;
		sh->base_counter = fh.counter;
	}
	sh->fence_on = fh.fenced && fh.salt == sh->hdr->salt;
	if (ppc_idx_alloc(sh, sh->cap) < 0)
		return SQLITE_NOMEM;
	memset(sh->bucket, 0xff, sh->nbucket * sizeof(*sh->bucket));
	memset(sh->written, 0, sh->cap);
	sh->loaded = 1;		/* the scan below finds duplicates in it */
	sh->nfree = 0;
	sh->ncommitted = 0;
	sh->nwritten = 0;
	for (s = sh->cap; s-- > 0;) {
		struct ppc_meta *m = &sh->meta[s];
		int32_t old;

		if (m->state != PPC_SLOT_USED || m->txn > sh->txn ||
		    m->pgno == 0) {
			if (gc && m->state != PPC_SLOT_FREE) {
				m->state = PPC_SLOT_FREE;
				ppc_persist(m, sizeof(*m));
			}
			if (gc || m->state == PPC_SLOT_FREE)
				sh->freel[sh->nfree++] = s;
			continue;
		}
		old = ppc_idx_find(sh, m->pgno, 0);
		if (old >= 0 && sh->meta[old].txn >= m->txn) {
			if (gc) {
				m->state = PPC_SLOT_FREE;
				ppc_persist(m, sizeof(*m));
				sh->freel[sh->nfree++] = s;
			}
			continue;
		}
		if (old >= 0) {
			ppc_idx_del(sh, (uint32_t)old);
			sh->ncommitted--;
			if (gc) {
				sh->meta[old].state = PPC_SLOT_FREE;
				ppc_persist(&sh->meta[old],
					    sizeof(sh->meta[old]));
				sh->freel[sh->nfree++] = (uint32_t)old;
			}
		}
		ppc_idx_add(sh, s);
		sh->ncommitted++;
	}
	sh->gen_seen = __atomic_load_n(&sh->live->gen, __ATOMIC_ACQUIRE);
	sh->gc_ok = gc;
	return SQLITE_OK;
}

/*
 * Check that the file is the one the region's committed pages belong on:
 * while the region holds changes the file must carry this region's fence
 * (so nobody but ppcache wrote it) at a change counter between the last
 * sync's and the committed one's; a file with another region's fence, or
 * with a fence and no region, belongs elsewhere. Return SQLITE_OK, or
 * SQLITE_CANTOPEN after a log line that names the file and the reason.
 */
static int ppc_check_file(struct ppc_shared *sh, const struct ppc_io *io)
{
	struct ppc_fhdr fh;
	const char *why = NULL;
	char detail[160] = "";
	uint32_t hi;
	int rc;

	rc = ppc_fhdr_read(io, &fh);
	if (rc != SQLITE_OK)
		return rc;
	if (!sh->rgn) {
		if (fh.fenced)
			why = "its newest transactions are in a qNVRAM region "
			      "that is not there (the pool was lost, or this "
			      "is a copy or a move of the file, or it belongs "
			      "to another uid)";
	} else if (ppc_holds_changes(sh)) {
		hi = ppc_committed_counter(sh);
		if (!fh.fenced) {
			why = "the file lost its fence: a program other than "
			      "ppcache wrote it while its newest transactions "
			      "were in qNVRAM";
		} else if (fh.salt != sh->hdr->salt) {
			why = "the file carries the fence of another qNVRAM "
			      "region (a copy of another database?)";
		} else if (!ppc_serial_le(sh->base_counter, fh.counter) ||
			   !ppc_serial_le(fh.counter, hi)) {
			why = "the file is not in the state the region was "
			      "made for (restored from a copy?)";
			snprintf(detail, sizeof(detail), ": change counter "
				 "%u, expected %u..%u", fh.counter,
				 sh->base_counter, hi);
		} else if (fh.bytes >= PPC_MIN_PAGE &&
			   (fh.bytes < (sh->base_bytes < sh->db_bytes ?
					sh->base_bytes : sh->db_bytes) ||
			    fh.bytes > (sh->base_bytes > sh->db_bytes ?
					sh->base_bytes : sh->db_bytes))) {
			/* a flush leaves it between the two, never outside */
			why = "the file was truncated or extended by a program "
			      "other than ppcache";
			snprintf(detail, sizeof(detail), ": %llu bytes, "
				 "expected %llu..%llu",
				 (unsigned long long)fh.bytes,
				 (unsigned long long)sh->base_bytes,
				 (unsigned long long)sh->db_bytes);
		}
	} else if (fh.fenced && fh.salt != sh->hdr->salt) {
		why = "the file carries the fence of another qNVRAM region";
	}
	if (!why)
		return SQLITE_OK;
	sqlite3_log(SQLITE_CANTOPEN, "ppcache: refusing %s: %s%s; file and "
		    "region are left as they are (see `ppcache show`)",
		    sh->path, why, detail);
	return SQLITE_CANTOPEN;
}

/*
 * Whether the region at @name (of @sh's uid) is a leftover of this file
 * that can go: scrap (a format or growth that did not finish) or a copy
 * older than the one mapped. It is freed unless someone maps it (another
 * process that has not yet seen the move keeps it). mu held, EXCLUSIVE.
 */
static int ppc_reclaim_name(struct ppc_shared *sh, uint32_t name)
{
	const char *why;
	enum ppc_class cls;
	unsigned char *a;
	size_t l;

	a = qnvm_retrieve(sh->uid, name, &l);
	if (!a)
		return 0;
	cls = ppc_classify(a, l, &sh->id);
	why = cls == PPC_OURS &&
		((struct ppc_hdr *)a)->epoch >= sh->hdr->epoch ? NULL :
		ppc_leftover_why(cls, 1);
	qnvm_unmap(a);
	if (why)
		ppc_free_leftover(sh->uid, name, why, sh->path);
	return why != NULL;
}

/*
 * Allocate @need bytes for the grown copy of @sh's region: at the other
 * name of its pair, or, while a leftover someone still maps holds that
 * name (an idle process that has not seen an earlier growth), at a free
 * name of another of the file's pairs. *@made gets the name. Return the
 * mapping, or NULL with errno (EEXIST: every name is held). mu held,
 * EXCLUSIVE.
 */
static unsigned char *ppc_alloc_copy(struct ppc_shared *sh, size_t need,
				     size_t *len, uint32_t *made)
{
	uint32_t h = ppc_name_hash(&sh->id), name;
	unsigned char *rgn;
	int i;

	for (i = -1; i < 2 * PPC_PROBES; i++) {
		if (i < 0)
			name = sh->magic ^ PPC_ALT_BIT;
		else
			name = ppc_probe_magic(h, i / 2) |
				(i % 2 ? PPC_ALT_BIT : 0);
		if (name == sh->magic || (i >= 0 &&
					  name == (sh->magic ^ PPC_ALT_BIT)))
			continue;
		rgn = qnvm_alloc(sh->uid, name, need, 0, len);
		if (!rgn && errno == EEXIST && ppc_reclaim_name(sh, name))
			rgn = qnvm_alloc(sh->uid, name, need, 0, len);
		if (rgn) {
			*made = name;
			return rgn;
		}
		if (errno != EEXIST)
			return NULL;
	}
	errno = EEXIST;
	return NULL;
}

/*
 * Move the region to a new name (ppc_alloc_copy()) with @newcap slots of
 * @newps bytes: build it under PPC_BUILD, copy (the slots too when the page
 * size stays; a new page size needs an empty region), persist, seal, mark
 * the old one moved, switch, free the old one (another process that still
 * maps it frees it when it sees "moved"). A crash at any point leaves the
 * old region valid beside a scrap or superseded copy that the next writer
 * frees. mu held, EXCLUSIVE.
 */
static int ppc_rebuild_locked(struct ppc_shared *sh, uint32_t newcap,
			      uint32_t newps)
{
	uint32_t newmagic = 0, oldmagic = sh->magic;
	uint32_t oldcap = sh->cap;
	unsigned char *rgn, *old = sh->rgn;
	size_t len = 0, need = ppc_layout_bytes(newcap, newps);
	struct ppc_id id;
	struct ppc_hdr *oh = sh->hdr;
	char path[PPC_PATH_BYTES];

	rgn = ppc_alloc_copy(sh, need, &len, &newmagic);
	if (!rgn) {
		sqlite3_log(SQLITE_FULL, "ppcache: %s: cannot grow the qNVRAM "
			    "region to %u pages of %u bytes: %s", sh->path,
			    newcap, newps, strerror(errno));
		return SQLITE_FULL;
	}
	if (ppc_idx_alloc(sh, newcap) < 0) {
		qnvm_free(sh->uid, newmagic);
		return SQLITE_NOMEM;
	}
	ppc_hdr_id(oh, &id);
	memcpy(path, oh->path, sizeof(path));
	path[sizeof(path) - 1] = 0;
	ppc_hdr_write(rgn, &id, path, oh->salt, newps, newcap, oh->epoch + 1,
		      PPC_BUILD);
	memcpy(rgn + PPC_REC_OFF, old + PPC_REC_OFF,
	       PPC_HDR_BYTES - PPC_REC_OFF);
	if (newps == sh->ps) {
		memcpy(rgn + PPC_HDR_BYTES, sh->meta,
		       (size_t)oldcap * sizeof(*sh->meta));
		memcpy(rgn + PPC_HDR_BYTES + ppc_meta_bytes(newcap), sh->data,
		       (size_t)oldcap * sh->ps);
	}
	ppc_persist(rgn + PPC_REC_OFF, len - PPC_REC_OFF);
	PPC_HOOK("grow-built");
	ppc_hdr_seal(rgn);
	PPC_HOOK("grow-sealed");

	__atomic_store_n(&sh->live->moved, 1, __ATOMIC_RELEASE);
	ppc_gen_bump(sh);
	PPC_HOOK("grow-moved");
	ppc_region_point(sh, rgn, len, newmagic);
	ppc_idx_rebuild(sh);
	sh->loaded = 1;
	if (newps == sh->ps)
		sh->st->growths++;
	ppc_stats_persist(sh);
	ppc_gen_bump(sh);
	if (qnvm_free(sh->uid, oldmagic) < 0)
		qnvm_unmap(old);
	return SQLITE_OK;
}

/* Double the region, up to max_pages. mu held, EXCLUSIVE. */
static int ppc_grow_locked(struct ppc_shared *sh)
{
	uint32_t newcap = sh->cap * 2 > sh->max_pages ? sh->max_pages :
		sh->cap * 2;

	if (newcap <= sh->cap)
		return SQLITE_FULL;
	return ppc_rebuild_locked(sh, newcap, sh->ps);
}

/*
 * Make a free slot for a pending page: flush committed pages or grow the
 * region, as the threshold prefers. mu held, EXCLUSIVE.
 */
static int ppc_make_room(struct ppc_shared *sh, const struct ppc_file *p)
{
	struct ppc_io io = { ORIGFILE(p), -1 };
	int grow_first = sh->cap < sh->max_pages &&
		(p->threshold < 0 || sh->ncommitted <= (uint32_t)p->threshold);
	int rc;

	if (sh->nwritten) {
		/* written already: one sync frees them */
		rc = ppc_flush_locked(sh, &io, NULL);
		if (rc != SQLITE_OK)
			return rc;
		if (sh->nfree)
			return SQLITE_OK;
	}
	if (!grow_first && sh->ncommitted) {
		rc = ppc_flush_locked(sh, &io, NULL);
		if (rc != SQLITE_OK)
			return rc;
		if (sh->nfree)
			return SQLITE_OK;
	}
	if (sh->cap < sh->max_pages) {
		rc = ppc_grow_locked(sh);
		if (rc == SQLITE_OK)
			return rc;
		if (!sh->ncommitted)
			return rc;	/* ppc_grow_locked() said why */
	}
	if (sh->ncommitted) {
		rc = ppc_flush_locked(sh, &io, NULL);
		if (rc != SQLITE_OK)
			return rc;
		if (sh->nfree)
			return SQLITE_OK;
	}
	sqlite3_log(SQLITE_FULL, "ppcache: %s: a transaction needs more than "
		    "%u pages of qNVRAM; raise the URI parameter max_pages",
		    sh->path, sh->max_pages);
	return SQLITE_FULL;
}

/* Re-lay an empty region out for SQLite's page size @ps. mu, EXCLUSIVE. */
static void ppc_reformat_locked(struct ppc_shared *sh, uint32_t ps)
{
	uint32_t want = sh->max_pages < PPC_INITIAL_SLOTS ? sh->max_pages :
		PPC_INITIAL_SLOTS;

	if (ppc_rebuild_locked(sh, want, ps) != SQLITE_OK)
		sqlite3_log(SQLITE_WARNING, "ppcache: %s: region keeps %u-byte "
			    "slots for %u-byte pages", sh->path, sh->ps, ps);
}

/* --- The view of the region: load, check, begin a write ----------------- */

/*
 * Bring this process's view up to date with the region, under a SHARED (or
 * stronger) lock on the file: find the region if there is none yet (another
 * process may have made one), follow a growth, re-read it if another
 * process changed it, and check the file against it the first time and
 * after every change. A refusal sticks to the entry. mu held.
 */
static int ppc_view_sync(struct ppc_shared *sh, struct ppc_file *p)
{
	struct ppc_io io = { ORIGFILE(p), -1 };
	int rc, reload = 0, err;

	if (sh->fallback)
		return SQLITE_OK;
	if (sh->refused)
		return sh->refused;
	if (sh->rgn && __atomic_load_n(&sh->live->moved, __ATOMIC_ACQUIRE)) {
		uint32_t old = sh->magic;

		qnvm_unmap(sh->rgn);
		ppc_region_forget(sh);
		ppc_free_leftover(sh->uid, old, PPC_SUPERSEDED,
				  sh->path);
	}
	if (!sh->rgn) {
		unsigned char *addr;
		size_t len;
		uint32_t magic;
		struct ppc_fhdr fh;

		/*
		 * A region matters to a reader only once a commit fenced the
		 * file: one header read instead of a qNVRAM lookup per lock.
		 */
		rc = ppc_fhdr_read(&io, &fh);
		if (rc != SQLITE_OK)
			return rc;
		if (!fh.fenced && sh->checked) {
			sh->db_bytes = fh.bytes;
			sh->base_bytes = fh.bytes;
			return SQLITE_OK;
		}
		err = ppc_region_find(&sh->id, sh->path, 0, &addr, &len,
				      &magic);
		if (err) {
			sqlite3_log(SQLITE_IOERR, "ppcache: %s: qNVRAM: %s",
				    sh->path, strerror(err));
			return SQLITE_IOERR;
		}
		if (addr) {
			ppc_region_point(sh, addr, len, magic);
			sh->magic = magic;
			reload = 1;
		}
	}
	if (sh->rgn && (reload || !sh->checked || !sh->loaded ||
			__atomic_load_n(&sh->live->gen, __ATOMIC_ACQUIRE) !=
			sh->gen_seen)) {
		rc = ppc_view_load(sh, &io, 0);
		if (rc != SQLITE_OK)
			return rc;
		reload = 1;
	}
	if (!sh->rgn) {
		/* no region: the file is the database; it may have changed */
		rc = ppc_io_size(&io, &sh->db_bytes);
		if (rc != SQLITE_OK)
			return rc;
		sh->base_bytes = sh->db_bytes;
	}
	if (!sh->checked || reload || !sh->rgn) {
		rc = ppc_check_file(sh, &io);
		if (rc != SQLITE_OK) {
			sh->refused = rc;
			return rc;
		}
		if (!sh->checked && ppc_holds_changes(sh)) {
			sh->st->recoveries++;
			ppc_stats_persist(sh);
			sqlite3_log(SQLITE_NOTICE_RECOVER_ROLLBACK,
				    "ppcache: %s: recovered %u committed pages "
				    "in qNVRAM that the file lacks (txn %llu)",
				    sh->path,
				    sh->ncommitted,
				    (unsigned long long)sh->txn);
		}
		sh->checked = 1;
	}
	return SQLITE_OK;
}

/* The page size to start with: the file's, or SQLite's default. */
static uint32_t ppc_guess_page_size(const struct ppc_io *io)
{
	unsigned char h[PPC_FH_BYTES];
	uint32_t ps;

	if (ppc_io_read(io, h, sizeof(h), 0) != SQLITE_OK ||
	    memcmp(h, "SQLite format 3", 16) != 0)
		return PPC_DEFAULT_PAGE;
	ps = (uint32_t)h[16] << 8 | h[17];
	if (ps == 1)
		ps = 65536;
	return ppc_valid_page_size(ps) ? ps : PPC_DEFAULT_PAGE;
}

/*
 * Make this file's region: the first write transaction of a database that
 * has none. Under EXCLUSIVE nobody else can be making it. mu held.
 */
static int ppc_region_make(struct ppc_shared *sh, struct ppc_file *p,
			   uint32_t ps)
{
	struct ppc_io io = { ORIGFILE(p), -1 };
	unsigned char *addr;
	size_t len = 0;
	uint32_t magic, made, want;
	int err;

	err = ppc_region_find(&sh->id, sh->path, 1, &addr, &len, &magic);
	if (err)
		goto fail;
	if (!addr) {
		if (!magic) {
			sqlite3_log(SQLITE_CANTOPEN, "ppcache: %s: the qNVRAM "
				    "names of this file are all taken by other "
				    "regions", sh->path);
			return SQLITE_FULL;
		}
		if (!ppc_valid_page_size(ps))
			ps = ppc_guess_page_size(&io);
		want = sh->max_pages < PPC_INITIAL_SLOTS ? sh->max_pages :
			PPC_INITIAL_SLOTS;
		addr = ppc_region_create(&sh->id, sh->path, magic, ps, want,
					 &len, &made);
		if (!addr) {
			err = errno;
			goto fail;
		}
		magic = made;
	}
	ppc_region_point(sh, addr, len, magic);
	return ppc_view_load(sh, &io, 1);
fail:
	sqlite3_log(SQLITE_FULL, "ppcache: %s: no qNVRAM region for a write: "
		    "%s", sh->path, strerror(err));
	return err == ENOSPC || err == EDQUOT ? SQLITE_FULL : SQLITE_IOERR_WRITE;
}

/*
 * Under EXCLUSIVE: take the newest valid copy of the region as ours (a
 * process that grew it and died before marking ours moved left a sealed
 * copy with a higher epoch, which others may have adopted already; ours
 * cannot have changed since its seal), free the leftovers, and load it
 * with its garbage freed. mu held.
 */
static int ppc_follow_newest(struct ppc_shared *sh, const struct ppc_io *io)
{
	unsigned char *a;
	size_t l;
	uint32_t m;
	int err;

	err = ppc_region_find(&sh->id, sh->path, 1, &a, &l, &m);
	if (err)
		return SQLITE_IOERR;
	if (a && m != sh->magic) {
		uint32_t old = sh->magic;

		qnvm_unmap(sh->rgn);
		ppc_region_forget(sh);
		ppc_region_point(sh, a, l, m);
		ppc_free_leftover(sh->uid, old, PPC_SUPERSEDED,
				  sh->path);
	} else if (a) {
		qnvm_unmap(a);
	}
	return ppc_view_load(sh, io, 1);
}

/*
 * Start @p's write transaction if none is open: SQLite writes the database
 * only under EXCLUSIVE, so here the region is this connection's to change.
 * Make the region if there is none, free what an earlier writer left, run
 * a LazyFlush that a commit deferred. mu held.
 */
static int ppc_txn_begin(struct ppc_shared *sh, struct ppc_file *p,
			 uint32_t ps)
{
	struct ppc_io io = { ORIGFILE(p), -1 };
	int rc;

	if (sh->owner == p)
		return SQLITE_OK;
	if (sh->owner || p->lock < SQLITE_LOCK_EXCLUSIVE) {
		sqlite3_log(SQLITE_IOERR_WRITE, "ppcache: %s: a write without "
			    "the EXCLUSIVE lock", sh->path);
		return SQLITE_IOERR_WRITE;
	}
	rc = ppc_view_sync(sh, p);
	if (rc != SQLITE_OK)
		return rc;
	if (!sh->rgn) {
		rc = ppc_region_make(sh, p, ps);
		if (rc != SQLITE_OK)
			return rc;
	} else if (!sh->gc_ok) {
		rc = ppc_follow_newest(sh, &io);
		if (rc != SQLITE_OK)
			return rc;
	}
	ppc_gen_bump(sh);
	if (sh->flush_due)
		ppc_lazyflush_locked(sh, p);
	sh->owner = p;
	sh->pend_bytes = sh->db_bytes;
	sh->npend = 0;
	__atomic_add_fetch(&ppc_open_txns, 1, __ATOMIC_RELAXED);
	return SQLITE_OK;
}

/* --- Identity and the registry of databases ----------------------------- */

/* Fill @id from the O_PATH descriptor @fd of the database file. */
static int ppc_identity(int fd, struct ppc_id *id)
{
	struct statx stx;
	struct statfs sfs;
	uint64_t fsid = 0;

	memset(id, 0, sizeof(*id));
	if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_UID | STATX_BTIME,
		  &stx) < 0)
		return -1;
	if (fstatfs(fd, &sfs) == 0)
		memcpy(&fsid, &sfs.f_fsid, sizeof(fsid) < sizeof(sfs.f_fsid) ?
		       sizeof(fsid) : sizeof(sfs.f_fsid));
	if (!fsid)
		fsid = ((uint64_t)stx.stx_dev_major << 32) | stx.stx_dev_minor;
	id->fsid = fsid;
	id->ino = stx.stx_ino;
	id->uid = stx.stx_uid;
	if (stx.stx_mask & STATX_BTIME) {
		id->btime_sec = stx.stx_btime.tv_sec;
		id->btime_nsec = stx.stx_btime.tv_nsec;
	}
	return 0;
}

static void ppc_shared_destroy(struct ppc_shared *sh)
{
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
	while (sh->nalias > 0)
		free(sh->alias[--sh->nalias]);
	free(sh->alias);
	free(sh);
}

/*
 * Record @zName as a name of @sh if it is a new one: its journal is then
 * found as this database's (in memory), not opened on disk. reg held.
 */
static int ppc_shared_alias(struct ppc_shared *sh, const char *zName)
{
	char **a;
	int i;

	if (!strcmp(sh->name, zName))
		return SQLITE_OK;
	for (i = 0; i < sh->nalias; i++)
		if (!strcmp(sh->alias[i], zName))
			return SQLITE_OK;
	a = realloc(sh->alias, (size_t)(sh->nalias + 1) * sizeof(*a));
	if (!a)
		return SQLITE_NOMEM;
	sh->alias = a;
	a[sh->nalias] = strdup(zName);
	if (!a[sh->nalias])
		return SQLITE_NOMEM;
	sh->nalias++;
	return SQLITE_OK;
}

static const char *ppc_errno_why(int err)
{
	switch (err) {
	case ENODEV:
		return "no /dev/qnvram: load qnvram.ko (modprobe qnvram, see "
		       "docs/qnvram.md)";
	case EACCES:
		return "/dev/qnvram is not writable by this user";
	case EPERM:
		return "the file's owner is another uid, and its qNVRAM "
		       "regions are that uid's (open it as the owner or root)";
	case ENOSPC:
		return "the qNVRAM pool has no room";
	case EDQUOT:
		return "the region would exceed this uid's qNVRAM quota";
	default:
		return strerror(err);
	}
}

/* Is qNVRAM there for this user? 0, or ENODEV / EACCES. */
static int ppc_qnvram_probe(void)
{
	size_t len;
	void *a = qnvm_retrieve(geteuid(), PPC_PROBE_MAGIC, &len);

	if (a) {
		qnvm_unmap(a);
		return 0;
	}
	return errno == ENODEV || errno == EACCES ? errno : 0;
}

/* Lower-file locks taken by ppcache itself, stepping up from @from. */
static int ppc_lock_up(sqlite3_file *lf, int from, int to)
{
	static const int steps[] = { SQLITE_LOCK_SHARED, SQLITE_LOCK_RESERVED,
				     SQLITE_LOCK_EXCLUSIVE };
	size_t i;
	int rc;

	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		if (steps[i] <= from || steps[i] > to)
			continue;
		rc = lf->pMethods->xLock(lf, steps[i]);
		if (rc != SQLITE_OK) {
			lf->pMethods->xUnlock(lf, from);
			return rc;
		}
	}
	return SQLITE_OK;
}

/* Non-zero if the file's header says WAL (format bytes 18 and 19 are 2). */
static int ppc_is_wal_format(const struct ppc_io *io)
{
	unsigned char h[20];

	return ppc_io_read(io, h, sizeof(h), 0) == SQLITE_OK &&
	       !memcmp(h, "SQLite format 3", 16) && (h[18] == 2 || h[19] == 2);
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
 * A file left in WAL format (by a fallback=wal session, or stock SQLite):
 * turn it back into rollback format as PRAGMA journal_mode=DELETE would,
 * if no process has it open (EXCLUSIVE can be had: every WAL connection
 * holds SHARED) and its -wal holds no frames. Else SQLITE_CANTOPEN.
 */
static int ppc_unwal(struct ppc_shared *sh, struct ppc_file *p)
{
	static const unsigned char v1[2] = { 1, 1 };
	struct ppc_io io = { ORIGFILE(p), -1 };
	int rc;

	rc = ppc_lock_up(io.lf, SQLITE_LOCK_NONE, SQLITE_LOCK_EXCLUSIVE);
	if (rc != SQLITE_OK) {
		sqlite3_log(SQLITE_CANTOPEN, "ppcache: %s is in WAL mode and "
			    "open in another process", sh->path);
		return SQLITE_CANTOPEN;
	}
	if (ppc_wal_has_frames(sh->name)) {
		sqlite3_log(SQLITE_CANTOPEN, "ppcache: %s is in WAL mode and its "
			    "-wal file has frames; open it once with "
			    "fallback=wal (or plain SQLite) to checkpoint it",
			    sh->path);
		rc = SQLITE_CANTOPEN;
	} else {
		rc = ppc_io_write(&io, v1, sizeof(v1), 18);
		if (rc == SQLITE_OK)
			rc = ppc_io_sync(&io, 0);
	}
	io.lf->pMethods->xUnlock(io.lf, SQLITE_LOCK_NONE);
	return rc;
}

static void ppc_shared_put(struct ppc_shared *sh);

/* This process's entry for file (@dev, @ino), with a reference; reg held. */
static struct ppc_shared *ppc_reg_lookup(dev_t dev, ino_t ino)
{
	struct ppc_shared *sh;

	for (sh = ppc_reg; sh; sh = sh->next) {
		if (sh->dev == dev && sh->ino == ino && sh->pid == getpid()) {
			sh->nref++;
			sh->nconn++;
			return sh;
		}
	}
	return NULL;
}

/*
 * Join entry @sh (found with a reference) as a connection with @o; on
 * failure the reference is dropped.
 */
/* Undo ppc_reg_lookup()'s connection and reference. */
static void ppc_shared_leave(struct ppc_shared *sh)
{
	pthread_mutex_lock(&ppc_reg_mu);
	sh->nconn--;
	pthread_mutex_unlock(&ppc_reg_mu);
	ppc_shared_put(sh);
}

static int ppc_shared_join(struct ppc_shared *sh, const struct ppc_opts *o)
{
	if (sh->fallback && !o->fallback) {
		sqlite3_log(SQLITE_CANTOPEN, "ppcache: %s is open in fallback=wal "
			    "mode in this process; open it with fallback=wal "
			    "too", sh->path);
		ppc_shared_leave(sh);
		return SQLITE_CANTOPEN;
	}
	pthread_mutex_lock(&sh->mu);
	if (o->max_pages > sh->max_pages)
		sh->max_pages = o->max_pages;
	pthread_mutex_unlock(&sh->mu);
	return SQLITE_OK;
}

/*
 * Get the shared entry of database @zName, opened by the lower VFS in
 * @p's lower file, creating it if this process has none. Its region is
 * looked up (not made: the first write makes it) and, if the lock can be
 * had now, the file is checked against it, so a mismatch fails the open.
 */
static int ppc_shared_get(struct ppc_file *p, const char *zName,
			  const struct ppc_opts *o, struct ppc_shared **out)
{
	struct ppc_io io = { ORIGFILE(p), -1 };
	struct ppc_shared *sh, *other;
	struct stat st;
	unsigned char *addr;
	size_t len;
	uint32_t magic;
	int fd, moved = 0, err, rc = SQLITE_OK;

	fd = open(zName, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return SQLITE_CANTOPEN;
	if (fstat(fd, &st) < 0 ||
	    io.lf->pMethods->xFileControl(io.lf, SQLITE_FCNTL_HAS_MOVED,
					  &moved) != SQLITE_OK || moved) {
		close(fd);
		sqlite3_log(SQLITE_CANTOPEN, "ppcache: %s was replaced while "
			    "it was being opened", zName);
		return SQLITE_CANTOPEN;
	}
	pthread_mutex_lock(&ppc_reg_mu);
	sh = ppc_reg_lookup(st.st_dev, st.st_ino);
	rc = sh ? ppc_shared_alias(sh, zName) : SQLITE_OK;
	pthread_mutex_unlock(&ppc_reg_mu);
	if (sh) {
		close(fd);
		if (rc == SQLITE_OK)
			rc = ppc_shared_join(sh, o);
		else
			ppc_shared_leave(sh);
		*out = sh;
		return rc;
	}

	/* a new entry, published only once it is checked */
	sh = calloc(1, sizeof(*sh));
	if (!sh) {
		close(fd);
		return SQLITE_NOMEM;
	}
	sh->pid = getpid();
	pthread_mutex_init(&sh->mu, NULL);
	sh->dev = st.st_dev;
	sh->ino = st.st_ino;
	sh->nref = 1;
	sh->nconn = 1;
	sh->max_pages = o->max_pages;
	sh->path = realpath(zName, NULL);
	if (!sh->path)
		sh->path = strdup(zName);
	sh->name = strdup(zName);
	if (!sh->path || !sh->name || ppc_identity(fd, &sh->id) < 0) {
		close(fd);
		rc = SQLITE_CANTOPEN;
		goto err;
	}
	close(fd);	/* O_PATH: closing it drops none of our POSIX locks */
	sh->uid = sh->id.uid;

	if (ppc_is_wal_format(&io)) {
		if (o->fallback && ppc_wal_has_frames(sh->name)) {
			sh->fallback = 1;
			goto publish;
		}
		rc = ppc_unwal(sh, p);
		if (rc != SQLITE_OK)
			goto err;
	}
	err = ppc_region_find(&sh->id, sh->path, 0, &addr, &len, &magic);
	if (err) {
		if (o->fallback) {
			sqlite3_log(SQLITE_NOTICE, "ppcache: %s: no qNVRAM "
				    "region (%s): fallback=wal", sh->path,
				    ppc_errno_why(err));
			sh->fallback = 1;
			goto publish;
		}
		sqlite3_log(SQLITE_CANTOPEN, "ppcache: cannot open %s: %s (add "
			    "fallback=wal to the URI to open it without "
			    "qNVRAM)", sh->path, ppc_errno_why(err));
		rc = SQLITE_CANTOPEN;
		goto err;
	}
	if (addr)
		ppc_region_point(sh, addr, len, magic);
	if (io.lf->pMethods->xLock(io.lf, SQLITE_LOCK_SHARED) == SQLITE_OK) {
		pthread_mutex_lock(&sh->mu);
		rc = ppc_view_sync(sh, p);
		pthread_mutex_unlock(&sh->mu);
		io.lf->pMethods->xUnlock(io.lf, SQLITE_LOCK_NONE);
		if (rc == SQLITE_CANTOPEN)
			goto err;	/* refused: file and region disagree */
		rc = SQLITE_OK;		/* an I/O error: the first lock retries */
	}
	/* else another process is writing: the first SHARED lock checks */
publish:
	pthread_mutex_lock(&ppc_reg_mu);
	other = ppc_reg_lookup(st.st_dev, st.st_ino);
	if (!other) {
		sh->next = ppc_reg;
		ppc_reg = sh;
	} else {
		rc = ppc_shared_alias(other, zName);
	}
	pthread_mutex_unlock(&ppc_reg_mu);
	if (other) {
		/* another thread of this process got there first */
		if (sh->rgn)
			qnvm_unmap(sh->rgn);
		ppc_region_forget(sh);
		ppc_shared_destroy(sh);
		*out = other;
		if (rc != SQLITE_OK) {
			ppc_shared_leave(other);
			return rc;
		}
		return ppc_shared_join(other, o);
	}
	*out = sh;
	return SQLITE_OK;
err:
	if (sh->rgn)
		qnvm_unmap(sh->rgn);
	ppc_region_forget(sh);
	ppc_shared_destroy(sh);
	return rc;
}

/*
 * The database whose journal (or other companion file) is @zName: its
 * name followed by one of the suffixes SQLite gives them. A reference is
 * taken. Returns NULL if none is open in this process.
 */
static struct ppc_shared *ppc_shared_find_companion(const char *zName,
						    const char *sfx)
{
	size_t n = strlen(zName), ns = strlen(sfx);
	struct ppc_shared *sh;

	pthread_mutex_lock(&ppc_reg_mu);
	for (sh = ppc_reg; sh; sh = sh->next) {
		int i;

		for (i = -1; i < sh->nalias; i++) {
			const char *name = i < 0 ? sh->name : sh->alias[i];
			size_t l = strlen(name);

			if (n >= l + ns && !memcmp(name, zName, l) &&
			    !strncmp(zName + l, sfx, ns) &&
			    (zName[l + ns] == 0 || !strcmp(sfx, "-mj")))
				break;
		}
		if (i < sh->nalias) {
			sh->nref++;
			break;
		}
	}
	pthread_mutex_unlock(&ppc_reg_mu);
	return sh;
}

/* Drop a reference; the last one destroys the entry. */
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
	pthread_mutex_unlock(&ppc_reg_mu);
	if (sh->rgn)
		qnvm_unmap(sh->rgn);
	ppc_region_forget(sh);
	ppc_shared_destroy(sh);
}

/*
 * Ready the region for a change outside a write transaction (a flush on
 * demand, the last close): up to date, leftovers freed (also when there is
 * no valid region: the scrap of a format a crash cut short). EXCLUSIVE, mu.
 */
static int ppc_excl_prepare(struct ppc_shared *sh, struct ppc_file *p)
{
	struct ppc_io io = { ORIGFILE(p), -1 };
	unsigned char *a;
	size_t l;
	uint32_t m;
	int rc = ppc_view_sync(sh, p);

	if (rc != SQLITE_OK || (sh->rgn && sh->gc_ok))
		return rc;
	if (sh->rgn)
		return ppc_follow_newest(sh, &io);
	if (!ppc_region_find(&sh->id, sh->path, 1, &a, &l, &m) && a)
		qnvm_unmap(a);
	return SQLITE_OK;
}

static void ppc_close_last(struct ppc_shared *sh, struct ppc_file *p,
			   int own_file);

/*
 * The last connection of this process is read-only: it cannot write the
 * file, so the clean close runs through a read-write lower file of its
 * own, if this process may write the file and the name still leads to
 * it. Else the file stays fenced and the region stays, for the next
 * read-write close (of any process) to finish; the log says so.
 */
static void ppc_close_last_readonly(struct ppc_shared *sh,
				    const struct ppc_file *p)
{
	sqlite3_vfs *lower = p->lower;
	struct ppc_file *w;
	struct stat st;
	int out = 0, moved = 1;

	if (!sh->rgn && !sh->fence_on)
		return;		/* nothing of ppcache's to clean up */
	w = sqlite3_malloc64(sizeof(*w) + lower->szOsFile);
	if (!w)
		return;
	memset(w, 0, sizeof(*w) + lower->szOsFile);
	w->sh = sh;
	w->lock = SQLITE_LOCK_NONE;
	if (lower->xOpen(lower, p->zName, ORIGFILE(w), SQLITE_OPEN_MAIN_DB |
			 SQLITE_OPEN_READWRITE, &out) != SQLITE_OK) {
		if (ORIGFILE(w)->pMethods)
			ORIGFILE(w)->pMethods->xClose(ORIGFILE(w));
		sqlite3_free(w);
		sqlite3_log(SQLITE_NOTICE, "ppcache: %s: a read-only last "
			    "close cannot write the file; it keeps its fence "
			    "and region %08x until a read-write close",
			    sh->path, sh->magic);
		return;
	}
	if (!(out & SQLITE_OPEN_READONLY) &&
	    ORIGFILE(w)->pMethods->xFileControl(ORIGFILE(w),
						SQLITE_FCNTL_HAS_MOVED,
						&moved) == SQLITE_OK &&
	    !moved && !stat(p->zName, &st) && st.st_dev == sh->dev &&
	    st.st_ino == sh->ino)
		ppc_close_last(sh, w, 1);
	else
		sqlite3_log(SQLITE_NOTICE, "ppcache: %s: a read-only last "
			    "close cannot write the file; it keeps its fence "
			    "and region %08x until a read-write close",
			    sh->path, sh->magic);
	ORIGFILE(w)->pMethods->xClose(ORIGFILE(w));
	sqlite3_free(w);
}

/*
 * The last connection of this process closes: if no other process is in
 * (EXCLUSIVE can be had at once), flush every committed page, take the
 * fence off and free the region, so a cleanly closed database is a plain
 * SQLite file again. Else leave the region to the others. A child of
 * fork() closing its copy only drops its mapping. @own_file: @p is a
 * lower file ppcache opened by name for a read-only last close, checked
 * against the region before anything is written.
 */
static void ppc_close_last(struct ppc_shared *sh, struct ppc_file *p,
			   int own_file)
{
	struct ppc_io io = { ORIGFILE(p), -1 };
	uint32_t name;
	int rc, lock = p->lock;

	if (sh->fallback || sh->pid != getpid() || sh->refused)
		return;
	if (p->readonly) {
		ppc_close_last_readonly(sh, p);
		return;
	}
	if (ppc_lock_up(io.lf, lock, SQLITE_LOCK_EXCLUSIVE) != SQLITE_OK)
		return;
	p->lock = SQLITE_LOCK_EXCLUSIVE;
	pthread_mutex_lock(&sh->mu);
	rc = ppc_excl_prepare(sh, p);
	if (rc != SQLITE_OK || !sh->rgn)
		goto out;
	/* a file of our own (a read-only last close): is it the same? */
	if (own_file && ppc_check_file(sh, &io) != SQLITE_OK)
		goto out;
	rc = ppc_flush_locked(sh, &io, NULL);
	if (rc != SQLITE_OK || sh->npend || sh->ncommitted) {
		sqlite3_log(SQLITE_WARNING, "ppcache: %s: closed with unflushed "
			    "pages; they stay in qNVRAM region %08x", sh->path,
			    sh->magic);
		goto out;
	}
	rc = ppc_fence_remove(&io);
	if (rc == SQLITE_OK)
		rc = ppc_io_sync(&io, 0);
	if (rc != SQLITE_OK)
		goto out;
	sh->fence_on = 0;
	sh->fenced = 0;
	ppc_gen_bump(sh);
	ppc_rec_write(sh);
	/* qnvm_free() unmaps ours even if another process keeps it */
	name = sh->magic;
	ppc_region_forget(sh);
	pthread_mutex_lock(&ppc_reg_mu);
	if (!ppc_mapped_here(sh->uid, name))
		qnvm_free(sh->uid, name);
	pthread_mutex_unlock(&ppc_reg_mu);
out:
	pthread_mutex_unlock(&sh->mu);
	io.lf->pMethods->xUnlock(io.lf, lock);
	p->lock = lock;
}

/* --- Main database methods ---------------------------------------------- */

static int ppcClose(sqlite3_file *pFile)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	int rc, last;

	pthread_mutex_lock(&sh->mu);
	ppc_drop_pending(sh, p);
	pthread_mutex_unlock(&sh->mu);
	pthread_mutex_lock(&ppc_reg_mu);
	last = --sh->nconn == 0;
	pthread_mutex_unlock(&ppc_reg_mu);
	if (last)
		ppc_close_last(sh, p, 0);
	rc = ORIGFILE(p)->pMethods->xClose(ORIGFILE(p));
	ppc_shared_put(sh);
	return rc;
}

static int ppcRead(sqlite3_file *pFile, void *zBuf, int iAmt,
		   sqlite3_int64 iOfst)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	struct ppc_io io = { ORIGFILE(p), -1 };
	unsigned char *out = zBuf;
	uint64_t pos = (uint64_t)iOfst, end = pos + (uint64_t)iAmt, lsize;
	int mine, rc = SQLITE_OK;

	pthread_mutex_lock(&sh->mu);
	if (!sh->checked || (sh->rgn && !sh->loaded)) {
		/*
		 * Not checked or loaded yet: SQLite's peek at the header when
		 * it opens, before any lock, for the page size; it reads page
		 * 1 again under SHARED, which loads the view (or fails the
		 * lock). The file's own bytes and errors answer it.
		 */
		rc = p->lock >= SQLITE_LOCK_SHARED ? SQLITE_IOERR_READ :
			ppc_io_size(&io, &lsize);
		if (rc == SQLITE_OK && pos < lsize)
			rc = ppc_read_file(sh, &io, out, end - pos < lsize - pos ?
					   end - pos : lsize - pos, pos);
		if (rc == SQLITE_OK && end > lsize) {
			memset(out + (pos < lsize ? lsize - pos : 0), 0,
			       end - (pos > lsize ? pos : lsize));
			rc = SQLITE_IOERR_SHORT_READ;
		}
		pthread_mutex_unlock(&sh->mu);
		return rc;
	}
	mine = sh->owner == p;
	lsize = mine ? sh->pend_bytes : sh->db_bytes;
	while (pos < end) {
		uint32_t ps = sh->rgn ? sh->ps : PPC_MAX_PAGE;
		uint32_t pgno = (uint32_t)(pos / ps) + 1;
		uint64_t in = pos % ps;
		uint64_t n = ps - in;
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
			rc = ppc_read_file(sh, &io, out, n, pos);
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
	struct ppc_io io = { ORIGFILE(p), -1 };
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

					rc = ppc_read_file(sh, &io,
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
	rc = ppc_txn_begin(sh, p, (uint32_t)iAmt);
	if (rc != SQLITE_OK)
		goto out;
	if ((uint32_t)iAmt != sh->ps && ppc_valid_page_size((uint64_t)iAmt) &&
	    pos % (uint64_t)iAmt == 0 && !ppc_holds_changes(sh) && !sh->npend)
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
	rc = ppc_txn_begin(sh, p, 0);
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
	if (sh->rgn)
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

/* The lock the lower file holds now (it may grant PENDING on a BUSY). */
static int ppc_lower_lock(struct ppc_file *p)
{
	int l = p->lock;

	ORIGFILE(p)->pMethods->xFileControl(ORIGFILE(p), SQLITE_FCNTL_LOCKSTATE,
					    &l);
	return l;
}

/*
 * SQLite's own locks on the lower file, so ppcache processes share a
 * database as SQLite processes do (SQLITE_BUSY, the busy handler). On the
 * way up to SHARED the view of the region is brought up to date: another
 * process may have committed, flushed or grown it.
 */
static int ppcLock(sqlite3_file *pFile, int eLock)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	int prev = p->lock, rc;

	rc = ORIGFILE(p)->pMethods->xLock(ORIGFILE(p), eLock);
	p->lock = ppc_lower_lock(p);
	if (rc != SQLITE_OK || prev >= SQLITE_LOCK_SHARED)
		return rc;
	pthread_mutex_lock(&sh->mu);
	rc = ppc_view_sync(sh, p);
	pthread_mutex_unlock(&sh->mu);
	if (rc != SQLITE_OK) {
		ORIGFILE(p)->pMethods->xUnlock(ORIGFILE(p), SQLITE_LOCK_NONE);
		p->lock = SQLITE_LOCK_NONE;
	}
	return rc;
}

static int ppcUnlock(sqlite3_file *pFile, int eLock)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	struct ppc_shared *sh = p->sh;
	int rc;

	if (eLock <= SQLITE_LOCK_SHARED) {
		/* no COMMIT_PHASETWO came: what is pending rolled back */
		pthread_mutex_lock(&sh->mu);
		ppc_drop_pending(sh, p);
		pthread_mutex_unlock(&sh->mu);
	}
	rc = ORIGFILE(p)->pMethods->xUnlock(ORIGFILE(p), eLock);
	p->lock = ppc_lower_lock(p);
	return rc;
}

static int ppcCheckReservedLock(sqlite3_file *pFile, int *pResOut)
{
	return ORIGFILE(pFile)->pMethods->xCheckReservedLock(ORIGFILE(pFile),
							     pResOut);
}

/* The text of PRAGMA ppcache_stats. Called with mu held. */
static char *ppc_stats_text(struct ppc_shared *sh, const struct ppc_file *p)
{
	static const struct ppc_stats none;
	const struct ppc_stats *st = sh->rgn ? sh->st : &none;

	return sqlite3_mprintf(
		"commits %llu pages_written %llu pages_flushed %llu "
		"flushes %llu fsyncs_saved %llu recoveries %llu "
		"region_bytes %llu capacity %u page_size %u dirty %u "
		"pending %u growths %llu rollbacks %llu threshold %d "
		"max_pages %u txn %llu region %08x syncs %llu written %u "
		"writethrough %d fenced %d uid %u",
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
		sh->max_pages, (unsigned long long)sh->txn,
		sh->rgn ? sh->magic : 0, (unsigned long long)st->syncs,
		sh->nwritten, p->writethrough, sh->fence_on, sh->uid);
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

/* PRAGMA ppcache_flush: needs the EXCLUSIVE lock, as any change does. */
static int ppc_pragma_flush(struct ppc_file *p, char **a)
{
	struct ppc_shared *sh = p->sh;
	struct ppc_io io = { ORIGFILE(p), -1 };
	int lock = p->lock, rc;
	uint32_t n = 0;

	rc = ppc_lock_up(io.lf, lock, SQLITE_LOCK_EXCLUSIVE);
	if (rc != SQLITE_OK) {
		a[0] = sqlite3_mprintf("ppcache_flush: database is locked");
		return rc;
	}
	p->lock = SQLITE_LOCK_EXCLUSIVE;
	pthread_mutex_lock(&sh->mu);
	rc = ppc_excl_prepare(sh, p);
	if (rc == SQLITE_OK && sh->owner)
		rc = SQLITE_BUSY;	/* the connection's own write is open */
	if (rc == SQLITE_OK)
		rc = ppc_flush_locked(sh, &io, &n);
	pthread_mutex_unlock(&sh->mu);
	io.lf->pMethods->xUnlock(io.lf, lock);
	p->lock = lock;
	if (rc != SQLITE_OK) {
		a[0] = sqlite3_mprintf("ppcache_flush failed: %s",
				       sqlite3_errstr(rc));
		return rc;
	}
	a[0] = sqlite3_mprintf("%u", n);
	return SQLITE_OK;
}

static int ppc_pragma(struct ppc_file *p, char **a)
{
	struct ppc_shared *sh = p->sh;
	const char *name = a[1], *val = a[2];
	long v;

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
	if (!sqlite3_stricmp(name, "ppcache_flush"))
		return ppc_pragma_flush(p, a);
	if (!sqlite3_stricmp(name, "journal_mode") && val &&
	    !sqlite3_stricmp(val, "wal")) {
		a[0] = sqlite3_mprintf("ppcache: journal_mode=WAL is not "
				       "supported: %s keeps its journal in "
				       "qNVRAM", sh->path);
		return SQLITE_ERROR;
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
		if (rc == SQLITE_OK) {
			/*
			 * Another database of the same transaction may still
			 * be committing: its commit must not wait behind this
			 * flush's sync (a crash there would split them).
			 */
			if (__atomic_load_n(&ppc_open_txns, __ATOMIC_RELAXED))
				sh->flush_due = 1;
			else
				ppc_lazyflush_locked(sh, p);
		}
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
	struct ppc_file *p = (struct ppc_file *)pFile, **pp;

	if (p->sh) {
		pthread_mutex_lock(&p->sh->mu);
		for (pp = &p->sh->mjs; *pp; pp = &(*pp)->mj_next) {
			if (*pp == p) {
				*pp = p->mj_next;
				break;
			}
		}
		pthread_mutex_unlock(&p->sh->mu);
	}
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
	int rc;

	/* mu: ppc_live_super_journal() may read it from another connection */
	if (p->sh)
		pthread_mutex_lock(&p->sh->mu);
	rc = memj_write_locked(p, zBuf, iAmt, iOfst);
	if (p->sh)
		pthread_mutex_unlock(&p->sh->mu);
	return rc;
}

static int memj_write_locked(struct ppc_file *p, const void *zBuf, int iAmt,
			     sqlite3_int64 iOfst)
{
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

	if (p->sh)
		pthread_mutex_lock(&p->sh->mu);
	if (size < p->mj_size)
		p->mj_size = size;
	if (p->sh)
		pthread_mutex_unlock(&p->sh->mu);
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
		if (!p->sh->fallback) {
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
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	got = pread(fd, b, sizeof(b), 0);
	close(fd);
	while (got > 0)
		if (b[--got])
			return 1;
	return 0;
}

/* A file of the VFS kept in memory (journals), for entry @sh (may be NULL). */
static int ppc_open_memory(struct ppc_file *p, struct ppc_shared *sh,
			   int flags, int *pOutFlags)
{
	memset(p, 0, sizeof(*p));
	p->sh = sh;
	p->base.pMethods = &ppc_memj_io;
	if (sh) {
		pthread_mutex_lock(&sh->mu);
		p->mj_next = sh->mjs;
		sh->mjs = p;
		pthread_mutex_unlock(&sh->mu);
	}
	if (pOutFlags)
		*pOutFlags = flags;
	return SQLITE_OK;
}

/*
 * Whether memory journal @j ends in a super-journal pointer (SQLite's
 * journal format: name, its length and checksum, BE32 each, and the
 * 8-byte journal magic, written at COMMIT_PHASEONE of a transaction over
 * several databases and truncated away at its end).
 */
static int ppc_memj_names_super(const struct ppc_file *j)
{
	static const unsigned char magic[8] = {
		0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7 };
	const unsigned char *end = j->mj_buf + j->mj_size;
	uint32_t len, sum = 0, i;

	if (!j->mj_buf || j->mj_size < 20 || memcmp(end - 8, magic, 8))
		return 0;
	len = ppc_be32(end - 16);
	if (!len || (sqlite3_int64)len > j->mj_size - 20)
		return 0;
	for (i = 0; i < len; i++)
		sum += end[-16 - (int64_t)len + i];
	return sum == ppc_be32(end - 12);
}

/*
 * The memory journal of @sh that names a super-journal, or NULL. SQLite
 * deletes a super-journal once no journal it lists exists and names it
 * (pager_delsuper()): a rollback of one database of such a transaction
 * must see the journals of the others, though they are in memory. mu held.
 */
static struct ppc_file *ppc_live_super_journal(struct ppc_shared *sh)
{
	struct ppc_file *j;

	for (j = sh->mjs; j; j = j->mj_next)
		if (ppc_memj_names_super(j))
			return j;
	return NULL;
}

/*
 * SQLite opens a journal that a super-journal lists to read its pointer:
 * for a database open here, a read-only copy of its memory journal that
 * names one. Return 1 if @p is that copy (opened, SQLITE_OK or NOMEM in
 * *@rc), 0 if the lower VFS should open @zName.
 */
static int ppc_open_super_child(struct ppc_file *p, const char *zName,
				int flags, int *pOutFlags, int *rc)
{
	struct ppc_shared *sh = ppc_shared_find_companion(zName, "-journal");
	struct ppc_file *j;

	if (!sh)
		return 0;
	pthread_mutex_lock(&sh->mu);
	j = ppc_live_super_journal(sh);
	if (j) {
		memset(p, 0, sizeof(*p));
		p->mj_buf = sqlite3_malloc64((sqlite3_uint64)j->mj_size);
		if (p->mj_buf) {
			memcpy(p->mj_buf, j->mj_buf, (size_t)j->mj_size);
			p->mj_size = j->mj_size;
			p->mj_alloc = j->mj_size;
		}
	}
	pthread_mutex_unlock(&sh->mu);
	if (!j) {
		ppc_shared_put(sh);
		return 0;
	}
	if (!p->mj_buf) {
		ppc_shared_put(sh);
		*rc = SQLITE_NOMEM;
		return 1;
	}
	p->sh = sh;	/* not on sh->mjs: a copy, not the database's journal */
	p->base.pMethods = &ppc_memj_io;
	if (pOutFlags)
		*pOutFlags = flags;
	*rc = SQLITE_OK;
	return 1;
}

/*
 * A rollback journal: in memory, unless the database is in fallback mode
 * or a hot journal (of stock SQLite, before the file was ppcache's) is on
 * disk: that one is rolled back for real.
 */
static int ppc_open_journal(sqlite3_vfs *pVfs, sqlite3_filename zName,
			    sqlite3_file *pFile, int flags, int *pOutFlags)
{
	struct ppc_file *p = (struct ppc_file *)pFile;
	sqlite3_vfs *lower = ORIGVFS(pVfs);
	struct ppc_shared *sh = ppc_shared_find_companion(zName, "-journal");
	int rc;

	if (sh && !sh->fallback &&
	    ((__atomic_load_n(&sh->fence_on, __ATOMIC_RELAXED) &&
	      !__atomic_load_n(&sh->disk_journal, __ATOMIC_RELAXED)) ||
	     !ppc_journal_is_hot(zName)))
		return ppc_open_memory(p, sh, flags, pOutFlags);
	memset(p, 0, sizeof(*p));
	rc = lower->xOpen(lower, zName, ORIGFILE(p), flags, pOutFlags);
	if (rc != SQLITE_OK) {
		if (ORIGFILE(p)->pMethods)
			ORIGFILE(p)->pMethods->xClose(ORIGFILE(p));
		if (sh)
			ppc_shared_put(sh);
		return rc;
	}
	if (sh && !sh->fallback) {
		pthread_mutex_lock(&sh->mu);
		sh->real_journals++;
		__atomic_store_n(&sh->disk_journal, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&sh->mu);
	}
	p->sh = sh;
	p->base.pMethods = &ppc_pass_io;
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
	int rc, err, out = 0;

	if ((flags & SQLITE_OPEN_MAIN_JOURNAL) && zName)
		return ppc_open_journal(pVfs, zName, pFile, flags, pOutFlags);
	if ((flags & SQLITE_OPEN_SUPER_JOURNAL) &&
	    (flags & SQLITE_OPEN_READONLY) && zName &&
	    ppc_open_super_child(p, zName, flags, pOutFlags, &rc))
		return rc;
	if ((flags & SQLITE_OPEN_WAL) && zName) {
		sh = ppc_shared_find_companion(zName, "-wal");
		if (sh && !sh->fallback) {
			sqlite3_log(SQLITE_CANTOPEN, "ppcache: %s: WAL is not "
				    "supported (ppcache is its own journal)",
				    sh->path);
			ppc_shared_put(sh);
			return SQLITE_CANTOPEN;
		}
		if (sh)
			ppc_shared_put(sh);
		return lower->xOpen(lower, zName, pFile, flags, pOutFlags);
	}
	if (!(flags & SQLITE_OPEN_MAIN_DB) || !zName ||
	    (flags & SQLITE_OPEN_DELETEONCLOSE))
		return lower->xOpen(lower, zName, pFile, flags, pOutFlags);

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

	/* before the lower VFS creates anything: is qNVRAM there at all? */
	err = o.fallback ? 0 : ppc_qnvram_probe();
	if (err) {
		sqlite3_log(SQLITE_CANTOPEN, "ppcache: cannot open %s: %s (add "
			    "fallback=wal to the URI to open it without "
			    "qNVRAM)", zName, ppc_errno_why(err));
		return SQLITE_CANTOPEN;
	}
	memset(p, 0, sizeof(*p));
	rc = lower->xOpen(lower, zName, ORIGFILE(p), flags, &out);
	if (pOutFlags)
		*pOutFlags = out;
	if (rc != SQLITE_OK) {
		if (ORIGFILE(p)->pMethods)
			ORIGFILE(p)->pMethods->xClose(ORIGFILE(p));
		return rc;
	}
	/* the lower VFS falls back to read-only where it may not write */
	o.readonly |= !!(out & SQLITE_OPEN_READONLY);
	rc = ppc_shared_get(p, zName, &o, &sh);
	if (rc != SQLITE_OK) {
		ORIGFILE(p)->pMethods->xClose(ORIGFILE(p));
		return rc;
	}
	p->sh = sh;
	p->threshold = o.threshold;
	p->writethrough = o.writethrough;
	p->readonly = o.readonly;
	p->lower = lower;
	p->zName = zName;
	p->base.pMethods = sh->fallback ? &ppc_pass_io : &ppc_db_io;
	return SQLITE_OK;
}

/*
 * The database of which @zName is the journal (*@journal set) or the WAL,
 * open in this process, with a reference; NULL if none.
 */
static struct ppc_shared *ppc_companion(const char *zName, int *journal)
{
	struct ppc_shared *sh = ppc_shared_find_companion(zName, "-journal");

	*journal = sh != NULL;
	return sh ? sh : ppc_shared_find_companion(zName, "-wal");
}

/*
 * Whether companion @zName of @sh (its journal if @journal, else its WAL)
 * cannot exist on disk because the file carries this process's fence: no
 * stock SQLite process can have written that file since the fence went on,
 * and ppcache's own journals are in memory, unless this process opened a
 * real one (a stock hot journal it rolled back) and has not deleted it
 * yet. The answer then needs no system call. The fence comes off only
 * under EXCLUSIVE with the generation bumped, which the next lock sees.
 */
static int ppc_companion_fenced(struct ppc_shared *sh, int journal)
{
	return !sh->fallback &&
	       __atomic_load_n(&sh->fence_on, __ATOMIC_RELAXED) &&
	       !(journal && __atomic_load_n(&sh->disk_journal,
					    __ATOMIC_RELAXED));
}

/* Otherwise journals and WAL files are asked of the lower VFS. */
static int ppcDelete(sqlite3_vfs *pVfs, const char *zName, int syncDir)
{
	int journal, rc;
	struct ppc_shared *sh = ppc_companion(zName, &journal);

	if (sh && ppc_companion_fenced(sh, journal)) {
		ppc_shared_put(sh);
		return SQLITE_OK;
	}
	rc = ORIGVFS(pVfs)->xDelete(ORIGVFS(pVfs), zName, syncDir);
	if (rc == SQLITE_IOERR_DELETE_NOENT)
		rc = SQLITE_OK;
	if (sh) {
		if (journal && rc == SQLITE_OK)
			__atomic_store_n(&sh->disk_journal, 0,
					 __ATOMIC_RELAXED);
		ppc_shared_put(sh);
	}
	return rc;
}

static int ppcAccess(sqlite3_vfs *pVfs, const char *zName, int flags,
		     int *pResOut)
{
	int journal, known = 0;
	struct ppc_shared *sh = ppc_companion(zName, &journal);

	if (sh) {
		if (journal) {
			/* in memory, naming a super-journal: see above */
			pthread_mutex_lock(&sh->mu);
			known = ppc_live_super_journal(sh) != NULL;
			pthread_mutex_unlock(&sh->mu);
			*pResOut = known;
		}
		if (!known && ppc_companion_fenced(sh, journal)) {
			known = 1;
			*pResOut = 0;
		}
		ppc_shared_put(sh);
		if (known)
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

/*
 * Register the shim over lower VFS @lower_name (NULL: "unix", or the
 * default VFS where there is no unix) as "ppcache", or "ppcache-<name>"
 * over any other. Registering twice only changes the default.
 */
static int ppc_register(const char *lower_name, int make_default)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	sqlite3_vfs *lower, *vfs, *have;
	char *name;
	int rc;

	if (lower_name && !strcmp(lower_name, "unix"))
		lower_name = NULL;
	/* malloc, not sqlite3_malloc: it lives as long as the process */
	name = malloc(sizeof(PPCACHE_VFS_NAME) + 1 +
		      (lower_name ? strlen(lower_name) : 0));
	if (!name)
		return SQLITE_NOMEM;
	strcpy(name, PPCACHE_VFS_NAME);
	if (lower_name) {
		strcat(name, "-");
		strcat(name, lower_name);
	}
	pthread_mutex_lock(&mu);
	have = sqlite3_vfs_find(name);
	if (have) {
		free(name);
		rc = make_default ? sqlite3_vfs_register(have, 1) : SQLITE_OK;
		pthread_mutex_unlock(&mu);
		/* sqlite3_shutdown() drops auto-extensions: add it again */
		if (rc == SQLITE_OK)
			rc = sqlite3_auto_extension((void (*)(void))ppc_autoext);
		return rc;
	}
	lower = sqlite3_vfs_find(lower_name ? lower_name : "unix");
	if (!lower && !lower_name)
		lower = sqlite3_vfs_find(NULL);
	vfs = malloc(sizeof(*vfs));
	if (!lower || !vfs) {
		free(vfs);
		free(name);
		pthread_mutex_unlock(&mu);
		return lower ? SQLITE_NOMEM : SQLITE_ERROR;
	}
	memcpy(vfs, &ppc_vfs_template, sizeof(*vfs));
	vfs->zName = name;	/* lives as long as the process: never freed */
	vfs->iVersion = lower->iVersion < 3 ? lower->iVersion : 3;
	vfs->szOsFile = (int)sizeof(struct ppc_file) + lower->szOsFile;
	vfs->mxPathname = lower->mxPathname;
	vfs->pAppData = lower;
	rc = sqlite3_vfs_register(vfs, make_default);
	pthread_mutex_unlock(&mu);
	if (rc == SQLITE_OK)
		rc = sqlite3_auto_extension((void (*)(void))ppc_autoext);
	return rc;
}

/* --- The ppcache tool's API --------------------------------------------- */

#ifdef SQLITE_PPCACHE_STATIC

/*
 * A database's region as the tool sees it, outside SQLite: the file is
 * opened with a descriptor and SQLite's lock bytes are taken with POSIX
 * locks, as another SQLite process would see them.
 */
struct ppc_tool {
	struct ppc_shared sh;
	struct ppc_io io;
	struct ppc_fhdr fh;
	int err;		/* errno of the region lookup, 0 */
};

#define PPC_PENDING_BYTE	0x40000000LL	/* SQLite's lock bytes */
#define PPC_LOCK_BYTES		512

static void ppc_tool_close(struct ppc_tool *t)
{
	if (t->sh.rgn)
		qnvm_unmap(t->sh.rgn);
	ppc_region_forget(&t->sh);
	if (t->io.fd >= 0)
		close(t->io.fd);
	free(t->sh.bucket);
	free(t->sh.chain);
	free(t->sh.freel);
	free(t->sh.pend);
	free(t->sh.scratch);
	free(t->sh.dirty);
	free(t->sh.written);
	free(t->sh.path);
}

/*
 * Open @path for the tool: with @write, SQLite's whole lock range is taken
 * for writing (no SQLite connection anywhere holds any lock), else its
 * SHARED range for reading (no writer is committing). Then the region.
 */
static int ppc_tool_open(struct ppc_tool *t, const char *path, int write,
			 char **msg)
{
	struct flock fl;

	memset(t, 0, sizeof(*t));
	t->io.fd = -1;
	t->sh.path = realpath(path, NULL);
	if (!t->sh.path) {
		*msg = sqlite3_mprintf("%s: %s", path, strerror(errno));
		return SQLITE_CANTOPEN;
	}
	t->io.fd = open(path, (write ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (t->io.fd < 0 || ppc_identity(t->io.fd, &t->sh.id) < 0) {
		*msg = sqlite3_mprintf("%s: %s", path, strerror(errno));
		return SQLITE_CANTOPEN;
	}
	memset(&fl, 0, sizeof(fl));
	fl.l_type = write ? F_WRLCK : F_RDLCK;
	fl.l_whence = SEEK_SET;
	fl.l_start = write ? PPC_PENDING_BYTE : PPC_PENDING_BYTE + 2;
	fl.l_len = write ? PPC_LOCK_BYTES : PPC_LOCK_BYTES - 2;
	if (fcntl(t->io.fd, F_SETLK, &fl) < 0) {
		*msg = sqlite3_mprintf("%s is in use by another process "
				       "(SQLite lock held); try again when it "
				       "is closed", t->sh.path);
		return SQLITE_BUSY;
	}
	t->sh.uid = t->sh.id.uid;
	{
		struct stat st;
		struct ppc_shared *e;
		int here = 0;

		pthread_mutex_lock(&ppc_reg_mu);
		for (e = ppc_reg; e && fstat(t->io.fd, &st) == 0; e = e->next)
			if (e->dev == st.st_dev && e->ino == st.st_ino)
				here = 1;
		pthread_mutex_unlock(&ppc_reg_mu);
		if (here) {
			/* its locks and mappings are this process's own */
			*msg = sqlite3_mprintf("%s is open in this process; "
					       "close it first (or run the "
					       "ppcache tool)", t->sh.path);
			return SQLITE_BUSY;
		}
	}
	if (ppc_fhdr_read(&t->io, &t->fh) != SQLITE_OK) {
		*msg = sqlite3_mprintf("%s: cannot read it", t->sh.path);
		return SQLITE_IOERR_READ;
	}
	{
		unsigned char *addr;
		size_t len;
		uint32_t magic;

		t->err = ppc_region_find(&t->sh.id, t->sh.path, 0, &addr, &len,
					 &magic);
		if (t->err) {
			*msg = sqlite3_mprintf("%s: qNVRAM: %s", t->sh.path,
					       ppc_errno_why(t->err));
			return SQLITE_CANTOPEN;
		}
		if (addr) {
			int rc;

			ppc_region_point(&t->sh, addr, len, magic);
			rc = ppc_view_load(&t->sh, &t->io, 0);
			if (rc != SQLITE_OK) {
				*msg = sqlite3_mprintf("%s: %s", t->sh.path,
						       sqlite3_errstr(rc));
				return rc;
			}
		}
	}
	return SQLITE_OK;
}

/**
 * sqlite3_ppcache_show() - describe a database's qNVRAM region
 * @path: the database file
 * @out: set to a description (sqlite3_free() it), also on errors
 *
 * Return: SQLITE_OK, or an error code with *@out saying why.
 */
PPC_EXPORT int sqlite3_ppcache_show(const char *path, char **out)
{
	struct ppc_tool t;
	int rc = ppc_tool_open(&t, path, 0, out);
	int chk;

	if (rc != SQLITE_OK) {
		ppc_tool_close(&t);
		return rc;
	}
	chk = ppc_check_file(&t.sh, &t.io);
	if (!t.sh.rgn)
		*out = sqlite3_mprintf(
			"file %s\nuid %u\nregion none\nfile_fenced %d\n"
			"verdict %s\n", t.sh.path, t.sh.uid, t.fh.fenced,
			chk == SQLITE_OK ? "ok (a plain SQLite file)" :
			"refused: fenced, but its region is not there");
	else
		*out = sqlite3_mprintf(
			"file %s\nuid %u\nregion %08x\nregion_bytes %llu\n"
			"page_size %u\ncapacity %u\ntxn %llu\ndb_bytes %llu\n"
			"committed_pages %u\nbase_bytes %llu\nbase_counter %u\n"
			"committed_counter %u\nfile_bytes %llu\n"
			"file_counter %u\nfile_fenced %d\nsalt %016llx\n"
			"made_for %s\nverdict %s\n", t.sh.path, t.sh.uid,
			t.sh.magic, (unsigned long long)t.sh.rgn_len, t.sh.ps,
			t.sh.cap, (unsigned long long)t.sh.txn,
			(unsigned long long)t.sh.db_bytes, t.sh.ncommitted,
			(unsigned long long)t.sh.base_bytes, t.sh.base_counter,
			ppc_committed_counter(&t.sh),
			(unsigned long long)t.fh.bytes, t.fh.counter,
			t.fh.fenced, (unsigned long long)t.sh.hdr->salt,
			t.sh.hdr->path, chk == SQLITE_OK ? "ok" :
			"refused (see the log line)");
	ppc_tool_close(&t);
	return SQLITE_OK;
}

/**
 * sqlite3_ppcache_export() - write the committed state into a new file
 * @path: the database file
 * @dest: the copy to create (must not exist)
 * @out: set to a report (sqlite3_free() it), also on errors
 *
 * The copy is the file with the region's committed pages applied, at the
 * committed size, without the fence: a plain SQLite database (check it
 * with PRAGMA integrity_check). Neither the file nor the region change.
 *
 * Return: SQLITE_OK, or an error code with *@out saying why.
 */
PPC_EXPORT int sqlite3_ppcache_export(const char *path, const char *dest,
				      char **out)
{
	struct ppc_tool t;
	struct ppc_io d = { NULL, -1 };
	unsigned char buf[65536];
	uint64_t off, bytes;
	uint32_t s, n = 0;
	int rc = ppc_tool_open(&t, path, 0, out);

	if (rc != SQLITE_OK)
		goto out;
	bytes = t.sh.rgn ? t.sh.db_bytes : t.fh.bytes;
	d.fd = open(dest, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (d.fd < 0) {
		*out = sqlite3_mprintf("%s: %s", dest, strerror(errno));
		rc = SQLITE_CANTOPEN;
		goto out;
	}
	for (off = 0; off < bytes && off < t.fh.bytes; off += sizeof(buf)) {
		size_t k = bytes - off < sizeof(buf) ? bytes - off : sizeof(buf);

		rc = ppc_io_read(&t.io, buf, k, off);
		if (rc == SQLITE_OK)
			rc = ppc_io_write(&d, buf, k, off);
		if (rc != SQLITE_OK)
			break;
	}
	for (s = 0; rc == SQLITE_OK && t.sh.rgn && s < t.sh.cap; s++) {
		int32_t w = ppc_idx_find(&t.sh, t.sh.meta[s].pgno, 0);

		if (w != (int32_t)s || !ppc_is_committed(&t.sh, s))
			continue;
		off = (uint64_t)(t.sh.meta[s].pgno - 1) * t.sh.ps;
		if (off >= bytes)
			continue;
		rc = ppc_io_write(&d, ppc_slot_data(&t.sh, s),
				  bytes - off < t.sh.ps ? bytes - off : t.sh.ps,
				  off);
		n++;
	}
	if (rc == SQLITE_OK)
		rc = ppc_io_truncate(&d, bytes);
	if (rc == SQLITE_OK && bytes >= PPC_FH_BYTES)
		rc = ppc_fence_remove(&d);
	if (rc == SQLITE_OK)
		rc = ppc_io_sync(&d, 1);
	if (rc != SQLITE_OK) {
		*out = sqlite3_mprintf("%s: write failed", dest);
		unlink(dest);
		goto out;
	}
	*out = sqlite3_mprintf("exported %s to %s: %llu bytes, %u pages from "
			       "qNVRAM (txn %llu)%s", t.sh.path, dest,
			       (unsigned long long)bytes, n,
			       (unsigned long long)t.sh.txn,
			       ppc_check_file(&t.sh, &t.io) == SQLITE_OK ? "" :
			       "; the file did not match the region (see the "
			       "log line): check the copy");
out:
	if (d.fd >= 0)
		close(d.fd);
	ppc_tool_close(&t);
	return rc;
}

/**
 * sqlite3_ppcache_discard() - drop a database's region, keep the file
 * @path: the database file
 * @out: set to a report (sqlite3_free() it), also on errors
 *
 * For a database ppcache refuses to open: the region (if any) is freed,
 * losing the transactions it held that the file lacks, and the fence is
 * taken off, so the file opens as it is. Needs every SQLite connection to
 * the file closed.
 *
 * Return: SQLITE_OK, SQLITE_BUSY (in use), or an error with *@out set.
 */
PPC_EXPORT int sqlite3_ppcache_discard(const char *path, char **out)
{
	struct ppc_tool t;
	uint32_t name, pages = 0;
	uint64_t txn = 0;
	int rc = ppc_tool_open(&t, path, 1, out);

	if (rc != SQLITE_OK)
		goto out;
	if (t.sh.rgn) {
		name = t.sh.magic;
		pages = t.sh.ncommitted;
		txn = t.sh.txn;
		ppc_region_forget(&t.sh);
		if (qnvm_free(t.sh.uid, name) < 0) {
			*out = sqlite3_mprintf("%s: region %08x not freed: %s",
					       t.sh.path, name,
					       errno == EBUSY ? "a running "
					       "process maps it" :
					       strerror(errno));
			rc = errno == EBUSY ? SQLITE_BUSY : SQLITE_IOERR;
			goto out;
		}
	}
	if (t.fh.fenced) {
		rc = ppc_fence_remove(&t.io);
		if (rc == SQLITE_OK)
			rc = ppc_io_sync(&t.io, 0);
		if (rc != SQLITE_OK) {
			*out = sqlite3_mprintf("%s: cannot remove the fence",
					       t.sh.path);
			goto out;
		}
	}
	if (pages || txn)
		*out = sqlite3_mprintf("%s: dropped its region: %u committed "
				       "pages up to txn %llu are lost; %s",
				       t.sh.path, pages,
				       (unsigned long long)txn, t.fh.fenced ?
				       "fence removed" : "no fence");
	else
		*out = sqlite3_mprintf("%s: no region with changes; %s",
				       t.sh.path, t.fh.fenced ?
				       "fence removed" : "no fence");
out:
	ppc_tool_close(&t);
	return rc;
}
#endif /* SQLITE_PPCACHE_STATIC */

#ifdef SQLITE_PPCACHE_STATIC
PPC_EXPORT int sqlite3_ppcache_register(int make_default)
{
	return ppc_register(NULL, make_default);
}

PPC_EXPORT int sqlite3_ppcache_register_over(const char *lower,
					     int make_default)
{
	return ppc_register(lower, make_default);
}
#else
PPC_EXPORT int sqlite3_ppcache_init(sqlite3 *db, char **pzErrMsg,
				    const sqlite3_api_routines *pApi)
{
	int rc;

	(void)db;
	(void)pzErrMsg;
	SQLITE_EXTENSION_INIT2(pApi);
	rc = ppc_register(NULL, 0);
	return rc == SQLITE_OK ? SQLITE_OK_LOAD_PERMANENTLY : rc;
}

PPC_EXPORT int sqlite3_ppcache_default_init(sqlite3 *db, char **pzErrMsg,
					    const sqlite3_api_routines *pApi)
{
	int rc;

	(void)db;
	(void)pzErrMsg;
	SQLITE_EXTENSION_INIT2(pApi);
	rc = ppc_register(NULL, 1);
	return rc == SQLITE_OK ? SQLITE_OK_LOAD_PERMANENTLY : rc;
}
#endif
