/*
 * Taking one page of the direct map away and giving it back: the direct
 * map uses 1 GiB and 2 MiB pages where it can, so the large page holding
 * the frame is first split into the next size down (for good: a split
 * page is never merged back). The machine-check test hook uses this to
 * make a frame's direct-map address fault like poisoned memory.
 */
#include <quire/mm.h>
#include <quire/spinlock.h>
#include <quire/smp.h>
#include <quire/errno.h>
#include <asm/direct_map.h>
#include <asm/pgtable.h>
#include <quire/pte.h>

static DEFINE_SPINLOCK(direct_map_lock);

/* Replace the large leaf *e (level size `size`) by a table of 512 smaller leaves. */
static int split_leaf(u64 *e, unsigned long size)
{
	struct page *p = alloc_pages(0, 0);
	u64 *t, leaf = *e;
	unsigned long small = size / 512;
	u64 flags = leaf & ~PTE_PFN_MASK & ~_PAGE_PSE;

	if (!p)
		return -ENOMEM;
	t = page_address(p);
	for (int i = 0; i < 512; i++)
		set_pte(&t[i], ((leaf & PTE_PFN_MASK) + i * small) | flags |
			       (small > PAGE_SIZE ? _PAGE_PSE : 0));
	/* Other CPUs use the direct map all along: the table's leaves before the entry. */
	set_pte_release(e, page_to_phys(p) | _PAGE_PRESENT | _PAGE_RW);
	return 0;
}

/*
 * Make the direct map's 4 KiB page at va present or not, on every CPU.
 * 0, -ENOMEM (no page for a split table) or -EINVAL (not in the map).
 */
int direct_map_set_present(unsigned long va, bool present)
{
	u64 *t = __va(kernel_pml4_phys);
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&direct_map_lock, flags);
	for (int shift = 39; shift > 12 && !err; shift -= 9) {
		u64 *e = &t[(va >> shift) & 511];

		if (!(*e & _PAGE_PRESENT))
			err = -EINVAL;
		else if ((*e & _PAGE_PSE) && shift <= 30)
			err = split_leaf(e, 1UL << shift);
		if (!err)
			t = __va(*e & PTE_PFN_MASK);
	}
	if (!err) {
		u64 *pte = &t[(va >> 12) & 511];

		/* Atomic: the MMU may set A or D on the live leaf meanwhile. */
		if (present)
			__atomic_fetch_or(pte, _PAGE_PRESENT, __ATOMIC_RELAXED);
		else
			__atomic_fetch_and(pte, ~(u64)_PAGE_PRESENT, __ATOMIC_RELAXED);
	}
	spin_unlock_irqrestore(&direct_map_lock, flags);
	if (!err)
		flush_tlb_kernel_range(va & PAGE_MASK, (va & PAGE_MASK) + PAGE_SIZE);
	return err;
}
