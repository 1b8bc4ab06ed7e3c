/*
 * The main() of a host benchmark program (tests/host/bench_*.c): the
 * kernel's benchmark source on the same mm/ code, on a simulated numa3
 * machine of QUIRE_BENCH_MIB per node (default_mib unless set), printk on
 * stderr (warnings and errors too), kbench_run of argv[1] ("all" by
 * default). Include it after the benchmark's .c.
 */
#ifndef TESTS_HOST_BENCH_HOST_H
#define TESTS_HOST_BENCH_HOST_H

#include <asm/host_mm.h>

static int bench_host_main(int argc, char **argv, const char *prog, unsigned long default_mib)
{
	const char *mib = getenv("QUIRE_BENCH_MIB");
	struct host_topology topo;
	int failed;

	setenv("QUIRE_HOST_CONSOLE", "1", 1);
	console_loglevel = LOGLEVEL_DEFAULT + 1;
	host_topology_numa3(&topo, mib && *mib ? strtoul(mib, NULL, 0) : default_mib);
	if (host_mm_init(&topo)) {
		fprintf(stderr, "%s: host_mm_init failed\n", prog);
		return 2;
	}
	failed = kbench_run(argc > 1 ? argv[1] : "all");
	host_mm_exit();
	return failed ? 1 : 0;
}

#endif
