// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freeblock: a queue of registered background tasks per disk, issued only
 * when the foreground leaves the disk idle. Foreground I/O is seen where it
 * starts: a bio submitted to the disk (block_bio_queue), on a bio-based
 * disk (dm-crypt, dm-default-key, LVM, md) counted until its completion
 * (block_bio_complete, block_split), on a blk-mq disk an arrival whose
 * request is then counted from issue to completion (block_rq_issue,
 * block_rq_complete, block_rq_requeue of started requests only). Freeblock's
 * own bios and any I/O of the idle class (ionice -c3, and so the clones
 * stacked drivers make of freeblock's idle blocks on the disks below) are
 * not foreground. A disk is idle when no foreground I/O is in flight and
 * none arrived or completed for the idle window, chosen from the histogram
 * of the foreground's own idle gaps (fb_idle.h, docs/freeblock.md). Idle
 * blocks carry IOPRIO_CLASS_IDLE; blocks a rate floor forces onto a busy
 * disk and promoted blocks carry best-effort, so every scheduler serves
 * them. At most `depth` blocks are in flight per disk. A task's rate floor
 * issues a block even on a busy disk when none was issued for blksize /
 * floor, and so does the disk's own floor (md's sync_speed_min); the
 * task's and the disk's ceilings pace it even on an idle disk; a promoted
 * task is issued at once. A watchdog resets a foreground count that has
 * not moved for stale_ms (a completion never seen).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/ctype.h>
#include <linux/delay.h>
#include <linux/blk-mq.h>
#include <linux/highmem.h>
#include <linux/ioprio.h>
#include <linux/kref.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>
#include "fb_internal.h"
#include "fb_piece.h"

/* --- Tunables ------------------------------------------------------------ */

static int fb_param_set(const char *s, const struct kernel_param *kp)
{
	struct fb_uint_param *p = kp->arg;
	unsigned int v;
	int ret;

	ret = kstrtouint(s, 0, &v);
	if (ret)
		return ret;
	if (v < p->min || v > p->max)
		return -EINVAL;
	WRITE_ONCE(p->val, v);
	return 0;
}

static int fb_param_get(char *buf, const struct kernel_param *kp)
{
	const struct fb_uint_param *p = kp->arg;

	return sysfs_emit(buf, "%u\n", READ_ONCE(p->val));
}

/* For struct fb_uint_param parameters of every file of the module. */
const struct kernel_param_ops fb_uint_ops = {
	.set = fb_param_set,
	.get = fb_param_get,
};

/*
 * The module parameters are the defaults of every disk; a disk's own
 * values (FREEBLOCK_CMD_SET_DISK) override them (enum fb_conf_id order).
 */

/* Two in flight keep a disk busy between completions; 64 is a queue. */
static struct fb_uint_param fb_depth = { .val = 2, .min = 1, .max = 64 };
module_param_cb(depth, &fb_uint_ops, &fb_depth, 0644);
MODULE_PARM_DESC(depth, "background blocks in flight per disk, at most (1-64, default 2)");

/* Below the think time of a dependent reader the window would not help. */
static struct fb_uint_param fb_idle_min_us = {
	.val = 100, .min = 10, .max = 10000000 };
module_param_cb(idle_min_us, &fb_uint_ops, &fb_idle_min_us, 0644);
MODULE_PARM_DESC(idle_min_us, "idle window, shortest, us (10-10000000, default 100)");

static struct fb_uint_param fb_idle_max_us = {
	.val = 50000, .min = 10, .max = 10000000 };
module_param_cb(idle_max_us, &fb_uint_ops, &fb_idle_max_us, 0644);
MODULE_PARM_DESC(idle_max_us, "idle window, longest, us (10-10000000, default 50000)");

/*
 * Each foreground arrival that meets a background block waits up to one
 * block's service time: 2% of them at half a service time each is about the
 * 1% mean impact Freeblock promises, where the foreground's own service
 * time is the block's.
 */
static struct fb_uint_param fb_collide_pct = {
	.val = 2, .min = 0, .max = 100 };
module_param_cb(collide_pct, &fb_uint_ops, &fb_collide_pct, 0644);
MODULE_PARM_DESC(collide_pct, "share of the foreground's arrivals that may meet a background block, % (0-100, default 2): half for the gaps that outlast the idle window, half for those shorter than the horizon");

static struct fb_uint_param fb_floor_kbps = {
	.val = 0, .min = 0, .max = 0x7fffffff };
module_param_cb(floor_kbps, &fb_uint_ops, &fb_floor_kbps, 0644);
MODULE_PARM_DESC(floor_kbps, "background rate floor per disk, KiB/s, as md's speed_limit_min: blocks go on a busy disk below it (0: strict idle-only, the default)");

static struct fb_uint_param fb_ceiling_kbps = {
	.val = 0, .min = 0, .max = 0x7fffffff };
module_param_cb(ceiling_kbps, &fb_uint_ops, &fb_ceiling_kbps, 0644);
MODULE_PARM_DESC(ceiling_kbps, "background rate ceiling per disk, KiB/s, as md's speed_limit_max; promoted tasks pass it (0: none, the default)");

static struct fb_uint_param fb_stale_ms = {
	.val = 5000, .min = 100, .max = 600000 };
module_param_cb(stale_ms, &fb_uint_ops, &fb_stale_ms, 0644);
MODULE_PARM_DESC(stale_ms, "watchdog: a foreground count that has not moved for this long is reset, ms (100-600000, default 5000)");

static struct fb_uint_param fb_max_tasks = {
	.val = 256, .min = 1, .max = 65536 };
module_param_cb(max_tasks, &fb_uint_ops, &fb_max_tasks, 0644);
MODULE_PARM_DESC(max_tasks, "tasks per disk, at most (1-65536, default 256)");

static struct fb_uint_param *const fb_conf_params[FB_CONF_NR] = {
	[FB_CONF_DEPTH] = &fb_depth,
	[FB_CONF_IDLE_MIN_US] = &fb_idle_min_us,
	[FB_CONF_IDLE_MAX_US] = &fb_idle_max_us,
	[FB_CONF_COLLIDE_PCT] = &fb_collide_pct,
	[FB_CONF_FLOOR_KBPS] = &fb_floor_kbps,
	[FB_CONF_CEILING_KBPS] = &fb_ceiling_kbps,
	[FB_CONF_STALE_MS] = &fb_stale_ms,
};

/* @d's tunable @id in effect: its own, else the module parameter. */
static u32 fb_conf(const struct fb_disk *d, enum fb_conf_id id)
{
	u32 v = READ_ONCE(d->conf[id]);

	return v != FREEBLOCK_INHERIT ? v : READ_ONCE(fb_conf_params[id]->val);
}

/* A task whose getbuffer said "no buffer" is retried after this. */
#define FB_STALL_RETRY_NS	(10ULL * NSEC_PER_MSEC)

/* --- Tasks --------------------------------------------------------------- */

enum fb_task_state {
	FB_TASK_ACTIVE,
	FB_TASK_ENDING,		/* aborted: issue nothing more */
	FB_TASK_ENDED,		/* final callback made */
};

/**
 * struct fb_task - one registered background task
 * @id: its id, key of fb_tasks
 * @ref: references: fb_tasks' entry until it ends, one per bio in flight,
 *	one per caller of fb_task_get()
 * @node: in disk->tasks, under disk->lock
 * @disk: the disk it is on
 * @bdev: the device (or partition) it reads or writes; the client keeps it
 *	open until the final callback
 * @op: REQ_OP_READ or REQ_OP_WRITE
 * @start: first byte on @bdev
 * @blksize: bytes per block
 * @nblocks: blocks in the task
 * @next: next block to issue; speculative: blocks issued (or held) so far
 *	(under disk->lock)
 * @done: blocks completed (under disk->lock)
 * @inflight: blocks issued and not completed (under disk->lock)
 * @state: enum fb_task_state (under disk->lock)
 * @result: final status once ENDING or all done
 * @promoted: issue without waiting for idle time
 * @spec: speculative (FB_TASK_F_SPECULATIVE): blocks in any order, the
 *	unissued one nearest the disk's head first
 * @held: speculative: getbuffer had no buffer for @held_lbn, whose bit
 *	stays set: it is the task's next block, so getbuffer is asked for
 *	the same block again (under disk->lock)
 * @held_lbn: that block
 * @issued: speculative: bitmap of @nblocks bits, a block's bit set when it
 *	is issued or held (under disk->lock)
 * @low: speculative: every block below it is issued (under disk->lock)
 * @floor_kbps: rate floor, KiB/s (0: none)
 * @ceiling_kbps: rate ceiling, KiB/s (0: none)
 * @floor_due_ns: when the floor forces the next block
 * @ceil_next_ns: first time the ceiling allows the next block
 * @last_claim_ns: when its last block was claimed (0: none): a rate
 *	change counts the next block's time from it
 * @stall_until_ns: getbuffer had no buffer: skip until then or fb_kick()
 * @callback: per block and final
 * @getbuffer: the late buffer binding
 * @ctx: the client's context
 * @owner: counts the task until its final callback has returned, or NULL
 */
struct fb_task {
	int id;
	struct kref ref;
	struct list_head node;
	struct fb_disk *disk;
	struct block_device *bdev;
	enum req_op op;
	u64 start;
	u32 blksize;
	u64 nblocks;
	u64 next;
	u64 done;
	unsigned int inflight;
	enum fb_task_state state;
	int result;
	bool promoted;
	bool spec;
	bool held;
	u64 held_lbn;
	unsigned long *issued;
	u64 low;
	u32 floor_kbps;
	u32 ceiling_kbps;
	u64 floor_due_ns;
	u64 ceil_next_ns;
	u64 last_claim_ns;
	u64 stall_until_ns;
	fb_callback_t callback;
	fb_getbuffer_t getbuffer;
	void *ctx;
	struct fb_owner *owner;
};

