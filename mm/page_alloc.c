/*
 * The buddy allocator, one per node. Free memory is kept as naturally
 * aligned blocks of 2^order pages (order 0..MAX_PAGE_ORDER) on per-order
 * free lists; the first page of a free block has PG_buddy set and its order
 * in page->private. Allocating splits a larger block when needed; freeing
 * merges a block with its buddy (the block at pfn ^ 2^order) while that buddy
 * is free and of the same order. Each node has its own lock.
 *
 * Every allocation of order > 0 is a compound page: a folio whose tail pages
 * point to the head (__GFP_COMP is implied). That keeps every allocated frame
 * attributable, which mm_verify() relies on.
 */
#define pr_fmt(fmt) "page_alloc: " fmt
#include <quire/mm.h>
#include <quire/memremap.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/panic.h>
#include <quire/stacktrace.h>
#include <quire/cmdline.h>
#include <quire/mm_internal.h>
#include <quire/memblock.h>
#include <quire/memory-failure.h>

pg_data_t node_data[MAX_NUMNODES];

#ifdef DEBUG_MM
bool debug_pagealloc = true;
#else
bool debug_pagealloc;
#endif
CMDLINE_BOOL("debug_pagealloc", debug_pagealloc,
	     "poison freed pages and check the poison when they are allocated again");

/* Problems found on allocation or free ("bad page" reports); tests read it. */
unsigned long page_alloc_errors;

/* The memmap entry of pfn in one node, or NULL when that node has no frame there. */
static struct page *node_pfn_to_page(const pg_data_t *pgdat, unsigned long pfn)
{
	struct page *page;

	if (!pgdat->node_mem_map || pfn < pgdat->node_start_pfn ||
	    pfn - pgdat->node_start_pfn >= pgdat->node_spanned_pages)
		return NULL;
	page = &pgdat->node_mem_map[pfn - pgdat->node_start_pfn];
	return page_to_nid(page) == pgdat->node_id ? page : NULL;
}

/*
 * pfn_to_page() is on every fault, zap and page-table lock lookup (a PTE
 * table's lock is found through the table's struct page), so it is memmap
 * arithmetic, not a search of the nodes: pfn_section_map[s] is the struct
 * page of the first frame of 2 MiB section s, when one node's memmap covers
 * the whole section, else NULL (no node there, a node's span starting or
 * ending inside it, or two nodes' spans overlapping: interleaved nodes).
 * A NULL falls back to the search, which is always right.
 */
#define PFN_SECTION_SHIFT	(PMD_SHIFT - PAGE_SHIFT)
#define PFN_SECTION_MASK	((1UL << PFN_SECTION_SHIFT) - 1)
#define PFN_SECTION_MAP_MAX	(1UL << 20)	/* bytes: 256 GiB of sections */
static struct page **pfn_section_map;
static unsigned long pfn_sections;

static struct page *pfn_to_page_search(unsigned long pfn)
{
	for (int nid = 0; nid < MAX_NUMNODES; nid++) {
		struct page *page = node_pfn_to_page(NODE_DATA(nid), pfn);

		if (page)
			return page;
	}
	return NULL;
}

/* The section of pfn's memmap when one node covers it all, else NULL. */
static struct page *section_first_page(unsigned long s)
{
	unsigned long first = s << PFN_SECTION_SHIFT, end = first + PFN_SECTION_MASK + 1;
	struct page *found = NULL;

	for (int nid = 0; nid < MAX_NUMNODES; nid++) {
		const pg_data_t *pgdat = NODE_DATA(nid);
		unsigned long start = pgdat->node_start_pfn;

		if (!pgdat->node_mem_map || end <= start ||
		    first >= start + pgdat->node_spanned_pages)
			continue;
		if (found || first < start || end > start + pgdat->node_spanned_pages)
			return NULL;	/* overlapping spans, or a span edge inside */
		found = &pgdat->node_mem_map[first - start];
	}
	return found;
}

