/*
 * Host tests of the slab allocator (mm/slab.c, mm/kmalloc.c,
 * mm/slab_debug.c) on the host arena's page allocator, under ASan and
 * UBSan: every size class, node placement, the debug checks, caches and
 * accounting, a seeded random sequence of alloc/free with content checks
 * (SLAB_SEED=<n> replays one, SLAB_OPS=<n> sets its length), and threads
 * freeing each other's objects.
 */
#include <pthread.h>
#include "ktap.h"
#include "../lib/random.h"
#include "host_setup.h"
#include <quire/mm.h>
#include <quire/numa.h>
#include <quire/percpu.h>
#include <quire/printk.h>
#include <quire/slab.h>
#include <quire/string.h>

/* ---- the machine ---- */

static void setup(void)
{
	/* numa3 scaled down: nodes 0 and 1 DRAM, 2 slow; 64 MiB each. */
	if (host_setup(64, 0, 0))
		kmem_cache_init();	/* mm_core_init() created the caches: a no-op */
}

/* ---- helpers ---- */

static int nid_of(const void *p)
{
	return page_to_nid(virt_to_page(p));
}

static struct page *head_of(const void *p)
{
	return compound_head(virt_to_page(p));
}

static bool all_bytes(const void *p, u8 c, size_t n)
{
	const u8 *b = p;

	for (size_t i = 0; i < n; i++)
		if (b[i] != c)
			return false;
	return true;
}

static long errors_now(void)
{
	return atomic_long_read(&slab_errors);
}

static const size_t class_sizes[] = {
	8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192,
};

/* ---- cases ---- */

HOST_TEST(every_size_class)
{
	static const size_t odd[] = { 1, 7, 9, 100, 8191, 8193, 3UL << 20 };
	long errors;

	setup();
	errors = errors_now();
	for (size_t i = 0; i < ARRAY_SIZE(class_sizes) + ARRAY_SIZE(odd); i++) {
		size_t size = i < ARRAY_SIZE(class_sizes) ? class_sizes[i]
							  : odd[i - ARRAY_SIZE(class_sizes)];
		size_t real = kmalloc_size_roundup(size);
		unsigned long align = size > KMALLOC_MAX_CACHE_SIZE ? PAGE_SIZE : real & -real;
		u8 *p = kmalloc(size, GFP_KERNEL);

		EXPECT_TRUE(p != NULL);
		if (!p)
			continue;
		EXPECT_EQ((uintptr_t)p % align, 0);
		EXPECT_EQ(ksize(p), real);
		EXPECT_GE(ksize(p), size);
		memset(p, 0x5a, size);
		EXPECT_TRUE(all_bytes(p, 0x5a, size));
		kfree(p);
	}
	EXPECT_EQ(kmalloc_size_roundup(97), 128);
	EXPECT_EQ(kmalloc_size_roundup(129), 192);
	EXPECT_EQ(kmalloc_size_roundup(8193), 4 * PAGE_SIZE);
	EXPECT_EQ(errors_now(), errors);
}

HOST_TEST(objects_are_distinct)
{
	static u8 *p[128];

	setup();
	for (size_t c = 0; c < ARRAY_SIZE(class_sizes); c++) {
		size_t size = class_sizes[c];

		for (int i = 0; i < 128; i++) {
			p[i] = kmalloc(size, GFP_KERNEL);
			memset(p[i], i, size);
		}
		for (int i = 0; i < 128; i++) {
			EXPECT_TRUE(all_bytes(p[i], (u8)i, size));
			for (int j = i + 1; j < 128; j++)
				EXPECT_TRUE(p[i] + size <= p[j] || p[j] + size <= p[i]);
		}
		for (int i = 0; i < 128; i++)
			kfree(p[i]);
	}
}

