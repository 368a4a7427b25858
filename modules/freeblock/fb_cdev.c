// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freeblock: /dev/freeblock, the API for processes (see
 * include/uapi/linux/freeblock.h). One background task per open file:
 * FB_IOC_SCRUB (FB_IOC_WRITE) takes the fd of a block device the caller
 * opened for reading (writing), so the device's own permissions decide who
 * may scrub or write it. Blocks land in a vmalloc'd ring that the process
 * maps read-only: for a read the kernel takes a free data slot when a block
 * is issued (getbuffer), writes a descriptor when it completes and wakes
 * poll(); FB_IOC_CONSUME returns slots. A full ring stalls the task,
 * nothing is dropped. For a write, getbuffer asks the process for the
 * block (hdr->want_lbn, POLLOUT) and returns no buffer until FB_IOC_FILL
 * has copied that block into a slot: late binding across the user
 * boundary.
 *
 * A ring is memory any user who can read a disk may pin: before it is
 * allocated, the registration checks max_tasks and the ring caps (the
 * rings of the files one uid opened, uid_ring_kib; of all files,
 * total_ring_kib); the ring is then charged to the caller's memory cgroup.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include "mobio_compat.h"
#include "fb_internal.h"

/**
 * struct fb_file - one open /dev/freeblock
 * @lock: serializes the ioctls and mmap (registration state)
 * @uid: the effective uid of the opener, whose ring cap @charged counts in
 * @charged: pages counted in the ring caps for this file (0: none)
 * @id: the task, valid when @registered
 * @registered: FB_IOC_SCRUB or FB_IOC_WRITE succeeded
 * @write: the task writes (FB_IOC_WRITE)
 * @bdev_file: the caller's block device file, held until the task ends
 * @ring: vmalloc memory charged to the registering process's memory
 *	cgroup: header page, descriptors, data slots
 * @ring_bytes: its size
 * @hdr: @ring's header
 * @desc: the descriptor array
 * @data: slot 0
 * @nslots: descriptors and slots
 * @slot_bytes: bytes per slot (the block size)
 * @ring_lock: protects @used, @desc_slot, @head, @tail and the ring
 * @used: slots holding a block not yet consumed
 * @desc_slot: the slot of each descriptor, the kernel's own copy
 * @head: descriptors produced
 * @tail: descriptors consumed
 * @ended: the final callback came
 * @want_lbn: write: the block getbuffer asked for
 * @want_pending: write: @want_lbn waits for FB_IOC_FILL
 * @filled_slot: write: the slot FB_IOC_FILL filled with @want_lbn, or -1
 * @wait: poll() waiters
 * @done: completed by the final callback; release() waits for it
 */
struct fb_file {
	struct mutex lock;		/* registration, ioctls, mmap */
	kuid_t uid;
	unsigned long charged;
	int id;
	bool registered;
	bool write;
	struct file *bdev_file;
	void *ring;
	size_t ring_bytes;
	struct fb_ring_hdr *hdr;
	struct fb_desc *desc;
	u8 *data;
	u32 nslots;
	u32 slot_bytes;

	spinlock_t ring_lock;		/* slots, head, tail, ring */
	unsigned long *used;
	u32 *desc_slot;
	u32 head;
	u32 tail;
	bool ended;
	u64 want_lbn;
	bool want_pending;
	long filled_slot;

	wait_queue_head_t wait;
	struct completion done;
};

/* --- Ring caps ------------------------------------------------------------ */

/*
 * Two full-size rings (FB_RING_BYTES_MAX of slots each) per uid, or many of
 * the tools' default (16 slots of 64 KiB: 1 MiB); two uids' worth in all.
 */
static struct fb_uint_param fb_uid_ring_kib = {
	.val = 131072, .min = 0, .max = 16777216 };
module_param_cb(uid_ring_kib, &fb_uint_ops, &fb_uid_ring_kib, 0644);
MODULE_PARM_DESC(uid_ring_kib, "KiB of /dev/freeblock rings the files one uid opened may hold (0-16777216, default 131072)");

static struct fb_uint_param fb_total_ring_kib = {
	.val = 262144, .min = 0, .max = 16777216 };
