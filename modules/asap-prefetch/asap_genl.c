// SPDX-License-Identifier: GPL-2.0-only
/*
 * ASAP: the "asap" generic netlink family (include/uapi/linux/asap.h).
 * Switching and profiles need CAP_SYS_ADMIN (a profile holds an app's
 * addresses and file identities), checked in the socket opener's
 * credentials (netlink_capable()), not with GENL_ADMIN_PERM, which is
 * CAP_NET_ADMIN; joining the events group needs CAP_SYS_ADMIN too.
 * Counters and the app list (pids, names: what /proc shows) are for
 * anyone. Every attribute is checked by the family policy, profile runs
 * by asap_prof_check().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
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
	[ASAP_A_PROFILED] = NLA_POLICY_MAX(NLA_U32, 255),
	[ASAP_A_ANON_RUNS] = { .type = NLA_BINARY,
			       .len = ASAP_PROFILE_RUNS_MAX *
				      sizeof(struct asap_profile_run) },
	[ASAP_A_FILE_DEV] = { .type = NLA_U64 },
	[ASAP_A_FILE_INO] = { .type = NLA_U64 },
	[ASAP_A_FILE_GEN] = { .type = NLA_U32 },
	[ASAP_A_FILE_RUNS] = { .type = NLA_BINARY,
			       .len = ASAP_PROFILE_RUNS_MAX *
				      sizeof(struct asap_profile_run) },
};

/*
 * Whether the request's sender may change settings or read a footprint:
 * CAP_SYS_ADMIN of the socket's opener. -EPERM with a message otherwise.
 */
static int asap_genl_admin(struct sk_buff *skb, struct netlink_ext_ack *extack)
{
	if (netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;
	NL_SET_ERR_MSG(extack, "needs CAP_SYS_ADMIN");
	return -EPERM;
}

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
	/* Counters include every closed window (learned from off the switch). */
	asap_learn_wait();
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
	int ret;

	ret = asap_genl_admin(skb, info->extack);
	if (ret)
		return ret;
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
	ret = asap_switch_cgroup(cgrp, info->extack);
	cgroup_put(cgrp);
	return ret;
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

	if (!cb->args[0])
		asap_learn_wait();
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

/* --- Profiles ------------------------------------------------------------ */

/* cb->args of a PROFILE_GET dump */
enum {
	ASAP_PD_PID,		/* the app's pid, 0 before the first call */
	ASAP_PD_SECTION,	/* 0: header, 1: anon, 2 + k: file k */
	ASAP_PD_NEXT,		/* first page of the section not sent yet */
};

/* Pages of the largest file and of a user address space. */
#define ASAP_FILE_PAGES_MAX	((u64)MAX_LFS_FILESIZE >> PAGE_SHIFT)
#define ASAP_ANON_PAGES_MAX	((u64)TASK_SIZE >> PAGE_SHIFT)

/*
 * Up to ASAP_PROFILE_RUNS_MAX runs of @xa from page *@next on; *@next is
 * where the next message starts, *@done set when the table is over.
 */
static unsigned int asap_prof_runs(struct xarray *xa, unsigned long *next,
				   struct asap_profile_run *runs, bool *done)
{
	struct asap_profile_run run = { 0 }, out;
	unsigned int n = 0;
	unsigned long idx;
	void *e;

	*done = false;
	xa_for_each_start(xa, idx, e, *next) {
		if (!asap_prof_feed(&run, idx, xa_to_value(e), &out))
			continue;
		runs[n++] = out;
		if (n == ASAP_PROFILE_RUNS_MAX) {
			*next = run.start;	/* the run just opened */
			return n;
		}
	}
	if (asap_prof_end(&run, &out))
		runs[n++] = out;
	*done = true;
	return n;
}

/* One message of a PROFILE_GET dump; -EMSGSIZE when @skb is full. */
static int asap_prof_put(struct sk_buff *skb, struct netlink_callback *cb,
			 struct asap_app *app, struct asap_file *af,
			 struct asap_profile_run *runs, unsigned int n)
{
	struct inode *inode = af ? af->inode : NULL;
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &asap_genl_family, NLM_F_MULTI,
			  ASAP_CMD_PROFILE_GET);
	if (!hdr)
		return -EMSGSIZE;
	if (!runs) {
		if (nla_put_u32(skb, MOBIO_A_PID, cb->args[ASAP_PD_PID]) ||
		    nla_put_u32(skb, ASAP_A_PROFILED, app->profiled))
			goto err;
	} else if (!inode) {
		if (nla_put(skb, ASAP_A_ANON_RUNS, n * sizeof(*runs), runs))
			goto err;
	} else if (nla_put_u64_64bit(skb, ASAP_A_FILE_DEV,
				     huge_encode_dev(inode->i_sb->s_dev),
				     MOBIO_A_PAD) ||
		   nla_put_u64_64bit(skb, ASAP_A_FILE_INO, inode->i_ino,
				     MOBIO_A_PAD) ||
		   nla_put_u32(skb, ASAP_A_FILE_GEN, inode->i_generation) ||
		   nla_put(skb, ASAP_A_FILE_RUNS, n * sizeof(*runs), runs)) {
		goto err;
	}
	genlmsg_end(skb, hdr);
	return 0;

err:
	genlmsg_cancel(skb, hdr);
	return -EMSGSIZE;
}

