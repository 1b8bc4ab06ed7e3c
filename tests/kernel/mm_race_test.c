/*
 * The mm_race suite: two kernel threads, bound to two CPUs, drive one
 * address space at the same moment, round after round, so that the
 * page-table races of a multi-threaded process happen for real:
 *   - both write-fault the same empty 2 MiB range (one gets the THP or
 *     installs the PTE table, the other maps into it or backs off);
 *   - a fault races munmap of the range;
 *   - a write fault races split_huge_pmd of the PMD it faults on;
 *   - two faults below a stack VMA grow it at once;
 *   - a COW fault on a 64 KiB folio races the unmap of its copy in a forked child.
 * After each round: no fault failed that should not have, every page holds
 * what was written, mm_verify() is clean; after the case every page is back
 * (thpt_end). The threads meet at a spin barrier right before the racing
 * step; under TCG that still leaves the overlap to the host's scheduler,
 * so each case counts how often the two steps did overlap in time.
 * The racing cases need two CPUs on nodes with memory; skipped otherwise.
 * A last case fires each kind of lock assertion on purpose.
 */
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/smp.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/time.h>
#include <quire/debug_locks.h>
#include <quire/mutex.h>
#include "thp_test.h"

#define ROUNDS	8	/* at most; at least MIN_ROUNDS, then until BUDGET_NS is spent */
#define MIN_ROUNDS	1
#define BUDGET_NS	(1000ULL * 1000 * 1000)
#define BLOCKS	32	/* 2 MiB blocks per round: one race each */
#define LEN	(BLOCKS * SZ_2M)

struct race {
	struct mm_struct *mm;
	unsigned long addr;
	int round;
	u64 start_ns;
	atomic_t at[2];			/* the block each thread has reached (a barrier) */
	atomic_t running;		/* threads inside the racing step */
	atomic_t overlapped;		/* blocks where both were inside at once */
	unsigned long failed[2];	/* steps that failed */
	void (*step[2])(struct race *r, int me, unsigned long block);
	struct mm_struct *child;	/* a forked copy, for the cases that race two mms */
};

struct racer {
	struct race *race;
	int me;
};

/* Wait until the other thread has reached block n too. */
static void meet(struct race *r, int me, int n)
{
	atomic_set(&r->at[me], n);
	while (atomic_read(&r->at[!me]) < n)
		cpu_relax();
}

static int racer_fn(void *arg)
{
	struct racer *w = arg;
	struct race *r = w->race;

	for (int b = 0; b < BLOCKS; b++) {
		meet(r, w->me, b + 1);
		if (atomic_inc_return(&r->running) == 2)
			atomic_inc(&r->overlapped);
		r->step[w->me](r, w->me, r->addr + b * SZ_2M);
		atomic_dec(&r->running);
	}
	return 0;
}

/* Two CPUs on nodes with memory (a fault allocates on its CPU's node). */
static bool pick_cpus(int cpus[2])
{
	int n = 0, cpu;

	for_each_online_cpu(cpu) {
		if (n < 2 && node_has_memory(cpu_to_node(cpu)))
			cpus[n++] = cpu;
	}
	return n == 2;
}

/* One round: both threads, each on its CPU, meet at every block and race there. */
static void run_round(struct ktest *t, struct race *r, const int cpus[2])
{
	struct racer w[2] = { { r, 0 }, { r, 1 } };
	struct task *th[2];

	atomic_set(&r->at[0], 0);
	atomic_set(&r->at[1], 0);
	for (int i = 0; i < 2; i++) {
		th[i] = kthread_create(racer_fn, &w[i], "mm-racer");
		KASSERT_TRUE(t, th[i] != NULL);
		kthread_bind(th[i], cpus[i]);
	}
	for (int i = 0; i < 2; i++)
		wake_up_process(th[i]);
	for (int i = 0; i < 2; i++)
		kthread_join(th[i]);
}

/* Set up a case: its CPUs, its mm (r->mm, NULL when out of memory), what each thread does. */
static void race_begin(struct ktest *t, struct thp_ctx *c, struct race *r, int cpus[2],
		       void (*step0)(struct race *, int, unsigned long),
		       void (*step1)(struct race *, int, unsigned long))
{
	if (nr_cpus_online < 2 || !pick_cpus(cpus))
		ktest_skip(t, "needs two CPUs on nodes with memory");
	thpt_begin(t, c);
	memset(r, 0, sizeof(*r));
	r->addr = AREA;
	r->start_ns = ktime_get_ns();
	r->mm = thpt_new_mm(c);
	r->step[0] = step0;
	r->step[1] = step1;
}

