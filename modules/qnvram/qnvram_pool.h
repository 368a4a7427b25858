/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qNVRAM: the pool, its regions and the backing device, shared by the
 * files of qnvram.ko.
 */
#ifndef _QNVRAM_POOL_H
#define _QNVRAM_POOL_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/seqlock.h>
#include <linux/workqueue.h>
#include <linux/atomic.h>
#include <linux/uidgid.h>
#include <linux/cred.h>
#include <linux/notifier.h>
#include <linux/completion.h>
#include <linux/wait.h>
#include <linux/blk_types.h>
#include <linux/qnvram.h>
#include "mobio_compat.h"
#include "mobio_genl.h"
#include "qnvram_format.h"
#include "freeblock.h"

/* Where the pool came from at load time (stat "boot_source"). */
enum qnvram_boot_source {
	QNVRAM_BOOT_FORMATTED,	/* no valid pool, no image: empty */
	QNVRAM_BOOT_ADOPTED,	/* valid pool in RAM: warm reboot */
	QNVRAM_BOOT_RESTORED,	/* pool rebuilt from the flash image */
};

/**
 * struct qnvram_region_rt - run-time state of one table entry
 * @binds: open files bound to the region; it can be neither freed nor
 *	swapped out while > 0. Protected by qnvram_pool.lock.
 * @maps: vmas mapping it (for reports only)
 * @last_used_ns: ktime of the last bind or unbind, for swap-out order
 * @touched: the region's bytes may have changed since the last background
 *	write-back snapshot (a page fault mapped it writable, it was created
 *	or swapped in). Protected by qnvram_pool.lock.
 * @dirty: the region's bytes may differ from the newest flash image (set
 *	with @touched, and for every region adopted after a warm reboot;
 *	cleared by an image that holds its present bytes, or a swap-out).
 *	Protected by qnvram_pool.lock.
 * @gen: bumped whenever the entry's region may have changed: bound,
 *	mapped writable, created, freed, swapped out or in. A background swap-out
 *	commits only when it is the same as when it copied the region.
 *	Protected by qnvram_pool.lock.
 * @bg_busy: a background swap-out is writing the region (qnvram_bgswap.c).
 *	Protected by qnvram_pool.lock.
 * @swapping: a synchronous swap-out or swap-in of the region is doing its
 *	I/O without qnvram_pool.lock (enum qnvram_swapping); whoever needs
 *	the region waits on qnvram_pool.swap_wq. Protected by qnvram_pool.lock.
 * @swap_to: while @swapping, where its bytes go: swap bytes from the swap
 *	area start (out) or pool bytes (in), reserved: no one else may use
 *	them. Protected by qnvram_pool.lock.
 */
struct qnvram_region_rt {
	unsigned int binds;
	atomic_t maps;
	u64 last_used_ns;
	bool touched;
	bool dirty;
	u32 gen;
	bool bg_busy;
	u8 swapping;
	u64 swap_to;
};

/* qnvram_region_rt.swapping */
enum qnvram_swapping {
	QNVRAM_SWAPPING_NONE,
	QNVRAM_SWAPPING_OUT,
	QNVRAM_SWAPPING_IN,
};

