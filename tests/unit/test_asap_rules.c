// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit tests of ASAP's estimators (modules/asap-prefetch/asap_rules.h, the
 * same header asap_learn.c and asap_prepage.c use). The seed's rules
 * (rules=seed):
 *
 *  file pages: over the first N switches (10), pages seen in >= M (8)
 *  become candidates; extents closer than 16 pages merge; a prepaged page
 *  not used in a window is evicted from the table; a candidate faulted
 *  again re-enters it;
 *  anonymous pages: a new fault makes a candidate, a candidate accessed
 *  again is promoted, the timeout is decremented each window and reset on
 *  access, expired entries are dropped.
 *
 * The recall rules (rules=recall, tests named recall_*): a page of either
 * kind faulted in a window is in the table, in every window; an entry
 * neither faulted nor (prepaged and) used in k windows in a row is
 * dropped; saved profiles load under either set.
 *
 * A window is simulated as asap_learn() runs it: the faults of the log in
 * order (file: asap_file_fault(); anon: asap_anon_fault()), the accessed
 * bits of table and prepaged anon pages, then every entry swept. The
 * tables are arrays indexed by page. The randomized tests compare the
 * tables against the rules stated in plain counts (how many windows a page
 * was seen in, windows since its last access); they print their seed and
 * ASAP_TEST_SEED=<n> replays one.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "asap_rules.h"

#define NP		64	/* pages in a test table */
#define N_PROFILE	10	/* the seed's N */
#define M_MIN		8	/* the seed's M */
#define MERGE		16	/* the seed's extent merge distance, pages */
#define TIMEOUT		4	/* the module's default anon_timeout */

/* ---- a table and the simulation of one window ---- */

struct table {
	enum asap_rule_set rules;	/* zeroed: the seed's */
	unsigned int k;		/* recall: unused_windows */
	bool present[NP];
	unsigned long val[NP];
	unsigned int profiled;	/* file: profile windows closed */
	unsigned int hits;	/* prepaged pages used, over all windows */
	unsigned int unused;	/* prepaged pages not used */
	unsigned int faults;	/* faults counted (once per page and window) */
	/* anon: log entry i read its page (NULL: every entry did) */
	const bool *log_miss;
};

static void apply(struct table *t, unsigned int p, enum asap_act act,
		  unsigned long nv)
{
	switch (act) {
	case ASAP_ACT_ADD:
		assert_false(t->present[p]);
		t->present[p] = true;
		t->val[p] = nv;
		break;
	case ASAP_ACT_SET:
		assert_true(t->present[p]);
		t->val[p] = nv;
		break;
	case ASAP_ACT_DEL:
		assert_true(t->present[p]);
		t->present[p] = false;
		t->val[p] = 0;
		break;
	case ASAP_ACT_NONE:
		break;
	}
}

static void count_use(struct table *t, enum asap_use use)
{
	if (use == ASAP_USE_HIT)
		t->hits++;
	else if (use == ASAP_USE_UNUSED)
		t->unused++;
}

/*
 * One file window: @prepaged pages read by the workers (as
 * asap_prepage_file() marks them), then the faults @log[0..@n) in order,
 * then the sweep with @mapped[p] saying whether the app maps page p.
 */
static void file_window(struct table *t, const unsigned int *log,
			unsigned int n, const bool *prepaged,
			const bool *mapped)
{
	unsigned long nv = 0;
	enum asap_use use;
	enum asap_act act;
	bool profiling, end;
	unsigned int i, p;

	profiling = asap_file_phase(t->profiled, N_PROFILE, &end);
	for (p = 0; p < NP && prepaged; p++)
		if (prepaged[p] && t->present[p])
			t->val[p] |= ASAP_E_PREPAGED;
	for (i = 0; i < n; i++) {
		p = log[i];
		t->faults++;
		act = asap_file_fault(t->present[p], t->val[p],
				      asap_file_learns(t->rules, profiling), i,
				      &nv);
		apply(t, p, act, nv);
	}
	if (profiling)
		t->profiled++;
	for (p = 0; p < NP; p++) {
		if (!t->present[p])
			continue;
		if (t->rules == ASAP_RULES_RECALL)
			act = asap_file_sweep_recall(t->val[p],
						     mapped && mapped[p], t->k,
						     &nv, &use);
		else
			act = asap_file_sweep(t->val[p], mapped && mapped[p],
					      profiling, end, M_MIN, &nv, &use);
		count_use(t, use);
		apply(t, p, act, nv);
	}
}

/*
 * One anon window: workers' swap-ins of @prepaged pages, the app's
 * faults @log[0..@n), the accessed bits @young of table and prepaged
 * pages, then the sweep.
 */
static void anon_window(struct table *t, const unsigned int *log,
			unsigned int n, const bool *prepaged,
			const bool *young)
{
	unsigned long nv = 0;
	enum asap_use use;
	enum asap_act act;
	unsigned int i, p;
	bool count;

	for (p = 0; p < NP && prepaged; p++) {
		if (!prepaged[p])
			continue;
		act = asap_anon_fault(t->present[p], t->val[p], true, false,
				      TIMEOUT, 0, &nv, &count);
		assert_false(count);
		apply(t, p, act, nv);
	}
	for (i = 0; i < n; i++) {
		p = log[i];
		act = asap_anon_fault(t->present[p], t->val[p], false,
				      !t->log_miss || t->log_miss[i], TIMEOUT,
				      i, &nv, &count);
		if (count)
			t->faults++;
		apply(t, p, act, nv);
	}
	for (p = 0; p < NP && young; p++)
		if (young[p] && t->present[p] && asap_anon_young(t->val[p]))
			t->val[p] |= ASAP_E_USED;
	for (p = 0; p < NP; p++) {
		if (!t->present[p])
			continue;
		if (t->rules == ASAP_RULES_RECALL)
			act = asap_anon_sweep_recall(t->val[p], TIMEOUT, t->k,
						     &nv, &use);
		else
			act = asap_anon_sweep(t->val[p], TIMEOUT, &nv, &use);
		count_use(t, use);
		apply(t, p, act, nv);
	}
}

static bool in_table(const struct table *t, unsigned int p)
{
	return t->present[p] && (t->val[p] & ASAP_E_TABLE);
}

static unsigned int table_pages(const struct table *t)
{
	unsigned int p, n = 0;

	for (p = 0; p < NP; p++)
		n += in_table(t, p);
	return n;
}

static unsigned long count_of(const struct table *t, unsigned int p)
{
	return FIELD_GET(ASAP_E_COUNT, t->val[p]);
}

static unsigned int seed;

/* ---- file estimator: the offline profile ---- */

static void file_phase_profile_ends_at_window_n(void **state)
{
	bool end;
	unsigned int w;

	(void)state;
	for (w = 0; w < N_PROFILE; w++) {
		if (!asap_file_phase(w, N_PROFILE, &end))
			fail_msg("window %u of %u: expected profiling", w + 1,
				 N_PROFILE);
		if (end != (w == N_PROFILE - 1))
			fail_msg("window %u of %u: expected profile_end=%d, got %d",
				 w + 1, N_PROFILE, w == N_PROFILE - 1, end);
	}
	if (asap_file_phase(N_PROFILE, N_PROFILE, &end) || end)
		fail_msg("window %u: expected the profile over", N_PROFILE + 1);
}

