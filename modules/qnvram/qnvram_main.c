// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM: quasi non-volatile RAM for apps (Luo et al., HotStorage'14).
 *
 * A pool of DRAM reserved at boot (memmap=<size>$<phys>) is carved into
 * page-granular regions named by (uid, magic). Apps map them through
 * /dev/qnvram. The pool's metadata lives inside the pool (two checksummed
 * slots, see qnvram_format.h), so after an app crash or a warm reboot the
 * module adopts the pool as it is and apps retrieve their regions. When the
 * power key is held, at power-off, on demand and under pool pressure the
 * pool (or an idle region) is written to a backing block device, from which
 * a cold boot restores it.
 *
 * This file: module parameters, pool setup, metadata commits and the
 * region operations behind the ioctls and netlink commands.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/io.h>
#include <linux/ioport.h>
#include <linux/vmalloc.h>
#include <linux/slab.h>
#include <linux/ktime.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/libnvdimm.h>
#include <asm/cacheflush.h>
#ifdef CONFIG_X86
#include <asm/e820/api.h>
#endif
#include "qnvram_pool.h"

static unsigned long phys;
module_param(phys, ulong, 0444);
MODULE_PARM_DESC(phys, "Physical start of the pool, bytes; reserve it with memmap=<size>$<phys>");

static unsigned long size;
module_param(size, ulong, 0444);
MODULE_PARM_DESC(size, "Pool size, bytes (multiple of 4096, at least 68 KiB)");

static bool fallback;
module_param(fallback, bool, 0444);
MODULE_PARM_DESC(fallback, "Without phys=, take the pool from ordinary memory (survives app crashes only; default size 8 MiB)");

static char *backing;
module_param(backing, charp, 0444);
MODULE_PARM_DESC(backing, "Backing block device for flush, restore and swap (e.g. /dev/vdb); at least 2 * (size + 4 KiB)");

unsigned int qnvram_hold_ms = 5000;
module_param_named(hold_ms, qnvram_hold_ms, uint, 0644);
MODULE_PARM_DESC(hold_ms, "Power key hold time that triggers a flush, ms (default 5000; 0 disables)");

unsigned int qnvram_freeze_ms = 30000;
module_param_named(freeze_ms, qnvram_freeze_ms, uint, 0644);
MODULE_PARM_DESC(freeze_ms, "After a power-key or power-off flush, apps touching their regions wait this long, ms, so that the image stays the last state they acted on until the power goes (default 30000; 0: no wait)");

/*
 * Per-uid limits, on by default so that no unprivileged uid can take the
 * pool from the others (docs/qnvram.md "Threat model"): 12% of the data
 * area lets eight uids hold a full quota at once and leaves 4% for the
 * rest; 24 of the 256 table entries lets ten uids reach the cap and leaves
 * 16 entries. Callers with CAP_SYS_ADMIN are not limited; root may change
 * both at run time (0644).
 */
static unsigned long uid_quota;
module_param(uid_quota, ulong, 0644);
MODULE_PARM_DESC(uid_quota, "Bytes one uid without CAP_SYS_ADMIN may hold, resident or swapped (default 0: uid_quota_pct of the data area)");

static unsigned int uid_quota_pct = 12;
module_param(uid_quota_pct, uint, 0644);
MODULE_PARM_DESC(uid_quota_pct, "Without uid_quota, the percent of the pool's data area one uid without CAP_SYS_ADMIN may hold (default 12: eight uids at their quota leave 4% free; 0: no limit; at most 100)");

static unsigned int uid_regions = 24;
module_param(uid_regions, uint, 0644);
MODULE_PARM_DESC(uid_regions, "Regions one uid without CAP_SYS_ADMIN may hold, of the pool's 256 (default 24: ten uids at the cap leave 16 entries; 0: no limit)");

/*
 * Flash wear that one uid can cause by swapping (docs/qnvram.md "Threat
 * model"): a loop that retrieves two regions larger than the free space in
 * turn would swap one out and the other in forever. Each uid without
 * CAP_SYS_ADMIN has a token bucket of uid_swap_mib_per_hour, refilled
 * continuously, charged for what its binds move: the swap-in of its
 * region and the swap-outs that make room for a bind. 256 MiB an hour is
 * 6 GiB a day at most per uid, about 3% of what a 64 GB phone flash rated
 * for 3000 cycles over three years can take each day, and far above what
 * an app relaunched every minute with a few MiB of regions moves.
 */
static unsigned int uid_swap_mib_per_hour = 256;
module_param(uid_swap_mib_per_hour, uint, 0644);
MODULE_PARM_DESC(uid_swap_mib_per_hour, "Swap traffic one uid without CAP_SYS_ADMIN may cause, MiB per hour (a bucket of that size, refilled continuously): swap-ins of its regions and the swap-outs that make room for its binds; past it they fail with ENOSPC (default 256; 0: no limit)");

/*
 * Times one bind may start over after making room (each time one region
 * was swapped out, or a background swap-out waited for) before it gives
 * up with -ENOSPC: enough to swap out every other region once.
 */
#define QNVRAM_BIND_MAX_RESTARTS	(QNVRAM_MAX_REGIONS + 8)

