/*
 * The clocks and CPU-time accounting from ring 3 (docs/timers.md,
 * docs/syscalls.md): CLOCK_REALTIME from the battery-backed clock and
 * clock_settime; gettimeofday and time; clock_getres; the CPU-time clocks;
 * realtime deadlines of clock_nanosleep and of futex (FUTEX_CLOCK_REALTIME);
 * getrusage (self, thread, children), wait4's rusage and times. Prints KTAP;
 * run under /bin/init by the time-numa3 job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/times.h>
#include <sys/wait.h>
#include "ktap.h"

/* Linux's uapi/linux/futex.h (musl has no kernel headers). */
#define FUTEX_WAIT_BITSET	9
#define FUTEX_CLOCK_REALTIME	256
#define FUTEX_BITSET_MATCH_ANY	0xffffffffU

#define PAGE 4096UL
#define NS 1000000000LL
/* 2024-01-01 00:00:00 UTC: any RTC of a machine running this is later. */
#define SOME_RECENT_TIME 1704067200LL

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * NS + t->tv_nsec;
}

static int64_t clock_ns(clockid_t c)
{
	struct timespec t;

	return syscall(SYS_clock_gettime, c, &t) ? -1 : ts_ns(&t);
}

static struct timespec ns_ts(int64_t ns)
{
	return (struct timespec){ (time_t)(ns / NS), (long)(ns % NS) };
}

static int64_t tv_us(const struct timeval *tv)
{
	return (int64_t)tv->tv_sec * 1000000 + tv->tv_usec;
}

/* Spin for ms milliseconds of CLOCK_MONOTONIC: user-mode CPU time. */
static void spin_ms(long ms)
{
	int64_t end = clock_ns(CLOCK_MONOTONIC) + ms * 1000000LL;
	volatile unsigned long x = 0;

	while (clock_ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
}

static void case_realtime_from_rtc(void)
{
	int64_t rt = clock_ns(CLOCK_REALTIME), mono = clock_ns(CLOCK_MONOTONIC);
	struct timeval tv;
	time_t t;

	CHECK(rt / NS > SOME_RECENT_TIME);	/* not "seconds since boot" any more */
	CHECK(mono >= 0 && mono / NS < SOME_RECENT_TIME);
	CHECK(llabs(clock_ns(CLOCK_REALTIME_COARSE) - rt) < 2 * NS);
	CHECK(llabs(clock_ns(CLOCK_TAI) - rt) < 2 * NS);
	CHECK(llabs(clock_ns(CLOCK_BOOTTIME) - mono) < 2 * NS);
	{
		/* A new file's times are wall-clock times. */
		struct stat st;
		int fd = open("/tmp/time-stamp", O_RDWR | O_CREAT | O_TRUNC, 0644);

		CHECK(fd >= 0 && fstat(fd, &st) == 0);
		CHECK(llabs((long long)st.st_mtime - rt / NS) <= 2);
		close(fd);
		unlink("/tmp/time-stamp");
	}
	CHECK(syscall(SYS_gettimeofday, &tv, NULL) == 0);
	CHECK(llabs(tv_us(&tv) - rt / 1000) < 2000000);
	t = (time_t)syscall(SYS_time, NULL);
	CHECK(llabs((long long)t - rt / NS) <= 2);
	CHECK(syscall(SYS_time, &t) == t && llabs((long long)t - rt / NS) <= 2);
	errno = 0;
	CHECK(syscall(SYS_gettimeofday, (void *)8, NULL) == -1 && errno == EFAULT);
	CHECK(syscall(SYS_clock_gettime, 99, &tv) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_clock_gettime, CLOCK_REALTIME, (void *)8) == -1 && errno == EFAULT);
	ktap_report("realtime_from_rtc", NULL);
}

