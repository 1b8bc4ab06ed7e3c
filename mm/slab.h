/*
 * Inside the slab allocator: struct kmem_cache, the slot layout and the
 * helpers shared by mm/slab.c (caches and slabs), mm/slab_debug.c (red
 * zones, poison, reports) and mm/kmalloc.c (size classes). Not for use
 * outside mm/.
 *
 * A slab is a folio of order 0..3 whose head page has PG_slab and the slab
 * fields of struct page (slab_cache, freelist, inuse, objects, slab_list).
 * Its memory is an array of slots of s->size bytes. In a slot:
 *
 *   without debug:  [ object ............ ]          free pointer at offset 0
 *   with debug:     [ left red zone | object | right red zone | track | pad ]
 *                   ^ slot            ^ slot + red_left        ^ track_offset
 *
 * The left red zone is red_left bytes (at least SLAB_RED_ZONE_MIN, rounded
 * up to the object's alignment); the right red zone runs from the end of
 * the object to the track; the pad after the track is red zone too. With
 * debug the free pointer lives in the track, so poison fills the whole
 * object while it is free.
 */
#ifndef MM_SLAB_H
#define MM_SLAB_H

#include <quire/slab.h>
#include <quire/mm.h>
#include <quire/list.h>
#include <quire/spinlock.h>

#define KMEM_CACHE_NAME_LEN	32
#define SLAB_MAX_ORDER		3

#define SLAB_RED_ZONE_MIN	16	/* bytes of red zone on each side, at least */
#define SLAB_RED_BYTE		0xcc	/* red zones hold this */
#define SLAB_POISON_FREE	0x6b	/* a free object holds this (Linux's POISON_FREE) */

#define _RET_IP_		((unsigned long)__builtin_return_address(0))

/* Debug state of an object, kept in its track. */
enum slab_obj_state {
	SLAB_OBJ_FREE = 0x46,		/* 'F': on the slab's freelist */
	SLAB_OBJ_ALLOCATED = 0x41,	/* 'A': handed out */
	SLAB_OBJ_QUARANTINED = 0x51,	/* 'Q': found damaged, never handed out again */
};

/* Debug metadata after each object. */
struct slab_track {
	void *next;			/* freelist link while free */
	unsigned long alloc_ip;		/* who allocated it last */
	unsigned long free_ip;		/* who freed it last */
	u32 req_size;			/* bytes asked for (kmalloc; else object_size) */
	u8 state;			/* enum slab_obj_state */
	u8 _pad[3];
};

/* A cache's slabs on one node. lock protects everything here and the slab
 * fields (freelist, inuse, slab_list) of every slab on the lists. */
struct kmem_cache_node {
	spinlock_t lock;
	struct list_head partial;	/* some objects free */
	struct list_head full;		/* no object free */
	struct page *empty;		/* at most one slab with no object in use */
	unsigned long nr_slabs;		/* on partial + full + empty */
	unsigned long inuse;		/* objects handed out (quarantined included) */
	unsigned long quarantined;
};

struct kmem_cache {
	char name[KMEM_CACHE_NAME_LEN];
	unsigned int object_size;	/* what the creator asked for (a class size for kmalloc) */
	unsigned int size;		/* slot size */
	unsigned int align;		/* of every object */
	unsigned int red_left;		/* object offset in the slot (0 without debug) */
	unsigned int track_offset;	/* struct slab_track offset in the slot (debug) */
	unsigned int free_offset;	/* free pointer offset in the slot */
	unsigned int order;		/* of each slab */
	unsigned int objects;		/* per slab */
	slab_flags_t flags;
	bool debug;
	bool is_static;			/* a boot cache: never destroyed */
	struct list_head list;		/* on slab_caches */
	struct kmem_cache_node node[MAX_NUMNODES];
};

/* ---- layout helpers ---- */

static inline int slab_fls(unsigned long x)
{
	return x ? 64 - __builtin_clzl(x) : 0;
}

