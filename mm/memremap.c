/*
 * Device memory with struct pages (include/quire/memremap.h,
 * docs/mm/device-memory.md). A driver's range is RAM that
 * memremap_carve_boot() kept out of the page allocator at boot; its
 * memmap entries stay where the node put them (so pfn_to_page and
 * page_to_pfn need nothing new) and become device pages here: PG_zone_device,
 * the pagemap in page->pgmap, reference count 0 while free. For the node's
 * counters they stay reserved frames (outside MemTotal, never free).
 *
 * A device page's life: the driver takes a free one (zone_device_page_init:
 * one reference, locked), migrate_vma makes it the new home of a process's
 * page (a device-private entry maps it, holding a reference and a mapcount
 * as a PTE would), and when the last reference goes, free_zone_device_folio
 * clears what the process left (anon_vma, flags) and hands it to the
 * driver's page_free().
 */
#define pr_fmt(fmt) "memremap: " fmt
#include <quire/memremap.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/memblock.h>
#include <quire/rmap.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/panic.h>
#include <quire/cmdline.h>
#include <quire/spinlock.h>
#include <quire/numa.h>

#define MAX_CARVED	8

static unsigned long devmem_mib = 16;
CMDLINE_UINT("devmem", devmem_mib, 0, 65536,
	     "MiB of RAM kept at boot for device memory: the hmm_dmirror test devices "
	     "and the migrate_device tests (0: none)");

static struct {
	phys_addr_t start, end;
	phys_addr_t claimed;	/* [start, claimed) handed out */
} carved[MAX_CARVED];
static int nr_carved;
static DEFINE_SPINLOCK(claim_lock);

phys_addr_t memremap_carve_boot(phys_addr_t size, int nid)
{
	phys_addr_t pa;

	size = ALIGN_UP(size, PMD_SIZE);
	if (!size || nr_carved == MAX_CARVED)
		return 0;
	pa = memblock_phys_alloc_node(size, PMD_SIZE, nid);
	if (!pa) {
		pr_warn("cannot keep %llu MiB for device memory\n",
			(unsigned long long)(size >> 20));
		return 0;
	}
	carved[nr_carved].start = carved[nr_carved].claimed = pa;
	carved[nr_carved].end = pa + size;
	nr_carved++;
	pr_info("kept [%#llx, %#llx) (%llu MiB) for device memory\n",
		(unsigned long long)pa, (unsigned long long)(pa + size),
		(unsigned long long)(size >> 20));
	return pa;
}

void memremap_boot_reserve(void)
{
	if (devmem_mib)
		memremap_carve_boot((phys_addr_t)devmem_mib << 20, NUMA_NO_NODE);
}

int memremap_claim(phys_addr_t size, phys_addr_t *start)
{
	int err = -ENOMEM;

	size = ALIGN_UP(size, PAGE_SIZE);
	spin_lock(&claim_lock);
	for (int i = 0; i < nr_carved && err; i++) {
		if (carved[i].end - carved[i].claimed < size)
			continue;
		*start = carved[i].claimed;
		carved[i].claimed += size;
		err = 0;
	}
	spin_unlock(&claim_lock);
	return err;
}

void memremap_reset(void)
{
	nr_carved = 0;
}

phys_addr_t memremap_carved_bytes(void)
{
	phys_addr_t sum = 0;

	for (int i = 0; i < nr_carved; i++)
		sum += carved[i].end - carved[i].start;
	return sum;
}

bool memremap_range_carved(phys_addr_t start, phys_addr_t end)
{
	for (int i = 0; i < nr_carved; i++)
		if (start >= carved[i].start && end <= carved[i].end)
			return true;
	return false;
}

int memremap_pages(struct dev_pagemap *pgmap)
{
	if (pgmap->type != MEMORY_DEVICE_PRIVATE && pgmap->type != MEMORY_DEVICE_COHERENT) {
		pr_err("memory type %d: only device-private and device-coherent memory exist\n",
		       pgmap->type);
		return -EINVAL;
	}
	if (!pgmap->ops || !pgmap->ops->page_free || !pgmap->owner ||
	    (pgmap->type == MEMORY_DEVICE_PRIVATE && !pgmap->ops->migrate_to_ram)) {
		pr_err("a device pagemap needs an owner and page_free (and, private, migrate_to_ram)\n");
		return -EINVAL;
	}
	if (!IS_ALIGNED(pgmap->start, PAGE_SIZE) || !IS_ALIGNED(pgmap->end, PAGE_SIZE) ||
	    pgmap->start >= pgmap->end || !memremap_range_carved(pgmap->start, pgmap->end)) {
		pr_err("[%#llx, %#llx) is not memory kept for a device at boot\n",
		       (unsigned long long)pgmap->start, (unsigned long long)pgmap->end);
		return -EINVAL;
	}
	for (unsigned long pfn = PHYS_PFN(pgmap->start); pfn < PHYS_PFN(pgmap->end); pfn++) {
		struct page *page = pfn_to_page(pfn);

		if (!page || !PageReserved(page) || is_zone_device_page(page)) {
			pr_err("pfn %#lx is not a reserved frame (already a device's?)\n", pfn);
			return -EINVAL;
		}
	}
	for (unsigned long pfn = PHYS_PFN(pgmap->start); pfn < PHYS_PFN(pgmap->end); pfn++) {
		struct page *page = pfn_to_page(pfn);

		clear_page_flag(page, PG_reserved);
		set_page_flag(page, PG_zone_device);
		page->pgmap = pgmap;
		page->zone_device_data = NULL;
		atomic_set(&page->_refcount, 0);
		atomic_set(&page->_mapcount, -1);
	}
	return 0;
}

void zone_device_page_init(struct page *page)
{
	VM_BUG_ON_FOLIO(!is_zone_device_page(page) || page_count(page) != 0, page_folio(page));
	atomic_set(&page->_refcount, 1);
	if (!folio_trylock(page_folio(page)))
		panic("zone_device_page_init: free device page %p is locked", page);
}

void free_zone_device_folio(struct folio *folio)
{
	struct page *page = (struct page *)folio;
	struct dev_pagemap *pgmap = page->pgmap;

	VM_BUG_ON_FOLIO(folio_test_large(folio) || folio_mapped(folio), folio);
	if (folio_test_anon(folio))
		folio_free_anon(folio);
	folio->mapping = NULL;
	folio->index = 0;
	/* Only what says what the frame is stays. */
	page->flags &= (1UL << PG_zone_device) | (~0UL << NODES_PGSHIFT);
	pgmap->ops->page_free(page);
}
