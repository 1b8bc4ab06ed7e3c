/*
 * The host side of the arch interface that printk needs: the console and
 * the clock, for the generic code built into tests/host. Kernel messages
 * are dropped unless QUIRE_HOST_CONSOLE=1, so a test's stdout stays plain
 * KTAP; with it they go to stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <quire/printk.h>

void console_write(const char *s, size_t len)
{
	static int enabled = -1;

	if (enabled < 0) {
		const char *e = getenv("QUIRE_HOST_CONSOLE");

		enabled = e && !__builtin_strcmp(e, "1");
	}
	if (enabled)
		fwrite(s, 1, len, stderr);
}

u64 ktime_get_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}

u64 ktime_get_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
}