/*
 * Page p (0..10) is seen in the first p windows of the profile: pages seen
 * in >= 8 of the 10 become candidates (in the table) at the end of the
 * 10th window, the others are dropped; no page is in the table before.
 */
static void file_seen_in_m_of_n_windows_become_candidates(void **state)
{
	struct table t = { 0 };
	unsigned int log[NP], n, w, p;

	(void)state;
	for (w = 0; w < N_PROFILE; w++) {
		n = 0;
		for (p = w + 1; p <= N_PROFILE; p++)
			log[n++] = p;
		file_window(&t, log, n, NULL, NULL);
		if (w < N_PROFILE - 1 && table_pages(&t))
			fail_msg("after window %u: expected no table page before the profile ends, got %u",
				 w + 1, table_pages(&t));
	}
	for (p = 0; p <= N_PROFILE; p++) {
		bool want = p >= M_MIN;

		if (in_table(&t, p) != want || t.present[p] != want)
			fail_msg("page seen in %u of %u windows: expected %s, got present=%d table=%d",
				 p, N_PROFILE, want ? "a candidate" : "dropped",
				 t.present[p], in_table(&t, p));
	}
	assert_int_equal(table_pages(&t), N_PROFILE - M_MIN + 1);
}

/* Which windows does not matter, only how many: first 8, last 8, spread. */
static void file_candidate_any_m_windows(void **state)
{
	static const unsigned int pattern[3][N_PROFILE] = {
		{ 1, 1, 1, 1, 1, 1, 1, 1, 0, 0 },
		{ 0, 0, 1, 1, 1, 1, 1, 1, 1, 1 },
		{ 1, 0, 1, 1, 1, 0, 1, 1, 1, 1 },
	};
	struct table t = { 0 };
	unsigned int log[3], n, w, k;

	(void)state;
	for (w = 0; w < N_PROFILE; w++) {
		n = 0;
		for (k = 0; k < 3; k++)
			if (pattern[k][w])
				log[n++] = 20 + k;
		file_window(&t, log, n, NULL, NULL);
	}
	for (k = 0; k < 3; k++)
		if (!in_table(&t, 20 + k))
			fail_msg("pattern %u (8 of 10 windows): expected a candidate", k);
}

/* Several faults on a page in one window count as one window. */
static void file_page_counts_once_per_window(void **state)
{
	unsigned int log[] = { 5, 5, 5, 6, 5 };
	struct table t = { 0 };
	unsigned int w;

	(void)state;
	file_window(&t, log, 5, NULL, NULL);
	assert_int_equal(count_of(&t, 5), 1);
	assert_int_equal(count_of(&t, 6), 1);
	/* Page 5 in 7 windows, 5 faults each: 7 < 8, dropped. */
	for (w = 1; w < N_PROFILE; w++)
		file_window(&t, w < 7 ? log : NULL, w < 7 ? 5 : 0, NULL, NULL);
	if (t.present[5])
		fail_msg("page faulted 35 times in 7 windows: expected dropped (count %lu)",
			 count_of(&t, 5));
}

/* The first fault of a window sets the page's first-use order. */
static void file_first_use_is_first_fault(void **state)
{
	unsigned long nv = 0, v;

	(void)state;
	assert_int_equal(asap_file_fault(false, 0, true, 7, &nv), ASAP_ACT_ADD);
	assert_int_equal(FIELD_GET(ASAP_E_FIRST, nv), 7);
	v = nv;
	assert_int_equal(asap_file_fault(true, v, true, 9, &nv), ASAP_ACT_NONE);
	/* Next window (SEEN cleared by the sweep): a new order. */
	v &= ~ASAP_E_SEEN;
	assert_int_equal(asap_file_fault(true, v, false, 3, &nv), ASAP_ACT_SET);
	assert_int_equal(FIELD_GET(ASAP_E_FIRST, nv), 3);
}

/* After the profile no page is learned: faults on unknown pages are not. */
static void file_no_new_pages_after_profile(void **state)
{
	unsigned int log[] = { 1 }, other[] = { 2 }, w;
	struct table t = { 0 };

	(void)state;
	for (w = 0; w < N_PROFILE; w++)
		file_window(&t, log, 1, NULL, NULL);
	for (w = 0; w < 20; w++)
		file_window(&t, other, 1, NULL, NULL);
	if (t.present[2])
		fail_msg("page first faulted after the profile: expected not learned");
	assert_true(in_table(&t, 1));
}

/* The count saturates instead of wrapping into the table bit. */
static void file_count_saturates(void **state)
{
	unsigned long v = FIELD_PREP(ASAP_E_COUNT, ASAP_E_COUNT_MAX) |
			  ASAP_E_SEEN, nv = 0;
	enum asap_use use;

	(void)state;
	assert_int_equal(asap_file_sweep(v, false, true, false, M_MIN, &nv,
					 &use), ASAP_ACT_SET);
	assert_int_equal(FIELD_GET(ASAP_E_COUNT, nv), ASAP_E_COUNT_MAX);
	assert_false(nv & ASAP_E_TABLE);
}

/*
 * After the profile: a prepaged page the app did not map leaves the
 * table (unused), a mapped one stays (hit); a page not prepaged (already
 * resident) stays; the evicted candidate faulted again re-enters.
 */
static void file_unused_prepaged_evicted_and_reenters(void **state)
{
	unsigned int log[] = { 1, 2, 3 };
	bool prepaged[NP] = { 0 }, mapped[NP] = { 0 };
	struct table t = { 0 };
	unsigned int w;

	(void)state;
	for (w = 0; w < N_PROFILE; w++)
		file_window(&t, log, 3, NULL, NULL);
	assert_int_equal(table_pages(&t), 3);

	prepaged[1] = prepaged[2] = true;
	mapped[1] = true;
	file_window(&t, NULL, 0, prepaged, mapped);
	assert_true(in_table(&t, 1));
	if (in_table(&t, 2))
		fail_msg("prepaged page not used in the window: expected evicted from the table");
	assert_true(t.present[2]);	/* still a candidate */
	assert_true(in_table(&t, 3));	/* not prepaged: not judged */
	assert_int_equal(t.hits, 1);
	assert_int_equal(t.unused, 1);

	/* Not in the table: not prepaged, and the app faults it. */
	file_window(&t, &log[1], 1, NULL, NULL);
	if (!in_table(&t, 2))
		fail_msg("evicted candidate faulted again: expected back in the table");
}

/* Gap pages of a merged extent are read, counted, and never learned. */
static void file_gap_pages_dropped(void **state)
{
	unsigned long nv = 0;
	enum asap_use use;

	(void)state;
	assert_int_equal(asap_file_sweep(ASAP_E_GAP | ASAP_E_PREPAGED, true,
					 false, false, M_MIN, &nv, &use),
			 ASAP_ACT_DEL);
	assert_int_equal(use, ASAP_USE_HIT);
	assert_int_equal(asap_file_sweep(ASAP_E_GAP | ASAP_E_PREPAGED, false,
					 false, false, M_MIN, &nv, &use),
			 ASAP_ACT_DEL);
	assert_int_equal(use, ASAP_USE_UNUSED);
}

/*
 * Random footprints over the profile: the candidates are exactly the pages
 * seen in at least M of the N windows.
 */
