// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM: background write-back of the pool through freeblock.ko.
 *
 * When freeblock is loaded, a write-back (every writeback_s seconds, or on
 * a write to debugfs qnvram/writeback) does not write the image with its
 * own bios. Under the pool lock it unmaps every region (as a flush does),
 * copies the metadata and the resident regions into a staging buffer,
 * checksums them there and marks every region untouched; apps go on at
 * once. The image's data and metadata blocks are then fb_write() tasks on
 * the backing device that freeblock issues in the foreground's idle time,
 * from the staging buffer. When every task has ended the image header is
 * written, after a cache flush and with FUA, exactly as a flush commits:
 * the image is the pool as it was at the snapshot, and until its header
 * lands the previous image stays current. It is committed only if the pool
 * is still that (no region mapped writable, created, swapped in or freed
 * since the snapshot: while a write-back runs, faults that only read map
 * read-only); else it would be stale at birth, and it is dropped.
 *
 * A synchronous flush (power key, power-off, mobioctl qnvram flush) that
 * finds a write-back running takes it over: with the regions unmapped it
 * promotes the tasks (fb_promote(): no more waiting for idle time) and
 * waits for them, then writes itself only the regions that the write-back
 * did not finish or that apps touched (faulted in) since its snapshot,
 * into the same image slot, and commits. The image is then the state at
 * the flush, as before.
 *
 * freeblock is a soft dependency: its functions are looked up with
 * symbol_get() when a write-back starts and released when it ends, so both
 * modules load alone, and freeblock cannot be unloaded under a write-back.
 * Without freeblock a write-back is a synchronous flush.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/ktime.h>
#include <linux/jiffies.h>
#include <linux/delay.h>
#include "qnvram_pool.h"

/* Block size of the 64 KiB-aligned middle of each extent. */
#define QNVRAM_WB_BIG_BLOCK	(64U * 1024)
/* Each extent takes up to three tasks (head, middle, tail); +1 metadata. */
#define QNVRAM_WB_MAX_EXTENTS	((QNVRAM_WB_MAX_TASKS - 1) / 3)
/* The longest period, s: a day. */
#define QNVRAM_WB_MAX_PERIOD_S	(24U * 60 * 60)

static unsigned int qnvram_writeback_s;
/* The period's work may be armed: set by init, cleared by exit. */
static bool qnvram_wb_ready;
static DEFINE_MUTEX(qnvram_wb_ready_lock);	/* qnvram_wb_ready vs arming */

static int qnvram_writeback_s_set(const char *val,
				  const struct kernel_param *kp)
{
	struct qnvram_wb *wb = &qnvram_pool.wb;
	unsigned int s;
	int ret;

	ret = kstrtouint(val, 0, &s);
	if (ret)
		return ret;
	if (s > QNVRAM_WB_MAX_PERIOD_S)
		return -EINVAL;
	mutex_lock(&qnvram_wb_ready_lock);
	WRITE_ONCE(qnvram_writeback_s, s);
	if (qnvram_wb_ready && s)
		mod_delayed_work(system_long_wq, &wb->periodic, s * HZ);
	else if (qnvram_wb_ready)
		cancel_delayed_work(&wb->periodic);
	mutex_unlock(&qnvram_wb_ready_lock);
	return 0;
}

static const struct kernel_param_ops qnvram_writeback_s_ops = {
	.set = qnvram_writeback_s_set,
	.get = param_get_uint,
};

module_param_cb(writeback_s, &qnvram_writeback_s_ops, &qnvram_writeback_s,
		0644);
MODULE_PARM_DESC(writeback_s, "Write the pool image back every this many seconds, in freeblock's idle time when freeblock is loaded (0: never, default; at most 86400)");

static unsigned int qnvram_wb_floor_kbps;
module_param_named(writeback_floor_kbps, qnvram_wb_floor_kbps, uint, 0644);
MODULE_PARM_DESC(writeback_floor_kbps, "Rate floor of background write-back tasks, KiB/s: progress even when the disk is never idle, at the foreground's expense (0: idle time only, default)");

/**
 * qnvram_fb_get() - look freeblock's API up (a soft dependency)
 * @fb: filled with fb_write_opts(), fb_promote() and fb_abort()
 *
 * Each symbol_get() takes a reference on freeblock.ko: it cannot be
 * unloaded until qnvram_fb_put(). Used by the write-back and by the
 * background swap-out (qnvram_bgswap.c), each for as long as one runs.
 * Their tasks count in @fb->owner, which the module exit waits on.
 * Context: process.
 * Return: true when freeblock is loaded (all three found), else false with
 * nothing held.
 */