/* Why a block may go now, weakest first: the strongest reason wins. */
enum fb_reason { FB_NOT_NOW, FB_IDLE, FB_FLOOR, FB_PROMOTED };

/**
 * struct fb_io - one background block in flight
 * @task: its task (holds a reference)
 * @lbn: block number in the task
 * @buf: the buffer getbuffer gave
 * @submit_ns: ktime_get_ns() at submission
 * @idle: issued in idle time (counts toward idle_time_ns)
 * @alone: no other background block was in flight at submission
 * @fg_arrivals: the disk's fg_arrivals at submission: unchanged at
 *	completion and @alone, the block's time is its service time alone
 * @pieces: bios of the block not completed yet, plus one held by
 *	fb_submit() while it builds them; the one that drops it to 0
 *	completes the block
 * @status: the first error of its bios (errno), 0 when all succeeded
 * @work: runs the callback in process context
 *
 * A block larger than one request of the device is issued as several
 * bios (fb_piece_bytes()), each ending in fb_bio_end_io(), so the block
 * layer never splits them: a split piece would end through
 * bio_chain_endio() and the probes would count it as foreground.
 */
struct fb_io {
	struct fb_task *task;
	u64 lbn;
	void *buf;
	u64 submit_ns;
	bool idle;
	bool alone;
	int fg_arrivals;
	atomic_t pieces;
	int status;
	struct work_struct work;
};

struct workqueue_struct *fb_wq;

/* Disks: the list for walks, the xarray (by dev_t) for the probes. */
static LIST_HEAD(fb_disks);
static DEFINE_MUTEX(fb_disks_lock);
static DEFINE_XARRAY(fb_disk_xa);
/*
 * Tasks by id. Its lock, like every disk's lock, is taken with bottom
 * halves off: fb_abort(), fb_promote(), fb_set_rate() and fb_kick() may be
 * called from softirq context.
 */
static DEFINE_XARRAY_FLAGS(fb_tasks, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_BH);
/*
 * Ids are handed out cyclically: a client that aborts or promotes by the id
 * of a task that has just ended (qnvram, a userspace ring) must not reach a
 * new task that got the same id; one is reused only after 2^31 others.
 */
static u32 fb_tasks_next;
/* Set at rmmod: registration fails with -ENODEV. */
static bool fb_exiting;

static inline void fb_count(struct fb_disk *d, enum fb_stat_id id, u64 n)
{
	atomic64_add(n, &d->stats[id]);
}

static u64 fb_idle_window_ns(struct fb_disk *d)
{
	return atomic64_read(&d->window_ns);
}

/* The service time of one background block, for the window, ns. */
static u64 fb_service_ns(struct fb_disk *d)
{
	u64 alone = atomic64_read(&d->service_ns);

	return alone ? alone : atomic64_read(&d->service_any_ns);
}

/*
 * Whether one more block issued now completes before the current gap's
 * horizon (fb_idle.h): behind the blocks in flight, each taken as twice
 * the service time measured alone, so a slow one does not meet the
 * foreground's return. No measured service time yet: no.
 */
static bool fb_gap_start_fits(struct fb_disk *d, u64 now)
{
	u64 since = atomic64_read(&d->idle_since_ns);
	u64 horizon = atomic64_read(&d->horizon_ns);
	u64 guard = 2 * fb_service_ns(d);

	if (!since || !horizon || !guard)
		return false;
	return now + (atomic_read(&d->bg_inflight) + 1) * guard <=
	       since + horizon;
}

/* The window follows the tunables at least this often. */
#define FB_WINDOW_REFRESH_NS	(50ULL * NSEC_PER_MSEC)

/*
 * Choose @d's idle window and horizon again from its recent gaps
 * (fb_idle.h) and its tunables, when a gap came in since the last time or FB_WINDOW_REFRESH_NS
 * passed. Issuer only (process context).
 */
static void fb_disk_update_window(struct fb_disk *d)
{
	u64 nr_gaps = atomic64_read(&d->stats[FB_STAT_FG_GAPS]);
	u64 now = ktime_get_ns(), w;
	struct fb_gaps *gaps;
	unsigned long flags;

	if (nr_gaps == d->window_gaps &&
	    now - d->window_at_ns < FB_WINDOW_REFRESH_NS)
		return;
	gaps = kmalloc(sizeof(*gaps), GFP_NOIO);
	if (!gaps)
		return;		/* the old window stays */
	spin_lock_irqsave(&d->gap_lock, flags);
	*gaps = d->gaps;
	spin_unlock_irqrestore(&d->gap_lock, flags);
	w = fb_idle_window_us_of(gaps, fb_conf(d, FB_CONF_COLLIDE_PCT),
				 fb_conf(d, FB_CONF_IDLE_MIN_US),
				 fb_conf(d, FB_CONF_IDLE_MAX_US));
	atomic64_set(&d->window_ns, w * NSEC_PER_USEC);
	/* sorts the copy */
	w = fb_idle_horizon_us_of(gaps, fb_conf(d, FB_CONF_COLLIDE_PCT));
	atomic64_set(&d->horizon_ns, w * NSEC_PER_USEC);
	kfree(gaps);
	d->window_gaps = nr_gaps;
	d->window_at_ns = now;
}

/* Wake the issuer at @when_ns (CLOCK_MONOTONIC) unless it wakes sooner. */
static void fb_disk_arm(struct fb_disk *d, u64 when_ns)
{
	unsigned long flags;

	spin_lock_irqsave(&d->timer_lock, flags);
	if (!hrtimer_is_queued(&d->timer) ||
	    when_ns < ktime_to_ns(hrtimer_get_expires(&d->timer)))
		hrtimer_start(&d->timer, ns_to_ktime(when_ns),
			      HRTIMER_MODE_ABS);
	spin_unlock_irqrestore(&d->timer_lock, flags);
}

static enum hrtimer_restart fb_disk_timer_fn(struct hrtimer *t)
{
	struct fb_disk *d = container_of(t, struct fb_disk, timer);

	queue_work(fb_wq, &d->work);
	return HRTIMER_NORESTART;
}

static void fb_task_free(struct fb_task *t)
{
	kvfree(t->issued);
	kfree(t);
}

static void fb_task_release(struct kref *ref)
{
	fb_task_free(container_of(ref, struct fb_task, ref));
}

static void fb_task_put(struct fb_task *t)
{
	kref_put(&t->ref, fb_task_release);
}

/* The task @id with a reference, or NULL. */
static struct fb_task *fb_task_get(int id)
{
	struct fb_task *t;

	xa_lock_bh(&fb_tasks);
	t = id > 0 ? xa_load(&fb_tasks, id) : NULL;
	if (t)
		kref_get(&t->ref);
	xa_unlock_bh(&fb_tasks);
	return t;
}

/* Caller holds d->lock. Stop issuing @t; the issuer ends it. */
static bool fb_task_end_locked(struct fb_task *t, int result)
{
	if (t->state != FB_TASK_ACTIVE || t->done >= t->nblocks)
		return false;
	t->state = FB_TASK_ENDING;
	t->result = result;
	fb_count(t->disk, FB_STAT_ABORTS, 1);
	return true;
}

/* --- Foreground detection: the block tracepoints ------------------------- */

static void fb_bio_end_io(struct bio *bio);

/*
 * Not foreground: our own bios, and idle-class I/O, which includes the
 * clones a stacked driver makes of our idle blocks for the disks below
 * (dm and md copy bi_ioprio). Decided the same way at a bio's submission
 * and completion, so the bio-based count stays balanced.
 */
static bool fb_bio_is_bg(struct bio *bio)
{
	return bio->bi_end_io == fb_bio_end_io ||
	       IOPRIO_PRIO_CLASS(bio->bi_ioprio) == IOPRIO_CLASS_IDLE;
}

static bool fb_rq_is_bg(struct request *rq)
{
	return (rq->bio && rq->bio->bi_end_io == fb_bio_end_io) ||
	       IOPRIO_PRIO_CLASS(req_get_ioprio(rq)) == IOPRIO_CLASS_IDLE;
}

static struct fb_disk *fb_bio_disk(struct bio *bio)
{
	if (!bio->bi_bdev || fb_bio_is_bg(bio))
		return NULL;
	return xa_load(&fb_disk_xa, disk_devt(bio->bi_bdev->bd_disk));
}

static struct fb_disk *fb_rq_disk(struct request *rq)
{
	struct gendisk *disk = rq->q->disk;

	if (!disk || fb_rq_is_bg(rq))
		return NULL;
	return xa_load(&fb_disk_xa, disk_devt(disk));
}

/*
 * A foreground I/O arrives at @d, ending the disk's idle gap if it was
 * idle: the gap goes into the histogram the window is chosen from.
 */
static void fb_fg_arrival(struct fb_disk *d, u64 end_sector)
{
	u64 now = ktime_get_ns();
	u64 since = atomic64_read(&d->idle_since_ns);
	unsigned long flags;

	atomic64_set(&d->last_fg_ns, now);
	atomic_inc(&d->fg_arrivals);
	if (end_sector)
		atomic64_set(&d->head_sector, end_sector);
	if (atomic_read(&d->bg_inflight))
		fb_count(d, FB_STAT_FG_DELAYED, 1);
	/* one arrival takes the gap */
	if (since && atomic64_cmpxchg(&d->idle_since_ns, since, 0) == since &&
	    now > since) {
		spin_lock_irqsave(&d->gap_lock, flags);
		fb_gaps_add(&d->gaps, div_u64(now - since, NSEC_PER_USEC));
		spin_unlock_irqrestore(&d->gap_lock, flags);
		fb_count(d, FB_STAT_FG_GAPS, 1);
	}
}

