/*
 * Device memory with struct pages (Linux's include/linux/memremap.h, cut to
 * what Quire has): a dev_pagemap describes a range of frames that belong to
 * a device, not to the page allocator. Their struct pages are marked
 * PG_zone_device, point to the pagemap, and are never in the buddy lists:
 * when the last reference to one goes, the owner's page_free() takes it
 * back (docs/mm/device-memory.md).
 *
 *   MEMORY_DEVICE_PRIVATE   memory the CPU cannot reach. A page of it is
 *                           mapped in a process by a device-private swap
 *                           entry (include/quire/swapops.h); a CPU access
 *                           calls the owner's migrate_to_ram().
 *   MEMORY_DEVICE_COHERENT  memory the CPU can reach like RAM: a page of it
 *                           is mapped by a present PTE, but it is the
 *                           device's (not on any LRU, never migrated by
 *                           move_pages or compaction; a FOLL_LONGTERM pin
 *                           moves it to system memory first).
 *
 * Quire's machines have no device memory: a driver's range is RAM carved
 * out at boot ("devmem=MiB", memremap_claim), so that the "device" pages
 * have real frames behind them that the driver's copies can use.
 */
#ifndef QUIRE_MEMREMAP_H
#define QUIRE_MEMREMAP_H

#include <quire/types.h>
#include <quire/mm.h>

struct vm_area_struct;

enum memory_type {
	/* 0 is reserved, as in Linux, to catch an uninitialised type */
	MEMORY_DEVICE_PRIVATE = 1,
	MEMORY_DEVICE_COHERENT,
};

/* What a fault on a device-private entry hands to migrate_to_ram (Linux's struct vm_fault, cut). */
struct vm_fault {
	struct vm_area_struct *vma;
	unsigned long address;		/* the faulting address, page aligned */
	unsigned int flags;		/* FAULT_FLAG_* */
	struct page *page;		/* the device page the entry names (referenced) */
};

struct dev_pagemap_ops {
	/* The last reference to a page went: the device may reuse it. */
	void (*page_free)(struct page *page);
	/*
	 * A CPU touched vmf->page: move it (and maybe its neighbours) back to
	 * system memory. 0 (the fault is retried), -ENOMEM, or -EIO (SIGBUS).
	 */
	int (*migrate_to_ram)(struct vm_fault *vmf);
};

struct dev_pagemap {
	enum memory_type type;
	phys_addr_t start, end;		/* the frames [start, end), page aligned */
	const struct dev_pagemap_ops *ops;
	void *owner;			/* matched by migrate_vma and hmm_range_fault */
};

/*
 * Turn the frames of pgmap (RAM that memremap_carve_boot kept out of the
 * page allocator) into free device pages: reference count 0, the pagemap
 * set. 0, or -EINVAL for a range that is not carved RAM or a type Quire
 * cannot back.
 */
int memremap_pages(struct dev_pagemap *pgmap);

/*
 * At boot, before the buddy: keep size bytes of RAM (2 MiB aligned) of node
 * nid (NUMA_NO_NODE: any) for devices. The start, or 0 when there is no room.
 */
phys_addr_t memremap_carve_boot(phys_addr_t size, int nid);
/* The arch's boot code, after memblock: carve what "devmem=MiB" asks (default 16). */
void memremap_boot_reserve(void);
/* Forget every carve (the host build, before it builds a machine again). */
void memremap_reset(void);
/* A driver's share of what was carved: size bytes at *start (never given back). 0 or -ENOMEM. */
int memremap_claim(phys_addr_t size, phys_addr_t *start);
/* How much was carved at boot (0: no device memory at all). */
phys_addr_t memremap_carved_bytes(void);
/* Is [start, end) inside what was carved? */
bool memremap_range_carved(phys_addr_t start, phys_addr_t end);

static inline bool is_zone_device_page(const struct page *page)
{
	return test_page_flag((struct page *)page, PG_zone_device);
}

static inline bool folio_is_zone_device(const struct folio *folio)
{
	return is_zone_device_page((const struct page *)folio);
}

static inline bool is_device_private_page(const struct page *page)
{
	return is_zone_device_page(page) && page->pgmap->type == MEMORY_DEVICE_PRIVATE;
}

static inline bool folio_is_device_private(const struct folio *folio)
{
	return is_device_private_page((const struct page *)folio);
}

static inline bool is_device_coherent_page(const struct page *page)
{
	return is_zone_device_page(page) && page->pgmap->type == MEMORY_DEVICE_COHERENT;
}

static inline bool folio_is_device_coherent(const struct folio *folio)
{
	return is_device_coherent_page((const struct page *)folio);
}

/* A driver hands out a free device page: one reference, locked (Linux's zone_device_page_init). */
void zone_device_page_init(struct page *page);

/* The last reference to a device folio went (from free_unref_folio). */
void free_zone_device_folio(struct folio *folio);

#endif
