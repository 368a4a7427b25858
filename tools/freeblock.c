// SPDX-License-Identifier: GPL-2.0-only
/*
 * mobioctl fb: the "freeblock" generic netlink family of freeblock.ko (see
 * <linux/freeblock.h>): the background I/O counters of one disk, and its
 * own tunables.
 *
 *	mobioctl fb stats vdb
 *	tasks 1
 *	blocks_done 1024
 *	...
 *	mobioctl --json fb stats /dev/vdb
 *	{"dev":"vdb","tasks":1,...}
 *	mobioctl fb set dm-0 depth=4 ceiling_kbps=10240 stale_ms=default
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/freeblock.h>

#include "mobioctl.h"
#include "stats.h"

static int fb_stats(struct mobio_ctx *ctx, int argc, char **argv)
{
	(void)argc;
	return mobio_dev_stats(ctx, argv[0], FREEBLOCK_CMD_GET_STATS);
}

/* The tunables of FREEBLOCK_CMD_SET_DISK, in FREEBLOCK_A_* order. */
static const char *const fb_tunables[] = {
	[FREEBLOCK_A_DEPTH - MOBIO_A_FAMILY_BASE] = "depth",
	[FREEBLOCK_A_IDLE_MIN_US - MOBIO_A_FAMILY_BASE] = "idle_min_us",
	[FREEBLOCK_A_IDLE_MAX_US - MOBIO_A_FAMILY_BASE] = "idle_max_us",
	[FREEBLOCK_A_COLLIDE_PCT - MOBIO_A_FAMILY_BASE] = "collide_pct",
	[FREEBLOCK_A_FLOOR_KBPS - MOBIO_A_FAMILY_BASE] = "floor_kbps",
	[FREEBLOCK_A_CEILING_KBPS - MOBIO_A_FAMILY_BASE] = "ceiling_kbps",
	[FREEBLOCK_A_STALE_MS - MOBIO_A_FAMILY_BASE] = "stale_ms",
};

#define FB_NR_TUNABLES \
	((int)(sizeof(fb_tunables) / sizeof(fb_tunables[0])))

/*
 * VALUE of NAME=VALUE: "default" (FREEBLOCK_INHERIT), or a number below
 * it; the kernel judges the range. 0 or -1 after a usage error.
 */
static int fb_parse_value(struct mobio_ctx *ctx, const char *name,
			  const char *arg, uint32_t *val)
{
	unsigned long long v;
	char *end;

	if (!strcmp(arg, "default")) {
		*val = FREEBLOCK_INHERIT;
		return 0;
	}
	errno = 0;
	v = strtoull(arg, &end, 0);
	if (!isdigit((unsigned char)arg[0]) || *end || errno ||
	    v >= FREEBLOCK_INHERIT) {
		mobio_cmd_usage_error(ctx, "bad value '%s' for %s (want a "
				      "number from 0 to %u, or default)", arg,
				      name, FREEBLOCK_INHERIT - 1);
		return -1;
	}
	*val = (uint32_t)v;
	return 0;
}

