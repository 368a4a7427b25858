// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Glue for SQLite's testfixture (tests/sqlite/Makefile): makes "ppcache" the
 * default VFS of the process, so every test database that SQLite's TCL tests
 * open without naming a VFS goes through ppcache.
 *
 * The amalgamation is compiled with -DSQLITE_EXTRA_INIT=mobio_sqlite_tests_init:
 * sqlite3_initialize() calls this at the end of every real initialization.
 * The tests call sqlite3_shutdown() and sqlite3_initialize() again (tester.tcl
 * does it to install its fault-injecting malloc), and each initialization runs
 * sqlite3_os_init(), which registers "unix" as the default again, so this must
 * run every time and be idempotent: sqlite3_ppcache_register(1) registers the
 * VFS once and only makes it the default on later calls.
 *
 * MOBIO_SQLITE_TESTS_VFS=unix leaves SQLite's default alone: the same binary
 * then runs the tests on stock "unix", the baseline that tells a failure of
 * ppcache from one of this build or of the tests themselves.
 */
#include <stdlib.h>
#include <string.h>

#include "sqlite3.h"

#include "ppcache.h"

int mobio_sqlite_tests_init(const char *unused);

int mobio_sqlite_tests_init(const char *unused)
{
	const char *want = getenv("MOBIO_SQLITE_TESTS_VFS");
	sqlite3_vfs *vfs;
	int rc;

	(void)unused;
	if (want && strcmp(want, "unix") == 0)
		return SQLITE_OK;
	rc = sqlite3_ppcache_register(1);
	if (rc != SQLITE_OK)
		return rc;
	vfs = sqlite3_vfs_find(PPCACHE_VFS_NAME);
	if (!vfs)
		return SQLITE_ERROR;
	if (sqlite3_vfs_find(NULL) != vfs)
		rc = sqlite3_vfs_register(vfs, 1);
	return rc;
}
