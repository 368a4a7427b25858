// SPDX-License-Identifier: GPL-2.0-only
/*
 * qNVRAM: /dev/qnvram. An open file is bound to one region by the ALLOC or
 * RETRIEVE ioctl and then maps it with mmap(MAP_SHARED, offset 0..length).
 * The binding pins the region (no free, no swap-out) for as long as the
 * file is open, which includes as long as any mapping of it exists; it is
 * made once and never changes, so the mapping code reads it unlocked once
 * it has seen it bound.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/jiffies.h>
#include <linux/sched/signal.h>
#include "qnvram_pool.h"

static int qnvram_open(struct inode *inode, struct file *file)
{
	struct qnvram_binding *b;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->pool = &qnvram_pool;
	b->slot = -1;
	b->mapping = file->f_mapping;
	file->private_data = b;
	mutex_lock(&b->pool->lock);
	list_add(&b->node, &b->pool->bindings);
	mutex_unlock(&b->pool->lock);
	return 0;
}

static int qnvram_release(struct inode *inode, struct file *file)
{
	struct qnvram_binding *b = file->private_data;

	mutex_lock(&b->pool->lock);
	list_del(&b->node);
	mutex_unlock(&b->pool->lock);
	qnvram_region_unbind(b->pool, b);
	kfree(b);
	return 0;
}

/*
 * Who the caller of an ioctl on @file is: the lesser of the file's opener
 * and the calling task, so that a file passed to another process (or a
 * privileged one tricked into using a file it did not open) never acts
 * with rights that the caller lacks, nor the opener. @uid is read in the
 * opener's user namespace; it must be both the opener's and the caller's
 * effective uid, unless both have CAP_SYS_ADMIN (@admin).
 */
static int qnvram_dev_caller(struct file *file, u32 req_uid, u32 *uid,
			     bool *admin)
{
	const struct cred *cred = file->f_cred;
	int ret;

	*admin = file_ns_capable(file, &init_user_ns, CAP_SYS_ADMIN) &&
		 capable(CAP_SYS_ADMIN);
	ret = qnvram_resolve_uid(cred, cred->user_ns, req_uid, *admin, uid);
	if (!ret && !*admin &&
	    !uid_eq(make_kuid(cred->user_ns, req_uid), current_euid()))
		ret = -EPERM;
	return ret;
}

static long qnvram_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct qnvram_binding *b = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct qnvram_region_req req;
	bool admin;
	u32 uid;
	int ret;

	switch (cmd) {
	case QNVRAM_IOC_ALLOC:
	case QNVRAM_IOC_RETRIEVE:
	case QNVRAM_IOC_FREE:
		break;
	default:
		return -ENOTTY;
	}
	if (copy_from_user(&req, uarg, sizeof(req)))
		return -EFAULT;
	if (req.reserved[0] || req.reserved[1] ||
	    (req.flags & ~QNVRAM_REQ_ALL) ||
	    (cmd != QNVRAM_IOC_ALLOC && req.flags) ||
	    (cmd == QNVRAM_IOC_FREE && req.size))
		return -EINVAL;
	ret = qnvram_dev_caller(file, req.uid, &uid, &admin);
	if (ret)
		return ret;
	if (cmd == QNVRAM_IOC_FREE)
		return qnvram_region_free(b->pool, uid, req.magic);

	ret = qnvram_region_bind(b->pool, b, &req, cmd == QNVRAM_IOC_ALLOC,
				 uid, admin);
	if (ret)
		return ret;
	/*
	 * A binding is never undone while the file is open: another thread
	 * may already have mapped the region through it.
	 */
	return copy_to_user(uarg, &req, sizeof(req)) ? -EFAULT : 0;
}

static void qnvram_vma_open(struct vm_area_struct *vma)
{
	struct qnvram_binding *b = vma->vm_private_data;

	atomic_inc(&b->pool->rt[b->slot].maps);
}

static void qnvram_vma_close(struct vm_area_struct *vma)
{
	struct qnvram_binding *b = vma->vm_private_data;

	atomic_dec(&b->pool->rt[b->slot].maps);
}

