/*
 * The page allocator on the host, under ASan and UBSan: the same mm/ code as
 * the kernel, on a simulated three-node machine (arch/host/mm.c).
 *
 * random_sequence runs seeded, reproducible alloc/free sequences of mixed
 * orders, nodes and flags, with injected failures, and checks mm_verify()
 * after every step. QUIRE_SEED=<n> replays a seed, QUIRE_OPS=<n> changes
 * the length (default 100000).
 */
#include "ktap.h"
#include "../lib/random.h"
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/numa.h>
#include "host_setup.h"
#include <quire/string.h>

static unsigned long env_number(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : dflt;
}

/* Free pages and free blocks per order right after boot, to compare against. */
static unsigned long boot_free[MAX_NUMNODES];
static unsigned long boot_blocks[MAX_NUMNODES][NR_PAGE_ORDERS];

static void setup_numa3(unsigned long mib)
{
	if (host_machine_init(mib, 0, 0))
		HOST_FAIL("host_mm_init failed");
	for (int nid = 0; nid < 3; nid++) {
		boot_free[nid] = node_page_state(nid, NR_FREE_PAGES);
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			boot_blocks[nid][o] = NODE_DATA(nid)->free_area[o].nr_free;
	}
}

/* Everything is back, and merged back into the same blocks. */
static void expect_as_booted(void)
{
	for (int nid = 0; nid < 3; nid++) {
		EXPECT_EQ(node_page_state(nid, NR_FREE_PAGES), boot_free[nid]);
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			EXPECT_EQ(NODE_DATA(nid)->free_area[o].nr_free, boot_blocks[nid][o]);
	}
	EXPECT_EQ(mm_verify(), 0);
}

/* Frames of a node's memmap (it lives on the node, reserved). */
static unsigned long memmap_pages(int nid)
{
	return (NODE_DATA(nid)->node_spanned_pages * sizeof(struct page) + PAGE_SIZE - 1) / PAGE_SIZE;
}

HOST_TEST(topology_as_described)
{
	setup_numa3(8);
	EXPECT_EQ(nr_node_ids, 3);
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_SLOW);
	EXPECT_EQ(numa_nodes[0].tier, MEM_TIER_DRAM);
	EXPECT_EQ(numa_nodes[0].fallback[1], 1);
	/*
	 * Node 0 loses its low 1 MiB to the reservation and one page to
	 * pfn_to_page()'s section map (12 sections of 2 MiB); each node holds
	 * its memmap.
	 */
	EXPECT_EQ(node_page_state(0, NR_PRESENT_PAGES), 8 * 256);
	EXPECT_EQ(memmap_pages(0), 8 * 256 * 64 / 4096);
	EXPECT_EQ(node_page_state(0, NR_RESERVED_PAGES), 256 + 1 + memmap_pages(0));
	EXPECT_EQ(node_page_state(1, NR_RESERVED_PAGES), memmap_pages(1));
	EXPECT_EQ(node_page_state(1, NR_FREE_PAGES), 8 * 256 - memmap_pages(1));
	EXPECT_EQ(mm_verify(), 0);
	host_mm_exit();
}

HOST_TEST(orders_and_alignment)
{
	setup_numa3(16);
	for (int nid = 0; nid < 3; nid++)
		for (unsigned int order = 0; order <= MAX_PAGE_ORDER; order++) {
			struct folio *f = folio_alloc(__GFP_THISNODE | __GFP_ZERO, order, nid);

			if (!f) {
				HOST_FAIL("no order-%u folio on node %d", order, nid);
				continue;
			}
			EXPECT_EQ(folio_nid(f), nid);
			EXPECT_EQ(folio_pfn(f) % (1UL << order), 0);
			EXPECT_EQ(((u8 *)folio_address(f))[folio_size(f) - 1], 0);
			EXPECT_PTR_EQ(page_folio(folio_page(f, folio_nr_pages(f) - 1)), f);
			folio_put(f);
		}
	EXPECT_EQ(mm_verify(), 0);
	host_mm_exit();
}

