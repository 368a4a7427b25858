// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM: the "qnvram" generic netlink family (include/uapi/linux/qnvram.h).
 * Anyone may list, inspect and free their own uid's regions; flush needs
 * CAP_SYS_ADMIN. Every attribute is checked by the family policy.
 *
 * Who the caller is: the lesser of the socket's opener and the task that
 * sends the request (CVE-2014-0181: a socket passed to another process, or
 * written to by a privileged one that did not open it, grants neither
 * more). Admin needs CAP_SYS_ADMIN of both; a uid must be the effective uid
 * of both. A dump decides it in its first round, which runs in the sending
 * task, and keeps it: later rounds run in whichever task reads the socket.
 * Uids in requests, replies and events are in the initial user namespace,
 * as the pool stores them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/net.h>
#include <net/genetlink.h>
#include <net/sock.h>
#include "qnvram_pool.h"

static struct genl_family qnvram_genl_family;

static const struct nla_policy qnvram_genl_policy[QNVRAM_A_MAX + 1] = {
	[MOBIO_A_UID] = { .type = NLA_U32 },
	[QNVRAM_A_MAGIC] = { .type = NLA_U32 },
};

/**
 * struct qnvram_genl_caller - who sent a request
 * @cred: the socket opener's credentials
 * @uid: the opener's effective uid, initial user namespace
 * @admin: the opener and the sending task have CAP_SYS_ADMIN
 * @same: the opener and the sending task have the same effective uid
 */
struct qnvram_genl_caller {
	const struct cred *cred;
	u32 uid;
	bool admin;
	bool same;
};

/* Context: the task sending @skb (a doit, a dump's first round). */
static void qnvram_genl_caller(const struct sk_buff *skb,
			       struct qnvram_genl_caller *c)
{
	struct file *file = NETLINK_CB(skb).sk->sk_socket->file;

	c->cred = file->f_cred;
	c->uid = from_kuid(&init_user_ns, c->cred->euid);
	/* netlink_capable() alone checks only the sender of a sendmsg(). */
	c->admin = netlink_capable(skb, CAP_SYS_ADMIN) &&
		   file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN);
	c->same = uid_eq(c->cred->euid, current_euid());
}

/*
 * Region @slot of @meta: the pool's working table (caller holds pool->lock)
 * or a copy from qnvram_view_read().
 */
static int qnvram_genl_put_region(struct sk_buff *skb,
				  const struct qnvram_pool *pool,
				  const struct qnvram_meta *meta, int slot,
				  bool admin)
{
	const struct qnvram_region_entry *e = &meta->entries[slot];
	u32 flags = le32_to_cpu(e->flags);
	struct nlattr *nest;

	nest = nla_nest_start(skb, QNVRAM_A_REGION);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, MOBIO_A_UID, le32_to_cpu(e->uid)) ||
	    nla_put_u32(skb, QNVRAM_A_MAGIC, le32_to_cpu(e->magic)) ||
	    nla_put_u64_64bit(skb, QNVRAM_A_SIZE, le64_to_cpu(e->length),
			      MOBIO_A_PAD) ||
	    nla_put_u32(skb, QNVRAM_A_STATE,
			(flags & QNVRAM_ENTRY_SWAPPED) ? QNVRAM_STATE_SWAPPED :
							 QNVRAM_STATE_RESIDENT) ||
	    nla_put_u32(skb, QNVRAM_A_MAP_COUNT,
			atomic_read(&pool->rt[slot].maps)) ||
	    (admin && nla_put_u64_64bit(skb, MOBIO_A_RANGE_START,
					le64_to_cpu(e->offset), MOBIO_A_PAD))) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * The region named by the request: uid (initial user namespace; default:
 * the socket opener's effective uid) and magic.
 */
static int qnvram_genl_lookup(struct sk_buff *skb, struct genl_info *info,
			      u32 *uid, u32 *magic)
{
	struct qnvram_genl_caller c;
	u32 req_uid;
	int ret;

	qnvram_genl_caller(skb, &c);
	if (!info->attrs[QNVRAM_A_MAGIC]) {
		NL_SET_ERR_MSG(info->extack, "missing QNVRAM_A_MAGIC");
		return -EINVAL;
	}
	*magic = nla_get_u32(info->attrs[QNVRAM_A_MAGIC]);
	req_uid = info->attrs[MOBIO_A_UID] ?
		  nla_get_u32(info->attrs[MOBIO_A_UID]) : c.uid;
	ret = qnvram_resolve_uid(c.cred, &init_user_ns, req_uid, c.admin, uid);
	if (!ret && !c.admin && !c.same)
		ret = -EPERM;
	if (ret == -EPERM && !c.same)
		NL_SET_ERR_MSG(info->extack, "socket opened by another uid");
	else if (ret == -EPERM)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MOBIO_A_UID],
				    "region of another uid");
	else if (ret)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MOBIO_A_UID],
				    "uid not valid");
	return ret;
}

