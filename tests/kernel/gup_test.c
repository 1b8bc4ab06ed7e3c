/*
 * The gup suite (mm/gup.c, docs/mm/gup.md), on address spaces built in the
 * test with the thp suite's helpers:
 *   - pins of every folio order (4 KiB, each mTHP order, a PMD THP): the
 *     pages returned, the pin counts (bias or _pincount), unpin;
 *   - gup_batch on and off: follow steps and atomics per folio;
 *   - unpin_user_pages_dirty_lock dirties, unpin_user_pages does not;
 *   - a pinned folio is refused by migration and split, and fork copies a
 *     pinned anonymous page;
 *   - a read-only pin of a shared page unshares it; FOLL_FORCE writes to a
 *     read-only private mapping through a private copy; Linux's errors;
 *   - GUP-fast against the slow path, and racing a PMD split and a munmap
 *     on another CPU (made to happen inside the walk by gup_fast_hook);
 *   - FOLL_LONGTERM moves a folio off the slow tier first, and fails
 *     (-ENOMEM) when it cannot be moved;
 *   - the slow path asserts its mmap_lock rule (DEBUG_LOCKS builds).
 * The races GUP claims to handle are the gup_race suite's (gup_race_test.c).
 * mm_verify must report nothing after each.
 */
#include <quire/gup.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/percpu.h>
#include <quire/debug_locks.h>
#include "gup_test.h"

#define MAX_PIN	512

static struct page *pages[MAX_PIN];

static long gev(enum gup_event e)
{
	return atomic_long_read(&gup_events[e]);
}

/* pin_user_pages_remote (or get_) with mmap_lock held for reading around it. */
static long pin(struct mm_struct *mm, unsigned long addr, unsigned long nr, unsigned int flags)
{
	long ret;

	down_read(&mm->mmap_lock);
	ret = (flags & FOLL_GET) ? get_user_pages_remote(mm, addr, nr, flags & ~FOLL_GET, pages, NULL)
				 : pin_user_pages_remote(mm, addr, nr, flags, pages, NULL);
	up_read(&mm->mmap_lock);
	return ret;
}

int gupt_pins_of(struct folio *folio)
{
	if (folio_test_large(folio))
		return atomic_read(&folio->_pincount);
	return (folio_ref_count(folio) - folio_mapcount(folio)) / GUP_PIN_COUNTING_BIAS;
}

int gupt_map_order(struct mm_struct *mm, unsigned long addr, unsigned int order)
{
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, o == order ? THP_ALWAYS : THP_NEVER);
	if (thpt_map_anon(mm, addr, SZ_2M) != (long)addr)
		return -ENOMEM;
	if (thpt_fault_range(mm, addr, SZ_2M))
		return -EFAULT;
	return thpt_order_of(mm, addr) == (int)order ? 0 : -EINVAL;
}

struct mm_struct *gupt_begin_mapped(struct ktest *t, struct thp_ctx *c, unsigned int order,
				    bool two_nodes)
{
	struct mm_struct *mm;
	int err;

	if (two_nodes)
		thpt_begin_two_nodes(t, c);
	else
		thpt_begin(t, c);
	mm = thpt_new_mm(c);
	err = mm ? gupt_map_order(mm, AREA, order) : -ENOMEM;
	KEXPECT_EQ(t, err, 0);
	return err ? NULL : mm;
}

/* ---- 1. every order ---- */

