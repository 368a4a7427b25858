// SPDX-License-Identifier: GPL-2.0-only
/*
 * SmartIO: a blk-mq I/O scheduler that keeps reads from waiting behind
 * writes (after SmartIO, MobiSys'15). Requests are queued per I/O priority
 * class (real-time, best-effort, idle) and, within a class, reads and writes
 * in separate queues. Reads go first. While reads are active (one in
 * flight, or one seen within read_idle_us), writes go at a byte rate (a
 * token bucket) and at most write_cap of them are in flight; otherwise only
 * the cap holds them. Writes get at least write_budget_kb every
 * write_expire_ms: a write past its deadline goes ahead of reads while that
 * floor allows, which bounds write starvation. The idle class goes only
 * when the other classes have been quiet for idle_grace_ms, one request at
 * a time, and at least one request every idle_expire_ms.
 *
 * Reads of the foreground app (tasks in the cgroup v2 fg_cgroup names, or
 * below it) have a queue of their own that goes first within their class;
 * while they are active, other reads are kept to bg_read_cap in flight.
 *
 * Nothing polls: a held request makes has_work() false until the time
 * smartio_gate.h computes for it (or until a completion or an insertion),
 * and an hrtimer runs the queue at that time.
 *
 * The controller (smartio_ctl.h) sets the write rate once a window from
 * the window's read slowdown: its reads' summed latency, each measured from
 * the moment it reaches the head of the reads (its insertion, or the
 * dispatch of the read before it; for a read held for bg_read_cap, its
 * dispatch) to its completion, over the sum of the mean latencies of reads
 * of their size classes that ran with no write around. Waiting in the
 * scheduler behind other reads does not count, a device kept busy by writes
 * does, and a window of large reads is not taken for a slow one; waiting in
 * the device behind other reads counts in both, and is why a window with
 * no write queued or on the device leaves the rate alone. A baseline no
 * reads alone moved for a second is corrected by windows whose reads beat
 * it (smartio_baseline_stale_next()): one learnt beside a burst of large
 * reads would otherwise make a writer's reads look unslowed for as long
 * as the writes leave no read alone. The target is
 * target_slowdown_pct. Until a size class has reads alone, its fastest
 * read stands in for them; a window with reads of a class that has no
 * baseline makes the next one cold: writes beside reads wait for their
 * deadline and the floor, so that reads run alone (for at most
 * SMARTIO_COLD_WINDOWS windows with writes per class, a second at the
 * default window: smartio_cold_next()). Without it, reads that met
 * writes from the first request on gave a slow stand-in, a lenient
 * controller and no read alone to correct it.
 * read_lat_target_us, when set, holds a
 * percentile (read_lat_pct, default 90) of read latency instead. A
 * proportional-integral rule on the logarithm of the rate moves it toward
 * the target, between the floor and write_rate_kbps.
 *
 * Counters: /sys/kernel/debug/block/<dev>/sched/stats and the "smartio"
 * generic netlink family (<linux/smartio.h>). Decisions: the smartio
 * tracepoints. Tunables: /sys/block/<dev>/queue/iosched/.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/bio.h>
#include <linux/cgroup.h>
#include <linux/hrtimer.h>
#include <linux/ioprio.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rbtree.h>
#include <linux/sbitmap.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "elevator.h"
#include "blk.h"
#include "blk-mq.h"
#include "blk-mq-debugfs.h"
#include "blk-mq-sched.h"

#include "mobio_compat.h"
#include "mobio_genl.h"
#include "smartio_ctl.h"
#include "smartio_gate.h"
#include <linux/smartio.h>

/* I/O priority classes, the first level of queues; highest first. */
enum smartio_class {
	SMARTIO_RT,
	SMARTIO_BE,
	SMARTIO_IDLE,
	SMARTIO_NR_CLASSES,
};

/* Directions, the second level; discards are writes. */
enum smartio_dir {
	SMARTIO_READ,
	SMARTIO_WRITE,
	SMARTIO_NR_DIRS,
};

/* Why a request left the scheduler (tracepoint smartio_dispatch). */
enum smartio_why {
	SMARTIO_WHY_HEAD,		/* inserted at head: requeue */
	SMARTIO_WHY_EXPIRED,		/* its deadline passed */
	SMARTIO_WHY_FG_READ,		/* the foreground app's read first */
	SMARTIO_WHY_READ,		/* reads first */
	SMARTIO_WHY_WRITE,		/* a write let through beside reads */
	SMARTIO_WHY_WRITE_ALONE,	/* a write with no read around */
	SMARTIO_WHY_IDLE,		/* idle class, the others quiet */
	SMARTIO_WHY_IDLE_GUARD,		/* idle class, its starvation guard */
};

#define CREATE_TRACE_POINTS
#include "smartio_trace.h"

/* ionice classes to queues: no class set means best-effort, as in CFQ. */
static const enum smartio_class smartio_ioprio_class[] = {
	[IOPRIO_CLASS_NONE]	= SMARTIO_BE,
	[IOPRIO_CLASS_RT]	= SMARTIO_RT,
	[IOPRIO_CLASS_BE]	= SMARTIO_BE,
	[IOPRIO_CLASS_IDLE]	= SMARTIO_IDLE,
};

static const char *const smartio_class_name[] = {
	[SMARTIO_RT]	= "rt",
	[SMARTIO_BE]	= "be",
	[SMARTIO_IDLE]	= "idle",
};

static const char *const smartio_dir_name[] = {
	[SMARTIO_READ]	= "read",
	[SMARTIO_WRITE]	= "write",
};

/*
 * Deadlines: a read should never wait long for the device (100 ms is far
 * beyond any read the controller lets writes delay); a write past half a
 * second goes ahead of reads within the write floor.
 */
static const unsigned int smartio_expire_ms[] = {
	[SMARTIO_READ]	= 100,
	[SMARTIO_WRITE]	= 500,
};

/*
 * Defaults of the write throttle and the controller. A read slowdown of
 * 110%: a window's reads take together a tenth longer than alone. Held
 * on the mean (runs H6 and H7 of the start-up bench, docs/results.md),
 * start-ups beside a writer were 1.11-1.19x their time alone, bfq's
 * 1.66-2.31x; held on each read's p90 (the signal before), 105-115% had
 * kept them near their time alone in one-boot sweeps and 130%, the seed's
 * aim, had not (1.21-1.26x). Writes keep at least the floor. 100 ms
 * windows hold dozens of reads on a phone's flash.
 * Reads stay active for 100 ms after the last one: a start-up pauses
 * between its reads while it computes, and every pause longer than
 * read_idle_us lets writes go unthrottled, up to write_cap in flight, for
 * the next read to wait behind. Traced (startup.trace=1): cold start-ups of
 * python3, sqlite3 and gdb paused more than 20 ms 96-154 times in 10 s and
 * more than 80 ms 9-30 times; at 20 ms all of a writer's bytes went in
 * such pauses.
 */
#define SMARTIO_WRITE_CAP		16U
#define SMARTIO_TARGET_PCT		110U
#define SMARTIO_WINDOW_MS		100U
#define SMARTIO_READ_IDLE_US		(100U * USEC_PER_MSEC)
/*
 * The write floor: 512 KiB every write_expire_ms (500 ms), 1 MiB/s, is 2-6%
 * of a phone's flash write bandwidth and keeps an fsync of a few pages
 * under a second beside any read load.
 */
#define SMARTIO_WRITE_BUDGET_KB		512U
/* The percentile of read latency held against read_lat_target_us. */
#define SMARTIO_READ_PCT		90U
/* Reads of a size class alone before their mean moves its baseline. */
#define SMARTIO_BASELINE_SAMPLES	32U
/* The rate's ceiling when write_rate_kbps is 0: no limit in practice. */
#define SMARTIO_RATE_MAX		(64ULL << 30)
/* The token bucket holds 10 ms of the rate (one write at least goes). */
#define SMARTIO_BURST_DIV		100U
/*
 * The idle class: 20 ms of quiet is longer than a foreground app's think
 * time between requests on flash; one request every 500 ms when starved
 * (BFQ serves a starved idle class every 200 ms) costs the others little.
 */
#define SMARTIO_IDLE_GRACE_MS		20U
#define SMARTIO_IDLE_EXPIRE_MS		500U
/*
 * Other reads in flight beside the foreground app's: a foreground read
 * finds a free tag and at most this many reads ahead of it in the device.
 */
#define SMARTIO_BG_READ_CAP		4U
/* Timer slack of the queue kick: holds are milliseconds long. */
#define SMARTIO_KICK_SLACK_NS		(50ULL * NSEC_PER_USEC)
/*
 * Beside reads, a write request stops growing by merges at this size: one
 * read waits behind a whole write, and plugging makes 1 MiB of 128 KiB
 * writes (64 ms on a 16 MiB/s device) whatever the cap says.
 */
#define SMARTIO_WRITE_MERGE_KB		128U
/* Writes may take 75% of the scheduler tags; the rest stay for reads. */
#define SMARTIO_ASYNC_PCT		75U

/* rq->elv.priv[0]: the request's state in the scheduler, as flags. */
#define SMARTIO_RQ_QUEUED	BIT(0)	/* counted in inserted */
#define SMARTIO_RQ_INFLIGHT	BIT(1)	/* dispatched, counted in inflight */
#define SMARTIO_RQ_ALONE	BIT(2)	/* a read dispatched with no write */
#define SMARTIO_RQ_IDLE		BIT(4)	/* idle class, counted in idle_inflight */
#define SMARTIO_RQ_FG		BIT(5)	/* allocated by a foreground task */
#define SMARTIO_RQ_BG_HELD	BIT(6)	/* a read held for bg_read_cap */
/* From a read's dispatch: its size class (smartio_size_class()). */
#define SMARTIO_RQ_SIZE_SHIFT	8
#define SMARTIO_RQ_SIZE_MASK	(0x7UL << SMARTIO_RQ_SIZE_SHIFT)
/*
 * rq->elv.priv[1]: insertion time, ns; from a read's dispatch, when its
 * latency started (smartio_start_request()). rq->fifo_time: deadline, ns;
 * from a read's dispatch, the dispatch time.
 */

