/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SmartIO: when a held request may go, as pure functions of a snapshot of
 * the scheduler's state. Each answers with a time (ns, the clock of
 * ktime_get_ns()): at or before @now, it may go now; SMARTIO_NEVER, not
 * until a completion or an insertion changes the state. The scheduler
 * stores the earliest such time of everything it holds: has_work() is false
 * until then and a timer runs the queue at that time, so the core never
 * re-runs a queue that would dispatch nothing (blk-mq re-runs one every
 * BLK_MQ_BUDGET_DELAY, 3 ms, while has_work() is true and dispatch_request()
 * returns NULL).
 *
 * The host unit tests (tests/unit/test_smartio_gate.c) build this header
 * unchanged against tests/unit/smartio_host_shim.h.
 */
#ifndef _SMARTIO_GATE_H
#define _SMARTIO_GATE_H

#ifdef __KERNEL__
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/types.h>
#else
#include "smartio_host_shim.h"
#endif

/* Not before a completion or an insertion. */
#define SMARTIO_NEVER		U64_MAX

/**
 * struct smartio_write_state - what the write gate looks at
 * @now: the time of the decision, ns
 * @reads_inflight: reads on the device
 * @writes_inflight: writes on the device
 * @last_read_ns: insertion or completion of the last read, 0: none yet
 * @read_idle_ns: reads count as active this long after @last_read_ns
 * @cap: writes in flight allowed
 * @bucket_ready_ns: when the write rate lets the next write go
 *	(smartio_bucket_ready_ns() of smartio_ctl.h)
 */
struct smartio_write_state {
	u64 now;
	unsigned int reads_inflight;
	unsigned int writes_inflight;
	u64 last_read_ns;
	u64 read_idle_ns;
	unsigned int cap;
	u64 bucket_ready_ns;
};

/* Reads quiet for @after since the last one (none in flight), from when. */
static inline u64 smartio_reads_quiet_at(const struct smartio_write_state *s,
					 u64 after)
{
	if (s->reads_inflight)
		return SMARTIO_NEVER;
	if (!s->last_read_ns)
		return 0;
	return s->last_read_ns + after;
}

/**
 * smartio_write_ready_ns() - when the next write may go
 * @s: the gate's state
 * @alone: set to whether reads are inactive at @s->now
 *
 * Reads are active while one is in flight and for read_idle_ns after the
 * last one was inserted or completed: the one rule for "reads are around".
 * Then a write waits for the write rate (the token bucket); otherwise only
 * for a free slot under cap. A write blocked only by the rate is ready at
 * the earlier of the rate's time and the moment reads go inactive.
 *
 * Context: any; pure.
 * Return: a time <= @s->now (go now), a later time, or SMARTIO_NEVER (a
 * completion has to free a slot first).
 */
static inline u64 smartio_write_ready_ns(const struct smartio_write_state *s,
					 bool *alone)
{
	u64 quiet_at = smartio_reads_quiet_at(s, s->read_idle_ns);

	*alone = s->now >= quiet_at;
	if (s->writes_inflight >= s->cap)
		return SMARTIO_NEVER;
	if (*alone || s->bucket_ready_ns <= s->now)
		return s->now;
	return min(s->bucket_ready_ns, quiet_at);
}

/**
 * struct smartio_idle_state - what the idle class waits for
 * @now: the time of the decision, ns
 * @idle_inflight: idle-class requests on the device
 * @others_busy: a real-time or best-effort request is queued or in flight
 * @last_busy_ns: last insertion or completion of a real-time or best-effort
 *	request, 0: none yet
 * @grace_ns: how long the others must have been quiet
 * @waiting_since_ns: since when the idle class waits: the later of its
 *	oldest queued request's insertion and its last dispatch
 * @guard_ns: the longest it waits while the others are busy
 */
struct smartio_idle_state {
	u64 now;
	unsigned int idle_inflight;
	bool others_busy;
	u64 last_busy_ns;
	u64 grace_ns;
	u64 waiting_since_ns;
	u64 guard_ns;
};

/**
 * smartio_idle_ready_ns() - when the next idle-class request may go
 * @s: the idle class's state
 * @guard: set to whether the starvation guard (not the grace) releases it
 *
 * One idle-class request at a time, and only when no other class has had a
 * request queued or in flight for grace_ns; so an idle-class scrub costs
 * the others at most one request's service time when they come back. Busy
 * others starve it for guard_ns at most: then one request goes, and the
 * next waits guard_ns again.
 *
 * Context: any; pure.
 * Return: a time <= @s->now (go now), a later time, or SMARTIO_NEVER (an
 * idle-class request is in flight).
 */
static inline u64 smartio_idle_ready_ns(const struct smartio_idle_state *s,
					bool *guard)
{
	u64 guard_at = s->waiting_since_ns + s->guard_ns;
	u64 grace_at = SMARTIO_NEVER;

	*guard = false;
	if (s->idle_inflight)
		return SMARTIO_NEVER;
	if (!s->others_busy)
		grace_at = s->last_busy_ns ? s->last_busy_ns + s->grace_ns : 0;
	if (grace_at <= guard_at || s->now >= grace_at)
		return grace_at;
	*guard = s->now >= guard_at;
	return guard_at;
}

/**
 * struct smartio_bg_read_state - what a background read looks at
 * @now: the time of the decision, ns
 * @fg_inflight: foreground reads on the device
 * @last_fg_ns: insertion or completion of the last foreground read, 0: none
 * @fg_idle_ns: the foreground counts as active this long after @last_fg_ns
 * @bg_inflight: other reads on the device
 * @bg_cap: other reads in flight allowed while the foreground is active
 */
struct smartio_bg_read_state {
	u64 now;
	unsigned int fg_inflight;
	u64 last_fg_ns;
	u64 fg_idle_ns;
	unsigned int bg_inflight;
	unsigned int bg_cap;
};

/**
 * smartio_bg_read_ready_ns() - when the next background read may go
 * @s: the state
 *
 * While the foreground app's reads are active (one in flight, or one seen
 * within fg_idle_ns), at most bg_cap other reads are on the device, so a
 * foreground read finds a free slot and a short device queue.
 *
 * Context: any; pure.
 * Return: a time <= @s->now (go now), the moment the foreground goes idle,
 * or SMARTIO_NEVER (a completion has to come first).
 */
static inline u64 smartio_bg_read_ready_ns(const struct smartio_bg_read_state *s)
{
	u64 fg_idle_at;

	if (s->bg_inflight < s->bg_cap)
		return s->now;
	if (s->fg_inflight)
		return SMARTIO_NEVER;
	fg_idle_at = s->last_fg_ns ? s->last_fg_ns + s->fg_idle_ns : 0;
	return max(fg_idle_at, s->now);
}

#endif /* _SMARTIO_GATE_H */
