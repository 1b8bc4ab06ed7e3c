/*
 * The migrate suite (mm/migrate.c, docs/mm/migrate.md), on address spaces
 * built in the test with the thp suite's helpers:
 *   - the batched unmap and restore against migrate_batch=0: rmap calls,
 *     TLB flushes and rmap-walk steps per folio;
 *   - a folio with a reference nobody accounts for refuses to move, and
 *     every mapping comes back as it was (then it moves);
 *   - no target memory: a small folio stays (-ENOMEM), a THP is split and
 *     its pages move;
 *   - a write fault on another CPU meets the migration entries, waits for
 *     the folio lock and lands on the new page.
 * Cases needing a second node with memory skip on a one-node machine.
 */
#include <quire/migrate.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/errno.h>
#include "thp_test.h"

static long cost(enum mm_cost_item item)
{
	return atomic_long_read(&mm_cost[item]);
}

static long event(enum migrate_event e)
{
	return atomic_long_read(&migrate_events[e]);
}

static struct folio *no_target(struct folio *src, unsigned long private)
{
	(void)src, (void)private;
	return NULL;
}

/* Only order 0 is to be had: large folios must split. */
static struct folio *small_targets_only(struct folio *src, unsigned long private)
{
	return folio_order(src) ? NULL : alloc_migration_target(src, private);
}

/* Nodes of every page of [addr, addr + len) that are not nid. */
static unsigned long pages_not_on(struct mm_struct *mm, unsigned long addr, unsigned long len,
				  int nid)
{
	unsigned long bad = 0;

	for (unsigned long a = addr; a < addr + len; a += SZ_4K) {
		struct page *p = thpt_page_of(mm, a);

		bad += !p || page_to_nid(p) != nid;
	}
	return bad;
}

/* 16 folios of 64 KiB: one rmap call each way and one flush per folio, or one per page. */
static void batched_and_per_page_counts(struct ktest *t)
{
	const unsigned long a = AREA, nr_folios = 16, nr = SZ_64K / SZ_4K;
	struct thp_ctx c;
	struct mm_struct *mm;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, nr_folios * SZ_64K), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, nr_folios * SZ_64K), 0);
	CHECK_EQ(t, thpt_order_of(mm, a), 4);
	thpt_write_pattern(mm, a, nr_folios * SZ_64K, 3);
	for (int batched = 1; batched >= 0; batched--) {
		int nid = batched ? target : c.nid;
		long calls = cost(MM_COST_RMAP_CALLS), flushes = cost(MM_COST_TLB_FLUSHES);
		long steps = cost(MM_COST_RMAP_WALK_STEPS), moved = event(PGMIGRATE_SUCCESS);

		migrate_batching = batched;
		for (unsigned long f = 0; f < nr_folios; f++)
			KEXPECT_EQ(t, thpt_move_folio(mm, a + f * SZ_64K, nid, NULL), 0);
		migrate_batching = true;
		KEXPECT_EQ(t, cost(MM_COST_RMAP_CALLS) - calls, 2 * nr_folios * (batched ? 1 : nr));
		KEXPECT_EQ(t, cost(MM_COST_TLB_FLUSHES) - flushes, nr_folios * (batched ? 1 : nr));
		/* One VMA maps each folio: one walk step to unmap, one to restore. */
		KEXPECT_EQ(t, cost(MM_COST_RMAP_WALK_STEPS) - steps, 2 * nr_folios);
		KEXPECT_EQ(t, event(PGMIGRATE_SUCCESS) - moved, nr_folios * nr);
		KEXPECT_EQ(t, pages_not_on(mm, a, nr_folios * SZ_64K, nid), 0);
		KEXPECT_EQ(t, thpt_order_of(mm, a + SZ_64K), 4);
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, nr_folios * SZ_64K, 3), 0);
		KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, a)) && thpt_exclusive_at(mm, a));
	}
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	migrate_batching = true;
	thpt_end(t, &c);
}

