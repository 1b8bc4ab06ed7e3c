/*
 * rmap benchmark: the operations of the rmap overhaul's measurements
 * (docs/bench.md, "rmap"), on RMAP_BENCH_MIB of anonymous memory built from
 * the kernel (mm_alloc, do_mmap, handle_mm_fault), for four layouts:
 *
 *   4K/pte    order-0 folios (MADV_NOHUGEPAGE, every mTHP size off);
 *   64K/pte   order-4 folios mapped by runs of 16 PTEs;
 *   2M/pte    2 MiB folios, faulted PMD-mapped, then split_huge_pmd'd;
 *   2M/pmd    2 MiB folios mapped by one PMD each.
 *
 * and five operations, each timed on its own freshly populated mm:
 *
 *   munmap     do_munmap of the whole range;
 *   fork       dup_mm of the mm (the child's mmput is not timed);
 *   cow        after an untimed dup_mm, a write fault (handle_mm_fault,
 *              FAULT_FLAG_WRITE) on every page of the parent;
 *   dontneed   MADV_DONTNEED of every 4 KiB page, one call each: the zap
 *              (unmap_region of the page) under mmap_lock for reading, as
 *              Linux's MADV_DONTNEED does, without do_madvise's VMA split;
 *   pte-remap  split_huge_pmd on every 2 MiB block (2M/pmd only).
 *
 * Each runs twice side by side: "per-page" (rmap_batching off: every PTE
 * takes the per-page rmap call) and "batched" (on: runs of PTEs of one
 * folio take one _ptes call). Metrics, per case:
 *
 *   time                ms for the whole range (median of RMAP_BENCH_REPS)
 *   ns_per_page         the same per 4 KiB page
 *   tsc_ticks_per_page  kernel only: guest instructions under -icount shift=0
 *   rmap_calls, ptl_acquire, tlb_flushes, rmap_walk_steps
 *                       mm_cost[] deltas over the timed operation: counts
 *                       that do not depend on time (include/quire/rmap.h)
 *
 * Rows: benchmark "rmap", case "OP/MAP" (munmap/pte, pte-remap/pmd, ...),
 * folio_size the folio's size, mode "per-page" or "batched".
 *
 * Before timing, the layout is checked (every page's folio order and PMD
 * or PTE mapping, the mTHP fault counters); after each case, the outcome
 * (rss, mappings) and mm_verify(). Any surprise fails the benchmark.
 * Every (layout, operation) first runs untimed on 4 MiB in both modes, and
 * the benchmark starts by touching all free memory of its node: both keep
 * one-time costs (TCG translation, first touch of guest memory) out of
 * whichever mode happens to run first.
 *
 * The file builds into the kernel and, included by tests/host/bench_rmap.c,
 * into the host benchmark.
 */
#include <quire/kbench.h>
#include <quire/kernel.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/time.h>
#include <quire/errno.h>
#include "bench_mm.h"

/*
 * 64 MiB in the kernel: in a DEBUG_MM build, MADV_DONTNEED page by page
 * costs about 300,000 instructions a page (docs/bench.md), and 256 MiB
 * would keep the -icount run alone busy for over 7 minutes. The host
 * program measures 256 MiB, the size of the reference's measurements.
 */
#ifndef RMAP_BENCH_MIB
#define RMAP_BENCH_MIB	256UL
#endif
#ifndef RMAP_BENCH_REPS
#define RMAP_BENCH_REPS	1
#endif
#define RB_MAX_REPS	15
#define RB_WARMUP_LEN	(2 * PMD_SIZE)
#define BM_BASE		0x100000000UL	/* 4 GiB: 2 MiB aligned, far from anything */

/* The host program may change these before kbench_run. */
static unsigned long rb_mib = RMAP_BENCH_MIB;
static unsigned int rb_reps = RMAP_BENCH_REPS;

#define rb_err(fmt, ...) pr_err("bench: rmap: " fmt, ##__VA_ARGS__)

enum rb_op { RB_MUNMAP, RB_FORK, RB_COW, RB_DONTNEED, RB_PTE_REMAP, RB_NR_OPS };
static const char *const rb_op_name[RB_NR_OPS] = {
	"munmap", "fork", "cow", "dontneed", "pte-remap",
};

static const struct bm_layout bm_layouts[] = {
	{ "pte", 0, false },
	{ "pte", 4, false },
	{ "pte", HPAGE_PMD_ORDER, false },
	{ "pmd", HPAGE_PMD_ORDER, true },
};

/* Mode 0 first: scripts/bench.py's ratio is batched over per-page. */
static const char *const rb_mode_name[2] = { "per-page", "batched" };

struct rb_sample {
	u64 ns, ticks;
	long cost[NR_MM_COST_ITEMS];
};

