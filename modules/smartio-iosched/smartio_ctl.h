/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * SmartIO's write controller, as pure functions: the read-latency signals (a
 * log-linear histogram and its percentile; a window's read slowdown over
 * reads of the same sizes alone), the rule that turns one into a
 * write byte rate (proportional-integral on the logarithm of the rate), and
 * the token bucket that spends that rate on writes. The scheduler keeps the
 * state and calls these under its lock; the host unit tests
 * (tests/unit/test_smartio_ctl.c) build this header unchanged against
 * tests/unit/smartio_host_shim.h.
 *
 * Why a rate and not a number of writes in flight: beside reads, what slows
 * a read is the write work the device has to do before or during it, which
 * grows with the bytes written per second, not with the request count (one
 * 1 MiB write costs what 256 4 KiB ones do). Why the logarithm: write rates
 * span 64 KiB/s to GB/s across devices, and a multiplicative step is the
 * same relative correction everywhere. Why PI: a step proportional to the
 * error converges in a few windows from far away and does not oscillate
 * near the target; the integral term removes the steady-state error.
 */
#ifndef _SMARTIO_CTL_H
#define _SMARTIO_CTL_H

#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/time64.h>
#include <linux/types.h>
#else
#include "smartio_host_shim.h"
#endif

/* --- Read latency histogram ------------------------------------------------ */

/*
 * Buckets of 1/8 of a power of two (12.5%) from 2^10 ns (1 us) up, the last
 * one open: 8 per octave over 24 octaves reach 2^34 ns (17 s).
 */
#define SMARTIO_LAT_SUB_SHIFT	3
#define SMARTIO_LAT_SUB		BIT(SMARTIO_LAT_SUB_SHIFT)
#define SMARTIO_LAT_MIN_SHIFT	10
#define SMARTIO_LAT_OCTAVES	24
#define SMARTIO_LAT_BUCKETS	(SMARTIO_LAT_SUB * SMARTIO_LAT_OCTAVES)

/**
 * struct smartio_lat_hist - read latencies of one window
 * @n: samples
 * @count: samples per bucket (smartio_lat_bucket())
 */
struct smartio_lat_hist {
	u32 n;
	u32 count[SMARTIO_LAT_BUCKETS];
};

/**
 * smartio_lat_bucket() - the histogram bucket of a latency
 * @ns: latency, ns
 *
 * Context: any; pure.
 * Return: 0 for anything under 1.125 * 2^SMARTIO_LAT_MIN_SHIFT ns (1152)
 * and the last bucket for anything past the top.
 */
static inline unsigned int smartio_lat_bucket(u64 ns)
{
	unsigned int msb, sub, b;

	if (ns < (1ULL << SMARTIO_LAT_MIN_SHIFT))
		return 0;
	msb = fls64(ns) - 1;
	sub = (ns >> (msb - SMARTIO_LAT_SUB_SHIFT)) & (SMARTIO_LAT_SUB - 1);
	b = (msb - SMARTIO_LAT_MIN_SHIFT) * SMARTIO_LAT_SUB + sub;
	return min_t(unsigned int, b, SMARTIO_LAT_BUCKETS - 1);
}

/**
 * smartio_lat_bucket_top() - the upper end of a bucket
 * @b: bucket, < SMARTIO_LAT_BUCKETS
 *
 * A percentile is reported as the top of its bucket: never below the true
 * value (by at most 12.5% above it), so the controller errs on the side of
 * the reads.
 *
 * Context: any; pure.
 * Return: the smallest latency, ns, of the next bucket.
 */
static inline u64 smartio_lat_bucket_top(unsigned int b)
{
	unsigned int msb = SMARTIO_LAT_MIN_SHIFT + b / SMARTIO_LAT_SUB;
	u64 sub = b % SMARTIO_LAT_SUB;

	return (SMARTIO_LAT_SUB + sub + 1) << (msb - SMARTIO_LAT_SUB_SHIFT);
}

static inline void smartio_lat_add(struct smartio_lat_hist *h, u64 ns)
{
	h->count[smartio_lat_bucket(ns)]++;
	h->n++;
}

/**
 * smartio_lat_pct() - a percentile of the histogram
 * @h: the histogram
 * @pct: 1..100
 *
 * Context: any; pure.
 * Return: the top of the bucket holding the @pct-th percentile sample, ns;
 * 0 when @h is empty.
 */
