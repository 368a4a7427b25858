// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of freeblock's idle-gap estimator (modules/freeblock/fb_idle.h):
 * the ring of the last FB_GAPS idle gaps, fb_gaps_longer() on sets counted
 * by hand, the candidate windows, the half budget in gaps x 200, the window
 * (the shortest candidate that at most collide_pct / 2 % of the gaps
 * outlast: longer * 200 <= pct * nr) at its exact boundaries, for a
 * dependent reader and for Poisson arrivals, and the horizon (the (k + 1)-th
 * shortest gap, k = pct * nr / 200) for a periodic foreground, ties and a
 * hand-computed k. Every input is fixed or drawn from a fixed-seed LCG.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fb_idle.h"

#define MS	1000ULL		/* us */

/* the window bounds of the scenario tests */
#define MIN_US		10ULL		/* the module's lowest idle_min_us */
#define MAX_US		(50 * MS)	/* the module's default idle_max_us */

/* 64-bit LCG (Knuth's MMIX constants): the same gaps on every run */
static u64 lcg_state;

static u64 lcg_next(void)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return lcg_state;
}

/* uniform in (0, 1), never 0: the top 53 bits, offset by half a step */
static double lcg_unit(void)
{
	return ((double)(lcg_next() >> 11) + 0.5) / 9007199254740992.0;
}

/* @n gaps of @us each */
static void add_n(struct fb_gaps *g, int n, u64 us)
{
	while (n-- > 0)
		fb_gaps_add(g, us);
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* @g's held gaps, sorted ascending, into @out (FB_GAPS entries) */
static void sorted_copy(const struct fb_gaps *g, u32 *out)
{
	memcpy(out, g->us, g->nr * sizeof(*out));
	qsort(out, g->nr, sizeof(*out), cmp_u32);
}

/*
 * A reader that thinks 15..25 us between requests (15 + i % 11), 240
 * times, and pauses 40..58.75 ms 16 times, one pause every 16 gaps. Of
 * the 256, 256 outlast 10 us, 210 outlast 16, 16 outlast 25 .. 32768, 7
 * outlast 50000 and none 65536.
 */
static void fill_dependent_reader(struct fb_gaps *g)
{
	int i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < FB_GAPS; i++) {
		if (i % 16 == 15)
			fb_gaps_add(g, 40 * MS + (i / 16) * 1250);
		else
			fb_gaps_add(g, 15 + i % 11);
	}
}

/* 256 exponential gaps of mean 1 ms, whole us, from @seed */
static void fill_poisson(struct fb_gaps *g, u64 seed)
{
	int i;

	memset(g, 0, sizeof(*g));
	lcg_state = seed;
	for (i = 0; i < FB_GAPS; i++)
		fb_gaps_add(g, (u64)(-1000.0 * log(lcg_unit())));
}

/* the gaps 5, 10, 20, 30, 100, 150 us */
static void fill_six(struct fb_gaps *g)
{
	static const u64 six[] = { 5, 10, 20, 30, 100, 150 };
	size_t i;

	memset(g, 0, sizeof(*g));
	for (i = 0; i < sizeof(six) / sizeof(six[0]); i++)
		fb_gaps_add(g, six[i]);
}

/* ---- the ring ---- */

static void test_gaps_ring_wraps(void **state)
{
	struct fb_gaps g = { 0 };
	int i;

	(void)state;
	for (i = 0; i < FB_GAPS; i++) {
		assert_int_equal(g.nr, i);
		assert_int_equal(g.next, i);
		fb_gaps_add(&g, 1000 + i);
	}
	assert_int_equal(g.nr, FB_GAPS);
	assert_int_equal(g.next, 0);
	for (i = 0; i < FB_GAPS; i++)
		assert_int_equal(g.us[i], 1000 + i);

	/* the 257th replaces the first, and only it; nr stays 256 */
	fb_gaps_add(&g, 7);
	assert_int_equal(g.nr, FB_GAPS);
	assert_int_equal(g.next, 1);
	assert_int_equal(g.us[0], 7);
	assert_int_equal(g.us[1], 1001);
	assert_int_equal(g.us[FB_GAPS - 1], 1000 + FB_GAPS - 1);

	/* 255 more: every slot but us[0] replaced, next back at 0 */
	for (i = 1; i < FB_GAPS; i++)
		fb_gaps_add(&g, 2000 + i);
	assert_int_equal(g.nr, FB_GAPS);
	assert_int_equal(g.next, 0);
	assert_int_equal(g.us[0], 7);
	for (i = 1; i < FB_GAPS; i++)
		assert_int_equal(g.us[i], 2000 + i);

	/* a full ring of 5 us, then a full ring of 1 ms: only the latter */
	memset(&g, 0, sizeof(g));
	add_n(&g, FB_GAPS, 5);
	add_n(&g, FB_GAPS, MS);
	assert_int_equal(g.nr, FB_GAPS);
	assert_int_equal(fb_gaps_longer(&g, 5), FB_GAPS);
	assert_int_equal(fb_gaps_longer(&g, MS - 1), FB_GAPS);
	assert_int_equal(fb_gaps_longer(&g, MS), 0);
}

