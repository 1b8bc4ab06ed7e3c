/*
 * Host hooks for user page tables (quire/pte.h): the tables live in
 * simulated physical memory and no MMU uses them, so there is no kernel
 * half and nothing to load.
 */
#ifndef ASM_PGTABLE_H
#define ASM_PGTABLE_H

#include <quire/pte.h>

static inline void arch_pgd_init(u64 *pgd) { (void)pgd; }
static inline void load_pgd(phys_addr_t pgd) { (void)pgd; }

#endif
