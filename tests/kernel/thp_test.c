/*
 * Transparent huge pages and the batched rmap, on address spaces built from
 * the kernel (mm_alloc, do_mmap, handle_mm_fault, dup_mm, mmput; no
 * process): which folio order a write fault maps (PMD, mTHP, fallbacks,
 * the controls), fork and copy-on-write of PMD- and PTE-mapped folios,
 * partial munmap and the deferred split queue, split_folio_to_order,
 * mprotect and madvise of part of a PMD, rmap_walk after fork, and the
 * rmap_batching switch's call counts. Every case ends with mm_verify() == 0
 * and every page back, and leaves the THP controls as it found them.
 *
 * This file: the faults and the controls, and the suite. Fork and
 * copy-on-write: thp_fork_test.c; munmap, the deferred split queue and
 * split_folio_to_order: thp_split_test.c; mprotect, madvise, rmap_walk
 * and rmap_batching: thp_rmap_test.c; the helpers: thp_test_util.c.
 */
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/time.h>
#include "thp_test.h"

/* ---- 1. a PMD fault ---- */

static void pmd_fault_maps_one_pmd(struct ktest *t)
{
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long alloc = ev(THP_FAULT_ALLOC), alloc9 = ms(9, MTHP_STAT_ANON_FAULT_ALLOC);
	unsigned long nr_anon = ms(9, MTHP_STAT_NR_ANON), not_excl = 0, bad_map = 0;
	struct folio *folio;
	pte_t *pmd;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, SZ_2M), AREA);
	CHECK_EQ(t, fault(mm, AREA + 0x1234, true), 0);
	pmd = thpt_huge_pmd(mm, AREA);
	CHECK(t, pmd != NULL);
	KEXPECT_TRUE(t, pte_write(*pmd));
	folio = thpt_folio_of(mm, AREA);
	CHECK(t, folio != NULL);
	KEXPECT_PTR_EQ(t, folio_page(folio, 0), pfn_to_page(pmd_pfn(*pmd)));
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	KEXPECT_TRUE(t, folio_test_anon(folio));
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_nr_pages_mapped(folio), 0);
	KEXPECT_EQ(t, folio_ref_count(folio), 1);
	KEXPECT_FALSE(t, folio_maybe_mapped_shared(folio));
	for (unsigned long i = 0; i < HPAGE_PMD_NR; i++) {
		not_excl += !PageAnonExclusive(folio_page(folio, i));
		bad_map += page_mapcount(folio_page(folio, i)) != 1;
	}
	KEXPECT_EQ(t, not_excl, 0);
	KEXPECT_EQ(t, bad_map, 0);
	KEXPECT_EQ(t, atomic_long_read(&mm->rss), HPAGE_PMD_NR);
	KEXPECT_EQ(t, mm->nr_deposited, 1);
	KEXPECT_EQ(t, ev(THP_FAULT_ALLOC) - alloc, 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_ANON_FAULT_ALLOC) - alloc9, 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON) - nr_anon, 1);
	/* Zeroed; a write through it lands in the folio; more faults change nothing. */
	KEXPECT_EQ(t, *thpt_byte_of(mm, AREA + 0x1234), 0);
	*thpt_byte_of(mm, AREA + 0x1234) = 0x5a;
	KEXPECT_EQ(t, fault(mm, AREA + 5 * SZ_4K, false), 0);
	KEXPECT_EQ(t, fault(mm, AREA + SZ_2M - 1, true), 0);
	KEXPECT_PTR_EQ(t, thpt_huge_pmd(mm, AREA), pmd);
	KEXPECT_EQ(t, *thpt_byte_of(mm, AREA + 0x1234), 0x5a);
	KEXPECT_EQ(t, ev(THP_FAULT_ALLOC) - alloc, 1);
	KEXPECT_EQ(t, mm_verify_folio_rmap(folio), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON), nr_anon);
}

/* ---- 2. 64 KiB mTHP over a large range ---- */