/* One queue: a class and a direction. */
struct smartio_queue {
	struct list_head fifo;		/* by arrival, for deadlines */
	struct rb_root sort;		/* by sector, for front merges */
};

/* Counters, under smartio_data.lock; see <linux/smartio.h>. */
struct smartio_counters {
	u64 dispatched[SMARTIO_NR_CLASSES][SMARTIO_NR_DIRS];
	u64 merged[SMARTIO_NR_CLASSES][SMARTIO_NR_DIRS];
	u64 expired[SMARTIO_NR_CLASSES][SMARTIO_NR_DIRS];
	u64 inserted;
	u64 requeued;
	u64 write_held;
	u64 adjusts;
	u64 windows;
	u64 baseline_stale_fixes;
	u64 cold_windows;
	u64 dispatch_empty;
	u64 queue_kicks;
	u64 idle_guard;
	u64 dispatched_fg_read;
	u64 bg_read_held;
};

/* One per request queue using smartio. */
struct smartio_data {
	struct request_queue *q;
	dev_t dev;
	char disk_name[DISK_NAME_LEN];
	struct list_head node;		/* in smartio_instances */

	/* lock protects everything below it, and the requests it queues */
	spinlock_t lock;
	struct list_head dispatch;	/* inserted at head: go first */
	struct smartio_queue queues[SMARTIO_NR_CLASSES][SMARTIO_NR_DIRS];
	struct smartio_queue fg_reads[SMARTIO_NR_CLASSES];
	unsigned int nr_queued;		/* on dispatch and the queues */
	unsigned int inflight[SMARTIO_NR_DIRS];
	/*
	 * has_work() is false before ready_ns (SMARTIO_NEVER: until an
	 * event); the last dispatch that found nothing to do set it, and
	 * every insertion or completion that may free a request clears it.
	 */
	u64 ready_ns;

	/* idle class */
	unsigned int idle_inflight;
	u64 last_busy_ns;		/* rt/be insertion or completion */
	u64 last_idle_ns;		/* dispatch of the last idle request */

	/* the foreground app's reads */
	unsigned int fg_inflight;
	u64 last_fg_ns;			/* its insertion or completion */
	bool bg_held;			/* the last pick held another read */

	/* writes */
	u64 last_write_ns;		/* dispatch of the last write */
	u64 last_write_done_ns;		/* completion of the last write */
	u64 last_read_ns;		/* insert or completion of a read */
	struct smartio_bucket bucket;	/* at the rate, while reads are active */
	struct smartio_bucket floor;	/* at the floor, for writes past due */

	/* the controller (smartio_ctl.h) */
	struct smartio_ctl ctl;
	struct smartio_lat_hist win;	/* read latencies of this window */
	struct smartio_read_sums win_sums;	/* and against their baselines */
	/* per size class: reads with no write around, their summed latency */
	u64 alone_ns[SMARTIO_SIZE_CLASSES];
	unsigned int alone_n[SMARTIO_SIZE_CLASSES];
	u64 baseline_ns[SMARTIO_SIZE_CLASSES];	/* their mean, 0: none */
	u64 baseline_at_ns[SMARTIO_SIZE_CLASSES];	/* its last batch */
	u64 fastest_ns[SMARTIO_SIZE_CLASSES];	/* lowest latency, 0: none */
	/* writes beside reads wait for a baseline (smartio_cold_next()) */
	bool cold;
	unsigned int cold_windows[SMARTIO_SIZE_CLASSES];
	/* per size class: this window's reads, writes around or not */
	u64 win_class_ns[SMARTIO_SIZE_CLASSES];
	unsigned int win_class_n[SMARTIO_SIZE_CLASSES];
	u64 win_start_ns;
	u64 win_write_bytes;		/* writes dispatched in the window */
	bool win_writes;		/* a write queued or on the device in it */
	u64 read_head_ns;		/* dispatch of the last read */
	/* the last window (0: no read) and what was held */
	u64 read_pct_ns;		/* percentile of latency */
	u64 slowdown;			/* SMARTIO_SLOWDOWN_ONE: 1 */
	u64 target_ns;			/* latency target, 0: held slowdown */
	u64 target_slow;		/* slowdown target, 0: held latency */
	struct smartio_counters stats;

	/* tunables (sysfs); read without the lock */
	unsigned int expire_ms[SMARTIO_NR_DIRS];
	unsigned int write_cap;
	unsigned int controller;
	unsigned int target_pct;
	unsigned int read_lat_target_us;	/* 0: hold target_pct */
	unsigned int read_pct;		/* the percentile held */
	unsigned int write_rate_kbps;	/* the rate off, its ceiling on */
	unsigned int write_budget_kb;	/* per write_expire_ms: the floor */
	unsigned int window_ms;
	unsigned int read_idle_us;
	unsigned int write_merge_kb;	/* 0: no limit */
	unsigned int idle_grace_ms;
	unsigned int idle_expire_ms;
	unsigned int bg_read_cap;
	/* fg_cgroup: a reference, set under the elevator's sysfs_lock */
	struct cgroup __rcu *fg_cgrp;
	char *fg_path;			/* as written, for show; NULL: none */

	unsigned int async_depth;	/* limit_depth() for writes */
	struct hrtimer kick;		/* runs the queue when a hold ends */
};

/* Every smartio_data, for the genl family; under smartio_instances_lock. */
static LIST_HEAD(smartio_instances);
static DEFINE_MUTEX(smartio_instances_lock);

/* --- Requests ------------------------------------------------------------ */

static enum smartio_class smartio_rq_class(struct request *rq)
{
	return smartio_ioprio_class[IOPRIO_PRIO_CLASS(req_get_ioprio(rq))];
}

static enum smartio_dir smartio_rq_dir(struct request *rq)
{
	return op_is_write(req_op(rq)) ? SMARTIO_WRITE : SMARTIO_READ;
}

static unsigned long smartio_rq_flags(struct request *rq)
{
	return (unsigned long)rq->elv.priv[0];
}

static void smartio_rq_set_flags(struct request *rq, unsigned long flags)
{
	rq->elv.priv[0] = (void *)flags;
}

static u64 smartio_rq_inserted_ns(struct request *rq)
{
	return (u64)(uintptr_t)rq->elv.priv[1];
}

/*
 * A foreground read: allocated by a task of fg_cgroup. A request cached by
 * a plug may be reused for a write: the flag counts for reads only.
 */
static bool smartio_rq_fg(struct request *rq)
{
	return (smartio_rq_flags(rq) & SMARTIO_RQ_FG) &&
	       smartio_rq_dir(rq) == SMARTIO_READ;
}

static struct smartio_queue *smartio_rq_queue(struct smartio_data *sd,
					      struct request *rq)
{
	if (smartio_rq_fg(rq))
		return &sd->fg_reads[smartio_rq_class(rq)];
	return &sd->queues[smartio_rq_class(rq)][smartio_rq_dir(rq)];
}

/*
 * Whether the current task is in fg_cgroup or below it. Called where blk-mq
 * allocates a request, in the submitter's context; any context, RCU inside.
 */
static bool smartio_current_fg(struct smartio_data *sd)
{
	struct cgroup *fg;
	bool ret = false;

	rcu_read_lock();
	fg = rcu_dereference(sd->fg_cgrp);
	if (fg)
		ret = cgroup_is_descendant(task_dfl_cgroup(current), fg);
	rcu_read_unlock();
	return ret;
}

/* Take @rq off the queues, the merge hash and last_merge. */
static void smartio_remove_request(struct smartio_data *sd,
				   struct request *rq)
{
	struct request_queue *q = sd->q;

	lockdep_assert_held(&sd->lock);
	/* A request merged away at insertion was never queued. */
	if (!list_empty(&rq->queuelist)) {
		list_del_init(&rq->queuelist);
		sd->nr_queued--;
	}
	if (!RB_EMPTY_NODE(&rq->rb_node))
		elv_rb_del(&smartio_rq_queue(sd, rq)->sort, rq);
	elv_rqhash_del(q, rq);
	if (q->last_merge == rq)
		q->last_merge = NULL;
}

/* --- Controller ---------------------------------------------------------- */

/* Reads are active: one in flight, or one seen within read_idle_us. */
static bool smartio_reads_active(struct smartio_data *sd, u64 now)
{
	u64 last = READ_ONCE(sd->last_read_ns);

	if (READ_ONCE(sd->inflight[SMARTIO_READ]))
		return true;
	return last && now - last < (u64)READ_ONCE(sd->read_idle_us) *
				    NSEC_PER_USEC;
}

/* The floor: write_budget_kb per write_expire_ms, bytes/s (> 0). */
static u64 smartio_floor_rate(struct smartio_data *sd)
{
	u64 budget = (u64)READ_ONCE(sd->write_budget_kb) * SZ_1K;

	return max(1ULL, div_u64(budget * MSEC_PER_SEC,
				 READ_ONCE(sd->expire_ms[SMARTIO_WRITE])));
}

/* write_rate_kbps in bytes/s; 0 when it is 0 (no limit). */
static u64 smartio_rate_tunable(struct smartio_data *sd)
{
	return (u64)READ_ONCE(sd->write_rate_kbps) * SZ_1K;
}

