/*
 * Programs that end badly on purpose, for the test runner's self-tests
 * (tests/plan.txt, selftest-*): each must come out of `make test` as a
 * failure, so each job says which ending it expects.
 *
 *   harness_selftest segv      a passing case, then a write through NULL
 *                              (killed by SIGSEGV: status 139 via init)
 *   harness_selftest exit N    every case passes, then exit(N): a status of
 *                              128 or more must not wrap to success
 *   harness_selftest empty     the KTAP plan 1..0: nothing ran
 */
#include <stdlib.h>
#include <string.h>
#include "ktap.h"

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "empty")) {
		printf("KTAP version 1\n1..0\n");
		return 0;
	}
	ktap_begin("harness_selftest", 2);
	CHECK(argc >= 2);
	ktap_report("has_a_mode", NULL);
	if (!strcmp(mode, "segv"))
		*(volatile int *)(long)(argc - argc) = 1;
	if (!strcmp(mode, "exit") && argc > 2) {
		ktap_report("before_exit", NULL);
		ktap_finish();
		exit(atoi(argv[2]));
	}
	printf("    # harness_selftest: unknown mode '%s'\n", mode);
	CHECK(!"a known mode");
	ktap_report("known_mode", NULL);
	return ktap_finish();
}
