/*
 * The mremap suite (mm/mremap.c, mm/mincore.c, mm/msync.c;
 * docs/mm/mremap.md): moves of 4 KiB pages, of PTE-mapped large folios
 * (also across a page-table boundary), of PMD-mapped THPs (2 MiB aligned:
 * one PMD still; unaligned: split), of file pages, DONTUNMAP, the second
 * mapping of a shared one, growing and shrinking in place, merging, fork
 * after a move, the errno values; then mincore and msync. After each
 * move: the same frames at the new address (nothing copied), the data,
 * the rmap (mapcounts, and an rmap walk finds the folio at the new
 * address), the counters (rss, deposited tables, THP events) and
 * mm_verify(). Built on the thp suite's helpers (thp_test.h).
 */
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/fs.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/syscalls.h>
#include "thp_test.h"

#define SZ_8M	(8UL << 20)

/* mremap with mmap_lock taken, as the system call does. */
static long remap(struct mm_struct *mm, unsigned long addr, unsigned long old_len,
		  unsigned long new_len, unsigned long flags, unsigned long new_addr)
{
	long ret;

	down_write(&mm->mmap_lock);
	ret = do_mremap(mm, addr, old_len, new_len, flags, new_addr);
	up_write(&mm->mmap_lock);
	return ret;
}

static long map_file(struct mm_struct *mm, unsigned long addr, unsigned long len,
		     unsigned long type, struct file *f)
{
	long ret;

	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, addr, len, PROT_READ | PROT_WRITE, type | MAP_FIXED, f, 0);
	up_write(&mm->mmap_lock);
	return ret;
}

static long mincore(struct mm_struct *mm, unsigned long addr, unsigned long pages, u8 *vec)
{
	long ret;

	down_read(&mm->mmap_lock);
	ret = do_mincore(mm, addr, pages, vec);
	up_read(&mm->mmap_lock);
	return ret;
}

/* As the system call: VMA after VMA from addr on; 0, or -ENOMEM at a hole. */
static long mincore_all(struct mm_struct *mm, unsigned long addr, unsigned long pages, u8 *vec)
{
	while (pages) {
		long n = mincore(mm, addr, pages, vec);

		if (n <= 0)
			return n;
		pages -= (unsigned long)n;
		vec += n;
		addr += (unsigned long)n << PAGE_SHIFT;
	}
	return 0;
}

static long rss(struct mm_struct *mm)
{
	return atomic_long_read(&mm->rss);
}

/* Nothing mapped, and no VMA, in [addr, addr + len). */
static bool range_gone(struct mm_struct *mm, unsigned long addr, unsigned long len)
{
	struct vm_area_struct *v = find_vma(mm, addr);

	if (v && v->vm_start < addr + len)
		return false;
	for (unsigned long a = addr; a < addr + len; a += SZ_4K)
		if (thpt_entry_of(mm, a))
			return false;
	return true;
}

/* The pages of [addr, addr + len) whose byte is not pattern(from + offset, salt): data moved along. */
static unsigned long moved_mismatches(struct mm_struct *mm, unsigned long addr, unsigned long from,
				      unsigned long len, u8 salt)
{
	unsigned long bad = 0;

	for (unsigned long off = 0; off < len; off += SZ_4K)
		bad += thpt_page_of(mm, addr + off) == NULL ||
		       *thpt_byte_of(mm, addr + off + 0x10) != pattern(from + off, salt);
	return bad;
}

/* ---- what an rmap walk finds ---- */

struct found {
	int ptes, pmds;
	unsigned long lowest;		/* the lowest address a mapping was found at */
	struct mm_struct *mms[MAX_MMS];
	int nr_mms;
};

static bool find_one(struct folio *folio, struct vm_area_struct *vma, unsigned long address,
		     void *arg)
{
	struct found *f = arg;
	struct page_vma_mapped_walk pvmw = { .folio = folio, .vma = vma, .address = address };
	bool seen = false;

	while (page_vma_mapped_walk(&pvmw)) {
		if (pvmw.pmd)
			f->pmds++;
		else
			f->ptes++;
		if (!f->lowest || pvmw.address < f->lowest)
			f->lowest = pvmw.address;
		for (int i = 0; i < f->nr_mms; i++)
			seen |= f->mms[i] == vma->vm_mm;
		if (!seen && f->nr_mms < MAX_MMS)
			f->mms[f->nr_mms++] = vma->vm_mm;
	}
	return true;
}

static struct found rmap_find(struct folio *folio)
{
	struct found f = { 0 };
	struct rmap_walk_control rwc = { .arg = &f, .rmap_one = find_one };

	rmap_walk(folio, &rwc);
	return f;
}

/* ---- moves ---- */

