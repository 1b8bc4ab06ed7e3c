/*
 * PMD-mapped THP and splitting (include/quire/huge_mm.h, docs/mm/thp.md):
 * the 2 MiB anonymous fault, copy-on-write and fork of a PMD mapping,
 * split_huge_pmd (one PMD becomes 512 PTEs in place), split_folio_to_order
 * (a large anonymous folio becomes smaller ones) and the deferred split
 * queue of partially unmapped folios.
 *
 * Each PMD mapping has a page table set aside (deposited) on the page of
 * the PMD table that holds it, so that splitting the PMD, which munmap and
 * mprotect of part of it do, never needs memory. A PMD entry and the
 * tables deposited there change under that PMD table's lock (pmd_lock).
 */
#define pr_fmt(fmt) "thp: " fmt
#include <quire/mempolicy.h>
#include <quire/huge_mm.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/migrate.h>
#include <quire/mmap.h>
#include <quire/mmu_notifier.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/numa.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/panic.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/pagemap.h>
#include <quire/fs.h>

/* ---- deposited page tables ---- */

void pgtable_deposit(struct mm_struct *mm, pte_t *pmd, struct page *table)
{
	lockdep_assert_held(pmd_lockptr(mm, pmd));
	list_add(&table->lru, &virt_to_page(pmd)->lru);
	__atomic_add_fetch(&mm->nr_deposited, 1, __ATOMIC_RELAXED);
}

struct page *pgtable_withdraw(struct mm_struct *mm, pte_t *pmd)
{
	struct list_head *deposited = &virt_to_page(pmd)->lru;
	struct page *table;

	lockdep_assert_held(pmd_lockptr(mm, pmd));
	if (list_empty(deposited))
		return NULL;
	table = list_first_entry(deposited, struct page, lru);
	list_del(&table->lru);
	INIT_LIST_HEAD(&table->lru);
	__atomic_sub_fetch(&mm->nr_deposited, 1, __ATOMIC_RELAXED);
	return table;
}

/* ---- the huge zero page ---- */

static struct folio *huge_zero_folio;	/* made at boot (zero_page_init); never freed */

bool is_huge_zero_pfn(unsigned long pfn)
{
	struct folio *zero = READ_ONCE(huge_zero_folio);

	return zero && pfn - folio_pfn(zero) < HPAGE_PMD_NR;
}

bool is_huge_zero_pmd(pte_t pmd)
{
	return pmd_leaf(pmd) && is_huge_zero_pfn(pmd_pfn(pmd));	/* (PROT_NONE too) */
}

/*
 * Made once at boot, beside the 4 KiB zero page, so that memory counts
 * stay the same from before a first read fault to after (Linux makes it
 * at the first such fault and frees it when no mm maps it). Without a
 * free 2 MiB block, there is none: reads map the 4 KiB zero page.
 */
void huge_zero_page_init(void)
{
	struct folio *zero = folio_alloc(__GFP_ZERO | __GFP_NOWARN, HPAGE_PMD_ORDER,
					 numa_node_id());

	if (!zero) {
		pr_warn("no 2 MiB block for the huge zero page: reads map 4 KiB zero pages\n");
		count_thp_event(THP_ZERO_PAGE_ALLOC_FAILED);
	} else {
		count_thp_event(THP_ZERO_PAGE_ALLOC);
	}
	WRITE_ONCE(huge_zero_folio, zero);
}

/* The host build's next machine starts without one (host_mm_exit). */
void huge_zero_page_forget(void)
{
	WRITE_ONCE(huge_zero_folio, NULL);
}

/*
 * A read fault of an empty block: the huge zero page, read-only, with a
 * deposited table as any PMD mapping (a split needs it). FALLBACK when
 * there is no huge zero page (by PTEs), or a table appeared meanwhile.
 */
static vm_fault_t map_huge_zero_page(struct vm_area_struct *vma, unsigned long haddr,
				     pte_t *pmd)
{
	struct mm_struct *mm = vma->vm_mm;
	struct folio *zero = READ_ONCE(huge_zero_folio);
	vm_fault_t ret = VM_FAULT_DONE;
	struct page *table;
	spinlock_t *ptl;

	if (!zero) {
		count_thp_event(THP_FAULT_FALLBACK);
		return VM_FAULT_FALLBACK;
	}
	table = pagetable_alloc();
	if (!table)
		return VM_FAULT_OOM;
	ptl = pmd_lock(mm, pmd);
	if (!*pmd) {
		set_pmd_release(pmd, pfn_pmd(folio_pfn(zero), false, vma->vm_flags & VM_EXEC));
		pgtable_deposit(mm, pmd, table);
		table = NULL;
	} else if (!pmd_leaf(*pmd)) {
		ret = VM_FAULT_FALLBACK;
	}
	spin_unlock(ptl);
	if (table)
		pagetable_free(table);
	return ret;
}

/* ---- PMD mappings ---- */

static void count_fault_fallback(void)
{
	count_thp_event(THP_FAULT_FALLBACK);
	count_mthp_stat(HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_FALLBACK);
}

/* A 2 MiB folio for haddr of vma, on the node the memory policy says. */
struct folio *alloc_pmd_folio(struct vm_area_struct *vma, unsigned long haddr)
{
	gfp_t gfp = __GFP_ZERO | __GFP_MOVABLE | __GFP_THISNODE | __GFP_NOWARN;
	struct folio *folio = mpol_folio_alloc(gfp, HPAGE_PMD_ORDER, vma, haddr);

	/* Short of 2 MiB blocks: split what the deferred queue holds, then try once more. */
	if (!folio && deferred_split_scan(~0UL))
		folio = mpol_folio_alloc(gfp, HPAGE_PMD_ORDER, vma, haddr);
	return folio;
}

