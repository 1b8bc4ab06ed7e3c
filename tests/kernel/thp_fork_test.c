/*
 * The thp suite, fork: PMD- and PTE-mapped folios shared read-only by fork,
 * copy-on-write of one page, the PMD reused once the child is gone, and
 * pinned folios copied, never shared.
 */
#include <quire/errno.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include "thp_test.h"

/* ---- 6. fork of a PMD mapping, and copy-on-write ---- */

static unsigned long count_exclusive(struct folio *folio)
{
	unsigned long n = 0;

	for (unsigned long i = 0; i < folio_nr_pages(folio); i++)
		n += PageAnonExclusive(folio_page(folio, i));
	return n;
}

void fork_shares_pmd_and_cow_copies_one_page(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *parent, *child;
	struct folio *folio;
	unsigned long split_pmd, pfn, copy_pfn, queued;
	pte_t *ppmd, *cpmd;

	thpt_begin(t, &c);
	parent = thpt_new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_MAP_PMD(t, parent, a);
	thpt_write_pattern(parent, a, SZ_2M, 1);
	folio = thpt_folio_of(parent, a);
	pfn = folio_pfn(folio);

	child = thpt_fork_mm(&c, parent);
	CHECK(t, child != NULL);
	ppmd = thpt_huge_pmd(parent, a);
	cpmd = thpt_huge_pmd(child, a);
	CHECK(t, ppmd && cpmd);
	KEXPECT_EQ(t, pmd_pfn(*ppmd), pfn);
	KEXPECT_EQ(t, pmd_pfn(*cpmd), pfn);
	KEXPECT_FALSE(t, pte_write(*ppmd));
	KEXPECT_FALSE(t, pte_write(*cpmd));
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 2);
	KEXPECT_EQ(t, folio_mapcount(folio), 2);
	KEXPECT_EQ(t, page_mapcount(folio_page(folio, 7)), 2);
	KEXPECT_EQ(t, folio_ref_count(folio), 2);
	KEXPECT_EQ(t, count_exclusive(folio), 0);
	KEXPECT_TRUE(t, folio_maybe_mapped_shared(folio));
	KEXPECT_EQ(t, atomic_long_read(&child->rss), HPAGE_PMD_NR);
	KEXPECT_EQ(t, child->nr_deposited, 1);
	KEXPECT_EQ(t, thpt_pattern_mismatches(child, a, SZ_2M, 1), 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The child writes page 3: its PMD is split and that one page copied. */
	split_pmd = ev(THP_SPLIT_PMD);
	queued = deferred_split_queue_len();
	CHECK_EQ(t, fault(child, a + 3 * SZ_4K + 0x10, true), 0);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_TRUE(t, thpt_huge_pmd(child, a) == NULL);
	KEXPECT_TRUE(t, thpt_huge_pmd(parent, a) != NULL);
	copy_pfn = thpt_pfn_of(child, a + 3 * SZ_4K);
	KEXPECT_NE(t, copy_pfn, pfn + 3);
	KEXPECT_EQ(t, thpt_order_of(child, a + 3 * SZ_4K), 0);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(child, a + 3 * SZ_4K)));
	KEXPECT_TRUE(t, thpt_exclusive_at(child, a + 3 * SZ_4K));
	/* Every other page of the child still maps the shared folio, read-only. */
	KEXPECT_EQ(t, thpt_pfn_of(child, a + 4 * SZ_4K), pfn + 4);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(child, a + 4 * SZ_4K)));
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_mapcount(folio), 1 + HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, folio_nr_pages_mapped(folio), HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, folio_ref_count(folio), HPAGE_PMD_NR);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued);	/* the PMD maps all of it */
	/* The copy has the data; the child's write does not reach the parent. */
	KEXPECT_EQ(t, thpt_pattern_mismatches(child, a, SZ_2M, 1), 0);
	*thpt_byte_of(child, a + 3 * SZ_4K + 0x10) = 0xee;
	KEXPECT_EQ(t, thpt_pattern_mismatches(parent, a, SZ_2M, 1), 0);
	/* A second write to the copy copies nothing. */
	CHECK_EQ(t, fault(child, a + 3 * SZ_4K, true), 0);
	KEXPECT_EQ(t, thpt_pfn_of(child, a + 3 * SZ_4K), copy_pfn);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The parent writes page 5: the folio is still shared, so its PMD splits and it copies. */
	CHECK_EQ(t, fault(parent, a + 5 * SZ_4K, true), 0);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 2);
	KEXPECT_NE(t, thpt_pfn_of(parent, a + 5 * SZ_4K), pfn + 5);
	*thpt_byte_of(parent, a + 5 * SZ_4K + 0x10) = 0xdd;
	KEXPECT_EQ(t, *thpt_byte_of(child, a + 5 * SZ_4K + 0x10), pattern(a + 5 * SZ_4K, 1));
	KEXPECT_EQ(t, *thpt_byte_of(parent, a + 3 * SZ_4K + 0x10), pattern(a + 3 * SZ_4K, 1));
	KEXPECT_EQ(t, folio_mapcount(folio), 2 * (HPAGE_PMD_NR - 1));
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/*
 * After the child is gone the parent is the folio's only user (refcount 1,
 * one PMD): a write reuses the folio in place, as Linux's
 * do_huge_pmd_wp_page does (folio_ref_count == 1), with no split and no copy.
 */
