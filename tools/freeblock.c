// SPDX-License-Identifier: GPL-2.0-only
/*
 * mobioctl fb: the "freeblock" generic netlink family of freeblock.ko (see
 * <linux/freeblock.h>): the background I/O counters of one disk.
 *
 *	mobioctl fb stats vdb
 *	tasks 1
 *	blocks_done 1024
 *	...
 *	mobioctl --json fb stats /dev/vdb
 *	{"dev":"vdb","tasks":1,...}
 */

#include <linux/freeblock.h>

#include "mobioctl.h"
#include "stats.h"

static int fb_stats(struct mobio_ctx *ctx, int argc, char **argv)
{
	(void)argc;
	return mobio_dev_stats(ctx, argv[0], FREEBLOCK_CMD_GET_STATS);
}

static const struct mobio_cmd fb_cmds[] = {
	{
		.name = "stats", .args = "DEV",
		.summary = "print a disk's background I/O counters as "
			   "'name value' lines",
		.help =
"DEV is a disk as in /sys/block (\"vdb\" or \"/dev/vdb\") on which freeblock\n"
"has had a task (ENODEV otherwise); a partition's tasks count on its disk.\n"
"A counter's unit is its name's suffix (_ns, _us, _bytes), else a count;\n"
"see <linux/freeblock.h>. fg_delayed should stay near 0.\n"
"With --json: one object, {\"dev\": DEV, name: value, ...}.\n",
		.min_args = 1, .max_args = 1, .run = fb_stats,
	},
};

const struct mobio_object mobio_fb_object = {
	.name = "fb",
	.family = FREEBLOCK_GENL_NAME,
	.module = "freeblock",
	.summary = "Freeblock: background I/O in the foreground's idle time",
	.help =
"Background scrubs: fb-scrub DEV (docs/freeblock.md). Module parameters\n"
"(depth, idle_min_us, idle_max_us, idle_mult, max_tasks) are in\n"
"/sys/module/freeblock/parameters/.\n",
	.cmds = fb_cmds,
	.nr_cmds = (int)(sizeof(fb_cmds) / sizeof(fb_cmds[0])),
};