/* 16 pages of 4 KiB: the same frames at the new address, then grow, shrink, and a blocked grow. */
static void moves_small_pages(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_8M + 3 * SZ_4K, len = 16 * SZ_4K;
	unsigned long pfns[16], bad = 0, index;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct vm_area_struct *vma;
	struct folio *folio;
	struct found f;
	long before, moved;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, len), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, len), 0);
	thpt_write_pattern(mm, a, len, 1);
	for (int i = 0; i < 16; i++)
		pfns[i] = thpt_pfn_of(mm, a + i * SZ_4K);
	index = thpt_folio_of(mm, a)->index;
	before = rss(mm);

	CHECK_EQ(t, remap(mm, a, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, b), b);
	KEXPECT_TRUE(t, range_gone(mm, a, len));
	for (int i = 0; i < 16; i++)
		bad += thpt_pfn_of(mm, b + i * SZ_4K) != pfns[i];
	KEXPECT_EQ(t, bad, 0);				/* moved, not copied */
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, len, 1), 0);
	vma = find_vma(mm, b);
	CHECK(t, vma && vma->vm_start == b && vma->vm_end == b + len);
	KEXPECT_EQ(t, vma->vm_pgoff, a >> PAGE_SHIFT);	/* the linear index stays */
	folio = thpt_folio_of(mm, b);
	KEXPECT_EQ(t, folio->index, index);
	KEXPECT_EQ(t, folio_mapcount(folio), 1);
	f = rmap_find(folio);
	KEXPECT_EQ(t, f.ptes, 1);
	KEXPECT_EQ(t, f.lowest, b);
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, b)) && thpt_exclusive_at(mm, b));
	KEXPECT_EQ(t, rss(mm), before);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* A write needs no copy: still our exclusive page. */
	CHECK_EQ(t, fault(mm, b, true), 0);
	KEXPECT_EQ(t, thpt_pfn_of(mm, b), pfns[0]);

	/* Grow in place: the space after is free. */
	CHECK_EQ(t, remap(mm, b, len, 2 * len, 0, 0), b);
	vma = find_vma(mm, b);
	KEXPECT_EQ(t, vma->vm_end, b + 2 * len);
	KEXPECT_EQ(t, fault(mm, b + len + SZ_4K, true), 0);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, len, 1), 0);
	KEXPECT_EQ(t, rss(mm), before + 1);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Shrink in place: the tail is unmapped. */
	CHECK_EQ(t, remap(mm, b, 2 * len, len / 2, 0, 0), b);
	KEXPECT_EQ(t, find_vma(mm, b)->vm_end, b + len / 2);
	KEXPECT_TRUE(t, range_gone(mm, b + len / 2, 3 * len / 2));
	KEXPECT_EQ(t, rss(mm), 8);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, len / 2, 1), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* A mapping in the way: no room in place; with MREMAP_MAYMOVE it moves elsewhere. */
	CHECK_EQ(t, thpt_map_anon(mm, b + len, SZ_4K), b + len);
	KEXPECT_EQ(t, remap(mm, b, len / 2, 2 * len, 0, 0), -ENOMEM);
	KEXPECT_EQ(t, find_vma(mm, b)->vm_end, b + len / 2);
	moved = remap(mm, b, len / 2, 2 * len, MREMAP_MAYMOVE, 0);
	CHECK(t, moved > 0 && moved != (long)b);
	KEXPECT_TRUE(t, range_gone(mm, b, len / 2));
	KEXPECT_EQ(t, find_vma(mm, moved)->vm_end, moved + 2 * len);
	KEXPECT_EQ(t, moved_mismatches(mm, moved, a, len / 2, 1), 0);
	KEXPECT_EQ(t, thpt_pfn_of(mm, moved + SZ_4K), pfns[1]);
	KEXPECT_EQ(t, rss(mm), 8);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* 64 KiB folios stay whole, also across a page-table boundary; split and partial moves after. */
