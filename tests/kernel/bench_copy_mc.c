/*
 * Copying folios machine-check-safely (include/quire/copy_mc.h), by folio
 * size: one copy_mc_highpages call per folio ("batched") against one call
 * per page ("per-page", copy_mc_batch=0), each with the rep movsq body and
 * the rep movsb body, and the kernel's plain memcpy (not recoverable) as
 * the bound. 16 MiB are copied per row, folio by folio.
 *
 * Metrics: throughput (MiB/s, wall), tsc_ticks_per_page (guest
 * instructions per page under -icount shift=0: stable), calls_per_folio
 * (copy calls made: the count that batching changes).
 *
 * Not here: 1 GiB folios (no node of the test machines holds one), and a
 * host run (arch/host's copy is a C loop that checks the test hook, not
 * the kernel's string instructions).
 */
#include <quire/kbench.h>
#include <quire/copy_mc.h>
#include <quire/mm.h>
#include <quire/string.h>
#include <quire/time.h>
#include <quire/kernel.h>
#include <quire/errno.h>

#define COPY_MIB	16
#define REPS		3

extern atomic_long_t copy_mc_calls;

enum copy_mode { BATCHED, PER_PAGE, MEMCPY };
static const char *const mode_names[] = { "batched", "per-page", "memcpy" };

static void report(unsigned int order, const char *mode, const char *metric, u64 milli,
		   const char *unit)
{
	kbench_report("copy_mc", "", PAGE_SIZE << order, mode, metric, milli, unit);
}

/* Copy COPY_MIB through one folio pair; the copy calls made. */
static long copy_all(struct folio *d, struct folio *s, unsigned int order, enum copy_mode m)
{
	unsigned long rounds = (COPY_MIB << 20) >> (PAGE_SHIFT + order);
	long calls = atomic_long_read(&copy_mc_calls);

	copy_mc_batching = m == BATCHED;
	for (unsigned long r = 0; r < rounds; r++) {
		if (m == MEMCPY)
			memcpy(folio_address(d), folio_address(s), PAGE_SIZE << order);
		else if (folio_mc_copy(d, s))
			return -1;
	}
	return atomic_long_read(&copy_mc_calls) - calls;
}

static int bench_one(unsigned int order, enum copy_mode m, enum copy_mc_body body)
{
	struct page *s = alloc_pages(0, order), *d = alloc_pages(0, order);
	unsigned long folios = (COPY_MIB << 20) >> (PAGE_SHIFT + order);
	char mode[24];
	u64 ns[REPS], ticks = 0;
	long calls = 0;
	int err = 0;

	if (!s || !d) {
		err = -ENOMEM;
		goto out;
	}
	copy_mc_body = body;
	for (int r = 0; r < REPS && !err; r++) {
		u64 t0 = ktime_get_ns(), c0 = kbench_cycles();

		calls = copy_all(page_folio(d), page_folio(s), order, m);
		ticks = kbench_cycles() - c0;
		ns[r] = ktime_get_ns() - t0;
		err = calls < 0 ? -EIO : 0;
	}
	if (err)
		goto out;
	snprintf(mode, sizeof(mode), "%s%s", mode_names[m],
		 m == MEMCPY ? "" : body == COPY_MC_MOVSQ ? "-movsq" : "-movsb");
	report(order, mode, "throughput",
	       kbench_div_milli((u64)COPY_MIB * NSEC_PER_SEC, kbench_median(ns, REPS)), "MiB/s");
	report(order, mode, "tsc_ticks_per_page", kbench_div_milli(ticks, (COPY_MIB << 20) >> PAGE_SHIFT),
	       "ticks");
	if (m != MEMCPY)
		report(order, mode, "calls_per_folio", kbench_div_milli((u64)calls, folios), "calls");
out:
	if (s)
		__free_pages(s, order);
	if (d)
		__free_pages(d, order);
	return err;
}

static int bench_copy_mc(void)
{
	static const unsigned int orders[] = { 0, 4, 9 };
	enum copy_mc_body saved_body = copy_mc_body;
	bool saved_batch = copy_mc_batching;
	int err = 0;

	for (unsigned int i = 0; i < ARRAY_SIZE(orders) && !err; i++) {
		for (enum copy_mode m = BATCHED; m <= PER_PAGE && !err; m++) {
			err = bench_one(orders[i], m, COPY_MC_MOVSQ);
			if (!err)
				err = bench_one(orders[i], m, COPY_MC_MOVSB);
		}
		if (!err)
			err = bench_one(orders[i], MEMCPY, COPY_MC_MOVSQ);
	}
	copy_mc_body = saved_body;
	copy_mc_batching = saved_batch;
	return err;
}
KBENCH(copy_mc, bench_copy_mc,
       "machine-check-safe folio copy: one call per folio vs per page, movsq vs movsb, vs memcpy");
