// SPDX-License-Identifier: GPL-2.0-only
/*
 * ASAP: learns each app's switch footprint and prepages it in parallel at
 * the next switch (after Son et al., "ASAP: Fast Mobile Application Switch
 * via Adaptive Prepaging", USENIX ATC'21).
 *
 * An app is a thread group. A switch (ASAP_CMD_SWITCH from a userspace
 * agent, or a task moved into fg_cgroup) brings one app to the foreground
 * and opens its switch window: the faults its tasks take are logged (file
 * pages from the tracepoint mm_filemap_add_to_page_cache, anonymous
 * swap-ins from kprobes on do_swap_page and the swap read) while workers
 * prepage what the estimators predicted. The window closes when another
 * app comes to the foreground (its prepaging is cancelled), when the same
 * app is switched to again, or after window_ms; the log then feeds the
 * estimators (asap_learn.c). The workers are in asap_prepage.c, the
 * netlink family in asap_genl.c.
 *
 * The switch path does no learning and no waiting: it flags the old job,
 * unpublishes the old window, publishes the new one and queues the new
 * app's workers on extents prepared when it last left the foreground.
 * The closed window goes to asap_learn_fn() (a work item): an RCU grace
 * period (no probe appends after it), the old job stopped, the log
 * learned from, the extents of that app's next switch built. There are
 * two windows (logs): one open, one being learned from; a switch that
 * needs the second while it is still being learned waits for it (only
 * when switches come faster than learning).
 *
 * Locking: asap_lock (a mutex) serializes switches, learning, the app list
 * and the tables. Fault probes find the open window through the RCU
 * pointer asap_open and append to its log without a lock (an atomic
 * index).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cgroup.h>
#include <linux/debugfs.h>
#include <linux/hash.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include <linux/tracepoint.h>
#include "asap.h"
#include "mobio_compat.h"

/* --- Parameters -------------------------------------------------------- */

unsigned int asap_workers;
module_param_named(workers, asap_workers, uint, 0444);
MODULE_PARM_DESC(workers, "prepaging workers per switch (0: online CPUs at load minus one for the app, at least 1; max 64)");

unsigned int asap_profile_switches = 10;
module_param_named(profile_switches, asap_profile_switches, uint, 0644);
MODULE_PARM_DESC(profile_switches, "file estimator: switches in the offline profile (N, 1-255; default 10)");

unsigned int asap_profile_min = 8;
module_param_named(profile_min, asap_profile_min, uint, 0644);
MODULE_PARM_DESC(profile_min, "file estimator: a page seen in at least this many profiled switches is a candidate (M; default 8)");

unsigned int asap_file_merge_pages = 16;
module_param_named(file_merge_pages, asap_file_merge_pages, uint, 0644);
MODULE_PARM_DESC(file_merge_pages, "file extents with fewer than this many pages between them merge (default 16)");

unsigned int asap_anon_timeout = 4;
module_param_named(anon_timeout, asap_anon_timeout, uint, 0644);
MODULE_PARM_DESC(anon_timeout, "anon estimator: switches an entry survives without access (1-255; default 4)");

unsigned int asap_log_entries = 65536;
module_param_named(log_entries, asap_log_entries, uint, 0444);
MODULE_PARM_DESC(log_entries, "faults logged per switch window (one log, allocated at load; default 65536, 24 bytes each)");

unsigned int asap_app_entries_max = 262144;
module_param_named(app_entries_max, asap_app_entries_max, uint, 0644);
MODULE_PARM_DESC(app_entries_max, "estimator entries per app (pages; default 262144)");

unsigned int asap_entries_max = 1048576;
module_param_named(entries_max, asap_entries_max, uint, 0644);
MODULE_PARM_DESC(entries_max, "estimator entries of all apps (pages; default 1048576)");

unsigned int asap_apps_max = 64;
module_param_named(apps_max, asap_apps_max, uint, 0644);
MODULE_PARM_DESC(apps_max, "tracked apps (default 64)");

unsigned int asap_window_ms = 10000;
module_param_named(window_ms, asap_window_ms, uint, 0644);
MODULE_PARM_DESC(window_ms, "a switch window closes after this many ms if no other switch came (default 10000)");

unsigned int asap_prepage_throttle_ms;
module_param_named(prepage_throttle_ms, asap_prepage_throttle_ms, uint, 0644);
MODULE_PARM_DESC(prepage_throttle_ms, "testing: workers sleep this many ms after each chunk (default 0)");

bool asap_prepage_backward = true;
module_param_named(prepage_backward, asap_prepage_backward, bool, 0644);
MODULE_PARM_DESC(prepage_backward, "workers take the extents from the end of the first-use order, away from the app that faults from its start (default: on; off: from the start)");

unsigned int asap_test_page_delay_ms;
module_param_named(test_page_delay_ms, asap_test_page_delay_ms, uint, 0644);
MODULE_PARM_DESC(test_page_delay_ms, "testing: a worker sleeps this many ms after each anonymous page, holding the mmap read lock, as a slow swap device would (default 0)");

static char *asap_fg_cgroup;
module_param_named(fg_cgroup, asap_fg_cgroup, charp, 0444);
MODULE_PARM_DESC(fg_cgroup, "cgroup v2 path from the root of the foreground cgroup: a task moved into it is switched to (default: none; it must exist at load)");

static bool asap_prepage = true;
module_param_named(prepage, asap_prepage, bool, 0644);
MODULE_PARM_DESC(prepage, "prepage at a switch (default: on; off: log and learn only, for measurements)");

static bool asap_swapin_kretprobe;
module_param_named(swapin_kretprobe, asap_swapin_kretprobe, bool, 0444);
MODULE_PARM_DESC(swapin_kretprobe, "log anonymous swap-ins with a return probe on do_swap_page, the method before 2026-12-07, kept to compare its cost (bench-asap-overhead); default: off, entry probes on do_swap_page and the swap read");

static bool asap_log_timing;
module_param_named(log_timing, asap_log_timing, bool, 0644);
MODULE_PARM_DESC(log_timing, "time each logged fault in its probe into the log_ns counter: two clock reads per fault, each an HPET read where that is the clocksource (default: off)");

static bool asap_sigcont;
module_param_named(sigcont, asap_sigcont, bool, 0644);
MODULE_PARM_DESC(sigcont, "switch to a stopped process when SIGCONT continues it (default: off)");