/* After the timed operation: did it do what it should? */
static int rb_check_result(enum rb_op op, struct mm_struct *mm, struct mm_struct *child,
			   unsigned long len)
{
	unsigned long pages = len / PAGE_SIZE;
	long rss = atomic_long_read(&mm->rss);

	switch (op) {
	case RB_MUNMAP:
		if (rss || find_vma(mm, BM_BASE))
			goto bad;
		return 0;
	case RB_DONTNEED:
		if (rss)
			goto bad;
		return 0;
	case RB_FORK:
		if (!child || (unsigned long)atomic_long_read(&child->rss) != pages)
			goto bad;
		return 0;
	case RB_COW:
		/* Every parent page is a writable order-0 copy of the child's. */
		for (unsigned long a = BM_BASE; a < BM_BASE + len; a += PAGE_SIZE) {
			bool by_pmd, w, cby_pmd, cw;
			struct folio *f = bm_folio_at(mm, a, &by_pmd, &w);
			struct folio *cf = bm_folio_at(child, a, &cby_pmd, &cw);

			if (!f || !cf || f == cf || by_pmd || !w || folio_order(f)) {
				rb_err("cow at %#lx: parent folio %p%s%s, child's %p\n", a, f,
				       by_pmd ? " by PMD" : "", w ? "" : " read-only", cf);
				return -EIO;
			}
		}
		if ((unsigned long)rss != pages)
			goto bad;
		return 0;
	case RB_PTE_REMAP:
		for (unsigned long a = BM_BASE; a < BM_BASE + len; a += PMD_SIZE) {
			pte_t *pmd = pmd_lookup(mm->pgd, a, false);

			if (!pmd || pmd_leaf(*pmd)) {
				rb_err("pte-remap: %#lx still PMD-mapped\n", a);
				return -EIO;
			}
		}
		if ((unsigned long)rss != pages)
			goto bad;
		return 0;
	default:
		return -EINVAL;
	}
bad:
	rb_err("%s: rss %ld (child %ld) afterwards\n", rb_op_name[op], rss,
	       child ? atomic_long_read(&child->rss) : -1L);
	return -EIO;
}

/* One timed run of op on a fresh mm of layout l. verify: mm_verify() afterwards. */
static int rb_run_once(const struct bm_layout *l, enum rb_op op, unsigned long len,
		       bool verify, struct rb_sample *s)
{
	struct mm_struct *mm, *child = NULL;
	long before[NR_MM_COST_ITEMS], after[NR_MM_COST_ITEMS];
	u64 t0, c0;
	int err = 0;

	mm = bm_populate(l, len, &err);
	if (!mm)
		return err;
	if (op == RB_COW) {
		child = dup_mm(mm);
		if (!child) {
			err = -ENOMEM;
			goto out;
		}
	}

	bm_cost_read(before);
	t0 = ktime_get_ns();
	c0 = kbench_cycles();
	switch (op) {
	case RB_MUNMAP:
		down_write(&mm->mmap_lock);
		err = do_munmap(mm, BM_BASE, len);
		up_write(&mm->mmap_lock);
		break;
	case RB_FORK:
		child = dup_mm(mm);
		if (!child)
			err = -ENOMEM;
		break;
	case RB_COW:
		for (unsigned long a = BM_BASE; a < BM_BASE + len && !err; a += PAGE_SIZE)
			err = handle_mm_fault(mm, a, FAULT_FLAG_WRITE);
		break;
	case RB_DONTNEED:
		/*
		 * What MADV_DONTNEED does on Linux (zap_page_range_single): zap
		 * the page, the VMA untouched. do_madvise would split the VMA at
		 * both ends of every call (docs/bench.md).
		 */
		for (unsigned long a = BM_BASE; a < BM_BASE + len; a += PAGE_SIZE) {
			down_read(&mm->mmap_lock);
			unmap_region(find_vma(mm, a), a, a + PAGE_SIZE);
			up_read(&mm->mmap_lock);
		}
		break;
	case RB_PTE_REMAP:
		down_read(&mm->mmap_lock);
		for (unsigned long a = BM_BASE; a < BM_BASE + len; a += PMD_SIZE)
			split_huge_pmd(find_vma(mm, a), a);
		up_read(&mm->mmap_lock);
		break;
	default:
		err = -EINVAL;
	}
	s->ticks = kbench_cycles() - c0;
	s->ns = ktime_get_ns() - t0;
	bm_cost_read(after);
	for (int i = 0; i < NR_MM_COST_ITEMS; i++)
		s->cost[i] = after[i] - before[i];

	if (err) {
		rb_err("%s %s order %u: error %d\n", rb_op_name[op], l->map, l->order, err);
		goto out;
	}
	err = rb_check_result(op, mm, child, len);
	if (!err && verify) {
		int problems = mm_verify();

		if (problems) {
			rb_err("%s %s order %u (%s): mm_verify found %d problem(s)\n",
			       rb_op_name[op], l->map, l->order, rb_mode_name[rmap_batching], problems);
			err = -EIO;
		}
	}
out:
	if (child)
		mmput(child);
	mmput(mm);
	return err;
}

