/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Freeblock: when in an idle gap background blocks may be issued, as pure
 * functions of the foreground's recent idle gaps.
 *
 * An idle gap runs from a foreground completion that leaves nothing in
 * flight to the next foreground arrival. A background block in service when
 * the gap ends makes that arrival wait (a collision: up to one service
 * time). Two parts of a gap are safe to use, each bounded to half the
 * collision budget (collide_pct % of the foreground's arrivals):
 *
 * - the *end*, after a window W: blocks then go back to back until the
 *   foreground returns, so every gap longer than W ends in a collision; W
 *   is the shortest candidate that at most half the budget of the recent
 *   gaps outlast, an upper quantile (fb_idle_window_us_of()). Dependent I/O
 *   (a reader that thinks 20 us between requests) gets a W just above its
 *   think time; Poisson arrivals at rate r get W = ln(200 / collide_pct) / r
 *   and the last exp(-r W) of the idle time;
 * - the *start*, up to a horizon T: a block that completes before T can
 *   only collide in a gap shorter than T, and at most half the budget of the
 *   recent gaps are (a lower quantile, fb_idle_horizon_us_of()). A periodic
 *   foreground (a player reading every 20 ms) thus leaves all of each gap
 *   but the last block's service time to the background, without a
 *   collision.
 *
 * The gaps are kept exactly, the last FB_GAPS of them. The host unit tests
 * (tests/unit/test_fb_idle.c) build this header unchanged against
 * tests/unit/fb_host_shim.h.
 */
#ifndef _FB_IDLE_H
#define _FB_IDLE_H

#ifdef __KERNEL__
#include <linux/limits.h>
#include <linux/minmax.h>
#include <linux/types.h>
#else
#include "fb_host_shim.h"
#endif

/* gaps remembered: the window follows the foreground's recent behaviour */
#define FB_GAPS			256
/* fewer gaps than this are not enough to judge: the window is max_us */
#define FB_GAP_MIN_SAMPLES	16

/**
 * struct fb_gaps - the last FB_GAPS idle gaps of a disk's foreground
 * @us: the gaps, us (at most U32_MAX), a ring
 * @next: where the next gap goes
 * @nr: gaps held, at most FB_GAPS
 *
 * Zero-initialised is empty. The caller serialises every access.
 */
struct fb_gaps {
	u32 us[FB_GAPS];
	u32 next;
	u32 nr;
};

/**
 * fb_gaps_add() - remember one idle gap, forgetting the oldest when full
 * @g: the gaps
 * @gap_us: the gap, us; longer than U32_MAX us counts as U32_MAX
 *
 * Context: any; touches only @g.
 */
static inline void fb_gaps_add(struct fb_gaps *g, u64 gap_us)
{
	g->us[g->next] = (u32)min_t(u64, gap_us, U32_MAX);
	g->next = (g->next + 1) % FB_GAPS;
	if (g->nr < FB_GAPS)
		g->nr++;
}

/**
 * fb_gaps_longer() - how many of the gaps outlast a window
 * @g: the gaps
 * @w_us: the window, us
 *
 * Context: any; touches nothing.
 * Return: the gaps longer than @w_us.
 */
static inline u32 fb_gaps_longer(const struct fb_gaps *g, u64 w_us)
{
	u32 i, longer = 0;

	for (i = 0; i < g->nr; i++)
		if (g->us[i] > w_us)
			longer++;
	return longer;
}

/**
 * fb_idle_next_candidate() - the candidate window after @w_us
 * @w_us: a candidate, us
 * @max_us: the last candidate
 *
 * Candidates are min_us, every power of two above it up to 2^31, and
 * max_us.
 *
 * Context: any; touches nothing.
 * Return: the smallest power of two above @w_us, or @max_us if that is
 * smaller or the powers are done.
 */
static inline u64 fb_idle_next_candidate(u64 w_us, u64 max_us)
{
	u64 p = 1;

	while (p <= w_us && p < (1ULL << 31))
		p <<= 1;
	return p > w_us && p < max_us ? p : max_us;
}

/* Half of @collide_pct % of @nr gaps, in gaps x 200 (integers only). */
static inline u64 fb_idle_allowed_x200(u32 collide_pct, u32 nr)
{
	return (u64)min_t(u32, collide_pct, 100) * nr;
}

/**
 * fb_idle_window_us_of() - the window after which the rest of a gap is used
 * @g: the recent idle gaps
 * @collide_pct: the collision budget, % of the foreground's arrivals (this
 *	part spends half of it); 0: no recent gap may outlast the window
 * @min_us: the shortest window, us
 * @max_us: the longest window, us (swapped with @min_us if smaller)
 *
 * Candidates are @min_us, every power of two above it and @max_us; the
 * window is the shortest candidate that at most @collide_pct / 2 % of the
 * gaps outlast, or @max_us when none is or fewer than FB_GAP_MIN_SAMPLES
 * gaps were seen.
 *
 * Context: any; touches nothing.
 * Return: the window, us, within [@min_us, @max_us].
 */
static inline u64 fb_idle_window_us_of(const struct fb_gaps *g,
				       u32 collide_pct, u64 min_us, u64 max_us)
{
	u64 allowed, w, tmp;

	if (min_us > max_us) {
		tmp = min_us;
		min_us = max_us;
		max_us = tmp;
	}
	if (g->nr < FB_GAP_MIN_SAMPLES)
		return max_us;
	allowed = fb_idle_allowed_x200(collide_pct, g->nr);
	for (w = min_us;; w = fb_idle_next_candidate(w, max_us)) {
		if ((u64)fb_gaps_longer(g, w) * 200 <= allowed || w >= max_us)
			return w;
	}
}

/**
 * fb_idle_horizon_us_of() - how far into a gap blocks may run from its start
 * @g: the recent idle gaps; its ring is reordered (sorted)
 * @collide_pct: the collision budget, % of the foreground's arrivals (this
 *	part spends half of it)
 *
 * A block that completes before the horizon T collides only in a gap
 * shorter than T: T is the (k + 1)-th shortest recent gap, where k is the
 * number of gaps half the budget allows to be shorter, so at most k are.
 * The order of @g no longer matters once the caller has a copy for this.
 *
 * Context: any; sorts @g's ring in place (insertion sort: FB_GAPS is small).
 * Return: the horizon, us; 0 when fewer than FB_GAP_MIN_SAMPLES gaps were
 * seen (no block goes at a gap's start).
 */
static inline u64 fb_idle_horizon_us_of(struct fb_gaps *g, u32 collide_pct)
{
	u32 i, j, v, k;

	if (g->nr < FB_GAP_MIN_SAMPLES)
		return 0;
	for (i = 1; i < g->nr; i++) {
		v = g->us[i];
		for (j = i; j && g->us[j - 1] > v; j--)
			g->us[j] = g->us[j - 1];
		g->us[j] = v;
	}
	k = (u32)(fb_idle_allowed_x200(collide_pct, g->nr) / 200);
	return g->us[min_t(u32, k, g->nr - 1)];
}

#endif /* _FB_IDLE_H */