/* --- State ------------------------------------------------------------- */

/* Serializes switches, learning, the app list and the tables. */
DEFINE_MUTEX(asap_lock);
LIST_HEAD(asap_apps);
struct asap_app *asap_front;		/* foreground app, under asap_lock */
struct workqueue_struct *asap_wq;
atomic_t asap_nr_entries;
atomic64_t asap_entries_dropped;
u64 asap_total_switches;
u64 asap_total_cancelled;

/* A window's table of tasks' last swap faults has 1 << this many slots. */
#define ASAP_READING_BITS	6

/**
 * struct asap_window - a switch window and its fault log
 * @app: its app (set under asap_lock before it is published)
 * @log: asap_log_entries faults, in order
 * @len: faults appended (may pass asap_log_entries: those were dropped)
 * @job: its prepaging, or NULL; owned by the learner once closed
 * @cancel: the job was cancelled (the app left the foreground)
 * @trigger_ns: ktime of the switch that opened it
 * @reading: per task (hashed), 1 + the log index of its last do_swap_page(),
 *	for the swap read that follows it; cleared when the window opens,
 *	then written and read by the probes only
 */
struct asap_window {
	struct asap_app *app;
	struct asap_fault *log;
	atomic_t len;
	u32 reading[1 << ASAP_READING_BITS];
	struct asap_job *job;
	bool cancel;
	u64 trigger_ns;
};

static struct asap_window asap_windows[2];
static struct asap_window __rcu *asap_open;	/* the open window */
static struct asap_window *asap_learning;	/* closed, under asap_lock */
static void asap_learn_fn(struct work_struct *work);
static DECLARE_WORK(asap_learn_work, asap_learn_fn);

/*
 * The logging's own cost: faults logged (dropped ones included) and, with
 * log_timing, the ns the probes spent on them from the match to the
 * append (the probe trap, the filtering and the swap read's upgrade are
 * not included). Per CPU, not to share a cache line between faults on
 * different CPUs. Timing is off by default: on 6.1 under QEMU's TCG the
 * clocksource is the HPET, and the two reads per fault cost more than the
 * rest of the probe (docs/asap.md, Logging overhead).
 */
static DEFINE_PER_CPU(u64, asap_logged);
static DEFINE_PER_CPU(u64, asap_log_ns);

/* The sum over CPUs of a per-CPU counter. */
static u64 asap_pcpu_sum(u64 __percpu *v)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *per_cpu_ptr(v, cpu);
	return sum;
}

static unsigned int asap_nr_apps;	/* under asap_lock */
static struct dentry *asap_debugfs_dir;

static void asap_window_timeout(struct work_struct *work);
static DECLARE_DELAYED_WORK(asap_window_dwork, asap_window_timeout);
static int asap_switch_task(struct task_struct *task, u32 trigger,
			    u64 trigger_ns, struct netlink_ext_ack *extack);
static void asap_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(asap_reap_dwork, asap_reap);
#define ASAP_REAP_INTERVAL	(1 * HZ)

/* --- Fault logging ----------------------------------------------------- */

/*
 * Atomic context (the probes; @t0 from asap_log_start()), under RCU.
 * Return: the entry's index in @w's log, or -1 when the log is full.
 */
static int asap_log(struct asap_window *w, const struct asap_fault *fault,
		    u64 t0)
{
	unsigned int i = atomic_inc_return(&w->len) - 1;

	if (i < asap_log_entries)
		w->log[i] = *fault;
	else
		atomic64_inc(&w->app->log_dropped);
	this_cpu_inc(asap_logged);
	if (t0)
		this_cpu_add(asap_log_ns, ktime_get_ns() - t0);
	return i < asap_log_entries ? i : -1;
}

/* A probe that will log: the clock now with log_timing, else 0. */
static u64 asap_log_start(void)
{
	return READ_ONCE(asap_log_timing) ? ktime_get_ns() : 0;
}

/* mm_filemap_add_to_page_cache: a folio entered the page cache. */
static void asap_probe_add_to_page_cache(void *data, struct folio *folio)
{
	struct address_space *mapping = folio->mapping;
	struct asap_window *w;

	if (!current->mm || !mapping || !rcu_access_pointer(asap_open))
		return;
	rcu_read_lock();
	w = rcu_dereference(asap_open);
	if (w && w->app->mm == current->mm) {
		u64 t0 = asap_log_start();
		struct asap_fault f = {
			.inode = mapping->host,
			.key = folio->index,
			.nr = folio_nr_pages(folio),
			.kind = ASAP_LOG_FILE,
		};

		asap_log(w, &f, t0);
	}
	rcu_read_unlock();
}

/*
 * The do_swap_page(struct vm_fault *vmf) to log, at its entry: an app's
 * own fault (ASAP_LOG_ANON_MINOR, until its swap read says otherwise) or a
 * worker's (no mm of its own; ASAP_LOG_ANON_WORKER_MINOR), of a swap
 * entry, while the app's window is open. Returns false for anything else.
 */
static bool asap_swap_fault_kind(struct asap_window *w, struct vm_fault *vmf,
				 u32 *kind)
{
	struct mm_struct *mm = vmf->vma->vm_mm;

	if (!w || w->app->mm != mm)
		return false;
	if (non_swap_entry(pte_to_swp_entry(vmf->orig_pte)))
		return false;
	if (current->mm == mm)
		*kind = ASAP_LOG_ANON_MINOR;
	else if (!current->mm && (current->flags & PF_WQ_WORKER))
		*kind = ASAP_LOG_ANON_WORKER_MINOR;
	else
		return false;
	return true;
}

