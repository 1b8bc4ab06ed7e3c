/*
 * Object caches: slabs per cache and per node, allocation and free of
 * objects, cache create/destroy/shrink and the counters. The slot layout
 * and the locking rules are in mm/slab.h; the debug checks in
 * mm/slab_debug.c; kmalloc's size classes in mm/kmalloc.c.
 *
 * Where an object comes from, for a request on node nid:
 *   1. a partial slab, or the cached empty slab, of nid;
 *   2. a new slab from nid alone (__GFP_THISNODE);
 *   3. unless the caller said __GFP_THISNODE: a partial slab of another
 *      node, nearest first (never the slow tier for a DRAM request);
 *   4. a new slab wherever the page allocator's fallback finds one.
 * A slab lives on the lists of the node its pages are on, so kfree always
 * returns an object to its own node.
 */
#define pr_fmt(fmt) "slab: " fmt
#include "slab.h"
#include <quire/cmdline.h>
#include <quire/numa.h>
#include <quire/panic.h>
#include <quire/printk.h>
#include <quire/stacktrace.h>
#include <quire/string.h>

/*
 * Debug checks are on in a DEBUG_MM build (the default; make DEBUG_MM=0
 * drops them), like debug_pagealloc. slab_debug= on the command line
 * decides either way.
 */
#ifdef DEBUG_MM
bool slab_debug = true;
#else
bool slab_debug;
#endif
CMDLINE_BOOL("slab_debug", slab_debug,
	     "slab red zones, poisoning and double-free checks (default: on in DEBUG_MM builds)");

atomic_long_t slab_errors;

LIST_HEAD(slab_caches);
DEFINE_SPINLOCK(slab_caches_lock);

/* The cache that struct kmem_cache objects themselves come from. */
static struct kmem_cache kmem_cache_boot;
static bool slab_up;

bool slab_is_available(void)
{
	return slab_up;
}

/* ---- layout ---- */

/*
 * The smallest slab order that wastes at most 1/8 of the slab and holds at
 * least 4 objects; failing that, the order that wastes the least.
 */
static int choose_order(unsigned int slot, unsigned int *objects)
{
	int best = -1;
	unsigned long best_waste = 0;

	for (unsigned int order = 0; order <= SLAB_MAX_ORDER; order++) {
		unsigned long bytes = PAGE_SIZE << order;
		unsigned long n = bytes / slot, waste = bytes - n * slot;

		if (!n)
			continue;
		if (n >= 4 && waste * 8 <= bytes) {
			*objects = (unsigned int)n;
			return (int)order;
		}
		/* Compare waste as a fraction of the slab: waste/bytes. */
		if (best < 0 || waste * (PAGE_SIZE << best) < best_waste * bytes) {
			best = (int)order;
			best_waste = waste;
		}
	}
	if (best >= 0)
		*objects = (unsigned int)((PAGE_SIZE << best) / slot);
	return best;
}

int kmem_cache_setup(struct kmem_cache *s, const char *name, unsigned int size,
		     unsigned int align, slab_flags_t flags)
{
	unsigned int slot;
	int order;

	if (!align)
		align = sizeof(void *);
	if (flags & SLAB_HWCACHE_ALIGN)
		align = max(align, 64u);
	if (!size || size > (PAGE_SIZE << SLAB_MAX_ORDER) ||
	    (align & (align - 1)) || align < sizeof(void *) ||
	    align > KMALLOC_MAX_CACHE_SIZE)
		return -1;

	memset(s, 0, sizeof(*s));
	strscpy(s->name, name ? name : "(unnamed)", sizeof(s->name));
	s->object_size = size;
	s->align = align;
	s->flags = flags;
	s->debug = slab_debug || (flags & (SLAB_RED_ZONE | SLAB_POISON));
	if (s->debug) {
		s->red_left = ALIGN_UP((unsigned int)SLAB_RED_ZONE_MIN, align);
		s->track_offset = ALIGN_UP(s->red_left + size + SLAB_RED_ZONE_MIN,
					   (unsigned int)sizeof(void *));
		s->free_offset = s->track_offset + offsetof(struct slab_track, next);
		slot = ALIGN_UP(s->track_offset + (unsigned int)sizeof(struct slab_track), align);
	} else {
		slot = ALIGN_UP(max(size, (unsigned int)sizeof(void *)), align);
	}
	order = choose_order(slot, &s->objects);
	if (order < 0)
		return -1;
	s->size = slot;
	s->order = (unsigned int)order;
	for (int nid = 0; nid < MAX_NUMNODES; nid++) {
		struct kmem_cache_node *n = &s->node[nid];

		spin_lock_init(&n->lock);
		INIT_LIST_HEAD(&n->partial);
		INIT_LIST_HEAD(&n->full);
	}
	spin_lock(&slab_caches_lock);
	list_add_tail(&s->list, &slab_caches);
	spin_unlock(&slab_caches_lock);
	return 0;
}

