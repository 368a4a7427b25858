/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mobio: helpers for the generic netlink conventions of <linux/mobio.h>
 * that every mobio family follows (counters as MOBIO_A_STATS nests).
 */
#ifndef _MOBIO_GENL_H
#define _MOBIO_GENL_H

#include <net/genetlink.h>
#include <linux/mobio.h>

/**
 * struct mobio_stat - one named counter
 * @name: counter name, unit as suffix (_bytes, _ns...), < MOBIO_STAT_NAME_MAX
 * @value: its value
 */
struct mobio_stat {
	const char *name;
	u64 value;
};

/**
 * mobio_genl_put_stats() - add counters to a message as MOBIO_A_STATS
 * @skb: the message being built
 * @stats: the counters
 * @n: how many
 *
 * Context: any.
 * Return: 0, or -EMSGSIZE when @skb is full (the partial nest is removed).
 */
static inline int mobio_genl_put_stats(struct sk_buff *skb,
				       const struct mobio_stat *stats,
				       unsigned int n)
{
	struct nlattr *all, *one;
	unsigned int i;

	all = nla_nest_start(skb, MOBIO_A_STATS);
	if (!all)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		one = nla_nest_start(skb, MOBIO_A_STAT);
		if (!one ||
		    nla_put_string(skb, MOBIO_STAT_A_NAME, stats[i].name) ||
		    nla_put_u64_64bit(skb, MOBIO_STAT_A_VALUE, stats[i].value,
				      MOBIO_STAT_A_PAD))
			goto err_cancel;
		nla_nest_end(skb, one);
	}
	nla_nest_end(skb, all);
	return 0;

err_cancel:
	nla_nest_cancel(skb, all);
	return -EMSGSIZE;
}

/**
 * mobio_genl_reply_dev_stats() - answer a GET_STATS request, naming a disk
 * @family: the family
 * @info: the request
 * @dev_name: the disk the counters are of, echoed as MOBIO_A_DEV_NAME;
 *	NULL for family-wide counters
 * @stats: the counters
 * @n: how many
 *
 * Context: genl doit, may sleep.
 * Return: 0, -ENOMEM or -EMSGSIZE.
 */
static inline int mobio_genl_reply_dev_stats(const struct genl_family *family,
					     struct genl_info *info,
					     const char *dev_name,
					     const struct mobio_stat *stats,
					     unsigned int n)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, family, 0, MOBIO_CMD_GET_STATS);
	if (!hdr ||
	    (dev_name && nla_put_string(msg, MOBIO_A_DEV_NAME, dev_name)) ||
	    mobio_genl_put_stats(msg, stats, n)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

/**
 * mobio_genl_reply_stats() - answer a GET_STATS request with family-wide
 *	counters
 * @family: the family
 * @info: the request
 * @stats: the counters
 * @n: how many
 *
 * Context: genl doit, may sleep.
 * Return: 0, -ENOMEM or -EMSGSIZE.
 */
static inline int mobio_genl_reply_stats(const struct genl_family *family,
					 struct genl_info *info,
					 const struct mobio_stat *stats,
					 unsigned int n)
{
	return mobio_genl_reply_dev_stats(family, info, NULL, stats, n);
}

/**
 * mobio_genl_dev_name() - the disk name a request names
 * @info: the request; its policy bounds MOBIO_A_DEV_NAME (NLA_NUL_STRING)
 *
 * Context: genl doit.
 * Return: the name (NUL-terminated, inside the message), or NULL with
 * an extack message when the attribute is missing (the caller returns
 * -EINVAL).
 */
static inline const char *mobio_genl_dev_name(struct genl_info *info)
{
	if (!info->attrs[MOBIO_A_DEV_NAME]) {
		NL_SET_ERR_MSG(info->extack, "missing MOBIO_A_DEV_NAME");
		return NULL;
	}
	return nla_data(info->attrs[MOBIO_A_DEV_NAME]);
}

#endif /* _MOBIO_GENL_H */
