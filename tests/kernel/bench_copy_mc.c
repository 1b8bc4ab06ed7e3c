/*
 * Copying folios machine-check-safely (include/quire/copy_mc.h), by folio
 * size 4K, 64K, 2M and 1G: one copy_mc_highpages call per folio
 * ("batched", as folio_mc_copy) against one call per page ("per-page", as
 * with copy_mc_batch=0), each with the rep movsq body and the rep movsb
 * body, and plain memcpy (not recoverable). Cases:
 *
 *   one      one folio pair copied again and again (COPY_MIB in all; a 1G
 *            folio once a pass): the source as hot as the caches allow;
 *   256M     256 MiB of folios, each copied once: memory bandwidth. The
 *            folios are folio-sized pieces of 4 MiB blocks (the largest the
 *            buddy gives), each copied as a folio is: one call, or one per
 *            page. (No 256M row for 1G: 256 MiB holds no 1 GiB folio.)
 *   migrate  migrate_pages of MIGRATE_MIB of 2M THPs (PMD-mapped, built in
 *            an mm of its own) to another node, as move_pages does once it
 *            has its arguments, with copy_mc_batch on ("batched") and off
 *            ("per-page").
 *
 * Under QEMU the 256M and 1G cases measure rep movsq only: rep movsb and
 * the kernel's memcpy (lib/string.c, a byte loop) copy about 20 MiB/s under
 * TCG, minutes for each such row; the "one" case has every mode.
 *
 * The 1 GiB folios come from the node allocator (alloc_contig_pages); the
 * test machines' numa3 nodes (768 MiB) hold none, so scripts/bench.py
 * boots this benchmark on numa2-6g (3 GiB nodes). Where no node has two
 * free 1 GiB ranges the 1G rows are left out, and the log says so.
 *
 * Metrics: throughput (MiB/s, wall), tsc_ticks_per_page (guest
 * instructions per page under -icount shift=0: stable; kernel only),
 * calls_per_folio (the copy calls made: what batching changes).
 *
 * On the host (tests/host/bench_copy_mc.c) the copies are arch/host's: the
 * C library's memcpy for a piece that does not read the test hook's
 * poisoned page; "memcpy" is lib/string.c's byte loop there too, and one
 * more mode, "host-memcpy", calls the C library's memcpy directly: the
 * host's own bandwidth, the bound for the batched copy there.
 */
#include <quire/kbench.h>
#include <quire/copy_mc.h>
#include <quire/mm.h>
#include <quire/gfp.h>
#include <quire/numa.h>
#include <quire/string.h>
#include <quire/time.h>
#include <quire/kernel.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include "bench_mm.h"
#ifdef QUIRE_HOST
#include <asm/host_mm.h>
#define ALL_MODES_ALWAYS	true
#else
#define ALL_MODES_ALWAYS	false
#endif

#define COPY_MIB	16	/* case "one": bytes copied through one pair */
#define SPREAD_MIB	256	/* case "256M" */
#define BLOCK_ORDER	MAX_PAGE_ORDER
#define GIGANTIC_ORDER	18
#define REPS		3
#define MIGRATE_MIB	64

extern atomic_long_t copy_mc_calls;

/* HOST_MEMCPY: the C library's memcpy, on the host only (the machine's own bound). */
enum copy_mode { BATCHED, PER_PAGE, MEMCPY, HOST_MEMCPY };
static const char *const mode_names[] = { "batched", "per-page", "memcpy", "host-memcpy" };

/* Source and destination: nr_blocks runs of 1 << block_order pages each. */
struct copy_area {
	struct page *src[SPREAD_MIB >> 2], *dst[SPREAD_MIB >> 2];
	unsigned int nr_blocks, block_order;
	bool contig;		/* from alloc_contig_pages */
};

static struct copy_area area;

