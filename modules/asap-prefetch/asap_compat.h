/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ASAP: kernel API differences between Debian 12's 6.1 and 6.12 that only
 * this module needs (to move to modules/common/mobio_compat.h). Each helper
 * names the kernel version that changed the API it hides.
 */
#ifndef _ASAP_COMPAT_H
#define _ASAP_COMPAT_H

#include <linux/version.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/pgtable.h>

/**
 * asap_fault_in_remote() - fault pages of another mm in, keeping no reference
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
static inline long asap_fault_in_remote(struct mm_struct *mm,
					unsigned long start,
					unsigned long nr_pages)
{
#if KERNEL_VERSION(6, 5, 0) <= LINUX_VERSION_CODE
	return get_user_pages_remote(mm, start, nr_pages, 0, NULL, NULL);
#else
	return get_user_pages_remote(mm, start, nr_pages, 0, NULL, NULL, NULL);
#endif
}

/**
 * asap_folio_get() - the page cache folio at @index, if any
 * @mapping: the file's mapping
 * @index: page index
 *
 * filemap_get_folio() returns NULL when absent on 6.1 and ERR_PTR(-ENOENT)
 * from 6.3.
 * Context: any (no sleep).
 * Return: the folio with a reference (folio_put() it), or NULL.
 */
static inline struct folio *asap_folio_get(struct address_space *mapping,
					   pgoff_t index)
{
	struct folio *folio = filemap_get_folio(mapping, index);

	return IS_ERR_OR_NULL(folio) ? NULL : folio;
}

/*
 * Page-table accessed bits. Neither kernel exports a helper that reads or
 * clears the accessed bit of a user pte (ptep_test_and_clear_young() is
 * not exported; walk_page_range() neither): the bit is tested and cleared
 * directly, as x86 does it. Elsewhere accessed bits are not used and a
 * prepaged anonymous page counts as used.
 */
#ifdef CONFIG_X86
#define ASAP_HAVE_YOUNG	1
static inline bool asap_pte_test_young(pte_t *ptep)
{
	pte_t pte = ptep_get(ptep);

	return pte_present(pte) && pte_young(pte);
}

static inline void asap_pte_clear_young(pte_t *ptep)
{
	if (pte_present(ptep_get(ptep)))
		clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)&ptep->pte);
}
#else
#define ASAP_HAVE_YOUNG	0
static inline bool asap_pte_test_young(pte_t *ptep)
{
	return true;
}

static inline void asap_pte_clear_young(pte_t *ptep)
{
}
#endif

/**
 * asap_pmd_is_table() - whether @addr of @mm is mapped through a page table
 * @mm: the mm, mmap lock held
 * @addr: user address
 *
 * apply_to_existing_page_range() warns on a huge pmd and BUGs on a huge
 * pud: check before walking. A transparent huge page can still appear
 * under the read lock by a concurrent fault in a THP-enabled vma; callers
 * skip vmas with VM_HUGEPAGE for that reason.
 * Context: mmap lock held.
 * Return: true when the pmd of @addr points to a pte table.
 */
static inline bool asap_pmd_is_table(struct mm_struct *mm, unsigned long addr)
{
	pgd_t *pgd = pgd_offset(mm, addr);
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd, pmdv;

	if (pgd_none(*pgd) || pgd_bad(*pgd))
		return false;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d) || p4d_bad(*p4d))
		return false;
	pud = pud_offset(p4d, addr);
	if (pud_none(*pud) || pud_leaf(*pud) || pud_bad(*pud))
		return false;
	pmd = pmd_offset(pud, addr);
	pmdv = READ_ONCE(*pmd);
	return !pmd_none(pmdv) && !pmd_leaf(pmdv) && !pmd_bad(pmdv) &&
	       !pmd_trans_huge(pmdv);
}

#endif /* _ASAP_COMPAT_H */