/**
 * struct qnvram_stats - counters reported by netlink and debugfs
 * @meta_commits: metadata updates since load
 * @flushes: pool images written to the backing device
 * @flush_errors: flushes that failed (I/O error, no memory)
 * @flush_bytes: bytes written by all flushes
 * @last_flush_ns: duration of the last flush, ns
 * @last_flush_bytes: bytes written by the last flush
 * @power_key_flushes: flushes triggered by holding the power key
 * @power_key_presses: KEY_POWER presses seen (held or not)
 * @poweroff_flushes: flushes at power-off or halt
 * @swap_outs: regions written out to make room in the pool
 * @swap_ins: regions read back on retrieve
 * @swap_bytes: bytes swapped out
 * @restore_dropped: regions dropped at restore for a bad checksum, or with
 *	salvage=1 because their image bytes could not be read
 * @frozen_faults: page faults that found the pool frozen after a shutdown
 *	flush and waited
 * @wb_started: background write-backs started (through freeblock)
 * @wb_images: images committed by a background write-back alone
 * @wb_takeovers: background write-backs that a synchronous flush (power
 *	key, power-off, mobioctl qnvram flush) took over and finished
 * @wb_promotions: freeblock tasks promoted by such a takeover
 * @wb_errors: background write-backs that failed (I/O error, no memory)
 * @wb_no_freeblock: write-backs asked for (periodic, debugfs) without
 *	freeblock loaded: a synchronous flush wrote the image instead
 * @wb_regions: regions whose bytes a background write-back wrote in the
 *	freeblock's idle time and that an image then committed
 * @wb_bytes: their bytes
 * @direct_regions: regions whose bytes a synchronous flush wrote itself
 * @direct_bytes: their bytes
 * @wb_dirty_regions: dirty regions (changed since the newest image) that a
 *	background write-back cleaned: its image holds their bytes
 * @direct_dirty_regions: dirty regions that a synchronous flush cleaned by
 *	writing them itself
 * @bg_swap_started: background swap-outs started (through freeblock)
 * @bg_swap_outs: regions that a background swap-out swapped out (committed)
 * @bg_swap_bytes: their bytes
 * @bg_swap_dropped: regions whose background swap-out was dropped because
 *	the region was bound, faulted in, freed or swapped out meanwhile
 * @bg_swap_errors: regions whose background swap-out failed (I/O error, a
 *	task freeblock refused, no memory for its copy)
 * @bg_swap_waits: allocations and swap-ins that found no room while a
 *	background swap-out ran, and promoted it and waited for it
 * @bg_swap_promotions: freeblock tasks promoted by those waits
 * @img_retired: images made stale (their marker written) because the pool
 *	was about to change after them
 * @img_retire_errors: stale markers that could not be written (the change
 *	was refused: SIGBUS for a page fault, the errno for an ioctl)
 * @restore_stale: cold boots (0 or 1) that found the newest image stale
 *	and formatted the pool instead of restoring it
 * @wb_stale: background write-backs not committed because the pool
 *	changed between their snapshot and their commit
 * @swap_budget_refusals: binds refused because the swaps they needed were
 *	over the caller's swap budget (uid_swap_mib_per_hour)
 * @load_dropped: table entries (of the adopted pool or the restored image)
 *	that did not fit the pool or the swap area, dropped with salvage=1
 *
 * Protected by qnvram_pool.lock, except @power_key_presses (written in
 * atomic context by the input handler, read racily).
 */
struct qnvram_stats {
	u64 meta_commits;
	u64 flushes;
	u64 flush_errors;
	u64 flush_bytes;
	u64 last_flush_ns;
	u64 last_flush_bytes;
	u64 power_key_flushes;
	u64 power_key_presses;
	u64 poweroff_flushes;
	u64 swap_outs;
	u64 swap_ins;
	u64 swap_bytes;
	u64 restore_dropped;
	u64 frozen_faults;
	u64 wb_started;
	u64 wb_images;
	u64 wb_takeovers;
	u64 wb_promotions;
	u64 wb_errors;
	u64 wb_no_freeblock;
	u64 wb_regions;
	u64 wb_bytes;
	u64 direct_regions;
	u64 direct_bytes;
	u64 wb_dirty_regions;
	u64 direct_dirty_regions;
	u64 bg_swap_started;
	u64 bg_swap_outs;
	u64 bg_swap_bytes;
	u64 bg_swap_dropped;
	u64 bg_swap_errors;
	u64 bg_swap_waits;
	u64 bg_swap_promotions;
	u64 img_retired;
	u64 img_retire_errors;
	u64 restore_stale;
	u64 wb_stale;
	u64 swap_budget_refusals;
	u64 load_dropped;
};

