/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Freeblock: how long the disk must have been idle before a background
 * block is issued, as a pure function of the foreground's recent idle gaps.
 *
 * The disk is idle when no foreground I/O is in flight and none arrived for
 * a window W after the last completion; a background block of service time
 * S is issued then. A foreground arrival during it waits for it: a
 * collision. Waiting W costs the part of every gap before W: with Poisson
 * arrivals at rate r the share of idle time left is about exp(-r W), so W
 * decides everything. Poisson gaps are memoryless, so a longer W buys no
 * fewer collisions; dependent I/O (a reader that thinks 20 us between
 * requests) makes most gaps short, and a W just above the think time avoids
 * nearly every collision. So W is chosen from the last FB_GAPS gaps, kept
 * exactly (a log2 histogram would misjudge the very bucket edges the
 * candidates sit on): the shortest candidate whose collision probability
 * P(gap <= W + S | gap > W) is within the budget, else the shortest one
 * that at least halves the collisions of the shortest usable window, else
 * that one.
 *
 * Probabilities are in parts per 1024 (ppk). The host unit tests
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
/* a candidate fewer gaps outlast than this is not judged (and not used) */
#define FB_GAP_MIN_SURVIVORS	8

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
 * fb_gaps_collide_ppk() - how often a block issued after window @w_us
 *	meets a foreground arrival
 * @g: the gaps
 * @w_us: the window, us
 * @service_us: a background block's service time, us
 * @survivors: out, the gaps longer than @w_us (the ones a block is issued
 *	in); may be NULL
 *
 * Context: any; touches nothing but @survivors.
 * Return: of the gaps longer than @w_us, the share that end within
 * @service_us after it, in ppk (0 when no gap is longer).
 */
static inline u32 fb_gaps_collide_ppk(const struct fb_gaps *g, u64 w_us,
				      u64 service_us, u32 *survivors)
{
	u64 end = w_us + service_us < w_us ? U64_MAX : w_us + service_us;
	u32 i, longer = 0, hit = 0;

	for (i = 0; i < g->nr; i++) {
		if (g->us[i] <= w_us)
			continue;
		longer++;
		if (g->us[i] <= end)
			hit++;
	}
	if (survivors)
		*survivors = longer;
	return longer ? (u32)(((u64)hit << 10) / longer) : 0;
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

/**
 * fb_idle_window_us_of() - the idle window for the gaps seen
 * @g: the recent idle gaps
 * @service_us: a background block's service time, us
 * @collide_pct: the collision budget, % (0: none meets it; 100 or more:
 *	every usable window does)
 * @min_us: the shortest window, us
 * @max_us: the longest window, us (swapped with @min_us if smaller)
 *
 * Fewer than FB_GAP_MIN_SAMPLES gaps: @max_us. Of the candidates that at
 * least FB_GAP_MIN_SURVIVORS gaps outlast (none: @max_us), the shortest
 * whose collision probability is within @collide_pct; else the shortest
 * with at most half the probability of the first usable one (waiting
 * longer must buy something: with memoryless gaps it buys nothing); else
 * the first usable one.
 *
 * Context: any; touches nothing.
 * Return: the window, us, within [@min_us, @max_us].
 */
static inline u64 fb_idle_window_us_of(const struct fb_gaps *g,
				       u64 service_us, u32 collide_pct,
				       u64 min_us, u64 max_us)
{
	u32 budget = (u32)min_t(u32, collide_pct, 100) * 1024 / 100;
	u32 p, first_p = 0, survivors;
	u64 w, first = 0, halving = 0, tmp;

	if (min_us > max_us) {
		tmp = min_us;
		min_us = max_us;
		max_us = tmp;
	}
	if (g->nr < FB_GAP_MIN_SAMPLES)
		return max_us;
	for (w = min_us;; w = fb_idle_next_candidate(w, max_us)) {
		p = fb_gaps_collide_ppk(g, w, service_us, &survivors);
		if (survivors >= FB_GAP_MIN_SURVIVORS) {
			if (p <= budget)
				return w;
			if (!first) {
				first = w;
				first_p = p;
			} else if (!halving && p <= first_p / 2) {
				halving = w;
			}
		}
		if (w >= max_us)
			break;
	}
	if (halving)
		return halving;
	return first ? first : max_us;
}

#endif /* _FB_IDLE_H */