/* ---- slabs ---- */

static void account_slab(struct page *slab, unsigned int order, long sign)
{
	atomic_long_add(sign * (1L << order), &NODE_DATA(page_to_nid(slab))->stat[NR_SLAB_PAGES]);
}

/* A new slab with every object on its freelist, in address order. */
static struct page *new_slab(struct kmem_cache *s, gfp_t gfp, int nid)
{
	gfp_t pgfp = gfp & (__GFP_THISNODE | __GFP_NOWARN | __GFP_FAIL);
	struct page *slab;
	char *base;
	void *prev = NULL;

	if (s->order)
		pgfp |= __GFP_COMP;
	slab = alloc_pages_node(nid, pgfp, s->order);
	if (!slab)
		return NULL;
	base = page_address(slab);
	/* Build the list back to front so that it runs in address order. */
	for (unsigned int i = s->objects; i-- > 0;) {
		void *obj = base + (size_t)i * s->size + s->red_left;

		if (s->debug)
			slab_debug_init_slot(s, obj);
		set_freeptr(s, obj, prev);
		prev = obj;
	}
	INIT_LIST_HEAD(&slab->slab_list);
	slab->slab_cache = s;
	slab->freelist = prev;
	slab->inuse = 0;
	slab->objects = s->objects;
	SetPageSlab(slab);
	account_slab(slab, s->order, 1);
	return slab;
}

/* Give a slab (off every list) back to the page allocator. */
static void discard_slab(struct kmem_cache *s, struct page *slab)
{
	if (s->debug)
		slab_debug_check_slab(s, slab);
	account_slab(slab, s->order, -1);
	ClearPageSlab(slab);
	/* The slab fields share words with the page allocator's: clear them. */
	slab->slab_cache = NULL;
	slab->freelist = NULL;
	slab->inuse = 0;
	slab->objects = 0;
	INIT_LIST_HEAD(&slab->slab_list);
	__free_pages(slab, s->order);
}

/*
 * A debug check found the freelist pointing outside the slab: the free
 * objects behind it are lost. Count them as quarantined and make the slab
 * full, so that nothing follows the bad pointer. Node lock held.
 */
static void freelist_corrupted(struct kmem_cache *s, struct kmem_cache_node *n,
			       struct page *slab, void *obj)
{
	unsigned int lost = slab->objects - slab->inuse;

	slab_report(s, obj, "freelist corrupted", NULL);
	slab->freelist = NULL;
	slab->inuse += lost;
	n->inuse += lost;
	n->quarantined += lost;
}

/*
 * Take an object from a slab with a non-empty freelist, skipping (and
 * quarantining) damaged ones in debug mode. Node lock held. NULL when the
 * slab ran out of sound objects.
 */
static void *take_object(struct kmem_cache *s, struct kmem_cache_node *n,
			 struct page *slab, size_t req_size, unsigned long ip)
{
	void *obj;

	while ((obj = slab->freelist)) {
		const char *what;
		const u8 *bad = NULL;
		void *next = get_freeptr(s, obj);

		if (s->debug && next && obj_index(s, slab, next) < 0) {
			freelist_corrupted(s, n, slab, obj);
			return NULL;
		}
		slab->freelist = next;
		slab->inuse++;
		n->inuse++;
		what = s->debug ? slab_debug_check_alloc(s, obj, &bad) : NULL;
		if (!what) {
			if (s->debug)
				slab_debug_mark_alloc(s, obj, req_size, ip);
			return obj;
		}
		/* Damaged while free: report it, set it aside, try the next. */
		track_of(s, obj)->state = SLAB_OBJ_QUARANTINED;
		n->quarantined++;
		slab_report(s, obj, what, bad);
	}
	return NULL;
}

/* After taking objects: a slab whose freelist ran dry goes to the full list. */
static void settle_slab(struct kmem_cache_node *n, struct page *slab)
{
	if (!slab->freelist) {
		list_del(&slab->slab_list);
		list_add(&slab->slab_list, &n->full);
	}
}