void pfn_sections_init(void)
{
	unsigned long end_pfn = 0, bytes;
	phys_addr_t pa;

	pfn_section_map = NULL;
	pfn_sections = 0;
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (NODE_DATA(nid)->node_mem_map)
			end_pfn = max(end_pfn, node_end_pfn(nid));
	bytes = ALIGN_UP(end_pfn, PFN_SECTION_MASK + 1) >> PFN_SECTION_SHIFT;
	bytes *= sizeof(struct page *);
	if (!bytes || bytes > PFN_SECTION_MAP_MAX) {
		pr_info("pfn_to_page: frames up to %#lx, no section map (searching the nodes)\n",
			end_pfn);
		return;
	}
	pa = memblock_phys_alloc(ALIGN_UP(bytes, PAGE_SIZE), PAGE_SIZE);
	if (!pa) {
		pr_warn("pfn_to_page: no memory for a %lu-byte section map (searching the nodes)\n",
			bytes);
		return;
	}
	pfn_section_map = __va(pa);
	pfn_sections = bytes / sizeof(struct page *);
	for (unsigned long s = 0; s < pfn_sections; s++)
		pfn_section_map[s] = section_first_page(s);
}

struct page *pfn_to_page(unsigned long pfn)
{
	unsigned long s = pfn >> PFN_SECTION_SHIFT;
	struct page *page;

	if (s >= pfn_sections || !pfn_section_map[s])
		return pfn_to_page_search(pfn);
	page = pfn_section_map[s] + (pfn & PFN_SECTION_MASK);
	return page_to_nid(page) == NODE_HOLE ? NULL : page;
}

bool pfn_valid(unsigned long pfn)
{
	return pfn_to_page(pfn) != NULL;
}

static void mod_node_stat(pg_data_t *pgdat, enum node_stat_item item, long delta)
{
	atomic_long_add(delta, &pgdat->stat[item]);
}

static void count_node_event(pg_data_t *pgdat, enum node_event_item item)
{
	atomic_long_inc(&pgdat->events[item]);
}

static void bad_page(struct page *page, const char *why)
{
	page_alloc_errors++;
	pr_err("BUG: bad page state: pfn %#lx node %d flags %#lx refcount %d mapcount %d: %s\n",
	       page_to_pfn(page), page_to_nid(page), page->flags,
	       atomic_read(&page->_refcount), atomic_read(&page->_mapcount), why);
	dump_stack();
}

/* ---- free lists ---- */

static void add_to_free_list(pg_data_t *pgdat, struct page *page, unsigned int order)
{
	SetPageBuddy(page);
	page->private = order;
	list_add(&page->buddy_list, &pgdat->free_area[order].free_list);
	pgdat->free_area[order].nr_free++;
}

static void del_from_free_list(pg_data_t *pgdat, struct page *page, unsigned int order)
{
	list_del(&page->buddy_list);
	ClearPageBuddy(page);
	page->private = 0;
	pgdat->free_area[order].nr_free--;
}

/* Give a block back to its node's lists, merging with free buddies. Lock held. */
static void free_one_block(pg_data_t *pgdat, unsigned long pfn, unsigned int order)
{
	while (order < MAX_PAGE_ORDER) {
		unsigned long buddy_pfn = pfn ^ (1UL << order);
		struct page *buddy = node_pfn_to_page(pgdat, buddy_pfn);

		if (!buddy || !PageBuddy(buddy) || buddy->private != order)
			break;
		del_from_free_list(pgdat, buddy, order);
		pfn &= buddy_pfn;	/* the merged block starts at the lower one */
		order++;
	}
	add_to_free_list(pgdat, node_pfn_to_page(pgdat, pfn), order);
}

/* Take a block of this order from the node, splitting a larger one. Lock held. */
static struct page *take_block(pg_data_t *pgdat, unsigned int order)
{
	for (unsigned int o = order; o <= MAX_PAGE_ORDER; o++) {
		struct page *page;

		if (list_empty(&pgdat->free_area[o].free_list))
			continue;
		page = list_first_entry(&pgdat->free_area[o].free_list, struct page, buddy_list);
		del_from_free_list(pgdat, page, o);
		/* Give the upper halves back until the block has the right size. */
		while (o > order) {
			o--;
			add_to_free_list(pgdat, page + (1UL << o), o);
		}
		return page;
	}
	return NULL;
}