static void test_gaps_nr_saturates(void **state)
{
	struct fb_gaps g = { 0 };
	int i;

	(void)state;
	/* nr counts up to FB_GAPS and stays there, over several wraps */
	for (i = 1; i <= 3 * FB_GAPS + 17; i++) {
		fb_gaps_add(&g, i);
		assert_int_equal(g.nr, i < FB_GAPS ? i : FB_GAPS);
		assert_int_equal(g.next, i % FB_GAPS);
	}
	/* the last FB_GAPS gaps, the oldest at next */
	for (i = 0; i < FB_GAPS; i++)
		assert_int_equal(g.us[(g.next + i) % FB_GAPS],
				 2 * FB_GAPS + 17 + 1 + i);
}

static void test_gaps_saturate(void **state)
{
	struct fb_gaps g = { 0 };

	(void)state;
	fb_gaps_add(&g, U32_MAX - 1);
	fb_gaps_add(&g, U32_MAX);
	fb_gaps_add(&g, (u64)U32_MAX + 1);	/* a plain cast: 0 */
	fb_gaps_add(&g, (1ULL << 32) + 5);	/* a plain cast: 5 */
	fb_gaps_add(&g, UINT64_MAX);
	fb_gaps_add(&g, 0);
	assert_int_equal(g.nr, 6);
	assert_true(g.us[0] == U32_MAX - 1);
	assert_true(g.us[1] == U32_MAX);
	assert_true(g.us[2] == U32_MAX);
	assert_true(g.us[3] == U32_MAX);
	assert_true(g.us[4] == U32_MAX);
	assert_int_equal(g.us[5], 0);
	/* the saturated ones outlast U32_MAX - 1, nothing outlasts U32_MAX */
	assert_int_equal(fb_gaps_longer(&g, U32_MAX - 2), 5);
	assert_int_equal(fb_gaps_longer(&g, U32_MAX - 1), 4);
	assert_int_equal(fb_gaps_longer(&g, U32_MAX), 0);
	/* a window past 32 bits is compared as it is, not truncated */
	assert_int_equal(fb_gaps_longer(&g, 1ULL << 32), 0);
	assert_int_equal(fb_gaps_longer(&g, (1ULL << 32) + 4), 0);
	assert_int_equal(fb_gaps_longer(&g, UINT64_MAX), 0);
}

/* ---- fb_gaps_longer() ---- */

static void test_longer_by_hand(void **state)
{
	struct fb_gaps g;

	(void)state;
	fill_six(&g);
	assert_int_equal(fb_gaps_longer(&g, 0), 6);
	assert_int_equal(fb_gaps_longer(&g, 4), 6);
	/* a gap equal to the window does not outlast it */
	assert_int_equal(fb_gaps_longer(&g, 5), 5);
	assert_int_equal(fb_gaps_longer(&g, 9), 5);
	assert_int_equal(fb_gaps_longer(&g, 10), 4);
	assert_int_equal(fb_gaps_longer(&g, 11), 4);
	assert_int_equal(fb_gaps_longer(&g, 30), 2);
	assert_int_equal(fb_gaps_longer(&g, 99), 2);
	assert_int_equal(fb_gaps_longer(&g, 100), 1);
	assert_int_equal(fb_gaps_longer(&g, 149), 1);
	assert_int_equal(fb_gaps_longer(&g, 150), 0);
	assert_int_equal(fb_gaps_longer(&g, UINT64_MAX), 0);
}

