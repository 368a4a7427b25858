// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of smartio-iosched's gates (modules/smartio-iosched/
 * smartio_gate.h): when a held write, a held idle-class request and a held
 * background read may go.
 * Cases counted by hand at their exact boundaries, then the property that
 * makes the scheduler poll-free: for random states, the answer is exact.
 * The returned time allows the request (a timer set to it does not fire in
 * vain), no earlier time does (a request is never held past it), and
 * SMARTIO_NEVER means no time at all does while nothing else changes.
 * Random states come from a fixed-seed LCG; it prints its seed and
 * SMARTIO_TEST_SEED=<n> replays one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "smartio_gate.h"

#define US	1000ULL		/* ns */
#define MS	(1000 * US)

/* the default seed of the LCG below */
#define SMARTIO_GATE_SEED	15ULL

/* 64-bit LCG (Knuth's MMIX constants): the same states on every run */
static u64 lcg_state = SMARTIO_GATE_SEED;

static u64 lcg_below(u64 n)
{
	lcg_state = lcg_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (lcg_state >> 11) % n;
}

/* The module's defaults: 2 ms idle, cap 16; the bucket lets a write go. */
static struct smartio_write_state write_state(u64 now)
{
	return (struct smartio_write_state){
		.now = now,
		.read_idle_ns = 2 * MS,
		.cap = 16,
	};
}

static u64 write_at(struct smartio_write_state s, u64 now, bool *alone)
{
	s.now = now;
	return smartio_write_ready_ns(&s, alone);
}

/* No read ever: only the cap counts, whatever the bucket says. */
static void test_write_no_reads_ever(void **unused)
{
	struct smartio_write_state s = write_state(1000 * MS);
	bool alone;

	(void)unused;
	s.writes_inflight = 15;
	s.bucket_ready_ns = 5000 * MS;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), s.now);
	assert_true(alone);
	s.writes_inflight = 0;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), s.now);
	/* at the cap: a completion, not a time */
	s.writes_inflight = 16;
	assert_true(smartio_write_ready_ns(&s, &alone) == SMARTIO_NEVER);
	assert_true(alone);
	assert_true(write_at(s, 9000 * MS, &alone) == SMARTIO_NEVER);
}

/* A read in flight keeps reads active however old the last one: the bucket. */
static void test_write_waits_for_bucket_while_read_in_flight(void **unused)
{
	struct smartio_write_state s = write_state(1000 * MS);
	bool alone;

	(void)unused;
	s.reads_inflight = 1;
	s.last_read_ns = 900 * MS;
	s.writes_inflight = 3;
	s.bucket_ready_ns = 1005 * MS;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), 1005 * MS);
	assert_false(alone);
	assert_int_equal(write_at(s, 1005 * MS - 1, &alone), 1005 * MS);
	assert_false(alone);
	assert_int_equal(write_at(s, 1005 * MS, &alone), 1005 * MS);
	assert_false(alone);
	/* the bucket ready (at or before now): now */
	s.bucket_ready_ns = 1000 * MS;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), s.now);
	s.bucket_ready_ns = 0;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), s.now);
	assert_false(alone);
}

/* Reads inactive: now, whatever the bucket says, and alone. */
static void test_write_reads_inactive_ignores_bucket(void **unused)
{
	struct smartio_write_state s = write_state(1000 * MS);
	bool alone;

	(void)unused;
	s.last_read_ns = 990 * MS;
	s.writes_inflight = 15;
	s.bucket_ready_ns = 3000 * MS;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), s.now);
	assert_true(alone);
	/* the last read exactly read_idle_ns ago: inactive */
	s.last_read_ns = 998 * MS;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), s.now);
	assert_true(alone);
	/* 1 ns later it is still active: held until it is not */
	s.last_read_ns = 998 * MS + 1;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), 1000 * MS + 1);
	assert_false(alone);
}