/* ---- preparing pages ---- */

static void check_poison(struct page *page)
{
	const u8 *p = page_address(page);

	for (unsigned long i = 0; i < PAGE_SIZE; i++) {
		if (p[i] != PAGE_POISON) {
			page_alloc_errors++;
			pr_err("BUG: use after free: pfn %#lx was written after it was freed "
			       "(offset %#lx holds %#x, poison is %#x)\n",
			       page_to_pfn(page), i, p[i], PAGE_POISON);
			break;
		}
	}
	ClearPagePoisoned(page);
}

/* Make a block from the free lists into an allocated folio. */
static void prep_new_block(struct page *page, unsigned int order, gfp_t gfp)
{
	unsigned long nr = 1UL << order;

	for (unsigned long i = 0; i < nr; i++) {
		struct page *p = page + i;

		if (p->flags & ~((1UL << PG_poisoned) | (~0UL << NODES_PGSHIFT)) ||
		    atomic_read(&p->_refcount) || atomic_read(&p->_mapcount) != -1)
			bad_page(p, "allocating a page that is not clean");
		if (PagePoisoned(p))
			check_poison(p);
	}
	if (gfp & __GFP_ZERO)
		memset(page_address(page), 0, PAGE_SIZE << order);

	atomic_set(&page->_refcount, 1);
	page->mapping = NULL;
	page->index = 0;
	page->private = 0;
	if (gfp & __GFP_MOVABLE)
		set_page_flag(page, PG_user_alloc);
	if (order) {
		struct folio *folio = (struct folio *)page;

		SetPageHead(page);
		folio->_folio_order = order;
		atomic_set(&folio->_large_mapcount, -1);
		atomic_set(&folio->_entire_mapcount, -1);
		atomic_set(&folio->_nr_pages_mapped, 0);
		atomic_set(&folio->_pincount, 0);
		folio->_mm_owner = 0;
		for (unsigned long i = 1; i < nr; i++)
			page[i].compound_head = (unsigned long)page | 1;
	}
}

/*
 * Undo prep_new_block, checking the folio is really unused. keep_hwpoison:
 * PG_hwpoison stays set through it (free_block_checked), so that a frame
 * memory_failure took is never seen, even for an instant, as a frame with
 * no reference and no mark (mm_verify's "lost frame").
 */
static void free_pages_prepare_keep(struct page *page, unsigned int order, bool keep_hwpoison)
{
	unsigned long nr = 1UL << order;

	if (order) {
		struct folio *folio = (struct folio *)page;

		if (atomic_read(&folio->_entire_mapcount) != -1 ||
		    atomic_read(&folio->_large_mapcount) != -1 ||
		    atomic_read(&folio->_pincount))
			bad_page(page, "freeing a folio that is still mapped or pinned");
		/* Page 1's folio fields live in words a free page must have clean. */
		memset(&folio->_large_mapcount, 0,
		       offsetof(struct folio, _mapcount_1) - offsetof(struct folio, _large_mapcount));
		folio->_folio_order = 0;
		for (unsigned long i = 1; i < nr; i++)
			page[i].compound_head = 0;
	}
	for (unsigned long i = 0; i < nr; i++) {
		struct page *p = page + i;

		if (atomic_read(&p->_mapcount) != -1)
			bad_page(p, "freeing a page that is still mapped");
		if (PageReserved(p) || PageBuddy(p) || PageSlab(p))
			bad_page(p, "freeing a page the allocator does not own");
		/* Only the node survives (and the poison mark, for free_block_checked). */
		__atomic_fetch_and(&p->flags, (~0UL << NODES_PGSHIFT) |
				   (keep_hwpoison ? 1UL << PG_hwpoison : 0), __ATOMIC_RELAXED);
		p->mapping = NULL;
		p->lru.next = p->lru.prev = NULL;
		atomic_set(&p->_mapcount, -1);
		if (debug_pagealloc) {
			memset(page_address(p), PAGE_POISON, PAGE_SIZE);
			SetPagePoisoned(p);
		}
	}
}