static void test_longer_reads_only_held_gaps(void **state)
{
	struct fb_gaps g;

	(void)state;
	/* slots past nr hold no gap, whatever they contain */
	memset(&g, 0xff, sizeof(g.us));
	g.next = 0;
	g.nr = 0;
	assert_int_equal(fb_gaps_longer(&g, 0), 0);
	fb_gaps_add(&g, 50);
	fb_gaps_add(&g, 500);
	fb_gaps_add(&g, 5000);
	assert_int_equal(fb_gaps_longer(&g, 0), 3);
	assert_int_equal(fb_gaps_longer(&g, 50), 2);
	assert_int_equal(fb_gaps_longer(&g, 5000), 0);
}

/* ---- candidates and the budget ---- */

static void test_next_candidate(void **state)
{
	static const u64 walk[] = { 100, 128, 256, 512, 1024, 2048, 4096,
				    8192, 16384, 32768, 50000 };
	u64 w;
	size_t i;

	(void)state;
	/* powers of two: the next one up, a power itself included */
	assert_true(fb_idle_next_candidate(0, UINT64_MAX) == 1);
	assert_true(fb_idle_next_candidate(1, UINT64_MAX) == 2);
	assert_true(fb_idle_next_candidate(2, UINT64_MAX) == 4);
	assert_true(fb_idle_next_candidate(3, UINT64_MAX) == 4);
	assert_true(fb_idle_next_candidate(4, UINT64_MAX) == 8);
	assert_true(fb_idle_next_candidate(1023, UINT64_MAX) == 1024);
	assert_true(fb_idle_next_candidate(1024, UINT64_MAX) == 2048);
	/* min_us not a power of two: the next power above it */
	assert_true(fb_idle_next_candidate(10, UINT64_MAX) == 16);
	assert_true(fb_idle_next_candidate(100, UINT64_MAX) == 128);
	assert_true(fb_idle_next_candidate(129, UINT64_MAX) == 256);
	/* max_us: when the next power reaches or passes it */
	assert_true(fb_idle_next_candidate(100, 128) == 128);
	assert_true(fb_idle_next_candidate(100, 127) == 127);
	assert_true(fb_idle_next_candidate(100, 129) == 128);
	assert_true(fb_idle_next_candidate(32768, 50000) == 50000);
	assert_true(fb_idle_next_candidate(50000, 50000) == 50000);
	/* near 2^31: 2^31 is the last power, then max_us */
	assert_true(fb_idle_next_candidate(1ULL << 30, UINT64_MAX) ==
		    (1ULL << 31));
	assert_true(fb_idle_next_candidate((1ULL << 31) - 1, UINT64_MAX) ==
		    (1ULL << 31));
	assert_true(fb_idle_next_candidate((1ULL << 31) - 1, 1ULL << 31) ==
		    (1ULL << 31));
	assert_true(fb_idle_next_candidate((1ULL << 31) - 1,
					   (1ULL << 31) + 1) == (1ULL << 31));
	assert_true(fb_idle_next_candidate(1ULL << 31, UINT64_MAX) ==
		    UINT64_MAX);
	assert_true(fb_idle_next_candidate(1ULL << 31, 1ULL << 40) ==
		    (1ULL << 40));
	assert_true(fb_idle_next_candidate((1ULL << 31) + 5, 1ULL << 32) ==
		    (1ULL << 32));
	assert_true(fb_idle_next_candidate(1ULL << 40, UINT64_MAX) ==
		    UINT64_MAX);
	assert_true(fb_idle_next_candidate(UINT64_MAX - 1, UINT64_MAX) ==
		    UINT64_MAX);

	/* the module's defaults: 100 .. 50000 in 11 candidates */
	w = walk[0];
	for (i = 1; i < sizeof(walk) / sizeof(walk[0]); i++) {
		w = fb_idle_next_candidate(w, 50000);
		assert_true(w == walk[i]);
	}
	/* from 2^20 to UINT64_MAX: 2^21 .. 2^31, then UINT64_MAX */
	w = 1ULL << 20;
	for (i = 21; i <= 31; i++) {
		w = fb_idle_next_candidate(w, UINT64_MAX);
		assert_true(w == (1ULL << i));
	}
	assert_true(fb_idle_next_candidate(w, UINT64_MAX) == UINT64_MAX);
}