/* The smallest order whose block holds size bytes. */
static inline unsigned int kmalloc_order(size_t size)
{
	return size <= PAGE_SIZE ? 0 : (unsigned int)slab_fls((size - 1) >> PAGE_SHIFT);
}

static inline void *slab_base(const struct page *slab)
{
	return page_address(slab);
}

static inline void *slot_of(const struct kmem_cache *s, const void *obj)
{
	return (char *)obj - s->red_left;
}

static inline struct slab_track *track_of(const struct kmem_cache *s, const void *obj)
{
	return (struct slab_track *)((char *)slot_of(s, obj) + s->track_offset);
}

/*
 * The index of the slot obj would start, or -1 when obj is not the start of
 * an object of this slab.
 */
static inline long obj_index(const struct kmem_cache *s, const struct page *slab,
			     const void *obj)
{
	long off = (const char *)obj - (const char *)slab_base(slab) - (long)s->red_left;

	if (off < 0 || off % s->size || off / s->size >= (long)slab->objects)
		return -1;
	return off / s->size;
}

static inline void *get_freeptr(const struct kmem_cache *s, const void *obj)
{
	return *(void **)((char *)slot_of(s, obj) + s->free_offset);
}

static inline void set_freeptr(const struct kmem_cache *s, void *obj, void *next)
{
	*(void **)((char *)slot_of(s, obj) + s->free_offset) = next;
}

/* The head page of a slab or kmalloc folio holding p, or NULL for memory
 * the page allocator does not describe. */
struct page *slab_virt_to_head(const void *p);

/* ---- mm/slab.c ---- */

extern struct list_head slab_caches;
extern spinlock_t slab_caches_lock;

/* Set up a cache in storage the caller provides (boot caches). */
int kmem_cache_setup(struct kmem_cache *s, const char *name, unsigned int size,
		     unsigned int align, slab_flags_t flags);
/* The node to allocate on for a request naming nid (see docs/mm/slab.md). */
int slab_home_node(int nid, gfp_t gfp);
void *slab_alloc_node(struct kmem_cache *s, gfp_t gfp, int nid, size_t req_size,
		      unsigned long ip);
void slab_free(struct kmem_cache *s, struct page *slab, void *obj, unsigned long ip);

/* ---- mm/kmalloc.c ---- */

void kmalloc_init_caches(void);

/* ---- mm/slab_debug.c ---- */

/* Lay a fresh slab's slot out: red zones, poison, a free track. */
void slab_debug_init_slot(struct kmem_cache *s, void *obj);
/*
 * Checks on the way out (object popped from the freelist) and on the way
 * back (kfree). They return NULL when the object is sound, else what is
 * wrong, for slab_report; *bad gets the first damaged byte.
 */
const char *slab_debug_check_alloc(struct kmem_cache *s, void *obj, const u8 **bad);
const char *slab_debug_check_free(struct kmem_cache *s, void *obj, const u8 **bad);
/* Mark obj handed out: state, caller, and the kmalloc slack as red zone. */
void slab_debug_mark_alloc(struct kmem_cache *s, void *obj, size_t req_size,
			   unsigned long ip);
/* Mark obj free: poison, state, caller. */
void slab_debug_mark_free(struct kmem_cache *s, void *obj, unsigned long ip);
/* Check every free object of a slab about to go back to the page allocator. */
void slab_debug_check_slab(struct kmem_cache *s, struct page *slab);
/* Let the caller use the whole object (ksize): no slack to check any more. */
void slab_debug_grant_full(struct kmem_cache *s, void *obj);
/*
 * Report one problem: "slab: <what> in <cache> object <addr>", details,
 * a backtrace; count it in slab_errors. bad may be NULL.
 */
void slab_report(struct kmem_cache *s, const void *obj, const char *what, const u8 *bad);
/* A free of memory that is not the start of a slab object or kmalloc folio. */
void slab_report_invalid_free(struct kmem_cache *s, const void *p, const char *why);

#endif