/*
 * The rate writes go at beside active reads, bytes/s: the controller's
 * (never below the floor), or write_rate_kbps with the controller off;
 * 0: no limit. Past-due writes may add up to the floor on top
 * (smartio_floor_ready()).
 */
static u64 smartio_write_rate(struct smartio_data *sd)
{
	if (READ_ONCE(sd->controller))
		return max(sd->ctl.rate, smartio_floor_rate(sd));
	return smartio_rate_tunable(sd);
}

/* The controller holds the read slowdown, the one that needs baselines. */
static bool smartio_holds_slowdown(struct smartio_data *sd)
{
	return READ_ONCE(sd->controller) && !READ_ONCE(sd->read_lat_target_us);
}

/*
 * A size class with reads has no baseline yet, and the controller needs one
 * (smartio_cold_next()): writes beside reads wait for their deadline.
 */
static bool smartio_cold(struct smartio_data *sd)
{
	return sd->cold && smartio_holds_slowdown(sd);
}

static u64 smartio_burst(u64 rate)
{
	return div_u64(rate, SMARTIO_BURST_DIV);
}

/* A slowdown (smartio_slowdown()) in percent, rounded. */
static u64 smartio_slow_to_pct(u64 slow)
{
	return div_u64(slow * 100 + SMARTIO_SLOWDOWN_ONE / 2,
		       SMARTIO_SLOWDOWN_ONE);
}

static void smartio_trace_control(struct smartio_data *sd)
{
	trace_smartio_control(sd->dev, div_u64(sd->read_pct_ns, NSEC_PER_USEC),
			      smartio_slow_to_pct(sd->slowdown),
			      smartio_slow_to_pct(sd->target_slow),
			      div_u64(sd->target_ns, NSEC_PER_USEC),
			      div_u64(smartio_write_rate(sd), SZ_1K));
}

/*
 * A size class's baseline at the end of a window (@now): from its reads
 * alone, once it has enough of them; else, when no batch has moved it for
 * SMARTIO_BASELINE_STALE_NS, from the window's reads if they beat it
 * (smartio_baseline_stale_next()). sd->lock held.
 */
static void smartio_baseline_update(struct smartio_data *sd, unsigned int c,
				    u64 now)
{
	u64 base = sd->baseline_ns[c], mean;
	unsigned int n = sd->win_class_n[c];

	if (sd->alone_n[c] >= SMARTIO_BASELINE_SAMPLES) {
		mean = div_u64(sd->alone_ns[c], sd->alone_n[c]);
		sd->baseline_ns[c] = smartio_baseline_next(base, mean);
		sd->baseline_at_ns[c] = now;
		sd->alone_ns[c] = 0;
		sd->alone_n[c] = 0;
	} else if (n && now - sd->baseline_at_ns[c] >=
		   SMARTIO_BASELINE_STALE_NS) {
		mean = div_u64(sd->win_class_ns[c], n);
		sd->baseline_ns[c] = smartio_baseline_stale_next(base, mean, n);
		if (sd->baseline_ns[c] != base)
			sd->stats.baseline_stale_fixes++;
	}
}

/*
 * A write on the queues or on the device: at a window's start, what makes it
 * a window with writes before any is inserted (insertion sets the rest).
 * sd->lock held.
 */
static bool smartio_writes_pending(struct smartio_data *sd)
{
	unsigned int c;

	if (sd->inflight[SMARTIO_WRITE])
		return true;
	for (c = 0; c < SMARTIO_NR_CLASSES; c++)
		if (!list_empty(&sd->queues[c][SMARTIO_WRITE].fifo))
			return true;
	return false;
}

/*
 * End of a window at @now: its percentile of read latency, its slowdown,
 * the baselines, and (the controller on) the rate for the next window.
 * sd->lock held.
 */
static void smartio_window_end(struct smartio_data *sd, u64 now)
{
	u64 fixed = (u64)READ_ONCE(sd->read_lat_target_us) * NSEC_PER_USEC;
	u64 ceiling = smartio_rate_tunable(sd) ?: SMARTIO_RATE_MAX;
	u64 floor = smartio_floor_rate(sd), old_rate;
	unsigned int pct = READ_ONCE(sd->read_pct), c;
	struct smartio_ctl_window w = {
		.write_bytes = sd->win_write_bytes,
		.writes = sd->win_writes,
		.window_ns = max(now - sd->win_start_ns, 1ULL),
		.floor = floor,
		.ceiling = max(ceiling, floor),
	};

	sd->stats.windows++;
	sd->read_pct_ns = smartio_lat_pct(&sd->win, pct);
	sd->slowdown = smartio_slowdown(&sd->win_sums);
	for (c = 0; c < SMARTIO_SIZE_CLASSES; c++)
		smartio_baseline_update(sd, c, now);
	if (smartio_cold(sd))
		sd->stats.cold_windows++;
	if (smartio_holds_slowdown(sd))
		sd->cold = smartio_cold_next(sd->baseline_ns, sd->win_class_n,
					     sd->cold_windows, sd->win_writes,
					     SMARTIO_SIZE_CLASSES);
	else
		sd->cold = false;
	memset(sd->win_class_ns, 0, sizeof(sd->win_class_ns));
	memset(sd->win_class_n, 0, sizeof(sd->win_class_n));
	if (fixed) {
		sd->target_ns = fixed;
		sd->target_slow = 0;
		w.read = sd->read_pct_ns;
		w.target = fixed;
	} else {
		sd->target_ns = 0;
		sd->target_slow = div_u64(SMARTIO_SLOWDOWN_ONE *
					  READ_ONCE(sd->target_pct), 100);
		w.read = sd->slowdown;
		w.target = sd->target_slow;
	}
	old_rate = smartio_write_rate(sd);
	if (READ_ONCE(sd->controller) && smartio_ctl_update(&sd->ctl, &w)) {
		/* the time so far counts at the old rate */
		if (old_rate)
			smartio_bucket_sync(&sd->bucket, old_rate,
					    smartio_burst(old_rate), now);
		sd->stats.adjusts++;
	}
	smartio_trace_control(sd);
	memset(&sd->win, 0, sizeof(sd->win));
	sd->win_sums = (struct smartio_read_sums){ };
	sd->win_write_bytes = 0;
	sd->win_writes = smartio_writes_pending(sd);
	sd->win_start_ns = now;
}

/*
 * A read completed at @now: one latency sample, and its slowdown over its
 * size class alone, but for the idle class, whose reads wait for quiet on
 * purpose. sd->lock held.
 */
static void smartio_read_done(struct smartio_data *sd, struct request *rq,
			      unsigned long flags, u64 now)
{
	u64 lat = max(now - smartio_rq_inserted_ns(rq), 1ULL);
	unsigned int c = (flags & SMARTIO_RQ_SIZE_MASK) >>
			 SMARTIO_RQ_SIZE_SHIFT;

	sd->last_read_ns = now;
	if (flags & SMARTIO_RQ_IDLE)
		return;
	smartio_lat_add(&sd->win, lat);
	if (!sd->fastest_ns[c] || lat < sd->fastest_ns[c])
		sd->fastest_ns[c] = lat;
	smartio_read_sums_add(&sd->win_sums, lat,
			      sd->baseline_ns[c] ?: sd->fastest_ns[c]);
	sd->win_class_ns[c] += min_t(u64, lat, SMARTIO_LAT_MAX_NS);
	sd->win_class_n[c]++;
	/* alone at dispatch, and no write went while it was on the device */
	if ((flags & SMARTIO_RQ_ALONE) && sd->last_write_ns < rq->fifo_time) {
		sd->alone_ns[c] += min_t(u64, lat, SMARTIO_LAT_MAX_NS);
		sd->alone_n[c]++;
	}
	if (now - sd->win_start_ns >=
	    (u64)READ_ONCE(sd->window_ms) * NSEC_PER_MSEC)
		smartio_window_end(sd, now);
}

/* --- Dispatch ------------------------------------------------------------ */

/* When the rate lets the next write go (now or earlier: it may). */
static u64 smartio_bucket_ready(struct smartio_data *sd, u64 now)
{
	u64 rate = smartio_write_rate(sd);

	if (smartio_cold(sd))
		return SMARTIO_NEVER;
	if (!rate)
		return now;
	return smartio_bucket_ready_ns(&sd->bucket, rate, now);
}

/*
 * When the next write may go beside reads (smartio_write_ready_ns());
 * *@alone: whether reads are inactive now.
 */
static u64 smartio_write_ready(struct smartio_data *sd, u64 now, bool *alone)
{
	struct smartio_write_state st = {
		.now = now,
		.reads_inflight = sd->inflight[SMARTIO_READ],
		.writes_inflight = sd->inflight[SMARTIO_WRITE],
		.last_read_ns = sd->last_read_ns,
		.read_idle_ns = (u64)READ_ONCE(sd->read_idle_us) *
				NSEC_PER_USEC,
		.cap = READ_ONCE(sd->write_cap),
		.bucket_ready_ns = smartio_bucket_ready(sd, now),
	};

	return smartio_write_ready_ns(&st, alone);
}

/* A write of @bytes went at @now: both buckets pay for it. */
static void smartio_charge_write(struct smartio_data *sd, u64 now,
				 unsigned int bytes)
{
	u64 rate = smartio_write_rate(sd), floor = smartio_floor_rate(sd);

	sd->last_write_ns = now;
	sd->win_write_bytes += bytes;
	if (rate)
		smartio_bucket_charge(&sd->bucket, rate, smartio_burst(rate),
				      now, bytes);
	smartio_bucket_charge(&sd->floor, floor,
			      (u64)READ_ONCE(sd->write_budget_kb) * SZ_1K,
			      now, bytes);
}

