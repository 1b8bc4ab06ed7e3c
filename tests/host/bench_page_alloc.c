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
#include "bench_host.h"

int main(int argc, char **argv)
{
	return bench_host_main(argc, argv, "bench_page_alloc", 256);
}
