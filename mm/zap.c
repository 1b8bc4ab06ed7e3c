/*
 * Unmapping pages (munmap, MADV_DONTNEED, exit, truncate): zap_page_range.
 *
 * The entries are cleared one 2 MiB block at a time, under the lock of
 * the PTE table (or, for a PMD mapping, of the PMD table) that holds them; runs of PTEs that map consecutive pages of one folio go through
 * one folio_remove_rmap_ptes call (folio_pte_batch). The folios, and how
 * many references their mappings held, are gathered in a batch: they may
 * only be given back once no CPU can still reach them through a stale TLB
 * entry, so a full batch (or the end) is one shootdown, then the puts.
 * A PMD mapping wholly inside the range goes at once; one that is cut is
 * split into PTEs first.
 */
#include <quire/mmap.h>
#include <quire/mmu_notifier.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/huge_mm.h>
#include <quire/slab.h>
#include <quire/fs.h>

#define GATHER_BATCH	256	/* a large range's batch (kmalloc'd) */
#define GATHER_SMALL	16	/* a small range's batch, on the stack */

struct gather_entry {
	struct folio *folio;
	int refs;
};

struct mmu_gather {
	struct mm_struct *mm;
	unsigned long start, end;
	unsigned int nr, cap;
	bool flush;
	struct gather_entry *entries;
	struct gather_entry small[GATHER_SMALL];
};

static void tlb_flush_and_free(struct mmu_gather *tlb)
{
	if (tlb->flush)
		flush_tlb_mm_range(tlb->mm, tlb->start, tlb->end);
	for (unsigned int i = 0; i < tlb->nr; i++)
		folio_put_refs(tlb->entries[i].folio, tlb->entries[i].refs);
	tlb->nr = 0;
	tlb->flush = false;
}

static void tlb_gather(struct mmu_gather *tlb, struct folio *folio, int refs)
{
	tlb->entries[tlb->nr].folio = folio;
	tlb->entries[tlb->nr].refs = refs;
	tlb->nr++;
}

/*
 * Clear the PTEs of [addr, end) inside one page table (its lock held; pte
 * is addr's). Returns where it stopped: end, or earlier when the gather
 * batch is full.
 */
static unsigned long zap_pte_range(struct mmu_gather *tlb, struct vm_area_struct *vma,
				   pte_t *pmd, pte_t *pte, unsigned long addr, unsigned long end)
{
	struct mm_struct *mm = vma->vm_mm;

	lockdep_assert_held(pte_lockptr(mm, pmd));
	while (addr < end && tlb->nr < tlb->cap) {
		pte_t entry = ptep_get(pte);
		struct page *page;
		struct folio *folio;
		int nr;

		if (is_device_mapping_pte(entry)) {
			/* Maps its page as a PTE would: the reference goes after the flush. */
			tlb_gather(tlb, zap_device_entry(vma, pte, addr), 1);
			addr += PAGE_SIZE;
			pte++;
			continue;
		}
		if (!pte_has_page(entry)) {
			/*
			 * A migration entry counts in rss (its page comes back
			 * when the migration ends); a hwpoison entry has
			 * nothing behind it. Neither holds a folio reference.
			 */
			if (is_migration_pte(entry))
				atomic_long_dec(&mm->rss);
			if (is_swap_pte(entry))
				pte_clear(mm, addr, pte);
			addr += PAGE_SIZE;
			pte++;
			continue;
		}
		tlb->flush = true;
		if (is_zero_pfn(pte_pfn(entry))) {
			pte_clear(mm, addr, pte);	/* read-only: the MMU sets no D on it */
			addr += PAGE_SIZE;
			pte++;
			continue;
		}
		page = pfn_to_page(pte_pfn(entry));
		folio = page_folio(page);
		nr = folio_pte_batch(folio, pte, entry, (int)((end - addr) >> PAGE_SHIFT));
		/*
		 * xchg each (Linux's get_and_clear_full_ptes): a writable PTE may
		 * get its D bit from another CPU's MMU until it is clear. (Nothing
		 * needs that bit after the zap yet: anonymous folios are dirty by
		 * nature, ramfs's page-cache folios from the start, and there is
		 * no writeback; Linux passes it on with folio_mark_dirty.)
		 */
		for (int i = 0; i < nr; i++)
			ptep_get_and_clear(mm, addr + ((unsigned long)i << PAGE_SHIFT), pte + i);
		folio_remove_rmap_ptes(folio, page, nr, vma);
		atomic_long_sub(nr, &mm->rss);
		tlb_gather(tlb, folio, nr);
		addr += (unsigned long)nr << PAGE_SHIFT;
		pte += nr;
	}
	return addr;
}

/*
 * A PMD leaf (or PMD migration entry) in [addr, block_end): gone when the
 * range covers it, split otherwise (the PTEs are then zapped under the new
 * table's lock). False: no leaf there any more (split or unmapped meanwhile).
 */
