/*
 * User page tables (asm/pgtable.h): allocation of the top level (the
 * architecture fills in its kernel half), the walkers, and freeing of the
 * user half. Intermediate entries are user-accessible and writable; the
 * leaf PTE decides. Generic code: the host build walks the same 4-level
 * format in its simulated memory.
 *
 * Every user page-table page below the PGD carries a spinlock of its own
 * (page->ptl, allocated with the page): a PTE table's lock guards its
 * PTEs, a PMD table's lock its PMD entries (docs/locking.md):
 *   - PGD, P4D and PUD entries are filled in under mm->page_table_lock;
 *   - a PMD entry changes only under the lock of the PMD table holding it
 *     (pmd_lock): a PTE table or a 2 MiB leaf is installed there, a leaf
 *     is split there;
 *   - a PTE changes only under its PTE table's lock (pte_offset_map_lock).
 * A table is allocated before the lock is taken and installed only if the
 * entry is still empty; the spare is freed otherwise. Tables go away only
 * with mmap_lock held for writing (munmap, exit), so a table seen under
 * mmap_lock for reading stays; a PMD entry may still change from none to
 * a table or a leaf, or from a leaf to a table, until its lock is held.
 */
#include <asm/pgtable.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>

/* ---- page-table pages and their locks ---- */

struct page *pagetable_alloc(void)
{
	struct page *p = alloc_pages(__GFP_ZERO | __GFP_NOWARN, 0);
	spinlock_t *ptl;

	if (!p)
		return NULL;
	ptl = kmalloc(sizeof(*ptl), GFP_KERNEL);
	if (!ptl) {
		__free_pages(p, 0);
		return NULL;
	}
	spin_lock_init(ptl);
	p->ptl = ptl;
	INIT_LIST_HEAD(&p->lru);	/* a PMD table: its deposited page tables */
	return p;
}

void pagetable_free(struct page *table)
{
	kfree(table->ptl);
	table->ptl = NULL;
	__free_pages(table, 0);
}

spinlock_t *pte_lockptr(struct mm_struct *mm, pte_t *pmd)
{
	(void)mm;
	return pfn_to_page(PHYS_PFN(pgtable_phys(READ_ONCE(*pmd))))->ptl;
}

spinlock_t *pmd_lockptr(struct mm_struct *mm, pte_t *pmd)
{
	(void)mm;
	return virt_to_page(pmd)->ptl;
}

spinlock_t *pmd_lock(struct mm_struct *mm, pte_t *pmd)
{
	spinlock_t *ptl = pmd_lockptr(mm, pmd);

	spin_lock(ptl);
	count_mm_cost(MM_COST_PTL_ACQUIRE);
	return ptl;
}

pte_t *pte_offset_map_lock(struct mm_struct *mm, pte_t *pmd, unsigned long addr,
			   spinlock_t **ptlp)
{
	for (;;) {
		pte_t pmdval = READ_ONCE(*pmd);
		spinlock_t *ptl;

		if (!pmd_is_table(pmdval))
			return NULL;
		ptl = pfn_to_page(PHYS_PFN(pgtable_phys(pmdval)))->ptl;
		spin_lock(ptl);
		count_mm_cost(MM_COST_PTL_ACQUIRE);
		if (READ_ONCE(*pmd) == pmdval) {	/* pmd_same: still this table */
			*ptlp = ptl;
			return (pte_t *)__va(pgtable_phys(pmdval)) + ((addr >> PAGE_SHIFT) & 511);
		}
		spin_unlock(ptl);
	}
}

/* ---- allocation and freeing ---- */

phys_addr_t pgd_alloc(void)
{
	struct page *p = alloc_pages(__GFP_ZERO, 0);

	if (!p)
		return 0;
	arch_pgd_init(page_address(p));
	return page_to_phys(p);
}

static void free_table(phys_addr_t table, int level)
{
	pte_t *t = __va(table);

	if (level > 1)
		for (int i = 0; i < 512; i++)
			if (pmd_present(t[i]) && !(level == 2 && pmd_leaf(t[i])))
				free_table(pgtable_phys(t[i]), level - 1);
	pagetable_free(pfn_to_page(PHYS_PFN(table)));
}

void pgd_free(phys_addr_t pgd)
{
	pte_t *t = __va(pgd);

	for (int i = 0; i < KERNEL_PGD_FIRST; i++)
		if (pte_present(t[i]))
			free_table(pgtable_phys(t[i]), 3);
	__free_pages(pfn_to_page(PHYS_PFN(pgd)), 0);
}

