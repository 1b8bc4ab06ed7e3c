/*
 * Per-node memory: pg_data_t (Linux's name) holds a node's memmap, its buddy
 * free lists and its counters. Quire has one zone per node, so the zone's
 * fields live in pg_data_t directly. See docs/mm/page_alloc.md.
 */
#ifndef QUIRE_MMZONE_H
#define QUIRE_MMZONE_H

#include <quire/types.h>
#include <quire/list.h>
#include <quire/atomic.h>
#include <quire/spinlock.h>

#define MAX_NUMNODES	8
#define MAX_PAGE_ORDER	10		/* largest buddy block: 2^10 pages = 4 MiB */
#define NR_PAGE_ORDERS	(MAX_PAGE_ORDER + 1)
#define MAX_FOLIO_ORDER	18		/* 1 GiB: gigantic folios (alloc_contig_pages) */

struct page;

struct free_area {
	struct list_head free_list;
	unsigned long nr_free;		/* blocks of this order */
};

/* Per-node counters (gauges), read with node_page_state(). */
enum node_stat_item {
	NR_PRESENT_PAGES,	/* frames of RAM on the node */
	NR_FREE_PAGES,		/* in the buddy free lists */
	NR_RESERVED_PAGES,	/* present but never given out (kernel, memmap, firmware) */
	NR_KERNEL_PAGES,	/* allocated without __GFP_MOVABLE */
	NR_USER_PAGES,		/* allocated with __GFP_MOVABLE */
	NR_SLAB_PAGES,		/* held by the slab allocator */
	NR_CONTIG_PAGES,	/* taken by alloc_contig_pages */
	NR_FILE_PAGES,		/* in a file's page cache (of the user pages; /proc/meminfo's Cached) */
	NR_NODE_STAT_ITEMS,
};

/* Per-node events (only grow), read with node_event_count(). */
enum node_event_item {
	PGALLOC,		/* allocations served by this node (any order) */
	PGFREE,			/* frees to this node */
	PGALLOC_FALLBACK,	/* allocations served here for another preferred node */
	PGALLOC_FAIL,		/* allocations that found nothing on this node */
	FOLIO_ALLOC_ORDER_0,	/* folios allocated, per order: FOLIO_ALLOC_ORDER_0 + order */
	FOLIO_ALLOC_ORDER_LAST = FOLIO_ALLOC_ORDER_0 + MAX_PAGE_ORDER,
	/*
	 * Linux's NUMA events (nodeN/numastat), one per allocation as Linux
	 * counts them. The node asked for is the one a call names: a
	 * MPOL_BIND or PREFERRED_MANY fault asks its nodes one at a time.
	 */
	NUMA_HIT,		/* served here, and here was the node asked for */
	NUMA_MISS,		/* served here for another node */
	NUMA_FOREIGN,		/* asked for here, served by another node */
	NUMA_INTERLEAVE_HIT,	/* an interleave policy's choice, served here */
	NUMA_LOCAL,		/* served here for a CPU of this node */
	NUMA_OTHER,		/* served here for a CPU of another node */
	NR_NODE_EVENT_ITEMS,
};

typedef struct pglist_data {
	int node_id;
	unsigned long node_start_pfn;	/* first frame the memmap covers */
	unsigned long node_spanned_pages; /* frames covered, holes included */
	struct page *node_mem_map;	/* node_spanned_pages entries, on this node */
	spinlock_t lock;		/* protects free_area and the PG_buddy state */
	struct free_area free_area[NR_PAGE_ORDERS];
	atomic_long_t stat[NR_NODE_STAT_ITEMS];
	atomic_long_t events[NR_NODE_EVENT_ITEMS];
} pg_data_t;

extern pg_data_t node_data[MAX_NUMNODES];
#define NODE_DATA(nid) (&node_data[nid])

static inline unsigned long node_page_state(int nid, enum node_stat_item item)
{
	return (unsigned long)atomic_long_read(&NODE_DATA(nid)->stat[item]);
}

static inline unsigned long node_event_count(int nid, enum node_event_item item)
{
	return (unsigned long)atomic_long_read(&NODE_DATA(nid)->events[item]);
}

static inline void count_node_event_nid(int nid, enum node_event_item item)
{
	atomic_long_inc(&NODE_DATA(nid)->events[item]);
}

static inline unsigned long node_end_pfn(int nid)
{
	return NODE_DATA(nid)->node_start_pfn + NODE_DATA(nid)->node_spanned_pages;
}

#endif