/*
 * Anonymous swap-ins, by default with two entry-only kprobes:
 * do_swap_page() at entry logs the fault as one that found the page in
 * the swap cache, and the swap read of that same entry, which the fault
 * issues in its own task before it maps the page, makes it a miss the
 * fault read in (an app's: ASAP_LOG_ANON; a worker's:
 * ASAP_LOG_ANON_PREPAGED). The read finds its fault's log entry through
 * @reading, hashed by task; the swap entry stored in the log and the
 * reader's kind (app or worker) confirm the match, so a hash collision or
 * a readahead neighbour's read only loses an upgrade, never marks another
 * page or the other kind. A retried fault is logged again at its retry;
 * the learner counts a page once per window, and its miss once even when
 * another thread's wait for that read was logged first (asap_anon_fault()).
 * A read that a concurrent fault or worker issued first leaves the fault a
 * swap-cache hit: it waited for that read. Workers log their swap-cache
 * hits too (the learner ignores them); they are at most the pages they
 * prepage.
 *
 * swapin_kretprobe=1 uses the method before 2026-12-07 instead, kept so
 * that the overhead benchmark can compare the two in one run: a kretprobe
 * on do_swap_page() that logs at the return from its VM_FAULT_ flags.
 */
static int asap_probe_swap_fault(struct kprobe *p, struct pt_regs *regs)
{
	struct vm_fault *vmf = (void *)regs_get_kernel_argument(regs, 0);
	struct asap_window *w;
	u32 kind;
	int i;

	if (!rcu_access_pointer(asap_open))
		return 0;
	rcu_read_lock();
	w = rcu_dereference(asap_open);
	if (asap_swap_fault_kind(w, vmf, &kind)) {
		u64 t0 = asap_log_start();
		struct asap_fault f = {
			.swp = pte_to_swp_entry(vmf->orig_pte).val,
			.key = vmf->address & PAGE_MASK,
			.nr = 1,
			.kind = kind,
		};

		i = asap_log(w, &f, t0);
		if (i >= 0)
			WRITE_ONCE(w->reading[hash_ptr(current,
						       ASAP_READING_BITS)],
				   i + 1);
	}
	rcu_read_unlock();
	return 0;
}

/* swap_readpage() / swap_read_folio() at entry: see above. */
static int asap_probe_swap_read(struct kprobe *p, struct pt_regs *regs)
{
	void *arg0 = (void *)regs_get_kernel_argument(regs, 0);
	struct asap_window *w;
	struct asap_fault *f;
	unsigned int i;

	if (!rcu_access_pointer(asap_open))
		return 0;
	rcu_read_lock();
	w = rcu_dereference(asap_open);
	if (!w)
		goto out;
	i = READ_ONCE(w->reading[hash_ptr(current, ASAP_READING_BITS)]);
	if (!i || i > min_t(unsigned int, atomic_read(&w->len),
			    asap_log_entries))
		goto out;
	f = &w->log[i - 1];
	if (READ_ONCE(f->swp) != mobio_swap_read_entry(arg0))
		goto out;
	/* Only the kind of the reader: the slot may be another task's. */
	if (current->mm == w->app->mm)
		cmpxchg(&f->kind, ASAP_LOG_ANON_MINOR, ASAP_LOG_ANON);
	else if (!current->mm && (current->flags & PF_WQ_WORKER))
		cmpxchg(&f->kind, ASAP_LOG_ANON_WORKER_MINOR,
			ASAP_LOG_ANON_PREPAGED);
out:
	rcu_read_unlock();
	return 0;
}

static struct kprobe asap_kp_swap_fault = {
	.symbol_name = "do_swap_page",
	.pre_handler = asap_probe_swap_fault,
};

static struct kprobe asap_kp_swap_read = {
	.symbol_name = MOBIO_SWAP_READ_SYMBOL,
	.pre_handler = asap_probe_swap_read,
};

static struct kprobe *asap_kps[] = {
	&asap_kp_swap_fault,
	&asap_kp_swap_read,
};

/* What the entry of do_swap_page() tells its return (swapin_kretprobe). */
struct asap_swap_call {
	struct mm_struct *mm;
	unsigned long swp;
	unsigned long addr;
	u64 entry_ns;		/* the entry probe's own time, if timed */
	bool timed;
	u32 kind;
};

/* do_swap_page() at entry (swapin_kretprobe): 0 to see its return. */
static int asap_probe_swap_entry(struct kretprobe_instance *ri,
				 struct pt_regs *regs)
{
	struct vm_fault *vmf = (void *)regs_get_kernel_argument(regs, 0);
	struct asap_swap_call *c = (void *)ri->data;
	struct asap_window *w;
	int ret = 1;

	if (!rcu_access_pointer(asap_open))
		return 1;
	rcu_read_lock();
	w = rcu_dereference(asap_open);
	if (asap_swap_fault_kind(w, vmf, &c->kind)) {
		u64 t0 = asap_log_start();

		c->mm = vmf->vma->vm_mm;
		c->swp = pte_to_swp_entry(vmf->orig_pte).val;
		c->addr = vmf->address & PAGE_MASK;
		c->timed = t0;
		c->entry_ns = t0 ? ktime_get_ns() - t0 : 0;
		ret = 0;
	}
	rcu_read_unlock();
	return ret;
}

/*
 * do_swap_page() returned (swapin_kretprobe): log the page if the fault
 * did its work. A fault that will be retried is left to its retry, unless
 * it read the page (VM_FAULT_MAJOR is set before the retry: the retry then
 * finds the page in the swap cache and would look like a hit). A worker's
 * fault that found the page in the swap cache is not logged (it brought
 * nothing in).
 */
static int asap_probe_swap_ret(struct kretprobe_instance *ri,
			       struct pt_regs *regs)
{
	struct asap_swap_call *c = (void *)ri->data;
	vm_fault_t ret = (__force vm_fault_t)regs_return_value(regs);
	bool major = ret & VM_FAULT_MAJOR;
	u64 t0 = c->timed ? ktime_get_ns() - c->entry_ns : 0;
	struct asap_fault f = {
		.swp = c->swp,
		.key = c->addr,
		.nr = 1,
		.kind = c->kind,
	};
	struct asap_window *w;

	if (ret & VM_FAULT_ERROR)
		return 0;
	if ((ret & VM_FAULT_RETRY) && !major)
		return 0;
	if (major)
		f.kind = c->kind == ASAP_LOG_ANON_MINOR ? ASAP_LOG_ANON :
			 ASAP_LOG_ANON_PREPAGED;
	else if (c->kind == ASAP_LOG_ANON_WORKER_MINOR)
		return 0;
	rcu_read_lock();
	w = rcu_dereference(asap_open);
	if (w && w->app->mm == c->mm)
		asap_log(w, &f, t0);
	rcu_read_unlock();
	return 0;
}

