/*
 * The slab allocator on the real machine: every kmalloc size class, node
 * placement, kzalloc/kcalloc/ksize, the debug checks (each detection must be
 * counted and the kernel must go on), object caches, and exact page
 * accounting after a seeded stress run.
 */
#include <quire/ktest.h>
#include <quire/mm.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/slab.h>
#include <quire/string.h>
#include "../lib/random.h"

static const size_t class_sizes[] = {
	8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192,
};

static const size_t odd_sizes[] = {
	1, 7, 9, 100, 8191, 8193, 3UL << 20,
};

static void need_slab(struct ktest *t)
{
	if (!slab_is_available())
		ktest_skip(t, "slab allocator not initialised");
}

/* kmalloc's caches were built with the debug checks on. */
static void need_kmalloc_debug(struct ktest *t)
{
	struct kmem_cache_stats st;

	need_slab(t);
	kmem_cache_get_stats(kmalloc_slab(8), NUMA_NO_NODE, &st);
	if (!st.debug)
		ktest_skip(t, "kmalloc caches have no debug checks (slab_debug off)");
}

static struct page *head_of(const void *p)
{
	return compound_head(virt_to_page(p));
}

static int nid_of(const void *p)
{
	return page_to_nid(virt_to_page(p));
}

/* What kmalloc promises for a size: the class's alignment, or a page. */
static unsigned long align_for(size_t size)
{
	size_t real = kmalloc_size_roundup(size);

	return size > KMALLOC_MAX_CACHE_SIZE ? PAGE_SIZE : real & -real;
}

static bool all_bytes(const void *p, u8 c, size_t n)
{
	const u8 *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != c)
			return false;
	return true;
}

static void check_one_size(struct ktest *t, size_t size)
{
	u8 *p = kmalloc(size, GFP_KERNEL);

	KASSERT_TRUE(t, p != NULL);
	KEXPECT_EQ(t, (uintptr_t)p % align_for(size), 0);
	KEXPECT_GE(t, ksize(p), size);
	KEXPECT_EQ(t, ksize(p), kmalloc_size_roundup(size));
	memset(p, 0x5a, size);
	KEXPECT_TRUE(t, all_bytes(p, 0x5a, size));
	kfree(p);
}

static void every_size_class(struct ktest *t)
{
	long errors = atomic_long_read(&slab_errors);

	need_slab(t);
	for (size_t i = 0; i < ARRAY_SIZE(class_sizes); i++)
		check_one_size(t, class_sizes[i]);
	for (size_t i = 0; i < ARRAY_SIZE(odd_sizes); i++)
		check_one_size(t, odd_sizes[i]);
	KEXPECT_EQ(t, kmalloc_size_roundup(96), 96);
	KEXPECT_EQ(t, kmalloc_size_roundup(97), 128);
	KEXPECT_EQ(t, kmalloc_size_roundup(129), 192);
	KEXPECT_EQ(t, kmalloc_size_roundup(193), 256);
	KEXPECT_EQ(t, kmalloc_size_roundup(8193), 4 * PAGE_SIZE);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors);
}

#define NR_DISTINCT 64
static u8 *distinct[NR_DISTINCT];

/* Objects of one class never overlap, and writing one leaves the others alone. */
static void objects_are_distinct(struct ktest *t)
{
	need_slab(t);
	for (size_t c = 0; c < ARRAY_SIZE(class_sizes); c++) {
		size_t size = class_sizes[c];

		for (int i = 0; i < NR_DISTINCT; i++) {
			distinct[i] = kmalloc(size, GFP_KERNEL);
			KASSERT_TRUE(t, distinct[i] != NULL);
			memset(distinct[i], i, size);
		}
		for (int i = 0; i < NR_DISTINCT; i++) {
			KEXPECT_TRUE(t, all_bytes(distinct[i], (u8)i, size));
			for (int j = i + 1; j < NR_DISTINCT; j++)
				KEXPECT_TRUE(t, distinct[i] + size <= distinct[j] ||
						distinct[j] + size <= distinct[i]);
		}
		for (int i = 0; i < NR_DISTINCT; i++)
			kfree(distinct[i]);
	}
}

