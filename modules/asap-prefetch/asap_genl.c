// SPDX-License-Identifier: GPL-2.0-only
/*
 * ASAP: the "asap" generic netlink family (include/uapi/linux/asap.h).
 * Switching needs CAP_SYS_ADMIN; counters and the app list are for anyone.
 * Every attribute is checked by the family policy.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/pid.h>
#include <linux/threads.h>
#include <net/genetlink.h>
#include "asap.h"

static struct genl_family asap_genl_family;

/* A pid, as any namespace may number it. */
static struct netlink_range_validation asap_pid_range __ro_after_init = {
	.min = 1,
	.max = PID_MAX_LIMIT,
};

static const struct nla_policy asap_genl_policy[ASAP_A_MAX + 1] = {
	[MOBIO_A_PID] = NLA_POLICY_FULL_RANGE(NLA_U32, &asap_pid_range),
	[ASAP_A_CGROUP] = { .type = NLA_NUL_STRING,
			    .len = ASAP_CGROUP_PATH_MAX - 1 },
};

/* The app of MOBIO_A_PID; asap_lock held. */
static struct asap_app *asap_genl_app(struct genl_info *info)
{
	struct nlattr *attr = info->attrs[MOBIO_A_PID];
	struct asap_app *app;
	struct pid *pid;

	rcu_read_lock();
	pid = find_vpid(nla_get_u32(attr));
	list_for_each_entry(app, &asap_apps, node)
		if (pid && app->pid == pid) {
			rcu_read_unlock();
			return app;
		}
	rcu_read_unlock();
	NL_SET_ERR_MSG_ATTR(info->extack, attr,
			    "no tracked app has this pid (switch to it first)");
	return NULL;
}

static int asap_genl_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct mobio_stat st[ASAP_NR_STATS];
	struct asap_app *app = NULL;
	struct sk_buff *msg;
	unsigned int n;
	void *hdr;

	msg = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &asap_genl_family, 0,
				ASAP_CMD_GET_STATS);
	if (!hdr)
		goto err_size;
	mutex_lock(&asap_lock);
	if (info->attrs[MOBIO_A_PID]) {
		app = asap_genl_app(info);
		if (!app) {
			mutex_unlock(&asap_lock);
			nlmsg_free(msg);
			return -ENOENT;
		}
	}
	n = asap_collect_stats(app, st, ARRAY_SIZE(st));
	if ((app && nla_put_u32(msg, MOBIO_A_PID,
				nla_get_u32(info->attrs[MOBIO_A_PID]))) ||
	    mobio_genl_put_stats(msg, st, n)) {
		mutex_unlock(&asap_lock);
		goto err_size;
	}
	mutex_unlock(&asap_lock);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_size:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

static int asap_genl_switch(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *pid = info->attrs[MOBIO_A_PID];
	struct nlattr *cg = info->attrs[ASAP_A_CGROUP];
	struct cgroup *cgrp;

	if (!!pid == !!cg) {
		NL_SET_ERR_MSG(info->extack,
			       "give exactly one of MOBIO_A_PID and ASAP_A_CGROUP");
		return -EINVAL;
	}
	if (pid)
		return asap_switch_pid(nla_get_u32(pid), info->extack);

	cgrp = cgroup_get_from_path(nla_data(cg));
	if (IS_ERR(cgrp)) {
		NL_SET_ERR_MSG_ATTR(info->extack, cg,
				    "no such cgroup (a cgroup v2 path from the root)");
		return PTR_ERR(cgrp);
	}
	cgroup_put(cgrp);
	NL_SET_ERR_MSG_ATTR(info->extack, cg,
			    "cgroup apps are not implemented yet: switch by pid");
	return -EOPNOTSUPP;
}

static int asap_genl_put_app(struct sk_buff *skb, struct netlink_callback *cb,
			     struct asap_app *app)
{
	struct mobio_stat st[ASAP_NR_STATS];
	pid_t nr = pid_vnr(app->pid);
	unsigned int n;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &asap_genl_family, NLM_F_MULTI, ASAP_CMD_GET_APPS);
	if (!hdr)
		return -EMSGSIZE;
	n = asap_collect_stats(app, st, ARRAY_SIZE(st));
	if (nla_put_u32(skb, MOBIO_A_PID, nr) ||
	    nla_put_string(skb, ASAP_A_COMM, app->comm) ||
	    (app == asap_front && nla_put_flag(skb, ASAP_A_FOREGROUND)) ||
	    mobio_genl_put_stats(skb, st, n)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

static int asap_genl_get_apps(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct asap_app *app;
	long i = 0;

	mutex_lock(&asap_lock);
	list_for_each_entry(app, &asap_apps, node) {
		if (i++ < cb->args[0])
			continue;
		/* Apps of another pid namespace are not shown. */
		if (!pid_vnr(app->pid))
			continue;
		if (asap_genl_put_app(skb, cb, app)) {
			i--;
			break;
		}
	}
	mutex_unlock(&asap_lock);
	cb->args[0] = i;
	return skb->len;
}

static const struct genl_small_ops asap_genl_ops[] = {
	{
		.cmd = ASAP_CMD_GET_STATS,
		.doit = asap_genl_get_stats,
	},
	{
		.cmd = ASAP_CMD_SWITCH,
		.doit = asap_genl_switch,
		.flags = GENL_ADMIN_PERM,
	},
	{
		.cmd = ASAP_CMD_GET_APPS,
		.dumpit = asap_genl_get_apps,
	},
};

/**
 * asap_genl_event_switch() - multicast a switch on the "events" group
 * @app: the app now in the foreground
 * @trigger: enum asap_trigger
 *
 * Best effort: without listeners, or without memory, nothing is sent.
 * Context: process, may sleep.
 */
void asap_genl_event_switch(struct asap_app *app, u32 trigger)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &asap_genl_family, 0, ASAP_CMD_SWITCH);
	if (!hdr || nla_put_u32(msg, MOBIO_A_PID, app->tgid) ||
	    nla_put_string(msg, ASAP_A_COMM, app->comm) ||
	    nla_put_u32(msg, ASAP_A_TRIGGER, trigger)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&asap_genl_family, msg, 0, 0, GFP_KERNEL);
}

static const struct genl_multicast_group asap_genl_mcgrps[] = {
	/* Events name every app's pid: for administrators only. */
	{ .name = MOBIO_GENL_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_SYS_ADMIN, },
};

static struct genl_family asap_genl_family __ro_after_init = {
	.name = ASAP_GENL_NAME,
	.version = MOBIO_GENL_VERSION,
	.maxattr = ASAP_A_MAX,
	.policy = asap_genl_policy,
	.module = THIS_MODULE,
	.small_ops = asap_genl_ops,
	.n_small_ops = ARRAY_SIZE(asap_genl_ops),
	.mcgrps = asap_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(asap_genl_mcgrps),
};

/**
 * asap_genl_init() - register the "asap" family
 *
 * Context: process, module init.
 * Return: 0 or a negative errno from genl_register_family().
 */
int asap_genl_init(void)
{
	return genl_register_family(&asap_genl_family);
}

/**
 * asap_genl_exit() - unregister the family; no command runs afterwards
 *
 * Context: process, module exit.
 */
void asap_genl_exit(void)
{
	genl_unregister_family(&asap_genl_family);
}