static void test_allowed_x200(void **state)
{
	(void)state;
	assert_true(fb_idle_allowed_x200(0, FB_GAPS) == 0);
	assert_true(fb_idle_allowed_x200(2, FB_GAPS) == 512);
	assert_true(fb_idle_allowed_x200(2, 199) == 398);
	assert_true(fb_idle_allowed_x200(14, FB_GAPS) == 3584);
	assert_true(fb_idle_allowed_x200(100, FB_GAPS) == 25600);
	/* above 100% is 100%, and never wraps */
	assert_true(fb_idle_allowed_x200(101, FB_GAPS) == 25600);
	assert_true(fb_idle_allowed_x200(1U << 25, FB_GAPS) == 25600);
	assert_true(fb_idle_allowed_x200(U32_MAX, U32_MAX) ==
		    100ULL * U32_MAX);
}

/* ---- the window ---- */

static void test_window_few_samples_give_max(void **state)
{
	struct fb_gaps g = { 0 };

	(void)state;
	/* none at all */
	assert_true(fb_idle_window_us_of(&g, 2, MIN_US, MAX_US) == MAX_US);
	/* 15 gaps of 5 us: judged, nothing would outlast min_us */
	add_n(&g, FB_GAP_MIN_SAMPLES - 1, 5);
	assert_true(fb_idle_window_us_of(&g, 2, MIN_US, MAX_US) == MAX_US);
	assert_true(fb_idle_window_us_of(&g, 100, MIN_US, MAX_US) == MAX_US);
	/* the 16th: judged, min_us */
	fb_gaps_add(&g, 5);
	assert_true(fb_idle_window_us_of(&g, 2, MIN_US, MAX_US) == MIN_US);
	assert_true(fb_idle_window_us_of(&g, 0, MIN_US, MAX_US) == MIN_US);
}

static void test_window_min_above_max_swapped(void **state)
{
	struct fb_gaps g;

	(void)state;
	fill_dependent_reader(&g);
	assert_true(fb_idle_window_us_of(&g, 14, MAX_US, MIN_US) == 32);
	assert_true(fb_idle_window_us_of(&g, 2, MAX_US, MIN_US) == MAX_US);
	/* a min_us above the think time is taken as it is, swapped too */
	assert_true(fb_idle_window_us_of(&g, 14, MAX_US, 100) == 100);
	/* too few samples: the larger bound, after the swap */
	memset(&g, 0, sizeof(g));
	assert_true(fb_idle_window_us_of(&g, 14, MAX_US, MIN_US) == MAX_US);
	/* min_us == max_us: that one */
	add_n(&g, FB_GAPS, 5 * MS);
	assert_true(fb_idle_window_us_of(&g, 0, 777, 777) == 777);
}

/*
 * 200 (or 199) gaps: the rest of 5 us, and 100, 1000 and 5000 us. With
 * min_us 10: 3 outlast 10 .. 64, 2 outlast 100 .. 512, 1 outlasts 1024 ..
 * 4096, none 8192.
 */
static void fill_boundary(struct fb_gaps *g, int nr)
{
	memset(g, 0, sizeof(*g));
	add_n(g, nr - 3, 5);
	fb_gaps_add(g, 100);
	fb_gaps_add(g, 1000);
	fb_gaps_add(g, 5000);
}

