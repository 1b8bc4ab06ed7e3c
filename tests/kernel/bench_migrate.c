/*
 * migrate benchmark (reference series 1, docs/bench.md "migrate"): moving
 * MIGRATE_BENCH_MIB of anonymous memory built from the kernel from node 0
 * to node 1 (DRAM) and to node 2 (the slow, CPU-less tier), for the folio
 * layouts
 *
 *   4K, 16K, 64K, 256K, 1M, 2M PTE-mapped, and 2M PMD-mapped,
 *
 * each with migrate_batching on ("batched": a run of PTEs of one folio is
 * unmapped and restored in one step) and off ("per-page"), side by side.
 * The timed part is what move_pages does after reading its arguments:
 * every folio of the range isolated (a page-table walk) and
 * migrate_pages() to the target node (__GFP_THISNODE).
 *
 * Metrics, per (layout, target, mode):
 *   throughput          GB/s (bytes moved per ns of wall time)
 *   tsc_ticks_per_page  kernel only: guest instructions under -icount shift=0
 *   rmap_calls, ptl_acquire, tlb_flushes, rmap_walk_steps
 *                       mm_cost[] deltas per folio (counts that do not depend on time)
 *   ipis                kernel only: IPIs sent per folio (0 here: the mm the
 *                       benchmark builds runs on no CPU)
 * Rows: benchmark "migrate", case "node1" or "node2", folio_size the
 * folio's size, and "-pmd" on the case for the PMD-mapped layout.
 *
 * After each run every page must be on the target node with its folio
 * order and its mapping kept (a PMD-mapped THP comes back PMD-mapped,
 * through a PMD migration entry: docs/mm/migrate.md), rss unchanged, and
 * mm_verify() clean on the first run of each case.
 * Any surprise fails the benchmark.
 */
#include <quire/migrate.h>
#include <quire/time.h>
#include <quire/string.h>
#include "bench_mm.h"
#ifndef QUIRE_HOST
#include <quire/smp.h>
#endif

/* 32 MiB in the kernel (a DEBUG_MM build under -icount); the host program moves more. */
#ifndef MIGRATE_BENCH_MIB
#define MIGRATE_BENCH_MIB	32UL
#endif

static unsigned long mb_mib = MIGRATE_BENCH_MIB;

static const struct bm_layout mb_layouts[] = {
	{ "pte", 0, false },
	{ "pte", 2, false },
	{ "pte", 4, false },
	{ "pte", 6, false },
	{ "pte", 8, false },
	{ "pte", HPAGE_PMD_ORDER, false },
	{ "pmd", HPAGE_PMD_ORDER, true },
};

static const char *const mb_mode_name[2] = { "per-page", "batched" };

struct mb_sample {
	u64 ns, ticks;
	long cost[NR_MM_COST_ITEMS];
	long ipis;
};

static long mb_ipis(void)
{
#ifndef QUIRE_HOST
	return atomic_long_read(&tlb_stats.ipis_sent);
#else
	return 0;
#endif
}

/* Every page on nid, in a folio of the layout's order, mapped as it was; rss as populated. */
static int mb_check_result(struct mm_struct *mm, const struct bm_layout *l, unsigned long len,
			   int nid)
{
	for (unsigned long a = BM_BASE; a < BM_BASE + len; a += PAGE_SIZE) {
		bool by_pmd, w;
		struct folio *f = bm_folio_at(mm, a, &by_pmd, &w);

		if (!f || folio_nid(f) != nid || folio_order(f) != l->order || !w ||
		    by_pmd != l->pmd) {
			bm_err("migrate: %s order %u at %#lx: %s on node %d, order %d, by %s; want "
			       "node %d\n", l->map, l->order, a, f ? "folio" : "nothing",
			       f ? folio_nid(f) : -1, f ? (int)folio_order(f) : -1,
			       by_pmd ? "PMD" : "PTE", nid);
			return -EIO;
		}
	}
	if ((unsigned long)atomic_long_read(&mm->rss) != len / PAGE_SIZE) {
		bm_err("migrate: rss %ld afterwards\n", atomic_long_read(&mm->rss));
		return -EIO;
	}
	return 0;
}

static int mb_run_once(const struct bm_layout *l, int nid, unsigned long len, bool verify,
		       struct mb_sample *s)
{
	struct migration_target_control mtc = { .nid = nid, .gfp_mask = __GFP_THISNODE };
	long before[NR_MM_COST_ITEMS], after[NR_MM_COST_ITEMS], ipis;
	unsigned long folios;
	struct mm_struct *mm;
	LIST_HEAD(list);
	int err = 0, failed;
	u64 t0, c0;