static void pins_every_folio_order(struct ktest *t)
{
	static const unsigned int orders[] = { 0, 2, 3, 4, 5, 6, 7, 8, HPAGE_PMD_ORDER };
	struct thp_ctx c;
	struct mm_struct *mm;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	for (unsigned int k = 0; k < ARRAY_SIZE(orders); k++) {
		unsigned long a = AREA + k * SZ_2M, nr = MAX_PIN;
		unsigned int order = orders[k];
		struct folio *folio;
		int refs;

		CHECK_EQ(t, gupt_map_order(mm, a, order), 0);
		folio = thpt_folio_of(mm, a);
		refs = folio_ref_count(folio);
		CHECK_EQ(t, pin(mm, a, nr, FOLL_WRITE), (long)nr);
		for (unsigned long i = 0; i < nr; i++)
			if (pages[i] != thpt_page_of(mm, a + i * SZ_4K)) {
				KEXPECT_EQ(t, i, nr);	/* report the first wrong page */
				break;
			}
		KEXPECT_TRUE(t, folio_maybe_dma_pinned(folio));
		/* A small folio: one pin; a large one: one pin per page of it pinned. */
		KEXPECT_EQ(t, gupt_pins_of(folio), order ? (int)min(nr, 1UL << order) : 1);
		KEXPECT_EQ(t, mm_verify(), 0);
		unpin_user_pages(pages, nr);
		KEXPECT_FALSE(t, folio_maybe_dma_pinned(folio));
		KEXPECT_EQ(t, folio_ref_count(folio), refs);
		/* FOLL_GET: references only, never "maybe pinned". */
		CHECK_EQ(t, pin(mm, a, 16, FOLL_GET), 16);
		KEXPECT_FALSE(t, folio_maybe_dma_pinned(folio));
		for (int i = 0; i < 16; i++)
			put_page(pages[i]);
		KEXPECT_EQ(t, folio_ref_count(folio), refs);
	}
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 2. batched against per-page ---- */

static void batched_and_per_page_counts(struct ktest *t)
{
	const unsigned long a = AREA, nr = 256;	/* 16 folios of 64 KiB */
	long steps[2], locks[2], atomics[2], fast[2];
	bool saved = gup_batching;
	struct thp_ctx c;
	struct mm_struct *mm;

	mm = gupt_begin_mapped(t, &c, 4, false);
	CHECK(t, mm != NULL);
	for (int batched = 1; batched >= 0; batched--) {
		long s = gev(GUP_FOLLOW_STEPS), l = gev(GUP_FOLLOW_LOCKS), g = gev(GUP_GRAB_ATOMICS), f;

		gup_batching = batched;
		CHECK_EQ(t, pin(mm, a, nr, FOLL_WRITE), (long)nr);
		steps[batched] = gev(GUP_FOLLOW_STEPS) - s;
		locks[batched] = gev(GUP_FOLLOW_LOCKS) - l;
		atomics[batched] = gev(GUP_GRAB_ATOMICS) - g;
		unpin_user_pages(pages, nr);
		g = gev(GUP_GRAB_ATOMICS);
		CHECK_EQ(t, gup_fast_mm(mm, a, nr, FOLL_PIN | FOLL_WRITE, pages, true), (long)nr);
		fast[batched] = gev(GUP_GRAB_ATOMICS) - g;
		f = 0;
		for (unsigned long i = 0; i < nr; i++)
			f += pages[i] != thpt_page_of(mm, a + i * SZ_4K);
		KEXPECT_EQ(t, f, 0);
		unpin_user_pages(pages, nr);
	}
	pr_info("gup: 16 x 64K pinned: batched %ld steps %ld locks %ld atomics (fast %ld), "
		"per-page %ld steps %ld locks %ld atomics (fast %ld)\n",
		steps[1], locks[1], atomics[1], fast[1], steps[0], locks[0], atomics[0], fast[0]);
	/*
	 * One step and two atomics (refcount, pincount) per folio, or per
	 * page; the 16 folios share one page table: one lock hold, or one
	 * per page.
	 */
	KEXPECT_EQ(t, steps[1], 16);
	KEXPECT_EQ(t, locks[1], 1);
	KEXPECT_EQ(t, locks[0], (long)nr);
	KEXPECT_EQ(t, atomics[1], 32);
	KEXPECT_EQ(t, fast[1], 32);
	KEXPECT_EQ(t, steps[0], (long)nr);
	KEXPECT_EQ(t, atomics[0], 2 * (long)nr);
	KEXPECT_EQ(t, fast[0], 2 * (long)nr);

	/*
	 * A hole in the 7th folio (page 100): the first lock hold takes the
	 * pages up to it and stops there; the fault fills it; the second hold
	 * takes the rest. Every page is the one mapped at its address.
	 */
	{
		long l = gev(GUP_FOLLOW_LOCKS), faults = gev(GUP_FAULTS), f = 0;

		gup_batching = true;
		CHECK_EQ(t, thpt_advise(mm, a + 100 * SZ_4K, SZ_4K, MADV_DONTNEED), 0);
		CHECK_EQ(t, pin(mm, a, nr, FOLL_WRITE), (long)nr);
		for (unsigned long i = 0; i < nr; i++)
			f += pages[i] != thpt_page_of(mm, a + i * SZ_4K);
		KEXPECT_EQ(t, f, 0);
		KEXPECT_EQ(t, gev(GUP_FAULTS) - faults, 1);
		KEXPECT_EQ(t, gev(GUP_FOLLOW_LOCKS) - l, 2);
		unpin_user_pages(pages, nr);
	}
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	gup_batching = saved;
	thpt_end(t, &c);
}

/* ---- 3. unpin and dirty ---- */

static void unpin_dirty_lock_dirties(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *f0, *f1;

	mm = gupt_begin_mapped(t, &c, 4, false);
	CHECK(t, mm != NULL);
	f0 = thpt_folio_of(mm, a);
	f1 = thpt_folio_of(mm, a + SZ_64K);
	clear_page_flag((struct page *)f0, PG_dirty);
	clear_page_flag((struct page *)f1, PG_dirty);
	CHECK_EQ(t, pin(mm, a, 16, FOLL_WRITE), 16);
	unpin_user_pages(pages, 16);
	KEXPECT_FALSE(t, test_page_flag((struct page *)f0, PG_dirty));
	CHECK_EQ(t, pin(mm, a + SZ_64K, 16, FOLL_WRITE), 16);
	unpin_user_pages_dirty_lock(pages, 16, true);
	KEXPECT_TRUE(t, test_page_flag((struct page *)f1, PG_dirty));
	KEXPECT_FALSE(t, folio_maybe_dma_pinned(f1));
	KEXPECT_FALSE(t, folio_test_locked(f1));
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 4. migration, split and fork meet a pin ---- */

static void pinned_folio_refused_by_migration_and_split(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long pfn;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, gupt_map_order(mm, a, 4), 0);
	folio = thpt_folio_of(mm, a);
	pfn = folio_pfn(folio);
	CHECK_EQ(t, pin(mm, a + SZ_4K, 2, FOLL_WRITE), 2);
	KEXPECT_NE(t, thpt_move_folio(mm, a, target, NULL), 0);
	KEXPECT_EQ(t, thpt_head_pfn_of(mm, a), pfn);
	folio_get(folio);	/* the splitter's reference */
	KEXPECT_EQ(t, thpt_split(folio, 0), -EAGAIN);	/* as Linux */
	KEXPECT_EQ(t, thpt_order_of(mm, a), 4);
	KEXPECT_EQ(t, mm_verify(), 0);
	unpin_user_pages(pages, 2);
	/* Unpinned: both work. */
	KEXPECT_EQ(t, thpt_split(folio, 0), 0);
	folio_put(folio);
	KEXPECT_EQ(t, thpt_move_folio(mm, a, target, NULL), 0);
	KEXPECT_EQ(t, page_to_nid(thpt_page_of(mm, a)), target);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

static void fork_copies_a_pinned_page(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm, *child;

	mm = gupt_begin_mapped(t, &c, 0, false);
	CHECK(t, mm != NULL);
	thpt_write_pattern(mm, a, SZ_16K, 4);
	CHECK_EQ(t, pin(mm, a, 1, FOLL_WRITE), 1);	/* the first page only */
	child = thpt_fork_mm(&c, mm);
	CHECK(t, child != NULL);
	/* Pinned: copied, the parent keeps its exclusive page. Not pinned: shared. */
	KEXPECT_NE(t, thpt_pfn_of(child, a), thpt_pfn_of(mm, a));
	KEXPECT_PTR_EQ(t, thpt_page_of(mm, a), pages[0]);
	KEXPECT_TRUE(t, thpt_exclusive_at(mm, a));
	KEXPECT_EQ(t, thpt_pfn_of(child, a + SZ_4K), thpt_pfn_of(mm, a + SZ_4K));
	KEXPECT_EQ(t, thpt_pattern_mismatches(child, a, SZ_16K, 4), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	unpin_user_page(pages[0]);
out:
	thpt_end(t, &c);
}

/* ---- 5. copy-on-write and pins ---- */

/* A read-only pin of a page shared with a child unshares it: later writes reach the pin. */
static void readonly_pin_unshares_a_shared_page(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm, *child;
	unsigned long pfn;

	mm = gupt_begin_mapped(t, &c, 4, false);
	CHECK(t, mm != NULL);
	thpt_write_pattern(mm, a, SZ_64K, 5);
	child = thpt_fork_mm(&c, mm);
	CHECK(t, child != NULL);
	pfn = thpt_pfn_of(mm, a);
	KEXPECT_FALSE(t, thpt_exclusive_at(mm, a));
	CHECK_EQ(t, pin(mm, a, 1, 0), 1);
	KEXPECT_TRUE(t, thpt_exclusive_at(mm, a));
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, a)));	/* unshared, still read-only */
	KEXPECT_PTR_EQ(t, thpt_page_of(mm, a), pages[0]);
	KEXPECT_NE(t, thpt_pfn_of(mm, a), pfn);			/* a page of a large folio: copied */
	KEXPECT_EQ(t, thpt_pfn_of(child, a), pfn);
	/* The parent writes: the fault reuses the exclusive page, the pin sees it. */
	CHECK_EQ(t, fault(mm, a, true), 0);
	KEXPECT_PTR_EQ(t, thpt_page_of(mm, a), pages[0]);
	*thpt_byte_of(mm, a + 8) = 0x77;
	KEXPECT_EQ(t, ((volatile u8 *)page_address(pages[0]))[8], 0x77);
	KEXPECT_NE(t, *thpt_byte_of(child, a + 8), 0x77);
	KEXPECT_EQ(t, mm_verify(), 0);
	unpin_user_page(pages[0]);
out:
	thpt_end(t, &c);
}