/* The file of section @section (2 + its place in the list), or NULL. */
static struct asap_file *asap_prof_file(struct asap_app *app,
					unsigned long section)
{
	struct asap_file *af;
	unsigned long k = 2;

	list_for_each_entry(af, &app->files, node)
		if (k++ == section)
			return af;
	return NULL;
}

/*
 * Fill @skb with the next messages of the dump; asap_lock held. Return 0,
 * or -EMSGSIZE when not even one message fits in an empty @skb.
 */
static int asap_prof_dump(struct sk_buff *skb, struct netlink_callback *cb,
			  struct asap_app *app, struct asap_profile_run *runs)
{
	unsigned long *sec = &cb->args[ASAP_PD_SECTION];
	unsigned long next, i;
	struct asap_file *af;
	struct xarray *xa;
	unsigned int n;
	bool done;

	if (*sec == 0) {
		if (asap_prof_put(skb, cb, app, NULL, NULL, 0))
			return skb->len ? 0 : -EMSGSIZE;
		*sec = 1;
		cb->args[ASAP_PD_NEXT] = 0;
	}
	for (;;) {
		af = *sec == 1 ? NULL : asap_prof_file(app, *sec);
		if (*sec > 1 && !af)
			return 0;	/* every file sent */
		xa = af ? &af->pages : &app->anon;
		next = cb->args[ASAP_PD_NEXT];
		n = asap_prof_runs(xa, &next, runs, &done);
		if (!af)
			for (i = 0; i < n; i++)
				runs[i].start <<= PAGE_SHIFT;
		if (n && asap_prof_put(skb, cb, app, af, runs, n))
			return skb->len ? 0 : -EMSGSIZE; /* rest: next skb */
		if (done) {
			(*sec)++;
			next = 0;
		}
		cb->args[ASAP_PD_NEXT] = next;
	}
}

