/*
 * The thp suite, splitting: partial munmap and the deferred split queue
 * (what the scan frees, what it cannot split), split_folio_to_order to
 * each order, and the splits it refuses.
 */
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include "thp_test.h"

/* ---- 8. partial munmap and the deferred split queue ---- */

void partial_munmap_queues_a_deferred_split(struct ktest *t)
{
	const unsigned long a = AREA, m = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long split_pmd, queued, sd9, dsp, pm9, split9, thp_split, nr_anon9, bad = 0;
	unsigned long free0, sd4;
	int nid;

	thpt_begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_MAP_PMD(t, mm, a);
	thpt_write_pattern(mm, a, SZ_2M, 4);
	folio = thpt_folio_of(mm, a);
	nid = folio_nid(folio);
	split_pmd = ev(THP_SPLIT_PMD);
	queued = deferred_split_queue_len();
	sd9 = ms(9, MTHP_STAT_SPLIT_DEFERRED);
	dsp = ev(THP_DEFERRED_SPLIT_PAGE);
	pm9 = ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED);

	/* Unmap the second half: the PMD splits, half the folio stays mapped. */
	CHECK_EQ(t, thpt_unmap(mm, a + SZ_1M, SZ_1M), 0);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, a) == NULL);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, a), folio);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 0);
	KEXPECT_EQ(t, folio_mapcount(folio), HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, folio_nr_pages_mapped(folio), HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, atomic_long_read(&mm->rss), HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, mm->nr_deposited, 0);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT_DEFERRED) - sd9, 1);
	KEXPECT_EQ(t, ev(THP_DEFERRED_SPLIT_PAGE) - dsp, 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED) - pm9, 1);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The scan splits it and frees the unmapped half. */
	split9 = ms(9, MTHP_STAT_SPLIT);
	thp_split = ev(THP_SPLIT_PAGE);
	nr_anon9 = ms(9, MTHP_STAT_NR_ANON);
	slab_shrink_all();
	free0 = node_page_state(nid, NR_FREE_PAGES);
	KEXPECT_EQ(t, deferred_split_scan(~0UL), 1);
	slab_shrink_all();
	KEXPECT_EQ(t, node_page_state(nid, NR_FREE_PAGES) - free0, HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT) - split9, 1);
	KEXPECT_EQ(t, ev(THP_SPLIT_PAGE) - thp_split, 1);
	KEXPECT_EQ(t, nr_anon9 - ms(9, MTHP_STAT_NR_ANON), 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED), pm9);
	for (unsigned long p = a; p < a + SZ_1M; p += SZ_4K) {
		struct folio *f = thpt_folio_of(mm, p);

		bad += !f || folio_test_large(f) || folio_ref_count(f) != 1 ||
		       folio_mapcount(f) != 1 || !PageAnonExclusive((struct page *)f) ||
		       !pte_write(thpt_entry_of(mm, p));
	}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_1M, 4), 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* 64 KiB folios: a hole in one queues it; unmapping a whole one does not. */
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	CHECK_EQ(t, thpt_map_anon(mm, m, 2 * SZ_64K), m);
	CHECK_EQ(t, thpt_fault_range(mm, m, 2 * SZ_64K), 0);
	CHECK_EQ(t, thpt_order_of(mm, m), 4);
	folio = thpt_folio_of(mm, m);
	sd4 = ms(4, MTHP_STAT_SPLIT_DEFERRED);
	CHECK_EQ(t, thpt_unmap(mm, m + 5 * SZ_4K, SZ_4K), 0);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, ms(4, MTHP_STAT_SPLIT_DEFERRED) - sd4, 1);
	KEXPECT_EQ(t, folio_nr_pages_mapped(folio), 15);
	CHECK_EQ(t, thpt_unmap(mm, m + SZ_64K, SZ_64K), 0);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, mm_verify(), 0);
	slab_shrink_all();
	free0 = node_page_state(folio_nid(folio), NR_FREE_PAGES);
	KEXPECT_EQ(t, deferred_split_scan(~0UL), 1);
	slab_shrink_all();
	KEXPECT_EQ(t, node_page_state(folio_nid(folio), NR_FREE_PAGES) - free0, 1);
	KEXPECT_EQ(t, thpt_order_of(mm, m), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, m + 6 * SZ_4K), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/*
 * A queued folio the scan cannot split (pinned, here) stays queued, still
 * counted as partially mapped, and is split by a later scan once it can
 * be (Linux's deferred_split_scan puts it back on the queue).
 */