static bool zap_pmd_leaf(struct mmu_gather *tlb, struct vm_area_struct *vma, pte_t *pmd,
			 unsigned long addr, unsigned long block_end)
{
	spinlock_t *ptl = pmd_lock(vma->vm_mm, pmd);
	struct page *table = NULL;
	struct folio *huge;

	if (!pmd_leaf_or_migration(*pmd)) {
		spin_unlock(ptl);
		return false;
	}
	tlb->flush = true;
	if (!IS_ALIGNED(addr, PMD_SIZE) || block_end != addr + PMD_SIZE) {
		__split_huge_pmd_locked(vma, pmd, ALIGN_DOWN(addr, PMD_SIZE));
		spin_unlock(ptl);
		return false;
	}
	huge = zap_huge_pmd(vma, pmd, &table);
	spin_unlock(ptl);
	if (huge)			/* (NULL: the huge zero page) */
		tlb_gather(tlb, huge, 1);
	if (table)
		pagetable_free(table);	/* deposited: never reachable by the MMU */
	return true;
}

/* Unmap [start, end) of vma (mmap_lock held, or i_mmap_rwsem for truncate). */
static void zap_vma_range(struct mmu_gather *tlb, struct vm_area_struct *vma,
			  unsigned long start, unsigned long end)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long addr = start;

	while (addr < end) {
		unsigned long block_end = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, end);
		pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte;
		pte_t pmdval = pmd ? pmdp_get(pmd) : 0;
		spinlock_t *ptl;

		if (!pmdval) {
			addr = block_end;
			continue;
		}
		if (pmd_leaf_or_migration(pmdval) && zap_pmd_leaf(tlb, vma, pmd, addr, block_end)) {
			addr = block_end;
		} else {
			pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
			if (!pte)
				continue;	/* a leaf again, or gone: look once more */
			addr = zap_pte_range(tlb, vma, pmd, pte, addr, block_end);
			pte_unmap_unlock(pte, ptl);
		}
		if (tlb->nr >= tlb->cap - 1)
			tlb_flush_and_free(tlb);
	}
}

/*
 * A range of more than GATHER_SMALL pages gathers in a kmalloc'd batch of
 * GATHER_BATCH (fewer flushes); a small one, or any without memory, in the
 * small batch on the stack.
 */
static void tlb_gather_mmu(struct mmu_gather *tlb, struct mm_struct *mm,
			   unsigned long start, unsigned long end)
{
	tlb->mm = mm;
	tlb->start = start;
	tlb->end = end;
	tlb->nr = 0;
	tlb->flush = false;
	tlb->entries = NULL;
	if ((end - start) >> PAGE_SHIFT > GATHER_SMALL)
		tlb->entries = kmalloc(sizeof(*tlb->entries) * GATHER_BATCH, GFP_KERNEL);
	tlb->cap = tlb->entries ? GATHER_BATCH : GATHER_SMALL;
	if (!tlb->entries)
		tlb->entries = tlb->small;
}

static void tlb_finish_mmu(struct mmu_gather *tlb)
{
	tlb_flush_and_free(tlb);
	if (tlb->entries != tlb->small)
		kfree(tlb->entries);
}

/* Zap [start, end) of vma, between an MMU notifier's start and end (event). */
static void zap_notified(struct vm_area_struct *vma, unsigned long start, unsigned long end,
			 enum mmu_notifier_event event)
{
	struct mmu_notifier_range range;
	struct mmu_gather tlb;

	mmu_notifier_start(&range, event, vma->vm_mm, start, end);
	tlb_gather_mmu(&tlb, vma->vm_mm, start, end);
	zap_vma_range(&tlb, vma, start, end);
	tlb_finish_mmu(&tlb);
	mmu_notifier_invalidate_range_end(&range);
}

void unmap_region(struct vm_area_struct *vma, unsigned long start, unsigned long end)
{
	zap_notified(vma, start, end, MMU_NOTIFY_UNMAP);
}

void zap_page_range_single(struct vm_area_struct *vma, unsigned long start, unsigned long end)
{
	zap_notified(vma, start, end, MMU_NOTIFY_CLEAR);
}

void unmap_mapping_pages(struct address_space *mapping, unsigned long first)
{
	struct vm_area_struct *vma;

	down_read(&mapping->i_mmap_rwsem);
	list_for_each_entry(vma, &mapping->i_mmap, shared) {
		unsigned long pages = (vma->vm_end - vma->vm_start) >> PAGE_SHIFT;
		unsigned long start;

		if (vma->vm_pgoff + pages <= first)
			continue;
		start = first <= vma->vm_pgoff ? vma->vm_start :
			vma->vm_start + ((first - vma->vm_pgoff) << PAGE_SHIFT);
		zap_page_range_single(vma, start, vma->vm_end);
	}
	up_read(&mapping->i_mmap_rwsem);
}