/**
 * struct qnvram_bounce - one buffer for bios between the pool and flash
 * @buf: QNVRAM_BOUNCE_BYTES, vmapped; the pool may be reserved RAM without
 *	struct pages, so bios never point into it
 * @pages: the pages behind @buf
 * @done: completed by the end_io of the bio in flight
 * @status: that bio's status
 * @busy: a bio using @buf is in flight
 */
struct qnvram_bounce {
	void *buf;
	struct page **pages;
	struct completion done;
	blk_status_t status;
	bool busy;
};

#define QNVRAM_NR_BOUNCE	2

/**
 * struct qnvram_fb - freeblock's API, looked up with symbol_get() by
 *	qnvram_fb_get() (a soft dependency: see qnvram_wb.c); the functions
 *	are all NULL while not held
 * @fb_write_opts: fb_write_opts()
 * @fb_promote: fb_promote()
 * @fb_abort: fb_abort()
 * @owner: every task registered through it, until freeblock has returned
 *	from its final callback (the exit waits with fb_owner_wait()); kept
 *	across qnvram_fb_put()
 */
struct qnvram_fb {
	int (*fb_write_opts)(struct block_device *bdev,
			     const struct fb_range *range, u32 blksize,
			     fb_callback_t callback, fb_getbuffer_t getbuffer,
			     void *ctx, const struct fb_opts *opts);
	int (*fb_promote)(int id);
	int (*fb_abort)(int id);
	struct fb_owner owner;
};

/*
 * Device bytes written by freeblock are cut into at most this many tasks
 * (qnvram_fb_split()): 4 KiB blocks up to a 64 KiB boundary, 64 KiB
 * blocks, 4 KiB blocks after the last boundary.
 */
#define QNVRAM_FB_MAX_PIECES	3

/**
 * struct qnvram_fb_piece - one freeblock task of a byte range
 * @pos: first device byte, a multiple of @blksize
 * @len: bytes, a multiple of @blksize
 * @blksize: freeblock block size, bytes
 */
struct qnvram_fb_piece {
	u64 pos;
	u64 len;
	u32 blksize;
};

/* freeblock tasks of one background write-back, at most */
#define QNVRAM_WB_MAX_TASKS	32

enum qnvram_wb_state {
	QNVRAM_WB_IDLE,		/* no background write-back */
	QNVRAM_WB_RUNNING,	/* snapshot taken, tasks registered, no commit */
	QNVRAM_WB_TAKEN,	/* a synchronous flush is finishing it */
};

struct qnvram_wb;

/**
 * struct qnvram_wb_task - one freeblock write task of a write-back
 * @wb: the write-back
 * @id: freeblock's task id (> 0 once registered)
 * @dev_pos: first byte on the backing device
 * @len: bytes (a multiple of @blksize)
 * @blksize: freeblock block size, bytes
 * @buf: the bytes to write, inside the staging buffer
 * @error: first block error, or the task's final error (0: all written)
 * @ended: the final callback came
 *
 * @error and @ended are written by freeblock's callbacks and read after
 * qnvram_wb.tasks_done.
 */
struct qnvram_wb_task {
	struct qnvram_wb *wb;
	int id;
	u64 dev_pos;
	u64 len;
	u32 blksize;
	void *buf;
	int error;
	bool ended;
};

/**
 * struct qnvram_wb - the background write-back of the pool (one at a time)
 * @state: enum qnvram_wb_state; changed under qnvram_pool.lock, read
 *	without it by waiters
 * @slot: the image slot it writes (the older one)
 * @meta: the image's metadata copy, sealed, with each region's CRC
 * @staging: vmalloc'd copy of the metadata block and of the regions'
 *	bytes, taken at the snapshot; freeblock writes from it
 * @tasks: the freeblock tasks
 * @nr_tasks: used entries of @tasks
 * @tasks_left: tasks whose final callback has not come, plus one while
 *	they are being registered
 * @tasks_done: completed when @tasks_left reaches 0
 * @commit_work: commits the image once every task has ended
 * @start_ns: ktime_get_ns() at the snapshot
 * @nr_regions: resident regions in the snapshot
 * @data_bytes: their bytes
 * @reused: regions a takeover found written and untouched (not rewritten)
 * @reused_bytes: their bytes
 * @seq: write-backs started since load (this one's number)
 * @done_seq: the last one that ended (committed, taken over or failed)
 * @result: how that one ended: 0 when an image with its snapshot (or a
 *	newer one) was committed, else a negative errno
 * @fb: freeblock's API, from symbol_get() while running
 * @periodic: runs a write-back every writeback_s seconds
 */