static int asap_genl_profile_get(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct asap_profile_run *runs;
	struct asap_app *app;
	struct nlattr *attr;
	int ret;

	/* cb->skb is the request, in every part of the dump */
	ret = asap_genl_admin(cb->skb, cb->extack);
	if (ret)
		return ret;
	if (!cb->args[ASAP_PD_PID]) {
		attr = nlmsg_find_attr(cb->nlh, GENL_HDRLEN, MOBIO_A_PID);
		if (!attr) {
			NL_SET_ERR_MSG(cb->extack, "MOBIO_A_PID missing");
			return -EINVAL;
		}
		cb->args[ASAP_PD_PID] = nla_get_u32(attr);
	}
	runs = kmalloc_array(ASAP_PROFILE_RUNS_MAX, sizeof(*runs), GFP_KERNEL);
	if (!runs)
		return -ENOMEM;
	/* A window closed just before is part of the profile. */
	asap_learn_wait();
	mutex_lock(&asap_lock);
	app = asap_app_lookup(cb->args[ASAP_PD_PID]);
	if (app) {
		ret = asap_prof_dump(skb, cb, app, runs) ?: skb->len;
	} else if (cb->args[ASAP_PD_SECTION]) {
		ret = 0;		/* the app went away: end the dump */
	} else {
		NL_SET_ERR_MSG(cb->extack,
			       "no tracked app has this pid (switch to it first)");
		ret = -ENOENT;
	}
	mutex_unlock(&asap_lock);
	kfree(runs);
	return ret;
}

/*
 * The runs of @attr, checked; *@n of them. @anon: runs of anonymous pages
 * (addresses turned into page numbers here).
 */
static struct asap_profile_run *asap_prof_parse(struct nlattr *attr,
						bool anon, unsigned int *n,
						struct netlink_ext_ack *extack)
{
	u64 max = anon ? ASAP_ANON_PAGES_MAX : ASAP_FILE_PAGES_MAX;
	struct asap_profile_run *runs;
	const char *why;
	unsigned int i;

	*n = nla_len(attr) / sizeof(*runs);
	if (!*n || nla_len(attr) % sizeof(*runs)) {
		NL_SET_ERR_MSG_ATTR(extack, attr,
				    "runs: a non-empty array of struct asap_profile_run");
		return ERR_PTR(-EINVAL);
	}
	runs = kmemdup(nla_data(attr), nla_len(attr), GFP_KERNEL);
	if (!runs)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < *n; i++) {
		if (anon && offset_in_page(runs[i].start)) {
			why = "an anonymous run's address is not page aligned";
			goto err;
		}
		if (anon)
			runs[i].start >>= PAGE_SHIFT;
		why = asap_prof_check(&runs[i], runs[i].start, anon, max);
		if (why)
			goto err;
	}
	return runs;

err:
	/* @why is a string literal of asap_rules.h: it outlives the reply. */
	NL_SET_BAD_ATTR(extack, attr);
	if (extack)
		extack->_msg = why;
	kfree(runs);
	return ERR_PTR(-EINVAL);
}

/* Load @n runs into @xa; -ENOSPC when a cap is reached. */
static int asap_prof_load(struct asap_app *app, struct xarray *xa, bool anon,
			  const struct asap_profile_run *runs, unsigned int n,
			  struct netlink_ext_ack *extack)
{
	unsigned long val, idx;
	unsigned int i;

	for (i = 0; i < n; i++) {
		val = asap_prof_val(&runs[i], anon, asap_anon_timeout);
		for (idx = runs[i].start; idx < runs[i].start + runs[i].nr;
		     idx++) {
			if (!asap_entry_load(app, xa, idx, val)) {
				NL_SET_ERR_MSG(extack,
					       "entry caps reached (app_entries_max, entries_max): the profile is loaded in part");
				return -ENOSPC;
			}
		}
		cond_resched();
	}
	return 0;
}