static struct kretprobe asap_krp_swap = {
	.kp.symbol_name = "do_swap_page",
	.entry_handler = asap_probe_swap_entry,
	.handler = asap_probe_swap_ret,
	.data_size = sizeof(struct asap_swap_call),
};

/* Probes the anonymous swap-ins, as swapin_kretprobe says. */
static int asap_swapin_probes_register(void)
{
	int ret;

	if (asap_swapin_kretprobe) {
		/* One instance per fault in flight: a fault may sleep in I/O. */
		asap_krp_swap.maxactive = max_t(int, 64,
						4 * num_possible_cpus());
		ret = register_kretprobe(&asap_krp_swap);
		if (ret)
			pr_err("kretprobe on do_swap_page: %d\n", ret);
		return ret;
	}
	ret = register_kprobes(asap_kps, ARRAY_SIZE(asap_kps));
	if (ret)
		pr_err("kprobes on do_swap_page and %s: %d\n",
		       MOBIO_SWAP_READ_SYMBOL, ret);
	return ret;
}

static void asap_swapin_probes_unregister(void)
{
	if (asap_swapin_kretprobe)
		unregister_kretprobe(&asap_krp_swap);
	else
		unregister_kprobes(asap_kps, ARRAY_SIZE(asap_kps));
}

/* Calls of the probed functions the probes missed (reentrancy, no room). */
static unsigned long asap_swapin_probes_missed(void)
{
	if (asap_swapin_kretprobe)
		return READ_ONCE(asap_krp_swap.nmissed) +
		       READ_ONCE(asap_krp_swap.kp.nmissed);
	return READ_ONCE(asap_kp_swap_fault.nmissed) +
	       READ_ONCE(asap_kp_swap_read.nmissed);
}

/* --- Switch triggers --------------------------------------------------- */

/*
 * A trigger (a task moved into the foreground cgroup, a stopped process
 * continued) fires in atomic context: the app to switch to is kept here
 * (the latest wins) and a work item does the switch.
 */
static DEFINE_SPINLOCK(asap_trigger_lock);
static struct pid *asap_trigger_pid;	/* under asap_trigger_lock */
static u32 asap_trigger_why;		/* its enum asap_trigger, likewise */
static u64 asap_trigger_ns;		/* when it fired, likewise */
static atomic64_t asap_triggers[2];	/* cgroup moves, SIGCONTs */
static struct cgroup *asap_fg_cgrp;	/* the foreground cgroup, or NULL */

static void asap_trigger_fn(struct work_struct *work);
static DECLARE_WORK(asap_trigger_work, asap_trigger_fn);

static void asap_trigger(struct task_struct *task, u32 why)
{
	struct pid *pid, *old;
	unsigned long flags;

	if (task->flags & PF_KTHREAD)
		return;
	atomic64_inc(&asap_triggers[why - ASAP_TRIGGER_CGROUP]);
	pid = get_task_pid(task, PIDTYPE_TGID);
	spin_lock_irqsave(&asap_trigger_lock, flags);
	old = asap_trigger_pid;
	asap_trigger_pid = pid;
	asap_trigger_why = why;
	asap_trigger_ns = ktime_get_ns();
	spin_unlock_irqrestore(&asap_trigger_lock, flags);
	put_pid(old);
	/* A switch is what the user waits for: ahead of other work. */
	queue_work(system_highpri_wq, &asap_trigger_work);
}

/* cgroup_attach_task: @task (and its group) moved into @dst. */
static void asap_probe_attach(void *data, struct cgroup *dst,
			      const char *path, struct task_struct *task,
			      bool threadgroup)
{
	if (dst == asap_fg_cgrp)
		asap_trigger(task, ASAP_TRIGGER_CGROUP);
}

/* signal_generate: @sig generated for @task. */
static void asap_probe_signal(void *data, int sig, struct kernel_siginfo *info,
			      struct task_struct *task, int group, int result)
{
	/*
	 * prepare_signal() just flagged the end of a group stop (the task
	 * clears the flag when it reports it, in get_signal()). @result is
	 * not looked at: a SIGCONT without a handler is "ignored" once it
	 * has resumed the group.
	 */
	if (sig == SIGCONT && READ_ONCE(asap_sigcont) &&
	    (task->signal->flags & SIGNAL_CLD_CONTINUED))
		asap_trigger(task, ASAP_TRIGGER_SIGCONT);
}

/* Built-in tracepoints this module attaches to (their symbols are not
 * exported: found by name).
 */
static struct asap_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
	bool registered;
} asap_tps[] = {
	{ "mm_filemap_add_to_page_cache", asap_probe_add_to_page_cache },
	{ "cgroup_attach_task", asap_probe_attach },
	{ "signal_generate", asap_probe_signal },
};

static void asap_find_tp(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(asap_tps); i++)
		if (!strcmp(tp->name, asap_tps[i].name))
			asap_tps[i].tp = tp;
}

static void asap_tps_unregister(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(asap_tps); i++) {
		if (!asap_tps[i].registered)
			continue;
		tracepoint_probe_unregister(asap_tps[i].tp, asap_tps[i].probe,
					    NULL);
		asap_tps[i].registered = false;
	}
	tracepoint_synchronize_unregister();
}

static int asap_tps_register(void)
{
	unsigned int i;
	int ret;

	for_each_kernel_tracepoint(asap_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(asap_tps); i++) {
		if (!asap_tps[i].tp) {
			pr_err("tracepoint %s not found\n", asap_tps[i].name);
			ret = -ENOENT;
			goto err;
		}
		ret = tracepoint_probe_register(asap_tps[i].tp,
						asap_tps[i].probe, NULL);
		if (ret) {
			pr_err("tracepoint %s: %d\n", asap_tps[i].name, ret);
			goto err;
		}
		asap_tps[i].registered = true;
	}
	return 0;

err:
	asap_tps_unregister();
	return ret;
}

/* --- Apps -------------------------------------------------------------- */

static struct asap_app *asap_app_find(struct pid *pid)
{
	struct asap_app *app;

	list_for_each_entry(app, &asap_apps, node)
		if (app->pid == pid)
			return app;
	return NULL;
}

static struct asap_app *asap_app_create(struct task_struct *task,
					struct pid *tgid)
{
	struct asap_app *app;
	struct mm_struct *mm;

