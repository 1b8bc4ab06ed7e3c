/*
 * Page sizes and the direct map for the host build: "physical memory" is an
 * arena the test process maps (arch/host/mm.c), and physical address p lives
 * at host_phys_base + p.
 */
#ifndef ASM_PAGE_H
#define ASM_PAGE_H

#include <quire/types.h>

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PMD_SHIFT	21
#define PMD_SIZE	(1UL << PMD_SHIFT)
#define PUD_SHIFT	30
#define PUD_SIZE	(1UL << PUD_SHIFT)

extern u8 *host_phys_base;

static inline void *__va(phys_addr_t pa)
{
	return host_phys_base + pa;
}

static inline phys_addr_t __pa(const void *va)
{
	return (phys_addr_t)((const u8 *)va - host_phys_base);
}

#endif