static void file_random_profiles_match_counts(void **state)
{
	unsigned int round, w, p, n, k, log[2 * NP], seen[NP];
	struct table t;

	(void)state;
	srand(seed);
	for (round = 0; round < 200; round++) {
		memset(&t, 0, sizeof(t));
		memset(seen, 0, sizeof(seen));
		for (w = 0; w < N_PROFILE; w++) {
			n = 0;
			/* Page p is seen with probability p / NP. */
			for (p = 0; p < NP; p++) {
				if ((unsigned int)rand() % NP < p) {
					log[n++] = p;
					seen[p]++;
				}
			}
			/* Repeats (a folio added again): no extra window. */
			for (k = n; k > 0 && n < 2 * NP; k--)
				if (rand() % 3 == 0)
					log[n++] = log[(unsigned int)rand() % k];
			file_window(&t, log, n, NULL, NULL);
		}
		for (p = 0; p < NP; p++) {
			bool want = seen[p] >= M_MIN;

			if (t.present[p] != want || in_table(&t, p) != want)
				fail_msg("seed %u round %u: page seen in %u of %u windows: expected %s, got present=%d table=%d",
					 seed, round, seen[p], N_PROFILE,
					 want ? "a candidate" : "dropped",
					 t.present[p], in_table(&t, p));
		}
	}
}

/* ---- extents ---- */

struct ext {
	unsigned long start, nr;
	u32 first;
};

/* Extents of the table pages @pages[0..@n) (sorted), as asap_ext_build(). */
static unsigned int build(const unsigned long *pages, const u32 *first,
			  unsigned int n, unsigned long merge,
			  unsigned long max, struct ext *out)
{
	struct asap_ext_run run = { 0 }, o;
	unsigned int i, k = 0;
	unsigned long v;

	for (i = 0; i < n; i++) {
		v = ASAP_E_TABLE |
		    FIELD_PREP(ASAP_E_FIRST, first ? first[i] : i);
		if (asap_ext_feed(&run, pages[i], v, merge, max, &o)) {
			out[k].start = o.start;
			out[k].nr = o.end - o.start;
			out[k++].first = o.first;
		}
	}
	if (asap_ext_end(&run, &o)) {
		out[k].start = o.start;
		out[k].nr = o.end - o.start;
		out[k++].first = o.first;
	}
	return k;
}

#define EXPECT_EXT(e, s, n) do {					\
	if ((e).start != (s) || (e).nr != (n))				\
		fail_msg("expected extent %lu+%lu, got %lu+%lu",	\
			 (unsigned long)(s), (unsigned long)(n),	\
			 (e).start, (e).nr);				\
} while (0)

/* 15 pages between two file pages: one extent; 16 between: two. */
static void ext_closer_than_16_pages_merge(void **state)
{
	unsigned long a[] = { 100, 116 }, b[] = { 100, 117 };
	struct ext e[4];

	(void)state;
	assert_int_equal(build(a, NULL, 2, MERGE, 256, e), 1);
	EXPECT_EXT(e[0], 100, 17);
	assert_int_equal(build(b, NULL, 2, MERGE, 256, e), 2);
	EXPECT_EXT(e[0], 100, 1);
	EXPECT_EXT(e[1], 117, 1);
}

/* Anon (merge 0): adjacent pages join, a one-page hole splits. */
static void ext_anon_adjacent_only(void **state)
{
	unsigned long a[] = { 7, 8, 9, 11 };
	struct ext e[4];

	(void)state;
	assert_int_equal(build(a, NULL, 4, 0, 256, e), 2);
	EXPECT_EXT(e[0], 7, 3);
	EXPECT_EXT(e[1], 11, 1);
}

/* Candidates not in the table are not prepaged and do not break merges. */
static void ext_skips_candidates(void **state)
{
	struct asap_ext_run run = { 0 }, o;

	(void)state;
	assert_false(asap_ext_feed(&run, 1, ASAP_E_TABLE, MERGE, 256, &o));
	assert_false(asap_ext_feed(&run, 2, ASAP_E_SEEN, MERGE, 256, &o));
	assert_false(asap_ext_feed(&run, 40, 0, MERGE, 256, &o));
	assert_false(asap_ext_feed(&run, 5, ASAP_E_TABLE, MERGE, 256, &o));
	assert_true(asap_ext_end(&run, &o));
	assert_int_equal(o.start, 1);
	assert_int_equal(o.end, 6);
	assert_false(asap_ext_end(&run, &o));
}

/* A long run is cut at max pages; the first use is the earliest one. */
static void ext_split_at_max_and_first_use(void **state)
{
	unsigned long pages[600];
	u32 first[600];
	struct ext e[4];
	unsigned int i;

	(void)state;
	for (i = 0; i < 600; i++) {
		pages[i] = 1000 + i;
		first[i] = 900 - i;
	}
	assert_int_equal(build(pages, first, 600, MERGE, 256, e), 3);
	EXPECT_EXT(e[0], 1000, 256);
	EXPECT_EXT(e[1], 1256, 256);
	EXPECT_EXT(e[2], 1512, 88);
	assert_int_equal(e[0].first, 900 - 255);
	assert_int_equal(e[2].first, 900 - 599);
}

/* ---- anonymous estimator ---- */

/* A new fault makes a candidate (not in the table) with a full timeout. */
static void anon_new_fault_makes_candidate(void **state)
{
	unsigned int log[] = { 3 };
	struct table t = { 0 };

	(void)state;
	anon_window(&t, log, 1, NULL, NULL);
	assert_true(t.present[3]);
	if (in_table(&t, 3))
		fail_msg("page faulted in one window: expected a candidate, not in the table");
	assert_int_equal(count_of(&t, 3), TIMEOUT);
	assert_false(t.val[3] & (ASAP_E_NEW | ASAP_E_SEEN));
	assert_int_equal(t.faults, 1);
}

/* Faulted again in the same window (a retried fault): not promoted. */
static void anon_refault_same_window_not_promoted(void **state)
{
	unsigned int log[] = { 3, 3, 3 };
	struct table t = { 0 };

	(void)state;
	anon_window(&t, log, 3, NULL, NULL);
	assert_false(in_table(&t, 3));
	assert_int_equal(t.faults, 1);
}

/* A candidate faulted again in a later window is promoted. */
static void anon_candidate_accessed_again_promoted(void **state)
{
	unsigned int log[] = { 3 };
	struct table t = { 0 };

	(void)state;
	anon_window(&t, log, 1, NULL, NULL);
	anon_window(&t, NULL, 0, NULL, NULL);
	anon_window(&t, log, 1, NULL, NULL);
	if (!in_table(&t, 3))
		fail_msg("candidate faulted again two windows later: expected promoted");
	assert_int_equal(count_of(&t, 3), TIMEOUT);
}

/*
 * The timeout goes down by one per window without access and the entry is
 * dropped after exactly TIMEOUT such windows; an access resets it.
 */
static void anon_timeout_decrements_and_expires(void **state)
{
	unsigned int log[] = { 3 }, w;
	struct table t = { 0 };

	(void)state;
	anon_window(&t, log, 1, NULL, NULL);
	for (w = 1; w < TIMEOUT; w++) {
		anon_window(&t, NULL, 0, NULL, NULL);
		if (!t.present[3] || count_of(&t, 3) != TIMEOUT - w)
			fail_msg("after %u windows without access: expected timeout %u, got present=%d timeout %lu",
				 w, TIMEOUT - w, t.present[3], count_of(&t, 3));
	}
	anon_window(&t, log, 1, NULL, NULL);
	assert_int_equal(count_of(&t, 3), TIMEOUT);
	for (w = 1; w <= TIMEOUT; w++)
		anon_window(&t, NULL, 0, NULL, NULL);
	if (t.present[3])
		fail_msg("%u windows without access: expected dropped, timeout %lu",
			 TIMEOUT, count_of(&t, 3));
}

