/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * Freeblock: background I/O issued only when the foreground leaves a block
 * device idle (after Lumb, Schindler, Ganger, "Freeblock scheduling outside
 * of disk firmware", FAST'02/'04). Module freeblock.ko.
 *
 * Two interfaces:
 *
 * 1. The "freeblock" generic netlink family (conventions: <linux/mobio.h>).
 *    FREEBLOCK_CMD_GET_STATS with MOBIO_A_DEV_NAME (a disk as in /sys/block,
 *    "vdb") answers with MOBIO_A_DEV_NAME and MOBIO_A_STATS; -ENODEV when
 *    freeblock has no record of that disk. Any user may read counters.
 *    FREEBLOCK_CMD_SET_DISK (CAP_SYS_ADMIN) sets a disk's own tunables
 *    (FREEBLOCK_A_*), which then no longer follow the module parameters;
 *    it may name a disk freeblock has had no task on yet: the settings
 *    wait for it.
 *
 * 2. /dev/freeblock, for one background task per open file:
 *    FB_IOC_SCRUB registers a read task on a block device the caller opened
 *    for reading (the fd is passed, so the device's permissions decide who
 *    may read it); mmap() then maps the ring (struct fb_ring_hdr, the
 *    descriptors, the data slots) read-only; poll() reports POLLIN when
 *    descriptors are waiting and POLLHUP when the task has ended. The
 *    consumer reads descriptors from hdr->tail to hdr->head (each names
 *    the slot holding its block), then stores the new tail with
 *    FB_IOC_CONSUME, which frees those slots.
 *
 *    The ring is pinned kernel memory: before it is allocated, the
 *    registration fails with EBUSY when the disk has max_tasks tasks and
 *    with ENOSPC when the ring (with a speculative task's bitmap) would
 *    pass the rings allowed to the files of the opener's uid
 *    (uid_ring_kib) or to all files (total_ring_kib); the ring is then
 *    charged to the caller's memory cgroup (ENOMEM at its memory.max).
 *
 *    FB_IOC_WRITE registers a write task instead (the device opened for
 *    writing), with late binding: when the kernel is about to issue block
 *    n it sets hdr->want_lbn = n and hdr->want_pending = 1 and poll()
 *    reports POLLOUT; the process answers with FB_IOC_FILL (block n's
 *    data, copied into a free slot) and the block is issued. Completions
 *    come as descriptors, as for reads (the slot holds what was written);
 *    FB_IOC_CONSUME frees their slots.
 *
 * Counters (MOBIO_STAT_A_NAME):
 *   tasks               tasks registered on the disk
 *   tasks_active        tasks not ended yet
 *   blocks_done         background blocks completed (errors included)
 *   blocks_failed       background blocks completed with an error
 *   bytes_done          bytes of the completed blocks
 *   idle_time_ns        device time used by blocks issued in idle time
 *   fg_requests         foreground I/Os seen on the disk: bios submitted to
 *                       a bio-based (stacked: dm, md) disk, requests
 *                       issued on a blk-mq disk
 *   fg_delayed          foreground I/Os that arrived while a background
 *                       block was in flight (could have waited for it)
 *   bg_issued_idle      background blocks issued because the disk was idle
 *   bg_issued_floor     background blocks issued by a task's or the disk's
 *                       rate floor while the disk was busy
 *   bg_issued_promoted  background blocks issued for promoted tasks
 *   promotions          fb_promote() calls that promoted a task
 *   aborts              tasks aborted (fb_abort, close, rmmod, removal)
 *   bg_bios             background bios submitted: a block larger than one
 *                       request of the device is several bios
 *   bg_issued_any_order blocks of speculative tasks issued out of ascending
 *                       order (not the task's lowest unissued block)
 *   fg_requeues         foreground requests requeued (blk-mq disks)
 *   fg_requeues_unstarted  of those, requests the driver turned away
 *                       before starting them: they were never in flight
 *   fg_stale_resets     times the watchdog found the foreground count
 *                       stuck (no foreground completion or arrival for
 *                       stale_ms) and reset it to 0
 *   fg_gaps             idle gaps (last foreground completion to the next
 *                       arrival) the idle window and horizon are chosen from
 *   bg_issued_gap_start of bg_issued_idle, blocks issued at the start of a
 *                       gap, to complete before its horizon
 *   bg_inflight         background blocks in flight now
 *   fg_inflight         foreground I/Os in flight now (as seen)
 *   idle_window_us      the idle window now: blocks go after it (fb_idle.h)
 *   idle_horizon_us     blocks that complete before it go at a gap's start
 *   service_ns          mean background service time (EWMA of blocks that
 *                       ran alone: no other block, no foreground arrival)
 *   conf_depth, conf_idle_min_us, conf_idle_max_us, conf_collide_pct,
 *   conf_floor_kbps, conf_ceiling_kbps, conf_stale_ms
 *                       the disk's tunables in effect (its own, or the
 *                       module parameters)
 */
#ifndef _UAPI_LINUX_FREEBLOCK_H
#define _UAPI_LINUX_FREEBLOCK_H

#include <linux/ioctl.h>
#include <linux/types.h>
#include <linux/mobio.h>

#define FREEBLOCK_GENL_NAME	"freeblock"
#define FREEBLOCK_DEV_NAME	"freeblock"	/* /dev/freeblock */

/**
 * enum freeblock_cmd - generic netlink commands of the "freeblock" family
 * @FREEBLOCK_CMD_UNSPEC: invalid
 * @FREEBLOCK_CMD_GET_STATS: counters of one disk; request: MOBIO_A_DEV_NAME;
 *	reply: MOBIO_A_DEV_NAME, MOBIO_A_STATS. -ENODEV when freeblock has no
 *	record of the disk.
 * @FREEBLOCK_CMD_SET_DISK: set tunables of one disk (CAP_SYS_ADMIN);
 *	request: MOBIO_A_DEV_NAME and at least one FREEBLOCK_A_* tunable, a
 *	u32 each; FREEBLOCK_INHERIT makes one follow its module parameter
 *	again. All or nothing: -EINVAL (with an extack message naming the
 *	attribute) for a value out of range or floor above ceiling, -ENOSPC
 *	when FREEBLOCK_DISKS_MAX disks have records. No reply payload.
 * @__FREEBLOCK_CMD_MAX: one past the last command
 * @FREEBLOCK_CMD_MAX: the last command
 */
enum freeblock_cmd {
	FREEBLOCK_CMD_UNSPEC,
	FREEBLOCK_CMD_GET_STATS = MOBIO_CMD_GET_STATS,
	FREEBLOCK_CMD_SET_DISK,
	__FREEBLOCK_CMD_MAX,
	FREEBLOCK_CMD_MAX = __FREEBLOCK_CMD_MAX - 1,
};

/**
 * enum freeblock_attr - attributes of the "freeblock" family; the common
 * ones of enum mobio_common_attr, and its own from MOBIO_A_FAMILY_BASE:
 * the per-disk tunables of FREEBLOCK_CMD_SET_DISK, u32 each, named and
 * ranged as the module parameters of the same name
 * (/sys/module/freeblock/parameters/)
 * @FREEBLOCK_A_DEPTH: background blocks in flight, at most (1-64)
 * @FREEBLOCK_A_IDLE_MIN_US: shortest idle window, us
 * @FREEBLOCK_A_IDLE_MAX_US: longest idle window, us
 * @FREEBLOCK_A_COLLIDE_PCT: the share of the foreground's arrivals that may
 *	meet a background block, % (0-100): half for the recent idle gaps
 *	that outlast the idle window, half for those shorter than the horizon
 * @FREEBLOCK_A_FLOOR_KBPS: the disk's background rate floor, KiB/s, as
 *	md's sync_speed_min: blocks go even on a busy disk when the disk's
 *	background fell below it; 0: strict idle-only (tasks' own floors
 *	still apply)
 * @FREEBLOCK_A_CEILING_KBPS: the disk's background rate ceiling, KiB/s,
 *	as md's sync_speed_max (0: none); promoted tasks are not held by it
 * @FREEBLOCK_A_STALE_MS: a foreground count that has not moved for this
 *	long is reset by the watchdog (100-600000 ms)
 * @__FREEBLOCK_A_MAX: one past the last attribute
 * @FREEBLOCK_A_MAX: the last attribute
 */
enum freeblock_attr {
	FREEBLOCK_A_DEPTH = MOBIO_A_FAMILY_BASE,
	FREEBLOCK_A_IDLE_MIN_US,
	FREEBLOCK_A_IDLE_MAX_US,
	FREEBLOCK_A_COLLIDE_PCT,
	FREEBLOCK_A_FLOOR_KBPS,
	FREEBLOCK_A_CEILING_KBPS,
	FREEBLOCK_A_STALE_MS,
	__FREEBLOCK_A_MAX,
	FREEBLOCK_A_MAX = __FREEBLOCK_A_MAX - 1,
};

/* A FREEBLOCK_A_* value: follow the module parameter again. */
#define FREEBLOCK_INHERIT	0xffffffffU
/* Disks freeblock keeps records of (with tasks or settings), at most. */
#define FREEBLOCK_DISKS_MAX	256U

/* --- /dev/freeblock ------------------------------------------------------ */

#define FB_BLKSIZE_MIN		512U		/* bytes */
#define FB_BLKSIZE_MAX		(1U << 20)	/* bytes */
#define FB_SLOTS_MAX		4096U
#define FB_RING_BYTES_MAX	(64U << 20)	/* slots * blksize */

/*
 * struct fb_scrub_req.flags. FB_SCRUB_F_SPECULATIVE: a speculative task;
 * the kernel issues the blocks in any order (each time the unissued block
 * nearest to where the disk last worked: the end of the last foreground
 * request or background block), so the work rides the foreground's
 * locality; each block is still delivered exactly once. Descriptors then
 * come in that order, and a write task asks for blocks (hdr->want_lbn) in
 * that order. At most FB_SPEC_BLOCKS_MAX blocks (EINVAL otherwise).
 */
#define FB_SCRUB_F_SPECULATIVE	(1U << 0)
#define FB_SCRUB_F_ALL		FB_SCRUB_F_SPECULATIVE
#define FB_SPEC_BLOCKS_MAX	(1U << 24)

/**
 * struct fb_scrub_req - FB_IOC_SCRUB (FB_IOC_WRITE): register a background
 *	read (write) task
 * @fd: in, a block device opened by the caller for reading (writing)
 * @blksize: in, bytes per block: a power of two, FB_BLKSIZE_MIN to
 *	FB_BLKSIZE_MAX and a multiple of the device's logical block size
 * @start: in, first byte of the range; a multiple of @blksize
 * @len: in, bytes; 0 means to the end of the device; the range is cut at
 *	the end of the device and must not be empty
 * @nslots: in, data slots in the ring, 1 to FB_SLOTS_MAX, nslots * blksize
 *	at most FB_RING_BYTES_MAX
 * @floor_kbps: in, rate floor in KiB/s (0: none): a block is issued even
 *	when the disk is busy if none was for blksize / floor seconds
 * @ceiling_kbps: in, rate ceiling in KiB/s (0: none)
 * @flags: in, FB_SCRUB_F_* (other bits: EINVAL)
 * @id: out, the task id (for logs), > 0; must be 0 on input
 * @__pad: must be 0
 * @nblocks: out, blocks in the task (block n covers start + n * blksize);
 *	must be 0 on input
 * @ring_bytes: out, bytes to mmap() at offset 0; must be 0 on input
 */
struct fb_scrub_req {
	__s32 fd;
	__u32 blksize;
	__u64 start;
	__u64 len;
	__u32 nslots;
	__u32 floor_kbps;
	__u32 ceiling_kbps;
	__u32 flags;
	__u32 id;
	__u32 __pad;
	__u64 nblocks;
	__u64 ring_bytes;
};

/**
 * struct fb_ring_hdr - first page of the mapping (kernel-written, read-only)
 * @magic: FB_RING_MAGIC
 * @nslots: number of descriptors and of data slots
 * @slot_bytes: bytes per data slot (the task's blksize)
 * @desc_off: offset of the descriptor array (struct fb_desc[nslots])
 * @data_off: offset of slot 0; slot s is at data_off + s * slot_bytes
 * @head: descriptors produced; the kernel stores it after the descriptor
 * @tail: descriptors consumed, as last told by FB_IOC_CONSUME
 * @state: FB_STATE_*
 * @result: 0 when the task completed, else a negative errno (-ECANCELED,
 *	-ENODEV) once @state is FB_STATE_ENDED
 * @blocks_done: blocks delivered
 * @blocks_failed: blocks delivered with an error status
 * @nblocks: blocks in the task
 * @want_lbn: write tasks: the block the kernel is about to issue and asks
 *	data for, valid while @want_pending is 1
 * @want_pending: write tasks: 1 while @want_lbn waits for FB_IOC_FILL
 * @want_seq: write tasks: incremented each time a block is asked for
 */
struct fb_ring_hdr {
	__u32 magic;
	__u32 nslots;
	__u32 slot_bytes;
	__u32 desc_off;
	__u64 data_off;
	__u32 head;
	__u32 tail;
	__u32 state;
	__s32 result;
	__u64 blocks_done;
	__u64 blocks_failed;
	__u64 nblocks;
	__u64 want_lbn;
	__u32 want_pending;
	__u32 want_seq;
};

#define FB_RING_MAGIC		0x46424c4bU	/* "FBLK" */
#define FB_STATE_RUNNING	1
#define FB_STATE_ENDED		2

/**
 * struct fb_desc - one completed block, in ring order
 * @lbn: block number in the task (byte start + lbn * blksize)
 * @status: 0, or a negative errno (-EIO: unreadable)
 * @slot: data slot holding the block
 */
struct fb_desc {
	__u64 lbn;
	__s32 status;
	__u32 slot;
};

#define FB_IOC_MAGIC	0xfb
#define FB_IOC_SCRUB	_IOWR(FB_IOC_MAGIC, 1, struct fb_scrub_req)
/* Argument: the new tail (__u32, by value), between tail and head. */
#define FB_IOC_CONSUME	_IO(FB_IOC_MAGIC, 2)
/* Abort the file's task: ends with result -ECANCELED. */
#define FB_IOC_ABORT	_IO(FB_IOC_MAGIC, 3)
/* Promote the file's task: issued without waiting for idle time. */
#define FB_IOC_PROMOTE	_IO(FB_IOC_MAGIC, 4)

/**
 * struct fb_fill - FB_IOC_FILL: the data of the block a write task asked for
 * @lbn: in, the block: hdr->want_lbn while hdr->want_pending is 1
 * @data: in, user address of @len bytes
 * @len: in, bytes: the task's blksize
 * @flags: in, must be 0
 */
struct fb_fill {
	__u64 lbn;
	__u64 data;
	__u32 len;
	__u32 flags;
};

/*
 * Register a write task: struct fb_scrub_req as for FB_IOC_SCRUB, the fd
 * open for writing (EACCES otherwise).
 */
#define FB_IOC_WRITE	_IOWR(FB_IOC_MAGIC, 5, struct fb_scrub_req)
/*
 * Give a write task the block it asked for. EINVAL: not a write task, a
 * block not asked for (or already given), a bad @len or @flags; EAGAIN:
 * no free slot (consume descriptors first); EFAULT.
 */
#define FB_IOC_FILL	_IOW(FB_IOC_MAGIC, 6, struct fb_fill)

/**
 * struct fb_rate_req - FB_IOC_SET_RATE: change the file's task's rate
 * @floor_kbps: in, the new rate floor, KiB/s (0: none)
 * @ceiling_kbps: in, the new rate ceiling, KiB/s (0: none); at least
 *	@floor_kbps when both are set
 * @flags: in, must be 0
 * @__pad: must be 0
 *
 * Takes effect at once: the next block's time is counted from the last
 * block issued at the new rate, not from the slot the old rate had set.
 * EINVAL: no task, floor above ceiling, flags; ENOENT: the task has ended.
 */
struct fb_rate_req {
	__u32 floor_kbps;
	__u32 ceiling_kbps;
	__u32 flags;
	__u32 __pad;
};

#define FB_IOC_SET_RATE	_IOW(FB_IOC_MAGIC, 7, struct fb_rate_req)

#endif /* _UAPI_LINUX_FREEBLOCK_H */