vm_fault_t do_huge_pmd_anonymous_page(struct vm_area_struct *vma, unsigned long addr, pte_t *pmd,
				      bool write)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long haddr = ALIGN_DOWN(addr, PMD_SIZE);
	vm_fault_t ret = VM_FAULT_DONE;
	struct folio *folio;
	struct page *table;
	spinlock_t *ptl;

	if (anon_vma_prepare(vma))
		return VM_FAULT_OOM;
	if (!write)
		return map_huge_zero_page(vma, haddr, pmd);
	folio = alloc_pmd_folio(vma, haddr);
	table = folio ? pagetable_alloc() : NULL;
	if (!table) {
		if (folio)
			folio_put(folio);
		count_fault_fallback();
		return VM_FAULT_FALLBACK;
	}
	ptl = pmd_lock(mm, pmd);
	if (!*pmd) {
		/* Release: the folio's zeroes before the mapping (Linux: __folio_mark_uptodate). */
		set_pmd_release(pmd, pmd_mkdirty(pfn_pmd(folio_pfn(folio), vma->vm_flags & VM_WRITE,
							  vma->vm_flags & VM_EXEC)));
		folio_add_new_anon_rmap(folio, vma, haddr, RMAP_EXCLUSIVE);
		pgtable_deposit(mm, pmd, table);
		atomic_long_add(HPAGE_PMD_NR, &mm->rss);
		count_thp_event(THP_FAULT_ALLOC);
		count_mthp_stat(HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_ALLOC);
		folio = NULL;
		table = NULL;
	} else if (!pmd_leaf(*pmd)) {
		ret = VM_FAULT_FALLBACK;	/* another fault put a page table here: go on by PTEs */
	}
	spin_unlock(ptl);
	if (folio)
		folio_put(folio);	/* the range was filled meanwhile */
	if (table)
		pagetable_free(table);
	return ret;
}

vm_fault_t do_huge_pmd_wp_page(struct vm_area_struct *vma, unsigned long addr, pte_t *pmd)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long haddr = ALIGN_DOWN(addr, PMD_SIZE);
	struct mmu_notifier_range range;
	vm_fault_t ret = VM_FAULT_DONE;
	spinlock_t *ptl;
	pte_t entry;
	struct folio *folio;

	/* It may split the PMD (a device must forget a 2 MiB translation): notified first. */
	mmu_notifier_start(&range, MMU_NOTIFY_CLEAR, mm, haddr, haddr + PMD_SIZE);
	ptl = pmd_lock(mm, pmd);
	entry = pmdp_get(pmd);
	if (!pmd_leaf(entry) || pte_write(entry)) {
		/* Made writable meanwhile: done. Split or unmapped: by PTE. */
		ret = pmd_leaf(entry) ? VM_FAULT_DONE : VM_FAULT_FALLBACK;
		goto out;
	}
	if (is_huge_zero_pmd(entry)) {
		/* As Linux: 512 PTEs of the 4 KiB zero page; the write copies one. */
		__split_huge_pmd_locked(vma, pmd, haddr);
		ret = VM_FAULT_FALLBACK;
		goto out;
	}
	folio = page_folio(pfn_to_page(pmd_pfn(entry)));
	entry = pmd_mkdirty(pmd_mkwrite(pmd_mkyoung(entry)));
	if (PageAnonExclusive(folio_page(folio, 0))) {
		pmdp_set_access_flags(vma, haddr, pmd, entry, true);
	} else if (folio_mapped_by_us_only(folio)) {
		for (unsigned long i = 0; i < HPAGE_PMD_NR; i++)
			SetPageAnonExclusive(folio_page(folio, i));
		pmdp_set_access_flags(vma, haddr, pmd, entry, true);
	} else {
		/* Shared: copy-on-write goes page by page, as on Linux. */
		__split_huge_pmd_locked(vma, pmd, haddr);
		ret = VM_FAULT_FALLBACK;
	}
out:
	spin_unlock(ptl);
	flush_tlb_mm_range(mm, haddr, haddr + PMD_SIZE);
	mmu_notifier_invalidate_range_end(&range);
	return ret;
}

bool copy_huge_pmd(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
		   pte_t *dst_pmd, pte_t *src_pmd, unsigned long addr, struct page *table)
{
	struct folio *folio = page_folio(pfn_to_page(pmd_pfn(*src_pmd)));

	lockdep_assert_held(pmd_lockptr(src_vma->vm_mm, src_pmd));
	lockdep_assert_held(pmd_lockptr(dst_vma->vm_mm, dst_pmd));
	if (is_huge_zero_pmd(*src_pmd)) {
		/* Read-only already, no rmap, no RSS: the child maps it too. */
		set_pmd(dst_pmd, pmdp_get(src_pmd));
		pgtable_deposit(dst_vma->vm_mm, dst_pmd, table);
		return true;
	}
	if (folio_try_dup_anon_rmap_pmd(folio, folio_page(folio, 0), dst_vma, src_vma)) {
		/* Maybe pinned: never shared. Split it and let the PTE copy decide per page. */
		__split_huge_pmd_locked(src_vma, src_pmd, ALIGN_DOWN(addr, PMD_SIZE));
		return false;
	}
	folio_get(folio);
	/* Atomic: another thread of the parent may be writing through it (D). */
	pmdp_set_wrprotect(src_vma->vm_mm, addr, src_pmd);
	set_pmd(dst_pmd, pmdp_get(src_pmd));
	pgtable_deposit(dst_vma->vm_mm, dst_pmd, table);
	atomic_long_add(HPAGE_PMD_NR, &dst_vma->vm_mm->rss);
	return true;
}

struct folio *zap_huge_pmd(struct vm_area_struct *vma, pte_t *pmd, struct page **table)
{
	struct folio *folio;

