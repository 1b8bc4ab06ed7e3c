/*
 * The thp suite, the rmap and changes to part of a mapping: mprotect and
 * madvise of part of a PMD, rmap_walk after fork, and the rmap calls with
 * and without rmap_batching.
 */
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/errno.h>
#include "thp_test.h"

/* ---- 10. mprotect ---- */

void mprotect_splits_pmd_and_keeps_shared_pages_read_only(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M, d = AREA + 2 * SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm, *child;
	struct folio *folio;
	unsigned long split_pmd, bad = 0;
	struct vm_area_struct *vma;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	/* Part of a PMD: it splits; the rest stays writable. */
	CHECK_MAP_2M(t, mm, a);
	folio = thpt_folio_of(mm, a);
	split_pmd = ev(THP_SPLIT_PMD);
	CHECK_EQ(t, thpt_protect(mm, a, SZ_4K, PROT_READ), 0);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, a) == NULL);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, a)));
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, a + SZ_4K)));
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, a + SZ_1M), folio);
	KEXPECT_EQ(t, folio_mapcount(folio), HPAGE_PMD_NR);
	vma = find_vma(mm, a);
	KEXPECT_EQ(t, vma->vm_end, a + SZ_4K);
	KEXPECT_EQ(t, fault(mm, a, true), -EACCES);	/* mapped, not writable: SEGV_ACCERR */
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Back to read-write: exclusive pages are writable again, with no fault. */
	CHECK_EQ(t, thpt_protect(mm, a, SZ_4K, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, a)));

	/* The whole PMD: it stays one entry, through PROT_NONE and back. */
	CHECK_MAP_2M(t, mm, b);
	thpt_write_pattern(mm, b, SZ_2M, 5);
	split_pmd = ev(THP_SPLIT_PMD);
	CHECK_EQ(t, thpt_protect(mm, b, SZ_2M, PROT_READ), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, b) != NULL);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, b)));
	CHECK_EQ(t, thpt_protect(mm, b, SZ_2M, PROT_NONE), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, b) != NULL);
	KEXPECT_FALSE(t, pte_present(thpt_entry_of(mm, b)));
	KEXPECT_EQ(t, fault(mm, b, false), -EACCES);	/* PROT_NONE: SEGV_ACCERR */
	KEXPECT_EQ(t, mm_verify(), 0);
	CHECK_EQ(t, thpt_protect(mm, b, SZ_2M, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, pte_present(thpt_entry_of(mm, b)) && pte_write(thpt_entry_of(mm, b)));
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, b, SZ_2M, 5), 0);

	/* After fork: read-write again must not make shared pages writable. */
	thp_set_order_mode(4, THP_ALWAYS);
	CHECK_EQ(t, thpt_map_anon(mm, d, 2 * SZ_64K), d);
	CHECK_EQ(t, thpt_fault_range(mm, d, 2 * SZ_64K), 0);
	CHECK_EQ(t, thpt_order_of(mm, d), 4);
	child = thpt_fork_mm(&c, mm);
	CHECK(t, child != NULL);
	CHECK_EQ(t, thpt_protect(mm, b, SZ_2M, PROT_READ), 0);
	CHECK_EQ(t, thpt_protect(mm, b, SZ_2M, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, b) != NULL);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, b)));
	CHECK_EQ(t, thpt_protect(mm, b, SZ_64K, PROT_READ), 0);	/* splits the PMD */
	CHECK_EQ(t, thpt_protect(mm, b, SZ_64K, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, b) == NULL);
	for (unsigned long p = b; p < b + SZ_2M; p += SZ_4K)
		bad += pte_write(thpt_entry_of(mm, p));
	CHECK_EQ(t, thpt_protect(mm, d, 2 * SZ_64K, PROT_NONE), 0);
	CHECK_EQ(t, thpt_protect(mm, d, 2 * SZ_64K, PROT_READ | PROT_WRITE), 0);
	for (unsigned long p = d; p < d + 2 * SZ_64K; p += SZ_4K)
		bad += pte_write(thpt_entry_of(mm, p)) || !pte_present(thpt_entry_of(mm, p));
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The child copies one page; after read-only and back, only that page is writable. */
	CHECK_EQ(t, fault(child, d + SZ_4K, true), 0);
	CHECK_EQ(t, thpt_protect(child, d, 2 * SZ_64K, PROT_READ), 0);
	CHECK_EQ(t, thpt_protect(child, d, 2 * SZ_64K, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(child, d + SZ_4K)));
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(child, d)));
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(child, d + 2 * SZ_4K)));
	KEXPECT_EQ(t, mm_verify(), 0);
	/* A write still resolves, by copy, and the other side keeps its data. */
	CHECK_EQ(t, fault(mm, b + SZ_4K, true), 0);
	*thpt_byte_of(mm, b + SZ_4K + 0x10) = 0xcc;
	KEXPECT_EQ(t, *thpt_byte_of(child, b + SZ_4K + 0x10), pattern(b + SZ_4K, 5));
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 11. rmap_walk after fork ---- */