/* Blocked only by the bucket: the earlier of its time and the reads' idling. */
static void test_write_bucket_or_reads_idle_whichever_first(void **unused)
{
	struct smartio_write_state s = write_state(1000 * MS);
	bool alone;

	(void)unused;
	s.last_read_ns = 999 * MS;	/* active until 1001 ms */
	s.bucket_ready_ns = 1005 * MS;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), 1001 * MS);
	assert_false(alone);
	assert_int_equal(write_at(s, 1001 * MS - 1, &alone), 1001 * MS);
	assert_false(alone);
	assert_int_equal(write_at(s, 1001 * MS, &alone), 1001 * MS);
	assert_true(alone);
	/* the bucket first */
	s.bucket_ready_ns = 1000 * MS + 500 * US;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), 1000 * MS + 500 * US);
	assert_false(alone);
	assert_int_equal(write_at(s, 1000 * MS + 500 * US, &alone),
			 1000 * MS + 500 * US);
	assert_false(alone);
	/* both at once */
	s.bucket_ready_ns = 1001 * MS;
	assert_int_equal(smartio_write_ready_ns(&s, &alone), 1001 * MS);
}

/* At the cap: SMARTIO_NEVER, even with reads inactive and the bucket full. */
static void test_write_cap_is_never_even_alone(void **unused)
{
	struct smartio_write_state s = write_state(1000 * MS);
	bool alone;

	(void)unused;
	s.writes_inflight = 16;
	s.last_read_ns = 500 * MS;
	assert_true(smartio_write_ready_ns(&s, &alone) == SMARTIO_NEVER);
	assert_true(alone);
	assert_true(write_at(s, 2000 * MS, &alone) == SMARTIO_NEVER);
	/* past the cap (the cap was lowered) */
	s.cap = 4;
	assert_true(smartio_write_ready_ns(&s, &alone) == SMARTIO_NEVER);
	/* reads active, bucket ready: still a completion */
	s.cap = 16;
	s.reads_inflight = 2;
	assert_true(smartio_write_ready_ns(&s, &alone) == SMARTIO_NEVER);
	assert_false(alone);
	/* a cap of 0 lets nothing go */
	s.cap = 0;
	s.writes_inflight = 0;
	s.reads_inflight = 0;
	assert_true(smartio_write_ready_ns(&s, &alone) == SMARTIO_NEVER);
}

static struct smartio_idle_state idle_state(u64 now)
{
	return (struct smartio_idle_state){
		.now = now,
		.grace_ns = 20 * MS,
		.guard_ns = 500 * MS,
		.waiting_since_ns = now,
	};
}

static u64 idle_at(struct smartio_idle_state s, u64 now, bool *guard)
{
	s.now = now;
	return smartio_idle_ready_ns(&s, guard);
}

static void test_idle_nothing_else_ever(void **unused)
{
	struct smartio_idle_state s = idle_state(1000 * MS);
	bool guard;

	(void)unused;
	assert_true(smartio_idle_ready_ns(&s, &guard) <= s.now);
	assert_false(guard);
	/* one at a time */
	s.idle_inflight = 1;
	assert_true(smartio_idle_ready_ns(&s, &guard) == SMARTIO_NEVER);
}

static void test_idle_grace_after_others(void **unused)
{
	struct smartio_idle_state s = idle_state(1000 * MS);
	bool guard;

	(void)unused;
	s.last_busy_ns = 990 * MS;
	assert_int_equal(smartio_idle_ready_ns(&s, &guard), 1010 * MS);
	assert_false(guard);
	assert_int_equal(idle_at(s, 1010 * MS - 1, &guard), 1010 * MS);
	assert_int_equal(idle_at(s, 1010 * MS, &guard), 1010 * MS);
	assert_false(guard);
}

static void test_idle_guard_while_others_busy(void **unused)
{
	struct smartio_idle_state s = idle_state(1000 * MS);
	bool guard;

	(void)unused;
	s.others_busy = true;
	s.last_busy_ns = 1000 * MS;
	s.waiting_since_ns = 700 * MS;
	assert_int_equal(smartio_idle_ready_ns(&s, &guard), 1200 * MS);
	assert_false(guard);
	assert_int_equal(idle_at(s, 1200 * MS - 1, &guard), 1200 * MS);
	assert_false(guard);
	assert_int_equal(idle_at(s, 1200 * MS, &guard), 1200 * MS);
	assert_true(guard);
	/* others quiet but their grace ends after the guard: the guard */
	s.others_busy = false;
	s.last_busy_ns = 1190 * MS;
	assert_int_equal(idle_at(s, 1200 * MS, &guard), 1200 * MS);
	assert_true(guard);
	/* both due: the grace is the reason, not the guard */
	s.last_busy_ns = 1185 * MS;
	assert_int_equal(idle_at(s, 1205 * MS, &guard), 1205 * MS);
	assert_false(guard);
	/* and the grace when it ends first */
	s.last_busy_ns = 1100 * MS;
	assert_int_equal(idle_at(s, 1150 * MS, &guard), 1120 * MS);
	assert_false(guard);
}

