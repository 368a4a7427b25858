/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ppcache: a SQLite VFS that keeps committed pages in qNVRAM (pPCache) and
 * writes them into the database file lazily (LazyFlush). See the head
 * comment of ppcache.c for the manual, docs/ppcache.md for the design.
 *
 * Static use: link libppcache.a, -lqnvram and -lsqlite3, then call
 * sqlite3_ppcache_register() once before opening databases:
 *
 *	sqlite3_ppcache_register(0);
 *	sqlite3_open_v2("file:app.db?vfs=ppcache&threshold=5", &db,
 *			SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
 *			SQLITE_OPEN_URI, NULL);
 *
 * As a loadable extension (libppcache.so) the entry point is
 * sqlite3_ppcache_init(), which SQLite finds by itself:
 * `.load ./libppcache` in the sqlite3 shell.
 */
#ifndef PPCACHE_H
#define PPCACHE_H

#ifdef __cplusplus
extern "C" {
#endif

/* The VFS name to pass as ?vfs= or to sqlite3_open_v2(). */
#define PPCACHE_VFS_NAME	"ppcache"

/* URI parameter defaults. */
#define PPCACHE_DEFAULT_THRESHOLD	5	/* committed pages held before a flush */
#define PPCACHE_DEFAULT_MAX_PAGES	8192	/* region cap, page slots */

/**
 * sqlite3_ppcache_register() - register the "ppcache" VFS
 * @make_default: non-zero to make it the default VFS of the process
 *
 * Idempotent. Also registers an auto-extension that switches connections
 * opened with fallback=wal (no qNVRAM) to journal_mode=WAL.
 *
 * Return: SQLITE_OK, or SQLITE_ERROR if there is no "unix" VFS to sit on.
 */
int sqlite3_ppcache_register(int make_default);

#ifdef __cplusplus
}
#endif

#endif /* PPCACHE_H */
