// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM: background swap-out through freeblock.ko, as kswapd is to direct
 * reclaim.
 *
 * When an allocation, a swap-in or an unbind leaves the pool's free data
 * bytes below swap_free_low_pct of the data area, and freeblock is loaded,
 * a work item picks idle regions (least recently used, no file bound: the
 * victims a synchronous swap-out would pick) until the free space they
 * would leave is swap_free_low_pct + QNVRAM_BGSWAP_HYST_PCT points. Under
 * the pool lock it copies each into a vmalloc'd staging buffer, computes
 * the CRC there and holds a range of the swap area for it; freeblock then
 * writes the copies in the foreground's idle time (fb_write()).
 *
 * When all of a region's blocks are written, a work item issues a device
 * cache flush and then, under the pool lock, commits the swap-out exactly
 * as qnvram_swap_out() does (entry swapped at its swap offset with the
 * CRC, pool range free, metadata committed), but only if the region is
 * still the one copied: its generation (qnvram_region_rt.gen, bumped by
 * bind, fault, create, free, swap-out and swap-in) did not move and no
 * file is bound. Otherwise the copy is dropped: its swap range was never
 * named by any metadata and is simply released. A region that changes
 * while its copy is being written has its tasks aborted at once.
 *
 * An allocation that finds no room while a background swap-out runs
 * promotes its tasks (fb_promote(): no more waiting for idle time), waits
 * for them (QNVRAM_BGSWAP_WAIT_MS at most), commits what was written and
 * then, if it still does not fit, swaps out synchronously as before.
 *
 * freeblock is held (symbol_get(), through qnvram_fb_get()) only while a
 * background swap-out runs. Without freeblock nothing changes: space is
 * made by the allocation itself. rmmod aborts a running one and waits for
 * its tasks; the regions it had not committed stay resident.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/blkdev.h>
#include <linux/vmalloc.h>
#include <linux/jiffies.h>
#include "qnvram_pool.h"

/* Default low watermark, % of the data area free. */
#define QNVRAM_BGSWAP_LOW_PCT_DEFAULT	10
/* A higher one would keep most of the pool on flash. */
#define QNVRAM_BGSWAP_LOW_PCT_MAX	90
/* A swap-out frees until this many points above the low watermark. */
#define QNVRAM_BGSWAP_HYST_PCT		5
/* How long an allocation without room waits for a promoted swap-out. */
#define QNVRAM_BGSWAP_WAIT_MS		(5U * MSEC_PER_SEC)

static unsigned int qnvram_swap_free_low_pct = QNVRAM_BGSWAP_LOW_PCT_DEFAULT;

static int qnvram_swap_free_low_pct_set(const char *val,
					const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, QNVRAM_BGSWAP_LOW_PCT_MAX);
}

static const struct kernel_param_ops qnvram_swap_free_low_pct_ops = {
	.set = qnvram_swap_free_low_pct_set,
	.get = param_get_uint,
};

module_param_cb(swap_free_low_pct, &qnvram_swap_free_low_pct_ops,
		&qnvram_swap_free_low_pct, 0644);
MODULE_PARM_DESC(swap_free_low_pct, "When free pool data bytes fall below this % of the data area, idle regions are swapped out in the background through freeblock (if loaded) until 5 points more are free (0: off; default 10; at most 90)");

/* Largest ceiling: 4 GiB/s, beyond any flash this runs on. */
#define QNVRAM_BGSWAP_CEILING_MAX_KBPS	(4U * 1024 * 1024)

static unsigned int qnvram_swap_bg_ceiling_kbps;

static int qnvram_swap_bg_ceiling_kbps_set(const char *val,
					   const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 0, QNVRAM_BGSWAP_CEILING_MAX_KBPS);
}

static const struct kernel_param_ops qnvram_swap_bg_ceiling_kbps_ops = {
	.set = qnvram_swap_bg_ceiling_kbps_set,
	.get = param_get_uint,
};

module_param_cb(swap_bg_ceiling_kbps, &qnvram_swap_bg_ceiling_kbps_ops,
		&qnvram_swap_bg_ceiling_kbps, 0644);
MODULE_PARM_DESC(swap_bg_ceiling_kbps, "Background swap-out writes each of its freeblock tasks at most this many KiB/s even on an idle disk, to spare flash bandwidth or power (0: no ceiling, the default; at most 4194304); a promoted swap-out keeps it");

