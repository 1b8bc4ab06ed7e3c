/*
 * struct page flag bits (page->flags), with Linux's names. Most describe a
 * folio and are kept on its head page; PG_hwpoison and PG_anon_exclusive
 * describe one page and are kept on each page. The node id lives in the top
 * bits of the same word (page_to_nid). See docs/mm/folio.md.
 */
#ifndef QUIRE_PAGE_FLAGS_H
#define QUIRE_PAGE_FLAGS_H

enum pageflags {
	PG_locked,		/* folio: locked for I/O or migration */
	PG_referenced,		/* folio: recently accessed (reclaim) */
	PG_uptodate,		/* folio: contents valid */
	PG_dirty,		/* folio: must be written back */
	PG_lru,			/* folio: on an LRU list */
	PG_head,		/* first page of a large folio */
	PG_anon,		/* folio: anonymous (mapping is an anon_vma) */
	PG_swapbacked,		/* folio: backed by RAM/swap, not a file */
	PG_reserved,		/* page: never given to the allocator (firmware, kernel, hole) */
	PG_buddy,		/* page: first page of a free buddy block (order in private) */
	PG_slab,		/* folio: owned by the slab allocator */
	PG_hwpoison,		/* page: memory error, never map or read it */
	PG_anon_exclusive,	/* page: mapped by exactly one process, no COW needed */
	PG_poisoned,		/* page (debug): filled with PAGE_POISON when freed */
	PG_large_rmappable,	/* folio: large folio that the rmap can handle */
	PG_user_alloc,		/* folio: allocated with __GFP_MOVABLE (counted as user memory) */
	PG_partially_mapped,	/* folio: large anon, some pages unmapped: on the deferred split queue */
	PG_isolated,		/* folio: taken for migration, on a migration list (mm/migrate.c) */
	PG_zone_device,		/* page: device memory (pgmap set), never in the buddy (memremap.h) */
	NR_PAGEFLAGS,
};

#define NODES_SHIFT_BITS	8
#define NODES_PGSHIFT		(64 - NODES_SHIFT_BITS)
/* The node id of a memmap entry that describes a hole (no frame behind it). */
#define NODE_HOLE		0xff

#endif
