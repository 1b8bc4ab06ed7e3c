/*
 * User page tables (asm/pgtable.h): allocation of the top level (the
 * architecture fills in its kernel half), a walker that allocates missing
 * levels, and freeing of the user half. Intermediate entries are
 * user-accessible and writable; the leaf PTE decides. Generic code: the
 * host build walks the same 4-level format in its simulated memory.
 */
#include <asm/pgtable.h>
#include <quire/mm.h>
#include <quire/string.h>

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
	u64 *t = __va(table);

	if (level > 1)
		for (int i = 0; i < 512; i++)
			if (t[i] & _PAGE_PRESENT)
				free_table(t[i] & PTE_PFN_MASK, level - 1);
	__free_pages(pfn_to_page(PHYS_PFN(table)), 0);
}

void pgd_free(phys_addr_t pgd)
{
	u64 *t = __va(pgd);

	for (int i = 0; i < KERNEL_PGD_FIRST; i++)
		if (t[i] & _PAGE_PRESENT)
			free_table(t[i] & PTE_PFN_MASK, 3);
	__free_pages(pfn_to_page(PHYS_PFN(pgd)), 0);
}

pte_t *pmd_lookup(phys_addr_t pgd, unsigned long addr, bool alloc)
{
	u64 *t = __va(pgd);

	if (addr >= USER_TOP)
		return NULL;
	for (int shift = 39; shift > PMD_SHIFT; shift -= 9) {
		u64 *e = &t[(addr >> shift) & 511];

		if (!(*e & _PAGE_PRESENT)) {
			struct page *p;

			if (!alloc)
				return NULL;
			p = alloc_pages(__GFP_ZERO, 0);
			if (!p)
				return NULL;
			*e = page_to_phys(p) | _PAGE_PRESENT | _PAGE_RW | _PAGE_USER;
		}
		t = __va(*e & PTE_PFN_MASK);
	}
	return &t[(addr >> PMD_SHIFT) & 511];
}

pte_t *pte_offset(pte_t *pmd, unsigned long addr)
{
	return &((u64 *)__va(*pmd & PTE_PFN_MASK))[(addr >> PAGE_SHIFT) & 511];
}

pte_t *pte_lookup(phys_addr_t pgd, unsigned long addr, bool alloc)
{
	pte_t *pmd = pmd_lookup(pgd, addr, alloc);

	if (!pmd || pmd_leaf(*pmd))
		return NULL;
	if (!(*pmd & _PAGE_PRESENT)) {
		struct page *p;

		if (!alloc || *pmd)
			return NULL;
		p = alloc_pages(__GFP_ZERO, 0);
		if (!p)
			return NULL;
		*pmd = page_to_phys(p) | _PAGE_PRESENT | _PAGE_RW | _PAGE_USER;
	}
	return pte_offset(pmd, addr);
}

/*
 * Unhook the page-table page that maps the 2 MiB block around addr (its PMD
 * entry is cleared) and return it, or NULL when there is none. The caller
 * flushes the TLB (paging-structure caches too) before freeing it.
 */
struct page *pte_table_detach(phys_addr_t pgd, unsigned long addr)
{
	u64 *t = __va(pgd), *e = NULL;
	phys_addr_t table;

	for (int shift = 39; shift >= 21; shift -= 9) {
		e = &t[(addr >> shift) & 511];
		if (!(*e & _PAGE_PRESENT))
			return NULL;
		if (shift > 21)
			t = __va(*e & PTE_PFN_MASK);
	}
	if (pmd_leaf(*e))
		return NULL;	/* a 2 MiB mapping, not a table: the caller unmaps it first */
	table = *e & PTE_PFN_MASK;
	*e = 0;
	return pfn_to_page(PHYS_PFN(table));
}