/* Errors as Linux; FOLL_FORCE writes a read-only private mapping through a private copy. */
static void errors_and_foll_force(struct ktest *t)
{
	const unsigned long a = AREA, ro = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long pfn;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, 4 * SZ_4K), a);
	KEXPECT_EQ(t, pin(mm, a - SZ_4K, 2, 0), -EFAULT);		/* a hole first */
	KEXPECT_EQ(t, pin(mm, a, 8, FOLL_WRITE), 4);			/* partial */
	unpin_user_pages(pages, 4);
	KEXPECT_EQ(t, pin(mm, a, 1, FOLL_PIN | FOLL_GET), -EINVAL);
	KEXPECT_EQ(t, pin(mm, a + 1, 1, 0), 1);				/* the page holding it */
	KEXPECT_PTR_EQ(t, pages[0], thpt_page_of(mm, a));
	unpin_user_page(pages[0]);
	/* Nothing mapped at ro + 4K yet: FOLL_NOFAULT finds nothing. */
	CHECK_EQ(t, thpt_map_anon(mm, ro, 2 * SZ_4K), ro);
	KEXPECT_EQ(t, pin(mm, ro, 1, FOLL_NOFAULT), -EFAULT);
	CHECK_EQ(t, fault(mm, ro, true), 0);
	*thpt_byte_of(mm, ro) = 0x11;
	CHECK_EQ(t, thpt_protect(mm, ro, 2 * SZ_4K, PROT_READ), 0);
	KEXPECT_EQ(t, pin(mm, ro, 1, FOLL_WRITE), -EFAULT);
	CHECK_EQ(t, thpt_protect(mm, ro, 2 * SZ_4K, PROT_NONE), 0);
	KEXPECT_EQ(t, pin(mm, ro, 1, 0), -EFAULT);
	CHECK_EQ(t, thpt_protect(mm, ro, 2 * SZ_4K, PROT_READ), 0);
	/* FOLL_FORCE: the exclusive page itself, read-only; the untouched one a new page. */
	pfn = thpt_pfn_of(mm, ro);
	CHECK_EQ(t, pin(mm, ro, 2, FOLL_WRITE | FOLL_FORCE), 2);
	KEXPECT_EQ(t, thpt_pfn_of(mm, ro), pfn);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, ro)));
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, ro + SZ_4K)));
	KEXPECT_TRUE(t, thpt_exclusive_at(mm, ro + SZ_4K));
	KEXPECT_PTR_EQ(t, thpt_page_of(mm, ro + SZ_4K), pages[1]);
	((u8 *)page_address(pages[1]))[3] = 0x22;
	KEXPECT_EQ(t, *thpt_byte_of(mm, ro + SZ_4K + 3), 0x22);
	unpin_user_pages(pages, 2);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 6. GUP-fast ---- */