struct walk_count {
	int pmds, ptes, vmas;
	struct mm_struct *mms[MAX_MMS];
	int nr_mms;
};

static bool count_mappings(struct folio *folio, struct vm_area_struct *vma,
			   unsigned long address, void *arg)
{
	struct walk_count *w = arg;
	struct page_vma_mapped_walk pvmw = { .folio = folio, .vma = vma, .address = address };
	bool found = false, seen = false;

	while (page_vma_mapped_walk(&pvmw)) {
		found = true;
		if (pvmw.pmd)
			w->pmds++;
		else
			w->ptes++;
	}
	if (found) {
		w->vmas++;
		for (int i = 0; i < w->nr_mms; i++)
			seen |= w->mms[i] == vma->vm_mm;
		if (!seen && w->nr_mms < MAX_MMS)
			w->mms[w->nr_mms++] = vma->vm_mm;
	}
	return true;
}

static struct walk_count walk(struct folio *folio)
{
	struct walk_count w = { 0 };
	struct rmap_walk_control rwc = { .arg = &w, .rmap_one = count_mappings };

	rmap_walk(folio, &rwc);
	return w;
}

void rmap_walk_finds_every_mapping(struct ktest *t)
{
	const unsigned long p = AREA, q = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *parent, *child, *grandchild;
	struct folio *fp, *fq0, *fq1;
	struct walk_count w;

	thpt_begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	parent = thpt_new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_MAP_2M(t, parent, p);
	CHECK_EQ(t, thpt_map_anon(parent, q, 2 * SZ_64K), q);
	CHECK_EQ(t, thpt_fault_range(parent, q, 2 * SZ_64K), 0);
	fp = thpt_folio_of(parent, p);
	fq0 = thpt_folio_of(parent, q);
	fq1 = thpt_folio_of(parent, q + SZ_64K);
	CHECK(t, fp && thpt_huge_pmd(parent, p) && fq0 && fq1 && folio_order(fq0) == 4 && fq0 != fq1);

	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 1);
	KEXPECT_EQ(t, w.ptes, 0);
	KEXPECT_EQ(t, w.nr_mms, 1);

	child = thpt_fork_mm(&c, parent);
	CHECK(t, child != NULL);
	grandchild = thpt_fork_mm(&c, child);
	CHECK(t, grandchild != NULL);
	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 3);
	KEXPECT_EQ(t, w.ptes, 0);
	KEXPECT_EQ(t, w.vmas, 3);
	KEXPECT_EQ(t, w.nr_mms, 3);
	KEXPECT_EQ(t, w.pmds + w.ptes, folio_mapcount(fp));
	w = walk(fq0);
	KEXPECT_EQ(t, w.pmds, 0);
	KEXPECT_EQ(t, w.ptes, 48);
	KEXPECT_EQ(t, w.nr_mms, 3);
	KEXPECT_EQ(t, w.ptes, folio_mapcount(fq0));

	/* The child's write splits its PMD and copies one page. */
	CHECK_EQ(t, fault(child, p, true), 0);
	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 2);
	KEXPECT_EQ(t, w.ptes, HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, w.nr_mms, 3);
	KEXPECT_EQ(t, w.pmds + w.ptes, folio_mapcount(fp));
	/* The grandchild unmaps the second 64 KiB folio. */
	CHECK_EQ(t, thpt_unmap(grandchild, q + SZ_64K, SZ_64K), 0);
	w = walk(fq1);
	KEXPECT_EQ(t, w.ptes, 32);
	KEXPECT_EQ(t, w.nr_mms, 2);
	/* The child exits: the parent's and the grandchild's PMDs are left. */
	thpt_drop_mm(&c, child);
	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 2);
	KEXPECT_EQ(t, w.ptes, 0);
	KEXPECT_EQ(t, w.nr_mms, 2);
	w = walk(fq0);
	KEXPECT_EQ(t, w.ptes, 32);
	KEXPECT_EQ(t, mm_verify_folio_rmap(fp), 0);
	KEXPECT_EQ(t, mm_verify_folio_rmap(fq0), 0);
	KEXPECT_EQ(t, mm_verify_folio_rmap(fq1), 0);
	/* The parent exits: the grandchild's mappings remain, found through the parent's anon_vma. */
	thpt_drop_mm(&c, parent);
	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 1);
	KEXPECT_EQ(t, w.nr_mms, 1);
	KEXPECT_PTR_EQ(t, w.mms[0], grandchild);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 12. the rmap_batching switch ---- */

static long cost(enum mm_cost_item item)
{
	return atomic_long_read(&mm_cost[item]);
}

/*
 * The rmap calls a fork of parent and the child's exit make. The counter
 * is global: should anything else in the kernel touch a mapping meanwhile
 * (a reaped process), the measurement is taken again, up to three times.
 */