static struct request *smartio_fifo_first(struct smartio_data *sd,
					  unsigned int c, unsigned int d)
{
	struct list_head *fifo = &sd->queues[c][d].fifo;

	return list_first_entry_or_null(fifo, struct request, queuelist);
}

static struct request *smartio_fg_first(struct smartio_data *sd,
					unsigned int c)
{
	return list_first_entry_or_null(&sd->fg_reads[c].fifo, struct request,
					queuelist);
}

/* When the next read of another app may go (smartio_bg_read_ready_ns()). */
static u64 smartio_bg_read_ready(struct smartio_data *sd, u64 now)
{
	struct smartio_bg_read_state st = {
		.now = now,
		.fg_inflight = sd->fg_inflight,
		.last_fg_ns = sd->last_fg_ns,
		.fg_idle_ns = (u64)READ_ONCE(sd->read_idle_us) * NSEC_PER_USEC,
		.bg_inflight = sd->inflight[SMARTIO_READ] - sd->fg_inflight,
		.bg_cap = READ_ONCE(sd->bg_read_cap),
	};

	return smartio_bg_read_ready_ns(&st);
}

/*
 * A write past its deadline may go ahead of reads now: under write_cap and
 * as the floor allows (write_budget_kb per write_expire_ms, both buckets
 * charged by every write: the floor lends only what the rate did not give).
 * Else *@at is lowered to when the floor will let it (a completion frees
 * a slot under the cap by itself).
 */
static bool smartio_floor_ready(struct smartio_data *sd, u64 now, u64 *at)
{
	u64 floor = smartio_floor_rate(sd), t;

	if (sd->inflight[SMARTIO_WRITE] >= READ_ONCE(sd->write_cap))
		return false;
	t = smartio_bucket_ready_ns(&sd->floor, floor, now);
	if (t <= now)
		return true;
	*at = min(*at, t);
	return false;
}

/*
 * The first real-time or best-effort request past its deadline, oldest
 * class first: writes (as the floor allows, smartio_floor_ready()), then
 * reads. *@ready_ns: lowered to when a past-due write may go by the floor.
 * The idle class has its own guard instead.
 */
static struct request *smartio_pick_expired(struct smartio_data *sd, u64 now,
					    u64 *ready_ns)
{
	struct request *rq;
	unsigned int c;

	for (c = 0; c < SMARTIO_IDLE; c++) {
		rq = smartio_fifo_first(sd, c, SMARTIO_WRITE);
		if (rq && now >= rq->fifo_time &&
		    smartio_floor_ready(sd, now, ready_ns))
			return rq;
		rq = smartio_fg_first(sd, c);
		if (rq && now >= rq->fifo_time)
			return rq;
		rq = smartio_fifo_first(sd, c, SMARTIO_READ);
		if (rq && now >= rq->fifo_time)
			return rq;
	}
	return NULL;
}

/* A real-time or best-effort request queued or in flight. */
static bool smartio_others_busy(struct smartio_data *sd)
{
	unsigned int c, d;

	if (sd->inflight[SMARTIO_READ] + sd->inflight[SMARTIO_WRITE] >
	    sd->idle_inflight || !list_empty(&sd->dispatch))
		return true;
	for (c = 0; c < SMARTIO_IDLE; c++) {
		if (!list_empty(&sd->fg_reads[c].fifo))
			return true;
		for (d = 0; d < SMARTIO_NR_DIRS; d++)
			if (!list_empty(&sd->queues[c][d].fifo))
				return true;
	}
	return false;
}

/* When the idle class may send its next request (smartio_idle_ready_ns()). */
static u64 smartio_idle_ready(struct smartio_data *sd, u64 now,
			      struct request *read, struct request *write,
			      bool *guard)
{
	struct smartio_idle_state st = {
		.now = now,
		.idle_inflight = sd->idle_inflight,
		.others_busy = smartio_others_busy(sd),
		.last_busy_ns = sd->last_busy_ns,
		.grace_ns = (u64)READ_ONCE(sd->idle_grace_ms) * NSEC_PER_MSEC,
		.waiting_since_ns = sd->last_idle_ns,
		.guard_ns = (u64)READ_ONCE(sd->idle_expire_ms) * NSEC_PER_MSEC,
	};
	u64 oldest = min(read ? smartio_rq_inserted_ns(read) : SMARTIO_NEVER,
			 write ? smartio_rq_inserted_ns(write) : SMARTIO_NEVER);

	st.waiting_since_ns = max(st.waiting_since_ns, oldest);
	return smartio_idle_ready_ns(&st, guard);
}

/*
 * When the write gate lets a write go, computed once per pick and only when
 * a write waits (a read found first needs none of it).
 */
struct smartio_write_gate {
	bool known;
	bool alone;
	u64 at;
};

static u64 smartio_gate_write_at(struct smartio_data *sd, u64 now,
				 struct smartio_write_gate *g)
{
	if (!g->known) {
		g->at = smartio_write_ready(sd, now, &g->alone);
		g->known = true;
	}
	return g->at;
}

/*
 * The next request to dispatch, or NULL and in *@ready_ns when one may be
 * (SMARTIO_NEVER: after a completion or an insertion).
 */
static struct request *smartio_pick(struct smartio_data *sd, u64 now,
				    enum smartio_why *why, u64 *ready_ns)
{
	struct smartio_write_gate gate = { };
	struct request *rq, *idle_read, *idle_write;
	u64 write_at, idle_at, bg_at;
	bool guard;
	unsigned int c;

	*ready_ns = SMARTIO_NEVER;
	sd->bg_held = false;
	rq = list_first_entry_or_null(&sd->dispatch, struct request,
				      queuelist);
	if (rq) {
		*why = SMARTIO_WHY_HEAD;
		return rq;
	}
	rq = smartio_pick_expired(sd, now, ready_ns);
	if (rq) {
		*why = SMARTIO_WHY_EXPIRED;
		return rq;
	}
	for (c = 0; c < SMARTIO_IDLE; c++) {
		rq = smartio_fg_first(sd, c);
		if (rq) {
			*why = SMARTIO_WHY_FG_READ;
			return rq;
		}
		rq = smartio_fifo_first(sd, c, SMARTIO_READ);
		if (rq) {
			bg_at = smartio_bg_read_ready(sd, now);
			if (bg_at <= now) {
				*why = SMARTIO_WHY_READ;
				return rq;
			}
			/*
			 * The wait for bg_read_cap is the scheduler's own: the
			 * read's latency starts at its dispatch.
			 */
			smartio_rq_set_flags(rq, smartio_rq_flags(rq) |
					     SMARTIO_RQ_BG_HELD);
			sd->stats.bg_read_held++;
			sd->bg_held = true;
			*ready_ns = min3(*ready_ns, bg_at, rq->fifo_time);
		}
		rq = smartio_fifo_first(sd, c, SMARTIO_WRITE);
		if (!rq)
			continue;
		write_at = smartio_gate_write_at(sd, now, &gate);
		if (write_at <= now) {
			*why = gate.alone ? SMARTIO_WHY_WRITE_ALONE :
					    SMARTIO_WHY_WRITE;
			return rq;
		}
		sd->stats.write_held++;
		/*
		 * Held by the gate until it opens or the deadline; one past it
		 * waits for the floor (smartio_pick_expired() set that time)
		 * or for a completion under the cap.
		 */
		*ready_ns = min(*ready_ns, write_at);
		if (rq->fifo_time > now)
			*ready_ns = min(*ready_ns, rq->fifo_time);
	}

	idle_read = smartio_fifo_first(sd, SMARTIO_IDLE, SMARTIO_READ);
	idle_write = smartio_fifo_first(sd, SMARTIO_IDLE, SMARTIO_WRITE);
	if (!idle_read && !idle_write)
		return NULL;
	idle_at = smartio_idle_ready(sd, now, idle_read, idle_write, &guard);
	/* an idle-class write also passes the write gate */
	write_at = idle_read ? now : smartio_gate_write_at(sd, now, &gate);
	if (idle_at <= now && write_at <= now) {
		rq = idle_read ?: idle_write;
		*why = guard ? SMARTIO_WHY_IDLE_GUARD : SMARTIO_WHY_IDLE;
		if (guard)
			sd->stats.idle_guard++;
		return rq;
	}
	*ready_ns = min(*ready_ns, max(idle_at, write_at));
	return NULL;
}

static void smartio_start_request(struct smartio_data *sd,
				  struct request *rq, enum smartio_why why,
				  u64 now)
{
	enum smartio_class c = smartio_rq_class(rq);
	enum smartio_dir d = smartio_rq_dir(rq);
	unsigned long flags = smartio_rq_flags(rq) | SMARTIO_RQ_INFLIGHT;

	smartio_remove_request(sd, rq);
	if (d == SMARTIO_WRITE) {
		smartio_charge_write(sd, now, blk_rq_bytes(rq));
	} else {
		/*
		 * The read's latency starts at the head of the reads: its
		 * insertion, or the dispatch of the read before it; for one
		 * held for bg_read_cap, its dispatch.
		 */
		rq->elv.priv[1] = (void *)(uintptr_t)
			(flags & SMARTIO_RQ_BG_HELD ? now :
			 max(smartio_rq_inserted_ns(rq), sd->read_head_ns));
		sd->read_head_ns = now;
		rq->fifo_time = now;
		/* the size is gone by completion (blk_update_request()) */
		flags = (flags & ~SMARTIO_RQ_SIZE_MASK) |
			smartio_size_class(blk_rq_bytes(rq)) <<
			SMARTIO_RQ_SIZE_SHIFT;
		/* no write on the device, none done within read_idle_us */
		if (!sd->inflight[SMARTIO_WRITE] &&
		    now - sd->last_write_done_ns >=
		    (u64)READ_ONCE(sd->read_idle_us) * NSEC_PER_USEC)
			flags |= SMARTIO_RQ_ALONE;
	}
	if (c == SMARTIO_IDLE) {
		flags |= SMARTIO_RQ_IDLE;
		sd->idle_inflight++;
		sd->last_idle_ns = now;
	}
	if (smartio_rq_fg(rq)) {
		sd->fg_inflight++;
		sd->stats.dispatched_fg_read++;
	}
	smartio_rq_set_flags(rq, flags);
	sd->inflight[d]++;
	sd->stats.dispatched[c][d]++;
	if (why == SMARTIO_WHY_EXPIRED)
		sd->stats.expired[c][d]++;
	rq->rq_flags |= RQF_STARTED;
	trace_smartio_dispatch(sd->dev, c, d == SMARTIO_WRITE, why,
			       blk_rq_pos(rq), blk_rq_bytes(rq),
			       sd->inflight[SMARTIO_WRITE],
			       div_u64(smartio_write_rate(sd), SZ_1K));
}