	mm = bm_populate(l, len, &err);
	if (!mm)
		return err;
	bm_cost_read(before);
	ipis = mb_ipis();
	t0 = ktime_get_ns();
	c0 = kbench_cycles();
	folios = bm_isolate_all(mm, len, &list);
	failed = migrate_pages(&list, alloc_migration_target, NULL, (unsigned long)&mtc,
			       MIGRATE_SYNC, MR_SYSCALL, NULL);
	s->ticks = kbench_cycles() - c0;
	s->ns = ktime_get_ns() - t0;
	s->ipis = mb_ipis() - ipis;
	bm_cost_read(after);
	putback_movable_pages(&list);
	for (int i = 0; i < NR_MM_COST_ITEMS; i++)
		s->cost[i] = (after[i] - before[i]) / (long)(folios ? folios : 1);
	if (folios != len / (PAGE_SIZE << l->order) || failed) {
		bm_err("migrate: %s order %u to node %d: %lu folios isolated, %d not moved\n",
		       l->map, l->order, nid, folios, failed);
		err = -EIO;
	}
	if (!err)
		err = mb_check_result(mm, l, len, nid);
	if (!err && verify && mm_verify()) {
		bm_err("migrate: %s order %u (%s): mm_verify found problems\n", l->map, l->order,
		       mb_mode_name[migrate_batching]);
		err = -EIO;
	}
	mmput(mm);
	return err;
}

static void mb_report(const struct bm_layout *l, int nid, int mode, const char *metric,
		      u64 milli, const char *unit)
{
	char bcase[16];

	snprintf(bcase, sizeof(bcase), "node%d%s", nid, l->pmd ? "-pmd" : "");
	kbench_report("migrate", bcase, PAGE_SIZE << l->order, mb_mode_name[mode], metric, milli,
		      unit);
}

static const char *const mb_cost_unit[NR_MM_COST_ITEMS] = {
	[MM_COST_RMAP_CALLS] = "calls/folio",
	[MM_COST_PTL_ACQUIRE] = "locks/folio",
	[MM_COST_TLB_FLUSHES] = "flushes/folio",
	[MM_COST_RMAP_WALK_STEPS] = "steps/folio",
};

static int mb_measure(const struct bm_layout *l, int nid, unsigned long len)
{
	struct mb_sample s[2];

	/* Untimed small runs first: TCG translates each path once, whichever mode runs first. */
	for (int mode = 0; mode < 2; mode++) {
		int err;

		migrate_batching = mode;
		err = mb_run_once(l, nid, PMD_SIZE, false, &s[mode]);
		if (err)
			return err;
	}
	for (int mode = 0; mode < 2; mode++) {
		int err;

		migrate_batching = mode;
		err = mb_run_once(l, nid, len, true, &s[mode]);
		if (err)
			return err;
	}
	for (int mode = 0; mode < 2; mode++) {
		mb_report(l, nid, mode, "throughput", kbench_div_milli(len, s[mode].ns), "GB/s");
		if (kbench_have_cycles) {
			mb_report(l, nid, mode, "tsc_ticks_per_page",
				  kbench_div_milli(s[mode].ticks, len / PAGE_SIZE), "ticks");
			mb_report(l, nid, mode, "ipis", (u64)s[mode].ipis * 1000, "ipis");
		}
		for (int i = 0; i < NR_MM_COST_ITEMS; i++)
			mb_report(l, nid, mode, mm_cost_names[i], (u64)s[mode].cost[i] * 1000,
				  mb_cost_unit[i]);
	}
	return 0;
}

static int bench_migrate(void)
{
	unsigned long len = mb_mib << 20;
	bool saved_batching = migrate_batching, saved_debug = debug_pagealloc;
	int src = numa_mem_id_of(numa_node_id()), err = 0;
	struct bm_thp saved_thp;

	if (!len || len % PMD_SIZE) {
		bm_err("migrate: %lu MiB is not a whole number of 2 MiB blocks\n", mb_mib);
		return -EINVAL;
	}
	printk(KERN_RAW "bench: migrate: %lu MiB from node %d\n", mb_mib, src);
	bm_thp_save(&saved_thp);
	debug_pagealloc = false;	/* poisoning freed pages would be most of the time */
	bm_touch_node(src);
	for (int nid = 0; nid < nr_node_ids && !err; nid++) {
		if (nid == src || !node_has_memory(nid))
			continue;
		bm_touch_node(nid);
		for (unsigned int i = 0; i < ARRAY_SIZE(mb_layouts) && !err; i++)
			err = mb_measure(&mb_layouts[i], nid, len);
	}
	debug_pagealloc = saved_debug;
	migrate_batching = saved_batching;
	bm_thp_restore(&saved_thp);
	return err;
}
KBENCH(migrate, bench_migrate,
       "migrate_pages of anonymous memory to the other nodes, every folio layout, batched vs per-page");