/*
 * Prepaged table pages: one the app accessed (accessed bit) is a hit and
 * its timeout is reset; one it did not is unused and ages; a worker's
 * swap-in never adds a page and counts once per window.
 */
static void anon_prepaged_hits_and_ageing(void **state)
{
	unsigned int log[] = { 3, 4 };
	bool prepaged[NP] = { 0 }, young[NP] = { 0 };
	struct table t = { 0 };
	unsigned long nv = 0;
	bool count;

	(void)state;
	anon_window(&t, log, 2, NULL, NULL);
	anon_window(&t, log, 2, NULL, NULL);
	assert_true(in_table(&t, 3) && in_table(&t, 4));

	prepaged[3] = prepaged[4] = prepaged[9] = true;
	young[3] = true;
	anon_window(&t, NULL, 0, prepaged, young);
	assert_false(t.present[9]);
	assert_int_equal(t.hits, 1);
	assert_int_equal(t.unused, 1);
	assert_int_equal(count_of(&t, 3), TIMEOUT);
	assert_int_equal(count_of(&t, 4), TIMEOUT - 1);
	assert_true(in_table(&t, 4));

	assert_int_equal(asap_anon_fault(true, t.val[3] | ASAP_E_PREPAGED,
					 true, false, TIMEOUT, 0, &nv, &count),
			 ASAP_ACT_NONE);
	assert_false(count);
}

/*
 * Two threads fault one page at once: the one that waits for the other's
 * swap read is logged as a swap-cache hit, and may be logged first. The
 * reader's miss after it still counts, once; the first-use order stays the
 * first entry's; the next window counts again.
 */
static void anon_miss_after_hit_counts_once(void **state)
{
	unsigned long val, nv = 0;
	enum asap_use use;
	bool count;

	(void)state;
	assert_int_equal(asap_anon_fault(false, 0, false, false, TIMEOUT, 5,
					 &nv, &count), ASAP_ACT_ADD);
	assert_false(count);
	val = nv;
	assert_int_equal(asap_anon_fault(true, val, false, true, TIMEOUT, 6,
					 &nv, &count), ASAP_ACT_SET);
	assert_true(count);
	assert_true(nv & ASAP_E_MISS);
	assert_int_equal(FIELD_GET(ASAP_E_FIRST, nv), 5);
	val = nv;
	assert_int_equal(asap_anon_fault(true, val, false, true, TIMEOUT, 7,
					 &nv, &count), ASAP_ACT_NONE);
	assert_false(count);
	assert_int_equal(asap_anon_fault(true, val, false, false, TIMEOUT, 8,
					 &nv, &count), ASAP_ACT_NONE);
	assert_false(count);

	/* both sweeps end the window's miss */
	assert_int_equal(asap_anon_sweep(val, TIMEOUT, &nv, &use), ASAP_ACT_SET);
	assert_false(nv & ASAP_E_MISS);
	assert_int_equal(asap_anon_sweep_recall(val, TIMEOUT, 1, &nv, &use),
			 ASAP_ACT_SET);
	assert_false(nv & ASAP_E_MISS);
	val = nv;
	assert_int_equal(asap_anon_fault(true, val, false, true, TIMEOUT, 1,
					 &nv, &count), ASAP_ACT_SET);
	assert_true(count);

	/* a miss logged first, then the waiter's hit: one miss */
	assert_int_equal(asap_anon_fault(false, 0, false, true, TIMEOUT, 0,
					 &nv, &count), ASAP_ACT_ADD);
	assert_true(count);
	val = nv;
	assert_int_equal(asap_anon_fault(true, val, false, false, TIMEOUT, 1,
					 &nv, &count), ASAP_ACT_NONE);
	assert_false(count);
}

/* The accessed bit is looked at for table and prepaged pages only. */
static void anon_young_only_table_or_prepaged(void **state)
{
	unsigned int log[] = { 3 };
	bool young[NP] = { 0 };
	struct table t = { 0 };
	unsigned int w;

	(void)state;
	assert_false(asap_anon_young(ASAP_E_SEEN | ASAP_E_NEW));
	assert_true(asap_anon_young(ASAP_E_TABLE));
	assert_true(asap_anon_young(ASAP_E_PREPAGED));
	/* A candidate with its accessed bit set still expires. */
	anon_window(&t, log, 1, NULL, NULL);
	young[3] = true;
	for (w = 0; w < TIMEOUT; w++)
		anon_window(&t, NULL, 0, NULL, young);
	assert_false(t.present[3]);
}

/*
 * Random access patterns, against the rules in plain counts: a page has an
 * entry iff it was faulted and faulted again less than TIMEOUT windows ago
 * (no prepaging here); it is in the table iff it was faulted in two
 * windows of the entry's life. Some entries are swap-cache hits (another
 * thread's read), in any order with the misses: the misses counted are
 * the pages with at least one miss entry, once per window.
 */
static void anon_random_patterns_match_rules(void **state)
{
	unsigned int round, w, p, n, log[2 * NP], misses = 0;
	unsigned int since[NP], windows[NP];
	bool alive[NP], miss[2 * NP];
	struct table t;

	(void)state;
	srand(seed + 1);
	for (round = 0; round < 200; round++) {
		memset(&t, 0, sizeof(t));
		memset(alive, 0, sizeof(alive));
		t.log_miss = miss;
		misses = 0;
		for (w = 0; w < 30; w++) {
			n = 0;
			for (p = 0; p < NP; p++) {
				if ((unsigned int)rand() % NP >= p)
					continue;
				miss[n] = rand() % 3;
				log[n++] = p;
				if (rand() % 4 == 0) {
					/* a retried fault or another thread's */
					miss[n] = rand() % 3;
					log[n++] = p;
				}
			}
			anon_window(&t, log, n, NULL, NULL);
			for (p = 0; p < NP; p++) {
				bool hit = false, read = false;
				unsigned int i;

				for (i = 0; i < n; i++) {
					hit |= log[i] == p;
					read |= log[i] == p && miss[i];
				}
				misses += read;
				if (hit) {
					windows[p] = alive[p] ? windows[p] + 1 : 1;
					since[p] = 0;
					alive[p] = true;
				} else if (alive[p] && ++since[p] >= TIMEOUT) {
					alive[p] = false;
				}
				if (t.present[p] != alive[p] ||
				    (alive[p] && in_table(&t, p) != (windows[p] >= 2)))
					fail_msg("seed %u round %u window %u page %u: expected present=%d table=%d, got %d %d",
						 seed, round, w, p, alive[p],
						 alive[p] && windows[p] >= 2,
						 t.present[p], in_table(&t, p));
			}
			if (t.faults != misses)
				fail_msg("seed %u round %u window %u: expected %u misses, counted %u",
					 seed, round, w, misses, t.faults);
		}
	}
}

/* ---- saved profiles ---- */

