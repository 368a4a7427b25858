// SPDX-License-Identifier: GPL-2.0-only
/*
 * ASAP: the two estimators, fed by the fault log of a closed window.
 *
 * File pages (offline profile): over the first profile_switches windows an
 * entry counts the windows its page was faulted in; at the end of the
 * profile, pages seen in at least profile_min windows enter the prepaging
 * table, the others are forgotten. Afterwards only those candidates are
 * tracked: a prepaged page the app did not map in the window is evicted
 * from the table, a candidate faulted again re-enters it.
 *
 * Anonymous pages (online): a swap-in fault on an unknown page makes it a
 * candidate; a candidate faulted again in a later window, or a prepaged
 * page whose accessed bit the app set, is in the table. Every entry has a
 * timeout of anon_timeout windows, reset on access and decremented in
 * each window without one; at zero the entry is dropped.
 *
 * Everything here runs under asap_lock, with no window open.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include "asap.h"
#include "mobio_compat.h"
#include "asap_compat.h"

/* Most files an app's file estimator follows. */
#define ASAP_APP_FILES_MAX	64
/* Pages tested per walk of the accessed bits (one pmd at most). */
#define ASAP_YOUNG_BATCH	64

static enum asap_kind asap_xa_kind(struct asap_app *app, struct xarray *xa)
{
	return xa == &app->anon ? ASAP_ANON : ASAP_FILE;
}

/**
 * asap_entry_add() - add an estimator entry within the caps
 * @app: the app
 * @xa: app->anon or a file's pages
 * @index: virtual page number or page index
 * @val: the entry (ASAP_E_* bits)
 *
 * Context: asap_lock held or a worker of the app's job, may sleep.
 * Return: true if added; false when a cap is reached (counted in
 * entries_dropped) or memory is short.
 */
bool asap_entry_add(struct asap_app *app, struct xarray *xa,
		    unsigned long index, unsigned long val)
{
	enum asap_kind k = asap_xa_kind(app, xa);

	if (atomic_inc_return(&app->nr_entries) > asap_app_entries_max)
		goto err_app;
	if (atomic_inc_return(&asap_nr_entries) > asap_entries_max)
		goto err_global;
	if (xa_err(xa_store(xa, index, xa_mk_value(val), GFP_KERNEL)))
		goto err_global;
	atomic64_inc(&app->k[k].entries);
	if (val & ASAP_E_TABLE)
		atomic64_inc(&app->k[k].table);
	return true;

err_global:
	atomic_dec(&asap_nr_entries);
err_app:
	atomic_dec(&app->nr_entries);
	atomic64_inc(&asap_entries_dropped);
	return false;
}

/**
 * asap_entry_del() - remove an estimator entry
 * @app: the app
 * @xa: app->anon or a file's pages
 * @index: its index
 * @val: its current value (for the table counter)
 *
 * Context: asap_lock held.
 */
void asap_entry_del(struct asap_app *app, struct xarray *xa,
		    unsigned long index, unsigned long val)
{
	enum asap_kind k = asap_xa_kind(app, xa);

	xa_erase(xa, index);
	atomic_dec(&app->nr_entries);
	atomic_dec(&asap_nr_entries);
	atomic64_dec(&app->k[k].entries);
	if (val & ASAP_E_TABLE)
		atomic64_dec(&app->k[k].table);
}

/* Replace an entry's value, keeping the table counter right. */
static void asap_entry_set(struct asap_app *app, struct xarray *xa,
			   unsigned long index, unsigned long old,
			   unsigned long val)
{
	enum asap_kind k = asap_xa_kind(app, xa);

	if (old == val)
		return;
	xa_store(xa, index, xa_mk_value(val), GFP_KERNEL);
	if ((old ^ val) & ASAP_E_TABLE) {
		if (val & ASAP_E_TABLE)
			atomic64_inc(&app->k[k].table);
		else
			atomic64_dec(&app->k[k].table);
	}
}