/* Step 1: an object from nid's partial slabs or its cached empty slab. */
static void *alloc_from_node(struct kmem_cache *s, int nid, size_t req_size,
			     unsigned long ip)
{
	struct kmem_cache_node *n = &s->node[nid];
	unsigned long flags;
	void *obj = NULL;

	spin_lock_irqsave(&n->lock, flags);
	while (!obj) {
		struct page *slab = list_first_entry_or_null(&n->partial, struct page, slab_list);

		if (!slab && n->empty) {
			slab = n->empty;
			n->empty = NULL;
			list_add(&slab->slab_list, &n->partial);
		}
		if (!slab)
			break;
		obj = take_object(s, n, slab, req_size, ip);
		settle_slab(n, slab);
	}
	spin_unlock_irqrestore(&n->lock, flags);
	return obj;
}

/* Put a new slab on its node's lists and take the first object from it. */
static void *alloc_from_new_slab(struct kmem_cache *s, struct page *slab,
				 size_t req_size, unsigned long ip)
{
	struct kmem_cache_node *n = &s->node[page_to_nid(slab)];
	unsigned long flags;
	void *obj;

	spin_lock_irqsave(&n->lock, flags);
	n->nr_slabs++;
	list_add(&slab->slab_list, &n->partial);
	obj = take_object(s, n, slab, req_size, ip);
	settle_slab(n, slab);
	spin_unlock_irqrestore(&n->lock, flags);
	return obj;
}

/* Step 3: partial slabs of the other nodes, in home's fallback order. */
static void *alloc_from_other_nodes(struct kmem_cache *s, int home, size_t req_size,
				    unsigned long ip)
{
	const struct numa_node *h = &numa_nodes[home];

	for (int i = 0; i < h->nr_fallback; i++) {
		int nid = h->fallback[i];
		void *obj;

		if (nid == home)
			continue;
		/* Kernel objects stay off the slow tier while DRAM has room. */
		if (numa_nodes[nid].tier == MEM_TIER_SLOW && h->tier != MEM_TIER_SLOW)
			continue;
		obj = alloc_from_node(s, nid, req_size, ip);
		if (obj)
			return obj;
	}
	return NULL;
}

int slab_home_node(int nid, gfp_t gfp)
{
	if (nid == NUMA_NO_NODE)
		return numa_mem_id_of(numa_node_id());
	if (!node_online(nid)) {
		pr_warn("allocation for offline node %d; using the local node\n", nid);
		dump_stack();
		return numa_mem_id_of(numa_node_id());
	}
	if (gfp & __GFP_THISNODE)
		return nid;
	return numa_mem_id_of(nid);
}

void *slab_alloc_node(struct kmem_cache *s, gfp_t gfp, int nid, size_t req_size,
		      unsigned long ip)
{
	bool strict = gfp & __GFP_THISNODE;
	int home = slab_home_node(nid, gfp);
	struct page *slab;
	void *obj;

	if (home < 0 || home >= MAX_NUMNODES)
		return NULL;
	obj = alloc_from_node(s, home, req_size, ip);
	while (!obj) {
		/* A fresh slab may be used up by quarantined objects: loop. */
		slab = new_slab(s, gfp | __GFP_THISNODE | (strict ? 0 : __GFP_NOWARN), home);
		if (!slab && !strict) {
			obj = alloc_from_other_nodes(s, home, req_size, ip);
			if (obj)
				break;
			slab = new_slab(s, gfp, home);
		}
		if (!slab)
			return NULL;
		obj = alloc_from_new_slab(s, slab, req_size, ip);
	}
	if (gfp & __GFP_ZERO)
		memset(obj, 0, s->debug ? req_size : s->object_size);
	return obj;
}

