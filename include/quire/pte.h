/*
 * The generic page-table walker's interface (mm/pgtable.c). The entry
 * format and its accessors are the architecture's (asm/pte_format.h:
 * x86-64's 4 levels, kept by the host build too); its hooks, and the
 * accessors that load and store an entry (set_pte, ptep_get_and_clear,
 * ...: the only way mm/ stores to one), are in asm/pgtable.h.
 */
#ifndef QUIRE_PTE_H
#define QUIRE_PTE_H

#include <quire/types.h>
#include <asm/page.h>
#include <asm/pgtable.h>	/* the entry format (asm/pte_format.h) and its accessors */

struct page;

/* A new top-level table (physical address) sharing the kernel half. 0 on failure. */
phys_addr_t pgd_alloc(void);
/* Free every user page-table page under pgd (the pages they mapped must be gone). */
void pgd_free(phys_addr_t pgd);
/*
 * The PTE of addr, allocating missing tables when alloc. NULL: none, out of
 * memory, or addr is inside a PMD leaf (look at pmd_lookup first). The
 * entry is not locked: the fault paths use pmd_alloc, pte_alloc and
 * pte_offset_map_lock (quire/mmap.h) instead.
 */
pte_t *pte_lookup(phys_addr_t pgd, unsigned long addr, bool alloc);
/* The PMD entry of addr (allocating the upper levels when alloc), or NULL. */
pte_t *pmd_lookup(phys_addr_t pgd, unsigned long addr, bool alloc);
/* The PTE of addr inside the page table a (non-leaf, present) PMD entry points to. */
pte_t *pte_offset(pte_t *pmd, unsigned long addr);
/* Unhook the page table of addr's 2 MiB block (no VMA there); NULL when there is none. */
struct page *pte_table_detach(phys_addr_t pgd, unsigned long addr);
/* A zeroed user page-table page with its lock (page->ptl), or NULL; and freeing one. */
struct page *pagetable_alloc(void);
void pagetable_free(struct page *table);

#endif
