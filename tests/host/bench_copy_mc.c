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
#include "bench_host.h"

int main(int argc, char **argv)
{
	return bench_host_main(argc, argv, "bench_copy_mc", 3072);
}
