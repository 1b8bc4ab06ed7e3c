/*
 * The page-table entry format and the generic walker's interface
 * (mm/pgtable.c): the x86-64 4-level format, which the host build also
 * keeps (in simulated memory) so mm/ runs unchanged there. The
 * architecture adds its hooks in asm/pgtable.h.
 */
#ifndef QUIRE_PTE_H
#define QUIRE_PTE_H

#include <quire/types.h>
#include <asm/page.h>

typedef u64 pte_t;

#define _PAGE_PRESENT	(1UL << 0)
#define _PAGE_RW	(1UL << 1)
#define _PAGE_USER	(1UL << 2)
#define _PAGE_ACCESSED	(1UL << 5)
#define _PAGE_DIRTY	(1UL << 6)
#define _PAGE_PSE	(1UL << 7)
/* Software bit (the global bit, unused in user PTEs): a page kept under PROT_NONE, not present. */
#define _PAGE_PROTNONE	(1UL << 8)
#define _PAGE_NX	(1UL << 63)
#define PTE_PFN_MASK	0x000ffffffffff000UL

#define USER_TOP	0x00007ffffffff000UL	/* highest user address + 1, page aligned */
#define KERNEL_PGD_FIRST 256			/* PML4 entries 256-511 map the kernel */

static inline bool pte_present(pte_t pte)
{
	return pte & _PAGE_PRESENT;
}

static inline bool pte_write(pte_t pte)
{
	return pte & _PAGE_RW;
}

/* The PTE holds a page: present, or kept under PROT_NONE. */
static inline bool pte_has_page(pte_t pte)
{
	return pte & (_PAGE_PRESENT | _PAGE_PROTNONE);
}

static inline unsigned long pte_pfn(pte_t pte)
{
	return (pte & PTE_PFN_MASK) >> PAGE_SHIFT;
}

static inline pte_t pfn_pte(unsigned long pfn, bool write, bool exec)
{
	return (pfn << PAGE_SHIFT) | _PAGE_PRESENT | _PAGE_USER | _PAGE_ACCESSED |
	       (write ? _PAGE_RW | _PAGE_DIRTY : 0) | (exec ? 0 : _PAGE_NX);
}

/*
 * A PMD entry (level 2) either points to a page table or, with _PAGE_PSE,
 * maps a 2 MiB folio itself (a "leaf", present or kept under PROT_NONE).
 */
static inline bool pmd_leaf(pte_t pmd)
{
	return (pmd & _PAGE_PSE) && (pmd & (_PAGE_PRESENT | _PAGE_PROTNONE));
}

static inline unsigned long pmd_pfn(pte_t pmd)
{
	return (pmd & PTE_PFN_MASK & ~(PMD_SIZE - 1)) >> PAGE_SHIFT;
}

static inline pte_t pfn_pmd(unsigned long pfn, bool write, bool exec)
{
	return pfn_pte(pfn, write, exec) | _PAGE_PSE;
}

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
