/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mobio: kernel API differences between the supported kernels (Debian 12's
 * 6.1 and 6.12), in one place. Each helper names the kernel version that
 * changed the API it hides.
 */
#ifndef _MOBIO_COMPAT_H
#define _MOBIO_COMPAT_H

#include <linux/version.h>
#include <linux/blkdev.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/err.h>

/**
 * struct mobio_bdev - an exclusively opened block device
 * @bdev: the device, valid between mobio_bdev_open() and mobio_bdev_close()
 * @file: the open file that holds it (6.9+)
 */
struct mobio_bdev {
	struct block_device *bdev;
#if KERNEL_VERSION(6, 9, 0) <= LINUX_VERSION_CODE
	struct file *file;
#endif
};

/**
 * mobio_bdev_open() - open a block device by path for exclusive read/write
 * @path: device node path, e.g. "/dev/vdb"
 * @holder: exclusive holder cookie (the caller's module data)
 * @mbd: filled on success
 *
 * 6.9 replaced blkdev_get_by_path() with bdev_file_open_by_path().
 * Context: process, may sleep.
 * Return: 0, or a negative errno (-ENOENT, -EBUSY, -EACCES...).
 */
static inline int mobio_bdev_open(const char *path, void *holder,
				  struct mobio_bdev *mbd)
{
#if KERNEL_VERSION(6, 9, 0) <= LINUX_VERSION_CODE
	struct file *file = bdev_file_open_by_path(path,
			BLK_OPEN_READ | BLK_OPEN_WRITE, holder, NULL);

	if (IS_ERR(file))
		return PTR_ERR(file);
	mbd->file = file;
	mbd->bdev = file_bdev(file);
#else
	struct block_device *bdev = blkdev_get_by_path(path,
			FMODE_READ | FMODE_WRITE | FMODE_EXCL, holder);

	if (IS_ERR(bdev))
		return PTR_ERR(bdev);
	mbd->bdev = bdev;
#endif
	return 0;
}

/**
 * mobio_bdev_close() - release a device opened with mobio_bdev_open()
 * @mbd: the device; ->bdev is NULL afterwards (closing twice is a no-op)
 *
 * Context: process, may sleep.
 */
static inline void mobio_bdev_close(struct mobio_bdev *mbd)
{
	if (!mbd->bdev)
		return;
#if KERNEL_VERSION(6, 9, 0) <= LINUX_VERSION_CODE
	fput(mbd->file);
	mbd->file = NULL;
#else
	blkdev_put(mbd->bdev, FMODE_READ | FMODE_WRITE | FMODE_EXCL);
#endif
	mbd->bdev = NULL;
}