static void test_window_exact_boundaries(void **state)
{
	struct fb_gaps g;

	(void)state;
	fill_boundary(&g, 200);
	assert_int_equal(g.nr, 200);
	assert_int_equal(fb_gaps_longer(&g, 64), 3);
	assert_int_equal(fb_gaps_longer(&g, 128), 2);
	assert_int_equal(fb_gaps_longer(&g, 512), 2);
	assert_int_equal(fb_gaps_longer(&g, 1024), 1);
	assert_int_equal(fb_gaps_longer(&g, 8192), 0);

	/* pct 2 of 200: 2 * 200 <= 400, 2 may outlast: 128 (3 at 64) */
	assert_true(fb_idle_window_us_of(&g, 2, MIN_US, MAX_US) == 128);
	/* pct 1 (200): 1 may: 1024 */
	assert_true(fb_idle_window_us_of(&g, 1, MIN_US, MAX_US) == 1024);
	/* pct 3 (600): 3 may: min_us */
	assert_true(fb_idle_window_us_of(&g, 3, MIN_US, MAX_US) == MIN_US);
	/* pct 0: none may: 8192, the first candidate above 5000 */
	assert_true(fb_idle_window_us_of(&g, 0, MIN_US, MAX_US) == 8192);
	/* min_us 100: the 100 us gap does not outlast it, 2 do: 100 */
	assert_true(fb_idle_window_us_of(&g, 2, 100, MAX_US) == 100);
	/* min_us 99: 3 outlast it; then 128 */
	assert_true(fb_idle_window_us_of(&g, 2, 99, MAX_US) == 128);
	/* max_us 100: pct 1 wants 1024, capped at max_us */
	assert_true(fb_idle_window_us_of(&g, 1, MIN_US, 100) == 100);

	/* 199 gaps, pct 2: 398, 2 * 200 > 398: only 1 may: 1024 */
	fill_boundary(&g, 199);
	assert_true(fb_idle_window_us_of(&g, 2, MIN_US, MAX_US) == 1024);
	/* pct 3 of 199 (597): 2 may: 128 */
	assert_true(fb_idle_window_us_of(&g, 3, MIN_US, MAX_US) == 128);
}

static void test_window_pct0_above_longest(void **state)
{
	struct fb_gaps g = { 0 };

	(void)state;
	/* the longest a power of two: it does not outlast itself */
	add_n(&g, 40, 7);
	fb_gaps_add(&g, 1024);
	assert_true(fb_idle_window_us_of(&g, 0, MIN_US, MAX_US) == 1024);
	/* one us longer: the next power */
	fb_gaps_add(&g, 1025);
	assert_true(fb_idle_window_us_of(&g, 0, MIN_US, MAX_US) == 2048);
	/* the longest above max_us: max_us */
	fb_gaps_add(&g, MAX_US + 1);
	assert_true(fb_idle_window_us_of(&g, 0, MIN_US, MAX_US) == MAX_US);
	/* a saturated gap, max_us past 2^31: after 2^31 comes max_us */
	fb_gaps_add(&g, UINT64_MAX);
	assert_true(fb_idle_window_us_of(&g, 0, MIN_US, 1ULL << 40) ==
		    (1ULL << 40));
	assert_true(fb_idle_window_us_of(&g, 0, MIN_US, UINT64_MAX) ==
		    UINT64_MAX);
	/* every gap shorter than min_us: min_us */
	memset(&g, 0, sizeof(g));
	add_n(&g, FB_GAPS, 9);
	assert_true(fb_idle_window_us_of(&g, 0, MIN_US, MAX_US) == MIN_US);
}

