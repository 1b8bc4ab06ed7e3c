/*
 * Host build of user page tables: the x86-64 format, kept in simulated
 * physical memory and walked in software by mm/pgtable.c (no MMU uses
 * them: host tests call handle_mm_fault and read the tables directly).
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
#define _PAGE_NX	(1UL << 63)
#define PTE_PFN_MASK	0x000ffffffffff000UL
#define USER_TOP	0x00007ffffffff000UL
#define KERNEL_PGD_FIRST 256

static inline bool pte_present(pte_t pte) { return pte & _PAGE_PRESENT; }
static inline bool pte_write(pte_t pte) { return pte & _PAGE_RW; }
static inline bool pte_has_page(pte_t pte) { return pte & (_PAGE_PRESENT | _PAGE_PROTNONE); }
static inline unsigned long pte_pfn(pte_t pte) { return (pte & PTE_PFN_MASK) >> PAGE_SHIFT; }

static inline pte_t pfn_pte(unsigned long pfn, bool write, bool exec)
{
	return (pfn << PAGE_SHIFT) | _PAGE_PRESENT | _PAGE_USER | _PAGE_ACCESSED |
	       (write ? _PAGE_RW | _PAGE_DIRTY : 0) | (exec ? 0 : _PAGE_NX);
}

static inline void arch_pgd_init(u64 *pgd) { (void)pgd; }	/* no kernel half */
static inline void flush_tlb_one_local(unsigned long addr) { (void)addr; }
static inline void load_pgd(phys_addr_t pgd) { (void)pgd; }

phys_addr_t pgd_alloc(void);
void pgd_free(phys_addr_t pgd);
pte_t *pte_lookup(phys_addr_t pgd, unsigned long addr, bool alloc);
/* Unhook the page table of addr's 2 MiB block (mm/pgtable.c); NULL if none. */
struct page *pte_table_detach(phys_addr_t pgd, unsigned long addr);

#endif
