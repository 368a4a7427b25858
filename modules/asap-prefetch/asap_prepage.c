// SPDX-License-Identifier: GPL-2.0-only
/*
 * ASAP: prepaging at a switch. The prepaging tables become extents (file
 * pages closer than file_merge_pages merge, the gap read too; anonymous
 * runs of adjacent pages), sorted by first use in the last window. They are
 * built when that window is learned from, so a switch only queues the
 * workers: asap_workers work items on an unbound workqueue take the
 * extents from the end of the first-use order backwards while the app
 * faults from its start, and each extent from its last page down, so a
 * worker does not race the app for the same pages, everything it brings in
 * is ahead of the app, and once the two meet the worker moves away from
 * the app instead of running just ahead of it (where each page the app
 * reaches while the worker reads it is a collision: on 6.1 the loser of
 * the skip-swapcache path sleeps a whole jiffy).
 *
 * File extents are read ahead with vfs_fadvise(WILLNEED) in chunks of the
 * file's readahead size: asynchronous reads, no mmap lock. Anonymous pages
 * are faulted in one at a time with get_user_pages_remote() and no page
 * array (no pin, no reference), skipping the pages already present; the
 * kernel exports no way for a module to read a swap entry into the swap
 * cache without mapping it (madvise_willneed's swapin walk is not
 * exported). The mmap read lock is held for at most one page's fault when
 * anyone waits for it (mmap_lock_is_contended()): an app's mmap, munmap or
 * brk, and on kernels without per-VMA locks every fault queued behind
 * that writer, waits for one page's I/O, not a chunk's. The accessed bits
 * of a chunk's new pages are cleared in one walk so the estimator can tell
 * later whether the app used them (asap_compat.h). The mm is held
 * (mmget_not_zero) only while a worker runs. A switch away sets @cancel:
 * the workers stop after their current page or chunk.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/fadvise.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include "asap.h"
#include "mobio_compat.h"
#include "asap_compat.h"

/* Longest extent, pages: long runs are split so that workers share them. */
#define ASAP_EXTENT_MAX		256
/* Anonymous pages looked at per page-table walk (within one pmd). */
#define ASAP_ANON_CHUNK		64

/* Add one extent, or only count it when @ext is NULL. */
static void asap_ext_put(struct asap_extent *ext, unsigned int *n,
			 struct asap_file *af, const struct asap_ext_run *run)
{
	if (ext) {
		ext[*n].af = af;
		ext[*n].start = run->start;
		ext[*n].nr = run->end - run->start;
		ext[*n].first = run->first;
	}
	(*n)++;
}

/* The extents of one table (asap_rules.h: asap_ext_feed()). */
static void asap_ext_build(struct asap_extent *ext, unsigned int *n,
			   struct xarray *xa, struct asap_file *af,
			   unsigned long merge)
{
	struct asap_ext_run run = { 0 }, out;
	unsigned long idx;
	void *e;

	xa_for_each(xa, idx, e)
		if (asap_ext_feed(&run, idx, xa_to_value(e), merge,
				  ASAP_EXTENT_MAX, &out))
			asap_ext_put(ext, n, af, &out);
	if (asap_ext_end(&run, &out))
		asap_ext_put(ext, n, af, &out);
}

static unsigned int asap_ext_all(struct asap_app *app, struct asap_extent *ext)
{
	struct asap_file *af;
	unsigned int n = 0;

	list_for_each_entry(af, &app->files, node)
		asap_ext_build(ext, &n, &af->pages, af, asap_file_merge_pages);
	asap_ext_build(ext, &n, &app->anon, NULL, 0);
	return n;
}

