/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ASAP: page-table helpers (accessed bits, the pmd check before a walk).
 * Differences between kernel versions are in modules/common/mobio_compat.h.
 */
#ifndef _ASAP_COMPAT_H
#define _ASAP_COMPAT_H

#include <linux/version.h>
#include <linux/mm.h>
#include <linux/pgtable.h>

/*
 * Page-table accessed bits, as the kernel's own ptep_clear_flush_young()
 * handles them on each architecture (the arch helpers are what
 * folio_referenced() and MGLRU use; x86 does not export its out-of-line
 * ptep_test_and_clear_young(), arm64's are inline or exported).
 *  - x86: the bit is cleared atomically, without a TLB flush, exactly as
 *    arch/x86/mm/pgtable.c's ptep_clear_flush_young() does on purpose: a
 *    stale TLB entry only delays the bit being set again until the entry
 *    is evicted, which is harmless for an estimate.
 *  - arm64: ptep_test_and_clear_young(), contiguous ptes included, also
 *    without a TLB flush: since 6.6 the flush of ptep_clear_flush_young()
 *    tells secondary TLBs through
 *    __mmu_notifier_arch_invalidate_secondary_tlbs(), which is not
 *    exported. A TLB entry that still has AF set hides later accesses
 *    until it is evicted, as on x86; the only caller clears pages it has
 *    just faulted in, which the app can have cached only in between.
 * Secondary MMUs (mmu_notifier_clear_young()) are not told: its helper is
 * not exported, and an app's own accesses are what the estimator needs.
 * Elsewhere accessed bits are not used and a prepaged anonymous page
 * counts as used.
 */
#if defined(CONFIG_X86)
#define ASAP_HAVE_YOUNG	1
static inline void asap_pte_clear_young(struct vm_area_struct *vma,
					unsigned long addr, pte_t *ptep)
{
	if (pte_present(ptep_get(ptep)))
		clear_bit(_PAGE_BIT_ACCESSED, (unsigned long *)&ptep->pte);
}
#elif defined(CONFIG_ARM64)
#define ASAP_HAVE_YOUNG	1
static inline void asap_pte_clear_young(struct vm_area_struct *vma,
					unsigned long addr, pte_t *ptep)
{
	if (pte_present(ptep_get(ptep)))
		ptep_test_and_clear_young(vma, addr, ptep);
}
#else
#define ASAP_HAVE_YOUNG	0
static inline void asap_pte_clear_young(struct vm_area_struct *vma,
					unsigned long addr, pte_t *ptep)
{
}
#endif

/**
 * asap_pte_test_young() - whether a user pte's accessed bit is set
 * @ptep: the pte, its page-table lock held
 *
 * Context: page-table lock held.
 * Return: true when present and young; always true where ASAP_HAVE_YOUNG
 * is 0 (a page then counts as used).
 */
static inline bool asap_pte_test_young(pte_t *ptep)
{
	pte_t pte = ptep_get(ptep);

	return !ASAP_HAVE_YOUNG || (pte_present(pte) && pte_young(pte));
}

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
