/*
 * The interval timers: getitimer(2), setitimer(2) and alarm(2), as Linux
 * 6.12's kernel/time/itimer.c behaves (docs/timers.md).
 *
 * ITIMER_REAL counts wall-clock time: when it expires, a kernel timer
 * (kernel/timer.c) sends SIGALRM to the process, with si_code SI_KERNEL
 * as Linux's alarm does. An interval timer is armed again when that
 * SIGALRM is taken for delivery (itimer_real_rearm, from
 * dequeue_signal), at the next multiple of the interval after the last
 * expiry, as Linux does: while the signal waits (blocked, or its handler
 * has not run yet) the timer stays disarmed and getitimer says 0.
 * Resolution: the 10 ms tick.
 *
 * ITIMER_VIRTUAL (user CPU time) and ITIMER_PROF (user and kernel) count
 * the process's CPU time as the timer tick samples it (kernel/cputime.c):
 * every tick that finds one of the process's threads running takes a tick
 * off them (VIRTUAL only when it found it in user mode). One that runs
 * out sends SIGVTALRM or SIGPROF to the process and starts its interval
 * again, the tick's overshoot taken off, as Linux's CPU itimers do.
 * Resolution: the tick, so a value is rounded up to whole ticks of CPU time.
 */
#define pr_fmt(fmt) "itimer: " fmt
#include <quire/itimer.h>
#include <quire/signal.h>
#include <quire/syscalls.h>
#include <quire/uaccess.h>
#include <quire/errno.h>
#include <quire/mutex.h>
#include <quire/printk.h>
#include <quire/time.h>
#include <quire/kernel.h>
#include <quire/uapi/time.h>

#define NSEC_PER_USEC	1000ULL
#define KTIME_MAX	((u64)0x7fffffffffffffffLL)	/* Linux saturates there */

/* A valid timeval (setitimer's EINVAL otherwise), in ns, saturated at KTIME_MAX. */
static bool timeval_to_ns(const struct timeval *tv, u64 *ns)
{
	if (tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= 1000000)
		return false;
	if ((u64)tv->tv_sec >= KTIME_MAX / NSEC_PER_SEC)
		*ns = KTIME_MAX;
	else
		*ns = (u64)tv->tv_sec * NSEC_PER_SEC + (u64)tv->tv_usec * NSEC_PER_USEC;
	return true;
}

/* Microseconds truncate, as Linux's conversion from its timespec does. */
static struct timeval ns_to_timeval(u64 ns)
{
	return (struct timeval){ (long)(ns / NSEC_PER_SEC),
				 (long)(ns % NSEC_PER_SEC / NSEC_PER_USEC) };
}

/*
 * Time left on t's ITIMER_REAL, in ns: 0 when disarmed; an armed timer
 * whose time has passed but whose function has not run says 1 us, as
 * Linux's itimer_get_remtime does, so that it never looks disarmed.
 */
static u64 real_remaining(struct task *t)
{
	u64 expires, now;

	if (!timer_active(&t->real_timer, &expires))
		return 0;
	now = ktime_get_ns();
	return expires > now ? expires - now : NSEC_PER_USEC;
}

static void it_real_fn(struct timer_list *timer)
{
	struct task *t = container_of(timer, struct task, real_timer);

	send_sig_kernel(SIGALRM, t);
}

/* The interval, under siglock: itimer_real_rearm reads it there at delivery. */
static void set_interval(struct task *t, u64 interval)
{
	unsigned long flags = arch_local_irq_save();

	spin_lock(&t->sighand->siglock);
	t->it_real_incr = interval;
	spin_unlock(&t->sighand->siglock);
	arch_local_irq_restore(flags);
}

static void __set_real(struct task *t, u64 value, u64 interval, u64 *old_value,
		       u64 *old_interval)
{
	*old_value = real_remaining(t);
	*old_interval = t->it_real_incr;
	/* No interval first (the re-arm on delivery reads it), then stop. */
	set_interval(t, 0);
	del_timer_sync(&t->real_timer);		/* an expiry running elsewhere finishes first */
	if (!value)
		return;
	set_interval(t, interval);
	if (!t->real_timer.function)
		timer_setup(&t->real_timer, it_real_fn);
	mod_timer(&t->real_timer, ktime_get_ns() + min(value, KTIME_MAX));
}

/* Two threads of a process setting its timer at once take turns (a rare call). */
static DEFINE_MUTEX(itimer_mutex);

/*
 * Arm t's ITIMER_REAL for value ns from now, then every interval ns (0:
 * once); value 0 disarms it (and forgets the interval). The old setting
 * in *old_value and *old_interval. t is the caller's group leader: a
 * process has one ITIMER_REAL, whichever thread sets it.
 */
static void set_real(struct task *t, u64 value, u64 interval, u64 *old_value, u64 *old_interval)
{
	mutex_lock(&itimer_mutex);
	__set_real(t, value, interval, old_value, old_interval);
	mutex_unlock(&itimer_mutex);
}

