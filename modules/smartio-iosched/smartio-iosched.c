// SPDX-License-Identifier: GPL-2.0-only
/*
 * SmartIO: a blk-mq I/O scheduler that keeps reads from waiting behind
 * writes (after SmartIO, MobiSys'15). Requests are queued per I/O priority
 * class (real-time, best-effort, idle) and, within a class, reads and writes
 * in separate queues. Reads go first. Beside reads, writes are throttled: at
 * most write_cap of them in flight and at least write_hold_us between two of
 * them; reads paused, the hold is lifted; reads gone, the cap rises to
 * write_cap. No request waits past its deadline (read_expire,
 * write_expire), which bounds write starvation. The idle class goes only
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
 * The concurrency profiler measures read latency with no write around (it
 * holds writes back for a short probe when it has no recent sample) and
 * beside writes, and every profile window tightens the write cap and hold
 * when the read slowdown exceeds target_slowdown_pct, and relaxes them when
 * reads are comfortably below it, so that writes still progress.
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

/* What the profiler did (tracepoint smartio_adjust). */
enum smartio_adjust {
	SMARTIO_ADJ_TIGHTEN,
	SMARTIO_ADJ_RELAX,
	SMARTIO_ADJ_PROBE,
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
 * beyond any read the profiler lets writes delay); a write waits at most
 * half a second, which bounds how long reads can starve writes.
 */
static const unsigned int smartio_expire_ms[] = {
	[SMARTIO_READ]	= 100,
	[SMARTIO_WRITE]	= 500,
};

/*
 * Defaults of the write throttle and the profiler. 130% is the read
 * slowdown the seed aims at; 100 ms windows hold dozens of reads on a
 * phone's flash; a 60 ms probe each second costs writes about 6%.
 */
#define SMARTIO_WRITE_CAP		16U
#define SMARTIO_TARGET_PCT		130U
#define SMARTIO_WINDOW_MS		100U
#define SMARTIO_PROBE_MS		60U
#define SMARTIO_PROBE_INTERVAL_MS	1000U
#define SMARTIO_READ_IDLE_US		2000U
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
 * Reads idle for read_idle_us only pause (a sync reader's think time can be
 * that long): writes skip the hold but keep the current cap. Reads idle this
 * many times longer are gone: writes get the full write_cap.
 */
#define SMARTIO_READ_GONE_MULT		25U
/*
 * Beside reads, a write request stops growing by merges at this size: one
 * read waits behind a whole write, and plugging makes 1 MiB of 128 KiB
 * writes (64 ms on a 16 MiB/s device) whatever the cap says.
 */
#define SMARTIO_WRITE_MERGE_KB		128U
/*
 * Largest write hold the profiler picks: 50 ms is a few refill periods of
 * a throttled device and still lets 20 writes a second through.
 */
#define SMARTIO_HOLD_MAX_US		(50U * USEC_PER_MSEC)
/* The profiler's smallest hold step. */
#define SMARTIO_HOLD_STEP_NS		(250ULL * NSEC_PER_USEC)
/* Reads per window below which a latency mean means nothing. */
#define SMARTIO_MIN_SAMPLES		4U
/* Relax only when reads are this far under target (percent of it). */
#define SMARTIO_RELAX_PCT		85U
/* Writes may take 75% of the scheduler tags; the rest stay for reads. */
#define SMARTIO_ASYNC_PCT		75U

/* rq->elv.priv[0]: the request's state in the scheduler, as flags. */
#define SMARTIO_RQ_QUEUED	BIT(0)	/* counted in inserted */
#define SMARTIO_RQ_INFLIGHT	BIT(1)	/* dispatched, counted in inflight */
#define SMARTIO_RQ_ALONE	BIT(2)	/* a read dispatched with no write */
#define SMARTIO_RQ_MIXED	BIT(3)	/* a read dispatched beside writes */
#define SMARTIO_RQ_IDLE		BIT(4)	/* idle class, counted in idle_inflight */
#define SMARTIO_RQ_FG		BIT(5)	/* allocated by a foreground task */
/* rq->elv.priv[1]: insertion time, ns. rq->fifo_time: deadline, ns. */

/* One queue: a class and a direction. */
struct smartio_queue {
	struct list_head fifo;		/* by arrival, for deadlines */
	struct rb_root sort;		/* by sector, for front merges */
};