/*
 * Wait out a shutdown flush's freeze. Return: 0, or VM_FAULT_SIGBUS for a
 * task being killed (a fault from a uaccess then fails with -EFAULT
 * instead of retrying forever).
 */
static vm_fault_t qnvram_fault_wait_thaw(struct qnvram_pool *pool)
{
	long left;

	for (;;) {
		left = (long)(READ_ONCE(pool->frozen_until) - jiffies);
		if (left <= 0)
			return 0;
		if (schedule_timeout_killable(left) &&
		    fatal_signal_pending(current))
			return VM_FAULT_SIGBUS;
	}
}

/* What a fault waits for with the fault lock dropped. */
enum qnvram_fault_wait {
	QNVRAM_FAULT_WAIT_LOCK,		/* the pool lock (a flush, a swap) */
	QNVRAM_FAULT_WAIT_THAW,		/* a shutdown flush's freeze */
	QNVRAM_FAULT_WAIT_RETIRE,	/* the current image's stale marker */
};

/*
 * Wait with the fault's mmap_lock (or vma lock) dropped, then have the
 * fault retried: the kernel's protocol for a fault that must sleep (as
 * filemap_fault() does for a locked folio), so that the app's other
 * threads, its mmap()/munmap() and reclaim are not held up meanwhile.
 * Caller holds no pool lock and has checked FAULT_FLAG_ALLOW_RETRY.
 */
static vm_fault_t qnvram_fault_retry(struct vm_fault *vmf,
				     struct qnvram_pool *pool,
				     enum qnvram_fault_wait what)
{
	struct file *fpin;

	if (vmf->flags & FAULT_FLAG_RETRY_NOWAIT)
		return VM_FAULT_RETRY;
	/* The vma may go once unlocked; its file (and this module) may not. */
	fpin = get_file(vmf->vma->vm_file);
	mobio_release_fault_lock(vmf);
	switch (what) {
	case QNVRAM_FAULT_WAIT_LOCK:
		if (!mutex_lock_killable(&pool->lock))
			mutex_unlock(&pool->lock);
		break;
	case QNVRAM_FAULT_WAIT_THAW:
		qnvram_fault_wait_thaw(pool);
		break;
	case QNVRAM_FAULT_WAIT_RETIRE:
		/* 0: retired, still locked; else unlocked (the retry sees). */
		if (!mutex_lock_killable(&pool->lock) &&
		    !qnvram_img_retire(pool))
			mutex_unlock(&pool->lock);
		break;
	}
	fput(fpin);
	return VM_FAULT_RETRY;
}

/*
 * Pages mapped per fault, at most: the faulting one and its neighbours in
 * an aligned 64 KiB window of the vma, so that touching a region page by
 * page does not take the pool lock once per page.
 */
#define QNVRAM_FAULT_AROUND_PAGES	16

/*
 * Map the pages of the fault-around window of @vmf with @prot; the
 * faulting page's result is returned, the others are best effort (a
 * neighbour that fails just faults later). A present read-only pte is not
 * replaced by an insert: for a store (@mkwrite) the window is zapped
 * first. Caller holds pool->lock.
 */
static vm_fault_t qnvram_map_window(struct vm_fault *vmf,
				    struct qnvram_binding *b, pgprot_t prot,
				    bool mkwrite)
{
	struct vm_area_struct *vma = vmf->vma;
	struct qnvram_pool *pool = b->pool;
	unsigned long win = QNVRAM_FAULT_AROUND_PAGES * PAGE_SIZE;
	unsigned long start, end, addr;
	vm_fault_t ret = VM_FAULT_SIGBUS;

	start = max(vma->vm_start, ALIGN_DOWN(vmf->address, win));
	end = min(vma->vm_end, ALIGN_DOWN(vmf->address, win) + win);
	if (mkwrite)
		zap_vma_ptes(vma, start, end - start);
	for (addr = start; addr < end; addr += PAGE_SIZE) {
		u64 off = ((u64)(addr - vma->vm_start) >> PAGE_SHIFT) +
			  vma->vm_pgoff;
		unsigned long pfn;
		vm_fault_t r;

		off <<= PAGE_SHIFT;
		if (off >= b->length)
			break;
		off += b->offset;
		if (pool->fallback)
			pfn = vmalloc_to_pfn(pool->base + off);
		else
			pfn = PHYS_PFN(pool->phys + off);
		r = vmf_insert_pfn_prot(vma, addr, pfn, prot);
		if (addr == (vmf->address & PAGE_MASK))
			ret = r;
	}
	return ret;
}