void slab_free(struct kmem_cache *s, struct page *slab, void *obj, unsigned long ip)
{
	struct kmem_cache_node *n = &s->node[page_to_nid(slab)];
	struct page *discard = NULL;
	const char *what = NULL;
	const u8 *bad = NULL;
	unsigned long flags;
	bool was_full;

	spin_lock_irqsave(&n->lock, flags);
	if (slab->freelist == obj) {
		/* Caught even without debug: the object is the freelist head. */
		what = "double free";
	} else if (s->debug) {
		struct slab_track *t = track_of(s, obj);

		if (t->state == SLAB_OBJ_FREE) {
			what = "double free";
		} else if (t->state == SLAB_OBJ_QUARANTINED) {
			what = "free of a quarantined object";
		} else {
			what = t->state == SLAB_OBJ_ALLOCATED ?
			       slab_debug_check_free(s, obj, &bad) : "object state corrupted";
			if (what) {
				/* Damaged: keep it out of circulation for good. */
				t->state = SLAB_OBJ_QUARANTINED;
				t->free_ip = ip;
				n->quarantined++;
			}
		}
	}
	if (what) {
		spin_unlock_irqrestore(&n->lock, flags);
		slab_report(s, obj, what, bad);
		return;
	}
	if (s->debug)
		slab_debug_mark_free(s, obj, ip);
	was_full = !slab->freelist;
	set_freeptr(s, obj, slab->freelist);
	slab->freelist = obj;
	slab->inuse--;
	n->inuse--;
	if (!slab->inuse) {
		list_del(&slab->slab_list);
		if (!n->empty) {
			n->empty = slab;
		} else {
			n->nr_slabs--;
			discard = slab;
		}
	} else if (was_full) {
		list_del(&slab->slab_list);
		list_add(&slab->slab_list, &n->partial);
	}
	spin_unlock_irqrestore(&n->lock, flags);
	if (discard)
		discard_slab(s, discard);
}

/* ---- the cache API ---- */

void *kmem_cache_alloc_node(struct kmem_cache *s, gfp_t gfp, int nid)
{
	return slab_alloc_node(s, gfp, nid, s->object_size, _RET_IP_);
}

void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp)
{
	return slab_alloc_node(s, gfp, NUMA_NO_NODE, s->object_size, _RET_IP_);
}

void kmem_cache_free(struct kmem_cache *s, void *p)
{
	struct page *slab;

	if (!p)
		return;
	slab = slab_virt_to_head(p);
	if (!slab || !PageSlab(slab)) {
		slab_report_invalid_free(s, p, "not slab memory");
		return;
	}
	if (slab->slab_cache != s) {
		slab_report_invalid_free(s, p, "the object belongs to another cache");
		return;
	}
	if (obj_index(s, slab, p) < 0) {
		slab_report_invalid_free(s, p, "not the start of an object");
		return;
	}
	slab_free(s, slab, p, _RET_IP_);
}

struct kmem_cache *kmem_cache_create(const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags)
{
	struct kmem_cache *s = NULL;

	if (slab_up)
		s = kmem_cache_alloc(&kmem_cache_boot, GFP_KERNEL);
	else
		pr_err("kmem_cache_create %s: before kmem_cache_init\n", name ? name : "(unnamed)");
	if (s && kmem_cache_setup(s, name, size, align, flags)) {
		pr_err("kmem_cache_create %s: bad size %u or align %u\n",
		       name ? name : "(unnamed)", size, align);
		kmem_cache_free(&kmem_cache_boot, s);
		s = NULL;
	}
	if (!s && (flags & SLAB_PANIC))
		panic("kmem_cache_create: cannot create cache %s", name ? name : "(unnamed)");
	return s;
}

/* Take every slab off node n's lists into *out (a list); lock held. */
static void drain_node(struct kmem_cache_node *n, struct list_head *out)
{
	struct page *slab, *tmp;

	list_for_each_entry_safe(slab, tmp, &n->partial, slab_list) {
		list_del(&slab->slab_list);
		list_add(&slab->slab_list, out);
	}
	list_for_each_entry_safe(slab, tmp, &n->full, slab_list) {
		list_del(&slab->slab_list);
		list_add(&slab->slab_list, out);
	}
	if (n->empty) {
		list_add(&n->empty->slab_list, out);
		n->empty = NULL;
	}
	n->nr_slabs = 0;
	n->inuse = 0;
	n->quarantined = 0;
}

void kmem_cache_destroy(struct kmem_cache *s)
{
	struct kmem_cache_stats st;
	struct page *slab, *tmp;
	LIST_HEAD(slabs);

	if (!s)
		return;
	if (s->is_static) {
		pr_err("kmem_cache_destroy %s: a boot cache; refused\n", s->name);
		dump_stack();
		return;
	}
	kmem_cache_get_stats(s, NUMA_NO_NODE, &st);
	if (st.objects_inuse) {
		pr_err("kmem_cache_destroy %s: %lu objects still allocated; not destroyed\n",
		       s->name, st.objects_inuse);
		dump_stack();
		return;
	}
	if (st.quarantined)
		pr_warn("kmem_cache_destroy %s: dropping %lu quarantined objects\n",
			s->name, st.quarantined);
	spin_lock(&slab_caches_lock);
	list_del(&s->list);
	spin_unlock(&slab_caches_lock);
	for (int nid = 0; nid < MAX_NUMNODES; nid++) {
		unsigned long flags;

		spin_lock_irqsave(&s->node[nid].lock, flags);
		drain_node(&s->node[nid], &slabs);
		spin_unlock_irqrestore(&s->node[nid].lock, flags);
	}
	list_for_each_entry_safe(slab, tmp, &slabs, slab_list) {
		list_del(&slab->slab_list);
		discard_slab(s, slab);
	}
	kmem_cache_free(&kmem_cache_boot, s);
}