	lockdep_assert_held(pmd_lockptr(vma->vm_mm, pmd));
	if (is_pmd_migration_entry(*pmd)) {
		/* No mapping, no reference to drop (the migration took them); rss counts it. */
		pmd_clear(pmd);
		atomic_long_sub(HPAGE_PMD_NR, &vma->vm_mm->rss);
		*table = pgtable_withdraw(vma->vm_mm, pmd);
		return NULL;
	}
	folio = page_folio(pfn_to_page(pmd_pfn(*pmd)));
	if (is_huge_zero_pmd(*pmd)) {
		pmdp_huge_get_and_clear(vma->vm_mm, 0, pmd);
		*table = pgtable_withdraw(vma->vm_mm, pmd);
		return NULL;		/* nothing to put: the huge zero page is kept */
	}
	pmdp_huge_get_and_clear(vma->vm_mm, 0, pmd);	/* (its dirty bit: nothing uses it yet) */
	folio_remove_rmap_pmd(folio, folio_page(folio, 0), vma);
	atomic_long_sub(HPAGE_PMD_NR, &vma->vm_mm->rss);
	*table = pgtable_withdraw(vma->vm_mm, pmd);
	return folio;
}

/*
 * The huge zero page's PMD becomes 512 PTEs of the 4 KiB zero page (as
 * Linux's __split_huge_zero_page_pmd): read-only, no rmap, no references.
 */
static void split_huge_zero_pmd(struct vm_area_struct *vma, pte_t *pmd, struct page *table)
{
	pte_t entry = zero_page_pte(vma), *ptes = page_address(table);

	if (pte_soft_dirty(pmd_pte(pmdp_get(pmd))))
		entry = pte_mksoft_dirty(entry);
	for (unsigned long i = 0; i < HPAGE_PMD_NR; i++)
		set_pte(ptes + i, entry);	/* the same frame in each */
	pmd_populate(pmd, page_to_phys(table));
	count_thp_event(THP_SPLIT_PMD);
}

/*
 * A PMD migration entry becomes 512 PTE migration entries of the same kind
 * (as Linux's __split_huge_pmd_locked): the restore then finds them by PTE.
 * Nothing else changes: the entries hold no reference and no mapcount.
 */
static void split_pmd_migration_entry(pte_t *pmd, struct page *table)
{
	pte_t old = pmdp_get(pmd), *ptes = page_address(table);

	/* (the caller, __split_huge_pmd_locked, asserts the PMD lock) */

	for (unsigned long i = 0; i < HPAGE_PMD_NR; i++)
		set_pte(ptes + i, pmd_migration_entry_pte(old, i));
	pmd_populate(pmd, page_to_phys(table));
	count_thp_event(THP_SPLIT_PMD);
}

void __split_huge_pmd_locked(struct vm_area_struct *vma, pte_t *pmd, unsigned long haddr)
{
	struct mm_struct *mm = vma->vm_mm;
	struct page *table = pgtable_withdraw(mm, pmd);
	struct folio *folio;
	struct page *page;
	pte_t entry;
	pte_t *ptes;

	lockdep_assert_held(pmd_lockptr(mm, pmd));
	if (!table)
		panic("__split_huge_pmd_locked: no page table deposited for the PMD at %#lx",
		      haddr);
	if (is_pmd_migration_entry(pmdp_get(pmd))) {
		split_pmd_migration_entry(pmd, table);
		return;
	}
	if (is_huge_zero_pmd(pmdp_get(pmd))) {
		split_huge_zero_pmd(vma, pmd, table);
		return;
	}
	folio = page_folio(pfn_to_page(pmd_pfn(*pmd)));
	page = folio_page(folio, 0);
	entry = pmd_pte(pmdp_get(pmd));
	/*
	 * The leaf stays mapped until the table replaces it below, and the MMU
	 * may set its D bit meanwhile (a thread writing through it): a
	 * writable leaf's PTEs are made dirty, so no such write is lost. (Its
	 * A bit is set from its creation on and nothing clears it; Linux
	 * makes the leaf not present first, pmdp_invalidate, to read both.)
	 */
	if (pte_write(entry))
		entry = pte_mkdirty(entry);
	ptes = page_address(table);
	/* Not reachable yet (the release below publishes them), but stored as any entry is. */
	set_ptes(mm, haddr, ptes, entry, HPAGE_PMD_NR);
	/* The PTE mappings first, so the folio never looks unmapped in between. */
	if (rmap_batching) {
		folio_add_anon_rmap_ptes(folio, page, HPAGE_PMD_NR, vma, haddr, RMAP_NONE);
	} else {
		for (unsigned long i = 0; i < HPAGE_PMD_NR; i++)
			folio_add_anon_rmap_pte(folio, page + i, vma, haddr + (i << PAGE_SHIFT),
						RMAP_NONE);
	}
	folio_remove_rmap_pmd(folio, page, vma);
	folio_ref_add(folio, HPAGE_PMD_NR - 1);	/* one reference per PTE */
	/*
	 * The table last, its PTEs and the folio's counts complete: from here
	 * on a fault may take the table's lock (not taken here: nobody can
	 * reach the table before) and unmap or copy a page, and its rmap call
	 * must find the PTE mapping counted.
	 */
	pmd_populate(pmd, page_to_phys(table));
	count_thp_event(THP_SPLIT_PMD);
}