static inline u64 smartio_lat_pct(const struct smartio_lat_hist *h,
				  unsigned int pct)
{
	/* the rank of the percentile sample, 1-based, rounded up */
	u64 rank = ((u64)h->n * pct + 99) / 100, seen = 0;
	unsigned int b;

	if (!h->n)
		return 0;
	for (b = 0; b < SMARTIO_LAT_BUCKETS; b++) {
		seen += h->count[b];
		if (seen >= rank)
			return smartio_lat_bucket_top(b);
	}
	return smartio_lat_bucket_top(SMARTIO_LAT_BUCKETS - 1);
}

/* --- Read sizes and slowdowns ----------------------------------------------- */

/*
 * A read's latency alone grows with its size: on a 16 MB/s device a 128 KiB
 * read takes 8 ms and a 4 KiB one under 0.5 ms. A percentile over a window's
 * reads of mixed sizes measures which sizes the window held as much as what
 * writes did to them, and a baseline learnt from one mix misjudges the next
 * (traced start-ups: a window's p90 of 7-11 ms against baselines moving
 * between 0.7 and 2.8 ms). So each read is compared with reads of its own
 * size class alone, classes of a power of two from 4 KiB and below to
 * 512 KiB and above, and the controller holds the window's summed latency
 * over what its reads took alone (struct smartio_read_sums).
 */
#define SMARTIO_SIZE_CLASSES	8
#define SMARTIO_SIZE_MIN_SHIFT	12
/* A slowdown of 1 (as fast as reads alone): a 16-bit fraction. */
/* A read's latency counts at most a minute: sums of many stay far from 2^64. */
#define SMARTIO_LAT_MAX_NS	(60 * NSEC_PER_SEC)
#define SMARTIO_SLOWDOWN_ONE	BIT_ULL(16)

/**
 * smartio_size_class() - the size class of a read
 * @bytes: the read's size
 *
 * Context: any; pure.
 * Return: 0 for 4 KiB and below, c for (2^(c-1), 2^c] * 4 KiB, and
 * SMARTIO_SIZE_CLASSES - 1 for anything larger.
 */
static inline unsigned int smartio_size_class(u32 bytes)
{
	unsigned int c = 0;

	if (bytes > (1U << SMARTIO_SIZE_MIN_SHIFT))
		c = fls64((bytes - 1) >> SMARTIO_SIZE_MIN_SHIFT);
	return min_t(unsigned int, c, SMARTIO_SIZE_CLASSES - 1);
}

/**
 * struct smartio_read_sums - a window's reads against their classes alone
 * @lat_ns: their summed latency, ns (each read's at most a minute)
 * @base_ns: the summed latency alone of their size classes, ns
 *
 * Why sums and not a percentile of each read's slowdown: a start-up is a
 * chain of dependent reads, and its time is their summed latency, so what
 * writes add to it is what they add to that sum. A percentile misses it on
 * a device whose latency alone is bimodal: traced on the start-up bench's
 * null_blk (bench/fio/results/20261206-*-signal-replay.txt), 128 KiB reads
 * take 0.44 ms, or up to 20 ms when readahead has emptied the bandwidth
 * budget; their p90 alone is 16.06 ms and beside a writer 16.90 ms, while
 * beside the writer more of them wait, and the mean moves 1.24x. Held at
 * 110%, the p90 let writes slow start-ups by 18-21%.
 */
struct smartio_read_sums {
	u64 lat_ns;
	u64 base_ns;
};

/**
 * smartio_read_sums_add() - one read into a window's sums
 * @s: the sums
 * @lat_ns: the read's latency, ns
 * @base_ns: the latency alone of its size class, ns (> 0)
 *
 * Context: any; pure but for @s.
 */
static inline void smartio_read_sums_add(struct smartio_read_sums *s,
					 u64 lat_ns, u64 base_ns)
{
	s->lat_ns += min_t(u64, lat_ns, SMARTIO_LAT_MAX_NS);
	s->base_ns += base_ns;
}

/**
 * smartio_slowdown() - a window's read slowdown
 * @s: its sums
 *
 * Context: any; pure.
 * Return: @s->lat_ns / @s->base_ns in units of 1 / SMARTIO_SLOWDOWN_ONE:
 * how much longer its reads took, together, than reads of their sizes
 * alone; 0 for a window without reads.
 */
