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
/* Wall-clock time (CLOCK_REALTIME, ns since 1970): kernel/time.c. */
u64 ktime_get_real_ns(void);
/* A CLOCK_REALTIME reading as the ktime_get_ns reading of the same moment (0 if before boot). */
u64 ktime_real_to_mono(u64 real_ns);
/* Boot: start CLOCK_REALTIME from the battery-backed clock. */
void timekeeping_init(void);
/* The architecture's battery-backed clock: seconds since 1970 (UTC), 0 if none. */
u64 read_persistent_clock(void);
/* The TSC frequency, measured at boot. */
u64 tsc_khz(void);
void tsc_init(void);
/* A user timespec in ns, checked as Linux does (EFAULT, then EINVAL); saturates at INT64_MAX. */
int get_timespec_ns(u64 uts, u64 *ns);
/* The ktime_get_ns reading ns from now (INT64_MAX: forever). */
u64 deadline_after(u64 ns);
/* Busy-wait. */
void ndelay(u64 ns);
void mdelay(u64 ms);

#endif