void split_huge_pmd(struct vm_area_struct *vma, unsigned long addr)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long haddr = ALIGN_DOWN(addr, PMD_SIZE);
	pte_t *pmd = pmd_lookup(mm->pgd, haddr, false);
	bool split = false;
	spinlock_t *ptl;

	struct mmu_notifier_range range;

	if (!pmd || !pmd_leaf_or_migration(READ_ONCE(*pmd)))
		return;
	mmu_notifier_start(&range, MMU_NOTIFY_CLEAR, mm, haddr, haddr + PMD_SIZE);
	ptl = pmd_lock(mm, pmd);
	if (pmd_leaf_or_migration(*pmd)) {	/* rechecked: another CPU may have split it first */
		__split_huge_pmd_locked(vma, pmd, haddr);
		split = true;
	}
	spin_unlock(ptl);
	if (split)
		flush_tlb_mm_range(mm, haddr, haddr + PMD_SIZE);
	mmu_notifier_invalidate_range_end(&range);
}

/* ---- PMD migration entries (mm/migrate.c) ---- */

bool set_pmd_migration_entry(struct page_vma_mapped_walk *pvmw, struct folio *folio)
{
	struct vm_area_struct *vma = pvmw->vma;
	struct mm_struct *mm = vma->vm_mm;
	struct page *page = folio_page(folio, 0);
	bool anon_exclusive = folio_test_anon(folio) && PageAnonExclusive(page);
	pte_t old = pmdp_get(pvmw->pmd), found;

	lockdep_assert_held(pmd_lockptr(mm, pvmw->pmd));
	VM_BUG_ON_FOLIO(!folio_test_locked(folio), folio);
	/*
	 * One cmpxchg from the leaf's last value (again if the MMU set A or D
	 * meanwhile): never none in between, since lockless PMD peeks take
	 * none for an empty block (see change_huge_pmd in mm/mprotect.c).
	 * Not present from then on, so no MMU sets D on it; after the flush
	 * no CPU writes through the old translation, and the copy may start.
	 */
	for (;;) {
		found = pmdp_cmpxchg(pvmw->pmd, old, make_migration_entry_from(pmd_pte(old),
									      folio_pfn(folio),
									      anon_exclusive));
		if (found == old)
			break;
		old = found;
	}
	flush_tlb_mm_range(mm, pvmw->address, pvmw->address + PMD_SIZE);
	if (anon_exclusive && folio_try_share_anon_rmap_pmd(folio, page)) {
		set_pmd(pvmw->pmd, old);	/* maybe pinned: the leaf comes back as it was */
		return false;
	}
	folio_remove_rmap_pmd(folio, page, vma);
	folio_put(folio);		/* the mapping's reference (the caller holds one) */
	return true;
}

void remove_migration_pmd(struct page_vma_mapped_walk *pvmw, struct folio *dst)
{
	struct vm_area_struct *vma = pvmw->vma;
	pte_t entry = pmdp_get(pvmw->pmd), new;
	swp_entry_t e = pmd_to_swp_entry(entry);
	bool write = is_writable_migration_entry(e) && (vma->vm_flags & VM_WRITE);
	bool none = !(vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC));

	lockdep_assert_held(pmd_lockptr(vma->vm_mm, pvmw->pmd));
	VM_BUG_ON_FOLIO(folio_order(dst) != HPAGE_PMD_ORDER || !folio_test_anon(dst), dst);
	/* (pfn_pmd makes it dirty when writable: Quire's rule for a writable entry) */
	new = restore_migration_entry_bits(pfn_pmd(folio_pfn(dst), write, vma->vm_flags & VM_EXEC),
					   entry);
	folio_get(dst);
	folio_add_anon_rmap_pmd(dst, folio_page(dst, 0), vma, pvmw->address,
				is_writable_migration_entry(e) ||
				is_readable_exclusive_migration_entry(e) ? RMAP_EXCLUSIVE : RMAP_NONE);
	/* Release (the copied bytes first), straight from the entry to the leaf: never none. */
	set_pmd_release(pvmw->pmd, none ? pte_mkprotnone(new) : new);
}

void pmd_migration_entry_wait(struct mm_struct *mm, pte_t *pmd)
{
	spinlock_t *ptl = pmd_lock(mm, pmd);
	pte_t entry = pmdp_get(pmd);

	spin_unlock(ptl);
	if (is_pmd_migration_entry(entry))
		migration_entry_wait_on_locked(pmd_to_swp_entry(entry));
}

/* ---- the deferred split queue ---- */

static LIST_HEAD(deferred_list);
static DEFINE_SPINLOCK(deferred_lock);
static unsigned long deferred_len;

void deferred_split_folio(struct folio *folio)
{
	unsigned int order = folio_order(folio);

	if (order < THP_ORDER_MIN || test_page_flag((struct page *)folio, PG_partially_mapped))
		return;
	spin_lock(&deferred_lock);
	/* An isolated folio's lru is on a migration list: putback queues it. */
	if (!test_page_flag((struct page *)folio, PG_partially_mapped) &&
	    !test_page_flag((struct page *)folio, PG_isolated)) {
		set_page_flag((struct page *)folio, PG_partially_mapped);
		list_add_tail(&folio->lru, &deferred_list);
		deferred_len++;
		count_mthp_stat(order, MTHP_STAT_SPLIT_DEFERRED);
		mod_mthp_stat(order, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED, 1);
		if (order == HPAGE_PMD_ORDER)
			count_thp_event(THP_DEFERRED_SPLIT_PAGE);
	}
	spin_unlock(&deferred_lock);
}

/* deferred_lock held. */
static void __deferred_split_dequeue(struct folio *folio)
{
	/* The flag last: once it is clear, a splitter or the free path may rewrite the folio. */
	mod_mthp_stat(folio_order(folio), MTHP_STAT_NR_ANON_PARTIALLY_MAPPED, -1);
	list_del_init(&folio->lru);
	deferred_len--;
	clear_page_flag((struct page *)folio, PG_partially_mapped);
}