static inline u64 smartio_slowdown(const struct smartio_read_sums *s)
{
	if (!s->base_ns)
		return 0;
	return mul_u64_u64_div_u64(s->lat_ns, SMARTIO_SLOWDOWN_ONE,
				   s->base_ns);
}

/**
 * smartio_baseline_next() - a size class's latency alone after a batch
 * @base_ns: the baseline so far, ns; 0: none
 * @mean_ns: the mean latency of the batch's reads alone, ns
 *
 * Down by half the step, up by an eighth: a device's latency alone changes
 * rarely, while reads that only looked alone (the device still busy with
 * what writes left it) would raise the baseline, which lets more writes
 * in. Not down at once: on a device whose latency alone is heavy-tailed,
 * the mean of a batch swings with how many slow reads it caught, and the
 * lowest batch would stand for the class (the first batch does).
 *
 * Context: any; pure.
 * Return: the new baseline, ns.
 */
static inline u64 smartio_baseline_next(u64 base_ns, u64 mean_ns)
{
	if (!base_ns)
		return mean_ns;
	if (mean_ns < base_ns)
		return base_ns - (base_ns - mean_ns) / 2;
	return base_ns + (mean_ns - base_ns) / 8;
}

/*
 * A baseline no batch of reads alone has moved for this long is stale, and
 * windows whose reads beat it by a quarter correct it (smartio_baseline_
 * stale_next()). A second is ten windows at the default 100 ms: longer than
 * the gaps a throttled writer leaves between batches, shorter than a
 * download.
 */
#define SMARTIO_BASELINE_STALE_NS	NSEC_PER_SEC
/* Reads of a class in one window before its mean may correct a baseline. */
#define SMARTIO_BASELINE_WINDOW_READS	8U

/**
 * smartio_baseline_stale_next() - a stale baseline against one window
 * @base_ns: the class's baseline, ns; 0: none
 * @mean_ns: the mean latency of the class's reads in the window, writes
 *	around or not, ns
 * @n: how many reads that mean is of
 *
 * Reads beside writes are not faster than alone. When a window's reads of
 * a class take under three quarters of its baseline, the baseline is
 * wrong: it was learnt while the device was slower for another reason (a
 * burst of large reads: reads alone means no write, not no other read)
 * and, with writes running since, no read alone came to bring it down.
 * Left there, it makes reads beside writes look unslowed, the rate rises,
 * the writes leave no gap for a read alone, and the baseline stays for as
 * long as the writes do. Down by half the step a window, as for a batch of
 * reads alone; only a stale baseline is corrected this way (the caller's
 * part), so that a baseline in use moves by reads alone only.
 *
 * Context: any; pure.
 * Return: the new baseline, ns (@base_ns when not contradicted).
 */
static inline u64 smartio_baseline_stale_next(u64 base_ns, u64 mean_ns,
					      unsigned int n)
{
	if (!base_ns || n < SMARTIO_BASELINE_WINDOW_READS ||
	    mean_ns >= base_ns - base_ns / 4)
		return base_ns;
	return smartio_baseline_next(base_ns, mean_ns);
}

/*
 * Windows with reads and writes a size class may spend cold: a second at
 * the default window. A reader beside held writes runs alone most of it
 * (past-due writes go at the floor, 512 KiB each 500 ms, and a read is
 * alone from 100 ms after the last write's completion), and 32 reads
 * alone make a baseline.
 */
#define SMARTIO_COLD_WINDOWS	10U

/**
 * smartio_cold_next() - whether writes wait for the reads' baselines
 * @base_ns: each size class's baseline, ns; 0: none
 * @reads: each class's reads in the window just ended
 * @cold_windows: the windows with writes each class has spent cold;
 *	counted here
 * @writes: the window had writes (queued or on the device)
 * @n: the number of size classes
 *
 * A class's slowdown is its reads' latency over its baseline, the mean of
 * reads that ran with no write around. Until it has one, its fastest read
 * stands in, which is a read alone only if one ran alone. When writes run
 * from the first read on (a fresh scheduler on a busy disk, a download
 * when an app starts) none does: the stand-in is a read slowed by writes,
 * the slowdown looks like 1, the rate stays unlimited, and no read ever
 * runs alone to correct it (the 2026-12-07 bench: one round of the 200%
 * target, reads at 62x their time alone). So a class with reads in the
 * window and no baseline makes the next window cold: writes beside active
 * reads wait for their deadline and then go at the floor, reads run alone,
 * and the class gets a baseline. Each class spends at most
 * SMARTIO_COLD_WINDOWS windows that had writes (a window without them held
 * nothing and costs nothing): if its reads never run alone even then, the
 * stand-in serves rather than writes kept at the floor for good. Classes
 * add up: at most SMARTIO_COLD_WINDOWS times the classes read beside
 * writes. Idle-class writes, which have no deadline, wait meanwhile for
 * reads to go quiet.
 *
 * Context: any; pure but for @cold_windows.
 * Return: whether the next window is cold.
 */