static u64 qnvram_bgswap_pct_bytes(struct qnvram_pool *pool, unsigned int pct)
{
	return div_u64((pool->bytes - QNVRAM_DATA_OFFSET) * pct, 100);
}

static u64 qnvram_bgswap_free_bytes(struct qnvram_pool *pool)
{
	struct qnvram_space space;

	qnvram_meta_space(pool->meta, false, QNVRAM_DATA_OFFSET, pool->bytes,
			  &space);
	return space.free_bytes;
}

/* Whether the watermark is on and free space is below it. */
static bool qnvram_bgswap_below_low(struct qnvram_pool *pool)
{
	unsigned int pct = READ_ONCE(qnvram_swap_free_low_pct);

	return pct && qnvram_bgswap_free_bytes(pool) <
		      qnvram_bgswap_pct_bytes(pool, pct);
}

/* freeblock's late binding: the block's bytes in the staging copy. */
static void *qnvram_bgswap_getbuffer(void *ctx, u64 lbn, u32 len)
{
	struct qnvram_bgswap_task *t = ctx;

	return t->buf + lbn * t->piece.blksize;
}

/*
 * One of @r's tasks (or its registration) is done. The last one marks it
 * ended and queues the commit; the last region's also completes
 * all_ended. Nothing touches the swap-out after its own count drop unless
 * that drop was the last: so the work is queued before it (rmmod waits
 * for the last one and then cancels the work), and the last one queues
 * it again after (the work ends the run only once the count is 0) and
 * then completes all_ended.
 */
static void qnvram_bgswap_region_put(struct qnvram_pool *pool,
				     struct qnvram_bgswap_region *r)
{
	struct qnvram_bgswap *bg = &pool->bgswap;

	if (!atomic_dec_and_test(&r->tasks_left))
		return;
	/* Pairs with smp_load_acquire() in qnvram_bgswap_collect(). */
	smp_store_release(&r->ended, true);
	queue_work(system_long_wq, &bg->commit_work);
	if (!atomic_dec_and_test(&bg->regions_left))
		return;
	queue_work(system_long_wq, &bg->commit_work);
	complete_all(&bg->all_ended);
}

/* freeblock's callback, per block and final (process context). */
static void qnvram_bgswap_callback(void *ctx, u64 lbn, void *buf, int status)
{
	struct qnvram_bgswap_task *t = ctx;

	if (status)
		cmpxchg(&t->r->error, 0, status);
	if (lbn != FB_LBN_END)
		return;
	WRITE_ONCE(t->ended, true);
	qnvram_bgswap_region_put(&qnvram_pool, t->r);
	qnvram_fb_tail();
}

/* Abort @r's tasks that have not ended. Caller holds pool->lock. */
static void qnvram_bgswap_abort(struct qnvram_bgswap *bg,
				struct qnvram_bgswap_region *r)
{
	unsigned int i;

	r->aborted = true;
	for (i = 0; i < r->nr_tasks; i++)
		if (r->tasks[i].id > 0 && !READ_ONCE(r->tasks[i].ended))
			bg->fb.fb_abort(r->tasks[i].id);
}

/**
 * qnvram_region_changed() - a region may have changed, or is gone
 * @pool: the pool; caller holds @pool->lock
 * @slot: its table entry
 *
 * Bumps the entry's generation, so that a background swap-out of it does
 * not commit, and aborts that swap-out's tasks (its copy is stale).
 * Called on bind, page fault, create, free, swap-out and swap-in.
 * Context: any (under the pool lock; fb_abort() does not wait).
 */
void qnvram_region_changed(struct qnvram_pool *pool, int slot)
{
	struct qnvram_bgswap *bg = &pool->bgswap;
	unsigned int i;

	lockdep_assert_held(&pool->lock);
	pool->rt[slot].gen++;
	if (!pool->rt[slot].bg_busy)
		return;
	for (i = 0; i < bg->nr_regions; i++) {
		struct qnvram_bgswap_region *r = &bg->regions[i];

		if (r->slot == slot && !r->done && !r->aborted)
			qnvram_bgswap_abort(bg, r);
	}
}

/**
 * qnvram_bgswap_clash() - whether a background swap-out holds swap bytes
 * @pool: the pool; caller holds @pool->lock
 * @soff: first byte, from the swap area start
 * @len: bytes
 * @pos: set past the range held, when true
 *
 * Context: any (under the pool lock).
 * Return: true when a region being swapped out in the background holds
 * part of [@soff, @soff + @len).
 */