static void gup_fast_takes_what_is_mapped(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm, *child;
	long fell;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, gupt_map_order(mm, a, HPAGE_PMD_ORDER), 0);
	CHECK(t, thpt_huge_pmd(mm, a) != NULL);
	/* A PMD mapping from its middle: the rest of it in one go. */
	CHECK_EQ(t, gup_fast_mm(mm, a + SZ_1M, 256, FOLL_PIN | FOLL_WRITE, pages, true), 256);
	KEXPECT_PTR_EQ(t, pages[255], thpt_page_of(mm, a + SZ_2M - SZ_4K));
	KEXPECT_EQ(t, gupt_pins_of(thpt_folio_of(mm, a)), 256);
	unpin_user_pages(pages, 256);
	/* Nothing mapped: the lockless walk takes nothing; with the fallback, everything. */
	CHECK_EQ(t, thpt_map_anon(mm, b, 8 * SZ_4K), b);
	KEXPECT_EQ(t, gup_fast_mm(mm, b, 8, FOLL_PIN | FOLL_WRITE, pages, true), 0);
	fell = gev(GUP_FAST_FALLBACKS);
	CHECK_EQ(t, gup_fast_mm(mm, b, 8, FOLL_PIN | FOLL_WRITE, pages, false), 8);
	KEXPECT_EQ(t, gev(GUP_FAST_FALLBACKS) - fell, 1);
	unpin_user_pages(pages, 8);
	/* Shared with a child: a read pin needs an unshare, which only the slow path does. */
	child = thpt_fork_mm(&c, mm);
	CHECK(t, child != NULL);
	KEXPECT_EQ(t, gup_fast_mm(mm, b, 8, FOLL_PIN, pages, true), 0);
	KEXPECT_EQ(t, gup_fast_mm(mm, b, 8, FOLL_GET, pages, true), 8);	/* a reference may */
	for (int i = 0; i < 8; i++)
		put_page(pages[i]);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/*
 * GUP-fast racing a PMD split or a munmap on another CPU, made to land
 * inside the walk: gup_fast_hook (interrupts off, the PMD read) lets the
 * other CPU go and waits until it changed the entries. The walk must take
 * nothing stale, and a page table must not be freed while it walks.
 */