static inline bool smartio_cold_next(const u64 *base_ns,
				     const unsigned int *reads,
				     unsigned int *cold_windows, bool writes,
				     unsigned int n)
{
	bool cold = false;
	unsigned int c;

	for (c = 0; c < n; c++) {
		if (base_ns[c] || !reads[c] ||
		    cold_windows[c] >= SMARTIO_COLD_WINDOWS)
			continue;
		cold_windows[c] += writes;
		cold = true;
	}
	return cold;
}

/* --- Fixed-point 2^x (Q8: 256 is 1.0) --------------------------------------- */

#define SMARTIO_Q8		256

/* 2^f - 1 for 0 <= f < 1 is within 0.008 of f - 0.3466 f (1 - f): 89/256. */
#define SMARTIO_LOG_BOW		89

/**
 * smartio_scale_q8() - @x times 2^(@u / 256)
 * @x: the value, < 2^52 (>= 2^10 for the accuracy below)
 * @u: the exponent, Q8, -16 * 256 .. 8 * 256
 *
 * Context: any; pure.
 * Return: the scaled value, within 0.6% (rounded down).
 */
static inline u64 smartio_scale_q8(u64 x, s32 u)
{
	s32 whole = u >= 0 ? u / SMARTIO_Q8 : -((-u + SMARTIO_Q8 - 1) /
						 SMARTIO_Q8);
	u32 f = (u32)(u - whole * SMARTIO_Q8);	/* 0..255 */
	u64 mult = SMARTIO_Q8 + f - SMARTIO_LOG_BOW * f * (SMARTIO_Q8 - f) /
		   (SMARTIO_Q8 * SMARTIO_Q8);

	x = x * mult / SMARTIO_Q8;
	return whole >= 0 ? x << whole : x >> -whole;
}

/* --- The controller --------------------------------------------------------- */

/* Gains, on the error in log2 units: u = (de + e) / 4. */
#define SMARTIO_CTL_KP_SHIFT	2
#define SMARTIO_CTL_KI_SHIFT	2
/* The most one window may cut (4x) or raise (2x) the rate, Q8. */
#define SMARTIO_CTL_CUT_MAX	(2 * SMARTIO_Q8)
#define SMARTIO_CTL_RISE_MAX	(1 * SMARTIO_Q8)
/*
 * Errors within half a histogram bucket (6% of the target) are no error:
 * the latency percentile moves by whole buckets, and acting on that step
 * would keep the rate moving around the target; the slowdown, a mean over
 * a window's reads, is held to the same band.
 */
#define SMARTIO_CTL_DEADBAND	16
/* A rise may take the rate to this many times what writes took, at most. */
#define SMARTIO_CTL_WINDUP	2

/**
 * struct smartio_ctl - the controller's state
 * @rate: write bytes per second allowed while reads are active
 * @prev_err: the last window's error, Q8 log2 units
 * @have_prev: @prev_err is set (not the first window with reads)
 */
struct smartio_ctl {
	u64 rate;
	s32 prev_err;
	bool have_prev;
};

/**
 * struct smartio_ctl_window - what one window measured
 * @read: the percentile of read latency (ns) or the read slowdown
 *	(smartio_slowdown()); 0: no read sample
 * @target: what it should be, in the same unit (> 0)
 * @write_bytes: bytes of write dispatched in the window
 * @writes: a write was queued, dispatched or on the device in the window
 * @window_ns: the window's length, ns (> 0)
 * @floor: the lowest rate, bytes/s (> 0): the write starvation bound
 * @ceiling: the highest rate, bytes/s (>= @floor)
 */
struct smartio_ctl_window {
	u64 read;
	u64 target;
	u64 write_bytes;
	bool writes;
	u64 window_ns;
	u64 floor;
	u64 ceiling;
};

