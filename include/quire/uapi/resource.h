/*
 * getrusage(2), times(2) and the resource limits, as Linux x86-64 lays
 * them out (struct rusage, struct tms, struct rlimit64).
 */
#ifndef QUIRE_UAPI_RESOURCE_H
#define QUIRE_UAPI_RESOURCE_H

#include <quire/uapi/time.h>

#define RUSAGE_SELF	0
#define RUSAGE_CHILDREN	(-1)
#define RUSAGE_THREAD	1

struct rusage {
	struct timeval ru_utime;	/* user time */
	struct timeval ru_stime;	/* system time */
	long ru_maxrss;			/* peak resident set, KiB */
	long ru_ixrss, ru_idrss, ru_isrss;	/* unused on Linux: 0 */
	long ru_minflt, ru_majflt;	/* page faults without and with I/O */
	long ru_nswap;			/* 0 */
	long ru_inblock, ru_oublock;	/* block I/O: none without a disk */
	long ru_msgsnd, ru_msgrcv, ru_nsignals;	/* unused on Linux: 0 */
	long ru_nvcsw, ru_nivcsw;	/* voluntary and involuntary switches */
};

/* times(2): clock ticks of USER_HZ. */
struct tms {
	long tms_utime, tms_stime, tms_cutime, tms_cstime;
};

#define USER_HZ		100

/* The resource limits (getrlimit, setrlimit, prlimit64). */
#define RLIMIT_CPU	0	/* CPU time, s */
#define RLIMIT_FSIZE	1	/* file size */
#define RLIMIT_DATA	2	/* data segment */
#define RLIMIT_STACK	3	/* stack */
#define RLIMIT_CORE	4	/* core file */
#define RLIMIT_RSS	5
#define RLIMIT_NPROC	6	/* processes */
#define RLIMIT_NOFILE	7	/* open files: one more than the highest fd */
#define RLIMIT_MEMLOCK	8	/* locked memory */
#define RLIMIT_AS	9	/* address space */
#define RLIMIT_LOCKS	10
#define RLIMIT_SIGPENDING 11	/* queued signals */
#define RLIMIT_MSGQUEUE	12
#define RLIMIT_NICE	13
#define RLIMIT_RTPRIO	14
#define RLIMIT_RTTIME	15
#define RLIM_NLIMITS	16
#define RLIM_INFINITY	(~0UL)

/*
 * struct rlimit64 { u64 rlim_cur, rlim_max; } is in quire/sched.h (the
 * tasks keep them); struct rlimit of getrlimit/setrlimit has its layout.
 */

_Static_assert(sizeof(struct rusage) == 144, "Linux's x86-64 struct rusage");
_Static_assert(sizeof(struct tms) == 32, "Linux's x86-64 struct tms");

#endif