static void case_clock_settime_getres(void)
{
	struct timespec t, res;
	int64_t before = clock_ns(CLOCK_REALTIME), mono = clock_ns(CLOCK_MONOTONIC);

	t = ns_ts(before + 1000 * NS);
	CHECK(syscall(SYS_clock_settime, CLOCK_REALTIME, &t) == 0);
	CHECK(llabs(clock_ns(CLOCK_REALTIME) - (before + 1000 * NS)) < 2 * NS);
	CHECK(llabs(clock_ns(CLOCK_MONOTONIC) - mono) < 2 * NS);	/* untouched */
	t = ns_ts(clock_ns(CLOCK_REALTIME) - 1000 * NS);
	CHECK(syscall(SYS_clock_settime, CLOCK_REALTIME, &t) == 0);
	CHECK(llabs(clock_ns(CLOCK_REALTIME) - before) < 2 * NS);
	errno = 0;
	CHECK(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &t) == -1 && errno == EINVAL);
	t.tv_nsec = NS;
	CHECK(syscall(SYS_clock_settime, CLOCK_REALTIME, &t) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_clock_settime, CLOCK_REALTIME, (void *)8) == -1 && errno == EFAULT);

	CHECK(syscall(SYS_clock_getres, CLOCK_MONOTONIC, &res) == 0 &&
	      res.tv_sec == 0 && res.tv_nsec == 1);
	CHECK(syscall(SYS_clock_getres, CLOCK_REALTIME, &res) == 0 && res.tv_nsec == 1);
	CHECK(syscall(SYS_clock_getres, CLOCK_MONOTONIC_COARSE, &res) == 0 &&
	      res.tv_sec == 0 && res.tv_nsec > 1);
	CHECK(syscall(SYS_clock_getres, CLOCK_PROCESS_CPUTIME_ID, NULL) == 0);
	CHECK(syscall(SYS_clock_getres, 99, &res) == -1 && errno == EINVAL);
	ktap_report("clock_settime_and_getres", NULL);
}

static void case_cputime_clocks(void)
{
	int64_t p0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	int64_t p1, t1;
	struct timespec nap = { 0, 100 * 1000000L };

	spin_ms(60);
	p1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	t1 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	CHECK(p1 - p0 >= 50 * 1000000LL);	/* it ran; a wall clock would too... */
	CHECK(t1 - t0 >= 50 * 1000000LL);
	CHECK(t1 <= p1 + 1000000);
	nanosleep(&nap, NULL);
	/* ...but a sleep costs (almost) no CPU time */
	CHECK(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p1 < 50 * 1000000LL);
	ktap_report("cputime_clocks", NULL);
}

static void case_realtime_deadlines(void)
{
	static uint32_t word;
	int64_t m0 = clock_ns(CLOCK_MONOTONIC), waited;
	struct timespec dl = ns_ts(clock_ns(CLOCK_REALTIME) + 60 * 1000000LL);
	struct timespec raw = { 0, 1000 };

	CHECK(syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &dl, NULL) == 0);
	waited = clock_ns(CLOCK_MONOTONIC) - m0;
	CHECK(waited >= 55 * 1000000LL && waited < 5 * NS);

	m0 = clock_ns(CLOCK_MONOTONIC);
	dl = ns_ts(clock_ns(CLOCK_REALTIME) + 60 * 1000000LL);
	errno = 0;
	CHECK(syscall(SYS_futex, &word, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 0, &dl, NULL,
		      FUTEX_BITSET_MATCH_ANY) == -1 && errno == ETIMEDOUT);
	waited = clock_ns(CLOCK_MONOTONIC) - m0;
	CHECK(waited >= 55 * 1000000LL && waited < 5 * NS);
	/* A realtime deadline in the past returns at once. */
	dl = ns_ts(clock_ns(CLOCK_REALTIME) - NS);
	m0 = clock_ns(CLOCK_MONOTONIC);
	CHECK(syscall(SYS_futex, &word, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, 0, &dl, NULL,
		      FUTEX_BITSET_MATCH_ANY) == -1 && errno == ETIMEDOUT);
	CHECK(syscall(SYS_clock_nanosleep, CLOCK_REALTIME, TIMER_ABSTIME, &dl, NULL) == 0);
	CHECK(clock_ns(CLOCK_MONOTONIC) - m0 < NS);
	CHECK(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC_RAW, 0, &raw, NULL) == -1 &&
	      errno == EOPNOTSUPP);
	ktap_report("realtime_deadlines", NULL);
}