void deferred_split_keeps_what_it_cannot_split(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long queued, pm9, failed9, split;
	bool pinned = false;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_MAP_PMD(t, mm, a);
	folio = thpt_folio_of(mm, a);
	queued = deferred_split_queue_len();
	pm9 = ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED);
	CHECK_EQ(t, thpt_unmap(mm, a + SZ_1M, SZ_1M), 0);
	CHECK_EQ(t, deferred_split_queue_len(), queued + 1);
	failed9 = ms(9, MTHP_STAT_SPLIT_FAILED);

	atomic_inc(&folio->_pincount);
	pinned = true;
	split = deferred_split_scan(~0UL);
	KEXPECT_EQ(t, split, 0);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT_FAILED) - failed9, 1);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED) - pm9, 1);
	atomic_dec(&folio->_pincount);
	pinned = false;

	/* Unpinned: the next scan splits it and frees the unmapped half. */
	KEXPECT_EQ(t, deferred_split_scan(~0UL), 1);
	KEXPECT_EQ(t, thpt_order_of(mm, a), 0);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED), pm9);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	if (pinned)
		atomic_dec(&folio->_pincount);
	thpt_end(t, &c);
}

/* ---- 9. split_folio_to_order ---- */

/* A PTE-mapped 2 MiB folio at a (faulted as a PMD, then the PMD split). */
static struct folio *pte_mapped_2m(struct mm_struct *mm, unsigned long a, u8 salt)
{
	if (thpt_map_anon(mm, a, SZ_2M) != (long)a || fault(mm, a, true) || !thpt_huge_pmd(mm, a))
		return NULL;
	thpt_write_pattern(mm, a, SZ_2M, salt);
	thpt_split_pmd_at(mm, a);
	if (thpt_huge_pmd(mm, a))
		return NULL;
	return thpt_folio_of(mm, a);
}