void pmd_reused_after_the_child_exits(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *parent, *child;
	struct folio *folio;
	unsigned long split_pmd, pfn;

	thpt_begin(t, &c);
	parent = thpt_new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_MAP_2M(t, parent, a);
	thpt_write_pattern(parent, a, SZ_2M, 2);
	folio = thpt_folio_of(parent, a);
	pfn = folio_pfn(folio);
	child = thpt_fork_mm(&c, parent);
	CHECK(t, child != NULL);
	KEXPECT_TRUE(t, folio_maybe_mapped_shared(folio));
	thpt_drop_mm(&c, child);
	KEXPECT_EQ(t, folio_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_ref_count(folio), 1);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(parent, a)));
	split_pmd = ev(THP_SPLIT_PMD);
	CHECK_EQ(t, fault(parent, a + 9 * SZ_4K, true), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(parent, a) != NULL);
	KEXPECT_EQ(t, thpt_pfn_of(parent, a + 9 * SZ_4K), pfn + 9);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(parent, a)));
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(parent, a, SZ_2M, 2), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 7. fork of 64 KiB folios ---- */

void fork_shares_mthp_and_cow_copies_one_page(struct ktest *t)
{
	const unsigned long a = AREA, len = 4 * SZ_64K;
	struct thp_ctx c;
	struct mm_struct *parent, *child;
	struct folio *f0;
	unsigned long bad = 0, queued, split_deferred;

	thpt_begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	parent = thpt_new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_EQ(t, thpt_map_anon(parent, a, len), a);
	CHECK_EQ(t, thpt_fault_range(parent, a, len), 0);
	thpt_write_pattern(parent, a, len, 3);
	child = thpt_fork_mm(&c, parent);
	CHECK(t, child != NULL);
	for (unsigned long b = a; b < a + len; b += SZ_64K) {
		struct folio *f = thpt_folio_of(parent, b);

		bad += !f || folio_order(f) != 4 || thpt_folio_of(child, b) != f ||
		       folio_mapcount(f) != 32 || folio_ref_count(f) != 32 ||
		       folio_nr_pages_mapped(f) != 16 || count_exclusive(f) != 0 ||
		       !folio_maybe_mapped_shared(f);
		for (unsigned long p = b; p < b + SZ_64K; p += SZ_4K)
			bad += pte_write(thpt_entry_of(parent, p)) || pte_write(thpt_entry_of(child, p)) ||
			       thpt_pfn_of(parent, p) != thpt_pfn_of(child, p);
	}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The child writes page 2: only that page is copied. */
	f0 = thpt_folio_of(parent, a);
	queued = deferred_split_queue_len();
	split_deferred = ms(4, MTHP_STAT_SPLIT_DEFERRED);
	CHECK_EQ(t, fault(child, a + 2 * SZ_4K, true), 0);
	KEXPECT_EQ(t, thpt_order_of(child, a + 2 * SZ_4K), 0);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(child, a + 2 * SZ_4K)));
	KEXPECT_PTR_EQ(t, thpt_folio_of(child, a + 3 * SZ_4K), f0);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(child, a + 3 * SZ_4K)));
	KEXPECT_EQ(t, folio_mapcount(f0), 31);
	KEXPECT_EQ(t, folio_nr_pages_mapped(f0), 16);
	*thpt_byte_of(child, a + 2 * SZ_4K + 0x10) = 0xee;
	KEXPECT_EQ(t, thpt_pattern_mismatches(parent, a, len, 3), 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(child, a + 3 * SZ_4K, len - 3 * SZ_4K, 3), 0);
	/* The parent writes page 7 of the same folio: copied too. */
	CHECK_EQ(t, fault(parent, a + 7 * SZ_4K, true), 0);
	KEXPECT_EQ(t, thpt_order_of(parent, a + 7 * SZ_4K), 0);
	*thpt_byte_of(parent, a + 7 * SZ_4K + 0x10) = 0xdd;
	KEXPECT_EQ(t, *thpt_byte_of(child, a + 7 * SZ_4K + 0x10), pattern(a + 7 * SZ_4K, 3));
	KEXPECT_EQ(t, folio_mapcount(f0), 30);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The child exits: page 7 of f0 is mapped by nobody now, so f0 waits for a split. */
	thpt_drop_mm(&c, child);
	KEXPECT_EQ(t, folio_mapcount(f0), 15);
	KEXPECT_EQ(t, folio_nr_pages_mapped(f0), 15);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, ms(4, MTHP_STAT_SPLIT_DEFERRED) - split_deferred, 1);
	KEXPECT_EQ(t, thpt_pattern_mismatches(parent, a + SZ_64K, len - SZ_64K, 3), 0);
	/*
	 * The other folios are the parent's alone again, but their pages are
	 * not exclusive: as on Linux 6.12 (wp_can_reuse_anon_folio refuses
	 * large folios), a write copies the page to a 4 KiB folio.
	 */
	{
		struct folio *f1 = thpt_folio_of(parent, a + SZ_64K);

		CHECK(t, f1 != NULL && folio_order(f1) == 4);
		KEXPECT_EQ(t, folio_mapcount(f1), 16);
		CHECK_EQ(t, fault(parent, a + SZ_64K, true), 0);
		KEXPECT_TRUE(t, pte_write(thpt_entry_of(parent, a + SZ_64K)));
		KEXPECT_EQ(t, thpt_order_of(parent, a + SZ_64K), 0);
		KEXPECT_PTR_EQ(t, thpt_folio_of(parent, a + SZ_64K + SZ_4K), f1);
		KEXPECT_EQ(t, folio_mapcount(f1), 15);
		KEXPECT_EQ(t, deferred_split_queue_len(), queued + 2);
	}
	KEXPECT_EQ(t, thpt_pattern_mismatches(parent, a + SZ_64K, len - SZ_64K, 3), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/*
 * docs/design.md's invariant 6: fork never shares a pinned anonymous page. A
 * pinned PMD-mapped folio and a pinned 64 KiB folio: the parent keeps
 * them, writable and exclusive; the child gets a copy of every page.
 */
void fork_copies_pinned_folios(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *parent, *child;
	struct folio *fa = NULL, *fb = NULL;
	unsigned long bad = 0;

	thpt_begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	parent = thpt_new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_EQ(t, thpt_map_anon(parent, a, SZ_2M + SZ_64K), a);
	CHECK_EQ(t, fault(parent, a, true), 0);
	CHECK_EQ(t, thpt_fault_range(parent, b, SZ_64K), 0);
	CHECK(t, thpt_huge_pmd(parent, a) != NULL);
	CHECK_EQ(t, thpt_order_of(parent, b), 4);
	thpt_write_pattern(parent, a, SZ_2M + SZ_64K, 6);
	fa = thpt_folio_of(parent, a);
	fb = thpt_folio_of(parent, b);
	/* Pinned as FOLL_PIN pins a large folio: one reference and one pin each. */
	folio_get(fa);
	atomic_inc(&fa->_pincount);
	folio_get(fb);
	atomic_inc(&fb->_pincount);
	KEXPECT_EQ(t, mm_verify(), 0);

	child = thpt_fork_mm(&c, parent);
	CHECK(t, child != NULL);
	KEXPECT_EQ(t, folio_mapcount(fa), HPAGE_PMD_NR);	/* PTE-mapped now, by the parent only */
	KEXPECT_EQ(t, folio_mapcount(fb), 16);
	KEXPECT_EQ(t, count_exclusive(fa), HPAGE_PMD_NR);
	KEXPECT_EQ(t, count_exclusive(fb), 16);
	for (unsigned long p = a; p < a + SZ_2M + SZ_64K; p += SZ_4K) {
		struct folio *cf = thpt_folio_of(child, p);

		bad += !cf || cf == fa || cf == fb || folio_test_large(cf);
		bad += !pte_write(thpt_entry_of(parent, p)) || !thpt_exclusive_at(parent, p);
		bad += !thpt_exclusive_at(child, p);
	}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(child, a, SZ_2M + SZ_64K, 6), 0);
	KEXPECT_EQ(t, atomic_long_read(&child->rss), HPAGE_PMD_NR + 16);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The parent writes without a fault, and the child does not see it. */
	*thpt_byte_of(parent, a + 0x10) = 0x77;
	KEXPECT_EQ(t, *thpt_byte_of(child, a + 0x10), pattern(a, 6));
out:
	if (fa) {
		atomic_dec(&fa->_pincount);
		folio_put(fa);
	}
	if (fb) {
		atomic_dec(&fb->_pincount);
		folio_put(fb);
	}
	thpt_end(t, &c);
}