#define QNVRAM_FALLBACK_DEFAULT_BYTES	(8UL * 1024 * 1024)

struct qnvram_pool qnvram_pool;

/**
 * qnvram_persist() - write CPU caches back to the pool's memory
 * @addr: start, inside the pool
 * @bytes: length, bytes
 *
 * A warm reset on real hardware may drop dirty cache lines; what must
 * survive one is written back first. A no-op where the architecture has
 * no pmem API (the data then relies on the reset keeping caches).
 * Context: any.
 */
void qnvram_persist(void *addr, size_t bytes)
{
	arch_wb_cache_pmem(addr, bytes);
	wmb();	/* order the write-back before what the caller does next */
}

/**
 * qnvram_meta_slot_ptr() - one of the pool's two metadata slots
 * @pool: the pool
 * @slot: 0 or 1
 *
 * Context: any.
 * Return: the slot, in the pool's memory.
 */
struct qnvram_meta *qnvram_meta_slot_ptr(struct qnvram_pool *pool, int slot)
{
	return pool->base + slot * QNVRAM_META_SLOT_BYTES;
}

/**
 * qnvram_meta_commit() - make the working metadata the pool's current one
 * @pool: the pool; caller holds @pool->lock
 *
 * Bumps the generation, seals, and stores the copy into the older slot,
 * then persists it: a reset during the store leaves the older slot torn
 * (bad checksum) and the previous one current.
 * Context: process.
 */
void qnvram_meta_commit(struct qnvram_pool *pool)
{
	int target = pool->meta_slot ^ 1;
	struct qnvram_meta *dst = qnvram_meta_slot_ptr(pool, target);

	lockdep_assert_held(&pool->lock);
	le64_add_cpu(&pool->meta->hdr.generation, 1);
	qnvram_meta_seal(pool->meta);
	memcpy(dst, pool->meta, sizeof(*dst));
	qnvram_persist(dst, sizeof(*dst));
	pool->meta_slot = target;
	pool->stats.meta_commits++;
	qnvram_view_publish(pool);
}

/**
 * qnvram_view_publish() - make the working table what lockless readers see
 * @pool: the pool; caller holds @pool->lock
 *
 * qnvram_meta_commit() calls it; so does the load, which may adopt a table
 * without committing it.
 * Context: any (under the pool lock).
 */
void qnvram_view_publish(struct qnvram_pool *pool)
{
	write_seqcount_begin(&pool->view_seq);
	memcpy(pool->view, pool->meta, sizeof(*pool->view));
	write_seqcount_end(&pool->view_seq);
}

/**
 * qnvram_view_read() - copy the table as last committed, without the pool
 *	lock
 * @pool: the pool
 * @copy: filled with one committed state of the whole table
 *
 * For readers that must never wait for @pool->lock, which a flush or a
 * swap may hold across flash I/O: the copy may be one commit behind a
 * change in progress, never a mix of two.
 * Context: any; spins only while a commit copies the table (a few us).
 */
void qnvram_view_read(struct qnvram_pool *pool, struct qnvram_meta *copy)
{
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&pool->view_seq);
		memcpy(copy, pool->view, sizeof(*copy));
	} while (read_seqcount_retry(&pool->view_seq, seq));
}

/**
 * qnvram_resolve_uid() - check and translate a uid named by a caller
 * @cred: the credentials of the opener of the caller's netlink socket or
 *	/dev/qnvram file (the callers also require the sending task's
 *	effective uid to be the same, see qnvram_dev.c and qnvram_genl.c)
 * @ns: the user namespace @uid is given in
 * @uid: the uid named
 * @admin: the caller has CAP_SYS_ADMIN (in the initial user namespace)
 * @pool_uid: set to the uid as stored in the pool (initial namespace)
 *
 * Context: any.
 * Return: 0; -EINVAL for a uid not mapped in @ns; -EPERM for another
 * uid than @cred's effective one without @admin.
 */
int qnvram_resolve_uid(const struct cred *cred, struct user_namespace *ns,
		       u32 uid, bool admin, u32 *pool_uid)
{
	kuid_t kuid = make_kuid(ns, uid);

	if (!uid_valid(kuid))
		return -EINVAL;
	if (!admin && !uid_eq(kuid, cred->euid))
		return -EPERM;
	*pool_uid = from_kuid(&init_user_ns, kuid);
	return 0;
}

/*
 * The byte quota of one uid now: uid_quota, else uid_quota_pct of the data
 * area (one page at least); 0 for none.
 */
static u64 qnvram_uid_quota(const struct qnvram_pool *pool)
{
	unsigned long bytes = READ_ONCE(uid_quota);
	unsigned int pct = min(READ_ONCE(uid_quota_pct), 100U);

	if (bytes || !pct)
		return bytes;
	return max_t(u64, QNVRAM_GRANULE,
		     div_u64((pool->bytes - QNVRAM_DATA_OFFSET) * pct, 100));
}

static struct qnvram_region_entry *qnvram_entry(struct qnvram_pool *pool,
						int slot)
{
	return &pool->meta->entries[slot];
}

