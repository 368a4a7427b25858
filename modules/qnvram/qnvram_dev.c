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
#include "qnvram_pool.h"

static int qnvram_open(struct inode *inode, struct file *file)
{
	struct qnvram_binding *b;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->pool = &qnvram_pool;
	b->slot = -1;
	file->private_data = b;
	return 0;
}

static int qnvram_release(struct inode *inode, struct file *file)
{
	struct qnvram_binding *b = file->private_data;

	qnvram_region_unbind(b->pool, b);
	kfree(b);
	return 0;
}

static long qnvram_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	struct qnvram_binding *b = file->private_data;
	void __user *uarg = (void __user *)arg;
	struct qnvram_region_req req;
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

	if (cmd == QNVRAM_IOC_FREE) {
		if (req.flags || req.size || req.reserved[0] || req.reserved[1])
			return -EINVAL;
		ret = qnvram_resolve_uid(req.uid, capable(CAP_SYS_ADMIN), &uid);
		return ret ?: qnvram_region_free(b->pool, uid, req.magic);
	}

	ret = qnvram_region_bind(b->pool, b, &req, cmd == QNVRAM_IOC_ALLOC);
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
 * The binding cannot change while the vma exists (the vma holds the file),
 * so the region's offset is read without the pool lock.
 */
static vm_fault_t qnvram_vma_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct qnvram_binding *b = vma->vm_private_data;
	struct qnvram_pool *pool = b->pool;
	u64 off = (u64)vmf->pgoff << PAGE_SHIFT;
	unsigned long pfn;

	if (off >= b->length)
		return VM_FAULT_SIGBUS;
	off += b->offset;
	if (pool->fallback)
		pfn = vmalloc_to_pfn(pool->base + off);
	else
		pfn = PHYS_PFN(pool->phys + off);
	return vmf_insert_pfn(vma, vmf->address, pfn);
}

static const struct vm_operations_struct qnvram_vm_ops = {
	.open = qnvram_vma_open,
	.close = qnvram_vma_close,
	.fault = qnvram_vma_fault,
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