static void area_free(struct copy_area *a)
{
	for (unsigned int i = 0; i < a->nr_blocks; i++) {
		for (int d = 0; d < 2; d++) {
			struct page *p = d ? a->dst[i] : a->src[i];

			if (p && a->contig)
				free_contig_range(page_to_pfn(p), 1UL << a->block_order);
			else if (p)
				__free_pages(p, a->block_order);
		}
		a->src[i] = a->dst[i] = NULL;
	}
	a->nr_blocks = 0;
}

/* nr blocks of 2^order pages (src and dst); false when memory is short. */
static bool area_alloc(struct copy_area *a, unsigned int nr, unsigned int order)
{
	a->block_order = order;
	a->contig = order > MAX_PAGE_ORDER;
	a->nr_blocks = nr;
	for (unsigned int i = 0; i < nr; i++) {
		for (int d = 0; d < 2; d++) {
			struct page *p = NULL;

			if (!a->contig) {
				p = alloc_pages(__GFP_NOWARN, order);
			} else {
				/* Any node with two free 1 GiB ranges: the running CPU's first. */
				for (int n = -1; n < nr_node_ids && !p; n++) {
					int nid = n < 0 ? numa_node_id() : n;

					if (node_has_memory(nid))
						p = alloc_contig_pages(1UL << order, __GFP_NOWARN, nid);
				}
			}
			if (d)
				a->dst[i] = p;
			else
				a->src[i] = p;
			if (!p) {
				area_free(a);
				return false;
			}
		}
	}
	return true;
}

/* One folio of 2^order pages, src to dst, as mode copies it: false when a copy came up short. */
static bool copy_folio(struct page *dst, struct page *src, unsigned int order, enum copy_mode m)
{
	unsigned long nr = 1UL << order;

	if (m == MEMCPY) {
		memcpy(page_address(dst), page_address(src), PAGE_SIZE << order);
		return true;
	}
#ifdef QUIRE_HOST
	if (m == HOST_MEMCPY) {
		host_memcpy(page_address(dst), page_address(src), PAGE_SIZE << order);
		return true;
	}
#endif
	if (m == BATCHED)
		return !copy_mc_highpages(dst, src, (unsigned int)nr);
	for (unsigned long i = 0; i < nr; i++)
		if (copy_mc_highpages(dst + i, src + i, 1))
			return false;
	return true;
}

/*
 * One pass of a case: "one" copies the first folio of the area `rounds`
 * times, "256M" every folio of the area once. Bytes copied, or 0 on a
 * short copy.
 */
static u64 one_pass(struct copy_area *a, unsigned int order, bool spread, unsigned long rounds,
		    enum copy_mode m)
{
	unsigned long per_block = 1UL << (a->block_order - order);
	u64 bytes = 0;

	if (!spread) {
		for (unsigned long r = 0; r < rounds; r++)
			if (!copy_folio(a->dst[0], a->src[0], order, m))
				return 0;
		return (u64)rounds << (PAGE_SHIFT + order);
	}
	for (unsigned int b = 0; b < a->nr_blocks; b++)
		for (unsigned long f = 0; f < per_block; f++) {
			unsigned long off = f << order;

			if (!copy_folio(a->dst[b] + off, a->src[b] + off, order, m))
				return 0;
			bytes += PAGE_SIZE << order;
		}
	return bytes;
}

static void report(unsigned int order, bool spread, const char *mode, const char *metric,
		   u64 milli, const char *unit)
{
	kbench_report("copy_mc", spread ? "256M" : "one", PAGE_SIZE << order, mode, metric, milli,
		      unit);
}

static int bench_mode(struct copy_area *a, unsigned int order, bool spread, enum copy_mode m,
		      enum copy_mc_body body, unsigned int reps)
{
	unsigned long rounds = max(1UL, ((unsigned long)COPY_MIB << 20) >> (PAGE_SHIFT + order));
	u64 ns[REPS], ticks = 0, bytes = 0;
	long calls = 0;
	char mode[24];

