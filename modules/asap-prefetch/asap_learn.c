// SPDX-License-Identifier: GPL-2.0-only
/*
 * ASAP: the two estimators, fed by the fault log of a closed window.
 *
 * The rules are the pure functions of asap_rules.h, unit-tested on the
 * host, in two sets chosen by the parameter rules. recall (the default):
 * every page faulted in a window enters the prepaging table, and an entry
 * is dropped after unused_windows windows in a row in which it was neither
 * faulted nor, if prepaged, used. seed (the seed's): file pages from an
 * offline profile of profile_switches windows (candidates seen in at least
 * profile_min), eviction of unused prepaged pages; anonymous pages: online
 * candidates, promotion on a second window, timeouts. This file applies
 * them to an app's tables: it matches logged faults to files, reads the
 * page-table accessed bits and the page cache, and keeps the counters.
 *
 * Everything here runs under asap_lock, with no window open.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include "asap.h"
#include "mobio_compat.h"
#include "asap_compat.h"

/* Most files an app's file estimator follows. */
#define ASAP_APP_FILES_MAX	64
/* Pages tested per walk of the accessed bits (one pmd at most). */
#define ASAP_YOUNG_BATCH	64

/* --- Parameters -------------------------------------------------------- */

static const char * const asap_rules_names[ASAP_NR_RULES] = {
	[ASAP_RULES_SEED] = "seed",
	[ASAP_RULES_RECALL] = "recall",
};

/* Read once per asap_learn(): a change applies from the next window. */
enum asap_rule_set asap_rules = ASAP_RULES_RECALL;

static int asap_rules_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(asap_rules_names, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(*(enum asap_rule_set *)kp->arg, i);
	return 0;
}

static int asap_rules_get(char *buf, const struct kernel_param *kp)
{
	enum asap_rule_set r = READ_ONCE(*(enum asap_rule_set *)kp->arg);

	return scnprintf(buf, PAGE_SIZE, "%s\n", asap_rules_names[r]);
}

static const struct kernel_param_ops asap_rules_ops = {
	.set = asap_rules_set,
	.get = asap_rules_get,
};
module_param_cb(rules, &asap_rules_ops, &asap_rules, 0644);
MODULE_PARM_DESC(rules, "estimator rules: recall (first sighting enters the table, unused_windows drop) or seed (file offline profile, anon promotion and anon_timeout); default recall");

/*
 * recall: a dead page costs k wasted reads before it goes, a page used in
 * one window of k stays. The break-even use probability of a prepaged page
 * is prefetch cost / (fault cost + prefetch cost), about 1/3 with reads
 * beside the app at half a fault's cost, if the workers' time were free.
 * It is not when the CPUs are busy through the switch (the workers are
 * late for most of what the app misses): a wasted read delays a needed
 * one, so k = 1, the last footprint. docs/asap.md has the numbers.
 */
unsigned int asap_unused_windows = 1;

static int asap_unused_windows_set(const char *val,
				   const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, ASAP_E_IDLE_MAX);
}

static const struct kernel_param_ops asap_unused_windows_ops = {
	.set = asap_unused_windows_set,
	.get = param_get_uint,
};
module_param_cb(unused_windows, &asap_unused_windows_ops,
		&asap_unused_windows, 0644);
MODULE_PARM_DESC(unused_windows, "recall rules: an entry neither faulted nor used in this many windows in a row is dropped (1-255; default 1)");

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

/**
 * asap_entry_load() - set an entry to a value loaded from a saved profile
 * @app: the app
 * @xa: app->anon or a file's pages
 * @index: virtual page number or page index
 * @val: the entry (ASAP_E_SAVED bits)
 *
 * An existing entry of the page is replaced.
 * Context: asap_lock held, the app's window closed, may sleep.
 * Return: true; false when a cap is reached or memory is short.
 */
bool asap_entry_load(struct asap_app *app, struct xarray *xa,
		     unsigned long index, unsigned long val)
{
	void *e = xa_load(xa, index);

	if (!e)
		return asap_entry_add(app, xa, index, val);
	asap_entry_set(app, xa, index, xa_to_value(e), val);
	return true;
}

/* Apply a rule's decision to the entry of @index (current value @old). */
static void asap_entry_apply(struct asap_app *app, struct xarray *xa,
			     unsigned long index, unsigned long old,
			     enum asap_act act, unsigned long val)
{
	switch (act) {
	case ASAP_ACT_ADD:
		asap_entry_add(app, xa, index, val);
		break;
	case ASAP_ACT_SET:
		asap_entry_set(app, xa, index, old, val);
		break;
	case ASAP_ACT_DEL:
		asap_entry_del(app, xa, index, old);
		break;
	case ASAP_ACT_NONE:
		break;
	}
}