bool qnvram_bgswap_clash(struct qnvram_pool *pool, u64 soff, u64 len,
			 u64 *pos)
{
	struct qnvram_bgswap *bg = &pool->bgswap;
	unsigned int i;

	lockdep_assert_held(&pool->lock);
	for (i = 0; i < bg->nr_regions; i++) {
		const struct qnvram_bgswap_region *r = &bg->regions[i];
		u64 l = le64_to_cpu(r->entry.length);

		if (r->done || r->soff >= soff + len || soff >= r->soff + l)
			continue;
		*pos = r->soff + l;
		return true;
	}
	return false;
}

/*
 * Copy region @slot into a new entry of the swap-out, with swap space held
 * for it and its tasks laid out. Caller holds pool->lock.
 * Return: 0, -ENOSPC (no swap space), -ENOMEM.
 */
static int qnvram_bgswap_add(struct qnvram_pool *pool, int slot)
{
	struct qnvram_bgswap *bg = &pool->bgswap;
	struct qnvram_bgswap_region *r = &bg->regions[bg->nr_regions];
	const struct qnvram_region_entry *e = &pool->meta->entries[slot];
	struct qnvram_fb_piece p[QNVRAM_FB_MAX_PIECES];
	u64 len = le64_to_cpu(e->length), soff, dev;
	unsigned int i, n;
	void *staging;
	int ret;

	ret = qnvram_swap_find_gap(pool, len, &soff);
	if (ret)
		return ret;
	staging = vmalloc(len);
	if (!staging)
		return -ENOMEM;
	memcpy(staging, pool->base + le64_to_cpu(e->offset), len);

	memset(r, 0, sizeof(*r));
	r->slot = slot;
	r->gen = pool->rt[slot].gen;
	r->entry = *e;
	r->soff = soff;
	r->staging = staging;
	r->crc = qnvram_crc32(0, staging, len);
	dev = qnvram_swap_start(pool->bytes) + soff;
	n = qnvram_fb_split(dev, dev + len, p);
	for (i = 0; i < n; i++) {
		r->tasks[i].r = r;
		r->tasks[i].piece = p[i];
		r->tasks[i].buf = staging + (p[i].pos - dev);
	}
	r->nr_tasks = n;
	pool->rt[slot].bg_busy = true;
	bg->nr_regions++;
	return 0;
}

/* Register every region's tasks. Caller holds pool->lock. */
static void qnvram_bgswap_register(struct qnvram_pool *pool)
{
	struct qnvram_bgswap *bg = &pool->bgswap;
	struct fb_opts opts = {
		.rate.ceiling_kbps = READ_ONCE(qnvram_swap_bg_ceiling_kbps),
		.owner = &bg->fb.owner,
	};
	unsigned int i, j;
	int id;

	reinit_completion(&bg->all_ended);
	atomic_set(&bg->regions_left, bg->nr_regions + 1);
	for (i = 0; i < bg->nr_regions; i++) {
		struct qnvram_bgswap_region *r = &bg->regions[i];

		atomic_set(&r->tasks_left, r->nr_tasks + 1);
		for (j = 0; j < r->nr_tasks; j++) {
			struct qnvram_bgswap_task *t = &r->tasks[j];
			struct fb_range range = { .start = t->piece.pos,
						  .len = t->piece.len };

			id = READ_ONCE(r->error);
			if (!id)
				id = bg->fb.fb_write_opts(pool->backing.bdev,
							  &range,
							  t->piece.blksize,
							  qnvram_bgswap_callback,
							  qnvram_bgswap_getbuffer,
							  t, &opts);
			if (id > 0) {
				t->id = id;
				continue;
			}
			cmpxchg(&r->error, 0, id);
			WRITE_ONCE(t->ended, true);
			atomic_dec(&r->tasks_left);
		}
		if (READ_ONCE(r->error)) {
			pr_warn_ratelimited("background swap-out: freeblock refused a task: %d\n",
					    r->error);
			qnvram_bgswap_abort(bg, r);
		}
		qnvram_bgswap_region_put(pool, r);
	}
	if (atomic_dec_and_test(&bg->regions_left))
		complete_all(&bg->all_ended);
}

/*
 * Start a background swap-out if free space is below the watermark and
 * freeblock is loaded. Caller holds pool->lock.
 */