static void rb_report(const struct bm_layout *l, enum rb_op op, int mode, const char *metric,
		      u64 milli, const char *unit)
{
	char bcase[32];

	snprintf(bcase, sizeof(bcase), "%s/%s", rb_op_name[op], l->map);
	kbench_report("rmap", bcase, PAGE_SIZE << l->order, rb_mode_name[mode], metric, milli,
		      unit);
}

static const char *const rb_cost_unit[NR_MM_COST_ITEMS] = {
	[MM_COST_RMAP_CALLS] = "calls",
	[MM_COST_PTL_ACQUIRE] = "locks",
	[MM_COST_TLB_FLUSHES] = "flushes",
	[MM_COST_RMAP_WALK_STEPS] = "steps",
};

/* Both modes of one (layout, operation), repetitions interleaved. */
static int rb_measure(const struct bm_layout *l, enum rb_op op, unsigned long len)
{
	u64 ns[2][RB_MAX_REPS], ticks[2][RB_MAX_REPS];
	struct rb_sample first[2];
	unsigned int reps = rb_reps < 1 ? 1 : rb_reps > RB_MAX_REPS ? RB_MAX_REPS : rb_reps;
	unsigned long pages = len / PAGE_SIZE;

	/*
	 * A small untimed run of both modes first: under TCG, the first run
	 * of a code path pays for translating it (several times the cost of
	 * the path itself), which would land on whichever mode runs first.
	 */
	for (int mode = 0; mode < 2; mode++) {
		struct rb_sample s;
		int err;

		rmap_batching = mode;
		err = rb_run_once(l, op, min(len, RB_WARMUP_LEN), false, &s);
		if (err)
			return err;
	}
	for (unsigned int r = 0; r < reps; r++) {
		for (int mode = 0; mode < 2; mode++) {
			struct rb_sample s;
			int err;

			rmap_batching = mode;
			err = rb_run_once(l, op, len, r == 0, &s);
			if (err)
				return err;
			ns[mode][r] = s.ns;
			ticks[mode][r] = s.ticks;
			if (r == 0)
				first[mode] = s;
			else if (memcmp(s.cost, first[mode].cost, sizeof(s.cost)))
				pr_warn("bench: rmap: %s %s order %u (%s): counts differ between runs\n",
					rb_op_name[op], l->map, l->order, rb_mode_name[mode]);
		}
	}
	for (int mode = 0; mode < 2; mode++) {
		u64 med = kbench_median(ns[mode], reps);

		rb_report(l, op, mode, "time", med / 1000, "ms");
		rb_report(l, op, mode, "ns_per_page", kbench_div_milli(med, pages), "ns");
		if (kbench_have_cycles)
			rb_report(l, op, mode, "tsc_ticks_per_page",
				  kbench_div_milli(kbench_median(ticks[mode], reps), pages), "ticks");
		for (int i = 0; i < NR_MM_COST_ITEMS; i++)
			rb_report(l, op, mode, mm_cost_names[i], (u64)first[mode].cost[i] * 1000,
				  rb_cost_unit[i]);
	}
	return 0;
}

static int bench_rmap(void)
{
	unsigned long len = rb_mib << 20;
	bool saved_batching = rmap_batching, saved_debug = debug_pagealloc;
	struct bm_thp saved_thp;
	int err = 0;

	if (!len || len % PMD_SIZE) {
		rb_err("%lu MiB is not a whole number of 2 MiB blocks\n", rb_mib);
		return -EINVAL;
	}
	printk(KERN_RAW "bench: rmap: %lu MiB at %#lx, node %d, median of %u\n", rb_mib, BM_BASE,
	       numa_node_id(), rb_reps);
	bm_thp_save(&saved_thp);
	/* Poisoning every freed page would be most of what munmap measures. */
	debug_pagealloc = false;
	bm_touch_node(numa_mem_id_of(numa_node_id()));
	for (unsigned int i = 0; i < ARRAY_SIZE(bm_layouts) && !err; i++) {
		for (int op = 0; op < RB_NR_OPS && !err; op++) {
			if (op == RB_PTE_REMAP && !bm_layouts[i].pmd)
				continue;	/* nothing PMD-mapped to remap: n/a */
			err = rb_measure(&bm_layouts[i], op, len);
		}
	}
	debug_pagealloc = saved_debug;
	rmap_batching = saved_batching;
	bm_thp_restore(&saved_thp);
	return err;
}
KBENCH(rmap, bench_rmap,
       "munmap, fork, COW, MADV_DONTNEED, PTE-remap of anonymous memory, rmap batching on vs off");