static void free_pages_prepare(struct page *page, unsigned int order)
{
	free_pages_prepare_keep(page, order, false);
}

/* ---- allocation ---- */

static struct page *alloc_from_node(int nid, gfp_t gfp, unsigned int order, int preferred)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long flags;
	struct page *page;

	if (!pgdat->node_mem_map)
		return NULL;
	spin_lock_irqsave(&pgdat->lock, flags);
	page = take_block(pgdat, order);
	spin_unlock_irqrestore(&pgdat->lock, flags);
	if (!page) {
		count_node_event(pgdat, PGALLOC_FAIL);
		return NULL;
	}
	mod_node_stat(pgdat, NR_FREE_PAGES, -(1L << order));
	mod_node_stat(pgdat, gfp & __GFP_MOVABLE ? NR_USER_PAGES : NR_KERNEL_PAGES, 1L << order);
	count_node_event(pgdat, PGALLOC);
	count_node_event(pgdat, FOLIO_ALLOC_ORDER_0 + order);
	if (nid != preferred) {
		count_node_event(pgdat, PGALLOC_FALLBACK);
		count_node_event(pgdat, NUMA_MISS);
		count_node_event_nid(preferred, NUMA_FOREIGN);
	} else {
		count_node_event(pgdat, NUMA_HIT);
	}
	count_node_event(pgdat, nid == numa_node_id() ? NUMA_LOCAL : NUMA_OTHER);
	prep_new_block(page, order, gfp);
	return page;
}

static void warn_alloc(int nid, gfp_t gfp, unsigned int order, const char *why)
{
	if (!(gfp & __GFP_NOWARN))
		pr_warn("allocation failure: order %u, node %d, gfp %#x: %s\n",
			order, nid, gfp, why);
}

struct page *alloc_pages_node(int nid, gfp_t gfp, unsigned int order)
{
	const struct numa_node *n;
	struct page *page;

	if (order > MAX_PAGE_ORDER) {
		warn_alloc(nid, gfp, order, "order too large (use alloc_contig_pages)");
		return NULL;
	}
	if (nid == NUMA_NO_NODE)
		nid = numa_node_id();
	if (!node_online(nid)) {
		warn_alloc(nid, gfp, order, "no such node");
		return NULL;
	}
	if (gfp & __GFP_FAIL) {
		warn_alloc(nid, gfp, order, "failure injected");
		return NULL;
	}
	if (gfp & __GFP_THISNODE) {
		page = node_has_memory(nid) ? alloc_from_node(nid, gfp, order, nid) : NULL;
		if (!page)
			warn_alloc(nid, gfp, order, "node has no free block of that order");
		return page;
	}
	/*
	 * Along the fallback order. Kernel memory avoids the slow tier in the
	 * first pass and goes there only when every DRAM node is full.
	 */
	n = &numa_nodes[nid];
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < n->nr_fallback; i++) {
			int f = n->fallback[i];
			bool slow = numa_nodes[f].tier == MEM_TIER_SLOW;

			if (!(gfp & __GFP_MOVABLE) && slow != (pass == 1))
				continue;
			if ((gfp & __GFP_MOVABLE) && pass == 1)
				continue;
			page = alloc_from_node(f, gfp, order, nid);
			if (page)
				return page;
		}
	}
	warn_alloc(nid, gfp, order, "out of memory on every node");
	return NULL;
}

struct page *alloc_pages(gfp_t gfp, unsigned int order)
{
	return alloc_pages_node(NUMA_NO_NODE, gfp, order);
}

/*
 * Take the free page out of its buddy block for good (memory_failure: a
 * poisoned frame); the rest of the block goes back to the lists. false
 * when the page is not free.
 */
