/*
 * msleep for the host build (kernel/sched.c sleeps on the scheduler's
 * timers): the calling thread sleeps for real, so that the others run.
 */
#include <quire/types.h>
#include <time.h>

void msleep(u64 ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}