void itimer_real_rearm(struct task *t)
{
	u64 incr = t->it_real_incr, expires = t->real_timer.expires, now;

	lockdep_assert_held(&t->sighand->siglock);
	if (!incr || timer_pending(&t->real_timer))
		return;
	/* The first period boundary after now, counted from the last expiry (Linux's hrtimer_forward). */
	now = ktime_get_ns();
	if (now >= expires) {
		u64 periods = (now - expires) / incr + 1;

		expires = periods > (KTIME_MAX - expires) / incr ? KTIME_MAX : expires + periods * incr;
	}
	mod_timer(&t->real_timer, expires);
}

void exit_itimers(struct task *t)
{
	t->it_real_incr = 0;
	del_timer_sync(&t->real_timer);
}

/* ---- ITIMER_VIRTUAL and ITIMER_PROF ---- */

void itimer_cpu_tick(struct task *t, bool user, u64 tick_ns)
{
	struct task *leader = t->group_leader;
	bool fired[2] = { false, false };

	spin_lock(&t->sighand->siglock);		/* interrupts are off: the tick */
	for (int i = 0; i < 2; i++) {
		u64 *value = &leader->it_cpu[i].value, incr = leader->it_cpu[i].incr;

		if (!*value || (i == 0 && !user))
			continue;
		if (*value > tick_ns) {
			*value -= tick_ns;
			continue;
		}
		fired[i] = true;
		/* The next period starts at the expiry, so the overshoot counts against it. */
		*value = incr > tick_ns - *value ? incr - (tick_ns - *value) : incr;
	}
	spin_unlock(&t->sighand->siglock);
	if (fired[0])
		send_sig_kernel(SIGVTALRM, leader);
	if (fired[1])
		send_sig_kernel(SIGPROF, leader);
}

/* Read, and set unless value is NULL, a CPU itimer of t's process (0 VIRTUAL, 1 PROF). */
static void cpu_itimer(struct task *t, int i, const u64 *value, u64 interval, u64 *old_value,
		       u64 *old_interval)
{
	struct task *leader = t->group_leader;
	unsigned long flags = arch_local_irq_save();

	spin_lock(&t->sighand->siglock);
	*old_value = leader->it_cpu[i].value;
	*old_interval = leader->it_cpu[i].incr;
	if (value) {
		leader->it_cpu[i].value = min(*value, KTIME_MAX);
		leader->it_cpu[i].incr = *value ? interval : 0;
	}
	spin_unlock(&t->sighand->siglock);
	arch_local_irq_restore(flags);
}

long sys_getitimer(u64 which, u64 uvalue, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct itimerval v = { 0 };

	switch (which) {
	case ITIMER_REAL:
		v.it_value = ns_to_timeval(real_remaining(current->group_leader));
		v.it_interval = ns_to_timeval(current->group_leader->it_real_incr);
		break;
	case ITIMER_VIRTUAL:
	case ITIMER_PROF: {
		u64 value, interval;

		cpu_itimer(current, (int)which - ITIMER_VIRTUAL, NULL, 0, &value, &interval);
		v.it_value = ns_to_timeval(value);
		v.it_interval = ns_to_timeval(interval);
		break;
	}
	default:
		return -EINVAL;
	}
	return copy_to_user((void *)uvalue, &v, sizeof(v)) ? -EFAULT : 0;
}

long sys_setitimer(u64 which, u64 unew, u64 uold, u64 a3, u64 a4, u64 a5)
{
	struct itimerval nv = { 0 }, ov = { 0 };
	u64 value = 0, interval = 0, old_value, old_interval;

	if (unew) {
		if (copy_from_user(&nv, (void *)unew, sizeof(nv)))
			return -EFAULT;
		if (!timeval_to_ns(&nv.it_value, &value) || !timeval_to_ns(&nv.it_interval, &interval))
			return -EINVAL;
	} else {
		static bool said;

		/* Linux takes NULL as "disarm", with this warning. */
		if (!__atomic_exchange_n(&said, true, __ATOMIC_RELAXED))
			pr_warn("%s calls setitimer() with new_value NULL pointer\n", current->comm);
	}
	switch (which) {
	case ITIMER_REAL:
		set_real(current->group_leader, value, interval, &old_value, &old_interval);
		ov.it_value = ns_to_timeval(old_value);
		ov.it_interval = ns_to_timeval(old_interval);
		break;
	case ITIMER_VIRTUAL:
	case ITIMER_PROF:
		cpu_itimer(current, (int)which - ITIMER_VIRTUAL, &value, interval, &old_value,
			   &old_interval);
		ov.it_value = ns_to_timeval(old_value);
		ov.it_interval = ns_to_timeval(old_interval);
		break;
	default:
		return -EINVAL;
	}
	if (uold && copy_to_user((void *)uold, &ov, sizeof(ov)))
		return -EFAULT;
	return 0;
}

/*
 * alarm: ITIMER_REAL for seconds, once (0: cancel). Returns the seconds
 * the previous alarm had left, rounded to the nearest second but never 0
 * for one still pending, as Linux's alarm_setitimer.
 */
long sys_alarm(u64 seconds, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 old_value, old_interval, secs, rest;

	set_real(current->group_leader, (u64)(u32)seconds * NSEC_PER_SEC, 0, &old_value, &old_interval);
	secs = old_value / NSEC_PER_SEC;
	rest = old_value % NSEC_PER_SEC;
	if ((!secs && rest) || rest >= NSEC_PER_SEC / 2)
		secs++;
	return (long)secs;
}