HOST_TEST(kmalloc_node_places_objects)
{
	static const size_t sizes[] = { 8, 192, 4096, 8192, 8193, 1UL << 20 };
	int nid;

	setup();
	for_each_online_node(nid) {
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
			void *p = kmalloc_node(sizes[i], GFP_KERNEL, nid);
			void *q = kmalloc_node(sizes[i], __GFP_THISNODE | __GFP_NOWARN, nid);

			EXPECT_TRUE(p != NULL);
			if (p)
				EXPECT_EQ(nid_of(p), numa_mem_id_of(nid));
			if (node_has_memory(nid)) {
				EXPECT_TRUE(q != NULL);
				if (q)
					EXPECT_EQ(nid_of(q), nid);
			} else {
				EXPECT_TRUE(q == NULL);
			}
			kfree(p);
			kfree(q);
		}
	}
}

HOST_TEST(kzalloc_kcalloc_ksize)
{
	long errors;
	u8 *p;

	setup();
	errors = errors_now();
	p = kmalloc(300, GFP_KERNEL);
	memset(p, 0xff, 300);
	kfree(p);
	p = kzalloc(300, GFP_KERNEL);
	EXPECT_TRUE(all_bytes(p, 0, 300));
	EXPECT_EQ(ksize(p), 512);
	memset(p, 1, ksize(p));		/* ksize grants the whole class */
	kfree(p);
	p = kcalloc(1000, 20, GFP_KERNEL);
	EXPECT_TRUE(p && all_bytes(p, 0, 20000));
	kfree(p);
	EXPECT_TRUE(kcalloc(SIZE_MAX / 2 + 1, 2, GFP_KERNEL) == NULL);
	EXPECT_TRUE(kmalloc_array(SIZE_MAX / 8, 16, GFP_KERNEL) == NULL);
	EXPECT_TRUE(kmalloc(KMALLOC_MAX_SIZE + 1, __GFP_NOWARN) == NULL);
	EXPECT_PTR_EQ(kmalloc(0, GFP_KERNEL), ZERO_SIZE_PTR);
	kfree(ZERO_SIZE_PTR);
	kfree(NULL);
	EXPECT_EQ(ksize(NULL), 0);
	EXPECT_EQ(errors_now(), errors);
}

HOST_TEST(debug_checks_detect_and_continue)
{
	struct kmem_cache_stats st;
	struct kmem_cache *s;
	void *keeper, *q;
	long errors;
	u64 pos;
	u8 *p;

	setup();
	s = kmem_cache_create("host_dbg", 100, 0, SLAB_RED_ZONE | SLAB_POISON);
	EXPECT_TRUE(s != NULL);
	if (!s)
		return;
	errors = errors_now();
	pos = printk_log_pos();

	/* A fresh cache: both come from its first slab, and keeper keeps it. */
	keeper = kmem_cache_alloc(s, GFP_KERNEL);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	EXPECT_TRUE(head_of(p) == head_of(keeper));
	kmem_cache_free(s, p);
	kmem_cache_free(s, p);
	EXPECT_EQ(errors_now(), errors + 1);
	EXPECT_TRUE(printk_log_contains(pos, "slab: double free in host_dbg object"));

	p[99] = 0;				/* write after free */
	q = kmem_cache_alloc(s, GFP_KERNEL);
	EXPECT_TRUE(q != p);
	EXPECT_EQ(errors_now(), errors + 2);
	EXPECT_TRUE(printk_log_contains(pos, "slab: use-after-free write in host_dbg object"));
	EXPECT_TRUE(printk_log_contains(pos, "object+99"));

	((u8 *)q)[100] = 0;			/* one past the end */
	kmem_cache_free(s, q);
	EXPECT_EQ(errors_now(), errors + 3);
	EXPECT_TRUE(printk_log_contains(pos, "slab: red zone overwritten in host_dbg object"));

	q = kmem_cache_alloc(s, GFP_KERNEL);
	((u8 *)q)[-1] = 0;			/* one before the start */
	kmem_cache_free(s, q);
	EXPECT_EQ(errors_now(), errors + 4);
	EXPECT_TRUE(printk_log_contains(pos, "left red zone"));

	q = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, (u8 *)q + 4);	/* not an object's start */
	EXPECT_EQ(errors_now(), errors + 5);
	EXPECT_TRUE(printk_log_contains(pos, "not the start of an object"));
	kmem_cache_free(s, q);
	EXPECT_EQ(errors_now(), errors + 5);

	kmem_cache_get_stats(s, NUMA_NO_NODE, &st);
	EXPECT_EQ(st.quarantined, 3);
	EXPECT_EQ(st.objects_inuse, 1);
	kmem_cache_free(s, keeper);
	kmem_cache_destroy(s);
	EXPECT_TRUE(printk_log_contains(pos, "dropping 3 quarantined objects"));
}