/*
 * Another round? A busy host (TCG vCPUs that wait for each other at every
 * block) may make rounds slow: past the budget, MIN_ROUNDS are enough.
 */
static bool more_rounds(struct race *r)
{
	return r->round < MIN_ROUNDS ||
	       (r->round < ROUNDS && ktime_get_ns() - r->start_ns < BUDGET_NS);
}

static void report_overlap(struct race *r)
{
	printk(KERN_RAW "    # %d races, the two steps overlapped in %d\n", r->round * BLOCKS,
	       atomic_read(&r->overlapped));
}

/* Write-fault addr and put the pattern byte there. */
static void fault_and_mark(struct race *r, int me, unsigned long a)
{
	if (fault(r->mm, a, true)) {
		r->failed[me]++;
		return;
	}
	*thpt_byte_of(r->mm, a + 0x10) = pattern(a, 1);
}

/* ---- 1. two faults on one empty 2 MiB block ---- */

/* Which of the kinds of race a block gets: its number modulo kinds. */
static unsigned long block_kind(struct race *r, unsigned long block, unsigned long kinds)
{
	return ((block - r->addr) / SZ_2M) % kinds;
}

/*
 * Block kinds: 0, both write-fault (they race for the PMD); 1, under
 * MADV_NOHUGEPAGE, both write-fault (they race for the PTE table); 2,
 * thread 1 read-faults (a PTE table with the zero page) while thread 0
 * write-faults (a PMD): whoever is first decides. Thread 0 faults the
 * block's first page, thread 1 its middle one.
 */
static void fault_one(struct race *r, int me, unsigned long block)
{
	unsigned long a = block + (me ? SZ_1M : 0);

	if (me == 1 && block_kind(r, block, 3) == 2 && fault(r->mm, a, false))
		r->failed[me]++;
	fault_and_mark(r, me, a);
}

static void two_faults_on_one_empty_block(struct ktest *t)
{
	struct thp_ctx c;
	struct race r;
	int cpus[2], pmds = 0;

	race_begin(t, &c, &r, cpus, fault_one, fault_one);
	CHECK(t, r.mm != NULL);
	for (r.round = 0; more_rounds(&r); r.round++) {
		long rss = 0;

		CHECK_EQ(t, thpt_map_anon(r.mm, r.addr, LEN), r.addr);
		for (unsigned long b = r.addr; b < r.addr + LEN; b += SZ_2M)
			if (block_kind(&r, b, 3) == 1)
				CHECK_EQ(t, thpt_advise(r.mm, b, SZ_2M, MADV_NOHUGEPAGE), 0);
		run_round(t, &r, cpus);
		CHECK_EQ(t, r.failed[0] + r.failed[1], 0);
		for (unsigned long b = r.addr; b < r.addr + LEN; b += SZ_2M) {
			bool pmd = thpt_huge_pmd(r.mm, b) != NULL;

			pmds += pmd;
			rss += pmd ? HPAGE_PMD_NR : 2;
			CHECK_EQ(t, thpt_pattern_mismatches(r.mm, b, PAGE_SIZE, 1), 0);
			CHECK_EQ(t, thpt_pattern_mismatches(r.mm, b + SZ_1M, PAGE_SIZE, 1), 0);
		}
		CHECK_EQ(t, atomic_long_read(&r.mm->rss), rss);
		CHECK_EQ(t, mm_verify(), 0);
		CHECK_EQ(t, thpt_unmap(r.mm, r.addr, LEN), 0);
	}
	report_overlap(&r);
	printk(KERN_RAW "    # %d blocks ended with a PMD mapping\n", pmds);
out:
	thpt_end(t, &c);
}

/* ---- 2. a fault racing munmap of its block ---- */

static void fault_block(struct race *r, int me, unsigned long block)
{
	for (unsigned long a = block; a < block + SZ_2M; a += 64 * PAGE_SIZE) {
		int err = fault(r->mm, a, true);

		if (err && err != -EFAULT)	/* -EFAULT: unmapped already */
			r->failed[me]++;
	}
}

static void unmap_block(struct race *r, int me, unsigned long block)
{
	r->failed[me] += thpt_unmap(r->mm, block, SZ_2M) != 0;
}