	copy_mc_body = body;
	copy_mc_batching = m == BATCHED;
	one_pass(a, order, false, 1, m);	/* untimed: TCG translates the path */
	for (unsigned int r = 0; r < reps; r++) {
		long c0 = atomic_long_read(&copy_mc_calls);
		u64 t0 = ktime_get_ns(), k0 = kbench_cycles();

		bytes = one_pass(a, order, spread, rounds, m);
		ticks = kbench_cycles() - k0;
		ns[r] = ktime_get_ns() - t0;
		calls = atomic_long_read(&copy_mc_calls) - c0;
		if (!bytes) {
			pr_err("bench: copy_mc: a copy of %lu KiB came up short\n", 4UL << order);
			return -EIO;
		}
	}
	snprintf(mode, sizeof(mode), "%s%s", mode_names[m],
		 m >= MEMCPY ? "" : body == COPY_MC_MOVSQ ? "-movsq" : "-movsb");
	report(order, spread, mode, "throughput",
	       kbench_div_milli((bytes * NSEC_PER_SEC) >> 20, kbench_median(ns, reps)), "MiB/s");
	if (kbench_have_cycles)
		report(order, spread, mode, "tsc_ticks_per_page",
		       kbench_div_milli(ticks, bytes >> PAGE_SHIFT), "ticks");
	if (m < MEMCPY)
		report(order, spread, mode, "calls_per_folio",
		       kbench_div_milli((u64)calls, bytes >> (PAGE_SHIFT + order)), "calls");
	return 0;
}

/*
 * Every mode and body for one folio size and case (rep movsq only when
 * !all_modes). One untimed batched pass over everything first, so that no
 * mode pays for first touches (the host's page faults, QEMU's).
 */
static int bench_size(struct copy_area *a, unsigned int order, bool spread, unsigned int reps,
		      bool all_modes)
{
	int err = 0;

	copy_mc_body = COPY_MC_MOVSQ;
	one_pass(a, order, spread, 1, BATCHED);
	for (enum copy_mode m = BATCHED; m <= PER_PAGE && !err; m++) {
		err = bench_mode(a, order, spread, m, COPY_MC_MOVSQ, reps);
		if (!err && all_modes)
			err = bench_mode(a, order, spread, m, COPY_MC_MOVSB, reps);
	}
	if (!err && all_modes)
		err = bench_mode(a, order, spread, MEMCPY, COPY_MC_MOVSQ, reps);
#ifdef QUIRE_HOST
	if (!err)
		err = bench_mode(a, order, spread, HOST_MEMCPY, COPY_MC_MOVSQ, reps);
#endif
	return err;
}

/* ---- migrate: move_pages of 2M THPs, copy_mc_batch on and off ---- */

static const struct bm_layout thp_pmd = { "pmd", HPAGE_PMD_ORDER, true };

/* Migrate MIGRATE_MIB of PMD-mapped THPs from node `from` to `to`: the time, or 0 on failure. */
static u64 migrate_once(int to, unsigned long len, u64 *ticks, long *calls)
{
	struct migration_target_control mtc = { .nid = to, .gfp_mask = __GFP_THISNODE };
	struct mm_struct *mm;
	unsigned long folios;
	LIST_HEAD(list);
	int err = 0, failed;
	long c0;
	u64 t0, k0, ns;

	mm = bm_populate(&thp_pmd, len, &err);
	if (!mm)
		return 0;
	c0 = atomic_long_read(&copy_mc_calls);
	t0 = ktime_get_ns();
	k0 = kbench_cycles();
	folios = bm_isolate_all(mm, len, &list);
	failed = migrate_pages(&list, alloc_migration_target, NULL, (unsigned long)&mtc,
			       MIGRATE_SYNC, MR_SYSCALL, NULL);
	*ticks = kbench_cycles() - k0;
	ns = ktime_get_ns() - t0;
	*calls = atomic_long_read(&copy_mc_calls) - c0;
	putback_movable_pages(&list);
	mmput(mm);
	if (folios != len / PMD_SIZE || failed) {
		pr_err("bench: copy_mc: migrate: %lu THPs isolated, %d not moved\n", folios, failed);
		return 0;
	}
	return ns ? ns : 1;
}

