/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ASAP: shared definitions of asap-prefetch.ko. See asap_main.c for the
 * overview, asap_learn.c for the estimators and asap_prepage.c for the
 * workers.
 */
#ifndef _ASAP_H
#define _ASAP_H

#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/asap.h>
#include "mobio_genl.h"
#include "asap_rules.h"

/* Module parameters (asap_main.c). */
extern unsigned int asap_workers;
extern unsigned int asap_profile_switches;
extern unsigned int asap_profile_min;
extern unsigned int asap_file_merge_pages;
extern unsigned int asap_anon_timeout;
extern unsigned int asap_log_entries;
extern unsigned int asap_app_entries_max;
extern unsigned int asap_entries_max;
extern unsigned int asap_apps_max;
extern unsigned int asap_window_ms;
extern unsigned int asap_prepage_throttle_ms;
extern unsigned int asap_test_page_delay_ms;
extern bool asap_prepage_backward;

/*
 * An estimator entry, an xarray value: a page of a file (by index) or of
 * the anonymous memory (by virtual page number). Its fields (ASAP_E_*) and
 * the rules that change them are in asap_rules.h.
 */

/* Kinds of pages, for counters. */
enum asap_kind {
	ASAP_FILE,
	ASAP_ANON,
	ASAP_NR_KINDS,
};

/**
 * struct asap_kstats - counters of one kind of page
 * @faults: pages the app faulted in during its windows (misses)
 * @faults_late: of @faults, pages the prepaging table held when the window
 *	opened: the app reached them before a worker did
 * @prepaged: pages a worker brought in
 * @hits: prepaged pages the app used in the window
 * @unused: prepaged pages it did not use
 * @entries: estimator entries now (candidates and table)
 * @table: entries in the prepaging table now
 */
struct asap_kstats {
	atomic64_t faults;
	atomic64_t faults_late;
	atomic64_t prepaged;
	atomic64_t hits;
	atomic64_t unused;
	atomic64_t entries;
	atomic64_t table;
};

/* Kinds of logged faults. */
enum asap_fault_kind {
	ASAP_LOG_FILE,		/* @inode, pages @key.. of a folio added */
	ASAP_LOG_ANON,		/* the app swapped in the page at @key */
	ASAP_LOG_ANON_PREPAGED,	/* a worker swapped in the page at @key */
	ASAP_LOG_ANON_MINOR,	/* the app mapped @key from the swap cache */
	ASAP_LOG_ANON_WORKER_MINOR, /* a worker found @key in the swap cache
				     * (brought nothing in: not learned)
				     */
};

/**
 * struct asap_fault - one logged fault; its place in the log is its order
 * @inode: file faults: the inode (compared, never dereferenced later)
 * @swp: anonymous faults: the swap entry (swp_entry_t.val) the fault
 *	found in the pte, to match the swap read that makes it a miss
 * @key: file: first page index; anon: virtual address
 * @nr: pages (a file folio may hold several)
 * @kind: enum asap_fault_kind
 */
struct asap_fault {
	union {
		struct inode *inode;
		unsigned long swp;
	};
	unsigned long key;
	u32 nr;
	u32 kind;
};

/**
 * struct asap_file - a file of an app, with its estimator entries
 * @node: in asap_app.files
 * @file: a reference to a file the app mapped (held until the app goes)
 * @inode: file_inode(@file), to match logged faults
 * @pages: page index -> estimator entry
 */
struct asap_file {
	struct list_head node;
	struct file *file;
	struct inode *inode;
	struct xarray pages;
};

/**
 * struct asap_extent - a run of pages to prepage
 * @af: the file, or NULL for anonymous memory
 * @start: first page index (file) or virtual page number (anon)
 * @nr: pages
 * @first: earliest first-use order of its pages
 */
struct asap_extent {
	struct asap_file *af;
	unsigned long start;
	unsigned long nr;
	u32 first;
};

struct asap_job;
struct cgroup;

/**
 * struct asap_worker - one work item of a prepaging job
 * @work: queued on asap_wq
 * @job: its job
 */
struct asap_worker {
	struct work_struct work;
	struct asap_job *job;
};

/**
 * struct asap_job - the prepaging of one switch
 * @app: the app (its tables outlive the job: the job is stopped before
 *	the window it belongs to is learned from)
 * @ext: extents, in first-use order; taken from the last
 * @nr_ext: how many
 * @next: extents taken so far
 * @trigger_ns: ktime of the switch's trigger, for prepage_start_us
 * @started: a worker has started
 * @backward: take @ext from the last (asap_prepage_backward at the start)
 * @cancel: set when the app leaves the foreground
 * @interrupted: a worker stopped with an extent half done or left
 * @nr_workers: work items in @workers
 * @workers: the work items
 */
