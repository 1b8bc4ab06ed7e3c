/*
 * The migrate_pmd suite: a PMD-mapped THP migrates with a PMD migration
 * entry (mm/huge_memory.c set_pmd_migration_entry, remove_migration_pmd;
 * docs/mm/migrate.md) and comes back PMD-mapped. From migrate_unmapped_hook
 * (the entries are installed, the folio is locked, nothing is copied yet)
 * each case has one of the entry's users meet it:
 *   - the entry itself: one PMD, the kind the leaf allowed, rss kept;
 *     an old PMD (clear_refs 1) stays old;
 *   - a write fault on another CPU waits for the folio lock, then lands
 *     on the new THP;
 *   - fork copies the entry (writable becomes readable on both sides);
 *   - MADV_DONTNEED of one page splits it into 512 PTE migration entries
 *     and drops one; munmap of the block drops it with its deposited table;
 *   - mprotect makes it read-only, mremap moves it with its table;
 *   - pagemap reports it swapped, smaps counts it (Rss, AnonHugePages),
 *     mincore says resident, GUP-fast declines it;
 *   - an extra reference fails the move and the PMD comes back as it was.
 * Every case ends with mm_verify (invariant 5) and every page freed.
 */
#include <quire/migrate.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/task_mmu.h>
#include <quire/gup.h>
#include <quire/errno.h>
#include <quire/slab.h>
#include <quire/string.h>
#include "thp_test.h"
#include "smaps_text.h"

static long event(enum migrate_event e)
{
	return atomic_long_read(&migrate_events[e]);
}

static long rss(struct mm_struct *mm)
{
	return atomic_long_read(&mm->rss);
}

/* The raw PMD entry of addr (0 when there is no PMD table). */
static pte_t pmd_of(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false);

	return pmd ? READ_ONCE(*pmd) : 0;
}

/* What a case does while the entry is there (from migrate_unmapped_hook). */
struct while_unmapped {
	struct thp_ctx *c;
	struct mm_struct *mm, *child;
	unsigned long addr;
	pte_t entry;			/* the PMD as the hook found it */
	long rss;
	int cpu, calls;
	volatile int result;		/* a racing fault's; 1 while it runs */
	volatile bool waited;
	struct task *thread;
	u64 pagemap[2];
	u8 mincore[2];
	long smaps_rss_kb, smaps_anon_huge_kb;
	long gup_fast;
	long ret;			/* the operation's */
	void (*act)(struct while_unmapped *w);
};

static struct while_unmapped *the_case;

static void hook(struct folio *src)
{
	struct while_unmapped *w = the_case;

	(void)src;
	w->calls++;
	w->entry = pmd_of(w->mm, w->addr);
	w->rss = rss(w->mm);
	if (w->act)
		w->act(w);
}

/* Move the THP at addr to nid with act run while it is unmapped. */
static int move_with(struct while_unmapped *w, int nid)
{
	int ret;

	the_case = w;
	migrate_unmapped_hook = hook;
	ret = thpt_move_folio(w->mm, w->addr, nid, NULL);
	migrate_unmapped_hook = NULL;
	return ret;
}

/* A new mm with a written, PMD-mapped THP at a, pattern salt. */
#define SETUP_THP(t, c, mm, a, salt)					\
	do {								\
		mm = thpt_new_mm(c);					\
		CHECK(t, mm != NULL);					\
		CHECK_MAP_PMD(t, mm, a);				\
		thpt_write_pattern(mm, a, SZ_2M, salt);			\
	} while (0)

/* ---- the entry, and the THP it comes back as ---- */