void split_folio_to_each_order(struct ktest *t)
{
	static const unsigned int orders[] = { 0, 2, 4, 8 };
	struct thp_ctx c;
	struct mm_struct *mm;
	pte_t *saved = NULL;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	saved = kmalloc(HPAGE_PMD_NR * sizeof(*saved), GFP_KERNEL);
	CHECK(t, saved != NULL);
	for (unsigned int k = 0; k < ARRAY_SIZE(orders); k++) {
		const unsigned int new_order = orders[k];
		const unsigned long a = AREA + k * SZ_2M, step = 1UL << new_order;
		unsigned long split9 = ms(9, MTHP_STAT_SPLIT), thp_split = ev(THP_SPLIT_PAGE);
		unsigned long nr_new = new_order ? ms(new_order, MTHP_STAT_NR_ANON) : 0;
		struct folio *folio = pte_mapped_2m(mm, a, (u8)k);
		unsigned long nr9 = ms(9, MTHP_STAT_NR_ANON), bad = 0;
		pte_t *pte = thpt_pte_of(mm, a);

		CHECK(t, folio != NULL && pte != NULL);
		CHECK_EQ(t, folio_mapcount(folio), HPAGE_PMD_NR);
		CHECK_EQ(t, folio_ref_count(folio), HPAGE_PMD_NR);
		memcpy(saved, pte, HPAGE_PMD_NR * sizeof(*saved));
		folio_get(folio);
		KEXPECT_EQ(t, thpt_split(folio, new_order), 0);
		/* The caller's reference stays with the first new folio. */
		KEXPECT_EQ(t, folio_ref_count(folio), (int)step + 1);
		folio_put(folio);
		for (unsigned long i = 0; i < HPAGE_PMD_NR; i++) {
			struct page *page = pfn_to_page(pte_pfn(pte[i]));
			struct folio *f = page_folio(page);

			bad += pte[i] != saved[i];
			bad += folio_order(f) != new_order;
			bad += folio_page(f, 0) != folio_page(folio, ALIGN_DOWN(i, step));
			bad += folio_mapcount(f) != (int)step || folio_ref_count(f) != (int)step;
			bad += !PageAnonExclusive(page) || page_mapcount(page) != 1;
			bad += f->index != (a >> PAGE_SHIFT) + ALIGN_DOWN(i, step);
			if (new_order)
				bad += folio_nr_pages_mapped(f) != (int)step ||
				       folio_entire_mapcount(f) != 0;
		}
		KEXPECT_EQ(t, bad, 0);
		KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT) - split9, 1);
		KEXPECT_EQ(t, ev(THP_SPLIT_PAGE) - thp_split, 1);
		KEXPECT_EQ(t, nr9 - ms(9, MTHP_STAT_NR_ANON), 1);
		if (new_order)
			KEXPECT_EQ(t, ms(new_order, MTHP_STAT_NR_ANON) - nr_new, HPAGE_PMD_NR / step);
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_2M, (u8)k), 0);
		KEXPECT_EQ(t, mm_verify(), 0);
	}
	/* Orders that are not allowed. */
	{
		struct folio *f8 = thpt_folio_of(mm, AREA + 3 * SZ_2M);	/* order 8 */
		struct folio *f4 = thpt_folio_of(mm, AREA + 2 * SZ_2M);	/* order 4 */
		struct folio *f0 = thpt_folio_of(mm, AREA);			/* order 0 */

		CHECK(t, f8 && f4 && f0);
		folio_get(f8);
		folio_get(f4);
		folio_get(f0);
		KEXPECT_EQ(t, thpt_split(f4, 1), -EINVAL);
		KEXPECT_EQ(t, thpt_split(f4, 4), -EINVAL);
		KEXPECT_EQ(t, thpt_split(f4, 5), -EINVAL);
		KEXPECT_EQ(t, thpt_split(f0, 0), -EINVAL);
		/* Splits of splits: 8 -> 4 -> 2 -> 0. */
		KEXPECT_EQ(t, thpt_split(f8, 4), 0);
		KEXPECT_EQ(t, folio_order(f8), 4);
		KEXPECT_EQ(t, thpt_split(f8, 2), 0);
		KEXPECT_EQ(t, thpt_split(f8, 0), 0);
		KEXPECT_EQ(t, folio_order(f8), 0);
		KEXPECT_EQ(t, thpt_order_of(mm, AREA + 3 * SZ_2M + SZ_64K), 4);
		KEXPECT_EQ(t, thpt_order_of(mm, AREA + 3 * SZ_2M + SZ_16K), 2);
		folio_put(f8);
		folio_put(f4);
		folio_put(f0);
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, AREA + 3 * SZ_2M, SZ_2M, 3), 0);
	}
	/* A PMD-mapped folio is split too: its PMD first. */
	{
		const unsigned long a = AREA + 4 * SZ_2M;
		unsigned long split_pmd = ev(THP_SPLIT_PMD), bad = 0;
		struct folio *folio;

		CHECK_MAP_PMD(t, mm, a);
		thpt_write_pattern(mm, a, SZ_2M, 9);
		folio = thpt_folio_of(mm, a);
		folio_get(folio);
		KEXPECT_EQ(t, thpt_split(folio, 2), 0);
		folio_put(folio);
		KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
		KEXPECT_TRUE(t, thpt_huge_pmd(mm, a) == NULL);
		KEXPECT_EQ(t, mm->nr_deposited, 0);
		for (unsigned long p = a; p < a + SZ_2M; p += SZ_4K)
			bad += thpt_order_of(mm, p) != 2 || !pte_write(thpt_entry_of(mm, p));
		KEXPECT_EQ(t, bad, 0);
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, a, SZ_2M, 9), 0);
	}
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	kfree(saved);
	thpt_end(t, &c);
}

void split_refuses_pinned_and_referenced(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long failed9, thp_failed;
	int ret;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_MAP_2M(t, mm, a);
	folio = thpt_folio_of(mm, a);
	CHECK(t, folio != NULL && thpt_huge_pmd(mm, a));
	folio_get(folio);	/* the caller's reference */
	failed9 = ms(9, MTHP_STAT_SPLIT_FAILED);
	thp_failed = ev(THP_SPLIT_PAGE_FAILED);

	/* Pinned (a large folio counts pins in _pincount): refused, nothing changed. */
	atomic_inc(&folio->_pincount);
	ret = thpt_split(folio, 0);
	atomic_dec(&folio->_pincount);
	KEXPECT_EQ(t, ret, -EAGAIN);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT_FAILED) - failed9, 1);
	KEXPECT_EQ(t, ev(THP_SPLIT_PAGE_FAILED) - thp_failed, 1);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, a) != NULL);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* An unexpected reference: refused; the folio stays whole and mapped. */
	folio_get(folio);
	ret = thpt_split(folio, 4);
	folio_put(folio);
	KEXPECT_EQ(t, ret, -EAGAIN);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT_FAILED) - failed9, 2);
	KEXPECT_EQ(t, ev(THP_SPLIT_PAGE_FAILED) - thp_failed, 2);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	/* (Linux too may leave it PTE-mapped: the PMD is split before the references are checked.) */
	KEXPECT_EQ(t, folio_mapcount(folio), thpt_huge_pmd(mm, a) ? 1 : (int)HPAGE_PMD_NR);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* Without them it goes through. */
	KEXPECT_EQ(t, thpt_split(folio, 0), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, a + SZ_1M), 0);
	folio_put(folio);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}
