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
 *
 *	echo "bh 5000" > .../freeblock/selftest
 *
 * calls fb_kick(), fb_set_rate() (the same ceiling) and fb_promote() on
 * the running task from a soft hrtimer (softirq context) 5000 times,
 * 200 us apart, and fb_abort() at the last one: the API's softirq
 * contract, while the issuer takes the same locks in process context.
 */
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include "mobio_compat.h"
#include "fb_internal.h"

#define FB_PATTERN_MULT	0x9e3779b97f4a7c15ULL
/* Often enough to meet the issuer holding the disk's lock. */
#define FB_ST_BH_PERIOD_NS	(200ULL * NSEC_PER_USEC)
#define FB_ST_BH_MAX		1000000

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
 * @ceiling_kbps: the task's rate ceiling
 * @mbd: the opened device
 * @outstanding: buffers handed out and not called back
 * @max_outstanding: the most at once
 * @getbuffer_calls: getbuffer calls that gave a buffer
 * @blocks: per-block callbacks
 * @bad: blocks with a wrong pattern or an error
 * @bh_timer: the soft hrtimer of a "bh" run
 * @bh_id: the task it calls the API on
 * @bh_left: its calls still to make
 * @bh_calls: calls made
 * @bh_in_softirq: calls made in softirq context
 * @bh_errors: API calls that returned other than 0, -ENOENT or -EALREADY
 * @bh_abort: what the last call's fb_abort() returned
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
	u32 ceiling_kbps;
	struct mobio_bdev mbd;
	atomic_t outstanding;
	atomic_t max_outstanding;
	atomic64_t getbuffer_calls;
	atomic64_t blocks;
	atomic64_t bad;

	struct hrtimer bh_timer;
	int bh_id;
	atomic_t bh_left;
	atomic_t bh_calls;
	atomic_t bh_in_softirq;
	atomic_t bh_errors;
	atomic_t bh_abort;
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

static void fb_st_bh_check(struct fb_selftest *st, int ret)
{
	if (ret && ret != -ENOENT && ret != -EALREADY)
		atomic_inc(&st->bh_errors);
}

static enum hrtimer_restart fb_st_bh_fn(struct hrtimer *timer)
{
	struct fb_selftest *st = container_of(timer, struct fb_selftest,
					      bh_timer);
	struct fb_rate rate = { .ceiling_kbps = st->ceiling_kbps };
	int left = atomic_dec_return(&st->bh_left), ret;

	if (in_serving_softirq())
		atomic_inc(&st->bh_in_softirq);
	fb_st_bh_check(st, fb_kick(st->bh_id));
	fb_st_bh_check(st, fb_set_rate(st->bh_id, &rate));
	fb_st_bh_check(st, fb_promote(st->bh_id));
	atomic_inc(&st->bh_calls);
	if (left > 0) {
		hrtimer_forward_now(timer, ns_to_ktime(FB_ST_BH_PERIOD_NS));
		return HRTIMER_RESTART;
	}
	ret = fb_abort(st->bh_id);
	fb_st_bh_check(st, ret);
	atomic_set(&st->bh_abort, ret);
	return HRTIMER_NORESTART;
}

/* "bh COUNT": COUNT calls from softirq on the running task. */
static int fb_st_bh_start(struct fb_selftest *st, const char *buf)
{
	unsigned int count;
	int ret = 0;

	if (sscanf(buf, "bh %u", &count) != 1 || !count ||
	    count > FB_ST_BH_MAX)
		return -EINVAL;
	mutex_lock(&st->lock);
	if (!st->running) {
		ret = -ESRCH;
	} else if (hrtimer_active(&st->bh_timer)) {
		ret = -EBUSY;
	} else {
		st->bh_id = st->id;
		atomic_set(&st->bh_left, count);
		atomic_set(&st->bh_calls, 0);
		atomic_set(&st->bh_in_softirq, 0);
		atomic_set(&st->bh_errors, 0);
		atomic_set(&st->bh_abort, 1);
		hrtimer_start(&st->bh_timer, ns_to_ktime(FB_ST_BH_PERIOD_NS),
			      HRTIMER_MODE_REL_SOFT);
	}
	mutex_unlock(&st->lock);
	return ret;
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
	if (!strncmp(buf, "bh ", 3)) {
		ret = fb_st_bh_start(st, buf);
		return ret ? ret : count;
	}
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
	st->ceiling_kbps = opts.rate.ceiling_kbps;
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
	char buf[384];
	int n;

	mutex_lock(&st->lock);
	n = scnprintf(buf, sizeof(buf),
		      "state=%s op=%s id=%d result=%d blocks=%lld bad=%lld getbuffer_calls=%lld outstanding=%d max_outstanding=%d bh_calls=%d bh_in_softirq=%d bh_errors=%d bh_abort=%d\n",
		      st->running ? "running" : "ended", st->op, st->id,
		      st->result, atomic64_read(&st->blocks),
		      atomic64_read(&st->bad),
		      atomic64_read(&st->getbuffer_calls),
		      atomic_read(&st->outstanding),
		      atomic_read(&st->max_outstanding),
		      atomic_read(&st->bh_calls),
		      atomic_read(&st->bh_in_softirq),
		      atomic_read(&st->bh_errors),
		      atomic_read(&st->bh_abort));
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
	hrtimer_init(&fb_st.bh_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
	fb_st.bh_timer.function = fb_st_bh_fn;
	debugfs_create_file("selftest", 0600, dir, NULL, &fb_st_fops);
}

/**
 * fb_selftest_exit() - stop a "bh" run (the debugfs file is gone)
 *
 * Context: module exit, process.
 */
void fb_selftest_exit(void)
{
	hrtimer_cancel(&fb_st.bh_timer);
}
