/*
 * MADV_COLLAPSE (docs/mm/thp.md): the pages a page table maps in an
 * aligned 2 MiB of a private anonymous VMA are copied into one new THP,
 * which a PMD then maps in place of the table, as Linux's madvise_collapse
 * does synchronously (Quire has no khugepaged thread doing it in the
 * background). Holes and the zero page become zeroes; each old page loses
 * this mapping (a page shared with a forked child stays the child's).
 *
 * The steps for one 2 MiB block, with mmap_lock held for writing (no fault
 * runs in the range):
 *   1. look: under the table's lock, every entry is a hole, the zero page
 *      or a present anonymous page, one at least writable (all read-only,
 *      as after fork, is -EINVAL as on Linux); each folio met gets a reference (kept
 *      alive while the lock is dropped) and then its folio lock, which
 *      keeps migration, splitting and memory_failure off it;
 *   2. detach: the PMD is cleared and the TLB flushed, which also waits for
 *      any GUP-fast walker (it runs with interrupts off); a folio with more
 *      references than its mappings and ours (a pin, a vmsplice) now puts
 *      the table back and the block is -EAGAIN, as Linux's refcount check;
 *   3. copy every page into the new folio (machine-check safe), then clear
 *      the detached entries and drop their mappings and references;
 *   4. map the new folio by the PMD, exclusive, writable if the VMA is, and
 *      keep the emptied table deposited for a later split.
 * Each block that is already a PMD mapping counts as done. Errors as
 * Linux's: -EINVAL (no page table there, an entry it cannot take, a VMA
 * with MADV_NOHUGEPAGE, or a file or shared mapping: not implemented here,
 * logged), -EAGAIN (a folio locked, pinned or being migrated), -ENOMEM.
 */
#define pr_fmt(fmt) "khugepaged: " fmt
#include <quire/mmu_notifier.h>
#include <quire/huge_mm.h>
#include <quire/rmap.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/memremap.h>
#include <quire/mm_internal.h>
#include <quire/swapops.h>
#include <quire/copy_mc.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/pte.h>
#include <quire/slab.h>

struct collapse_folios {
	struct folio *folio[HPAGE_PMD_NR];
	unsigned int nr, locked;
};

static void release_folios(struct collapse_folios *c)
{
	for (unsigned int i = 0; i < c->nr; i++) {
		if (i < c->locked)
			folio_unlock(c->folio[i]);
		folio_put(c->folio[i]);
	}
}

static bool collapse_listed(struct collapse_folios *c, struct folio *folio)
{
	for (unsigned int i = c->nr; i-- > 0;)
		if (c->folio[i] == folio)
			return true;
	return false;
}

/* Step 1: the entries of the block, each folio referenced once; 0 or -errno. */
static int collapse_look(struct vm_area_struct *vma, pte_t *pmd, unsigned long haddr,
			 struct collapse_folios *c)
{
	struct mm_struct *mm = vma->vm_mm;
	spinlock_t *ptl;
	pte_t *ptes = pte_offset_map_lock(mm, pmd, haddr, &ptl);
	bool writable = false;
	int err = 0;

	if (!ptes)
		return -EAGAIN;		/* a PMD leaf or nothing meanwhile */
	for (unsigned int i = 0; i < HPAGE_PMD_NR && !err; i++) {
		pte_t entry = ptep_get(ptes + i);
		struct folio *folio;

		if (!entry || (pte_present(entry) && is_zero_pfn(pte_pfn(entry))))
			continue;
		if (!pte_present(entry)) {
			err = is_migration_entry(pte_to_swp_entry(entry)) ? -EAGAIN : -EINVAL;
			break;
		}
		writable |= pte_write(entry);
		folio = page_folio(pfn_to_page(pte_pfn(entry)));
		if (!folio_test_anon(folio) || folio_is_zone_device(folio)) {
			err = -EINVAL;	/* (device memory is its owner's: Linux's SCAN_PAGE_NULL) */
			break;
		}
		if (collapse_listed(c, folio))
			continue;	/* another page of a folio already taken */
		folio_get(folio);
		c->folio[c->nr++] = folio;
	}
	pte_unmap_unlock(ptes, ptl);
	if (!err && !writable)
		err = -EINVAL;	/* Linux's SCAN_PAGE_RO: every page read-only (COW-shared after fork) */
	for (; !err && c->locked < c->nr; c->locked++)
		if (!folio_trylock(c->folio[c->locked]))
			err = -EAGAIN;
	return err;
}

/* No reference beyond the mappings' (one each) and ours: nothing pinned or borrowed. */
static bool collapse_refs_ok(struct collapse_folios *c)
{
	for (unsigned int i = 0; i < c->nr; i++)
		if (folio_ref_count(c->folio[i]) != folio_mapcount(c->folio[i]) + 1)
			return false;
	return true;
}