/*
 * Point *e at a new zeroed table unless another CPU filled it first (then
 * the spare goes back). Without an mm's locks: for tables only this thread
 * fills (tests); the fault paths use pmd_alloc and pte_alloc.
 */
static bool install_table(pte_t *e)
{
	struct page *p = pagetable_alloc();

	if (!p)
		return false;
	if (!pmd_populate_none(e, page_to_phys(p)))
		pagetable_free(p);
	return true;
}

pte_t *pmd_lookup(phys_addr_t pgd, unsigned long addr, bool alloc)
{
	pte_t *t = __va(pgd);

	if (addr >= USER_TOP)
		return NULL;
	for (int shift = 39; shift > PMD_SHIFT; shift -= 9) {
		pte_t *e = &t[(addr >> shift) & 511];

		if (!pmd_present(READ_ONCE(*e)) && (!alloc || !install_table(e)))
			return NULL;
		t = __va(pgtable_phys(READ_ONCE(*e)));
	}
	return &t[(addr >> PMD_SHIFT) & 511];
}

pte_t *pte_offset(pte_t *pmd, unsigned long addr)
{
	return &((pte_t *)__va(pgtable_phys(READ_ONCE(*pmd))))[(addr >> PAGE_SHIFT) & 511];
}

pte_t *pte_lookup(phys_addr_t pgd, unsigned long addr, bool alloc)
{
	pte_t *pmd = pmd_lookup(pgd, addr, alloc);

	if (!pmd || pmd_leaf(READ_ONCE(*pmd)))
		return NULL;
	if (!pmd_present(READ_ONCE(*pmd)) && (!alloc || READ_ONCE(*pmd) || !install_table(pmd)))
		return NULL;
	return pmd_is_table(READ_ONCE(*pmd)) ? pte_offset(pmd, addr) : NULL;
}

pte_t *pmd_alloc(struct mm_struct *mm, unsigned long addr)
{
	pte_t *t = __va(mm->pgd);

	if (addr >= USER_TOP)
		return NULL;
	for (int shift = 39; shift > PMD_SHIFT; shift -= 9) {
		pte_t *e = &t[(addr >> shift) & 511];

		if (!pmd_present(READ_ONCE(*e))) {
			struct page *p = pagetable_alloc();

			if (!p)
				return NULL;
			spin_lock(&mm->page_table_lock);
			if (!pmd_present(*e)) {
				/* Release: its zeroes and its lock before it can be found. */
				pmd_populate(e, page_to_phys(p));
				p = NULL;
			}
			spin_unlock(&mm->page_table_lock);
			if (p)
				pagetable_free(p);	/* another CPU filled it first */
		}
		t = __va(pgtable_phys(READ_ONCE(*e)));
	}
	return &t[(addr >> PMD_SHIFT) & 511];
}

int pte_alloc(struct mm_struct *mm, pte_t *pmd)
{
	struct page *p;
	spinlock_t *ptl;

	if (READ_ONCE(*pmd))
		return 0;
	p = pagetable_alloc();
	if (!p)
		return -ENOMEM;
	ptl = pmd_lock(mm, pmd);
	if (!*pmd) {
		/* Release: its zeroes and its lock before a lockless walker can find it. */
		pmd_populate(pmd, page_to_phys(p));
		p = NULL;
	}
	spin_unlock(ptl);
	if (p)
		pagetable_free(p);	/* a table or a 2 MiB leaf came first */
	return 0;
}

/*
 * Unhook the page-table page that maps the 2 MiB block around addr (its PMD
 * entry is cleared) and return it, or NULL when there is none. For a block
 * no VMA covers any more (mmap_lock held for writing): no fault, rmap walk
 * or page-table walker can reach the entry, so no PMD lock is needed. The
 * caller flushes the TLB (paging-structure caches too) before freeing it
 * with pagetable_free.
 */
struct page *pte_table_detach(phys_addr_t pgd, unsigned long addr)
{
	pte_t *pmd = pmd_lookup(pgd, addr, false);
	struct page *table;

	if (!pmd || !pmd_is_table(*pmd))
		return NULL;	/* none, or a 2 MiB mapping: the caller unmaps it first */
	table = pfn_to_page(PHYS_PFN(pgtable_phys(*pmd)));
	pmd_clear(pmd);
	return table;
}