static unsigned long asap_first(unsigned long val, u32 seq)
{
	return (val & ~ASAP_E_FIRST) | FIELD_PREP(ASAP_E_FIRST, seq);
}

/* A new asap_file for @inode if the app maps it; mmap lock held. */
static struct asap_file *asap_file_new(struct asap_app *app,
				       struct mm_struct *mm,
				       struct inode *inode)
{
	struct vm_area_struct *vma;
	struct asap_file *af;

	VMA_ITERATOR(vmi, mm, 0);

	for_each_vma(vmi, vma) {
		if (!vma->vm_file || file_inode(vma->vm_file) != inode)
			continue;
		af = kzalloc(sizeof(*af), GFP_KERNEL);
		if (!af)
			return NULL;
		af->file = get_file(vma->vm_file);
		af->inode = inode;
		xa_init(&af->pages);
		list_add_tail(&af->node, &app->files);
		app->nr_files++;
		return af;
	}
	return NULL;
}

/*
 * The app's asap_file for @inode; new ones come from the app's mappings
 * (mmap lock held). NULL when the app maps no file of that inode.
 */
static struct asap_file *asap_file_lookup(struct asap_app *app,
					  struct mm_struct *mm,
					  struct inode *inode)
{
	struct asap_file *af;

	list_for_each_entry(af, &app->files, node)
		if (af->inode == inode)
			return af;
	if (!mm || app->nr_files >= ASAP_APP_FILES_MAX)
		return NULL;
	return asap_file_new(app, mm, inode);
}

static void asap_log_file(struct asap_app *app, struct asap_file *af,
			  const struct asap_fault *f, u32 seq, bool profiling)
{
	unsigned long idx, val;
	void *e;

	for (idx = f->key; idx < f->key + f->nr; idx++) {
		atomic64_inc(&app->k[ASAP_FILE].faults);
		e = xa_load(&af->pages, idx);
		if (!e) {
			if (profiling)
				asap_entry_add(app, &af->pages, idx,
					       ASAP_E_SEEN |
					       FIELD_PREP(ASAP_E_FIRST, seq));
			continue;
		}
		val = xa_to_value(e);
		if (val & ASAP_E_SEEN)
			continue;
		asap_entry_set(app, &af->pages, idx, val,
			       asap_first(val | ASAP_E_SEEN, seq));
	}
}

static void asap_log_anon(struct asap_app *app, const struct asap_fault *f,
			  u32 seq)
{
	unsigned long vpn = f->key >> PAGE_SHIFT, val;
	void *e = xa_load(&app->anon, vpn);

	/*
	 * A fault may be retried (the mmap or folio lock dropped while the
	 * page was read): a page counts once per window.
	 */
	if (f->kind == ASAP_LOG_ANON_PREPAGED) {
		if (!e || (xa_to_value(e) & ASAP_E_PREPAGED))
			return;
		atomic64_inc(&app->k[ASAP_ANON].prepaged);
		atomic64_add(PAGE_SIZE, &app->read_bytes);
		asap_entry_set(app, &app->anon, vpn, xa_to_value(e),
			       xa_to_value(e) | ASAP_E_PREPAGED);
		return;
	}
	if (!e) {
		atomic64_inc(&app->k[ASAP_ANON].faults);
		asap_entry_add(app, &app->anon, vpn,
			       ASAP_E_SEEN | ASAP_E_NEW |
			       FIELD_PREP(ASAP_E_COUNT, asap_anon_timeout) |
			       FIELD_PREP(ASAP_E_FIRST, seq));
		return;
	}
	val = xa_to_value(e);
	if (val & ASAP_E_SEEN)
		return;
	atomic64_inc(&app->k[ASAP_ANON].faults);
	asap_entry_set(app, &app->anon, vpn, val,
		       asap_first(val | ASAP_E_SEEN, seq));
}

struct asap_young {
	unsigned long start;
	DECLARE_BITMAP(young, ASAP_YOUNG_BATCH);
};

