#ifndef ASM_DIRECT_MAP_H
#define ASM_DIRECT_MAP_H

#include <quire/types.h>

enum { DIRECT_MAP_4K, DIRECT_MAP_2M, DIRECT_MAP_1G, DIRECT_MAP_LEVELS };

/* How many mappings of each size the direct map uses (for tests and docs). */
extern unsigned long direct_map_pages[DIRECT_MAP_LEVELS];
/* True once the kernel runs on the direct map (the identity map is gone). */
extern bool direct_map_ready;

/* Physical address of the kernel's top-level page table. */
extern phys_addr_t kernel_pml4_phys;

/*
 * Make the direct map's 4 KiB page at va present or not, on every CPU,
 * splitting the large page that holds it first (direct_map_split.c).
 * 0, -ENOMEM or -EINVAL (va not in the direct map).
 */
int direct_map_set_present(unsigned long va, bool present);

void x86_memblock_init(void);
void init_direct_map(void);

#endif