/* Steps 3 and 4 on the detached table: copy, unmap the old pages, map the THP. */
static int collapse_copy_and_map(struct vm_area_struct *vma, pte_t *pmd, unsigned long haddr,
				 pte_t *ptes, struct page *table, struct folio *thp)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long filled = 0;
	spinlock_t *ptl;

	for (unsigned int i = 0; i < HPAGE_PMD_NR; i++) {
		pte_t entry = ptep_get(ptes + i);

		if (!entry || is_zero_pfn(pte_pfn(entry)))
			continue;
		if (copy_mc_highpages(folio_page(thp, i), pfn_to_page(pte_pfn(entry)), 1))
			return -EHWPOISON;	/* the old pages stay mapped: the caller puts the table back */
	}
	for (unsigned int i = 0; i < HPAGE_PMD_NR; i++) {
		unsigned long addr = haddr + ((unsigned long)i << PAGE_SHIFT);
		pte_t entry = ptep_get_and_clear(mm, addr, ptes + i);	/* the zero page's too */
		struct page *page;

		if (!entry || is_zero_pfn(pte_pfn(entry)))
			continue;
		page = pfn_to_page(pte_pfn(entry));
		folio_remove_rmap_pte(page_folio(page), page, vma);
		folio_put(page_folio(page));	/* the PTE's reference */
		filled++;
	}
	ptl = pmd_lock(mm, pmd);
	set_pmd_release(pmd, pmd_mkyoung(pmd_mkdirty(pfn_pmd(folio_pfn(thp),
							     vma->vm_flags & VM_WRITE,
							     vma->vm_flags & VM_EXEC))));
	folio_add_new_anon_rmap(thp, vma, haddr, RMAP_EXCLUSIVE);
	pgtable_deposit(mm, pmd, table);
	spin_unlock(ptl);
	atomic_long_add((long)(HPAGE_PMD_NR - filled), &mm->rss);
	count_thp_event(THP_COLLAPSE_ALLOC);
	return 0;
}

/* One aligned 2 MiB block of vma: 0 (collapsed, or a PMD mapping already) or -errno. */
static int collapse_pmd(struct vm_area_struct *vma, unsigned long haddr,
			struct collapse_folios *c)
{
	struct mm_struct *mm = vma->vm_mm;
	pte_t *pmd = pmd_lookup(mm->pgd, haddr, false), old;
	struct mmu_notifier_range range;
	struct folio *thp;
	struct page *table;
	spinlock_t *ptl;
	int err;

	if (!pmd || !READ_ONCE(*pmd))
		return -EINVAL;		/* Linux's SCAN_PMD_NULL */
	if (pmd_leaf(READ_ONCE(*pmd)))
		return 0;
	if (!pmd_is_table(READ_ONCE(*pmd)))
		return -EINVAL;		/* a THP being migrated: Linux's SCAN_PMD_NULL too */
	c->nr = c->locked = 0;
	err = collapse_look(vma, pmd, haddr, c);
	thp = err ? NULL : alloc_pmd_folio(vma, haddr);
	if (!err && !thp) {
		count_thp_event(THP_COLLAPSE_ALLOC_FAILED);
		err = -ENOMEM;
	}
	if (err)
		goto out;
	mmu_notifier_start(&range, MMU_NOTIFY_CLEAR, mm, haddr, haddr + PMD_SIZE);
	ptl = pmd_lock(mm, pmd);
	old = pmdp_get(pmd);
	pmd_clear(pmd);
	spin_unlock(ptl);
	flush_tlb_mm_range(mm, haddr, haddr + PMD_SIZE);	/* waits for GUP-fast too */
	table = pfn_to_page(PHYS_PFN(pgtable_phys(old)));
	err = collapse_refs_ok(c) ? 0 : -EAGAIN;
	if (!err)
		err = collapse_copy_and_map(vma, pmd, haddr, page_address(table), table, thp);
	if (err) {
		ptl = pmd_lock(mm, pmd);
		pmd_populate(pmd, page_to_phys(table));		/* as it was */
		spin_unlock(ptl);
		folio_put(thp);
	}
	mmu_notifier_invalidate_range_end(&range);
out:
	release_folios(c);
	return err;
}

/* The aligned 2 MiB blocks of one VMA's part [start, end): 0, or the last failure. */
static int collapse_vma(struct vm_area_struct *vma, unsigned long start, unsigned long end,
			struct collapse_folios *c)
{
	unsigned long hstart = ALIGN_UP(start, PMD_SIZE), hend = ALIGN_DOWN(end, PMD_SIZE);
	int err = 0;

	if (vma->vm_flags & VM_NOHUGEPAGE)
		return -EINVAL;
	if (hstart > hend)
		return -EINVAL;	/* inside one block: Linux's count check fails so */
	if (vma->vm_file) {
		pr_info("MADV_COLLAPSE of a file or shared mapping is not implemented (EINVAL)\n");
		return -EINVAL;
	}
	for (unsigned long addr = hstart; addr < hend; addr += PMD_SIZE) {
		int ret = collapse_pmd(vma, addr, c);

		if (ret)
			err = ret;	/* Linux goes on and reports the last failure */
	}
	return err;
}

int madvise_collapse(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	struct collapse_folios *c = kmalloc(sizeof(*c), GFP_KERNEL);
	unsigned long addr = start;
	int err = 0;

	mmap_assert_write_locked(mm);
	if (!c)
		return -ENOMEM;
	while (addr < end && !err) {
		struct vm_area_struct *v = find_vma(mm, addr);

		if (!v || v->vm_start > addr) {
			err = -ENOMEM;	/* a hole: as Linux, after the VMAs before it */
			break;
		}
		err = collapse_vma(v, addr, min(v->vm_end, end), c);
		addr = v->vm_end;
	}
	kfree(c);
	return err;
}