static void fault_races_munmap(struct ktest *t)
{
	struct thp_ctx c;
	struct race r;
	int cpus[2];

	race_begin(t, &c, &r, cpus, fault_block, unmap_block);
	CHECK(t, r.mm != NULL);
	thp_set_order_mode(4, THP_ALWAYS);	/* 64 KiB folios too, besides the PMD */
	for (r.round = 0; more_rounds(&r); r.round++) {
		CHECK_EQ(t, thpt_map_anon(r.mm, r.addr, LEN), r.addr);
		/* Block kinds 0..3: THP allowed or not, a PTE table first (the zero page) or none. */
		for (unsigned long b = r.addr; b < r.addr + LEN; b += SZ_2M) {
			if (block_kind(&r, b, 4) % 2)
				CHECK_EQ(t, thpt_advise(r.mm, b, SZ_2M, MADV_NOHUGEPAGE), 0);
			if (block_kind(&r, b, 4) < 2)
				CHECK_EQ(t, fault(r.mm, b + SZ_1M, false), 0);
		}
		run_round(t, &r, cpus);
		CHECK_EQ(t, r.failed[0] + r.failed[1], 0);
		CHECK(t, find_vma(r.mm, r.addr) == NULL);
		CHECK_EQ(t, atomic_long_read(&r.mm->rss), 0);
		CHECK_EQ(t, mm_verify(), 0);
	}
	report_overlap(&r);
out:
	thpt_end(t, &c);
}

/* ---- 3. a write fault racing split_huge_pmd ---- */

static void split_block(struct race *r, int me, unsigned long block)
{
	(void)me;
	thpt_split_pmd_at(r->mm, block);
}

/* Write-fault a page of the block (fork made the PMD read-only) and mark it. */
static void write_block(struct race *r, int me, unsigned long block)
{
	unsigned long a = block + SZ_1M;

	if (fault(r->mm, a, true)) {
		r->failed[me]++;
		return;
	}
	*thpt_byte_of(r->mm, a + 0x20) = pattern(a, 2);
}

static void write_fault_races_split_huge_pmd(struct ktest *t)
{
	struct thp_ctx c;
	struct race r;
	struct mm_struct *child;
	int cpus[2];

	race_begin(t, &c, &r, cpus, split_block, write_block);
	CHECK(t, r.mm != NULL);
	for (r.round = 0; more_rounds(&r); r.round++) {
		CHECK_EQ(t, thpt_map_anon(r.mm, r.addr, LEN), r.addr);
		CHECK_EQ(t, thpt_fault_range(r.mm, r.addr, LEN), 0);
		thpt_write_pattern(r.mm, r.addr, LEN, 1);
		/*
		 * After fork each PMD is read-only and shared: the write splits
		 * the PMD itself, or copies its page after thread 0's split.
		 */
		child = thpt_fork_mm(&c, r.mm);
		CHECK(t, child != NULL);
		run_round(t, &r, cpus);
		CHECK_EQ(t, r.failed[0] + r.failed[1], 0);
		for (unsigned long b = r.addr; b < r.addr + LEN; b += SZ_2M) {
			CHECK(t, thpt_huge_pmd(r.mm, b) == NULL);
			CHECK_EQ(t, *thpt_byte_of(r.mm, b + SZ_1M + 0x20), pattern(b + SZ_1M, 2));
		}
		CHECK_EQ(t, thpt_pattern_mismatches(r.mm, r.addr, LEN, 1), 0);
		CHECK_EQ(t, thpt_pattern_mismatches(child, r.addr, LEN, 1), 0);
		CHECK_EQ(t, atomic_long_read(&r.mm->rss), LEN / PAGE_SIZE);
		CHECK_EQ(t, mm_verify(), 0);
		thpt_drop_mm(&c, child);
		CHECK_EQ(t, thpt_unmap(r.mm, r.addr, LEN), 0);
	}
	report_overlap(&r);
out:
	thpt_end(t, &c);
}

/* ---- 4. COW of a large folio racing its other mapper's unmap ---- */

/*
 * After fork, parent and child share every 64 KiB folio read-only. In each
 * block, thread 0 unmaps the child's copy while thread 1 write-faults the
 * parent's: the parent decides "copy or reuse" from mapcounts the child is
 * changing under it (different mms: no mmap_lock orders them). Either
 * outcome is right; a wrong mapcount, a lost write or a page freed while
 * mapped is not (patterns, rss, mm_verify).
 */
static void unmap_child_block(struct race *r, int me, unsigned long block)
{
	r->failed[me] += thpt_unmap(r->child, block, SZ_2M) != 0;
}

static void cow_parent_block(struct race *r, int me, unsigned long block)
{
	for (unsigned long a = block; a < block + SZ_2M; a += SZ_64K) {
		if (fault(r->mm, a, true)) {
			r->failed[me]++;
			continue;
		}
		*thpt_byte_of(r->mm, a + 0x10) = pattern(a, 2);
	}
}

