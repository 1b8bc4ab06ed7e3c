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
#include <quire/mmu_notifier.h>
#include <quire/mm.h>
#include <quire/swapops.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>

/*
 * Made writable here only where a write needs no fault: with soft-dirty
 * tracking on (the VMA not VM_SOFTDIRTY: clear_refs ran), a page not yet
 * soft-dirty stays read-only, so that its first write faults and marks it
 * (Linux's can_change_pte_writable; the MMU never sets soft-dirty).
 */
static pte_t new_protection(pte_t old, struct page *page, unsigned long vm_flags)
{
	bool tracked = !(vm_flags & VM_SOFTDIRTY) && !pte_soft_dirty(old);
	bool write = (vm_flags & VM_WRITE) && (!tracked || pte_write(old)) &&
		     ((vm_flags & VM_SHARED) || (page && PageAnonExclusive(page)));
	return pte_modify(old, write, vm_flags & VM_EXEC,
			  !(vm_flags & (VM_READ | VM_WRITE | VM_EXEC)));
}

/*
 * A page being migrated in a range that loses write access: its entry
 * becomes read-only (exclusive for an anonymous page, which a write fault
 * may reuse), so that the restore maps it read-only. Linux does the same.
 * A PMD migration entry has the same format: pte may be a PMD.
 */
static bool change_migration_entry(pte_t *pte, pte_t entry, unsigned long vm_flags)
{
	swp_entry_t e, r;
	unsigned long pfn;

	if (!is_migration_pte(entry) || (vm_flags & VM_WRITE))
		return false;
	e = pte_to_swp_entry(entry);
	if (!is_writable_migration_entry(e))
		return false;
	pfn = swp_offset_pfn(e);
	r = folio_test_anon(page_folio(pfn_to_page(pfn))) ?
	    make_readable_exclusive_migration_entry(pfn) : make_readable_migration_entry(pfn);
	if (is_migration_entry_young(e))
		r = make_migration_entry_young(r);
	if (is_migration_entry_dirty(e))
		r = make_migration_entry_dirty(r);
	/* not present: no MMU writes it meanwhile */
	set_pte(pte, pte_swp_soft_dirty(entry) ? pte_swp_mksoft_dirty(swp_entry_to_pte(r)) :
						 swp_entry_to_pte(r));
	return true;
}

/*
 * A writable device-private or device-exclusive entry in a VMA that lost
 * VM_WRITE becomes a read-only one (Linux does the same); a write from
 * the CPU or the device faults, and copy-on-write or the VMA decides.
 */
static bool change_device_entry(pte_t *pte, pte_t entry, unsigned long vm_flags)
{
	swp_entry_t e, r;

	if (!is_device_mapping_pte(entry) || (vm_flags & VM_WRITE))
		return false;
	e = pte_to_swp_entry(entry);
	if (is_writable_device_private_entry(e))
		r = make_readable_device_private_entry(swp_offset_pfn(e));
	else if (is_writable_device_exclusive_entry(e))
		r = make_readable_device_exclusive_entry(swp_offset_pfn(e));
	else
		return false;
	/* not present: no MMU writes it meanwhile */
	set_pte(pte, pte_swp_soft_dirty(entry) ? pte_swp_mksoft_dirty(swp_entry_to_pte(r)) :
						 swp_entry_to_pte(r));
	return true;
}

static struct page *entry_page(pte_t entry, unsigned long pfn)
{
	return is_zero_pfn(pfn) ? NULL : pfn_to_page(pfn);
}

/*
 * One page table's PTEs in [addr, end); that table's lock held. A PTE
 * that changes goes through Linux's ptep_modify_prot_start/commit: an
 * xchg clears it and returns its last value, dirty bit included (another
 * CPU's MMU may set D on a writable PTE up to that moment), and the new
 * protection is made from that value. PTE walkers take the table's lock
 * before they look, so none sees the PTE empty in between.
 */
