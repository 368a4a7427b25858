/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Freeblock: kernel API differences between 6.1 and 6.12 that
 * modules/common/mobio_compat.h does not cover yet (to move there).
 */
#ifndef _FB_COMPAT_H
#define _FB_COMPAT_H

#include <linux/version.h>
#include <linux/mm.h>

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

#endif /* _FB_COMPAT_H */