/*
 * Nothing to dispatch now: has_work() stays false until @ready_ns, when the
 * kick timer runs the queue; SMARTIO_NEVER waits for an event (insertion,
 * completion: smartio_done() runs the queue). Call with sd->lock held.
 */
static void smartio_hold_until(struct smartio_data *sd, u64 ready_ns)
{
	ktime_t at = ns_to_ktime(ready_ns);

	lockdep_assert_held(&sd->lock);
	WRITE_ONCE(sd->ready_ns, ready_ns);
	/*
	 * The timer follows ready_ns, later as well as earlier: one that
	 * fired before ready_ns would find has_work() false and nothing
	 * would run the queue again.
	 */
	if (ready_ns == SMARTIO_NEVER || !sd->nr_queued) {
		hrtimer_try_to_cancel(&sd->kick);
		return;
	}
	if (hrtimer_is_queued(&sd->kick) &&
	    ktime_compare(hrtimer_get_softexpires(&sd->kick), at) == 0)
		return;
	hrtimer_start_range_ns(&sd->kick, at, SMARTIO_KICK_SLACK_NS,
			       HRTIMER_MODE_ABS);
}

/* Something changed that may free a held request; sd->lock held. */
static bool smartio_unhold(struct smartio_data *sd)
{
	bool held = sd->nr_queued && sd->ready_ns;

	lockdep_assert_held(&sd->lock);
	WRITE_ONCE(sd->ready_ns, 0);
	return held;
}

static struct request *smartio_dispatch_request(struct blk_mq_hw_ctx *hctx)
{
	struct smartio_data *sd = hctx->queue->elevator->elevator_data;
	u64 now = ktime_get_ns(), ready_ns;
	enum smartio_why why;
	struct request *rq;
	unsigned long irqflags;

	spin_lock_irqsave(&sd->lock, irqflags);
	rq = smartio_pick(sd, now, &why, &ready_ns);
	if (rq) {
		smartio_start_request(sd, rq, why, now);
	} else {
		sd->stats.dispatch_empty++;
		smartio_hold_until(sd, ready_ns);
	}
	spin_unlock_irqrestore(&sd->lock, irqflags);

	if (!rq && ready_ns == SMARTIO_NEVER)
		blk_mq_sched_mark_restart_hctx(hctx);
	return rq;
}

static enum hrtimer_restart smartio_kick(struct hrtimer *timer)
{
	struct smartio_data *sd = container_of(timer, struct smartio_data,
					       kick);

	/* a racy count: one lost increment changes no decision */
	sd->stats.queue_kicks++;
	blk_mq_run_hw_queues(sd->q, true);
	return HRTIMER_NORESTART;
}

static bool smartio_has_work(struct blk_mq_hw_ctx *hctx)
{
	struct smartio_data *sd = hctx->queue->elevator->elevator_data;
	u64 ready_ns = READ_ONCE(sd->ready_ns);

	if (!READ_ONCE(sd->nr_queued))
		return false;
	return !ready_ns || ktime_get_ns() >= ready_ns;
}

/* --- Insertion and merging ----------------------------------------------- */

static void smartio_insert_request(struct smartio_data *sd,
				   struct request *rq, bool at_head,
				   struct list_head *free, u64 now)
{
	struct request_queue *q = sd->q;
	enum smartio_dir d = smartio_rq_dir(rq);
	unsigned long flags = smartio_rq_flags(rq);
	struct smartio_queue *sq;

	lockdep_assert_held(&sd->lock);
	if (flags & SMARTIO_RQ_INFLIGHT) {
		/* A requeue the core did not tell us about. */
		sd->inflight[d]--;
		if (flags & SMARTIO_RQ_IDLE)
			sd->idle_inflight--;
		if (smartio_rq_fg(rq))
			sd->fg_inflight--;
		flags &= ~SMARTIO_RQ_INFLIGHT;
	}
	if (!(flags & SMARTIO_RQ_QUEUED)) {
		sd->stats.inserted++;
		rq->elv.priv[1] = (void *)(uintptr_t)now;
		flags |= SMARTIO_RQ_QUEUED;
	}
	smartio_rq_set_flags(rq, flags & ~(SMARTIO_RQ_ALONE | SMARTIO_RQ_IDLE |
					   SMARTIO_RQ_BG_HELD));
	if (d == SMARTIO_READ)
		sd->last_read_ns = now;
	else
		sd->win_writes = true;
	if (smartio_rq_fg(rq))
		sd->last_fg_ns = now;
	if (smartio_rq_class(rq) != SMARTIO_IDLE)
		sd->last_busy_ns = now;

	/* Beside reads, no request-to-request merge of writes (see allow_merge). */
	if (!(d == SMARTIO_WRITE && READ_ONCE(sd->write_merge_kb) &&
	      smartio_reads_active(sd, now)) &&
	    blk_mq_sched_try_insert_merge(q, rq, free))
		return;

	sd->nr_queued++;
	if (at_head) {
		list_add(&rq->queuelist, &sd->dispatch);
		return;
	}
	sq = smartio_rq_queue(sd, rq);
	elv_rb_add(&sq->sort, rq);
	if (rq_mergeable(rq)) {
		elv_rqhash_add(q, rq);
		if (!q->last_merge)
			q->last_merge = rq;
	}
	rq->fifo_time = now + (u64)READ_ONCE(sd->expire_ms[d]) * NSEC_PER_MSEC;
	list_add_tail(&rq->queuelist, &sq->fifo);
}

static void smartio_insert_requests(struct blk_mq_hw_ctx *hctx,
				    struct list_head *list,
				    mobio_insert_t flags)
{
	struct smartio_data *sd = hctx->queue->elevator->elevator_data;
	u64 now = ktime_get_ns();
	unsigned long irqflags;
	LIST_HEAD(free);

	spin_lock_irqsave(&sd->lock, irqflags);
	while (!list_empty(list)) {
		struct request *rq;

		rq = list_first_entry(list, struct request, queuelist);
		list_del_init(&rq->queuelist);
		smartio_insert_request(sd, rq, mobio_insert_at_head(flags),
				       &free, now);
	}
	/* the core runs the queue after an insertion */
	smartio_unhold(sd);
	spin_unlock_irqrestore(&sd->lock, irqflags);

	blk_mq_free_requests(&free);
}

/*
 * An elevator bio merge: beside reads, a write request grows to
 * write_merge_kb at most. Insert merges of writes are skipped then
 * (smartio_insert_request); plug merges do not ask any elevator, and the
 * token bucket charges their whole size instead. Called without sd->lock:
 * last_read_ns may be a little stale, which only moves the limit's start by
 * one request.
 */
static bool smartio_allow_merge(struct request_queue *q, struct request *rq,
				struct bio *bio)
{
	struct smartio_data *sd = q->elevator->elevator_data;
	u64 max_bytes = (u64)READ_ONCE(sd->write_merge_kb) * SZ_1K;

	if (!max_bytes || !op_is_write(req_op(rq)) ||
	    !smartio_reads_active(sd, ktime_get_ns()))
		return true;
	return (u64)blk_rq_bytes(rq) + bio->bi_iter.bi_size <= max_bytes;
}

static bool smartio_bio_merge(struct request_queue *q, struct bio *bio,
			      unsigned int nr_segs)
{
	struct smartio_data *sd = q->elevator->elevator_data;
	struct request *free = NULL;
	unsigned long irqflags;
	bool merged;

	spin_lock_irqsave(&sd->lock, irqflags);
	merged = blk_mq_sched_try_merge(q, bio, nr_segs, &free);
	spin_unlock_irqrestore(&sd->lock, irqflags);

	if (free)
		blk_mq_free_request(free);
	return merged;
}

/* Front merge: a queued request that starts where @bio ends. */
static int smartio_request_merge(struct request_queue *q, struct request **rq,
				 struct bio *bio)
{
	struct smartio_data *sd = q->elevator->elevator_data;
	enum smartio_class c = smartio_ioprio_class[IOPRIO_PRIO_CLASS(bio->bi_ioprio)];
	enum smartio_dir d = op_is_write(bio_op(bio)) ? SMARTIO_WRITE :
							SMARTIO_READ;
	struct request *found;

	found = elv_rb_find(&sd->queues[c][d].sort, bio_end_sector(bio));
	if (!found && d == SMARTIO_READ)
		found = elv_rb_find(&sd->fg_reads[c].sort, bio_end_sector(bio));
	if (!found || !elv_bio_merge_ok(found, bio))
		return ELEVATOR_NO_MERGE;
	*rq = found;
	return blk_discard_mergable(found) ? ELEVATOR_DISCARD_MERGE :
					     ELEVATOR_FRONT_MERGE;
}

