/*
 * hmm_range_fault: a device's snapshot of a range of page tables
 * (include/quire/hmm.h has the interface, docs/mm/mmu_notifier.md the
 * protocol). Written from Linux's interface. A walk goes a PMD block at a
 * time under the block's page-table lock; a page that must be faulted in
 * is faulted with the lock dropped (mmap_lock still held for reading) and
 * the walk goes on from it, after checking that no invalidation met the
 * notifier meanwhile (a copy-on-write fault itself is one: -EBUSY, and
 * the caller starts again with a new sequence, as on Linux).
 */
#include <quire/hmm.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/huge_mm.h>
#include <quire/memremap.h>
#include <quire/swapops.h>
#include <quire/errno.h>

/* What the caller asks of page i: 0, HMM_PFN_REQ_FAULT, or with HMM_PFN_REQ_WRITE. */
static unsigned long wanted(const struct hmm_range *range, unsigned long i)
{
	unsigned long req = (range->hmm_pfns[i] & range->pfn_flags_mask) | range->default_flags;

	return req & (HMM_PFN_REQ_FAULT | HMM_PFN_REQ_WRITE);
}

/* Must the entry's state (valid, writable) be faulted to meet req? */
static bool need_fault(unsigned long req, bool valid, bool writable)
{
	if (!(req & HMM_PFN_REQ_FAULT))
		return false;
	return !valid || ((req & HMM_PFN_REQ_WRITE) && !writable);
}

/* Fault addr in as asked: 0 (walk on from addr), or the error for the caller. */
static int hmm_fault(struct vm_area_struct *vma, unsigned long addr, unsigned long req)
{
	unsigned int flags = 0;

	if (req & HMM_PFN_REQ_WRITE) {
		if (!(vma->vm_flags & VM_WRITE))
			return -EPERM;
		flags |= FAULT_FLAG_WRITE;
	}
	switch (handle_mm_fault_locked(vma, addr, flags)) {
	case 0:
		return 0;
	case -ENOMEM:
		return -ENOMEM;
	default:	/* a memory error, past the end of a file, ... */
		return -EFAULT;
	}
}

/*
 * [addr, end) with nothing usable mapped (no VMA, or a VMA that cannot be
 * read): -EFAULT if any page is asked for, else each word says error (or
 * 0 where readable and empty).
 */
static int fill_unmapped(struct hmm_range *range, unsigned long addr, unsigned long end,
			 unsigned long word)
{
	for (; addr < end; addr += PAGE_SIZE) {
		unsigned long i = (addr - range->start) >> PAGE_SHIFT;

		if (wanted(range, i) & HMM_PFN_REQ_FAULT)
			return -EFAULT;
		range->hmm_pfns[i] = word;
	}
	return 0;
}

/*
 * One PMD block's part [*addr, end) of vma: the words written, *addr
 * moved past them. 1: a page needs a fault, *addr is it and *req what
 * it needs; 0: done to end.
 */
static int walk_block(struct hmm_range *range, struct vm_area_struct *vma, unsigned long *addr,
		      unsigned long end, unsigned long *req)
{
	struct mm_struct *mm = vma->vm_mm;
	pte_t *pmd, entry, *pte, *first;
	spinlock_t *ptl;

	pmd = pmd_lookup(mm->pgd, *addr, false);
	if (pmd && pmd_leaf(READ_ONCE(*pmd))) {
		ptl = pmd_lock(mm, pmd);
		entry = pmdp_get(pmd);
		if (pmd_leaf(entry)) {
			unsigned long base = pmd_pfn(entry), w = pte_write(pmd_pte(entry));

			for (; *addr < end; *addr += PAGE_SIZE) {
				unsigned long i = (*addr - range->start) >> PAGE_SHIFT;

				*req = wanted(range, i);
				if (need_fault(*req, true, w)) {
					spin_unlock(ptl);
					return 1;
				}
				range->hmm_pfns[i] = (base + ((*addr & (PMD_SIZE - 1)) >> PAGE_SHIFT)) |
					HMM_PFN_VALID | (w ? HMM_PFN_WRITE : 0) |
					((unsigned long)HPAGE_PMD_ORDER << HMM_PFN_ORDER_SHIFT);
			}
			spin_unlock(ptl);
			return 0;
		}
		spin_unlock(ptl);	/* split meanwhile: by PTE */
	}
	first = pmd && READ_ONCE(*pmd) ? pte_offset_map_lock(mm, pmd, *addr, &ptl) : NULL;
	for (pte = first; *addr < end; *addr += PAGE_SIZE, pte = pte ? pte + 1 : NULL) {
		unsigned long i = (*addr - range->start) >> PAGE_SHIFT;
		bool valid = false, w = false;

		unsigned long pfn = 0;

		entry = pte ? ptep_get(pte) : 0;
		if (pte_present(entry)) {
			valid = true;
			w = pte_write(entry);	/* (the zero page is never writable) */
			pfn = pte_pfn(entry);
		} else if (is_device_private_pte(entry)) {
			swp_entry_t e = pte_to_swp_entry(entry);

			/* The caller's own device memory: reported as it is, never faulted back. */
			if (pfn_to_page(swp_offset_pfn(e))->pgmap->owner == range->dev_private_owner) {
				pfn = swp_offset_pfn(e);
				range->hmm_pfns[i] = pfn | HMM_PFN_VALID |
					(is_writable_device_private_entry(e) ? HMM_PFN_WRITE : 0);
				continue;
			}
		}
		*req = wanted(range, i);
		if (need_fault(*req, valid, w)) {
			if (first)
				pte_unmap_unlock(first, ptl);
			return 1;
		}
		/*
		 * Not present (none, migration, hwpoison, another device's
		 * page, a device-exclusive entry) and not asked for: 0.
		 */
		range->hmm_pfns[i] = valid ? pfn | HMM_PFN_VALID | (w ? HMM_PFN_WRITE : 0) : 0;
	}
	if (first)
		pte_unmap_unlock(first, ptl);
	return 0;
}

int hmm_range_fault(struct hmm_range *range)
{
	struct mm_struct *mm = range->notifier->mm;
	unsigned long addr = range->start;

	mmap_assert_locked(mm);
	if (!IS_ALIGNED(range->start, PAGE_SIZE) || !IS_ALIGNED(range->end, PAGE_SIZE) ||
	    range->start > range->end)
		return -EINVAL;
	while (addr < range->end) {
		struct vm_area_struct *vma;
		unsigned long end, req;
		int err;

		/* An invalidation met the notifier: what was read may be stale. */
		if (mmu_interval_check_retry(range->notifier, range->notifier_seq))
			return -EBUSY;
		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start > addr) {
			end = vma ? min(vma->vm_start, range->end) : range->end;
			err = fill_unmapped(range, addr, end, HMM_PFN_ERROR);
			if (err)
				return err;
			addr = end;
			continue;
		}
		end = min(min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, vma->vm_end), range->end);
		if (!(vma->vm_flags & VM_READ)) {
			err = fill_unmapped(range, addr, end, HMM_PFN_ERROR);
			if (err)
				return err;
			addr = end;
			continue;
		}
		if (walk_block(range, vma, &addr, end, &req)) {
			err = hmm_fault(vma, addr, req);
			if (err)
				return err;
		}
	}
	/* (An invalidation after the last check: the caller's read_retry sees it.) */
	return 0;
}
