/*
 * The clocks and the sleeps: clock_gettime, clock_getres, clock_settime,
 * gettimeofday, time, nanosleep and clock_nanosleep, with Linux's clock ids.
 *
 * Every clock counts from one source, ktime_get_ns (nanoseconds since
 * boot, from the TSC). CLOCK_MONOTONIC and BOOTTIME read it as it is (a
 * Quire machine never suspends, so the two agree). CLOCK_REALTIME adds an
 * offset: the wall-clock time at boot, read from the battery-backed clock
 * (read_persistent_clock, arch/), changed by clock_settime. The CPU-time
 * clocks read the scheduler's exact run time (kernel/cputime.c).
 */
#define pr_fmt(fmt) "time: " fmt
#include <quire/time.h>
#include <quire/cputime.h>
#include <quire/sched.h>
#include <quire/signal.h>
#include <quire/syscalls.h>
#include <quire/uaccess.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/uapi/time.h>

#define CLOCK_REALTIME			0
#define CLOCK_MONOTONIC			1
#define CLOCK_PROCESS_CPUTIME_ID	2
#define CLOCK_THREAD_CPUTIME_ID		3
#define CLOCK_MONOTONIC_RAW		4
#define CLOCK_REALTIME_COARSE		5
#define CLOCK_MONOTONIC_COARSE		6
#define CLOCK_BOOTTIME			7
#define CLOCK_REALTIME_ALARM		8
#define CLOCK_BOOTTIME_ALARM		9
#define CLOCK_TAI			11
#define TIMER_ABSTIME			1
#define TICK_NSEC			SCHED_SLICE_NS	/* the coarse clocks' resolution */

/* Wall-clock time at boot (ns since 1970): CLOCK_REALTIME - ktime_get_ns. */
static s64 realtime_offset;

void timekeeping_init(void)
{
	u64 secs = read_persistent_clock();

	if (!secs)
		pr_warn("no battery-backed clock: CLOCK_REALTIME starts at 1970-01-01\n");
	__atomic_store_n(&realtime_offset, (s64)(secs * NSEC_PER_SEC) - (s64)ktime_get_ns(),
			 __ATOMIC_RELAXED);
}

u64 ktime_get_real_ns(void)
{
	return ktime_get_ns() + (u64)__atomic_load_n(&realtime_offset, __ATOMIC_RELAXED);
}

u64 ktime_real_to_mono(u64 real_ns)
{
	s64 mono = (s64)real_ns - __atomic_load_n(&realtime_offset, __ATOMIC_RELAXED);

	return mono < 0 ? 0 : (u64)mono;
}

static bool is_realtime(u64 clock)
{
	return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE ||
	       clock == CLOCK_REALTIME_ALARM || clock == CLOCK_TAI;
}

static bool is_monotonic(u64 clock)
{
	return clock == CLOCK_MONOTONIC || clock == CLOCK_MONOTONIC_RAW ||
	       clock == CLOCK_MONOTONIC_COARSE || clock == CLOCK_BOOTTIME ||
	       clock == CLOCK_BOOTTIME_ALARM;
}

/*
 * A clock's reading in ns, or -EINVAL. Negative ids are Linux's CPU clocks
 * of a given pid (clock_getcpuclockid): Quire has only the caller's, under
 * their fixed ids 2 and 3.
 */
static int clock_read(u64 clock, u64 *ns)
{
	struct task_cputime c;

	if (is_realtime(clock)) {
		*ns = ktime_get_real_ns();	/* TAI: no leap-second offset is set, as on a fresh Linux */
	} else if (is_monotonic(clock)) {
		*ns = ktime_get_ns();
	} else if (clock == CLOCK_PROCESS_CPUTIME_ID) {
		thread_group_cputime(current, &c);
		*ns = c.sum_exec_ns;
	} else if (clock == CLOCK_THREAD_CPUTIME_ID) {
		*ns = task_sched_runtime(current);
	} else {
		static bool reported;

		if ((s64)clock < 0 && !__atomic_exchange_n(&reported, true, __ATOMIC_RELAXED))
			pr_warn("pid %d (%s): CPU clocks of other processes (clock id %lld) "
				"are not implemented (-EINVAL)\n",
				current->tgid, current->comm, (long long)clock);
		return -EINVAL;
	}
	return 0;
}

static struct kernel_timespec ns_to_timespec(u64 ns)
{
	return (struct kernel_timespec){ (s64)(ns / NSEC_PER_SEC), (s64)(ns % NSEC_PER_SEC) };
}

int get_timespec_ns(u64 uts, u64 *ns)
{
	struct kernel_timespec ts;

	if (copy_from_user(&ts, (void *)uts, sizeof(ts)))
		return -EFAULT;
	if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= (s64)NSEC_PER_SEC)
		return -EINVAL;
	if ((u64)ts.tv_sec >= (u64)INT64_MAX / NSEC_PER_SEC)
		*ns = (u64)INT64_MAX;		/* saturate: "forever" */
	else
		*ns = (u64)ts.tv_sec * NSEC_PER_SEC + (u64)ts.tv_nsec;
	return 0;
}