static void large_folio_cow_races_unmap_in_child(struct ktest *t)
{
	struct thp_ctx c;
	struct race r;
	int cpus[2];

	race_begin(t, &c, &r, cpus, unmap_child_block, cow_parent_block);
	CHECK(t, r.mm != NULL);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);	/* 64 KiB folios only */
	thp_set_order_mode(4, THP_ALWAYS);
	for (r.round = 0; more_rounds(&r); r.round++) {
		unsigned long bad = 0;

		CHECK_EQ(t, thpt_map_anon(r.mm, r.addr, LEN), r.addr);
		CHECK_EQ(t, thpt_fault_range(r.mm, r.addr, LEN), 0);
		CHECK_EQ(t, thpt_order_of(r.mm, r.addr), 4);
		thpt_write_pattern(r.mm, r.addr, LEN, 1);
		r.child = thpt_fork_mm(&c, r.mm);
		CHECK(t, r.child != NULL);
		run_round(t, &r, cpus);
		CHECK_EQ(t, r.failed[0] + r.failed[1], 0);
		for (unsigned long a = r.addr; a < r.addr + LEN; a += PAGE_SIZE)
			bad += *thpt_byte_of(r.mm, a + 0x10) !=
			       pattern(a, (a & (SZ_64K - 1)) ? 1 : 2);
		CHECK_EQ(t, bad, 0);
		CHECK(t, find_vma(r.child, r.addr) == NULL);
		CHECK_EQ(t, atomic_long_read(&r.child->rss), 0);
		CHECK_EQ(t, atomic_long_read(&r.mm->rss), LEN / PAGE_SIZE);
		CHECK_EQ(t, mm_verify(), 0);
		thpt_drop_mm(&c, r.child);
		r.child = NULL;
		CHECK_EQ(t, thpt_unmap(r.mm, r.addr, LEN), 0);
		CHECK_EQ(t, mm_verify(), 0);
	}
	report_overlap(&r);
out:
	thpt_end(t, &c);
}

/* ---- 4. the lock assertions fire ---- */

static bool walk_nothing(struct folio *folio, struct vm_area_struct *vma, unsigned long address,
			 void *arg)
{
	(void)folio, (void)vma, (void)address, (void)arg;
	return true;
}

/* ---- 4. two threads grow one stack ---- */

/*
 * A one-page VM_GROWSDOWN VMA at the top of the area; at every block
 * both threads fault just below it (thread 0 one page, thread 1 the next),
 * so each round moves vm_start down 2 * BLOCKS pages, two faults racing
 * for every move. Growth takes mmap_lock for writing: without it the two
 * would both lower vm_start and vm_pgoff, and the VMA's pgoff would no
 * longer match its start (mm_verify) or a page would land outside it.
 */
#define RACE_STACK_TOP	(AREA + 512 * SZ_2M)

static void fault_below_stack(struct race *r, int me, unsigned long block)
{
	unsigned long b = (block - r->addr) / SZ_2M;

	fault_and_mark(r, me, RACE_STACK_TOP - (2 * b + me + 2) * PAGE_SIZE);
}

static void two_threads_grow_one_stack(struct ktest *t)
{
	struct thp_ctx c;
	struct race r;
	int cpus[2];

	race_begin(t, &c, &r, cpus, fault_below_stack, fault_below_stack);
	CHECK(t, r.mm != NULL);
	for (r.round = 0; more_rounds(&r); r.round++) {
		unsigned long low = RACE_STACK_TOP - (2 * BLOCKS + 1) * PAGE_SIZE;
		struct vm_area_struct *vma;
		int err;

		down_write(&r.mm->mmap_lock);
		err = insert_vma(r.mm, RACE_STACK_TOP - PAGE_SIZE, RACE_STACK_TOP,
				 VM_READ | VM_WRITE | VM_GROWSDOWN);
		up_write(&r.mm->mmap_lock);
		CHECK_EQ(t, err, 0);
		run_round(t, &r, cpus);
		CHECK_EQ(t, r.failed[0] + r.failed[1], 0);
		vma = find_vma(r.mm, RACE_STACK_TOP - 1);
		CHECK(t, vma != NULL);
		KEXPECT_EQ(t, vma->vm_start, low);	/* one VMA, grown by every fault */
		KEXPECT_EQ(t, vma->vm_end, RACE_STACK_TOP);
		for (unsigned long a = low; a < RACE_STACK_TOP - PAGE_SIZE; a += PAGE_SIZE)
			KEXPECT_EQ(t, thpt_pattern_mismatches(r.mm, a, PAGE_SIZE, 1), 0);
		CHECK_EQ(t, mm_verify(), 0);
		CHECK_EQ(t, thpt_unmap(r.mm, low, RACE_STACK_TOP - low), 0);
	}
	report_overlap(&r);
out:
	thpt_end(t, &c);
}

