/*
 * The migrate benchmark on the host: the kernel's own benchmark source
 * (tests/kernel/bench_migrate.c) and the same mm/ code on a simulated
 * three-node machine, -O2, no sanitizers (make bench). Time from
 * clock_gettime; no cycle or IPI metric; the mm_cost counts are the same
 * as in the kernel.
 *
 *	bench_migrate [all|migrate]
 *
 * QUIRE_MIGRATE_MIB=<n> sets the memory moved (default 256 here, 32 in the
 * kernel; a multiple of 2), QUIRE_BENCH_MIB=<n> the memory per simulated
 * node (default 768).
 */
#define MIGRATE_BENCH_MIB	256UL
#include "../kernel/bench_migrate.c"
#include <asm/host_mm.h>

int main(int argc, char **argv)
{
	struct host_topology topo;
	const char *mib = getenv("QUIRE_MIGRATE_MIB"), *node = getenv("QUIRE_BENCH_MIB");
	int failed;

	setenv("QUIRE_HOST_CONSOLE", "1", 1);
	console_loglevel = LOGLEVEL_DEFAULT + 1;
	if (mib && *mib)
		mb_mib = strtoul(mib, NULL, 0);
	host_topology_numa3(&topo, node && *node ? strtoul(node, NULL, 0) : 768);
	if (host_mm_init(&topo)) {
		fprintf(stderr, "bench_migrate: host_mm_init failed\n");
		return 2;
	}
	failed = kbench_run(argc > 1 ? argv[1] : "all");
	host_mm_exit();
	return failed ? 1 : 0;
}