static int bench_migrate_thp(void)
{
	unsigned long len = (unsigned long)MIGRATE_MIB << 20;
	int src = numa_mem_id_of(numa_node_id()), to = NUMA_NO_NODE;
	struct bm_thp saved_thp;
	int err = 0;

	for (int nid = 0; nid < nr_node_ids && to == NUMA_NO_NODE; nid++)
		if (nid != src && node_has_memory(nid))
			to = nid;
	if (to == NUMA_NO_NODE) {
		printk(KERN_RAW "bench: copy_mc: one node with memory: no migrate rows\n");
		return 0;
	}
	bm_thp_save(&saved_thp);
	copy_mc_body = COPY_MC_MOVSQ;
	for (int batch = 0; batch < 2 && !err; batch++) {
		u64 ns[REPS], ticks = 0;
		long calls = 0;

		copy_mc_batching = batch;
		if (!migrate_once(to, PMD_SIZE, &ticks, &calls))	/* untimed: TCG translates */
			err = -EIO;
		for (int r = 0; r < REPS && !err; r++)
			if (!(ns[r] = migrate_once(to, len, &ticks, &calls)))
				err = -EIO;
		if (err)
			break;
		kbench_report("copy_mc", "migrate", PMD_SIZE, batch ? "batched" : "per-page",
			      "throughput", kbench_div_milli(((u64)len * NSEC_PER_SEC) >> 20,
							    kbench_median(ns, REPS)), "MiB/s");
		if (kbench_have_cycles)
			kbench_report("copy_mc", "migrate", PMD_SIZE, batch ? "batched" : "per-page",
				      "tsc_ticks_per_page", kbench_div_milli(ticks, len >> PAGE_SHIFT),
				      "ticks");
		kbench_report("copy_mc", "migrate", PMD_SIZE, batch ? "batched" : "per-page",
			      "calls_per_folio", kbench_div_milli((u64)calls, len / PMD_SIZE), "calls");
	}
	bm_thp_restore(&saved_thp);
	return err;
}

static int bench_copy_mc(void)
{
	static const unsigned int orders[] = { 0, 4, 9 };
	enum copy_mc_body saved_body = copy_mc_body;
	bool saved_batch = copy_mc_batching, saved_debug = debug_pagealloc;
	int err = 0;

	debug_pagealloc = false;
	/* 256 MiB as 4 MiB blocks: "one" uses the first folio, "256M" all of them. */
	if (!area_alloc(&area, SPREAD_MIB >> 2, BLOCK_ORDER)) {
		pr_err("bench: copy_mc: no 2 x %d MiB free\n", SPREAD_MIB);
		err = -ENOMEM;
	}
	if (!ALL_MODES_ALWAYS)
		printk(KERN_RAW "bench: copy_mc: 256M and 1G: rep movsq only "
		       "(movsb and memcpy: minutes a row)\n");
	for (unsigned int i = 0; i < ARRAY_SIZE(orders) && !err; i++) {
		err = bench_size(&area, orders[i], false, REPS, true);
		if (!err)
			err = bench_size(&area, orders[i], true, ALL_MODES_ALWAYS ? REPS : 1,
					 ALL_MODES_ALWAYS);
	}
	area_free(&area);
	/* One gigantic folio pair, copied once a pass. */
	if (!err && area_alloc(&area, 1, GIGANTIC_ORDER))
		err = bench_size(&area, GIGANTIC_ORDER, false, 1, ALL_MODES_ALWAYS);
	else if (!err)
		printk(KERN_RAW "bench: copy_mc: no node has two free 1 GiB ranges: no 1G rows\n");
	area_free(&area);
	if (!err)
		err = bench_migrate_thp();
	copy_mc_body = saved_body;
	copy_mc_batching = saved_batch;
	debug_pagealloc = saved_debug;
	return err;
}
KBENCH(copy_mc, bench_copy_mc,
       "machine-check-safe folio copy, 4K to 1G, and THP migration: "
       "one call per folio vs per page, movsq vs movsb, vs memcpy");