static void kmalloc_node_places_objects(struct ktest *t)
{
	static const size_t sizes[] = { 8, 192, 4096, 8192, 8193, 3UL << 20 };
	int nid, nodes = 0;

	need_slab(t);
	for_each_online_node(nid) {
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
			void *p = kmalloc_node(sizes[i], GFP_KERNEL, nid);
			void *q = kmalloc_node(sizes[i], __GFP_THISNODE | __GFP_NOWARN, nid);

			KASSERT_TRUE(t, p != NULL);
			/* A memoryless node's objects come from its nearest node with memory. */
			KEXPECT_EQ(t, nid_of(p), numa_mem_id_of(nid));
			if (node_has_memory(nid)) {
				KASSERT_TRUE(t, q != NULL);
				KEXPECT_EQ(t, nid_of(q), nid);
			} else {
				KEXPECT_TRUE(t, q == NULL);
			}
			kfree(p);
			kfree(q);
		}
		nodes++;
	}
	KEXPECT_GT(t, nodes, 0);
}

static void kzalloc_and_kcalloc_zero(struct ktest *t)
{
	static const size_t sizes[] = { 8, 100, 4096, 8192, 20000 };

	need_slab(t);
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		u8 *p = kmalloc(sizes[i], GFP_KERNEL);

		/* Dirty the memory first, so that zeroing is really tested. */
		KASSERT_TRUE(t, p != NULL);
		memset(p, 0xff, sizes[i]);
		kfree(p);
		p = kzalloc(sizes[i], GFP_KERNEL);
		KASSERT_TRUE(t, p != NULL);
		KEXPECT_TRUE(t, all_bytes(p, 0, sizes[i]));
		kfree(p);
		p = kcalloc(sizes[i] / 4, 4, GFP_KERNEL);
		KASSERT_TRUE(t, p != NULL);
		KEXPECT_TRUE(t, all_bytes(p, 0, sizes[i] / 4 * 4));
		kfree(p);
	}
}

static void kcalloc_overflow_and_limits(struct ktest *t)
{
	long errors = atomic_long_read(&slab_errors);

	need_slab(t);
	KEXPECT_TRUE(t, kcalloc(SIZE_MAX / 2 + 1, 2, GFP_KERNEL) == NULL);
	KEXPECT_TRUE(t, kcalloc(2, SIZE_MAX / 2 + 1, GFP_KERNEL) == NULL);
	KEXPECT_TRUE(t, kmalloc_array(SIZE_MAX, SIZE_MAX, GFP_KERNEL) == NULL);
	KEXPECT_TRUE(t, kmalloc(KMALLOC_MAX_SIZE + 1, __GFP_NOWARN) == NULL);
	KEXPECT_TRUE(t, kmalloc(1UL << 20, __GFP_FAIL | __GFP_NOWARN) == NULL);
	/* kmalloc(0) is not NULL but never usable; freeing it is a no-op. */
	KEXPECT_PTR_EQ(t, kmalloc(0, GFP_KERNEL), ZERO_SIZE_PTR);
	KEXPECT_PTR_EQ(t, kcalloc(0, 8, GFP_KERNEL), ZERO_SIZE_PTR);
	kfree(ZERO_SIZE_PTR);
	kfree(NULL);
	KEXPECT_EQ(t, ksize(NULL), 0);
	KEXPECT_EQ(t, ksize(ZERO_SIZE_PTR), 0);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors);
}

/* ksize hands the whole class to the caller: writing it all is no error. */
static void ksize_gives_the_class(struct ktest *t)
{
	long errors = atomic_long_read(&slab_errors);
	u8 *p;

	need_slab(t);
	p = kmalloc(100, GFP_KERNEL);
	KASSERT_TRUE(t, p != NULL);
	KEXPECT_EQ(t, ksize(p), 128);
	memset(p, 1, ksize(p));
	kfree(p);
	p = kmalloc(9000, GFP_KERNEL);
	KASSERT_TRUE(t, p != NULL);
	KEXPECT_EQ(t, ksize(p), 4 * PAGE_SIZE);
	memset(p, 1, ksize(p));
	kfree(p);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors);
}