struct qnvram_wb {
	enum qnvram_wb_state state;
	int slot;
	struct qnvram_meta *meta;
	void *staging;
	struct qnvram_wb_task tasks[QNVRAM_WB_MAX_TASKS];
	unsigned int nr_tasks;
	atomic_t tasks_left;
	struct completion tasks_done;
	struct work_struct commit_work;
	u64 start_ns;
	u32 nr_regions;
	u64 data_bytes;
	u32 reused;
	u64 reused_bytes;
	u64 seq;
	u64 done_seq;
	int result;
	struct qnvram_fb fb;
	struct delayed_work periodic;
};

/* Regions one background swap-out writes, at most. */
#define QNVRAM_BGSWAP_MAX_REGIONS	16

struct qnvram_bgswap_region;

/**
 * struct qnvram_bgswap_task - one freeblock write task of a region
 * @r: the region
 * @id: freeblock's task id (> 0 once registered)
 * @piece: the device bytes and block size
 * @buf: the bytes to write, inside the region's staging copy
 * @ended: the final callback came (written by freeblock's callback)
 */
struct qnvram_bgswap_task {
	struct qnvram_bgswap_region *r;
	int id;
	struct qnvram_fb_piece piece;
	void *buf;
	bool ended;
};

/**
 * struct qnvram_bgswap_region - one region of a background swap-out
 * @slot: its table entry
 * @gen: qnvram_region_rt.gen when it was copied
 * @entry: the table entry when it was copied (resident)
 * @soff: the swap bytes it is written to, from the swap area start; held
 *	(no other swap-out may use them) until @done
 * @crc: CRC-32 of @staging
 * @staging: vmalloc'd copy of the region's bytes; freeblock writes it
 * @tasks: its freeblock tasks
 * @nr_tasks: used entries of @tasks
 * @tasks_left: tasks whose final callback has not come
 * @error: the first block or task error (written by the callbacks)
 * @ended: every task has ended (written by the last callback)
 * @aborted: its tasks were aborted (the region changed, or unload)
 * @done: committed or dropped, swap bytes released; under the pool lock
 */
struct qnvram_bgswap_region {
	int slot;
	u32 gen;
	struct qnvram_region_entry entry;
	u64 soff;
	u32 crc;
	void *staging;
	struct qnvram_bgswap_task tasks[QNVRAM_FB_MAX_PIECES];
	unsigned int nr_tasks;
	atomic_t tasks_left;
	int error;
	bool ended;
	bool aborted;
	bool done;
};

/**
 * struct qnvram_bgswap - the background swap-out (one at a time)
 * @running: regions are being written or wait for their commit; changed
 *	under qnvram_pool.lock, read without it by waiters
 * @exiting: module unload: start nothing
 * @fb: freeblock's API, held while @running
 * @regions: the regions being swapped out
 * @nr_regions: used entries of @regions
 * @regions_left: regions whose tasks have not all ended, plus one while
 *	they are being registered
 * @all_ended: completed when @regions_left reaches 0
 * @start_work: starts one when free pool space fell below the watermark
 * @commit_work: commits the regions whose tasks have ended
 * @seq: background swap-outs started since load
 *
 * Protected by qnvram_pool.lock except where said.
 */