bool take_page_off_buddy(struct page *page)
{
	pg_data_t *pgdat = NODE_DATA(page_to_nid(page));
	unsigned long pfn = page_to_pfn(page), flags;
	bool taken = false;

	spin_lock_irqsave(&pgdat->lock, flags);
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER && !taken; o++) {
		unsigned long head_pfn = pfn & ~((1UL << o) - 1);
		struct page *head = node_pfn_to_page(pgdat, head_pfn);

		if (!head || !PageBuddy(head) || head->private != o)
			continue;
		del_from_free_list(pgdat, head, o);
		/* Halve it, giving back the half without the page, down to the page. */
		while (o > 0) {
			unsigned long half = 1UL << --o;

			if (pfn >= head_pfn + half) {
				add_to_free_list(pgdat, node_pfn_to_page(pgdat, head_pfn), o);
				head_pfn += half;
			} else {
				add_to_free_list(pgdat, node_pfn_to_page(pgdat, head_pfn + half), o);
			}
		}
		taken = true;
	}
	spin_unlock_irqrestore(&pgdat->lock, flags);
	if (taken)
		mod_node_stat(pgdat, NR_FREE_PAGES, -1);
	return taken;
}

bool put_page_back_buddy(struct page *page)
{
	pg_data_t *pgdat = NODE_DATA(page_to_nid(page));
	unsigned long flags;
	bool back = false;

	/* Under the node's lock, as mm_verify counts: never seen unmarked and not free. */
	spin_lock_irqsave(&pgdat->lock, flags);
	if (PageHWPoison(page) && !PageBuddy(page) && !PageReserved(page) && !PageSlab(page) &&
	    !PageHead(page) && !PageTail(page) && !atomic_read(&page->_refcount)) {
		ClearPageHWPoison(page);
		free_one_block(pgdat, page_to_pfn(page), 0);
		back = true;
	}
	spin_unlock_irqrestore(&pgdat->lock, flags);
	if (back)
		mod_node_stat(pgdat, NR_FREE_PAGES, 1);
	return back;
}

static void free_block_checked(struct page *page, unsigned int order);
static void __free_block(struct page *page, unsigned int order);

/* Return a whole, unreferenced block to its node. */
static void free_block(struct page *page, unsigned int order)
{
	if (unlikely(num_poisoned_pages()))
		free_block_checked(page, order);	/* a poisoned page never goes back */
	else
		__free_block(page, order);
}

static void __free_block(struct page *page, unsigned int order)
{
	pg_data_t *pgdat = NODE_DATA(page_to_nid(page));
	bool user = test_page_flag(page, PG_user_alloc);
	unsigned long flags;

	free_pages_prepare(page, order);
	spin_lock_irqsave(&pgdat->lock, flags);
	free_one_block(pgdat, page_to_pfn(page), order);
	spin_unlock_irqrestore(&pgdat->lock, flags);
	mod_node_stat(pgdat, NR_FREE_PAGES, 1L << order);
	mod_node_stat(pgdat, user ? NR_USER_PAGES : NR_KERNEL_PAGES, -(1L << order));
	count_node_event(pgdat, PGFREE);
}

/*
 * Since some frame was poisoned: a block with a PG_hwpoison page goes back
 * page by page, without that one, which stays out of the lists for good
 * (still marked; counted by num_poisoned_pages, owned by nobody).
 */
static void free_block_checked(struct page *page, unsigned int order)
{
	pg_data_t *pgdat = NODE_DATA(page_to_nid(page));
	unsigned long nr = 1UL << order, bad[(1UL << MAX_PAGE_ORDER) / 64 + 1] = { 0 };
	unsigned long pfn = page_to_pfn(page), flags, freed = 0;
	bool user = test_page_flag(page, PG_user_alloc), any = false;

	for (unsigned long i = 0; i < nr; i++)
		if (PageHWPoison(page + i)) {
			bad[i / 64] |= 1UL << (i % 64);
			any = true;
		}
	if (!any) {
		__free_block(page, order);
		return;
	}
	free_pages_prepare_keep(page, order, true);	/* every flag but the marks goes */
	for (unsigned long i = 0; i < nr; i++) {
		if (bad[i / 64] & (1UL << (i % 64))) {
			pr_info("pfn %#lx: poisoned, kept out of the allocator\n", pfn + i);
			continue;
		}
		spin_lock_irqsave(&pgdat->lock, flags);
		free_one_block(pgdat, pfn + i, 0);
		spin_unlock_irqrestore(&pgdat->lock, flags);
		freed++;
	}
	mod_node_stat(pgdat, NR_FREE_PAGES, (long)freed);
	mod_node_stat(pgdat, user ? NR_USER_PAGES : NR_KERNEL_PAGES, -(long)nr);
	count_node_event(pgdat, PGFREE);
}

