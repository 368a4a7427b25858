// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freeblock: a kernel client of its own API, for the tests, in debugfs:
 *
 *	echo "write /dev/vdb 0 1048576 65536 0x5eed 0" > .../freeblock/selftest
 *	echo "read /dev/vdb 0 1048576 65536 0x5eed 0" > .../freeblock/selftest
 *	cat .../freeblock/selftest
 *
 * Arguments: op, device path, start and length (bytes), block size, pattern
 * seed, rate ceiling (KiB/s, 0: none), and optionally task flags
 * (FB_TASK_F_*, 1: speculative; through fb_read_opts()/fb_write_opts()).
 * A write task's getbuffer fills each block with the pattern (word at byte
 * offset o: o * 0x9e3779b97f4a7c15 ^ seed, as tests/vm/guest/fbtest.c
 * writes it); a read task's callback
 * checks it. Buffers alternate between kmalloc and vmalloc memory, are
 * allocated in getbuffer and freed in the callback, so the most buffers
 * ever held at once shows the late binding: at most `depth`.
 * One self-test at a time; the device is opened exclusively until the
 * task's final callback (rmmod aborts it).
 */
#include <linux/debugfs.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "mobio_compat.h"
#include "fb_internal.h"

#define FB_PATTERN_MULT	0x9e3779b97f4a7c15ULL

/**
 * struct fb_selftest - the one self-test task
 * @lock: protects the fields below but the atomics
 * @running: a task is registered and has not ended
 * @id: its id
 * @result: the final status of the last task
 * @op: "read" or "write"
 * @start: first byte
 * @blksize: block size
 * @seed: pattern seed
 * @mbd: the opened device
 * @outstanding: buffers handed out and not called back
 * @max_outstanding: the most at once
 * @getbuffer_calls: getbuffer calls that gave a buffer
 * @blocks: per-block callbacks
 * @bad: blocks with a wrong pattern or an error
 */
struct fb_selftest {
	struct mutex lock;		/* registration state */
	bool running;
	int id;
	int result;
	const char *op;
	u64 start;
	u32 blksize;
	u64 seed;
	struct mobio_bdev mbd;
	atomic_t outstanding;
	atomic_t max_outstanding;
	atomic64_t getbuffer_calls;
	atomic64_t blocks;
	atomic64_t bad;
};

static struct fb_selftest fb_st = {
	.lock = __MUTEX_INITIALIZER(fb_st.lock),
	.op = "none",
};

static u64 fb_pattern(u64 off, u64 seed)
{
	return (off * FB_PATTERN_MULT) ^ seed;
}

static void *fb_st_getbuffer(void *ctx, u64 lbn, u32 len)
{
	struct fb_selftest *st = ctx;
	u64 off = st->start + lbn * len;
	u64 *w;
	u32 i;
	int n;

	w = (lbn & 1) ? vmalloc(len) : kmalloc(len, GFP_KERNEL);
	if (!w)
		return NULL;
	if (!strcmp(st->op, "write"))
		for (i = 0; i < len / 8; i++)
			w[i] = fb_pattern(off + i * 8, st->seed);
	n = atomic_inc_return(&st->outstanding);
	if (n > atomic_read(&st->max_outstanding))
		atomic_set(&st->max_outstanding, n);
	atomic64_inc(&st->getbuffer_calls);
	return w;
}

static void fb_st_callback(void *ctx, u64 lbn, void *buf, int status)
{
	struct fb_selftest *st = ctx;
	u64 off = st->start + lbn * st->blksize;
	const u64 *w = buf;
	u32 i;

	if (lbn == FB_LBN_END) {
		mutex_lock(&st->lock);
		st->result = status;
		mobio_bdev_close(&st->mbd);
		st->running = false;
		mutex_unlock(&st->lock);
		return;
	}
	if (status) {
		atomic64_inc(&st->bad);
	} else if (!strcmp(st->op, "read")) {
		for (i = 0; i < st->blksize / 8; i++)
			if (w[i] != fb_pattern(off + i * 8, st->seed)) {
				atomic64_inc(&st->bad);
				break;
			}
	}
	atomic64_inc(&st->blocks);
	atomic_dec(&st->outstanding);
	kvfree(buf);
}

static ssize_t fb_st_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	struct fb_selftest *st = &fb_st;
	char buf[128], op[8], path[64];
	struct fb_opts opts = { 0 };
	struct fb_range range;
	u32 blksize;
	u64 seed;
	int ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	ret = sscanf(buf, "%7s %63s %llu %llu %u %llx %u %u", op, path,
		     &range.start, &range.len, &blksize, &seed,
		     &opts.rate.ceiling_kbps, &opts.flags);
	if (ret != 7 && ret != 8)
		return -EINVAL;
	if (strcmp(op, "read") && strcmp(op, "write"))
		return -EINVAL;

	mutex_lock(&st->lock);
	if (st->running) {
		ret = -EBUSY;
		goto out;
	}
	ret = mobio_bdev_open(path, st, &st->mbd);
	if (ret)
		goto out;
	st->op = !strcmp(op, "read") ? "read" : "write";
	st->start = range.start;
	st->blksize = blksize;
	st->seed = seed;
	st->result = 0;
	atomic_set(&st->outstanding, 0);
	atomic_set(&st->max_outstanding, 0);
	atomic64_set(&st->getbuffer_calls, 0);
	atomic64_set(&st->blocks, 0);
	atomic64_set(&st->bad, 0);
	st->running = true;
	/* The worker may end the task at once: it takes st->lock then. */
	ret = (*op == 'r' ? fb_read_opts : fb_write_opts)(st->mbd.bdev, &range,
							  blksize,
							  fb_st_callback,
							  fb_st_getbuffer, st,
							  &opts);
	if (ret < 0) {
		st->running = false;
		mobio_bdev_close(&st->mbd);
		goto out;
	}
	st->id = ret;
	ret = count;
out:
	mutex_unlock(&st->lock);
	return ret;
}

static ssize_t fb_st_read(struct file *file, char __user *ubuf, size_t count,
			  loff_t *ppos)
{
	struct fb_selftest *st = &fb_st;
	char buf[256];
	int n;

	mutex_lock(&st->lock);
	n = scnprintf(buf, sizeof(buf),
		      "state=%s op=%s id=%d result=%d blocks=%lld bad=%lld getbuffer_calls=%lld outstanding=%d max_outstanding=%d\n",
		      st->running ? "running" : "ended", st->op, st->id,
		      st->result, atomic64_read(&st->blocks),
		      atomic64_read(&st->bad),
		      atomic64_read(&st->getbuffer_calls),
		      atomic_read(&st->outstanding),
		      atomic_read(&st->max_outstanding));
	mutex_unlock(&st->lock);
	return simple_read_from_buffer(ubuf, count, ppos, buf, n);
}

static const struct file_operations fb_st_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.read = fb_st_read,
	.write = fb_st_write,
	.llseek = default_llseek,
};

/**
 * fb_selftest_init() - create debugfs freeblock/selftest
 * @dir: the freeblock debugfs directory
 *
 * Context: module init.
 */
void fb_selftest_init(struct dentry *dir)
{
	debugfs_create_file("selftest", 0600, dir, NULL, &fb_st_fops);
}