/**
 * qnvram_pick_victim() - the region to swap out next
 * @pool: the pool; caller holds @pool->lock
 * @skip_bg_busy: pass over regions that a background swap-out is writing
 *
 * Return: the least recently used resident region that no file is bound
 * to and that is not being swapped, or -ENOENT.
 * Context: any (under the pool lock).
 */
int qnvram_pick_victim(struct qnvram_pool *pool, bool skip_bg_busy)
{
	int i, victim = -ENOENT;

	lockdep_assert_held(&pool->lock);
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		u32 flags = le32_to_cpu(qnvram_entry(pool, i)->flags);

		if (!(flags & QNVRAM_ENTRY_USED) ||
		    (flags & QNVRAM_ENTRY_SWAPPED) || pool->rt[i].binds ||
		    pool->rt[i].swapping ||
		    (skip_bg_busy && pool->rt[i].bg_busy))
			continue;
		if (victim < 0 ||
		    pool->rt[i].last_used_ns < pool->rt[victim].last_used_ns)
			victim = i;
	}
	return victim;
}

/*
 * The table entry of (@uid, @magic), once no synchronous swap of it runs.
 * Caller holds pool->lock. Return: the slot, or -ENOENT, the lock held;
 * -EAGAIN (look again) or -EINTR with the lock released, as
 * qnvram_swap_wait().
 */
static int qnvram_find_settled(struct qnvram_pool *pool, u32 uid, u32 magic)
{
	int slot = qnvram_meta_find(pool->meta, uid, magic);
	int ret;

	if (slot < 0)
		return slot;
	ret = qnvram_swap_wait(pool, slot);
	return ret ?: slot;
}

/* uids whose swap budget is tracked at once; the least recent is reused. */
#define QNVRAM_SWAP_BUDGET_UIDS		32

/**
 * struct qnvram_swap_budget - one uid's swap budget (a token bucket)
 * @uid: the uid, initial user namespace
 * @bytes: bytes it may still move
 * @stamp_ns: ktime of the last refill; 0: entry unused
 *
 * Protected by qnvram_pool.lock.
 */
struct qnvram_swap_budget {
	u32 uid;
	u64 bytes;
	u64 stamp_ns;
};

static struct qnvram_swap_budget qnvram_swap_budgets[QNVRAM_SWAP_BUDGET_UIDS];

/*
 * Charge @bytes of swap traffic to @uid (not to admin callers). A uid not
 * tracked starts with a full bucket, in the entry used least recently:
 * forgetting a uid only ever gives it its first hour's budget again.
 * Caller holds pool->lock. Return: 0, or -ENOSPC when over the budget.
 */
static int qnvram_swap_charge(struct qnvram_pool *pool, u32 uid, bool admin,
			      u64 bytes)
{
	u64 cap = (u64)READ_ONCE(uid_swap_mib_per_hour) << 20;
	struct qnvram_swap_budget *b = NULL, *oldest = qnvram_swap_budgets;
	u64 now = ktime_get_ns();
	int i;

	lockdep_assert_held(&pool->lock);
	if (admin || !cap)
		return 0;
	for (i = 0; i < QNVRAM_SWAP_BUDGET_UIDS && !b; i++) {
		struct qnvram_swap_budget *e = &qnvram_swap_budgets[i];

		if (e->stamp_ns && e->uid == uid)
			b = e;
		else if (e->stamp_ns < oldest->stamp_ns)
			oldest = e;
	}
	if (!b) {
		b = oldest;
		b->uid = uid;
		b->bytes = cap;
	} else {
		/* cap bytes an hour: (now - stamp) ns * cap / 3600e9 */
		b->bytes = min(cap, b->bytes +
			       mul_u64_u64_div_u64(now - b->stamp_ns, cap,
						   3600ULL * NSEC_PER_SEC));
	}
	b->stamp_ns = now;
	if (b->bytes < bytes) {
		pool->stats.swap_budget_refusals++;
		pr_info_ratelimited("uid %u is over its swap budget (uid_swap_mib_per_hour=%u): a bind that needs %llu bytes swapped fails with ENOSPC\n",
				    uid, uid_swap_mib_per_hour, bytes);
		return -ENOSPC;
	}
	b->bytes -= bytes;
	return 0;
}

/* First fit in the data area, past what in-flight swap-ins reserved. */
static int qnvram_data_find_gap(struct qnvram_pool *pool, u64 length,
				u64 *offset)
{
	u64 pos = QNVRAM_DATA_OFFSET;

	for (;;) {
		if (qnvram_meta_find_gap(pool->meta, false, pos, pool->bytes,
					 length, offset))
			return -ENOSPC;
		if (!qnvram_swap_reserved(pool, QNVRAM_SWAPPING_IN, *offset,
					  length, &pos))
			return 0;
	}
}

/*
 * Find @length free bytes in the data area, or make room for them: a
 * background swap-out in progress is made urgent and waited for; else
 * the least recently used idle region is swapped out (those that the
 * background swap-out is not writing before those it is), charged to
 * @uid's swap budget unless @admin. Either drops
 * @pool->lock while it waits for I/O, so each makes one step only.
 * Caller holds @pool->lock.
 * Return: 0 with *@offset set; -EAGAIN when room was made: @pool->lock
 * has been released and the caller starts over, as what it looked up may
 * have changed; or another error, @pool->lock held.
 */
