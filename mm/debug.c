/*
 * mm_verify(): walk every node's memmap and free lists and check the
 * invariants of docs/design.md: 1 and 2 here, then 3, 4, 6 and 7 (user
 * mappings: debug_rmap.c):
 *   1. every frame is exactly one of free (inside a buddy block), allocated
 *      (inside a folio) or reserved; free blocks are aligned, disjoint and on
 *      their node; per node free + allocated + reserved = present, and the
 *      counters say the same;
 *   2. all pages of a folio are contiguous and on one node.
 * It must run while nothing allocates or frees (tests call it at quiet
 * points); it takes each node's lock while walking that node.
 *
 * mm_verify_system() is the same for a caller that cannot make the system
 * quiet itself (/proc/quire/mm_verify, docs/procfs.md): it holds every
 * address space still for the check (below). What it does not stop are
 * changes made without mmap_lock: the kernel's own allocations, page-cache
 * writes, truncate of a mapped file, a thread that exits. A check that
 * meets one of those may report a problem that is not one (never a crash:
 * the page tables walked cannot be freed, and each folio is held by a
 * reference for its rmap walk); the ring-3 stress reads it with its own
 * threads parked (user/tests/mm_stress.c).
 */
#define pr_fmt(fmt) "mm_verify: " fmt
#include <quire/mm.h>
#include <quire/numa.h>
#include <quire/mmap.h>
#include <quire/printk.h>
#include <quire/kernel.h>

#define MAX_REPORTS 20

struct verify {
	int problems;
	unsigned long free, allocated, reserved, present;
	unsigned long poisoned;		/* hwpoisoned frames kept out of the allocator */
	unsigned long blocks[NR_PAGE_ORDERS];	/* free blocks seen in the memmap */
};

static __printf(3, 4) void problem(struct verify *v, unsigned long pfn, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	if (v->problems++ >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("pfn %#lx: %s\n", pfn, msg);
}

static bool clean_flags(const struct page *p)
{
	return !(p->flags & ~((1UL << PG_poisoned) | (~0UL << NODES_PGSHIFT)));
}

/* A free block starting at page[i]; returns the frames it covers. */
static unsigned long check_free_block(struct verify *v, pg_data_t *pgdat, unsigned long i)
{
	struct page *head = &pgdat->node_mem_map[i];
	unsigned long pfn = pgdat->node_start_pfn + i;
	unsigned long order = head->private, nr;

	if (order > MAX_PAGE_ORDER) {
		problem(v, pfn, "free block with order %lu", order);
		return 1;
	}
	nr = 1UL << order;
	if (pfn & (nr - 1))
		problem(v, pfn, "free block of order %lu is not aligned", order);
	if (i + nr > pgdat->node_spanned_pages) {
		problem(v, pfn, "free block of order %lu runs past the node's end", order);
		return 1;
	}
	for (unsigned long k = 1; k < nr; k++) {
		struct page *p = head + k;

		if (page_to_nid(p) != pgdat->node_id)
			problem(v, pfn + k, "inside a free block of node %d but labelled node %d",
				pgdat->node_id, page_to_nid(p));
		else if (!clean_flags(p) || PageTail(p) || atomic_read(&p->_refcount))
			problem(v, pfn + k, "inside a free block but in use (flags %#lx)", p->flags);
	}
	if (atomic_read(&head->_refcount))
		problem(v, pfn, "free block head has refcount %d", atomic_read(&head->_refcount));
	v->blocks[order]++;
	v->free += nr;
	return nr;
}

/* An allocated folio starting at page[i]; returns the frames it covers. */
static unsigned long check_folio(struct verify *v, pg_data_t *pgdat, unsigned long i)
{
	struct page *head = &pgdat->node_mem_map[i];
	struct folio *folio = (struct folio *)head;
	unsigned long pfn = pgdat->node_start_pfn + i;
	unsigned int order = folio_order(folio);
	unsigned long nr = 1UL << order;

	if (order > MAX_FOLIO_ORDER || i + nr > pgdat->node_spanned_pages) {
		problem(v, pfn, "folio of order %u does not fit in the node", order);
		return 1;
	}
	if (pfn & (nr - 1))
		problem(v, pfn, "folio of order %u is not aligned", order);
	if (folio_ref_count(folio) < 1)
		problem(v, pfn, "allocated folio has refcount %d", folio_ref_count(folio));
	for (unsigned long k = 1; k < nr; k++) {
		struct page *p = head + k;

		if (page_to_nid(p) != pgdat->node_id)
			problem(v, pfn + k, "tail of a folio on node %d is on node %d",
				pgdat->node_id, page_to_nid(p));
		if (p->compound_head != ((unsigned long)head | 1))
			problem(v, pfn + k, "tail does not point to its head at pfn %#lx", pfn);
		if (atomic_read(&p->_refcount))
			problem(v, pfn + k, "tail page has refcount %d", atomic_read(&p->_refcount));
	}
	v->allocated += nr;
	return nr;
}

/* Walk the free lists: each entry must be a free block head of that order. */
static void check_free_lists(struct verify *v, pg_data_t *pgdat)
{
	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
		struct free_area *area = &pgdat->free_area[o];
		unsigned long n = 0;
		struct page *p;

		list_for_each_entry(p, &area->free_list, buddy_list) {
			if (!PageBuddy(p) || p->private != o || page_to_nid(p) != pgdat->node_id)
				problem(v, page_to_pfn(p), "on node %d's order-%u list but not a "
					"free block of that order there", pgdat->node_id, o);
			if (++n > pgdat->node_spanned_pages)
				break;	/* a corrupted, circular list */
		}
		if (n != area->nr_free || n != v->blocks[o])
			problem(v, 0, "node %d order %u: %lu blocks on the list, nr_free %lu, "
				"%lu in the memmap", pgdat->node_id, o, n, area->nr_free, v->blocks[o]);
	}
}