/* Latency samples of one profile window. */
struct smartio_window {
	u64 start_ns;
	u64 alone_sum_ns;
	u64 mixed_sum_ns;
	u32 alone_n;
	u32 mixed_n;
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
	u64 probes;
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

	/* write throttle, now */
	unsigned int write_cap_now;
	u64 write_hold_ns;
	u64 last_write_ns;		/* dispatch of the last write */
	unsigned int last_write_bytes;	/* and its size */
	u64 last_write_done_ns;		/* completion of the last write */
	u64 last_read_ns;		/* insert or completion of a read */

	/* profiler */
	struct smartio_window win;
	u64 alone_ns;			/* read latency alone, 0: unknown */
	u64 alone_at_ns;		/* when alone_ns was last measured */
	u64 mixed_ns;			/* read latency beside writes */
	unsigned int slowdown_pct;	/* 0: unknown */
	bool probing;			/* writes held to measure reads alone */
	u64 probe_end_ns;		/* until then; 0: until writes drain */
	struct smartio_counters stats;

	/* tunables (sysfs); read without the lock */
	unsigned int expire_ms[SMARTIO_NR_DIRS];
	unsigned int write_cap;
	unsigned int write_hold_us;
	unsigned int profiler;
	unsigned int target_pct;
	unsigned int window_ms;
	unsigned int probe_ms;
	unsigned int probe_interval_ms;
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

/* --- Profiler ------------------------------------------------------------ */

/*
 * How long after the last write completion a read counts as alone: a third
 * of a probe, enough for a throttled device to refill (null_blk: 20 ms).
 */
static u64 smartio_settle_ns(struct smartio_data *sd)
{
	return (u64)READ_ONCE(sd->probe_ms) * NSEC_PER_MSEC / 3;
}

static void smartio_trace_adjust(struct smartio_data *sd, unsigned int what)
{
	trace_smartio_adjust(sd->dev, what, sd->slowdown_pct,
			     sd->write_cap_now,
			     (unsigned int)div_u64(sd->write_hold_ns,
						   NSEC_PER_USEC));
}

/*
 * Reads too slow beside writes: fewer writes in flight, then a longer hold;
 * far too slow (@hard), one write at a time and twice the hold at once.
 */
static void smartio_tighten(struct smartio_data *sd, bool hard)
{
	u64 max_ns = (u64)READ_ONCE(sd->write_hold_us) * NSEC_PER_USEC;

	if (hard && (sd->write_cap_now > 1 || sd->write_hold_ns < max_ns)) {
		sd->write_cap_now = 1;
		sd->write_hold_ns = min(max_ns, max(sd->write_hold_ns * 2,
						    4 * SMARTIO_HOLD_STEP_NS));
	} else if (sd->write_cap_now > 1) {
		sd->write_cap_now /= 2;
	} else if (sd->write_hold_ns < max_ns) {
		sd->write_hold_ns = min(max_ns, sd->write_hold_ns * 3 / 2 +
					SMARTIO_HOLD_STEP_NS);
	} else {
		return;
	}
	sd->stats.adjusts++;
	smartio_trace_adjust(sd, SMARTIO_ADJ_TIGHTEN);
}

/* Reads well under target: a shorter hold, then more writes in flight. */
static void smartio_relax(struct smartio_data *sd)
{
	if (sd->write_hold_ns) {
		sd->write_hold_ns = sd->write_hold_ns * 3 / 4;
		if (sd->write_hold_ns < SMARTIO_HOLD_STEP_NS)
			sd->write_hold_ns = 0;
	} else if (sd->write_cap_now < READ_ONCE(sd->write_cap)) {
		sd->write_cap_now++;
	} else {
		return;
	}
	sd->stats.adjusts++;
	smartio_trace_adjust(sd, SMARTIO_ADJ_RELAX);
}

/* End of a profile window: update the latencies and adjust the throttle. */
static void smartio_profile(struct smartio_data *sd, u64 now)
{
	struct smartio_window *w = &sd->win;
	u64 probe_every = (u64)READ_ONCE(sd->probe_interval_ms) * NSEC_PER_MSEC;
	unsigned int target = READ_ONCE(sd->target_pct);

	/*
	 * A kind of sample too few to mean anything stays for the next window:
	 * reads slowed 100x may give fewer than SMARTIO_MIN_SAMPLES a window,
	 * and dropping them would leave the throttle where it is.
	 */
	if (w->alone_n >= SMARTIO_MIN_SAMPLES) {
		sd->alone_ns = div_u64(w->alone_sum_ns, w->alone_n);
		sd->alone_at_ns = now;
		w->alone_sum_ns = 0;
		w->alone_n = 0;
	}
	if (w->mixed_n >= SMARTIO_MIN_SAMPLES) {
		sd->mixed_ns = div_u64(w->mixed_sum_ns, w->mixed_n);
		w->mixed_sum_ns = 0;
		w->mixed_n = 0;
		if (sd->alone_ns) {
			sd->slowdown_pct = div64_u64(sd->mixed_ns * 100,
						     sd->alone_ns);
			if (READ_ONCE(sd->profiler)) {
				if (sd->slowdown_pct > target)
					smartio_tighten(sd, sd->slowdown_pct >
							    2 * target);
				else if (sd->slowdown_pct * 100 <
					 target * SMARTIO_RELAX_PCT)
					smartio_relax(sd);
			}
		}
		/* No baseline, or an old one: measure reads alone now. */
		if (READ_ONCE(sd->profiler) && probe_every && !sd->probing &&
		    (!sd->alone_ns || now - sd->alone_at_ns > probe_every)) {
			sd->probing = true;
			sd->probe_end_ns = 0;
			sd->stats.probes++;
			smartio_trace_adjust(sd, SMARTIO_ADJ_PROBE);
		}
	}
	w->start_ns = now;
}

/* A read completed: one latency sample. */
static void smartio_read_done(struct smartio_data *sd, struct request *rq,
			      unsigned long flags, u64 now)
{
	u64 lat = now - smartio_rq_inserted_ns(rq);

	sd->last_read_ns = now;
	if (flags & SMARTIO_RQ_ALONE) {
		sd->win.alone_sum_ns += lat;
		sd->win.alone_n++;
	} else if (flags & SMARTIO_RQ_MIXED) {
		sd->win.mixed_sum_ns += lat;
		sd->win.mixed_n++;
	}
	if (now - sd->win.start_ns >=
	    (u64)READ_ONCE(sd->window_ms) * NSEC_PER_MSEC)
		smartio_profile(sd, now);
}

/* --- Dispatch ------------------------------------------------------------ */

/*
 * No read in flight and none for SMARTIO_READ_GONE_MULT x read_idle_us:
 * writes have the disk.
 */
static bool smartio_reads_gone(struct smartio_data *sd, u64 now)
{
	u64 last = READ_ONCE(sd->last_read_ns);

	if (READ_ONCE(sd->inflight[SMARTIO_READ]))
		return false;
	return !last || now - last >= SMARTIO_READ_GONE_MULT *
		(u64)READ_ONCE(sd->read_idle_us) * NSEC_PER_USEC;
}

/* Time after which the probe lets writes go; 0: no probe. */
static u64 smartio_probe_ready(struct smartio_data *sd, u64 now)
{
	if (!sd->probing)
		return 0;
	/* Writes drain, the device settles, then reads run alone. */
	if (sd->inflight[SMARTIO_WRITE])
		return SMARTIO_NEVER;
	if (!sd->probe_end_ns)
		sd->probe_end_ns = max(now, sd->last_write_done_ns +
				       smartio_settle_ns(sd)) +
				   (u64)READ_ONCE(sd->probe_ms) * NSEC_PER_MSEC;
	if (now < sd->probe_end_ns)
		return sd->probe_end_ns;
	sd->probing = false;
	return 0;
}

/*
 * The hold after a write, per write_merge_kb of it: plugging merges a
 * writer's bios before any elevator hook is asked (plug merges do not call
 * allow_merge), and a hold per request would let 1 MiB requests through as
 * often as 128 KiB ones.
 */
static u64 smartio_hold_after(struct smartio_data *sd)
{
	u64 unit = (u64)READ_ONCE(sd->write_merge_kb) * SZ_1K;

	if (!unit || sd->last_write_bytes <= unit)
		return sd->write_hold_ns;
	return div64_u64(sd->write_hold_ns * sd->last_write_bytes, unit);
}

/*
 * When the next write may go (smartio_write_ready_ns(), the probe first);
 * *@alone: whether reads are paused or gone now.
 */
static u64 smartio_write_ready(struct smartio_data *sd, u64 now, bool *alone)
{
	u64 idle_ns = (u64)READ_ONCE(sd->read_idle_us) * NSEC_PER_USEC;
	struct smartio_write_state st = {
		.now = now,
		.reads_inflight = sd->inflight[SMARTIO_READ],
		.writes_inflight = sd->inflight[SMARTIO_WRITE],
		.last_read_ns = sd->last_read_ns,
		.read_idle_ns = idle_ns,
		.read_gone_ns = SMARTIO_READ_GONE_MULT * idle_ns,
		.cap_now = sd->write_cap_now,
		.cap = READ_ONCE(sd->write_cap),
		.last_write_ns = sd->last_write_ns,
		.hold_ns = smartio_hold_after(sd),
	};
	u64 probe = smartio_probe_ready(sd, now);

	if (probe > now) {
		*alone = false;
		return probe;
	}
	return smartio_write_ready_ns(&st, alone);
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
 * The first expired real-time or best-effort request, oldest class first:
 * writes, then reads. The idle class has its own guard instead.
 */
static struct request *smartio_pick_expired(struct smartio_data *sd, u64 now)
{
	struct request *rq;
	unsigned int c;

	for (c = 0; c < SMARTIO_IDLE; c++) {
		rq = smartio_fifo_first(sd, c, SMARTIO_WRITE);
		if (rq && now >= rq->fifo_time)
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
 * The next request to dispatch, or NULL and in *@ready_ns when one may be
 * (SMARTIO_NEVER: after a completion or an insertion).
 */
static struct request *smartio_pick(struct smartio_data *sd, u64 now,
				    enum smartio_why *why, u64 *ready_ns)
{
	struct request *rq, *idle_read, *idle_write;
	u64 write_at, idle_at, bg_at;
	bool alone, guard;
	unsigned int c;

	*ready_ns = SMARTIO_NEVER;
	sd->bg_held = false;
	rq = list_first_entry_or_null(&sd->dispatch, struct request,
				      queuelist);
	if (rq) {
		*why = SMARTIO_WHY_HEAD;
		return rq;
	}
	rq = smartio_pick_expired(sd, now);
	if (rq) {
		*why = SMARTIO_WHY_EXPIRED;
		return rq;
	}
	write_at = smartio_write_ready(sd, now, &alone);
	bg_at = smartio_bg_read_ready(sd, now);
	for (c = 0; c < SMARTIO_IDLE; c++) {
		rq = smartio_fg_first(sd, c);
		if (rq) {
			*why = SMARTIO_WHY_FG_READ;
			return rq;
		}
		rq = smartio_fifo_first(sd, c, SMARTIO_READ);
		if (rq) {
			if (bg_at <= now) {
				*why = SMARTIO_WHY_READ;
				return rq;
			}
			sd->stats.bg_read_held++;
			sd->bg_held = true;
			*ready_ns = min3(*ready_ns, bg_at, rq->fifo_time);
		}
		rq = smartio_fifo_first(sd, c, SMARTIO_WRITE);
		if (rq && write_at <= now) {
			*why = alone ? SMARTIO_WHY_WRITE_ALONE :
				       SMARTIO_WHY_WRITE;
			return rq;
		}
		if (rq) {
			sd->stats.write_held++;
			/* held by the gate until it opens or the deadline */
			*ready_ns = min3(*ready_ns, write_at, rq->fifo_time);
		}
	}

	idle_read = smartio_fifo_first(sd, SMARTIO_IDLE, SMARTIO_READ);
	idle_write = smartio_fifo_first(sd, SMARTIO_IDLE, SMARTIO_WRITE);
	if (!idle_read && !idle_write)
		return NULL;
	idle_at = smartio_idle_ready(sd, now, idle_read, idle_write, &guard);
	if (idle_at <= now && (idle_read || write_at <= now)) {
		rq = idle_read ?: idle_write;
		*why = guard ? SMARTIO_WHY_IDLE_GUARD : SMARTIO_WHY_IDLE;
		if (guard)
			sd->stats.idle_guard++;
		return rq;
	}
	*ready_ns = min(*ready_ns, idle_read ? idle_at : max(idle_at, write_at));
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
		sd->last_write_ns = now;
		sd->last_write_bytes = blk_rq_bytes(rq);
	} else if (!sd->inflight[SMARTIO_WRITE] &&
		   now - sd->last_write_done_ns >= smartio_settle_ns(sd)) {
		/* No write on the device for long enough: a read alone. */
		flags |= SMARTIO_RQ_ALONE;
	} else {
		flags |= SMARTIO_RQ_MIXED;
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
			       sd->inflight[SMARTIO_WRITE], sd->write_cap_now);
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
	smartio_rq_set_flags(rq, flags & ~(SMARTIO_RQ_ALONE | SMARTIO_RQ_MIXED |
					   SMARTIO_RQ_IDLE));
	if (d == SMARTIO_READ)
		sd->last_read_ns = now;
	if (smartio_rq_fg(rq))
		sd->last_fg_ns = now;
	if (smartio_rq_class(rq) != SMARTIO_IDLE)
		sd->last_busy_ns = now;

	/* Beside reads, no request-to-request merge of writes (see allow_merge). */
	if (!(d == SMARTIO_WRITE && READ_ONCE(sd->write_merge_kb) &&
	      !smartio_reads_gone(sd, now)) &&
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
 * (smartio_insert_request); plug merges do not ask any elevator, and
 * smartio_hold_after() charges their size instead. Called without sd->lock:
 * last_read_ns may be a little stale, which only moves the limit's start by
 * one request.
 */
static bool smartio_allow_merge(struct request_queue *q, struct request *rq,
				struct bio *bio)
{
	struct smartio_data *sd = q->elevator->elevator_data;
	u64 max_bytes = (u64)READ_ONCE(sd->write_merge_kb) * SZ_1K;

	if (!max_bytes || !op_is_write(req_op(rq)) ||
	    smartio_reads_gone(sd, ktime_get_ns()))
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
 * read frees a slot a held request may wait for, a profile
 * window may change the throttle: run the queue if something is held. A
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
	bool kick = false;

	if (!(flags & SMARTIO_RQ_INFLIGHT))
		return;
	d = smartio_rq_dir(rq);
	now = ktime_get_ns();
	spin_lock_irqsave(&sd->lock, irqflags);
	adjusts = sd->stats.adjusts + sd->stats.probes;
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
					   SMARTIO_RQ_MIXED |
					   SMARTIO_RQ_IDLE));
	if (requeue)
		sd->stats.requeued++;
	else if (d == SMARTIO_READ)
		smartio_read_done(sd, rq, flags, now);
	else
		sd->last_write_done_ns = now;
	if (requeue || d == SMARTIO_WRITE || (flags & SMARTIO_RQ_IDLE) ||
	    (sd->bg_held && !smartio_rq_fg(rq)) ||
	    adjusts != sd->stats.adjusts + sd->stats.probes)
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
	sd->write_cap_now = SMARTIO_WRITE_CAP;
	sd->write_hold_us = SMARTIO_HOLD_MAX_US;
	sd->profiler = 1;
	sd->target_pct = SMARTIO_TARGET_PCT;
	sd->window_ms = SMARTIO_WINDOW_MS;
	sd->probe_ms = SMARTIO_PROBE_MS;
	sd->probe_interval_ms = SMARTIO_PROBE_INTERVAL_MS;
	sd->read_idle_us = SMARTIO_READ_IDLE_US;
	sd->write_merge_kb = SMARTIO_WRITE_MERGE_KB;
	sd->idle_grace_ms = SMARTIO_IDLE_GRACE_MS;
	sd->idle_expire_ms = SMARTIO_IDLE_EXPIRE_MS;
	sd->bg_read_cap = SMARTIO_BG_READ_CAP;
	sd->win.start_ns = ktime_get_ns();
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
	(3 * SMARTIO_NR_CLASSES * SMARTIO_NR_DIRS + 21)

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
	unsigned int inflight[SMARTIO_NR_DIRS], cap, slowdown, idle_inflight;
	unsigned int fg_inflight;
	u64 hold, alone, mixed;

	spin_lock_irqsave(&sd->lock, irqflags);
	cnt = sd->stats;
	inflight[SMARTIO_READ] = sd->inflight[SMARTIO_READ];
	inflight[SMARTIO_WRITE] = sd->inflight[SMARTIO_WRITE];
	cap = sd->write_cap_now;
	hold = sd->write_hold_ns;
	alone = sd->alone_ns;
	mixed = sd->mixed_ns;
	slowdown = sd->slowdown_pct;
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
	st[n++] = (struct mobio_stat){ "write_cap", cap };
	st[n++] = (struct mobio_stat){ "write_hold_us",
				       div_u64(hold, NSEC_PER_USEC) };
	st[n++] = (struct mobio_stat){ "read_alone_ns", alone };
	st[n++] = (struct mobio_stat){ "read_mixed_ns", mixed };
	st[n++] = (struct mobio_stat){ "read_slowdown_pct", slowdown };
	st[n++] = (struct mobio_stat){ "profiler_adjusts", cnt.adjusts };
	st[n++] = (struct mobio_stat){ "profiler_probes", cnt.probes };
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
struct smartio_tunable {
	size_t offset;
	unsigned int min;
	unsigned int max;
	bool throttle;		/* resets the write throttle when stored */
};

static unsigned int *smartio_tunable_ptr(struct elevator_queue *e,
					 const struct smartio_tunable *t)
{
	return (unsigned int *)((char *)e->elevator_data + t->offset);
}

/*
 * write_cap, write_hold_us and profiler reset the throttle: with the
 * profiler off it is exactly (write_cap, write_hold_us); with it on, those
 * are its ceilings and it starts again from (write_cap, no hold).
 */
static void smartio_reset_throttle(struct smartio_data *sd)
{
	unsigned long irqflags;

	spin_lock_irqsave(&sd->lock, irqflags);
	sd->write_cap_now = READ_ONCE(sd->write_cap);
	sd->write_hold_ns = READ_ONCE(sd->profiler) ? 0 :
			    (u64)READ_ONCE(sd->write_hold_us) * NSEC_PER_USEC;
	sd->probing = false;
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
	if (t->throttle)
		smartio_reset_throttle(e->elevator_data);
	smartio_recheck(e->elevator_data);
	return count;
}

#define SMARTIO_TUNABLE(name, field, lo, hi, thr)			\
static const struct smartio_tunable smartio_##name##_tunable = {	\
	.offset = offsetof(struct smartio_data, field),			\
	.min = lo,							\
	.max = hi,							\
	.throttle = thr,						\
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

SMARTIO_TUNABLE(read_expire_ms, expire_ms[SMARTIO_READ], 1, 60000, false)
SMARTIO_TUNABLE(write_expire_ms, expire_ms[SMARTIO_WRITE], 1, 60000, false)
SMARTIO_TUNABLE(write_cap, write_cap, 1, 4096, true)
SMARTIO_TUNABLE(write_hold_us, write_hold_us, 0, 1000000, true)
SMARTIO_TUNABLE(profiler, profiler, 0, 1, true)
SMARTIO_TUNABLE(target_slowdown_pct, target_pct, 100, 100000, false)
SMARTIO_TUNABLE(window_ms, window_ms, 1, 60000, false)
SMARTIO_TUNABLE(probe_ms, probe_ms, 1, 60000, false)
SMARTIO_TUNABLE(probe_interval_ms, probe_interval_ms, 0, 3600000, false)
SMARTIO_TUNABLE(read_idle_us, read_idle_us, 0, 1000000, false)
SMARTIO_TUNABLE(write_merge_kb, write_merge_kb, 0, 1048576, false)
SMARTIO_TUNABLE(idle_grace_ms, idle_grace_ms, 0, 60000, false)
SMARTIO_TUNABLE(idle_expire_ms, idle_expire_ms, 1, 60000, false)
SMARTIO_TUNABLE(bg_read_cap, bg_read_cap, 1, 4096, false)

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
	SMARTIO_FS_ENTRY(write_hold_us),
	SMARTIO_FS_ENTRY(profiler),
	SMARTIO_FS_ENTRY(target_slowdown_pct),
	SMARTIO_FS_ENTRY(window_ms),
	SMARTIO_FS_ENTRY(probe_ms),
	SMARTIO_FS_ENTRY(probe_interval_ms),
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

MODULE_DESCRIPTION("SmartIO I/O scheduler: reads first, writes throttled by a concurrency profiler");
MODULE_LICENSE("GPL");
