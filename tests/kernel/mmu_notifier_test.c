/*
 * The mmu_notifier suite: MMU interval notifiers (mm/mmu_notifier.c).
 *   1. each path that changes translations tells the notifiers it
 *      overlaps, with Linux's event, and only those;
 *   2. the read side's sequence: read_begin, then retry after an
 *      invalidation met the notifier, not otherwise;
 *   3. forced: read_begin waits while an invalidation that met its
 *      notifier runs (a thread held inside the op), an insert meanwhile
 *      waits on the deferred list, a remove waits for the range's end;
 *   4. a notifier outlives the address space (exit tells it, the
 *      mm_struct stays until the remove).
 */
#include <quire/ktest.h>
#include <quire/mmu_notifier.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/sched.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/time.h>
#include <quire/task_mmu.h>
#include "thp_test.h"
#include "locking_test.h"

/* A notifier that records what it was told. */
struct rec {
	struct mmu_interval_notifier sub;
	int calls;
	enum mmu_notifier_event event;
	unsigned long start, end, seq;
	/* Case 3: the op sleeps while hold is set, after saying so in held. */
	volatile bool hold, held;
};

static bool rec_invalidate(struct mmu_interval_notifier *sub, const struct mmu_notifier_range *range,
			   unsigned long cur_seq)
{
	struct rec *r = container_of(sub, struct rec, sub);

	mmu_interval_set_seq(sub, cur_seq);	/* (no driver lock: the test reads after) */
	r->calls++;
	r->event = range->event;
	r->start = range->start;
	r->end = range->end;
	r->seq = cur_seq;
	if (r->hold) {
		r->held = true;
		while (READ_ONCE(r->hold))
			msleep(1);
	}
	return true;
}

static const struct mmu_interval_notifier_ops rec_ops = { .invalidate = rec_invalidate };

/* The op was called once since the last check, for event, over a range covering [lo, hi). */
#define EXPECT_TOLD(t, r, ev, lo, hi)					\
	do {								\
		KEXPECT_EQ(t, (r)->calls, 1);				\
		KEXPECT_EQ(t, (r)->event, ev);				\
		KEXPECT_TRUE(t, (r)->start <= (lo) && (r)->end >= (hi));	\
		(r)->calls = 0;						\
	} while (0)

/* A new mm with 64 KiB faulted in at AREA and r watching it (NULL: failed, reported). */
static struct mm_struct *watched_mm(struct ktest *t, struct thp_ctx *c, struct rec *r)
{
	struct mm_struct *mm = thpt_new_mm(c);
	int err = -ENOMEM;

	memset(r, 0, sizeof(*r));
	if (mm && thpt_map_anon(mm, AREA, SZ_64K) == (long)AREA)
		err = thpt_fault_range(mm, AREA, SZ_64K) ? -EFAULT :
		      mmu_interval_notifier_insert(&r->sub, mm, AREA, SZ_64K, &rec_ops);
	KEXPECT_EQ(t, err, 0);
	return err ? NULL : mm;
}

/* ---- 1, 2: who is told, and the sequence ---- */

