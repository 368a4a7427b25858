/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Freeblock: the structures shared by the files of freeblock.ko (core,
 * /dev/freeblock, generic netlink, debugfs).
 */
#ifndef _FB_INTERNAL_H
#define _FB_INTERNAL_H

#include <linux/atomic.h>
#include <linux/blkdev.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/freeblock.h>
#include "mobio_genl.h"
#include "freeblock.h"

/* Counters of one disk; see <linux/freeblock.h> for their meaning. */
enum fb_stat_id {
	FB_STAT_TASKS,
	FB_STAT_BLOCKS_DONE,
	FB_STAT_BLOCKS_FAILED,
	FB_STAT_BYTES_DONE,
	FB_STAT_IDLE_TIME_NS,
	FB_STAT_FG_REQUESTS,
	FB_STAT_FG_DELAYED,
	FB_STAT_BG_ISSUED_IDLE,
	FB_STAT_BG_ISSUED_FLOOR,
	FB_STAT_BG_ISSUED_PROMOTED,
	FB_STAT_PROMOTIONS,
	FB_STAT_ABORTS,
	FB_STAT_BG_BIOS,
	FB_STAT_BG_ISSUED_ANY_ORDER,
	FB_NR_COUNTERS,
	/* gauges, computed when collected */
	FB_STAT_TASKS_ACTIVE = FB_NR_COUNTERS,
	FB_STAT_BG_INFLIGHT,
	FB_STAT_FG_INFLIGHT,
	FB_STAT_IDLE_WINDOW_US,
	FB_STAT_SERVICE_NS,
	FB_NR_STATS,
};

/**
 * struct fb_disk - freeblock's state for one disk (whole gendisk)
 * @node: in fb_disks, under fb_disks_lock
 * @devt: the disk's dev_t (key of fb_disk_xa)
 * @name: the disk's name, as in /sys/block
 * @fg_inflight: foreground requests issued and not completed (probes)
 * @last_fg_ns: ktime_get_ns() of the last foreground issue or completion
 * @head_sector: the sector after the last request issued on the disk, a
 *	foreground one (probe) or a background block (issuer): where the
 *	disk is working, which speculative tasks issue near
 * @bg_inflight: background blocks submitted and not completed (a block
 *	may be several bios)
 * @bg_pending: background blocks issued whose callback has not returned
 *	(their buffers are held): at most `depth`
 * @service_ns: EWMA of the background service time, ns
 * @lock: protects @tasks and every task's issue state
 * @tasks: struct fb_task.node, issue order (round robin)
 * @nr_tasks: tasks in @tasks
 * @work: the issuer; runs on fb_wq, never twice at once
 * @timer: wakes @work at the next idle deadline, floor or ceiling time
 * @timer_lock: serializes arming @timer (probes run in irq context)
 * @stats: counters, enum fb_stat_id
 *
 * A disk record lives until rmmod, so probes never see it freed.
 */
struct fb_disk {
	struct list_head node;
	dev_t devt;
	char name[DISK_NAME_LEN];

	/* foreground, written by the tracepoint probes in any context */
	atomic_t fg_inflight;
	atomic64_t last_fg_ns;
	atomic64_t head_sector;

	/* background */
	atomic_t bg_inflight;
	atomic_t bg_pending;
	atomic64_t service_ns;
	spinlock_t lock;		/* tasks and their issue state */
	struct list_head tasks;
	unsigned int nr_tasks;
	struct work_struct work;
	struct hrtimer timer;
	spinlock_t timer_lock;		/* arming timer */

	atomic64_t stats[FB_NR_COUNTERS];
};

/**
 * struct fb_uint_param - a module parameter with its accepted range, for
 *	module_param_cb() with fb_uint_ops
 * @val: the value
 * @min: smallest accepted
 * @max: largest accepted
 */
struct fb_uint_param {
	unsigned int val;
	unsigned int min;
	unsigned int max;
};

/* fb_core.c */
extern struct workqueue_struct *fb_wq;
extern const struct kernel_param_ops fb_uint_ops;
struct fb_disk *fb_disk_find(const char *name);
bool fb_disk_full(struct block_device *bdev);
unsigned int fb_disk_collect_stats(struct fb_disk *d, struct mobio_stat *st);
typedef void (*fb_disk_fn)(struct fb_disk *d, void *arg);
void fb_disks_walk(fb_disk_fn fn, void *arg);

/* fb_cdev.c */
struct seq_file;
int fb_cdev_init(void);
void fb_cdev_exit(void);
int fb_cdev_rings_show(struct seq_file *m, void *unused);

/* fb_genl.c */
int fb_genl_init(void);
void fb_genl_exit(void);

/* fb_selftest.c */
struct dentry;
void fb_selftest_init(struct dentry *dir);
void fb_selftest_exit(void);

/* fb_debugfs.c */
void fb_debugfs_init(void);
void fb_debugfs_exit(void);

#endif /* _FB_INTERNAL_H */