/* ---- debug checks ---- */

#define NR_KEEP 64

/*
 * Two objects of size from one slab: the first keeps the slab from
 * emptying, so the second's slot stays the slab's freelist head once freed.
 * *extra collects objects allocated on the way (free them with free_extra).
 */
static u8 *alloc_pinned(size_t size, void **keeper, void **extra, int *nextra)
{
	void *prev = kmalloc(size, GFP_KERNEL);

	for (int i = 0; i < NR_KEEP && prev; i++) {
		void *p = kmalloc(size, GFP_KERNEL);

		if (p && head_of(p) == head_of(prev)) {
			*keeper = prev;
			return p;
		}
		extra[(*nextra)++] = prev;
		prev = p;
	}
	kfree(prev);
	return NULL;
}

static void free_extra(void **extra, int n)
{
	for (int i = 0; i < n; i++)
		kfree(extra[i]);
}

static void *extra[NR_KEEP];

static void red_zone_overwrite_detected(struct ktest *t)
{
	long errors;
	u64 pos;
	u8 *p;

	need_kmalloc_debug(t);
	/* One byte past an exact-size object: the right red zone. */
	errors = atomic_long_read(&slab_errors);
	pos = printk_log_pos();
	p = kmalloc(64, GFP_KERNEL);
	KASSERT_TRUE(t, p != NULL);
	p[64] = 0x78;
	kfree(p);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: red zone overwritten in kmalloc-64 object"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "right red zone"));

	/* One byte before: the left red zone. */
	pos = printk_log_pos();
	p = kmalloc(32, GFP_KERNEL);
	KASSERT_TRUE(t, p != NULL);
	p[-1] = 0x78;
	kfree(p);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 2);
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: red zone overwritten in kmalloc-32 object"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "left red zone"));

	/* Past what was asked for but inside the class: the kmalloc slack. */
	pos = printk_log_pos();
	p = kmalloc(100, GFP_KERNEL);
	KASSERT_TRUE(t, p != NULL);
	p[100] = 0x78;
	kfree(p);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 3);
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: red zone overwritten in kmalloc-128 object"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "past the requested size"));

	/* The kernel goes on: the class still works. */
	check_one_size(t, 64);
	check_one_size(t, 100);
}

static void double_free_detected(struct ktest *t)
{
	void *keeper = NULL, *a, *b;
	int nextra = 0;
	long errors;
	u64 pos;
	u8 *p;

	/* Caught with or without slab_debug: p is its slab's freelist head. */
	need_slab(t);
	p = alloc_pinned(96, &keeper, extra, &nextra);
	KASSERT_TRUE(t, p != NULL);
	errors = atomic_long_read(&slab_errors);
	pos = printk_log_pos();
	kfree(p);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors);
	kfree(p);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: double free in kmalloc-96 object"));
	/* The object went on the freelist once: two allocations are distinct. */
	a = kmalloc_node(96, GFP_KERNEL, nid_of(p));
	b = kmalloc_node(96, GFP_KERNEL, nid_of(p));
	KEXPECT_PTR_EQ(t, a, p);
	KEXPECT_PTR_NE(t, a, b);
	kfree(a);
	kfree(b);
	kfree(keeper);
	free_extra(extra, nextra);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 1);
}