bool qnvram_fb_get(struct qnvram_fb *fb)
{
	fb->fb_write_opts = symbol_get(fb_write_opts);
	fb->fb_promote = symbol_get(fb_promote);
	fb->fb_abort = symbol_get(fb_abort);
	if (fb->fb_write_opts && fb->fb_promote && fb->fb_abort)
		return true;
	if (fb->fb_write_opts)
		symbol_put(fb_write_opts);
	if (fb->fb_promote)
		symbol_put(fb_promote);
	if (fb->fb_abort)
		symbol_put(fb_abort);
	fb->fb_write_opts = NULL;
	fb->fb_promote = NULL;
	fb->fb_abort = NULL;
	return false;
}

/**
 * qnvram_fb_put() - release what qnvram_fb_get() took (nothing if it
 *	holds nothing)
 * @fb: the API; its functions all NULL afterwards
 *
 * The last callback of a task may still be returning: freeblock.ko stays
 * loaded until then (its exit ends every task first), and @fb->owner
 * still counts it.
 * Context: process.
 */
void qnvram_fb_put(struct qnvram_fb *fb)
{
	if (!fb->fb_write_opts)
		return;
	symbol_put(fb_write_opts);
	symbol_put(fb_promote);
	symbol_put(fb_abort);
	fb->fb_write_opts = NULL;
	fb->fb_promote = NULL;
	fb->fb_abort = NULL;
}

/**
 * qnvram_fb_split() - cut device bytes into freeblock tasks
 * @pos: first byte, a multiple of 4 KiB
 * @end: one past the last byte, a multiple of 4 KiB
 * @p: filled with up to QNVRAM_FB_MAX_PIECES pieces, in order
 *
 * freeblock wants a task's start aligned to its block size; pool data
 * sits 4 KiB-aligned on the device. So: 4 KiB blocks up to the first
 * 64 KiB boundary and after the last one, 64 KiB blocks between.
 * Context: any.
 * Return: the number of pieces (0 for an empty range).
 */
unsigned int qnvram_fb_split(u64 pos, u64 end, struct qnvram_fb_piece *p)
{
	u64 a = min_t(u64, round_up(pos, QNVRAM_WB_BIG_BLOCK), end);
	u64 b = max_t(u64, a, round_down(end, QNVRAM_WB_BIG_BLOCK));
	unsigned int n = 0;

	if (a > pos)
		p[n++] = (struct qnvram_fb_piece){ pos, a - pos, QNVRAM_GRANULE };
	if (b > a)
		p[n++] = (struct qnvram_fb_piece){ a, b - a, QNVRAM_WB_BIG_BLOCK };
	if (end > b)
		p[n++] = (struct qnvram_fb_piece){ b, end - b, QNVRAM_GRANULE };
	return n;
}

/* freeblock's late binding: the block's bytes in the staging buffer. */
static void *qnvram_wb_getbuffer(void *ctx, u64 lbn, u32 len)
{
	struct qnvram_wb_task *t = ctx;

	return t->buf + lbn * t->blksize;
}

/*
 * Every task has ended: let the work commit, then wake a takeover or rmmod.
 * Queue first: once tasks_done completes, rmmod may cancel the work and go,
 * so nothing of this module may run here after complete_all().
 */
static void qnvram_wb_tasks_ended(struct qnvram_wb *wb)
{
	queue_work(system_long_wq, &wb->commit_work);
	complete_all(&wb->tasks_done);
}

/*
 * Test knob, off by default: freeblock's final callbacks into qnvram sleep
 * this long at their very end, after they woke whoever waits for the task
 * (the commit, a takeover, rmmod), as a preempted worker would stay there.
 */
static unsigned int qnvram_fb_tail_ms;
module_param_named(test_fb_tail_ms, qnvram_fb_tail_ms, uint, 0644);
MODULE_PARM_DESC(test_fb_tail_ms, "Test only: freeblock's final callbacks into qnvram sleep this many ms after they signal the task's end (0: off, default; at most 10000)");

/* The longest test_fb_tail_ms honoured, ms. */
#define QNVRAM_FB_TAIL_MAX_MS	(10U * MSEC_PER_SEC)