static void free_contig_folio(struct folio *folio);
static void free_unref_folio(struct folio *folio);

void __free_pages(struct page *page, unsigned int order)
{
	struct folio *folio = (struct folio *)page;

	if (PageTail(page) || folio_order(folio) != order) {
		bad_page(page, "__free_pages with the wrong page or order");
		return;
	}
	if (atomic_read(&page->_refcount) <= 0) {
		bad_page(page, "freeing a page with no references (double free?)");
		return;
	}
	if (!atomic_dec_and_test(&page->_refcount))
		return;
	free_unref_folio(folio);
}

/* The last reference went: give the folio back. */
static void free_unref_folio(struct folio *folio)
{
	struct page *page = (struct page *)folio;
	unsigned int order = folio_order(folio);

	if (folio_is_zone_device(folio)) {	/* back to its device, never to the buddy */
		free_zone_device_folio(folio);
		return;
	}
	if (test_page_flag(page, PG_anon))
		folio_free_anon(folio);
	if (order > MAX_PAGE_ORDER)
		free_contig_folio(folio);
	else
		free_block(page, order);
}

unsigned long __get_free_pages(gfp_t gfp, unsigned int order)
{
	struct page *page = alloc_pages(gfp, order);

	return page ? (unsigned long)page_address(page) : 0;
}

void free_pages(unsigned long addr, unsigned int order)
{
	if (addr)
		__free_pages(virt_to_page((void *)addr), order);
}

/* ---- folios ---- */

struct folio *folio_alloc(gfp_t gfp, unsigned int order, int nid)
{
	return (struct folio *)alloc_pages_node(nid, gfp | __GFP_COMP, order);
}

void folio_get(struct folio *folio)
{
	if (atomic_inc_return(&folio->_refcount) <= 1)
		bad_page((struct page *)folio, "folio_get on a folio with no references");
}

void folio_put(struct folio *folio)
{
	__free_pages((struct page *)folio, folio_order(folio));
}

void folio_ref_add(struct folio *folio, int nr)
{
	if (atomic_add_return(nr, &folio->_refcount) <= nr)
		bad_page((struct page *)folio, "folio_ref_add on a folio with no references");
}

void folio_put_refs(struct folio *folio, int nr)
{
	int left = atomic_sub_return(nr, &folio->_refcount);

	if (left < 0)
		bad_page((struct page *)folio, "dropping more references than the folio has");
	else if (left == 0)
		free_unref_folio(folio);
}

bool folio_try_get(struct folio *folio)
{
	return atomic_add_unless(&folio->_refcount, 1, 0);
}

/* ---- gigantic ranges ---- */

static bool range_is_free(pg_data_t *pgdat, unsigned long pfn, unsigned long nr)
{
	for (unsigned long p = pfn; p < pfn + nr; p += 1UL << MAX_PAGE_ORDER) {
		struct page *page = node_pfn_to_page(pgdat, p);

		if (!page || !PageBuddy(page) || page->private != MAX_PAGE_ORDER)
			return false;
	}
	return true;
}

struct page *alloc_contig_pages(unsigned long nr_pages, gfp_t gfp, int nid)
{
	unsigned int order = 0;
	pg_data_t *pgdat;
	unsigned long flags, start;
	struct page *page = NULL;