	app = kzalloc(sizeof(*app), GFP_KERNEL);
	if (!app)
		return NULL;
	mm = get_task_mm(task);
	if (!mm) {
		kfree(app);
		return NULL;
	}
	mmgrab(mm);
	mmput(mm);
	app->mm = mm;
	app->pid = get_pid(tgid);
	app->tgid = pid_nr(tgid);
	get_task_comm(app->comm, task);
	INIT_LIST_HEAD(&app->files);
	xa_init(&app->anon);
	return app;
}

/**
 * asap_app_lookup() - the tracked app of a process
 * @nr: process id in the caller's pid namespace
 *
 * Context: asap_lock held.
 * Return: the app, or NULL when that process is not tracked.
 */
struct asap_app *asap_app_lookup(pid_t nr)
{
	struct asap_app *app = NULL;
	struct pid *pid;

	rcu_read_lock();
	pid = find_vpid(nr);
	if (pid)
		app = asap_app_find(pid);
	rcu_read_unlock();
	return app;
}

/*
 * The app of @task's thread group @tgid, tracked from now on. A tracked
 * app's command name is taken again: it changes at exec() and through
 * PR_SET_NAME, and events and listings name the app as it is now.
 */
static struct asap_app *asap_app_track(struct task_struct *task,
				       struct pid *tgid,
				       struct netlink_ext_ack *extack)
{
	struct asap_app *app = asap_app_find(tgid);

	if (app) {
		get_task_comm(app->comm, task);
		return app;
	}
	if (asap_nr_apps >= asap_apps_max) {
		NL_SET_ERR_MSG(extack, "apps_max apps tracked already");
		return ERR_PTR(-ENOSPC);
	}
	app = asap_app_create(task, tgid);
	if (!app) {
		NL_SET_ERR_MSG(extack, "process is exiting or out of memory");
		return ERR_PTR(task->mm ? -ENOMEM : -EINVAL);
	}
	list_add_tail(&app->node, &asap_apps);
	asap_nr_apps++;
	return app;
}

/**
 * asap_app_get() - the app of a process, tracked from now on
 * @nr: process id in the caller's pid namespace
 * @extack: for the reason of a refusal
 *
 * Context: asap_lock held, may sleep.
 * Return: the app; ERR_PTR(-ESRCH) no such process, -EINVAL a kernel
 * thread or exiting process, -ENOSPC apps_max apps tracked, -ENOMEM.
 */
struct asap_app *asap_app_get(pid_t nr, struct netlink_ext_ack *extack)
{
	struct task_struct *task;
	struct asap_app *app;
	struct pid *tgid;

	rcu_read_lock();
	task = pid_task(find_vpid(nr), PIDTYPE_PID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task) {
		NL_SET_ERR_MSG(extack, "no such process");
		return ERR_PTR(-ESRCH);
	}
	if (task->flags & PF_KTHREAD) {
		NL_SET_ERR_MSG(extack, "a kernel thread is not an app");
		app = ERR_PTR(-EINVAL);
	} else {
		tgid = get_task_pid(task, PIDTYPE_TGID);
		app = asap_app_track(task, tgid, extack);
		put_pid(tgid);
	}
	put_task_struct(task);
	return app;
}

/**
 * asap_app_busy() - whether an app's switch window is open
 * @app: the app
 *
 * Its tables are then being learned and prepaged: they are not replaced.
 * Context: asap_lock held.
 * Return: true when the window is open.
 */
bool asap_app_busy(struct asap_app *app)
{
	struct asap_window *w = rcu_dereference_protected(asap_open,
					lockdep_is_held(&asap_lock));

	return (w && w->app == app) ||
	       (asap_learning && asap_learning->app == app) || app->job;
}

/* Caller holds asap_lock and made sure no window or job is open. */
static void asap_app_destroy(struct asap_app *app)
{
	list_del(&app->node);
	asap_nr_apps--;
	asap_job_unprepare(app);
	asap_app_free_tables(app);
	mmdrop(app->mm);
	put_pid(app->pid);
	kfree(app);
}

/* --- Switch windows ---------------------------------------------------- */

static struct asap_window *asap_open_window(void)
{
	return rcu_dereference_protected(asap_open,
					 lockdep_is_held(&asap_lock));
}

/*
 * Close the open window and hand it to the learner, whose slot is free
 * (callers make sure). @cancel: the app left the foreground, its workers
 * stop after their current page. The caller then calls asap_sample() for
 * the app returned (after opening the next window: it does not delay the
 * next app's prepaging). Caller holds asap_lock.
 * Return: the app whose window closed, or NULL.
 */
static struct asap_app *asap_window_close(bool cancel)
{
	struct asap_window *w = asap_open_window();

	if (!w)
		return NULL;
	WARN_ON_ONCE(asap_learning);
	w->cancel = cancel;
	if (w->job && cancel)
		WRITE_ONCE(w->job->cancel, true);
	RCU_INIT_POINTER(asap_open, NULL);
	asap_learning = w;
	queue_work(system_unbound_wq, &asap_learn_work);
	return w->app;
}

/* Open a window for @app in the free log; caller holds asap_lock. */
static void asap_window_open(struct asap_app *app, u64 trigger_ns)
{
	struct asap_window *w = &asap_windows[0];

	if (w == asap_learning)
		w = &asap_windows[1];
	w->app = app;
	atomic_set(&w->len, 0);
	/* No probe holds it: the learner waited for a grace period. */
	memset(w->reading, 0, sizeof(w->reading));
	w->cancel = false;
	w->trigger_ns = trigger_ns;
	app->switches++;
	asap_total_switches++;
	/* Published first: the workers' faults are logged too. */
	rcu_assign_pointer(asap_open, w);
	w->job = READ_ONCE(asap_prepage) ? asap_job_start(app, trigger_ns) :
					   NULL;
	app->job = w->job;
	if (asap_window_ms)
		mod_delayed_work(system_wq, &asap_window_dwork,
				 msecs_to_jiffies(asap_window_ms));
}