static int qnvram_genl_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct mobio_stat stats[QNVRAM_NR_STATS];
	unsigned int n;

	n = qnvram_collect_stats(&qnvram_pool, stats, ARRAY_SIZE(stats));
	return mobio_genl_reply_stats(&qnvram_genl_family, info, stats, n);
}

/*
 * LIST and RETRIEVE read the table from the lockless view, so that they
 * never wait for a flush or swap that holds the pool lock across I/O.
 */
static int qnvram_genl_list(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct qnvram_pool *pool = &qnvram_pool;
	struct qnvram_genl_caller c;
	struct qnvram_meta *meta;
	bool admin;
	void *hdr;
	int slot;
	u32 self;

	/* args[1]: 0 before the first round, then 1 | 2 * admin; args[2]: uid */
	if (!cb->args[1]) {
		qnvram_genl_caller(cb->skb, &c);
		if (!c.admin && !c.same)
			return -EPERM;
		cb->args[1] = 1 | (c.admin ? 2 : 0);
		cb->args[2] = c.uid;
	}
	admin = cb->args[1] & 2;
	self = cb->args[2];

	meta = kmalloc(sizeof(*meta), GFP_KERNEL);
	if (!meta)
		return -ENOMEM;
	qnvram_view_read(pool, meta);
	for (slot = cb->args[0]; slot < QNVRAM_MAX_REGIONS; slot++) {
		const struct qnvram_region_entry *e = &meta->entries[slot];

		if (!e->flags || (!admin && le32_to_cpu(e->uid) != self))
			continue;
		hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				  cb->nlh->nlmsg_seq, &qnvram_genl_family,
				  NLM_F_MULTI, QNVRAM_CMD_LIST);
		if (!hdr)
			break;
		if (qnvram_genl_put_region(skb, pool, meta, slot, admin)) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
	}
	kfree(meta);
	/* A full skb ends this round; the next one resumes at @slot. */
	cb->args[0] = slot;
	return skb->len;
}

static int qnvram_genl_retrieve(struct sk_buff *skb, struct genl_info *info)
{
	struct qnvram_pool *pool = &qnvram_pool;
	struct qnvram_genl_caller c;
	struct qnvram_meta *meta;
	struct sk_buff *msg;
	u32 uid, magic;
	void *hdr;
	int slot, ret;

	ret = qnvram_genl_lookup(skb, info, &uid, &magic);
	if (ret)
		return ret;
	qnvram_genl_caller(skb, &c);
	meta = kmalloc(sizeof(*meta), GFP_KERNEL);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!meta || !msg) {
		ret = -ENOMEM;
		goto err_free;
	}
	hdr = genlmsg_put_reply(msg, info, &qnvram_genl_family, 0,
				QNVRAM_CMD_RETRIEVE);
	if (!hdr) {
		ret = -EMSGSIZE;
		goto err_free;
	}
	qnvram_view_read(pool, meta);
	slot = qnvram_meta_find(meta, uid, magic);
	ret = slot < 0 ? slot :
	      qnvram_genl_put_region(msg, pool, meta, slot, c.admin);
	if (ret == -ENOENT)
		NL_SET_ERR_MSG(info->extack, "no region with this uid and magic");
	if (ret)
		goto err_free;
	kfree(meta);
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	kfree(meta);
	nlmsg_free(msg);
	return ret;
}