/* Around a few boundaries of each state: near 0, near @at, far off. */
static u64 probe_time(u64 now, u64 at, unsigned int i)
{
	static const long long off[] = { -2, -1, 0, 1, 2 };

	if (i < 5 && at != SMARTIO_NEVER && (long long)at + off[i] >= (long long)now)
		return at + off[i];
	return now + lcg_below(200 * MS);
}

/* Reads count as active at @t: one in flight, or one within read_idle_ns. */
static bool reads_active_at(const struct smartio_write_state *s, u64 t)
{
	return s->reads_inflight ||
	       (s->last_read_ns && t < s->last_read_ns + s->read_idle_ns);
}

/*
 * Exactness of the write gate: from a state held at @now until @at, every
 * earlier time is still held (@at - 1 included) and @at itself is free;
 * SMARTIO_NEVER, never. @alone says whether reads are inactive, and a
 * state at or past the cap is SMARTIO_NEVER whatever else it holds.
 */
static void test_write_gate_exact(void **unused)
{
	unsigned int n, i;

	(void)unused;
	for (n = 0; n < 200000; n++) {
		struct smartio_write_state s = write_state(500 * MS +
							   lcg_below(100 * MS));
		u64 at, later;
		bool alone;

		s.reads_inflight = lcg_below(3) == 0;
		s.last_read_ns = lcg_below(4) ? s.now - lcg_below(60 * MS) : 0;
		s.read_idle_ns = lcg_below(5 * MS);
		s.cap = lcg_below(5);
		s.writes_inflight = lcg_below(s.cap + 2);
		switch (lcg_below(4)) {
		case 0:
			s.bucket_ready_ns = 0;
			break;
		case 1:
			s.bucket_ready_ns = s.now - lcg_below(20 * MS);
			break;
		default:
			s.bucket_ready_ns = s.now + 1 + lcg_below(20 * MS);
			break;
		}

		at = smartio_write_ready_ns(&s, &alone);
		if (alone == reads_active_at(&s, s.now))
			fail_msg("state %u: alone %d, reads active %d",
				 n, alone, reads_active_at(&s, s.now));
		if (s.writes_inflight >= s.cap) {
			assert_true(at == SMARTIO_NEVER);
			for (i = 0; i < 3; i++)
				assert_true(write_at(s, probe_time(s.now, at, i),
						     &alone) == SMARTIO_NEVER);
			continue;
		}
		/* under the cap a time always comes: the bucket's at the latest */
		assert_true(at <= max(s.now, s.bucket_ready_ns));
		if (at <= s.now) {
			assert_int_equal(at, s.now);
			continue;
		}
		for (i = 0; i < 8; i++) {
			u64 t = probe_time(s.now, at, i);

			later = write_at(s, t, &alone);
			if (t < at) {
				if (later <= t)
					fail_msg("state %u: held until %llu, free at %llu",
						 n, (unsigned long long)at,
						 (unsigned long long)t);
			} else if (later != t) {
				fail_msg("state %u: free at %llu, at %llu says %llu",
					 n, (unsigned long long)at,
					 (unsigned long long)t,
					 (unsigned long long)later);
			}
		}
	}
}

/* The same exactness for the idle class. */
static void test_idle_gate_exact(void **unused)
{
	unsigned int n, i;

	(void)unused;
	for (n = 0; n < 200000; n++) {
		struct smartio_idle_state s = idle_state(500 * MS +
							 lcg_below(100 * MS));
		u64 at, later;
		bool guard;

		s.idle_inflight = lcg_below(4) == 0;
		s.others_busy = lcg_below(2);
		s.last_busy_ns = lcg_below(4) ? s.now - lcg_below(40 * MS) : 0;
		s.grace_ns = lcg_below(30 * MS);
		s.guard_ns = lcg_below(60 * MS);
		s.waiting_since_ns = s.now - lcg_below(60 * MS);

		at = smartio_idle_ready_ns(&s, &guard);
		if (at <= s.now) {
			/* released now: by the guard only when it is due */
			if (guard)
				assert_true(s.waiting_since_ns + s.guard_ns <= s.now);
			continue;
		}
		assert_false(guard);
		for (i = 0; i < 8; i++) {
			u64 t = probe_time(s.now, at, i);

			later = idle_at(s, t, &guard);
			if (t < at)
				assert_true(later > t);
			else
				assert_true(later <= t);
		}
	}
}