static void use_after_free_write_detected(struct ktest *t)
{
	void *keeper = NULL, *q;
	struct kmem_cache_stats st;
	int nextra = 0;
	long errors;
	u64 pos;
	u8 *p;

	need_kmalloc_debug(t);
	p = alloc_pinned(192, &keeper, extra, &nextra);
	KASSERT_TRUE(t, p != NULL);
	kfree(p);
	errors = atomic_long_read(&slab_errors);
	pos = printk_log_pos();
	p[10] = 0x12;		/* the bug under test */
	/* p's slot is the head of its slab's freelist: the next allocation meets it. */
	q = kmalloc_node(192, GFP_KERNEL, nid_of(p));
	KASSERT_TRUE(t, q != NULL);
	KEXPECT_PTR_NE(t, q, p);	/* quarantined, never handed out */
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: use-after-free write in kmalloc-192 object"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "object+10"));
	kmem_cache_get_stats(kmalloc_slab(192), NUMA_NO_NODE, &st);
	KEXPECT_GE(t, st.quarantined, 1);
	kfree(q);
	kfree(keeper);
	free_extra(extra, nextra);
}

/* The same three checks in a cache that asked for debugging itself. */
static void debug_cache_catches_all_three(struct ktest *t)
{
	struct kmem_cache *s;
	struct kmem_cache_stats st;
	long errors;
	u8 *keep, *p, *q;
	u64 pos;

	need_slab(t);
	s = kmem_cache_create("slab_test_dbg", 48, 0, SLAB_RED_ZONE | SLAB_POISON);
	KASSERT_TRUE(t, s != NULL);
	errors = atomic_long_read(&slab_errors);
	pos = printk_log_pos();
	keep = kmem_cache_alloc(s, GFP_KERNEL);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	KASSERT_TRUE(t, keep && p && head_of(keep) == head_of(p));

	kmem_cache_free(s, p);
	kmem_cache_free(s, p);				/* double free */
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 1);
	p[0] = 1;					/* write after free */
	q = kmem_cache_alloc_node(s, GFP_KERNEL, nid_of(p));
	KEXPECT_PTR_NE(t, q, p);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 2);
	q[48] = 1;					/* overflow */
	kmem_cache_free(s, q);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 3);
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: double free in slab_test_dbg object"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: use-after-free write in slab_test_dbg object"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: red zone overwritten in slab_test_dbg object"));

	kmem_cache_get_stats(s, NUMA_NO_NODE, &st);
	KEXPECT_EQ(t, st.quarantined, 2);		/* p and q */
	KEXPECT_EQ(t, st.objects_inuse, 1);		/* keep */
	kmem_cache_free(s, keep);
	kmem_cache_destroy(s);				/* quarantined objects do not block it */
	KEXPECT_TRUE(t, printk_log_contains(pos, "dropping 2 quarantined objects"));
}

static int static_object;

static void invalid_free_reported(struct ktest *t)
{
	long errors;
	struct page *page;
	u8 *p;
	u64 pos;

	need_slab(t);
	errors = atomic_long_read(&slab_errors);
	pos = printk_log_pos();
	p = kmalloc(64, GFP_KERNEL);
	KASSERT_TRUE(t, p != NULL);
	kfree(p + 8);					/* inside an object */
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: invalid free in kmalloc-64 object"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "not the start of an object"));
	kfree(&static_object);				/* the kernel image */
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 2);
	page = alloc_pages(GFP_KERNEL, 0);		/* a page, not kmalloc */
	KASSERT_TRUE(t, page != NULL);
	kfree(page_address(page));
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 3);
	KEXPECT_TRUE(t, printk_log_contains(pos, "not from kmalloc"));
	__free_pages(page, 0);
	p[0] = 1;					/* still ours */
	kfree(p);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors + 3);
}

/* ---- caches ---- */

#define NR_CACHE_OBJS 100
static void *cache_objs[NR_CACHE_OBJS];