static int qnvram_find_space(struct qnvram_pool *pool, u64 length,
			     u64 *offset, u32 uid, bool admin)
{
	int victim, ret;
	u64 len;

	if (!qnvram_data_find_gap(pool, length, offset))
		return 0;
	if (!pool->backing.bdev)
		return -ENOSPC;
	if (!qnvram_bgswap_urgent(pool)) {
		victim = qnvram_pick_victim(pool, true);
		if (victim < 0)
			victim = qnvram_pick_victim(pool, false);
		if (victim < 0)
			return -ENOSPC;
		len = le64_to_cpu(qnvram_entry(pool, victim)->length);
		ret = qnvram_swap_charge(pool, uid, admin, len);
		if (!ret)
			ret = qnvram_swap_out(pool, victim);
		if (ret)
			return ret;
	}
	mutex_unlock(&pool->lock);
	return -EAGAIN;
}

static unsigned int qnvram_uid_regions(struct qnvram_pool *pool, u32 uid)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++)
		if (qnvram_entry(pool, i)->flags &&
		    le32_to_cpu(qnvram_entry(pool, i)->uid) == uid)
			n++;
	return n;
}

/*
 * Whether @uid may create a region of @req_bytes now, decided before
 * anything changes: neither the image is retired nor any region swapped
 * out for a request that fails here. Caller holds @pool->lock.
 */
static int qnvram_region_admit(struct qnvram_pool *pool, u32 uid,
			       u64 req_bytes, bool admin)
{
	u64 length, quota = qnvram_uid_quota(pool);
	unsigned int cap = READ_ONCE(uid_regions);

	lockdep_assert_held(&pool->lock);
	if (!req_bytes || req_bytes > QNVRAM_REGION_MAX_BYTES)
		return -EINVAL;
	length = round_up(req_bytes, QNVRAM_GRANULE);
	if (length > pool->bytes - QNVRAM_DATA_OFFSET)
		return -ENOSPC;
	if (!admin && quota &&
	    qnvram_meta_uid_bytes(pool->meta, uid) + length > quota)
		return -EDQUOT;
	if (!admin && cap && qnvram_uid_regions(pool, uid) >= cap)
		return -EDQUOT;
	return qnvram_meta_free_slot(pool->meta) < 0 ? -ENOSPC : 0;
}

/*
 * After qnvram_region_admit(): may swap out an idle region to make room
 * (then -EAGAIN, unlocked, as qnvram_find_space()).
 */
static int qnvram_region_create(struct qnvram_pool *pool, u32 uid,
				u32 magic, u64 req_bytes, bool admin)
{
	struct qnvram_region_entry *e;
	u64 length = round_up(req_bytes, QNVRAM_GRANULE), offset;
	int slot, ret;

	slot = qnvram_meta_free_slot(pool->meta);
	if (slot < 0)
		return slot;
	ret = qnvram_find_space(pool, length, &offset, uid, admin);
	if (ret)
		return ret;

	/* A new region never shows what an earlier owner left there. */
	memset(pool->base + offset, 0, length);
	qnvram_persist(pool->base + offset, length);

	e = qnvram_entry(pool, slot);
	e->flags = cpu_to_le32(QNVRAM_ENTRY_USED);
	e->uid = cpu_to_le32(uid);
	e->magic = cpu_to_le32(magic);
	e->data_crc = 0;
	e->offset = cpu_to_le64(offset);
	e->length = cpu_to_le64(length);
	qnvram_meta_commit(pool);
	qnvram_region_touch(pool, slot);
	return slot;
}

/**
 * qnvram_region_bind() - bind an open file to a region, creating it or
 *	swapping it in as needed
 * @pool: the pool
 * @b: the file's binding; must be unbound
 * @req: request from userspace, its flags and reserved fields checked by
 *	the caller; size, state and flags (QNVRAM_REQ_CREATED or 0) are
 *	filled in
 * @create: QNVRAM_IOC_ALLOC (true) or QNVRAM_IOC_RETRIEVE (false)
 * @uid: the owner, as stored in the pool (see qnvram_resolve_uid())
 * @admin: the caller has CAP_SYS_ADMIN: uid_quota and uid_regions do not
 *	apply
 *
 * Creating a region changes the pool: the current flash image, if any, is
 * made stale first (qnvram_img_retire()), once the request is known to be
 * admitted (size, quota, table). Binding an existing region (and swapping
 * it in) changes no byte of it and leaves the image current. To make room
 * either may swap out other idle regions, of any uid (least recently used
 * first); a creation over the caller's quota fails before that.
 *
 * Context: process, may sleep (flash I/O for swap-in or swap-out, done
 * without @pool->lock: meanwhile other callers go on, and this one starts
 * over once the I/O has ended).
 * Return: 0; -EINVAL for a bad size; -EBUSY if @b is already bound;
 * -EEXIST (create without QNVRAM_REQ_OPEN_EXISTING) or -ENOENT (retrieve)
 * for the region's presence; -EDQUOT past the uid's quota or region cap;
 * -ENOSPC when it does not fit, or the swaps it needs are over the uid's
 * swap budget (uid_swap_mib_per_hour); -EIO when a swapped region's data fails
 * its checksum, or when the current image cannot be made stale; -EINTR
 * for a fatal signal while waiting.
 */
