/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * libfreeblock: a small userspace wrapper of /dev/freeblock (freeblock.ko,
 * include/uapi/linux/freeblock.h): register a background read (or write)
 * task on a block device, map its ring, wait for blocks and hand each one
 * to a callback, give the ring slots back, abort, promote. A write task's
 * data is asked for block by block when the kernel is about to issue it
 * (late binding): fb_task_open_write(), fb_task_poll_write().
 *
 *	struct fb_task *t;
 *	struct fb_task_opts o = { .blksize = 65536 };
 *	int dfd = open("/dev/vdb", O_RDONLY), r;
 *
 *	r = fb_task_open(&t, dfd, &o);		// dfd may be closed after
 *	while ((r = fb_task_poll(t, 1000, on_block, ctx)) == 0)
 *		print_progress(fb_task_done(t), fb_task_nblocks(t));
 *	// r == 1: ended; fb_task_result(t) says how (0, -ECANCELED, -ENODEV)
 *	fb_task_close(t);
 *
 * Shapes and units: a task covers the bytes [start, start + len) of the
 * device, cut at its end, in blocks of blksize bytes; block lbn covers
 * bytes start + lbn * blksize. A partial last block is not covered: the
 * caller reads the tail itself if it needs it. Blocks arrive in any
 * order, each exactly once (the library checks that and refuses a
 * descriptor naming a block out of range, a slot out of the ring, or a
 * block already delivered: -EPROTO).
 *
 * Errors are negative errno values, never -1 with errno; the library
 * prints nothing. Not thread-safe: one thread uses a task at a time.
 */
#ifndef LIBFREEBLOCK_H
#define LIBFREEBLOCK_H

#include <stdint.h>

/* Opaque: one registration on one open /dev/freeblock. */
struct fb_task;

/**
 * struct fb_task_opts - what to register (FB_IOC_SCRUB)
 * @blksize: bytes per block: a power of two, 512 to 1 MiB, a multiple of
 *	the device's logical block size; 0 means 65536
 * @start: first byte, a multiple of @blksize
 * @len: bytes; 0 means to the end of the device
 * @nslots: ring slots (blocks delivered but not yet consumed), 1 to 4096,
 *	nslots * blksize at most 64 MiB; 0 means 16
 * @floor_kbps: rate floor in KiB/s (0: none): blocks are issued even on a
 *	busy device at this rate
 * @ceiling_kbps: rate ceiling in KiB/s (0: none)
 * @promote: issue without waiting for idle time from the start
 * @any_order: a speculative task (FB_SCRUB_F_SPECULATIVE): the kernel
 *	chooses the block order, the unissued block nearest to where the
 *	disk last worked first (the foreground's locality); at most
 *	FB_SPEC_BLOCKS_MAX blocks (-EINVAL otherwise). fb_task_prefix() is
 *	then the first block not delivered, not a measure of progress.
 */
struct fb_task_opts {
	uint32_t blksize;
	uint64_t start;
	uint64_t len;
	uint32_t nslots;
	uint32_t floor_kbps;
	uint32_t ceiling_kbps;
	int promote;
	int any_order;
};

/**
 * typedef fb_block_fn - one delivered block
 * @ctx: the caller's pointer given to fb_task_poll()
 * @lbn: block number in the task (bytes start + lbn * blksize)
 * @status: 0, or a negative errno (-EIO: the device could not read it)
 * @data: @len bytes of the block when @status is 0, NULL otherwise; valid
 *	only during the call (the slot is given back after it)
 * @len: the block size in bytes
 *
 * Return: 0 to go on; any other value stops fb_task_poll(), which returns
 * it (the block counts as delivered and consumed either way).
 */
typedef int (*fb_block_fn)(void *ctx, uint64_t lbn, int status,
			   const void *data, uint32_t len);

/**
 * fb_task_open() - open /dev/freeblock, register a read task, map its ring
 * @out: the new task on success
 * @devfd: a block device opened for reading (O_RDONLY or O_RDWR); the
 *	task keeps its own reference, so the caller may close it
 * @opts: what to register; NULL means the whole device with the defaults
 *
 * Return: 0, or a negative errno: -ENOENT (no /dev/freeblock: is
 * freeblock.ko loaded?), -EBADF, -ENOTBLK (@devfd is not a block device),
 * -EACCES (not open for reading), -EINVAL (a bad option or a range outside
 * the device), -ENOMEM, -EPROTO (the ring header is not what was asked
 * for), or what open(), ioctl() or mmap() failed with.
 */
int fb_task_open(struct fb_task **out, int devfd,
		 const struct fb_task_opts *opts);

/**
 * typedef fb_fill_fn - a write task asks for one block's data
 * @ctx: the caller's pointer given to fb_task_poll_write()
 * @lbn: block number in the task (bytes start + lbn * blksize)
 * @buf: fill these @len bytes with the block's data
 * @len: the block size in bytes
 *
 * Called when the kernel is about to issue the block, in lbn order (any
 * order with @any_order), once per block unless the task ends first.
 *
 * Return: 0 to hand the block over; any other value stops
 * fb_task_poll_write(), which returns it (the block is then not written:
 * abort the task).
 */
