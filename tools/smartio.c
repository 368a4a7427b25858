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
#include <errno.h>
#include <string.h>

#include <linux/smartio.h>

#include "json.h"
#include "mobioctl.h"
#include "stats.h"

struct smartio_reply {
	struct mobio_ctx *ctx;
	int count;
};

static int smartio_attr_cb(const struct nlattr *attr, void *data)
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

static int smartio_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MOBIO_A_STATS + 1] = { 0 };
	struct smartio_reply *r = data;

	mnl_attr_parse(nlh, GENL_HDRLEN, smartio_attr_cb, tb);
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

static int smartio_stats(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct smartio_reply r = { .ctx = ctx };
	char buf[MOBIO_GENL_SNDBUF];
	const char *dev = argv[0];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;

	(void)argc;
	if (!strncmp(dev, "/dev/", 5))
		dev += 5;
	if (!*dev || strchr(dev, '/'))
		return mobio_cmd_usage_error(ctx, "bad device name '%s'",
					     argv[0]);
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, SMARTIO_CMD_GET_STATS, 0);
	mnl_attr_put_strz(nlh, MOBIO_A_DEV_NAME, dev);
	if (mobio_genl_talk(g, nlh, smartio_stats_cb, &r) < 0)
		return mobio_cmd_error(ctx);
	if (!r.count) {
		errno = EBADMSG;	/* an ack without the counters */
		return mobio_cmd_error(ctx);
	}
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
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