int qnvram_region_bind(struct qnvram_pool *pool, struct qnvram_binding *b,
		       struct qnvram_region_req *req, bool create, u32 uid,
		       bool admin)
{
	unsigned int restarts = 0;
	struct qnvram_region_entry *e;
	bool created = false;
	u32 flags;
	u64 offset;
	int slot, ret;

	goto first;
again:
	/* Each restart follows a swap that made room, or a wait for one. */
	if (++restarts > QNVRAM_BIND_MAX_RESTARTS)
		return -ENOSPC;
first:
	if (mutex_lock_killable(&pool->lock))
		return -EINTR;
	if (b->slot >= 0) {
		ret = -EBUSY;
		goto out_unlock;
	}
	slot = qnvram_find_settled(pool, uid, req->magic);
	if (slot == -EAGAIN)
		goto again;
	if (slot == -EINTR)
		return slot;	/* unlocked */
	if (create && slot >= 0 && !(req->flags & QNVRAM_REQ_OPEN_EXISTING)) {
		ret = -EEXIST;
		goto out_unlock;
	}
	if (!create && slot < 0) {
		ret = -ENOENT;
		goto out_unlock;
	}
	if (slot < 0) {
		ret = qnvram_region_admit(pool, uid, req->size, admin);
		if (ret)
			goto out_unlock;
		ret = qnvram_img_retire(pool);
		if (ret == -EAGAIN)
			goto again;
		if (ret)
			return ret;	/* unlocked */
		slot = qnvram_region_create(pool, uid, req->magic, req->size,
					    admin);
		if (slot == -EAGAIN)
			goto again;
		if (slot < 0) {
			ret = slot;
			goto out_unlock;
		}
		created = true;
	}

	e = qnvram_entry(pool, slot);
	flags = le32_to_cpu(e->flags);
	if (flags & QNVRAM_ENTRY_SWAPPED) {
		ret = qnvram_find_space(pool, le64_to_cpu(e->length), &offset,
					uid, admin);
		if (ret == -EAGAIN)
			goto again;
		if (!ret)
			ret = qnvram_swap_charge(pool, uid, admin,
						 le64_to_cpu(e->length));
		if (!ret)
			ret = qnvram_swap_in(pool, slot, offset);
		if (ret)
			goto out_unlock;
	}

	pool->rt[slot].binds++;
	pool->rt[slot].last_used_ns = ktime_get_ns();
	/* Mapped from now on: a background swap-out of it is stale. */
	qnvram_region_changed(pool, slot);
	b->slot = slot;
	b->offset = le64_to_cpu(e->offset);
	b->length = le64_to_cpu(e->length);
	req->size = b->length;
	req->state = QNVRAM_STATE_RESIDENT;
	req->flags = created ? QNVRAM_REQ_CREATED : 0;
	ret = 0;
	qnvram_bgswap_check(pool);
out_unlock:
	mutex_unlock(&pool->lock);
	return ret;
}

/**
 * qnvram_region_unbind() - drop a file's binding (last close of the file)
 * @pool: the pool
 * @b: the binding; unbound afterwards (unbinding twice is a no-op)
 *
 * Context: process, may sleep.
 */
void qnvram_region_unbind(struct qnvram_pool *pool, struct qnvram_binding *b)
{
	if (b->slot < 0)
		return;
	mutex_lock(&pool->lock);
	pool->rt[b->slot].binds--;
	pool->rt[b->slot].last_used_ns = ktime_get_ns();
	b->slot = -1;
	/* One more idle region: a background swap-out may use it. */
	qnvram_bgswap_check(pool);
	mutex_unlock(&pool->lock);
}

/**
 * qnvram_region_free() - free a region
 * @pool: the pool
 * @uid: owner, as stored in the pool (see qnvram_resolve_uid())
 * @magic: name
 *
 * The current flash image, if any, is made stale first: it holds the
 * region.
 *
 * Context: process, may sleep.
 * Return: 0; -ENOENT if there is no such region; -EBUSY while a file is
 * bound to it (an app still maps it); -EIO when the current image cannot
 * be made stale; -EINTR for a fatal signal while waiting for the lock or
 * for a swap of the region.
 */
int qnvram_region_free(struct qnvram_pool *pool, u32 uid, u32 magic)
{
	int slot, ret = 0;

again:
	if (mutex_lock_killable(&pool->lock))
		return -EINTR;
	slot = qnvram_find_settled(pool, uid, magic);
	if (slot == -EAGAIN)
		goto again;
	if (slot == -EINTR)
		return slot;	/* unlocked */
	if (slot < 0) {
		ret = slot;
	} else if (pool->rt[slot].binds) {
		ret = -EBUSY;
	} else {
		ret = qnvram_img_retire(pool);
		if (ret == -EAGAIN)
			goto again;
		if (ret)
			return ret;	/* unlocked */
		memset(qnvram_entry(pool, slot), 0, sizeof(struct qnvram_region_entry));
		qnvram_meta_commit(pool);
		qnvram_region_changed(pool, slot);
	}
	mutex_unlock(&pool->lock);
	return ret;
}