static void moves_with_one_pmd_entry(struct ktest *t)
{
	const unsigned long a = AREA;
	struct while_unmapped w = { 0 };
	struct thp_ctx c;
	struct mm_struct *mm;
	long ok, split, pmd_splits, steps;
	swp_entry_t e;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	SETUP_THP(t, &c, mm, a, 3);
	w.mm = mm;
	w.addr = a;
	ok = event(THP_MIGRATION_SUCCESS);
	split = event(THP_MIGRATION_SPLIT);
	pmd_splits = ev(THP_SPLIT_PMD);
	steps = atomic_long_read(&mm_cost[MM_COST_RMAP_WALK_STEPS]);
	KEXPECT_EQ(t, move_with(&w, target), 0);
	KEXPECT_EQ(t, w.calls, 1);
	/* While unmapped: one writable, dirty PMD migration entry naming the head page; rss kept. */
	KEXPECT_TRUE(t, is_pmd_migration_entry(w.entry));
	e = pmd_to_swp_entry(w.entry);
	KEXPECT_TRUE(t, is_writable_migration_entry(e));
	KEXPECT_TRUE(t, is_migration_entry_dirty(e) && is_migration_entry_young(e));
	KEXPECT_EQ(t, w.rss, HPAGE_PMD_NR);
	/* After: a PMD again, on the target, writable and exclusive, the bytes kept. */
	CHECK(t, thpt_huge_pmd(mm, a) != NULL);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, a)) && thpt_exclusive_at(mm, a + SZ_1M));
	KEXPECT_EQ(t, page_to_nid(thpt_page_of(mm, a)), target);
	KEXPECT_EQ(t, folio_entire_mapcount(thpt_folio_of(mm, a)), 1);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_2M, 3), 0);
	KEXPECT_EQ(t, rss(mm), HPAGE_PMD_NR);
	KEXPECT_EQ(t, event(THP_MIGRATION_SUCCESS) - ok, 1);
	KEXPECT_EQ(t, event(THP_MIGRATION_SPLIT) - split, 0);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - pmd_splits, 0);
	/* One VMA maps it: one walk step to unmap, one to restore. */
	KEXPECT_EQ(t, atomic_long_read(&mm_cost[MM_COST_RMAP_WALK_STEPS]) - steps, 2);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* A PMD made old by clear_refs 1 is old in its entry and comes back old (as on Linux). */
static void old_pmd_comes_back_old(struct ktest *t)
{
	const unsigned long a = AREA;
	struct while_unmapped w = { 0 };
	struct thp_ctx c;
	struct mm_struct *mm;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	SETUP_THP(t, &c, mm, a, 4);
	KEXPECT_EQ(t, clear_refs(mm, CLEAR_REFS_ALL), 0);
	CHECK(t, thpt_huge_pmd(mm, a) != NULL);
	KEXPECT_FALSE(t, pte_young(thpt_entry_of(mm, a)));
	w.mm = mm;
	w.addr = a;
	KEXPECT_EQ(t, move_with(&w, target), 0);
	KEXPECT_TRUE(t, is_pmd_migration_entry(w.entry));
	KEXPECT_FALSE(t, is_migration_entry_young(pmd_to_swp_entry(w.entry)));
	CHECK(t, thpt_huge_pmd(mm, a) != NULL);
	KEXPECT_FALSE(t, pte_young(thpt_entry_of(mm, a)));
	KEXPECT_EQ(t, page_to_nid(thpt_page_of(mm, a)), target);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_2M, 4), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* A reference nobody accounts for: the move fails and the PMD is back as it was. */
static void extra_reference_restores_the_pmd(struct ktest *t)
{
	const unsigned long a = AREA;
	struct while_unmapped w = { 0 };
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	long failed;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	SETUP_THP(t, &c, mm, a, 5);
	folio = thpt_folio_of(mm, a);
	folio_get(folio);
	w.mm = mm;
	w.addr = a;
	failed = event(THP_MIGRATION_FAIL);
	KEXPECT_EQ(t, move_with(&w, target), 1);
	KEXPECT_TRUE(t, w.calls >= 1 && is_pmd_migration_entry(w.entry));
	KEXPECT_EQ(t, event(THP_MIGRATION_FAIL) - failed, 1);
	CHECK(t, thpt_huge_pmd(mm, a) != NULL);
	KEXPECT_EQ(t, thpt_head_pfn_of(mm, a), folio_pfn(folio));
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, a)) && thpt_exclusive_at(mm, a));
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_ref_count(folio), 2);
	KEXPECT_FALSE(t, folio_test_locked(folio));
	KEXPECT_EQ(t, mm_verify(), 0);
	folio_put(folio);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_2M, 5), 0);