/* PROFILE_SET of one file's runs; asap_lock held. */
static int asap_prof_set_file(struct asap_app *app, struct genl_info *info,
			      const struct asap_profile_run *runs,
			      unsigned int n)
{
	struct mm_struct *mm = app->mm;
	struct asap_file *af;
	int ret;

	if (!info->attrs[ASAP_A_FILE_DEV] || !info->attrs[ASAP_A_FILE_INO] ||
	    !info->attrs[ASAP_A_FILE_GEN]) {
		NL_SET_ERR_MSG(info->extack,
			       "a file needs ASAP_A_FILE_DEV, _INO and _GEN");
		return -EINVAL;
	}
	if (!mmget_not_zero(mm)) {
		NL_SET_ERR_MSG(info->extack, "the app is exiting");
		return -ESRCH;
	}
	mmap_read_lock(mm);
	af = asap_file_by_id(app, mm,
			     nla_get_u64(info->attrs[ASAP_A_FILE_DEV]),
			     nla_get_u64(info->attrs[ASAP_A_FILE_INO]),
			     nla_get_u32(info->attrs[ASAP_A_FILE_GEN]));
	mmap_read_unlock(mm);
	mmput(mm);
	if (IS_ERR(af)) {
		ret = PTR_ERR(af);
		if (ret == -ENOENT)
			NL_SET_ERR_MSG(info->extack,
				       "the app maps no file of this device, inode and generation (replaced since the save?)");
		else if (ret == -ENOSPC)
			NL_SET_ERR_MSG(info->extack,
				       "the app's estimator follows the most files already");
		return ret;
	}
	return asap_prof_load(app, &af->pages, false, runs, n, info->extack);
}

static int asap_genl_profile_set(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr *fruns = info->attrs[ASAP_A_FILE_RUNS];
	struct nlattr *aruns = info->attrs[ASAP_A_ANON_RUNS];
	struct asap_profile_run *runs = NULL;
	struct asap_app *app;
	unsigned int n = 0;
	int ret;

	ret = asap_genl_admin(skb, info->extack);
	if (ret)
		return ret;
	if (!info->attrs[MOBIO_A_PID]) {
		NL_SET_ERR_MSG(info->extack, "MOBIO_A_PID missing");
		return -EINVAL;
	}
	if (fruns && (aruns || info->attrs[ASAP_A_PROFILED])) {
		NL_SET_ERR_MSG(info->extack,
			       "a file's runs go in a message of their own");
		return -EINVAL;
	}
	if (fruns || aruns) {
		runs = asap_prof_parse(fruns ?: aruns, !fruns, &n,
				       info->extack);
		if (IS_ERR(runs))
			return PTR_ERR(runs);
	}
	/* Busy only while its window is open, not while it is learned. */
	asap_learn_wait();
	mutex_lock(&asap_lock);
	app = asap_app_get(nla_get_u32(info->attrs[MOBIO_A_PID]),
			   info->extack);
	if (IS_ERR(app)) {
		ret = PTR_ERR(app);
		goto out;
	}
	if (asap_app_busy(app)) {
		NL_SET_ERR_MSG(info->extack,
			       "the app is in its switch window: switch away first");
		ret = -EBUSY;
		goto out;
	}
	if (info->attrs[ASAP_A_PROFILED])
		app->profiled = min(nla_get_u32(info->attrs[ASAP_A_PROFILED]),
				    asap_profile_switches);
	if (fruns)
		ret = asap_prof_set_file(app, info, runs, n);
	else if (aruns)
		ret = asap_prof_load(app, &app->anon, true, runs, n,
				     info->extack);
	/* The extents prepared for its next switch are of the old tables. */
	asap_job_unprepare(app);
out:
	mutex_unlock(&asap_lock);
	kfree(runs);
	return ret;
}

/* SWITCH, PROFILE_GET and PROFILE_SET check CAP_SYS_ADMIN themselves. */
static const struct genl_small_ops asap_genl_ops[] = {
	{
		.cmd = ASAP_CMD_GET_STATS,
		.doit = asap_genl_get_stats,
	},
	{
		.cmd = ASAP_CMD_SWITCH,
		.doit = asap_genl_switch,
	},
	{
		.cmd = ASAP_CMD_GET_APPS,
		.dumpit = asap_genl_get_apps,
	},
	{
		.cmd = ASAP_CMD_PROFILE_GET,
		.dumpit = asap_genl_profile_get,
	},
	{
		.cmd = ASAP_CMD_PROFILE_SET,
		.doit = asap_genl_profile_set,
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
	/*
	 * Events name every app's pid and name: for administrators only
	 * (genl_bind() checks CAP_SYS_ADMIN on 6.1 and 6.12, for
	 * NETLINK_ADD_MEMBERSHIP and bind() alike).
	 */
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