/* Save a table into runs, load the runs into an empty one: the same. */
static void prof_round_trip_keeps_count_and_table(void **state)
{
	struct asap_profile_run run = { 0 }, out, runs[NP];
	struct table t = { 0 }, u = { 0 };
	unsigned int p, n = 0, i;
	unsigned long idx;

	(void)state;
	srand(seed + 2);
	for (p = 0; p < NP; p++) {
		if (rand() % 3 == 0)
			continue;
		t.present[p] = true;
		t.val[p] = FIELD_PREP(ASAP_E_COUNT, rand() % 3 + 1) |
			   (rand() % 2 ? ASAP_E_TABLE : 0) |
			   (rand() % 2 ? ASAP_E_SEEN : 0) |
			   FIELD_PREP(ASAP_E_FIRST, rand() % 100);
	}
	t.present[NP - 1] = true;
	t.val[NP - 1] = ASAP_E_GAP | ASAP_E_PREPAGED;
	for (p = 0; p < NP; p++)
		if (t.present[p] && asap_prof_feed(&run, p, t.val[p], &out))
			runs[n++] = out;
	if (asap_prof_end(&run, &out))
		runs[n++] = out;
	assert_false(asap_prof_end(&run, &out));
	for (i = 0; i < n; i++) {
		assert_null(asap_prof_check(&runs[i], runs[i].start, false, NP));
		for (idx = runs[i].start; idx < runs[i].start + runs[i].nr;
		     idx++) {
			assert_false(u.present[idx]);
			u.present[idx] = true;
			u.val[idx] = asap_prof_val(&runs[i], false, TIMEOUT);
		}
	}
	for (p = 0; p < NP - 1; p++)
		if (u.present[p] != t.present[p] ||
		    u.val[p] != (t.val[p] & ASAP_E_SAVED))
			fail_msg("seed %u page %u: saved %d/%#lx, loaded %d/%#lx",
				 seed + 2, p, t.present[p],
				 t.val[p] & ASAP_E_SAVED, u.present[p], u.val[p]);
	if (u.present[NP - 1])
		fail_msg("a gap page was saved");
}

/* Adjacent pages in the same state make one run; a hole or a change splits. */
static void prof_runs_merge_same_state(void **state)
{
	struct asap_profile_run run = { 0 }, out;
	unsigned long tv = ASAP_E_TABLE | FIELD_PREP(ASAP_E_COUNT, 2);

	(void)state;
	assert_false(asap_prof_feed(&run, 10, tv, &out));
	assert_false(asap_prof_feed(&run, 11, tv | ASAP_E_SEEN, &out));
	assert_true(asap_prof_feed(&run, 12, FIELD_PREP(ASAP_E_COUNT, 2), &out));
	assert_int_equal(out.start, 10);
	assert_int_equal(out.nr, 2);
	assert_int_equal(out.count, 2);
	assert_int_equal(out.flags, ASAP_PROFILE_F_TABLE);
	assert_true(asap_prof_feed(&run, 14, FIELD_PREP(ASAP_E_COUNT, 2), &out));
	assert_int_equal(out.start, 12);
	assert_int_equal(out.nr, 1);
	assert_int_equal(out.flags, 0);
}

/* Runs a loader must refuse, and an anon timeout above the parameter. */
static void prof_check_refuses_bad_runs(void **state)
{
	struct asap_profile_run ok = { .start = 5, .nr = 3, .count = 9,
				       .flags = ASAP_PROFILE_F_TABLE };
	struct asap_profile_run r;

	(void)state;
	assert_null(asap_prof_check(&ok, 5, true, 8));
	r = ok;
	r.reserved = 1;
	assert_non_null(asap_prof_check(&r, 5, true, 100));
	r = ok;
	r.flags = 2;
	assert_non_null(asap_prof_check(&r, 5, true, 100));
	r = ok;
	r.nr = 0;
	assert_non_null(asap_prof_check(&r, 5, true, 100));
	r = ok;
	r.count = 0;
	assert_non_null(asap_prof_check(&r, 5, true, 100));
	assert_null(asap_prof_check(&r, 5, false, 100));
	/* Ends past the end, by one page; starts past it; wraps around. */
	assert_non_null(asap_prof_check(&ok, 6, true, 8));
	assert_non_null(asap_prof_check(&ok, 9, true, 8));
	r = ok;
	r.nr = UINT32_MAX;
	assert_non_null(asap_prof_check(&r, UINT64_MAX - 2, true, UINT64_MAX));
	/* Anon timeouts load at most as anon_timeout; file counts as saved. */
	assert_int_equal(FIELD_GET(ASAP_E_COUNT, asap_prof_val(&ok, true, TIMEOUT)),
			 TIMEOUT);
	assert_int_equal(FIELD_GET(ASAP_E_COUNT, asap_prof_val(&ok, false, TIMEOUT)),
			 9);
	assert_true(asap_prof_val(&ok, true, TIMEOUT) & ASAP_E_TABLE);
}

/* ---- recall rules ---- */

/* a k that keeps an entry through one idle window (the default was 2 until 2026-12-07) */
#define K_TWO	2

static struct table recall_table(unsigned int k)
{
	struct table t = { .rules = ASAP_RULES_RECALL, .k = k };

	return t;
}

static unsigned long idle_of(const struct table *t, unsigned int p)
{
	return FIELD_GET(ASAP_E_IDLE, t->val[p]);
}

/* The seed learns new file pages while profiling only; recall always. */
static void recall_file_learns_in_every_window(void **state)
{
	(void)state;
	assert_true(asap_file_learns(ASAP_RULES_SEED, true));
	assert_false(asap_file_learns(ASAP_RULES_SEED, false));
	assert_true(asap_file_learns(ASAP_RULES_RECALL, true));
	assert_true(asap_file_learns(ASAP_RULES_RECALL, false));
}

/* A file page faulted once, in the profile or after it, is in the table. */
static void recall_file_first_sighting_enters_table(void **state)
{
	unsigned int log[] = { 3, 5, 3 }, late[] = { 9 }, w;
	struct table t = recall_table(K_TWO);

	(void)state;
	file_window(&t, log, 3, NULL, NULL);
	if (!in_table(&t, 3) || !in_table(&t, 5))
		fail_msg("pages faulted in the first window: expected in the table, got %d %d",
			 in_table(&t, 3), in_table(&t, 5));
	assert_int_equal(table_pages(&t), 2);
	assert_int_equal(count_of(&t, 3), 1);	/* windows seen in */
	assert_int_equal(idle_of(&t, 3), 0);
	assert_false(t.val[3] & (ASAP_E_SEEN | ASAP_E_PREPAGED));
	/* Long after the profile: a new page still enters on first sight. */
	for (w = 1; w < 3 * N_PROFILE; w++)
		file_window(&t, log, 3, NULL, NULL);
	file_window(&t, late, 1, NULL, NULL);
	if (!in_table(&t, 9))
		fail_msg("page first faulted in window %u (profile of %u): expected in the table",
			 3 * N_PROFILE + 1, N_PROFILE);
	assert_true(in_table(&t, 3) && in_table(&t, 5));
}