/* Final callbacks that slept for test_fb_tail_ms; see qnvram_fb_tail(). */
static unsigned int qnvram_fb_tails;

/**
 * qnvram_fb_tail() - the test_fb_tail_ms sleep, at the end of a final
 *	callback from freeblock
 *
 * Counts the sleep after it: so the worker returns from msleep() into
 * qnvram's code, as it would from any work after the wake-up (a tail
 * call would return straight into freeblock).
 * Context: process (freeblock's worker), sleeps when the knob is set.
 */
void qnvram_fb_tail(void)
{
	unsigned int ms = READ_ONCE(qnvram_fb_tail_ms);

	if (!ms)
		return;
	msleep(min(ms, QNVRAM_FB_TAIL_MAX_MS));
	WRITE_ONCE(qnvram_fb_tails, qnvram_fb_tails + 1);
}

/* freeblock's callback, per block and final (process context). */
static void qnvram_wb_callback(void *ctx, u64 lbn, void *buf, int status)
{
	struct qnvram_wb_task *t = ctx;
	struct qnvram_wb *wb = t->wb;

	if (status)
		cmpxchg(&t->error, 0, status);
	if (lbn != FB_LBN_END)
		return;
	WRITE_ONCE(t->ended, true);
	if (atomic_dec_and_test(&wb->tasks_left))
		qnvram_wb_tasks_ended(wb);
	qnvram_fb_tail();
}

static bool qnvram_entry_resident(const struct qnvram_region_entry *e)
{
	return e->flags && !(le32_to_cpu(e->flags) & QNVRAM_ENTRY_SWAPPED);
}

static void qnvram_wb_add_task(struct qnvram_wb *wb, u64 dev_pos, u64 len,
			       u32 blksize, void *buf)
{
	struct qnvram_wb_task *t;

	if (!len || WARN_ON_ONCE(wb->nr_tasks >= QNVRAM_WB_MAX_TASKS))
		return;
	t = &wb->tasks[wb->nr_tasks++];
	*t = (struct qnvram_wb_task){ .wb = wb, .dev_pos = dev_pos,
		.len = len, .blksize = blksize, .buf = buf };
}

/* Tasks for device bytes [@pos, @end) from @buf (qnvram_fb_split()). */
static void qnvram_wb_add_range(struct qnvram_wb *wb, u64 pos, u64 end,
				void *buf)
{
	struct qnvram_fb_piece p[QNVRAM_FB_MAX_PIECES];
	unsigned int i, n = qnvram_fb_split(pos, end, p);

	for (i = 0; i < n; i++)
		qnvram_wb_add_task(wb, p[i].pos, p[i].len, p[i].blksize,
				   buf + (p[i].pos - pos));
}

/*
 * Copy the resident regions of wb->meta into the staging buffer (after
 * the metadata block), set each entry's CRC from the copy, and lay out
 * the tasks. The regions are grouped into at most QNVRAM_WB_MAX_EXTENTS
 * extents; the free bytes between the regions of an extent are staged as
 * zeros, never as what a freed region left in the pool. Caller holds
 * pool->lock with every region unmapped.
 */