out:
	thpt_end(t, &c);
}

/* ---- a fault on another CPU ---- */

static int fault_thread(void *arg)
{
	struct while_unmapped *w = arg;

	w->result = handle_mm_fault(w->mm, w->addr + SZ_1M, FAULT_FLAG_WRITE);
	return 0;
}

static void start_fault(struct while_unmapped *w)
{
	w->thread = kthread_create(fault_thread, w, "pmd-migrate-fault");
	if (!w->thread)
		return;
	kthread_bind(w->thread, w->cpu);
	wake_up_process(w->thread);
	msleep(50);
	w->waited = w->result == 1;
}

static void fault_waits_for_the_pmd_entry(struct ktest *t)
{
	const unsigned long a = AREA;
	struct while_unmapped w = { .result = 1, .cpu = -1, .act = start_fault };
	struct thp_ctx c;
	struct mm_struct *mm;
	int target, cpu;

	target = thpt_begin_two_nodes(t, &c);
	for_each_online_cpu(cpu)
		if (cpu != smp_processor_id())
			w.cpu = cpu;
	if (w.cpu < 0) {
		thpt_end(t, &c);
		ktest_skip(t, "one CPU");
	}
	SETUP_THP(t, &c, mm, a, 7);
	w.mm = mm;
	w.addr = a;
	KEXPECT_EQ(t, move_with(&w, target), 0);
	CHECK(t, w.thread != NULL);
	kthread_join(w.thread);
	KEXPECT_TRUE(t, is_pmd_migration_entry(w.entry));
	KEXPECT_TRUE(t, w.waited);
	KEXPECT_EQ(t, w.result, 0);
	CHECK(t, thpt_huge_pmd(mm, a) != NULL);
	KEXPECT_EQ(t, page_to_nid(thpt_page_of(mm, a + SZ_1M)), target);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_2M, 7), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- fork ---- */

static void fork_now(struct while_unmapped *w)
{
	w->child = thpt_fork_mm(w->c, w->mm);
	if (w->child)
		w->ret = (long)pmd_of(w->child, w->addr);
}

static void fork_copies_the_pmd_entry(struct ktest *t)
{
	const unsigned long a = AREA;
	struct while_unmapped w = { .c = NULL, .act = fork_now };
	struct thp_ctx c;
	struct mm_struct *mm, *child;
	struct folio *folio;
	pte_t child_entry;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	w.c = &c;
	SETUP_THP(t, &c, mm, a, 9);
	w.mm = mm;
	w.addr = a;
	KEXPECT_EQ(t, move_with(&w, target), 0);
	child = w.child;
	CHECK(t, child != NULL);
	/* The child got the entry, made readable on both sides, and its rss. */
	child_entry = (pte_t)w.ret;
	KEXPECT_TRUE(t, is_pmd_migration_entry(child_entry));
	KEXPECT_FALSE(t, is_writable_migration_entry(pmd_to_swp_entry(child_entry)));
	KEXPECT_FALSE(t, is_readable_exclusive_migration_entry(pmd_to_swp_entry(child_entry)));
	KEXPECT_EQ(t, rss(child), HPAGE_PMD_NR);
	/* Both map the new THP by PMD, read-only, shared. */
	CHECK(t, thpt_huge_pmd(mm, a) != NULL && thpt_huge_pmd(child, a) != NULL);
	folio = thpt_folio_of(mm, a);
	KEXPECT_EQ(t, thpt_head_pfn_of(child, a), folio_pfn(folio));
	KEXPECT_EQ(t, folio_nid(folio), target);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, a)) || pte_write(thpt_entry_of(child, a)));
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 2);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* A write in the parent copies; the child still sees the old bytes. */
	KEXPECT_EQ(t, fault(mm, a, true), 0);
	*thpt_byte_of(mm, a + 0x10) ^= 0xff;	/* (the byte the pattern check reads) */
	KEXPECT_EQ(t, thpt_pattern_mismatches(child, a, SZ_2M, 9), 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_2M, 9), 1);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- zap: part of the block, and all of it ---- */

