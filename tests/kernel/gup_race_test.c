/*
 * The gup_race suite: the races GUP claims to handle (mm/gup.c,
 * docs/mm/gup.md), each made to land inside the window it is about with a
 * hook, not by timing luck:
 *   - GUP-fast pinning a page while fork, on another CPU, has just made it
 *     shared and not yet write-protected it (fork_share_hook): the walk
 *     must see the fork (mm->write_protect_seq) and take nothing, or fork
 *     would give the child the pinned page;
 *   - GUP-fast between reading a run of PTEs and taking its folio
 *     (gup_fast_pte_hook), while another CPU migrates the folio or munmaps
 *     it: the other CPU changes the entries and then waits for this CPU's
 *     TLB-flush IPI (interrupts are off), the walk takes the folio, reads
 *     the entries again, gives it back; the other CPU then finishes as if
 *     the walk had never been there. Or splits it: no entry changes, the
 *     walk must notice the folio it counted the run in is gone;
 *   - the same window while another CPU collapses the block (MADV_COLLAPSE):
 *     the collapse clears the PMD, then waits for this CPU's TLB-flush IPI
 *     before it counts references; the walk sees the PMD gone and gives
 *     back what it took, so the collapse finds no extra reference and
 *     succeeds (a collapse that counted before the walks ended would say
 *     EAGAIN, one that did not count would copy pages a pin still holds);
 *   - the slow path meeting a folio under migration (migrate_unmapped_hook):
 *     GUP-fast takes nothing, a pin on another CPU waits for the migration
 *     and pins the new folio.
 * mm_verify must report nothing after each.
 */
#include <quire/gup.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/migrate.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/percpu.h>
#include <quire/sched.h>
#include <quire/time.h>
#include "gup_test.h"

/* Bounded waits (5 s): a race that does not happen fails its case, never hangs it. */
#define WAIT_UNTIL(cond)						\
	({								\
		u64 __end = ktime_get_ns() + 5000000000ULL;		\
		while (!(cond) && ktime_get_ns() < __end)		\
			cpu_relax();					\
		(cond);							\
	})

static struct page *pages[16];

enum race_kind { RACE_FORK, RACE_MIGRATE, RACE_MUNMAP, RACE_SPLIT, RACE_PIN, RACE_COLLAPSE };

struct race {
	enum race_kind kind;
	struct mm_struct *mm;
	unsigned long addr;
	int target;			/* RACE_MIGRATE: the node */
	struct folio *folio;		/* RACE_SPLIT: held by a reference */
	volatile bool go, in_window, walk_done, changed_seen, done, done_in_window;
	long result;			/* the other CPU's operation */
	struct mm_struct *child;	/* RACE_FORK */
	struct task *thread;
};

static struct race *the_race;

static long gev(enum gup_event e)
{
	return atomic_long_read(&gup_events[e]);
}

/* The other CPU's side: wait for go, then the operation racing the walk. */
static int race_thread(void *arg)
{
	struct race *r = arg;

	WAIT_UNTIL(r->go);
	switch (r->kind) {
	case RACE_FORK:
		r->child = dup_mm(r->mm);
		break;
	case RACE_MIGRATE:
		r->result = thpt_move_folio(r->mm, r->addr, r->target, NULL);
		break;
	case RACE_MUNMAP:
		r->result = thpt_unmap(r->mm, r->addr, SZ_64K);
		break;
	case RACE_SPLIT:
		r->result = thpt_split(r->folio, 0);
		break;
	case RACE_COLLAPSE:
		down_write(&r->mm->mmap_lock);
		r->result = do_madvise(r->mm, r->addr, SZ_2M, MADV_COLLAPSE);
		up_write(&r->mm->mmap_lock);
		break;
	case RACE_PIN:
		down_read(&r->mm->mmap_lock);
		r->result = pin_user_pages_remote(r->mm, r->addr, 16, FOLL_WRITE, pages, NULL);
		up_read(&r->mm->mmap_lock);
		break;
	}
	r->done = true;
	return 0;
}

/* Start r's thread on another CPU than this one: false when there is none. */
static bool start_other_cpu(struct race *r)
{
	int cpu, other = -1;

	for_each_online_cpu(cpu)
		if (cpu != smp_processor_id())
			other = cpu;
	if (other < 0)
		return false;
	r->thread = kthread_create(race_thread, r, "gup-race");
	if (!r->thread)
		return false;
	kthread_bind(r->thread, other);
	wake_up_process(r->thread);
	return true;
}