/* Kernel memory fills DRAM nodes in fallback order and reaches the slow one last. */
HOST_TEST(fallback_and_exhaustion)
{
	struct page *p, *held[4096];
	int n = 0, first_slow = -1;

	setup_numa3(4);
	while (n < 4096 && (p = alloc_pages_node(0, __GFP_NOWARN, 0))) {
		if (page_to_nid(p) == 2 && first_slow < 0)
			first_slow = n;
		held[n++] = p;
	}
	/* All of node 0, then all of node 1, then the slow node. */
	EXPECT_EQ(n, boot_free[0] + boot_free[1] + boot_free[2]);
	EXPECT_EQ(first_slow, boot_free[0] + boot_free[1]);
	EXPECT_EQ(page_to_nid(held[0]), 0);
	EXPECT_EQ(page_to_nid(held[boot_free[0]]), 1);
	EXPECT_TRUE(alloc_pages_node(1, __GFP_THISNODE | __GFP_NOWARN, 0) == NULL);
	EXPECT_EQ(node_event_count(1, PGALLOC_FALLBACK), boot_free[1]);
	EXPECT_EQ(mm_verify(), 0);
	while (n)
		__free_pages(held[--n], 0);
	expect_as_booted();
	host_mm_exit();
}

/* User memory (movable) may use the slow tier in plain fallback order. */
HOST_TEST(movable_uses_slow_tier_in_order)
{
	struct page *p;

	setup_numa3(4);
	p = alloc_pages_node(2, __GFP_MOVABLE, 0);
	EXPECT_TRUE(p && page_to_nid(p) == 2);
	if (p)
		__free_pages(p, 0);
	p = alloc_pages_node(2, 0, 0);		/* kernel memory avoids it */
	EXPECT_TRUE(p && page_to_nid(p) == 0);
	if (p)
		__free_pages(p, 0);
	EXPECT_EQ(mm_verify(), 0);
	host_mm_exit();
}

HOST_TEST(gigantic_range)
{
	struct page *p;

	setup_numa3(64);
	p = alloc_contig_pages(1UL << 13, 0, 1);	/* 32 MiB */
	EXPECT_TRUE(p != NULL);
	if (p) {
		EXPECT_EQ(page_to_pfn(p) % (1UL << 13), 0);
		EXPECT_EQ(node_page_state(1, NR_CONTIG_PAGES), 1UL << 13);
		EXPECT_EQ(mm_verify(), 0);
		free_contig_range(page_to_pfn(p), 1UL << 13);
	}
	expect_as_booted();
	/* Too big for the node, and not a power of two. */
	EXPECT_TRUE(alloc_contig_pages(1UL << 15, __GFP_NOWARN, 1) == NULL);
	EXPECT_TRUE(alloc_contig_pages(5000, __GFP_NOWARN, 1) == NULL);
	EXPECT_EQ(mm_verify(), 0);
	host_mm_exit();
}

/*
 * pfn_to_page() looks sections up in a map and searches the nodes where a
 * node's span starts or ends inside a 2 MiB section: node 0 of 3 MiB puts
 * both node edges inside sections. Every frame must map to its own struct
 * page on its own node either way, and frames past the last node to NULL.
 */
HOST_TEST(pfn_to_page_every_frame)
{
	unsigned long end = 0, wrong = 0;

	if (host_machine_init(4, 3, 0))
		HOST_FAIL("host_mm_init failed");
	for (int nid = 0; nid < 3; nid++)
		end = max(end, node_end_pfn(nid));
	EXPECT_EQ(end, 11UL * 256);
	for (unsigned long pfn = 0; pfn < end + 1024; pfn++) {
		struct page *page = pfn_to_page(pfn);
		int want = -1;

		for (int nid = 0; nid < 3; nid++)
			if (pfn >= NODE_DATA(nid)->node_start_pfn && pfn < node_end_pfn(nid))
				want = nid;
		if (want < 0 ? page != NULL :
		    page != &NODE_DATA(want)->node_mem_map[pfn - NODE_DATA(want)->node_start_pfn] ||
		    page_to_nid(page) != want || page_to_pfn(page) != pfn)
			wrong++;
	}
	EXPECT_EQ(wrong, 0);
	host_mm_exit();
}

