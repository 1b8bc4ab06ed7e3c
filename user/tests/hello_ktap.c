/*
 * The first ring-3 test: a KTAP suite of small checks of the process a
 * static musl program starts in (arguments, environment, stdout, getpid,
 * malloc, libc's formatting), printed with the ring-3 KTAP helper.
 * Exits 0 when every check passed.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "ktap.h"

int main(int argc, char **argv)
{
	static const char msg[] = "    # hello from ring 3\n";
	const char *home = getenv("HOME"), *path = getenv("PATH");
	char buf[32];
	char *p;

	ktap_begin("hello", 6);
	CHECK(argc >= 1 && argv[0] != NULL && strstr(argv[0], "hello_ktap") != NULL);
	ktap_report("argv_names_the_program", NULL);
	/* Both the kernel (init=) and /bin/init give HOME=/ and a PATH with /tests. */
	CHECK(home != NULL && strcmp(home, "/") == 0);
	CHECK(path != NULL && strstr(path, "/tests") != NULL);
	ktap_report("environment", NULL);
	CHECK(write(1, msg, sizeof(msg) - 1) == (ssize_t)sizeof(msg) - 1);
	ktap_report("write_stdout", NULL);
	CHECK(getpid() > 0);
	CHECK(getppid() != 0 || getpid() == 1);	/* started by the kernel: pid 1, as on Linux */
	ktap_report("getpid_positive", NULL);
	p = malloc(1 << 20);
	CHECK(p != NULL && (memset(p, 0x5a, 1 << 20), p[(1 << 20) - 1] == 0x5a));
	free(p);
	ktap_report("malloc_1mib", NULL);
	CHECK(snprintf(buf, sizeof(buf), "%d:%s:%#x", -42, argc >= 1 ? "q" : "", 255) == 10);
	CHECK(strcmp(buf, "-42:q:0xff") == 0);
	ktap_report("libc_formatting", NULL);
	return ktap_finish();
}