/* ---- 1. GUP-fast and fork ---- */

/*
 * fork, on the other CPU, at the first page it shares: the page is no
 * longer anon-exclusive and the parent's PTE is still writable. The walk
 * runs now, in this window, then fork goes on.
 */
static void fork_window(unsigned long addr)
{
	struct race *r = the_race;

	if (addr != r->addr)
		return;
	fork_share_hook = NULL;		/* once */
	r->in_window = true;
	WAIT_UNTIL(r->walk_done);
}

static void gup_fast_pin_races_fork(struct ktest *t)
{
	const unsigned long a = AREA;
	struct race r = { .kind = RACE_FORK, .addr = a, .go = true };
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long pfn;
	long got = -1;

	mm = gupt_begin_mapped(t, &c, 0, false);
	CHECK(t, mm != NULL);
	thpt_write_pattern(mm, a, SZ_16K, 7);
	pfn = thpt_pfn_of(mm, a);
	r.mm = mm;
	the_race = &r;
	fork_share_hook = fork_window;
	if (!start_other_cpu(&r)) {
		fork_share_hook = NULL;
		thpt_end(t, &c);
		ktest_skip(t, "one CPU");
	}
	if (WAIT_UNTIL(r.in_window))
		got = gup_fast_mm(mm, a, 1, FOLL_PIN | FOLL_WRITE, pages, true);
	r.walk_done = true;
	kthread_join(r.thread);
	fork_share_hook = NULL;
	KEXPECT_TRUE(t, r.in_window);
	CHECK(t, r.child != NULL);
	/* The walk saw the fork in progress and left the page to the slow path. */
	KEXPECT_EQ(t, got, 0);
	if (got == 1) {
		/* Had it pinned the page, fork must still not have shared it. */
		KEXPECT_NE(t, thpt_pfn_of(r.child, a), pfn);
		KEXPECT_TRUE(t, thpt_exclusive_at(mm, a));
	}
	KEXPECT_EQ(t, mm_verify(), 0);
	if (got == 1)
		unpin_user_page(pages[0]);
	/* Shared now: a write pin of the parent's page copies it, the child keeps the old one. */
	CHECK_EQ(t, gup_fast_mm(mm, a, 1, FOLL_PIN | FOLL_WRITE, pages, false), 1);
	KEXPECT_PTR_EQ(t, thpt_page_of(mm, a), pages[0]);
	KEXPECT_EQ(t, thpt_pfn_of(r.child, a), pfn);
	KEXPECT_EQ(t, thpt_pattern_mismatches(r.child, a, SZ_16K, 7), 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_16K, 7), 0);
	KEXPECT_TRUE(t, thpt_exclusive_at(mm, a));
	unpin_user_page(pages[0]);
	mmput(r.child);
out:
	fork_share_hook = NULL;
	thpt_end(t, &c);
}

/* ---- 2. GUP-fast between reading the PTEs and taking the folio ---- */

/*
 * In the window: let the other CPU go and wait until it changed the PTE
 * this walk read (a migration or a munmap then waits for this CPU's
 * TLB-flush IPI before it moves or frees anything), or finished (a split
 * of a PTE-mapped folio changes no entry: it freezes the reference count
 * and rewrites the folio's metadata under the page-table locks).
 */
static void pte_window(unsigned long addr)
{
	struct race *r = the_race;
	pte_t *ptep = thpt_pte_of(r->mm, addr);
	pte_t before = ptep ? READ_ONCE(*ptep) : 0;

	gup_fast_pte_hook = NULL;	/* once */
	r->in_window = true;
	r->go = true;
	WAIT_UNTIL(!ptep || READ_ONCE(*ptep) != before || r->done);
	r->changed_seen = ptep && READ_ONCE(*ptep) != before;
	r->done_in_window = r->done;
}

/*
 * Inside the grab, after it decided how to count (a large folio: refs,
 * then _pincount) and before it takes the references: the other CPU
 * splits the folio to order 0 meanwhile.
 */
static void grab_window(void)
{
	struct race *r = the_race;

	gup_fast_grab_hook = NULL;	/* once */
	r->in_window = true;
	r->go = true;
	WAIT_UNTIL(r->done);
	r->done_in_window = r->done;
}