static void test_window_pct_100_and_above(void **state)
{
	static const u32 pcts[] = { 100, 101, 200, 1U << 25, U32_MAX };
	struct fb_gaps g = { 0 };
	size_t i;

	(void)state;
	/* half the gaps outlast min_us: 50% may: min_us */
	add_n(&g, 128, 5);
	add_n(&g, 128, 1000);
	for (i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		assert_true(fb_idle_window_us_of(&g, pcts[i], MIN_US,
						 MAX_US) == MIN_US);
	/* 99%: 128 * 200 > 99 * 256: 1024 */
	assert_true(fb_idle_window_us_of(&g, 99, MIN_US, MAX_US) == 1024);

	/* one more than half outlasts min_us: not min_us, however large */
	memset(&g, 0, sizeof(g));
	add_n(&g, 127, 5);
	add_n(&g, 129, 1000);
	for (i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		assert_true(fb_idle_window_us_of(&g, pcts[i], MIN_US,
						 MAX_US) == 1024);

	/* the dependent reader: 256 outlast 10, 210 16, 16 32: 32 */
	fill_dependent_reader(&g);
	assert_true(fb_idle_window_us_of(&g, 100, MIN_US, MAX_US) == 32);
	assert_true(fb_idle_window_us_of(&g, U32_MAX, MIN_US, MAX_US) == 32);
}

static void test_window_dependent_reader(void **state)
{
	struct fb_gaps g;

	(void)state;
	fill_dependent_reader(&g);
	assert_int_equal(g.nr, FB_GAPS);
	assert_int_equal(fb_gaps_longer(&g, 16), 210);
	assert_int_equal(fb_gaps_longer(&g, 25), 16);
	assert_int_equal(fb_gaps_longer(&g, 32), 16);
	assert_int_equal(fb_gaps_longer(&g, 32768), 16);
	assert_int_equal(fb_gaps_longer(&g, 50000), 7);
	assert_int_equal(fb_gaps_longer(&g, 65536), 0);

	/* 7% may outlast (17 of 256); the 16 pauses do: just above 25 us */
	assert_true(fb_idle_window_us_of(&g, 14, MIN_US, MAX_US) == 32);
	assert_true(fb_idle_window_us_of(&g, 14, 1, MAX_US) == 32);
	/* 13% (16 may) still 32; 12% (15 may) nothing before max_us */
	assert_true(fb_idle_window_us_of(&g, 13, MIN_US, MAX_US) == 32);
	assert_true(fb_idle_window_us_of(&g, 12, MIN_US, MAX_US) == MAX_US);
	/* a min_us above the think time is taken as it is */
	assert_true(fb_idle_window_us_of(&g, 14, 100, MAX_US) == 100);

	/* 2% (2 may): in the pauses' range or max_us */
	assert_true(fb_idle_window_us_of(&g, 2, MIN_US, MAX_US) == MAX_US);
	/* with a longer max_us: 65536, which no pause outlasts */
	assert_true(fb_idle_window_us_of(&g, 2, MIN_US, 100 * MS) == 65536);
	assert_true(fb_idle_window_us_of(&g, 0, MIN_US, 100 * MS) == 65536);
}

/* the seed of the Poisson tests */
#define POISSON_SEED	20261130ULL

static void test_window_poisson(void **state)
{
	/*
	 * Exponential gaps, mean 1 ms: at 2%, 1% may outlast the window,
	 * about ln(100) * 1 ms = 4.6 ms. Empirically: k = 2 * 256 / 200 = 2
	 * gaps may outlast it, so it is the first candidate at or above the
	 * 3rd longest gap (the empirical 99th percentile).
	 */
	u32 s[FB_GAPS];
	struct fb_gaps g;
	u64 q, w, c, prev;

	(void)state;
	fill_poisson(&g, POISSON_SEED);
	sorted_copy(&g, s);
	q = s[FB_GAPS - 1 - 2 * FB_GAPS / 200];
	print_message("poisson seed %llu: 99th percentile %llu us (ln(100) ms = %.0f us)\n",
		      (unsigned long long)POISSON_SEED, (unsigned long long)q,
		      log(100.0) * 1000.0);
	if (q < 3000 || q > 7000)
		fail_msg("poisson seed %llu: 99th percentile %llu us, expected about 4605",
			 (unsigned long long)POISSON_SEED,
			 (unsigned long long)q);
	/* the first candidate (10, then powers of two) at or above q */
	for (c = MIN_US, prev = 0; c < q; prev = c, c = c < 16 ? 16 : 2 * c)
		;
	w = fb_idle_window_us_of(&g, 2, MIN_US, MAX_US);
	if (w != c)
		fail_msg("poisson seed %llu: window %llu us, expected %llu (the first candidate >= %llu)",
			 (unsigned long long)POISSON_SEED,
			 (unsigned long long)w, (unsigned long long)c,
			 (unsigned long long)q);
	assert_true(w == 4096 || w == 8192);
	assert_in_range(fb_gaps_longer(&g, w), 0, 2);
	assert_true(fb_gaps_longer(&g, prev) > 2);
	/* ln(100) ms to within a factor of two: the candidates' spacing */
	assert_true(w >= 4605 / 2 && w <= 4605 * 2);
}

static void test_window_poisson_over_seeds(void **state)
{
	/* the same rule on 100 more seeds, and the window within 2.3..18 ms */
	u32 s[FB_GAPS];
	struct fb_gaps g;
	u64 q, w, c;
	int seed;

	(void)state;
	for (seed = 1; seed <= 100; seed++) {
		fill_poisson(&g, seed);
		sorted_copy(&g, s);
		q = s[FB_GAPS - 3];
		for (c = MIN_US; c < q; c = c < 16 ? 16 : 2 * c)
			;
		if (c > MAX_US)
			c = MAX_US;
		w = fb_idle_window_us_of(&g, 2, MIN_US, MAX_US);
		if (w != c || w < 2048 || w > 16384)
			fail_msg("poisson seed %d: window %llu us, 3rd longest %llu us, expected %llu",
				 seed, (unsigned long long)w,
				 (unsigned long long)q, (unsigned long long)c);
	}
}

/* ---- the horizon ---- */

static void test_horizon_few_samples(void **state)
{
	struct fb_gaps g = { 0 };

	(void)state;
	assert_true(fb_idle_horizon_us_of(&g, 2) == 0);
	add_n(&g, FB_GAP_MIN_SAMPLES - 1, 300);
	assert_true(fb_idle_horizon_us_of(&g, 2) == 0);
	assert_true(fb_idle_horizon_us_of(&g, 100) == 0);
	fb_gaps_add(&g, 300);
	assert_true(fb_idle_horizon_us_of(&g, 2) == 300);
}

static void assert_sorted_permutation(const struct fb_gaps *g,
				      const u32 *want)
{
	u32 i;

	for (i = 0; i < g->nr; i++)
		if (g->us[i] != want[i])
			fail_msg("us[%u] = %u after the horizon, expected %u (sorted)",
				 i, g->us[i], want[i]);
}

static void test_horizon_periodic(void **state)
{
	/* a player reading every 20 ms +- 50 us */
	u32 s[FB_GAPS];
	struct fb_gaps g = { 0 };
	u64 h;
	int i;

	(void)state;
	lcg_state = 42;
	for (i = 0; i < FB_GAPS; i++)
		fb_gaps_add(&g, 20000 - 50 + (lcg_next() >> 33) % 101);
	sorted_copy(&g, s);
	/* k = 2 * 256 / 200 = 2: the 3rd shortest */
	h = fb_idle_horizon_us_of(&g, 2);
	print_message("periodic: horizon %llu us (shortest %u, %u, %u)\n",
		      (unsigned long long)h, s[0], s[1], s[2]);
	assert_true(h == s[2]);
	assert_in_range(h, 19950, 20000);
	assert_true(s[0] <= h && h <= s[3]);
	/* the ring is sorted afterwards, the same gaps */
	assert_int_equal(g.nr, FB_GAPS);
	assert_sorted_permutation(&g, s);
	/* again on the sorted ring: the same */
	assert_true(fb_idle_horizon_us_of(&g, 2) == h);
	/* pct 0: the shortest; 100 and above: index 128 */
	assert_true(fb_idle_horizon_us_of(&g, 0) == s[0]);
	assert_true(fb_idle_horizon_us_of(&g, 100) == s[128]);
	assert_true(fb_idle_horizon_us_of(&g, 101) == s[128]);
	assert_true(fb_idle_horizon_us_of(&g, U32_MAX) == s[128]);
	assert_true(fb_idle_horizon_us_of(&g, 1) == s[1]);
	assert_true(fb_idle_horizon_us_of(&g, 3) == s[3]);
}

static void test_horizon_hand_k(void **state)
{
	/* 1 .. 100 us, scrambled (37 is prime to 100): the (k+1)-th is k+1 */
	u32 s[FB_GAPS];
	struct fb_gaps g = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 100; i++)
		fb_gaps_add(&g, (i * 37) % 100 + 1);
	sorted_copy(&g, s);
	assert_true(fb_idle_horizon_us_of(&g, 0) == 1);	/* k 0 */
	assert_sorted_permutation(&g, s);
	assert_true(fb_idle_horizon_us_of(&g, 1) == 1);	/* 100/200: 0 */
	assert_true(fb_idle_horizon_us_of(&g, 2) == 2);	/* 200/200: 1 */
	assert_true(fb_idle_horizon_us_of(&g, 5) == 3);	/* 500/200: 2 */
	assert_true(fb_idle_horizon_us_of(&g, 7) == 4);	/* 700/200: 3 */
	assert_true(fb_idle_horizon_us_of(&g, 8) == 5);	/* 800/200: 4 */
	assert_true(fb_idle_horizon_us_of(&g, 100) == 51);	/* 50 */
	assert_true(fb_idle_horizon_us_of(&g, 250) == 51);	/* capped */

	/* 1 .. 99 us (37 is prime to 99): 5% is 495/200: k 2, not 3 */
	memset(&g, 0, sizeof(g));
	for (i = 0; i < 99; i++)
		fb_gaps_add(&g, (i * 37) % 99 + 1);
	assert_true(fb_idle_horizon_us_of(&g, 5) == 3);
	assert_true(fb_idle_horizon_us_of(&g, 100) == 50);	/* 49 */
	assert_true(fb_idle_horizon_us_of(&g, 3) == 2);	/* 297/200: 1 */
}

static void test_horizon_ties(void **state)
{
	struct fb_gaps g = { 0 };
	int i;

	(void)state;
	/* 10 short gaps, k 2: a short one */
	add_n(&g, 123, 1000);
	add_n(&g, 10, 5);
	add_n(&g, 123, 1000);
	assert_true(fb_idle_horizon_us_of(&g, 2) == 5);
	for (i = 0; i < FB_GAPS; i++)
		assert_int_equal(g.us[i], i < 10 ? 5 : 1000);

	/* exactly 2 short gaps, k 2: at most 2 shorter, the long one */
	memset(&g, 0, sizeof(g));
	add_n(&g, 254, 1000);
	add_n(&g, 2, 5);
	assert_true(fb_idle_horizon_us_of(&g, 2) == 1000);
	assert_true(fb_idle_horizon_us_of(&g, 1) == 5);	/* k 1 */
	/* 3 short gaps, k 2: a short one */
	memset(&g, 0, sizeof(g));
	add_n(&g, 3, 5);
	add_n(&g, 253, 1000);
	assert_true(fb_idle_horizon_us_of(&g, 2) == 5);
	/* all equal: that gap, for any pct */
	memset(&g, 0, sizeof(g));
	add_n(&g, FB_GAPS, 777);
	assert_true(fb_idle_horizon_us_of(&g, 0) == 777);
	assert_true(fb_idle_horizon_us_of(&g, 100) == 777);
}

static void test_horizon_partial_ring(void **state)
{
	/* 20 gaps, 119 down to 100: the zero slots past nr are no gaps */
	struct fb_gaps g = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 20; i++)
		fb_gaps_add(&g, 119 - i);
	assert_true(fb_idle_horizon_us_of(&g, 0) == 100);
	for (i = 0; i < 20; i++)
		assert_int_equal(g.us[i], 100 + i);
	for (i = 20; i < FB_GAPS; i++)
		assert_int_equal(g.us[i], 0);
	/* 20 * 20 / 200 = 2; 100% -> 10 */
	assert_true(fb_idle_horizon_us_of(&g, 20) == 102);
	assert_true(fb_idle_horizon_us_of(&g, 100) == 110);
	/* saturated gaps sort last */
	fb_gaps_add(&g, UINT64_MAX);
	fb_gaps_add(&g, 1);
	assert_true(fb_idle_horizon_us_of(&g, 0) == 1);
	assert_true(g.us[21] == U32_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gaps_ring_wraps),
		cmocka_unit_test(test_gaps_nr_saturates),
		cmocka_unit_test(test_gaps_saturate),
		cmocka_unit_test(test_longer_by_hand),
		cmocka_unit_test(test_longer_reads_only_held_gaps),
		cmocka_unit_test(test_next_candidate),
		cmocka_unit_test(test_allowed_x200),
		cmocka_unit_test(test_window_few_samples_give_max),
		cmocka_unit_test(test_window_min_above_max_swapped),
		cmocka_unit_test(test_window_exact_boundaries),
		cmocka_unit_test(test_window_pct0_above_longest),
		cmocka_unit_test(test_window_pct_100_and_above),
		cmocka_unit_test(test_window_dependent_reader),
		cmocka_unit_test(test_window_poisson),
		cmocka_unit_test(test_window_poisson_over_seeds),
		cmocka_unit_test(test_horizon_few_samples),
		cmocka_unit_test(test_horizon_periodic),
		cmocka_unit_test(test_horizon_hand_k),
		cmocka_unit_test(test_horizon_ties),
		cmocka_unit_test(test_horizon_partial_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