/* One foreground I/O of @d has completed (or left: a requeue). */
static void fb_fg_done(struct fb_disk *d)
{
	u64 now = ktime_get_ns();

	atomic64_set(&d->last_fg_ns, now);
	if (atomic_dec_if_positive(&d->fg_inflight) == 0) {
		atomic64_set(&d->idle_since_ns, now);
		if (!READ_ONCE(d->nr_tasks))
			return;
		/* the issuer at once if a block fits at the gap's start */
		fb_disk_arm(d, fb_gap_start_fits(d, now) ? now :
			    now + fb_idle_window_ns(d));
	}
}

static void fb_probe_bio_queue(void *data, struct bio *bio)
{
	struct fb_disk *d = fb_bio_disk(bio);

	if (!d)
		return;
	/*
	 * The arrival first: a gap ends only when the count is 0. The sector
	 * is the whole disk's (submit_bio_noacct() remapped a partition's);
	 * a flush has none and does not move the head.
	 */
	fb_fg_arrival(d, bio_sectors(bio) ? bio_end_sector(bio) : 0);
	if (queue_is_mq(bio->bi_bdev->bd_disk->queue))
		return;		/* counted as a request, from its issue */
	atomic_inc(&d->fg_inflight);
	fb_count(d, FB_STAT_FG_REQUESTS, 1);
}

/*
 * A bio split off another: it completes (and is traced) on its own, so it
 * counts on a bio-based disk, whoever the parent was (the split gets the
 * parent's ioprio; its end_io is bio_chain_endio, never ours).
 */
static void fb_probe_split(void *data, struct bio *bio,
			   unsigned int new_sector)
{
	struct fb_disk *d = fb_bio_disk(bio);

	if (d && !queue_is_mq(bio->bi_bdev->bd_disk->queue))
		atomic_inc(&d->fg_inflight);
}

/* Traced for bios of bio-based disks; a blk-mq disk's go as requests. */
static void fb_probe_bio_complete(void *data, struct request_queue *q,
				  struct bio *bio)
{
	struct fb_disk *d = fb_bio_disk(bio);

	if (d && !queue_is_mq(bio->bi_bdev->bd_disk->queue))
		fb_fg_done(d);
}

static void fb_probe_rq_issue(void *data, struct request *rq)
{
	struct fb_disk *d = fb_rq_disk(rq);

	if (!d)
		return;
	atomic_inc(&d->fg_inflight);
	atomic64_set(&d->last_fg_ns, ktime_get_ns());
	fb_count(d, FB_STAT_FG_REQUESTS, 1);
}

static void fb_probe_rq_complete(void *data, struct request *rq,
				 blk_status_t error, unsigned int nr_bytes)
{
	struct fb_disk *d = fb_rq_disk(rq);

	/*
	 * A partial completion is called again for the rest; a request that
	 * fails before the driver started it was never issued.
	 */
	if (d && nr_bytes >= blk_rq_bytes(rq) && blk_mq_request_started(rq))
		fb_fg_done(d);
}

/*
 * The core traces a requeue before it looks at whether the request was
 * started: one the driver turned away unstarted (BLK_STS_RESOURCE before
 * blk_mq_start_request()) was never issued, so it leaves the count alone.
 */
static void fb_probe_rq_requeue(void *data, struct request *rq)
{
	struct fb_disk *d = fb_rq_disk(rq);

	if (!d)
		return;
	fb_count(d, FB_STAT_FG_REQUEUES, 1);
	if (blk_mq_request_started(rq))
		fb_fg_done(d);
	else
		fb_count(d, FB_STAT_FG_REQUEUES_UNSTARTED, 1);
}

/**
 * struct fb_probe - a block tracepoint freeblock attaches to
 * @name: the tracepoint
 * @probe: our function
 * @tp: found by for_each_kernel_tracepoint()
 */
struct fb_probe {
	const char *name;
	void *probe;
	struct tracepoint *tp;
};

static struct fb_probe fb_probes[] = {
	{ .name = "block_bio_queue", .probe = fb_probe_bio_queue },
	{ .name = "block_split", .probe = fb_probe_split },
	{ .name = "block_bio_complete", .probe = fb_probe_bio_complete },
	{ .name = "block_rq_issue", .probe = fb_probe_rq_issue },
	{ .name = "block_rq_complete", .probe = fb_probe_rq_complete },
	{ .name = "block_rq_requeue", .probe = fb_probe_rq_requeue },
};

static void fb_find_tracepoint(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fb_probes); i++)
		if (!strcmp(tp->name, fb_probes[i].name))
			fb_probes[i].tp = tp;
}

static void fb_probes_unregister(unsigned int n)
{
	while (n--)
		tracepoint_probe_unregister(fb_probes[n].tp, fb_probes[n].probe,
					    NULL);
	tracepoint_synchronize_unregister();
}

static int fb_probes_register(void)
{
	unsigned int i;
	int ret;

	for_each_kernel_tracepoint(fb_find_tracepoint, NULL);
	for (i = 0; i < ARRAY_SIZE(fb_probes); i++) {
		if (!fb_probes[i].tp) {
			pr_err("tracepoint %s not found\n", fb_probes[i].name);
			ret = -ENOENT;
			goto err_unregister;
		}
		ret = tracepoint_probe_register(fb_probes[i].tp,
						fb_probes[i].probe, NULL);
		if (ret)
			goto err_unregister;
	}
	return 0;

err_unregister:
	fb_probes_unregister(i);
	return ret;
}

/* --- Issue --------------------------------------------------------------- */

static void fb_io_done_work(struct work_struct *work)
{
	struct fb_io *io = container_of(work, struct fb_io, work);
	struct fb_task *t = io->task;
	struct fb_disk *d = t->disk;

	t->callback(t->ctx, io->lbn, io->buf, io->status);

	fb_count(d, FB_STAT_BLOCKS_DONE, 1);
	fb_count(d, FB_STAT_BYTES_DONE, t->blksize);
	if (io->status)
		fb_count(d, FB_STAT_BLOCKS_FAILED, 1);
	atomic_dec(&d->bg_pending);
	spin_lock_bh(&d->lock);
	t->done++;
	t->inflight--;
	if (io->status && test_bit(GD_DEAD, &t->bdev->bd_disk->state))
		fb_task_end_locked(t, -ENODEV);
	spin_unlock_bh(&d->lock);
	queue_work(fb_wq, &d->work);
	fb_task_put(t);
	kfree(io);
}

/* EWMA with weight 1/8; races between completions only blur it. */
static void fb_ewma_add(atomic64_t *avg, u64 sample)
{
	u64 a = atomic64_read(avg);

	atomic64_set(avg, a ? a - a / 8 + sample / 8 : sample);
}

/* The last bio of @io's block has completed: account it, call back. */
static void fb_io_complete(struct fb_io *io)
{
	struct fb_disk *d = io->task->disk;
	u64 svc = ktime_get_ns() - io->submit_ns;

	if (is_vmalloc_addr(io->buf) && !op_is_write(io->task->op))
		invalidate_kernel_vmap_range(io->buf, io->task->blksize);
	/*
	 * Submission to completion includes waiting behind the sibling block
	 * and behind foreground I/O: only a block that ran alone measures
	 * the service time the window is chosen with.
	 */
	fb_ewma_add(&d->service_any_ns, svc);
	if (io->alone && atomic_read(&d->fg_arrivals) == io->fg_arrivals)
		fb_ewma_add(&d->service_ns, svc);
	if (io->idle)
		fb_count(d, FB_STAT_IDLE_TIME_NS, svc);
	atomic_dec(&d->bg_inflight);
	INIT_WORK(&io->work, fb_io_done_work);
	queue_work(fb_wq, &io->work);
}

/* Drop @n of @io's pieces; the last one completes the block. */
static void fb_io_put_pieces(struct fb_io *io, int n)
{
	if (atomic_sub_and_test(n, &io->pieces))
		fb_io_complete(io);
}

/* Record @err as @io's status unless an earlier piece failed first. */
static void fb_io_set_error(struct fb_io *io, int err)
{
	if (err)
		cmpxchg(&io->status, 0, err);
}

static void fb_bio_end_io(struct bio *bio)
{
	struct fb_io *io = bio->bi_private;

	fb_io_set_error(io, blk_status_to_errno(bio->bi_status));
	bio_put(bio);
	fb_io_put_pieces(io, 1);
}

/* Map @len bytes of kmalloc or vmalloc memory at @buf into @bio. */
static int fb_bio_add_buf(struct bio *bio, void *buf, u32 len)
{
	while (len) {
		unsigned int off = offset_in_page(buf);
		unsigned int n = min_t(unsigned int, len, PAGE_SIZE - off);
		struct page *page = is_vmalloc_addr(buf) ?
				    vmalloc_to_page(buf) : virt_to_page(buf);

		if (bio_add_page(bio, page, n, off) != n)
			return -EINVAL;
		buf += n;
		len -= n;
	}
	return 0;
}

/* fb_piece_bytes_of() (fb_piece.h) with @bdev's limits; @start in bytes */
static u32 fb_piece_bytes(struct block_device *bdev, u32 blksize, u64 start)
{
	struct request_queue *q = bdev_get_queue(bdev);
	struct fb_piece_limits l = {
		.max_bytes = (u64)queue_max_sectors(q) << SECTOR_SHIFT,
		.max_segments = queue_max_segments(q),
		.segment_bytes = queue_max_segment_size(q),
		.page_bytes = PAGE_SIZE,
		.max_vec_pages = BIO_MAX_VECS,
		.chunk_bytes = (u64)q->limits.chunk_sectors << SECTOR_SHIFT,
		.logical_block_bytes = bdev_logical_block_size(bdev),
	};

	return fb_piece_bytes_of(&l, blksize,
				 ((u64)get_start_sect(bdev) << SECTOR_SHIFT) +
				 start);
}