/* An anonymous page swapped in once is in the table, no second window. */
static void recall_anon_first_sighting_enters_table(void **state)
{
	unsigned int log[] = { 3, 3, 7 };
	struct table t = recall_table(K_TWO);

	(void)state;
	anon_window(&t, log, 3, NULL, NULL);
	if (!in_table(&t, 3) || !in_table(&t, 7))
		fail_msg("pages swapped in in one window: expected in the table, got %d %d",
			 in_table(&t, 3), in_table(&t, 7));
	assert_int_equal(t.faults, 2);	/* the retried fault counts once */
	assert_int_equal(count_of(&t, 3), TIMEOUT);
	assert_false(t.val[3] & (ASAP_E_SEEN | ASAP_E_NEW | ASAP_E_USED));
}

/*
 * Faulted in one window, then k windows with neither a fault nor a use:
 * present after k - 1 of them (in the table), dropped at the k-th.
 */
static void recall_dropped_after_exactly_k_unused_windows(void **state)
{
	static const unsigned int ks[] = { 1, 2, 3, 7, ASAP_E_IDLE_MAX };
	unsigned int log[] = { 4 }, i, w, k, anon;
	struct table t;

	(void)state;
	for (anon = 0; anon < 2; anon++) {
		for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
			k = ks[i];
			t = recall_table(k);
			if (anon)
				anon_window(&t, log, 1, NULL, NULL);
			else
				file_window(&t, log, 1, NULL, NULL);
			for (w = 1; w <= k; w++) {
				if (anon)
					anon_window(&t, NULL, 0, NULL, NULL);
				else
					file_window(&t, NULL, 0, NULL, NULL);
				if (w < k && (!in_table(&t, 4) ||
					      idle_of(&t, 4) != w))
					fail_msg("%s k=%u: after %u unused windows expected in the table with idle %u, got present=%d table=%d idle %lu",
						 anon ? "anon" : "file", k, w,
						 w, t.present[4],
						 in_table(&t, 4),
						 idle_of(&t, 4));
			}
			if (t.present[4])
				fail_msg("%s k=%u: after %u unused windows expected dropped, idle %lu",
					 anon ? "anon" : "file", k, k,
					 idle_of(&t, 4));
		}
	}
}

/*
 * A prepaged page used (file: mapped; anon: accessed bit) resets the
 * count: k - 1 unused windows, a hit, k - 1 more: still there; then one
 * more unused window than that and it goes. Prepaged and not used counts
 * as unused.
 */
static void recall_used_prepaged_page_resets_count(void **state)
{
	bool prepaged[NP] = { 0 }, used[NP] = { 0 };
	unsigned int log[] = { 4 }, w, k = 3, anon;
	struct table t;

	(void)state;
	prepaged[4] = true;
	used[4] = true;
	for (anon = 0; anon < 2; anon++) {
		t = recall_table(k);
#define WINDOW(l, n, pp, u) do {					\
	if (anon)							\
		anon_window(&t, l, n, pp, u);				\
	else								\
		file_window(&t, l, n, pp, u);				\
} while (0)
		WINDOW(log, 1, NULL, NULL);
		for (w = 1; w < k; w++)
			WINDOW(NULL, 0, prepaged, NULL);	/* unused */
		assert_int_equal(t.unused, k - 1);
		assert_int_equal(idle_of(&t, 4), k - 1);
		WINDOW(NULL, 0, prepaged, used);		/* a hit */
		assert_int_equal(t.hits, 1);
		if (!in_table(&t, 4) || idle_of(&t, 4) != 0)
			fail_msg("%s: prepaged page used after %u unused windows: expected idle 0 in the table, got present=%d idle %lu",
				 anon ? "anon" : "file", k - 1, t.present[4],
				 idle_of(&t, 4));
		for (w = 1; w < k; w++)
			WINDOW(NULL, 0, prepaged, NULL);
		assert_true(in_table(&t, 4));
		WINDOW(NULL, 0, prepaged, NULL);
		if (t.present[4])
			fail_msg("%s: %u prepaged windows unused since the hit: expected dropped",
				 anon ? "anon" : "file", k);
		assert_int_equal(t.unused, 2 * k - 1);
#undef WINDOW
	}
}

/* A fault resets the count; a mapped page not prepaged is not a use. */
static void recall_fault_resets_count(void **state)
{
	bool mapped[NP] = { 0 };
	unsigned int log[] = { 4 }, w, k = 4;
	struct table t = recall_table(k);

	(void)state;
	mapped[4] = true;
	file_window(&t, log, 1, NULL, NULL);
	for (w = 1; w < k; w++)
		file_window(&t, NULL, 0, NULL, mapped);
	assert_int_equal(idle_of(&t, 4), k - 1);
	file_window(&t, log, 1, NULL, NULL);
	assert_int_equal(idle_of(&t, 4), 0);
	assert_int_equal(count_of(&t, 4), 2);
	for (w = 1; w < k; w++)
		file_window(&t, NULL, 0, NULL, mapped);
	assert_true(in_table(&t, 4));
	file_window(&t, NULL, 0, NULL, mapped);
	if (t.present[4])
		fail_msg("file page resident, mapped, not prepaged, not faulted for %u windows: expected dropped",
			 k);

	/* Anon: a fault, and a resident table page's accessed bit, reset. */
	t = recall_table(k);
	anon_window(&t, log, 1, NULL, NULL);
	for (w = 1; w < k; w++)
		anon_window(&t, NULL, 0, NULL, NULL);
	anon_window(&t, log, 1, NULL, NULL);
	assert_int_equal(idle_of(&t, 4), 0);
	for (w = 1; w < k; w++)
		anon_window(&t, NULL, 0, NULL, NULL);
	anon_window(&t, NULL, 0, NULL, mapped);	/* accessed, resident */
	assert_int_equal(idle_of(&t, 4), 0);
	assert_int_equal(t.hits + t.unused, 0);	/* not prepaged: not judged */
	for (w = 1; w <= k; w++)
		anon_window(&t, NULL, 0, NULL, NULL);
	assert_false(t.present[4]);
}

/*
 * k out of range: 0 acts as 1, above ASAP_E_IDLE_MAX as it; the count never
 * leaves its field. A count at or above a lowered k drops at its next
 * unused window.
 */
static void recall_k_clamped_and_lowered(void **state)
{
	unsigned long v = ASAP_E_TABLE, nv = 0;
	enum asap_use use;
	unsigned int w;

	(void)state;
	assert_int_equal(asap_file_sweep_recall(v, false, 0, &nv, &use),
			 ASAP_ACT_DEL);
	assert_int_equal(asap_anon_sweep_recall(v | FIELD_PREP(ASAP_E_COUNT, 1),
						TIMEOUT, 0, &nv, &use),
			 ASAP_ACT_DEL);
	for (w = 1; w < ASAP_E_IDLE_MAX; w++) {
		assert_int_equal(asap_file_sweep_recall(v, false, 100000, &nv,
							&use), ASAP_ACT_SET);
		if (FIELD_GET(ASAP_E_IDLE, nv) != w || (nv & ~(ASAP_E_IDLE |
							      ASAP_E_TABLE)))
			fail_msg("window %u with k above the field: expected idle %u and nothing else, got %#lx",
				 w, w, nv);
		v = nv;
	}
	assert_int_equal(asap_file_sweep_recall(v, false, 100000, &nv, &use),
			 ASAP_ACT_DEL);
	v = ASAP_E_TABLE | FIELD_PREP(ASAP_E_IDLE, 5);
	assert_int_equal(asap_file_sweep_recall(v, false, 2, &nv, &use),
			 ASAP_ACT_DEL);
	assert_int_equal(asap_file_sweep_recall(v | ASAP_E_SEEN, false, 2, &nv,
						&use), ASAP_ACT_SET);
	assert_int_equal(FIELD_GET(ASAP_E_IDLE, nv), 0);
}

