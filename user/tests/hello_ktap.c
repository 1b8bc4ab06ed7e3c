/*
 * The first ring-3 test: a KTAP suite of trivial checks, printed the way
 * the kernel's runner prints its suites, so tests/qemu/runner.py reads it.
 * Exits 0 when every check passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failed, n;

static void check(int ok, const char *name)
{
	printf("    %sok %d %s\n", ok ? "" : "not ", ++n, name);
	failed |= !ok;
}

int main(int argc, char **argv)
{
	static const char msg[] = "    # hello from ring 3\n";
	char *p;

	setvbuf(stdout, NULL, _IOLBF, 0);	/* keep order with write(2) below */
	printf("KTAP version 1\n1..1\n    KTAP version 1\n    # Subtest: hello\n    1..5\n");
	check(argc >= 1 && argv[0] != NULL, "argv_present");
	check(write(1, msg, sizeof(msg) - 1) == (ssize_t)sizeof(msg) - 1, "write_stdout");
	check(getpid() > 0, "getpid_positive");
	p = malloc(1 << 20);
	check(p != NULL && (memset(p, 0x5a, 1 << 20), p[(1 << 20) - 1] == 0x5a), "malloc_1mib");
	free(p);
	check(strlen(argv[0]) > 0 && strcmp("quire", "quire") == 0, "libc_strings");
	printf("%sok 1 hello\n", failed ? "not " : "");
	return failed;
}