static void moves_large_folios(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + 2 * SZ_2M - SZ_32K, d = AREA + SZ_8M;
	unsigned long bad = 0;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *f0, *f1;
	struct found f;
	long nr_anon;

	thpt_begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, 2 * SZ_64K), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, 2 * SZ_64K), 0);
	f0 = thpt_folio_of(mm, a);
	f1 = thpt_folio_of(mm, a + SZ_64K);
	CHECK(t, f0 && f1 && f0 != f1 && folio_order(f0) == 4 && folio_order(f1) == 4);
	thpt_write_pattern(mm, a, 2 * SZ_64K, 2);
	nr_anon = (long)ms(4, MTHP_STAT_NR_ANON);

	/* b + 32 KiB is a 2 MiB boundary: the first folio now lies in two page tables. */
	CHECK_EQ(t, remap(mm, a, 2 * SZ_64K, 2 * SZ_64K, MREMAP_MAYMOVE | MREMAP_FIXED, b), b);
	KEXPECT_TRUE(t, range_gone(mm, a, 2 * SZ_64K));
	for (unsigned long off = 0; off < 2 * SZ_64K; off += SZ_4K)
		bad += thpt_folio_of(mm, b + off) != (off < SZ_64K ? f0 : f1);
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, folio_order(f0), 4);
	KEXPECT_EQ(t, folio_mapcount(f0), 16);
	KEXPECT_EQ(t, folio_nr_pages_mapped(f0), 16);
	f = rmap_find(f0);
	KEXPECT_EQ(t, f.ptes, 16);
	KEXPECT_EQ(t, f.lowest, b);
	f = rmap_find(f1);
	KEXPECT_EQ(t, f.ptes, 16);
	KEXPECT_EQ(t, f.lowest, b + SZ_64K);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, 2 * SZ_64K, 2), 0);
	KEXPECT_EQ(t, (long)ms(4, MTHP_STAT_NR_ANON), nr_anon);
	KEXPECT_EQ(t, deferred_split_queue_len(), 0);
	KEXPECT_EQ(t, rss(mm), 32);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* Splitting the folio that spans two tables takes both tables' locks. */
	folio_get(f0);
	KEXPECT_EQ(t, thpt_split(f0, 0), 0);
	folio_put(f0);
	KEXPECT_EQ(t, thpt_order_of(mm, b), 0);
	KEXPECT_EQ(t, thpt_order_of(mm, b + SZ_32K), 0);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, 2 * SZ_64K, 2), 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* Half of the second folio elsewhere: mapped whole still, through two VMAs. */
	CHECK_EQ(t, remap(mm, b + SZ_64K + SZ_32K, SZ_32K, SZ_32K, MREMAP_MAYMOVE | MREMAP_FIXED, d), d);
	KEXPECT_EQ(t, folio_mapcount(f1), 16);
	f = rmap_find(f1);
	KEXPECT_EQ(t, f.ptes, 16);
	KEXPECT_EQ(t, f.lowest, b + SZ_64K);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, d), f1);
	KEXPECT_FALSE(t, test_page_flag((struct page *)f1, PG_partially_mapped));
	KEXPECT_EQ(t, moved_mismatches(mm, d, a + SZ_64K + SZ_32K, SZ_32K, 2), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Unmapping one half now leaves it partially mapped: queued for a deferred split. */
	CHECK_EQ(t, thpt_unmap(mm, d, SZ_32K), 0);
	KEXPECT_EQ(t, folio_nr_pages_mapped(f1), 8);
	KEXPECT_TRUE(t, test_page_flag((struct page *)f1, PG_partially_mapped));
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* A THP moved between 2 MiB-aligned addresses stays one PMD (with its deposited table). */
static void aligned_move_keeps_the_pmd(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + 2 * SZ_2M, far = AREA + (1UL << 30);
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long split_pmd, thps;
	struct found f;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_MAP_PMD(t, mm, a);
	thpt_write_pattern(mm, a, SZ_2M, 3);
	folio = thpt_folio_of(mm, a);
	split_pmd = ev(THP_SPLIT_PMD);
	thps = nr_anon_thps();
	CHECK_EQ(t, mm->nr_deposited, 1);

	CHECK_EQ(t, remap(mm, a, SZ_2M, SZ_2M, MREMAP_MAYMOVE | MREMAP_FIXED, b), b);
	KEXPECT_TRUE(t, range_gone(mm, a, SZ_2M));
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, b) != NULL);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, b), folio);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD), split_pmd);
	KEXPECT_EQ(t, nr_anon_thps(), thps);
	KEXPECT_EQ(t, mm->nr_deposited, 1);
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_mapcount(folio), 1);
	f = rmap_find(folio);
	KEXPECT_EQ(t, f.pmds, 1);
	KEXPECT_EQ(t, f.ptes, 0);
	KEXPECT_EQ(t, f.lowest, b);
	KEXPECT_EQ(t, rss(mm), HPAGE_PMD_NR);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, SZ_2M, 3), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Still writable, still exclusive: a write changes nothing. */
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(mm, b)));
	CHECK_EQ(t, fault(mm, b + SZ_1M, true), 0);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, b) != NULL);
	/* Into another PMD table (the first move stayed in one: one lock), then a split there. */
	CHECK_EQ(t, remap(mm, b, SZ_2M, SZ_2M, MREMAP_MAYMOVE | MREMAP_FIXED, far), far);
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, far) != NULL);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, far), folio);
	KEXPECT_EQ(t, mm->nr_deposited, 1);
	KEXPECT_EQ(t, rmap_find(folio).lowest, far);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The split finds the deposited table at the new place. */
	thpt_split_pmd_at(mm, far);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_EQ(t, folio_mapcount(folio), HPAGE_PMD_NR);
	KEXPECT_EQ(t, mm->nr_deposited, 0);
	KEXPECT_EQ(t, moved_mismatches(mm, far, a, SZ_2M, 3), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* Unaligned, or part of a THP: the PMD is split first and the PTEs move. */
static void unaligned_move_splits_the_pmd(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + 2 * SZ_2M + SZ_64K;
	const unsigned long p = AREA + 4 * SZ_2M, q = AREA + 6 * SZ_2M;
	unsigned long split_pmd, thps, bad = 0;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	struct found f;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_MAP_PMD(t, mm, a);
	thpt_write_pattern(mm, a, SZ_2M, 4);
	folio = thpt_folio_of(mm, a);
	split_pmd = ev(THP_SPLIT_PMD);
	thps = nr_anon_thps();

	CHECK_EQ(t, remap(mm, a, SZ_2M, SZ_2M, MREMAP_MAYMOVE | MREMAP_FIXED, b), b);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_EQ(t, nr_anon_thps(), thps - 1);
	KEXPECT_TRUE(t, range_gone(mm, a, SZ_2M));
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, b) == NULL);
	for (unsigned long off = 0; off < SZ_2M; off += SZ_4K)
		bad += thpt_page_of(mm, b + off) != folio_page(folio, off >> PAGE_SHIFT);
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 0);
	KEXPECT_EQ(t, folio_mapcount(folio), HPAGE_PMD_NR);
	KEXPECT_EQ(t, folio_nr_pages_mapped(folio), HPAGE_PMD_NR);
	f = rmap_find(folio);
	KEXPECT_EQ(t, f.ptes, HPAGE_PMD_NR);
	KEXPECT_EQ(t, f.pmds, 0);
	KEXPECT_EQ(t, f.lowest, b);
	KEXPECT_EQ(t, mm->nr_deposited, 0);
	KEXPECT_EQ(t, rss(mm), HPAGE_PMD_NR);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, SZ_2M, 4), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The folio spans two page tables now; a split still takes every lock it needs. */
	folio_get(folio);
	KEXPECT_EQ(t, thpt_split(folio, 4), 0);
	folio_put(folio);
	KEXPECT_EQ(t, thpt_order_of(mm, b), 4);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, SZ_2M, 4), 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The first half of an aligned THP to an aligned place: a split too (not the whole PMD). */
	CHECK_MAP_PMD(t, mm, p);
	thpt_write_pattern(mm, p, SZ_2M, 5);
	folio = thpt_folio_of(mm, p);
	split_pmd = ev(THP_SPLIT_PMD);
	CHECK_EQ(t, remap(mm, p, SZ_1M, SZ_1M, MREMAP_MAYMOVE | MREMAP_FIXED, q), q);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, q), folio);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, p + SZ_1M), folio);
	KEXPECT_EQ(t, folio_mapcount(folio), HPAGE_PMD_NR);
	f = rmap_find(folio);
	KEXPECT_EQ(t, f.ptes, HPAGE_PMD_NR);
	KEXPECT_EQ(t, f.lowest, p + SZ_1M);	/* the half left behind is below q */
	KEXPECT_FALSE(t, test_page_flag((struct page *)folio, PG_partially_mapped));
	KEXPECT_EQ(t, moved_mismatches(mm, q, p, SZ_1M, 5), 0);
	KEXPECT_EQ(t, moved_mismatches(mm, p + SZ_1M, p + SZ_1M, SZ_1M, 5), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* Shared file pages move with their VMA (found through i_mmap); old_size 0 maps them twice. */
static void moves_file_pages(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_8M, e = AREA + 2 * SZ_8M, g = AREA + 3 * SZ_8M;
	const unsigned long len = 4 * SZ_4K;
	struct folio *cache[4] = { 0 };
	struct file *file = NULL;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct vm_area_struct *vma;
	struct folio *copy;
	struct found f;
	unsigned long bad = 0;
	long dup;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, shmem_file_setup(len, &file), 0);
	CHECK_EQ(t, map_file(mm, a, len, MAP_SHARED, file), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, len), 0);
	thpt_write_pattern(mm, a, len, 6);
	for (int i = 0; i < 4; i++)
		cache[i] = thpt_folio_of(mm, a + i * SZ_4K);

	CHECK_EQ(t, remap(mm, a, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, b), b);
	KEXPECT_TRUE(t, range_gone(mm, a, len));
	for (int i = 0; i < 4; i++)
		bad += thpt_folio_of(mm, b + i * SZ_4K) != cache[i];
	KEXPECT_EQ(t, bad, 0);
	vma = find_vma(mm, b);
	CHECK(t, vma && vma->vm_start == b && vma->vm_file == file);
	KEXPECT_EQ(t, vma->vm_pgoff, 0);
	KEXPECT_FALSE(t, folio_test_anon(cache[1]));
	KEXPECT_EQ(t, folio_mapcount(cache[1]), 1);
	f = rmap_find(cache[1]);
	KEXPECT_EQ(t, f.ptes, 1);
	KEXPECT_EQ(t, f.lowest, b + SZ_4K);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, len, 6), 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* old_size 0: a second mapping of the same pages, wherever there is room. */
	dup = remap(mm, b, 0, len, MREMAP_MAYMOVE, 0);
	CHECK(t, dup > 0 && dup != (long)b);
	KEXPECT_EQ(t, find_vma(mm, b)->vm_end, b + len);	/* the first one stays */
	CHECK_EQ(t, thpt_fault_range(mm, dup, len), 0);
	for (int i = 0; i < 4; i++)
		bad += thpt_folio_of(mm, dup + i * SZ_4K) != cache[i];
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, folio_mapcount(cache[2]), 2);
	KEXPECT_EQ(t, rmap_find(cache[2]).ptes, 2);
	*thpt_byte_of(mm, dup + 2 * SZ_4K + 0x20) = 0x5a;
	KEXPECT_EQ(t, *thpt_byte_of(mm, b + 2 * SZ_4K + 0x20), 0x5a);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Not on a private mapping (Linux 6.12 refuses). */
	CHECK_EQ(t, thpt_map_anon(mm, g, SZ_4K), g);
	KEXPECT_EQ(t, remap(mm, g, 0, SZ_4K, MREMAP_MAYMOVE, 0), -EINVAL);

	/* A private file mapping: its page-cache page and its private copy both move. */
	CHECK_EQ(t, map_file(mm, e, len, MAP_PRIVATE, file), e);
	CHECK_EQ(t, fault(mm, e, false), 0);
	CHECK_EQ(t, fault(mm, e + SZ_4K, true), 0);
	copy = thpt_folio_of(mm, e + SZ_4K);
	CHECK(t, copy && folio_test_anon(copy));
	CHECK_EQ(t, remap(mm, e, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, g), g);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, g), cache[0]);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, g + SZ_4K), copy);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, g)));
	KEXPECT_EQ(t, folio_mapcount(cache[0]), 3);
	KEXPECT_EQ(t, rmap_find(copy).lowest, g + SZ_4K);
	KEXPECT_EQ(t, rmap_find(cache[0]).ptes, 3);
	KEXPECT_EQ(t, moved_mismatches(mm, g + SZ_4K, a + SZ_4K, SZ_4K, 6), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	if (file)
		fput(file);	/* the VMAs hold their own references */
	thpt_end(t, &c);
}

