/* A device with private memory for the kernel tests (test_device.h). */
#include "test_device.h"
#include <quire/migrate.h>
#include <quire/mm.h>
#include <quire/copy_mc.h>
#include <quire/string.h>
#include <quire/numa.h>
#include <quire/errno.h>

static void test_device_page_free(struct page *page)
{
	struct test_device *d = page->pgmap->owner;

	spin_lock(&d->lock);
	d->free[d->nr_free++] = page;
	spin_unlock(&d->lock);
}

void test_device_fill(struct page *page, unsigned long mpfn, unsigned long *dstw)
{
	struct page *spage = migrate_pfn_to_page(mpfn);

	if (spage)
		copy_mc_highpages(page, spage, 1);
	else
		memset(page_address(page), 0, PAGE_SIZE);
	*dstw = migrate_pfn(page_to_pfn(page));
}

/* A CPU touched one of the device's pages: that page back to system memory. */
static int test_device_migrate_to_ram(struct vm_fault *vmf)
{
	struct test_device *d = vmf->page->pgmap->owner;
	unsigned long s = 0, dw = 0;
	struct migrate_vma m = {
		.vma = vmf->vma, .start = vmf->address, .end = vmf->address + PAGE_SIZE,
		.src = &s, .dst = &dw, .pgmap_owner = d,
		.flags = MIGRATE_VMA_SELECT_DEVICE_PRIVATE, .fault_page = vmf->page,
	};

	if (migrate_vma_setup(&m))
		return -EIO;
	if (s & MIGRATE_PFN_MIGRATE) {
		struct folio *folio = folio_alloc(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN, 0,
						  numa_node_id());

		if (!folio) {
			migrate_vma_finalize(&m);
			return -ENOMEM;
		}
		folio_lock(folio);
		test_device_fill(folio_page(folio, 0), s, &dw);
	}
	migrate_vma_pages(&m);
	if ((s & MIGRATE_PFN_MIGRATE) && dw)
		d->faults_back++;
	migrate_vma_finalize(&m);
	return 0;
}

static const struct dev_pagemap_ops test_device_ops = {
	.page_free = test_device_page_free,
	.migrate_to_ram = test_device_migrate_to_ram,
};

bool test_device_up(struct test_device *d, unsigned long nr_pages)
{
	phys_addr_t start;

	/* (The host build makes a new machine for each case: the old pages are gone then.) */
	if (d->pgmap.ops && is_zone_device_page(pfn_to_page(PHYS_PFN(d->pgmap.start))) &&
	    pfn_to_page(PHYS_PFN(d->pgmap.start))->pgmap == &d->pgmap)
		return true;
	if (nr_pages > TEST_DEVICE_MAX_PAGES ||
	    memremap_claim((phys_addr_t)nr_pages << PAGE_SHIFT, &start))
		return false;
	spin_lock_init(&d->lock);
	d->nr_pages = nr_pages;
	d->pgmap = (struct dev_pagemap){
		.type = MEMORY_DEVICE_PRIVATE, .start = start,
		.end = start + ((phys_addr_t)nr_pages << PAGE_SHIFT),
		.ops = &test_device_ops, .owner = d,
	};
	if (memremap_pages(&d->pgmap)) {
		d->pgmap.ops = NULL;
		return false;
	}
	d->nr_free = 0;
	for (unsigned long pfn = PHYS_PFN(start); pfn < PHYS_PFN(d->pgmap.end); pfn++)
		d->free[d->nr_free++] = pfn_to_page(pfn);
	return true;
}

struct page *test_device_alloc(struct test_device *d)
{
	struct page *page = NULL;

	spin_lock(&d->lock);
	if (d->nr_free)
		page = d->free[--d->nr_free];
	spin_unlock(&d->lock);
	if (page)
		zone_device_page_init(page);
	return page;
}