static void fork_exit_rmap_calls(struct thp_ctx *c, struct mm_struct *parent, long want,
				 long *fork_calls, long *exit_calls)
{
	for (int attempt = 0; attempt < 3; attempt++) {
		long calls = cost(MM_COST_RMAP_CALLS);
		struct mm_struct *child = thpt_fork_mm(c, parent);

		*fork_calls = cost(MM_COST_RMAP_CALLS) - calls;
		if (!child)
			return;
		calls = cost(MM_COST_RMAP_CALLS);
		thpt_drop_mm(c, child);
		*exit_calls = cost(MM_COST_RMAP_CALLS) - calls;
		if (*fork_calls == want && *exit_calls == want)
			return;
	}
}

void rmap_batching_counts_calls(struct ktest *t)
{
	const unsigned long a = AREA, len = SZ_1M, nr_pages = SZ_1M / SZ_4K, nr_folios = SZ_1M / SZ_64K;
	struct thp_ctx c;
	struct mm_struct *parent;
	long calls, fork_calls = -1, exit_calls = -1;

	thpt_begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	parent = thpt_new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_EQ(t, thpt_map_anon(parent, a, len), a);
	CHECK_EQ(t, thpt_fault_range(parent, a, len), 0);
	CHECK_EQ(t, thpt_order_of(parent, a), 4);

	/* Fork of 16 folios of 64 KiB: one call per page without batching, per folio with. */
	rmap_batching = false;
	fork_exit_rmap_calls(&c, parent, nr_pages, &fork_calls, &exit_calls);
	KEXPECT_EQ(t, fork_calls, nr_pages);
	KEXPECT_EQ(t, exit_calls, nr_pages);
	rmap_batching = true;
	fork_exit_rmap_calls(&c, parent, nr_folios, &fork_calls, &exit_calls);
	KEXPECT_EQ(t, fork_calls, nr_folios);
	KEXPECT_EQ(t, exit_calls, nr_folios);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* Splitting a PMD: one call for the 512 PTEs and one for the PMD, or 512 + 1. */
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_INHERIT);
	for (int batched = 0; batched <= 1; batched++) {
		const unsigned long b = AREA + (2 + batched) * SZ_2M;

		CHECK_MAP_PMD(t, parent, b);
		rmap_batching = batched;
		calls = cost(MM_COST_RMAP_CALLS);
		thpt_split_pmd_at(parent, b);
		KEXPECT_EQ(t, cost(MM_COST_RMAP_CALLS) - calls, batched ? 2 : HPAGE_PMD_NR + 1);
		/* Unmapping: one call for the run of the folio, or one per page. */
		calls = cost(MM_COST_RMAP_CALLS);
		CHECK_EQ(t, thpt_unmap(parent, b, SZ_2M), 0);
		KEXPECT_EQ(t, cost(MM_COST_RMAP_CALLS) - calls, batched ? 1 : HPAGE_PMD_NR);
	}
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- 13. madvise of part of a PMD mapping ---- */

/*
 * A VMA split in the middle of a PMD mapping must split the PMD (Linux:
 * vma_adjust_trans_huge from __split_vma): a PMD never maps across a VMA
 * boundary, and fork copies each VMA on its own.
 */
void madvise_of_part_of_a_pmd_splits_it(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm, *child;
	struct folio *fa, *fb;
	unsigned long split_pmd;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, 2 * SZ_2M), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	CHECK_EQ(t, fault(mm, b, true), 0);
	CHECK(t, thpt_huge_pmd(mm, a) && thpt_huge_pmd(mm, b));
	fa = thpt_folio_of(mm, a);
	fb = thpt_folio_of(mm, b);
	split_pmd = ev(THP_SPLIT_PMD);
	/*
	 * MADV_NOHUGEPAGE on the second half of the first PMD. (A PMD left
	 * across the boundary would be copied once per VMA by fork: stop here.)
	 */
	KEXPECT_EQ(t, thpt_advise(mm, a + SZ_1M, SZ_1M, MADV_NOHUGEPAGE), 0);
	CHECK(t, thpt_huge_pmd(mm, a) == NULL);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* MADV_DONTFORK on the first half of the second: the child gets only the rest. */
	KEXPECT_EQ(t, thpt_advise(mm, b, SZ_1M, MADV_DONTFORK), 0);
	CHECK(t, thpt_huge_pmd(mm, b) == NULL);
	KEXPECT_EQ(t, mm_verify(), 0);
	child = thpt_fork_mm(&c, mm);
	CHECK(t, child != NULL);
	KEXPECT_EQ(t, thpt_pfn_of(child, b), 0);
	KEXPECT_EQ(t, thpt_pfn_of(child, b + SZ_1M), folio_pfn(fb) + HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, folio_mapcount(fa), 2 * HPAGE_PMD_NR);
	KEXPECT_EQ(t, folio_mapcount(fb), HPAGE_PMD_NR + HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, atomic_long_read(&child->rss), HPAGE_PMD_NR + HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}