/**
 * qnvram_collect_stats() - snapshot the pool's counters
 * @pool: the pool
 * @stats: array to fill
 * @max: its length (QNVRAM_NR_STATS is enough)
 *
 * Without @pool->lock, so that no reader waits for a flush or a swap: the
 * table is a committed state (qnvram_view_read()); the counters are read
 * as they are, each one whole (64-bit loads) but not all at one instant.
 *
 * Context: process, may sleep (allocates).
 * Return: the number of counters filled; 0 without memory.
 */
unsigned int qnvram_collect_stats(struct qnvram_pool *pool,
				  struct mobio_stat *stats, unsigned int max)
{
	struct qnvram_space space, swap = {};
	unsigned int n = 0, resident = 0, swapped = 0;
	struct qnvram_stats st;
	struct qnvram_meta *meta;
	u64 flush_kbps = 0;
	bool img_current;
	int i;

#define QNVRAM_STAT(nm, val) do {			\
		if (n < max)				\
			stats[n++] = (struct mobio_stat){ nm, val }; \
	} while (0)

	meta = kmalloc(sizeof(*meta), GFP_KERNEL);
	if (!meta)
		return 0;
	qnvram_view_read(pool, meta);
	/* Counters change under the lock; each is read whole, racily. */
	data_race(memcpy(&st, &pool->stats, sizeof(st)));
	img_current = qnvram_img_current_racy(pool);
	qnvram_meta_space(meta, false, QNVRAM_DATA_OFFSET, pool->bytes,
			  &space);
	if (pool->backing.bdev)
		qnvram_meta_space(meta, true, 0, pool->backing_bytes -
				  qnvram_swap_start(pool->bytes), &swap);
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		u32 flags = le32_to_cpu(meta->entries[i].flags);

		if (flags & QNVRAM_ENTRY_SWAPPED)
			swapped++;
		else if (flags)
			resident++;
	}
	if (st.last_flush_ns)
		flush_kbps = div64_u64(st.last_flush_bytes * 1000000ULL,
				       st.last_flush_ns);

	QNVRAM_STAT("pool_bytes", pool->bytes);
	QNVRAM_STAT("data_bytes", pool->bytes - QNVRAM_DATA_OFFSET);
	QNVRAM_STAT("used_bytes", pool->bytes - QNVRAM_DATA_OFFSET -
		    space.free_bytes);
	QNVRAM_STAT("free_bytes", space.free_bytes);
	QNVRAM_STAT("largest_free_bytes", space.largest_free_bytes);
	QNVRAM_STAT("free_ranges", space.nr_free_ranges);
	QNVRAM_STAT("regions_resident", resident);
	QNVRAM_STAT("regions_swapped", swapped);
	QNVRAM_STAT("fallback", pool->fallback);
	QNVRAM_STAT("boot_source", pool->boot_source);
	QNVRAM_STAT("meta_generation", le64_to_cpu(meta->hdr.generation));
	QNVRAM_STAT("meta_commits", st.meta_commits);
	QNVRAM_STAT("backing_bytes", pool->backing.bdev ? pool->backing_bytes : 0);
	QNVRAM_STAT("swap_free_bytes", swap.free_bytes);
	QNVRAM_STAT("flushes", st.flushes);
	QNVRAM_STAT("flush_errors", st.flush_errors);
	QNVRAM_STAT("flush_bytes", st.flush_bytes);
	QNVRAM_STAT("last_flush_bytes", st.last_flush_bytes);
	QNVRAM_STAT("last_flush_ns", st.last_flush_ns);
	QNVRAM_STAT("last_flush_kbps", flush_kbps);
	QNVRAM_STAT("power_key_presses", st.power_key_presses);
	QNVRAM_STAT("power_key_flushes", st.power_key_flushes);
	QNVRAM_STAT("poweroff_flushes", st.poweroff_flushes);
	QNVRAM_STAT("swap_outs", st.swap_outs);
	QNVRAM_STAT("swap_ins", st.swap_ins);
	QNVRAM_STAT("swap_bytes", st.swap_bytes);
	QNVRAM_STAT("restore_dropped_regions", st.restore_dropped);
	QNVRAM_STAT("frozen_faults", st.frozen_faults);
	QNVRAM_STAT("wb_started", st.wb_started);
	QNVRAM_STAT("wb_running", READ_ONCE(pool->wb.state) != QNVRAM_WB_IDLE);
	QNVRAM_STAT("wb_images", st.wb_images);
	QNVRAM_STAT("wb_takeovers", st.wb_takeovers);
	QNVRAM_STAT("wb_promotions", st.wb_promotions);
	QNVRAM_STAT("wb_errors", st.wb_errors);
	QNVRAM_STAT("wb_no_freeblock", st.wb_no_freeblock);
	QNVRAM_STAT("wb_regions", st.wb_regions);
	QNVRAM_STAT("wb_bytes", st.wb_bytes);
	QNVRAM_STAT("direct_regions", st.direct_regions);
	QNVRAM_STAT("direct_bytes", st.direct_bytes);
	QNVRAM_STAT("wb_dirty_regions", st.wb_dirty_regions);
	QNVRAM_STAT("direct_dirty_regions", st.direct_dirty_regions);
	QNVRAM_STAT("bg_swap_started", st.bg_swap_started);
	QNVRAM_STAT("bg_swap_running", READ_ONCE(pool->bgswap.running));
	QNVRAM_STAT("bg_swap_outs", st.bg_swap_outs);
	QNVRAM_STAT("bg_swap_bytes", st.bg_swap_bytes);
	QNVRAM_STAT("bg_swap_dropped", st.bg_swap_dropped);
	QNVRAM_STAT("bg_swap_errors", st.bg_swap_errors);
	QNVRAM_STAT("bg_swap_waits", st.bg_swap_waits);
	QNVRAM_STAT("bg_swap_promotions", st.bg_swap_promotions);
	QNVRAM_STAT("img_current", img_current);
	/* Written under the lock; a report may read it a commit late. */
	QNVRAM_STAT("img_seq", data_race(pool->img_seq));
	QNVRAM_STAT("img_retired", st.img_retired);
	QNVRAM_STAT("img_retire_errors", st.img_retire_errors);
	QNVRAM_STAT("restore_stale", st.restore_stale);
	QNVRAM_STAT("wb_stale", st.wb_stale);
	QNVRAM_STAT("swap_budget_refusals", st.swap_budget_refusals);
	QNVRAM_STAT("load_dropped_regions", st.load_dropped);
	kfree(meta);