/* The largest error counted: a window at 17x the target or more. */
#define SMARTIO_CTL_ERR_MIN	(-16 * SMARTIO_Q8)

/**
 * smartio_ctl_error() - how far a window was from the target
 * @read: what it measured (> 0)
 * @target: what it should have been (> 0)
 *
 * (target - read) / target: linear, not the logarithm of the ratio, so
 * that the integral term, which stops moving the rate when the errors sum
 * to nothing, holds the windows' mean at the target. On the logarithm it
 * held their geometric mean, which on a heavy-tailed signal is far below the
 * mean a start-up pays: traced in the start-up bench, windows whose p90
 * slowdown averaged 151-158% left a 110% target's rate unmoved.
 *
 * Context: any; pure.
 * Return: the error in Q8 (256: 1.0), from SMARTIO_CTL_ERR_MIN to 256.
 */
static inline s32 smartio_ctl_error(u64 read, u64 target)
{
	if (read >= target * (1 - SMARTIO_CTL_ERR_MIN / SMARTIO_Q8))
		return SMARTIO_CTL_ERR_MIN;
	if (read >= target)
		return -(s32)div64_u64((read - target) * SMARTIO_Q8, target);
	return (s32)div64_u64((target - read) * SMARTIO_Q8, target);
}

/**
 * smartio_ctl_update() - the rate for the next window
 * @c: the controller
 * @w: the window just ended
 *
 * With e = (target - measured) / target (smartio_ctl_error(); positive:
 * reads faster than the target) the rate is multiplied by 2^u,
 * u = (e - e_prev) / 4 + e / 4: the velocity form of a PI rule on
 * log2(rate). For a device whose read latency grows as rate^g, near the
 * target e is ln 2 times the error in log2 units, and the error decays for
 * g up to 3.7 (2.6 / ln 2: the poles of z^2 - (1 - g'/2) z - g'/4, g' =
 * g ln 2, stay inside the unit circle); the host tests check convergence,
 * the step response and the bounds below.
 * Each window's step is bounded (a cut of 4x, a rise of 2x), a rise never
 * takes the rate past SMARTIO_CTL_WINDUP times what writes took (a rate
 * nobody uses would otherwise grow without bound and take many windows to
 * come back: integral windup), a cut starts from no more than that (from
 * the ceiling, 64 GiB/s on a fresh queue, steps in proportion to the error
 * had not reached a 100 MB/s writer's pace after 39 windows in the VM, and
 * not one write was held meanwhile), and the rate stays in [floor, ceiling].
 * A window without read samples changes nothing, and so does one without
 * writes: its reads were slowed by something no write rate controls (other
 * reads, the device's own state), and on a device whose latency is
 * heavy-tailed alone (traced on null_blk: a 4 KiB read behind readahead
 * waits 5-20 ms for the next bandwidth tick) a window without writes would
 * otherwise cut the rate on every burst of reads, and only cut it (a rise is
 * bounded by what writes took).
 *
 * Context: any; pure but for @c.
 * Return: whether the rate changed.
 */
static inline bool smartio_ctl_update(struct smartio_ctl *c,
				      const struct smartio_ctl_window *w)
{
	u64 old = c->rate, took, rate;
	s32 e, u;

	if (!w->read || !w->writes) {
		c->have_prev = false;
		return false;
	}
	e = smartio_ctl_error(w->read, w->target);
	if (e > -SMARTIO_CTL_DEADBAND && e < SMARTIO_CTL_DEADBAND)
		e = 0;
	u = (e >> SMARTIO_CTL_KI_SHIFT) +
	    (c->have_prev ? (e - c->prev_err) >> SMARTIO_CTL_KP_SHIFT : 0);
	c->prev_err = e;
	c->have_prev = true;
	u = clamp(u, -SMARTIO_CTL_CUT_MAX, SMARTIO_CTL_RISE_MAX);

	rate = clamp(old, w->floor, w->ceiling);
	if (u) {
		took = mul_u64_u64_div_u64(w->write_bytes, NSEC_PER_SEC,
					   w->window_ns);
		/* a cut is of what writes took, not of a rate they left unused */
		if (u < 0 && took)
			rate = min(rate, SMARTIO_CTL_WINDUP * took);
		rate = smartio_scale_q8(min(rate, 1ULL << 51), u);
		if (u > 0)
			rate = min(rate, max(old, SMARTIO_CTL_WINDUP * took));
	}
	c->rate = clamp(rate, w->floor, w->ceiling);
	return c->rate != old;
}

