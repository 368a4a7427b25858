// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freeblock: the "freeblock" generic netlink family
 * (include/uapi/linux/freeblock.h). Any user may read a disk's counters;
 * only CAP_SYS_ADMIN sets a disk's tunables.
 */
#include <net/genetlink.h>
#include "fb_internal.h"

static struct genl_family fb_genl_family;

static const struct nla_policy fb_genl_policy[FREEBLOCK_A_MAX + 1] = {
	[MOBIO_A_DEV_NAME] = { .type = NLA_NUL_STRING,
			       .len = DISK_NAME_LEN - 1 },
	[FREEBLOCK_A_DEPTH] = { .type = NLA_U32 },
	[FREEBLOCK_A_IDLE_MIN_US] = { .type = NLA_U32 },
	[FREEBLOCK_A_IDLE_MAX_US] = { .type = NLA_U32 },
	[FREEBLOCK_A_COLLIDE_PCT] = { .type = NLA_U32 },
	[FREEBLOCK_A_FLOOR_KBPS] = { .type = NLA_U32 },
	[FREEBLOCK_A_CEILING_KBPS] = { .type = NLA_U32 },
	[FREEBLOCK_A_STALE_MS] = { .type = NLA_U32 },
};

static_assert(FREEBLOCK_A_STALE_MS - FREEBLOCK_A_DEPTH + 1 == FB_CONF_NR);

static int fb_genl_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct mobio_stat st[FB_NR_STATS];
	const char *name = mobio_genl_dev_name(info);
	struct fb_disk *d;
	unsigned int n;

	if (!name)
		return -EINVAL;
	d = fb_disk_find(name);
	if (!d) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MOBIO_A_DEV_NAME],
				    "freeblock has had no task or setting on a disk of that name");
		return -ENODEV;
	}
	n = fb_disk_collect_stats(d, st);
	return mobio_genl_reply_dev_stats(&fb_genl_family, info, name, st, n);
}

static int fb_genl_set_disk(struct sk_buff *skb, struct genl_info *info)
{
	const char *name = mobio_genl_dev_name(info);
	bool set[FB_CONF_NR] = {}, any = false;
	u32 val[FB_CONF_NR];
	int i, bad, ret;

	/* the opener's credentials; GENL_ADMIN_PERM would be CAP_NET_ADMIN */
	if (!netlink_capable(skb, CAP_SYS_ADMIN)) {
		NL_SET_ERR_MSG(info->extack, "needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	if (!name)
		return -EINVAL;
	for (i = 0; i < FB_CONF_NR; i++) {
		struct nlattr *a = info->attrs[FREEBLOCK_A_DEPTH + i];

		if (a) {
			val[i] = nla_get_u32(a);
			set[i] = true;
			any = true;
		}
	}
	if (!any) {
		NL_SET_ERR_MSG(info->extack, "no tunable given");
		return -EINVAL;
	}
	ret = fb_disk_set_conf(name, val, set, &bad);
	if (ret == -EINVAL && bad < 0)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MOBIO_A_DEV_NAME],
				    "not a disk name as in /sys/block");
	else if (ret == -EINVAL && bad == FB_CONF_NR)
		NL_SET_ERR_MSG(info->extack, "floor_kbps above ceiling_kbps");
	else if (ret == -EINVAL)
		NL_SET_ERR_MSG_ATTR(info->extack,
				    info->attrs[FREEBLOCK_A_DEPTH + bad],
				    "out of the module parameter's range");
	else if (ret == -ENOSPC)
		NL_SET_ERR_MSG(info->extack, "too many disks have records");
	return ret;
}

static const struct genl_small_ops fb_genl_ops[] = {
	{
		.cmd = FREEBLOCK_CMD_GET_STATS,
		.doit = fb_genl_get_stats,
	},
	{
		.cmd = FREEBLOCK_CMD_SET_DISK,
		.doit = fb_genl_set_disk,
	},
};

static const struct genl_multicast_group fb_genl_mcgrps[] = {
	{ .name = MOBIO_GENL_MCGRP_EVENTS, },
};

static struct genl_family fb_genl_family __ro_after_init = {
	.name = FREEBLOCK_GENL_NAME,
	.version = MOBIO_GENL_VERSION,
	.maxattr = FREEBLOCK_A_MAX,
	.policy = fb_genl_policy,
	.module = THIS_MODULE,
	.small_ops = fb_genl_ops,
	.n_small_ops = ARRAY_SIZE(fb_genl_ops),
	.mcgrps = fb_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(fb_genl_mcgrps),
};

/**
 * fb_genl_init() - register the "freeblock" family
 *
 * Context: module init.
 * Return: 0 or the errno of genl_register_family().
 */
int fb_genl_init(void)
{
	return genl_register_family(&fb_genl_family);
}

/**
 * fb_genl_exit() - unregister the family; no request runs afterwards
 *
 * Context: module exit or init failure.
 */
void fb_genl_exit(void)
{
	genl_unregister_family(&fb_genl_family);
}
