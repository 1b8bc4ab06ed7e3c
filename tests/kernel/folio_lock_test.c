/*
 * The folio_lock suite: PG_locked as a sleeping lock (include/quire/mm.h,
 * kernel/locking/wait_bit.c) and the places that take it. A second kernel
 * thread contends for the lock; "it sleeps" is checked by its task state
 * (TASK_UNINTERRUPTIBLE, not spinning) and by the step it has not taken.
 */
#include <quire/ktest.h>
#include <quire/sched.h>
#include <quire/mm.h>
#include <quire/fs.h>
#include <quire/pagemap.h>
#include <quire/huge_mm.h>
#include <quire/time.h>
#include <quire/errno.h>
#include <quire/uapi/fcntl.h>
#include "thp_test.h"

/* Wait (bounded) until t is asleep; whether it got there. */
static bool sleeps_soon(struct task *t)
{
	for (int i = 0; i < 500; i++) {
		if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) == TASK_UNINTERRUPTIBLE &&
		    !__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
			return true;
		msleep(1);
	}
	return false;
}

static void trylock_and_unlock(struct ktest *t)
{
	struct folio *folio = folio_alloc(GFP_KERNEL, 0, NUMA_NO_NODE);
	unsigned long bugs = vm_bug_reports;

	KASSERT_TRUE(t, folio != NULL);
	KEXPECT_FALSE(t, folio_test_locked(folio));
	KEXPECT_TRUE(t, folio_trylock(folio));
	KEXPECT_TRUE(t, folio_test_locked(folio));
	KEXPECT_FALSE(t, folio_trylock(folio));		/* held: no second owner */
	folio_unlock(folio);
	KEXPECT_FALSE(t, folio_test_locked(folio));
	folio_lock(folio);				/* uncontended: no sleep */
	folio_unlock(folio);
	folio_wait_locked(folio);			/* unlocked: returns at once */
	/* An unlock nobody locked is reported (DEBUG_MM). */
#ifdef DEBUG_MM
	vm_bug_returns = true;
	folio_unlock(folio);
	KEXPECT_EQ(t, vm_bug_reports, bugs + 1);
#else
	(void)bugs;
#endif
	folio_put(folio);
}

struct contender {
	struct folio *folio;
	int got;			/* 1 once it holds the lock */
};

static int contend(void *arg)
{
	struct contender *c = arg;

	folio_lock(c->folio);
	__atomic_store_n(&c->got, 1, __ATOMIC_RELEASE);
	folio_unlock(c->folio);
	return 0;
}

static void lock_sleeps_until_unlocked(struct ktest *t)
{
	struct folio *folio = folio_alloc(GFP_KERNEL, 0, NUMA_NO_NODE);
	struct contender c = { .folio = folio };
	struct task *th;

	KASSERT_TRUE(t, folio != NULL);
	folio_lock(folio);
	th = kthread_run(contend, &c, "folio-contend");
	KASSERT_TRUE(t, th != NULL);
	KEXPECT_TRUE(t, sleeps_soon(th));		/* asleep in folio_lock */
	KEXPECT_EQ(t, __atomic_load_n(&c.got, __ATOMIC_ACQUIRE), 0);
	folio_unlock(folio);				/* wakes it */
	kthread_join(th);
	KEXPECT_EQ(t, c.got, 1);
	KEXPECT_FALSE(t, folio_test_locked(folio));
	folio_put(folio);
}

struct truncater {
	struct file *file;
	int done;
};

static int do_truncate(void *arg)
{
	struct truncater *tr = arg;

	vfs_ftruncate(tr->file, 0);
	__atomic_store_n(&tr->done, 1, __ATOMIC_RELEASE);
	return 0;
}

/* truncate takes each folio's lock: one held elsewhere holds truncate up. */
static void truncate_waits_for_a_locked_folio(struct ktest *t)
{
	static char buf[2 * PAGE_SIZE];
	struct truncater tr = { 0 };
	struct folio *folio;
	struct task *th;
	loff_t pos = 0;

	KASSERT_EQ(t, vfs_open(NULL, "/tmp/folio-lock-test", O_RDWR | O_CREAT | O_TRUNC, 0644,
			       &tr.file), 0);
	KASSERT_EQ(t, vfs_write(tr.file, buf, sizeof(buf), &pos), (ssize_t)sizeof(buf));
	folio = filemap_get_folio(tr.file->f_mapping, 1);
	KASSERT_TRUE(t, folio != NULL);
	folio_lock(folio);
	th = kthread_run(do_truncate, &tr, "folio-truncate");
	KASSERT_TRUE(t, th != NULL);
	KEXPECT_TRUE(t, sleeps_soon(th));
	KEXPECT_EQ(t, __atomic_load_n(&tr.done, __ATOMIC_ACQUIRE), 0);
	KEXPECT_PTR_EQ(t, folio->mapping, tr.file->f_mapping);	/* still in the cache */
	folio_unlock(folio);
	kthread_join(th);
	KEXPECT_EQ(t, tr.done, 1);
	KEXPECT_PTR_EQ(t, folio->mapping, NULL);		/* now taken out */
	KEXPECT_EQ(t, tr.file->f_mapping->nrpages, 0);
	folio_put(folio);
	fput(tr.file);
	vfs_unlink(NULL, "/tmp/folio-lock-test");
}

/* The deferred split scan leaves a locked folio queued; a split needs the lock. */
static void split_needs_the_folio_lock(struct ktest *t)
{
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long a = AREA, queued, bugs = vm_bug_reports;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_MAP_2M(t, mm, a);
	folio = thpt_folio_of(mm, a);
	CHECK(t, folio != NULL);
	queued = deferred_split_queue_len();
	CHECK_EQ(t, thpt_unmap(mm, a + SZ_1M, SZ_1M), 0);	/* partly mapped: queued */
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);

	folio_get(folio);
	folio_lock(folio);
	KEXPECT_EQ(t, deferred_split_scan(~0UL), 0);		/* busy: skipped */
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	folio_unlock(folio);
	folio_put(folio);		/* (still mapped: a split wants no extra reference) */
	KEXPECT_EQ(t, deferred_split_scan(~0UL), 1);		/* now it goes */
	KEXPECT_EQ(t, deferred_split_queue_len(), queued);
	KEXPECT_EQ(t, thpt_order_of(mm, a), 0);
	KEXPECT_FALSE(t, folio_test_locked(thpt_folio_of(mm, a)));
	KEXPECT_EQ(t, mm_verify(), 0);
#ifdef DEBUG_MM
	/* Splitting without the lock is a caller's bug, reported. */
	CHECK_MAP_2M(t, mm, a + SZ_2M);
	folio = thpt_folio_of(mm, a + SZ_2M);
	folio_get(folio);
	vm_bug_returns = true;
	KEXPECT_EQ(t, split_folio(folio), 0);
	KEXPECT_EQ(t, vm_bug_reports, bugs + 1);
	folio_put(folio);
#else
	(void)bugs;
#endif
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

KTEST_SUITE(folio_lock,
	    KTEST_CASE(trylock_and_unlock),
	    KTEST_CASE(lock_sleeps_until_unlocked),
	    KTEST_CASE(truncate_waits_for_a_locked_folio),
	    KTEST_CASE(split_needs_the_folio_lock));