/* A bio was merged into @rq. */
static void smartio_request_merged(struct request_queue *q, struct request *rq,
				   enum elv_merge type)
{
	struct smartio_data *sd = q->elevator->elevator_data;
	struct smartio_queue *sq = smartio_rq_queue(sd, rq);

	sd->stats.merged[smartio_rq_class(rq)][smartio_rq_dir(rq)]++;
	if (type == ELEVATOR_FRONT_MERGE) {
		elv_rb_del(&sq->sort, rq);
		elv_rb_add(&sq->sort, rq);
	}
}

/* @next was merged into @rq and goes away; @rq keeps the earlier deadline. */
static void smartio_requests_merged(struct request_queue *q,
				    struct request *rq, struct request *next)
{
	struct smartio_data *sd = q->elevator->elevator_data;

	lockdep_assert_held(&sd->lock);
	sd->stats.merged[smartio_rq_class(next)][smartio_rq_dir(next)]++;
	if (!list_empty(&rq->queuelist) && !list_empty(&next->queuelist) &&
	    smartio_rq_queue(sd, rq) == smartio_rq_queue(sd, next) &&
	    next->fifo_time < rq->fifo_time) {
		list_move(&rq->queuelist, &next->queuelist);
		rq->fifo_time = next->fifo_time;
	}
	smartio_remove_request(sd, next);
}

/* --- Request life cycle -------------------------------------------------- */

/* At allocation, in the submitter's context: note a foreground task's. */
static void smartio_prepare_request(struct request *rq)
{
	struct smartio_data *sd = rq->q->elevator->elevator_data;

	smartio_rq_set_flags(rq, smartio_current_fg(sd) ? SMARTIO_RQ_FG : 0);
	rq->elv.priv[1] = NULL;
}

/*
 * After a read or a real-time/best-effort completion at @now, the earliest
 * moment a gate that waits for quiet may open: the reads (or the foreground
 * app's, for held reads of other apps) pause at read_idle_us after the last
 * one, the idle class's grace runs from the last busy request.
 * SMARTIO_NEVER: neither is waiting. sd->lock held.
 */
static u64 smartio_quiet_from(struct smartio_data *sd, u64 now)
{
	u64 at = SMARTIO_NEVER;

	if (!sd->inflight[SMARTIO_READ] || (sd->bg_held && !sd->fg_inflight))
		at = now + (u64)READ_ONCE(sd->read_idle_us) * NSEC_PER_USEC;
	if ((smartio_fifo_first(sd, SMARTIO_IDLE, SMARTIO_READ) ||
	     smartio_fifo_first(sd, SMARTIO_IDLE, SMARTIO_WRITE)) &&
	    !smartio_others_busy(sd))
		at = min(at, now + (u64)READ_ONCE(sd->idle_grace_ms) *
			 NSEC_PER_MSEC);
	return at;
}

/*
 * Completion (or a requeue): the request leaves the device. A write, an
 * idle-class request or (while reads of other apps are held) another app's
 * read frees a slot a held request may wait for, a window's end may change
 * the write rate: run the queue if something is held. A
 * read or another class's completion only moves the moment a gate waiting
 * for quiet opens (smartio_quiet_from()): the kick timer, no queue run.
 */
static void smartio_done(struct request *rq, bool requeue)
{
	struct smartio_data *sd = rq->q->elevator->elevator_data;
	unsigned long flags = smartio_rq_flags(rq);
	unsigned long irqflags;
	enum smartio_dir d;
	u64 now, adjusts;
	bool kick = false, cold;

	if (!(flags & SMARTIO_RQ_INFLIGHT))
		return;
	d = smartio_rq_dir(rq);
	now = ktime_get_ns();
	spin_lock_irqsave(&sd->lock, irqflags);
	adjusts = sd->stats.adjusts;
	cold = sd->cold;
	sd->inflight[d]--;
	if (flags & SMARTIO_RQ_IDLE)
		sd->idle_inflight--;
	else
		sd->last_busy_ns = now;
	if (smartio_rq_fg(rq)) {
		sd->fg_inflight--;
		sd->last_fg_ns = now;
	}
	smartio_rq_set_flags(rq, flags & ~(SMARTIO_RQ_INFLIGHT |
					   SMARTIO_RQ_ALONE |
					   SMARTIO_RQ_IDLE |
					   SMARTIO_RQ_BG_HELD));
	if (requeue)
		sd->stats.requeued++;
	else if (d == SMARTIO_READ)
		smartio_read_done(sd, rq, flags, now);
	else
		sd->last_write_done_ns = now;
	if (requeue || d == SMARTIO_WRITE || (flags & SMARTIO_RQ_IDLE) ||
	    (sd->bg_held && !smartio_rq_fg(rq)) ||
	    adjusts != sd->stats.adjusts || cold != sd->cold)
		kick = smartio_unhold(sd);
	else if (sd->nr_queued && sd->ready_ns > now)
		smartio_hold_until(sd, min(sd->ready_ns,
					   smartio_quiet_from(sd, now)));
	spin_unlock_irqrestore(&sd->lock, irqflags);

	/* Held requests may go (any hw queue's). A requeue is re-inserted. */
	if (kick && !requeue)
		blk_mq_run_hw_queues(rq->q, true);
}

static void smartio_finish_request(struct request *rq)
{
	smartio_done(rq, false);
}

static void smartio_requeue_request(struct request *rq)
{
	smartio_done(rq, true);
}

static void smartio_limit_depth(blk_opf_t opf, struct blk_mq_alloc_data *data)
{
	struct smartio_data *sd = data->q->elevator->elevator_data;

	/*
	 * Synchronous reads may take every tag, but for those of other apps
	 * while fg_cgroup is set; the rest leave some.
	 */
	if (op_is_sync(opf) && !op_is_write(opf) &&
	    (!rcu_access_pointer(sd->fg_cgrp) || smartio_current_fg(sd)))
		return;
	data->shallow_depth = READ_ONCE(sd->async_depth);
}

static void smartio_depth_updated(struct blk_mq_hw_ctx *hctx)
{
	struct smartio_data *sd = hctx->queue->elevator->elevator_data;

	WRITE_ONCE(sd->async_depth,
		   mobio_sched_shallow_depth(hctx, SMARTIO_ASYNC_PCT));
	sbitmap_queue_min_shallow_depth(&hctx->sched_tags->bitmap_tags,
					sd->async_depth);
}

static int smartio_init_hctx(struct blk_mq_hw_ctx *hctx, unsigned int idx)
{
	smartio_depth_updated(hctx);
	return 0;
}

/* --- Setup --------------------------------------------------------------- */

