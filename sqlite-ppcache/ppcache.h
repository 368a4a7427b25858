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

/**
 * sqlite3_ppcache_register_over() - register ppcache over another VFS
 * @lower: the lower VFS's name ("unix" or NULL: the same as
 *	sqlite3_ppcache_register()); the shim is then "ppcache-<lower>"
 * @make_default: non-zero to make it the default VFS of the process
 *
 * Every read, write and sync of the database file goes through @lower, so
 * SQLite's test VFSes (crash simulation, fault injection) see them.
 *
 * Return: SQLITE_OK, or SQLITE_ERROR if there is no such VFS.
 */
int sqlite3_ppcache_register_over(const char *lower, int make_default);

/*
 * The ppcache(1) tool's calls: a database's region, outside SQLite. Each
 * sets *out to a text to print (sqlite3_free() it), on errors too, and
 * takes SQLite's locks on the file the way another process would:
 * SQLITE_BUSY while a connection elsewhere holds one.
 *
 *   sqlite3_ppcache_show()     what the region holds and whether the file
 *                              matches it (read-only)
 *   sqlite3_ppcache_export()   a new plain SQLite file at @dest holding the
 *                              committed state (file + region); nothing
 *                              else changes
 *   sqlite3_ppcache_discard()  free the region and take the fence off the
 *                              file: the file opens as it is, and the
 *                              region's newer transactions are lost
 */
int sqlite3_ppcache_show(const char *path, char **out);
int sqlite3_ppcache_export(const char *path, const char *dest, char **out);
int sqlite3_ppcache_discard(const char *path, char **out);

#ifdef __cplusplus
}
#endif

#endif /* PPCACHE_H */
