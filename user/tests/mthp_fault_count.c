/*
 * mthp_fault_count: prints how many anonymous folios of each THP size page
 * faults allocated since boot (Linux's
 * /sys/kernel/mm/transparent_hugepage/hugepages-<N>kB/stats/anon_fault_alloc)
 * and fails when a size named on the command line has none. The last case
 * of a list of Linux selftests run with mTHP sizes enabled
 * (tests/lselftests/quire-mthp.txt): it shows which folio sizes the tests
 * before it really met, so that "passes with every mTHP size on" cannot
 * quietly mean "met only 4 KiB pages".
 *
 *	mthp_fault_count SIZE_KB...     exit 0 when each SIZE_KB has a count > 0
 *
 * Works the same on Linux 6.12 (the stats files are Linux's).
 */
#include "proc_files.h"

int main(int argc, char **argv)
{
	int missing = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: mthp_fault_count SIZE_KB...\n");
		return 2;
	}
	for (long kb = 16; kb <= 2048; kb *= 2) {
		long n = mthp_stat(kb, "anon_fault_alloc");

		if (n >= 0)
			printf("hugepages-%ldkB anon_fault_alloc %ld\n", kb, n);
	}
	for (int i = 1; i < argc; i++) {
		long kb = strtol(argv[i], NULL, 10), n = mthp_stat(kb, "anon_fault_alloc");

		if (n <= 0) {
			printf("not ok: no %ld kB folio came from a fault (%s)\n", kb,
			       n < 0 ? "no such THP size" : "anon_fault_alloc 0");
			missing++;
		}
	}
	return missing ? 1 : 0;
}