static int put_timespec(u64 uts, u64 ns)
{
	struct kernel_timespec ts = ns_to_timespec(ns);

	return copy_to_user((void *)uts, &ts, sizeof(ts)) ? -EFAULT : 0;
}

long sys_clock_gettime(u64 clock, u64 uts, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 ns;
	int err = clock_read(clock, &ns);

	return err ? err : put_timespec(uts, ns);
}

/* Every clock counts in ns; the coarse ones move once a tick. NULL res: only the check. */
long sys_clock_getres(u64 clock, u64 uts, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 ns;
	int err = clock_read(clock, &ns);

	if (err || !uts)
		return err;
	return put_timespec(uts, clock == CLOCK_REALTIME_COARSE || clock == CLOCK_MONOTONIC_COARSE ?
				 TICK_NSEC : 1);
}

/* Only CLOCK_REALTIME can be set (every process runs as root: no EPERM). */
long sys_clock_settime(u64 clock, u64 uts, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 ns;
	int err;

	if (clock != CLOCK_REALTIME)
		return -EINVAL;
	err = get_timespec_ns(uts, &ns);
	if (err)
		return err;
	__atomic_store_n(&realtime_offset, (s64)ns - (s64)ktime_get_ns(), __ATOMIC_RELAXED);
	pr_info("pid %d (%s) set the clock\n", current->tgid, current->comm);
	return 0;
}

long sys_gettimeofday(u64 utv, u64 utz, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 ns = ktime_get_real_ns();
	struct timeval tv = { (long)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC / 1000) };
	int tz[2] = { 0, 0 };	/* struct timezone: UTC, no DST */

	if (utv && copy_to_user((void *)utv, &tv, sizeof(tv)))
		return -EFAULT;
	if (utz && copy_to_user((void *)utz, tz, sizeof(tz)))
		return -EFAULT;
	return 0;
}

long sys_time(u64 utloc, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	long t = (long)(ktime_get_real_ns() / NSEC_PER_SEC);

	if (utloc && copy_to_user((void *)utloc, &t, sizeof(t)))
		return -EFAULT;
	return t;
}

/*
 * Sleep until ktime_get_ns reads end. A signal ends a relative sleep with
 * the time left in *urem and -ERESTART_RESTARTBLOCK: -EINTR if a handler
 * runs, else (a stop, a signal without a handler) restart_syscall sleeps
 * on to the same end, as Linux. An absolute sleep returns -ERESTARTNOHAND
 * (restarted as it was).
 */
static long sleep_until(u64 end, u64 urem, bool relative);

static long nanosleep_restart(struct restart_block *rb)
{
	return sleep_until(rb->end_ns, rb->urem, true);
}

static long sleep_until(u64 end, u64 urem, bool relative)
{
	struct kernel_timespec ts;

	for (u64 now = ktime_get_ns(); now < end; now = ktime_get_ns()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (signal_pending(current)) {
			__set_current_state(TASK_RUNNING);
			if (!relative)
				return -ERESTARTNOHAND;
			ts = ns_to_timespec(end - now);
			if (urem && copy_to_user((void *)urem, &ts, sizeof(ts)))
				return -EFAULT;
			current->restart_block = (struct restart_block){
				.fn = nanosleep_restart, .end_ns = end, .urem = urem };
			return -ERESTART_RESTARTBLOCK;
		}
		schedule_timeout_ns(end - now);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

u64 deadline_after(u64 ns)
{
	u64 now = ktime_get_ns();

	return ns > (u64)INT64_MAX - now ? (u64)INT64_MAX : now + ns;
}

long sys_nanosleep(u64 ureq, u64 urem, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 ns;
	int err = get_timespec_ns(ureq, &ns);

	if (err)
		return err;
	return sleep_until(deadline_after(ns), urem, true);
}

/*
 * clock_nanosleep (glibc's nanosleep, sleep and usleep call it): the
 * realtime and monotonic clocks; TIMER_ABSTIME sleeps until that clock
 * reads the time given (a realtime deadline is converted once: a later
 * clock_settime does not move it). A CPU-time clock is -EOPNOTSUPP for the
 * process's (not implemented; logged) and -EINVAL for a thread's, as Linux.
 */
long sys_clock_nanosleep(u64 clock, u64 flags, u64 ureq, u64 urem, u64 a4, u64 a5)
{
	u64 t;
	int err;

	if (clock == CLOCK_PROCESS_CPUTIME_ID) {
		pr_warn("pid %d (%s): clock_nanosleep on CLOCK_PROCESS_CPUTIME_ID is not implemented "
			"(-EOPNOTSUPP)\n", current->tgid, current->comm);
		return -EOPNOTSUPP;
	}
	if (clock == CLOCK_MONOTONIC_RAW || clock == CLOCK_REALTIME_COARSE ||
	    clock == CLOCK_MONOTONIC_COARSE)
		return -EOPNOTSUPP;	/* Linux's: these clocks have no sleep */
	if (!is_realtime(clock) && !is_monotonic(clock))
		return -EINVAL;
	err = get_timespec_ns(ureq, &t);
	if (err)
		return err;
	if (flags & TIMER_ABSTIME)
		return sleep_until(is_realtime(clock) ? ktime_real_to_mono(t) : t, 0, false);
	return sleep_until(deadline_after(t), urem, true);
}
