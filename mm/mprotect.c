/*
 * change_protection (mprotect, exec): give the entries of [start, end) that
 * hold a page the protection of vm_flags:
 *   - executable only with VM_EXEC;
 *   - not present at all without any access (PROT_NONE: the page is kept,
 *     marked with the arch's PROT_NONE bit: pte_protnone);
 *   - writable only with VM_WRITE, and then only where a write needs no
 *     copy: shared VMAs, and anonymous pages that are PageAnonExclusive.
 *     Everything else (pages shared since fork, page-cache pages of a
 *     private mapping, the zero page) stays read-only and copies on write.
 * Runs of PTEs of one folio are walked as one batch (folio_pte_batch). A
 * PMD mapping inside the range changes as one entry; one that is cut is
 * split first. One TLB flush for the range when anything changed.
 */
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>

static pte_t new_protection(pte_t old, struct page *page, unsigned long vm_flags)
{
	bool write = (vm_flags & VM_WRITE) &&
		     ((vm_flags & VM_SHARED) || (page && PageAnonExclusive(page)));
	return pte_modify(old, write, vm_flags & VM_EXEC,
			  !(vm_flags & (VM_READ | VM_WRITE | VM_EXEC)));
}

static struct page *entry_page(pte_t entry, unsigned long pfn)
{
	return is_zero_pfn(pfn) ? NULL : pfn_to_page(pfn);
}

/* One page table's PTEs in [addr, end); that table's lock held. */
static bool change_pte_range(pte_t *pmd, unsigned long addr, unsigned long end,
			     unsigned long vm_flags)
{
	bool changed = false;

	lockdep_assert_held(pte_lockptr(NULL, pmd));
	while (addr < end) {
		pte_t *pte = pte_offset(pmd, addr);
		struct page *page;
		int nr = 1;

		if (!pte_has_page(*pte)) {
			addr += PAGE_SIZE;
			continue;
		}
		page = entry_page(*pte, pte_pfn(*pte));
		if (page)
			nr = folio_pte_batch(page_folio(page), pte, *pte,
					     (int)((end - addr) >> PAGE_SHIFT));
		for (int i = 0; i < nr; i++) {
			pte_t new = new_protection(pte[i], page ? page + i : NULL, vm_flags);

			if (new != pte[i]) {
				pte[i] = new;
				changed = true;
			}
		}
		addr += (unsigned long)nr << PAGE_SHIFT;
	}
	return changed;
}

void change_protection(struct vm_area_struct *vma, unsigned long start, unsigned long end)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long vm_flags = vma->vm_flags;
	bool changed = false;

	for (unsigned long addr = start; addr < end;) {
		unsigned long next = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, end);
		pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte;
		spinlock_t *ptl;

		if (pmd && pmd_leaf(READ_ONCE(*pmd))) {
			ptl = pmd_lock(mm, pmd);
			if (!pmd_leaf(*pmd)) {
				/* split meanwhile: by PTE below */
			} else if (IS_ALIGNED(addr, PMD_SIZE) && next == addr + PMD_SIZE) {
				pte_t new = new_protection(*pmd, pfn_to_page(pmd_pfn(*pmd)), vm_flags);

				changed |= new != *pmd;
				*pmd = new;
			} else {
				__split_huge_pmd_locked(vma, pmd, ALIGN_DOWN(addr, PMD_SIZE));
				changed = true;
			}
			spin_unlock(ptl);
		}
		pte = pmd ? pte_offset_map_lock(mm, pmd, addr, &ptl) : NULL;
		if (pte) {
			changed |= change_pte_range(pmd, addr, next, vm_flags);
			pte_unmap_unlock(pte, ptl);
		}
		addr = next;
	}
	if (changed)
		flush_tlb_mm_range(mm, start, end);
}
