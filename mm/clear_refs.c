/*
 * /proc/<pid>/clear_refs (Linux's file, include/quire/task_mmu.h): a write
 * of a number resets what the process's page tables remember:
 *   1  the accessed (young) bit of every page it maps (smaps "Referenced");
 *   2  the same for anonymous VMAs only;  3  for file VMAs only;
 *   4  soft-dirty: every VMA loses VM_SOFTDIRTY, and every PTE and PMD leaf
 *      its soft-dirty bit and its write permission. The MMU sets D on a
 *      write but never soft-dirty, so the next write must fault: the fault
 *      sets both again (pte_mkdirty). Anonymous pages stay
 *      PageAnonExclusive, so that fault reuses the page and never copies
 *      it: a pin taken later still sees what the process writes. As Linux,
 *      a maybe-pinned page is left as it is (writable, soft-dirty).
 *   5  would reset the peak RSS (VmHWM), which Quire does not keep: -ENOSYS.
 * Soft-dirty is Linux's: pagemap bit 55 (mm/task_mmu.c); "written since the
 * last clear", with false positives allowed (a new VMA, a merge with one).
 * Lock order: mmap_lock (for writing with 4: it changes vm_flags, else for
 * reading), then each table's page-table lock (walk_range). For 4, one
 * TLB flush over what changed, before the write returns.
 */
#include <quire/mmu_notifier.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/pte.h>
#include <quire/rmap.h>
#include <quire/kernel.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/mm_internal.h>
#include <quire/swapops.h>
#include <quire/task_mmu.h>
#include <asm/page.h>

struct clear_refs_walk {
	struct mmu_walk w;
	struct vm_area_struct *vma;
	enum clear_refs_type type;
	unsigned long lo, hi;	/* the range whose entries changed: [lo, hi) */
};

static void changed(struct clear_refs_walk *cw, unsigned long addr, unsigned long end)
{
	cw->lo = min(cw->lo, addr);
	cw->hi = max(cw->hi, end);
}

/* A page that may be pinned keeps write access (Linux's pte_is_pinned). */
static bool maybe_pinned(unsigned long pfn)
{
	struct page *page;
	struct folio *folio = normal_folio(pfn, &page);

	return folio && folio_maybe_dma_pinned(folio);
}

static void clear_refs_pte(struct mmu_walk *w, unsigned long addr, pte_t pte)
{
	struct clear_refs_walk *cw = container_of(w, struct clear_refs_walk, w);
	struct page *page;
	pte_t new;

	if (cw->type == CLEAR_REFS_SOFT_DIRTY) {
		if (is_swap_pte(pte)) {
			/* not present: no MMU writes it; the table's lock keeps others out */
			swp_entry_t e = pte_to_swp_entry(pte);

			/*
			 * A writable device-private entry becomes read-only, as a
			 * present PTE is write-protected: once the page is back
			 * in RAM, the next write faults and is seen.
			 */
			if (is_writable_device_private_entry(e))
				pte = swp_entry_to_pte(make_readable_device_private_entry(
							swp_offset_pfn(e)));
			else
				pte = pte_swp_clear_soft_dirty(pte);
			if (pte != ptep_get(w->slot))
				set_pte(w->slot, pte);
			return;
		}
		if (!pte_has_page(pte))
			return;
		if (maybe_pinned(pte_pfn(pte))) {
			/*
			 * Left as it is, as Linux does: a write-protect would
			 * not stop the pin's writes. A writable one is made
			 * soft-dirty if it is not (made writable under a
			 * soft-dirty VMA): the page may change at any time,
			 * and the VMA's flag goes now.
			 */
			if (!pte_write(pte) || pte_soft_dirty(pte))
				return;
			pte = ptep_modify_prot_start(cw->vma, addr, w->slot);
			ptep_modify_prot_commit(cw->vma, addr, w->slot, pte, pte_mksoft_dirty(pte));
			return;
		}
		new = pte_clear_soft_dirty(pte_wrprotect(pte));
	} else {
		/* Linux's vm_normal_page: the zero page has no young bit worth clearing. */
		struct folio *folio = pte_normal_folio(pte, &page);

		if (!folio)
			return;
		clear_page_flag((struct page *)folio, PG_referenced);
		new = pte_mkold(pte);
	}
	if (new == pte)
		return;
	/* xchg, then the new entry made from the last value (the MMU may set D until then). */
	pte = ptep_modify_prot_start(cw->vma, addr, w->slot);
	new = cw->type == CLEAR_REFS_SOFT_DIRTY ? pte_clear_soft_dirty(pte_wrprotect(pte)) :
						  pte_mkold(pte);
	ptep_modify_prot_commit(cw->vma, addr, w->slot, pte, new);
	changed(cw, addr, addr + PAGE_SIZE);
}