/* The file count (windows seen in) saturates, below the table bit. */
static void recall_file_count_saturates(void **state)
{
	unsigned long v = FIELD_PREP(ASAP_E_COUNT, ASAP_E_COUNT_MAX) |
			  ASAP_E_SEEN, nv = 0;
	enum asap_use use;

	(void)state;
	assert_int_equal(asap_file_sweep_recall(v, false, K_TWO, &nv, &use),
			 ASAP_ACT_SET);
	assert_int_equal(FIELD_GET(ASAP_E_COUNT, nv), ASAP_E_COUNT_MAX);
	assert_int_equal(nv, FIELD_PREP(ASAP_E_COUNT, ASAP_E_COUNT_MAX) |
			     ASAP_E_TABLE);
}

/* Gap pages are dropped under recall too, counted as hits or unused. */
static void recall_gap_pages_dropped(void **state)
{
	unsigned long nv = 0;
	enum asap_use use;

	(void)state;
	assert_int_equal(asap_file_sweep_recall(ASAP_E_GAP | ASAP_E_PREPAGED,
						true, K_TWO, &nv, &use),
			 ASAP_ACT_DEL);
	assert_int_equal(use, ASAP_USE_HIT);
	assert_int_equal(asap_file_sweep_recall(ASAP_E_GAP | ASAP_E_PREPAGED,
						false, K_TWO, &nv, &use),
			 ASAP_ACT_DEL);
	assert_int_equal(use, ASAP_USE_UNUSED);
}

/* The first-use order survives the sweep and reaches the extents. */
static void recall_keeps_first_use_for_extents(void **state)
{
	struct asap_ext_run run = { 0 }, o;
	unsigned long nv = 0;
	enum asap_use use;

	(void)state;
	assert_int_equal(asap_file_sweep_recall(ASAP_E_SEEN |
						FIELD_PREP(ASAP_E_FIRST, 77),
						false, K_TWO, &nv, &use),
			 ASAP_ACT_SET);
	assert_int_equal(asap_file_sweep_recall(nv, false, K_TWO, &nv,
						&use), ASAP_ACT_SET);
	assert_int_equal(FIELD_GET(ASAP_E_IDLE, nv), 1);
	assert_false(asap_ext_feed(&run, 10, nv, MERGE, 256, &o));
	assert_true(asap_ext_end(&run, &o));
	assert_int_equal(o.first, 77);
	assert_int_equal(o.end - o.start, 1);
}

/*
 * Random footprints, against the recall rule in plain counts: a page has
 * an entry iff it was active (faulted, or prepaged and used) less than k
 * windows ago; every entry is in the table. Each window the workers
 * prepage a random part of the table (as if evicted) and the app uses a
 * random part of what was prepaged; no fault on a prepaged page.
 */
static void recall_random_patterns_match_rules(void **state)
{
	unsigned int round, w, p, n, k, anon, log[2 * NP], last[NP];
	bool prepaged[NP], used[NP], active[NP], alive[NP];
	struct table t;

	(void)state;
	srand(seed + 3);
	for (round = 0; round < 400; round++) {
		anon = round & 1;
		k = (unsigned int)rand() % 4 + 1;
		t = recall_table(k);
		memset(alive, 0, sizeof(alive));
		for (w = 0; w < 30; w++) {
			n = 0;
			memset(active, 0, sizeof(active));
			for (p = 0; p < NP; p++) {
				prepaged[p] = in_table(&t, p) && rand() % 2;
				used[p] = prepaged[p] && rand() % 2;
				if (used[p])
					active[p] = true;
				if (prepaged[p] ||
				    (unsigned int)rand() % (2 * NP) >= p)
					continue;
				log[n++] = p;
				active[p] = true;
				if (rand() % 4 == 0)
					log[n++] = p;	/* a retried fault */
			}
			if (anon)
				anon_window(&t, log, n, prepaged, used);
			else
				file_window(&t, log, n, prepaged, used);
			for (p = 0; p < NP; p++) {
				if (active[p]) {
					alive[p] = true;
					last[p] = w;
				} else if (alive[p] && w - last[p] >= k) {
					alive[p] = false;
				}
				if (t.present[p] != alive[p] ||
				    (alive[p] && !in_table(&t, p)))
					fail_msg("seed %u round %u (%s, k=%u) window %u page %u: expected present=%d, got present=%d table=%d",
						 seed + 3, round,
						 anon ? "anon" : "file", k, w,
						 p, alive[p], t.present[p],
						 in_table(&t, p));
			}
		}
	}
}

/*
 * A table built under recall saves and loads under seed, and one built
 * under seed loads under recall: every run passes asap_prof_check() (an
 * anonymous count is never 0, even with anon_timeout 0), loaded entries
 * have no unused-window count, and the next windows follow the rules of
 * the set loading them.
 */
static unsigned int save_runs(const struct table *t,
			      struct asap_profile_run *runs)
{
	struct asap_profile_run run = { 0 }, out;
	unsigned int p, n = 0;

	for (p = 0; p < NP; p++)
		if (t->present[p] && asap_prof_feed(&run, p, t->val[p], &out))
			runs[n++] = out;
	if (asap_prof_end(&run, &out))
		runs[n++] = out;
	return n;
}

static void load_runs(struct table *t, const struct asap_profile_run *runs,
		      unsigned int n, bool anon)
{
	unsigned long idx;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const char *why = asap_prof_check(&runs[i], runs[i].start,
						  anon, NP);

		if (why)
			fail_msg("run %u (%u pages at %lu, count %u): refused: %s",
				 i, runs[i].nr, (unsigned long)runs[i].start,
				 runs[i].count, why);
		for (idx = runs[i].start; idx < runs[i].start + runs[i].nr;
		     idx++) {
			t->present[idx] = true;
			t->val[idx] = asap_prof_val(&runs[i], anon, TIMEOUT);
		}
	}
}