struct qnvram_bgswap {
	bool running;
	bool exiting;
	struct qnvram_fb fb;
	struct qnvram_bgswap_region regions[QNVRAM_BGSWAP_MAX_REGIONS];
	unsigned int nr_regions;
	atomic_t regions_left;
	struct completion all_ended;
	struct work_struct start_work;
	struct work_struct commit_work;
	u64 seq;
};

/**
 * struct qnvram_pool - the one pool of this module
 *
 * Memory:
 * @base: kernel mapping of the pool (memremap'd reserved RAM, or vmalloc
 *	in fallback mode)
 * @phys: physical start, bytes (0 in fallback mode)
 * @bytes: pool size, bytes
 * @fallback: pool is ordinary memory: survives app crashes only
 *
 * Metadata, protected by @lock:
 * @lock: serialises every change of @meta, @rt, the backing device and
 *	@stats; held across flash I/O, so may be held for long
 * @meta: the authoritative working copy; qnvram_meta_commit() stores it
 *	into the older pool slot
 * @meta_slot: the pool slot holding the current metadata (0 or 1)
 * @rt: run-time state per table entry
 *
 * The table for readers that must not wait for @lock (netlink GET_STATS,
 * LIST and RETRIEVE: @lock may be held across flash I/O):
 * @view_seq: written under @lock, by every qnvram_meta_commit()
 * @view: the table as last committed (see qnvram_view_read())
 *
 * Backing device, protected by @lock:
 * @backing: the open device, ->bdev NULL when there is none
 * @backing_bytes: its size, bytes
 * @bounce: two buffers for bios, so that copying one chunk out of the pool
 *	overlaps with writing the previous one
 * @next_bounce: the buffer the next asynchronous write uses
 * Synchronous swaps (qnvram_swap_out(), qnvram_swap_in()) do their I/O
 * without @lock, so that no netlink command, page fault or other app
 * waits for them:
 * @swap_lock: serialises them and guards @swap_bounce; never taken with
 *	@lock held
 * @swap_bounce: their buffer
 * @swap_wq: woken when one ends (qnvram_region_rt.swapping cleared)
 *
 * @img_slot: image slot holding the current image, or when there is none
 *	the newest header (image or stale marker) on the device; -1 for none.
 *	The next image goes into the other slot.
 * @img_seq: the highest flush number on the device: the next image is
 *	numbered @img_seq + 1
 * @img_hdr: the current image's header (while @img_meta is set)
 * @img_meta: the current image's metadata, NULL when there is none. An
 *	image is current while the pool still holds what it holds: a cold boot
 *	restores it, so the swap space its swapped regions use is not reused,
 *	and nothing may change in the pool before qnvram_img_retire() has
 *	made it stale on the device
 * @img_foreign_bytes: image slot 0 holds an image of a pool of this many
 *	bytes, not this pool's size (0: it does not): the newest state on the
 *	device, which loading does not overwrite unless told to
 * @img_stale_seq: the flush whose stale marker the load found instead of a
 *	current image (0: none)
 * @img_read_error: the errno of an image header or table that could not be
 *	read at load (0: none)
 *
 * Retiring the current image (qnvram_flash.c), the write itself without
 * @lock:
 * @img_marking: a stale marker is being written; set under @lock, cleared
 *	without it; image slots are not written meanwhile
 * @img_marked_seq: the image whose marker was written last (durable);
 *	written before @img_marking is cleared
 * @img_mark_wq: woken when @img_marking is cleared
 * @img_mark_page: the marker's buffer (one page, used by one writer at a
 *	time: the one that set @img_marking)
 * @img_committing: a background write-back's image header is being written
 *	without @lock (qnvram_img_commit()); set and cleared under @lock,
 *	waited for on @img_mark_wq by whoever would change the pool or write
 *	an image slot
 *
 * Mappings, protected by @lock:
 * @bindings: every open /dev/qnvram file (struct qnvram_binding.node); a
 *	flush unmaps their pages so that apps fault, and wait, while it copies
 * @frozen_until: jiffies; until then a page fault on a region waits: set
 *	by a shutdown flush (power key, power-off) so that apps do nothing
 *	after the image they could not redo from it
 *
 * @wb: the background write-back through freeblock, protected by @lock
 *	(see struct qnvram_wb)
 * @bgswap: the background swap-out through freeblock, protected by @lock
 *	(see struct qnvram_bgswap)
 *
 * @boot_source: enum qnvram_boot_source
 * @stats: counters
 * @power_key_work: flush after the power key was held hold_ms
 * @reboot_nb: flush at power-off and halt
 */