static void mthp_64k_every_page(struct ktest *t)
{
	const unsigned int order = 4;
	const unsigned long nr = 1UL << order;
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long size, alloc4, fb4, nr_anon4, pmd_alloc, bad = 0;
	u64 t0;

	thpt_begin(t, &c);
	/* 256 MiB when the node has room for it (numa3: 768 MiB), 64 MiB otherwise. */
	size = node_page_state(c.nid, NR_FREE_PAGES) >= ((256UL + 128) << 20) / PAGE_SIZE ?
	       256UL << 20 : 64UL << 20;
	thp_set_order_mode(order, THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, size), AREA);
	alloc4 = ms(order, MTHP_STAT_ANON_FAULT_ALLOC);
	fb4 = ms(order, MTHP_STAT_ANON_FAULT_FALLBACK);
	nr_anon4 = ms(order, MTHP_STAT_NR_ANON);
	pmd_alloc = ev(THP_FAULT_ALLOC);
	t0 = ktime_get_ns();
	CHECK_EQ(t, thpt_fault_range(mm, AREA, size), 0);
	printk(KERN_RAW "    # %s: %lu MiB faulted in %llu ms\n", t->name, size >> 20,
	       (unsigned long long)((ktime_get_ns() - t0) / 1000000));
	/* With only 64 KiB enabled, the range is size / 64 KiB folios of 64 KiB each. */
	KEXPECT_EQ(t, ms(order, MTHP_STAT_ANON_FAULT_ALLOC) - alloc4, size / SZ_64K);
	KEXPECT_EQ(t, ms(order, MTHP_STAT_ANON_FAULT_FALLBACK) - fb4, 0);
	KEXPECT_EQ(t, ms(order, MTHP_STAT_NR_ANON) - nr_anon4, size / SZ_64K);
	KEXPECT_EQ(t, ev(THP_FAULT_ALLOC) - pmd_alloc, 0);
	KEXPECT_EQ(t, atomic_long_read(&mm->rss), size / PAGE_SIZE);
	for (unsigned long a = AREA; a < AREA + size; a += SZ_64K) {
		pte_t *pte = thpt_pte_of(mm, a);
		struct folio *folio = thpt_folio_of(mm, a);
		bool ok = pte && folio && folio_order(folio) == order &&
			  folio_pfn(folio) == pte_pfn(pte[0]) && folio_mapcount(folio) == (int)nr &&
			  folio_nr_pages_mapped(folio) == (int)nr &&
			  folio_ref_count(folio) == (int)nr;

		for (unsigned long i = 0; ok && i < nr; i++)
			ok = pte_present(pte[i]) && pte_write(pte[i]) &&
			     pte_pfn(pte[i]) == folio_pfn(folio) + i &&
			     PageAnonExclusive(folio_page(folio, i));
		if (!ok && bad++ < 3)
			printk(KERN_RAW "    # %s: the 64 KiB block at %#lx: order %d\n", t->name,
			       a, thpt_order_of(mm, a));
	}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 3. fallback by geometry: the next smaller enabled order that fits ---- */