	while (order < 63 && (1UL << order) < nr_pages)
		order++;
	if (nr_pages == 0 || (1UL << order) != nr_pages || order < MAX_PAGE_ORDER ||
	    order > MAX_FOLIO_ORDER) {
		warn_alloc(nid, gfp, order, "alloc_contig_pages wants a power of two from 4 MiB to 1 GiB");
		return NULL;
	}
	if (!node_has_memory(nid) || (gfp & __GFP_FAIL)) {
		warn_alloc(nid, gfp, order, "no memory on that node");
		return NULL;
	}
	pgdat = NODE_DATA(nid);
	spin_lock_irqsave(&pgdat->lock, flags);
	for (start = ALIGN_UP(pgdat->node_start_pfn, nr_pages);
	     start + nr_pages <= node_end_pfn(nid); start += nr_pages) {
		if (!range_is_free(pgdat, start, nr_pages))
			continue;
		for (unsigned long p = start; p < start + nr_pages; p += 1UL << MAX_PAGE_ORDER)
			del_from_free_list(pgdat, node_pfn_to_page(pgdat, p), MAX_PAGE_ORDER);
		page = node_pfn_to_page(pgdat, start);
		break;
	}
	spin_unlock_irqrestore(&pgdat->lock, flags);
	if (!page) {
		warn_alloc(nid, gfp, order, "no free aligned range");
		return NULL;
	}
	mod_node_stat(pgdat, NR_FREE_PAGES, -(long)nr_pages);
	mod_node_stat(pgdat, NR_CONTIG_PAGES, (long)nr_pages);
	prep_new_block(page, order, gfp);
	return page;
}

static void free_contig_folio(struct folio *folio)
{
	struct page *page = (struct page *)folio;
	unsigned int order = folio_order(folio);
	unsigned long nr = 1UL << order, pfn = page_to_pfn(page);
	pg_data_t *pgdat = NODE_DATA(page_to_nid(page));
	unsigned long flags;

	free_pages_prepare(page, order);
	spin_lock_irqsave(&pgdat->lock, flags);
	for (unsigned long p = pfn; p < pfn + nr; p += 1UL << MAX_PAGE_ORDER)
		free_one_block(pgdat, p, MAX_PAGE_ORDER);
	spin_unlock_irqrestore(&pgdat->lock, flags);
	mod_node_stat(pgdat, NR_FREE_PAGES, (long)nr);
	mod_node_stat(pgdat, NR_CONTIG_PAGES, -(long)nr);
}

void free_contig_range(unsigned long pfn, unsigned long nr_pages)
{
	struct page *page = pfn_to_page(pfn);

	if (!page || !PageHead(page) || folio_nr_pages((struct folio *)page) != nr_pages) {
		pr_err("free_contig_range: pfn %#lx is not a %lu-page contiguous allocation\n",
		       pfn, nr_pages);
		return;
	}
	__free_pages(page, folio_order((struct folio *)page));
}

/* ---- boot ---- */

/* Hand a range of free frames to the buddy lists at boot (no poisoning). */
void free_boot_range(int nid, unsigned long start_pfn, unsigned long end_pfn)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long pfn = start_pfn;

	while (pfn < end_pfn) {
		unsigned int order = MAX_PAGE_ORDER;

		/* The largest block that is aligned at pfn and fits. */
		while (order && ((pfn & ((1UL << order) - 1)) || pfn + (1UL << order) > end_pfn))
			order--;
		free_one_block(pgdat, pfn, order);
		mod_node_stat(pgdat, NR_FREE_PAGES, 1L << order);
		pfn += 1UL << order;
	}
}

/*
 * Give a reserved frame to the buddy allocator after boot (memory the boot
 * loader's modules held, for instance). Linux's free_reserved_page.
 */
void free_reserved_page(struct page *page)
{
	pg_data_t *pgdat = NODE_DATA(page_to_nid(page));
	unsigned long flags;

	if (!PageReserved(page)) {
		bad_page(page, "free_reserved_page of a page that is not reserved");
		return;
	}
	ClearPageReserved(page);
	mod_node_stat(pgdat, NR_RESERVED_PAGES, -1);
	if (debug_pagealloc) {
		memset(page_address(page), PAGE_POISON, PAGE_SIZE);
		SetPagePoisoned(page);
	}
	spin_lock_irqsave(&pgdat->lock, flags);
	free_one_block(pgdat, page_to_pfn(page), 0);
	mod_node_stat(pgdat, NR_FREE_PAGES, 1);
	spin_unlock_irqrestore(&pgdat->lock, flags);
}
