/*
 * Pages, folios and frames: conversions and accessors with Linux's names.
 * See docs/mm/folio.md for what each field means and docs/mm/page_alloc.md
 * for the allocator.
 */
#ifndef QUIRE_MM_H
#define QUIRE_MM_H

#include <quire/types.h>
#include <quire/mm_types.h>
#include <quire/page-flags.h>
#include <quire/mmzone.h>
#include <quire/gfp.h>
#include <quire/wait_bit.h>
#include <asm/page.h>

#define PAGE_POISON	0xaa	/* freed pages are filled with this in debug builds */

/* ---- flags ---- */

static inline bool test_page_flag(const struct page *p, enum pageflags f)
{
	return (__atomic_load_n(&p->flags, __ATOMIC_RELAXED) >> f) & 1;
}

static inline void set_page_flag(struct page *p, enum pageflags f)
{
	__atomic_fetch_or(&p->flags, 1UL << f, __ATOMIC_RELAXED);
}

static inline void clear_page_flag(struct page *p, enum pageflags f)
{
	__atomic_fetch_and(&p->flags, ~(1UL << f), __ATOMIC_RELAXED);
}

#define PAGEFLAG(Name, bit)						\
	static inline bool Page##Name(const struct page *p) { return test_page_flag(p, bit); } \
	static inline void SetPage##Name(struct page *p) { set_page_flag(p, bit); } \
	static inline void ClearPage##Name(struct page *p) { clear_page_flag(p, bit); }

PAGEFLAG(Reserved, PG_reserved)
PAGEFLAG(Buddy, PG_buddy)
PAGEFLAG(Head, PG_head)
PAGEFLAG(Slab, PG_slab)
PAGEFLAG(HWPoison, PG_hwpoison)
PAGEFLAG(AnonExclusive, PG_anon_exclusive)
PAGEFLAG(Poisoned, PG_poisoned)

/* ---- node ---- */

/* The node bits never change, but other bits of flags do, atomically, at any time. */
static inline int page_to_nid(const struct page *p)
{
	return (int)(__atomic_load_n(&p->flags, __ATOMIC_RELAXED) >> NODES_PGSHIFT);
}

static inline void set_page_node(struct page *p, int nid)
{
	p->flags = (p->flags & ((1UL << NODES_PGSHIFT) - 1)) |
		   ((unsigned long)nid << NODES_PGSHIFT);
}

/* ---- frames ---- */

#define PHYS_PFN(x)	((unsigned long)((x) >> PAGE_SHIFT))
#define PFN_PHYS(x)	((phys_addr_t)(x) << PAGE_SHIFT)

/* The struct page of a frame, or NULL when no node's memmap covers it. */
struct page *pfn_to_page(unsigned long pfn);
bool pfn_valid(unsigned long pfn);
/* The frame of the shared zero page, which read faults of empty anonymous memory map (memory.c). */
bool is_zero_pfn(unsigned long pfn);

static inline unsigned long page_to_pfn(const struct page *p)
{
	const pg_data_t *pgdat = NODE_DATA(page_to_nid(p));

	return pgdat->node_start_pfn + (unsigned long)(p - pgdat->node_mem_map);
}

static inline phys_addr_t page_to_phys(const struct page *p)
{
	return PFN_PHYS(page_to_pfn(p));
}

static inline void *page_address(const struct page *p)
{
	return __va(page_to_phys(p));
}

static inline struct page *virt_to_page(const void *addr)
{
	return pfn_to_page(PHYS_PFN(__pa(addr)));
}

/* ---- folios ---- */

static inline bool PageTail(const struct page *p)
{
	return __atomic_load_n(&p->compound_head, __ATOMIC_RELAXED) & 1;
}

static inline struct page *compound_head(const struct page *p)
{
	unsigned long head = __atomic_load_n(&p->compound_head, __ATOMIC_RELAXED);

	if (head & 1)
		return (struct page *)(head - 1);
	return (struct page *)p;
}

#define page_folio(p)		((struct folio *)compound_head(p))
#define folio_page(f, n)	(&((struct page *)(f))[n])

static inline bool folio_test_large(const struct folio *f)
{
	return test_page_flag((const struct page *)f, PG_head);
}

static inline unsigned int folio_order(const struct folio *f)
{
	return folio_test_large(f) ? f->_folio_order : 0;
}

static inline unsigned long folio_nr_pages(const struct folio *f)
{
	return 1UL << folio_order(f);
}

/*
 * The folio lock: PG_locked on the head page, a sleeping bit lock
 * (quire/wait_bit.h). It keeps a folio's identity still while it is
 * looked at or changed as a whole: a page-cache folio while it is filled,
 * mapped by a fault or truncated (folio->mapping is rechecked under it),
 * a large anonymous folio while it is split, an anonymous folio while a
 * write fault decides to reuse it. Taken under mmap_lock and outside the
 * rmap locks and the page-table locks (docs/locking.md); folio_trylock may
 * be called anywhere, folio_lock only where sleeping is allowed.
 */