static void qnvram_bgswap_start(struct qnvram_pool *pool)
{
	struct qnvram_bgswap *bg = &pool->bgswap;
	unsigned int pct = READ_ONCE(qnvram_swap_free_low_pct);
	u64 free, high;
	int slot;

	lockdep_assert_held(&pool->lock);
	if (bg->running || bg->exiting || !pool->backing.bdev ||
	    !qnvram_bgswap_below_low(pool))
		return;
	/*
	 * None runs, but the last callback of one that just ended may not
	 * have completed all_ended yet: it does so in a moment, without the
	 * pool lock.
	 */
	wait_for_completion(&bg->all_ended);
	if (!qnvram_fb_get(&bg->fb))
		return;
	free = qnvram_bgswap_free_bytes(pool);
	high = qnvram_bgswap_pct_bytes(pool, min(pct + QNVRAM_BGSWAP_HYST_PCT,
						 100U));
	bg->nr_regions = 0;
	while (free < high && bg->nr_regions < QNVRAM_BGSWAP_MAX_REGIONS) {
		slot = qnvram_pick_victim(pool, true);
		if (slot < 0 || qnvram_bgswap_add(pool, slot))
			break;
		free += le64_to_cpu(pool->meta->entries[slot].length);
	}
	if (!bg->nr_regions) {
		qnvram_fb_put(&bg->fb);
		return;
	}
	bg->running = true;
	bg->seq++;
	pool->stats.bg_swap_started++;
	qnvram_bgswap_register(pool);
}

static void qnvram_bgswap_start_fn(struct work_struct *work)
{
	struct qnvram_pool *pool = container_of(work, struct qnvram_pool,
						bgswap.start_work);

	mutex_lock(&pool->lock);
	qnvram_bgswap_start(pool);
	mutex_unlock(&pool->lock);
}

/**
 * qnvram_bgswap_check() - start a background swap-out if free space is
 *	below the watermark
 * @pool: the pool; caller holds @pool->lock
 *
 * Called after an allocation, a swap-in or an unbind: queues the work
 * that starts one (the caller does not copy anything), unless one runs.
 * Context: process (under the pool lock).
 */
void qnvram_bgswap_check(struct qnvram_pool *pool)
{
	struct qnvram_bgswap *bg = &pool->bgswap;

	lockdep_assert_held(&pool->lock);
	if (bg->running || bg->exiting || !pool->backing.bdev)
		return;
	if (qnvram_bgswap_below_low(pool))
		queue_work(system_long_wq, &bg->start_work);
}

/*
 * The regions whose tasks have all ended and that are not committed yet,
 * into @idx. Caller holds pool->lock. Return: how many.
 */
static unsigned int qnvram_bgswap_collect(struct qnvram_bgswap *bg,
					  unsigned int *idx)
{
	unsigned int i, n = 0;

	for (i = 0; i < bg->nr_regions; i++) {
		if (bg->regions[i].done)
			continue;
		/* Pairs with smp_store_release() in ..._region_put(). */
		if (smp_load_acquire(&bg->regions[i].ended))
			idx[n++] = i;
	}
	return n;
}

/* Whether any of the @n regions of @idx was written without error. */
static bool qnvram_bgswap_any_written(struct qnvram_bgswap *bg,
				      const unsigned int *idx, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!READ_ONCE(bg->regions[idx[i]].error))
			return true;
	return false;
}

/* Whether @r's region is still the one that was copied. */
static bool qnvram_bgswap_same(struct qnvram_pool *pool,
			       const struct qnvram_bgswap_region *r)
{
	const struct qnvram_region_entry *e = &pool->meta->entries[r->slot];

	return pool->rt[r->slot].gen == r->gen && !pool->rt[r->slot].binds &&
	       !memcmp(e, &r->entry, sizeof(*e));
}

/* Free @r's copy and its hold on swap space. Caller holds pool->lock. */
static void qnvram_bgswap_release(struct qnvram_pool *pool,
				  struct qnvram_bgswap_region *r)
{
	vfree(r->staging);
	r->staging = NULL;
	pool->rt[r->slot].bg_busy = false;
	r->done = true;
}

/*
 * Commit the ended regions of @idx, whose bytes a cache flush issued after
 * they ended made stable (@flush_err: its result), in one metadata commit;
 * drop those that changed. Caller holds pool->lock.
 */