static void paths_tell_overlapping_notifiers(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_1M;
	static struct rec ra, rb;
	struct thp_ctx c;
	struct mm_struct *mm, *child = NULL;
	unsigned long seq;

	memset(&ra, 0, sizeof(ra));
	memset(&rb, 0, sizeof(rb));
	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, SZ_2M), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, SZ_2M), 0);
	KEXPECT_FALSE(t, mm_has_notifiers(mm));
	KEXPECT_EQ(t, mmu_interval_notifier_insert(&ra.sub, mm, a, SZ_64K, NULL), -EINVAL);
	KEXPECT_EQ(t, mmu_interval_notifier_insert(&ra.sub, mm, a, 0, &rec_ops), -EINVAL);
	CHECK_EQ(t, mmu_interval_notifier_insert(&ra.sub, mm, a, SZ_64K, &rec_ops), 0);
	CHECK_EQ(t, mmu_interval_notifier_insert(&rb.sub, mm, b, SZ_4K, &rec_ops), 0);
	KEXPECT_TRUE(t, mm_has_notifiers(mm));

	/* The read side: nothing met it yet. */
	seq = mmu_interval_read_begin(&ra.sub);
	KEXPECT_FALSE(t, mmu_interval_read_retry(&ra.sub, seq));

	/* Outside both: nobody is told, the sequence stays. */
	CHECK_EQ(t, thpt_advise(mm, a + (128 * SZ_4K), SZ_4K, MADV_DONTNEED), 0);
	KEXPECT_EQ(t, ra.calls + rb.calls, 0);
	KEXPECT_FALSE(t, mmu_interval_read_retry(&ra.sub, seq));

	/* madvise: CLEAR over what it zapped; a's reader must retry, b is not told. */
	CHECK_EQ(t, thpt_advise(mm, a + SZ_4K, SZ_4K, MADV_DONTNEED), 0);
	EXPECT_TOLD(t, &ra, MMU_NOTIFY_CLEAR, a + SZ_4K, a + 2 * SZ_4K);
	KEXPECT_EQ(t, rb.calls, 0);
	KEXPECT_TRUE(t, mmu_interval_read_retry(&ra.sub, seq));
	KEXPECT_EQ(t, ra.seq & 1, 1);		/* odd while it ran */
	seq = mmu_interval_read_begin(&ra.sub);
	KEXPECT_FALSE(t, mmu_interval_read_retry(&ra.sub, seq));

	/* mprotect */
	CHECK_EQ(t, thpt_protect(mm, a, SZ_64K, PROT_READ), 0);
	EXPECT_TOLD(t, &ra, MMU_NOTIFY_PROTECTION_VMA, a, a + SZ_64K);
	CHECK_EQ(t, thpt_protect(mm, a, SZ_64K, PROT_READ | PROT_WRITE), 0);
	ra.calls = 0;

	/* fork write-protects the parent's private entries: both told. */
	child = thpt_fork_mm(&c, mm);
	CHECK(t, child != NULL);
	EXPECT_TOLD(t, &ra, MMU_NOTIFY_PROTECTION_PAGE, a, a + SZ_64K);
	EXPECT_TOLD(t, &rb, MMU_NOTIFY_PROTECTION_PAGE, b, b + SZ_4K);

	/* Copy-on-write in the parent: CLEAR over the one page. */
	CHECK_EQ(t, fault(mm, a + 2 * SZ_4K, true), 0);
	EXPECT_TOLD(t, &ra, MMU_NOTIFY_CLEAR, a + 2 * SZ_4K, a + 3 * SZ_4K);
	KEXPECT_EQ(t, ra.end - ra.start, SZ_4K);
	/* The child's mm has no notifier: its COW tells nobody. */
	CHECK_EQ(t, fault(child, b, true), 0);
	KEXPECT_EQ(t, ra.calls + rb.calls, 0);

	/* clear_refs 4 (soft-dirty): every notifier. */
	CHECK_EQ(t, clear_refs(mm, CLEAR_REFS_SOFT_DIRTY), 0);
	EXPECT_TOLD(t, &ra, MMU_NOTIFY_SOFT_DIRTY, a, a + SZ_64K);
	EXPECT_TOLD(t, &rb, MMU_NOTIFY_SOFT_DIRTY, b, b + SZ_4K);

	/* munmap: UNMAP, to b only. */
	CHECK_EQ(t, thpt_unmap(mm, b, SZ_4K), 0);
	EXPECT_TOLD(t, &rb, MMU_NOTIFY_UNMAP, b, b + SZ_4K);
	KEXPECT_EQ(t, ra.calls, 0);

	/* Removed: told nothing more. */
	mmu_interval_notifier_remove(&ra.sub);
	mmu_interval_notifier_remove(&rb.sub);
	CHECK_EQ(t, thpt_advise(mm, a, SZ_64K, MADV_DONTNEED), 0);
	KEXPECT_EQ(t, ra.calls + rb.calls, 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* Migration tells MIGRATE; a PMD split tells CLEAR over the 2 MiB. */
static void migration_and_split_tell(struct ktest *t)
{
	const unsigned long a = AREA;
	static struct rec r;
	struct thp_ctx c;
	struct mm_struct *mm;
	int nid;

	memset(&r, 0, sizeof(r));
	nid = thpt_begin_two_nodes(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_MAP_PMD(t, mm, a);
	CHECK_EQ(t, mmu_interval_notifier_insert(&r.sub, mm, a + SZ_64K, SZ_4K, &rec_ops), 0);
	thpt_split_pmd_at(mm, a);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, a) == NULL);
	EXPECT_TOLD(t, &r, MMU_NOTIFY_CLEAR, a, a + SZ_2M);
	r.calls = 0;
	CHECK_EQ(t, thpt_move_folio(mm, a + SZ_64K, nid, NULL), 0);
	KEXPECT_TRUE(t, r.calls >= 1);
	KEXPECT_EQ(t, r.event, MMU_NOTIFY_MIGRATE);
	KEXPECT_EQ(t, folio_nid(thpt_folio_of(mm, a + SZ_64K)), nid);
	mmu_interval_notifier_remove(&r.sub);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 3. forced: waits while an invalidation runs ---- */

struct held_range {
	struct mm_struct *mm;
	unsigned long addr;
	struct rec *r;			/* read_begin's notifier */
	unsigned long seq;
	volatile bool started, done;
};

static int zap_thread(void *arg)
{
	struct held_range *h = arg;

	thpt_advise(h->mm, h->addr, SZ_4K, MADV_DONTNEED);
	h->done = true;
	return 0;
}

static int read_begin_thread(void *arg)
{
	struct held_range *h = arg;

	h->started = true;
	h->seq = mmu_interval_read_begin(&h->r->sub);
	h->done = true;
	return 0;
}

static int remove_thread(void *arg)
{
	struct held_range *h = arg;

	h->started = true;
	mmu_interval_notifier_remove(&h->r->sub);
	h->done = true;
	return 0;
}

static struct task *start(int (*fn)(void *), struct held_range *h, const char *name)
{
	struct task *k = kthread_create(fn, h, name);

	if (k)
		wake_up_process(k);
	return k;
}

static void waits_while_an_invalidation_runs(struct ktest *t)
{
	const unsigned long a = AREA;
	static struct rec r, late, gone;
	struct held_range zap = { 0 }, reader = { 0 }, late_reader = { 0 }, remover = { 0 };
	struct task *kz = NULL, *kr = NULL, *kl = NULL, *kg = NULL;
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long cur;

	memset(&late, 0, sizeof(late));
	memset(&gone, 0, sizeof(gone));
	thpt_begin(t, &c);
	mm = watched_mm(t, &c, &r);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, mmu_interval_notifier_insert(&gone.sub, mm, a + SZ_1M, SZ_4K, &rec_ops), 0);

	/* A zap whose op is held: the invalidation runs until we let it go. */
	r.hold = true;
	zap = (struct held_range){ .mm = mm, .addr = a, .r = &r };
	kz = start(zap_thread, &zap, "mn-zap");
	CHECK(t, kz != NULL);
	KEXPECT_TRUE(t, poll_until(r.held, 5000));
	cur = r.seq;
	KEXPECT_EQ(t, cur & 1, 1);

	/* read_begin of the notifier it met waits... */
	reader = (struct held_range){ .r = &r };
	kr = start(read_begin_thread, &reader, "mn-reader");
	/* ...an insert meanwhile is deferred, and its first read_begin waits too... */
	CHECK_EQ(t, mmu_interval_notifier_insert(&late.sub, mm, a, SZ_4K, &rec_ops), 0);
	late_reader = (struct held_range){ .r = &late };
	kl = start(read_begin_thread, &late_reader, "mn-late");
	/* ...and so does a remove (of a notifier the range did not even meet). */
	remover = (struct held_range){ .r = &gone };
	kg = start(remove_thread, &remover, "mn-remove");
	KEXPECT_TRUE(t, kr && kl && kg);
	/* All three are in their call (not merely not started yet) before we look. */
	KEXPECT_TRUE(t, poll_until(reader.started && late_reader.started && remover.started, 5000));
	msleep(50);
	KEXPECT_FALSE(t, reader.done);
	KEXPECT_FALSE(t, late_reader.done);
	KEXPECT_FALSE(t, remover.done);
	KEXPECT_FALSE(t, zap.done);
	KEXPECT_EQ(t, late.calls, 0);		/* not in the list the running range walks */

	r.hold = false;
	KEXPECT_TRUE(t, poll_until(zap.done && reader.done && late_reader.done && remover.done, 5000));
	/* The reader got the running invalidation's sequence: nothing since, no retry. */
	KEXPECT_EQ(t, reader.seq, cur);
	KEXPECT_FALSE(t, mmu_interval_read_retry(&r.sub, reader.seq));
	KEXPECT_FALSE(t, mmu_interval_read_retry(&late.sub, late_reader.seq));
	/* The late one is in the list now: the next zap tells it. */
	CHECK_EQ(t, thpt_advise(mm, a, SZ_4K, MADV_DONTNEED), 0);
	EXPECT_TOLD(t, &late, MMU_NOTIFY_CLEAR, a, a + SZ_4K);
	KEXPECT_TRUE(t, mmu_interval_read_retry(&late.sub, late_reader.seq));
	mmu_interval_notifier_remove(&late.sub);
	mmu_interval_notifier_remove(&r.sub);
out:
	r.hold = false;
	if (kz)
		kthread_join(kz);
	if (kr)
		kthread_join(kr);
	if (kl)
		kthread_join(kl);
	if (kg)
		kthread_join(kg);
	thpt_end(t, &c);
}

/* ---- 4. a notifier outlives the address space ---- */

static void exit_tells_and_the_mm_struct_stays(struct ktest *t)
{
	const unsigned long a = AREA;
	static struct rec r;
	struct thp_ctx c;
	struct mm_struct *mm;

	thpt_begin(t, &c);
	mm = watched_mm(t, &c, &r);
	CHECK(t, mm != NULL);
	KEXPECT_EQ(t, atomic_read(&mm->mm_count), 2);
	thpt_drop_mm(&c, mm);			/* the last mmput: the teardown */
	EXPECT_TOLD(t, &r, MMU_NOTIFY_UNMAP, a, a + SZ_64K);
	KEXPECT_EQ(t, atomic_read(&mm->mm_count), 1);	/* the notifier's */
	mmu_interval_notifier_remove(&r.sub);	/* frees it */
out:
	thpt_end(t, &c);
}

KTEST_SUITE(mmu_notifier,
	    KTEST_CASE(paths_tell_overlapping_notifiers),
	    KTEST_CASE(migration_and_split_tell),
	    KTEST_CASE(waits_while_an_invalidation_runs),
	    KTEST_CASE(exit_tells_and_the_mm_struct_stays));
