/*
 * The buddy allocator on the real machine: placement per node, fallback by
 * distance, exhaustion, gigantic ranges, poisoning, bad input, and exact
 * accounting checked by mm_verify() after a stress run.
 */
#include <quire/ktest.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/list.h>

static unsigned long free_pages_on(int nid)
{
	return node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
}

static void each_node_gets_its_own_pages(struct ktest *t)
{
	int nid;

	for_each_online_node(nid) {
		if (!node_has_memory(nid))
			continue;
		for (unsigned int order = 0; order <= MAX_PAGE_ORDER; order++) {
			struct folio *f = folio_alloc(__GFP_THISNODE, order, nid);

			KASSERT_TRUE(t, f != NULL);
			KEXPECT_EQ(t, folio_nid(f), nid);
			KEXPECT_EQ(t, folio_order(f), order);
			KEXPECT_EQ(t, folio_nr_pages(f), 1UL << order);
			KEXPECT_EQ(t, folio_pfn(f) & ((1UL << order) - 1), 0);	/* aligned */
			KEXPECT_EQ(t, folio_ref_count(f), 1);
			KEXPECT_PTR_EQ(t, page_folio(folio_page(f, folio_nr_pages(f) - 1)), f);
			KEXPECT_PTR_EQ(t, virt_to_folio(folio_address(f)), f);
			folio_put(f);
		}
	}
	KEXPECT_EQ(t, mm_verify(), 0);
}

static void zeroed_on_request(struct ktest *t)
{
	struct page *p = alloc_pages(GFP_KERNEL, 2);
	const u8 *b;
	bool zero = true;

	KASSERT_TRUE(t, p != NULL);
	memset(page_address(p), 0x5a, 4 * PAGE_SIZE);
	__free_pages(p, 2);
	p = alloc_pages(__GFP_ZERO, 2);
	KASSERT_TRUE(t, p != NULL);
	b = page_address(p);
	for (unsigned long i = 0; i < 4 * PAGE_SIZE; i++)
		zero &= b[i] == 0;
	KEXPECT_TRUE(t, zero);
	__free_pages(p, 2);
}

/*
 * Free a page whose buddy we still hold (so it cannot merge and sits first
 * on the order-0 list), write into it, and allocate it again: the poison
 * check must notice.
 */
static void poison_catches_use_after_free(struct ktest *t)
{
	struct page *pages[64], *victim = NULL, *buddy = NULL, *again;
	unsigned long errors = page_alloc_errors;
	u64 pos = printk_log_pos();
	int nid = numa_mem_id_of(numa_node_id());
	bool saved = debug_pagealloc;

	debug_pagealloc = true;
	for (int i = 0; i < 64; i++)
		pages[i] = alloc_pages_node(nid, __GFP_THISNODE, 0);
	for (int i = 0; i < 64 && !victim; i++)
		for (int j = 0; j < 64; j++)
			if (pages[i] && pages[j] && (page_to_pfn(pages[i]) ^ 1) == page_to_pfn(pages[j])) {
				victim = pages[i];
				buddy = pages[j];
			}
	for (int i = 0; i < 64; i++)
		if (pages[i] && pages[i] != victim && pages[i] != buddy)
			__free_pages(pages[i], 0);
	/* The buddy stays allocated, so the victim cannot merge when freed. */
	KASSERT_TRUE(t, victim != NULL);
	__free_pages(victim, 0);
	((volatile u8 *)page_address(victim))[100] = 0x42;	/* use after free */
	again = alloc_pages_node(nid, __GFP_THISNODE, 0);
	debug_pagealloc = saved;
	KEXPECT_PTR_EQ(t, again, victim);
	KEXPECT_EQ(t, page_alloc_errors, errors + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "use after free"));
	if (again)
		__free_pages(again, 0);
	__free_pages(buddy, 0);
}

static void bad_requests_fail_cleanly(struct ktest *t)
{
	unsigned long before = free_pages_on(0);

	KEXPECT_TRUE(t, alloc_pages_node(0, __GFP_NOWARN, MAX_PAGE_ORDER + 1) == NULL);
	KEXPECT_TRUE(t, alloc_pages_node(MAX_NUMNODES + 3, __GFP_NOWARN, 0) == NULL);
	KEXPECT_TRUE(t, alloc_pages_node(-5, __GFP_NOWARN, 0) == NULL);
	KEXPECT_TRUE(t, alloc_pages_node(0, __GFP_FAIL | __GFP_NOWARN, 0) == NULL);
	KEXPECT_TRUE(t, alloc_contig_pages(3, __GFP_NOWARN, 0) == NULL);	/* not a power of two */
	KEXPECT_EQ(t, free_pages_on(0), before);
	KEXPECT_EQ(t, mm_verify(), 0);
}

/* Take every page of a node (largest blocks first), chained on lru. */
static unsigned long drain_node(int nid, struct list_head *held)
{
	unsigned long taken = 0;

	for (int order = MAX_PAGE_ORDER; order >= 0; order--) {
		struct page *p;

		while ((p = alloc_pages_node(nid, __GFP_THISNODE | __GFP_NOWARN, order))) {
			list_add(&p->lru, held);
			taken += 1UL << order;
		}
	}
	return taken;
}

static void release_all(struct list_head *held)
{
	struct page *p, *n;

	list_for_each_entry_safe(p, n, held, lru) {
		list_del(&p->lru);
		__free_pages(p, folio_order((struct folio *)p));
	}
}

/*
 * Fill the nodes one by one in CPU node 0's fallback order: this-node-only
 * then fails, and the next ordinary allocation comes from the next node in
 * the order, the slow tier last.
 */