/* MREMAP_DONTUNMAP: the old range stays mapped and empty (anonymous: zeroes; a file: its pages). */
static void dontunmap_leaves_the_old_range_empty(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_8M, d = AREA + 2 * SZ_8M, e = AREA + 3 * SZ_8M;
	const unsigned long len = 16 * SZ_4K;
	struct file *file = NULL;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct vm_area_struct *vma;
	struct folio *moved, *fresh, *cached;
	int maps;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, len), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, len), 0);
	thpt_write_pattern(mm, a, len, 7);
	moved = thpt_folio_of(mm, a);
	maps = mm->map_count;

	/* Without MREMAP_FIXED, new_addr is a hint (free here: taken). */
	CHECK_EQ(t, remap(mm, a, len, len, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, b), b);
	KEXPECT_EQ(t, mm->map_count, maps + 1);
	vma = find_vma(mm, a);
	CHECK(t, vma && vma->vm_start == a && vma->vm_end == a + len);
	KEXPECT_TRUE(t, vma->anon_vma == NULL);		/* it maps nothing: its links went */
	for (unsigned long off = 0; off < len; off += SZ_4K)
		KEXPECT_EQ(t, thpt_entry_of(mm, a + off), 0);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, b), moved);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, len, 7), 0);
	KEXPECT_EQ(t, rss(mm), 16);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The old range faults like new memory: the zero page, then a fresh zeroed page. */
	CHECK_EQ(t, fault(mm, a, false), 0);
	KEXPECT_TRUE(t, is_zero_pfn(pte_pfn(thpt_entry_of(mm, a))));
	CHECK_EQ(t, fault(mm, a + SZ_4K, true), 0);
	fresh = thpt_folio_of(mm, a + SZ_4K);
	CHECK(t, fresh != NULL);
	KEXPECT_EQ(t, *thpt_byte_of(mm, a + SZ_4K + 0x10), 0);
	KEXPECT_PTR_NE(t, fresh->mapping, moved->mapping);	/* a new anon_vma */
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, len, 7), 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* A shared file mapping: the old range finds the file's pages again. */
	CHECK_EQ(t, shmem_file_setup(SZ_4K, &file), 0);
	CHECK_EQ(t, map_file(mm, d, SZ_4K, MAP_SHARED, file), d);
	CHECK_EQ(t, fault(mm, d, true), 0);
	cached = thpt_folio_of(mm, d);
	*thpt_byte_of(mm, d + 0x30) = 0x77;
	CHECK_EQ(t, remap(mm, d, SZ_4K, SZ_4K, MREMAP_MAYMOVE | MREMAP_DONTUNMAP | MREMAP_FIXED, e), e);
	KEXPECT_EQ(t, thpt_entry_of(mm, d), 0);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, e), cached);
	CHECK_EQ(t, fault(mm, d, false), 0);
	KEXPECT_PTR_EQ(t, thpt_folio_of(mm, d), cached);
	KEXPECT_EQ(t, *thpt_byte_of(mm, d + 0x30), 0x77);
	KEXPECT_EQ(t, folio_mapcount(cached), 2);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* Part of a VMA: it stays whole (and keeps its anon_vma). */
	maps = mm->map_count;
	CHECK_EQ(t, remap(mm, b + SZ_16K, SZ_16K, SZ_16K, MREMAP_MAYMOVE | MREMAP_DONTUNMAP,
			  e + SZ_2M), e + SZ_2M);
	KEXPECT_EQ(t, mm->map_count, maps + 1);
	vma = find_vma(mm, b);
	KEXPECT_TRUE(t, vma->vm_start == b && vma->vm_end == b + len && vma->anon_vma != NULL);
	KEXPECT_EQ(t, thpt_entry_of(mm, b + SZ_16K), 0);
	KEXPECT_EQ(t, moved_mismatches(mm, e + SZ_2M, a + SZ_16K, SZ_16K, 7), 0);
	KEXPECT_EQ(t, moved_mismatches(mm, b, a, SZ_16K, 7), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	if (file)
		fput(file);
	thpt_end(t, &c);
}

