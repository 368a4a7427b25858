// SPDX-License-Identifier: GPL-2.0-only
/*
 * mobioctl qnvram: the "qnvram" generic netlink family of qnvram.ko (see
 * <linux/qnvram.h>): list the pool's regions, show one, free one, print the
 * pool's counters, flush the pool to the backing device, watch events.
 *
 * A region prints as one line of key-value pairs, as ip(8) prints a link:
 *	uid 1000 magic 0x2a size 8192 state resident maps 1 offset 0x200000
 * (offset only for CAP_SYS_ADMIN), or with --json as an object with the
 * same keys: {"uid":1000,"magic":42,"size":8192,"state":"resident",...}.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/qnvram.h>

#include "json.h"
#include "mobioctl.h"
#include "stats.h"

/* Types of the attributes this file reads; MNL_TYPE_UNSPEC: ignored. */
static const enum mnl_attr_data_type qnvram_attr_type[QNVRAM_A_MAX + 1] = {
	[MOBIO_A_UID]		= MNL_TYPE_U32,
	[MOBIO_A_RANGE_START]	= MNL_TYPE_U64,
	[MOBIO_A_STATS]		= MNL_TYPE_NESTED,
	[QNVRAM_A_MAGIC]	= MNL_TYPE_U32,
	[QNVRAM_A_SIZE]		= MNL_TYPE_U64,
	[QNVRAM_A_STATE]	= MNL_TYPE_U32,
	[QNVRAM_A_MAP_COUNT]	= MNL_TYPE_U32,
	[QNVRAM_A_REGION]	= MNL_TYPE_NESTED,
	[QNVRAM_A_EVENT]	= MNL_TYPE_U32,
};

static const char *const qnvram_state_name[] = {
	[QNVRAM_STATE_RESIDENT]	= "resident",
	[QNVRAM_STATE_SWAPPED]	= "swapped",
};

static const char *const qnvram_event_name[] = {
	[QNVRAM_EVENT_FLUSHED]		= "flushed",
	[QNVRAM_EVENT_POWER_KEY]	= "power-key",
	[QNVRAM_EVENT_SWAPPED_OUT]	= "swapped-out",
	[QNVRAM_EVENT_SWAPPED_IN]	= "swapped-in",
};

#define QNVRAM_NAME(table, i)						\
	((i) < sizeof(table) / sizeof((table)[0]) && (table)[i] ?	\
	 (table)[i] : NULL)

/* Keep the attributes of known number and valid type in tb[]. */
static int qnvram_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	if (type <= QNVRAM_A_MAX && qnvram_attr_type[type] != MNL_TYPE_UNSPEC &&
	    mnl_attr_validate(attr, qnvram_attr_type[type]) == 0)
		tb[type] = attr;
	return MNL_CB_OK;
}

static void qnvram_parse_msg(const struct nlmsghdr *nlh,
			     const struct nlattr **tb)
{
	mnl_attr_parse(nlh, GENL_HDRLEN, qnvram_attr_cb, tb);
}