static void dontneed_one_page(struct while_unmapped *w)
{
	w->ret = thpt_advise(w->mm, w->addr, SZ_4K, MADV_DONTNEED);
	w->entry = pmd_of(w->mm, w->addr);
	w->rss = rss(w->mm);
}

static void munmap_the_block(struct while_unmapped *w)
{
	w->ret = thpt_unmap(w->mm, w->addr, SZ_2M);
	w->rss = rss(w->mm);
}

static void zap_meets_the_pmd_entry(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M * 2;
	struct while_unmapped w = { .act = dontneed_one_page };
	struct thp_ctx c;
	struct mm_struct *mm;
	long pmd_splits;
	pte_t *pte;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	SETUP_THP(t, &c, mm, a, 11);
	CHECK_MAP_PMD(t, mm, b);
	w.mm = mm;
	w.addr = a;
	pmd_splits = ev(THP_SPLIT_PMD);
	KEXPECT_EQ(t, move_with(&w, target), 0);
	KEXPECT_EQ(t, w.ret, 0);
	/* Split into PTE migration entries (a table now), one of them dropped. */
	KEXPECT_TRUE(t, pmd_is_table(w.entry));
	KEXPECT_EQ(t, w.rss, 2 * HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - pmd_splits, 1);
	/* The other 511 pages came back by PTE, on the target, their bytes kept. */
	pte = thpt_pte_of(mm, a);
	CHECK(t, pte != NULL);
	KEXPECT_EQ(t, *pte, 0);
	KEXPECT_EQ(t, page_to_nid(thpt_page_of(mm, a + SZ_4K)), target);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a + SZ_4K, SZ_2M - SZ_4K, 11), 0);
	KEXPECT_EQ(t, rss(mm), 2 * HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* All of it: the entry and its deposited table go; nothing comes back. */
	w = (struct while_unmapped){ .mm = mm, .addr = b, .act = munmap_the_block };
	KEXPECT_EQ(t, move_with(&w, target), 0);
	KEXPECT_EQ(t, w.ret, 0);
	KEXPECT_EQ(t, w.rss, HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, pmd_of(mm, b), 0);
	KEXPECT_EQ(t, rss(mm), HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);	/* (every page back: the deposited tables too) */
}

/* ---- mprotect and mremap ---- */

static void protect_then_move(struct while_unmapped *w)
{
	long ret = thpt_protect(w->mm, w->addr, SZ_2M, PROT_READ);

	w->entry = pmd_of(w->mm, w->addr);
	if (!ret) {
		down_write(&w->mm->mmap_lock);
		ret = do_mremap(w->mm, w->addr, SZ_2M, SZ_2M, MREMAP_MAYMOVE | MREMAP_FIXED,
				w->addr + SZ_2M * 4);
		up_write(&w->mm->mmap_lock);
	}
	w->ret = ret;
	w->calls += 100 * is_pmd_migration_entry(pmd_of(w->mm, w->addr + SZ_2M * 4));
}

static void mprotect_and_mremap_keep_the_pmd_entry(struct ktest *t)
{
	const unsigned long a = AREA, moved = AREA + SZ_2M * 4;
	struct while_unmapped w = { .act = protect_then_move };
	struct thp_ctx c;
	struct mm_struct *mm;
	swp_entry_t e;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	SETUP_THP(t, &c, mm, a, 13);
	w.mm = mm;
	w.addr = a;
	KEXPECT_EQ(t, move_with(&w, target), 0);
	KEXPECT_EQ(t, w.ret, (long)moved);
	/* mprotect made it a read-only (still exclusive) entry; mremap moved it whole. */
	e = pmd_to_swp_entry(w.entry);
	KEXPECT_TRUE(t, is_pmd_migration_entry(w.entry) && is_readable_exclusive_migration_entry(e));
	KEXPECT_EQ(t, w.calls, 101);
	KEXPECT_EQ(t, pmd_of(mm, a), 0);
	CHECK(t, thpt_huge_pmd(mm, moved) != NULL);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, moved)));
	KEXPECT_TRUE(t, thpt_exclusive_at(mm, moved));
	KEXPECT_EQ(t, page_to_nid(thpt_page_of(mm, moved)), target);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, moved, SZ_2M, 13), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Writable again: an exclusive THP is reused in place by the write fault. */
	KEXPECT_EQ(t, thpt_protect(mm, moved, SZ_2M, PROT_READ | PROT_WRITE), 0);
	KEXPECT_EQ(t, fault(mm, moved, true), 0);
	CHECK(t, thpt_huge_pmd(mm, moved) != NULL);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, moved)));
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- readers: pagemap, smaps, mincore, GUP-fast ---- */