/* A fork after a move shares the moved pages copy-on-write; a move in the child after it too. */
static void fork_after_a_move(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_8M + SZ_4K, d = AREA + 2 * SZ_8M;
	const unsigned long len = 16 * SZ_4K;
	struct thp_ctx c;
	struct mm_struct *mm, *child;
	struct folio *folio;
	struct found f;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, len), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, len), 0);
	thpt_write_pattern(mm, a, len, 8);
	CHECK_EQ(t, remap(mm, a, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, b), b);
	child = thpt_fork_mm(&c, mm);
	CHECK(t, child != NULL);
	folio = thpt_folio_of(mm, b);
	KEXPECT_PTR_EQ(t, thpt_folio_of(child, b), folio);
	KEXPECT_EQ(t, folio_mapcount(folio), 2);
	KEXPECT_FALSE(t, pte_write(thpt_entry_of(mm, b)) || pte_write(thpt_entry_of(child, b)));
	f = rmap_find(folio);
	KEXPECT_EQ(t, f.ptes, 2);
	KEXPECT_EQ(t, f.nr_mms, 2);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The child's write copies; the parent keeps its bytes and its page. */
	CHECK_EQ(t, fault(child, b, true), 0);
	KEXPECT_PTR_NE(t, thpt_folio_of(child, b), folio);
	*thpt_byte_of(child, b + 0x10) = 0xee;
	KEXPECT_EQ(t, *thpt_byte_of(mm, b + 0x10), pattern(a, 8));
	KEXPECT_EQ(t, folio_mapcount(folio), 1);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The child moves its copy of the range; the shared pages are found in both places. */
	CHECK_EQ(t, remap(child, b, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, d), d);
	folio = thpt_folio_of(mm, b + 2 * SZ_4K);
	KEXPECT_PTR_EQ(t, thpt_folio_of(child, d + 2 * SZ_4K), folio);
	KEXPECT_EQ(t, folio_mapcount(folio), 2);
	f = rmap_find(folio);
	KEXPECT_EQ(t, f.ptes, 2);
	KEXPECT_EQ(t, f.nr_mms, 2);
	KEXPECT_EQ(t, *thpt_byte_of(child, d + 0x10), 0xee);
	KEXPECT_EQ(t, moved_mismatches(child, d + SZ_4K, a + SZ_4K, len - SZ_4K, 8), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* A write in the parent copies too, and the child still reads the old bytes. */
	CHECK_EQ(t, fault(mm, b + 2 * SZ_4K, true), 0);
	*thpt_byte_of(mm, b + 2 * SZ_4K + 0x10) = 0xdd;
	KEXPECT_EQ(t, *thpt_byte_of(child, d + 2 * SZ_4K + 0x10), pattern(a + 2 * SZ_4K, 8));
	KEXPECT_EQ(t, mm_verify(), 0);
	thpt_drop_mm(&c, child);
	KEXPECT_EQ(t, folio_mapcount(thpt_folio_of(mm, b + 3 * SZ_4K)), 1);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* The new VMA joins its neighbours where Linux's would: contiguous offsets, same anon_vma. */
static void merges_like_linux(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_8M, d = AREA + 2 * SZ_8M, e = AREA + 3 * SZ_8M;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct vm_area_struct *vma;
	int maps;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	/* Out and back: the middle page's offset matches its old neighbours again. */
	CHECK_EQ(t, thpt_map_anon(mm, a, 3 * SZ_4K), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, 3 * SZ_4K), 0);
	thpt_write_pattern(mm, a, 3 * SZ_4K, 9);
	maps = mm->map_count;
	CHECK_EQ(t, remap(mm, a + SZ_4K, SZ_4K, SZ_4K, MREMAP_MAYMOVE | MREMAP_FIXED, b), b);
	KEXPECT_EQ(t, mm->map_count, maps + 2);
	CHECK_EQ(t, remap(mm, b, SZ_4K, SZ_4K, MREMAP_MAYMOVE | MREMAP_FIXED, a + SZ_4K), a + SZ_4K);
	KEXPECT_EQ(t, mm->map_count, maps);
	vma = find_vma(mm, a);
	KEXPECT_TRUE(t, vma->vm_start == a && vma->vm_end == a + 3 * SZ_4K);
	KEXPECT_EQ(t, moved_mismatches(mm, a, a, 3 * SZ_4K, 9), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Next to a faulted VMA of another anon_vma, at another offset: no merge. */
	CHECK_EQ(t, thpt_map_anon(mm, d, SZ_4K), d);
	CHECK_EQ(t, fault(mm, d, true), 0);
	maps = mm->map_count;
	CHECK_EQ(t, remap(mm, a, SZ_4K, SZ_4K, MREMAP_MAYMOVE | MREMAP_FIXED, d + SZ_4K), d + SZ_4K);
	KEXPECT_EQ(t, mm->map_count, maps + 1);
	KEXPECT_EQ(t, find_vma(mm, d)->vm_end, d + SZ_4K);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Never faulted: the offset follows the new address, so it merges with its new neighbour. */
	CHECK_EQ(t, thpt_map_anon(mm, e, SZ_4K), e);
	CHECK_EQ(t, thpt_map_anon(mm, b, SZ_4K), b);
	maps = mm->map_count;
	CHECK_EQ(t, remap(mm, b, SZ_4K, SZ_4K, MREMAP_MAYMOVE | MREMAP_FIXED, e + SZ_4K), e + SZ_4K);
	KEXPECT_EQ(t, mm->map_count, maps - 1);
	vma = find_vma(mm, e);
	KEXPECT_TRUE(t, vma->vm_start == e && vma->vm_end == e + 2 * SZ_4K);
	/* Growing in place up to the next VMA joins it too. */
	CHECK_EQ(t, thpt_map_anon(mm, e + 4 * SZ_4K, SZ_4K), e + 4 * SZ_4K);
	maps = mm->map_count;
	CHECK_EQ(t, remap(mm, e, 2 * SZ_4K, 4 * SZ_4K, 0, 0), e);
	KEXPECT_EQ(t, mm->map_count, maps - 1);
	KEXPECT_EQ(t, find_vma(mm, e)->vm_end, e + 5 * SZ_4K);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* Linux 6.12's errno values, each leaving the mapping as it was. */
static void errors_are_linuxs(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_8M, len = 16 * SZ_4K;
	struct thp_ctx c;
	struct mm_struct *mm;
	int maps;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, len), a);
	CHECK_EQ(t, thpt_fault_range(mm, a, len), 0);
	thpt_write_pattern(mm, a, len, 10);
	maps = mm->map_count;
	KEXPECT_EQ(t, remap(mm, a, SZ_4K, SZ_4K, 8, 0), -EINVAL);			/* unknown flag */
	KEXPECT_EQ(t, remap(mm, a, SZ_4K, SZ_4K, MREMAP_FIXED, b), -EINVAL);		/* no MAYMOVE */
	KEXPECT_EQ(t, remap(mm, a, SZ_4K, SZ_4K, MREMAP_DONTUNMAP, b), -EINVAL);
	KEXPECT_EQ(t, remap(mm, a, SZ_4K, 2 * SZ_4K, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, b), -EINVAL);
	KEXPECT_EQ(t, remap(mm, a + 1, SZ_4K, SZ_4K, 0, 0), -EINVAL);			/* unaligned */
	KEXPECT_EQ(t, remap(mm, a, SZ_4K, 0, MREMAP_MAYMOVE, 0), -EINVAL);		/* new_size 0 */
	KEXPECT_EQ(t, remap(mm, a, SZ_4K, SZ_4K, MREMAP_MAYMOVE | MREMAP_FIXED, b + 1), -EINVAL);
	KEXPECT_EQ(t, remap(mm, a, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, a + SZ_32K), -EINVAL);
	KEXPECT_EQ(t, remap(mm, a, SZ_4K, 2 * SZ_4K, MREMAP_MAYMOVE | MREMAP_FIXED,
			    USER_TOP - SZ_4K), -EINVAL);				/* past the top */
	KEXPECT_EQ(t, remap(mm, b, SZ_4K, SZ_4K, 0, 0), -EFAULT);			/* not mapped */
	KEXPECT_EQ(t, remap(mm, a, 2 * len, 4 * len, MREMAP_MAYMOVE, 0), -EFAULT);	/* past the VMA */
	KEXPECT_EQ(t, remap(mm, a, SZ_4K, SZ_4K, MREMAP_MAYMOVE | MREMAP_FIXED, SZ_4K), -EPERM);
	CHECK_EQ(t, thpt_map_anon(mm, a + len, SZ_4K), a + len);
	KEXPECT_EQ(t, remap(mm, a, len, 2 * len, 0, 0), -ENOMEM);			/* no room */
	/* Across two VMAs: -EFAULT (with FIXED, after the target was unmapped, as on Linux). */
	CHECK_EQ(t, thpt_protect(mm, a + len, SZ_4K, PROT_READ), 0);
	KEXPECT_EQ(t, remap(mm, a, len + SZ_4K, len + SZ_4K, MREMAP_MAYMOVE | MREMAP_FIXED, b),
		   -EFAULT);
	KEXPECT_EQ(t, mm->map_count, maps + 1);
	KEXPECT_EQ(t, find_vma(mm, a)->vm_end, a + len);
	KEXPECT_EQ(t, moved_mismatches(mm, a, a, len, 10), 0);
	/* Same sizes, no flags: nothing to do, the address back. */
	KEXPECT_EQ(t, remap(mm, a, len, len, 0, 0), a);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- mincore and msync ---- */

static void mincore_reports_residency(struct ktest *t)
{
	const unsigned long a = AREA, p = AREA + SZ_8M, f = AREA + 2 * SZ_8M, m = AREA + 3 * SZ_8M;
	static const u8 want[8] = { 1, 1, 0, 1, 0, 0, 0, 0 };
	static u8 vec[HPAGE_PMD_NR + 1];
	struct file *file = NULL;
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long ones = 0;
	loff_t pos = SZ_4K;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	/* Written, the zero page, untouched, PROT_NONE (kept: resident), untouched... */
	CHECK_EQ(t, thpt_map_anon(mm, a, 8 * SZ_4K), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	CHECK_EQ(t, fault(mm, a + SZ_4K, false), 0);
	CHECK_EQ(t, fault(mm, a + 3 * SZ_4K, true), 0);
	CHECK_EQ(t, thpt_protect(mm, a + 3 * SZ_4K, SZ_4K, PROT_NONE), 0);
	memset(vec, 0xff, sizeof(vec));
	KEXPECT_EQ(t, mincore_all(mm, a, 8, vec), 0);
	KEXPECT_EQ(t, memcmp(vec, want, 8), 0);
	/* One call stops at the end of the VMA (here the PROT_NONE split: page 3 is its own). */
	KEXPECT_EQ(t, mincore(mm, a, 100, vec), 3);
	KEXPECT_EQ(t, mincore(mm, a + 4 * SZ_4K, 100, vec), 4);
	/* MADV_DONTNEED drops a page: not resident any more. */
	CHECK_EQ(t, thpt_advise(mm, a, SZ_4K, MADV_DONTNEED), 0);
	KEXPECT_EQ(t, mincore(mm, a, 1, vec), 1);
	KEXPECT_EQ(t, vec[0], 0);
	/* Nothing mapped at the start, or a hole on the way: -ENOMEM. */
	KEXPECT_EQ(t, mincore(mm, AREA + 5 * SZ_8M, 1, vec), -ENOMEM);
	KEXPECT_EQ(t, mincore_all(mm, a, 9, vec), -ENOMEM);

	/* A PMD mapping: every page. */
	CHECK_MAP_PMD(t, mm, p);
	KEXPECT_EQ(t, mincore(mm, p, HPAGE_PMD_NR, vec), HPAGE_PMD_NR);
	for (unsigned long i = 0; i < HPAGE_PMD_NR; i++)
		ones += vec[i] == 1;
	KEXPECT_EQ(t, ones, HPAGE_PMD_NR);

	/* A file: a page in the cache counts though nothing maps it, in shared and private VMAs. */
	CHECK_EQ(t, shmem_file_setup(4 * SZ_4K, &file), 0);
	CHECK_EQ(t, vfs_write(file, "x", 1, &pos), 1);		/* page 1 into the cache */
	CHECK_EQ(t, map_file(mm, f, 4 * SZ_4K, MAP_SHARED, file), f);
	CHECK_EQ(t, map_file(mm, f + SZ_2M, 4 * SZ_4K, MAP_PRIVATE, file), f + SZ_2M);
	KEXPECT_EQ(t, mincore(mm, f, 4, vec), 4);
	KEXPECT_TRUE(t, !vec[0] && vec[1] == 1 && !vec[2] && !vec[3]);
	KEXPECT_EQ(t, mincore(mm, f + SZ_2M, 4, vec), 4);
	KEXPECT_TRUE(t, !vec[0] && vec[1] == 1 && !vec[2] && !vec[3]);
	CHECK_EQ(t, fault(mm, f + 2 * SZ_4K, true), 0);		/* page 2 made by the fault */
	KEXPECT_EQ(t, mincore(mm, f + SZ_2M, 4, vec), 4);
	KEXPECT_TRUE(t, !vec[0] && vec[1] == 1 && vec[2] == 1 && !vec[3]);

	/* After a move the pages are resident at the new address. */
	CHECK_EQ(t, remap(mm, p, SZ_2M, SZ_2M, MREMAP_MAYMOVE | MREMAP_FIXED, m), m);
	KEXPECT_EQ(t, mincore(mm, p, 1, vec), -ENOMEM);
	KEXPECT_EQ(t, mincore(mm, m + SZ_1M, 1, vec), 1);
	KEXPECT_EQ(t, vec[0], 1);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	if (file)
		fput(file);
	thpt_end(t, &c);
}

static void msync_checks_like_linux(struct ktest *t)
{
	const unsigned long a = AREA, len = 4 * SZ_4K;
	struct thp_ctx c;
	struct mm_struct *mm;

	thpt_begin(t, &c);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, a, len), a);
	CHECK_EQ(t, thpt_map_anon(mm, a + 2 * len, len), a + 2 * len);	/* a hole between */
	KEXPECT_EQ(t, do_msync(mm, a, len, MS_SYNC), 0);
	KEXPECT_EQ(t, do_msync(mm, a, len, MS_ASYNC), 0);
	KEXPECT_EQ(t, do_msync(mm, a, len - 1, MS_INVALIDATE), 0);
	KEXPECT_EQ(t, do_msync(mm, a, len, MS_ASYNC | MS_INVALIDATE), 0);
	KEXPECT_EQ(t, do_msync(mm, a, len, 0), 0);
	KEXPECT_EQ(t, do_msync(mm, a, len, 8), -EINVAL);
	KEXPECT_EQ(t, do_msync(mm, a, len, MS_ASYNC | MS_SYNC), -EINVAL);
	KEXPECT_EQ(t, do_msync(mm, a + 1, len, MS_SYNC), -EINVAL);
	/* A hole: -ENOMEM, whatever comes after it. */
	KEXPECT_EQ(t, do_msync(mm, a, 3 * len, MS_SYNC), -ENOMEM);
	KEXPECT_EQ(t, do_msync(mm, a, 3 * len, MS_ASYNC), -ENOMEM);
	KEXPECT_EQ(t, do_msync(mm, a + len, len, MS_SYNC), -ENOMEM);
	KEXPECT_EQ(t, do_msync(mm, AREA + SZ_8M, len, MS_SYNC), -ENOMEM);
	/* Nothing to do for length 0, even unmapped; a wrapping range is -ENOMEM. */
	KEXPECT_EQ(t, do_msync(mm, AREA + SZ_8M, 0, MS_SYNC), 0);
	KEXPECT_EQ(t, do_msync(mm, a, -2 * SZ_4K, MS_SYNC), -ENOMEM);
out:
	thpt_end(t, &c);
}

KTEST_SUITE(mremap,
	    KTEST_CASE(moves_small_pages),
	    KTEST_CASE(moves_large_folios),
	    KTEST_CASE(aligned_move_keeps_the_pmd),
	    KTEST_CASE(unaligned_move_splits_the_pmd),
	    KTEST_CASE(moves_file_pages),
	    KTEST_CASE(dontunmap_leaves_the_old_range_empty),
	    KTEST_CASE(fork_after_a_move),
	    KTEST_CASE(merges_like_linux),
	    KTEST_CASE(errors_are_linuxs),
	    KTEST_CASE(mincore_reports_residency),
	    KTEST_CASE(msync_checks_like_linux));