static void qnvram_bgswap_commit(struct qnvram_pool *pool,
				 const unsigned int *idx, unsigned int n,
				 int flush_err)
{
	struct qnvram_bgswap *bg = &pool->bgswap;
	bool committed[QNVRAM_BGSWAP_MAX_REGIONS] = {};
	unsigned int i, nr = 0;
	int err;

	lockdep_assert_held(&pool->lock);
	for (i = 0; i < n; i++) {
		struct qnvram_bgswap_region *r = &bg->regions[idx[i]];
		struct qnvram_region_entry *e = &pool->meta->entries[r->slot];

		if (r->done)
			continue;
		if (!qnvram_bgswap_same(pool, r)) {
			pool->stats.bg_swap_dropped++;
			qnvram_bgswap_release(pool, r);
			continue;
		}
		err = READ_ONCE(r->error) ?: flush_err;
		/* rmmod aborted it: nothing failed, it stays resident. */
		if (err == -ECANCELED && bg->exiting) {
			qnvram_bgswap_release(pool, r);
			continue;
		}
		if (err) {
			pool->stats.bg_swap_errors++;
			pr_warn_ratelimited("background swap-out of region uid %u magic %#x failed: %d\n",
					    le32_to_cpu(e->uid),
					    le32_to_cpu(e->magic), err);
			qnvram_bgswap_release(pool, r);
			continue;
		}
		/* As qnvram_swap_out(): the data is on flash already. */
		e->flags = cpu_to_le32(QNVRAM_ENTRY_USED | QNVRAM_ENTRY_SWAPPED);
		e->offset = cpu_to_le64(r->soff);
		e->data_crc = cpu_to_le32(r->crc);
		committed[i] = true;
		nr++;
	}
	if (!nr)
		return;
	qnvram_meta_commit(pool);
	for (i = 0; i < n; i++) {
		struct qnvram_bgswap_region *r = &bg->regions[idx[i]];

		if (!committed[i])
			continue;
		qnvram_bgswap_release(pool, r);
		pool->rt[r->slot].dirty = false;	/* its bytes are on flash */
		pool->rt[r->slot].gen++;
		pool->stats.bg_swap_outs++;
		pool->stats.bg_swap_bytes += le64_to_cpu(r->entry.length);
		qnvram_genl_event(QNVRAM_EVENT_SWAPPED_OUT, pool, r->slot);
	}
}

/*
 * End the swap-out once every region is committed or dropped and every
 * callback is done with it; start the next one if still needed. Caller
 * holds pool->lock.
 */
static void qnvram_bgswap_maybe_end(struct qnvram_pool *pool)
{
	struct qnvram_bgswap *bg = &pool->bgswap;
	unsigned int i;

	if (!bg->running || atomic_read(&bg->regions_left))
		return;
	for (i = 0; i < bg->nr_regions; i++)
		if (!bg->regions[i].done)
			return;
	bg->nr_regions = 0;
	bg->running = false;
	qnvram_fb_put(&bg->fb);
	qnvram_bgswap_check(pool);
}

/*
 * Regions have ended: flush the device cache without the pool lock, then
 * commit them under it (unless the swap-out ended meanwhile: a newer one's
 * regions are left to its own work, queued by its callbacks).
 */
static void qnvram_bgswap_commit_fn(struct work_struct *work)
{
	struct qnvram_pool *pool = container_of(work, struct qnvram_pool,
						bgswap.commit_work);
	struct qnvram_bgswap *bg = &pool->bgswap;
	unsigned int idx[QNVRAM_BGSWAP_MAX_REGIONS], n;
	int err = 0;
	u64 seq;

	mutex_lock(&pool->lock);
	if (!bg->running)
		goto out_unlock;
	n = qnvram_bgswap_collect(bg, idx);
	if (n && qnvram_bgswap_any_written(bg, idx, n)) {
		seq = bg->seq;
		mutex_unlock(&pool->lock);
		/* Their writes have completed: the flush makes them stable. */
		err = blkdev_issue_flush(pool->backing.bdev);
		mutex_lock(&pool->lock);
		if (!bg->running || bg->seq != seq)
			goto out_unlock;
	}
	if (n)
		qnvram_bgswap_commit(pool, idx, n, err);
	qnvram_bgswap_maybe_end(pool);
out_unlock:
	mutex_unlock(&pool->lock);
}