/*
 * Submit block @lbn of @t into @buf, as one bio per piece; a piece that
 * cannot be built ends the block with -EINVAL after those already sent.
 * Idle blocks carry the idle class. A block a floor forces onto a busy disk,
 * or a promoted one, carries best-effort: the idle class is served only
 * when nothing else is queued (BFQ: about every 200 ms under load;
 * smartio and mq-deadline: after best-effort), which would void the
 * floor's guarantee. Floor blocks get the lowest best-effort level.
 */
static void fb_submit(struct fb_task *t, u64 lbn, void *buf,
		      enum fb_reason why)
{
	u32 piece = fb_piece_bytes(t->bdev, t->blksize, t->start);
	unsigned int nr_pieces = t->blksize / piece, i;
	u16 prio = why == FB_IDLE ? IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0) :
		   why == FB_FLOOR ? IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 7) :
				     IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 4);
	sector_t sector = (t->start + lbn * t->blksize) >> SECTOR_SHIFT;
	struct fb_disk *d = t->disk;
	struct fb_io *io;
	struct bio *bio;

	/* Small and short-lived: the allocator retries rather than fail. */
	io = kzalloc(sizeof(*io), GFP_NOIO | __GFP_NOFAIL);
	io->task = t;
	io->lbn = lbn;
	io->buf = buf;
	io->idle = why == FB_IDLE;
	io->alone = atomic_inc_return(&d->bg_inflight) == 1;
	io->fg_arrivals = atomic_read(&d->fg_arrivals);
	/* one per piece, and fb_submit()'s own until every piece is sent */
	atomic_set(&io->pieces, nr_pieces + 1);
	if (is_vmalloc_addr(buf) && op_is_write(t->op))
		flush_kernel_vmap_range(buf, t->blksize);
	io->submit_ns = ktime_get_ns();
	fb_count(d, FB_STAT_BG_BIOS, nr_pieces);
	for (i = 0; i < nr_pieces; i++) {
		void *p = buf + i * piece;

		bio = bio_alloc(t->bdev, DIV_ROUND_UP(offset_in_page(p) + piece,
						      PAGE_SIZE),
				t->op | REQ_NOMERGE, GFP_NOIO);
		bio->bi_iter.bi_sector = sector + i * (piece >> SECTOR_SHIFT);
		bio->bi_ioprio = prio;
		bio->bi_end_io = fb_bio_end_io;
		bio->bi_private = io;
		if (fb_bio_add_buf(bio, p, piece)) {
			bio_put(bio);
			fb_io_set_error(io, -EINVAL);
			/* the pieces never sent */
			atomic_sub(nr_pieces - i, &io->pieces);
			break;
		}
		submit_bio(bio);
	}
	fb_io_put_pieces(io, 1);
}

/* ns one block takes at @kbps KiB/s. */
static u64 fb_block_ns(u32 blksize, u32 kbps)
{
	/* div64_u64: kbps * 1024 may not fit the u32 divisor of div_u64() */
	return div64_u64((u64)blksize * NSEC_PER_SEC, (u64)kbps * 1024);
}

/**
 * struct fb_disk_gate - what the disk itself allows now, for every task
 * @idle: no foreground in flight, and the idle window has passed or a
 *	block fits before the horizon (@gap_start)
 * @gap_start: a block issued now completes before the gap's horizon
 * @floor_due: the disk's floor forces a block even on a busy disk
 * @ceiling_ok: the disk's ceiling allows a block (promoted ones pass)
 */
struct fb_disk_gate {
	bool idle;
	bool gap_start;
	bool floor_due;
	bool ceiling_ok;
};

/*
 * Caller holds d->lock. Whether @t may issue now and why; else lower
 * *@wake_ns to when it might.
 */
static enum fb_reason fb_task_reason(struct fb_task *t, u64 now,
				     const struct fb_disk_gate *g,
				     u64 *wake_ns)
{
	if (t->state != FB_TASK_ACTIVE || (t->next >= t->nblocks && !t->held))
		return FB_NOT_NOW;
	if (t->stall_until_ns > now) {
		*wake_ns = min(*wake_ns, t->stall_until_ns);
		return FB_NOT_NOW;
	}
	if (t->ceiling_kbps && t->ceil_next_ns > now) {
		*wake_ns = min(*wake_ns, t->ceil_next_ns);
		return FB_NOT_NOW;
	}
	if (t->promoted)
		return FB_PROMOTED;
	if (!g->ceiling_ok)
		return FB_NOT_NOW;	/* the caller wakes at the disk's slot */
	if (g->idle)
		return FB_IDLE;
	if (t->floor_kbps) {
		if (t->floor_due_ns <= now)
			return FB_FLOOR;
		*wake_ns = min(*wake_ns, t->floor_due_ns);
	}
	return g->floor_due ? FB_FLOOR : FB_NOT_NOW;
}

/* The last zero bit of @map in [@low, @bit], or U64_MAX when none. */
static u64 fb_prev_zero_bit(const unsigned long *map, u64 low, u64 bit)
{
	unsigned long i = BIT_WORD(bit), first = BIT_WORD(low);
	unsigned long w = ~map[i] & BITMAP_LAST_WORD_MASK(bit + 1);

	for (;;) {
		if (w) {
			bit = (u64)i * BITS_PER_LONG + __fls(w);
			return bit >= low ? bit : U64_MAX;
		}
		if (i-- == first)
			return U64_MAX;
		w = ~map[i];
	}
}

/*
 * Caller holds d->lock. The unissued block of speculative @t nearest to
 * @head (a sector of the disk): the first after it, or the last before it
 * when that one is closer. @t has one (t->next < t->nblocks).
 */
static u64 fb_spec_nearest(struct fb_task *t, u64 head)
{
	u64 part = get_start_sect(t->bdev), target = 0, fwd, back = U64_MAX;

	if (head > part && ((head - part) << SECTOR_SHIFT) > t->start)
		target = div_u64(((head - part) << SECTOR_SHIFT) - t->start,
				 t->blksize);
	target = clamp(target, t->low, t->nblocks - 1);
	fwd = find_next_zero_bit(t->issued, t->nblocks, target);
	if (target > t->low)
		back = fb_prev_zero_bit(t->issued, t->low, target - 1);
	if (fwd >= t->nblocks)
		return back;
	if (back != U64_MAX && target - back < fwd - target)
		return back;
	return fwd;
}

/**
 * struct fb_claim - a block fb_pick() claimed, and what to undo if
 *	getbuffer has no buffer for it
 * @lbn: the block
 * @why: why it may go now
 * @gap_start: idle, before the gap's horizon (not after the window)
 * @floor_due_ns: the task's floor_due_ns before the claim
 * @ceil_next_ns: the task's ceil_next_ns before the claim
 * @last_claim_ns: the task's last_claim_ns before the claim
 * @disk_floor_due_ns: the disk's floor_due_ns before the claim
 * @disk_ceil_next_ns: the disk's ceil_next_ns before the claim
 * @disk_last_claim_ns: the disk's last_claim_ns before the claim
 * @disk_last_claim_bytes: the disk's last_claim_bytes before the claim
 */
struct fb_claim {
	u64 lbn;
	enum fb_reason why;
	bool gap_start;
	u64 floor_due_ns;
	u64 ceil_next_ns;
	u64 last_claim_ns;
	u64 disk_floor_due_ns;
	u64 disk_ceil_next_ns;
	u64 disk_last_claim_ns;
	u32 disk_last_claim_bytes;
};

/*
 * Caller holds d->lock. Take @t's next block for reason @why and charge
 * the task's and the disk's rates.
 */
static void fb_task_claim(struct fb_task *t, u64 now, enum fb_reason why,
			  struct fb_claim *c)
{
	struct fb_disk *d = t->disk;
	u32 floor = fb_conf(d, FB_CONF_FLOOR_KBPS);
	u32 ceiling = fb_conf(d, FB_CONF_CEILING_KBPS);

	c->why = why;
	c->floor_due_ns = t->floor_due_ns;
	c->ceil_next_ns = t->ceil_next_ns;
	c->last_claim_ns = t->last_claim_ns;
	c->disk_floor_due_ns = d->floor_due_ns;
	c->disk_ceil_next_ns = d->ceil_next_ns;
	c->disk_last_claim_ns = d->last_claim_ns;
	c->disk_last_claim_bytes = d->last_claim_bytes;
	if (!t->spec) {
		c->lbn = t->next++;
	} else if (t->held) {
		t->held = false;
		c->lbn = t->held_lbn;
	} else {
		c->lbn = fb_spec_nearest(t, atomic64_read(&d->head_sector));
		__set_bit(c->lbn, t->issued);
		t->next++;
		if (c->lbn != t->low)
			fb_count(d, FB_STAT_BG_ISSUED_ANY_ORDER, 1);
		t->low = find_next_zero_bit(t->issued, t->nblocks, t->low);
	}
	t->inflight++;
	t->last_claim_ns = now;
	if (t->floor_kbps)
		t->floor_due_ns = now + fb_block_ns(t->blksize, t->floor_kbps);
	if (t->ceiling_kbps)
		t->ceil_next_ns = max(t->ceil_next_ns, now) +
			fb_block_ns(t->blksize, t->ceiling_kbps);
	d->last_claim_ns = now;
	d->last_claim_bytes = t->blksize;
	if (floor)
		d->floor_due_ns = now + fb_block_ns(t->blksize, floor);
	if (ceiling && why != FB_PROMOTED)
		d->ceil_next_ns = max(d->ceil_next_ns, now) +
			fb_block_ns(t->blksize, ceiling);
}