static int qnvram_wb_stage(struct qnvram_pool *pool)
{
	struct qnvram_wb *wb = &pool->wb;
	struct qnvram_extent *ext;
	unsigned int i, j, n;
	u64 total = QNVRAM_META_IO_BYTES, pos;

	ext = kmalloc_array(QNVRAM_MAX_REGIONS, sizeof(*ext), GFP_KERNEL);
	if (!ext)
		return -ENOMEM;
	n = qnvram_meta_extents(wb->meta, ext, QNVRAM_WB_MAX_EXTENTS);
	for (i = 0; i < n; i++)
		total += ext[i].end - ext[i].off;
	wb->staging = vmalloc(total);
	if (!wb->staging) {
		kfree(ext);
		return -ENOMEM;
	}

	wb->nr_tasks = 0;
	pos = QNVRAM_META_IO_BYTES;
	for (i = 0; i < n; i++) {
		u64 len = ext[i].end - ext[i].off;
		u64 dev = qnvram_img_data_pos(pool, wb->slot, ext[i].off);

		qnvram_meta_stage(wb->meta, pool->base, &ext[i], wb->staging + pos);
		qnvram_wb_add_range(wb, dev, dev + len, wb->staging + pos);
		pos += len;
	}

	wb->nr_regions = 0;
	wb->data_bytes = 0;
	for (j = 0; j < QNVRAM_MAX_REGIONS; j++) {
		struct qnvram_region_entry *e = &wb->meta->entries[j];
		u64 off = le64_to_cpu(e->offset), len = le64_to_cpu(e->length);

		if (!qnvram_entry_resident(e))
			continue;
		pos = QNVRAM_META_IO_BYTES;
		for (i = 0; i < n && off >= ext[i].end; i++)
			pos += ext[i].end - ext[i].off;
		e->data_crc = cpu_to_le32(qnvram_crc32(0, wb->staging + pos +
						       (off - ext[i].off), len));
		wb->nr_regions++;
		wb->data_bytes += len;
	}
	kfree(ext);

	qnvram_meta_seal(wb->meta);
	memset(wb->staging, 0, QNVRAM_META_IO_BYTES);
	memcpy(wb->staging, wb->meta, sizeof(*wb->meta));
	qnvram_wb_add_task(wb, qnvram_img_data_pos(pool, wb->slot, 0),
			   QNVRAM_META_IO_BYTES, QNVRAM_GRANULE, wb->staging);
	return 0;
}

/* Register the tasks; one that fails ends the write-back with its error. */
static void qnvram_wb_register(struct qnvram_pool *pool)
{
	struct qnvram_wb *wb = &pool->wb;
	struct fb_opts opts = {
		.rate.floor_kbps = READ_ONCE(qnvram_wb_floor_kbps),
		.owner = &wb->fb.owner,
	};
	unsigned int i;
	int id, err = 0;

	reinit_completion(&wb->tasks_done);
	atomic_set(&wb->tasks_left, wb->nr_tasks + 1);
	for (i = 0; i < wb->nr_tasks; i++) {
		struct qnvram_wb_task *t = &wb->tasks[i];
		struct fb_range r = { .start = t->dev_pos, .len = t->len };

		id = err ? err : wb->fb.fb_write_opts(pool->backing.bdev, &r,
						      t->blksize,
						      qnvram_wb_callback,
						      qnvram_wb_getbuffer, t,
						      &opts);
		if (id > 0) {
			t->id = id;
			continue;
		}
		err = id;
		t->error = id;
		t->ended = true;
		atomic_dec(&wb->tasks_left);
	}
	if (err) {
		pr_warn("background write-back: freeblock refused a task: %d\n",
			err);
		for (i = 0; i < wb->nr_tasks; i++)
			if (wb->tasks[i].id > 0)
				wb->fb.fb_abort(wb->tasks[i].id);
	}
	if (atomic_dec_and_test(&wb->tasks_left))
		qnvram_wb_tasks_ended(wb);
}

/* Start a write-back: snapshot, then tasks. Caller holds pool->lock. */
static int qnvram_wb_start(struct qnvram_pool *pool)
{
	struct qnvram_wb *wb = &pool->wb;
	int i, ret;

	lockdep_assert_held(&pool->lock);
	if (!pool->backing.bdev)
		return -ENODEV;
	if (wb->state != QNVRAM_WB_IDLE)
		return -EBUSY;
	if (!qnvram_fb_get(&wb->fb)) {
		pool->stats.wb_no_freeblock++;
		return -ENOPKG;
	}
	wb->meta = kmemdup(pool->meta, sizeof(*wb->meta), GFP_KERNEL);
	if (!wb->meta) {
		ret = -ENOMEM;
		goto err_put;
	}
	wb->slot = pool->img_slot == 0 ? 1 : 0;
	wb->start_ns = ktime_get_ns();
	/*
	 * From here on a write to a region faults, and marks it touched
	 * (qnvram_writes_watched(): read faults map read-only meanwhile).
	 */
	qnvram_dev_unmap_all(pool);
	for (i = 0; i < QNVRAM_MAX_REGIONS; i++)
		pool->rt[i].touched = false;
	ret = qnvram_wb_stage(pool);
	if (ret)
		goto err_free;
	wb->reused = 0;
	wb->reused_bytes = 0;
	wb->seq++;
	wb->state = QNVRAM_WB_RUNNING;
	pool->stats.wb_started++;
	qnvram_wb_register(pool);
	return 0;

err_free:
	kfree(wb->meta);
	wb->meta = NULL;
err_put:
	qnvram_fb_put(&wb->fb);
	pool->stats.wb_errors++;
	return ret;
}

