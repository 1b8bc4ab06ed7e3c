#ifndef QUIRE_TIME_H
#define QUIRE_TIME_H

#include <quire/types.h>

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL

/* Linux's struct __kernel_timespec, as clock_gettime, nanosleep and futex take it. */
struct kernel_timespec {
	s64 tv_sec;
	s64 tv_nsec;
};

/* Nanoseconds since the clock started (0 before tsc_init). */
u64 ktime_get_ns(void);
/* The TSC frequency, measured at boot. */
u64 tsc_khz(void);
void tsc_init(void);
/* Busy-wait. */
void ndelay(u64 ns);
void mdelay(u64 ms);

#endif