static int asap_ext_cmp(const void *a, const void *b)
{
	const struct asap_extent *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Mark a page a worker reads ASAP_E_PREPAGED, or add it as a gap page.
 * asap_sample() may set ASAP_E_USED on the same entry meanwhile: both
 * update with a compare-and-exchange.
 */
static void asap_file_mark_prepaged(struct asap_app *app,
				    struct asap_file *af, pgoff_t idx)
{
	void *e = xa_load(&af->pages, idx), *old;

	while (e) {
		old = xa_cmpxchg(&af->pages, idx, e,
				 xa_mk_value(xa_to_value(e) | ASAP_E_PREPAGED),
				 GFP_KERNEL);
		if (old == e || xa_is_err(old))
			return;
		e = old;
	}
	asap_entry_add(app, &af->pages, idx, ASAP_E_GAP | ASAP_E_PREPAGED);
}

/* Read one file extent ahead, chunk by chunk. */
static bool asap_prepage_file(struct asap_job *job, struct asap_extent *ext)
{
	struct asap_app *app = job->app;
	struct asap_file *af = ext->af;
	struct address_space *mapping = af->file->f_mapping;
	unsigned long chunk = max_t(unsigned long, af->file->f_ra.ra_pages, 1);
	unsigned long end, nr_chunks, c, idx, s, n, absent;
	struct folio *folio;

	end = min_t(unsigned long, ext->start + ext->nr,
		    DIV_ROUND_UP(i_size_read(af->inode), PAGE_SIZE));
	nr_chunks = end > ext->start ? DIV_ROUND_UP(end - ext->start, chunk) : 0;
	for (c = 0; c < nr_chunks; c++) {
		if (READ_ONCE(job->cancel))
			return false;
		s = ext->start + (job->backward ? nr_chunks - 1 - c : c) * chunk;
		n = min(chunk, end - s);
		absent = 0;
		for (idx = s; idx < s + n; idx++) {
			folio = mobio_folio_get(mapping, idx);
			if (folio) {
				folio_put(folio);
				continue;
			}
			absent++;
			asap_file_mark_prepaged(app, af, idx);
		}
		if (!absent)
			continue;
		vfs_fadvise(af->file, (loff_t)s << PAGE_SHIFT,
			    (loff_t)n << PAGE_SHIFT, POSIX_FADV_WILLNEED);
		atomic64_add(absent, &app->k[ASAP_FILE].prepaged);
		atomic64_add(absent * PAGE_SIZE, &app->read_bytes);
		if (asap_prepage_throttle_ms)
			msleep(asap_prepage_throttle_ms);
	}
	return true;
}

/* Most 100-200 us sleeps while a waiter has not got the mmap lock yet. */
#define ASAP_YIELD_TRIES	20

/*
 * Let a waiter for the mmap lock have it: drop the read lock, then wait
 * (bounded) while the waiter is still queued before taking the lock
 * again. Relocking at once would often take the lock back before the
 * woken writer runs (rwsem readers may steal a lock that is free), and
 * the writer would wait for another page.
 */
static void asap_mmap_yield(struct mm_struct *mm)
{
	unsigned int t;

	mmap_read_unlock(mm);
	for (t = 0; t < ASAP_YIELD_TRIES && mmap_lock_is_contended(mm); t++)
		usleep_range(100, 200);
	mmap_read_lock(mm);
}

/* The pages of one chunk, bit i for page start + i. */
struct asap_chunk {
	struct vm_area_struct *vma;
	unsigned long start;
	DECLARE_BITMAP(pages, ASAP_ANON_CHUNK);
};

/* Mark the pages of the chunk that are not present (swapped out). */
static int asap_absent_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct asap_chunk *c = data;
	pte_t v = ptep_get(pte);

	if (!pte_none(v) && !pte_present(v))
		__set_bit((addr - c->start) >> PAGE_SHIFT, c->pages);
	return 0;
}

static int asap_clear_young_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct asap_chunk *c = data;

	if (test_bit((addr - c->start) >> PAGE_SHIFT, c->pages))
		asap_pte_clear_young(c->vma, addr, pte);
	return 0;
}

/*
 * Fault in the absent pages of [addr, end), one vma and one pmd at most,
 * from the last page down when @job goes backward; mmap read lock held, and
 * dropped for a waiter after any page, or ended after any page when @job is
 * cancelled. Then false is returned with the lock held again and *@next the
 * boundary of the pages not done: [*@next, end) forward, [addr, *@next)
 * backward. true: the chunk is done.
 */
