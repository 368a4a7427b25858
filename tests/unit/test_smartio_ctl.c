// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of smartio-iosched's write controller (modules/smartio-iosched/
 * smartio_ctl.h): the read-latency histogram and its percentile, a window's
 * read slowdown and the baselines, the Q8 2^x, the PI rule on log2 of the
 * write rate, and the token bucket that spends the rate.
 * The controller runs against a simulated device whose read latency grows
 * with the write rate, L(rate) = base * (1 + (rate / knee)^g): from the
 * ceiling, from the floor, through a step of the device's sensitivity,
 * when reads are fast, when writes take little and near the target; the
 * number of windows it took is printed for the record.
 * Random inputs come from a fixed-seed generator; it prints its seed and
 * SMARTIO_TEST_SEED=<n> replays one.
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

#include "smartio_ctl.h"

#define US	1000ULL		/* ns */
#define MS	(1000 * US)
#define KIB	1024ULL		/* bytes */
#define MIB	(1024 * KIB)
#define MBPS	1000000ULL	/* bytes/s */

/* the default seed of the generator */
#define SMARTIO_CTL_SEED	20261203ULL

static u64 seed;

/* splitmix64: every bit usable; the same numbers for the same seed */
static u64 rng_state;

static void rng_seed(u64 s)
{
	rng_state = s;
}