/*
 * Caller holds d->lock. getbuffer had no buffer for the block @c: give it
 * back (a speculative task holds it as its next block), and the floor and
 * ceiling slots charged for it; retry the task after a while.
 */
static void fb_task_unclaim(struct fb_task *t, u64 now,
			    const struct fb_claim *c)
{
	struct fb_disk *d = t->disk;

	if (t->spec) {
		t->held = true;
		t->held_lbn = c->lbn;
	} else {
		t->next--;
	}
	t->inflight--;
	t->floor_due_ns = c->floor_due_ns;
	t->ceil_next_ns = c->ceil_next_ns;
	t->last_claim_ns = c->last_claim_ns;
	d->floor_due_ns = c->disk_floor_due_ns;
	d->ceil_next_ns = c->disk_ceil_next_ns;
	d->last_claim_ns = c->disk_last_claim_ns;
	d->last_claim_bytes = c->disk_last_claim_bytes;
	t->stall_until_ns = now + FB_STALL_RETRY_NS;
}

/*
 * The next slot of a rate after a change to @kbps: one block of @bytes
 * after the last claim (@last_ns), not the slot the old rate had set, so
 * a raised rate applies at once. 0: no limit, or no block yet.
 */
static u64 fb_rate_rebase(u64 last_ns, u32 bytes, u32 kbps)
{
	return kbps && last_ns ? last_ns + fb_block_ns(bytes, kbps) : 0;
}

/*
 * Caller holds d->lock. The disk's floor and ceiling in effect now; a
 * changed value (FREEBLOCK_CMD_SET_DISK or the module parameter) moves the
 * disk's slots at once.
 */
static void fb_disk_rates(struct fb_disk *d, u32 *floor, u32 *ceiling)
{
	*floor = fb_conf(d, FB_CONF_FLOOR_KBPS);
	*ceiling = fb_conf(d, FB_CONF_CEILING_KBPS);
	if (*floor != d->floor_rate) {
		d->floor_rate = *floor;
		d->floor_due_ns = fb_rate_rebase(d->last_claim_ns,
						 d->last_claim_bytes, *floor);
	}
	if (*ceiling != d->ceil_rate) {
		d->ceil_rate = *ceiling;
		d->ceil_next_ns = fb_rate_rebase(d->last_claim_ns,
						 d->last_claim_bytes, *ceiling);
	}
}

/*
 * The watchdog: a foreground count that has not moved (no arrival, no
 * completion) for stale_ms lost a completion we never saw (an I/O issued
 * before we attached, a driver that remaps a bio in place to another
 * disk): reset it, count it, say so. Else lower *@wake_ns to when it would
 * be stale, so a count that sticks is found without any other event.
 */
static int fb_disk_watchdog(struct fb_disk *d, u64 now, u64 last_fg,
			    u64 *wake_ns)
{
	u64 stale = (u64)fb_conf(d, FB_CONF_STALE_MS) * NSEC_PER_MSEC;
	int fg = atomic_read(&d->fg_inflight);

	if (!fg)
		return 0;
	if (now - last_fg < stale) {
		*wake_ns = min(*wake_ns, last_fg + stale);
		return fg;
	}
	atomic_set(&d->fg_inflight, 0);
	atomic64_set(&d->idle_since_ns, now);
	fb_count(d, FB_STAT_FG_STALE_RESETS, 1);
	pr_warn_ratelimited("%s: foreground count %d did not move for %u ms: reset to 0\n",
			    d->name, fg, fb_conf(d, FB_CONF_STALE_MS));
	return 0;
}

/*
 * Caller holds d->lock. Pick the task to issue from and claim its next
 * block into @c; NULL and *@wake_ns lowered when nothing may go now.
 */
static struct fb_task *fb_pick(struct fb_disk *d, u64 now, struct fb_claim *c,
			       u64 *wake_ns)
{
	u64 last_fg = atomic64_read(&d->last_fg_ns);
	u64 idle_at = last_fg + fb_idle_window_ns(d);
	enum fb_reason r, best = FB_NOT_NOW;
	struct fb_task *t, *pick = NULL;
	struct fb_disk_gate g;
	u32 floor, ceiling;
	int fg;

	if (list_empty(&d->tasks))
		return NULL;	/* nothing to wake up for */
	fg = fb_disk_watchdog(d, now, last_fg, wake_ns);
	g.idle = !fg && now >= idle_at;
	g.gap_start = !fg && !g.idle && fb_gap_start_fits(d, now);
	if (!fg && !g.idle && !g.gap_start)
		*wake_ns = min(*wake_ns, idle_at);
	g.idle |= g.gap_start;
	if (atomic_read(&d->bg_pending) >= fb_conf(d, FB_CONF_DEPTH))
		return NULL;	/* a completion wakes us */
	fb_disk_rates(d, &floor, &ceiling);
	g.ceiling_ok = !ceiling || d->ceil_next_ns <= now;
	if (!g.ceiling_ok)
		*wake_ns = min(*wake_ns, d->ceil_next_ns);
	g.floor_due = floor && d->floor_due_ns <= now;
	if (floor && !g.floor_due && !g.idle)
		*wake_ns = min(*wake_ns, d->floor_due_ns);

	list_for_each_entry(t, &d->tasks, node) {
		r = fb_task_reason(t, now, &g, wake_ns);
		if (r > best) {
			best = r;
			pick = t;
		}
	}
	if (!pick)
		return NULL;
	fb_task_claim(pick, now, best, c);
	c->gap_start = best == FB_IDLE && g.gap_start;
	list_move_tail(&pick->node, &d->tasks);	/* round robin */
	kref_get(&pick->ref);
	atomic_inc(&d->bg_pending);
	return pick;
}

/* Caller holds d->lock: move tasks that are over to @reap. */
static void fb_collect_ended(struct fb_disk *d, struct list_head *reap)
{
	struct fb_task *t, *n;

	list_for_each_entry_safe(t, n, &d->tasks, node) {
		if (t->inflight)
			continue;
		if (t->state == FB_TASK_ACTIVE && t->done < t->nblocks)
			continue;
		if (t->state == FB_TASK_ACTIVE)
			t->result = 0;
		t->state = FB_TASK_ENDED;
		list_move_tail(&t->node, reap);
		WRITE_ONCE(d->nr_tasks, d->nr_tasks - 1);
	}
}

/*
 * A task of @owner has made its final callback and that has returned: the
 * last thing freeblock does for the client. The wake-up only hashes the
 * address; once the count is 0 the owner may be gone.
 */
static void fb_owner_put(struct fb_owner *owner)
{
	if (owner && atomic_dec_and_test(&owner->tasks))
		wake_up_var(&owner->tasks);
}

static void fb_finish(struct list_head *reap)
{
	struct fb_task *t, *n;

	list_for_each_entry_safe(t, n, reap, node) {
		list_del_init(&t->node);
		/*
		 * The id is freed only after the final callback: until then
		 * fb_abort() and fb_promote() on it find this ended task
		 * (-ENOENT), never another client's task that reused the id.
		 */
		t->callback(t->ctx, FB_LBN_END, NULL, t->result);
		xa_erase_bh(&fb_tasks, t->id);
		fb_owner_put(t->owner);
		fb_task_put(t);
	}
}

static void fb_disk_work(struct work_struct *work)
{
	struct fb_disk *d = container_of(work, struct fb_disk, work);
	LIST_HEAD(reap);
	struct fb_claim c;
	struct fb_task *t;
	u64 now, wake;
	void *buf;

	fb_disk_update_window(d);
	for (;;) {
		now = ktime_get_ns();
		wake = U64_MAX;
		spin_lock_bh(&d->lock);
		fb_collect_ended(d, &reap);
		t = fb_pick(d, now, &c, &wake);
		spin_unlock_bh(&d->lock);
		if (!t)
			break;

		buf = t->getbuffer(t->ctx, c.lbn, t->blksize);
		if (!buf) {
			/* only this worker claims blocks and charges rates */
			spin_lock_bh(&d->lock);
			fb_task_unclaim(t, now, &c);
			spin_unlock_bh(&d->lock);
			atomic_dec(&d->bg_pending);
			fb_task_put(t);
			continue;
		}
		if (c.gap_start)
			fb_count(d, FB_STAT_BG_ISSUED_GAP_START, 1);
		fb_count(d, c.why == FB_IDLE ? FB_STAT_BG_ISSUED_IDLE :
			    c.why == FB_FLOOR ? FB_STAT_BG_ISSUED_FLOOR :
						FB_STAT_BG_ISSUED_PROMOTED, 1);
		atomic64_set(&d->head_sector, get_start_sect(t->bdev) +
			     ((t->start + (c.lbn + 1) * t->blksize) >>
			      SECTOR_SHIFT));
		fb_submit(t, c.lbn, buf, c.why);
		cond_resched();
	}
	if (wake != U64_MAX)
		fb_disk_arm(d, wake);
	fb_finish(&reap);
}

/* --- Disks --------------------------------------------------------------- */

static unsigned int fb_nr_disks;	/* records, under fb_disks_lock */

/* Caller holds fb_disks_lock. A new record, on the list only. */
static struct fb_disk *fb_disk_alloc(const char *name)
{
	struct fb_disk *d;
	int i;