struct fast_race {
	struct mm_struct *mm;
	unsigned long addr;
	bool munmap;
	volatile bool go, changed_seen, freed_during_walk;
	unsigned long freed_before;
	struct page *table;		/* the page table the walk reads (munmap) */
	struct task *thread;
};

static struct fast_race *the_race;

static int race_thread(void *arg)
{
	struct fast_race *r = arg;

	while (!r->go)
		cpu_relax();
	if (r->munmap) {
		thpt_unmap(r->mm, r->addr, SZ_2M);
	} else {
		down_read(&r->mm->mmap_lock);
		split_huge_pmd(find_vma(r->mm, r->addr), r->addr);
		up_read(&r->mm->mmap_lock);
	}
	return 0;
}

static void race_hook(unsigned long addr)
{
	struct fast_race *r = the_race;
	pte_t *pmd = pmd_lookup(r->mm->pgd, addr, false);
	pte_t before = READ_ONCE(*pmd);
	pte_t *pte = pmd_leaf(before) ? NULL : pte_offset(&before, addr);

	gup_fast_hook = NULL;	/* once */
	r->go = true;
	/* Until the other CPU changed what this walk is about to read (bounded). */
	for (unsigned long spin = 0; spin < 2000000000UL; spin++) {
		if (pte ? !READ_ONCE(*pte) : READ_ONCE(*pmd) != before) {
			r->changed_seen = true;
			break;
		}
		cpu_relax();
	}
	/* It now waits for this CPU to take its TLB-flush IPI: no table is freed yet. */
	for (int spin = 0; spin < 1000000; spin++)
		cpu_relax();
	r->freed_during_walk = r->table && (page_count(r->table) == 0 || PageBuddy(r->table));
}