void deferred_split_dequeue(struct folio *folio)
{
	if (!test_page_flag((struct page *)folio, PG_partially_mapped))
		return;
	spin_lock(&deferred_lock);
	if (test_page_flag((struct page *)folio, PG_partially_mapped))
		__deferred_split_dequeue(folio);
	spin_unlock(&deferred_lock);
}

bool folio_isolate_deferred(struct folio *folio)
{
	bool isolated;

	spin_lock(&deferred_lock);
	isolated = !test_page_flag((struct page *)folio, PG_isolated);
	if (isolated) {
		set_page_flag((struct page *)folio, PG_isolated);
		if (test_page_flag((struct page *)folio, PG_partially_mapped))
			__deferred_split_dequeue(folio);
	}
	spin_unlock(&deferred_lock);
	return isolated;
}

void folio_putback_deferred(struct folio *folio)
{
	spin_lock(&deferred_lock);
	VM_BUG_ON_FOLIO(!test_page_flag((struct page *)folio, PG_isolated), folio);
	clear_page_flag((struct page *)folio, PG_isolated);
	INIT_LIST_HEAD(&folio->lru);
	spin_unlock(&deferred_lock);
	deferred_split_if_partial(folio);
}

void deferred_split_if_partial(struct folio *folio)
{
	if (folio_test_large(folio) && folio_test_anon(folio) && folio_mapped(folio) &&
	    !folio_entire_mapcount(folio) &&
	    (unsigned long)folio_nr_pages_mapped(folio) < folio_nr_pages(folio))
		deferred_split_folio(folio);
}

unsigned long deferred_split_queue_len(void)
{
	return READ_ONCE(deferred_len);
}

unsigned long deferred_split_scan(unsigned long nr_to_scan)
{
	unsigned long split = 0, budget = min(nr_to_scan, deferred_split_queue_len());

	/*
	 * One folio at a time from the head, moved to the tail while it is
	 * tried: one the split refuses (pinned, referenced, a lock busy) stays
	 * queued for a later scan, and the budget (the queue's length at entry)
	 * ends the pass even if every folio is refused.
	 */
	while (budget--) {
		struct folio *folio;

		spin_lock(&deferred_lock);
		if (list_empty(&deferred_list)) {
			spin_unlock(&deferred_lock);
			break;
		}
		folio = list_first_entry(&deferred_list, struct folio, lru);
		if (!folio_try_get(folio)) {
			__deferred_split_dequeue(folio);	/* being freed */
			spin_unlock(&deferred_lock);
			continue;
		}
		list_move_tail(&folio->lru, &deferred_list);
		spin_unlock(&deferred_lock);
		/* A folio someone has locked is busy: it stays queued for the next scan. */
		if (folio_trylock(folio)) {
			if (split_folio(folio) == 0)
				split++;	/* (a split takes it off the queue) */
			folio_unlock(folio);	/* the first folio of the split, or the same */
		}
		folio_put(folio);
	}
	return split;
}

/* ---- splitting a folio ---- */

/* rmap_walk callback: turn every PMD mapping of the folio in vma into PTEs. */
static bool split_pmd_one(struct folio *folio, struct vm_area_struct *vma,
			  unsigned long address, void *arg)
{
	struct page_vma_mapped_walk pvmw = { .folio = folio, .vma = vma, .address = address };
	unsigned long haddr = ALIGN_DOWN(address, PMD_SIZE);
	struct mmu_notifier_range range;
	bool split = false;

	mmu_notifier_start(&range, MMU_NOTIFY_CLEAR, vma->vm_mm, haddr, haddr + PMD_SIZE);
	while (page_vma_mapped_walk(&pvmw)) {
		if (pvmw.pmd) {
			__split_huge_pmd_locked(vma, pvmw.pmd, pvmw.address);
			split = true;
		}
	}
	if (split)
		flush_tlb_mm_range(vma->vm_mm, haddr, haddr + PMD_SIZE);
	mmu_notifier_invalidate_range_end(&range);
	return true;
}

/*
 * The locks of every PTE table that may map the folio (anon_vma root lock
 * held for writing, so no mapping VMA goes away, no table is freed and
 * mremap moves nothing).
 */
struct mm_lock_set {
	spinlock_t **locks;
	int nr;
};

/*
 * The lock of the PTE table mapping the folio in vma at address, or NULL
 * when nothing there can map it; ERR: a PMD maps it (split meanwhile? retry).
 */
static spinlock_t *mapper_lock(struct folio *folio, struct vm_area_struct *vma,
			       unsigned long address, bool *busy)
{
	pte_t *pmd = pmd_lookup(vma->vm_mm->pgd, address, false);
	pte_t pmdval = pmd ? READ_ONCE(*pmd) : 0;

	if (!pmd_present(pmdval))
		return NULL;
	if (pmd_leaf(pmdval)) {
		*busy = pmd_pfn(pmdval) == folio_pfn(folio);
		return NULL;
	}
	return pte_lockptr(vma->vm_mm, pmd);
}

/*
 * Where the folio lies in vma: [*start, *end), clipped to the VMA. False
 * when vma cannot map it.
 */
static bool folio_range_in_vma(struct folio *folio, struct vm_area_struct *vma,
			       unsigned long *start, unsigned long *end)
{
	unsigned long nr = folio_nr_pages(folio);
	unsigned long address = vma_address(vma, folio->index, nr);
	unsigned long first = max(folio->index, vma->vm_pgoff);

	if (address == (unsigned long)-EFAULT)
		return false;
	*start = address;
	*end = min(address + ((folio->index + nr - first) << PAGE_SHIFT), vma->vm_end);
	return true;
}

/* Add the lock of the table mapping the folio in vma at address (trylock). */
static int lock_mapper(struct folio *folio, struct vm_area_struct *vma, unsigned long address,
		       struct mm_lock_set *set)
{
	bool seen = false, busy = false;
	spinlock_t *ptl = mapper_lock(folio, vma, address, &busy);

