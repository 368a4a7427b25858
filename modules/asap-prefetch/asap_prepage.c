// SPDX-License-Identifier: GPL-2.0-only
/*
 * ASAP: prepaging at a switch. The prepaging tables become extents (file
 * pages closer than file_merge_pages merge, the gap read too; anonymous
 * runs of adjacent pages), sorted by first use in the last window, and
 * asap_workers work items on an unbound workqueue take them in that order.
 * File extents are read ahead with vfs_fadvise(WILLNEED) in chunks of the
 * file's readahead size (one call reads at most that much); anonymous ones
 * are faulted in with get_user_pages_remote() without a page array, so no
 * page is pinned or referenced, and their accessed bits are cleared so the
 * estimator can tell later whether the app used them. The mm is held
 * (mmget_not_zero) only while a worker runs. A switch away sets @cancel:
 * the workers stop after their current chunk.
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
/* Anonymous pages faulted in per mmap lock hold. */
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

/* Read one file extent ahead, chunk by chunk. */
static bool asap_prepage_file(struct asap_job *job, struct asap_extent *ext)
{
	struct asap_app *app = job->app;
	struct asap_file *af = ext->af;
	struct address_space *mapping = af->file->f_mapping;
	unsigned long chunk = max_t(unsigned long, af->file->f_ra.ra_pages, 1);
	unsigned long eof, idx, s, n, absent;
	struct folio *folio;
	void *e;

	eof = DIV_ROUND_UP(i_size_read(af->inode), PAGE_SIZE);
	for (s = ext->start; s < ext->start + ext->nr && s < eof; s += n) {
		if (READ_ONCE(job->cancel))
			return false;
		n = min3(chunk, ext->start + ext->nr - s, eof - s);
		absent = 0;
		for (idx = s; idx < s + n; idx++) {
			folio = mobio_folio_get(mapping, idx);
			if (folio) {
				folio_put(folio);
				continue;
			}
			absent++;
			e = xa_load(&af->pages, idx);
			if (e)
				xa_store(&af->pages, idx,
					 xa_mk_value(xa_to_value(e) |
						     ASAP_E_PREPAGED),
					 GFP_KERNEL);
			else
				asap_entry_add(app, &af->pages, idx,
					       ASAP_E_GAP | ASAP_E_PREPAGED);
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

static int asap_clear_young_pte(pte_t *pte, unsigned long addr, void *data)
{
	asap_pte_clear_young(pte);
	return 0;
}

/* Clear the accessed bits of [start, end); mmap lock held. */
static void asap_clear_young(struct mm_struct *mm, unsigned long start,
			     unsigned long end)
{
	struct vm_area_struct *vma;
	unsigned long e;

	while (ASAP_HAVE_YOUNG && start < end) {
		vma = find_vma(mm, start);
		if (!vma || vma->vm_start >= end)
			return;
		start = max(start, vma->vm_start);
		e = min3(end, vma->vm_end, ALIGN(start + 1, PMD_SIZE));
		if (!(vma->vm_flags & VM_HUGEPAGE) &&
		    asap_pmd_is_table(mm, start))
			apply_to_existing_page_range(mm, start, e - start,
						     asap_clear_young_pte, NULL);
		start = e;
	}
}

/* Fault one anonymous extent in; the mm has a user reference. */
static bool asap_prepage_anon(struct asap_job *job, struct mm_struct *mm,
			      struct asap_extent *ext)
{
	unsigned long addr = ext->start << PAGE_SHIFT;
	unsigned long end = (ext->start + ext->nr) << PAGE_SHIFT;
	unsigned long n, i;
	long got;

	while (addr < end) {
		if (READ_ONCE(job->cancel))
			return false;
		n = min_t(unsigned long, ASAP_ANON_CHUNK,
			  (end - addr) >> PAGE_SHIFT);
		/*
		 * Page by page, clearing the accessed bit right after the
		 * fault: the app runs meanwhile, and an access of its own
		 * between the two would be lost (counted unused).
		 */
		mmap_read_lock(mm);
		for (i = 0; i < n; i++, addr += PAGE_SIZE) {
			got = mobio_fault_in_remote(mm, addr, 1);
			if (got == 1)
				asap_clear_young(mm, addr, addr + PAGE_SIZE);
		}
		mmap_read_unlock(mm);
		if (asap_prepage_throttle_ms)
			msleep(asap_prepage_throttle_ms);
	}
	return true;
}

static void asap_worker_fn(struct work_struct *work)
{
	struct asap_worker *w = container_of(work, struct asap_worker, work);
	struct asap_job *job = w->job;
	struct asap_app *app = job->app;
	bool have_mm = mmget_not_zero(app->mm);
	u64 t0 = ktime_get_ns();
	unsigned int i;
	bool done;

	for (;;) {
		i = atomic_inc_return(&job->next) - 1;
		if (i >= job->nr_ext)
			break;
		if (job->ext[i].af)
			done = asap_prepage_file(job, &job->ext[i]);
		else
			done = have_mm &&
			       asap_prepage_anon(job, app->mm, &job->ext[i]);
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
 * asap_job_start() - start prepaging an app's tables
 * @app: the app coming to the foreground
 *
 * Context: process, may sleep; asap_lock held.
 * Return: the running job, or NULL when there is nothing to prepage (or
 * no memory: the switch then runs on demand paging alone).
 */
struct asap_job *asap_job_start(struct asap_app *app)
{
	struct asap_extent *ext;
	struct asap_job *job;
	unsigned int n, i, nw;

	n = asap_ext_all(app, NULL);
	if (!n)
		return NULL;
	ext = kvmalloc_array(n, sizeof(*ext), GFP_KERNEL);
	if (!ext)
		return NULL;
	n = asap_ext_all(app, ext);
	sort(ext, n, sizeof(*ext), asap_ext_cmp, NULL);

	nw = min(asap_workers, n);
	job = kzalloc(struct_size(job, workers, nw), GFP_KERNEL);
	if (!job) {
		kvfree(ext);
		return NULL;
	}
	job->app = app;
	job->ext = ext;
	job->nr_ext = n;
	job->nr_workers = nw;
	atomic_set(&job->next, 0);
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
 * @cancel: stop the workers after their current chunk (the app left the
 *	foreground); otherwise let them finish
 *
 * Context: process, may sleep; asap_lock held.
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
