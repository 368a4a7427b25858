// SPDX-License-Identifier: GPL-2.0-only
/*
 * mobioctl asap: the "asap" generic netlink family of asap-prefetch.ko
 * (see <linux/asap.h>): switch apps, read counters, list apps.
 *
 *	mobioctl asap switch 1234          the app of pid 1234 comes to the front
 *	mobioctl asap switch /apps/camera  by cgroup v2 path (not implemented
 *	                                   in the module yet)
 *	mobioctl asap stats [PID]          global counters, or one app's
 *	mobioctl [--json] asap apps        tracked apps with their counters
 *	mobioctl asap watch [COUNT]        switches as they happen
 */
#include <errno.h>
#include <string.h>

#include <linux/asap.h>

#include "json.h"
#include "mobioctl.h"
#include "stats.h"

struct asap_reply {
	struct mobio_ctx *ctx;
	int count;
	bool list;		/* apps: several objects in one JSON array */
};

static int asap_attr_cb(const struct nlattr *attr, void *data)
{
	const struct nlattr **tb = data;
	int type = mnl_attr_get_type(attr);

	switch (type) {
	case MOBIO_A_PID:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			tb[type] = attr;
		break;
	case MOBIO_A_STATS:
		if (mnl_attr_validate(attr, MNL_TYPE_NESTED) == 0)
			tb[type] = attr;
		break;
	case ASAP_A_COMM:
		if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0 &&
		    mnl_attr_get_payload_len(attr) <= ASAP_COMM_MAX)
			tb[type] = attr;
		break;
	case ASAP_A_FOREGROUND:
		tb[type] = attr;
		break;
	case ASAP_A_TRIGGER:
		if (mnl_attr_validate(attr, MNL_TYPE_U32) == 0)
			tb[type] = attr;
		break;
	default:
		break;
	}
	return MNL_CB_OK;
}

static int asap_reply_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct nlattr *tb[ASAP_A_MAX + 1] = { 0 };
	struct asap_reply *r = data;
	bool json = r->ctx->json;

	mnl_attr_parse(nlh, GENL_HDRLEN, asap_attr_cb, tb);
	if (!tb[MOBIO_A_STATS])
		return MNL_CB_OK;
	if (json) {
		json_object_open(NULL);
		if (tb[MOBIO_A_PID])
			json_u64("pid", mnl_attr_get_u32(tb[MOBIO_A_PID]));
		if (tb[ASAP_A_COMM])
			json_string("comm", mnl_attr_get_str(tb[ASAP_A_COMM]));
		if (r->list)
			json_bool("foreground", tb[ASAP_A_FOREGROUND] != NULL);
	} else if (r->list) {
		printf("app %u %s%s\n",
		       tb[MOBIO_A_PID] ? mnl_attr_get_u32(tb[MOBIO_A_PID]) : 0,
		       tb[ASAP_A_COMM] ? mnl_attr_get_str(tb[ASAP_A_COMM]) : "?",
		       tb[ASAP_A_FOREGROUND] ? " foreground" : "");
	}
	mobio_print_stats(tb[MOBIO_A_STATS], json);
	if (json) {
		json_object_close();
		if (!r->list)
			json_end();
	}
	r->count++;
	return MNL_CB_OK;
}

/*
 * The kernel judges a cgroup path's length (its policy says the limit):
 * the request buffer only has to hold twice the limit.
 */
#define ASAP_SWITCH_SNDBUF	(2 * ASAP_CGROUP_PATH_MAX)