	if (busy)
		return -EAGAIN;
	if (!ptl)
		return 0;
	for (int i = 0; i < set->nr; i++)
		seen |= set->locks[i] == ptl;
	if (seen)
		return 0;
	/* Never wait for a second lock while holding one: back off instead. */
	if (!spin_trylock(ptl))
		return -EAGAIN;
	count_mm_cost(MM_COST_PTL_ACQUIRE);
	set->locks[set->nr++] = ptl;
	return 0;
}

static int lock_mappers(struct folio *folio, struct mm_lock_set *set)
{
	struct anon_vma_chain *avc;
	struct anon_vma *av = folio_anon_vma(folio);
	int cap = 0;

	rwsem_assert_held_write(&av->root->rwsem);

	list_for_each_entry(avc, &av->chains, same_anon_vma)
		cap++;
	/*
	 * A folio of at most 2 MiB spans at most two tables per VMA: one when
	 * it was faulted in (aligned), two after an unaligned mremap moved it.
	 */
	set->locks = kmalloc(sizeof(*set->locks) * 2 * (cap ? cap : 1), GFP_KERNEL);
	set->nr = 0;
	if (!set->locks)
		return -ENOMEM;
	list_for_each_entry(avc, &av->chains, same_anon_vma) {
		unsigned long start, end;

		if (!folio_range_in_vma(folio, avc->vma, &start, &end))
			continue;
		for (unsigned long a = start; a < end; a = ALIGN_DOWN(a, PMD_SIZE) + PMD_SIZE) {
			int err = lock_mapper(folio, avc->vma, a, set);

			if (err)
				return err;
		}
	}
	return 0;
}

static void unlock_mappers(struct mm_lock_set *set)
{
	for (int i = set->nr - 1; i >= 0; i--)
		spin_unlock(set->locks[i]);
	kfree(set->locks);
}

/*
 * Rewrite the folio's metadata as folios of new_order (the lock of every
 * PTE table that maps it held, refcount frozen at 0). PTEs stay as they are; each
 * new folio's mapcounts are those of its pages, its references those of
 * its mappings (plus the caller's, for the first). New folios nothing maps
 * are returned in to_free with one reference.
 */
static int split_folio_metadata(struct folio *folio, unsigned int new_order,
				struct folio **to_free)
{
	const unsigned long keep = (1UL << PG_anon) | (1UL << PG_swapbacked) | (1UL << PG_uptodate) |
				   (1UL << PG_dirty) | (1UL << PG_user_alloc) |
				   (1UL << PG_large_rmappable);
	const unsigned long per_page = (~0UL << NODES_PGSHIFT) | (1UL << PG_anon_exclusive) |
				       (1UL << PG_hwpoison) | (1UL << PG_isolated);
	struct page *head = folio_page(folio, 0);
	unsigned int order = folio_order(folio);
	unsigned long nr = 1UL << order, step = 1UL << new_order;
	unsigned long flags = head->flags & keep, index = folio->index, owner = folio->_mm_owner;
	struct anon_vma *av = folio->mapping;
	int nr_free = 0;

	/* Page 1's folio fields overlay words page 1 needs for itself now. */
	memset(&folio->_large_mapcount, 0,
	       offsetof(struct folio, _mapcount_1) - offsetof(struct folio, _large_mapcount));
	for (unsigned long off = 0; off < nr; off += step) {
		struct page *h = head + off;
		struct folio *f = (struct folio *)h;
		int maps = 0, mapped_pages = 0, refs;

		for (unsigned long k = 0; k < step; k++) {
			int m = atomic_read(&h[k]._mapcount) + 1;

			maps += m;
			mapped_pages += m > 0;
		}
		/* The first new folio keeps the caller's folio lock; the others start unlocked. */
		h->flags = (h->flags & per_page) | flags | (off ? 0 : head->flags & (1UL << PG_locked));
		h->compound_head = 0;
		h->lru.prev = NULL;
		h->mapping = av;
		h->index = index + off;
		h->private = 0;
		if (off)
			anon_vma_get(av);	/* each folio holds its own reference */
		if (new_order) {
			SetPageHead(h);
			f->_folio_order = new_order;
			atomic_set(&f->_large_mapcount, maps - 1);
			atomic_set(&f->_entire_mapcount, -1);
			atomic_set(&f->_nr_pages_mapped, mapped_pages);
			atomic_set(&f->_pincount, 0);
			f->_mm_owner = owner;
			INIT_LIST_HEAD(&f->lru);
			for (unsigned long k = 1; k < step; k++)
				h[k].compound_head = (unsigned long)h | 1;
			mod_mthp_stat(new_order, MTHP_STAT_NR_ANON, 1);
		}
		refs = maps + (off == 0);
		if (!refs) {
			refs = 1;
			to_free[nr_free++] = f;
		}
		atomic_set(&h->_refcount, refs);
		if (new_order && mapped_pages && (unsigned long)mapped_pages < step)
			deferred_split_folio(f);
	}
	mod_mthp_stat(order, MTHP_STAT_NR_ANON, -1);
	return nr_free;
}

static void count_split(unsigned int order, bool ok)
{
	count_mthp_stat(order, ok ? MTHP_STAT_SPLIT : MTHP_STAT_SPLIT_FAILED);
	if (order == HPAGE_PMD_ORDER)
		count_thp_event(ok ? THP_SPLIT_PAGE : THP_SPLIT_PAGE_FAILED);
}