static void gup_fast_races(struct ktest *t, bool munmap)
{
	const unsigned long a = AREA;
	struct fast_race r = { .munmap = munmap };
	struct thp_ctx c;
	struct mm_struct *mm;
	int cpu, other = -1;
	long got;

	thpt_begin(t, &c);
	for_each_online_cpu(cpu)
		if (cpu != smp_processor_id())
			other = cpu;
	if (other < 0) {
		thpt_end(t, &c);
		ktest_skip(t, "one CPU");
	}
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, gupt_map_order(mm, a, munmap ? 0 : HPAGE_PMD_ORDER), 0);
	r.mm = mm;
	r.addr = a;
	r.freed_before = mm->pgtables_freed;
	r.table = munmap ? virt_to_page(thpt_pte_of(mm, a)) : NULL;
	r.thread = kthread_create(race_thread, &r, "gup-race");
	CHECK(t, r.thread != NULL);
	kthread_bind(r.thread, other);
	wake_up_process(r.thread);
	the_race = &r;
	gup_fast_hook = race_hook;
	got = gup_fast_mm(mm, a, 16, FOLL_PIN | FOLL_WRITE, pages, true);
	gup_fast_hook = NULL;
	kthread_join(r.thread);
	KEXPECT_TRUE(t, r.changed_seen);
	KEXPECT_FALSE(t, r.freed_during_walk);
	if (munmap) {
		KEXPECT_EQ(t, got, 0);		/* the PTEs were gone: nothing taken */
		KEXPECT_EQ(t, mm->pgtables_freed - r.freed_before, 1);
	} else {
		/* The PMD changed under the walk: what it took was given back. */
		KEXPECT_EQ(t, got, 0);
		KEXPECT_TRUE(t, thpt_huge_pmd(mm, a) == NULL);
		KEXPECT_EQ(t, gupt_pins_of(thpt_folio_of(mm, a)), 0);
		/* The slow path then pins the PTE-mapped pages. */
		CHECK_EQ(t, gup_fast_mm(mm, a, 16, FOLL_PIN | FOLL_WRITE, pages, false), 16);
		unpin_user_pages(pages, 16);
	}
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	gup_fast_hook = NULL;
	thpt_end(t, &c);
}

static void gup_fast_races_a_pmd_split(struct ktest *t)
{
	gup_fast_races(t, false);
}

static void gup_fast_races_munmap(struct ktest *t)
{
	gup_fast_races(t, true);
}

/* ---- 7. FOLL_LONGTERM ---- */

static int slow_node(void)
{
	for (int n = 0; n < nr_node_ids; n++)
		if (node_has_memory(n) && numa_nodes[n].tier == MEM_TIER_SLOW)
			return n;
	return NUMA_NO_NODE;
}

/*
 * gupt_begin_mapped with 64 KiB folios, the first moved to the slow tier
 * (*slow; the case skips without one); NULL (reported) on failure.
 */
static struct mm_struct *begin_on_slow_tier(struct ktest *t, struct thp_ctx *c, int *slow)
{
	struct mm_struct *mm;

	*slow = slow_node();
	if (*slow == NUMA_NO_NODE)
		ktest_skip(t, "no slow-tier node");
	mm = gupt_begin_mapped(t, c, 4, false);
	if (mm && thpt_move_folio(mm, AREA, *slow, NULL)) {
		KEXPECT_TRUE(t, false);		/* the folio did not move to the slow tier */
		return NULL;
	}
	return mm;
}

static void longterm_pin_moves_off_the_slow_tier(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm;
	long moved;
	int slow;

	mm = begin_on_slow_tier(t, &c, &slow);
	CHECK(t, mm != NULL);
	thpt_write_pattern(mm, a, SZ_64K, 6);
	CHECK_EQ(t, page_to_nid(thpt_page_of(mm, a)), slow);
	/* A short-term pin leaves it there. */
	CHECK_EQ(t, pin(mm, a, 16, FOLL_WRITE), 16);
	KEXPECT_EQ(t, page_to_nid(pages[0]), slow);
	unpin_user_pages(pages, 16);
	/* A long-term one moves it first, and pins what is mapped afterwards. */
	moved = gev(GUP_LONGTERM_MIGRATED);
	CHECK_EQ(t, pin(mm, a, 16, FOLL_WRITE | FOLL_LONGTERM), 16);
	KEXPECT_EQ(t, gev(GUP_LONGTERM_MIGRATED) - moved, 1);
	KEXPECT_NE(t, page_to_nid(pages[0]), slow);
	KEXPECT_EQ(t, numa_nodes[page_to_nid(pages[15])].tier, MEM_TIER_DRAM);
	KEXPECT_PTR_EQ(t, thpt_page_of(mm, a + 15 * SZ_4K), pages[15]);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_64K, 6), 0);
	/* The lockless walk leaves a slow-tier folio to the slow path too. */
	unpin_user_pages(pages, 16);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* A long-term pin of a folio on the slow tier that cannot move (referenced) fails, as Linux. */
