/*
 * page_alloc benchmark: allocate and free BENCH_MIB of memory on the running
 * CPU's node (__GFP_THISNODE), for every order 0..MAX_PAGE_ORDER, two ways
 * side by side:
 *
 *   folio     the memory as (BENCH_MIB >> order) folios of that order
 *             (folio_alloc / folio_put): one allocator call per folio;
 *   per-page  the same memory as order-0 pages (alloc_pages_node /
 *             __free_pages): 2^order calls per folio, batching off.
 *
 * A pass allocates everything, then frees it in allocation order. Per-page
 * does the same work at every order, so its rows also show the noise.
 *
 * Metrics, per order and mode, the median of BENCH_REPS timed passes after
 * one warm-up pass:
 *   throughput          MiB/s of alloc + free
 *   ns_per_page         ns per 4 KiB page, alloc + free
 *   tsc_ticks_per_page  TSC ticks per page (kernel only): one tick per guest
 *                       instruction under QEMU's -icount shift=0
 *   buddy_splits        blocks split in one pass, and
 *   buddy_merges        buddies merged: counted in one more, untimed, pass
 *                       from the node's free-block count; they depend only
 *                       on the allocator's state, never on time.
 *
 * The file builds into the kernel and, included by
 * tests/host/bench_page_alloc.c, into the host benchmark.
 */
#include <quire/kbench.h>
#include <quire/mm.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/time.h>
#include <quire/errno.h>

#define BENCH_MIB	64UL
#define BENCH_PAGES	(BENCH_MIB << (20 - PAGE_SHIFT))
#define BENCH_REPS	9
#define BENCH_GFP	(GFP_KERNEL | __GFP_THISNODE | __GFP_NOWARN)

enum pa_mode { PA_PER_PAGE, PA_FOLIO, PA_NR_MODES };
static const char *const pa_mode_name[PA_NR_MODES] = { "per-page", "folio" };

struct pa_run {
	int nid;
	void **slots;		/* BENCH_PAGES entries: a page or a folio each */
	bool count;		/* count buddy steps (the untimed pass) */
	long splits, merges;
};

/* Free blocks of every order on the node: a split adds one, a merge removes one. */
static long free_blocks(int nid)
{
	long n = 0;

	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		n += (long)NODE_DATA(nid)->free_area[o].nr_free;
	return n;
}

static void *alloc_one(const struct pa_run *r, enum pa_mode mode, unsigned int order)
{
	if (mode == PA_FOLIO)
		return folio_alloc(BENCH_GFP, order, r->nid);
	return alloc_pages_node(r->nid, BENCH_GFP, 0);
}

static void free_one(void *p, enum pa_mode mode)
{
	if (mode == PA_FOLIO)
		folio_put(p);
	else
		__free_pages(p, 0);
}

/* Allocate the whole amount, then free it. False when the node ran out. */
static bool one_pass(struct pa_run *r, enum pa_mode mode, unsigned int order)
{
	unsigned long nr = mode == PA_FOLIO ? BENCH_PAGES >> order : BENCH_PAGES;
	unsigned long i, got;
	long before = 0;

	for (got = 0; got < nr; got++) {
		if (r->count)
			before = free_blocks(r->nid);
		r->slots[got] = alloc_one(r, mode, order);
		if (!r->slots[got])
			break;
		/* An allocation that split k times added k blocks and took one. */
		if (r->count)
			r->splits += free_blocks(r->nid) - before + 1;
	}
	for (i = 0; i < got; i++) {
		if (r->count)
			before = free_blocks(r->nid);
		free_one(r->slots[i], mode);
		/* A free that merged k times removed k blocks and added one. */
		if (r->count)
			r->merges += before + 1 - free_blocks(r->nid);
	}
	return got == nr;
}

static void report(unsigned int order, enum pa_mode mode, const char *metric,
		   u64 milli, const char *unit)
{
	kbench_report("page_alloc", "", PAGE_SIZE << order, pa_mode_name[mode], metric,
		      milli, unit);
}

static int measure(struct pa_run *r, unsigned int order, enum pa_mode mode)
{
	u64 ns[BENCH_REPS], ticks[BENCH_REPS], med_ns;

	if (!one_pass(r, mode, order))		/* warm-up */
		return -ENOMEM;
	for (int i = 0; i < BENCH_REPS; i++) {
		u64 t0 = ktime_get_ns(), c0 = kbench_cycles();
		bool ok = one_pass(r, mode, order);

		ticks[i] = kbench_cycles() - c0;
		ns[i] = ktime_get_ns() - t0;
		if (!ok)
			return -ENOMEM;
	}
	r->count = true;
	r->splits = r->merges = 0;
	if (!one_pass(r, mode, order))
		return -ENOMEM;
	r->count = false;

	med_ns = kbench_median(ns, BENCH_REPS);
	report(order, mode, "throughput", kbench_div_milli(BENCH_MIB * NSEC_PER_SEC, med_ns), "MiB/s");
	report(order, mode, "ns_per_page", kbench_div_milli(med_ns, BENCH_PAGES), "ns");
	if (kbench_have_cycles)
		report(order, mode, "tsc_ticks_per_page",
		       kbench_div_milli(kbench_median(ticks, BENCH_REPS), BENCH_PAGES), "ticks");
	report(order, mode, "buddy_splits", (u64)r->splits * 1000, "steps");
	report(order, mode, "buddy_merges", (u64)r->merges * 1000, "steps");
	return 0;
}

static int bench_page_alloc(void)
{
	unsigned int slots_order = 0;
	bool saved_debug = debug_pagealloc;
	struct pa_run r = { .nid = numa_mem_id_of(numa_node_id()) };
	struct page *slots_page;
	int err = 0;

	while ((PAGE_SIZE << slots_order) < BENCH_PAGES * sizeof(void *))
		slots_order++;
	if (node_page_state(r.nid, NR_FREE_PAGES) < BENCH_PAGES + (1UL << slots_order)) {
		pr_warn("bench: page_alloc: node %d has %lu free pages, needs %lu\n", r.nid,
			node_page_state(r.nid, NR_FREE_PAGES), BENCH_PAGES + (1UL << slots_order));
		return -ENOMEM;
	}
	slots_page = alloc_pages_node(r.nid, BENCH_GFP, slots_order);
	if (!slots_page)
		return -ENOMEM;
	r.slots = page_address(slots_page);
	printk(KERN_RAW "bench: page_alloc: node %d, %lu MiB per pass, median of %d\n",
	       r.nid, BENCH_MIB, BENCH_REPS);

	/* Poisoning (memset of every freed page) would be all that is measured. */
	debug_pagealloc = false;
	for (unsigned int order = 0; order <= MAX_PAGE_ORDER && !err; order++)
		for (int mode = 0; mode < PA_NR_MODES && !err; mode++)
			err = measure(&r, order, mode);
	debug_pagealloc = saved_debug;
	__free_pages(slots_page, slots_order);
	return err;
}
KBENCH(page_alloc, bench_page_alloc,
       "alloc+free throughput per order, folios vs the same memory as order-0 pages");