static u64 bg_at(struct smartio_bg_read_state s, u64 now)
{
	s.now = now;
	return smartio_bg_read_ready_ns(&s);
}

/* The foreground active: other reads up to bg_cap, then held until it idles. */
static void test_bg_read_cap_while_fg_active(void **unused)
{
	struct smartio_bg_read_state s = {
		.now = 1000 * MS, .fg_idle_ns = 2 * MS, .bg_cap = 4,
	};

	(void)unused;
	/* no foreground ever: the cap still counts only when it is reached */
	s.bg_inflight = 3;
	assert_int_equal(smartio_bg_read_ready_ns(&s), s.now);
	s.bg_inflight = 4;
	assert_int_equal(smartio_bg_read_ready_ns(&s), s.now);
	/* a foreground read in flight: until a completion */
	s.fg_inflight = 1;
	s.last_fg_ns = 999 * MS;
	assert_true(smartio_bg_read_ready_ns(&s) == SMARTIO_NEVER);
	s.bg_inflight = 3;
	assert_int_equal(smartio_bg_read_ready_ns(&s), s.now);
	/* the last one done at 999 ms: held until 1001 ms, then free */
	s.bg_inflight = 4;
	s.fg_inflight = 0;
	assert_int_equal(smartio_bg_read_ready_ns(&s), 1001 * MS);
	assert_int_equal(bg_at(s, 1001 * MS - 1), 1001 * MS);
	assert_int_equal(bg_at(s, 1001 * MS), 1001 * MS);
	assert_int_equal(bg_at(s, 1500 * MS), 1500 * MS);
}

/* Exactness of the background-read gate, as for the others. */
static void test_bg_read_gate_exact(void **unused)
{
	unsigned int n, i;

	(void)unused;
	for (n = 0; n < 200000; n++) {
		struct smartio_bg_read_state s = {
			.now = 500 * MS + lcg_below(100 * MS),
		};
		u64 at, later;

		s.fg_inflight = lcg_below(3) == 0;
		s.last_fg_ns = lcg_below(4) ? s.now - lcg_below(20 * MS) : 0;
		s.fg_idle_ns = lcg_below(10 * MS);
		s.bg_cap = 1 + lcg_below(4);
		s.bg_inflight = lcg_below(s.bg_cap + 2);

		at = smartio_bg_read_ready_ns(&s);
		if (at <= s.now) {
			assert_int_equal(at, s.now);
			continue;
		}
		for (i = 0; i < 8; i++) {
			u64 t = probe_time(s.now, at, i);

			later = bg_at(s, t);
			if (t < at)
				assert_true(later > t);
			else
				assert_true(later <= t);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_no_reads_ever),
		cmocka_unit_test(test_write_waits_for_bucket_while_read_in_flight),
		cmocka_unit_test(test_write_reads_inactive_ignores_bucket),
		cmocka_unit_test(test_write_bucket_or_reads_idle_whichever_first),
		cmocka_unit_test(test_write_cap_is_never_even_alone),
		cmocka_unit_test(test_idle_nothing_else_ever),
		cmocka_unit_test(test_idle_grace_after_others),
		cmocka_unit_test(test_idle_guard_while_others_busy),
		cmocka_unit_test(test_write_gate_exact),
		cmocka_unit_test(test_idle_gate_exact),
		cmocka_unit_test(test_bg_read_cap_while_fg_active),
		cmocka_unit_test(test_bg_read_gate_exact),
	};
	const char *seed = getenv("SMARTIO_TEST_SEED");

	lcg_state = seed ? strtoull(seed, NULL, 0) : SMARTIO_GATE_SEED;
	printf("smartio gate: seed %llu (SMARTIO_TEST_SEED=%llu replays)\n",
	       (unsigned long long)lcg_state, (unsigned long long)lcg_state);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