/*
 * Map the faulting page of a region, and its neighbours: the work of both
 * the fault and the pfn_mkwrite handlers (@mkwrite: a store hit a page
 * mapped read-only).
 *
 * The binding cannot change while the vma exists (the vma holds the file),
 * so the region's offset is read without the pool lock. The pfns go in
 * under the lock: a flush holds it from unmapping every region until its
 * copy is done, so no page gets mapped (and written) in between. Lock
 * order: mmap_lock, then the pool lock. Where the fault must wait (the
 * lock is held across a flush's I/O, a freeze, a stale marker's write) it
 * drops mmap_lock and is retried, when the fault allows it: on its first
 * try for the lock and the marker (the kernel retries once more holding
 * mmap_lock, which bounds a marker that keeps failing to one SIGBUS), on
 * every try for a freeze.
 *
 * A page is mapped writable only once nothing forbids a store: the current
 * flash image, if any, has been made stale (qnvram_img_retire(); once per
 * image), and the region is marked touched. While writes are watched
 * (qnvram_writes_watched()) a fault that only reads maps the page
 * read-only, so that the first store comes back here through pfn_mkwrite;
 * otherwise every fault maps it writable, as no later store needs to be
 * seen.
 */
static vm_fault_t qnvram_vma_map(struct vm_fault *vmf, bool mkwrite)
{
	struct vm_area_struct *vma = vmf->vma;
	struct qnvram_binding *b = vma->vm_private_data;
	struct qnvram_pool *pool = b->pool;
	bool write = mkwrite || (vmf->flags & FAULT_FLAG_WRITE);
	bool drop_first = fault_flag_allow_retry_first(vmf->flags);
	bool drop = vmf->flags & FAULT_FLAG_ALLOW_RETRY;
	pgprot_t prot;
	vm_fault_t ret;
	int err;

	if (((u64)vmf->pgoff << PAGE_SHIFT) >= b->length)
		return VM_FAULT_SIGBUS;
	for (;;) {
		if (!mutex_trylock(&pool->lock)) {
			if (drop_first)
				return qnvram_fault_retry(vmf, pool,
							  QNVRAM_FAULT_WAIT_LOCK);
			if (mutex_lock_killable(&pool->lock))
				return VM_FAULT_SIGBUS;
		}
		if (time_before(jiffies, pool->frozen_until)) {
			pool->stats.frozen_faults++;
			mutex_unlock(&pool->lock);
			if (drop)
				return qnvram_fault_retry(vmf, pool,
							  QNVRAM_FAULT_WAIT_THAW);
			ret = qnvram_fault_wait_thaw(pool);
			if (ret)
				return ret;
			continue;
		}
		if (!write && qnvram_writes_watched(pool)) {
			prot = vma->vm_page_prot;	/* read-only: writenotify */
			break;
		}
		if (drop_first && qnvram_img_retire_waits(pool)) {
			mutex_unlock(&pool->lock);
			return qnvram_fault_retry(vmf, pool,
						  QNVRAM_FAULT_WAIT_RETIRE);
		}
		err = qnvram_img_retire(pool);
		if (err == -EAGAIN)
			continue;
		if (err)
			return VM_FAULT_SIGBUS;	/* unlocked; image current */
		/* The region may change from now on. */
		qnvram_region_touch(pool, b->slot);
		/* vm_page_prot as it would be without writenotify. */
		prot = vm_get_page_prot(vma->vm_flags);
		break;
	}
	ret = qnvram_map_window(vmf, b, prot, mkwrite);
	mutex_unlock(&pool->lock);
	return ret;
}

