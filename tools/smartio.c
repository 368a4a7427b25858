// SPDX-License-Identifier: GPL-2.0-only
/*
 * mobioctl smartio: the "smartio" generic netlink family of
 * smartio-iosched.ko (see <linux/smartio.h>): the counters of one disk
 * whose I/O scheduler is smartio.
 *
 *	mobioctl smartio stats vda
 *	dispatched_rt_read 0
 *	...
 *	mobioctl --json smartio stats vda
 *	{"dev":"vda","dispatched_rt_read":0,...}
 */

#include <linux/smartio.h>

#include "mobioctl.h"
#include "stats.h"

static int smartio_stats(struct mobio_ctx *ctx, int argc, char **argv)
{
	(void)argc;
	return mobio_dev_stats(ctx, argv[0], SMARTIO_CMD_GET_STATS);
}

static const struct mobio_cmd smartio_cmds[] = {
	{
		.name = "stats", .args = "DEV",
		.summary = "print a disk's scheduler counters as 'name value' "
			   "lines",
		.help =
"DEV is a disk whose scheduler is smartio, as in /sys/block (\"vda\" or\n"
"\"/dev/vda\"); ENODEV otherwise. A counter's unit is its name's suffix\n"
"(_ns, _us, _pct), else a count; see <linux/smartio.h>.\n"
"With --json: one object, {\"dev\": DEV, name: value, ...}.\n",
		.min_args = 1, .max_args = 1, .run = smartio_stats,
	},
};

const struct mobio_object mobio_smartio_object = {
	.name = "smartio",
	.family = SMARTIO_GENL_NAME,
	.module = "smartio-iosched",
	.summary = "SmartIO I/O scheduler: reads first, writes throttled",
	.help =
"Tunables are in /sys/block/DEV/queue/iosched/ (docs/smartio.md).\n",
	.cmds = smartio_cmds,
	.nr_cmds = (int)(sizeof(smartio_cmds) / sizeof(smartio_cmds[0])),
};