/**
 * qnvram_wb_end() - end the background write-back, if one is running
 * @pool: the pool; caller holds @pool->lock
 * @result: 0 when an image holding its snapshot (or a newer state) was
 *	committed, else the negative errno that ended it (-ESTALE: the pool
 *	changed after the snapshot, no image)
 *
 * Every task must have ended. Frees the staging buffer and releases
 * freeblock; a taken-over write-back counts the regions whose bytes it had
 * written for the flush.
 * Context: process.
 */
void qnvram_wb_end(struct qnvram_pool *pool, int result)
{
	struct qnvram_wb *wb = &pool->wb;

	lockdep_assert_held(&pool->lock);
	if (wb->state == QNVRAM_WB_IDLE)
		return;
	if (wb->state == QNVRAM_WB_TAKEN) {
		pool->stats.wb_takeovers++;
		if (!result) {
			pool->stats.wb_regions += wb->reused;
			pool->stats.wb_bytes += wb->reused_bytes;
		}
	}
	vfree(wb->staging);
	wb->staging = NULL;
	kfree(wb->meta);
	wb->meta = NULL;
	qnvram_fb_put(&wb->fb);
	wb->result = result;
	WRITE_ONCE(wb->done_seq, wb->seq);
	wb->state = QNVRAM_WB_IDLE;
}

/* The first error of the tasks, 0 when every block was written. */
static int qnvram_wb_error(struct qnvram_wb *wb)
{
	unsigned int i;

	for (i = 0; i < wb->nr_tasks; i++)
		if (READ_ONCE(wb->tasks[i].error))
			return wb->tasks[i].error;
	return 0;
}

/* Whether table entry @slot is the region it was at the snapshot. */
static bool qnvram_wb_same_region(struct qnvram_pool *pool, int slot)
{
	const struct qnvram_region_entry *s = &pool->wb.meta->entries[slot];
	const struct qnvram_region_entry *e = &pool->meta->entries[slot];

	return qnvram_entry_resident(s) && s->flags == e->flags &&
	       s->uid == e->uid && s->magic == e->magic &&
	       s->offset == e->offset && s->length == e->length;
}

/*
 * The write-back's image is now the newest: the regions that nobody
 * touched since the snapshot hold what it holds. Caller holds pool->lock.
 */
static void qnvram_wb_clean(struct qnvram_pool *pool)
{
	int i;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		if (!pool->rt[i].dirty || pool->rt[i].touched ||
		    !qnvram_wb_same_region(pool, i))
			continue;
		pool->rt[i].dirty = false;
		pool->stats.wb_dirty_regions++;
	}
}

/*
 * Whether the pool is still what the snapshot copied: no region touched
 * (mapped writable, created, swapped in) and none freed or replaced since.
 * A swap-out moves a region's bytes without changing them. Only then is
 * the image current when committed. Caller holds pool->lock.
 */
static bool qnvram_wb_unchanged(struct qnvram_pool *pool)
{
	int i;

	for (i = 0; i < QNVRAM_MAX_REGIONS; i++) {
		const struct qnvram_region_entry *s = &pool->wb.meta->entries[i];
		const struct qnvram_region_entry *e = &pool->meta->entries[i];

		if (pool->rt[i].touched || !s->flags != !e->flags)
			return false;
		if (s->flags && (s->uid != e->uid || s->magic != e->magic ||
				 s->length != e->length))
			return false;
	}
	return true;
}

