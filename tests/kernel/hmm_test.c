/*
 * The hmm suite: hmm_range_fault (mm/hmm.c) with an MMU interval
 * notifier, as a device driver uses them:
 *   1. a snapshot without faults: what is mapped, with its write bit, and
 *      0 where nothing is;
 *   2. faulting as asked, for the whole range (default_flags) or page by
 *      page (pfn_flags_mask); a write request that copies on write
 *      invalidates, so the walk says -EBUSY and the driver's retry loop
 *      gets a writable snapshot;
 *   3. a PMD-mapped THP reports order 9;
 *   4. errors as Linux: -EFAULT for a hole or an unreadable VMA asked
 *      for (HMM_PFN_ERROR when not asked), -EPERM for a write asked of a
 *      read-only VMA, -EBUSY when an invalidation met the notifier since
 *      read_begin.
 */
#include <quire/ktest.h>
#include <quire/hmm.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/errno.h>
#include <quire/string.h>
#include "thp_test.h"

#define NR	16	/* pages walked: 64 KiB at AREA */

static unsigned long pfns[NR];

static bool note_seq(struct mmu_interval_notifier *sub, const struct mmu_notifier_range *range,
		     unsigned long cur_seq)
{
	mmu_interval_set_seq(sub, cur_seq);
	return true;
}

static const struct mmu_interval_notifier_ops seq_ops = { .invalidate = note_seq };

/*
 * A driver's loop: read_begin, walk under mmap_lock, start again on
 * -EBUSY (at most 4 times). *tries: how many walks it took.
 */
static int snapshot(struct mmu_interval_notifier *sub, unsigned long start, unsigned long flags,
		    unsigned long mask, int *tries)
{
	struct hmm_range range = {
		.notifier = sub, .start = start, .end = start + NR * PAGE_SIZE,
		.hmm_pfns = pfns, .default_flags = flags, .pfn_flags_mask = mask,
	};
	int ret = -EBUSY;

	for (*tries = 0; ret == -EBUSY && *tries < 4; ++*tries) {
		range.notifier_seq = mmu_interval_read_begin(sub);
		down_read(&sub->mm->mmap_lock);
		ret = hmm_range_fault(&range);
		up_read(&sub->mm->mmap_lock);
	}
	return ret;
}

/* pfns[i] names what the CPU maps at base + i pages, with write as expected. */
static bool matches_at(struct mm_struct *mm, unsigned long base, unsigned long i, bool write)
{
	unsigned long w = pfns[i];

	return (w & HMM_PFN_VALID) && !(w & HMM_PFN_ERROR) && !!(w & HMM_PFN_WRITE) == write &&
	       hmm_pfn_to_pfn(w) == thpt_pfn_of(mm, base + i * PAGE_SIZE);
}

static bool matches(struct mm_struct *mm, unsigned long i, bool write)
{
	return matches_at(mm, AREA, i, write);
}

static void snapshot_and_fault(struct ktest *t)
{
	struct mmu_interval_notifier sub;
	struct thp_ctx c;
	struct mm_struct *mm;
	bool inserted = false;
	int tries, bad = 0;

	thpt_begin(t, &c);
	thp_set_global_mode(THP_NEVER);	/* 4 KiB pages: the zero page for reads */
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, NR * PAGE_SIZE), AREA);
	CHECK_EQ(t, thpt_fault_range(mm, AREA, 4 * PAGE_SIZE), 0);	/* 4 written pages */
	CHECK_EQ(t, mmu_interval_notifier_insert(&sub, mm, AREA, NR * PAGE_SIZE, &seq_ops), 0);
	inserted = true;

	/* 1. No fault asked: the 4 pages, writable; 0 for the rest. */
	memset(pfns, 0, sizeof(pfns));
	KEXPECT_EQ(t, snapshot(&sub, AREA, 0, 0, &tries), 0);
	KEXPECT_EQ(t, tries, 1);
	for (int i = 0; i < NR; i++)
		bad += i < 4 ? !matches(mm, i, true) : pfns[i] != 0;
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, thpt_pfn_of(mm, AREA + 4 * PAGE_SIZE), 0);	/* nothing faulted */

	/* 2a. Pages 5 and 7 asked for reading (pfn_flags_mask): the zero page, read-only. */
	memset(pfns, 0, sizeof(pfns));
	pfns[5] = pfns[7] = HMM_PFN_REQ_FAULT;
	KEXPECT_EQ(t, snapshot(&sub, AREA, 0, HMM_PFN_REQ_FAULT | HMM_PFN_REQ_WRITE, &tries), 0);
	KEXPECT_TRUE(t, matches(mm, 5, false) && matches(mm, 7, false));
	KEXPECT_TRUE(t, is_zero_pfn(hmm_pfn_to_pfn(pfns[5])));
	KEXPECT_EQ(t, pfns[6], 0);
	KEXPECT_EQ(t, thpt_pfn_of(mm, AREA + 6 * PAGE_SIZE), 0);

	/*
	 * 2b. Every page asked writable: the empty ones fault in, the zero
	 * pages copy on write, which tells the notifier: at least one walk
	 * says -EBUSY, the retry gets them all writable.
	 */
	KEXPECT_EQ(t, snapshot(&sub, AREA, HMM_PFN_REQ_FAULT | HMM_PFN_REQ_WRITE, 0, &tries), 0);
	KEXPECT_TRUE(t, tries >= 2);
	bad = 0;
	for (int i = 0; i < NR; i++)
		bad += !matches(mm, i, true);
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_FALSE(t, is_zero_pfn(thpt_pfn_of(mm, AREA + 5 * PAGE_SIZE)));
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	if (inserted)
		mmu_interval_notifier_remove(&sub);
	thpt_end(t, &c);
}

