/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ASAP: the estimators' rules, as pure functions of one entry's value.
 *
 * An estimator entry is an unsigned long (an xarray value in the module)
 * made of the ASAP_E_* fields below. These functions decide what a logged
 * fault or the end of a window does to one entry; asap_learn.c applies
 * them to the app's tables and keeps the counters, asap_prepage.c builds
 * extents with asap_ext_feed(). They touch no kernel state, so the host
 * unit tests (tests/unit/test_asap_rules.c) build this header unchanged
 * against tests/unit/asap_host_shim.h.
 *
 * File pages (offline profile, the seed's rules): over the first N windows
 * an entry counts the windows its page was faulted in; at the end of the
 * N-th, pages seen in at least M windows enter the prepaging table and the
 * others are dropped. Afterwards no page is added: a prepaged page not used
 * in a window leaves the table, a candidate faulted again re-enters it.
 *
 * Anonymous pages (online): a swap-in of an unknown page makes a
 * candidate; a candidate faulted again in a later window, or a prepaged
 * page the app accessed, is in the table. An entry's timeout is reset when
 * the page is accessed and decremented at each window without access; an
 * entry whose timeout runs out is dropped.
 *
 * Those are the seed's rules (rules=seed). The recall rules (rules=recall)
 * favour recall, because a prepaged page runs beside the app: it pays when
 * p * fault cost > (1 - p) * prefetch cost, a low break-even p. Every page,
 * file or anonymous, enters the table on its first sighting (the window's
 * footprint joins the frequent set), in every window; an entry is dropped
 * after k windows in a row (unused_windows, ASAP_E_IDLE) in which it was
 * neither faulted nor, if prepaged, used. The faults are the seed's
 * functions (a file fault learns new pages, anon NEW is ignored); the
 * sweeps are asap_file_sweep_recall() and asap_anon_sweep_recall(). The
 * saved fields mean the same under both (file: windows seen in, anon:
 * timeout), so a profile saved under one loads under the other.
 *
 * Saved profiles (ASAP_CMD_PROFILE_GET/SET) keep each entry's count and
 * table bit, as runs of pages in the same state (asap_prof_feed()); a run
 * loaded back is checked by asap_prof_check() and becomes entries of
 * asap_prof_val().
 */
#ifndef _ASAP_RULES_H
#define _ASAP_RULES_H

#ifdef __KERNEL__
#include <linux/bitfield.h>
#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/types.h>
#else
#include "asap_host_shim.h"
#endif
#include <linux/asap.h>

/* file: profile windows seen in; anon: timeout, windows left */
#define ASAP_E_COUNT	GENMASK(7, 0)
#define ASAP_E_TABLE	BIT(8)		/* in the prepaging table */
#define ASAP_E_SEEN	BIT(9)		/* faulted in this window */
#define ASAP_E_PREPAGED	BIT(10)		/* brought in by a worker this window */
#define ASAP_E_NEW	BIT(11)		/* anon: entered in this window */
#define ASAP_E_USED	BIT(12)		/* anon: accessed bit seen; file: mapped at close */
#define ASAP_E_GAP	BIT(13)		/* file: only read as a merged gap */
#define ASAP_E_MISS	BIT(14)		/* anon: counted as a miss this window */
#define ASAP_E_FIRST	GENMASK(47, 16)	/* first-use order in the last window */
/* recall: windows in a row without a fault or a use (below k, not saved) */
#define ASAP_E_IDLE	GENMASK(55, 48)

/* Largest value of the ASAP_E_COUNT field. */
#define ASAP_E_COUNT_MAX	255U
/* Largest k of the recall rules (unused_windows): ASAP_E_IDLE holds k - 1. */
#define ASAP_E_IDLE_MAX		255U

/**
 * enum asap_rule_set - which rules the estimators follow (parameter rules)
 * @ASAP_RULES_SEED: the seed's: file offline profile, anon promotion on a
 *	second window and timeouts
 * @ASAP_RULES_RECALL: first sighting enters the table, k unused windows
 *	drop an entry
 * @ASAP_NR_RULES: how many
 */
enum asap_rule_set {
	ASAP_RULES_SEED,
	ASAP_RULES_RECALL,
	ASAP_NR_RULES,
};

/**
 * enum asap_act - what to do with an entry
 * @ASAP_ACT_NONE: nothing (no entry, or the entry is unchanged)
 * @ASAP_ACT_ADD: add a new entry with the value given
 * @ASAP_ACT_SET: replace the entry's value with the value given
 * @ASAP_ACT_DEL: remove the entry
 */
enum asap_act {
	ASAP_ACT_NONE,
	ASAP_ACT_ADD,
	ASAP_ACT_SET,
	ASAP_ACT_DEL,
};

/**
 * enum asap_use - how a prepaged page turned out, at the end of a window
 * @ASAP_USE_NONE: the page was not prepaged in the window
 * @ASAP_USE_HIT: prepaged and used by the app
 * @ASAP_USE_UNUSED: prepaged and not used
 */
enum asap_use {
	ASAP_USE_NONE,
	ASAP_USE_HIT,
	ASAP_USE_UNUSED,
};

/**
 * asap_e_first() - set an entry's first-use order
 * @val: the entry
 * @seq: the fault's place in the window's log
 *
 * Context: any.
 * Return: @val with ASAP_E_FIRST = @seq.
 */
static inline unsigned long asap_e_first(unsigned long val, u32 seq)
{
	return (val & ~ASAP_E_FIRST) | FIELD_PREP(ASAP_E_FIRST, seq);
}

/**
 * asap_file_phase() - where the file estimator of an app stands
 * @profiled: profile windows closed so far
 * @profile_switches: windows in the profile (N)
 * @profile_end: set when the window being learned is the N-th
 *
 * Context: any.
 * Return: true while the window being learned belongs to the profile.
 */
static inline bool asap_file_phase(unsigned int profiled,
				   unsigned int profile_switches,
				   bool *profile_end)
{
	bool profiling = profiled < profile_switches;

	*profile_end = profiling && profiled + 1 == profile_switches;
	return profiling;
}

/**
 * asap_file_learns() - whether a window learns file pages it did not know
 * @rules: the rule set of the window
 * @profiling: the window belongs to the offline profile
 *
 * Context: any.
 * Return: seed: while profiling; recall: always.
 */
static inline bool asap_file_learns(enum asap_rule_set rules, bool profiling)
{
	return rules == ASAP_RULES_RECALL || profiling;
}

/**
 * asap_file_fault() - a logged fault on one file page
 * @present: the page has an entry
 * @val: its value (ignored when !@present)
 * @learn: unknown pages are learned (asap_file_learns(); seed: the window
 *	belongs to the offline profile)
 * @seq: the fault's place in the log
 * @nv: the value to add or set
 *
 * A page counts once per window: its first fault sets ASAP_E_SEEN and its
 * first-use order. Without @learn (seed: outside the profile) no new page
 * is learned.
 * Context: any.
 * Return: ASAP_ACT_ADD, ASAP_ACT_SET (with @nv) or ASAP_ACT_NONE.
 */
static inline enum asap_act asap_file_fault(bool present, unsigned long val,
					    bool learn, u32 seq,
					    unsigned long *nv)
{
	if (!present) {
		if (!learn)
			return ASAP_ACT_NONE;
		*nv = ASAP_E_SEEN | FIELD_PREP(ASAP_E_FIRST, seq);
		return ASAP_ACT_ADD;
	}
	if (val & ASAP_E_SEEN)
		return ASAP_ACT_NONE;
	*nv = asap_e_first(val | ASAP_E_SEEN, seq);
	return ASAP_ACT_SET;
}

/**
 * asap_file_sweep() - the end of a window for one file entry
 * @val: the entry
 * @used: a prepaged page is mapped by the app (only looked at when @val
 *	has ASAP_E_PREPAGED)
 * @profiling: the window belonged to the offline profile
 * @profile_end: it was the profile's last window
 * @profile_min: windows a page must have been seen in to be a candidate (M)
 * @nv: the new value, for ASAP_ACT_SET
 * @use: how a prepaged page turned out
 *
 * Context: any.
 * Return: ASAP_ACT_SET (with @nv) or ASAP_ACT_DEL.
 */
static inline enum asap_act asap_file_sweep(unsigned long val, bool used,
					    bool profiling, bool profile_end,
					    unsigned int profile_min,
					    unsigned long *nv,
					    enum asap_use *use)
{
	unsigned long n = val & ~(ASAP_E_SEEN | ASAP_E_PREPAGED | ASAP_E_USED);
	unsigned long cnt;

	*use = ASAP_USE_NONE;
	if (val & ASAP_E_PREPAGED) {
		if (used) {
			*use = ASAP_USE_HIT;
		} else {
			*use = ASAP_USE_UNUSED;
			/* Not used in this switch: evicted from the table. */
			n &= ~ASAP_E_TABLE;
		}
	}
	/* Gap pages are prepaged with an extent, never learned. */
	if (val & ASAP_E_GAP)
		return ASAP_ACT_DEL;
	if (profiling) {
		cnt = FIELD_GET(ASAP_E_COUNT, val);
		if ((val & ASAP_E_SEEN) && cnt < ASAP_E_COUNT_MAX)
			cnt++;
		if (profile_end && cnt < profile_min)
			return ASAP_ACT_DEL;
		n = (n & ~ASAP_E_COUNT) | FIELD_PREP(ASAP_E_COUNT, cnt);
		if (profile_end)
			n |= ASAP_E_TABLE;
	} else if (val & ASAP_E_SEEN) {
		/* A fault matched a candidate: back in the table. */
		n |= ASAP_E_TABLE;
	}
	*nv = n;
	return ASAP_ACT_SET;
}

/**
 * asap_anon_fault() - a logged swap-in of one anonymous page
 * @present: the page has an entry
 * @val: its value (ignored when !@present)
 * @by_worker: a prepaging worker faulted it in, not the app
 * @miss: the app's fault read the page (not a swap-cache hit)
 * @timeout: windows a new entry lives without access (anon_timeout)
 * @seq: the fault's place in the log
 * @nv: the value to add or set
 * @count_miss: set when the fault is to be counted as a miss
 *
 * A page counts once per window (a fault may be retried when the mmap or
 * folio lock was dropped): the app's first fault sets ASAP_E_SEEN and its
 * first-use order, a worker's first sets ASAP_E_PREPAGED; an unknown page
 * the app faults becomes a new candidate. A worker never adds a page.
 * The miss is counted apart, once per window (ASAP_E_MISS): when two
 * threads fault a page at once, the one that waited for the other's read
 * may be logged first, as a swap-cache hit, and the reader's miss after it.
 * Context: any.
 * Return: ASAP_ACT_ADD, ASAP_ACT_SET (with @nv), or ASAP_ACT_NONE when the
 * entry does not change.
 */
static inline enum asap_act asap_anon_fault(bool present, unsigned long val,
					    bool by_worker, bool miss,
					    unsigned int timeout, u32 seq,
					    unsigned long *nv,
					    bool *count_miss)
{
	unsigned long m = miss ? ASAP_E_MISS : 0;

	*count_miss = false;
	if (by_worker) {
		if (!present || (val & ASAP_E_PREPAGED))
			return ASAP_ACT_NONE;
		*nv = val | ASAP_E_PREPAGED;
		return ASAP_ACT_SET;
	}
	if (!present) {
		*nv = ASAP_E_SEEN | ASAP_E_NEW | m |
		      FIELD_PREP(ASAP_E_COUNT, timeout) |
		      FIELD_PREP(ASAP_E_FIRST, seq);
		*count_miss = miss;
		return ASAP_ACT_ADD;
	}
	*count_miss = miss && !(val & ASAP_E_MISS);
	if (val & ASAP_E_SEEN) {
		if (!*count_miss)
			return ASAP_ACT_NONE;
		*nv = val | ASAP_E_MISS;
		return ASAP_ACT_SET;
	}
	*nv = asap_e_first(val | ASAP_E_SEEN | m, seq);
	return ASAP_ACT_SET;
}

/**
 * asap_anon_young() - whether the accessed bit of an entry's page matters
 * @val: the entry
 *
 * Only table pages and pages prepaged in the window are tested.
 * Context: any.
 * Return: true when asap_learn() should test the page's accessed bit.
 */
static inline bool asap_anon_young(unsigned long val)
{
	return val & (ASAP_E_PREPAGED | ASAP_E_TABLE);
}

/**
 * asap_anon_sweep() - the end of a window for one anonymous entry
 * @val: the entry (ASAP_E_USED set when its accessed bit was seen)
 * @timeout: the timeout an access resets to (anon_timeout)
 * @nv: the new value, for ASAP_ACT_SET
 * @use: how a prepaged page turned out
 *
 * Context: any.
 * Return: ASAP_ACT_SET (with @nv) or ASAP_ACT_DEL (timeout ran out).
 */
static inline enum asap_act asap_anon_sweep(unsigned long val,
					    unsigned int timeout,
					    unsigned long *nv,
					    enum asap_use *use)
{
	unsigned long n = val & ~(ASAP_E_SEEN | ASAP_E_NEW | ASAP_E_PREPAGED |
				  ASAP_E_USED | ASAP_E_MISS);
	unsigned long t = FIELD_GET(ASAP_E_COUNT, val);

	*use = ASAP_USE_NONE;
	if (val & ASAP_E_PREPAGED)
		*use = (val & ASAP_E_USED) ? ASAP_USE_HIT : ASAP_USE_UNUSED;
	/* A candidate faulted again in a later window is promoted. */
	if ((val & ASAP_E_SEEN) && !(val & ASAP_E_NEW))
		n |= ASAP_E_TABLE;
	if (val & (ASAP_E_SEEN | ASAP_E_USED))
		t = timeout;
	else if (t > 1)
		t--;
	else
		return ASAP_ACT_DEL;	/* expired */
	*nv = (n & ~ASAP_E_COUNT) | FIELD_PREP(ASAP_E_COUNT, t);
	return ASAP_ACT_SET;
}

/**
 * asap_recall_idle() - an entry's windows without a fault or a use (recall)
 * @val: the entry
 * @active: the page was faulted in the window, or prepaged and used
 * @k: windows in a row without either that drop the entry (unused_windows;
 *	taken as 1..ASAP_E_IDLE_MAX)
 * @idle: its new ASAP_E_IDLE, when true is returned
 *
 * An active window resets the count; the k-th inactive one in a row drops
 * the entry (a count at or above a lowered k drops it at its next one).
 * Context: any.
 * Return: false when the entry is to be dropped.
 */
static inline bool asap_recall_idle(unsigned long val, bool active,
				    unsigned int k, unsigned long *idle)
{
	unsigned long i = FIELD_GET(ASAP_E_IDLE, val) + 1;

	if (active) {
		*idle = 0;
		return true;
	}
	if (k > ASAP_E_IDLE_MAX)
		k = ASAP_E_IDLE_MAX;
	if (i >= k)
		return false;
	*idle = i;
	return true;
}

/**
 * asap_file_sweep_recall() - the end of a window for one file entry, recall
 * @val: the entry
 * @used: a prepaged page is mapped by the app (only looked at when @val
 *	has ASAP_E_PREPAGED)
 * @k: unused_windows
 * @nv: the new value, for ASAP_ACT_SET
 * @use: how a prepaged page turned out
 *
 * A page faulted in the window (its first sighting too) is in the table; a
 * prepaged page used stays in it; after @k windows in a row with neither
 * the entry is dropped. A resident page the app did not fault is not known
 * to be used (its mapping outlives windows): it ages, and is learned again
 * at its next fault. The count of windows seen in goes on (the saved
 * field, the seed's profile count); gap pages are dropped as under seed.
 * Context: any.
 * Return: ASAP_ACT_SET (with @nv) or ASAP_ACT_DEL.
 */
static inline enum asap_act asap_file_sweep_recall(unsigned long val,
						   bool used, unsigned int k,
						   unsigned long *nv,
						   enum asap_use *use)
{
	unsigned long n = val & ~(ASAP_E_SEEN | ASAP_E_PREPAGED | ASAP_E_USED |
				  ASAP_E_IDLE | ASAP_E_COUNT);
	unsigned long cnt = FIELD_GET(ASAP_E_COUNT, val), idle;
	bool active = val & ASAP_E_SEEN;

	*use = ASAP_USE_NONE;
	if (val & ASAP_E_PREPAGED) {
		*use = used ? ASAP_USE_HIT : ASAP_USE_UNUSED;
		active |= used;
	}
	if (val & ASAP_E_GAP)
		return ASAP_ACT_DEL;
	if (!asap_recall_idle(val, active, k, &idle))
		return ASAP_ACT_DEL;
	if ((val & ASAP_E_SEEN) && cnt < ASAP_E_COUNT_MAX)
		cnt++;
	if (active)
		n |= ASAP_E_TABLE;
	*nv = n | FIELD_PREP(ASAP_E_COUNT, cnt) | FIELD_PREP(ASAP_E_IDLE, idle);
	return ASAP_ACT_SET;
}

/**
 * asap_anon_sweep_recall() - the end of a window for one anon entry, recall
 * @val: the entry (ASAP_E_USED set when its accessed bit was seen)
 * @timeout: anon_timeout, kept in the saved count of an active entry
 *	(taken as 1..ASAP_E_COUNT_MAX: a saved anon count is never 0)
 * @k: unused_windows
 * @nv: the new value, for ASAP_ACT_SET
 * @use: how a prepaged page turned out
 *
 * A page faulted in the window (its first sighting too) or whose accessed
 * bit was seen (a prepaged or resident table page) is in the table; after
 * @k windows in a row with neither the entry is dropped.
 * Context: any.
 * Return: ASAP_ACT_SET (with @nv) or ASAP_ACT_DEL.
 */
static inline enum asap_act asap_anon_sweep_recall(unsigned long val,
						   unsigned int timeout,
						   unsigned int k,
						   unsigned long *nv,
						   enum asap_use *use)
{
	unsigned long n = val & ~(ASAP_E_SEEN | ASAP_E_NEW | ASAP_E_PREPAGED |
				  ASAP_E_USED | ASAP_E_MISS | ASAP_E_IDLE);
	bool active = val & (ASAP_E_SEEN | ASAP_E_USED);
	unsigned long idle;

	*use = ASAP_USE_NONE;
	if (val & ASAP_E_PREPAGED)
		*use = (val & ASAP_E_USED) ? ASAP_USE_HIT : ASAP_USE_UNUSED;
	if (!asap_recall_idle(val, active, k, &idle))
		return ASAP_ACT_DEL;
	if (active) {
		if (!timeout)
			timeout = 1;
		else if (timeout > ASAP_E_COUNT_MAX)
			timeout = ASAP_E_COUNT_MAX;
		n = (n & ~ASAP_E_COUNT) | FIELD_PREP(ASAP_E_COUNT, timeout) |
		    ASAP_E_TABLE;
	}
	*nv = n | FIELD_PREP(ASAP_E_IDLE, idle);
	return ASAP_ACT_SET;
}

/**
 * struct asap_ext_run - an extent being built from a table in index order
 * @start: first page
 * @end: one past the last page
 * @first: earliest first-use order of its pages
 * @open: @start..@end holds at least one page
 */
struct asap_ext_run {
	unsigned long start;
	unsigned long end;
	u32 first;
	bool open;
};

/**
 * asap_ext_feed() - add one entry to the extents of a table
 * @run: the extent being built (zeroed before the first entry)
 * @idx: the entry's page, larger than every page fed before
 * @val: the entry; only table entries count
 * @merge: a table page with fewer than @merge pages between it and the
 *	open extent joins it, and the pages between are read too
 *	(file_merge_pages for files; 0 or 1 for anon: adjacent pages only)
 * @max: most pages in one extent
 * @out: the extent that closed, when true is returned
 *
 * Adjacent table pages always join. An extent that would span more than
 * @max pages is closed and a new one started. After the last entry call
 * asap_ext_end().
 * Context: any.
 * Return: true when an extent closed into @out.
 */
static inline bool asap_ext_feed(struct asap_ext_run *run, unsigned long idx,
				 unsigned long val, unsigned long merge,
				 unsigned long max, struct asap_ext_run *out)
{
	u32 first = FIELD_GET(ASAP_E_FIRST, val);
	bool closed = false;

	if (!(val & ASAP_E_TABLE))
		return false;
	if (run->open && (idx == run->end || idx - run->end < merge) &&
	    idx - run->start < max) {
		run->end = idx + 1;
		if (first < run->first)
			run->first = first;
		return false;
	}
	if (run->open) {
		*out = *run;
		closed = true;
	}
	run->open = true;
	run->start = idx;
	run->end = idx + 1;
	run->first = first;
	return closed;
}

/**
 * asap_ext_end() - close the last extent of a table
 * @run: the extent being built; empty afterwards
 * @out: the extent, when true is returned
 *
 * Context: any.
 * Return: true when an extent was open.
 */
static inline bool asap_ext_end(struct asap_ext_run *run,
				struct asap_ext_run *out)
{
	if (!run->open)
		return false;
	*out = *run;
	run->open = false;
	return true;
}

/* The fields of an entry a saved profile keeps. */
#define ASAP_E_SAVED	(ASAP_E_COUNT | ASAP_E_TABLE)

/**
 * asap_prof_feed() - add one entry to the runs of a table being saved
 * @run: the run being built (@run->nr 0 before the first entry)
 * @idx: the entry's page, larger than every page fed before
 * @val: the entry
 * @out: the run that closed, when true is returned
 *
 * Adjacent pages with the same count and table bit make one run; gap pages
 * (read with an extent, never learned) are not saved. @run->start and
 * @out->start are page numbers. After the last entry call asap_prof_end().
 * Context: any.
 * Return: true when a run closed into @out.
 */
static inline bool asap_prof_feed(struct asap_profile_run *run,
				  unsigned long idx, unsigned long val,
				  struct asap_profile_run *out)
{
	u8 count = FIELD_GET(ASAP_E_COUNT, val);
	u8 flags = (val & ASAP_E_TABLE) ? ASAP_PROFILE_F_TABLE : 0;
	bool closed = false;

	if (val & ASAP_E_GAP)
		return false;
	if (run->nr && idx == run->start + run->nr && count == run->count &&
	    flags == run->flags && run->nr < U32_MAX) {
		run->nr++;
		return false;
	}
	if (run->nr) {
		*out = *run;
		closed = true;
	}
	run->start = idx;
	run->nr = 1;
	run->count = count;
	run->flags = flags;
	run->reserved = 0;
	return closed;
}

/**
 * asap_prof_end() - close the last run of a table being saved
 * @run: the run being built; empty afterwards
 * @out: the run, when true is returned
 *
 * Context: any.
 * Return: true when a run was open.
 */
static inline bool asap_prof_end(struct asap_profile_run *run,
				 struct asap_profile_run *out)
{
	if (!run->nr)
		return false;
	*out = *run;
	run->nr = 0;
	return true;
}

/**
 * asap_prof_check() - whether a run of a profile being loaded is valid
 * @run: the run, as received
 * @start: its first page number (anon: the address >> PAGE_SHIFT, the
 *	caller checked the alignment)
 * @anon: the run is of anonymous pages
 * @max_pages: pages of the address space or of the largest file: a run
 *	must end at or below it
 *
 * Context: any.
 * Return: NULL, or why the run is refused (an extack message).
 */
static inline const char *asap_prof_check(const struct asap_profile_run *run,
					  u64 start, bool anon,
					  u64 max_pages)
{
	if (run->reserved)
		return "reserved field of a run is not 0";
	if (run->flags & ~ASAP_PROFILE_F_TABLE)
		return "unknown flags in a run";
	if (!run->nr)
		return "a run of 0 pages";
	if (anon && !run->count)
		return "an anonymous run with timeout 0";
	if (start > max_pages || run->nr > max_pages - start)
		return "a run beyond the end of the address space or file";
	return NULL;
}

/**
 * asap_prof_val() - the entry a page of a loaded run becomes
 * @run: the run, checked by asap_prof_check()
 * @anon: the run is of anonymous pages
 * @timeout: anon_timeout: an anonymous timeout is at most this
 *
 * Context: any.
 * Return: the entry's value.
 */
static inline unsigned long asap_prof_val(const struct asap_profile_run *run,
					  bool anon, unsigned int timeout)
{
	unsigned int count = run->count;

	if (anon && count > timeout)
		count = timeout;
	return FIELD_PREP(ASAP_E_COUNT, count) |
	       ((run->flags & ASAP_PROFILE_F_TABLE) ? ASAP_E_TABLE : 0);
}

#endif /* _ASAP_RULES_H */
