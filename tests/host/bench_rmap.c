/*
 * The rmap benchmark on the host: the kernel's own benchmark source
 * (tests/kernel/bench_rmap.c) and the same mm/ code, on a simulated
 * three-node machine, built with -O2 and without sanitizers (make bench).
 * Time comes from clock_gettime; there is no cycle metric, and the mm_cost
 * counts are the stable numbers (the same as in the kernel).
 *
 *	bench_rmap [all|rmap]
 *
 * Results are "bench-csv:" lines on stderr, like the kernel's console.
 * QUIRE_BENCH_MIB=<n> sets the memory per simulated node (default 768, as
 * node 0 in QEMU: COW of 256 MiB needs 512 MiB on the running node, plus
 * page tables); QUIRE_RMAP_MIB=<n> the anonymous memory measured (default
 * 256 here, 64 in the kernel; a multiple of 2); QUIRE_RMAP_REPS=<n> the
 * timed runs per case, the median reported (default 5; 1 in the kernel).
 */
#define RMAP_BENCH_MIB	256UL
#define RMAP_BENCH_REPS	5
#include "../kernel/bench_rmap.c"
#include <asm/host_mm.h>

static unsigned long env_ulong(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : dflt;
}

int main(int argc, char **argv)
{
	struct host_topology topo;
	int failed;

	/* printk reaches stderr only with this; show warnings and errors too. */
	setenv("QUIRE_HOST_CONSOLE", "1", 1);
	console_loglevel = LOGLEVEL_DEFAULT + 1;

	rb_mib = env_ulong("QUIRE_RMAP_MIB", RMAP_BENCH_MIB);
	rb_reps = (unsigned int)env_ulong("QUIRE_RMAP_REPS", RMAP_BENCH_REPS);
	host_topology_numa3(&topo, env_ulong("QUIRE_BENCH_MIB", 768));
	if (host_mm_init(&topo)) {
		fprintf(stderr, "bench_rmap: host_mm_init failed\n");
		return 2;
	}
	failed = kbench_run(argc > 1 ? argv[1] : "all");
	host_mm_exit();
	return failed ? 1 : 0;
}