static void pmd_mapping_reports_order_9(struct ktest *t)
{
	struct mmu_interval_notifier sub;
	struct thp_ctx c;
	struct mm_struct *mm;
	bool inserted = false;
	int tries, bad = 0;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_MAP_PMD(t, mm, AREA);
	CHECK_EQ(t, mmu_interval_notifier_insert(&sub, mm, AREA, SZ_2M, &seq_ops), 0);
	inserted = true;
	memset(pfns, 0, sizeof(pfns));
	KEXPECT_EQ(t, snapshot(&sub, AREA, HMM_PFN_REQ_FAULT, 0, &tries), 0);
	for (int i = 0; i < NR; i++)
		bad += !matches(mm, i, true) || hmm_pfn_to_map_order(pfns[i]) != HPAGE_PMD_ORDER;
	KEXPECT_EQ(t, bad, 0);
out:
	if (inserted)
		mmu_interval_notifier_remove(&sub);
	thpt_end(t, &c);
}

static void errors_as_linux(struct ktest *t)
{
	const unsigned long ro = AREA + SZ_1M, none = AREA + 2 * SZ_1M;
	struct mmu_interval_notifier sub;
	struct hmm_range range = { .notifier = &sub, .hmm_pfns = pfns };
	struct thp_ctx c;
	struct mm_struct *mm;
	bool inserted = false;
	int tries;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, NR * PAGE_SIZE), AREA);	/* then a hole */
	CHECK_EQ(t, thpt_map_anon(mm, ro, NR * PAGE_SIZE), ro);
	CHECK_EQ(t, thpt_protect(mm, ro, NR * PAGE_SIZE, PROT_READ), 0);
	CHECK_EQ(t, thpt_map_anon(mm, none, NR * PAGE_SIZE), none);
	CHECK_EQ(t, thpt_protect(mm, none, NR * PAGE_SIZE, PROT_NONE), 0);
	CHECK_EQ(t, mmu_interval_notifier_insert(&sub, mm, AREA, 4 * SZ_1M, &seq_ops), 0);
	inserted = true;

	/* A hole: error words when not asked, -EFAULT when asked. */
	KEXPECT_EQ(t, snapshot(&sub, AREA + (128 * PAGE_SIZE), 0, 0, &tries), 0);
	KEXPECT_EQ(t, pfns[0], HMM_PFN_ERROR);
	KEXPECT_EQ(t, snapshot(&sub, AREA + (128 * PAGE_SIZE), HMM_PFN_REQ_FAULT, 0, &tries), -EFAULT);
	/* PROT_NONE: the same. */
	KEXPECT_EQ(t, snapshot(&sub, none, 0, 0, &tries), 0);
	KEXPECT_EQ(t, pfns[NR - 1], HMM_PFN_ERROR);
	KEXPECT_EQ(t, snapshot(&sub, none, HMM_PFN_REQ_FAULT, 0, &tries), -EFAULT);
	/* Read-only: a read fault is fine, a write request is -EPERM. */
	KEXPECT_EQ(t, snapshot(&sub, ro, HMM_PFN_REQ_FAULT, 0, &tries), 0);
	KEXPECT_TRUE(t, matches_at(mm, ro, 0, false) && matches_at(mm, ro, NR - 1, false));
	KEXPECT_EQ(t, snapshot(&sub, ro, HMM_PFN_REQ_FAULT | HMM_PFN_REQ_WRITE, 0, &tries), -EPERM);
	/* Unaligned: -EINVAL. */
	range.start = AREA + 1;
	range.end = AREA + PAGE_SIZE;
	range.notifier_seq = mmu_interval_read_begin(&sub);
	down_read(&mm->mmap_lock);
	KEXPECT_EQ(t, hmm_range_fault(&range), -EINVAL);
	up_read(&mm->mmap_lock);
	/* An invalidation since read_begin: -EBUSY, before anything is read. */
	range.start = AREA;
	range.end = AREA + NR * PAGE_SIZE;
	range.notifier_seq = mmu_interval_read_begin(&sub);
	CHECK_EQ(t, thpt_advise(mm, AREA, PAGE_SIZE, MADV_DONTNEED), 0);
	down_read(&mm->mmap_lock);
	KEXPECT_EQ(t, hmm_range_fault(&range), -EBUSY);
	up_read(&mm->mmap_lock);
out:
	if (inserted)
		mmu_interval_notifier_remove(&sub);
	thpt_end(t, &c);
}

KTEST_SUITE(hmm,
	    KTEST_CASE(snapshot_and_fault),
	    KTEST_CASE(pmd_mapping_reports_order_9),
	    KTEST_CASE(errors_as_linux));