static int smartio_init_sched(struct request_queue *q, struct elevator_type *e)
{
	struct elevator_queue *eq;
	struct smartio_data *sd;
	unsigned int c, d;

	eq = elevator_alloc(q, e);
	if (!eq)
		return -ENOMEM;
	sd = kzalloc_node(sizeof(*sd), GFP_KERNEL, q->node);
	if (!sd)
		goto err_put_eq;

	sd->q = q;
	if (q->disk) {
		sd->dev = disk_devt(q->disk);
		strscpy(sd->disk_name, q->disk->disk_name,
			sizeof(sd->disk_name));
	}
	spin_lock_init(&sd->lock);
	INIT_LIST_HEAD(&sd->dispatch);
	for (c = 0; c < SMARTIO_NR_CLASSES; c++) {
		for (d = 0; d < SMARTIO_NR_DIRS; d++) {
			INIT_LIST_HEAD(&sd->queues[c][d].fifo);
			sd->queues[c][d].sort = RB_ROOT;
		}
		INIT_LIST_HEAD(&sd->fg_reads[c].fifo);
		sd->fg_reads[c].sort = RB_ROOT;
	}
	for (d = 0; d < SMARTIO_NR_DIRS; d++)
		sd->expire_ms[d] = smartio_expire_ms[d];
	sd->write_cap = SMARTIO_WRITE_CAP;
	sd->controller = 1;
	sd->target_pct = SMARTIO_TARGET_PCT;
	sd->read_pct = SMARTIO_READ_PCT;
	sd->write_budget_kb = SMARTIO_WRITE_BUDGET_KB;
	sd->window_ms = SMARTIO_WINDOW_MS;
	sd->ctl.rate = SMARTIO_RATE_MAX;
	/* no class has a baseline: the first reads beside writes are alone */
	sd->cold = true;
	sd->read_idle_us = SMARTIO_READ_IDLE_US;
	sd->write_merge_kb = SMARTIO_WRITE_MERGE_KB;
	sd->idle_grace_ms = SMARTIO_IDLE_GRACE_MS;
	sd->idle_expire_ms = SMARTIO_IDLE_EXPIRE_MS;
	sd->bg_read_cap = SMARTIO_BG_READ_CAP;
	sd->win_start_ns = ktime_get_ns();
	hrtimer_init(&sd->kick, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	sd->kick.function = smartio_kick;

	eq->elevator_data = sd;
	/* One set of queues for the whole device, as mq-deadline. */
	blk_queue_flag_set(QUEUE_FLAG_SQ_SCHED, q);
	q->elevator = eq;

	mutex_lock(&smartio_instances_lock);
	list_add_tail(&sd->node, &smartio_instances);
	mutex_unlock(&smartio_instances_lock);
	return 0;

err_put_eq:
	kobject_put(&eq->kobj);
	return -ENOMEM;
}

static void smartio_exit_sched(struct elevator_queue *e)
{
	struct smartio_data *sd = e->elevator_data;

	mutex_lock(&smartio_instances_lock);
	list_del(&sd->node);
	mutex_unlock(&smartio_instances_lock);

	hrtimer_cancel(&sd->kick);
	WARN_ON_ONCE(sd->nr_queued);
	/* the queue is frozen: no allocation looks at fg_cgrp any more */
	if (rcu_access_pointer(sd->fg_cgrp))
		cgroup_put(rcu_dereference_protected(sd->fg_cgrp, true));
	kfree(sd->fg_path);
	kfree(sd);
}

/* --- Counters ------------------------------------------------------------ */

#define SMARTIO_NR_STATS \
	(3 * SMARTIO_NR_CLASSES * SMARTIO_NR_DIRS + SMARTIO_SIZE_CLASSES + 24)

/* Size classes in counter names: read_baseline_4k_us... */
static const char *const smartio_baseline_name[SMARTIO_SIZE_CLASSES] = {
	"read_baseline_4k_us", "read_baseline_8k_us", "read_baseline_16k_us",
	"read_baseline_32k_us", "read_baseline_64k_us",
	"read_baseline_128k_us", "read_baseline_256k_us",
	"read_baseline_512k_us",
};

/* Counter names; "dispatched_rt_read"... are built from the tables. */
static char smartio_stat_names[3 * SMARTIO_NR_CLASSES * SMARTIO_NR_DIRS]
			      [MOBIO_STAT_NAME_MAX];

static void smartio_init_stat_names(void)
{
	static const char *const kind[] = { "dispatched", "merged", "expired" };
	unsigned int k, c, d, i = 0;

	for (k = 0; k < ARRAY_SIZE(kind); k++)
		for (c = 0; c < SMARTIO_NR_CLASSES; c++)
			for (d = 0; d < SMARTIO_NR_DIRS; d++)
				snprintf(smartio_stat_names[i++],
					 MOBIO_STAT_NAME_MAX, "%s_%s_%s",
					 kind[k], smartio_class_name[c],
					 smartio_dir_name[d]);
}

/* A consistent copy of @sd's counters; returns how many. */
static unsigned int smartio_collect_stats(struct smartio_data *sd,
					  struct mobio_stat *st)
{
	unsigned int k, c, d, n = 0;
	struct smartio_counters cnt;
	unsigned long irqflags;
	unsigned int inflight[SMARTIO_NR_DIRS], idle_inflight, fg_inflight;
	bool cold;
	u64 rate, pct, slow, target_slow, target, baseline[SMARTIO_SIZE_CLASSES];

	spin_lock_irqsave(&sd->lock, irqflags);
	cnt = sd->stats;
	inflight[SMARTIO_READ] = sd->inflight[SMARTIO_READ];
	inflight[SMARTIO_WRITE] = sd->inflight[SMARTIO_WRITE];
	rate = smartio_write_rate(sd);
	pct = sd->read_pct_ns;
	slow = sd->slowdown;
	target_slow = sd->target_slow;
	target = sd->target_ns;
	memcpy(baseline, sd->baseline_ns, sizeof(baseline));
	cold = smartio_cold(sd);
	idle_inflight = sd->idle_inflight;
	fg_inflight = sd->fg_inflight;
	spin_unlock_irqrestore(&sd->lock, irqflags);

	for (k = 0; k < 3; k++) {
		for (c = 0; c < SMARTIO_NR_CLASSES; c++) {
			for (d = 0; d < SMARTIO_NR_DIRS; d++) {
				u64 (*tab)[SMARTIO_NR_DIRS] =
					k == 0 ? cnt.dispatched :
					k == 1 ? cnt.merged : cnt.expired;

				st[n].name = smartio_stat_names[n];
				st[n++].value = tab[c][d];
			}
		}
	}
	st[n++] = (struct mobio_stat){ "inserted", cnt.inserted };
	st[n++] = (struct mobio_stat){ "requeued", cnt.requeued };
	st[n++] = (struct mobio_stat){ "write_held", cnt.write_held };
	st[n++] = (struct mobio_stat){ "write_rate_kbps",
				       div_u64(rate, SZ_1K) };
	st[n++] = (struct mobio_stat){ "read_lat_us",
				       div_u64(pct, NSEC_PER_USEC) };
	st[n++] = (struct mobio_stat){ "read_slowdown_pct",
				       smartio_slow_to_pct(slow) };
	st[n++] = (struct mobio_stat){ "read_target_pct",
				       smartio_slow_to_pct(target_slow) };
	st[n++] = (struct mobio_stat){ "read_target_us",
				       div_u64(target, NSEC_PER_USEC) };
	for (c = 0; c < SMARTIO_SIZE_CLASSES; c++)
		st[n++] = (struct mobio_stat){ smartio_baseline_name[c],
					       div_u64(baseline[c],
						       NSEC_PER_USEC) };
	st[n++] = (struct mobio_stat){ "controller_adjusts", cnt.adjusts };
	st[n++] = (struct mobio_stat){ "controller_windows", cnt.windows };
	st[n++] = (struct mobio_stat){ "baseline_stale_fixes",
				       cnt.baseline_stale_fixes };
	st[n++] = (struct mobio_stat){ "controller_cold", cold };
	st[n++] = (struct mobio_stat){ "cold_windows", cnt.cold_windows };
	st[n++] = (struct mobio_stat){ "reads_inflight",
				       inflight[SMARTIO_READ] };
	st[n++] = (struct mobio_stat){ "writes_inflight",
				       inflight[SMARTIO_WRITE] };
	st[n++] = (struct mobio_stat){ "nr_requests", sd->q->nr_requests };
	st[n++] = (struct mobio_stat){ "async_depth",
				       READ_ONCE(sd->async_depth) };
	st[n++] = (struct mobio_stat){ "dispatch_empty", cnt.dispatch_empty };
	st[n++] = (struct mobio_stat){ "queue_kicks", cnt.queue_kicks };
	st[n++] = (struct mobio_stat){ "idle_guard", cnt.idle_guard };
	st[n++] = (struct mobio_stat){ "idle_inflight", idle_inflight };
	st[n++] = (struct mobio_stat){ "dispatched_fg_read",
				       cnt.dispatched_fg_read };
	st[n++] = (struct mobio_stat){ "bg_read_held", cnt.bg_read_held };
	st[n++] = (struct mobio_stat){ "fg_reads_inflight", fg_inflight };
	return n;
}

#ifdef CONFIG_BLK_DEBUG_FS
static int smartio_stats_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct mobio_stat st[SMARTIO_NR_STATS];
	unsigned int i, n;

	n = smartio_collect_stats(q->elevator->elevator_data, st);
	for (i = 0; i < n; i++)
		seq_printf(m, "%s %llu\n", st[i].name, st[i].value);
	return 0;
}

static const struct blk_mq_debugfs_attr smartio_queue_debugfs_attrs[] = {
	{"stats", 0400, smartio_stats_show},
	{},
};
#endif

/* --- Generic netlink ----------------------------------------------------- */

static struct genl_family smartio_genl_family;

static const struct nla_policy smartio_genl_policy[SMARTIO_A_MAX + 1] = {
	[MOBIO_A_DEV_NAME] = { .type = NLA_NUL_STRING,
			       .len = DISK_NAME_LEN - 1 },
};

static int smartio_genl_get_stats(struct sk_buff *skb, struct genl_info *info)
{
	struct mobio_stat st[SMARTIO_NR_STATS];
	const char *name = mobio_genl_dev_name(info);
	struct smartio_data *sd;
	unsigned int n = 0;
	bool found = false;

	if (!name)
		return -EINVAL;
	mutex_lock(&smartio_instances_lock);
	list_for_each_entry(sd, &smartio_instances, node) {
		if (!strcmp(sd->disk_name, name)) {
			n = smartio_collect_stats(sd, st);
			found = true;
			break;
		}
	}
	mutex_unlock(&smartio_instances_lock);
	if (!found) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MOBIO_A_DEV_NAME],
				    "no disk of that name uses smartio");
		return -ENODEV;
	}
	return mobio_genl_reply_dev_stats(&smartio_genl_family, info, name, st,
					  n);
}

static const struct genl_small_ops smartio_genl_ops[] = {
	{
		.cmd = SMARTIO_CMD_GET_STATS,
		.doit = smartio_genl_get_stats,
	},
};

static const struct genl_multicast_group smartio_genl_mcgrps[] = {
	{ .name = MOBIO_GENL_MCGRP_EVENTS, },
};

static struct genl_family smartio_genl_family __ro_after_init = {
	.name = SMARTIO_GENL_NAME,
	.version = MOBIO_GENL_VERSION,
	.maxattr = SMARTIO_A_MAX,
	.policy = smartio_genl_policy,
	.module = THIS_MODULE,
	.small_ops = smartio_genl_ops,
	.n_small_ops = ARRAY_SIZE(smartio_genl_ops),
	.mcgrps = smartio_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(smartio_genl_mcgrps),
};

/* --- Tunables ------------------------------------------------------------ */

/* One tunable: an unsigned int of struct smartio_data and its range. */
/* What a tunable's new value invalidates (struct smartio_tunable.resets). */
#define SMARTIO_RESET_THROTTLE	BIT(0)	/* smartio_reset_throttle() */

struct smartio_tunable {
	size_t offset;
	unsigned int min;
	unsigned int max;
	unsigned int resets;	/* SMARTIO_RESET_*, done when stored */
};

static unsigned int *smartio_tunable_ptr(struct elevator_queue *e,
					 const struct smartio_tunable *t)
{
	return (unsigned int *)((char *)e->elevator_data + t->offset);
}