static vm_fault_t qnvram_vma_fault(struct vm_fault *vmf)
{
	return qnvram_vma_map(vmf, false);
}

/*
 * A store to a page mapped read-only. It is made writable here, under the
 * pool lock, rather than by the caller after this returns: a flush could
 * otherwise unmap the page, commit a new image and let a read fault map it
 * read-only again in between, and the caller's check that the pte did not
 * change would pass.
 */
static vm_fault_t qnvram_vma_pfn_mkwrite(struct vm_fault *vmf)
{
	vm_fault_t ret = qnvram_vma_map(vmf, true);

	/*
	 * wp_pfn_shared() finishes the write fault itself, under locks that a
	 * retry has dropped, unless told there is nothing left to do.
	 */
	if (ret & VM_FAULT_RETRY)
		ret |= VM_FAULT_NOPAGE;
	return ret;
}

/**
 * qnvram_dev_unmap_all() - unmap every region from every process
 * @pool: the pool; caller holds @pool->lock
 *
 * The next access to any page of a region faults, and the fault waits for
 * @pool->lock: a flush calls this first, so that what it copies is one
 * state of every region, not one that apps change under the copy.
 *
 * Context: process, may sleep.
 */
void qnvram_dev_unmap_all(struct qnvram_pool *pool)
{
	struct address_space *done = NULL;
	struct qnvram_binding *b;

	lockdep_assert_held(&pool->lock);
	list_for_each_entry(b, &pool->bindings, node) {
		/* Files of one device node share one address space. */
		if (b->slot < 0 || b->mapping == done)
			continue;
		unmap_mapping_range(b->mapping, 0, 0, 1);
		done = b->mapping;
	}
}

/*
 * With pfn_mkwrite, the mm maps shared writable vmas read-only by default
 * (vma_wants_writenotify()): pages that faults map with vma->vm_page_prot
 * trap the first store.
 */
static const struct vm_operations_struct qnvram_vm_ops = {
	.open = qnvram_vma_open,
	.close = qnvram_vma_close,
	.fault = qnvram_vma_fault,
	.pfn_mkwrite = qnvram_vma_pfn_mkwrite,
};

static int qnvram_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct qnvram_binding *b = file->private_data;
	u64 len = vma->vm_end - vma->vm_start;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;

	bool bound;

	/* Pairs with the binding's update under the lock in the ioctl. */
	mutex_lock(&b->pool->lock);
	bound = b->slot >= 0;
	mutex_unlock(&b->pool->lock);
	if (!bound)
		return -EBADFD;
	/*
	 * Private copies would not persist: only shared mappings. (The mm
	 * clears VM_SHARED, not VM_MAYSHARE, for read-only files.)
	 */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (off >= b->length || len > b->length - off)
		return -EINVAL;
	mobio_vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND |
			   VM_DONTDUMP);
	vma->vm_ops = &qnvram_vm_ops;
	vma->vm_private_data = b;
	qnvram_vma_open(vma);
	return 0;
}

static const struct file_operations qnvram_fops = {
	.owner = THIS_MODULE,
	.open = qnvram_open,
	.release = qnvram_release,
	.unlocked_ioctl = qnvram_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = qnvram_mmap,
	.llseek = noop_llseek,
};

static struct miscdevice qnvram_miscdev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "qnvram",
	.fops = &qnvram_fops,
	/* Every user may own regions; the ioctls scope them by uid. */
	.mode = 0666,
};

/**
 * qnvram_dev_init() - register /dev/qnvram
 *
 * Context: process, module init.
 * Return: 0 or a negative errno from misc_register().
 */
int qnvram_dev_init(void)
{
	return misc_register(&qnvram_miscdev);
}

/**
 * qnvram_dev_exit() - unregister /dev/qnvram (no file can be open: each
 * holds a module reference)
 */
void qnvram_dev_exit(void)
{
	misc_deregister(&qnvram_miscdev);
}