static void read_it(struct while_unmapped *w)
{
	char *text = kmalloc(8192, GFP_KERNEL);
	struct page *pages[1];

	w->ret = pagemap_read(w->mm, w->pagemap, sizeof(w->pagemap),
			      (loff_t)((w->addr + SZ_1M) >> PAGE_SHIFT) * 8);
	down_read(&w->mm->mmap_lock);
	if (do_mincore(w->mm, w->addr + SZ_1M, 2, w->mincore) != 2)
		w->mincore[0] = 0xee;
	up_read(&w->mm->mmap_lock);
	w->gup_fast = gup_fast_mm(w->mm, w->addr + SZ_1M, 1, FOLL_GET, pages, true);
	if (w->gup_fast > 0)
		put_page(pages[0]);
	w->smaps_rss_kb = w->smaps_anon_huge_kb = -2;
	if (text) {
		smaps_show(w->mm, text, 8192);
		w->smaps_rss_kb = smaps_kb(text, "Rss:");
		w->smaps_anon_huge_kb = smaps_kb(text, "AnonHugePages:");
		kfree(text);
	}
}

static void readers_see_the_pmd_entry(struct ktest *t)
{
	const unsigned long a = AREA;
	struct while_unmapped w = { .act = read_it };
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long pfn;
	int target;

	target = thpt_begin_two_nodes(t, &c);
	SETUP_THP(t, &c, mm, a, 15);
	w.mm = mm;
	w.addr = a;
	pfn = thpt_head_pfn_of(mm, a);
	KEXPECT_EQ(t, move_with(&w, target), 0);
	KEXPECT_EQ(t, w.ret, (long)sizeof(w.pagemap));
	/* Swapped, soft-dirty; Linux's layout: type in bits 0-4, offset above (the page's frame). */
	for (int i = 0; i < 2; i++) {
		u64 v = w.pagemap[i];
		u64 offset = (v & PM_PFRAME_MASK) >> 5;

		KEXPECT_TRUE(t, (v & PM_SWAP) && !(v & PM_PRESENT) && (v & PM_SOFT_DIRTY));
		KEXPECT_EQ(t, v & 31, SWP_MIGRATION_WRITE);
		KEXPECT_EQ(t, offset, pfn + HPAGE_PMD_NR / 2 + i);
	}
	/* smaps counts its pages (as Linux: resident, and a THP's). */
	KEXPECT_EQ(t, w.smaps_rss_kb, 2048);
	KEXPECT_EQ(t, w.smaps_anon_huge_kb, 2048);
	KEXPECT_TRUE(t, w.mincore[0] == 1 && w.mincore[1] == 1);
	KEXPECT_EQ(t, w.gup_fast, 0);
	CHECK(t, thpt_huge_pmd(mm, a) != NULL);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

KTEST_SUITE(migrate_pmd,
	    KTEST_CASE(moves_with_one_pmd_entry),
	    KTEST_CASE(old_pmd_comes_back_old),
	    KTEST_CASE(extra_reference_restores_the_pmd),
	    KTEST_CASE(fault_waits_for_the_pmd_entry),
	    KTEST_CASE(fork_copies_the_pmd_entry),
	    KTEST_CASE(zap_meets_the_pmd_entry),
	    KTEST_CASE(mprotect_and_mremap_keep_the_pmd_entry),
	    KTEST_CASE(readers_see_the_pmd_entry));