/* --- The token bucket ------------------------------------------------------- */

/**
 * struct smartio_bucket - write bytes that may go now
 * @tokens: bytes; negative: a debt the next writes wait out
 * @at_ns: when @tokens was last brought up to date
 */
struct smartio_bucket {
	s64 tokens;
	u64 at_ns;
};

/**
 * smartio_bucket_tokens() - the bucket's tokens at @now
 * @b: the bucket
 * @rate: bytes per second (> 0)
 * @burst: the most it holds, bytes (< 2^62)
 * @now: ns, >= @b->at_ns
 *
 * Context: any; pure.
 * Return: @b->tokens plus what @rate added since @b->at_ns, at most @burst.
 */
static inline s64 smartio_bucket_tokens(const struct smartio_bucket *b,
					u64 rate, u64 burst, u64 now)
{
	u64 room, dt;

	if (b->tokens >= (s64)burst || now <= b->at_ns)
		return min(b->tokens, (s64)burst);
	room = burst - b->tokens;
	dt = now - b->at_ns;
	/* the time to fill the room; compared first so the product fits */
	if (dt >= mul_u64_u64_div_u64(room, NSEC_PER_SEC, rate))
		return burst;
	return b->tokens + (s64)mul_u64_u64_div_u64(rate, dt, NSEC_PER_SEC);
}

/**
 * smartio_bucket_ready_ns() - when the next write may go
 * @b: the bucket
 * @rate: bytes per second (> 0)
 * @now: ns
 *
 * A write goes while the bucket holds any token and then takes its whole
 * size, going into debt if it is larger: a write of any size goes, and the
 * debt makes the next ones wait as long as its size needs at @rate. So the
 * oldest write waits at most (the largest write + @burst) / @rate, whatever
 * went before (smartio_bucket_charge() bounds the debt).
 *
 * Context: any; pure.
 * Return: @now or earlier when a write may go; else the time, ns, at which
 * the debt is paid.
 */
static inline u64 smartio_bucket_ready_ns(const struct smartio_bucket *b,
					  u64 rate, u64 now)
{
	u64 need, at;

	if (b->tokens > 0)
		return now;
	/*
	 * The first moment smartio_bucket_tokens() is > 0, counted from
	 * at_ns (whole bytes accrue from there). A debt is at most one
	 * write: the clamp only keeps the product in range.
	 */
	need = min_t(u64, 1 - b->tokens, 1ULL << 33);
	at = b->at_ns + div64_u64(need * NSEC_PER_SEC + rate - 1, rate);
	return max(at, now);
}

/**
 * smartio_bucket_sync() - bring the bucket up to @now at @rate
 * @b: the bucket
 * @rate: bytes per second (> 0), the rate until now
 * @burst: the most it holds, bytes
 * @now: ns
 *
 * Called before the rate changes, so that the time before the change
 * counts at the old rate.
 * Context: any; pure but for @b.
 */
static inline void smartio_bucket_sync(struct smartio_bucket *b, u64 rate,
				       u64 burst, u64 now)
{
	b->tokens = smartio_bucket_tokens(b, rate, burst, now);
	b->at_ns = max(now, b->at_ns);
}

/**
 * smartio_bucket_charge() - a write of @bytes went at @now
 * @b: the bucket
 * @rate: bytes per second (> 0)
 * @burst: the most it holds, bytes
 * @now: ns
 * @bytes: the write's size
 *
 * Every write is charged, also one the bucket did not gate (it went while
 * reads were inactive, or past its deadline), so that what went counts
 * against what may go next. The debt after a charge is at most @bytes:
 * a write the bucket let go (it held a token) never leaves more, and a run
 * of ungated writes (seconds of writes alone, at the device's speed) must
 * not hold the next gated one longer than one write needs at @rate; an
 * unbounded debt would starve writes beside reads for as long as the run
 * lasted, many times past any deadline.
 *
 * Context: any; pure but for @b.
 */
static inline void smartio_bucket_charge(struct smartio_bucket *b, u64 rate,
					 u64 burst, u64 now, u32 bytes)
{
	smartio_bucket_sync(b, rate, burst, now);
	b->tokens = max(b->tokens - (s64)bytes, -(s64)bytes);
}

#endif /* _SMARTIO_CTL_H */
