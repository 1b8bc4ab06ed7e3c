/*
 * What the mm benchmarks share (tests/kernel/bench_rmap.c,
 * bench_migrate.c, bench_copy_mc.c): anonymous memory built from the
 * kernel (mm_alloc, do_mmap, handle_mm_fault) in a given folio layout and
 * checked, the THP controls saved and set to give exactly one order, the
 * mm_cost counters, isolating it all for migrate_pages, and touching a
 * node's free memory before timing. Static inline functions in a header
 * (not every benchmark uses each), so that each benchmark's host program
 * (which includes the benchmark's .c) gets them too.
 */
#ifndef TESTS_BENCH_MM_H
#define TESTS_BENCH_MM_H

#include <quire/kbench.h>
#include <quire/kernel.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/migrate.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/errno.h>

#define BM_BASE		0x100000000UL	/* 4 GiB: 2 MiB aligned, far from anything */
#define bm_err(fmt, ...) pr_err("bench: " fmt, ##__VA_ARGS__)

struct bm_layout {
	const char *map;	/* "pte" or "pmd": how the folios end up mapped */
	unsigned int order;	/* folio order */
	bool pmd;		/* mapped by PMDs (else PTEs) */
};

struct bm_thp {
	enum thp_mode global;
	enum thp_mode order[HPAGE_PMD_ORDER + 1];
};

static inline void bm_thp_save(struct bm_thp *s)
{
	s->global = thp_global_mode();
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		s->order[o] = thp_order_mode(o);
}

static inline void bm_thp_restore(const struct bm_thp *s)
{
	thp_set_global_mode(s->global);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, s->order[o]);
}

/* Allow exactly one folio order for anonymous faults (0: none but order 0). */
static inline void bm_thp_only(unsigned int order)
{
	thp_set_global_mode(THP_ALWAYS);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		enum thp_mode m = THP_NEVER;

		if (o == order)
			m = o == HPAGE_PMD_ORDER ? THP_INHERIT : THP_ALWAYS;
		thp_set_order_mode(o, m);
	}
}

static inline void bm_cost_read(long *v)
{
	for (int i = 0; i < NR_MM_COST_ITEMS; i++)
		v[i] = atomic_long_read(&mm_cost[i]);
}

/* The folio mapped at addr and whether by a PMD; NULL when nothing is. */
static inline struct folio *bm_folio_at(struct mm_struct *mm, unsigned long addr,
					bool *by_pmd, bool *writable)
{
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte;

	*by_pmd = false;
	*writable = false;
	if (!pmd || !*pmd)
		return NULL;
	if (pmd_leaf(*pmd)) {
		*by_pmd = true;
		*writable = pte_write(*pmd);
		return page_folio(pfn_to_page(pmd_pfn(*pmd) + ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT)));
	}
	pte = pte_lookup(mm->pgd, addr, false);
	if (!pte || !pte_present(*pte))
		return NULL;
	*writable = pte_write(*pte);
	return page_folio(pfn_to_page(pte_pfn(*pte)));
}

/* Is every page of [BM_BASE, +len) mapped the way the layout says? */
static inline int bm_check_layout(struct mm_struct *mm, const struct bm_layout *l,
				  unsigned long len)
{
	for (unsigned long a = BM_BASE; a < BM_BASE + len; a += PAGE_SIZE) {
		bool by_pmd, w;
		struct folio *f = bm_folio_at(mm, a, &by_pmd, &w);

		if (!f || folio_order(f) != l->order || by_pmd != l->pmd || !w) {
			bm_err("%s at %#lx: %s folio of order %d, %s, %s; want order %u by %s\n",
			       l->map, a, f ? "a" : "no", f ? (int)folio_order(f) : -1,
			       by_pmd ? "PMD" : "PTE", w ? "writable" : "read-only", l->order,
			       l->pmd ? "PMD" : "PTE");
			return -EIO;
		}
	}
	return 0;
}

