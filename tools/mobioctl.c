// SPDX-License-Identifier: GPL-2.0-only
/*
 * mobioctl: control the mobio kernel modules over generic netlink, as ip(8)
 * and iw(8) do for the network stack:
 *
 *	mobioctl [-j|--json] [-h|--help] OBJECT COMMAND [ARGS]
 *
 * Objects are the modules' families; each lives in its own file and lists
 * its commands in a struct mobio_object (see mobioctl.h). This file parses
 * the global options, dispatches, and prints help at every level: "mobioctl
 * --help", "mobioctl OBJECT --help" and "mobioctl OBJECT COMMAND --help".
 * -j/--json and -h/--help are also accepted after the command.
 *
 * Exit codes: 0 ok, 1 runtime error (the kernel or the system refused),
 * 2 usage error.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <linux/mobio.h>

#include "mobioctl.h"

#define MOBIO_VERSION	"1.0"

static const struct mobio_object *const mobio_objects[] = {
	&mobio_qnvram_object,
	&mobio_smartio_object,
	&mobio_asap_object,
	&mobio_fb_object,
};

#define MOBIO_NR_OBJECTS \
	((int)(sizeof(mobio_objects) / sizeof(mobio_objects[0])))

/* --- Help ----------------------------------------------------------------- */

static void mobio_usage(FILE *out)
{
	int i;

	fprintf(out,
		"Usage: " MOBIO_PROG " [OPTIONS] OBJECT COMMAND [ARGS]\n"
		"       " MOBIO_PROG " OBJECT --help\n"
		"       " MOBIO_PROG " OBJECT COMMAND --help\n"
		"\n"
		"Options:\n"
		"  -j, --json     print JSON, one value per line\n"
		"  -h, --help     print this help\n"
		"  -V, --version  print the version\n"
		"\n"
		"Objects:\n");
	for (i = 0; i < MOBIO_NR_OBJECTS; i++)
		fprintf(out, "  %-8s %s\n", mobio_objects[i]->name,
			mobio_objects[i]->summary);
	fprintf(out,
		"\n"
		"Numbers are decimal, 0x-hex or 0-octal.\n"
		"Exit status: 0 ok, 1 runtime error, 2 usage error.\n");
}

static void mobio_object_usage(const struct mobio_object *obj, FILE *out)
{
	int i, w = 0;

	for (i = 0; i < obj->nr_cmds; i++) {
		int n = (int)(strlen(obj->cmds[i].name) +
			      strlen(obj->cmds[i].args)) + 1;

		if (n > w)
			w = n;
	}
	fprintf(out, "Usage: " MOBIO_PROG " [-j] %s COMMAND [ARGS]\n\n"
		"%s.\n\nCommands:\n", obj->name, obj->summary);
	for (i = 0; i < obj->nr_cmds; i++) {
		const struct mobio_cmd *c = &obj->cmds[i];
		char syn[128];

		snprintf(syn, sizeof(syn), "%s%s%s", c->name,
			 *c->args ? " " : "", c->args);
		fprintf(out, "  %-*s  %s\n", w, syn, c->summary);
	}
	if (obj->help)
		fprintf(out, "\n%s", obj->help);
}

static void mobio_cmd_usage(const struct mobio_object *obj,
			    const struct mobio_cmd *c, FILE *out)
{
	fprintf(out, "Usage: " MOBIO_PROG " [-j] %s %s%s%s\n\n%c%s.\n",
		obj->name, c->name, *c->args ? " " : "", c->args,
		toupper((unsigned char)c->summary[0]), c->summary + 1);
	if (c->help)
		fprintf(out, "\n%s", c->help);
}

/* --- Helpers for the objects ---------------------------------------------- */

struct mobio_genl *mobio_family(struct mobio_ctx *ctx)
{
	const struct mobio_object *obj = ctx->obj;

	if (ctx->genl_open)
		return &ctx->genl;
	if (mobio_genl_open(&ctx->genl, obj->family) < 0) {
		if (errno == ENOENT)
			fprintf(stderr, MOBIO_PROG ": %s module not loaded "
				"(no '%s' generic netlink family)\n",
				obj->module, obj->family);
		else if (errno == EPROTO)
			fprintf(stderr, MOBIO_PROG ": %s module speaks "
				"netlink version %u, " MOBIO_PROG
				" speaks %u: use the tools built with the "
				"module\n", obj->module, ctx->genl.version,
				MOBIO_GENL_VERSION);
		else
			fprintf(stderr, MOBIO_PROG ": %s: generic netlink: "
				"%s\n", obj->name, strerror(errno));
		return NULL;
	}
	ctx->genl_open = true;
	return &ctx->genl;
}

int mobio_cmd_error(struct mobio_ctx *ctx)
{
	const struct mobio_genl *g = &ctx->genl;
	int err = errno;

	fprintf(stderr, MOBIO_PROG ": %s %s: %s", ctx->obj->name,
		ctx->cmd->name, strerror(err));
	if (ctx->genl_open && g->ext_msg[0])
		fprintf(stderr, " (%s)", g->ext_msg);
	else if (ctx->genl_open && g->ext_miss_type >= 0)
		fprintf(stderr, " (missing attribute %d)", g->ext_miss_type);
	fputc('\n', stderr);
	return MOBIO_EXIT_ERROR;
}

