/*
 * Allocation flags (gfp_t) with Linux's names, and the page allocator's
 * entry points. Every allocation names an order and, directly or not, a
 * preferred node; without __GFP_THISNODE it falls back along that node's
 * fallback order (nearest first, by SLIT distance).
 */
#ifndef QUIRE_GFP_H
#define QUIRE_GFP_H

#include <quire/types.h>

typedef unsigned int gfp_t;

#define __GFP_ZERO	0x01u	/* return zeroed memory */
#define __GFP_THISNODE	0x02u	/* the preferred node only: no fallback */
#define __GFP_NOWARN	0x04u	/* failure is expected: do not log it */
#define __GFP_MOVABLE	0x08u	/* user memory: may live on the slow tier */
#define __GFP_COMP	0x10u	/* make a compound page (a folio) of order > 0 */
#define __GFP_FAIL	0x20u	/* test hook: fail this allocation (failure injection) */

#define GFP_KERNEL	0u
#define GFP_USER	__GFP_MOVABLE
#define GFP_HIGHUSER_MOVABLE __GFP_MOVABLE

#define NUMA_NO_NODE	(-1)

struct page;
struct folio;

/*
 * Allocate 2^order contiguous, naturally aligned pages. nid is the preferred
 * node (NUMA_NO_NODE: the current CPU's node). Kernel allocations (no
 * __GFP_MOVABLE) go to a slow-tier node only when every DRAM node is out of
 * memory. Returns NULL on failure (logged unless __GFP_NOWARN).
 */
struct page *alloc_pages_node(int nid, gfp_t gfp, unsigned int order);
struct page *alloc_pages(gfp_t gfp, unsigned int order);
void __free_pages(struct page *page, unsigned int order);

/* A direct-mapped address of 2^order pages, or 0. */
unsigned long __get_free_pages(gfp_t gfp, unsigned int order);
void free_pages(unsigned long addr, unsigned int order);

/*
 * Folios. Quire's folio_alloc takes the node (Linux splits this into
 * folio_alloc and __folio_alloc_node). The folio starts with refcount 1.
 */
struct folio *folio_alloc(gfp_t gfp, unsigned int order, int nid);
void folio_put(struct folio *folio);
void folio_get(struct folio *folio);

/* Give a PG_reserved frame to the allocator after boot (memblock_free_late). */
void free_reserved_page(struct page *page);

/*
 * Gigantic ranges (1 GiB hugetlb folios later): nr_pages contiguous pages,
 * aligned to nr_pages (a power of two), on node nid only. The pages come
 * from free max-order blocks that are removed from the buddy lists.
 */
struct page *alloc_contig_pages(unsigned long nr_pages, gfp_t gfp, int nid);
void free_contig_range(unsigned long pfn, unsigned long nr_pages);

#endif