/* A reference the migration cannot account for: the folio stays, mapped as before. */
static void extra_reference_refuses_and_restores(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long pfn;
	long failed;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, SZ_64K), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, SZ_64K), 0);
	folio = thpt_folio_of(mm, a);
	CHECK(t, folio && folio_order(folio) == 4);
	pfn = folio_pfn(folio);
	thpt_write_pattern(mm, a, SZ_64K, 7);
	folio_get(folio);		/* like a pin nobody told the migration about */
	failed = event(PGMIGRATE_FAIL);
	KEXPECT_EQ(t, thpt_move_folio(mm, a, target, NULL), 1);
	KEXPECT_EQ(t, event(PGMIGRATE_FAIL) - failed, 16);
	KEXPECT_EQ(t, thpt_head_pfn_of(mm, a + SZ_64K - SZ_4K), pfn);
	KEXPECT_EQ(t, folio_mapcount(folio), 16);
	KEXPECT_EQ(t, folio_ref_count(folio), 16 + 1);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, a + SZ_4K)) && thpt_exclusive_at(mm, a + SZ_4K));
	KEXPECT_FALSE(t, folio_test_locked(folio));
	KEXPECT_EQ(t, mm_verify(), 0);
	folio_put(folio);
	KEXPECT_EQ(t, thpt_move_folio(mm, a, target, NULL), 0);
	KEXPECT_EQ(t, pages_not_on(mm, a, SZ_64K, target), 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_64K, 7), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* No target: a small folio stays; a THP splits and its 512 pages move. */
static void no_target_memory(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long pfn;
	long split;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, SZ_4K), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	pfn = thpt_pfn_of(mm, a);
	KEXPECT_EQ(t, thpt_move_folio(mm, a, target, no_target), -ENOMEM);
	KEXPECT_EQ(t, thpt_pfn_of(mm, a), pfn);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, a)));

	CHECK_MAP_PMD(t, mm, b);
	thpt_write_pattern(mm, b, SZ_2M, 9);
	split = event(THP_MIGRATION_SPLIT);
	KEXPECT_EQ(t, thpt_move_folio(mm, b, target, small_targets_only), 0);
	KEXPECT_EQ(t, event(THP_MIGRATION_SPLIT) - split, 1);
	KEXPECT_EQ(t, pages_not_on(mm, b, SZ_2M, target), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, b + SZ_1M), 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, b, SZ_2M, 9), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- a fault racing the migration ---- */

struct fault_race {
	struct mm_struct *mm;
	unsigned long addr;
	int cpu;
	volatile int result;	/* of the fault; 1 while it runs */
	volatile bool saw_entry, waited;
	struct task *thread;
};

static struct fault_race *the_race;

static int fault_thread(void *arg)
{
	struct fault_race *r = arg;

	r->result = handle_mm_fault(r->mm, r->addr, FAULT_FLAG_WRITE);
	return 0;
}

/*
 * Between unmap and copy: the entry is there; a write fault started on
 * another CPU must still be waiting 50 ms later (it sleeps on the folio
 * lock) and finish once the migration ends.
 */
static void start_fault_while_unmapped(struct folio *src)
{
	struct fault_race *r = the_race;

	(void)src;
	r->saw_entry = is_migration_pte(thpt_entry_of(r->mm, r->addr));
	r->thread = kthread_create(fault_thread, r, "migrate-fault");
	if (!r->thread)
		return;
	kthread_bind(r->thread, r->cpu);
	wake_up_process(r->thread);
	msleep(50);
	r->waited = r->result == 1;
}

static void fault_waits_for_the_migration(struct ktest *t)
{
	const unsigned long a = AREA;
	struct fault_race r = { .result = 1, .cpu = -1 };
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long old_pfn;
	int target, cpu;

	target = thpt_begin_two_nodes(t, &c);
	for_each_online_cpu(cpu)
		if (cpu != smp_processor_id())
			r.cpu = cpu;
	if (r.cpu < 0) {
		thpt_end(t, &c);
		ktest_skip(t, "one CPU");
	}
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, SZ_4K), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	*thpt_byte_of(mm, a) = 0x5a;
	old_pfn = thpt_pfn_of(mm, a);
	r.mm = mm;
	r.addr = a;
	the_race = &r;
	migrate_unmapped_hook = start_fault_while_unmapped;
	KEXPECT_EQ(t, thpt_move_folio(mm, a, target, NULL), 0);
	migrate_unmapped_hook = NULL;
	CHECK(t, r.thread != NULL);
	kthread_join(r.thread);
	KEXPECT_TRUE(t, r.saw_entry);
	KEXPECT_TRUE(t, r.waited);
	KEXPECT_EQ(t, r.result, 0);
	KEXPECT_NE(t, thpt_pfn_of(mm, a), old_pfn);
	KEXPECT_EQ(t, page_to_nid(thpt_page_of(mm, a)), target);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, a)));
	KEXPECT_EQ(t, *thpt_byte_of(mm, a), 0x5a);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	migrate_unmapped_hook = NULL;
	thpt_end(t, &c);
}

KTEST_SUITE(migrate,
	    KTEST_CASE(batched_and_per_page_counts),
	    KTEST_CASE(extra_reference_refuses_and_restores),
	    KTEST_CASE(no_target_memory),
	    KTEST_CASE(fault_waits_for_the_migration));