/* A double free and a wrong order are reported, and change nothing. */
HOST_TEST(misuse_is_reported)
{
	unsigned long errors = page_alloc_errors;
	struct page *p;

	setup_numa3(4);
	p = alloc_pages_node(0, 0, 2);
	__free_pages(p, 1);			/* wrong order: refused */
	EXPECT_EQ(page_alloc_errors, errors + 1);
	__free_pages(p, 2);
	__free_pages(p, 2);			/* double free: refused */
	EXPECT_EQ(page_alloc_errors, errors + 2);
	EXPECT_EQ(mm_verify(), 0);
	host_mm_exit();
}

struct held_block {
	struct page *page;
	unsigned int order;
	u8 fill;
};

HOST_TEST(random_sequence)
{
	unsigned long seed = env_number("QUIRE_SEED", 20261130);
	unsigned long ops = env_number("QUIRE_OPS", 100000);
	static struct held_block held[512];
	unsigned long fails = 0, allocs = 0;
	int problems = 0;

	printf("    # random_sequence: seed %lu, %lu operations (QUIRE_SEED, QUIRE_OPS)\n",
	       seed, ops);
	rng_state = seed | 1;
	setup_numa3(3);
	for (unsigned long step = 0; step < ops && !problems; step++) {
		struct held_block *h = &held[rng() % 512];
		u64 r = rng();

		if (h->page) {
			/* The contents survived: nobody else was handed these pages. */
			const u8 *b = page_address(h->page);

			if (b[0] != h->fill || b[(PAGE_SIZE << h->order) - 1] != h->fill)
				HOST_FAIL("step %lu: block at pfn %#lx was overwritten",
					  step, page_to_pfn(h->page));
			__free_pages(h->page, h->order);
			h->page = NULL;
		} else {
			gfp_t gfp = __GFP_NOWARN | (r & 1 ? __GFP_MOVABLE : 0) |
				    (r & 2 ? __GFP_THISNODE : 0) |
				    (r % 97 == 0 ? __GFP_FAIL : 0);
			unsigned int order = (unsigned int)((r >> 8) % 11);

			if (order > 5)
				order = (unsigned int)((r >> 16) % 3);	/* mostly small */
			h->order = order;
			h->page = alloc_pages_node((int)((r >> 4) % 3), gfp, order);
			if (!h->page) {
				fails++;
				continue;
			}
			allocs++;
			h->fill = (u8)(r >> 24);
			memset(page_address(h->page), h->fill, PAGE_SIZE << order);
		}
		problems = mm_verify();
		if (problems)
			HOST_FAIL("step %lu (seed %lu): mm_verify found %d problems", step, seed,
				  problems);
	}
	for (int i = 0; i < 512; i++)
		if (held[i].page) {
			__free_pages(held[i].page, held[i].order);
			held[i].page = NULL;
		}
	printf("    # random_sequence: %lu allocations, %lu failed (exhaustion or injected)\n",
	       allocs, fails);
	EXPECT_GE(fails, 1);	/* the machine is small enough to run out */
	expect_as_booted();
	host_mm_exit();
}

HOST_TEST_MAIN(host_page_alloc,
	       HOST_CASE(topology_as_described),
	       HOST_CASE(orders_and_alignment),
	       HOST_CASE(fallback_and_exhaustion),
	       HOST_CASE(movable_uses_slow_tier_in_order),
	       HOST_CASE(gigantic_range),
	       HOST_CASE(pfn_to_page_every_frame),
	       HOST_CASE(misuse_is_reported),
	       HOST_CASE(random_sequence));