module_param_cb(total_ring_kib, &fb_uint_ops, &fb_total_ring_kib, 0644);
MODULE_PARM_DESC(total_ring_kib, "KiB of /dev/freeblock rings all files may hold (0-16777216, default 262144)");

/*
 * Ring memory: charged to the caller's memory cgroup; at its memory.max
 * the allocation fails (ENOMEM) rather than invoke the OOM killer.
 */
#define FB_RING_GFP	(GFP_KERNEL_ACCOUNT | __GFP_ZERO | \
			 __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/* Pages counted in the caps: by uid (xa_mk_value), and of every file. */
static DEFINE_MUTEX(fb_rings_lock);
static DEFINE_XARRAY(fb_rings_by_uid);
static unsigned long fb_rings_pages;

/* Bytes of a ring of @nslots slots of @blksize; its parts' offsets. */
static size_t fb_ring_layout(u32 nslots, u32 blksize, size_t *desc_off,
			     size_t *data_off)
{
	*desc_off = PAGE_SIZE;
	*data_off = *desc_off + PAGE_ALIGN(nslots * sizeof(struct fb_desc));
	return *data_off + (size_t)nslots * blksize;
}

/* Pages a cap counts for a task: its ring, a speculative task's bitmap. */
static unsigned long fb_ring_cost(const struct fb_scrub_req *req,
				  u64 nblocks)
{
	size_t desc_off, data_off;
	unsigned long pages;

	pages = PAGE_ALIGN(fb_ring_layout(req->nslots, req->blksize,
					  &desc_off, &data_off)) >> PAGE_SHIFT;
	if (req->flags & FB_SCRUB_F_SPECULATIVE)
		pages += DIV_ROUND_UP(BITS_TO_LONGS(nblocks) * sizeof(long),
				      PAGE_SIZE);
	return pages;
}

static unsigned long fb_kib_pages(const struct fb_uint_param *p)
{
	return (unsigned long)READ_ONCE(p->val) >> (PAGE_SHIFT - 10);
}

/*
 * Count @pages for @uid: -ENOSPC when uid_ring_kib or total_ring_kib
 * would be passed, -ENOMEM when the uid's entry cannot be stored.
 */
static int fb_rings_charge(kuid_t uid, unsigned long pages)
{
	unsigned long key = __kuid_val(uid), held;
	int ret = 0;

	mutex_lock(&fb_rings_lock);
	held = xa_to_value(xa_load(&fb_rings_by_uid, key));
	if (held + pages > fb_kib_pages(&fb_uid_ring_kib) ||
	    fb_rings_pages + pages > fb_kib_pages(&fb_total_ring_kib)) {
		ret = -ENOSPC;
		goto out;
	}
	ret = xa_err(xa_store(&fb_rings_by_uid, key, xa_mk_value(held + pages),
			      GFP_KERNEL));
	if (!ret)
		fb_rings_pages += pages;
out:
	mutex_unlock(&fb_rings_lock);
	return ret;
}

/* Give back what fb_rings_charge() counted for @uid. */
static void fb_rings_uncharge(kuid_t uid, unsigned long pages)
{
	unsigned long key = __kuid_val(uid), held;

	mutex_lock(&fb_rings_lock);
	held = xa_to_value(xa_load(&fb_rings_by_uid, key)) - pages;
	/* replacing an entry allocates nothing: it cannot fail */
	if (held)
		xa_store(&fb_rings_by_uid, key, xa_mk_value(held), GFP_KERNEL);
	else
		xa_erase(&fb_rings_by_uid, key);
	fb_rings_pages -= pages;
	mutex_unlock(&fb_rings_lock);
}

/**
 * fb_cdev_rings_show() - debugfs freeblock/rings: the bytes the ring caps
 *	count, "total BYTES" then "uid UID BYTES" for each uid holding some
 * @m: the seq_file
 * @unused: unused
 *
 * Context: process, may sleep.
 * Return: 0.
 */
int fb_cdev_rings_show(struct seq_file *m, void *unused)
{
	unsigned long key;
	void *e;

	mutex_lock(&fb_rings_lock);
	seq_printf(m, "total %lu\n", fb_rings_pages << PAGE_SHIFT);
	xa_for_each(&fb_rings_by_uid, key, e)
		seq_printf(m, "uid %u %lu\n",
			   from_kuid(&init_user_ns, KUIDT_INIT(key)),
			   xa_to_value(e) << PAGE_SHIFT);
	mutex_unlock(&fb_rings_lock);
	return 0;
}