static bool asap_prepage_chunk(struct asap_job *job, struct mm_struct *mm,
			       struct vm_area_struct *vma, unsigned long addr,
			       unsigned long end, unsigned long *next)
{
	struct asap_chunk absent = { .start = addr }, got = { .start = addr };
	unsigned long n = (end - addr) >> PAGE_SHIFT, i, k;
	bool walk = !(vma->vm_flags & VM_HUGEPAGE);
	unsigned long from = addr, to = end;	/* the pages done */
	bool done = true;

	got.vma = vma;
	if (walk) {
		/* No pte table: nothing of the chunk was ever swapped out. */
		if (!asap_pmd_is_table(mm, addr))
			return true;
		apply_to_existing_page_range(mm, addr, end - addr,
					     asap_absent_pte, &absent);
	} else {
		/* A huge page may appear under the read lock: no walk. */
		bitmap_fill(absent.pages, n);
	}
	for (k = 0; k < n; k++) {
		i = job->backward ? n - 1 - k : k;
		if (!test_bit(i, absent.pages))
			continue;
		if (mobio_fault_in_remote(mm, addr + i * PAGE_SIZE, 1) == 1)
			__set_bit(i, got.pages);
		if (asap_test_page_delay_ms)
			msleep(asap_test_page_delay_ms);
		if (k + 1 < n && (READ_ONCE(job->cancel) ||
				  mmap_lock_is_contended(mm))) {
			if (job->backward)
				*next = from = addr + i * PAGE_SIZE;
			else
				*next = to = addr + (i + 1) * PAGE_SIZE;
			done = false;
			break;
		}
	}
	/*
	 * The new pages were mapped young by the fault: clear that so that
	 * asap_learn() sees the app's own accesses. get_user_pages_remote()
	 * marked their folios accessed (FOLL_TOUCH), which is what reclaim
	 * goes by until the app touches them.
	 */
	if (ASAP_HAVE_YOUNG && walk && !bitmap_empty(got.pages, n))
		apply_to_existing_page_range(mm, from, to - from,
					     asap_clear_young_pte, &got);
	/* Also after the chunk's last page: the lock goes on to the next. */
	if (!done || mmap_lock_is_contended(mm))
		asap_mmap_yield(mm);
	return done;
}

/*
 * The next chunk of [lo, hi) in @job's direction: at most ASAP_ANON_CHUNK
 * pages of one vma and one pmd, at the low end forward or the high end
 * backward. false: no vma is left in [lo, hi). Backward, a page no vma
 * maps is stepped over alone (extents are runs of pages the app used, so
 * such holes are rare and short).
 */
static bool asap_anon_next_chunk(struct asap_job *job, struct mm_struct *mm,
				 unsigned long *lo, unsigned long *hi,
				 struct vm_area_struct **vmap,
				 unsigned long *s, unsigned long *e)
{
	struct vm_area_struct *vma;

	while (*lo < *hi) {
		/* The lock may have been dropped: look the vma up each time. */
		vma = find_vma(mm, job->backward ? *hi - 1 : *lo);
		if (!vma || vma->vm_start >= *hi) {
			if (!job->backward)
				return false;
			*hi -= PAGE_SIZE;
			continue;
		}
		if (job->backward) {
			*e = *hi;	/* the vma holds *hi - 1 */
			*s = max3(*lo, vma->vm_start, ALIGN_DOWN(*e - 1, PMD_SIZE));
			*s = max(*s, *e - ASAP_ANON_CHUNK * PAGE_SIZE);
		} else {
			*s = max(*lo, vma->vm_start);
			*e = min3(*hi, vma->vm_end, ALIGN(*s + 1, PMD_SIZE));
			*e = min(*e, *s + ASAP_ANON_CHUNK * PAGE_SIZE);
		}
		*vmap = vma;
		return true;
	}
	return false;
}

/* Fault one anonymous extent in; the mm has a user reference. */
static bool asap_prepage_anon(struct asap_job *job, struct mm_struct *mm,
			      struct asap_extent *ext)
{
	unsigned long lo = ext->start << PAGE_SHIFT;
	unsigned long hi = (ext->start + ext->nr) << PAGE_SHIFT;
	struct vm_area_struct *vma;
	unsigned long s, e, next;
	bool ok = true;

	mmap_read_lock(mm);
	while (asap_anon_next_chunk(job, mm, &lo, &hi, &vma, &s, &e)) {
		if (READ_ONCE(job->cancel)) {
			ok = false;
			break;
		}
		if (!asap_prepage_chunk(job, mm, vma, s, e, &next)) {
			/* stopped for a waiter or a cancel: the rest again */
			if (job->backward)
				hi = next;
			else
				lo = next;
			continue;
		}
		if (job->backward)
			hi = s;
		else
			lo = e;
		if (asap_prepage_throttle_ms) {
			mmap_read_unlock(mm);
			msleep(asap_prepage_throttle_ms);
			mmap_read_lock(mm);
		}
	}
	mmap_read_unlock(mm);
	return ok;
}

