// SPDX-License-Identifier: GPL-2.0-only
/*
 * Printer of MOBIO_A_STATS (see stats.h). A counter's unit is its name's
 * suffix (_bytes, _ns, _pages) or a plain count, so the value is printed as
 * the kernel sent it, in decimal.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <linux/mobio.h>

#include "json.h"
#include "mobioctl.h"
#include "stats.h"

static int mobio_stat_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	switch (type) {
	case MOBIO_STAT_A_NAME:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0 &&
		    mnl_attr_get_payload_len(attr) <= MOBIO_STAT_NAME_MAX)
			tb[type] = attr;
		break;
	case MOBIO_STAT_A_VALUE:
		if (mnl_attr_validate(attr, MNL_TYPE_U64) == 0)
			tb[type] = attr;
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

int mobio_print_stats(const struct nlattr *stats, bool json)
{
	const struct nlattr *stat;
	int printed = 0;

	mnl_attr_for_each_nested(stat, stats) {
		const struct nlattr *tb[MOBIO_STAT_A_MAX + 1] = { 0 };
		const char *name;
		uint64_t value;

		if (mnl_attr_get_type(stat) != MOBIO_A_STAT)
			continue;
		if (mnl_attr_parse_nested(stat, mobio_stat_attr_cb, tb) < 0 ||
		    !tb[MOBIO_STAT_A_NAME] || !tb[MOBIO_STAT_A_VALUE])
			continue;
		name = mnl_attr_get_str(tb[MOBIO_STAT_A_NAME]);
		value = mnl_attr_get_u64(tb[MOBIO_STAT_A_VALUE]);
		if (json)
			json_u64(name, value);
		else
			printf("%s %" PRIu64 "\n", name, value);
		printed++;
	}
	return printed;
}

struct mobio_dev_reply {
	struct mobio_ctx *ctx;
	int count;
};

static int mobio_dev_attr_cb(const struct nlattr *attr, void *data)
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

static int mobio_dev_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[MOBIO_A_STATS + 1] = { 0 };
	struct mobio_dev_reply *r = data;

	mnl_attr_parse(nlh, GENL_HDRLEN, mobio_dev_attr_cb, tb);
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

int mobio_dev_stats(struct mobio_ctx *ctx, const char *arg, uint8_t cmd)
{
	struct mobio_dev_reply r = { .ctx = ctx };
	char buf[MOBIO_GENL_SNDBUF];
	const char *dev = arg;
	struct mobio_genl *g;
	struct nlmsghdr *nlh;

	if (!strncmp(dev, "/dev/", 5))
		dev += 5;
	/* a name as in /sys/block: the kernel's limit is 32 with the NUL */
	if (!*dev || strchr(dev, '/') || strlen(dev) >= 32)
		return mobio_cmd_usage_error(ctx, "bad device name '%s'", arg);
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, cmd, 0);
	mnl_attr_put_strz(nlh, MOBIO_A_DEV_NAME, dev);
	if (mobio_genl_talk(g, nlh, mobio_dev_stats_cb, &r) < 0)
		return mobio_cmd_error(ctx);
	if (!r.count) {
		errno = EBADMSG;	/* an ack without the counters */
		return mobio_cmd_error(ctx);
	}
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}