struct asap_job {
	struct asap_app *app;
	struct asap_extent *ext;
	unsigned int nr_ext;
	atomic_t next;
	u64 trigger_ns;
	atomic_t started;
	bool backward;
	bool cancel;
	bool interrupted;
	unsigned int nr_workers;
	struct asap_worker workers[];
};

/**
 * struct asap_app - a tracked app (a thread group)
 * @node: in asap_apps, under asap_lock
 * @pid: the thread group's pid (reference held)
 * @tgid: its number in the initial pid namespace, for messages
 * @comm: its command name at the last switch or profile command to it
 * @mm: its mm, for matching faults and for the workers (mmgrab held;
 *	the address space is used only under mmget_not_zero())
 *
 * @log_dropped: faults of its windows lost because the log was full
 *
 * Under asap_lock:
 * @files: struct asap_file list
 * @nr_files: its length
 * @anon: virtual page number -> estimator entry
 * @nr_entries: estimator entries of both kinds (workers add gap pages)
 * @profiled: file profile switches done (stops at asap_profile_switches)
 * @young_sampled: asap_sample() read the accessed bits as its last window
 *	closed; asap_learn() does not walk them again
 * @job: the prepaging of its last window, until that window is learned
 *	from, or NULL
 * @prep_ext: extents for its next switch, built when its last window was
 *	learned from (NULL: built at the switch)
 * @prep_nr: how many
 *
 * Counters:
 * @switches: windows opened
 * @k: per kind of page
 * @prepage_ns: worker time
 * @read_bytes: bytes the workers brought in
 * @cancelled: prepaging jobs cancelled before they finished
 * @file_unmapped: file faults on files the app does not map (ignored)
 * @file_readahead_unused: logged file pages not mapped when the window
 *	closed (readahead the app did not touch; not learned)
 * @prepage_start_us: the last switch: from its trigger to the first
 *	worker running (written by that worker)
 * @prepage_start_max_us: the largest @prepage_start_us
 * @mm_changes: times its tables restarted because exec() replaced its mm
 */
struct asap_app {
	struct list_head node;
	struct pid *pid;
	pid_t tgid;
	char comm[TASK_COMM_LEN];
	struct mm_struct *mm;

	atomic64_t log_dropped;

	struct list_head files;
	unsigned int nr_files;
	struct xarray anon;
	atomic_t nr_entries;
	unsigned int profiled;
	bool young_sampled;
	struct asap_job *job;
	struct asap_extent *prep_ext;
	unsigned int prep_nr;

	u64 switches;
	struct asap_kstats k[ASAP_NR_KINDS];
	atomic64_t prepage_ns;
	atomic64_t read_bytes;
	u64 cancelled;
	u64 file_unmapped;
	u64 file_readahead_unused;
	u64 prepage_start_us;
	u64 prepage_start_max_us;
	u64 mm_changes;
};

/* Module state (asap_main.c). */
extern struct mutex asap_lock;
extern struct list_head asap_apps;
extern struct asap_app *asap_front;
extern struct workqueue_struct *asap_wq;
extern atomic_t asap_nr_entries;
extern atomic64_t asap_entries_dropped;

/* Global counters that outlive apps. */
extern u64 asap_total_switches;
extern u64 asap_total_cancelled;

int asap_switch_pid(pid_t nr, struct netlink_ext_ack *extack);
int asap_switch_cgroup(struct cgroup *cgrp, struct netlink_ext_ack *extack);
struct asap_app *asap_app_lookup(pid_t nr);
struct asap_app *asap_app_get(pid_t nr, struct netlink_ext_ack *extack);
bool asap_app_busy(struct asap_app *app);
int asap_collect_stats(struct asap_app *app, struct mobio_stat *st,
		       unsigned int max);
#define ASAP_NR_STATS	48

bool asap_entry_add(struct asap_app *app, struct xarray *xa,
		    unsigned long index, unsigned long val);
void asap_entry_del(struct asap_app *app, struct xarray *xa,
		    unsigned long index, unsigned long val);
bool asap_entry_load(struct asap_app *app, struct xarray *xa,
		     unsigned long index, unsigned long val);
struct asap_file *asap_file_by_id(struct asap_app *app, struct mm_struct *mm,
				  u64 dev, u64 ino, u32 gen);
void asap_learn(struct asap_app *app, const struct asap_fault *log,
		unsigned int len);
void asap_sample(struct asap_app *app);
void asap_app_free_tables(struct asap_app *app);

void asap_learn_wait(void);

void asap_job_prepare(struct asap_app *app);
void asap_job_unprepare(struct asap_app *app);
struct asap_job *asap_job_start(struct asap_app *app, u64 trigger_ns);
bool asap_job_stop(struct asap_job *job, bool cancel);

void asap_genl_event_switch(struct asap_app *app, u32 trigger);
int asap_genl_init(void);
void asap_genl_exit(void);

/* Estimator parameters (asap_learn.c). */
extern enum asap_rule_set asap_rules;
extern unsigned int asap_unused_windows;

#endif /* _ASAP_H */