/* The learner: see the top of this file. */
static void asap_learn_fn(struct work_struct *work)
{
	struct asap_window *w;
	struct asap_app *app;
	bool left = false;

	mutex_lock(&asap_lock);
	w = asap_learning;
	mutex_unlock(&asap_lock);
	if (!w)
		return;
	/* The probes run under RCU: none is appending after this. */
	synchronize_rcu();
	if (w->job)
		left = asap_job_stop(w->job, w->cancel);

	mutex_lock(&asap_lock);
	app = w->app;
	app->job = NULL;
	if (left) {
		app->cancelled++;
		asap_total_cancelled++;
	}
	asap_learn(app, w->log, min_t(unsigned int, atomic_read(&w->len),
				      asap_log_entries));
	asap_job_prepare(app);
	w->job = NULL;
	w->app = NULL;
	asap_learning = NULL;
	mutex_unlock(&asap_lock);
}

/**
 * asap_learn_wait() - wait until the last closed window is learned from
 *
 * Context: process, may sleep; asap_lock not held.
 */
void asap_learn_wait(void)
{
	flush_work(&asap_learn_work);
}

static void asap_window_timeout(struct work_struct *work)
{
	struct asap_app *app;

	mutex_lock(&asap_lock);
	if (!asap_learning) {
		app = asap_window_close(false);
		if (app)
			asap_sample(app);
	} else if (asap_open_window()) {
		mod_delayed_work(system_wq, &asap_window_dwork, HZ / 10);
	}
	mutex_unlock(&asap_lock);
}

/**
 * asap_switch_pid() - bring the app of a process to the foreground
 * @nr: process id in the caller's pid namespace
 * @extack: for the reason of a refusal
 *
 * The app that was in the foreground leaves it: its prepaging is cancelled
 * and its window learned from. A process not tracked yet becomes an app
 * (its thread group).
 * Context: process, may sleep; takes asap_lock.
 * Return: 0; -ESRCH no such process, -EINVAL a kernel thread or exiting
 * process, -ENOSPC apps_max apps tracked, -ENOMEM.
 */
int asap_switch_pid(pid_t nr, struct netlink_ext_ack *extack)
{
	u64 t0 = ktime_get_ns();
	struct task_struct *task;
	int ret;

	rcu_read_lock();
	task = pid_task(find_vpid(nr), PIDTYPE_PID);
	if (task)
		get_task_struct(task);
	rcu_read_unlock();
	if (!task) {
		NL_SET_ERR_MSG(extack, "no such process");
		return -ESRCH;
	}
	ret = asap_switch_task(task, ASAP_TRIGGER_NETLINK, t0, extack);
	put_task_struct(task);
	return ret;
}

/**
 * asap_switch_cgroup() - bring the app of a cgroup to the foreground
 * @cgrp: a cgroup v2 cgroup
 * @extack: for the reason of a refusal
 *
 * An app is one thread group (its tables are addresses of one mm): the
 * cgroup must hold exactly one process, judged by the cgroup of each
 * thread group's leader (descendant cgroups not included). That process
 * is switched to as by asap_switch_pid().
 * Context: process, may sleep; takes asap_lock.
 * Return: 0; -ESRCH the cgroup holds no process, -EOPNOTSUPP it holds
 * several; the errors of asap_switch_pid().
 */
int asap_switch_cgroup(struct cgroup *cgrp, struct netlink_ext_ack *extack)
{
	struct task_struct *p, *found = NULL;
	u64 t0 = ktime_get_ns();
	unsigned int n = 0;
	int ret;

	rcu_read_lock();
	for_each_process(p) {
		if ((p->flags & PF_KTHREAD) || task_dfl_cgroup(p) != cgrp)
			continue;
		if (!n++)
			found = p;
	}
	if (n == 1)
		get_task_struct(found);
	rcu_read_unlock();
	if (!n) {
		NL_SET_ERR_MSG(extack, "no process in this cgroup");
		return -ESRCH;
	}
	if (n > 1) {
		NL_SET_ERR_MSG(extack,
			       "an app is one process and this cgroup holds several: switch by pid");
		return -EOPNOTSUPP;
	}
	ret = asap_switch_task(found, ASAP_TRIGGER_NETLINK, t0, extack);
	put_task_struct(found);
	return ret;
}

static void asap_trigger_fn(struct work_struct *work)
{
	struct task_struct *task;
	struct pid *pid;
	u64 t0;
	u32 why;

	spin_lock_irq(&asap_trigger_lock);
	pid = asap_trigger_pid;
	why = asap_trigger_why;
	t0 = asap_trigger_ns;
	asap_trigger_pid = NULL;
	spin_unlock_irq(&asap_trigger_lock);
	if (!pid)
		return;
	task = get_pid_task(pid, PIDTYPE_TGID);
	if (task) {
		asap_switch_task(task, why, t0, NULL);
		put_task_struct(task);
	}
	put_pid(pid);
}

/*
 * exec() gave @app's process a new mm: its tables are addresses and files
 * of the old one. Start them again on the new mm. The app is not busy.
 * Caller holds asap_lock.
 */
static void asap_app_new_mm(struct asap_app *app, struct mm_struct *mm)
{
	asap_job_unprepare(app);
	asap_app_free_tables(app);
	app->profiled = 0;
	mmgrab(mm);
	mmdrop(app->mm);
	app->mm = mm;
	app->mm_changes++;
}

/*
 * Switch to @task's app (see asap_switch_pid()), for @trigger at
 * @trigger_ns.
 */
static int asap_switch_task(struct task_struct *task, u32 trigger,
			    u64 trigger_ns, struct netlink_ext_ack *extack)
{
	struct asap_app *app, *left;
	struct asap_window *w;
	struct mm_struct *mm;
	struct pid *tgid;
	int ret = 0;

	if (task->flags & PF_KTHREAD) {
		NL_SET_ERR_MSG(extack, "a kernel thread is not an app");
		return -EINVAL;
	}
	mm = get_task_mm(task);
	if (!mm) {
		NL_SET_ERR_MSG(extack, "process is exiting");
		return -EINVAL;
	}
	tgid = get_task_pid(task, PIDTYPE_TGID);

	mutex_lock(&asap_lock);
	for (;;) {
		app = asap_app_track(task, tgid, extack);
		if (IS_ERR(app)) {
			ret = PTR_ERR(app);
			goto out_unlock;
		}
		w = asap_open_window();
		/*
		 * The same app again (or after an exec()) closes its window
		 * first; learning it must end before it opens another, and
		 * the open window needs the learner's slot.
		 */
		if (w && w->app == app && !asap_learning) {
			asap_sample(asap_window_close(false));
			w = NULL;
		}
		if (!asap_learning || (!w && asap_learning->app != app))
			break;
		mutex_unlock(&asap_lock);
		asap_learn_wait();
		mutex_lock(&asap_lock);
	}
	if (app->mm != mm)
		asap_app_new_mm(app, mm);
	left = asap_window_close(true);
	asap_front = app;
	asap_window_open(app, trigger_ns);
	if (left)
		asap_sample(left);
	asap_genl_event_switch(app, trigger);
out_unlock:
	mutex_unlock(&asap_lock);
	put_pid(tgid);
	mmput(mm);
	return ret;
}