static void recall_profiles_load_under_both_rule_sets(void **state)
{
	unsigned int log[] = { 1, 2, 3 }, one[] = { 1 }, w, n, p;
	struct table r = recall_table(K_TWO), s = { 0 }, u;
	struct asap_profile_run runs[NP];
	unsigned long nv = 0;
	enum asap_use use;

	(void)state;
	/* recall -> seed, anon: counts are timeouts, at most anon_timeout. */
	anon_window(&r, log, 3, NULL, NULL);
	anon_window(&r, one, 1, NULL, NULL);	/* 2, 3: idle 1 */
	n = save_runs(&r, runs);
	u = (struct table){ 0 };
	load_runs(&u, runs, n, true);
	for (p = 1; p <= 3; p++) {
		if (!in_table(&u, p) || count_of(&u, p) != TIMEOUT ||
		    idle_of(&u, p))
			fail_msg("anon page %u saved under recall, loaded: expected table, timeout %u, idle 0; got %d %lu %lu",
				 p, TIMEOUT, in_table(&u, p), count_of(&u, p),
				 idle_of(&u, p));
	}
	for (w = 1; w <= TIMEOUT; w++)
		anon_window(&u, one, 1, NULL, NULL);	/* seed: 2, 3 age */
	assert_true(u.present[1]);
	assert_false(u.present[2] || u.present[3]);

	/* anon_timeout 0 under recall: the saved count is 1, loadable. */
	assert_int_equal(asap_anon_sweep_recall(ASAP_E_SEEN, 0, K_TWO,
						&nv, &use), ASAP_ACT_SET);
	assert_int_equal(FIELD_GET(ASAP_E_COUNT, nv), 1);
	/* and above the field: at most ASAP_E_COUNT_MAX, not wrapped. */
	assert_int_equal(asap_anon_sweep_recall(ASAP_E_SEEN, 1000, K_TWO,
						&nv, &use), ASAP_ACT_SET);
	assert_int_equal(FIELD_GET(ASAP_E_COUNT, nv), ASAP_E_COUNT_MAX);

	/* seed -> recall, file: candidates and table pages of a profile. */
	for (w = 0; w < N_PROFILE; w++)
		file_window(&s, w < M_MIN ? log : one, w < M_MIN ? 3 : 1,
			    NULL, NULL);
	assert_int_equal(table_pages(&s), 3);
	s.val[2] &= ~ASAP_E_TABLE;	/* an evicted candidate */
	n = save_runs(&s, runs);
	u = recall_table(K_TWO);
	load_runs(&u, runs, n, false);
	assert_int_equal(count_of(&u, 1), N_PROFILE);
	assert_int_equal(count_of(&u, 3), M_MIN);
	assert_true(in_table(&u, 3));
	assert_true(u.present[2] && !in_table(&u, 2));
	file_window(&u, &log[1], 1, NULL, NULL);	/* the candidate */
	assert_true(in_table(&u, 2));
	assert_int_equal(count_of(&u, 2), M_MIN + 1);
	file_window(&u, &log[1], 1, NULL, NULL);
	assert_false(u.present[1] || u.present[3]);	/* k = 2 unused */
	assert_true(in_table(&u, 2));

	/* File counts up to 255 saved under either load as saved. */
	runs[0] = (struct asap_profile_run){ .start = 5, .nr = 2,
		.count = 255, .flags = ASAP_PROFILE_F_TABLE };
	u = recall_table(K_TWO);
	load_runs(&u, runs, 1, false);
	file_window(&u, (unsigned int[]){ 5 }, 1, NULL, NULL);
	assert_int_equal(u.val[5], FIELD_PREP(ASAP_E_COUNT, 255) |
				   ASAP_E_TABLE);
	assert_int_equal(u.val[6], FIELD_PREP(ASAP_E_COUNT, 255) |
				   ASAP_E_TABLE | FIELD_PREP(ASAP_E_IDLE, 1));
}

/* The unused-window count is not saved: runs merge across it. */
static void recall_idle_count_not_saved(void **state)
{
	struct asap_profile_run run = { 0 }, out;
	unsigned long v = ASAP_E_TABLE | FIELD_PREP(ASAP_E_COUNT, 3);

	(void)state;
	assert_false(asap_prof_feed(&run, 10, v, &out));
	assert_false(asap_prof_feed(&run, 11, v | FIELD_PREP(ASAP_E_IDLE, 1),
				    &out));
	assert_true(asap_prof_end(&run, &out));
	assert_int_equal(out.nr, 2);
	assert_false(ASAP_E_SAVED & ASAP_E_IDLE);
}

/*
 * The rules change between windows: recall's entries go on under seed and
 * back (the count and the table bit mean the same in both).
 */
static void recall_switch_to_seed_and_back(void **state)
{
	unsigned int log[] = { 1, 2 }, one[] = { 1 }, w;
	bool prepaged[NP] = { 0 };
	struct table t = recall_table(K_TWO);

	(void)state;
	for (w = 0; w < N_PROFILE; w++)
		file_window(&t, w < 3 ? log : one, w < 3 ? 2 : 1, NULL, NULL);
	assert_false(t.present[2]);	/* unused for 7 windows */
	assert_int_equal(t.profiled, N_PROFILE);
	t.rules = ASAP_RULES_SEED;
	file_window(&t, log, 2, NULL, NULL);	/* seed: no new page */
	assert_false(t.present[2]);
	prepaged[1] = true;
	file_window(&t, NULL, 0, prepaged, NULL);	/* evicted, a candidate */
	assert_true(t.present[1] && !in_table(&t, 1));
	t.rules = ASAP_RULES_RECALL;
	file_window(&t, log, 2, NULL, NULL);
	assert_true(in_table(&t, 1) && in_table(&t, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(file_phase_profile_ends_at_window_n),
		cmocka_unit_test(file_seen_in_m_of_n_windows_become_candidates),
		cmocka_unit_test(file_candidate_any_m_windows),
		cmocka_unit_test(file_page_counts_once_per_window),
		cmocka_unit_test(file_first_use_is_first_fault),
		cmocka_unit_test(file_no_new_pages_after_profile),
		cmocka_unit_test(file_count_saturates),
		cmocka_unit_test(file_unused_prepaged_evicted_and_reenters),
		cmocka_unit_test(file_gap_pages_dropped),
		cmocka_unit_test(file_random_profiles_match_counts),
		cmocka_unit_test(ext_closer_than_16_pages_merge),
		cmocka_unit_test(ext_anon_adjacent_only),
		cmocka_unit_test(ext_skips_candidates),
		cmocka_unit_test(ext_split_at_max_and_first_use),
		cmocka_unit_test(anon_new_fault_makes_candidate),
		cmocka_unit_test(anon_refault_same_window_not_promoted),
		cmocka_unit_test(anon_candidate_accessed_again_promoted),
		cmocka_unit_test(anon_timeout_decrements_and_expires),
		cmocka_unit_test(anon_prepaged_hits_and_ageing),
		cmocka_unit_test(anon_young_only_table_or_prepaged),
		cmocka_unit_test(anon_miss_after_hit_counts_once),
		cmocka_unit_test(anon_random_patterns_match_rules),
		cmocka_unit_test(prof_round_trip_keeps_count_and_table),
		cmocka_unit_test(prof_runs_merge_same_state),
		cmocka_unit_test(prof_check_refuses_bad_runs),
		cmocka_unit_test(recall_file_learns_in_every_window),
		cmocka_unit_test(recall_file_first_sighting_enters_table),
		cmocka_unit_test(recall_anon_first_sighting_enters_table),
		cmocka_unit_test(recall_dropped_after_exactly_k_unused_windows),
		cmocka_unit_test(recall_used_prepaged_page_resets_count),
		cmocka_unit_test(recall_fault_resets_count),
		cmocka_unit_test(recall_k_clamped_and_lowered),
		cmocka_unit_test(recall_file_count_saturates),
		cmocka_unit_test(recall_gap_pages_dropped),
		cmocka_unit_test(recall_keeps_first_use_for_extents),
		cmocka_unit_test(recall_random_patterns_match_rules),
		cmocka_unit_test(recall_profiles_load_under_both_rule_sets),
		cmocka_unit_test(recall_idle_count_not_saved),
		cmocka_unit_test(recall_switch_to_seed_and_back),
	};
	const char *s = getenv("ASAP_TEST_SEED");

	seed = s ? (unsigned int)strtoul(s, NULL, 0) : 20211;
	printf("asap rules: seed %u (ASAP_TEST_SEED=%u replays)\n", seed, seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