/* Count how a prepaged page turned out. */
static void asap_count_use(struct asap_kstats *ks, enum asap_use use)
{
	if (use == ASAP_USE_HIT)
		atomic64_inc(&ks->hits);
	else if (use == ASAP_USE_UNUSED)
		atomic64_inc(&ks->unused);
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

/* Whether @inode is the file of a saved profile. */
static bool asap_file_is(struct inode *inode, u64 dev, u64 ino, u32 gen)
{
	return huge_encode_dev(inode->i_sb->s_dev) == dev &&
	       inode->i_ino == ino && inode->i_generation == gen;
}

/**
 * asap_file_by_id() - the app's asap_file of a file of a saved profile
 * @app: the app
 * @mm: its mm, with a user reference and the mmap lock held
 * @dev: the file's device (stat's st_dev encoding)
 * @ino: its inode number
 * @gen: its inode generation
 *
 * A file the app does not follow yet is looked for among its mappings.
 * Context: asap_lock and @mm's mmap lock held, may sleep.
 * Return: the asap_file; ERR_PTR(-ENOENT) when the app maps no such file
 * (for instance replaced since the save), -ENOSPC when it follows the
 * most files already, -ENOMEM.
 */
struct asap_file *asap_file_by_id(struct asap_app *app, struct mm_struct *mm,
				  u64 dev, u64 ino, u32 gen)
{
	struct vm_area_struct *vma;
	struct asap_file *af;
	struct inode *inode;

	VMA_ITERATOR(vmi, mm, 0);

	list_for_each_entry(af, &app->files, node)
		if (asap_file_is(af->inode, dev, ino, gen))
			return af;
	for_each_vma(vmi, vma) {
		if (!vma->vm_file)
			continue;
		inode = file_inode(vma->vm_file);
		if (!asap_file_is(inode, dev, ino, gen))
			continue;
		if (app->nr_files >= ASAP_APP_FILES_MAX)
			return ERR_PTR(-ENOSPC);
		af = asap_file_new(app, mm, inode);
		return af ? af : ERR_PTR(-ENOMEM);
	}
	return ERR_PTR(-ENOENT);
}

/* Whether a page of @af is in the page cache and mapped (by any mm). */
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

/*
 * A logged folio of a file: its pages the app maps now were faulted in.
 * The tracepoint also logs the readahead around a fault and pages read
 * with read(2): a page not mapped when the window closes is not learned
 * (counted in file_readahead_unused). @learn: new pages are learned.
 */
static void asap_log_file(struct asap_app *app, struct asap_file *af,
			  const struct asap_fault *f, u32 seq, bool learn)
{
	unsigned long idx, val, nv = 0;
	enum asap_act act;
	struct folio *folio;
	bool unused;
	void *e;

	for (idx = f->key; idx < f->key + f->nr; idx++) {
		/*
		 * Cached and not mapped: readahead the app did not touch. A
		 * page reclaimed since (learning runs after the window
		 * closed) tells nothing: it is learned.
		 */
		folio = mobio_folio_get(af->file->f_mapping, idx);
		unused = folio && !folio_mapped(folio);
		if (folio)
			folio_put(folio);
		if (unused) {
			app->file_readahead_unused++;
			continue;
		}
		atomic64_inc(&app->k[ASAP_FILE].faults);
		e = xa_load(&af->pages, idx);
		val = e ? xa_to_value(e) : 0;
		if (val & ASAP_E_TABLE)
			atomic64_inc(&app->k[ASAP_FILE].faults_late);
		act = asap_file_fault(!!e, val, learn, seq, &nv);
		asap_entry_apply(app, &af->pages, idx, val, act, nv);
	}
}

/*
 * A logged anonymous fault. ASAP_LOG_ANON_MINOR (the page was in the swap
 * cache) is learned as the app's fault, part of the footprint, but it is
 * not a miss: not counted in faults.
 */
static void asap_log_anon(struct asap_app *app, const struct asap_fault *f,
			  u32 seq)
{
	bool by_worker = f->kind == ASAP_LOG_ANON_PREPAGED;
	bool miss = f->kind == ASAP_LOG_ANON, count_miss;
	unsigned long vpn = f->key >> PAGE_SHIFT, val, nv = 0;
	enum asap_act act;
	void *e;

	if (f->kind == ASAP_LOG_ANON_WORKER_MINOR)
		return;		/* a worker's that brought nothing in */
	e = xa_load(&app->anon, vpn);
	val = e ? xa_to_value(e) : 0;
	act = asap_anon_fault(!!e, val, by_worker, miss, asap_anon_timeout,
			      seq, &nv, &count_miss);
	if (act == ASAP_ACT_NONE)
		return;		/* a page counts once per window */
	if (by_worker) {
		atomic64_inc(&app->k[ASAP_ANON].prepaged);
		atomic64_add(PAGE_SIZE, &app->read_bytes);
	} else if (count_miss) {
		atomic64_inc(&app->k[ASAP_ANON].faults);
		if (val & ASAP_E_TABLE)
			atomic64_inc(&app->k[ASAP_ANON].faults_late);
	}
	asap_entry_apply(app, &app->anon, vpn, val, act, nv);
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
		if (!asap_anon_young(xa_to_value(e)))
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
			if (asap_anon_young(val))
				xa_store(&app->anon, vpn + i,
					 xa_mk_value(val | ASAP_E_USED),
					 GFP_KERNEL);
		}
		vpn += ((end - start) >> PAGE_SHIFT) - 1;
	}
}