/* A new mm with [BM_BASE, +len) mapped anonymous and populated in layout l. */
static inline struct mm_struct *bm_populate(const struct bm_layout *l, unsigned long len,
					    int *errp)
{
	unsigned long step = PAGE_SIZE << l->order, nr = len / step;
	unsigned long alloc[HPAGE_PMD_ORDER + 1], splits = thp_event_read(THP_SPLIT_PMD);
	struct mm_struct *mm = mm_alloc();
	long ret;
	int err = 0;

	if (!mm) {
		*errp = -ENOMEM;
		return NULL;
	}
	bm_thp_only(l->order);
	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, BM_BASE, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	if (ret == (long)BM_BASE && l->order == 0)
		ret = do_madvise(mm, BM_BASE, len, MADV_NOHUGEPAGE) ?: (long)BM_BASE;
	up_write(&mm->mmap_lock);
	if (ret != (long)BM_BASE) {
		bm_err("do_mmap/do_madvise: %ld\n", ret);
		err = ret < 0 ? (int)ret : -EIO;
		goto fail;
	}
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		alloc[o] = mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC);
	/* One fault per folio: a fallback to smaller folios leaves holes, found below. */
	for (unsigned long a = BM_BASE; a < BM_BASE + len && !err; a += step)
		err = handle_mm_fault(mm, a, FAULT_FLAG_WRITE);
	if (err) {
		bm_err("populating %s order %u: fault error %d\n", l->map, l->order, err);
		goto fail;
	}
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		unsigned long got = mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC) - alloc[o];
		unsigned long want = o == l->order ? nr : 0;

		if (got != want) {
			bm_err("populating order %u: %lu order-%u folios faulted, want %lu\n",
			       l->order, got, o, want);
			err = -EIO;
		}
	}
	if ((unsigned long)atomic_long_read(&mm->rss) != len / PAGE_SIZE) {
		bm_err("populating order %u: rss %ld, want %lu\n", l->order,
		       atomic_long_read(&mm->rss), len / PAGE_SIZE);
		err = -EIO;
	}
	if (!err && l->order == HPAGE_PMD_ORDER && !l->pmd) {
		down_read(&mm->mmap_lock);
		for (unsigned long a = BM_BASE; a < BM_BASE + len; a += PMD_SIZE)
			split_huge_pmd(find_vma(mm, a), a);
		up_read(&mm->mmap_lock);
		if (thp_event_read(THP_SPLIT_PMD) - splits != nr) {
			bm_err("split_huge_pmd: %lu PMDs split, want %lu\n",
			       thp_event_read(THP_SPLIT_PMD) - splits, nr);
			err = -EIO;
		}
	}
	if (!err)
		err = bm_check_layout(mm, l, len);
	if (!err)
		return mm;
fail:
	mmput(mm);
	*errp = err;
	return NULL;
}

/*
 * Write one byte to every free page of the node, then free it all again.
 * Under QEMU, the first write to a guest frame costs a host page fault
 * (on the host, the arena's first touch does): without this, whichever
 * run first gets memory nothing has used since boot pays for it, several
 * times the cost of fork of a PMD-mapped range. It also checks (and so
 * clears) the poison of pages freed with debug_pagealloc on, which the
 * timed runs would otherwise meet at random.
 */
/* Isolate every folio of [BM_BASE, +len) onto list (for migrate_pages): how many. */
static inline unsigned long bm_isolate_all(struct mm_struct *mm, unsigned long len,
					    struct list_head *list)
{
	unsigned long n = 0;

	down_read(&mm->mmap_lock);
	for (unsigned long a = BM_BASE; a < BM_BASE + len;) {
		bool by_pmd, w;
		struct folio *f = bm_folio_at(mm, a, &by_pmd, &w);

		if (!f)
			break;
		n += isolate_folio_to_list(f, list);
		a = ALIGN_DOWN(a, folio_size(f)) + folio_size(f);
	}
	up_read(&mm->mmap_lock);
	return n;
}

static inline void bm_touch_node(int nid)
{
	const gfp_t gfp = GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN;
	void *chain = NULL;
	unsigned long pages = 0;

	for (int order = MAX_PAGE_ORDER; order >= 0; order--) {
		struct page *page;

		while ((page = alloc_pages_node(nid, gfp, (unsigned int)order))) {
			char *p = page_address(page);

			for (unsigned long i = 1; i < (1UL << order); i++)
				p[i * PAGE_SIZE] = 0;
			*(void **)p = chain;	/* the chain of blocks, in the blocks */
			*(unsigned long *)(p + sizeof(void *)) = (unsigned long)order;
			chain = p;
			pages += 1UL << order;
		}
	}
	while (chain) {
		char *p = chain;

		chain = *(void **)p;
		__free_pages(virt_to_page(p), (unsigned int)*(unsigned long *)(p + sizeof(void *)));
	}
	printk(KERN_RAW "bench: touched %lu free pages of node %d\n", pages, nid);
}

#endif
