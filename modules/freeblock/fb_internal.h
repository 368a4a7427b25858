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
#include "fb_idle.h"

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
	FB_STAT_FG_REQUEUES,
	FB_STAT_FG_REQUEUES_UNSTARTED,
	FB_STAT_FG_STALE_RESETS,
	FB_STAT_FG_GAPS,
	FB_STAT_BG_ISSUED_GAP_START,
	FB_NR_COUNTERS,
	/* gauges, computed when collected */
	FB_STAT_TASKS_ACTIVE = FB_NR_COUNTERS,
	FB_STAT_BG_INFLIGHT,
	FB_STAT_FG_INFLIGHT,
	FB_STAT_IDLE_WINDOW_US,
	FB_STAT_IDLE_HORIZON_US,
	FB_STAT_SERVICE_NS,
	FB_STAT_CONF_FIRST,
	FB_NR_STATS = FB_STAT_CONF_FIRST + 7,	/* one per enum fb_conf_id */
};

/*
 * A disk's tunables: each the module parameter of the same name unless the
 * disk has its own (FREEBLOCK_CMD_SET_DISK). In FREEBLOCK_A_* order.
 */
enum fb_conf_id {
	FB_CONF_DEPTH,
	FB_CONF_IDLE_MIN_US,
	FB_CONF_IDLE_MAX_US,
	FB_CONF_COLLIDE_PCT,
	FB_CONF_FLOOR_KBPS,
	FB_CONF_CEILING_KBPS,
	FB_CONF_STALE_MS,
	FB_CONF_NR,
};

/**
 * struct fb_disk - freeblock's state for one disk (whole gendisk)
 * @node: in fb_disks, under fb_disks_lock
 * @devt: the disk's dev_t (key of fb_disk_xa); 0 for a record made by
 *	FREEBLOCK_CMD_SET_DISK for a name no disk had then: the first
 *	task's disk of that name adopts it
 * @name: the disk's name, as in /sys/block
 * @conf: the disk's own tunables (enum fb_conf_id), FREEBLOCK_INHERIT for
 *	the module parameter; READ_ONCE, written under fb_disks_lock
 * @fg_inflight: foreground I/Os in flight (probes)
 * @last_fg_ns: ktime_get_ns() of the last foreground arrival or completion
 * @idle_since_ns: when @fg_inflight last dropped to 0, until the next
 *	arrival takes it (0) and enters the gap into @gaps
 * @fg_arrivals: foreground arrivals, for telling a background block that
 *	ran alone
 * @head_sector: the sector after the last I/O on the disk, a foreground
 *	one (probe) or a background block (issuer): where the disk is
 *	working, which speculative tasks issue near
 * @gap_lock: protects @gaps (taken in probes, any context)
 * @gaps: the foreground's recent idle gaps, us (fb_idle.h)
 * @window_ns: the idle window, recomputed from @gaps by the issuer
 * @horizon_ns: how far into a gap blocks may run from its start (0:
 *	none), recomputed with @window_ns
 * @window_gaps: FB_STAT_FG_GAPS when @window_ns was computed (issuer)
 * @window_at_ns: when @window_ns was computed (issuer)
 * @bg_inflight: background blocks submitted and not completed (a block
 *	may be several bios)
 * @bg_pending: background blocks issued whose callback has not returned
 *	(their buffers are held): at most the disk's depth
 * @service_ns: EWMA of the service time of background blocks that ran
 *	alone (no other block in flight, no foreground arrival), ns
 * @service_any_ns: EWMA of every block's submit-to-completion time, used
 *	until a block has run alone
 * @lock: protects @tasks, every task's issue state and the disk's rate
 *	state (@floor_due_ns to @last_claim_bytes)
 * @tasks: struct fb_task.node, issue order (round robin)
 * @nr_tasks: tasks in @tasks
 * @floor_due_ns: when the disk's floor forces the next block
 * @ceil_next_ns: first time the disk's ceiling allows the next block
 * @floor_rate: the floor @floor_due_ns was computed with, KiB/s
 * @ceil_rate: the ceiling @ceil_next_ns was computed with, KiB/s
 * @last_claim_ns: when the last block was claimed, and its size in
 *	@last_claim_bytes (0: none yet): a rate change counts from it
 * @last_claim_bytes: see @last_claim_ns
 * @work: the issuer; runs on fb_wq, never twice at once
 * @timer: wakes @work at the next idle deadline, floor, ceiling or
 *	watchdog time
 * @timer_lock: serializes arming @timer (probes run in irq context)
 * @stats: counters, enum fb_stat_id
 *
 * A disk record lives until rmmod, so probes never see it freed.
 */
struct fb_disk {
	struct list_head node;
	dev_t devt;
	char name[DISK_NAME_LEN];
	u32 conf[FB_CONF_NR];

	/* foreground, written by the tracepoint probes in any context */
	atomic_t fg_inflight;
	atomic64_t last_fg_ns;
	atomic64_t idle_since_ns;
	atomic_t fg_arrivals;
	atomic64_t head_sector;
	spinlock_t gap_lock;		/* gaps */
	struct fb_gaps gaps;
	atomic64_t window_ns;
	atomic64_t horizon_ns;
	u64 window_gaps;
	u64 window_at_ns;

	/* background */
	atomic_t bg_inflight;
	atomic_t bg_pending;
	atomic64_t service_ns;
	atomic64_t service_any_ns;
	spinlock_t lock;		/* tasks, their issue state, disk rate */
	struct list_head tasks;
	unsigned int nr_tasks;
	u64 floor_due_ns;
	u64 ceil_next_ns;
	u32 floor_rate;
	u32 ceil_rate;
	u64 last_claim_ns;
	u32 last_claim_bytes;
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
int fb_disk_set_conf(const char *name, const u32 *val, const bool *set,
		     int *bad);
int fb_disk_inject_fg(const char *name, unsigned int n);
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
