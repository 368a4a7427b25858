/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ppcache: show, export or discard the qNVRAM region of a database that the
 * ppcache VFS keeps (sqlite-ppcache/ppcache.c). The way out when ppcache
 * refuses to open a database because file and region disagree, and the way
 * to take a consistent copy while committed pages live in qNVRAM.
 *
 *   ppcache show DB            what the region holds, whether the file matches
 *   ppcache export DB COPY     write file + region's committed pages to COPY,
 *                              a plain SQLite database (nothing else changes)
 *   ppcache discard DB         free the region and take the fence off DB: it
 *                              opens as it is; the region's newer commits are
 *                              lost
 *
 * Exit: 0 done, 1 failed (the message says why), 2 usage.
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "ppcache.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ppcache show DB\n"
		"       ppcache export DB COPY\n"
		"       ppcache discard DB\n"
		"\n"
		"show     the database's qNVRAM region: committed pages the file lacks,\n"
		"         the file's fence, and whether ppcache will open it (verdict)\n"
		"export   a plain SQLite copy of the committed state (file + region) at\n"
		"         COPY, which must not exist; the database is not changed\n"
		"discard  free the region and remove the fence: the file opens as it\n"
		"         is, and transactions only the region held are lost\n"
		"\n"
		"Every SQLite connection to DB must be closed for discard (others may\n"
		"read during show and export). Run as the file's owner or root.\n");
}

static void log_cb(void *arg, int rc, const char *msg)
{
	(void)arg;
	(void)rc;
	fprintf(stderr, "%s\n", msg);
}

int main(int argc, char **argv)
{
	char *out = NULL;
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	sqlite3_config(SQLITE_CONFIG_LOG, log_cb, NULL);
	if (argc == 3 && !strcmp(argv[1], "show"))
		rc = sqlite3_ppcache_show(argv[2], &out);
	else if (argc == 4 && !strcmp(argv[1], "export"))
		rc = sqlite3_ppcache_export(argv[2], argv[3], &out);
	else if (argc == 3 && !strcmp(argv[1], "discard"))
		rc = sqlite3_ppcache_discard(argv[2], &out);
	else {
		usage(stderr);
		return 2;
	}
	if (out)
		fprintf(rc == SQLITE_OK ? stdout : stderr, "%s%s", out,
			out[0] && out[strlen(out) - 1] == '\n' ? "" : "\n");
	sqlite3_free(out);
	return rc == SQLITE_OK ? 0 : 1;
}