	if (fb_nr_disks >= FREEBLOCK_DISKS_MAX)
		return NULL;
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return NULL;
	strscpy(d->name, name, sizeof(d->name));
	for (i = 0; i < FB_CONF_NR; i++)
		d->conf[i] = FREEBLOCK_INHERIT;
	spin_lock_init(&d->lock);
	spin_lock_init(&d->timer_lock);
	spin_lock_init(&d->gap_lock);
	INIT_LIST_HEAD(&d->tasks);
	INIT_WORK(&d->work, fb_disk_work);
	hrtimer_init(&d->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	d->timer.function = fb_disk_timer_fn;
	atomic64_set(&d->last_fg_ns, ktime_get_ns());
	atomic64_set(&d->window_ns,
		     (u64)fb_conf(d, FB_CONF_IDLE_MAX_US) * NSEC_PER_USEC);
	list_add_tail(&d->node, &fb_disks);
	fb_nr_disks++;
	return d;
}

/* Caller holds fb_disks_lock. The record named @name, or NULL. */
static struct fb_disk *fb_disk_find_locked(const char *name)
{
	struct fb_disk *d;

	list_for_each_entry(d, &fb_disks, node)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

/*
 * The record of @disk, created on first use; a record that settings made
 * for the disk's name before freeblock met the disk is adopted.
 */
static struct fb_disk *fb_disk_get(struct gendisk *disk)
{
	struct fb_disk *d;

	mutex_lock(&fb_disks_lock);
	d = xa_load(&fb_disk_xa, disk_devt(disk));
	if (d)
		goto out;
	d = fb_disk_find_locked(disk->disk_name);
	if (!d || d->devt)
		d = fb_disk_alloc(disk->disk_name);
	if (!d)
		goto out;
	d->devt = disk_devt(disk);
	if (xa_err(xa_store(&fb_disk_xa, d->devt, d, GFP_KERNEL)))
		d->devt = 0;	/* stays a settings record; the caller fails */
	if (!d->devt)
		d = NULL;
out:
	mutex_unlock(&fb_disks_lock);
	return d;
}

/**
 * fb_disk_find() - the record of a disk by name
 * @name: the disk's name as in /sys/block ("vdb")
 *
 * Records live until rmmod. A disk that went away and came back under the
 * same name has a record per dev_t: the first one is found.
 * Context: process.
 * Return: the record, or NULL when freeblock never had a task or a setting
 * on a disk of that name.
 */
struct fb_disk *fb_disk_find(const char *name)
{
	struct fb_disk *d;