/* Free the tables of apps whose process is gone. */
static void asap_reap(struct work_struct *work)
{
	struct asap_app *app, *tmp;
	struct asap_window *w;

again:
	mutex_lock(&asap_lock);
	list_for_each_entry_safe(app, tmp, &asap_apps, node) {
		if (pid_has_task(app->pid, PIDTYPE_TGID))
			continue;
		w = asap_open_window();
		if (w && w->app == app && !asap_learning)
			asap_window_close(true);	/* gone: no sample */
		if (asap_app_busy(app)) {
			/* Its window is being learned from: after that. */
			mutex_unlock(&asap_lock);
			asap_learn_wait();
			goto again;
		}
		if (asap_front == app)
			asap_front = NULL;
		asap_app_destroy(app);
	}
	mutex_unlock(&asap_lock);
	schedule_delayed_work(&asap_reap_dwork, ASAP_REAP_INTERVAL);
}

/* --- Counters ---------------------------------------------------------- */

static u64 asap_pct(u64 num, u64 den)
{
	return den ? div64_u64(100 * num, den) : 0;
}

/**
 * asap_collect_stats() - the counters of an app, or the global ones
 * @app: the app, or NULL for the global counters
 * @st: filled with up to @max counters
 * @max: room in @st (ASAP_NR_STATS is enough)
 *
 * Context: asap_lock held.
 * Return: the number of counters filled.
 */
int asap_collect_stats(struct asap_app *app, struct mobio_stat *st,
		       unsigned int max)
{
	static const char * const kname[ASAP_NR_KINDS][9] = {
		[ASAP_FILE] = { "file_faults", "file_prepaged_pages",
				"file_hits", "file_unused",
				"file_precision_pct", "file_recall_pct",
				"file_entries", "file_table_pages",
				"file_faults_late" },
		[ASAP_ANON] = { "anon_faults", "anon_prepaged_pages",
				"anon_hits", "anon_unused",
				"anon_precision_pct", "anon_recall_pct",
				"anon_entries", "anon_table_pages",
				"anon_faults_late" },
	};
	u64 v[ASAP_NR_KINDS][7] = { { 0 } };
	u64 ns = 0, bytes = 0, dropped = 0;
	unsigned int n = 0, k;
	struct asap_app *a;

#define ASAP_PUT(nm, val) do {				\
		if (n < max) {				\
			st[n].name = (nm);		\
			st[n].value = (val);		\
			n++;				\
		}					\
	} while (0)

	list_for_each_entry(a, &asap_apps, node) {
		if (app && a != app)
			continue;
		for (k = 0; k < ASAP_NR_KINDS; k++) {
			v[k][0] += atomic64_read(&a->k[k].faults);
			v[k][1] += atomic64_read(&a->k[k].prepaged);
			v[k][2] += atomic64_read(&a->k[k].hits);
			v[k][3] += atomic64_read(&a->k[k].unused);
			v[k][4] += atomic64_read(&a->k[k].entries);
			v[k][5] += atomic64_read(&a->k[k].table);
			v[k][6] += atomic64_read(&a->k[k].faults_late);
		}
		ns += atomic64_read(&a->prepage_ns);
		bytes += atomic64_read(&a->read_bytes);
		dropped += atomic64_read(&a->log_dropped);
	}
	if (app) {
		ASAP_PUT("switches", app->switches);
		ASAP_PUT("file_profile_switches", app->profiled);
		ASAP_PUT("prepage_cancelled", app->cancelled);
		ASAP_PUT("file_faults_unmapped", app->file_unmapped);
		ASAP_PUT("file_readahead_unused", app->file_readahead_unused);
		ASAP_PUT("prepage_start_us", READ_ONCE(app->prepage_start_us));
		ASAP_PUT("prepage_start_max_us",
			 READ_ONCE(app->prepage_start_max_us));
		ASAP_PUT("mm_changes", app->mm_changes);
	} else {
		ASAP_PUT("switches", asap_total_switches);
		ASAP_PUT("apps", asap_nr_apps);
		ASAP_PUT("apps_max", asap_apps_max);
		ASAP_PUT("entries", atomic_read(&asap_nr_entries));
		ASAP_PUT("entries_max", asap_entries_max);
		ASAP_PUT("app_entries_max", asap_app_entries_max);
		ASAP_PUT("entries_dropped",
			 atomic64_read(&asap_entries_dropped));
		ASAP_PUT("prepage_cancelled", asap_total_cancelled);
		ASAP_PUT("workers", asap_workers);
		ASAP_PUT("triggers_cgroup", atomic64_read(&asap_triggers[0]));
		ASAP_PUT("triggers_sigcont", atomic64_read(&asap_triggers[1]));
		ASAP_PUT("logged", asap_pcpu_sum(&asap_logged));
		ASAP_PUT("log_ns", asap_pcpu_sum(&asap_log_ns));
		ASAP_PUT("log_missed", asap_swapin_probes_missed());
	}
	for (k = 0; k < ASAP_NR_KINDS; k++) {
		ASAP_PUT(kname[k][0], v[k][0]);
		ASAP_PUT(kname[k][1], v[k][1]);
		ASAP_PUT(kname[k][2], v[k][2]);
		ASAP_PUT(kname[k][3], v[k][3]);
		ASAP_PUT(kname[k][4], asap_pct(v[k][2], v[k][1]));
		ASAP_PUT(kname[k][5], asap_pct(v[k][2], v[k][2] + v[k][0]));
		ASAP_PUT(kname[k][6], v[k][4]);
		ASAP_PUT(kname[k][7], v[k][5]);
		ASAP_PUT(kname[k][8], v[k][6]);
	}
	ASAP_PUT("prepage_ns", ns);
	ASAP_PUT("prepage_read_bytes", bytes);
	ASAP_PUT("log_dropped", dropped);
