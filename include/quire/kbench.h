/*
 * Benchmarks (make bench; docs/bench.md). A benchmark registers itself in
 * the .kbench linker section, as test suites do in .ktest_suites:
 *
 *	static int bench_foo(void)
 *	{
 *		...measure...
 *		kbench_report("foo", "", SZ, "batched", "throughput", milli, "MiB/s");
 *		return 0;
 *	}
 *	KBENCH(foo, bench_foo, "what foo measures");
 *
 * "bench=all" or "bench=a,b" on the command line runs them and powers off
 * ("bench=all,-a": all but a).
 * Each result is one line, without a timestamp:
 *
 *	bench-csv: benchmark,case,folio_size,mode,metric,value,unit
 *
 * scripts/bench.py collects those lines into build/bench/results.csv. The
 * same benchmark sources also build into host programs (tests/host/bench_*.c
 * include them), where the section has a name the host linker can bound by
 * itself.
 */
#ifndef QUIRE_KBENCH_H
#define QUIRE_KBENCH_H

#include <quire/types.h>
#include <quire/compiler.h>

struct kbench {
	const char *name;
	int (*run)(void);	/* 0, or a negative errno when it could not run */
	const char *help;
};

#ifdef QUIRE_HOST
#define KBENCH_SECTION	"kbench"	/* ld defines __start_kbench/__stop_kbench */
#else
#define KBENCH_SECTION	".kbench"	/* bounded in linker.ld */
#endif

#define KBENCH(bname, fn, text)						\
	static const struct kbench __kbench_##bname			\
	__section(KBENCH_SECTION) __used __aligned(8) = { #bname, fn, text }

/* Run "all" or a comma-separated list; returns how many failed or were unknown. */
int kbench_run(const char *spec);
const struct kbench *kbench_registered(size_t *count);

/*
 * Print one result row. value_milli is the value times 1000 (no floating
 * point in the kernel); folio_bytes 0 prints "-". bcase "" means "the
 * environment alone": scripts/bench.py puts the environment (host, qemu-tcg,
 * qemu-icount) in front of whatever case a benchmark prints.
 */
void kbench_report(const char *benchmark, const char *bcase, unsigned long folio_bytes,
		   const char *mode, const char *metric, u64 value_milli, const char *unit);

/* num / den, times 1000, without overflow for num < 2^64 / 1000 * den. */
u64 kbench_div_milli(u64 num, u64 den);
/* The median of v[0..n-1] (sorts v). */
u64 kbench_median(u64 *v, unsigned int n);

/*
 * A cycle count for stable measurements: the TSC in the kernel (one tick
 * per guest instruction under QEMU's -icount shift=0). The host has none
 * worth reporting (frequency scaling, other load): kbench_have_cycles is
 * false there and benchmarks leave the metric out.
 */
#ifdef QUIRE_HOST
#define kbench_have_cycles	false
static inline u64 kbench_cycles(void)
{
	return 0;
}
#else
#include <asm/cpu.h>
#define kbench_have_cycles	true
static inline u64 kbench_cycles(void)
{
	return rdtsc();
}
#endif

#endif