/* Every task has ended and nobody took over: commit the image. */
static void qnvram_wb_commit_fn(struct work_struct *work)
{
	struct qnvram_pool *pool = container_of(work, struct qnvram_pool,
						wb.commit_work);
	struct qnvram_wb *wb = &pool->wb;
	int ret;

	/* Queued just before the last task's complete_all(): wait for it. */
	wait_for_completion(&wb->tasks_done);
	mutex_lock(&pool->lock);
	/* A later write-back may have started: its tasks are not done. */
	if (wb->state != QNVRAM_WB_RUNNING ||
	    !completion_done(&wb->tasks_done))
		goto out_unlock;
	ret = qnvram_wb_error(wb);
	if (!ret && !qnvram_wb_unchanged(pool)) {
		/* Its image would not hold the pool: never make it current. */
		ret = -ESTALE;
		pool->stats.wb_stale++;
	}
	if (!ret)
		ret = qnvram_img_commit(pool, wb->slot, wb->meta, wb->nr_regions,
					wb->data_bytes + QNVRAM_META_IO_BYTES,
					wb->start_ns, true);
	if (!ret) {
		qnvram_wb_clean(pool);
		wb->meta = NULL;	/* the pool's newest image now */
		pool->stats.wb_images++;
		pool->stats.wb_regions += wb->nr_regions;
		pool->stats.wb_bytes += wb->data_bytes;
	} else if (ret != -ESTALE) {
		pool->stats.wb_errors++;
		pr_warn("background write-back to image slot %d failed: %d\n",
			wb->slot, ret);
	}
	qnvram_wb_end(pool, ret);
out_unlock:
	mutex_unlock(&pool->lock);
}

/**
 * qnvram_wb_takeover() - make a running background write-back urgent and
 *	wait for its tasks, so that a flush can finish it
 * @pool: the pool; caller holds @pool->lock and has unmapped every region
 *
 * Promotes every task that has not ended (fb_promote(): issued now, at
 * best-effort priority) and waits for all of them; the write-back then
 * belongs to the caller, which asks qnvram_wb_written() region by region
 * and ends it with qnvram_wb_end(). It writes the same image slot as the
 * caller (the older one). Nothing happens when none is running.
 * Context: process, may sleep (for the tasks' I/O).
 */
void qnvram_wb_takeover(struct qnvram_pool *pool)
{
	struct qnvram_wb *wb = &pool->wb;
	unsigned int i;

	lockdep_assert_held(&pool->lock);
	if (wb->state != QNVRAM_WB_RUNNING)
		return;
	for (i = 0; i < wb->nr_tasks; i++) {
		if (READ_ONCE(wb->tasks[i].ended) || wb->tasks[i].id <= 0)
			continue;
		if (!wb->fb.fb_promote(wb->tasks[i].id))
			pool->stats.wb_promotions++;
	}
	/* The callbacks never take the pool lock. */
	wait_for_completion(&wb->tasks_done);
	wb->state = QNVRAM_WB_TAKEN;
}

/* Whether every task covering device bytes [@pos, @end) wrote them all. */
static bool qnvram_wb_range_written(struct qnvram_wb *wb, u64 pos, u64 end)
{
	unsigned int i;

	for (i = 0; i < wb->nr_tasks; i++) {
		const struct qnvram_wb_task *t = &wb->tasks[i];

		if (t->dev_pos < end && pos < t->dev_pos + t->len &&
		    (t->error || !t->ended))
			return false;
	}
	return true;
}

/**
 * qnvram_wb_written() - whether a taken-over write-back already wrote a
 *	region's present bytes into the image slot
 * @pool: the pool; caller holds @pool->lock, after qnvram_wb_takeover()
 * @slot: the region's table entry
 * @crc: set to the CRC-32 of the bytes written, when true
 *
 * True when the region was resident at the snapshot with the same owner,
 * name, offset and length, nobody touched it since (every region was
 * unmapped then, so a write would have faulted), and its blocks were all
 * written without error.
 * Context: process.
 * Return: true when the flush need not write it again.
 */
bool qnvram_wb_written(struct qnvram_pool *pool, int slot, u32 *crc)
{
	struct qnvram_wb *wb = &pool->wb;
	const struct qnvram_region_entry *e = &pool->meta->entries[slot];
	u64 off = le64_to_cpu(e->offset), len = le64_to_cpu(e->length);

	lockdep_assert_held(&pool->lock);
	if (wb->state != QNVRAM_WB_TAKEN || pool->rt[slot].touched ||
	    !qnvram_wb_same_region(pool, slot))
		return false;
	if (!qnvram_wb_range_written(wb, qnvram_img_data_pos(pool, wb->slot, off),
				     qnvram_img_data_pos(pool, wb->slot,
							 off + len)))
		return false;
	*crc = le32_to_cpu(wb->meta->entries[slot].data_crc);
	wb->reused++;
	wb->reused_bytes += len;
	return true;
}

/**
 * qnvram_region_touch() - a region's bytes may change from now on
 * @pool: the pool; caller holds @pool->lock
 * @slot: its table entry
 *
 * Called when a page of it is mapped writable (page fault), and when it is
 * created or swapped in: a running write-back's copy of it is then stale
 * for a flush (and the write-back is not committed), and it is dirty until
 * an image holds it again.
 * Context: any (under the pool lock).
 */