struct qnvram_pool {
	void *base;
	phys_addr_t phys;
	u64 bytes;
	bool fallback;

	struct mutex lock;	/* see above: meta, rt, backing, stats */
	struct qnvram_meta *meta;
	int meta_slot;
	struct qnvram_region_rt rt[QNVRAM_MAX_REGIONS];
	seqcount_mutex_t view_seq;
	struct qnvram_meta *view;

	struct mobio_bdev backing;
	u64 backing_bytes;
	struct qnvram_bounce bounce[QNVRAM_NR_BOUNCE];
	unsigned int next_bounce;
	struct mutex swap_lock;	/* see above: synchronous swaps' I/O */
	struct qnvram_bounce swap_bounce;
	wait_queue_head_t swap_wq;
	int img_slot;
	u64 img_seq;
	struct qnvram_img_header img_hdr;
	struct qnvram_meta *img_meta;
	u64 img_foreign_bytes;
	u64 img_stale_seq;
	int img_read_error;

	bool img_marking;
	u64 img_marked_seq;
	wait_queue_head_t img_mark_wq;
	struct page *img_mark_page;
	bool img_committing;

	struct list_head bindings;
	unsigned long frozen_until;

	struct qnvram_wb wb;
	struct qnvram_bgswap bgswap;

	enum qnvram_boot_source boot_source;
	struct qnvram_stats stats;
	struct delayed_work power_key_work;
	struct notifier_block reboot_nb;
};

/* The metadata copy in an image, rounded to whole 4 KiB blocks. */
#define QNVRAM_META_IO_BYTES	round_up(sizeof(struct qnvram_meta), QNVRAM_GRANULE)

/* Bytes moved per bio between the pool and the backing device. */
#define QNVRAM_BOUNCE_BYTES	(1024 * 1024)

/**
 * struct qnvram_binding - what an open /dev/qnvram file is bound to
 * @pool: the pool
 * @slot: table entry index, -1 while unbound
 * @offset: the region's pool offset, bytes (stable while bound)
 * @length: the region's length, bytes
 * @node: in @pool->bindings (under its lock)
 * @mapping: the file's address space, where its vmas are linked
 */
struct qnvram_binding {
	struct qnvram_pool *pool;
	int slot;
	u64 offset;
	u64 length;
	struct list_head node;
	struct address_space *mapping;
};

extern struct qnvram_pool qnvram_pool;
extern unsigned int qnvram_hold_ms;
extern unsigned int qnvram_freeze_ms;

/* qnvram_main.c */
int qnvram_region_bind(struct qnvram_pool *pool, struct qnvram_binding *b,
		       struct qnvram_region_req *req, bool create, u32 uid,
		       bool admin);
void qnvram_region_unbind(struct qnvram_pool *pool, struct qnvram_binding *b);
int qnvram_region_free(struct qnvram_pool *pool, u32 uid, u32 magic);
int qnvram_pick_victim(struct qnvram_pool *pool, bool skip_bg_busy);
int qnvram_resolve_uid(const struct cred *cred, struct user_namespace *ns,
		       u32 uid, bool admin, u32 *pool_uid);
void qnvram_meta_commit(struct qnvram_pool *pool);
void qnvram_view_publish(struct qnvram_pool *pool);
void qnvram_view_read(struct qnvram_pool *pool, struct qnvram_meta *copy);
struct qnvram_meta *qnvram_meta_slot_ptr(struct qnvram_pool *pool, int slot);
void qnvram_persist(void *addr, size_t bytes);
unsigned int qnvram_collect_stats(struct qnvram_pool *pool,
				  struct mobio_stat *stats, unsigned int max);