typedef int (*fb_fill_fn)(void *ctx, uint64_t lbn, void *buf, uint32_t len);

/**
 * fb_task_open_write() - register a write task (FB_IOC_WRITE)
 * @out: the new task on success
 * @devfd: a block device opened for writing (O_WRONLY or O_RDWR)
 * @opts: as for fb_task_open()
 *
 * Return: as fb_task_open(); -EACCES when @devfd is not open for writing.
 */
int fb_task_open_write(struct fb_task **out, int devfd,
		       const struct fb_task_opts *opts);

/**
 * fb_task_poll() - wait for blocks and deliver them
 * @t: the task
 * @timeout_ms: most milliseconds to wait when no block is waiting (-1:
 *	until a block comes or the task ends; 0: do not wait)
 * @fn: called once per block, in ring order (not lbn order)
 * @ctx: passed to @fn
 *
 * Delivers every block waiting, then gives their slots back to the kernel
 * (FB_IOC_CONSUME) so the task goes on. Interrupted by a signal, it
 * returns 0 early: the caller checks its flags and calls it again.
 *
 * Return: 1 when the task has ended and every block was delivered (see
 * fb_task_result()), 0 when it is still running, @fn's nonzero return,
 * or a negative errno (-EPROTO: a descriptor the kernel should never
 * write; what poll() or ioctl() failed with).
 */
int fb_task_poll(struct fb_task *t, int timeout_ms, fb_block_fn fn,
		 void *ctx);

/**
 * fb_task_poll_write() - fb_task_poll() for a write task
 * @t: a task from fb_task_open_write()
 * @timeout_ms: as for fb_task_poll()
 * @fill: called for the block the kernel asks for next
 * @done: called once per written block (@data: what was written), with
 *	its status (-EIO: the device failed the write)
 * @ctx: passed to @fill and @done
 *
 * Delivers the finished blocks first (which frees ring slots), then
 * answers the kernel's request for data, if any.
 *
 * Return: as fb_task_poll(); -EINVAL for a read task, -EPROTO when the
 * kernel asks for a block outside the task.
 */
int fb_task_poll_write(struct fb_task *t, int timeout_ms, fb_fill_fn fill,
		       fb_block_fn done, void *ctx);

/**
 * fb_task_abort() - stop issuing blocks; those in flight still come
 * @t: the task
 *
 * Keep calling fb_task_poll() until it returns 1; fb_task_result() is
 * then -ECANCELED (or 0 if the task had just completed).
 *
 * Return: 0, -EALREADY (already ending) or another negative errno.
 */
int fb_task_abort(struct fb_task *t);

/**
 * fb_task_promote() - issue the task's blocks without waiting for idle time
 * @t: the task
 *
 * Return: 0, -EALREADY (already promoted) or another negative errno.
 */
int fb_task_promote(struct fb_task *t);

/**
 * fb_task_result() - how the task ended
 * @t: the task
 *
 * Return: 0 (every block was issued), -ECANCELED (aborted), -ENODEV (the
 * device went away), another negative errno; 1 while it is running.
 */
int fb_task_result(const struct fb_task *t);

/**
 * fb_task_nblocks() - blocks in the task
 * @t: the task
 *
 * Return: the number of blocks (the range cut at the device's end, without
 * a partial last block).
 */
uint64_t fb_task_nblocks(const struct fb_task *t);

/**
 * fb_task_done() - blocks delivered to the callback so far
 * @t: the task
 *
 * Return: the count, failed blocks included.
 */
uint64_t fb_task_done(const struct fb_task *t);

/**
 * fb_task_prefix() - blocks 0..n-1 have all been delivered
 * @t: the task
 *
 * The resume point after an abort is start + fb_task_prefix() * blksize.
 *
 * Return: n, the length of the delivered prefix.
 */
uint64_t fb_task_prefix(const struct fb_task *t);

/**
 * fb_task_id() - the kernel's task id (for logs)
 * @t: the task
 *
 * Return: the id, > 0.
 */
uint32_t fb_task_id(const struct fb_task *t);

/**
 * fb_task_fd() - the /dev/freeblock descriptor, for a caller's own poll()
 * @t: the task
 *
 * POLLIN means blocks are waiting, POLLHUP that the task has ended.
 *
 * Return: the fd; owned by @t.
 */
int fb_task_fd(const struct fb_task *t);

/**
 * fb_task_close() - end the task (aborted if running), unmap, close
 * @t: the task, or NULL
 *
 * The kernel waits for the blocks in flight before the close returns.
 */
void fb_task_close(struct fb_task *t);

/**
 * fb_dev_size() - a block device's size
 * @fd: the open device
 * @bytes: out, its size in bytes
 *
 * Return: 0 or a negative errno (-ENOTBLK: not a block device).
 */
int fb_dev_size(int fd, uint64_t *bytes);

#endif /* LIBFREEBLOCK_H */
