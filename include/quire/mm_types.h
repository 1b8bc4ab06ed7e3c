/*
 * struct page and struct folio. One struct page describes one 4 KiB frame;
 * a folio is a power-of-two run of pages handled as one unit (one refcount,
 * one set of flags, one mapping). A folio of order > 0 keeps its extra
 * fields in its first tail page, so struct folio overlays the head page and
 * the page after it. Layout, meaning and locking of every field:
 * docs/mm/folio.md. The static asserts in mm/folio.c keep the overlay honest.
 */
#ifndef QUIRE_MM_TYPES_H
#define QUIRE_MM_TYPES_H

#include <quire/types.h>
#include <quire/list.h>
#include <quire/atomic.h>

struct kmem_cache;
struct dev_pagemap;

struct page {
	unsigned long flags;		/* PG_* bits; node id in the top 8 bits */
	union {
		/* Free page (PG_buddy head) or allocated folio head. */
		struct {
			union {
				struct list_head buddy_list;	/* free: per-order free list */
				struct list_head lru;		/* folio: deferred split queue */
				struct {			/* PG_zone_device page (memremap.h) */
					struct dev_pagemap *pgmap;
					void *zone_device_data;	/* the owner's */
				};
			};
			void *mapping;		/* PG_anon: struct anon_vma; otherwise address_space */
			unsigned long index;	/* offset in the mapping, in pages */
			unsigned long private;	/* free: buddy order */
		};
		/* Tail page of a large folio. */
		struct {
			unsigned long compound_head;	/* head page address | 1 */
			unsigned long _tail_fields[4];	/* folio fields (page 1), see struct folio */
		};
		/* Slab page (PG_slab head). */
		struct {
			struct list_head slab_list;	/* on its cache's partial/full list */
			struct kmem_cache *slab_cache;
			void *freelist;			/* first free object */
			unsigned int inuse;		/* objects handed out */
			unsigned int objects;		/* objects in the slab */
		};
	};
	atomic_t _mapcount;		/* page table entries mapping this page, minus 1 */
	atomic_t _refcount;		/* references to the folio (head page only) */
	union {
		unsigned long _unused;	/* keeps struct page at 64 bytes */
		void *ptl;		/* a user page-table page: its spinlock_t (mm/pgtable.c) */
	};
};

/*
 * struct folio: what a large folio's head page and first tail page hold
 * together. Fields of page 0 keep struct page's names and offsets; the
 * fields in page 1 fill the words a tail page does not use (not its flags,
 * compound_head, _mapcount or _refcount).
 */
struct folio {
	/* page 0 */
	unsigned long flags;
	struct list_head lru;
	void *mapping;
	unsigned long index;
	unsigned long private;
	atomic_t _mapcount;
	atomic_t _refcount;
	unsigned long _unused0;
	/* page 1 */
	unsigned long _flags_1;
	unsigned long _head_1;		/* page 1's compound_head */
	atomic_t _large_mapcount;	/* all PTE and PMD mappings of the folio, minus 1 */
	atomic_t _entire_mapcount;	/* PMD (whole-folio) mappings, minus 1 */
	atomic_t _nr_pages_mapped;	/* pages mapped by at least one PTE */
	atomic_t _pincount;		/* FOLL_PIN pins (large folios) */
	unsigned int _folio_order;	/* log2 of the number of pages */
	unsigned int _folio_pad;
	unsigned long _mm_owner;	/* the one mm mapping it, MM_OWNER_SHARED, or 0 (rmap.c) */
	atomic_t _mapcount_1;		/* page 1's own _mapcount */
	atomic_t _refcount_1;		/* page 1's _refcount: always 0 */
	unsigned long _unused1;
};

#endif