/* --- The task's callbacks -------------------------------------------------- */

static void *fb_cdev_getbuffer(void *ctx, u64 lbn, u32 len)
{
	struct fb_file *f = ctx;
	unsigned long slot;

	spin_lock(&f->ring_lock);
	slot = find_first_zero_bit(f->used, f->nslots);
	if (slot < f->nslots)
		__set_bit(slot, f->used);
	spin_unlock(&f->ring_lock);
	return slot < f->nslots ? f->data + slot * f->slot_bytes : NULL;
}

/*
 * A write task's getbuffer: the slot FB_IOC_FILL filled with @lbn, or NULL
 * after asking the process for @lbn (the issuer retries at fb_kick()).
 */
static void *fb_cdev_getbuffer_write(void *ctx, u64 lbn, u32 len)
{
	struct fb_file *f = ctx;
	bool ask = false;
	void *buf = NULL;

	spin_lock(&f->ring_lock);
	if (f->want_pending && f->want_lbn == lbn && f->filled_slot >= 0) {
		buf = f->data + f->filled_slot * f->slot_bytes;
		f->filled_slot = -1;
		f->want_pending = false;
		WRITE_ONCE(f->hdr->want_pending, 0);
	} else if (!f->want_pending || f->want_lbn != lbn) {
		f->want_lbn = lbn;
		f->want_pending = true;
		WRITE_ONCE(f->hdr->want_lbn, lbn);
		smp_wmb();	/* want_lbn before want_pending */
		WRITE_ONCE(f->hdr->want_seq, f->hdr->want_seq + 1);
		WRITE_ONCE(f->hdr->want_pending, 1);
		ask = true;
	}
	spin_unlock(&f->ring_lock);
	if (ask)
		wake_up_interruptible_poll(&f->wait, EPOLLOUT | EPOLLWRNORM);
	return buf;
}

static void fb_cdev_callback(void *ctx, u64 lbn, void *buf, int status)
{
	struct fb_file *f = ctx;
	u32 idx;

	if (lbn == FB_LBN_END) {
		spin_lock(&f->ring_lock);
		WRITE_ONCE(f->hdr->result, status);
		smp_wmb();	/* result before state */
		WRITE_ONCE(f->hdr->state, FB_STATE_ENDED);
		f->ended = true;
		spin_unlock(&f->ring_lock);
		wake_up_interruptible_poll(&f->wait, EPOLLHUP);
		complete(&f->done);	/* f may be freed after this */
		return;
	}
	spin_lock(&f->ring_lock);
	idx = f->head % f->nslots;
	f->desc[idx].lbn = lbn;
	f->desc[idx].status = status;
	f->desc[idx].slot = ((u8 *)buf - f->data) / f->slot_bytes;
	f->desc_slot[idx] = f->desc[idx].slot;
	f->hdr->blocks_done++;
	if (status)
		f->hdr->blocks_failed++;
	smp_wmb();	/* descriptor before head */
	f->head++;
	WRITE_ONCE(f->hdr->head, f->head);
	spin_unlock(&f->ring_lock);
	wake_up_interruptible_poll(&f->wait, EPOLLIN | EPOLLRDNORM);
}

static void fb_file_free_ring(struct fb_file *f)
{
	vfree(f->ring);
	f->ring = NULL;
	if (f->charged)
		fb_rings_uncharge(f->uid, f->charged);
	f->charged = 0;
	bitmap_free(f->used);
	f->used = NULL;
	kfree(f->desc_slot);
	f->desc_slot = NULL;
	if (f->bdev_file)
		fput(f->bdev_file);
	f->bdev_file = NULL;
}

/* Caller holds f->lock: end the task (if any) and wait for its end. */
static void fb_file_end_task(struct fb_file *f)
{
	if (!f->registered)
		return;
	fb_abort(f->id);
	wait_for_completion(&f->done);
	WRITE_ONCE(f->registered, false);
}

