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
 *
 * Unloading: freeblock calls a client's getbuffer and callback from its
 * worker, from the registration until the final callback has returned.
 * What the client's final callback does (a complete_all() that its module
 * exit waits for, say) is followed by the return through the client's own
 * code. So a client in a module passes a struct fb_owner, and its exit,
 * once it has aborted its tasks and let no new one start, calls
 * fb_owner_wait(): after that freeblock never runs the module's code.
 *
 *	static struct fb_owner owner;
 *	struct fb_opts opts = { .owner = &owner };
 *	id = fb_write_opts(bdev, &r, SZ_64K, done, getbuf, ctx, &opts);
 *	...
 *	fb_abort(id);			// module exit: end the tasks,
 *	fb_owner_wait(&owner);		// then wait for their returns
 */
#ifndef _FREEBLOCK_H
#define _FREEBLOCK_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/types.h>
#include <linux/wait_bit.h>

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
 * aligned to the device's logical block size. Never called once the
 * task's final callback has begun.
 * Context: process, may sleep; never with freeblock's locks held; may run
 * at the same time as the task's per-block callbacks.
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
 * Per-block calls of one task may run at the same time as each other and
 * as its getbuffer; the final call comes after every other call of the
 * task has returned, and is the last. Until it has returned, freeblock is
 * running the client's code: see struct fb_owner.
 * Context: process (a freeblock workqueue), may sleep; never with
 * freeblock's locks held. It may call fb_abort(), fb_promote() and
 * fb_kick(), and register new tasks; it must not call fb_owner_wait().
 */
typedef void (*fb_callback_t)(void *ctx, u64 lbn, void *buf, int status);

/**
 * struct fb_owner - a client's tasks, for unloading it: fb_owner_wait()
 * @tasks: tasks registered with this owner whose final callback has not
 *	returned yet (freeblock's, not to be touched by the client)
 *
 * Zeroed memory (a static variable, a kzalloc'd struct) is an owner with
 * no task. It must outlive every task registered with it.
 */
struct fb_owner {
	atomic_t tasks;
};

/**
 * fb_owner_wait() - wait until freeblock will never again call into the
 *	tasks of @owner
 * @owner: the owner
 *
 * Returns once the final callback of every task registered with @owner
 * has returned: after that freeblock touches neither the tasks' code nor
 * their ctx and buffers. The caller must have ended the tasks (fb_abort(),
 * or let them finish) and must start no new one meanwhile; a client
 * module calls it from its exit, after the aborts, before its data goes.
 * Inline, not a symbol of freeblock.ko: it works without a reference on
 * the module, while freeblock.ko unloads (which ends every task) and
 * after it is gone.
 * Context: process, may sleep (as long as the callbacks take). Not from a
 * freeblock callback or getbuffer (they run on the worker that makes the
 * final callbacks), nor holding a lock they take.
 */
static inline void fb_owner_wait(struct fb_owner *owner)
{
	/* acquire: the callbacks' stores are seen after it */
	wait_var_event(&owner->tasks, !atomic_read_acquire(&owner->tasks));
}

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
 * struct fb_opts - options of fb_read_opts() and fb_write_opts(); zero
 *	what you do not set (an initializer does)
 * @rate: rate floor and ceiling (0: none)
 * @flags: FB_TASK_F_* (others: -EINVAL)
 * @owner: counts the task until its final callback has returned, for
 *	fb_owner_wait(); NULL: none. A client in a module that can be
 *	unloaded needs one (fb_read() and fb_write() have none: for
 *	callbacks built into the kernel or into freeblock.ko)
 */
struct fb_opts {
	struct fb_rate rate;
	u32 flags;
	struct fb_owner *owner;
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