static void cache_create_and_destroy(struct ktest *t)
{
	struct kmem_cache_stats st;
	struct kmem_cache *s;
	u64 pos;

	need_slab(t);
	KEXPECT_TRUE(t, kmem_cache_create("bad_align", 40, 3, 0) == NULL);
	KEXPECT_TRUE(t, kmem_cache_create("zero", 0, 0, 0) == NULL);
	KEXPECT_TRUE(t, kmem_cache_create("huge", 1u << 20, 0, 0) == NULL);

	s = kmem_cache_create("slab_test_obj", 40, 0, SLAB_HWCACHE_ALIGN);
	KASSERT_TRUE(t, s != NULL);
	KEXPECT_EQ(t, kmem_cache_size(s), 40);
	KEXPECT_STREQ(t, kmem_cache_name(s), "slab_test_obj");
	for (int i = 0; i < NR_CACHE_OBJS; i++) {
		cache_objs[i] = kmem_cache_alloc(s, GFP_KERNEL);
		KASSERT_TRUE(t, cache_objs[i] != NULL);
		KEXPECT_EQ(t, (uintptr_t)cache_objs[i] % 64, 0);
		memset(cache_objs[i], i, 40);
	}
	kmem_cache_get_stats(s, NUMA_NO_NODE, &st);
	KEXPECT_EQ(t, st.objects_inuse, NR_CACHE_OBJS);
	KEXPECT_GE(t, st.objects_total, NR_CACHE_OBJS);
	KEXPECT_EQ(t, st.slabs, (NR_CACHE_OBJS + st.objects_per_slab - 1) / st.objects_per_slab);

	pos = printk_log_pos();
	kmem_cache_destroy(s);				/* refused: objects are live */
	KEXPECT_TRUE(t, printk_log_contains(pos, "100 objects still allocated"));
	for (int i = 0; i < NR_CACHE_OBJS; i++) {
		KEXPECT_TRUE(t, all_bytes(cache_objs[i], (u8)i, 40));
		kmem_cache_free(s, cache_objs[i]);
	}
	kmem_cache_get_stats(s, NUMA_NO_NODE, &st);
	KEXPECT_EQ(t, st.objects_inuse, 0);
	KEXPECT_LE(t, st.slabs, 1);			/* one empty slab kept */
	kmem_cache_shrink(s);
	kmem_cache_get_stats(s, NUMA_NO_NODE, &st);
	KEXPECT_EQ(t, st.slabs, 0);
	pos = printk_log_pos();
	kmem_cache_destroy(s);
	KEXPECT_FALSE(t, printk_log_contains(pos, "still allocated"));
}

/* NR_SLAB_PAGES follows a cache's slabs on the node they are on. */
static void slab_pages_counted_per_node(struct ktest *t)
{
	struct kmem_cache_stats st;
	struct kmem_cache *s;
	int nid;

	need_slab(t);
	s = kmem_cache_create("slab_test_cnt", 1000, 0, 0);
	KASSERT_TRUE(t, s != NULL);
	for_each_online_node(nid) {
		unsigned long before;
		void *p;

		if (!node_has_memory(nid))
			continue;
		before = node_page_state(nid, NR_SLAB_PAGES);
		p = kmem_cache_alloc_node(s, __GFP_THISNODE, nid);
		KASSERT_TRUE(t, p != NULL);
		KEXPECT_EQ(t, nid_of(p), nid);
		kmem_cache_get_stats(s, nid, &st);
		KEXPECT_EQ(t, st.slabs, 1);
		KEXPECT_EQ(t, st.objects_inuse, 1);
		KEXPECT_EQ(t, node_page_state(nid, NR_SLAB_PAGES), before + (1UL << st.order));
		kmem_cache_free(s, p);
		kmem_cache_shrink(s);
		KEXPECT_EQ(t, node_page_state(nid, NR_SLAB_PAGES), before);
	}
	kmem_cache_destroy(s);
}

static void stats_are_printed(struct ktest *t)
{
	void *p[10];
	u64 pos;

	need_slab(t);
	for (int i = 0; i < 10; i++)
		p[i] = kmalloc(1000, GFP_KERNEL);
	pos = printk_log_pos();
	slab_print_stats();
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: kmalloc-1k "));
	KEXPECT_TRUE(t, printk_log_contains(pos, "slab: node 0: "));
	KEXPECT_TRUE(t, printk_log_contains(pos, "errors detected"));
	for (int i = 0; i < 10; i++)
		kfree(p[i]);
}

/* ---- stress ---- */