int mobio_watch(struct mobio_ctx *ctx, int argc, char **argv, mnl_cb_t cb,
		void *data, uint32_t *left)
{
	struct mobio_genl *g;

	if (argc == 1 && mobio_parse_u32(ctx, "COUNT", argv[0], left) < 0)
		return MOBIO_EXIT_USAGE;
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	if (mobio_genl_join_events(g) < 0 || mobio_genl_listen(g, cb, data) < 0)
		return mobio_cmd_error(ctx);
	return MOBIO_EXIT_OK;
}

void mobio_cmd_warning(struct mobio_ctx *ctx)
{
	if (ctx->genl_open && ctx->genl.ext_msg[0])
		fprintf(stderr, MOBIO_PROG ": %s %s: warning: %s\n",
			ctx->obj->name, ctx->cmd->name, ctx->genl.ext_msg);
}

int mobio_cmd_usage_error(struct mobio_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, MOBIO_PROG ": %s %s: ", ctx->obj->name,
		ctx->cmd->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nUsage: " MOBIO_PROG " %s %s%s%s\n", ctx->obj->name,
		ctx->cmd->name, *ctx->cmd->args ? " " : "", ctx->cmd->args);
	return MOBIO_EXIT_USAGE;
}

int mobio_parse_u32(struct mobio_ctx *ctx, const char *what, const char *arg,
		    uint32_t *val)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (!isdigit((unsigned char)arg[0]) || *end || errno ||
	    v > UINT32_MAX) {
		mobio_cmd_usage_error(ctx, "bad %s '%s' (want a number from "
				      "0 to 4294967295)", what, arg);
		return -1;
	}
	*val = (uint32_t)v;
	return 0;
}

/* --- Dispatch ------------------------------------------------------------- */

static bool mobio_is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help") ||
	       !strcmp(arg, "help");
}

static const struct mobio_object *mobio_find_object(const char *name)
{
	int i;

	for (i = 0; i < MOBIO_NR_OBJECTS; i++)
		if (!strcmp(mobio_objects[i]->name, name))
			return mobio_objects[i];
	return NULL;
}

static const struct mobio_cmd *mobio_find_cmd(const struct mobio_object *obj,
					      const char *name)
{
	int i;

	for (i = 0; i < obj->nr_cmds; i++)
		if (!strcmp(obj->cmds[i].name, name))
			return &obj->cmds[i];
	return NULL;
}

/* argv[0] is the command's name. */
static int mobio_run_cmd(struct mobio_ctx *ctx, int argc, char **argv)
{
	const struct mobio_cmd *c = ctx->cmd;
	int i, n = 0, ret;

	/* Pull -j/--json and -h/--help out of the arguments. */
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			ctx->json = true;
		} else if (!strcmp(argv[i], "-h") ||
			   !strcmp(argv[i], "--help")) {
			mobio_cmd_usage(ctx->obj, c, stdout);
			return MOBIO_EXIT_OK;
		} else {
			argv[1 + n++] = argv[i];
		}
	}
	if (n == 1 && !strcmp(argv[1], "help")) {
		mobio_cmd_usage(ctx->obj, c, stdout);
		return MOBIO_EXIT_OK;
	}
	if (n < c->min_args || n > c->max_args)
		return mobio_cmd_usage_error(ctx, "%s arguments",
					     n < c->min_args ? "too few" :
					     "too many");
	ret = c->run(ctx, n, argv + 1);
	if (ctx->genl_open)
		mobio_genl_close(&ctx->genl);
	return ret;
}

/* argv[0] is the object's name. */
static int mobio_run_object(struct mobio_ctx *ctx, int argc, char **argv)
{
	const struct mobio_object *obj = ctx->obj;

	if (argc < 2) {
		mobio_object_usage(obj, stderr);
		return MOBIO_EXIT_USAGE;
	}
	if (mobio_is_help(argv[1])) {
		mobio_object_usage(obj, stdout);
		return MOBIO_EXIT_OK;
	}
	ctx->cmd = mobio_find_cmd(obj, argv[1]);
	if (!ctx->cmd) {
		fprintf(stderr, MOBIO_PROG ": %s: unknown command '%s' "
			"(try " MOBIO_PROG " %s --help)\n", obj->name, argv[1],
			obj->name);
		return MOBIO_EXIT_USAGE;
	}
	return mobio_run_cmd(ctx, argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json",	no_argument, NULL, 'j' },
		{ "help",	no_argument, NULL, 'h' },
		{ "version",	no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct mobio_ctx ctx = { 0 };
	int c;

	/* "+": options end at OBJECT; what follows is the object's. */
	while ((c = getopt_long(argc, argv, "+jhV", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			ctx.json = true;
			break;
		case 'h':
			mobio_usage(stdout);
			return MOBIO_EXIT_OK;
		case 'V':
			printf(MOBIO_PROG " %s (netlink version %d)\n",
			       MOBIO_VERSION, MOBIO_GENL_VERSION);
			return MOBIO_EXIT_OK;
		default:
			mobio_usage(stderr);
			return MOBIO_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		mobio_usage(stderr);
		return MOBIO_EXIT_USAGE;
	}
	if (!strcmp(argv[optind], "help")) {
		mobio_usage(stdout);
		return MOBIO_EXIT_OK;
	}
	ctx.obj = mobio_find_object(argv[optind]);
	if (!ctx.obj) {
		fprintf(stderr, MOBIO_PROG ": unknown object '%s' (try "
			MOBIO_PROG " --help)\n", argv[optind]);
		return MOBIO_EXIT_USAGE;
	}
	return mobio_run_object(&ctx, argc - optind, argv + optind);
}