static int asap_young_pte(pte_t *pte, unsigned long addr, void *data)
{
	struct asap_young *y = data;

	if (asap_pte_test_young(pte))
		__set_bit((addr - y->start) >> PAGE_SHIFT, y->young);
	return 0;
}

/*
 * Mark ASAP_E_USED the anonymous pages of the table, and the prepaged
 * ones, whose accessed bit is set. The workers cleared it after faulting a
 * page in; for a page that stayed resident the bit says it was accessed
 * since reclaim last aged it. mmap lock held.
 */
static void asap_test_young(struct asap_app *app, struct mm_struct *mm)
{
	unsigned long vpn = 0, start, end, val, i;
	struct vm_area_struct *vma;
	struct asap_young y;
	void *e;

	xa_for_each(&app->anon, vpn, e) {
		if (!(xa_to_value(e) & (ASAP_E_PREPAGED | ASAP_E_TABLE)))
			continue;
		start = vpn << PAGE_SHIFT;
		end = min(ALIGN(start + 1, PMD_SIZE),
			  start + ASAP_YOUNG_BATCH * PAGE_SIZE);
		vma = find_vma(mm, start);
		if (!vma || vma->vm_start > start)
			continue;
		end = min(end, vma->vm_end);
		if (!ASAP_HAVE_YOUNG || (vma->vm_flags & VM_HUGEPAGE) ||
		    !asap_pmd_is_table(mm, start)) {
			/* Unknown: count the page as used. */
			bitmap_fill(y.young, ASAP_YOUNG_BATCH);
		} else {
			bitmap_zero(y.young, ASAP_YOUNG_BATCH);
			y.start = start;
			apply_to_existing_page_range(mm, start, end - start,
						     asap_young_pte, &y);
		}
		for (i = 0; i < (end - start) >> PAGE_SHIFT; i++) {
			e = xa_load(&app->anon, vpn + i);
			if (!e || !test_bit(i, y.young))
				continue;
			val = xa_to_value(e);
			if (val & (ASAP_E_PREPAGED | ASAP_E_TABLE))
				xa_store(&app->anon, vpn + i,
					 xa_mk_value(val | ASAP_E_USED),
					 GFP_KERNEL);
		}
		vpn += ((end - start) >> PAGE_SHIFT) - 1;
	}
}

static void asap_sweep_anon(struct asap_app *app)
{
	struct asap_kstats *ks = &app->k[ASAP_ANON];
	unsigned long vpn, val, nv, t;
	bool used;
	void *e;

	xa_for_each(&app->anon, vpn, e) {
		val = xa_to_value(e);
		nv = val & ~(ASAP_E_SEEN | ASAP_E_NEW | ASAP_E_PREPAGED |
			     ASAP_E_USED);
		if (val & ASAP_E_PREPAGED) {
			if (val & ASAP_E_USED)
				atomic64_inc(&ks->hits);
			else
				atomic64_inc(&ks->unused);
		}
		/* A candidate accessed again is promoted. */
		if ((val & ASAP_E_SEEN) && !(val & ASAP_E_NEW))
			nv |= ASAP_E_TABLE;
		used = (val & ASAP_E_SEEN) || (val & ASAP_E_USED);
		t = FIELD_GET(ASAP_E_COUNT, val);
		if (used) {
			t = asap_anon_timeout;
		} else if (t <= 1) {
			asap_entry_del(app, &app->anon, vpn, val);
			continue;
		} else {
			t--;
		}
		nv = (nv & ~ASAP_E_COUNT) | FIELD_PREP(ASAP_E_COUNT, t);
		asap_entry_set(app, &app->anon, vpn, val, nv);
	}
}

static bool asap_file_page_used(struct asap_file *af, pgoff_t index)
{
	struct folio *folio = mobio_folio_get(af->file->f_mapping, index);
	bool used;

	if (!folio)
		return false;
	used = folio_mapped(folio);
	folio_put(folio);
	return used;
}