static void asap_worker_fn(struct work_struct *work)
{
	struct asap_worker *w = container_of(work, struct asap_worker, work);
	struct asap_job *job = w->job;
	struct asap_app *app = job->app;
	bool have_mm = mmget_not_zero(app->mm);
	u64 t0 = ktime_get_ns(), us;
	struct asap_extent *ext;
	unsigned int i;
	bool done;

	if (!atomic_xchg(&job->started, 1)) {
		us = div_u64(t0 - job->trigger_ns, NSEC_PER_USEC);
		WRITE_ONCE(app->prepage_start_us, us);
		if (us > READ_ONCE(app->prepage_start_max_us))
			WRITE_ONCE(app->prepage_start_max_us, us);
	}
	for (;;) {
		i = atomic_inc_return(&job->next) - 1;
		if (i >= job->nr_ext)
			break;
		ext = &job->ext[job->backward ? job->nr_ext - 1 - i : i];
		if (ext->af)
			done = asap_prepage_file(job, ext);
		else
			done = have_mm && asap_prepage_anon(job, app->mm, ext);
		if (!done && READ_ONCE(job->cancel)) {
			WRITE_ONCE(job->interrupted, true);
			break;
		}
	}
	if (have_mm)
		mmput(app->mm);
	atomic64_add(ktime_get_ns() - t0, &app->prepage_ns);
}

/**
 * asap_job_unprepare() - forget the extents prepared for an app's switch
 * @app: the app
 *
 * Called when its tables or files change other than by learning.
 * Context: process; asap_lock held.
 */
void asap_job_unprepare(struct asap_app *app)
{
	kvfree(app->prep_ext);
	app->prep_ext = NULL;
	app->prep_nr = 0;
}

/**
 * asap_job_prepare() - build the extents of an app's next switch
 * @app: the app, its window closed and learned from
 *
 * Done after learning, off the switch path, so that asap_job_start() only
 * queues the workers. Without memory nothing is prepared and the switch
 * builds its extents itself.
 * Context: process, may sleep; asap_lock held.
 */
void asap_job_prepare(struct asap_app *app)
{
	struct asap_extent *ext;
	unsigned int n;

	asap_job_unprepare(app);
	n = asap_ext_all(app, NULL);
	if (!n)
		return;
	ext = kvmalloc_array(n, sizeof(*ext), GFP_KERNEL);
	if (!ext)
		return;
	n = asap_ext_all(app, ext);
	sort(ext, n, sizeof(*ext), asap_ext_cmp, NULL);
	app->prep_ext = ext;
	app->prep_nr = n;
}

/**
 * asap_job_start() - start prepaging an app's tables
 * @app: the app coming to the foreground
 * @trigger_ns: ktime_get_ns() of the switch's trigger
 *
 * Uses (and consumes) the extents asap_job_prepare() built; builds them
 * when there are none.
 * Context: process, may sleep; asap_lock held.
 * Return: the running job, or NULL when there is nothing to prepage (or
 * no memory: the switch then runs on demand paging alone).
 */
struct asap_job *asap_job_start(struct asap_app *app, u64 trigger_ns)
{
	struct asap_job *job;
	unsigned int i, nw;

	if (!app->prep_ext)
		asap_job_prepare(app);
	if (!app->prep_ext)
		return NULL;
	nw = min(asap_workers, app->prep_nr);
	job = kzalloc(struct_size(job, workers, nw), GFP_KERNEL);
	if (!job)
		return NULL;
	job->app = app;
	job->ext = app->prep_ext;
	job->nr_ext = app->prep_nr;
	job->trigger_ns = trigger_ns;
	job->backward = READ_ONCE(asap_prepage_backward);
	job->nr_workers = nw;
	app->prep_ext = NULL;
	app->prep_nr = 0;
	for (i = 0; i < nw; i++) {
		job->workers[i].job = job;
		INIT_WORK(&job->workers[i].work, asap_worker_fn);
		queue_work(asap_wq, &job->workers[i].work);
	}
	return job;
}

/**
 * asap_job_stop() - wait for a job's workers and free it
 * @job: the job
 * @cancel: stop the workers after their current page or chunk (the app
 *	left the foreground); otherwise let them finish
 *
 * Called by the learner, which owns the job once its window closed (the
 * switch only set @job->cancel).
 * Context: process, may sleep; asap_lock not held (the workers do not
 * take it, but waiting under it would delay the next switch).
 * Return: true when @cancel left extents not prepaged.
 */
bool asap_job_stop(struct asap_job *job, bool cancel)
{
	unsigned int i;
	bool left;

	if (cancel)
		WRITE_ONCE(job->cancel, true);
	for (i = 0; i < job->nr_workers; i++) {
		if (cancel)
			cancel_work_sync(&job->workers[i].work);
		else
			flush_work(&job->workers[i].work);
	}
	left = cancel && (READ_ONCE(job->interrupted) ||
			  (unsigned int)atomic_read(&job->next) < job->nr_ext);
	kvfree(job->ext);
	kfree(job);
	return left;
}
