/*
 * Kernel mappings outside the direct map: device registers (ioremap, for the
 * LAPIC and IOAPIC) and test mappings the TLB-shootdown tests change. They
 * live in one area of the kernel half, mapped with 4 KiB pages in the
 * kernel's page tables, which every CPU shares.
 */
#ifndef ASM_IO_MAP_H
#define ASM_IO_MAP_H

#include <quire/types.h>

#define KMAP_AREA_START	0xffffc90000000000UL	/* Linux's vmalloc/ioremap base */
#define KMAP_AREA_SIZE	(1UL << 30)

/* Map size bytes of device memory (uncached). NULL when the area is full. */
void *ioremap(phys_addr_t phys, size_t size);

/* Reserve size bytes of the area (unmapped), page aligned. */
void *kmap_area_alloc(size_t size);
/*
 * Point the 4 KiB page at va (inside the area) to frame phys, or unmap it
 * with phys = 0 and present = false. Only this CPU's TLB is flushed: other
 * CPUs need a shootdown (flush_tlb_kernel_range).
 */
int kmap_set_pte(unsigned long va, phys_addr_t phys, bool present, bool uncached);
/* The PTE's frame at va, or 0 when not mapped. */
phys_addr_t kmap_lookup(unsigned long va);

#endif