static void fallback_to_smaller_orders(struct ktest *t)
{
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long a2, a4, fb4, fb9, thp_fb;
	const unsigned long b = AREA, v = AREA + SZ_2M, w = AREA + 2 * SZ_2M;

	thpt_begin(t, &c);
	thp_set_order_mode(2, THP_ALWAYS);
	thp_set_order_mode(4, THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	a2 = ms(2, MTHP_STAT_ANON_FAULT_ALLOC);
	a4 = ms(4, MTHP_STAT_ANON_FAULT_ALLOC);
	fb4 = ms(4, MTHP_STAT_ANON_FAULT_FALLBACK);

	/* 32 KiB at a 32 KiB but not 64 KiB aligned address: two 16 KiB folios. */
	CHECK_EQ(t, thpt_map_anon(mm, b + SZ_32K, SZ_32K), b + SZ_32K);
	CHECK_EQ(t, thpt_fault_range(mm, b + SZ_32K, SZ_32K), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, b + SZ_32K), 2);
	KEXPECT_EQ(t, thpt_order_of(mm, b + SZ_32K + SZ_16K), 2);
	KEXPECT_PTR_NE(t, thpt_folio_of(mm, b + SZ_32K), thpt_folio_of(mm, b + SZ_32K + SZ_16K));
	KEXPECT_EQ(t, thpt_head_pfn_of(mm, b + SZ_32K), thpt_pfn_of(mm, b + SZ_32K));
	KEXPECT_EQ(t, ms(2, MTHP_STAT_ANON_FAULT_ALLOC) - a2, 2);
	KEXPECT_EQ(t, ms(4, MTHP_STAT_ANON_FAULT_ALLOC) - a4, 0);
	/* A size that does not fit is skipped, not counted as a fallback (Linux too). */
	KEXPECT_EQ(t, ms(4, MTHP_STAT_ANON_FAULT_FALLBACK) - fb4, 0);

	/* 64 KiB, aligned: one 64 KiB folio. */
	CHECK_EQ(t, thpt_map_anon(mm, b + SZ_1M, SZ_64K), b + SZ_1M);
	CHECK_EQ(t, fault(mm, b + SZ_1M + 3 * SZ_4K, true), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, b + SZ_1M), 4);
	KEXPECT_EQ(t, thpt_head_pfn_of(mm, b + SZ_1M), thpt_pfn_of(mm, b + SZ_1M));
	KEXPECT_EQ(t, ms(4, MTHP_STAT_ANON_FAULT_ALLOC) - a4, 1);

	/*
	 * A block with a PTE already in it is not used: a read maps the zero
	 * page at page 0, so a write at page 5 gets 16 KiB (pages 4-7), a
	 * write at page 0 copies the zero page into one page, and page 1's
	 * 16 KiB block is taken by page 0: one page too.
	 */
	CHECK_EQ(t, thpt_map_anon(mm, v, SZ_64K), v);
	CHECK_EQ(t, fault(mm, v, false), 0);
	KEXPECT_TRUE(t, is_zero_pfn(thpt_pfn_of(mm, v)));
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, v)));
	CHECK_EQ(t, fault(mm, v + 5 * SZ_4K, true), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, v + 5 * SZ_4K), 2);
	KEXPECT_EQ(t, thpt_head_pfn_of(mm, v + 5 * SZ_4K), thpt_pfn_of(mm, v + 4 * SZ_4K));
	CHECK_EQ(t, fault(mm, v, true), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, v), 0);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, v)));
	CHECK_EQ(t, fault(mm, v + SZ_4K, true), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, v + SZ_4K), 0);
	CHECK_EQ(t, fault(mm, v + 12 * SZ_4K, true), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, v + 12 * SZ_4K), 2);

	/*
	 * 2 MiB enabled too, in a VMA one 64 KiB short of 2 MiB: no PMD, and
	 * that is geometry, not a failed allocation (no thp_fault_fallback).
	 */
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_ALWAYS);
	fb9 = ms(9, MTHP_STAT_ANON_FAULT_FALLBACK);
	thp_fb = ev(THP_FAULT_FALLBACK);
	CHECK_EQ(t, thpt_map_anon(mm, w, SZ_2M - SZ_64K), w);
	CHECK_EQ(t, fault(mm, w, true), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, w) == NULL);
	KEXPECT_EQ(t, thpt_order_of(mm, w), 4);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_ANON_FAULT_FALLBACK) - fb9, 0);
	KEXPECT_EQ(t, ev(THP_FAULT_FALLBACK) - thp_fb, 0);
	/* 2 MiB, but starting 4 KiB off alignment: no PMD either; 64 KiB where it fits. */
	CHECK_EQ(t, thpt_map_anon(mm, w + SZ_2M + SZ_4K, SZ_2M), w + SZ_2M + SZ_4K);
	CHECK_EQ(t, fault(mm, w + SZ_2M + SZ_64K, true), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, w + SZ_2M + SZ_64K) == NULL);
	KEXPECT_EQ(t, thpt_order_of(mm, w + SZ_2M + SZ_64K), 4);
	CHECK_EQ(t, fault(mm, w + 2 * SZ_2M, true), 0);		/* 4 KiB of its block in the VMA: one page */
	KEXPECT_EQ(t, thpt_order_of(mm, w + 2 * SZ_2M), 0);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_ANON_FAULT_FALLBACK) - fb9, 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 4. the controls: MADV_(NO)HUGEPAGE, global and per-size modes ---- */

/*
 * Map 2 MiB at addr (with advice, unless -1) and write-fault its first byte:
 * the order mapped (9: by a PMD), or a negative step that failed.
 */
static int order_after_fault(struct mm_struct *mm, unsigned long addr, int advice)
{
	if (thpt_map_anon(mm, addr, SZ_2M) != (long)addr)
		return -2;
	if (advice >= 0 && thpt_advise(mm, addr, SZ_2M, advice))
		return -3;
	if (fault(mm, addr, true))
		return -4;
	if (thpt_huge_pmd(mm, addr))
		return thpt_order_of(mm, addr) == HPAGE_PMD_ORDER ? HPAGE_PMD_ORDER : -5;
	return thpt_order_of(mm, addr);
}