/* 6.3 made vma->vm_flags read-only and added vm_flags_set(). */
static inline void mobio_vm_flags_set(struct vm_area_struct *vma,
				      vm_flags_t flags)
{
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/**
 * mobio_fault_in_remote() - fault pages of another mm in, keeping no reference
 * @mm: the mm, with a user reference and its mmap lock held for read
 * @start: first virtual address, page aligned
 * @nr_pages: how many pages
 *
 * 6.5 dropped the vmas argument of get_user_pages_remote(). No page array
 * is passed, so no page reference or pin is taken. Without @locked, the
 * fault may not drop the mmap lock: it stays held throughout.
 * Context: process, may sleep.
 * Return: pages faulted in from @start, or a negative errno.
 */
static inline long mobio_fault_in_remote(struct mm_struct *mm,
					 unsigned long start,
					 unsigned long nr_pages)
{
#if KERNEL_VERSION(6, 5, 0) <= LINUX_VERSION_CODE
	return get_user_pages_remote(mm, start, nr_pages, 0, NULL, NULL);
#else
	return get_user_pages_remote(mm, start, nr_pages, 0, NULL, NULL, NULL);
#endif
}

/*
 * The function that reads one swapped-out folio (or page) into memory, and
 * the swap entry it reads from its first argument: swap_readpage(page, ...)
 * until 6.8 turned it into swap_read_folio(folio, ...). The entry is the
 * folio's swap field (page_private() of the page before 6.6 added it);
 * callers set it before the read (do_swap_page()'s skip-swapcache path
 * sets it "to provide entry" for exactly this).
 */
#if KERNEL_VERSION(6, 8, 0) <= LINUX_VERSION_CODE
#define MOBIO_SWAP_READ_SYMBOL	"swap_read_folio"
static inline unsigned long mobio_swap_read_entry(void *arg0)
{
	return ((struct folio *)arg0)->swap.val;
}
#else
#define MOBIO_SWAP_READ_SYMBOL	"swap_readpage"
static inline unsigned long mobio_swap_read_entry(void *arg0)
{
	return page_private((struct page *)arg0);
}
#endif

/**
 * mobio_folio_get() - the page cache folio at @index, if any
 * @mapping: the file's mapping
 * @index: page index
 *
 * filemap_get_folio() returns NULL when absent on 6.1 and ERR_PTR(-ENOENT)
 * from 6.3.
 * Context: any (no sleep).
 * Return: the folio with a reference (folio_put() it), or NULL.
 */
static inline struct folio *mobio_folio_get(struct address_space *mapping,
					    pgoff_t index)
{
	struct folio *folio = filemap_get_folio(mapping, index);

	return IS_ERR_OR_NULL(folio) ? NULL : folio;
}

/* 6.3 made vma->vm_flags read-only and added vm_flags_clear(). */
static inline void mobio_vm_flags_clear(struct vm_area_struct *vma,
					vm_flags_t flags)
{
#if KERNEL_VERSION(6, 3, 0) <= LINUX_VERSION_CODE
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/**
 * mobio_release_fault_lock() - drop the lock a page fault handler was
 *	called with, before it waits and returns VM_FAULT_RETRY
 * @vmf: the fault
 *
 * 6.7 added release_fault_lock(), which also knows the per-VMA lock; 6.1
 * calls ->fault and ->pfn_mkwrite under mmap_lock only.
 * Context: a fault handler, FAULT_FLAG_ALLOW_RETRY set.
 */
static inline void mobio_release_fault_lock(struct vm_fault *vmf)
{
#if KERNEL_VERSION(6, 7, 0) <= LINUX_VERSION_CODE
	release_fault_lock(vmf);
#else
	mmap_read_unlock(vmf->vma->vm_mm);
#endif
}

/*
 * Elevator shims: only for code that included the kernel's private block
 * headers (block/elevator.h and friends, DESIGN.md section 3) first.
 */
#ifdef _ELEVATOR_H

#if KERNEL_VERSION(6, 12, 0) > LINUX_VERSION_CODE
/* 6.1 keeps struct blk_mq_tags in blk-mq-tag.h; 6.12 has it in blk-mq.h. */
#include "blk-mq-tag.h"
#endif

/*
 * 6.5 replaced insert_requests()' "bool at_head" with "blk_insert_t flags"
 * (BLK_MQ_INSERT_AT_HEAD).
 */
#if KERNEL_VERSION(6, 5, 0) <= LINUX_VERSION_CODE
#define mobio_insert_t			blk_insert_t
#define mobio_insert_at_head(flags)	(!!((flags) & BLK_MQ_INSERT_AT_HEAD))
#else
#define mobio_insert_t			bool
#define mobio_insert_at_head(flags)	(flags)
#endif

/* shallow_depth in tags of the whole queue (see below), not per word */
#if KERNEL_VERSION(6, 17, 0) <= LINUX_VERSION_CODE || \
	(KERNEL_VERSION(6, 12, 43) <= LINUX_VERSION_CODE && \
	 KERNEL_VERSION(6, 13, 0) > LINUX_VERSION_CODE)
#define MOBIO_SHALLOW_DEPTH_WHOLE_QUEUE 1
#endif

/**
 * mobio_sched_shallow_depth() - a limit_depth() depth for @hctx
 * @hctx: hardware queue whose scheduler tags the depth applies to
 * @percent: share of the queue's nr_requests, 1..100
 *
 * struct blk_mq_alloc_data.shallow_depth counted tags per sbitmap word
 * (kyber scaled by 1 << sb.shift) until "lib/sbitmap: convert shallow_depth
 * from one word to the whole sbitmap" (6.17, and 6.12.43 in the 6.12 stable
 * series: Debian 12's 6.12.117 has it, 6.12.0-6.12.42 and 6.13-6.16 do not);
 * since, tags of the whole queue (kyber scales nr_requests; but
 * depth_updated() runs before the core stores a new nr_requests, so take
 * the resized sbitmap's depth). Never 0: a queue of one tag still allows
 * one.
 * Return: the depth in the unit this kernel expects.
 */
static inline unsigned int mobio_sched_shallow_depth(struct blk_mq_hw_ctx *hctx,
						     unsigned int percent)
{
#ifdef MOBIO_SHALLOW_DEPTH_WHOLE_QUEUE
	unsigned int full = hctx->sched_tags->bitmap_tags.sb.depth;
#else
	unsigned int full = 1U << hctx->sched_tags->bitmap_tags.sb.shift;
#endif

	return max(1U, full * percent / 100U);
}

#endif /* _ELEVATOR_H */

#endif /* _MOBIO_COMPAT_H */