/**
 * qnvram_bgswap_urgent() - an allocation needs room now: finish a running
 *	background swap-out
 * @pool: the pool; caller holds @pool->lock
 *
 * Promotes every task that has not ended (fb_promote(): issued at once,
 * best-effort priority), waits for them for QNVRAM_BGSWAP_WAIT_MS at most
 * and flushes the device cache, both without @pool->lock (the callbacks
 * never take it), then commits the regions written, unless the swap-out
 * ended meanwhile. Regions still being written go on.
 * Context: process, may sleep (I/O, up to QNVRAM_BGSWAP_WAIT_MS plus the
 * flush).
 * Return: true when one was running: @pool->lock was released and is held
 * again, and anything may have changed; false when none was (the lock was
 * kept).
 */
bool qnvram_bgswap_urgent(struct qnvram_pool *pool)
{
	struct qnvram_bgswap *bg = &pool->bgswap;
	unsigned int idx[QNVRAM_BGSWAP_MAX_REGIONS], i, j, n;
	int err = 0;
	u64 seq;

	lockdep_assert_held(&pool->lock);
	if (!bg->running)
		return false;
	pool->stats.bg_swap_waits++;
	for (i = 0; i < bg->nr_regions; i++) {
		struct qnvram_bgswap_region *r = &bg->regions[i];

		if (r->done || r->aborted)
			continue;
		for (j = 0; j < r->nr_tasks; j++)
			if (r->tasks[j].id > 0 && !READ_ONCE(r->tasks[j].ended) &&
			    !bg->fb.fb_promote(r->tasks[j].id))
				pool->stats.bg_swap_promotions++;
	}
	/* Without the pool lock: nobody else waits for this one's I/O. */
	seq = bg->seq;
	mutex_unlock(&pool->lock);
	wait_for_completion_timeout(&bg->all_ended,
				    msecs_to_jiffies(QNVRAM_BGSWAP_WAIT_MS));
	mutex_lock(&pool->lock);
	if (!bg->running || bg->seq != seq)
		return true;	/* ended meanwhile, by its own commit work */
	n = qnvram_bgswap_collect(bg, idx);
	if (n && qnvram_bgswap_any_written(bg, idx, n)) {
		mutex_unlock(&pool->lock);
		err = blkdev_issue_flush(pool->backing.bdev);
		mutex_lock(&pool->lock);
		if (!bg->running || bg->seq != seq)
			return true;
	}
	if (n)
		qnvram_bgswap_commit(pool, idx, n, err);
	qnvram_bgswap_maybe_end(pool);
	return true;
}

/**
 * qnvram_bgswap_init() - set up background swap-out
 * @pool: the pool, loaded; before /dev/qnvram exists
 *
 * Context: process, module init.
 */
void qnvram_bgswap_init(struct qnvram_pool *pool)
{
	struct qnvram_bgswap *bg = &pool->bgswap;

	init_completion(&bg->all_ended);
	complete_all(&bg->all_ended);	/* none running */
	INIT_WORK(&bg->start_work, qnvram_bgswap_start_fn);
	INIT_WORK(&bg->commit_work, qnvram_bgswap_commit_fn);
}

/**
 * qnvram_bgswap_exit() - abort a running background swap-out and wait for
 *	its tasks; what it did not commit stays resident
 * @pool: the pool; no file is open
 *
 * Returns once freeblock has returned from every callback of every
 * background swap-out task, this one's and those of earlier ones.
 * Context: process, may sleep; module exit.
 */
void qnvram_bgswap_exit(struct qnvram_pool *pool)
{
	struct qnvram_bgswap *bg = &pool->bgswap;
	unsigned int i;

	mutex_lock(&pool->lock);
	bg->exiting = true;
	for (i = 0; i < bg->nr_regions; i++)
		if (!bg->regions[i].done && !bg->regions[i].aborted)
			qnvram_bgswap_abort(bg, &bg->regions[i]);
	mutex_unlock(&pool->lock);
	cancel_work_sync(&bg->start_work);
	/*
	 * Aborted tasks end soon and no new one starts. The last callback
	 * queues the commit work and wakes all_ended, and then still returns
	 * through this module's code: wait until freeblock is out of it.
	 */
	fb_owner_wait(&bg->fb.owner);
	cancel_work_sync(&bg->commit_work);
	mutex_lock(&pool->lock);
	for (i = 0; i < bg->nr_regions; i++)
		if (!bg->regions[i].done)
			qnvram_bgswap_release(pool, &bg->regions[i]);
	bg->nr_regions = 0;
	if (bg->running) {
		bg->running = false;
		qnvram_fb_put(&bg->fb);
	}
	mutex_unlock(&pool->lock);
}