static void controls_choose_the_order(struct ktest *t)
{
	const unsigned long rw = VM_READ | VM_WRITE;
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long a = AREA;

	thpt_begin(t, &c);
	/* The allowed orders themselves. */
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw), 1UL << HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw | VM_NOHUGEPAGE), 0);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw | VM_SHARED), 0);
	KEXPECT_EQ(t, thp_set_order_mode(1, THP_ALWAYS), -EINVAL);
	KEXPECT_EQ(t, thp_set_order_mode(HPAGE_PMD_ORDER + 1, THP_ALWAYS), -EINVAL);
	KEXPECT_EQ(t, thp_set_global_mode(THP_INHERIT), -EINVAL);
	KEXPECT_EQ(t, thp_global_mode(), THP_ALWAYS);

	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	/* Defaults: a PMD. */
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), HPAGE_PMD_ORDER);
	a += SZ_2M;
	/* MADV_NOHUGEPAGE: one page, even with 64 KiB enabled too. */
	thp_set_order_mode(4, THP_ALWAYS);
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_NOHUGEPAGE), 0);
	a += SZ_2M;
	thp_set_order_mode(4, THP_NEVER);
	/* Global madvise: a PMD only where MADV_HUGEPAGE says so. */
	thp_set_global_mode(THP_MADVISE);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw), 0);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw | VM_HUGEPAGE), 1UL << HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), 0);
	a += SZ_2M;
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_HUGEPAGE), HPAGE_PMD_ORDER);
	a += SZ_2M;
	/* Global never: not even with MADV_HUGEPAGE. */
	thp_set_global_mode(THP_NEVER);
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_HUGEPAGE), 0);
	a += SZ_2M;
	/* A size set to "always" does not inherit the global "never". */
	thp_set_order_mode(4, THP_ALWAYS);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw), 1UL << 4);
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), 4);
	a += SZ_2M;
	/* A size set to "madvise": only under MADV_HUGEPAGE. */
	thp_set_global_mode(THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	thp_set_order_mode(4, THP_MADVISE);
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), 0);
	a += SZ_2M;
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_HUGEPAGE), 4);
	a += SZ_2M;
	/* 2 MiB "madvise" under a global "always": the same. */
	thp_set_order_mode(4, THP_NEVER);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_MADVISE);
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), 0);
	a += SZ_2M;
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_HUGEPAGE), HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 5. fallback when the allocation fails ---- */

/* Take every free block of order >= order from node nid (THISNODE), chained on lru. */
static unsigned long hoard(struct list_head *list, int nid, unsigned int order)
{
	unsigned long n = 0;
	struct page *p;

	while ((p = alloc_pages_node(nid, __GFP_THISNODE | __GFP_NOWARN, order))) {
		list_add(&p->lru, list);
		n++;
	}
	return n;
}

/*
 * Give them back. Nobody wrote to them, so they are not poisoned on the
 * way (DEBUG_MM would fill hundreds of MiB with the poison byte, seconds
 * under emulation).
 */
static void release(struct list_head *list, unsigned int order)
{
	bool poison = debug_pagealloc;

	debug_pagealloc = false;
	while (!list_empty(list)) {
		struct page *p = list_first_entry(list, struct page, lru);

		list_del(&p->lru);
		__free_pages(p, order);
	}
	debug_pagealloc = poison;
}