int kmem_cache_shrink(struct kmem_cache *s)
{
	for (int nid = 0; nid < MAX_NUMNODES; nid++) {
		struct kmem_cache_node *n = &s->node[nid];
		struct page *slab;
		unsigned long flags;

		spin_lock_irqsave(&n->lock, flags);
		slab = n->empty;
		n->empty = NULL;
		if (slab)
			n->nr_slabs--;
		spin_unlock_irqrestore(&n->lock, flags);
		if (slab)
			discard_slab(s, slab);
	}
	return 0;
}

void slab_shrink_all(void)
{
	struct kmem_cache *s;

	spin_lock(&slab_caches_lock);
	list_for_each_entry(s, &slab_caches, list)
		kmem_cache_shrink(s);
	spin_unlock(&slab_caches_lock);
}

unsigned int kmem_cache_size(struct kmem_cache *s)
{
	return s->object_size;
}

const char *kmem_cache_name(struct kmem_cache *s)
{
	return s->name;
}

void kmem_cache_get_stats(struct kmem_cache *s, int nid, struct kmem_cache_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->objects_per_slab = s->objects;
	st->order = s->order;
	st->slot_size = s->size;
	st->debug = s->debug;
	for (int i = 0; i < MAX_NUMNODES; i++) {
		struct kmem_cache_node *n = &s->node[i];
		unsigned long flags;

		if (nid != NUMA_NO_NODE && nid != i)
			continue;
		spin_lock_irqsave(&n->lock, flags);
		st->slabs += n->nr_slabs;
		st->objects_inuse += n->inuse - n->quarantined;
		st->quarantined += n->quarantined;
		spin_unlock_irqrestore(&n->lock, flags);
	}
	st->slab_pages = st->slabs << s->order;
	st->objects_total = st->slabs * s->objects;
}

/* ---- boot and statistics ---- */

void kmem_cache_init(void)
{
	if (slab_up)
		return;
	if (kmem_cache_setup(&kmem_cache_boot, "kmem_cache", sizeof(struct kmem_cache),
			     0, SLAB_HWCACHE_ALIGN))
		panic("kmem_cache_init: cannot set up the kmem_cache cache");
	kmem_cache_boot.is_static = true;
	kmalloc_init_caches();
	slab_up = true;
	pr_info("%d kmalloc caches (%u..%u bytes), larger sizes from the page allocator; debug checks %s\n",
		NR_KMALLOC_CACHES, KMALLOC_MIN_SIZE, KMALLOC_MAX_CACHE_SIZE,
		slab_debug ? "on" : "off");
}

void slab_print_stats(void)
{
	struct kmem_cache *s;

	pr_info("%-16s %6s %6s %5s %6s %7s %9s %6s\n", "cache", "objsz", "slot",
		"order", "per", "slabs", "inuse", "quar");
	spin_lock(&slab_caches_lock);
	list_for_each_entry(s, &slab_caches, list) {
		struct kmem_cache_stats st;

		kmem_cache_get_stats(s, NUMA_NO_NODE, &st);
		if (!st.slabs && !st.objects_inuse)
			continue;
		pr_info("%-16s %6u %6u %5u %6u %7lu %9lu %6lu\n", s->name, s->object_size,
			s->size, s->order, s->objects, st.slabs, st.objects_inuse,
			st.quarantined);
	}
	spin_unlock(&slab_caches_lock);
	for (int nid = 0; nid < MAX_NUMNODES; nid++) {
		unsigned long pages = node_page_state(nid, NR_SLAB_PAGES);

		if (node_online(nid))
			pr_info("node %d: %lu slab pages (%lu KiB)\n", nid, pages,
				pages * (PAGE_SIZE / 1024));
	}
	pr_info("%ld errors detected; debug checks %s\n", atomic_long_read(&slab_errors),
		slab_debug ? "on" : "off");
}