/* One "key value" pair of a plain line, space-separated from the last. */
__attribute__((format(printf, 2, 3)))
static void qnvram_kv(const char **sep, const char *fmt, ...)
{
	va_list ap;

	fputs(*sep, stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	*sep = " ";
}

/* Print one QNVRAM_A_REGION nest; with @key inside a JSON object. */
static void qnvram_print_region(struct mobio_ctx *ctx, const char *key,
				const struct nlattr *region)
{
	const struct nlattr *tb[QNVRAM_A_MAX + 1] = { 0 };
	const char *state = NULL, *sep = "";
	uint32_t st = 0;
	char buf[32];

	mnl_attr_parse_nested(region, qnvram_attr_cb, tb);
	if (tb[QNVRAM_A_STATE]) {
		st = mnl_attr_get_u32(tb[QNVRAM_A_STATE]);
		state = QNVRAM_NAME(qnvram_state_name, st);
		if (!state) {
			snprintf(buf, sizeof(buf), "unknown-%" PRIu32, st);
			state = buf;
		}
	}
	if (ctx->json) {
		json_object_open(key);
		if (tb[MOBIO_A_UID])
			json_u64("uid", mnl_attr_get_u32(tb[MOBIO_A_UID]));
		if (tb[QNVRAM_A_MAGIC])
			json_u64("magic", mnl_attr_get_u32(tb[QNVRAM_A_MAGIC]));
		if (tb[QNVRAM_A_SIZE])
			json_u64("size", mnl_attr_get_u64(tb[QNVRAM_A_SIZE]));
		if (state)
			json_string("state", state);
		if (tb[QNVRAM_A_MAP_COUNT])
			json_u64("maps",
				 mnl_attr_get_u32(tb[QNVRAM_A_MAP_COUNT]));
		if (tb[MOBIO_A_RANGE_START])
			json_u64("offset",
				 mnl_attr_get_u64(tb[MOBIO_A_RANGE_START]));
		json_object_close();
		return;
	}
	if (tb[MOBIO_A_UID])
		qnvram_kv(&sep, "uid %" PRIu32,
			  mnl_attr_get_u32(tb[MOBIO_A_UID]));
	if (tb[QNVRAM_A_MAGIC])
		qnvram_kv(&sep, "magic 0x%" PRIx32,
			  mnl_attr_get_u32(tb[QNVRAM_A_MAGIC]));
	if (tb[QNVRAM_A_SIZE])
		qnvram_kv(&sep, "size %" PRIu64,
			  mnl_attr_get_u64(tb[QNVRAM_A_SIZE]));
	if (state)
		qnvram_kv(&sep, "state %s", state);
	if (tb[QNVRAM_A_MAP_COUNT])
		qnvram_kv(&sep, "maps %" PRIu32,
			  mnl_attr_get_u32(tb[QNVRAM_A_MAP_COUNT]));
	if (tb[MOBIO_A_RANGE_START])
		qnvram_kv(&sep, "offset 0x%" PRIx64,
			  mnl_attr_get_u64(tb[MOBIO_A_RANGE_START]));
	putchar('\n');
}

/* --- list ----------------------------------------------------------------- */

struct qnvram_reply {
	struct mobio_ctx *ctx;
	int count;		/* replies printed */
};

static int qnvram_region_cb(const struct nlmsghdr *nlh, void *data)
{
	struct qnvram_reply *r = data;
	const struct nlattr *tb[QNVRAM_A_MAX + 1] = { 0 };

	qnvram_parse_msg(nlh, tb);
	if (!tb[QNVRAM_A_REGION])
		return MNL_CB_OK;
	qnvram_print_region(r->ctx, NULL, tb[QNVRAM_A_REGION]);
	r->count++;
	return MNL_CB_OK;
}

static int qnvram_list(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct qnvram_reply r = { .ctx = ctx };
	char buf[MOBIO_GENL_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	int ret;

	(void)argc;
	(void)argv;
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, QNVRAM_CMD_LIST, NLM_F_DUMP);
	if (ctx->json)
		json_array_open(NULL);
	ret = mobio_genl_talk(g, nlh, qnvram_region_cb, &r);
	if (ctx->json) {
		/* Valid JSON on stdout even when the dump failed midway. */
		json_array_close();
		json_end();
	}
	if (ret < 0)
		return mobio_cmd_error(ctx);
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

/* --- show, free ----------------------------------------------------------- */

/* Parse "UID MAGIC" and build a request for @cmd naming that region. */
static struct nlmsghdr *qnvram_region_request(struct mobio_ctx *ctx,
					      char **argv, void *buf,
					      uint8_t cmd, int *ret)
{
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	uint32_t uid, magic;

	if (mobio_parse_u32(ctx, "UID", argv[0], &uid) < 0 ||
	    mobio_parse_u32(ctx, "MAGIC", argv[1], &magic) < 0) {
		*ret = MOBIO_EXIT_USAGE;
		return NULL;
	}
	g = mobio_family(ctx);
	if (!g) {
		*ret = MOBIO_EXIT_ERROR;
		return NULL;
	}
	nlh = mobio_genl_request(g, buf, cmd, 0);
	mnl_attr_put_u32(nlh, MOBIO_A_UID, uid);
	mnl_attr_put_u32(nlh, QNVRAM_A_MAGIC, magic);
	return nlh;
}

static int qnvram_show(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct qnvram_reply r = { .ctx = ctx };
	char buf[MOBIO_GENL_SNDBUF];
	struct nlmsghdr *nlh;
	int ret;

	(void)argc;
	nlh = qnvram_region_request(ctx, argv, buf, QNVRAM_CMD_RETRIEVE, &ret);
	if (!nlh)
		return ret;
	if (mobio_genl_talk(&ctx->genl, nlh, qnvram_region_cb, &r) < 0)
		return mobio_cmd_error(ctx);
	if (!r.count) {
		errno = EBADMSG;	/* an ack without the region */
		return mobio_cmd_error(ctx);
	}
	if (ctx->json)
		json_end();
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

static int qnvram_free(struct mobio_ctx *ctx, int argc, char **argv)
{
	char buf[MOBIO_GENL_SNDBUF];
	struct nlmsghdr *nlh;
	int ret;

	(void)argc;
	nlh = qnvram_region_request(ctx, argv, buf, QNVRAM_CMD_FREE, &ret);
	if (!nlh)
		return ret;
	if (mobio_genl_talk(&ctx->genl, nlh, NULL, NULL) < 0)
		return mobio_cmd_error(ctx);
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

/* --- stats, flush --------------------------------------------------------- */

static int qnvram_stats_cb(const struct nlmsghdr *nlh, void *data)
{
	struct qnvram_reply *r = data;
	const struct nlattr *tb[QNVRAM_A_MAX + 1] = { 0 };

	qnvram_parse_msg(nlh, tb);
	if (!tb[MOBIO_A_STATS])
		return MNL_CB_OK;
	if (r->ctx->json)
		json_object_open(NULL);
	mobio_print_stats(tb[MOBIO_A_STATS], r->ctx->json);
	if (r->ctx->json) {
		json_object_close();
		json_end();
	}
	r->count++;
	return MNL_CB_OK;
}

static int qnvram_stats(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct qnvram_reply r = { .ctx = ctx };
	char buf[MOBIO_GENL_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;

	(void)argc;
	(void)argv;
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, QNVRAM_CMD_GET_STATS, 0);
	if (mobio_genl_talk(g, nlh, qnvram_stats_cb, &r) < 0)
		return mobio_cmd_error(ctx);
	if (!r.count) {
		errno = EBADMSG;	/* an ack without the counters */
		return mobio_cmd_error(ctx);
	}
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

static int qnvram_flush(struct mobio_ctx *ctx, int argc, char **argv)
{
	char buf[MOBIO_GENL_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;

	(void)argc;
	(void)argv;
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, QNVRAM_CMD_FLUSH, 0);
	if (mobio_genl_talk(g, nlh, NULL, NULL) < 0)
		return mobio_cmd_error(ctx);
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

/* --- watch ---------------------------------------------------------------- */

struct qnvram_watch {
	struct mobio_ctx *ctx;
	uint32_t left;		/* events still to print; 0: no limit */
};

static int qnvram_event_cb(const struct nlmsghdr *nlh, void *data)
{
	struct qnvram_watch *w = data;
	const struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[QNVRAM_A_MAX + 1] = { 0 };
	const char *name;
	char buf[32];
	uint32_t ev;

	if (genl->cmd != QNVRAM_CMD_EVENT)
		return MNL_CB_OK;
	qnvram_parse_msg(nlh, tb);
	if (!tb[QNVRAM_A_EVENT])
		return MNL_CB_OK;
	ev = mnl_attr_get_u32(tb[QNVRAM_A_EVENT]);
	name = QNVRAM_NAME(qnvram_event_name, ev);
	if (!name) {
		snprintf(buf, sizeof(buf), "unknown-%" PRIu32, ev);
		name = buf;
	}
	if (w->ctx->json) {
		json_object_open(NULL);
		json_string("event", name);
		if (tb[QNVRAM_A_REGION])
			qnvram_print_region(w->ctx, "region",
					    tb[QNVRAM_A_REGION]);
		json_object_close();
		json_end();
	} else if (tb[QNVRAM_A_REGION]) {
		printf("%s ", name);
		qnvram_print_region(w->ctx, NULL, tb[QNVRAM_A_REGION]);
	} else {
		printf("%s\n", name);
	}
	fflush(stdout);
	if (w->left && --w->left == 0)
		return MNL_CB_STOP;
	return MNL_CB_OK;
}

static int qnvram_watch(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct qnvram_watch w = { .ctx = ctx };

	return mobio_watch(ctx, argc, argv, qnvram_event_cb, &w, &w.left);
}

/* --- The object ----------------------------------------------------------- */

static const struct mobio_cmd qnvram_cmds[] = {
	{
		.name = "list", .args = "",
		.summary = "list the pool's regions, one per line",
		.help =
"Callers without CAP_SYS_ADMIN see only their own uid's regions; the pool\n"
"offset (offset) is shown to CAP_SYS_ADMIN only. States: resident (in the\n"
"pool), swapped (on the backing device; a retrieve brings it back).\n",
		.min_args = 0, .max_args = 0, .run = qnvram_list,
	},
	{
		.name = "show", .args = "UID MAGIC",
		.summary = "show one region",
		.help =
"Prints the region as list does; ENOENT if there is no such region.\n",
		.min_args = 2, .max_args = 2, .run = qnvram_show,
	},
	{
		.name = "free", .args = "UID MAGIC",
		.summary = "free a region",
		.help =
"Fails with EBUSY while any process still maps the region. A uid other than\n"
"the caller's needs CAP_SYS_ADMIN.\n",
		.min_args = 2, .max_args = 2, .run = qnvram_free,
	},
	{
		.name = "stats", .args = "",
		.summary = "print the pool's counters as 'name value' lines",
		.help =
"A counter's unit is its name's suffix (_bytes, _ns, _pages), else a count.\n"
"With --json: one object of name: value.\n",
		.min_args = 0, .max_args = 0, .run = qnvram_stats,
	},
	{
		.name = "flush", .args = "",
		.summary = "write the pool to the backing device now",
		.help = "Needs CAP_SYS_ADMIN and a backing device.\n",
		.min_args = 0, .max_args = 0, .run = qnvram_flush,
	},
	{
		.name = "watch", .args = "[COUNT]",
		.summary = "print events as they happen (COUNT of them, "
			   "or until killed)",
		.help =
"Events: flushed, power-key, swapped-out REGION, swapped-in REGION.\n"
"With --json: one object per line, {\"event\": NAME, \"region\": {...}}.\n",
		.min_args = 0, .max_args = 1, .run = qnvram_watch,
	},
};

const struct mobio_object mobio_qnvram_object = {
	.name = "qnvram",
	.family = QNVRAM_GENL_NAME,
	.module = "qnvram",
	.summary = "qNVRAM pool: regions of reserved DRAM that survive app "
		   "crashes and warm reboots",
	.help =
"A region is named by UID and MAGIC. Plain output is one line of key-value\n"
"pairs per region (magic in hex):\n"
"  uid 1000 magic 0x2a size 8192 state resident maps 1\n"
"With --json, an object with the same keys (numbers in decimal).\n",
	.cmds = qnvram_cmds,
	.nr_cmds = (int)(sizeof(qnvram_cmds) / sizeof(qnvram_cmds[0])),
};