#undef QNVRAM_STAT
	return n;
}

#ifdef CONFIG_X86
/*
 * RAM in the firmware's own e820 table: memmap=<size>$<phys> turns RAM into
 * "reserved" only in the kernel's copy, while firmware-reserved ranges, the
 * PCI hole and the IOAPIC are not RAM in either.
 */
static bool qnvram_range_is_ram(u64 start, u64 len)
{
	u64 p;

	for (p = start; p < start + len; p += PAGE_SIZE) {
		if (!e820__mapped_raw_any(p, p + PAGE_SIZE, E820_TYPE_RAM))
			return false;
		if (!(PHYS_PFN(p) % 1024))
			cond_resched();
	}
	return true;
}
#else
/*
 * Memory the kernel has a memory map for: a no-map reserved-memory node of
 * the device tree is, a device window (a flash bank, the GIC, PCIe) is not.
 */
static bool qnvram_range_is_ram(u64 start, u64 len)
{
	unsigned long pfn;

	for (pfn = PHYS_PFN(start); pfn < PHYS_PFN(start + len); pfn++) {
		if (!pfn_valid(pfn))
			return false;
		if (!(pfn % 1024))
			cond_resched();
	}
	return true;
}
#endif

static int qnvram_pool_map(struct qnvram_pool *pool)
{
	if (!phys) {
		if (!fallback) {
			pr_err("no pool: give phys= and size= of a range reserved with memmap=<size>$<phys>, or fallback=1\n");
			return -EINVAL;
		}
		pool->bytes = size ?: QNVRAM_FALLBACK_DEFAULT_BYTES;
		if (pool->bytes % QNVRAM_GRANULE ||
		    pool->bytes < QNVRAM_MIN_POOL_BYTES) {
			pr_err("size=%lu: must be a multiple of 4096 and at least %llu\n",
			       size, QNVRAM_MIN_POOL_BYTES);
			return -EINVAL;
		}
		pool->base = vzalloc(pool->bytes);
		if (!pool->base)
			return -ENOMEM;
		pool->fallback = true;
		pr_warn("fallback pool of %llu bytes in ordinary memory: regions survive app crashes, not reboots\n",
			pool->bytes);
		return 0;
	}

	if (!size || size % QNVRAM_GRANULE || phys % QNVRAM_GRANULE ||
	    size < QNVRAM_MIN_POOL_BYTES || phys + size < phys) {
		pr_err("phys=%#lx size=%#lx: both must be multiples of 4096, size at least %llu\n",
		       phys, size, QNVRAM_MIN_POOL_BYTES);
		return -EINVAL;
	}
	/* Ordinary RAM would be handed out by the page allocator too. */
	if (region_intersects(phys, size, IORESOURCE_SYSTEM_RAM,
			      IORES_DESC_NONE) != REGION_DISJOINT) {
		pr_err("%#lx-%#lx overlaps System RAM: reserve it at boot with memmap=%#lx$%#lx\n",
		       phys, phys + size - 1, size, phys);
		return -EINVAL;
	}
	/*
	 * Nor may it be a device: formatting a pool writes all of it, and a
	 * flash bank's window took minutes of MMIO writes (a soft lockup).
	 */
	if (!qnvram_range_is_ram(phys, size)) {
		pr_err("%#lx-%#lx is not RAM (a device or a hole; see /proc/iomem): reserve RAM at boot with %s\n",
		       phys, phys + size - 1, IS_ENABLED(CONFIG_X86) ?
		       "memmap=<size>$<phys>" : "a no-map reserved-memory node");
		return -EINVAL;
	}
	/*
	 * Claim the range: no other driver (ramoops...) may use it, and with
	 * CONFIG_IO_STRICT_DEVMEM not even root can reach it via /dev/mem.
	 */
	if (!request_mem_region(phys, size, "qnvram")) {
		pr_err("%#lx-%#lx is in use by another driver (see /proc/iomem)\n",
		       phys, phys + size - 1);
		return -EBUSY;
	}
	pool->base = memremap(phys, size, MEMREMAP_WB);
	if (!pool->base) {
		pr_err("cannot map %#lx-%#lx\n", phys, phys + size - 1);
		release_mem_region(phys, size);
		return -ENOMEM;
	}
	pool->phys = phys;
	pool->bytes = size;
	return 0;
}