#define QNVRAM_NR_STATS	64

/* qnvram_load.c */
int qnvram_pool_load(struct qnvram_pool *pool, const char *backing);

/* qnvram_flash.c */
int qnvram_backing_open(struct qnvram_pool *pool, const char *path);
void qnvram_backing_close(struct qnvram_pool *pool);
int qnvram_flush(struct qnvram_pool *pool);
int qnvram_restore(struct qnvram_pool *pool, bool salvage);
int qnvram_swap_out(struct qnvram_pool *pool, int slot);
int qnvram_swap_in(struct qnvram_pool *pool, int slot, u64 pool_offset);
int qnvram_swap_wait(struct qnvram_pool *pool, int slot);
bool qnvram_swap_reserved(struct qnvram_pool *pool, enum qnvram_swapping dir,
			  u64 off, u64 len, u64 *pos);
int qnvram_triggers_init(struct qnvram_pool *pool);
void qnvram_triggers_exit(struct qnvram_pool *pool);
int qnvram_img_commit(struct qnvram_pool *pool, int slot,
		      struct qnvram_meta *img_meta, u32 nr, u64 bytes,
		      u64 start_ns, bool unlocked_io);
u64 qnvram_img_data_pos(struct qnvram_pool *pool, int slot, u64 off);
int qnvram_swap_find_gap(struct qnvram_pool *pool, u64 len, u64 *soff);
int qnvram_img_retire(struct qnvram_pool *pool);
void qnvram_img_retire_at_load(struct qnvram_pool *pool, const char *why);
bool qnvram_img_holds_pool(struct qnvram_pool *pool);
bool qnvram_img_current(struct qnvram_pool *pool);
bool qnvram_img_current_racy(struct qnvram_pool *pool);
bool qnvram_img_retire_waits(struct qnvram_pool *pool);
bool qnvram_writes_watched(struct qnvram_pool *pool);

/* qnvram_wb.c */
void qnvram_wb_init(struct qnvram_pool *pool);
void qnvram_wb_exit(struct qnvram_pool *pool);
int qnvram_wb_run(struct qnvram_pool *pool);
void qnvram_wb_takeover(struct qnvram_pool *pool);
bool qnvram_wb_written(struct qnvram_pool *pool, int slot, u32 *crc);
void qnvram_region_touch(struct qnvram_pool *pool, int slot);
void qnvram_wb_end(struct qnvram_pool *pool, int result);
bool qnvram_fb_get(struct qnvram_fb *fb);
void qnvram_fb_put(struct qnvram_fb *fb);
void qnvram_fb_tail(void);
unsigned int qnvram_fb_split(u64 pos, u64 end, struct qnvram_fb_piece *p);

/* qnvram_bgswap.c */
void qnvram_bgswap_init(struct qnvram_pool *pool);
void qnvram_bgswap_exit(struct qnvram_pool *pool);
void qnvram_bgswap_check(struct qnvram_pool *pool);
bool qnvram_bgswap_urgent(struct qnvram_pool *pool);
void qnvram_region_changed(struct qnvram_pool *pool, int slot);
bool qnvram_bgswap_clash(struct qnvram_pool *pool, u64 soff, u64 len,
			 u64 *pos);

/* qnvram_dev.c */
int qnvram_dev_init(void);
void qnvram_dev_unmap_all(struct qnvram_pool *pool);
void qnvram_dev_exit(void);

/* qnvram_genl.c */
int qnvram_genl_init(void);
void qnvram_genl_exit(void);
void qnvram_genl_event(enum qnvram_event event, const struct qnvram_pool *pool,
		       int slot);

/* qnvram_debugfs.c */
void qnvram_debugfs_init(struct qnvram_pool *pool);
void qnvram_debugfs_exit(void);

#endif /* _QNVRAM_POOL_H */