static void clear_refs_pmd(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd)
{
	struct clear_refs_walk *cw = container_of(w, struct clear_refs_walk, w);
	bool soft_dirty = cw->type == CLEAR_REFS_SOFT_DIRTY;
	bool pinned = soft_dirty && maybe_pinned(pmd_pfn(pmd));
	pte_t new, found;

	if (!soft_dirty)
		clear_page_flag(pfn_to_page(pmd_pfn(pmd)), PG_referenced);	/* the head page */
	/* One cmpxchg from the last value, again if the MMU set A or D meanwhile. */
	for (;;) {
		/* (Pinned: as in clear_refs_pte, kept, and made soft-dirty if writable.) */
		if (pinned)
			new = pte_write(pmd_pte(pmd)) ? pmd_mksoft_dirty(pmd) : pmd;
		else
			new = soft_dirty ? pmd_clear_soft_dirty(pmd_wrprotect(pmd)) : pmd_mkold(pmd);
		if (new == pmd)
			return;
		found = pmdp_cmpxchg(w->slot, pmd, new);
		if (found == pmd)
			break;
		pmd = found;
	}
	if (pinned)
		return;		/* (only made soft-dirty: no translation taken away) */
	changed(cw, ALIGN_DOWN(addr, PMD_SIZE), ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE);
	(void)end;
}

/*
 * A PMD migration entry (its PMD lock held): soft-dirty is cleared, as a
 * PTE migration entry's is (Linux's clear_soft_dirty_pmd). Not present:
 * no MMU writes it meanwhile, and no translation to flush.
 */
static void clear_refs_swap_pmd(struct mmu_walk *w, unsigned long addr, unsigned long end,
				pte_t pmd)
{
	struct clear_refs_walk *cw = container_of(w, struct clear_refs_walk, w);

	if (cw->type == CLEAR_REFS_SOFT_DIRTY && pmd_swp_soft_dirty(pmd))
		set_pmd(w->slot, pmd_swp_clear_soft_dirty(pmd));
	(void)addr;
	(void)end;
}

/* Which VMAs a type touches (Linux's clear_refs_test_walk). */
static bool clear_refs_wants(enum clear_refs_type type, struct vm_area_struct *v)
{
	if (type == CLEAR_REFS_ANON)
		return !v->vm_file;
	if (type == CLEAR_REFS_MAPPED)
		return v->vm_file;
	return true;
}

int clear_refs(struct mm_struct *mm, enum clear_refs_type type)
{
	struct clear_refs_walk cw = {
		.w = { .pte = clear_refs_pte, .pmd = clear_refs_pmd, .swap_pmd = clear_refs_swap_pmd },
		.type = type, .lo = ~0UL, .hi = 0,
	};
	bool soft_dirty = type == CLEAR_REFS_SOFT_DIRTY;
	struct mmu_notifier_range range;
	struct vm_area_struct *v;

	if (type < CLEAR_REFS_ALL || type >= CLEAR_REFS_LAST)
		return -EINVAL;
	if (type == CLEAR_REFS_MM_HIWATER_RSS) {
		pr_info("clear_refs: 5 (reset the peak RSS) is not implemented: Quire keeps no VmHWM\n");
		return -ENOSYS;
	}
	if (soft_dirty) {
		down_write(&mm->mmap_lock);
		/* Writable entries become read-only: the whole mm, as Linux. */
		mmu_notifier_start(&range, MMU_NOTIFY_SOFT_DIRTY, mm, 0, USER_TOP);
	} else {
		down_read(&mm->mmap_lock);
	}
	list_for_each_entry(v, &mm->vmas, vm_list) {
		if (!clear_refs_wants(type, v))
			continue;
		if (soft_dirty)
			v->vm_flags &= ~VM_SOFTDIRTY;
		cw.vma = v;
		walk_range(mm, v->vm_start, v->vm_end, &cw.w);
	}
	/*
	 * Soft-dirty: before the write returns, so that from here on a write
	 * to what was cleared faults. The accessed bit is a hint, and as on
	 * Linux nothing is flushed for it: a page whose translation is still
	 * cached may be used without the MMU setting the bit again.
	 */
	if (soft_dirty && cw.lo < cw.hi)
		flush_tlb_mm_range(mm, cw.lo, cw.hi);
	if (soft_dirty) {
		mmu_notifier_invalidate_range_end(&range);
		up_write(&mm->mmap_lock);
	} else {
		up_read(&mm->mmap_lock);
	}
	return 0;
}