int split_folio_to_order(struct folio *folio, unsigned int new_order)
{
	unsigned int order = folio_order(folio);
	struct rmap_walk_control rwc = { .rmap_one = split_pmd_one, .locked = true };
	struct mm_lock_set set = { 0 };
	struct folio **to_free;
	struct anon_vma *av;
	int ret, nr_free = 0;

	if (!folio_test_large(folio) || !folio_test_anon(folio) || new_order >= order ||
	    new_order == 1)
		return -EINVAL;
	VM_BUG_ON_FOLIO(!folio_test_locked(folio), folio);	/* the caller's, as Linux */
	to_free = kmalloc(sizeof(*to_free) << (order - new_order), GFP_KERNEL);
	if (!to_free)
		return -ENOMEM;
	av = folio_anon_vma(folio);
	down_write(&av->root->rwsem);
	ret = -EAGAIN;
	if (folio_maybe_dma_pinned(folio))
		goto out;
	if (folio_entire_mapcount(folio))
		rmap_walk(folio, &rwc);
	ret = lock_mappers(folio, &set);
	if (!ret) {
		int expected = folio_mapcount(folio) + 1;

		ret = -EAGAIN;
		/* Freeze: nobody may take a reference while the metadata changes. */
		if (!folio_entire_mapcount(folio) &&
		    __atomic_compare_exchange_n(&folio->_refcount.counter, &expected, 0, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			deferred_split_dequeue(folio);
			nr_free = split_folio_metadata(folio, new_order, to_free);
			ret = 0;
		}
	}
	unlock_mappers(&set);
out:
	up_write(&av->root->rwsem);
	count_split(order, ret == 0);
	for (int i = 0; i < nr_free; i++)
		folio_put(to_free[i]);
	kfree(to_free);
	return ret;
}

/* ---- debugfs's split_huge_pages ---- */

/*
 * The large folio mapped at addr (by a PTE or by a PMD), locked and with a
 * reference, when it is larger than new_order; else NULL. *large: there was
 * one larger than new_order (it may have been busy). *pfn: the frame
 * mapped at addr. mmap_lock held.
 */
static struct folio *large_folio_at(struct mm_struct *mm, pte_t *pmd, unsigned long addr,
				    unsigned int new_order, bool *large, unsigned long *pfnp)
{
	struct folio *folio = NULL;
	unsigned long pfn;
	spinlock_t *ptl;
	pte_t *pte;

	*large = false;
	if (pmd_leaf(READ_ONCE(*pmd))) {
		ptl = pmd_lock(mm, pmd);
		if (!pmd_leaf(*pmd)) {		/* split meanwhile: look by PTE */
			spin_unlock(ptl);
			return large_folio_at(mm, pmd, addr, new_order, large, pfnp);
		}
		pfn = pmd_pfn(*pmd) + ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT);
	} else {
		pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
		if (!pte)
			return NULL;
		if (!pte_has_page(*pte)) {
			pte_unmap_unlock(pte, ptl);
			return NULL;
		}
		pfn = pte_pfn(*pte);
	}
	*pfnp = pfn;
	if (!is_zero_pfn(pfn) && !is_huge_zero_pfn(pfn)) {
		folio = page_folio(pfn_to_page(pfn));
		*large = folio_test_large(folio) && new_order < folio_order(folio);
		/* Under the page-table lock only a trylock (docs/locking.md), as Linux's. */
		if (*large && folio_trylock(folio))
			folio_get(folio);	/* the mapping keeps it alive until here */
		else
			folio = NULL;
	}
	spin_unlock(ptl);
	return folio;
}

static bool page_is_zero(struct page *page)
{
	const unsigned long *w = page_address(page);	/* the page's bytes, not entries */

	for (unsigned long i = 0; i < PAGE_SIZE / sizeof(*w); i++)
		if (w[i])
			return false;
	return true;
}

/*
 * The PTE mapping frame pfn at addr in vma, its table locked, or NULL
 * (mapped by nothing, by something else, or by a PMD).
 */
static pte_t *pte_of_pfn(struct vm_area_struct *vma, unsigned long addr, unsigned long pfn,
			 spinlock_t **ptl)
{
	pte_t *pmd = pmd_lookup(vma->vm_mm->pgd, addr, false), *pte;

	if (!pmd || !pmd_present(READ_ONCE(*pmd)) || pmd_leaf(READ_ONCE(*pmd)))
		return NULL;
	pte = pte_offset_map_lock(vma->vm_mm, pmd, addr, ptl);
	if (pte && (!pte_has_page(*pte) || pte_pfn(*pte) != pfn)) {
		pte_unmap_unlock(pte, *ptl);
		return NULL;
	}
	return pte;
}

/*
 * After a split to order 0, as Linux 6.12's split does (its remap of the
 * pages with the shared zero page, RMP_USE_SHARED_ZEROPAGE): each page of
 * the old folio, mapped at start + i pages of vma by this mm alone, that
 * holds only zeroes is replaced by the zero page and freed, so RssAnon
 * goes down. Linux's split has the pages unmapped (migration entries)
 * while it looks at them; here they stay mapped, so no write may land
 * between the look and the swap: each candidate is write-protected and the
 * TLBs flushed first, and the swap happens only if the entry is still that
 * read-only one (a write meanwhile would have faulted and changed it).
 * Pages a pin, another mapping or a memory error holds are left alone.
 * mmap_lock held for reading.
 */