static int fb_set(struct mobio_ctx *ctx, int argc, char **argv)
{
	uint32_t val[FB_NR_TUNABLES];
	bool given[FB_NR_TUNABLES] = { false };
	char buf[MOBIO_GENL_SNDBUF];
	const char *dev = argv[0];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	int i, k;

	if (!strncmp(dev, "/dev/", 5))
		dev += 5;
	/* a name as in /sys/block: the kernel's limit is 32 with the NUL */
	if (!*dev || strchr(dev, '/') || strlen(dev) >= 32)
		return mobio_cmd_usage_error(ctx, "bad device name '%s'",
					     argv[0]);
	/* The whole line is checked before anything is sent. */
	for (i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t len = eq ? (size_t)(eq - argv[i]) : 0;

		for (k = 0; eq && k < FB_NR_TUNABLES; k++)
			if (strlen(fb_tunables[k]) == len &&
			    !strncmp(argv[i], fb_tunables[k], len))
				break;
		if (!eq || k == FB_NR_TUNABLES)
			return mobio_cmd_usage_error(ctx, "unknown setting "
						     "'%s' (want NAME=VALUE; "
						     "see --help)", argv[i]);
		if (given[k])
			return mobio_cmd_usage_error(ctx, "%s given twice",
						     fb_tunables[k]);
		if (fb_parse_value(ctx, fb_tunables[k], eq + 1, &val[k]) < 0)
			return MOBIO_EXIT_USAGE;
		given[k] = true;
	}
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, FREEBLOCK_CMD_SET_DISK, 0);
	mnl_attr_put_strz(nlh, MOBIO_A_DEV_NAME, dev);
	for (k = 0; k < FB_NR_TUNABLES; k++)
		if (given[k])
			mnl_attr_put_u32(nlh, MOBIO_A_FAMILY_BASE + k, val[k]);
	if (mobio_genl_talk(g, nlh, NULL, NULL) < 0)
		return mobio_cmd_error(ctx);
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

static const struct mobio_cmd fb_cmds[] = {
	{
		.name = "stats", .args = "DEV",
		.summary = "print a disk's background I/O counters as "
			   "'name value' lines",
		.help =
"DEV is a disk as in /sys/block (\"vdb\" or \"/dev/vdb\") of which freeblock\n"
"has a record: it had a task there, or a setting (fb set); ENODEV otherwise.\n"
"A partition's tasks count on its disk. A counter's unit is its name's\n"
"suffix (_ns, _us, _ms, _pct, _kbps, _bytes), else a count; the conf_*\n"
"values are the disk's tunables in effect. See <linux/freeblock.h>.\n"
"fg_delayed should stay near 0.\n"
"With --json: one object, {\"dev\": DEV, name: value, ...}.\n",
		.min_args = 1, .max_args = 1, .run = fb_stats,
	},
	{
		.name = "set", .args = "DEV NAME=VALUE...",
		.summary = "set a disk's own tunables (the module parameters "
			   "are every disk's defaults)",
		.help =
"DEV is a disk as in /sys/block; it may have no task yet (the settings wait\n"
"for it). VALUE is a number, or \"default\": follow the module parameter of\n"
"the same name again. NAMEs and their ranges:\n"
"  depth         background blocks in flight, at most (1-64)\n"
"  idle_min_us   the idle window, shortest, us (10-10000000)\n"
"  idle_max_us   the idle window, longest, us (10-10000000)\n"
"  collide_pct   the idle window's collision budget, % (0-100)\n"
"  floor_kbps    the disk's background rate floor, KiB/s: blocks go even on\n"
"                a busy disk below it (0: strict idle-only)\n"
"  ceiling_kbps  the disk's background rate ceiling, KiB/s (0: none); at\n"
"                least floor_kbps\n"
"  stale_ms      a foreground count that has not moved for this long is\n"
"                reset by the watchdog, ms (100-600000)\n"
"All or nothing: a value out of range changes no setting (the kernel's\n"
"message names it). Needs CAP_SYS_ADMIN. See them in effect in fb stats\n"
"(conf_*).\n",
		.min_args = 2, .max_args = 1 + FB_NR_TUNABLES, .run = fb_set,
	},
};

const struct mobio_object mobio_fb_object = {
	.name = "fb",
	.family = FREEBLOCK_GENL_NAME,
	.module = "freeblock",
	.summary = "Freeblock: background I/O in the foreground's idle time",
	.help =
"Background scrubs: fb-scrub DEV (docs/freeblock.md). Module parameters\n"
"(depth, idle_min_us, idle_max_us, collide_pct, floor_kbps, ceiling_kbps,\n"
"stale_ms: every disk's defaults, see fb set; max_tasks) are in\n"
"/sys/module/freeblock/parameters/.\n",
	.cmds = fb_cmds,
	.nr_cmds = (int)(sizeof(fb_cmds) / sizeof(fb_cmds[0])),
};