static void fallback_follows_distance(struct ktest *t)
{
	const struct numa_node *n0 = &numa_nodes[numa_mem_id_of(cpu_to_node(0))];
	int order_seen[MAX_NUMNODES], nseen = 0;
	bool saved = debug_pagealloc;
	LIST_HEAD(held);

	if (n0->nr_fallback < 2)
		ktest_skip(t, "one node with memory");
	debug_pagealloc = false;	/* filling GiBs with poison is slow under TCG */
	for (;;) {
		struct page *p = alloc_pages_node(cpu_to_node(0), __GFP_NOWARN, 0);
		int nid;

		if (!p)
			break;
		nid = page_to_nid(p);
		list_add(&p->lru, &held);
		order_seen[nseen++] = nid;
		KASSERT_GE(t, drain_node(nid, &held), 0);
		KEXPECT_TRUE(t, alloc_pages_node(nid, __GFP_THISNODE | __GFP_NOWARN, 0) == NULL);
		KEXPECT_EQ(t, free_pages_on(nid), 0);
		if (nseen == MAX_NUMNODES)
			break;
	}
	release_all(&held);
	debug_pagealloc = saved;
	/* Kernel allocations visit DRAM nodes in fallback order, slow ones last. */
	KEXPECT_EQ(t, nseen, n0->nr_fallback);
	for (int i = 0, k = 0; i < n0->nr_fallback; i++) {
		int want = n0->fallback[i];

		if (numa_nodes[want].tier == MEM_TIER_SLOW)
			continue;
		KEXPECT_EQ(t, order_seen[k++], want);
	}
	for (int i = 1; i < nseen; i++)
		KEXPECT_FALSE(t, numa_nodes[order_seen[i - 1]].tier == MEM_TIER_SLOW &&
				 numa_nodes[order_seen[i]].tier == MEM_TIER_DRAM);
	KEXPECT_EQ(t, mm_verify(), 0);
}

static void gigantic_range(struct ktest *t)
{
	int nid = numa_mem_id_of(numa_node_id());
	unsigned long before = free_pages_on(nid);
	unsigned long nr = 1UL << 12;	/* 16 MiB; 1 GiB needs a node that large */
	struct page *p = alloc_contig_pages(nr, 0, nid);

	KASSERT_TRUE(t, p != NULL);
	KEXPECT_EQ(t, page_to_nid(p), nid);
	KEXPECT_EQ(t, page_to_pfn(p) & (nr - 1), 0);
	KEXPECT_EQ(t, folio_nr_pages((struct folio *)p), nr);
	KEXPECT_EQ(t, free_pages_on(nid), before - nr);
	KEXPECT_EQ(t, mm_verify(), 0);
	free_contig_range(page_to_pfn(p), nr);
	KEXPECT_EQ(t, free_pages_on(nid), before);
	if (numa_nodes[nid].present_bytes >= (2UL << 30)) {
		p = alloc_contig_pages(1UL << 18, 0, nid);
		KEXPECT_TRUE(t, p != NULL);
		if (p)
			free_contig_range(page_to_pfn(p), 1UL << 18);
	}
}

/* A seeded random mix of orders and nodes; everything comes back. */
static void stress_all_orders_exact_accounting(struct ktest *t)
{
	unsigned long before[MAX_NUMNODES];
	struct page *live[256] = { 0 };
	u64 seed = 0x5157495245ULL;	/* fixed: reproducible */
	int nid;

	for (nid = 0; nid < MAX_NUMNODES; nid++)
		before[nid] = free_pages_on(nid);
	for (int step = 0; step < 4000; step++) {
		unsigned int slot, order;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		slot = (seed >> 33) % 256;
		order = (seed >> 20) % (MAX_PAGE_ORDER + 1);
		nid = (int)((seed >> 10) % (u64)nr_node_ids);
		if (live[slot]) {
			__free_pages(live[slot], folio_order((struct folio *)live[slot]));
			live[slot] = NULL;
		} else if (node_online(nid)) {
			gfp_t gfp = ((seed >> 5) & 1 ? __GFP_MOVABLE : 0) | __GFP_NOWARN;

			live[slot] = alloc_pages_node(nid, gfp, order % 6);
		}
	}
	KEXPECT_EQ(t, mm_verify(), 0);
	for (int i = 0; i < 256; i++)
		if (live[i])
			__free_pages(live[i], folio_order((struct folio *)live[i]));
	for (nid = 0; nid < MAX_NUMNODES; nid++)
		KEXPECT_EQ(t, free_pages_on(nid), before[nid]);
	KEXPECT_EQ(t, mm_verify(), 0);
}

/* mm_verify must notice a broken invariant (so its silence means something). */
static void verify_notices_corruption(struct ktest *t)
{
	struct page *p = alloc_pages(GFP_KERNEL, 0);
	int problems;

	KASSERT_TRUE(t, p != NULL);
	atomic_set(&p->_refcount, 0);		/* an allocated frame now in no state */
	problems = mm_verify();
	atomic_set(&p->_refcount, 1);
	KEXPECT_GT(t, problems, 0);
	__free_pages(p, 0);
	KEXPECT_EQ(t, mm_verify(), 0);
}

KTEST_SUITE(page_alloc,
	    KTEST_CASE(each_node_gets_its_own_pages),
	    KTEST_CASE(zeroed_on_request),
	    KTEST_CASE(poison_catches_use_after_free),
	    KTEST_CASE(bad_requests_fail_cleanly),
	    KTEST_CASE(fallback_follows_distance),
	    KTEST_CASE(gigantic_range),
	    KTEST_CASE(stress_all_orders_exact_accounting),
	    KTEST_CASE(verify_notices_corruption));