HOST_TEST(kmalloc_slack_is_red_zone)
{
	struct kmem_cache_stats st;
	long errors;
	u64 pos;
	u8 *p;

	setup();
	kmem_cache_get_stats(kmalloc_slab(8), NUMA_NO_NODE, &st);
	if (!st.debug)
		HOST_SKIP("kmalloc caches have no debug checks (slab_debug off)");
	errors = errors_now();
	pos = printk_log_pos();
	p = kmalloc(100, GFP_KERNEL);
	p[100] = 1;
	kfree(p);
	EXPECT_EQ(errors_now(), errors + 1);
	EXPECT_TRUE(printk_log_contains(pos, "slab: red zone overwritten in kmalloc-128 object"));
	EXPECT_TRUE(printk_log_contains(pos, "past the requested size"));
}

HOST_TEST(cache_create_destroy_and_counters)
{
	static void *objs[300];
	struct kmem_cache_stats st;
	struct kmem_cache *s;
	unsigned long before;
	u64 pos;
	int nid = numa_mem_id_of(numa_node_id());

	setup();
	EXPECT_TRUE(kmem_cache_create("bad", 40, 24, 0) == NULL);
	s = kmem_cache_create("host_obj", 200, 64, 0);
	EXPECT_TRUE(s != NULL);
	if (!s)
		return;
	before = node_page_state(nid, NR_SLAB_PAGES);
	for (int i = 0; i < 300; i++) {
		objs[i] = kmem_cache_alloc_node(s, GFP_KERNEL, nid);
		EXPECT_EQ((uintptr_t)objs[i] % 64, 0);
		EXPECT_EQ(nid_of(objs[i]), nid);
	}
	kmem_cache_get_stats(s, nid, &st);
	EXPECT_EQ(st.objects_inuse, 300);
	EXPECT_EQ(st.slabs, (300 + st.objects_per_slab - 1) / st.objects_per_slab);
	EXPECT_EQ(node_page_state(nid, NR_SLAB_PAGES), before + st.slab_pages);
	pos = printk_log_pos();
	kmem_cache_destroy(s);
	EXPECT_TRUE(printk_log_contains(pos, "300 objects still allocated"));
	for (int i = 0; i < 300; i++)
		kmem_cache_free(s, objs[i]);
	kmem_cache_get_stats(s, nid, &st);
	EXPECT_EQ(st.slabs, 1);			/* one empty slab kept */
	kmem_cache_destroy(s);
	EXPECT_EQ(node_page_state(nid, NR_SLAB_PAGES), before);
}

HOST_TEST(print_stats)
{
	void *p[10];
	u64 pos;

	setup();
	for (int i = 0; i < 10; i++)
		p[i] = kmalloc(1000, GFP_KERNEL);
	pos = printk_log_pos();
	slab_print_stats();
	EXPECT_TRUE(printk_log_contains(pos, "slab: cache "));
	EXPECT_TRUE(printk_log_contains(pos, "slab: kmalloc-1k "));
	EXPECT_TRUE(printk_log_contains(pos, "slab: node 0: "));
	EXPECT_TRUE(printk_log_contains(pos, "errors detected"));
	for (int i = 0; i < 10; i++)
		kfree(p[i]);
}

/* ---- the random sequence ---- */

