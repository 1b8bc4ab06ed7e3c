/*
 * The slab allocator: kmalloc/kfree and object caches (struct kmem_cache),
 * with Linux's names and semantics. Small objects come from slabs (order
 * 0..3 folios marked PG_slab) kept per cache and per node; kmalloc above
 * KMALLOC_MAX_CACHE_SIZE takes a folio from the page allocator directly.
 * Debug mode (slab_debug) adds red zones, poisoning and double-free checks.
 * See docs/mm/slab.md.
 */
#ifndef QUIRE_SLAB_H
#define QUIRE_SLAB_H

#include <quire/types.h>
#include <quire/gfp.h>
#include <quire/atomic.h>

struct kmem_cache;

typedef unsigned int slab_flags_t;

#define SLAB_HWCACHE_ALIGN	0x01u	/* align objects to a cache line (64 bytes) */
#define SLAB_PANIC		0x02u	/* panic instead of returning NULL from create */
#define SLAB_RED_ZONE		0x04u	/* debug this cache even when slab_debug is off: */
#define SLAB_POISON		0x08u	/*   either flag turns on every debug check */

/* The kmalloc size classes: 8, 16, 32, 64, 96, 128, 192, 256 ... 8192. */
#define KMALLOC_MIN_SIZE	8
#define KMALLOC_MAX_CACHE_SIZE	8192
#define KMALLOC_SHIFT_HIGH	13
#define NR_KMALLOC_CACHES	13
/* Larger kmallocs are folios; the largest is one max-order buddy block. */
#define KMALLOC_MAX_SIZE	(4UL << 20)

/* kmalloc(0) returns this: not NULL, but never dereferenceable. */
#define ZERO_SIZE_PTR		((void *)16)
#define ZERO_OR_NULL_PTR(x)	((unsigned long)(x) <= (unsigned long)ZERO_SIZE_PTR)

/* Debug checks for caches created from now on (set at boot: slab_debug=). */
extern bool slab_debug;
/* Problems the debug checks found and survived (double free, red zone, ...). */
extern atomic_long_t slab_errors;

/*
 * kmalloc: at least size bytes, aligned to the size class (to the largest
 * power of two dividing it: 96 -> 32, 192 -> 64; above 8192 to a page).
 * kmalloc_node prefers node nid (NUMA_NO_NODE: the current CPU's node) and
 * falls back to other nodes unless gfp has __GFP_THISNODE.
 */
void *kmalloc(size_t size, gfp_t gfp);
void *kmalloc_node(size_t size, gfp_t gfp, int nid);
/* Free what kmalloc returned; kfree(NULL) and kfree(ZERO_SIZE_PTR) do nothing. */
void kfree(const void *p);
/* The usable size of a kmalloc object (its size class, or the folio's size). */
size_t ksize(const void *p);
/* The size kmalloc(size) really allocates. */
size_t kmalloc_size_roundup(size_t size);

static inline void *kzalloc(size_t size, gfp_t gfp)
{
	return kmalloc(size, gfp | __GFP_ZERO);
}

static inline void *kzalloc_node(size_t size, gfp_t gfp, int nid)
{
	return kmalloc_node(size, gfp | __GFP_ZERO, nid);
}

/* A kmalloc'd copy of the string s (Linux's kstrdup), or NULL. */
static inline char *kstrdup(const char *s, gfp_t gfp)
{
	size_t len = __builtin_strlen(s) + 1;
	char *p = kmalloc(len, gfp);

	if (p)
		__builtin_memcpy(p, s, len);
	return p;
}

/* n * size bytes, or NULL when the product overflows. */
static inline void *kmalloc_array(size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return kmalloc(bytes, gfp);
}

static inline void *kcalloc(size_t n, size_t size, gfp_t gfp)
{
	return kmalloc_array(n, size, gfp | __GFP_ZERO);
}

/*
 * Object caches. align is a power of two (0: 8 bytes); the name is copied.
 * Returns NULL when size or align is out of range (or panics with SLAB_PANIC).
 */
struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags);
/* Refuses, with an error report, while objects are still allocated. */
void kmem_cache_destroy(struct kmem_cache *s);
void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp);
void *kmem_cache_alloc_node(struct kmem_cache *s, gfp_t gfp, int nid);
void kmem_cache_free(struct kmem_cache *s, void *p);
/* Give the cached empty slabs (one per node at most) back to the page allocator. */
int kmem_cache_shrink(struct kmem_cache *s);
/* The object size the cache was created with. */
unsigned int kmem_cache_size(struct kmem_cache *s);
const char *kmem_cache_name(struct kmem_cache *s);

static inline void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t gfp)
{
	return kmem_cache_alloc(s, gfp | __GFP_ZERO);
}

/* The kmalloc cache that serves size, or NULL above KMALLOC_MAX_CACHE_SIZE. */
struct kmem_cache *kmalloc_slab(size_t size);

/* Counters of a cache, on one node or (nid == NUMA_NO_NODE) on all. */
struct kmem_cache_stats {
	unsigned long slabs;		/* slabs held (the cached empty one included) */
	unsigned long slab_pages;	/* pages those slabs use */
	unsigned long objects_inuse;	/* handed out and not freed */
	unsigned long quarantined;	/* set aside by a debug check, never reused */
	unsigned long objects_total;	/* object slots in the slabs held */
	unsigned int objects_per_slab;
	unsigned int order;		/* of each slab */
	unsigned int slot_size;		/* bytes per object slot (debug metadata included) */
	bool debug;			/* red zones, poison and state checks on */
};
void kmem_cache_get_stats(struct kmem_cache *s, int nid, struct kmem_cache_stats *st);

/* Create the kmalloc caches (called at the end of mm_core_init). */
void kmem_cache_init(void);
bool slab_is_available(void);
/* Shrink every cache: only slabs holding objects remain. */
void slab_shrink_all(void);
/* One line per cache with objects or slabs, then per-node slab pages ("memstat"). */
void slab_print_stats(void);

#endif
