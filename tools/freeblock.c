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
#include <errno.h>
#include <string.h>

#include <linux/freeblock.h>

#include "json.h"
#include "mobioctl.h"
#include "stats.h"

struct fb_reply {
	struct mobio_ctx *ctx;
	int count;
};

static int fb_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (type == MOBIO_A_DEV_NAME &&
	    mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0)
		tb[type] = attr;
	else if (type == MOBIO_A_STATS &&
		 mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

static int fb_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MOBIO_A_STATS + 1] = { 0 };
	struct fb_reply *r = data;

	mnl_attr_parse(nlh, GENL_HDRLEN, fb_attr_cb, tb);
	if (!tb[MOBIO_A_STATS])
		return MNL_CB_OK;
	if (r->ctx->json) {
		json_object_open(NULL);
		if (tb[MOBIO_A_DEV_NAME])
			json_string("dev", mnl_attr_get_str(tb[MOBIO_A_DEV_NAME]));
	}
	mobio_print_stats(tb[MOBIO_A_STATS], r->ctx->json);
	if (r->ctx->json) {
		json_object_close();
		json_end();
	}
	r->count++;
	return MNL_CB_OK;
}

static int fb_stats(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct fb_reply r = { .ctx = ctx };
	char buf[MOBIO_GENL_SNDBUF];
	const char *dev = argv[0];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;

	(void)argc;
	if (!strncmp(dev, "/dev/", 5))
		dev += 5;
	if (!*dev || strchr(dev, '/') || strlen(dev) >= 32)
		return mobio_cmd_usage_error(ctx, "bad device name '%s'",
					     argv[0]);
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, FREEBLOCK_CMD_GET_STATS, 0);
	mnl_attr_put_strz(nlh, MOBIO_A_DEV_NAME, dev);
	if (mobio_genl_talk(g, nlh, fb_stats_cb, &r) < 0)
		return mobio_cmd_error(ctx);
	if (!r.count) {
		errno = EBADMSG;	/* an ack without the counters */
		return mobio_cmd_error(ctx);
	}
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
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
