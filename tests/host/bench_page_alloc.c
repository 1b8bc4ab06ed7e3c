/*
 * The page_alloc benchmark on the host: the kernel's own benchmark source
 * (tests/kernel/bench_page_alloc.c) and the same mm/ code, on a simulated
 * three-node machine, built with -O2 and without sanitizers (make bench).
 * Time comes from clock_gettime (arch/host's ktime_get_ns); there is no
 * cycle metric, and the buddy split/merge counts are the stable numbers.
 *
 *	bench_page_alloc [all|page_alloc]
 *
 * Results are "bench-csv:" lines on stderr, like the kernel's console.
 * QUIRE_BENCH_MIB=<n> sets the memory per simulated node (default 256).
 */
#include "../kernel/bench_page_alloc.c"
#include <asm/host_mm.h>

int main(int argc, char **argv)
{
	const char *mib = getenv("QUIRE_BENCH_MIB");
	struct host_topology topo;
	int failed;

	/* printk reaches stderr only with this; show warnings and errors too. */
	setenv("QUIRE_HOST_CONSOLE", "1", 1);
	console_loglevel = LOGLEVEL_DEFAULT + 1;

	host_topology_numa3(&topo, mib && *mib ? strtoul(mib, NULL, 0) : 256);
	if (host_mm_init(&topo)) {
		fprintf(stderr, "bench_page_alloc: host_mm_init failed\n");
		return 2;
	}
	failed = kbench_run(argc > 1 ? argv[1] : "all");
	host_mm_exit();
	return failed ? 1 : 0;
}