#undef ASAP_PUT
	return n;
}

/* --- debugfs ----------------------------------------------------------- */

static void asap_seq_stats(struct seq_file *m, struct asap_app *app)
{
	struct mobio_stat st[ASAP_NR_STATS];
	int i, n;

	n = asap_collect_stats(app, st, ARRAY_SIZE(st));
	for (i = 0; i < n; i++)
		seq_printf(m, "%s %llu\n", st[i].name, st[i].value);
}

static int asap_stats_show(struct seq_file *m, void *v)
{
	asap_learn_wait();
	mutex_lock(&asap_lock);
	asap_seq_stats(m, NULL);
	mutex_unlock(&asap_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(asap_stats);

static int asap_apps_show(struct seq_file *m, void *v)
{
	struct asap_app *app;

	asap_learn_wait();
	mutex_lock(&asap_lock);
	list_for_each_entry(app, &asap_apps, node) {
		seq_printf(m, "app %d %s%s\n", app->tgid, app->comm,
			   app == asap_front ? " foreground" : "");
		asap_seq_stats(m, app);
	}
	mutex_unlock(&asap_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(asap_apps);

/* --- Module ------------------------------------------------------------ */

static int __init asap_init(void)
{
	unsigned int i;
	int ret;

	/* Not more runnable workers than CPUs beside the app. */
	if (!asap_workers)
		asap_workers = num_online_cpus() - 1;
	asap_workers = clamp(asap_workers, 1U, 64U);
	asap_profile_switches = clamp(asap_profile_switches, 1U, 255U);
	asap_anon_timeout = clamp(asap_anon_timeout, 1U, 255U);
	if (!asap_log_entries || asap_log_entries > (1U << 24)) {
		pr_err("log_entries must be 1..16777216\n");
		return -EINVAL;
	}

	for (i = 0; i < ARRAY_SIZE(asap_windows); i++) {
		struct asap_window *w = &asap_windows[i];

		w->log = kvmalloc_array(asap_log_entries, sizeof(*w->log),
					GFP_KERNEL);
		if (!w->log) {
			ret = -ENOMEM;
			goto err_log;
		}
	}
	/*
	 * Room for a new job's workers beside a cancelled job's, which end
	 * after their current page: a switch never queues behind them.
	 */
	asap_wq = alloc_workqueue("asap_prepage", WQ_UNBOUND,
				  2 * asap_workers);
	if (!asap_wq) {
		ret = -ENOMEM;
		goto err_log;
	}

	if (asap_fg_cgroup && *asap_fg_cgroup) {
		asap_fg_cgrp = cgroup_get_from_path(asap_fg_cgroup);
		if (IS_ERR(asap_fg_cgrp)) {
			ret = PTR_ERR(asap_fg_cgrp);
			asap_fg_cgrp = NULL;
			pr_err("fg_cgroup %s: no such cgroup v2 path (%d)\n",
			       asap_fg_cgroup, ret);
			goto err_wq;
		}
	}
	ret = asap_tps_register();
	if (ret)
		goto err_cgrp;
	ret = asap_swapin_probes_register();
	if (ret)
		goto err_tp;
	ret = asap_genl_init();
	if (ret)
		goto err_kp;

	asap_debugfs_dir = debugfs_create_dir("asap", NULL);
	debugfs_create_file("stats", 0400, asap_debugfs_dir, NULL,
			    &asap_stats_fops);
	debugfs_create_file("apps", 0400, asap_debugfs_dir, NULL,
			    &asap_apps_fops);
	schedule_delayed_work(&asap_reap_dwork, ASAP_REAP_INTERVAL);
	pr_info("%u workers, profile %u/%u switches, log %u faults\n",
		asap_workers, asap_profile_min, asap_profile_switches,
		asap_log_entries);
	return 0;

err_kp:
	asap_swapin_probes_unregister();
err_tp:
	asap_tps_unregister();
	cancel_work_sync(&asap_trigger_work);
	put_pid(asap_trigger_pid);
err_cgrp:
	if (asap_fg_cgrp)
		cgroup_put(asap_fg_cgrp);
err_wq:
	destroy_workqueue(asap_wq);
err_log:
	for (i = 0; i < ARRAY_SIZE(asap_windows); i++)
		kvfree(asap_windows[i].log);
	return ret;
}

static void __exit asap_exit(void)
{
	struct asap_app *app, *tmp;
	unsigned int i;

	asap_genl_exit();
	debugfs_remove_recursive(asap_debugfs_dir);
	/* No trigger after this; the file probe stays until the end. */
	tracepoint_probe_unregister(asap_tps[1].tp, asap_tps[1].probe, NULL);
	tracepoint_probe_unregister(asap_tps[2].tp, asap_tps[2].probe, NULL);
	asap_tps[1].registered = false;
	asap_tps[2].registered = false;
	tracepoint_synchronize_unregister();
	cancel_work_sync(&asap_trigger_work);
	put_pid(asap_trigger_pid);
	asap_trigger_pid = NULL;
	cancel_delayed_work_sync(&asap_reap_dwork);
	cancel_delayed_work_sync(&asap_window_dwork);

	asap_learn_wait();
	mutex_lock(&asap_lock);
	asap_window_close(true);
	asap_front = NULL;
	mutex_unlock(&asap_lock);
	asap_learn_wait();
	/* A timeout may have run between the cancel and the lock. */
	cancel_delayed_work_sync(&asap_window_dwork);
	asap_learn_wait();

	asap_swapin_probes_unregister();
	asap_tps_unregister();
	destroy_workqueue(asap_wq);
	if (asap_fg_cgrp)
		cgroup_put(asap_fg_cgrp);

	mutex_lock(&asap_lock);
	list_for_each_entry_safe(app, tmp, &asap_apps, node)
		asap_app_destroy(app);
	mutex_unlock(&asap_lock);
	for (i = 0; i < ARRAY_SIZE(asap_windows); i++)
		kvfree(asap_windows[i].log);
}

module_init(asap_init);
module_exit(asap_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ASAP: app-switch footprint learning and parallel prepaging");
