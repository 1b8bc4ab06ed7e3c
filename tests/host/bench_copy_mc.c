/*
 * The copy_mc benchmark on the host: the kernel's own benchmark source
 * (tests/kernel/bench_copy_mc.c) and the same mm/ code on a simulated
 * three-node machine, -O2, no sanitizers (make bench). The copies are
 * arch/host's (memcpy where no test poison is read), so batched against
 * memcpy shows what the per-folio and per-page call structure costs next to
 * the host's own memcpy bandwidth. Time from clock_gettime; no cycle metric.
 *
 *	bench_copy_mc [all|copy_mc]
 *
 * QUIRE_BENCH_MIB=<n> sets the memory per simulated node (default 3072:
 * room for two 1 GiB folios; only what is copied is touched).
 */
#include "../kernel/bench_copy_mc.c"
#include <asm/host_mm.h>

int main(int argc, char **argv)
{
	const char *mib = getenv("QUIRE_BENCH_MIB");
	struct host_topology topo;
	int failed;

	setenv("QUIRE_HOST_CONSOLE", "1", 1);
	console_loglevel = LOGLEVEL_DEFAULT + 1;
	host_topology_numa3(&topo, mib && *mib ? strtoul(mib, NULL, 0) : 3072);
	if (host_mm_init(&topo)) {
		fprintf(stderr, "bench_copy_mc: host_mm_init failed\n");
		return 2;
	}
	failed = kbench_run(argc > 1 ? argv[1] : "all");
	host_mm_exit();
	return failed ? 1 : 0;
}