static bool change_pte_range(struct vm_area_struct *vma, pte_t *pmd, unsigned long addr,
			     unsigned long end, unsigned long vm_flags)
{
	bool changed = false;

	lockdep_assert_held(pte_lockptr(NULL, pmd));
	while (addr < end) {
		pte_t *pte = pte_offset(pmd, addr), entry = ptep_get(pte);
		struct page *page;
		int nr = 1;

		if (!pte_has_page(entry)) {
			changed |= change_migration_entry(pte, entry, vm_flags) ||
				   change_device_entry(pte, entry, vm_flags);
			addr += PAGE_SIZE;
			continue;
		}
		page = entry_page(entry, pte_pfn(entry));
		if (page)
			nr = folio_pte_batch(page_folio(page), pte, entry,
					     (int)((end - addr) >> PAGE_SHIFT));
		for (int i = 0; i < nr; i++, addr += PAGE_SIZE) {
			struct page *p = page ? page + i : NULL;
			pte_t old = ptep_get(pte + i);

			if (new_protection(old, p, vm_flags) == old)
				continue;
			old = ptep_modify_prot_start(vma, addr, pte + i);
			ptep_modify_prot_commit(vma, addr, pte + i, old,
						new_protection(old, p, vm_flags));
			changed = true;
		}
	}
	return changed;
}

/*
 * A PMD leaf wholly in the range (its PMD table's lock held): one cmpxchg
 * from the entry's last value, again, if the MMU set A or D meanwhile.
 * Not Linux's way (it makes the leaf not present first,
 * pmdp_invalidate_ad, a state its walkers know): a PMD is never empty on
 * the way here, since the lockless PMD peeks (page_vma_mapped_walk, the
 * split's mapper_lock; faults and zaps, should protections ever change
 * under mmap_lock for reading as NUMA hinting does on Linux) take an
 * empty PMD for an empty block and would pass the folio by.
 */
static bool change_huge_pmd(pte_t *pmd, unsigned long vm_flags)
{
	pte_t old = pmdp_get(pmd), new, found;

	for (;;) {
		/* (The huge zero page: no page, so never writable, as entry_page's zero page.) */
		new = new_protection(old, is_huge_zero_pmd(old) ? NULL : pfn_to_page(pmd_pfn(old)),
				     vm_flags);
		if (new == old)
			return false;
		found = pmdp_cmpxchg(pmd, old, new);
		if (found == old)
			return true;
		old = found;
	}
}

void change_protection(struct vm_area_struct *vma, unsigned long start, unsigned long end)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long vm_flags = vma->vm_flags;
	struct mmu_notifier_range range;
	bool changed = false;

	mmu_notifier_start(&range, MMU_NOTIFY_PROTECTION_VMA, mm, start, end);
	for (unsigned long addr = start; addr < end;) {
		unsigned long next = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, end);
		pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte;
		spinlock_t *ptl;

		if (pmd && pmd_leaf_or_migration(READ_ONCE(*pmd))) {
			ptl = pmd_lock(mm, pmd);
			if (!pmd_leaf_or_migration(*pmd)) {
				/* split meanwhile: by PTE below */
			} else if (IS_ALIGNED(addr, PMD_SIZE) && next == addr + PMD_SIZE) {
				changed |= is_pmd_migration_entry(*pmd) ?
					   change_migration_entry(pmd, *pmd, vm_flags) :
					   change_huge_pmd(pmd, vm_flags);
			} else {
				__split_huge_pmd_locked(vma, pmd, ALIGN_DOWN(addr, PMD_SIZE));
				changed = true;
			}
			spin_unlock(ptl);
		}
		pte = pmd ? pte_offset_map_lock(mm, pmd, addr, &ptl) : NULL;
		if (pte) {
			changed |= change_pte_range(vma, pmd, addr, next, vm_flags);
			pte_unmap_unlock(pte, ptl);
		}
		addr = next;
	}
	if (changed)
		flush_tlb_mm_range(mm, start, end);
	mmu_notifier_invalidate_range_end(&range);
}