/* The same window for a collapse, which changes the PMD, not the entries of the old table. */
static void pmd_window(unsigned long addr)
{
	struct race *r = the_race;
	pte_t *pmdp = pmd_lookup(r->mm->pgd, addr, false);
	pte_t before = pmdp ? READ_ONCE(*pmdp) : 0;

	gup_fast_pte_hook = NULL;	/* once */
	r->in_window = true;
	r->go = true;
	WAIT_UNTIL(!pmdp || READ_ONCE(*pmdp) != before || r->done);
	r->changed_seen = pmdp && READ_ONCE(*pmdp) != before;
	r->done_in_window = r->done;
}

/*
 * A 64 KiB folio at AREA; the walk pins its 16 pages while the other CPU
 * does kind to it. The walk must take nothing, the other CPU must succeed,
 * and no pin may be left anywhere.
 */
static void gup_fast_grab_races(struct ktest *t, enum race_kind kind, unsigned long nr)
{
	const unsigned long a = AREA;
	struct race r = { .kind = kind, .addr = a };
	struct folio *folio;
	struct thp_ctx c;
	struct mm_struct *mm;
	long got;

	mm = gupt_begin_mapped(t, &c, 4, kind == RACE_MIGRATE);
	CHECK(t, mm != NULL);
	r.target = thpt_other_node(c.nid);
	thpt_write_pattern(mm, a, SZ_64K, 8);
	folio = thpt_folio_of(mm, a);
	r.mm = mm;
	if (kind == RACE_SPLIT) {
		folio_get(folio);	/* the splitter's reference */
		r.folio = folio;
	}
	the_race = &r;
	if (!start_other_cpu(&r)) {
		if (kind == RACE_SPLIT)
			folio_put(folio);
		thpt_end(t, &c);
		ktest_skip(t, "one CPU");
	}
	if (kind == RACE_SPLIT && nr == 1)
		gup_fast_grab_hook = grab_window;
	else
		gup_fast_pte_hook = kind == RACE_COLLAPSE ? pmd_window : pte_window;
	got = gup_fast_mm(mm, a, nr, FOLL_PIN | FOLL_WRITE, pages, true);
	gup_fast_pte_hook = NULL;
	gup_fast_grab_hook = NULL;
	r.go = true;	/* (the hook did, unless the walk never reached it) */
	kthread_join(r.thread);
	if (kind == RACE_SPLIT)
		folio_put(folio);
	KEXPECT_TRUE(t, r.in_window);
	if (kind == RACE_SPLIT)
		KEXPECT_TRUE(t, r.done_in_window);	/* split between the read and the grab */
	else
		KEXPECT_TRUE(t, r.changed_seen && !r.done_in_window);
	/*
	 * The entries or the folio changed under it: what the walk took went
	 * back. (Pinning the head page alone across a split to order 0, the
	 * walk must not keep a pin counted the large folio's way: unpinned
	 * the small folio's way it would take 1024 references off one.)
	 */
	KEXPECT_EQ(t, got, 0);
	if (got > 0) {
		bool counted_right = folio_maybe_dma_pinned(page_folio(pages[0]));

		KEXPECT_TRUE(t, counted_right);
		if (counted_right)
			unpin_user_pages(pages, (unsigned long)got);
	}
	KEXPECT_EQ(t, r.result, 0);
	switch (kind) {
	case RACE_MIGRATE:
		KEXPECT_EQ(t, page_to_nid(thpt_page_of(mm, a)), r.target);
		KEXPECT_EQ(t, gupt_pins_of(thpt_folio_of(mm, a)), 0);
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_64K, 8), 0);
		break;
	case RACE_MUNMAP:
		KEXPECT_EQ(t, thpt_pfn_of(mm, a), 0);
		break;
	case RACE_COLLAPSE:
		KEXPECT_TRUE(t, thpt_huge_pmd(mm, a) != NULL);
		KEXPECT_EQ(t, gupt_pins_of(thpt_folio_of(mm, a)), 0);
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_64K, 8), 0);
		break;
	case RACE_SPLIT:
		KEXPECT_EQ(t, thpt_order_of(mm, a), 0);
		KEXPECT_EQ(t, gupt_pins_of(thpt_folio_of(mm, a)), 0);
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_64K, 8), 0);
		break;
	default:
		break;
	}
	KEXPECT_EQ(t, mm_verify(), 0);
	if (kind != RACE_MUNMAP) {
		/* What is mapped now pins normally. */
		CHECK_EQ(t, gup_fast_mm(mm, a, 16, FOLL_PIN | FOLL_WRITE, pages, false), 16);
		KEXPECT_PTR_EQ(t, pages[15], thpt_page_of(mm, a + 15 * SZ_4K));
		unpin_user_pages(pages, 16);
	}