static void remap_zero_pages(struct vm_area_struct *vma, unsigned long start,
			     unsigned long pfn, unsigned long nr)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long first = max(start, vma->vm_start);
	unsigned long last = min(start + (nr << PAGE_SHIFT), vma->vm_end);
	struct mmu_notifier_range range;
	struct folio **freed;
	unsigned long nr_freed = 0;
	spinlock_t *ptl;
	pte_t *pte;

	if (first >= last || !(vma->vm_flags & VM_READ) ||
	    !(freed = kmalloc(sizeof(*freed) * nr, GFP_KERNEL)))
		return;
	mmu_notifier_start(&range, MMU_NOTIFY_CLEAR, mm, first, last);
	/* 1: every mapping that looks all zero becomes read-only. */
	for (unsigned long a = first; a < last; a += PAGE_SIZE) {
		unsigned long p = pfn + ((a - start) >> PAGE_SHIFT);

		if (!(pte = pte_of_pfn(vma, a, p, &ptl)))
			continue;
		if (pte_write(*pte) && page_mapcount(pfn_to_page(p)) == 1 &&
		    page_is_zero(pfn_to_page(p)))
			ptep_set_wrprotect(mm, a, pte);
		pte_unmap_unlock(pte, ptl);
	}
	flush_tlb_mm_range(mm, first, last);
	/* 2: no write can reach them now without a fault: swap the still-zero ones. */
	for (unsigned long a = first; a < last; a += PAGE_SIZE) {
		unsigned long p = pfn + ((a - start) >> PAGE_SHIFT);
		struct page *page = pfn_to_page(p);
		struct folio *folio = page_folio(page);

		if (!(pte = pte_of_pfn(vma, a, p, &ptl)))
			continue;
		if (!pte_write(*pte) && !folio_test_large(folio) && folio_test_anon(folio) &&
		    !PageHWPoison(page) && !folio_maybe_dma_pinned(folio) &&
		    page_mapcount(page) == 1 && page_is_zero(page)) {
			ptep_get_and_clear(mm, a, pte);
			set_pte(pte, zero_page_pte(vma));
			folio_remove_rmap_pte(folio, page, vma);
			atomic_long_dec(&mm->rss);
			freed[nr_freed++] = folio;	/* the PTE's reference, dropped after the flush */
		}
		pte_unmap_unlock(pte, ptl);
	}
	if (nr_freed)
		flush_tlb_mm_range(mm, first, last);
	mmu_notifier_invalidate_range_end(&range);
	for (unsigned long i = 0; i < nr_freed; i++)
		folio_put(freed[i]);
	kfree(freed);
}

/* [start, end) of one VMA, mmap_lock held: every large folio mapped there. */
static void split_range(struct vm_area_struct *vma, unsigned long start, unsigned long end,
			unsigned int new_order, unsigned long *split, unsigned long *total)
{
	struct mm_struct *mm = vma->vm_mm;

	for (unsigned long addr = start; addr < end; ) {
		pte_t *pmd = pmd_lookup(mm->pgd, addr, false);
		unsigned long pfn;
		struct folio *folio;
		bool large;

		if (!pmd || !pmd_present(READ_ONCE(*pmd))) {
			addr = ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE;	/* nothing mapped here */
			continue;
		}
		folio = large_folio_at(mm, pmd, addr, new_order, &large, &pfn);
		*total += large;
		if (folio) {
			unsigned long head = folio_pfn(folio), nr = folio_nr_pages(folio);
			bool done = split_folio_to_order(folio, new_order) == 0;

			folio_unlock(folio);	/* the first new folio kept the lock */
			folio_put(folio);
			if (done) {
				(*split)++;
				if (!new_order)
					remap_zero_pages(vma, addr - ((pfn - head) << PAGE_SHIFT),
							 head, nr);
			}
		}
		/* Page by page, as Linux: a PTE table may hold many distinct large folios. */
		addr += PAGE_SIZE;
	}
}

void split_huge_pages_in_mm(struct mm_struct *mm, unsigned long start, unsigned long end,
			    unsigned int new_order, unsigned long *split, unsigned long *total)
{
	start &= PAGE_MASK;
	end &= PAGE_MASK;
	down_read(&mm->mmap_lock);
	while (start < end) {
		struct vm_area_struct *vma = find_vma(mm, start);

		if (!vma || vma->vm_start > start)
			break;			/* a hole ends it, as on Linux */
		split_range(vma, start, min(end, vma->vm_end), new_order, split, total);
		start = vma->vm_end;
	}
	up_read(&mm->mmap_lock);
}

/*
 * Every mm on mm_list: an mm there is alive while mm_list_lock is held
 * (mmput takes it to leave, after its teardown under mmap_lock). One
 * mmap_lock at a time, as mm_verify_system's order allows.
 */
void split_huge_pages_all(unsigned long *split, unsigned long *total)
{
	struct mm_struct *mm;

	mutex_lock(&mm_list_lock);
	list_for_each_entry(mm, &mm_list, mm_list) {
		struct vm_area_struct *vma;

		down_read(&mm->mmap_lock);
		list_for_each_entry(vma, &mm->vmas, vm_list)
			split_range(vma, vma->vm_start, vma->vm_end, 0, split, total);
		up_read(&mm->mmap_lock);
	}
	mutex_unlock(&mm_list_lock);
}

void split_huge_pages_in_mapping(struct address_space *mapping, unsigned long start,
				 unsigned long end, unsigned int new_order,
				 unsigned long *split, unsigned long *total)
{
	unsigned long size = (unsigned long)i_size_read(mapping->host);

	end = min(end, (size >> PAGE_SHIFT) + !!(size & ~PAGE_MASK));	/* none past the end */
	for (unsigned long index = start; index < end; index++) {
		struct folio *folio = filemap_get_folio(mapping, index);

		if (!folio)
			continue;
		/*
		 * The page cache holds order-0 folios only (docs/vfs.md), and
		 * split_folio_to_order splits anonymous folios only: a large
		 * one here would be new, and is counted, not split.
		 */
		if (folio_test_large(folio) && new_order < folio_order(folio)) {
			(*total)++;
			pr_warn("split_huge_pages: a large page-cache folio at index %lu is not split "
				"(file folios cannot be split yet)\n", index);
		}
		folio_put(folio);
	}
}