static void case_getrusage_self(void)
{
	struct rusage a, b, th;
	char *p;
	int i;

	CHECK(getrusage(RUSAGE_SELF, &a) == 0);
	spin_ms(60);
	p = mmap(NULL, 64 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	for (i = 0; i < 64; i++)
		p[i * PAGE] = 1;
	CHECK(getrusage(RUSAGE_SELF, &b) == 0);
	CHECK(tv_us(&b.ru_utime) + tv_us(&b.ru_stime) -
	      tv_us(&a.ru_utime) - tv_us(&a.ru_stime) >= 50000);
	CHECK(tv_us(&b.ru_utime) >= tv_us(&a.ru_utime));
	CHECK(b.ru_minflt - a.ru_minflt >= 64);		/* one per page touched */
	CHECK(b.ru_minflt - a.ru_minflt < 64 + 200);
	CHECK(b.ru_nvcsw + b.ru_nivcsw >= a.ru_nvcsw + a.ru_nivcsw);
	CHECK(getrusage(RUSAGE_THREAD, &th) == 0);
	CHECK(tv_us(&th.ru_utime) + tv_us(&th.ru_stime) <=
	      tv_us(&b.ru_utime) + tv_us(&b.ru_stime) + 20000);
	munmap(p, 64 * PAGE);
	errno = 0;
	CHECK(getrusage(5, &a) == -1 && errno == EINVAL);
	CHECK(getrusage(RUSAGE_SELF, (void *)8) == -1 && errno == EFAULT);
	ktap_report("getrusage_self_and_thread", NULL);
}

static void case_rusage_of_children(void)
{
	struct rusage before, child, after;
	struct tms t0, t1;
	clock_t c0, c1;
	int status;
	pid_t pid;

	CHECK(getrusage(RUSAGE_CHILDREN, &before) == 0);
	c0 = times(&t0);
	pid = fork();
	if (pid == 0) {
		spin_ms(80);
		_exit(3);
	}
	CHECK(pid > 0);
	CHECK(syscall(SYS_wait4, pid, &status, 0, &child) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3);
	CHECK(tv_us(&child.ru_utime) + tv_us(&child.ru_stime) >= 70000);
	CHECK(child.ru_minflt > 0);	/* a forked child faults on its first writes */
	CHECK(getrusage(RUSAGE_CHILDREN, &after) == 0);
	CHECK(tv_us(&after.ru_utime) + tv_us(&after.ru_stime) -
	      tv_us(&before.ru_utime) - tv_us(&before.ru_stime) >= 70000);
	c1 = times(&t1);
	CHECK(c1 - c0 >= 8);			/* 80 ms at USER_HZ 100 */
	CHECK((t1.tms_cutime + t1.tms_cstime) - (t0.tms_cutime + t0.tms_cstime) >= 7);
	CHECK(t1.tms_utime + t1.tms_stime >= t0.tms_utime + t0.tms_stime);
	errno = 0;
	CHECK(syscall(SYS_times, (void *)8) == -1 && errno == EFAULT);
	ktap_report("rusage_of_children_and_times", NULL);
}

static volatile int vtalrms, profs;

static void on_cpu_timer(int sig)
{
	if (sig == SIGVTALRM)
		vtalrms++;
	else if (sig == SIGPROF)
		profs++;
}

static void case_cpu_itimers(void)
{
	struct itimerval every50 = { { 0, 50000 }, { 0, 50000 } }, off = { { 0, 0 }, { 0, 0 } };
	struct itimerval cur, old;
	struct timespec nap = { 0, 300 * 1000000L };
	int v;

	signal(SIGVTALRM, on_cpu_timer);
	signal(SIGPROF, on_cpu_timer);
	CHECK(setitimer(ITIMER_VIRTUAL, &every50, NULL) == 0);
	CHECK(setitimer(ITIMER_PROF, &every50, NULL) == 0);
	CHECK(getitimer(ITIMER_VIRTUAL, &cur) == 0 && cur.it_interval.tv_usec == 50000 &&
	      cur.it_value.tv_sec == 0 && cur.it_value.tv_usec > 0 && cur.it_value.tv_usec <= 50000);
	/* Sleeping uses no CPU time: neither fires. */
	nanosleep(&nap, NULL);
	CHECK(vtalrms == 0 && profs == 0);
	/* 400 ms of spinning: about 8 of each (one per 50 ms of CPU time). */
	spin_ms(400);
	v = vtalrms;
	CHECK(v >= 4 && v <= 10);
	CHECK(profs >= 4 && profs <= 10);
	printf("    # %d SIGVTALRM, %d SIGPROF in 400 ms of CPU time\n", v, profs);
	CHECK(setitimer(ITIMER_VIRTUAL, &off, &old) == 0 && old.it_interval.tv_usec == 50000);
	CHECK(setitimer(ITIMER_PROF, &off, NULL) == 0);
	CHECK(getitimer(ITIMER_VIRTUAL, &cur) == 0 && cur.it_value.tv_usec == 0 &&
	      cur.it_interval.tv_usec == 0);
	spin_ms(100);
	CHECK(vtalrms == v);		/* disarmed: no more */
	/* One shot, no interval: fires once. */
	vtalrms = 0;
	every50.it_interval.tv_usec = 0;
	CHECK(setitimer(ITIMER_VIRTUAL, &every50, NULL) == 0);
	spin_ms(200);
	CHECK(vtalrms == 1);
	signal(SIGVTALRM, SIG_DFL);
	signal(SIGPROF, SIG_DFL);
	ktap_report("cpu_itimers", NULL);
}

int main(void)
{
	ktap_begin("time", 7);
	case_realtime_from_rtc();
	case_clock_settime_getres();
	case_cputime_clocks();
	case_realtime_deadlines();
	case_getrusage_self();
	case_rusage_of_children();
	case_cpu_itimers();
	return ktap_finish();
}