/*
 * folio_try_share_anon_rmap_{pte,pmd} (before an exclusive page is
 * unmapped for a while, e.g. by migration): the page, or the whole
 * PMD-mapped folio, stops being anon-exclusive; a folio that may be pinned
 * refuses with -EBUSY and keeps every flag.
 */
void try_share_clears_exclusive_unless_pinned(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *fa, *fb;
	struct page *pb;

	thpt_begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, SZ_2M + SZ_64K), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	CHECK_EQ(t, thpt_fault_range(mm, b, SZ_64K), 0);
	CHECK(t, thpt_huge_pmd(mm, a) != NULL);
	fa = thpt_folio_of(mm, a);
	fb = thpt_folio_of(mm, b);
	pb = thpt_page_of(mm, b + 3 * SZ_4K);
	CHECK_EQ(t, count_exclusive(fa), HPAGE_PMD_NR);
	CHECK_EQ(t, count_exclusive(fb), 16);
	/*
	 * The caller of try_share has the entry out of the way; read-only does
	 * here (a writable PTE of a shared page is what mm_verify reports).
	 */
	CHECK_EQ(t, thpt_protect(mm, a, SZ_2M + SZ_64K, PROT_READ), 0);

	/* Maybe pinned: refused, nothing changes. */
	atomic_inc(&fb->_pincount);
	KEXPECT_EQ(t, folio_try_share_anon_rmap_pte(fb, pb), -EBUSY);
	KEXPECT_EQ(t, count_exclusive(fb), 16);
	atomic_dec(&fb->_pincount);
	atomic_inc(&fa->_pincount);
	KEXPECT_EQ(t, folio_try_share_anon_rmap_pmd(fa, folio_page(fa, 0)), -EBUSY);
	KEXPECT_EQ(t, count_exclusive(fa), HPAGE_PMD_NR);
	atomic_dec(&fa->_pincount);

	/* Not pinned: exactly that page, or the whole PMD-mapped folio. */
	KEXPECT_EQ(t, folio_try_share_anon_rmap_pte(fb, pb), 0);
	KEXPECT_FALSE(t, PageAnonExclusive(pb));
	KEXPECT_EQ(t, count_exclusive(fb), 15);
	KEXPECT_EQ(t, folio_try_share_anon_rmap_pmd(fa, folio_page(fa, 0)), 0);
	KEXPECT_EQ(t, count_exclusive(fa), 0);
	/* The mapcounts are untouched: only the exclusive flags moved. */
	KEXPECT_EQ(t, folio_mapcount(fa), 1);
	KEXPECT_EQ(t, folio_mapcount(fb), 16);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}