#define NR_SLOTS 512
#define STRESS_OPS 20000

static struct {
	u8 *p;
	size_t size;
	u8 pat;
	int nid;
} slots[NR_SLOTS];

static size_t random_size(void)
{
	unsigned int r = (unsigned int)(rng() % 64);

	if (r < 40)
		return 1 + rng() % 256;
	if (r < 58)
		return 1 + rng() % 2048;
	if (r < 63)
		return 1 + rng() % 8192;
	return 8193 + rng() % (256 << 10);		/* large: 3..64 pages */
}

static int random_node(void)
{
	int nid = (int)(rng() % (u64)(nr_node_ids + 1)) - 1;

	return nid >= 0 && !node_online(nid) ? NUMA_NO_NODE : nid;
}

static void stress_returns_every_page(struct ktest *t)
{
	unsigned long slab_before[MAX_NUMNODES], free_before[MAX_NUMNODES];
	long errors = atomic_long_read(&slab_errors);
	u64 seed = 0x51ab5eedULL;
	int nid, misplaced = 0, bad = 0;

	need_slab(t);
	rng_state = seed;
	pr_info("slab_test: stress seed %#llx, %d ops\n", (unsigned long long)seed, STRESS_OPS);
	slab_shrink_all();
	for_each_online_node(nid) {
		slab_before[nid] = node_page_state(nid, NR_SLAB_PAGES);
		free_before[nid] = node_page_state(nid, NR_FREE_PAGES);
	}
	for (int op = 0; op < STRESS_OPS; op++) {
		int i = (int)(rng() % NR_SLOTS);

		if (slots[i].p) {
			if (!all_bytes(slots[i].p, slots[i].pat, slots[i].size))
				bad++;
			kfree(slots[i].p);
			slots[i].p = NULL;
			continue;
		}
		slots[i].size = random_size();
		slots[i].pat = (u8)rng();
		slots[i].nid = random_node();
		slots[i].p = kmalloc_node(slots[i].size, GFP_KERNEL, slots[i].nid);
		KASSERT_TRUE(t, slots[i].p != NULL);
		if (slots[i].nid != NUMA_NO_NODE &&
		    nid_of(slots[i].p) != numa_mem_id_of(slots[i].nid))
			misplaced++;
		memset(slots[i].p, slots[i].pat, slots[i].size);
	}
	for (int i = 0; i < NR_SLOTS; i++) {
		if (!slots[i].p)
			continue;
		if (!all_bytes(slots[i].p, slots[i].pat, slots[i].size))
			bad++;
		kfree(slots[i].p);
		slots[i].p = NULL;
	}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, misplaced, 0);
	KEXPECT_EQ(t, atomic_long_read(&slab_errors), errors);
	slab_shrink_all();
	for_each_online_node(nid) {
		KEXPECT_EQ(t, node_page_state(nid, NR_SLAB_PAGES), slab_before[nid]);
		KEXPECT_EQ(t, node_page_state(nid, NR_FREE_PAGES), free_before[nid]);
	}
	KEXPECT_EQ(t, mm_verify(), 0);
}

KTEST_SUITE(slab,
	    KTEST_CASE(every_size_class),
	    KTEST_CASE(objects_are_distinct),
	    KTEST_CASE(kmalloc_node_places_objects),
	    KTEST_CASE(kzalloc_and_kcalloc_zero),
	    KTEST_CASE(kcalloc_overflow_and_limits),
	    KTEST_CASE(ksize_gives_the_class),
	    KTEST_CASE(red_zone_overwrite_detected),
	    KTEST_CASE(double_free_detected),
	    KTEST_CASE(use_after_free_write_detected),
	    KTEST_CASE(debug_cache_catches_all_three),
	    KTEST_CASE(invalid_free_reported),
	    KTEST_CASE(cache_create_and_destroy),
	    KTEST_CASE(slab_pages_counted_per_node),
	    KTEST_CASE(stats_are_printed),
	    KTEST_CASE(stress_returns_every_page));