#if defined(DEBUG_LOCKS) && defined(DEBUG_MM)
#define ASSERTS() atomic_read(&lock_debug_counts.assert_not_held)

/*
 * One deliberate call per kind of check, without the lock it needs: a
 * spinlock (a PMD table's lock, pgtable_withdraw), an rwsem held for
 * reading (the anon_vma lock a "locked" rmap_walk relies on), an rwsem
 * held for writing (mmap_lock, held for reading only), and a folio
 * invariant (VM_BUG_ON_FOLIO, made to return). Each is reported and
 * counted once; the same calls with the locks held report nothing.
 */
static void lock_assertions_fire(struct ktest *t)
{
	struct rmap_walk_control rwc = { .rmap_one = walk_nothing, .locked = true };
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	spinlock_t *ptl;
	pte_t *pmd;
	int before;
	unsigned long bugs;
	u64 pos;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, SZ_2M), AREA);
	CHECK_EQ(t, thpt_advise(mm, AREA, SZ_2M, MADV_NOHUGEPAGE), 0);
	CHECK_EQ(t, fault(mm, AREA, true), 0);
	folio = thpt_folio_of(mm, AREA);
	pmd = pmd_lookup(mm->pgd, AREA, false);
	CHECK(t, folio != NULL && pmd != NULL);

	/* With the locks: silent. */
	before = ASSERTS();
	ptl = pmd_lock(mm, pmd);
	KEXPECT_PTR_EQ(t, pgtable_withdraw(mm, pmd), NULL);
	spin_unlock(ptl);
	down_read(&folio_anon_vma(folio)->root->rwsem);
	rmap_walk(folio, &rwc);
	up_read(&folio_anon_vma(folio)->root->rwsem);
	down_write(&mm->mmap_lock);
	mmap_assert_write_locked(mm);
	up_write(&mm->mmap_lock);
	KEXPECT_EQ(t, ASSERTS(), before);

	pos = printk_log_pos();
	KEXPECT_PTR_EQ(t, pgtable_withdraw(mm, pmd), NULL);
	KEXPECT_EQ(t, ASSERTS(), before + 1);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: lock not held: spinlock pmd_lockptr(mm, pmd)"));

	rmap_walk(folio, &rwc);
	KEXPECT_EQ(t, ASSERTS(), before + 2);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: lock not held: rwsem &av->root->rwsem"));

	down_read(&mm->mmap_lock);
	mmap_assert_write_locked(mm);
	up_read(&mm->mmap_lock);
	KEXPECT_EQ(t, ASSERTS(), before + 3);
	KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: lock not held: rwsem (for writing)"));

	{
		struct mutex m;

		mutex_init(&m);
		mutex_assert_held(&m);		/* a mutex nobody holds */
		KEXPECT_EQ(t, ASSERTS(), before + 4);
		mutex_lock(&m);
		mutex_assert_held(&m);		/* and held: no report */
		mutex_unlock(&m);
		KEXPECT_EQ(t, ASSERTS(), before + 4);
		KEXPECT_TRUE(t, printk_log_contains(pos, "BUG: lock not held: mutex &m"));
	}

	bugs = vm_bug_reports;
	vm_bug_returns = true;
	VM_BUG_ON_FOLIO(folio_mapcount(folio) != 0, folio);
	KEXPECT_EQ(t, vm_bug_reports, bugs + 1);
	KEXPECT_FALSE(t, vm_bug_returns);
	KEXPECT_TRUE(t, printk_log_contains(pos, "VM_BUG_ON_FOLIO(folio_mapcount(folio) != 0)"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "refcount 1 mapcount 1"));
out:
	thpt_end(t, &c);
}
#else
static void lock_assertions_fire(struct ktest *t)
{
	(void)walk_nothing;
	ktest_skip(t, "built without DEBUG_LOCKS or DEBUG_MM");
}
#endif

KTEST_SUITE(mm_race,
	    KTEST_CASE(two_faults_on_one_empty_block),
	    KTEST_CASE(fault_races_munmap),
	    KTEST_CASE(write_fault_races_split_huge_pmd),
	    KTEST_CASE(two_threads_grow_one_stack),
	    KTEST_CASE(large_folio_cow_races_unmap_in_child),
	    KTEST_CASE(lock_assertions_fire));
