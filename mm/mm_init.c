/*
 * From memblock to the buddy allocator. For each node with memory:
 *   1. allocate its memmap (one struct page per frame of the node's span,
 *      holes included) from the node's own memory;
 *   2. initialise every entry: frames of RAM get the node id, frames in
 *      holes get NODE_HOLE so pfn_to_page() skips them;
 *   3. free RAM that memblock did not reserve into the buddy lists; the rest
 *      of the node's RAM is PG_reserved.
 * Then memblock retires and the slab allocator starts.
 */
#define pr_fmt(fmt) "mm: " fmt
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/memblock.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/panic.h>

static void node_span(int nid, unsigned long *start, unsigned long *end)
{
	const struct memblock_region *r;

	*start = ~0UL;
	*end = 0;
	for_each_memblock(memory, r) {
		if (r->nid != nid)
			continue;
		*start = min(*start, PHYS_PFN(r->base));
		*end = max(*end, PHYS_PFN(r->base + r->size));
	}
}

static void alloc_node_mem_map(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long start, end, bytes;
	phys_addr_t pa;

	node_span(nid, &start, &end);
	if (start >= end)
		return;
	bytes = (end - start) * sizeof(struct page);
	pa = memblock_phys_alloc_node(ALIGN_UP(bytes, PAGE_SIZE), PAGE_SIZE, nid);
	if (!pa) {
		pr_warn("node %d: no room for its memmap on the node itself; using any node\n", nid);
		pa = memblock_phys_alloc(ALIGN_UP(bytes, PAGE_SIZE), PAGE_SIZE);
	}
	if (!pa)
		panic("alloc_node_mem_map: cannot allocate %lu KiB for node %d's memmap",
		      bytes >> 10, nid);
	pgdat->node_start_pfn = start;
	pgdat->node_spanned_pages = end - start;
	pgdat->node_mem_map = __va(pa);

	/* Everything a hole first; RAM is labelled below. */
	for (unsigned long i = 0; i < end - start; i++) {
		struct page *p = &pgdat->node_mem_map[i];

		memset(p, 0, sizeof(*p));
		atomic_set(&p->_mapcount, -1);
		set_page_node(p, NODE_HOLE);
	}
}

static void init_pgdat(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);

	memset(pgdat, 0, sizeof(*pgdat));
	pgdat->node_id = nid;
	spin_lock_init(&pgdat->lock);
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		INIT_LIST_HEAD(&pgdat->free_area[o].free_list);
}

static void mark_reserved(pg_data_t *pgdat, unsigned long start, unsigned long end)
{
	for (unsigned long pfn = start; pfn < end; pfn++) {
		SetPageReserved(&pgdat->node_mem_map[pfn - pgdat->node_start_pfn]);
		atomic_long_inc(&pgdat->stat[NR_RESERVED_PAGES]);
	}
}

/*
 * Label one memblock memory region's frames with its node, then walk the
 * reserved ranges that overlap it: frames touched by a reservation are
 * PG_reserved, the frames between them go to the buddy lists.
 */
static void init_region(const struct memblock_region *m)
{
	pg_data_t *pgdat = NODE_DATA(m->nid);
	unsigned long start = PHYS_PFN(ALIGN_UP(m->base, PAGE_SIZE));
	unsigned long end = PHYS_PFN(m->base + m->size);
	unsigned long next = start;	/* first frame not yet handled */
	const struct memblock_region *r;

	if (end <= start)
		return;			/* less than one whole page */
	for (unsigned long pfn = start; pfn < end; pfn++)
		set_page_node(&pgdat->node_mem_map[pfn - pgdat->node_start_pfn], m->nid);
	atomic_long_add((long)(end - start), &pgdat->stat[NR_PRESENT_PAGES]);

	for_each_memblock(reserved, r) {
		unsigned long rstart = PHYS_PFN(r->base);
		unsigned long rend = PHYS_PFN(ALIGN_UP(r->base + r->size, PAGE_SIZE));

		if (rend <= next || rstart >= end)
			continue;
		rstart = max(rstart, next);
		rend = min(rend, end);
		if (next < rstart)
			free_boot_range(m->nid, next, rstart);
		mark_reserved(pgdat, rstart, rend);
		next = rend;
	}
	if (next < end)
		free_boot_range(m->nid, next, end);
}

void mm_core_init(void)
{
	const struct memblock_region *m;
	int nid;

	for (nid = 0; nid < MAX_NUMNODES; nid++)
		init_pgdat(nid);
	for_each_online_node(nid)
		alloc_node_mem_map(nid);
	pfn_sections_init();
	/* Every memmap is allocated: memblock's reservations are final now. */
	for_each_memblock(memory, m)
		init_region(m);
	for_each_online_node(nid) {
		if (!NODE_DATA(nid)->node_mem_map)
			continue;
		pr_info("node %d: %lu MiB present, %lu MiB free, memmap %lu KiB\n", nid,
			node_page_state(nid, NR_PRESENT_PAGES) >> 8,
			node_page_state(nid, NR_FREE_PAGES) >> 8,
			NODE_DATA(nid)->node_spanned_pages * sizeof(struct page) >> 10);
	}
	memblock.alloc_limit = 0;	/* memblock is done: allocations go to the buddy */
	kmem_cache_init();
}