static void qnvram_pool_unmap(struct qnvram_pool *pool)
{
	if (pool->fallback) {
		vfree(pool->base);
	} else {
		memunmap(pool->base);
		release_mem_region(pool->phys, pool->bytes);
	}
	pool->base = NULL;
}

static int __init qnvram_init(void)
{
	struct qnvram_pool *pool = &qnvram_pool;
	int ret;

	BUILD_BUG_ON(sizeof(struct qnvram_meta) > QNVRAM_META_SLOT_BYTES);
	BUILD_BUG_ON(sizeof(struct qnvram_img_header) > QNVRAM_IMG_HDR_BYTES);
	if (PAGE_SIZE != QNVRAM_GRANULE) {
		pr_err("needs 4 KiB pages (PAGE_SIZE is %lu)\n", PAGE_SIZE);
		return -EINVAL;
	}

	mutex_init(&pool->lock);
	seqcount_mutex_init(&pool->view_seq, &pool->lock);
	mutex_init(&pool->swap_lock);
	init_waitqueue_head(&pool->swap_wq);
	init_waitqueue_head(&pool->img_mark_wq);
	INIT_LIST_HEAD(&pool->bindings);
	pool->frozen_until = jiffies;
	pool->img_slot = -1;
	pool->meta = kzalloc(sizeof(*pool->meta), GFP_KERNEL);
	pool->view = kzalloc(sizeof(*pool->view), GFP_KERNEL);
	if (!pool->meta || !pool->view) {
		ret = -ENOMEM;
		goto err_free_meta;
	}
	ret = qnvram_pool_map(pool);
	if (ret)
		goto err_free_meta;
	if (backing) {
		ret = qnvram_backing_open(pool, backing);
		if (ret)
			goto err_unmap;
	}
	mutex_lock(&pool->lock);
	ret = qnvram_pool_load(pool, backing);
	if (!ret)
		qnvram_view_publish(pool);	/* an adopted table is not committed */
	mutex_unlock(&pool->lock);
	if (ret)
		goto err_close_backing;

	/*
	 * What callers reach comes last, each after everything it can call:
	 * netlink FREE and FLUSH use the swap-out and write-back machinery,
	 * the triggers flush and send events, and an open /dev/qnvram can
	 * queue background work. Nothing that can fail comes after it.
	 */
	qnvram_bgswap_init(pool);
	qnvram_wb_init(pool);
	ret = qnvram_genl_init();
	if (ret)
		goto err_stop_background;
	ret = qnvram_triggers_init(pool);
	if (ret)
		goto err_genl;
	qnvram_debugfs_init(pool);
	ret = qnvram_dev_init();
	if (ret)
		goto err_debugfs;
	pr_info("pool %llu bytes at %s, backing %s\n", pool->bytes,
		pool->fallback ? "vmalloc (fallback)" : "reserved RAM",
		backing ?: "none");
	return 0;

err_debugfs:
	qnvram_debugfs_exit();
	qnvram_triggers_exit(pool);
err_genl:
	qnvram_genl_exit();
err_stop_background:
	qnvram_wb_exit(pool);
	qnvram_bgswap_exit(pool);
err_close_backing:
	qnvram_backing_close(pool);
err_unmap:
	qnvram_pool_unmap(pool);
err_free_meta:
	kfree(pool->view);
	kfree(pool->meta);
	return ret;
}

/* The reverse of qnvram_init(): callers' entry points first. */
static void __exit qnvram_exit(void)
{
	struct qnvram_pool *pool = &qnvram_pool;

	qnvram_dev_exit();
	qnvram_debugfs_exit();
	qnvram_triggers_exit(pool);
	qnvram_genl_exit();
	qnvram_wb_exit(pool);
	qnvram_bgswap_exit(pool);
	qnvram_backing_close(pool);
	qnvram_pool_unmap(pool);
	kfree(pool->view);
	kfree(pool->meta);
}

module_init(qnvram_init);
module_exit(qnvram_exit);

MODULE_DESCRIPTION("qNVRAM: reserved DRAM regions for apps that survive crashes and warm reboots, flushed to flash");
MODULE_AUTHOR("mobio developers");
MODULE_LICENSE("GPL");
