/*
 * x86-64 user page tables: the entry format and walker are generic
 * (quire/pte.h, mm/pgtable.c); these are the hooks. Each address space has
 * its own PML4 whose kernel half (entries 256-511) is copied from the
 * kernel's, so kernel mappings are shared. User leaves are 4 KiB PTEs and
 * 2 MiB PMDs (PMD-mapped THP, mm/huge_memory.c); there are no 1 GiB user
 * leaves (hugetlb is not implemented yet).
 */
#ifndef ASM_PGTABLE_H
#define ASM_PGTABLE_H

#include <quire/pte.h>

/* Copy the kernel half of the kernel's PML4 into a new top-level table. */
void arch_pgd_init(u64 *pgd);
/* Load an address space on this CPU. */
void load_pgd(phys_addr_t pgd);


#endif