static inline bool folio_test_locked(const struct folio *f)
{
	return test_page_flag((const struct page *)f, PG_locked);
}

static inline bool folio_trylock(struct folio *f)
{
	return test_and_set_bit_lock(&f->flags, PG_locked);
}

static inline void folio_lock(struct folio *f)
{
	if (!folio_trylock(f))
		wait_on_bit_lock(&f->flags, PG_locked);
}

/* Sleep until whoever holds the folio lock drops it. */
static inline void folio_wait_locked(struct folio *f)
{
	if (folio_test_locked(f))
		wait_on_bit(&f->flags, PG_locked);
}

/* Drop the folio lock (held by the caller: checked in DEBUG_MM builds) and wake its waiters. */
void folio_unlock(struct folio *f);

static inline unsigned long folio_size(const struct folio *f)
{
	return PAGE_SIZE << folio_order(f);
}

static inline int folio_nid(const struct folio *f)
{
	return page_to_nid((const struct page *)f);
}

static inline unsigned long folio_pfn(const struct folio *f)
{
	return page_to_pfn((const struct page *)f);
}

static inline void *folio_address(const struct folio *f)
{
	return page_address((const struct page *)f);
}

static inline int folio_ref_count(const struct folio *f)
{
	return atomic_read(&f->_refcount);
}

static inline int page_count(const struct page *p)
{
	return folio_ref_count(page_folio(p));
}

static inline struct folio *virt_to_folio(const void *addr)
{
	return page_folio(virt_to_page(addr));
}

/* ---- boot and checks ---- */

/*
 * Build each node's memmap and free lists from memblock (after numa_init and
 * the direct map), then start the slab allocator.
 */
void mm_core_init(void);

/*
 * Check the invariants of docs/design.md (1-4, 6, 7; 5 is about migration, which
 * is not implemented yet): every frame
 * is exactly one of free / allocated / reserved; free blocks are aligned,
 * disjoint and on their own node; per-node free + allocated + reserved =
 * present, and the counters agree; every folio's pages are contiguous and on
 * one node. Returns the number of problems found (each logged, up to a
 * limit); 0 means consistent.
 */
int mm_verify(void);
/*
 * mm_verify from anywhere (the /proc/quire/mm_verify file): every address
 * space's mmap_lock is held for writing during the check, so no fault or
 * VMA change runs meanwhile (mm/debug.c says what still can). Sleeps; the
 * caller holds no mmap_lock.
 */
int mm_verify_system(void);
/*
 * The user-mapping invariants (3, 4, 6, 7; mm/debug_rmap.c): mm_verify
 * runs them for every mapped folio and every mm. mm_verify_mm checks one
 * address space's entries only (at exit in DEBUG_MM builds);
 * mm_verify_folio_rmap one folio's mapcounts against its rmap walk.
 */
struct mm_struct;
int mm_verify_mappings(void);
int mm_verify_mappings_locked(void);	/* mm_list_lock held */
int mm_verify_mm(struct mm_struct *mm);
int mm_verify_folio_rmap(struct folio *folio);
void mm_verify_reset_reports(void);

/* Print a folio's state: flags, refcount, mapcounts, pins, mapping, index. */
void dump_folio(const struct folio *folio, const char *reason);
/*
 * VM_BUG_ON_FOLIO(cond, folio): an invariant of the folio; when cond is
 * true (DEBUG_MM builds) the folio is dumped, then the kernel panics with
 * the condition and where it failed. vm_bug_returns (tests, one-shot) makes
 * the next one report and return instead; vm_bug_reports counts them.
 */
extern bool vm_bug_returns;
extern unsigned long vm_bug_reports;
void vm_bug_folio(const struct folio *folio, const char *cond, const char *file, int line);
#ifdef DEBUG_MM
#define VM_BUG_ON_FOLIO(cond, folio)						\
	do {									\
		if (__builtin_expect(!!(cond), 0))				\
			vm_bug_folio(folio, #cond, __FILE__, __LINE__);		\
	} while (0)
#else
#define VM_BUG_ON_FOLIO(cond, folio)	((void)sizeof((cond) ? (folio) : (folio)))
#endif

/* Print the per-node counters table (the "memstat" boot option). */
void memstat_print(void);
/* /proc/meminfo's text into buf (size bytes, NUL-terminated): its length (mm/vmstat.c). */
int meminfo_proc_show(char *buf, size_t size);

/* Debug builds (DEBUG_MM=1) poison freed pages and check them on allocation. */
extern bool debug_pagealloc;

#endif