static int fb_file_alloc_ring(struct fb_file *f, u32 nslots, u32 blksize)
{
	size_t desc_off, data_off;

	f->ring_bytes = fb_ring_layout(nslots, blksize, &desc_off, &data_off);
	/* not vmalloc_user(): it has no GFP argument, so no accounting */
	f->ring = __vmalloc(f->ring_bytes, FB_RING_GFP);
	f->used = bitmap_zalloc(nslots, GFP_KERNEL_ACCOUNT);
	f->desc_slot = kcalloc(nslots, sizeof(*f->desc_slot),
			       GFP_KERNEL_ACCOUNT);
	if (!f->ring || !f->used || !f->desc_slot)
		return -ENOMEM;
	f->hdr = f->ring;
	f->desc = f->ring + desc_off;
	f->data = f->ring + data_off;
	f->nslots = nslots;
	f->slot_bytes = blksize;
	f->head = 0;
	f->tail = 0;
	f->ended = false;
	f->want_pending = false;
	f->filled_slot = -1;
	f->hdr->magic = FB_RING_MAGIC;
	f->hdr->nslots = nslots;
	f->hdr->slot_bytes = blksize;
	f->hdr->desc_off = desc_off;
	f->hdr->data_off = data_off;
	f->hdr->state = FB_STATE_RUNNING;
	return 0;
}

/* The checks a task's registration would make, before the ring exists. */
static int fb_scrub_check(const struct fb_scrub_req *req,
			  struct block_device *bdev, u64 *nblocks)
{
	u64 size = bdev_nr_bytes(bdev), len;

	if ((req->flags & ~FB_SCRUB_F_ALL) || req->__pad || req->id ||
	    req->nblocks || req->ring_bytes)
		return -EINVAL;
	if (!req->nslots || req->nslots > FB_SLOTS_MAX)
		return -EINVAL;
	if (!is_power_of_2(req->blksize) || req->blksize < FB_BLKSIZE_MIN ||
	    req->blksize > FB_BLKSIZE_MAX ||
	    req->blksize % bdev_logical_block_size(bdev))
		return -EINVAL;
	if ((u64)req->nslots * req->blksize > FB_RING_BYTES_MAX)
		return -EINVAL;
	if (req->start % req->blksize || req->start >= size)
		return -EINVAL;
	len = min(req->len ? req->len : U64_MAX, size - req->start);
	if (len < req->blksize)
		return -EINVAL;
	if (req->floor_kbps && req->ceiling_kbps &&
	    req->floor_kbps > req->ceiling_kbps)
		return -EINVAL;
	*nblocks = div_u64(len, req->blksize);
	if ((req->flags & FB_SCRUB_F_SPECULATIVE) &&
	    *nblocks > FB_SPEC_BLOCKS_MAX)
		return -EINVAL;
	return 0;
}

static long fb_ioc_register(struct fb_file *f, struct fb_scrub_req __user *ureq,
			    bool write)
{
	struct fb_scrub_req req;
	struct block_device *bdev;
	struct fb_range range;
	struct fb_opts opts = { 0 };	/* no owner: freeblock's own code */
	unsigned long pages;
	struct file *bf;
	u64 nblocks;
	int ret;

	if (copy_from_user(&req, ureq, sizeof(req)))
		return -EFAULT;
	if (f->registered)
		return -EBUSY;
	bf = fget(req.fd);
	if (!bf)
		return -EBADF;
	if (!S_ISBLK(file_inode(bf)->i_mode)) {
		ret = -ENOTBLK;
		goto err_fput;
	}
	if (!(bf->f_mode & (write ? FMODE_WRITE : FMODE_READ))) {
		ret = -EACCES;
		goto err_fput;
	}
	bdev = I_BDEV(bf->f_mapping->host);
	ret = fb_scrub_check(&req, bdev, &nblocks);
	if (ret)
		goto err_fput;
	/* every limit before the ring exists */
	if (fb_disk_full(bdev)) {
		ret = -EBUSY;
		goto err_fput;
	}
	pages = fb_ring_cost(&req, nblocks);
	ret = fb_rings_charge(f->uid, pages);
	if (ret)
		goto err_fput;
	f->charged = pages;
	f->bdev_file = bf;
	ret = fb_file_alloc_ring(f, req.nslots, req.blksize);
	if (ret)
		goto err_free;
	f->hdr->nblocks = nblocks;

	range.start = req.start;
	range.len = req.len ? req.len : U64_MAX;
	opts.rate.floor_kbps = req.floor_kbps;
	opts.rate.ceiling_kbps = req.ceiling_kbps;
	BUILD_BUG_ON(FB_SCRUB_F_SPECULATIVE != FB_TASK_F_SPECULATIVE);
	opts.flags = req.flags;
	reinit_completion(&f->done);
	f->write = write;
	if (write)
		ret = fb_write_opts(bdev, &range, req.blksize, fb_cdev_callback,
				    fb_cdev_getbuffer_write, f, &opts);
	else
		ret = fb_read_opts(bdev, &range, req.blksize, fb_cdev_callback,
				   fb_cdev_getbuffer, f, &opts);
	if (ret < 0)
		goto err_free;
	f->id = ret;
	WRITE_ONCE(f->registered, true);

	req.id = f->id;
	req.nblocks = nblocks;
	req.ring_bytes = f->ring_bytes;
	if (copy_to_user(ureq, &req, sizeof(req))) {
		ret = -EFAULT;
		fb_file_end_task(f);
		goto err_free;
	}
	return 0;

err_free:
	fb_file_free_ring(f);
	return ret;
err_fput:
	fput(bf);
	return ret;
}

