/*
 * The cost of a kernel TLB shootdown, by range size: one flush_tlb_kernel_range
 * (local invlpg or full flush, one IPI per other CPU, wait for all) versus
 * flushing the same range one page at a time (one shootdown per page, what a
 * caller without range batching would do). Metrics: ns per call (median),
 * and the stable counts: IPIs and shootdowns per call.
 */
#include <quire/kbench.h>
#include <quire/smp.h>
#include <quire/time.h>
#include <quire/errno.h>
#include <asm/io_map.h>
#include <asm/page.h>

#define REPS 31

static void report(unsigned long pages, const char *mode, const char *metric, u64 milli,
		   const char *unit)
{
	kbench_report("tlb_shootdown", "", pages * PAGE_SIZE, mode, metric, milli, unit);
}

static void flush_per_page(unsigned long va, unsigned long pages)
{
	for (unsigned long i = 0; i < pages; i++)
		flush_tlb_kernel_range(va + i * PAGE_SIZE, va + (i + 1) * PAGE_SIZE);
}

static int bench_tlb(void)
{
	static const unsigned long sizes[] = { 1, 4, 16, 64 };
	unsigned long va = (unsigned long)kmap_area_alloc(64 * PAGE_SIZE);

	if (!va)
		return -ENOMEM;
	for (unsigned int s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (int batched = 1; batched >= 0; batched--) {
			const char *mode = batched ? "range" : "per-page";
			unsigned long pages = sizes[s];
			u64 ns[REPS];
			long ipis = atomic_long_read(&tlb_stats.ipis_sent);

			for (int r = 0; r < REPS; r++) {
				u64 start = ktime_get_ns();

				if (batched)
					flush_tlb_kernel_range(va, va + pages * PAGE_SIZE);
				else
					flush_per_page(va, pages);
				ns[r] = ktime_get_ns() - start;
			}
			report(pages, mode, "ns_per_call", kbench_median(ns, REPS) * 1000, "ns");
			report(pages, mode, "ipis_per_call",
			       kbench_div_milli((u64)(atomic_long_read(&tlb_stats.ipis_sent) - ipis), REPS),
			       "ipis");
		}
	}
	return 0;
}
KBENCH(tlb_shootdown, bench_tlb,
       "kernel TLB shootdown cost by range size: one range flush vs one per page");