static u64 rng_next(void)
{
	u64 z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static u64 rng_below(u64 n)
{
	return rng_next() % n;
}

/* in [lo, hi] */
static u64 rng_range(u64 lo, u64 hi)
{
	return lo + rng_below(hi - lo + 1);
}

/* in [1, 2^@bits): every magnitude as likely as any other */
static u64 rng_magnitude(unsigned int bits)
{
	u64 x = rng_next() >> (64 - 1 - rng_below(bits));

	return x ? x : 1;
}

/* ---- the read latency histogram ---- */

/* values around every bucket boundary and power of two, then random ones */
static unsigned int lat_values(u64 *v, unsigned int max)
{
	unsigned int n = 0, b, k;

	for (k = 0; k < 35; k++) {
		v[n++] = (1ULL << k);
		v[n++] = (1ULL << k) + 1;
		if (k)
			v[n++] = (1ULL << k) - 1;
	}
	for (b = 0; b < SMARTIO_LAT_BUCKETS; b++) {
		v[n++] = smartio_lat_bucket_top(b) - 1;
		v[n++] = smartio_lat_bucket_top(b);
	}
	while (n < max)
		v[n++] = rng_magnitude(34);
	return n;
}

/* A latency's bucket top is above it, by 12.5% at most from 1 us up. */
static void lat_bucket_top_bounds_its_value(void **unused)
{
	static u64 v[8192];
	unsigned int n, i;

	(void)unused;
	rng_seed(seed);
	n = lat_values(v, 8192);
	for (i = 0; i < n; i++) {
		unsigned int b;
		u64 top;

		if (v[i] >= 1ULL << 34)
			continue;	/* past the top: lat_bucket_past_top_is_last */
		b = smartio_lat_bucket(v[i]);
		assert_true(b < SMARTIO_LAT_BUCKETS);
		top = smartio_lat_bucket_top(b);
		if (top <= v[i])
			fail_msg("seed %llu: %llu ns in bucket %u, whose top is %llu",
				 (unsigned long long)seed,
				 (unsigned long long)v[i], b,
				 (unsigned long long)top);
		/* top <= v * 1.125 + 1 */
		if (v[i] >= 1024 && top * 8 > v[i] * 9 + 8)
			fail_msg("seed %llu: %llu ns in bucket %u, top %llu is more than 12.5%% above",
				 (unsigned long long)seed,
				 (unsigned long long)v[i], b,
				 (unsigned long long)top);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* Buckets grow with the latency, each from its predecessor's top. */
static void lat_bucket_monotone_and_contiguous(void **unused)
{
	static u64 v[8192];
	unsigned int n, i, b;

	(void)unused;
	rng_seed(seed + 1);
	n = lat_values(v, 8192);
	qsort(v, n, sizeof(v[0]), cmp_u64);
	for (i = 1; i < n; i++)
		if (smartio_lat_bucket(v[i - 1]) > smartio_lat_bucket(v[i]))
			fail_msg("seed %llu: %llu ns in bucket %u, %llu ns in %u",
				 (unsigned long long)seed + 1,
				 (unsigned long long)v[i - 1],
				 smartio_lat_bucket(v[i - 1]),
				 (unsigned long long)v[i],
				 smartio_lat_bucket(v[i]));
	/* every bucket starts at the previous one's top: none skipped */
	assert_int_equal(smartio_lat_bucket(0), 0);
	for (b = 0; b + 1 < SMARTIO_LAT_BUCKETS; b++) {
		u64 top = smartio_lat_bucket_top(b);

		assert_int_equal(smartio_lat_bucket(top - 1), b);
		assert_int_equal(smartio_lat_bucket(top), b + 1);
	}
	/* the first bucket: up to 1152 ns (1 us * 1.125) */
	assert_int_equal(smartio_lat_bucket_top(0), 1152);
	assert_int_equal(smartio_lat_bucket(1151), 0);
	assert_int_equal(smartio_lat_bucket(1152), 1);
	/* the last one: from 2^34 * 15 / 16 up, its top 2^34 ns */
	assert_int_equal(smartio_lat_bucket_top(SMARTIO_LAT_BUCKETS - 1),
			 1ULL << 34);
}

static void lat_bucket_past_top_is_last(void **unused)
{
	static const u64 past[] = {
		1ULL << 34, (1ULL << 34) + 1, 3ULL << 34, 1ULL << 40,
		1ULL << 63, U64_MAX,
	};
	unsigned int i;

	(void)unused;
	for (i = 0; i < sizeof(past) / sizeof(past[0]); i++)
		assert_int_equal(smartio_lat_bucket(past[i]),
				 SMARTIO_LAT_BUCKETS - 1);
	assert_int_equal(smartio_lat_bucket((1ULL << 34) - 1),
			 SMARTIO_LAT_BUCKETS - 1);
}

static void lat_pct_counted_by_hand(void **unused)
{
	struct smartio_lat_hist h;
	unsigned int i;

	(void)unused;
	memset(&h, 0, sizeof(h));
	assert_int_equal(smartio_lat_pct(&h, 90), 0);
	assert_int_equal(smartio_lat_pct(&h, 100), 0);
	/* 1, 2, .. 10 us: the 9th is 9 us, in [8192, 9216) */
	for (i = 1; i <= 10; i++)
		smartio_lat_add(&h, i * US);
	assert_int_equal(h.n, 10);
	assert_int_equal(smartio_lat_pct(&h, 90), 9216);
	/* 10 us in [9216, 10240) */
	assert_int_equal(smartio_lat_pct(&h, 100), 10240);
	/* rank ceil(10 * 91 / 100) = 10 */
	assert_int_equal(smartio_lat_pct(&h, 91), 10240);
	/* rank ceil(10 * 81 / 100) = 9 */
	assert_int_equal(smartio_lat_pct(&h, 81), 9216);
	/* rank 1: 1 us in [1024, 1152) */
	assert_int_equal(smartio_lat_pct(&h, 1), 1152);
}

/* p90 and p100 of random sets: the bucket tops of the sorted samples. */
static void lat_pct_of_random_sets(void **unused)
{
	static u64 v[1000];
	unsigned int round;

	(void)unused;
	rng_seed(seed + 2);
	for (round = 0; round < 2000; round++) {
		unsigned int n = 1 + rng_below(1000), i, rank;
		struct smartio_lat_hist h;
		u64 want, got;

		memset(&h, 0, sizeof(h));
		for (i = 0; i < n; i++) {
			/* clustered or spread over all magnitudes */
			v[i] = round & 1 ? rng_magnitude(36) :
					   rng_range(150 * US, 450 * US);
			smartio_lat_add(&h, v[i]);
		}
		qsort(v, n, sizeof(v[0]), cmp_u64);
		rank = (n * 90 + 99) / 100;
		want = smartio_lat_bucket_top(smartio_lat_bucket(v[rank - 1]));
		got = smartio_lat_pct(&h, 90);
		if (got != want)
			fail_msg("seed %llu round %u: p90 of %u samples (the %u-th %llu ns) is %llu, expected %llu",
				 (unsigned long long)seed + 2, round, n, rank,
				 (unsigned long long)v[rank - 1],
				 (unsigned long long)got,
				 (unsigned long long)want);
		want = smartio_lat_bucket_top(smartio_lat_bucket(v[n - 1]));
		got = smartio_lat_pct(&h, 100);
		if (got != want)
			fail_msg("seed %llu round %u: p100 of %u samples (max %llu ns) is %llu, expected %llu",
				 (unsigned long long)seed + 2, round, n,
				 (unsigned long long)v[n - 1],
				 (unsigned long long)got,
				 (unsigned long long)want);
	}
}

/* Each power of two of 4 KiB is the top of its class; the last is open. */
static void size_class_by_powers_of_two(void **unused)
{
	static const struct { u32 bytes; unsigned int class; } cases[] = {
		{ 0, 0 }, { 512, 0 }, { 4096, 0 }, { 4097, 1 }, { 8192, 1 },
		{ 8193, 2 }, { 16384, 2 }, { 32768, 3 }, { 65536, 4 },
		{ 131071, 5 }, { 131072, 5 }, { 262144, 6 }, { 262145, 7 },
		{ 524288, 7 }, { 1048576, 7 }, { 0xffffffffU, 7 },
	};
	unsigned int i;

	(void)unused;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (smartio_size_class(cases[i].bytes) != cases[i].class)
			fail_msg("%u bytes: class %u, expected %u",
				 cases[i].bytes,
				 smartio_size_class(cases[i].bytes),
				 cases[i].class);
}

/*
 * The same slowdown whatever the reads' sizes: 8 ms for a 128 KiB read whose
 * class takes 4 ms alone is what 0.9 ms is for a 4 KiB one at 0.45 ms, and a
 * window of such reads has that slowdown, not the large reads' latency.
 */
static void slowdown_same_for_every_size(void **unused)
{
	struct smartio_read_sums s = { 0 };
	u64 base[2] = { 450000, 4000000 };
	unsigned int i;

	(void)unused;
	assert_int_equal(smartio_slowdown(&s), 0);
	/* 80 small reads, 20 large ones, each at 1.5x its class alone */
	for (i = 0; i < 100; i++) {
		u64 b = base[i % 5 == 0];

		smartio_read_sums_add(&s, b * 3 / 2, b);
	}
	assert_int_equal(smartio_slowdown(&s), SMARTIO_SLOWDOWN_ONE * 3 / 2);
}

/*
 * What a start-up's time is made of: a window in which one read in ten waits
 * 20 ms instead of 0.5 ms has its summed latency, not its typical read's.
 * Alone, 2 of 20 reads wait (baseline: their mean, 2.45 ms); beside writes,
 * 4 of 20 do. Each read's slowdown over that mean is 0.2 or 8.2 either way,
 * so a p90 of them does not move; the window's slowdown is 4.4 / 2.45.
 */
static void slowdown_counts_more_slow_reads(void **unused)
{
	struct smartio_read_sums alone = { 0 }, beside = { 0 };
	const u64 fast = 500000, slow = 20000000, base = 2450000;
	unsigned int i;

	(void)unused;
	for (i = 0; i < 20; i++) {
		smartio_read_sums_add(&alone, i < 2 ? slow : fast, base);
		smartio_read_sums_add(&beside, i < 4 ? slow : fast, base);
	}
	assert_int_equal(smartio_slowdown(&alone), SMARTIO_SLOWDOWN_ONE);
	assert_int_equal(smartio_slowdown(&beside),
			 SMARTIO_SLOWDOWN_ONE * 4400000 / 2450000);
}

/* A read past a minute counts as a minute: sums of many cannot overflow. */
static void slowdown_bounds_each_read(void **unused)
{
	struct smartio_read_sums s = { 0 }, m = { 0 };
	unsigned int i;

	(void)unused;
	for (i = 0; i < 1000; i++) {
		smartio_read_sums_add(&s, U64_MAX, 1000);
		smartio_read_sums_add(&m, SMARTIO_LAT_MAX_NS, 1000);
	}
	assert_int_equal(s.lat_ns, 1000 * SMARTIO_LAT_MAX_NS);
	assert_int_equal(smartio_slowdown(&s), smartio_slowdown(&m));
	assert_int_equal(smartio_slowdown(&s),
			 SMARTIO_LAT_MAX_NS / 1000 * SMARTIO_SLOWDOWN_ONE);
}

/*
 * The baseline: the first batch sets it; lower batches pull it down by half
 * the step, higher ones up by an eighth; a run of equal batches converges on
 * their mean from either side.
 */
static void baseline_down_by_half_up_by_eighth(void **unused)
{
	u64 b;
	unsigned int i;

	(void)unused;
	assert_int_equal(smartio_baseline_next(0, 700000), 700000);
	assert_int_equal(smartio_baseline_next(800000, 400000), 600000);
	assert_int_equal(smartio_baseline_next(800000, 1600000), 900000);
	assert_int_equal(smartio_baseline_next(800000, 800000), 800000);
	for (b = 100000, i = 0; i < 200; i++)
		b = smartio_baseline_next(b, 2000000);
	assert_true(b > 1999000 && b <= 2000000);
	for (b = 20000000, i = 0; i < 40; i++)
		b = smartio_baseline_next(b, 2000000);
	assert_true(b >= 2000000 && b < 2001000);
}

/*
 * A stale baseline is corrected only by a window of enough reads that beat
 * it by a quarter, down by half the step; from a 20x inflated baseline
 * (the 4 KiB class after a burst of large reads) a few windows of reads
 * beside writes bring it within a third of their mean.
 */
static void baseline_stale_corrected_by_faster_windows(void **unused)
{
	const unsigned int n = SMARTIO_BASELINE_WINDOW_READS;
	u64 b;
	unsigned int i;

	(void)unused;
	/* no baseline, too few reads, or not beaten by a quarter: kept */
	assert_int_equal(smartio_baseline_stale_next(0, 500000, n), 0);
	assert_int_equal(smartio_baseline_stale_next(800000, 100000, n - 1),
			 800000);
	assert_int_equal(smartio_baseline_stale_next(800000, 600000, n),
			 800000);
	assert_int_equal(smartio_baseline_stale_next(800000, 900000, 1000),
			 800000);
	/* beaten: half the step down, as a batch of reads alone would */
	assert_int_equal(smartio_baseline_stale_next(800000, 599999, n),
			 smartio_baseline_next(800000, 599999));
	assert_int_equal(smartio_baseline_stale_next(800000, 200000, n),
			 500000);
	for (b = 20000000, i = 0; i < 6; i++)
		b = smartio_baseline_stale_next(b, 1000000, n);
	assert_true(b <= 1333334);
	/* and never under what the reads took */
	for (i = 0; i < 100; i++)
		b = smartio_baseline_stale_next(b, 1000000, n);
	assert_true(b >= 1000000);
}

/*
 * Cold: a class with reads in the window and no baseline makes the next
 * window cold, and spends one of its SMARTIO_COLD_WINDOWS if the window had
 * writes; a class with a baseline, or without reads, neither.
 */
static void cold_while_a_read_class_has_no_baseline(void **unused)
{
	u64 base[3] = { 300000, 0, 0 };
	unsigned int reads[3] = { 50, 0, 0 }, spent[3] = { 0 }, i;

	(void)unused;
	/* reads of a class with a baseline only: warm, nothing spent */
	assert_false(smartio_cold_next(base, reads, spent, true, 3));
	assert_int_equal(spent[0] + spent[1] + spent[2], 0);
	/* reads of class 1, which has none, and no write: cold, nothing spent */
	reads[1] = 1;
	assert_true(smartio_cold_next(base, reads, spent, false, 3));
	assert_int_equal(spent[0] + spent[1] + spent[2], 0);
	/* with writes: cold, one window spent */
	assert_true(smartio_cold_next(base, reads, spent, true, 3));
	assert_int_equal(spent[1], 1);
	assert_int_equal(spent[0] + spent[2], 0);
	/* until its budget is spent: then the stand-in serves */
	for (i = 1; i < SMARTIO_COLD_WINDOWS; i++)
		assert_true(smartio_cold_next(base, reads, spent, true, 3));
	assert_int_equal(spent[1], SMARTIO_COLD_WINDOWS);
	assert_false(smartio_cold_next(base, reads, spent, true, 3));
	assert_int_equal(spent[1], SMARTIO_COLD_WINDOWS);
	/* another class without a baseline has its own budget */
	reads[2] = 7;
	assert_true(smartio_cold_next(base, reads, spent, true, 3));
	assert_int_equal(spent[2], 1);
	/* once it has a baseline, it is warm */
	base[2] = 900000;
	assert_false(smartio_cold_next(base, reads, spent, true, 3));
	assert_int_equal(spent[2], 1);
}

/*
 * Random windows against a plain count: cold exactly when some class with
 * reads has no baseline and fewer than SMARTIO_COLD_WINDOWS cold windows
 * with writes so far; only windows with writes are charged, and no class
 * ever more than that.
 */
static void cold_matches_plain_count(void **unused)
{
	enum { N = SMARTIO_SIZE_CLASSES };
	u64 base[N] = { 0 };
	unsigned int reads[N], spent[N] = { 0 }, want[N] = { 0 };
	unsigned int round, c;
	bool expect, writes;

	(void)unused;
	rng_seed(seed);
	for (round = 0; round < 20000; round++) {
		expect = false;
		writes = rng_below(4);
		for (c = 0; c < N; c++) {
			/* baselines appear, rarely */
			if (!base[c] && !rng_below(200))
				base[c] = 1 + rng_below(20000000);
			reads[c] = rng_below(3) ? 0 : rng_below(64);
			if (!base[c] && reads[c] &&
			    want[c] < SMARTIO_COLD_WINDOWS) {
				want[c] += writes;
				expect = true;
			}
		}
		assert_int_equal(smartio_cold_next(base, reads, spent, writes,
						   N), expect);
		for (c = 0; c < N; c++) {
			assert_int_equal(spent[c], want[c]);
			assert_true(spent[c] <= SMARTIO_COLD_WINDOWS);
		}
		/* now and then a fresh instance */
		if (!rng_below(500)) {
			memset(base, 0, sizeof(base));
			memset(spent, 0, sizeof(spent));
			memset(want, 0, sizeof(want));
		}
	}
}

/*
 * x * 2^(u / 256) within 0.7%, plus the unit the result is rounded down
 * to: 1, but 2^(u div 256) for u > 0 as x * mult / 256 is rounded before
 * the shift left (scale_q8(1, 409) is 2 for 2.996), which matters below
 * x = 2^10 only; the rates the controller scales are MB/s.
 */
static void scale_q8_within_0_7_pct(void **unused)
{
	static const u64 edges[] = { 1, 255, 1ULL << 20, (1ULL << 40) - 1 };
	unsigned int round, k;
	s32 u;

	(void)unused;
	rng_seed(seed + 5);
	for (round = 0; round < 64; round++) {
		u64 x = round < 4 ? edges[round] : rng_magnitude(40);

		for (u = -16 * SMARTIO_Q8; u <= 8 * SMARTIO_Q8; u++) {
			double exact = (double)x * exp2((double)u / SMARTIO_Q8);
			u64 got = smartio_scale_q8(x, u);
			double unit = x < 1024 && u > 0 ? 1 << (u / SMARTIO_Q8) : 1;

			if (fabs((double)got - exact) > exact * 0.007 + unit)
				fail_msg("seed %llu: scale_q8(%llu, %d) = %llu, exact %.1f",
					 (unsigned long long)seed + 5,
					 (unsigned long long)x, u,
					 (unsigned long long)got, exact);
		}
	}
	/* whole powers of two are exact */
	for (k = 0; k <= 8; k++)
		assert_int_equal(smartio_scale_q8(12345678, k * SMARTIO_Q8),
				 12345678ULL << k);
	for (k = 0; k <= 16; k++)
		assert_int_equal(smartio_scale_q8(3ULL << 36,
						  -(s32)k * SMARTIO_Q8),
				 (3ULL << 36) >> k);
}

/* ---- the controller on a simulated device ---- */

#define BASE_NS		(200 * US)	/* read latency without writes */
#define TARGET_NS	(2 * BASE_NS)
#define KNEE		(20 * MBPS)	/* the write rate that doubles it */
#define FLOOR		(1 * MBPS)
#define CEILING		(1000 * MBPS)
#define WINDOW_NS	(100 * MS)

/* a device whose read latency is base * (1 + (rate / knee)^g) */
struct plant {
	double knee;
	double g;
};

static u64 plant_lat(const struct plant *p, u64 rate)
{
	return (u64)(BASE_NS * (1 + pow((double)rate / p->knee, p->g)));
}

/* [target / 1.25, target * 1.25] */
static bool in_band(u64 lat, u64 target)
{
	return lat * 5 >= target * 4 && lat * 4 <= target * 5;
}

/*
 * One window of a saturated writer (it writes all the rate allows) beside
 * reads whose p90 is @lat: 100 samples @lat * i / 90, so the 90th is @lat
 * and the percentile the top of its bucket. Returns whether the rate moved
 * and checks the step: a cut of 4x and a rise of 2x at most.
 */
static bool ctl_window(struct smartio_ctl *c, u64 lat, u64 target)
{
	struct smartio_lat_hist h;
	struct smartio_ctl_window w = {
		.writes = true,
		.target = target,
		.write_bytes = mul_u64_u64_div_u64(c->rate, WINDOW_NS,
						   NSEC_PER_SEC),
		.window_ns = WINDOW_NS,
		.floor = FLOOR,
		.ceiling = CEILING,
	};
	u64 old = c->rate;
	unsigned int i;
	bool moved;

	memset(&h, 0, sizeof(h));
	for (i = 1; i <= 100; i++)
		smartio_lat_add(&h, lat * i / 90);
	w.read = smartio_lat_pct(&h, 90);
	assert_int_equal(w.read,
			 smartio_lat_bucket_top(smartio_lat_bucket(lat)));
	moved = smartio_ctl_update(c, &w);
	assert_int_equal(moved, c->rate != old);
	if (c->rate < FLOOR || c->rate > CEILING)
		fail_msg("rate %llu outside [%llu, %llu]",
			 (unsigned long long)c->rate,
			 (unsigned long long)FLOOR,
			 (unsigned long long)CEILING);
	if (c->rate * 4 + 4 < old)
		fail_msg("cut from %llu to %llu: more than 4x",
			 (unsigned long long)old, (unsigned long long)c->rate);
	if (c->rate > 2 * old)
		fail_msg("rise from %llu to %llu: more than 2x",
			 (unsigned long long)old, (unsigned long long)c->rate);
	return moved;
}

/*
 * From @start, the windows until the latency is in the band, which it must
 * reach within @within; after at most @settle more windows it is in the band
 * for good (checked for @keep windows).
 */
static unsigned int ctl_converge(const struct plant *p, u64 start,
				 unsigned int within, unsigned int settle,
				 unsigned int keep)
{
	struct smartio_ctl c = { .rate = start };
	unsigned int k, first = ~0U, last_out = 0;

	for (k = 0; k <= within + settle + keep; k++) {
		u64 lat = plant_lat(p, c.rate);

		if (in_band(lat, TARGET_NS)) {
			if (first == ~0U)
				first = k;
		} else {
			last_out = k;
			if (first != ~0U && k > first + settle)
				fail_msg("g %.1f from %llu B/s: in the band at window %u, out at %u (rate %llu, latency %llu ns)",
					 p->g, (unsigned long long)start,
					 first, k, (unsigned long long)c.rate,
					 (unsigned long long)lat);
			if (first == ~0U && k == within)
				fail_msg("g %.1f from %llu B/s: not in the band after %u windows (rate %llu, latency %llu ns)",
					 p->g, (unsigned long long)start,
					 within, (unsigned long long)c.rate,
					 (unsigned long long)lat);
		}
		ctl_window(&c, lat, TARGET_NS);
	}
	print_message("g %.1f from %llu B/s: in the band after %u windows, for good after %u\n",
		      p->g, (unsigned long long)start, first,
		      last_out > first ? last_out + 1 : first);
	return first;
}

static const double slopes[] = { 0.5, 1, 2 };
/* windows a steep device (g 2) may leave the band after first reaching it */
#define SETTLE_STEEP	8

/*
 * From the ceiling: the first windows cut by up to 4x, in the band by 25.
 * On the steepest device (g 2) the run of cuts ends with the error going
 * from its largest (-16) to near 0 in one window, and the proportional
 * term's step, (e - e_prev) / 4, lifts the rate past the band for a window
 * or two: in the band for good 2 windows after first reaching it, within
 * SETTLE_STEEP.
 */
static void ctl_converges_from_ceiling(void **unused)
{
	unsigned int i;

	(void)unused;
	for (i = 0; i < 3; i++) {
		struct plant p = { .knee = KNEE, .g = slopes[i] };
		ctl_converge(&p, CEILING, 25, p.g >= 2 ? SETTLE_STEEP : 0, 100);
	}
}

/*
 * From the floor. The latency cannot fall below base = target / 2, so the
 * error is at most +0.5 and a window raises the rate by 2^(0.5 / 4) at
 * most: the climb from 1 MB/s to the knee (20x) takes 35 windows at least,
 * and near the band's lower edge the error is the 0.2 between the target
 * and the bucket top of target / 1.25, a 4% rise per window. So the bound
 * is 50 windows here, not the 25 from the ceiling, and no overshoot.
 */
static void ctl_converges_from_floor(void **unused)
{
	unsigned int i;

	(void)unused;
	for (i = 0; i < 3; i++) {
		struct plant p = { .knee = KNEE, .g = slopes[i] };
		ctl_converge(&p, FLOOR, 50, 0, 100);
	}
}

/*
 * Steeper devices than the others: g 2.5, and g 3.5 near the header's
 * limit of 3.7 (the small-signal bound on the linear error): no divergence.
 */
static void ctl_steep_device_does_not_diverge(void **unused)
{
	static const double steep[] = { 2.5, 3.5 };
	const u64 starts[] = { CEILING, FLOOR };
	unsigned int g, i, k;

	(void)unused;
	for (g = 0; g < 2; g++) {
		struct plant p = { .knee = KNEE, .g = steep[g] };

		for (i = 0; i < 2; i++) {
			struct smartio_ctl c = { .rate = starts[i] };
			unsigned int first = ~0U;
			u64 lat = 0;

			for (k = 0; k < 200; k++) {
				lat = plant_lat(&p, c.rate);
				if (first == ~0U && in_band(lat, TARGET_NS))
					first = k;
				ctl_window(&c, lat, TARGET_NS);
			}
			lat = plant_lat(&p, c.rate);
			if (lat > 2 * TARGET_NS || 2 * lat < TARGET_NS)
				fail_msg("g %.1f from %llu B/s: latency %llu ns after 200 windows, target %llu",
					 p.g, (unsigned long long)starts[i],
					 (unsigned long long)lat,
					 (unsigned long long)TARGET_NS);
			print_message("g %.1f from the %s: in the band after %u windows, latency %llu ns after 200\n",
				      p.g, i ? "floor" : "ceiling", first,
				      (unsigned long long)lat);
		}
	}
}

/*
 * The device gets 10x more sensitive (knee / 10) at window 50: the latency
 * jumps to 2x (g 0.5) .. 48x (g 2) the target. Back in the band within 10
 * windows for g = 2 (3), and in it for good 6 windows later, within
 * SETTLE_STEEP (the cuts' end overshoots, as from the ceiling); for g <= 1 the latency tells less about
 * the rate (the loop gain at the target is g ln 2 / 2) and the error decays
 * more slowly: 11 windows for g = 1, 16 for g = 0.5, so 20 is their bound.
 */
static void ctl_step_to_10x_more_sensitive_device(void **unused)
{
	unsigned int i, k;

	(void)unused;
	for (i = 0; i < 3; i++) {
		struct plant p = { .knee = KNEE, .g = slopes[i] };
		unsigned int within = p.g >= 2 ? 10 : 20, first = ~0U;
		unsigned int settle = p.g >= 2 ? SETTLE_STEEP : 0, last_out = 0;
		struct smartio_ctl c = { .rate = CEILING };

		for (k = 0; k < 150; k++) {
			u64 lat;

			if (k == 50)
				p.knee = KNEE / 10;
			lat = plant_lat(&p, c.rate);
			if (k < 50) {
				;
			} else if (in_band(lat, TARGET_NS)) {
				if (first == ~0U)
					first = k - 50;
			} else {
				last_out = k - 50;
				if (first != ~0U && k - 50 > first + settle)
					fail_msg("g %.1f: back in the band %u windows after the step, out again at %u (latency %llu ns)",
						 p.g, first, k - 50,
						 (unsigned long long)lat);
				if (first == ~0U && k == 50 + within)
					fail_msg("g %.1f: not back in the band %u windows after the step (rate %llu, latency %llu ns)",
						 p.g, within,
						 (unsigned long long)c.rate,
						 (unsigned long long)lat);
			}
			ctl_window(&c, lat, TARGET_NS);	/* checks each step */
		}
		print_message("g %.1f, step at window 50: back in the band after %u windows, for good after %u\n",
			      p.g, first, last_out > first ? last_out + 1 : first);
	}
}

/*
 * Reads much faster than the target: the rate rises to the ceiling. The
 * error is at most +1 (reads taking no time), so a window raises the rate
 * by 2^(e / 4) <= 1.19x once the proportional term has its previous
 * window: reads 32x faster (e 0.97) take the 1000x from the floor to the
 * ceiling in 43 windows, 10x faster (p90 40 us, reported as its bucket
 * top, 40.96 us: e 0.90) in 46; the bound is ceil(log2(1000) / (e / 4)) + 2
 * (the first window has no proportional term).
 * The cost of the linear error: on its logarithm they took 10 and 13.
 */
static void ctl_recovers_to_ceiling_when_reads_fast(void **unused)
{
	static const unsigned int faster[] = { 32, 10 };
	unsigned int i, k, bound;
	u64 r;

	(void)unused;
	for (i = 0; i < 2; i++) {
		u64 lat = TARGET_NS / faster[i];
		u64 read = smartio_lat_bucket_top(smartio_lat_bucket(lat));
		double e = (double)(TARGET_NS - read) / TARGET_NS;
		struct smartio_ctl c = { .rate = FLOOR };

		bound = (unsigned int)ceil(log2((double)CEILING / FLOOR) /
					   (e / 4)) + 2;
		for (k = 0; c.rate < CEILING; k++) {
			r = c.rate;
			if (k == bound)
				fail_msg("reads at target / %u: rate %llu after %u windows, not the ceiling",
					 faster[i], (unsigned long long)c.rate,
					 k);
			ctl_window(&c, lat, TARGET_NS);	/* <= 2x */
			/* and as much as the error asks, until the ceiling */
			if (c.rate < CEILING &&
			    c.rate < r * exp2(e / 4) * 0.993)
				fail_msg("reads at target / %u: rate %llu to %llu, error %.2f",
					 faster[i], (unsigned long long)r,
					 (unsigned long long)c.rate, e);
		}
		print_message("reads at target / %u: the ceiling after %u windows (bound %u)\n",
			      faster[i], k, bound);
		/* and it stays there */
		for (k = 0; k < 20; k++) {
			assert_false(ctl_window(&c, lat, TARGET_NS));
			assert_int_equal(c.rate, CEILING);
		}
	}
	/*
	 * the 2x cap is exact, also when writes took 10x the rate (they go
	 * freely while reads are inactive, so the windup bound is far off),
	 * after a window at the largest error, whose proportional step asks
	 * for far more
	 */
	for (r = FLOOR; r < CEILING / 2; r *= 2) {
		struct smartio_ctl c = { .rate = r, .have_prev = true,
					 .prev_err = SMARTIO_CTL_ERR_MIN };
		struct smartio_ctl_window w = {
			.writes = true,
			.read = TARGET_NS / 32,
			.target = TARGET_NS,
			.write_bytes = 10 * r * WINDOW_NS / NSEC_PER_SEC,
			.window_ns = WINDOW_NS,
			.floor = FLOOR,
			.ceiling = CEILING,
		};

		assert_true(smartio_ctl_update(&c, &w));
		assert_int_equal(c.rate, 2 * r);
	}
}

/* Writes take 100 KB a window (1 MB/s): the rate stops at 2x that. */
static void ctl_no_windup_when_writes_take_little(void **unused)
{
	const u64 starts[] = { FLOOR, 3 * MBPS / 2, 50 * MBPS };
	unsigned int i, k;

	(void)unused;
	for (i = 0; i < 3; i++) {
		struct smartio_ctl c = { .rate = starts[i] };
		struct smartio_ctl_window w = {
			.writes = true,
			.read = TARGET_NS / 10,
			.target = TARGET_NS,
			.write_bytes = 100 * 1000,
			.window_ns = WINDOW_NS,
			.floor = FLOOR,
			.ceiling = CEILING,
		};
		u64 took = w.write_bytes * NSEC_PER_SEC / w.window_ns;

		for (k = 0; k < 100; k++) {
			u64 old = c.rate;

			smartio_ctl_update(&c, &w);
			if (c.rate > max(old, 2 * took) || c.rate < FLOOR)
				fail_msg("from %llu B/s, window %u: rate %llu after %llu, writes took %llu B/s",
					 (unsigned long long)starts[i], k,
					 (unsigned long long)c.rate,
					 (unsigned long long)old,
					 (unsigned long long)took);
		}
		/* it does rise to 2x what writes took, and a higher rate stays */
		assert_int_equal(c.rate, max(starts[i], 2 * took));
	}
}

/* A window without a read sample changes nothing and forgets the last error. */
static void ctl_window_without_reads_changes_nothing(void **unused)
{
	struct smartio_ctl c = { .rate = 5 * MBPS };
	struct smartio_ctl_window w = {
		.writes = true,
		.target = TARGET_NS,
		.write_bytes = 500 * 1000,
		.window_ns = WINDOW_NS,
		.floor = FLOOR,
		.ceiling = CEILING,
	};
	s32 e;

	(void)unused;
	/* an error of +0.5 last window */
	w.read = TARGET_NS / 2;
	smartio_ctl_update(&c, &w);
	c.rate = 5 * MBPS;
	w.read = 0;
	assert_false(smartio_ctl_update(&c, &w));
	assert_int_equal(c.rate, 5 * MBPS);
	w.write_bytes = 0;
	assert_false(smartio_ctl_update(&c, &w));
	assert_int_equal(c.rate, 5 * MBPS);
	/* the next window is a first one: no proportional term */
	w.read = TARGET_NS / 4;
	w.write_bytes = 500 * 1000;
	e = smartio_ctl_error(TARGET_NS / 4, TARGET_NS);
	assert_true(smartio_ctl_update(&c, &w));
	assert_int_equal(c.rate, smartio_scale_q8(5 * MBPS, e / 4));
}

/*
 * A window without writes changes nothing, however slow its reads: no
 * write rate made them so. Without the rule a burst of reads slowed by each
 * other cut the rate, and a rise is bounded by what writes took, so an idle
 * writer found the rate at the floor (traced: 31 cuts in 251 windows of
 * start-ups alone).
 */
static void ctl_window_without_writes_changes_nothing(void **unused)
{
	struct smartio_ctl c = { .rate = 5 * MBPS };
	struct smartio_ctl_window w = {
		.read = TARGET_NS * 8,
		.target = TARGET_NS,
		.window_ns = WINDOW_NS,
		.floor = FLOOR,
		.ceiling = CEILING,
	};
	s32 e;
	int i;

	(void)unused;
	for (i = 0; i < 50; i++) {
		assert_false(smartio_ctl_update(&c, &w));
		assert_int_equal(c.rate, 5 * MBPS);
	}
	/* a write queued and none dispatched: the same reads cut the rate */
	w.writes = true;
	e = smartio_ctl_error(TARGET_NS * 8, TARGET_NS);
	assert_true(smartio_ctl_update(&c, &w));
	assert_int_equal(c.rate,
			 smartio_scale_q8(5 * MBPS,
					  max(e / 4, -SMARTIO_CTL_CUT_MAX)));
	/* and a window without writes after it starts afresh */
	w.writes = false;
	assert_false(smartio_ctl_update(&c, &w));
	assert_false(c.have_prev);
}

/*
 * A cut starts from twice what writes took, not from a rate they left
 * unused: a fresh queue's rate is the ceiling, and cuts in proportion to
 * the error took dozens of windows to come down to a writer's pace (in the
 * VM, 39 windows beside dm-crypt's writes had not got there). With no write
 * dispatched in the window (some queued), the cut is of the rate as it was.
 */
static void ctl_cut_starts_from_what_writes_took(void **unused)
{
	struct smartio_ctl c = { .rate = CEILING };
	struct smartio_ctl_window w = {
		.writes = true,
		.read = TARGET_NS * 2,
		.target = TARGET_NS,
		.write_bytes = 10 * MBPS / 10,	/* 10 MB/s over 100 ms */
		.window_ns = WINDOW_NS,
		.floor = FLOOR,
		.ceiling = CEILING,
	};
	s32 u = smartio_ctl_error(TARGET_NS * 2, TARGET_NS) / 4;

	(void)unused;
	assert_true(smartio_ctl_update(&c, &w));
	assert_int_equal(c.rate, smartio_scale_q8(20 * MBPS, u));
	/* the next window's cut is of that rate, already under 2x */
	c.have_prev = false;
	c.rate = 15 * MBPS;
	assert_true(smartio_ctl_update(&c, &w));
	assert_int_equal(c.rate, smartio_scale_q8(15 * MBPS, u));
	/* none dispatched, some queued: the old rate is cut */
	c.have_prev = false;
	c.rate = CEILING;
	w.write_bytes = 0;
	assert_true(smartio_ctl_update(&c, &w));
	assert_int_equal(c.rate, smartio_scale_q8(CEILING, u));
	/* never below the floor */
	c.have_prev = false;
	c.rate = CEILING;
	w.write_bytes = 1;
	assert_true(smartio_ctl_update(&c, &w));
	assert_int_equal(c.rate, FLOOR);
}

/* The error is linear in the measurement, and bounded below. */
static void ctl_error_linear_and_bounded(void **unused)
{
	(void)unused;
	assert_int_equal(smartio_ctl_error(TARGET_NS, TARGET_NS), 0);
	assert_int_equal(smartio_ctl_error(TARGET_NS / 2, TARGET_NS), 128);
	assert_int_equal(smartio_ctl_error(1, TARGET_NS), 255);
	assert_int_equal(smartio_ctl_error(2 * TARGET_NS, TARGET_NS), -256);
	assert_int_equal(smartio_ctl_error(TARGET_NS * 3 / 2, TARGET_NS), -128);
	assert_int_equal(smartio_ctl_error(17 * TARGET_NS, TARGET_NS),
			 SMARTIO_CTL_ERR_MIN);
	assert_int_equal(smartio_ctl_error(U64_MAX / 2, TARGET_NS),
			 SMARTIO_CTL_ERR_MIN);
	assert_int_equal(smartio_ctl_error(U64_MAX, 1), SMARTIO_CTL_ERR_MIN);
}

/*
 * Windows alternating at 0.6x and 1.5x the target: their mean (1.05x) is
 * over it, their geometric mean (0.95x) under it. A start-up pays the mean,
 * and the rate comes down; on the logarithm of the ratio it went up.
 */
static void ctl_holds_the_mean_not_the_geometric_mean(void **unused)
{
	struct smartio_ctl c = { .rate = 50 * MBPS };
	struct smartio_ctl_window w = {
		.writes = true,
		.target = TARGET_NS,
		.window_ns = WINDOW_NS,
		.floor = FLOOR,
		.ceiling = CEILING,
	};
	unsigned int k;

	(void)unused;
	for (k = 0; k < 100; k++) {
		w.read = k & 1 ? TARGET_NS * 3 / 2 : TARGET_NS * 6 / 10;
		w.write_bytes = mul_u64_u64_div_u64(c.rate, WINDOW_NS,
						    NSEC_PER_SEC);
		smartio_ctl_update(&c, &w);
	}
	print_message("0.6x and 1.5x the target in turn: 50 MB/s to %llu B/s after 100 windows\n",
		      (unsigned long long)c.rate);
	assert_true(c.rate < 50 * MBPS / 2);
}

/* Within a few % of the target the rate stays; 10% off it moves. */
static void ctl_deadband_holds_rate(void **unused)
{
	static const unsigned int milli[] = { 1030, 970, 1000, 1020, 980 };
	unsigned int round, k;

	(void)unused;
	rng_seed(seed + 6);
	for (round = 0; round < 200; round++) {
		u64 target = rng_range(100 * US, 20 * MS);
		u64 start = rng_range(2 * FLOOR, CEILING);
		struct smartio_ctl c = { .rate = start };
		struct smartio_ctl_window w = {
			.writes = true,
			.target = target,
			.window_ns = WINDOW_NS,
			.floor = FLOOR,
			.ceiling = CEILING,
		};

		for (k = 0; k < 100; k++) {
			w.read = target * milli[k % 5] / 1000;
			w.write_bytes = c.rate / 10;
			if (smartio_ctl_update(&c, &w) || c.rate != start)
				fail_msg("seed %llu: target %llu, read %llu at window %u: rate %llu -> %llu",
					 (unsigned long long)seed + 6,
					 (unsigned long long)target,
					 (unsigned long long)w.read, k,
					 (unsigned long long)start,
					 (unsigned long long)c.rate);
		}
		/* the deadband is not everything */
		w.read = target * 11 / 10;
		assert_true(smartio_ctl_update(&c, &w));
		assert_true(c.rate < start);
		c.rate = start;
		c.have_prev = false;
		w.read = target * 9 / 10;
		w.write_bytes = c.rate / 10;
		assert_true(smartio_ctl_update(&c, &w) == (start < CEILING));
		assert_true(c.rate >= start);
	}
}

/* ---- the token bucket ---- */

/* the first time, ns, at which a bucket at @at_ns with @tokens holds one */
static u64 first_token_ns(s64 tokens, u64 at_ns, u64 rate)
{
	u64 need = (u64)(1 - tokens);	/* bytes to accrue */

	return at_ns + (u64)(((unsigned __int128)need * NSEC_PER_SEC +
			      rate - 1) / rate);
}

static void bucket_ready_now_with_tokens(void **unused)
{
	unsigned int round;

	(void)unused;
	rng_seed(seed + 7);
	for (round = 0; round < 100000; round++) {
		u64 rate = rng_magnitude(32), burst = rng_range(1, 16 * MIB);
		u64 at = rng_below(1ULL << 50), now = at + rng_below(1ULL << 40);
		struct smartio_bucket b = {
			.tokens = (s64)rng_range(1, burst), .at_ns = at,
		};

		assert_int_equal(smartio_bucket_ready_ns(&b, rate, now),
				 now);
		/* a debt paid long ago: now */
		b.tokens = -(s64)rng_below(burst);
		now = first_token_ns(b.tokens, at, rate) + rng_below(1ULL << 40);
		assert_int_equal(smartio_bucket_ready_ns(&b, rate, now),
				 now);
		/*
		 * empty at its own time, at up to 1 GB/s: not now (faster:
		 * bucket_ready_time_is_exact)
		 */
		b.tokens = 0;
		if (rate <= NSEC_PER_SEC)
			assert_true(smartio_bucket_ready_ns(&b, rate, at) > at);
	}
}

/*
 * After a write larger than the tokens, the next may go when the debt is
 * paid and one token is there: the first ns at which the rate has added
 * debt + 1 bytes, now + ceil((debt + 1) * 1e9 / rate), to within 1 ns.
 * (The header's rule is "any token", so this is one byte's time after
 * now + ceil(debt * 1e9 / rate), the moment the bucket is back at 0.)
 */
static void bucket_debt_sets_ready_time(void **unused)
{
	unsigned int round;

	(void)unused;
	rng_seed(seed + 8);
	for (round = 0; round < 100000; round++) {
		u64 rate = rng_range(1000, 4000 * MBPS);
		u64 burst = rng_range(4 * KIB, 4 * MIB);
		u64 now = rng_range(1, 1ULL << 50), ready, want;
		s64 tokens = (s64)rng_range(1, burst);
		u32 bytes = (u32)rng_range(tokens + 1, tokens + 8 * MIB);
		struct smartio_bucket b = { .tokens = tokens, .at_ns = now };
		s64 debt = (s64)bytes - tokens;

		smartio_bucket_charge(&b, rate, burst, now, bytes);
		assert_int_equal(b.tokens, -debt);
		ready = smartio_bucket_ready_ns(&b, rate, now);
		want = first_token_ns(-debt, now, rate);
		if (ready + 1 < want || ready > want + 1)
			fail_msg("seed %llu: rate %llu, debt %lld at %llu: ready at %llu, expected %llu",
				 (unsigned long long)seed + 8,
				 (unsigned long long)rate, (long long)debt,
				 (unsigned long long)now,
				 (unsigned long long)ready,
				 (unsigned long long)want);
	}
}

/*
 * Writes the bucket did not gate (reads inactive, or past their deadline)
 * are charged too, but leave a debt of one write at most: after any run of
 * them, from any starting debt, the next write waits at most its own
 * predecessor's size at the rate. An unbounded debt (seconds of writes
 * alone, then reads) would hold writes beside reads for as long as the run.
 */
static void bucket_ungated_run_leaves_one_write_of_debt(void **unused)
{
	unsigned int round, i, n;

	(void)unused;
	rng_seed(seed + 13);
	for (round = 0; round < 10000; round++) {
		u64 rate = rng_range(1000, 4000 * MBPS);
		u64 burst = rng_range(4 * KIB, 4 * MIB);
		u64 t = rng_range(1, 1ULL << 50), ready, bound;
		struct smartio_bucket b = {
			.tokens = -(s64)rng_range(0, 8 * MIB), .at_ns = t,
		};
		u32 size = 0;

		n = (unsigned int)rng_range(1, 200);
		for (i = 0; i < n; i++) {
			size = (u32)rng_range(4 * KIB, 1 * MIB);
			smartio_bucket_charge(&b, rate, burst, t, size);
			t += rng_range(0, 100000);	/* faster than the rate */
		}
		assert_true(b.tokens >= -(s64)size);
		ready = smartio_bucket_ready_ns(&b, rate, t);
		bound = t + mul_u64_u64_div_u64(size + 1, NSEC_PER_SEC, rate) + 1;
		if (ready > bound)
			fail_msg("seed %llu: rate %llu, %u ungated writes, last %u bytes: ready at %llu, bound %llu",
				 (unsigned long long)seed + 13,
				 (unsigned long long)rate, n, size,
				 (unsigned long long)ready,
				 (unsigned long long)bound);
	}
}

/*
 * The ready time is exact: the first ns with a token is
 * at_ns + ceil((1 - tokens) * 1e9 / rate) (first_token_ns() here; with
 * tokens <= 0 the burst is never reached), counted from @b->at_ns and
 * rounded up, or @now if later. An early answer would make a timer fire in
 * vain; a late one would hold a write past its time. This checks what
 * test_smartio_gate.c checks of the gates: at the answer it goes, 1 ns
 * before it does not.
 */
struct bucket_case {
	u64 rate;
	u64 burst;
	s64 tokens;
	u64 at;
	u64 now;
	u64 ready;
	u64 want;
};

static void bucket_case_print(const char *what, const struct bucket_case *c)
{
	print_message("  %s: rate %llu, %lld tokens at %llu, asked at %llu: ready at %llu, first token at %llu\n",
		      what, (unsigned long long)c->rate, (long long)c->tokens,
		      (unsigned long long)c->at, (unsigned long long)c->now,
		      (unsigned long long)c->ready,
		      (unsigned long long)c->want);
}

static void bucket_ready_time_is_exact(void **unused)
{
	struct bucket_case early = { 0 }, late = { 0 };
	unsigned int round, n_early = 0, n_late = 0;

	(void)unused;
	rng_seed(seed + 9);
	for (round = 0; round < 100000; round++) {
		struct bucket_case c = {
			.rate = rng_range(1000, 4000 * MBPS),
			.burst = rng_range(4 * KIB, 4 * MIB),
			.tokens = -(s64)rng_below(8 * MIB),
			.at = rng_range(1, 1ULL << 50),
		};
		struct smartio_bucket b = { .tokens = c.tokens, .at_ns = c.at };

		c.want = first_token_ns(c.tokens, c.at, c.rate);
		/* half the time right after a charge, half a while after it */
		c.now = round & 1 ? c.at + rng_below(c.want - c.at) : c.at;
		c.ready = smartio_bucket_ready_ns(&b, c.rate, c.now);
		assert_true(c.ready > c.now);
		if (smartio_bucket_ready_ns(&b, c.rate, c.ready) >
		    c.ready && !n_early++)
			early = c;
		if (smartio_bucket_ready_ns(&b, c.rate, c.ready - 1) <= c.ready - 1 &&
		    !n_late++)
			late = c;
	}
	if (n_early)
		bucket_case_print("too early", &early);
	if (n_late)
		bucket_case_print("too late", &late);
	if (n_early || n_late)
		fail_msg("seed %llu: of %u ready times %u too early (no token there), %u too late (one 1 ns before)",
			 (unsigned long long)seed + 9, round, n_early, n_late);
}

/* However long the wait, the bucket holds burst at most; time only adds. */
static void bucket_never_exceeds_burst(void **unused)
{
	unsigned int round, i;

	(void)unused;
	rng_seed(seed + 10);
	for (round = 0; round < 100000; round++) {
		u64 rate = rng_range(1000, 1ULL << 40);
		u64 burst = rng_magnitude(36);
		u64 at = rng_below(1ULL << 61), t = at;
		struct smartio_bucket b = { .at_ns = at };
		s64 last;

		b.tokens = (s64)rng_range(0, 5 * burst) - 4 * (s64)burst;
		last = smartio_bucket_tokens(&b, rate, burst, at);
		assert_int_equal(last, b.tokens);
		for (i = 0; i < 8; i++) {
			s64 now;

			t += rng_magnitude(i * 8 + 4);
			now = smartio_bucket_tokens(&b, rate, burst, t);
			if (now > (s64)burst || now < last)
				fail_msg("seed %llu: rate %llu burst %llu, %lld at %llu: %lld at %llu, after %lld",
					 (unsigned long long)seed + 10,
					 (unsigned long long)rate,
					 (unsigned long long)burst,
					 (long long)b.tokens,
					 (unsigned long long)at,
					 (long long)now,
					 (unsigned long long)t, (long long)last);
			last = now;
		}
		/* the longest waits fill it */
		assert_int_equal(smartio_bucket_tokens(&b, rate, burst,
						       at + (1ULL << 62)),
				 burst);
		/* more than burst (the burst was lowered): burst */
		b.tokens = (s64)burst + 1;
		assert_int_equal(smartio_bucket_tokens(&b, rate, burst, at),
				 burst);
	}
}

/* Syncing before a rate change keeps the tokens; then the new rate adds. */
static void bucket_sync_keeps_tokens_across_rate_change(void **unused)
{
	unsigned int round;

	(void)unused;
	rng_seed(seed + 11);
	for (round = 0; round < 100000; round++) {
		u64 r1 = rng_range(1000, 4000 * MBPS);
		u64 r2 = rng_range(1000, 4000 * MBPS);
		u64 burst = rng_range(4 * KIB, 16 * MIB);
		u64 at = rng_below(1ULL << 50), t = at + rng_below(2 * MS);
		u64 dt = rng_below(100 * MS);
		struct smartio_bucket b = {
			.tokens = (s64)rng_range(0, 2 * burst) - (s64)burst,
			.at_ns = at,
		};
		s64 before = smartio_bucket_tokens(&b, r1, burst, t), want;

		smartio_bucket_sync(&b, r1, burst, t);
		assert_int_equal(b.at_ns, t);
		assert_int_equal(b.tokens, before);
		assert_int_equal(smartio_bucket_tokens(&b, r2, burst, t),
				 before);
		want = before + (s64)mul_u64_u64_div_u64(r2, dt, NSEC_PER_SEC);
		want = min(want, (s64)burst);
		/* within the 1 byte the fill-time comparison may round up */
		if (llabs(smartio_bucket_tokens(&b, r2, burst, t + dt) -
			  want) > 1)
			fail_msg("seed %llu: %lld tokens, then %llu ns at %llu B/s: %lld, expected %lld",
				 (unsigned long long)seed + 11,
				 (long long)before, (unsigned long long)dt,
				 (unsigned long long)r2,
				 (long long)smartio_bucket_tokens(&b, r2, burst,
								  t + dt),
				 (long long)want);
		/* syncing at an earlier time changes nothing */
		smartio_bucket_sync(&b, r2, burst, at);
		assert_int_equal(b.at_ns, t);
		assert_int_equal(b.tokens, before);
	}
}

/*
 * Writes of 4 KiB .. 1 MiB always queued, each dispatched when the bucket
 * lets it (a timer at the ready time, asked again there) and charged: no
 * write waits longer than (max write + burst) / rate, and over a minute the
 * bucket delivers its rate, within 1% and one write.
 */
static void bucket_starvation_bound_and_rate(void **unused)
{
	const u64 rates[] = { 1 * MBPS, 7777777, 100 * MBPS, 0, 0 };
	const u64 run_ns = 60ULL * NSEC_PER_SEC, max_write = 1 * MIB;
	unsigned int i;

	(void)unused;
	rng_seed(seed + 12);
	for (i = 0; i < 5; i++) {
		u64 rate = rates[i] ? rates[i] : rng_range(MBPS, 400 * MBPS);
		u64 burst = rng_range(4 * KIB, 2 * MIB);
		u64 bound = mul_u64_u64_div_u64(max_write + burst,
						NSEC_PER_SEC, rate) + 1;
		struct smartio_bucket b = { 0 };
		u64 t = 0, last = 0, bytes = 0, longest = 0, expect;
		unsigned int writes = 0, vain = 0;

		while (t < run_ns) {
			u64 ready = smartio_bucket_ready_ns(&b, rate, t);
			u32 size;

			if (ready > t) {	/* a timer at the ready time */
				t = ready;
				/* which may find no token: again, in vain */
				for (;;) {
					ready = smartio_bucket_ready_ns(&b, rate, t);
					if (ready <= t)
						break;
					vain++;
					t = ready;
				}
			}
			if (t >= run_ns)
				break;
			if (writes && t - last > bound)
				fail_msg("seed %llu: rate %llu burst %llu: %llu ns between writes, bound %llu",
					 (unsigned long long)seed + 12,
					 (unsigned long long)rate,
					 (unsigned long long)burst,
					 (unsigned long long)(t - last),
					 (unsigned long long)bound);
			if (writes)
				longest = max(longest, t - last);
			size = (u32)rng_range(4 * KIB, max_write);
			smartio_bucket_charge(&b, rate, burst, t, size);
			bytes += size;
			last = t;
			writes++;
		}
		expect = mul_u64_u64_div_u64(rate, run_ns, NSEC_PER_SEC);
		if (bytes > expect + expect / 100 + max_write ||
		    bytes + expect / 100 + max_write < expect)
			fail_msg("seed %llu: rate %llu burst %llu: %llu bytes in %llu s, expected %llu",
				 (unsigned long long)seed + 12,
				 (unsigned long long)rate,
				 (unsigned long long)burst,
				 (unsigned long long)bytes,
				 (unsigned long long)(run_ns / NSEC_PER_SEC),
				 (unsigned long long)expect);
		print_message("bucket %llu B/s, burst %llu: %u writes, %.4f of the rate, longest gap %llu ns (bound %llu), %u timers in vain\n",
			      (unsigned long long)rate,
			      (unsigned long long)burst, writes,
			      (double)bytes / expect,
			      (unsigned long long)longest,
			      (unsigned long long)bound, vain);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lat_bucket_top_bounds_its_value),
		cmocka_unit_test(lat_bucket_monotone_and_contiguous),
		cmocka_unit_test(lat_bucket_past_top_is_last),
		cmocka_unit_test(lat_pct_counted_by_hand),
		cmocka_unit_test(lat_pct_of_random_sets),
		cmocka_unit_test(size_class_by_powers_of_two),
		cmocka_unit_test(slowdown_same_for_every_size),
		cmocka_unit_test(slowdown_counts_more_slow_reads),
		cmocka_unit_test(slowdown_bounds_each_read),
		cmocka_unit_test(baseline_down_by_half_up_by_eighth),
		cmocka_unit_test(baseline_stale_corrected_by_faster_windows),
		cmocka_unit_test(cold_while_a_read_class_has_no_baseline),
		cmocka_unit_test(cold_matches_plain_count),
		cmocka_unit_test(scale_q8_within_0_7_pct),
		cmocka_unit_test(ctl_converges_from_ceiling),
		cmocka_unit_test(ctl_converges_from_floor),
		cmocka_unit_test(ctl_steep_device_does_not_diverge),
		cmocka_unit_test(ctl_step_to_10x_more_sensitive_device),
		cmocka_unit_test(ctl_recovers_to_ceiling_when_reads_fast),
		cmocka_unit_test(ctl_no_windup_when_writes_take_little),
		cmocka_unit_test(ctl_window_without_reads_changes_nothing),
		cmocka_unit_test(ctl_window_without_writes_changes_nothing),
		cmocka_unit_test(ctl_cut_starts_from_what_writes_took),
		cmocka_unit_test(ctl_error_linear_and_bounded),
		cmocka_unit_test(ctl_holds_the_mean_not_the_geometric_mean),
		cmocka_unit_test(ctl_deadband_holds_rate),
		cmocka_unit_test(bucket_ready_now_with_tokens),
		cmocka_unit_test(bucket_debt_sets_ready_time),
		cmocka_unit_test(bucket_ready_time_is_exact),
		cmocka_unit_test(bucket_never_exceeds_burst),
		cmocka_unit_test(bucket_sync_keeps_tokens_across_rate_change),
		cmocka_unit_test(bucket_starvation_bound_and_rate),
		cmocka_unit_test(bucket_ungated_run_leaves_one_write_of_debt),
	};
	const char *s = getenv("SMARTIO_TEST_SEED");

	seed = s ? strtoull(s, NULL, 0) : SMARTIO_CTL_SEED;
	printf("smartio ctl: seed %llu (SMARTIO_TEST_SEED=%llu replays)\n",
	       (unsigned long long)seed, (unsigned long long)seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