static void alloc_failure_falls_back(struct ktest *t)
{
	const unsigned int mid_order = HPAGE_PMD_ORDER - 1;	/* 1 MiB */
	LIST_HEAD(big);
	LIST_HEAD(mid);
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long thp_fb, fb9, fb_mid, a_mid, thp_alloc, nbig, nmid;
	struct page *spare = NULL;

	thpt_begin(t, &c);
	thp_set_order_mode(mid_order, THP_ALWAYS);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, SZ_2M), AREA);
	/*
	 * A page table here already (a read in the second 1 MiB, with the
	 * huge zero page off: it maps the 4 KiB one): no PMD will be tried.
	 */
	CHECK_EQ(t, thp_num_setting_store(THP_USE_ZERO_PAGE, "0", 1), 0);
	CHECK_EQ(t, fault(mm, AREA + SZ_2M - SZ_4K, false), 0);
	CHECK_EQ(t, thp_num_setting_store(THP_USE_ZERO_PAGE, "1", 1), 0);
	CHECK_EQ(t, thpt_map_anon(mm, AREA + SZ_2M, SZ_2M), AREA + SZ_2M);
	/*
	 * No 2 MiB block left on this node, and exactly one 1 MiB block: take
	 * every block of order >= 9, then of order >= 8, then give one 1 MiB
	 * block back (its buddy is taken, so it stays 1 MiB). What is left
	 * free on the node is in blocks below 1 MiB.
	 */
	nbig = hoard(&big, c.nid, HPAGE_PMD_ORDER);
	/*
	 * Small free blocks for the fault's page table, so that it does not
	 * split the 1 MiB block given back below (after some suites every
	 * free page is in 2 MiB blocks): give one 2 MiB block back and take
	 * a page, which splits it if nothing smaller is free.
	 */
	if (nbig) {
		struct page *p = list_first_entry(&big, struct page, lru);

		list_del(&p->lru);
		__free_pages(p, HPAGE_PMD_ORDER);
		nbig--;
		spare = alloc_pages_node(c.nid, __GFP_THISNODE | __GFP_NOWARN, 0);
	}
	nmid = hoard(&mid, c.nid, mid_order);
	if (nmid) {
		struct page *p = list_first_entry(&mid, struct page, lru);

		list_del(&p->lru);
		__free_pages(p, mid_order);
	}
	printk(KERN_RAW "    # %s: held %lu blocks of 2 MiB and %lu of 1 MiB on node %d\n",
	       t->name, nbig, nmid, c.nid);
	thp_fb = ev(THP_FAULT_FALLBACK);
	thp_alloc = ev(THP_FAULT_ALLOC);
	fb9 = ms(9, MTHP_STAT_ANON_FAULT_FALLBACK);
	fb_mid = ms(mid_order, MTHP_STAT_ANON_FAULT_FALLBACK);
	a_mid = ms(mid_order, MTHP_STAT_ANON_FAULT_ALLOC);
	/* A fresh 2 MiB range: the PMD fails, the next size (1 MiB) succeeds. */
	KEXPECT_EQ(t, fault(mm, AREA + SZ_2M, true), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, AREA + SZ_2M) == NULL);
	KEXPECT_EQ(t, ev(THP_FAULT_FALLBACK) - thp_fb, 1);
	KEXPECT_EQ(t, ev(THP_FAULT_ALLOC) - thp_alloc, 0);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_ANON_FAULT_FALLBACK) - fb9, 1);
	if (nmid) {
		KEXPECT_EQ(t, thpt_order_of(mm, AREA + SZ_2M), mid_order);
		KEXPECT_EQ(t, ms(mid_order, MTHP_STAT_ANON_FAULT_ALLOC) - a_mid, 1);
	}
	/* The range with a page table: no PMD tried; 1 MiB fails too: one page. */
	KEXPECT_EQ(t, fault(mm, AREA, true), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, AREA), 0);
	/* (Without a 1 MiB block to give back, the first fault fell back from 1 MiB too.) */
	KEXPECT_EQ(t, ms(mid_order, MTHP_STAT_ANON_FAULT_FALLBACK) - fb_mid, nmid ? 1 : 2);
	KEXPECT_EQ(t, ev(THP_FAULT_FALLBACK) - thp_fb, 1);
	release(&mid, mid_order);
	release(&big, HPAGE_PMD_ORDER);
	/* With memory back, a fresh range gets its PMD again. */
	CHECK_EQ(t, thpt_map_anon(mm, AREA + 2 * SZ_2M, SZ_2M), AREA + 2 * SZ_2M);
	KEXPECT_EQ(t, fault(mm, AREA + 2 * SZ_2M, true), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, AREA + 2 * SZ_2M) != NULL);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	release(&mid, mid_order);
	release(&big, HPAGE_PMD_ORDER);
	if (spare)
		__free_pages(spare, 0);
	thpt_end(t, &c);
}

KTEST_SUITE(thp,
	    KTEST_CASE(pmd_fault_maps_one_pmd),
	    KTEST_CASE(mthp_64k_every_page),
	    KTEST_CASE(fallback_to_smaller_orders),
	    KTEST_CASE(controls_choose_the_order),
	    KTEST_CASE(alloc_failure_falls_back),
	    KTEST_CASE(fork_shares_pmd_and_cow_copies_one_page),
	    KTEST_CASE(pmd_reused_after_the_child_exits),
	    KTEST_CASE(fork_shares_mthp_and_cow_copies_one_page),
	    KTEST_CASE(fork_copies_pinned_folios),
	    KTEST_CASE(try_share_clears_exclusive_unless_pinned),
	    KTEST_CASE(partial_munmap_queues_a_deferred_split),
	    KTEST_CASE(deferred_split_keeps_what_it_cannot_split),
	    KTEST_CASE(split_folio_to_each_order),
	    KTEST_CASE(split_refuses_pinned_and_referenced),
	    KTEST_CASE(mprotect_splits_pmd_and_keeps_shared_pages_read_only),
	    KTEST_CASE(rmap_walk_finds_every_mapping),
	    KTEST_CASE(rmap_batching_counts_calls),
	    KTEST_CASE(madvise_of_part_of_a_pmd_splits_it));

int thpt_split(struct folio *folio, unsigned int new_order)
{
	int ret;

	folio_lock(folio);
	ret = split_folio_to_order(folio, new_order);
	folio_unlock(folio);	/* the first folio of the split keeps the lock */
	return ret;
}