out:
	gup_fast_pte_hook = NULL;
	gup_fast_grab_hook = NULL;
	thpt_end(t, &c);
}

static void gup_fast_grab_races_migration(struct ktest *t)
{
	gup_fast_grab_races(t, RACE_MIGRATE, 16);
}

static void gup_fast_grab_races_munmap(struct ktest *t)
{
	gup_fast_grab_races(t, RACE_MUNMAP, 16);
}

static void gup_fast_grab_races_folio_split(struct ktest *t)
{
	gup_fast_grab_races(t, RACE_SPLIT, 16);
}

/*
 * The head page alone, split inside the grab: the folio the walk counted
 * stays the folio (its head), but now small.
 */
static void gup_fast_grab_races_folio_split_head(struct ktest *t)
{
	gup_fast_grab_races(t, RACE_SPLIT, 1);
}

static void gup_fast_grab_races_collapse(struct ktest *t)
{
	gup_fast_grab_races(t, RACE_COLLAPSE, 16);
}

/* ---- 3. the slow path meets a migration ---- */

static long fast_during_migration = -1;

/*
 * The folio is unmapped (migration entries) and locked: the lockless walk
 * takes nothing; a pin on the other CPU faults on the entry and waits.
 */
static void migration_window(struct folio *src)
{
	struct race *r = the_race;
	long faults = gev(GUP_FAULTS);

	(void)src;
	migrate_unmapped_hook = NULL;	/* once */
	r->in_window = true;
	fast_during_migration = gup_fast_mm(r->mm, r->addr, 16, FOLL_PIN | FOLL_WRITE, pages, true);
	r->go = true;
	/* Until the pin is in its fault on the migration entry (bounded), and a little more. */
	r->changed_seen = WAIT_UNTIL(gev(GUP_FAULTS) != faults);
	msleep(5);
}

static void slow_pin_waits_for_migration(struct ktest *t)
{
	const unsigned long a = AREA;
	struct race r = { .kind = RACE_PIN, .addr = a };
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long old_pfn;
	int moved;

	mm = gupt_begin_mapped(t, &c, 4, true);
	CHECK(t, mm != NULL);
	r.target = thpt_other_node(c.nid);
	thpt_write_pattern(mm, a, SZ_64K, 9);
	old_pfn = thpt_head_pfn_of(mm, a);
	r.mm = mm;
	the_race = &r;
	if (!start_other_cpu(&r)) {
		thpt_end(t, &c);
		ktest_skip(t, "one CPU");
	}
	fast_during_migration = -1;
	migrate_unmapped_hook = migration_window;
	moved = thpt_move_folio(mm, a, r.target, NULL);
	migrate_unmapped_hook = NULL;
	r.go = true;
	kthread_join(r.thread);
	KEXPECT_TRUE(t, r.in_window);
	KEXPECT_TRUE(t, r.changed_seen);
	KEXPECT_EQ(t, fast_during_migration, 0);	/* migration entries: nothing taken */
	KEXPECT_EQ(t, moved, 0);
	/* The pin waited, then took the new folio, all 16 pages of it. */
	KEXPECT_EQ(t, r.result, 16);
	CHECK_EQ(t, r.result, 16);
	KEXPECT_NE(t, thpt_head_pfn_of(mm, a), old_pfn);
	KEXPECT_PTR_EQ(t, pages[0], thpt_page_of(mm, a));
	KEXPECT_PTR_EQ(t, pages[15], thpt_page_of(mm, a + 15 * SZ_4K));
	KEXPECT_EQ(t, page_to_nid(pages[0]), r.target);
	KEXPECT_EQ(t, gupt_pins_of(page_folio(pages[0])), 16);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_64K, 9), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	unpin_user_pages(pages, 16);
out:
	migrate_unmapped_hook = NULL;
	thpt_end(t, &c);
}

KTEST_SUITE(gup_race,
	    KTEST_CASE(gup_fast_pin_races_fork),
	    KTEST_CASE(gup_fast_grab_races_migration),
	    KTEST_CASE(gup_fast_grab_races_munmap),
	    KTEST_CASE(gup_fast_grab_races_folio_split),
	    KTEST_CASE(gup_fast_grab_races_folio_split_head),
	    KTEST_CASE(gup_fast_grab_races_collapse),
	    KTEST_CASE(slow_pin_waits_for_migration));