/*
 * controller, write_rate_kbps, write_budget_kb and write_expire_ms reset
 * the write rate: with the controller off it is write_rate_kbps; with it
 * on, write_rate_kbps (0: none) is the ceiling it starts again from. The
 * buckets start full at the new rates.
 */
static void smartio_reset_throttle(struct smartio_data *sd)
{
	unsigned long irqflags;

	spin_lock_irqsave(&sd->lock, irqflags);
	sd->ctl = (struct smartio_ctl){
		.rate = smartio_rate_tunable(sd) ?: SMARTIO_RATE_MAX,
	};
	sd->bucket = (struct smartio_bucket){ };
	sd->floor = (struct smartio_bucket){ };
	spin_unlock_irqrestore(&sd->lock, irqflags);
}

/* A tunable changed: held requests are decided again, now. */
static void smartio_recheck(struct smartio_data *sd)
{
	unsigned long irqflags;
	bool held;

	spin_lock_irqsave(&sd->lock, irqflags);
	held = smartio_unhold(sd);
	spin_unlock_irqrestore(&sd->lock, irqflags);
	if (held)
		blk_mq_run_hw_queues(sd->q, true);
}

static ssize_t smartio_tunable_show(struct elevator_queue *e, char *page,
				    const struct smartio_tunable *t)
{
	return sysfs_emit(page, "%u\n", READ_ONCE(*smartio_tunable_ptr(e, t)));
}

/*
 * An unsigned decimal in [min, max]; anything else (negative, too big, not
 * a number) is -EINVAL and the old value stays.
 */
static ssize_t smartio_tunable_store(struct elevator_queue *e,
				     const char *page, size_t count,
				     const struct smartio_tunable *t)
{
	unsigned int v;

	if (kstrtouint(page, 10, &v) || v < t->min || v > t->max)
		return -EINVAL;
	WRITE_ONCE(*smartio_tunable_ptr(e, t), v);
	if (t->resets & SMARTIO_RESET_THROTTLE)
		smartio_reset_throttle(e->elevator_data);
	smartio_recheck(e->elevator_data);
	return count;
}

#define SMARTIO_TUNABLE(name, field, lo, hi, rst)			\
static const struct smartio_tunable smartio_##name##_tunable = {	\
	.offset = offsetof(struct smartio_data, field),			\
	.min = lo,							\
	.max = hi,							\
	.resets = rst,							\
};									\
static ssize_t smartio_##name##_show(struct elevator_queue *e,		\
				     char *page)			\
{									\
	return smartio_tunable_show(e, page, &smartio_##name##_tunable);	\
}									\
static ssize_t smartio_##name##_store(struct elevator_queue *e,	\
				      const char *page, size_t count)	\
{									\
	return smartio_tunable_store(e, page, count,			\
				     &smartio_##name##_tunable);	\
}

SMARTIO_TUNABLE(read_expire_ms, expire_ms[SMARTIO_READ], 1, 60000, 0)
SMARTIO_TUNABLE(write_expire_ms, expire_ms[SMARTIO_WRITE], 1, 60000, SMARTIO_RESET_THROTTLE)
SMARTIO_TUNABLE(write_cap, write_cap, 1, 4096, 0)
SMARTIO_TUNABLE(controller, controller, 0, 1, SMARTIO_RESET_THROTTLE)
SMARTIO_TUNABLE(target_slowdown_pct, target_pct, 100, 100000, 0)
SMARTIO_TUNABLE(read_lat_target_us, read_lat_target_us, 0, 60000000, 0)
SMARTIO_TUNABLE(read_lat_pct, read_pct, 50, 99, 0)
SMARTIO_TUNABLE(write_rate_kbps, write_rate_kbps, 0, 64 << 20, SMARTIO_RESET_THROTTLE)
SMARTIO_TUNABLE(write_budget_kb, write_budget_kb, 4, 1048576, SMARTIO_RESET_THROTTLE)
SMARTIO_TUNABLE(window_ms, window_ms, 1, 60000, 0)
SMARTIO_TUNABLE(read_idle_us, read_idle_us, 0, 1000000, 0)
SMARTIO_TUNABLE(write_merge_kb, write_merge_kb, 0, 1048576, 0)
SMARTIO_TUNABLE(idle_grace_ms, idle_grace_ms, 0, 60000, 0)
SMARTIO_TUNABLE(idle_expire_ms, idle_expire_ms, 1, 60000, 0)
SMARTIO_TUNABLE(bg_read_cap, bg_read_cap, 1, 4096, 0)

/* fg_cgroup: the path written, or an empty line when none is set. */
static ssize_t smartio_fg_cgroup_show(struct elevator_queue *e, char *page)
{
	struct smartio_data *sd = e->elevator_data;

	return sysfs_emit(page, "%s\n", sd->fg_path ?: "");
}

/*
 * A cgroup v2 path from the root ("/top-app"), or an empty line to clear
 * it: -ENOENT when there is no such cgroup (the old one stays), -EINVAL for
 * a path too long. The elevator's sysfs_lock serialises stores; readers
 * (request allocation) use RCU, so the old cgroup is put after a grace
 * period.
 */
static ssize_t smartio_fg_cgroup_store(struct elevator_queue *e,
				       const char *page, size_t count)
{
	struct smartio_data *sd = e->elevator_data;
	struct cgroup *new = NULL, *old;
	char *buf, *trimmed, *path = NULL;

	if (count >= PATH_MAX)
		return -EINVAL;
	buf = kstrndup(page, count, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	trimmed = strim(buf);
	if (*trimmed) {
		path = kstrdup(trimmed, GFP_KERNEL);
		new = path ? cgroup_get_from_path(path) : ERR_PTR(-ENOMEM);
	}
	kfree(buf);
	if (IS_ERR(new)) {
		kfree(path);
		return PTR_ERR(new) == -ENOMEM ? -ENOMEM : -ENOENT;
	}
	old = rcu_replace_pointer(sd->fg_cgrp, new, true);
	kfree(sd->fg_path);
	sd->fg_path = path;
	if (old) {
		synchronize_rcu();
		cgroup_put(old);
	}
	smartio_recheck(sd);
	return count;
}

#define SMARTIO_FS_ENTRY(name) \
	__ATTR(name, 0644, smartio_##name##_show, smartio_##name##_store)

static struct elv_fs_entry smartio_attrs[] = {
	SMARTIO_FS_ENTRY(read_expire_ms),
	SMARTIO_FS_ENTRY(write_expire_ms),
	SMARTIO_FS_ENTRY(write_cap),
	SMARTIO_FS_ENTRY(controller),
	SMARTIO_FS_ENTRY(target_slowdown_pct),
	SMARTIO_FS_ENTRY(read_lat_target_us),
	SMARTIO_FS_ENTRY(read_lat_pct),
	SMARTIO_FS_ENTRY(write_rate_kbps),
	SMARTIO_FS_ENTRY(write_budget_kb),
	SMARTIO_FS_ENTRY(window_ms),
	SMARTIO_FS_ENTRY(read_idle_us),
	SMARTIO_FS_ENTRY(write_merge_kb),
	SMARTIO_FS_ENTRY(idle_grace_ms),
	SMARTIO_FS_ENTRY(idle_expire_ms),
	SMARTIO_FS_ENTRY(bg_read_cap),
	SMARTIO_FS_ENTRY(fg_cgroup),
	__ATTR_NULL
};

/* --- Registration -------------------------------------------------------- */

static struct elevator_type smartio_sched = {
	.ops = {
		.depth_updated		= smartio_depth_updated,
		.limit_depth		= smartio_limit_depth,
		.insert_requests	= smartio_insert_requests,
		.dispatch_request	= smartio_dispatch_request,
		.prepare_request	= smartio_prepare_request,
		.finish_request		= smartio_finish_request,
		.requeue_request	= smartio_requeue_request,
		.next_request		= elv_rb_latter_request,
		.former_request		= elv_rb_former_request,
		.allow_merge		= smartio_allow_merge,
		.bio_merge		= smartio_bio_merge,
		.request_merge		= smartio_request_merge,
		.requests_merged	= smartio_requests_merged,
		.request_merged		= smartio_request_merged,
		.has_work		= smartio_has_work,
		.init_sched		= smartio_init_sched,
		.exit_sched		= smartio_exit_sched,
		.init_hctx		= smartio_init_hctx,
	},
#ifdef CONFIG_BLK_DEBUG_FS
	.queue_debugfs_attrs = smartio_queue_debugfs_attrs,
#endif
	.elevator_attrs = smartio_attrs,
	.elevator_name = SMARTIO_ELEVATOR_NAME,
	.elevator_owner = THIS_MODULE,
};
MODULE_ALIAS("smartio-iosched");

static int __init smartio_init(void)
{
	int ret;

	/* a read's size class is kept in three bits of its flags */
	BUILD_BUG_ON(SMARTIO_SIZE_CLASSES >
		     (SMARTIO_RQ_SIZE_MASK >> SMARTIO_RQ_SIZE_SHIFT) + 1);
	smartio_init_stat_names();
	ret = genl_register_family(&smartio_genl_family);
	if (ret)
		return ret;
	ret = elv_register(&smartio_sched);
	if (ret)
		goto err_genl;
	return 0;

err_genl:
	genl_unregister_family(&smartio_genl_family);
	return ret;
}

static void __exit smartio_exit(void)
{
	elv_unregister(&smartio_sched);
	genl_unregister_family(&smartio_genl_family);
}

module_init(smartio_init);
module_exit(smartio_exit);

MODULE_DESCRIPTION("SmartIO I/O scheduler: reads first, writes at a rate set by a read-latency controller");
MODULE_LICENSE("GPL");