void qnvram_region_touch(struct qnvram_pool *pool, int slot)
{
	lockdep_assert_held(&pool->lock);
	pool->rt[slot].touched = true;
	pool->rt[slot].dirty = true;
	qnvram_region_changed(pool, slot);
}

/**
 * qnvram_wb_run() - write the pool image back now, in the background when
 *	freeblock is loaded
 * @pool: the pool
 *
 * With freeblock: takes the snapshot and registers the tasks, and returns
 * (the image is committed later). Without it: a synchronous flush.
 * Context: process, may sleep (takes @pool->lock; the snapshot copies the
 * resident regions).
 * Return: 0; -EBUSY while a background write-back runs; -ENODEV without a
 * backing device; -ENOMEM; the errors of qnvram_flush().
 */
int qnvram_wb_run(struct qnvram_pool *pool)
{
	int ret;

	mutex_lock(&pool->lock);
	ret = qnvram_wb_start(pool);
	if (ret == -ENOPKG)
		ret = qnvram_flush(pool);
	mutex_unlock(&pool->lock);
	return ret;
}

static void qnvram_wb_periodic_fn(struct work_struct *work)
{
	struct qnvram_pool *pool = container_of(to_delayed_work(work),
						struct qnvram_pool,
						wb.periodic);
	unsigned int s;
	int ret;

	ret = qnvram_wb_run(pool);
	if (ret && ret != -EBUSY)
		pr_warn_ratelimited("periodic write-back: %d\n", ret);
	s = READ_ONCE(qnvram_writeback_s);
	if (s && READ_ONCE(qnvram_wb_ready))
		queue_delayed_work(system_long_wq, &pool->wb.periodic, s * HZ);
}

/**
 * qnvram_wb_init() - set up background write-back; start the period
 * @pool: the pool, loaded
 *
 * Context: process, module init.
 */
void qnvram_wb_init(struct qnvram_pool *pool)
{
	struct qnvram_wb *wb = &pool->wb;
	unsigned int s;

	init_completion(&wb->tasks_done);
	INIT_WORK(&wb->commit_work, qnvram_wb_commit_fn);
	INIT_DELAYED_WORK(&wb->periodic, qnvram_wb_periodic_fn);
	mutex_lock(&qnvram_wb_ready_lock);
	WRITE_ONCE(qnvram_wb_ready, true);
	s = qnvram_writeback_s;
	if (s)
		queue_delayed_work(system_long_wq, &wb->periodic, s * HZ);
	mutex_unlock(&qnvram_wb_ready_lock);
}

/**
 * qnvram_wb_exit() - stop the period, abort a running write-back and wait
 *	for its tasks (the image it was writing is not committed)
 * @pool: the pool
 *
 * Returns once freeblock has returned from every callback of every
 * write-back task, this one's and those of write-backs that ended before.
 * Context: process, may sleep; module exit.
 */
void qnvram_wb_exit(struct qnvram_pool *pool)
{
	struct qnvram_wb *wb = &pool->wb;
	unsigned int i;

	mutex_lock(&qnvram_wb_ready_lock);
	WRITE_ONCE(qnvram_wb_ready, false);
	mutex_unlock(&qnvram_wb_ready_lock);
	/* It may be running and re-arming itself: _sync stops that too. */
	cancel_delayed_work_sync(&wb->periodic);
	mutex_lock(&pool->lock);
	if (wb->state == QNVRAM_WB_RUNNING) {
		for (i = 0; i < wb->nr_tasks; i++)
			if (!READ_ONCE(wb->tasks[i].ended) && wb->tasks[i].id > 0)
				wb->fb.fb_abort(wb->tasks[i].id);
	}
	mutex_unlock(&pool->lock);
	/*
	 * Aborted tasks end soon and no new one starts. The last callback
	 * of a write-back wakes tasks_done and then still returns through
	 * this module's code: wait until freeblock is out of every one.
	 */
	fb_owner_wait(&wb->fb.owner);
	cancel_work_sync(&wb->commit_work);
	mutex_lock(&pool->lock);
	qnvram_wb_end(pool, -ECANCELED);
	mutex_unlock(&pool->lock);
}
