/*
 * Page sizes and the kernel's views of physical memory on x86-64:
 *   - the direct map: all RAM at PAGE_OFFSET + physical address (mm/ uses
 *     __va/__pa, page_address);
 *   - the kernel image at KERNEL_VMA + physical address.
 */
#ifndef ASM_PAGE_H
#define ASM_PAGE_H

#include <quire/types.h>
#include <asm/boot.h>

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#define PAGE_MASK	(~(PAGE_SIZE - 1))
#define PMD_SHIFT	21
#define PMD_SIZE	(1UL << PMD_SHIFT)
#define PUD_SHIFT	30
#define PUD_SIZE	(1UL << PUD_SHIFT)

/* Linux's x86-64 direct-map base (without KASLR). */
#define PAGE_OFFSET	0xffff888000000000UL
/* The direct map covers at most this much physical address space (64 TiB). */
#define DIRECT_MAP_SIZE	(64UL << 40)

static inline void *__va(phys_addr_t pa)
{
	return (void *)(uintptr_t)(pa + PAGE_OFFSET);
}

static inline phys_addr_t __pa(const void *va)
{
	uintptr_t v = (uintptr_t)va;

	if (v >= KERNEL_VMA)
		return v - KERNEL_VMA;
	return v - PAGE_OFFSET;
}

#endif
