/*
 * The interval timers' structures, as Linux x86-64 lays them out for
 * getitimer(2) and setitimer(2) (Linux's __kernel_old_timeval and
 * __kernel_old_itimerval), and the timers' numbers.
 */
#ifndef QUIRE_UAPI_TIME_H
#define QUIRE_UAPI_TIME_H

#include <quire/types.h>

#define ITIMER_REAL	0	/* wall-clock time: SIGALRM */
#define ITIMER_VIRTUAL	1	/* the process's user CPU time: SIGVTALRM */
#define ITIMER_PROF	2	/* its user and system CPU time: SIGPROF */

struct timeval {
	long tv_sec;
	long tv_usec;		/* 0 .. 999999 */
};

struct itimerval {
	struct timeval it_interval;	/* re-armed with this after it fires; 0: once */
	struct timeval it_value;	/* time left; 0: disarmed */
};

_Static_assert(sizeof(struct timeval) == 16, "Linux's x86-64 struct timeval");
_Static_assert(sizeof(struct itimerval) == 32, "Linux's x86-64 struct itimerval");

#endif