static void longterm_pin_fails_when_the_folio_cannot_move(struct ktest *t)
{
	const unsigned long a = AREA;
	struct page *held;
	struct folio *folio;
	struct thp_ctx c;
	struct mm_struct *mm;
	int refs, slow;

	mm = begin_on_slow_tier(t, &c, &slow);
	CHECK(t, mm != NULL);
	folio = thpt_folio_of(mm, a);
	CHECK_EQ(t, folio_nid(folio), slow);
	/* A reference (FOLL_GET) keeps the folio where it is: migration cannot move it. */
	CHECK_EQ(t, pin(mm, a + SZ_4K, 1, FOLL_GET), 1);
	held = pages[0];
	refs = folio_ref_count(folio);
	KEXPECT_EQ(t, pin(mm, a, 16, FOLL_WRITE | FOLL_LONGTERM), -ENOMEM);
	KEXPECT_EQ(t, gupt_pins_of(folio), 0);		/* nothing left pinned */
	KEXPECT_EQ(t, folio_ref_count(folio), refs);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, a), folio);
	KEXPECT_EQ(t, folio_nid(folio), slow);
	/* The lockless walk leaves it to the slow path. */
	KEXPECT_EQ(t, gup_fast_mm(mm, a, 16, FOLL_PIN | FOLL_LONGTERM, pages, true), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The reference gone, the same pin moves it and succeeds. */
	put_page(held);
	CHECK_EQ(t, pin(mm, a, 16, FOLL_WRITE | FOLL_LONGTERM), 16);
	KEXPECT_NE(t, page_to_nid(pages[0]), slow);
	KEXPECT_PTR_EQ(t, thpt_page_of(mm, a), pages[0]);
	unpin_user_pages(pages, 16);
out:
	thpt_end(t, &c);
}

/* ---- 8. lock assertions ---- */

#ifdef DEBUG_LOCKS
#define ASSERTS() atomic_read(&lock_debug_counts.assert_not_held)

/*
 * The slow path's mmap_lock rule is asserted, not only written down: a
 * pin without the lock is reported by gup_locked, __get_user_pages and
 * follow_page_mask (one step: a page mapped), and nothing with it.
 */
static void slow_path_asserts_mmap_lock(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm;
	int before;
	u64 pos;

	mm = gupt_begin_mapped(t, &c, 0, false);
	CHECK(t, mm != NULL);
	before = ASSERTS();
	CHECK_EQ(t, pin(mm, a, 1, 0), 1);
	unpin_user_page(pages[0]);
	KEXPECT_EQ(t, ASSERTS(), before);
	pos = printk_log_pos();
	/* Nobody else uses this mm: the walk is safe, only the rule is broken. */
	CHECK_EQ(t, pin_user_pages_remote(mm, a, 1, 0, pages, NULL), 1);
	unpin_user_page(pages[0]);
	KEXPECT_EQ(t, ASSERTS(), before + 3);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: lock not held: rwsem &(mm)->mmap_lock"));
out:
	thpt_end(t, &c);
}
#else
static void slow_path_asserts_mmap_lock(struct ktest *t)
{
	ktest_skip(t, "built without DEBUG_LOCKS");
}
#endif

KTEST_SUITE(gup,
	    KTEST_CASE(pins_every_folio_order),
	    KTEST_CASE(batched_and_per_page_counts),
	    KTEST_CASE(unpin_dirty_lock_dirties),
	    KTEST_CASE(pinned_folio_refused_by_migration_and_split),
	    KTEST_CASE(fork_copies_a_pinned_page),
	    KTEST_CASE(readonly_pin_unshares_a_shared_page),
	    KTEST_CASE(errors_and_foll_force),
	    KTEST_CASE(gup_fast_takes_what_is_mapped),
	    KTEST_CASE(gup_fast_races_a_pmd_split),
	    KTEST_CASE(gup_fast_races_munmap),
	    KTEST_CASE(longterm_pin_moves_off_the_slow_tier),
	    KTEST_CASE(longterm_pin_fails_when_the_folio_cannot_move),
	    KTEST_CASE(slow_path_asserts_mmap_lock));
