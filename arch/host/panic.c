/*
 * panic() and backtraces for the host build: a kernel panic in a host test
 * is a test failure, so print the message and abort (ASan then shows the
 * stack).
 */
#include <stdio.h>
#include <stdlib.h>
#include <quire/panic.h>
#include <quire/stacktrace.h>

int panic_in_progress;

void panic_at(const char *file, int line, const char *func, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "Kernel panic - not syncing: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  at %s:%d in %s()\n", file, line, func);
	abort();
}

void dump_stack(void)
{
	fprintf(stderr, "(dump_stack: host build, no kernel backtrace)\n");
}