static void asap_sweep_anon(struct asap_app *app, enum asap_rule_set rules,
			    unsigned int k)
{
	unsigned long vpn, val, nv = 0;
	enum asap_use use;
	enum asap_act act;
	void *e;

	xa_for_each(&app->anon, vpn, e) {
		val = xa_to_value(e);
		if (rules == ASAP_RULES_RECALL)
			act = asap_anon_sweep_recall(val, asap_anon_timeout, k,
						     &nv, &use);
		else
			act = asap_anon_sweep(val, asap_anon_timeout, &nv,
					      &use);
		asap_count_use(&app->k[ASAP_ANON], use);
		asap_entry_apply(app, &app->anon, vpn, val, act, nv);
	}
}

static void asap_sweep_file(struct asap_app *app, struct asap_file *af,
			    enum asap_rule_set rules, unsigned int k,
			    bool profiling, bool profile_end)
{
	unsigned long idx, val, nv = 0;
	enum asap_use use;
	enum asap_act act;
	bool used;
	void *e;

	xa_for_each(&af->pages, idx, e) {
		val = xa_to_value(e);
		used = (val & ASAP_E_PREPAGED) &&
		       ((val & ASAP_E_USED) || asap_file_page_used(af, idx));
		if (rules == ASAP_RULES_RECALL)
			act = asap_file_sweep_recall(val, used, k, &nv, &use);
		else
			act = asap_file_sweep(val, used, profiling,
					      profile_end, asap_profile_min,
					      &nv, &use);
		asap_count_use(&app->k[ASAP_FILE], use);
		asap_entry_apply(app, &af->pages, idx, val, act, nv);
	}
}

/*
 * Mark ASAP_E_USED the prepaged pages of a file the app maps now. A worker
 * of the closing job may still set ASAP_E_PREPAGED: both update with a
 * compare-and-exchange.
 */
static void asap_sample_file(struct asap_file *af)
{
	unsigned long idx, val;
	void *e, *old;

	xa_for_each(&af->pages, idx, e) {
		val = xa_to_value(e);
		if (!(val & ASAP_E_PREPAGED) || (val & ASAP_E_USED) ||
		    !asap_file_page_used(af, idx))
			continue;
		old = xa_cmpxchg(&af->pages, idx, e,
				 xa_mk_value(val | ASAP_E_USED), GFP_KERNEL);
		WARN_ON_ONCE(xa_is_err(old));
	}
}

/**
 * asap_sample() - record which pages an app used, as its window closes
 * @app: the app whose window just closed
 *
 * Learning runs later (asap_learn(), off the switch path), when reclaim
 * may already have taken the app's pages: a page paged out has no
 * accessed bit and is not mapped, and would count as unused. So the
 * accessed bits of its anonymous table pages and whether its prepaged
 * file pages are mapped are read now, into ASAP_E_USED; asap_learn()
 * adds what it still sees. The mmap lock is only tried: if a writer has
 * it, the anonymous part is left to asap_learn(), which otherwise does not
 * walk the accessed bits again (@app->young_sampled).
 * Context: process, may sleep; asap_lock held; the app's job may still
 * be running (cancelled).
 */
void asap_sample(struct asap_app *app)
{
	struct mm_struct *mm = app->mm;
	struct asap_file *af;

	if (mmget_not_zero(mm)) {
		if (mmap_read_trylock(mm)) {
			asap_test_young(app, mm);
			app->young_sampled = true;
			mmap_read_unlock(mm);
		}
		mmput(mm);
	}
	list_for_each_entry(af, &app->files, node)
		asap_sample_file(af);
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
	enum asap_rule_set rules = READ_ONCE(asap_rules);
	unsigned int k = READ_ONCE(asap_unused_windows);
	struct mm_struct *mm = app->mm;
	bool profiling, profile_end;
	struct asap_file *af;
	unsigned int i;

	/*
	 * The profile's progress goes on under recall too (its count of
	 * windows seen in is kept), so that a change to seed does not start
	 * a profile over the counts recall kept.
	 */
	profiling = asap_file_phase(app->profiled, asap_profile_switches,
				    &profile_end);
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
		asap_log_file(app, af, f, i,
			      asap_file_learns(rules, profiling));
	}

	/* Read as the window closed, before reclaim could take the pages. */
	if (mm && !app->young_sampled)
		asap_test_young(app, mm);
	app->young_sampled = false;
	asap_sweep_anon(app, rules, k);
	if (profiling)
		app->profiled++;
	list_for_each_entry(af, &app->files, node)
		asap_sweep_file(app, af, rules, k, profiling, profile_end);

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