#define NR_SLOTS 1024

struct slot {
	u8 *p;
	size_t size;
	u8 pat;
	int nid;
	bool zeroed;			/* from kzalloc: must read as zeroes */
	struct kmem_cache *cache;	/* NULL: kmalloc */
};

static struct slot slots[NR_SLOTS];

static u64 env_u64(const char *name, u64 def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static size_t random_size(void)
{
	unsigned int r = (unsigned int)(rng() % 128);

	if (r < 80)
		return 1 + rng() % 256;
	if (r < 115)
		return 1 + rng() % 2048;
	if (r < 126)
		return 1 + rng() % 8192;
	return 8193 + rng() % (128 << 10);
}

static void random_alloc(struct slot *sl, struct kmem_cache **caches, int ncaches)
{
	int pick = (int)(rng() % 8);

	sl->nid = (int)(rng() % (u64)(nr_node_ids + 1)) - 1;
	if (sl->nid >= 0 && !node_online(sl->nid))
		sl->nid = NUMA_NO_NODE;
	sl->pat = (u8)rng();
	sl->cache = pick < ncaches ? caches[pick] : NULL;
	sl->zeroed = false;
	if (sl->cache) {
		sl->size = kmem_cache_size(sl->cache);
		sl->p = kmem_cache_alloc_node(sl->cache, GFP_KERNEL, sl->nid);
	} else {
		sl->size = random_size();
		sl->zeroed = rng() & 1;
		sl->p = sl->zeroed ? kzalloc_node(sl->size, GFP_KERNEL, sl->nid)
				   : kmalloc_node(sl->size, GFP_KERNEL, sl->nid);
	}
}

static void release(struct slot *sl, int *bad)
{
	if (!all_bytes(sl->p, sl->pat, sl->size))
		(*bad)++;
	if (sl->cache)
		kmem_cache_free(sl->cache, sl->p);
	else
		kfree(sl->p);
	sl->p = NULL;
}

HOST_TEST(random_sequence)
{
	u64 seed = env_u64("SLAB_SEED", 0x5eed51ab);
	unsigned long ops = env_u64("SLAB_OPS", 200000);
	unsigned long slab_before[MAX_NUMNODES], free_before[MAX_NUMNODES];
	struct kmem_cache *caches[3];
	long errors;
	int nid, bad = 0, misplaced = 0, unzeroed = 0;

	setup();
	printf("    # random_sequence: seed %#llx, %lu ops (SLAB_SEED= and SLAB_OPS= to change)\n",
	       (unsigned long long)seed, ops);
	rng_state = seed ? seed : 1;
	slab_shrink_all();
	errors = errors_now();
	for_each_online_node(nid) {
		slab_before[nid] = node_page_state(nid, NR_SLAB_PAGES);
		free_before[nid] = node_page_state(nid, NR_FREE_PAGES);
	}
	/* After the snapshot: their struct kmem_cache slab goes when they do. */
	caches[0] = kmem_cache_create("rand_24", 24, 0, 0);
	caches[1] = kmem_cache_create("rand_600", 600, 0, SLAB_HWCACHE_ALIGN);
	caches[2] = kmem_cache_create("rand_5000", 5000, 0, 0);
	for (unsigned long op = 0; op < ops; op++) {
		struct slot *sl = &slots[rng() % NR_SLOTS];

		if (sl->p) {
			release(sl, &bad);
			continue;
		}
		random_alloc(sl, caches, 3);
		if (!sl->p) {
			HOST_FAIL("op %lu: allocation of %zu bytes on node %d failed", op,
				  sl->size, sl->nid);
			break;
		}
		if (sl->nid != NUMA_NO_NODE && nid_of(sl->p) != numa_mem_id_of(sl->nid))
			misplaced++;
		if (!sl->cache && ksize(sl->p) < sl->size)
			HOST_FAIL("op %lu: ksize %zu < %zu", op, ksize(sl->p), sl->size);
		if (sl->zeroed && !all_bytes(sl->p, 0, sl->size))
			unzeroed++;
		memset(sl->p, sl->pat, sl->size);
	}
	for (int i = 0; i < NR_SLOTS; i++)
		if (slots[i].p)
			release(&slots[i], &bad);
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(misplaced, 0);
	EXPECT_EQ(unzeroed, 0);
	EXPECT_EQ(errors_now(), errors);
	for (int i = 0; i < 3; i++)
		kmem_cache_destroy(caches[i]);
	slab_shrink_all();
	for_each_online_node(nid) {
		EXPECT_EQ(node_page_state(nid, NR_SLAB_PAGES), slab_before[nid]);
		EXPECT_EQ(node_page_state(nid, NR_FREE_PAGES), free_before[nid]);
	}
	EXPECT_EQ(mm_verify(), 0);
}

/* ---- threads ---- */

#define NR_THREADS 4
#define THREAD_OPS 25000
#define NR_MAILBOX 64

/* Objects handed between threads: freed by a thread that did not allocate them. */
static void *mailbox[NR_MAILBOX];
static int thread_bad;

static void *thread_main(void *arg)
{
	u64 state = 0x9e3779b97f4a7c15ULL * ((uintptr_t)arg + 1);
	u8 *own[64] = { 0 };
	struct percpu cpu = { .self = &cpu, .cpu = (int)(uintptr_t)arg + 1, .online = true };

	host_this_cpu = &cpu;	/* a CPU of its own: its preempt count, its lock records */

	for (int op = 0; op < THREAD_OPS; op++) {
		int i;

		xorshift64(&state);
		i = (int)(state % 64);
		if (own[i]) {
			if (own[i][0] != (u8)i || own[i][15] != (u8)i)
				__atomic_add_fetch(&thread_bad, 1, __ATOMIC_RELAXED);
			/* Every fourth object goes to the mailbox for another thread. */
			if ((state >> 8) % 4 == 0)
				own[i] = __atomic_exchange_n(&mailbox[(state >> 16) % NR_MAILBOX],
							     own[i], __ATOMIC_ACQ_REL);
			kfree(own[i]);
			own[i] = NULL;
		} else {
			int nid = (int)((state >> 24) % (u64)nr_node_ids);

			own[i] = kmalloc_node(16 + (state >> 32) % 2000, GFP_KERNEL, nid);
			memset(own[i], i, 16);
		}
	}
	for (int i = 0; i < 64; i++)
		kfree(own[i]);
	return NULL;
}

HOST_TEST(threads_free_each_others_objects)
{
	unsigned long slab_before[MAX_NUMNODES];
	pthread_t th[NR_THREADS];
	long errors;
	int nid;

	setup();
	slab_shrink_all();
	errors = errors_now();
	for_each_online_node(nid)
		slab_before[nid] = node_page_state(nid, NR_SLAB_PAGES);
	for (long i = 0; i < NR_THREADS; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)i);
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NR_MAILBOX; i++) {
		kfree(mailbox[i]);
		mailbox[i] = NULL;
	}
	EXPECT_EQ(thread_bad, 0);
	EXPECT_EQ(errors_now(), errors);
	slab_shrink_all();
	for_each_online_node(nid)
		EXPECT_EQ(node_page_state(nid, NR_SLAB_PAGES), slab_before[nid]);
	EXPECT_EQ(mm_verify(), 0);
}

HOST_TEST_MAIN(host_slab,
	       HOST_CASE(every_size_class),
	       HOST_CASE(objects_are_distinct),
	       HOST_CASE(kmalloc_node_places_objects),
	       HOST_CASE(kzalloc_kcalloc_ksize),
	       HOST_CASE(debug_checks_detect_and_continue),
	       HOST_CASE(kmalloc_slack_is_red_zone),
	       HOST_CASE(cache_create_destroy_and_counters),
	       HOST_CASE(print_stats),
	       HOST_CASE(random_sequence),
	       HOST_CASE(threads_free_each_others_objects));