static void asap_sweep_file(struct asap_app *app, struct asap_file *af,
			    bool profiling, bool profile_end)
{
	struct asap_kstats *ks = &app->k[ASAP_FILE];
	unsigned long idx, val, nv, cnt;
	void *e;

	xa_for_each(&af->pages, idx, e) {
		val = xa_to_value(e);
		nv = val & ~(ASAP_E_SEEN | ASAP_E_PREPAGED | ASAP_E_USED);
		if (val & ASAP_E_PREPAGED) {
			if (asap_file_page_used(af, idx)) {
				atomic64_inc(&ks->hits);
			} else {
				atomic64_inc(&ks->unused);
				/* Not used in this switch: evicted. */
				nv &= ~ASAP_E_TABLE;
			}
		}
		if (val & ASAP_E_GAP) {
			asap_entry_del(app, &af->pages, idx, val);
			continue;
		}
		if (profiling) {
			cnt = FIELD_GET(ASAP_E_COUNT, val);
			if ((val & ASAP_E_SEEN) && cnt < 255)
				cnt++;
			if (profile_end && cnt < asap_profile_min) {
				asap_entry_del(app, &af->pages, idx, val);
				continue;
			}
			nv = (nv & ~ASAP_E_COUNT) | FIELD_PREP(ASAP_E_COUNT, cnt);
			if (profile_end)
				nv |= ASAP_E_TABLE;
		} else if (val & ASAP_E_SEEN) {
			/* A fault matched a candidate: back in the table. */
			nv |= ASAP_E_TABLE;
		}
		asap_entry_set(app, &af->pages, idx, val, nv);
	}
}

/**
 * asap_learn() - feed the log of the window just closed to the estimators
 * @app: the app whose window closed
 * @log: its faults, in order; stable (no probe appends any more)
 * @len: how many
 *
 * Context: process, may sleep; asap_lock held, no job running for @app.
 */
void asap_learn(struct asap_app *app, const struct asap_fault *log,
		unsigned int len)
{
	bool profiling = app->profiled < asap_profile_switches;
	struct mm_struct *mm = app->mm;
	struct asap_file *af;
	unsigned int i;

	if (!mmget_not_zero(mm))
		mm = NULL;
	else
		mmap_read_lock(mm);

	for (i = 0; i < len; i++) {
		const struct asap_fault *f = &log[i];

		if (f->kind != ASAP_LOG_FILE) {
			asap_log_anon(app, f, i);
			continue;
		}
		af = asap_file_lookup(app, mm, f->inode);
		if (!af) {
			app->file_unmapped += f->nr;
			continue;
		}
		asap_log_file(app, af, f, i, profiling);
	}

	if (mm)
		asap_test_young(app, mm);
	asap_sweep_anon(app);
	if (profiling)
		app->profiled++;
	list_for_each_entry(af, &app->files, node)
		asap_sweep_file(app, af, profiling,
				profiling &&
				app->profiled == asap_profile_switches);

	if (mm) {
		mmap_read_unlock(mm);
		mmput(mm);
	}
}

/**
 * asap_app_free_tables() - free an app's estimator entries and files
 * @app: the app, no window open and no job running
 *
 * Context: process, may sleep; asap_lock held.
 */
void asap_app_free_tables(struct asap_app *app)
{
	struct asap_file *af, *tmp;
	unsigned long idx;
	void *e;

	xa_for_each(&app->anon, idx, e)
		asap_entry_del(app, &app->anon, idx, xa_to_value(e));
	xa_destroy(&app->anon);
	list_for_each_entry_safe(af, tmp, &app->files, node) {
		xa_for_each(&af->pages, idx, e)
			asap_entry_del(app, &af->pages, idx, xa_to_value(e));
		xa_destroy(&af->pages);
		fput(af->file);
		list_del(&af->node);
		kfree(af);
	}
	app->nr_files = 0;
}