	mutex_lock(&fb_disks_lock);
	d = fb_disk_find_locked(name);
	mutex_unlock(&fb_disks_lock);
	return d;
}

/*
 * Caller holds fb_disks_lock. A record made for a name: if a disk of that
 * name is there now, its probes count from now on (the record is keyed by
 * the node's dev_t; a partition's name gives a record no probe finds, as
 * foreground counts on the whole disk).
 */
static void fb_disk_attach_by_name(struct fb_disk *d)
{
	char path[sizeof("/dev/") + DISK_NAME_LEN];
	dev_t devt;

	snprintf(path, sizeof(path), "/dev/%s", d->name);
	if (lookup_bdev(path, &devt) || xa_load(&fb_disk_xa, devt))
		return;
	if (!xa_err(xa_store(&fb_disk_xa, devt, d, GFP_KERNEL)))
		d->devt = devt;
}

/* A disk name as /sys/block shows one: printable, no '/', no space. */
static bool fb_disk_name_ok(const char *name)
{
	size_t n = strnlen(name, DISK_NAME_LEN);

	if (!n || n >= DISK_NAME_LEN || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	while (n--)
		if (!isgraph(name[n]) || name[n] == '/')
			return false;
	return true;
}

/**
 * fb_disk_set_conf() - set a disk's own tunables, all or none
 * @name: the disk's name as in /sys/block; a disk freeblock has no record
 *	of gets one, which its first task adopts
 * @val: FB_CONF_NR values: each a number in the range of the module
 *	parameter of the same name, or FREEBLOCK_INHERIT
 * @set: FB_CONF_NR flags: which of @val to apply
 * @bad: on -EINVAL, the enum fb_conf_id of the bad value, FB_CONF_NR for a
 *	floor above the ceiling, -1 for a bad name
 *
 * A changed floor or ceiling applies at once (the issuer rebases its slot
 * on the last block). Caller checks the permission (CAP_SYS_ADMIN).
 * Context: process, may sleep; takes fb_disks_lock.
 * Return: 0, -EINVAL, -ENOSPC (FREEBLOCK_DISKS_MAX records), -ENOMEM.
 */
int fb_disk_set_conf(const char *name, const u32 *val, const bool *set,
		     int *bad)
{
	u32 conf[FB_CONF_NR], floor, ceiling;
	struct fb_disk *d;
	int i, ret = 0;

	*bad = -1;
	if (!fb_disk_name_ok(name))
		return -EINVAL;
	for (i = 0; i < FB_CONF_NR; i++) {
		const struct fb_uint_param *p = fb_conf_params[i];

		if (set[i] && val[i] != FREEBLOCK_INHERIT &&
		    (val[i] < p->min || val[i] > p->max)) {
			*bad = i;
			return -EINVAL;
		}
	}
	mutex_lock(&fb_disks_lock);
	d = fb_disk_find_locked(name);
	for (i = 0; i < FB_CONF_NR; i++)
		conf[i] = set[i] ? val[i] : d ? d->conf[i] : FREEBLOCK_INHERIT;
	floor = conf[FB_CONF_FLOOR_KBPS] != FREEBLOCK_INHERIT ?
		conf[FB_CONF_FLOOR_KBPS] : READ_ONCE(fb_floor_kbps.val);
	ceiling = conf[FB_CONF_CEILING_KBPS] != FREEBLOCK_INHERIT ?
		  conf[FB_CONF_CEILING_KBPS] : READ_ONCE(fb_ceiling_kbps.val);
	if (floor && ceiling && floor > ceiling) {
		*bad = FB_CONF_NR;
		ret = -EINVAL;
		goto out;
	}
	if (!d) {
		d = fb_disk_alloc(name);
		if (!d) {
			ret = fb_nr_disks >= FREEBLOCK_DISKS_MAX ? -ENOSPC :
								  -ENOMEM;
			goto out;
		}
		fb_disk_attach_by_name(d);
	}
	for (i = 0; i < FB_CONF_NR; i++)
		WRITE_ONCE(d->conf[i], conf[i]);
	if (d->devt)
		queue_work(fb_wq, &d->work);
out:
	mutex_unlock(&fb_disks_lock);
	return ret;
}

/**
 * fb_disk_inject_fg() - test hook: foreground I/O that never completes
 * @name: the disk's name
 * @n: I/Os to add to the disk's foreground count
 *
 * As if @n completions were lost: the watchdog has to find the count
 * stuck (stale_ms) and reset it. Reached only through debugfs (root).
 * Context: process.
 * Return: 0, or -ENODEV when freeblock has no record of the disk.
 */
int fb_disk_inject_fg(const char *name, unsigned int n)
{
	struct fb_disk *d = fb_disk_find(name);

	if (!d)
		return -ENODEV;
	atomic64_set(&d->idle_since_ns, 0);
	atomic64_set(&d->last_fg_ns, ktime_get_ns());
	atomic_add(n, &d->fg_inflight);
	if (d->devt)
		queue_work(fb_wq, &d->work);
	return 0;
}

/**
 * fb_disk_full() - whether a new task on @bdev's disk would pass max_tasks
 * @bdev: the device (or partition)
 *
 * For a check before a client allocates what its task needs; the
 * registration checks again under the disk's lock (-EBUSY).
 * Context: any (the record is found by RCU and lives until rmmod).
 * Return: true when the disk has max_tasks tasks already.
 */
bool fb_disk_full(struct block_device *bdev)
{
	struct fb_disk *d = xa_load(&fb_disk_xa, disk_devt(bdev->bd_disk));

	return d && READ_ONCE(d->nr_tasks) >= READ_ONCE(fb_max_tasks.val);
}

/**
 * fb_disks_walk() - call @fn for every disk record
 * @fn: called with fb_disks_lock held (may sleep, must not register tasks)
 * @arg: passed to @fn
 *
 * Context: process.
 */
void fb_disks_walk(fb_disk_fn fn, void *arg)
{
	struct fb_disk *d;

	mutex_lock(&fb_disks_lock);
	list_for_each_entry(d, &fb_disks, node)
		fn(d, arg);
	mutex_unlock(&fb_disks_lock);
}

static const char *const fb_stat_names[FB_NR_STATS] = {
	[FB_STAT_TASKS] = "tasks",
	[FB_STAT_BLOCKS_DONE] = "blocks_done",
	[FB_STAT_BLOCKS_FAILED] = "blocks_failed",
	[FB_STAT_BYTES_DONE] = "bytes_done",
	[FB_STAT_IDLE_TIME_NS] = "idle_time_ns",
	[FB_STAT_FG_REQUESTS] = "fg_requests",
	[FB_STAT_FG_DELAYED] = "fg_delayed",
	[FB_STAT_BG_ISSUED_IDLE] = "bg_issued_idle",
	[FB_STAT_BG_ISSUED_FLOOR] = "bg_issued_floor",
	[FB_STAT_BG_ISSUED_PROMOTED] = "bg_issued_promoted",
	[FB_STAT_PROMOTIONS] = "promotions",
	[FB_STAT_ABORTS] = "aborts",
	[FB_STAT_BG_BIOS] = "bg_bios",
	[FB_STAT_BG_ISSUED_ANY_ORDER] = "bg_issued_any_order",
	[FB_STAT_FG_REQUEUES] = "fg_requeues",
	[FB_STAT_FG_REQUEUES_UNSTARTED] = "fg_requeues_unstarted",
	[FB_STAT_FG_STALE_RESETS] = "fg_stale_resets",
	[FB_STAT_FG_GAPS] = "fg_gaps",
	[FB_STAT_BG_ISSUED_GAP_START] = "bg_issued_gap_start",
	[FB_STAT_TASKS_ACTIVE] = "tasks_active",
	[FB_STAT_BG_INFLIGHT] = "bg_inflight",
	[FB_STAT_FG_INFLIGHT] = "fg_inflight",
	[FB_STAT_IDLE_WINDOW_US] = "idle_window_us",
	[FB_STAT_IDLE_HORIZON_US] = "idle_horizon_us",
	[FB_STAT_SERVICE_NS] = "service_ns",
	[FB_STAT_CONF_FIRST + FB_CONF_DEPTH] = "conf_depth",
	[FB_STAT_CONF_FIRST + FB_CONF_IDLE_MIN_US] = "conf_idle_min_us",
	[FB_STAT_CONF_FIRST + FB_CONF_IDLE_MAX_US] = "conf_idle_max_us",
	[FB_STAT_CONF_FIRST + FB_CONF_COLLIDE_PCT] = "conf_collide_pct",
	[FB_STAT_CONF_FIRST + FB_CONF_FLOOR_KBPS] = "conf_floor_kbps",
	[FB_STAT_CONF_FIRST + FB_CONF_CEILING_KBPS] = "conf_ceiling_kbps",
	[FB_STAT_CONF_FIRST + FB_CONF_STALE_MS] = "conf_stale_ms",
};

static_assert(FB_STAT_CONF_FIRST + FB_CONF_NR == FB_NR_STATS);

/**
 * fb_disk_collect_stats() - a snapshot of a disk's counters
 * @d: the disk
 * @st: FB_NR_STATS entries, filled in enum fb_stat_id order
 *
 * Context: any.
 * Return: the number filled (FB_NR_STATS).
 */
unsigned int fb_disk_collect_stats(struct fb_disk *d, struct mobio_stat *st)
{
	unsigned int i;

	for (i = 0; i < FB_NR_COUNTERS; i++)
		st[i].value = atomic64_read(&d->stats[i]);
	st[FB_STAT_TASKS_ACTIVE].value = READ_ONCE(d->nr_tasks);
	st[FB_STAT_BG_INFLIGHT].value = atomic_read(&d->bg_inflight);
	st[FB_STAT_FG_INFLIGHT].value = atomic_read(&d->fg_inflight);
	st[FB_STAT_IDLE_WINDOW_US].value = div_u64(fb_idle_window_ns(d),
						   NSEC_PER_USEC);
	st[FB_STAT_IDLE_HORIZON_US].value =
		div_u64(atomic64_read(&d->horizon_ns), NSEC_PER_USEC);
	st[FB_STAT_SERVICE_NS].value = fb_service_ns(d);
	for (i = 0; i < FB_CONF_NR; i++)
		st[FB_STAT_CONF_FIRST + i].value = fb_conf(d, i);
	for (i = 0; i < FB_NR_STATS; i++)
		st[i].name = fb_stat_names[i];
	return FB_NR_STATS;
}

/* --- The API ------------------------------------------------------------- */

static int fb_register(struct block_device *bdev, enum req_op op,
		       const struct fb_range *range, u32 blksize,
		       fb_callback_t callback, fb_getbuffer_t getbuffer,
		       void *ctx, const struct fb_opts *opts)
{
	const struct fb_rate *rate = opts ? &opts->rate : NULL;
	u32 flags = opts ? opts->flags : 0;
	struct fb_disk *d;
	struct fb_task *t;
	u64 size, len;
	int ret, id;

	if (!bdev || !range || !callback || !getbuffer)
		return -EINVAL;
	if (!is_power_of_2(blksize) || blksize < FB_BLKSIZE_MIN ||
	    blksize > FB_BLKSIZE_MAX ||
	    blksize % bdev_logical_block_size(bdev))
		return -EINVAL;
	size = bdev_nr_bytes(bdev);
	if (range->start % blksize || range->start >= size)
		return -EINVAL;
	len = min(range->len, size - range->start);
	if (len < blksize)
		return -EINVAL;
	if (rate && rate->floor_kbps && rate->ceiling_kbps &&
	    rate->floor_kbps > rate->ceiling_kbps)
		return -EINVAL;
	if (flags & ~FB_TASK_F_ALL)
		return -EINVAL;
	if ((flags & FB_TASK_F_SPECULATIVE) &&
	    div_u64(len, blksize) > FB_SPEC_BLOCKS_MAX)
		return -EINVAL;
	if (op == REQ_OP_WRITE && bdev_read_only(bdev))
		return -EROFS;
	if (READ_ONCE(fb_exiting))
		return -ENODEV;

	d = fb_disk_get(bdev->bd_disk);
	if (!d)
		return -ENOMEM;
	t = kzalloc(sizeof(*t), GFP_KERNEL_ACCOUNT);
	if (!t)
		return -ENOMEM;
	kref_init(&t->ref);
	INIT_LIST_HEAD(&t->node);
	t->disk = d;
	t->bdev = bdev;
	t->op = op;
	t->start = range->start;
	t->blksize = blksize;
	t->nblocks = div_u64(len, blksize);
	if (flags & FB_TASK_F_SPECULATIVE) {
		t->spec = true;
		/* at most FB_SPEC_BLOCKS_MAX bits: 2 MiB */
		t->issued = kvcalloc(BITS_TO_LONGS(t->nblocks),
				     sizeof(unsigned long), GFP_KERNEL_ACCOUNT);
		if (!t->issued) {
			kfree(t);
			return -ENOMEM;
		}
	}
	t->callback = callback;
	t->getbuffer = getbuffer;
	t->ctx = ctx;
	t->owner = opts ? opts->owner : NULL;
	if (rate) {
		t->floor_kbps = rate->floor_kbps;
		t->ceiling_kbps = rate->ceiling_kbps;
	}
	t->floor_due_ns = ktime_get_ns();
	if (t->floor_kbps)
		t->floor_due_ns += fb_block_ns(blksize, t->floor_kbps);

	ret = xa_alloc_cyclic_bh(&fb_tasks, &t->id, t, xa_limit_31b,
				 &fb_tasks_next, GFP_KERNEL);
	if (ret < 0) {
		fb_task_free(t);
		return ret;
	}
	/* Once on the list the task may end and be freed at any time. */
	id = t->id;
	spin_lock_bh(&d->lock);
	if (d->nr_tasks >= READ_ONCE(fb_max_tasks.val)) {
		spin_unlock_bh(&d->lock);
		xa_erase_bh(&fb_tasks, id);
		fb_task_free(t);
		return -EBUSY;
	}
	if (t->owner)
		atomic_inc(&t->owner->tasks);
	list_add_tail(&t->node, &d->tasks);
	WRITE_ONCE(d->nr_tasks, d->nr_tasks + 1);
	spin_unlock_bh(&d->lock);
	fb_count(d, FB_STAT_TASKS, 1);
	queue_work(fb_wq, &d->work);
	return id;
}

/* @rate as the options of a task without flags or owner. */
static const struct fb_opts *fb_rate_opts(const struct fb_rate *rate,
					  struct fb_opts *opts)
{
	if (!rate)
		return NULL;
	*opts = (struct fb_opts){ .rate = *rate };
	return opts;
}

/**
 * fb_read() - register a background read task
 * @bdev: the device (or partition) to read; the caller keeps it open
 *	until the task's final callback
 * @range: bytes to read: @range->start a multiple of @blksize, the range
 *	cut at the end of the device; a partial last block is not read
 * @blksize: bytes per block: a power of two, 512 to 1 MiB, a multiple of
 *	the device's logical block size
 * @callback: called once per block with its data (process context), then
 *	once with FB_LBN_END when the task has ended
 * @getbuffer: supplies each block's buffer just before it is issued
 * @ctx: passed to @callback and @getbuffer
 * @rate: rate floor and ceiling, or NULL for none
 *
 * Blocks are issued in ascending order, only when the disk is idle, the
 * floor is due, or the task was promoted; each is delivered exactly once.
 * fb_read_opts() takes flags as well (speculative tasks), and an owner:
 * without one nothing tells the caller when freeblock has returned from
 * its final callback, so @callback and @getbuffer must be code that is
 * never unloaded while freeblock runs (built in, or freeblock.ko's own).
 * The task's memory is charged to the caller's memory cgroup
 * (GFP_KERNEL_ACCOUNT).
 * Context: process, may sleep.
 * Return: the task id (> 0), or -EINVAL (bad arguments), -ENOMEM, -EBUSY
 * (max_tasks reached on the disk), -ENODEV (module unloading).
 */
int fb_read(struct block_device *bdev, const struct fb_range *range,
	    u32 blksize, fb_callback_t callback, fb_getbuffer_t getbuffer,
	    void *ctx, const struct fb_rate *rate)
{
	struct fb_opts opts;

	return fb_register(bdev, REQ_OP_READ, range, blksize, callback,
			   getbuffer, ctx, fb_rate_opts(rate, &opts));
}
EXPORT_SYMBOL_GPL(fb_read);

/**
 * fb_write() - register a background write task
 * @bdev: the device (or partition) to write; the caller keeps it open
 *	until the task's final callback
 * @range: bytes to write, as for fb_read()
 * @blksize: bytes per block, as for fb_read()
 * @callback: called once per block written (process context), then once
 *	with FB_LBN_END when the task has ended
 * @getbuffer: supplies each block's data just before it is issued (late
 *	binding: the data may change until then)
 * @ctx: passed to @callback and @getbuffer
 * @rate: rate floor and ceiling, or NULL for none
 *
 * No owner, as for fb_read(): a client in a module uses fb_write_opts().
 * Context: process, may sleep.
 * Return: the task id (> 0), or the errors of fb_read(), or -EROFS.
 */
int fb_write(struct block_device *bdev, const struct fb_range *range,
	     u32 blksize, fb_callback_t callback, fb_getbuffer_t getbuffer,
	     void *ctx, const struct fb_rate *rate)
{
	struct fb_opts opts;

	return fb_register(bdev, REQ_OP_WRITE, range, blksize, callback,
			   getbuffer, ctx, fb_rate_opts(rate, &opts));
}
EXPORT_SYMBOL_GPL(fb_write);

/**
 * fb_read_opts() - fb_read() with options: rate and flags
 * @bdev: the device (or partition) to read, as for fb_read()
 * @range: bytes to read, as for fb_read()
 * @blksize: bytes per block, as for fb_read()
 * @callback: as for fb_read()
 * @getbuffer: as for fb_read()
 * @ctx: passed to @callback and @getbuffer
 * @opts: rate floor and ceiling, FB_TASK_F_* flags and the owner; NULL
 *	for none
 *
 * With @opts->owner set, the task counts in it from now until its final
 * callback has returned (fb_owner_wait()). A client in a module that can
 * be unloaded sets it; the owner, @ctx, @bdev and the buffers must stay
 * valid until then, so its module exit aborts its tasks and calls
 * fb_owner_wait() before it frees them.
 * With FB_TASK_F_SPECULATIVE the blocks are issued in any order: each
 * time the task is picked, its unissued block nearest to where the disk
 * last worked (the end of the last foreground request, or of the last
 * background block) goes, so the work follows the foreground's locality;
 * without foreground I/O that is ascending order. Each block is still
 * delivered exactly once. Such a task keeps a bitmap of its blocks: at
 * most FB_SPEC_BLOCKS_MAX blocks.
 * Context: process, may sleep.
 * Return: the task id (> 0), or the errors of fb_read(); -EINVAL also for
 * an unknown flag or a speculative task over FB_SPEC_BLOCKS_MAX blocks,
 * -ENOMEM when its bitmap cannot be allocated.
 */
int fb_read_opts(struct block_device *bdev, const struct fb_range *range,
		 u32 blksize, fb_callback_t callback,
		 fb_getbuffer_t getbuffer, void *ctx,
		 const struct fb_opts *opts)
{
	return fb_register(bdev, REQ_OP_READ, range, blksize, callback,
			   getbuffer, ctx, opts);
}
EXPORT_SYMBOL_GPL(fb_read_opts);

/**
 * fb_write_opts() - fb_write() with options: rate and flags
 * @bdev: the device (or partition) to write, as for fb_write()
 * @range: bytes to write, as for fb_read()
 * @blksize: bytes per block, as for fb_read()
 * @callback: as for fb_write()
 * @getbuffer: as for fb_write(); for a speculative task it is asked for
 *	blocks in any order, and after it returned NULL for a block it is
 *	asked for that same block next
 * @ctx: passed to @callback and @getbuffer
 * @opts: as for fb_read_opts()
 *
 * Context: process, may sleep.
 * Return: the task id (> 0), or the errors of fb_read_opts(), or -EROFS.
 */
int fb_write_opts(struct block_device *bdev, const struct fb_range *range,
		  u32 blksize, fb_callback_t callback,
		  fb_getbuffer_t getbuffer, void *ctx,
		  const struct fb_opts *opts)
{
	return fb_register(bdev, REQ_OP_WRITE, range, blksize, callback,
			   getbuffer, ctx, opts);
}
EXPORT_SYMBOL_GPL(fb_write_opts);

/**
 * fb_abort() - stop a task
 * @id: the task
 *
 * No block is issued after this returns; blocks in flight complete and
 * are delivered, then the final callback comes with -ECANCELED. That
 * callback (or the one of a task that ended on its own: -ENOENT) may
 * still be running when this returns; fb_owner_wait() waits for it.
 * Context: process or softirq, not hardirq (the task and disk locks are
 * taken with bottom halves off); does not sleep.
 * Return: 0, or -ENOENT when no such task is running.
 */
int fb_abort(int id)
{
	struct fb_task *t = fb_task_get(id);
	bool ended;

	if (!t)
		return -ENOENT;
	spin_lock_bh(&t->disk->lock);
	ended = fb_task_end_locked(t, -ECANCELED);
	spin_unlock_bh(&t->disk->lock);
	queue_work(fb_wq, &t->disk->work);
	fb_task_put(t);
	return ended ? 0 : -ENOENT;
}
EXPORT_SYMBOL_GPL(fb_abort);

/**
 * fb_promote() - issue a task's blocks without waiting for idle time
 * @id: the task
 *
 * Its bios get best-effort priority; still at most `depth` in flight.
 * Context: process or softirq, not hardirq, as for fb_abort(); does not
 * sleep.
 * Return: 0, -EALREADY when already promoted, -ENOENT when no such task.
 */
int fb_promote(int id)
{
	struct fb_task *t = fb_task_get(id);
	int ret = 0;

	if (!t)
		return -ENOENT;
	spin_lock_bh(&t->disk->lock);
	if (t->state != FB_TASK_ACTIVE)
		ret = -ENOENT;
	else if (t->promoted)
		ret = -EALREADY;
	else
		t->promoted = true;
	spin_unlock_bh(&t->disk->lock);
	if (!ret) {
		fb_count(t->disk, FB_STAT_PROMOTIONS, 1);
		queue_work(fb_wq, &t->disk->work);
	}
	fb_task_put(t);
	return ret;
}
EXPORT_SYMBOL_GPL(fb_promote);

/**
 * fb_set_rate() - change a task's rate floor and ceiling
 * @id: the task
 * @rate: the new limits (0: none)
 *
 * Applies at once: the next block's time is one block at the new rate
 * after the task's last block (a raised ceiling does not wait out the
 * slot the old one had set).
 * Context: process or softirq, not hardirq, as for fb_abort(); does not
 * sleep.
 * Return: 0, -EINVAL (floor above ceiling), -ENOENT (no such task).
 */
int fb_set_rate(int id, const struct fb_rate *rate)
{
	struct fb_task *t;

	if (!rate || (rate->floor_kbps && rate->ceiling_kbps &&
		      rate->floor_kbps > rate->ceiling_kbps))
		return -EINVAL;
	t = fb_task_get(id);
	if (!t)
		return -ENOENT;
	spin_lock_bh(&t->disk->lock);
	t->floor_kbps = rate->floor_kbps;
	t->ceiling_kbps = rate->ceiling_kbps;
	/* from the last block, not from the slot the old rate had set */
	t->ceil_next_ns = fb_rate_rebase(t->last_claim_ns, t->blksize,
					 t->ceiling_kbps);
	if (t->floor_kbps)
		t->floor_due_ns = (t->last_claim_ns ?: ktime_get_ns()) +
				  fb_block_ns(t->blksize, t->floor_kbps);
	spin_unlock_bh(&t->disk->lock);
	queue_work(fb_wq, &t->disk->work);
	fb_task_put(t);
	return 0;
}
EXPORT_SYMBOL_GPL(fb_set_rate);

/**
 * fb_kick() - buffers are free again: retry a task at once
 * @id: the task whose getbuffer returned NULL
 *
 * Context: process or softirq, not hardirq, as for fb_abort(); does not
 * sleep.
 * Return: 0, or -ENOENT when no such task.
 */
int fb_kick(int id)
{
	struct fb_task *t = fb_task_get(id);

	if (!t)
		return -ENOENT;
	spin_lock_bh(&t->disk->lock);
	t->stall_until_ns = 0;
	spin_unlock_bh(&t->disk->lock);
	queue_work(fb_wq, &t->disk->work);
	fb_task_put(t);
	return 0;
}
EXPORT_SYMBOL_GPL(fb_kick);

/* --- Module -------------------------------------------------------------- */

/* rmmod: end every task and wait until each has had its final callback. */
static void fb_abort_all(void)
{
	struct fb_task *t;
	unsigned long id;

	WRITE_ONCE(fb_exiting, true);
	xa_for_each(&fb_tasks, id, t)
		fb_abort(id);
	while (!xa_empty(&fb_tasks)) {
		flush_workqueue(fb_wq);
		msleep(20);
	}
}

static void fb_disks_free(void)
{
	struct fb_disk *d, *n;

	/*
	 * No task is left and the probes are gone: the work arms the timer
	 * only for tasks, the timer only queues the work.
	 */
	list_for_each_entry_safe(d, n, &fb_disks, node) {
		cancel_work_sync(&d->work);
		hrtimer_cancel(&d->timer);
		cancel_work_sync(&d->work);
		if (d->devt)
			xa_erase(&fb_disk_xa, d->devt);
		list_del(&d->node);
		fb_nr_disks--;
		kfree(d);
	}
}

static int __init fb_init(void)
{
	int ret;

	fb_wq = alloc_workqueue("freeblock", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!fb_wq)
		return -ENOMEM;
	ret = fb_probes_register();
	if (ret)
		goto err_wq;
	ret = fb_genl_init();
	if (ret)
		goto err_probes;
	ret = fb_cdev_init();
	if (ret)
		goto err_genl;
	fb_debugfs_init();
	return 0;

err_genl:
	fb_genl_exit();
err_probes:
	fb_probes_unregister(ARRAY_SIZE(fb_probes));
err_wq:
	destroy_workqueue(fb_wq);
	return ret;
}

static void __exit fb_exit(void)
{
	fb_debugfs_exit();
	fb_cdev_exit();
	fb_genl_exit();
	fb_abort_all();
	fb_probes_unregister(ARRAY_SIZE(fb_probes));
	fb_disks_free();
	destroy_workqueue(fb_wq);
}

module_init(fb_init);
module_exit(fb_exit);

MODULE_DESCRIPTION("Freeblock: background I/O issued in the foreground's idle time");
MODULE_LICENSE("GPL");