static long fb_ioc_consume(struct fb_file *f, unsigned long arg)
{
	u32 tail = arg;

	if (!f->registered)
		return -EINVAL;
	if (arg > U32_MAX)
		return -EINVAL;
	spin_lock(&f->ring_lock);
	if (tail - f->tail > f->head - f->tail) {
		spin_unlock(&f->ring_lock);
		return -EINVAL;
	}
	for (; f->tail != tail; f->tail++)
		__clear_bit(f->desc_slot[f->tail % f->nslots], f->used);
	WRITE_ONCE(f->hdr->tail, f->tail);
	spin_unlock(&f->ring_lock);
	fb_kick(f->id);	/* -ENOENT once the task has ended: harmless */
	return 0;
}

/* Take a free slot for the block the write task asked for, copy it in. */
static long fb_ioc_fill(struct fb_file *f, struct fb_fill __user *ufill)
{
	struct fb_fill fill;
	unsigned long slot;

	if (copy_from_user(&fill, ufill, sizeof(fill)))
		return -EFAULT;
	if (!f->registered || !f->write || fill.flags ||
	    fill.len != f->slot_bytes)
		return -EINVAL;
	spin_lock(&f->ring_lock);
	if (!f->want_pending || f->want_lbn != fill.lbn ||
	    f->filled_slot >= 0) {
		spin_unlock(&f->ring_lock);
		return -EINVAL;
	}
	slot = find_first_zero_bit(f->used, f->nslots);
	if (slot >= f->nslots) {
		spin_unlock(&f->ring_lock);
		return -EAGAIN;
	}
	__set_bit(slot, f->used);
	spin_unlock(&f->ring_lock);

	if (copy_from_user(f->data + slot * f->slot_bytes,
			   u64_to_user_ptr(fill.data), fill.len)) {
		spin_lock(&f->ring_lock);
		__clear_bit(slot, f->used);
		spin_unlock(&f->ring_lock);
		return -EFAULT;
	}
	spin_lock(&f->ring_lock);
	f->filled_slot = slot;
	spin_unlock(&f->ring_lock);
	fb_kick(f->id);	/* -ENOENT once the task has ended: harmless */
	return 0;
}

/* FB_IOC_SET_RATE: the file's task's new floor and ceiling, at once. */
static long fb_ioc_set_rate(struct fb_file *f, struct fb_rate_req __user *ureq)
{
	struct fb_rate_req req;
	struct fb_rate rate;

	if (copy_from_user(&req, ureq, sizeof(req)))
		return -EFAULT;
	if (!f->registered || req.flags || req.__pad)
		return -EINVAL;
	rate.floor_kbps = req.floor_kbps;
	rate.ceiling_kbps = req.ceiling_kbps;
	return fb_set_rate(f->id, &rate);
}

