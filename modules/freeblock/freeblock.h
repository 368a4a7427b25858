/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Freeblock: the kernel API of freeblock.ko. A client registers background
 * tasks on a block device; freeblock issues their blocks only when the
 * foreground leaves the disk idle (or when a task's rate floor is due, or
 * the task was promoted), and calls the client back once per block.
 *
 *	static void *getbuf(void *ctx, u64 lbn, u32 len) { return my_buf; }
 *	static void done(void *ctx, u64 lbn, void *buf, int status) { ... }
 *	struct fb_range r = { .start = 0, .len = SZ_1G };
 *	int id = fb_read(bdev, &r, SZ_64K, done, getbuf, ctx, NULL);
 *	...
 *	fb_promote(id);		// urgent now
 *	fb_abort(id);		// or give up
 *
 * Blocks go in ascending order; fb_read_opts()/fb_write_opts() with
 * FB_TASK_F_SPECULATIVE let freeblock choose the order (the unissued block
 * nearest to where the disk last worked). Every block of the range is
 * delivered exactly once (status 0 or an error) unless the task is
 * aborted; then the final callback comes (@buf NULL, @lbn FB_LBN_END) and
 * the task id is dead.
 */
#ifndef _FREEBLOCK_H
#define _FREEBLOCK_H

#include <linux/bits.h>
#include <linux/types.h>

struct block_device;

/* @lbn of the final callback: the task has ended, @status says how. */
#define FB_LBN_END	U64_MAX

/**
 * struct fb_range - a byte range of a block device
 * @start: first byte; a multiple of the task's block size
 * @len: bytes; the last block may not be cut (a multiple of blksize after
 *	the cut at the end of the device)
 */
struct fb_range {
	u64 start;
	u64 len;
};

/*
 * fb_getbuffer_t - supply the memory of one block, late
 * @ctx: the task's context
 * @lbn: block number in the task (byte start + lbn * blksize)
 * @len: bytes (the block size)
 *
 * Called by freeblock's worker just before the block is issued (late
 * binding): for a write the buffer must hold the data by then. The buffer
 * must stay valid until the block's callback; kmalloc or vmalloc memory,
 * aligned to the device's logical block size.
 * Context: process, may sleep; never with freeblock's locks held.
 * Return: the buffer, or NULL to skip this task for now (no buffer free):
 * freeblock retries it later, or at once after fb_kick().
 */
typedef void *(*fb_getbuffer_t)(void *ctx, u64 lbn, u32 len);

/**
 * typedef fb_callback_t - a block is done, or the task ended
 * @ctx: the task's context
 * @lbn: block number, or FB_LBN_END for the task's final call
 * @buf: the block's buffer (from getbuffer), NULL in the final call
 * @status: 0 or a negative errno (-EIO for the block; for the final call
 *	0 when every block was delivered, -ECANCELED after fb_abort() or
 *	rmmod, -ENODEV when the disk went away)
 *
 * Context: process (a freeblock workqueue), may sleep. It may call
 * fb_abort(), fb_promote() and fb_kick(), and register new tasks.
 */
typedef void (*fb_callback_t)(void *ctx, u64 lbn, void *buf, int status);

/**
 * struct fb_rate - optional rate limits of a task
 * @floor_kbps: KiB/s the task gets even on a disk that is never idle
 *	(a block is issued when none was for blksize / floor); 0: none
 * @ceiling_kbps: KiB/s the task never exceeds, even when the disk is
 *	idle; 0: none
 */
struct fb_rate {
	u32 floor_kbps;
	u32 ceiling_kbps;
};

/* Task flags (struct fb_opts.flags). */
/* Issue the blocks in any order, following the foreground's locality. */
#define FB_TASK_F_SPECULATIVE	BIT(0)
#define FB_TASK_F_ALL		FB_TASK_F_SPECULATIVE

/*
 * A speculative task keeps one bit per block: at most FB_SPEC_BLOCKS_MAX
 * (1 << 24, <linux/freeblock.h>) blocks.
 */

/**
 * struct fb_opts - options of fb_read_opts() and fb_write_opts()
 * @rate: rate floor and ceiling (0: none)
 * @flags: FB_TASK_F_* (others: -EINVAL)
 */
struct fb_opts {
	struct fb_rate rate;
	u32 flags;
};

int fb_read(struct block_device *bdev, const struct fb_range *range,
	    u32 blksize, fb_callback_t callback, fb_getbuffer_t getbuffer,
	    void *ctx, const struct fb_rate *rate);
int fb_write(struct block_device *bdev, const struct fb_range *range,
	     u32 blksize, fb_callback_t callback, fb_getbuffer_t getbuffer,
	     void *ctx, const struct fb_rate *rate);
int fb_read_opts(struct block_device *bdev, const struct fb_range *range,
		 u32 blksize, fb_callback_t callback,
		 fb_getbuffer_t getbuffer, void *ctx,
		 const struct fb_opts *opts);
int fb_write_opts(struct block_device *bdev, const struct fb_range *range,
		  u32 blksize, fb_callback_t callback,
		  fb_getbuffer_t getbuffer, void *ctx,
		  const struct fb_opts *opts);
int fb_abort(int id);
int fb_promote(int id);
int fb_set_rate(int id, const struct fb_rate *rate);
int fb_kick(int id);

#endif /* _FREEBLOCK_H */