static void check_counter(struct verify *v, int nid, const char *name,
			  unsigned long counted, unsigned long stat)
{
	if (counted != stat)
		problem(v, 0, "node %d: %lu %s frames counted, the counter says %lu",
			nid, counted, name, stat);
}

static void verify_node(struct verify *v, int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long flags;
	unsigned long i = 0;

	spin_lock_irqsave(&pgdat->lock, flags);
	while (i < pgdat->node_spanned_pages) {
		struct page *p = &pgdat->node_mem_map[i];
		unsigned long pfn = pgdat->node_start_pfn + i;
		int pnid = page_to_nid(p);

		if (pnid == NODE_HOLE) {
			i++;
			continue;
		}
		v->present++;
		if (pnid != nid) {
			problem(v, pfn, "in node %d's memmap but labelled node %d", nid, pnid);
			i++;
		} else if (PageBuddy(p)) {
			v->present += check_free_block(v, pgdat, i) - 1;
			i += 1UL << min(p->private, (unsigned long)MAX_PAGE_ORDER);
		} else if (test_page_flag(p, PG_zone_device)) {
			v->reserved++;		/* a device's page (memremap.c): counted as reserved */
			i++;
		} else if (PageReserved(p)) {
			if (PageHead(p) || PageTail(p) || atomic_read(&p->_refcount))
				problem(v, pfn, "reserved but also in use (flags %#lx)", p->flags);
			v->reserved++;
			i++;
		} else if (PageHead(p) || atomic_read(&p->_refcount) > 0) {
			unsigned long nr = check_folio(v, pgdat, i);

			v->present += nr - 1;
			i += nr;
		} else if (PageHWPoison(p) && !PageTail(p)) {
			v->poisoned++;		/* memory_failure took it out for good */
			i++;
		} else if (PageTail(p)) {
			problem(v, pfn, "tail page outside its folio");
			i++;
		} else {
			problem(v, pfn, "neither free, allocated nor reserved (a lost frame)");
			i++;
		}
	}
	check_free_lists(v, pgdat);
	spin_unlock_irqrestore(&pgdat->lock, flags);

	check_counter(v, nid, "present", v->present, node_page_state(nid, NR_PRESENT_PAGES));
	check_counter(v, nid, "free", v->free, node_page_state(nid, NR_FREE_PAGES));
	check_counter(v, nid, "reserved", v->reserved, node_page_state(nid, NR_RESERVED_PAGES));
	check_counter(v, nid, "allocated", v->allocated,
		      node_page_state(nid, NR_KERNEL_PAGES) + node_page_state(nid, NR_USER_PAGES) +
		      node_page_state(nid, NR_CONTIG_PAGES));
	if (v->free + v->allocated + v->reserved + v->poisoned != v->present)
		problem(v, 0, "node %d: free %lu + allocated %lu + reserved %lu + poisoned %lu "
			"!= present %lu", nid, v->free, v->allocated, v->reserved, v->poisoned,
			v->present);
}

/* The checks; the caller holds mm_list_lock when mm_list_held. */
static int verify_all(bool mm_list_held)
{
	int problems = 0;

	for (int nid = 0; nid < MAX_NUMNODES; nid++) {
		struct verify v = { 0 };

		if (!NODE_DATA(nid)->node_mem_map)
			continue;
		verify_node(&v, nid);
		problems += v.problems;
	}
	mm_verify_reset_reports();
	problems += mm_list_held ? mm_verify_mappings_locked() : mm_verify_mappings();
	if (problems)
		pr_err("%d problem(s) found\n", problems);
	return problems;
}

int mm_verify(void)
{
	return verify_all(false);
}

/*
 * Every mm on mm_list held for writing, mm_list_lock outermost
 * (docs/locking.md): no fault, mmap, munmap, mprotect, madvise, mremap, brk,
 * fork or exec of any process runs meanwhile, and an exiting mm's teardown
 * (mmput, under its own mmap_lock) has either finished or not begun. Nobody
 * else holds two mmap_locks, and mmput takes mm_list_lock only after
 * dropping its mmap_lock, so the order cannot be met the other way round.
 * The caller must hold no mmap_lock.
 */
int mm_verify_system(void)
{
	struct mm_struct *mm;
	int problems;

	mutex_lock(&mm_list_lock);
	list_for_each_entry(mm, &mm_list, mm_list)
		down_write(&mm->mmap_lock);
	problems = verify_all(true);
	list_for_each_entry(mm, &mm_list, mm_list)
		up_write(&mm->mmap_lock);
	mutex_unlock(&mm_list_lock);
	return problems;
}