static int asap_switch(struct mobio_ctx *ctx, int argc, char **argv)
{
	char buf[ASAP_SWITCH_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	uint32_t pid = 0;

	(void)argc;
	if (argv[0][0] == '/') {
		if (strlen(argv[0]) >= ASAP_SWITCH_SNDBUF - 256)
			return mobio_cmd_usage_error(ctx, "cgroup path longer "
						     "than %d bytes",
						     ASAP_SWITCH_SNDBUF - 257);
	} else if (mobio_parse_u32(ctx, "pid", argv[0], &pid) < 0) {
		return MOBIO_EXIT_USAGE;
	} else if (!pid) {
		return mobio_cmd_usage_error(ctx, "pid 0 is not a process");
	}
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, ASAP_CMD_SWITCH, 0);
	if (pid)
		mnl_attr_put_u32(nlh, MOBIO_A_PID, pid);
	else
		mnl_attr_put_strz(nlh, ASAP_A_CGROUP, argv[0]);
	if (mobio_genl_talk(g, nlh, NULL, NULL) < 0)
		return mobio_cmd_error(ctx);
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

static int asap_stats(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct asap_reply r = { .ctx = ctx };
	char buf[MOBIO_GENL_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	uint32_t pid = 0;

	if (argc == 1 && mobio_parse_u32(ctx, "pid", argv[0], &pid) < 0)
		return MOBIO_EXIT_USAGE;
	if (argc == 1 && !pid)
		return mobio_cmd_usage_error(ctx, "pid 0 is not a process");
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, ASAP_CMD_GET_STATS, 0);
	if (pid)
		mnl_attr_put_u32(nlh, MOBIO_A_PID, pid);
	if (mobio_genl_talk(g, nlh, asap_reply_cb, &r) < 0)
		return mobio_cmd_error(ctx);
	if (!r.count) {
		errno = EBADMSG;	/* an ack without the counters */
		return mobio_cmd_error(ctx);
	}
	mobio_cmd_warning(ctx);
	return MOBIO_EXIT_OK;
}

static int asap_apps(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct asap_reply r = { .ctx = ctx, .list = true };
	char buf[MOBIO_GENL_SNDBUF];
	struct mobio_genl *g;
	struct nlmsghdr *nlh;
	int ret;

	(void)argc;
	(void)argv;
	g = mobio_family(ctx);
	if (!g)
		return MOBIO_EXIT_ERROR;
	nlh = mobio_genl_request(g, buf, ASAP_CMD_GET_APPS, NLM_F_DUMP);
	if (ctx->json)
		json_array_open(NULL);
	ret = mobio_genl_talk(g, nlh, asap_reply_cb, &r);
	if (ctx->json) {
		json_array_close();
		json_end();
	}
	if (ret < 0)
		return mobio_cmd_error(ctx);
	return MOBIO_EXIT_OK;
}

/* --- watch ---------------------------------------------------------------- */

struct asap_watch {
	struct mobio_ctx *ctx;
	uint32_t left;		/* events still to print; 0: no limit */
};

static const char *const asap_trigger_name[] = {
	[ASAP_TRIGGER_NETLINK] = "netlink",
	[ASAP_TRIGGER_CGROUP] = "cgroup",
	[ASAP_TRIGGER_SIGCONT] = "sigcont",
};

static int asap_event_cb(const struct nlmsghdr *nlh, void *data)
{
	const struct genlmsghdr *genl = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *tb[ASAP_A_MAX + 1] = { 0 };
	struct asap_watch *w = data;
	const char *trig = "unknown";
	uint32_t t;

	if (genl->cmd != ASAP_CMD_SWITCH)
		return MNL_CB_OK;
	mnl_attr_parse(nlh, GENL_HDRLEN, asap_attr_cb, tb);
	if (!tb[MOBIO_A_PID] || !tb[ASAP_A_TRIGGER])
		return MNL_CB_OK;
	t = mnl_attr_get_u32(tb[ASAP_A_TRIGGER]);
	if (t < sizeof(asap_trigger_name) / sizeof(asap_trigger_name[0]))
		trig = asap_trigger_name[t];
	if (w->ctx->json) {
		json_object_open(NULL);
		json_string("event", "switch");
		json_u64("pid", mnl_attr_get_u32(tb[MOBIO_A_PID]));
		if (tb[ASAP_A_COMM])
			json_string("comm", mnl_attr_get_str(tb[ASAP_A_COMM]));
		json_string("trigger", trig);
		json_object_close();
		json_end();
	} else {
		printf("switch %u %s %s\n", mnl_attr_get_u32(tb[MOBIO_A_PID]),
		       tb[ASAP_A_COMM] ? mnl_attr_get_str(tb[ASAP_A_COMM]) : "?",
		       trig);
	}
	fflush(stdout);
	if (w->left && --w->left == 0)
		return MNL_CB_STOP;
	return MNL_CB_OK;
}

static int asap_watch(struct mobio_ctx *ctx, int argc, char **argv)
{
	struct asap_watch w = { .ctx = ctx };

	return mobio_watch(ctx, argc, argv, asap_event_cb, &w, &w.left);
}

static const struct mobio_cmd asap_cmds[] = {
	{
		.name = "switch", .args = "PID|CGROUP",
		.summary = "bring an app to the foreground (prepage it, learn "
			   "its footprint)",
		.help =
"PID is a process; its thread group is the app. CGROUP is a cgroup v2 path\n"
"from the root (\"/apps/camera\"); the module checks it but does not track\n"
"cgroup apps yet (EOPNOTSUPP). The app in the foreground before leaves it:\n"
"its prepaging is cancelled and its switch window learned from.\n"
"Needs CAP_SYS_ADMIN.\n",
		.min_args = 1, .max_args = 1, .run = asap_switch,
	},
	{
		.name = "stats", .args = "[PID]",
		.summary = "print the global counters, or one app's, as "
			   "'name value' lines",
		.help =
"A counter's unit is its name's suffix (_ns, _bytes, _pages, _pct), else a\n"
"count; see <linux/asap.h>. With --json: one object.\n",
		.min_args = 0, .max_args = 1, .run = asap_stats,
	},
	{
		.name = "apps", .args = "",
		.summary = "list the tracked apps with their counters",
		.help =
"One 'app PID COMM [foreground]' line, then its counters, per app.\n"
"With --json: an array of objects {\"pid\", \"comm\", \"foreground\", counters}.\n",
		.min_args = 0, .max_args = 0, .run = asap_apps,
	},
	{
		.name = "watch", .args = "[COUNT]",
		.summary = "print switches as they happen (COUNT of them, or "
			   "until killed)",
		.help =
"One 'switch PID COMM TRIGGER' line per switch; TRIGGER is netlink, cgroup\n"
"or sigcont; PID is in the initial pid namespace. Needs CAP_SYS_ADMIN.\n"
"With --json: one object per line, {\"event\": \"switch\", \"pid\", \"comm\",\n"
"\"trigger\"}.\n",
		.min_args = 0, .max_args = 1, .run = asap_watch,
	},
};

const struct mobio_object mobio_asap_object = {
	.name = "asap",
	.family = ASAP_GENL_NAME,
	.module = "asap-prefetch",
	.summary = "ASAP: app-switch footprint learning and prepaging",
	.cmds = asap_cmds,
	.nr_cmds = (int)(sizeof(asap_cmds) / sizeof(asap_cmds[0])),
};