static int qnvram_genl_free(struct sk_buff *skb, struct genl_info *info)
{
	u32 uid, magic;
	int ret;

	ret = qnvram_genl_lookup(skb, info, &uid, &magic);
	if (ret)
		return ret;
	ret = qnvram_region_free(&qnvram_pool, uid, magic);
	if (ret == -ENOENT)
		NL_SET_ERR_MSG(info->extack, "no region with this uid and magic");
	else if (ret == -EBUSY)
		NL_SET_ERR_MSG(info->extack, "region is mapped by a process");
	return ret;
}

static int qnvram_genl_flush(struct sk_buff *skb, struct genl_info *info)
{
	struct qnvram_pool *pool = &qnvram_pool;
	struct qnvram_genl_caller c;
	int ret;

	/* Explicitly: GENL_ADMIN_PERM would check CAP_NET_ADMIN. */
	qnvram_genl_caller(skb, &c);
	if (!c.admin) {
		NL_SET_ERR_MSG(info->extack, "flush needs CAP_SYS_ADMIN");
		return -EPERM;
	}
	mutex_lock(&pool->lock);
	ret = qnvram_flush(pool);
	mutex_unlock(&pool->lock);
	if (ret == -ENODEV)
		NL_SET_ERR_MSG(info->extack,
			       "no backing device (load qnvram with backing=)");
	else if (ret)
		NL_SET_ERR_MSG(info->extack, "writing the pool image failed");
	return ret;
}

/**
 * qnvram_genl_event() - multicast an event on the "events" group
 * @event: what happened
 * @pool: the pool; caller holds its lock when @slot >= 0
 * @slot: the region concerned, or -1
 *
 * Best effort: without listeners, or without memory, nothing is sent.
 * Context: process.
 */
void qnvram_genl_event(enum qnvram_event event, const struct qnvram_pool *pool,
		       int slot)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &qnvram_genl_family, 0, QNVRAM_CMD_EVENT);
	if (!hdr || nla_put_u32(msg, QNVRAM_A_EVENT, event) ||
	    (slot >= 0 &&
	     qnvram_genl_put_region(msg, pool, pool->meta, slot, true))) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&qnvram_genl_family, msg, 0, 0, GFP_KERNEL);
}

static const struct genl_small_ops qnvram_genl_ops[] = {
	{
		.cmd = QNVRAM_CMD_GET_STATS,
		.doit = qnvram_genl_get_stats,
	},
	{
		.cmd = QNVRAM_CMD_LIST,
		.dumpit = qnvram_genl_list,
	},
	{
		.cmd = QNVRAM_CMD_RETRIEVE,
		.doit = qnvram_genl_retrieve,
	},
	{
		.cmd = QNVRAM_CMD_FREE,
		.doit = qnvram_genl_free,
	},
	{
		.cmd = QNVRAM_CMD_FLUSH,
		.doit = qnvram_genl_flush,
	},
};

static const struct genl_multicast_group qnvram_genl_mcgrps[] = {
	/* Events name every uid's regions: for administrators only. */
	{ .name = MOBIO_GENL_MCGRP_EVENTS, .flags = GENL_MCAST_CAP_SYS_ADMIN, },
};

static struct genl_family qnvram_genl_family __ro_after_init = {
	.name = QNVRAM_GENL_NAME,
	.version = MOBIO_GENL_VERSION,
	.maxattr = QNVRAM_A_MAX,
	.policy = qnvram_genl_policy,
	/*
	 * Not under genl_mutex: FREE and FLUSH wait for the pool lock, which a
	 * flush or swap holds across I/O, and must not stall every family.
	 */
	.parallel_ops = true,
	.module = THIS_MODULE,
	.small_ops = qnvram_genl_ops,
	.n_small_ops = ARRAY_SIZE(qnvram_genl_ops),
	.mcgrps = qnvram_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(qnvram_genl_mcgrps),
};

/**
 * qnvram_genl_init() - register the "qnvram" family
 *
 * Context: process, module init.
 * Return: 0 or a negative errno from genl_register_family().
 */
int qnvram_genl_init(void)
{
	return genl_register_family(&qnvram_genl_family);
}

/**
 * qnvram_genl_exit() - unregister the family
 */
void qnvram_genl_exit(void)
{
	genl_unregister_family(&qnvram_genl_family);
}
