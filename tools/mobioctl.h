/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mobioctl: one CLI over the generic netlink families of the mobio modules.
 * Each family is one object (tools/<family>.c) that describes its commands
 * with a struct mobio_object; mobioctl.c parses the global options, finds
 * the object and the command, prints help at every level and opens the
 * family only when a command asks for it.
 */
#ifndef MOBIO_TOOLS_MOBIOCTL_H
#define MOBIO_TOOLS_MOBIOCTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "genl.h"

#define MOBIO_PROG	"mobioctl"

/* Exit codes, as ip(8) and iw(8) use them. */
enum mobio_exit {
	MOBIO_EXIT_OK = 0,
	MOBIO_EXIT_ERROR = 1,	/* the kernel or the system said no */
	MOBIO_EXIT_USAGE = 2,	/* the command line was wrong */
};

struct mobio_ctx;

/* One command of an object: "mobioctl OBJECT NAME ARGS". */
struct mobio_cmd {
	const char *name;
	const char *args;	/* synopsis of the arguments, "" if none */
	const char *summary;	/* one line for the object's help */
	const char *help;	/* the command's --help body, may be NULL */
	int min_args;
	int max_args;
	/* Return an enum mobio_exit; argv[0] is the first argument. */
	int (*run)(struct mobio_ctx *ctx, int argc, char **argv);
};

/* One object: a mobio family and its commands. */
struct mobio_object {
	const char *name;	/* on the command line: "qnvram" */
	const char *family;	/* generic netlink family: "qnvram" */
	const char *module;	/* for "module not loaded": "qnvram" */
	const char *summary;	/* one line for mobioctl --help */
	const char *help;	/* extra text for "mobioctl OBJECT --help" */
	const struct mobio_cmd *cmds;
	int nr_cmds;
};

/* What a command runs with. */
struct mobio_ctx {
	const struct mobio_object *obj;
	const struct mobio_cmd *cmd;
	bool json;		/* -j/--json */
	bool genl_open;
	struct mobio_genl genl;
};

/*
 * The object's family, opened on first use. On failure print why ("module
 * not loaded ...") and return NULL: the command exits MOBIO_EXIT_ERROR.
 */
struct mobio_genl *mobio_family(struct mobio_ctx *ctx);

/*
 * Print "mobioctl: OBJECT COMMAND: strerror(errno)" and the kernel's
 * extack message, if any, in parentheses; return MOBIO_EXIT_ERROR.
 */
int mobio_cmd_error(struct mobio_ctx *ctx);

/* Print the extack warning of a successful request, if any. */
void mobio_cmd_warning(struct mobio_ctx *ctx);

/*
 * Print "mobioctl: OBJECT COMMAND: " @fmt and the command's synopsis to
 * stderr; return MOBIO_EXIT_USAGE.
 */
int mobio_cmd_usage_error(struct mobio_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * Parse a u32 argument: decimal, 0x hex or 0 octal, nothing else. Return
 * 0, or -1 after printing a usage error naming @what.
 */
int mobio_parse_u32(struct mobio_ctx *ctx, const char *what, const char *arg,
		    uint32_t *val);

/*
 * The "watch [COUNT]" command of a family with an events group: parse
 * COUNT (@argc 0 or 1) into *@left (0: forever), join the group and pass
 * every event to @cb with @data until @cb returns MNL_CB_STOP (it counts
 * *@left down) or the socket fails. Return a MOBIO_EXIT_* code.
 */
int mobio_watch(struct mobio_ctx *ctx, int argc, char **argv, mnl_cb_t cb,
		void *data, uint32_t *left);

/* The objects, one per family file. */
extern const struct mobio_object mobio_qnvram_object;
extern const struct mobio_object mobio_smartio_object;
extern const struct mobio_object mobio_asap_object;
extern const struct mobio_object mobio_fb_object;

#endif /* MOBIO_TOOLS_MOBIOCTL_H */