static long fb_cdev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct fb_file *f = file->private_data;
	long ret;

	mutex_lock(&f->lock);
	switch (cmd) {
	case FB_IOC_SCRUB:
	case FB_IOC_WRITE:
		ret = fb_ioc_register(f, (struct fb_scrub_req __user *)arg,
				      cmd == FB_IOC_WRITE);
		break;
	case FB_IOC_FILL:
		ret = fb_ioc_fill(f, (struct fb_fill __user *)arg);
		break;
	case FB_IOC_CONSUME:
		ret = fb_ioc_consume(f, arg);
		break;
	case FB_IOC_ABORT:
		ret = f->registered ? fb_abort(f->id) : -EINVAL;
		break;
	case FB_IOC_PROMOTE:
		ret = f->registered ? fb_promote(f->id) : -EINVAL;
		break;
	case FB_IOC_SET_RATE:
		ret = fb_ioc_set_rate(f, (struct fb_rate_req __user *)arg);
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	mutex_unlock(&f->lock);
	return ret;
}

static __poll_t fb_cdev_poll(struct file *file, poll_table *pt)
{
	struct fb_file *f = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &f->wait, pt);
	if (!READ_ONCE(f->registered))
		return EPOLLERR;
	spin_lock(&f->ring_lock);
	if (f->head != f->tail)
		mask |= EPOLLIN | EPOLLRDNORM;
	/* a block is asked for and a slot is free to FB_IOC_FILL it */
	if (f->want_pending && f->filled_slot < 0 && !f->ended &&
	    find_first_zero_bit(f->used, f->nslots) < f->nslots)
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (f->ended)
		mask |= EPOLLHUP;
	spin_unlock(&f->ring_lock);
	return mask;
}

/*
 * Map the ring's pages at @vma, as remap_vmalloc_range() would: that one
 * wants VM_USERMAP memory, which only vmalloc_user() (no accounting) makes
 * on 6.1 and 6.12. Caller holds f->lock; @vma is at most the ring.
 */
static int fb_ring_map(struct fb_file *f, struct vm_area_struct *vma)
{
	unsigned long off;
	int ret;

	for (off = 0; off < vma->vm_end - vma->vm_start; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(f->ring + off));
		if (ret)
			return ret;
	}
	mobio_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return 0;
}

static int fb_cdev_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct fb_file *f = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start;
	int ret;

	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	mutex_lock(&f->lock);
	if (!f->registered) {
		ret = -EINVAL;
	} else if (vma->vm_pgoff || len > PAGE_ALIGN(f->ring_bytes)) {
		ret = -EINVAL;
	} else {
		mobio_vm_flags_clear(vma, VM_MAYWRITE);
		ret = fb_ring_map(f, vma);
	}
	mutex_unlock(&f->lock);
	return ret;
}

static int fb_cdev_open(struct inode *inode, struct file *file)
{
	struct fb_file *f = kzalloc(sizeof(*f), GFP_KERNEL_ACCOUNT);

	if (!f)
		return -ENOMEM;
	f->uid = file->f_cred->euid;
	mutex_init(&f->lock);
	spin_lock_init(&f->ring_lock);
	init_waitqueue_head(&f->wait);
	init_completion(&f->done);
	file->private_data = f;
	return nonseekable_open(inode, file);
}

static int fb_cdev_release(struct inode *inode, struct file *file)
{
	struct fb_file *f = file->private_data;

	mutex_lock(&f->lock);
	fb_file_end_task(f);
	fb_file_free_ring(f);
	mutex_unlock(&f->lock);
	kfree(f);
	return 0;
}

static const struct file_operations fb_cdev_fops = {
	.owner = THIS_MODULE,
	.open = fb_cdev_open,
	.release = fb_cdev_release,
	.unlocked_ioctl = fb_cdev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = fb_cdev_poll,
	.mmap = fb_cdev_mmap,
};

static struct miscdevice fb_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = FREEBLOCK_DEV_NAME,
	.fops = &fb_cdev_fops,
	/* Anyone: what may be read is decided by the device fd passed in. */
	.mode = 0666,
};

/**
 * fb_cdev_init() - create /dev/freeblock
 *
 * Context: module init.
 * Return: 0 or a negative errno from misc_register().
 */
int fb_cdev_init(void)
{
	return misc_register(&fb_miscdev);
}

/**
 * fb_cdev_exit() - remove /dev/freeblock (no file is open: each holds a
 * module reference)
 *
 * Context: module exit or init failure.
 */
void fb_cdev_exit(void)
{
	misc_deregister(&fb_miscdev);
}
