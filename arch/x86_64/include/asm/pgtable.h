/*
 * x86-64 page tables for user address spaces: 4 levels (pgd = PML4, pud,
 * pmd, pte), 4 KiB leaf pages for now (PMD-mapped THP comes with the folio
 * issue). Each address space has its own PML4 whose kernel half (entries
 * 256-511) is copied from the kernel's, so kernel mappings are shared.
 */
#ifndef ASM_PGTABLE_H
#define ASM_PGTABLE_H

#include <quire/types.h>
#include <asm/page.h>

typedef u64 pte_t;

#define _PAGE_PRESENT	(1UL << 0)
#define _PAGE_RW	(1UL << 1)
#define _PAGE_USER	(1UL << 2)
#define _PAGE_ACCESSED	(1UL << 5)
#define _PAGE_DIRTY	(1UL << 6)
/* Software bit (the global bit, unused in user PTEs): a page kept under PROT_NONE, not present. */
#define _PAGE_PROTNONE	(1UL << 8)
#define _PAGE_PSE	(1UL << 7)
#define _PAGE_NX	(1UL << 63)
#define PTE_PFN_MASK	0x000ffffffffff000UL

#define USER_TOP	0x00007ffffffff000UL	/* highest user address + 1, page aligned */

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

#define KERNEL_PGD_FIRST	256	/* PML4 entries 256-511 map the kernel */

/* Copy the kernel half of the kernel's PML4 into a new top-level table. */
void arch_pgd_init(u64 *pgd);
/* Invalidate one page's translation on this CPU only. */
static inline void flush_tlb_one_local(unsigned long addr)
{
	__asm__ __volatile__("invlpg (%0)" : : "r"(addr) : "memory");
}

/* A new top-level table (physical address) sharing the kernel half. 0 on failure. */
phys_addr_t pgd_alloc(void);
/* Free every user page-table page under pgd (the pages they mapped must be gone). */
void pgd_free(phys_addr_t pgd);
/* The PTE of addr, allocating missing tables when alloc. NULL: none, or out of memory. */
pte_t *pte_lookup(phys_addr_t pgd, unsigned long addr, bool alloc);
/* Unhook the page table of addr's 2 MiB block (mm/pgtable.c); NULL if none. */
struct page *pte_table_detach(phys_addr_t pgd, unsigned long addr);
/* Load an address space on this CPU. */
void load_pgd(phys_addr_t pgd);

#endif
