/*
 * The page-table walk that /proc/<pid>/{pagemap,smaps,numa_maps,clear_refs} and
 * mbind's check of present pages share (include/quire/mm_internal.h):
 * one VMA range, 2 MiB block by block, with the page-table lock of each
 * block held while its entries are handed out.
 */
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/pte.h>
#include <quire/kernel.h>
#include <quire/mm_internal.h>
#include <quire/huge_mm.h>
#include <quire/swapops.h>
#include <asm/page.h>

/* A PMD migration entry (a THP being migrated), its PMD lock held. */
static void walk_swap_pmd(struct mm_struct *mm, struct mmu_walk *w, pte_t *pmd,
			  unsigned long addr, unsigned long end, pte_t entry)
{
	lockdep_assert_held(pmd_lockptr(mm, pmd));
	if (w->swap_pmd) {
		w->slot = pmd;
		w->swap_pmd(w, addr, end, entry);
		return;
	}
	w->slot = NULL;
	for (unsigned long a = addr; a < end; a += PAGE_SIZE)
		w->pte(w, a, pmd_migration_entry_pte(entry, (a & (PMD_SIZE - 1)) >> PAGE_SHIFT));
}

void walk_range(struct mm_struct *mm, unsigned long start, unsigned long end, struct mmu_walk *w)
{
	mmap_assert_locked(mm);
	for (unsigned long addr = start, next; addr < end; addr = next) {
		pte_t *pmd, *pte, entry;
		spinlock_t *ptl;

		next = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, end);
		pmd = pmd_lookup(mm->pgd, addr, false);
		entry = pmd ? READ_ONCE(*pmd) : 0;
		if (pmd_leaf(entry)) {
			ptl = pmd_lock(mm, pmd);
			entry = *pmd;
			w->slot = pmd;
			if (pmd_leaf(entry))
				w->pmd(w, addr, next, entry);
			spin_unlock(ptl);
			if (!pmd_leaf(entry))
				next = addr;	/* split meanwhile: walk it by PTE */
		} else if (is_swap_pmd(entry)) {
			ptl = pmd_lock(mm, pmd);
			entry = *pmd;
			if (is_swap_pmd(entry))
				walk_swap_pmd(mm, w, pmd, addr, next, entry);
			spin_unlock(ptl);
			if (!is_swap_pmd(entry))
				next = addr;	/* restored or split meanwhile: look again */
		} else if ((pte = pmd ? pte_offset_map_lock(mm, pmd, addr, &ptl) : NULL)) {
			for (unsigned long a = addr; a < next; a += PAGE_SIZE) {
				w->slot = &pte[(a - addr) >> PAGE_SHIFT];
				w->pte(w, a, ptep_get(w->slot));
			}
			pte_unmap_unlock(pte, ptl);
		} else if (pmd_leaf(pmd ? READ_ONCE(*pmd) : 0)) {
			next = addr;	/* a 2 MiB mapping appeared: look again */
		} else if (w->hole) {
			w->hole(w, addr, next);
		}
	}
}

struct folio *normal_folio(unsigned long pfn, struct page **pagep)
{
	struct page *page = is_zero_pfn(pfn) || is_huge_zero_pfn(pfn) ? NULL : pfn_to_page(pfn);
	struct folio *folio;

	if (!page)
		return NULL;
	folio = page_folio(page);
	*pagep = page;
	return folio;
}

struct folio *pte_normal_folio(pte_t pte, struct page **pagep)
{
	return pte_has_page(pte) ? normal_folio(pte_pfn(pte), pagep) : NULL;
}
