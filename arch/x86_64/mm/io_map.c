/*
 * The kernel mapping area (asm/io_map.h): a bump allocator of virtual
 * addresses and a small page-table walker that allocates intermediate
 * tables from the page allocator. Tables are shared by every CPU because all
 * load the same kernel PML4 (the area's PML4 entry is made once, at boot,
 * before the other CPUs start).
 */
#define pr_fmt(fmt) "x86/mm: " fmt
#include <asm/io_map.h>
#include <asm/direct_map.h>
#include <asm/page.h>
#include <asm/pgtable.h>
#include <quire/mm.h>
#include <quire/printk.h>
#include <quire/spinlock.h>
#include <quire/errno.h>

#define PTE_PRESENT	(1UL << 0)
#define PTE_WRITE	(1UL << 1)
#define PTE_PWT		(1UL << 3)
#define PTE_PCD		(1UL << 4)
#define PTE_NX		(1UL << 63)
#define PTE_ADDR_MASK	0x000ffffffffff000UL

static DEFINE_SPINLOCK(kmap_lock);
static unsigned long kmap_next = KMAP_AREA_START;

static u64 *table_of(u64 entry)
{
	return __va(entry & PTE_ADDR_MASK);
}

/* The PTE for va, allocating missing tables. NULL when out of memory. */
static u64 *walk(unsigned long va)
{
	u64 *t = __va(kernel_pml4_phys);

	for (int shift = 39; shift > 12; shift -= 9) {
		u64 *e = &t[(va >> shift) & 511];

		if (!(*e & PTE_PRESENT)) {
			struct page *p = alloc_pages(__GFP_ZERO, 0);

			if (!p)
				return NULL;
			/* Release: the table's zeroes before the entry (the MMU walks it). */
			set_pte_release(e, page_to_phys(p) | PTE_PRESENT | PTE_WRITE);
		}
		t = table_of(*e);
	}
	return &t[(va >> 12) & 511];
}

void *kmap_area_alloc(size_t size)
{
	unsigned long flags, va;

	size = ALIGN_UP(size, PAGE_SIZE);
	spin_lock_irqsave(&kmap_lock, flags);
	if (kmap_next + size > KMAP_AREA_START + KMAP_AREA_SIZE) {
		spin_unlock_irqrestore(&kmap_lock, flags);
		return NULL;
	}
	va = kmap_next;
	kmap_next += size + PAGE_SIZE;	/* an unmapped guard page between areas */
	spin_unlock_irqrestore(&kmap_lock, flags);
	return (void *)va;
}

int kmap_set_pte(unsigned long va, phys_addr_t phys, bool present, bool uncached)
{
	unsigned long flags;
	u64 *pte;

	if (va < KMAP_AREA_START || va >= KMAP_AREA_START + KMAP_AREA_SIZE)
		return -EINVAL;
	spin_lock_irqsave(&kmap_lock, flags);
	pte = walk(va);
	if (pte)
		set_pte(pte, present ? (phys & PTE_ADDR_MASK) | PTE_PRESENT | PTE_WRITE | PTE_NX |
				   (uncached ? PTE_PCD | PTE_PWT : 0) : 0);
	spin_unlock_irqrestore(&kmap_lock, flags);
	if (!pte)
		return -ENOMEM;
	__asm__ __volatile__("invlpg (%0)" : : "r"(va) : "memory");
	return 0;
}

phys_addr_t kmap_lookup(unsigned long va)
{
	u64 *t = __va(kernel_pml4_phys);

	for (int shift = 39; shift > 12; shift -= 9) {
		u64 e = t[(va >> shift) & 511];

		if (!(e & PTE_PRESENT))
			return 0;
		t = table_of(e);
	}
	return t[(va >> 12) & 511] & PTE_PRESENT ? t[(va >> 12) & 511] & PTE_ADDR_MASK : 0;
}

void *ioremap(phys_addr_t phys, size_t size)
{
	phys_addr_t base = ALIGN_DOWN(phys, PAGE_SIZE);
	size_t len = ALIGN_UP(phys + size, PAGE_SIZE) - base;
	u8 *va = kmap_area_alloc(len);

	if (!va) {
		pr_err("ioremap(%#llx, %zu): the kernel mapping area is full\n",
		       (unsigned long long)phys, size);
		return NULL;
	}
	for (size_t off = 0; off < len; off += PAGE_SIZE)
		if (kmap_set_pte((unsigned long)va + off, base + off, true, true)) {
			pr_err("ioremap(%#llx): out of memory for page tables\n",
			       (unsigned long long)phys);
			return NULL;
		}
	return va + (phys - base);
}
