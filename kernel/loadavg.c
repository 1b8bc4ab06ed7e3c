/*
 * The load average, as Linux's kernel/sched/loadavg.c computes it: every
 * LOAD_FREQ (5 s) the number of tasks running or waiting for a CPU is
 * folded into three exponentially decaying averages (1, 5 and 15
 * minutes), in fixed point with FSHIFT (11) bits of fraction and Linux's
 * decay factors. Linux also counts tasks in uninterruptible sleep (disk
 * waits); Quire has no disk, and does not count them.
 * /proc/loadavg and sysinfo(2) read it.
 */
#include <quire/sched.h>
#include <quire/time.h>

#define LOAD_FREQ_NS	(5 * NSEC_PER_SEC)
#define EXP_1		1884		/* 1/exp(5s/1min) in fixed point */
#define EXP_5		2014		/* 1/exp(5s/5min) */
#define EXP_15		2037		/* 1/exp(5s/15min) */

static unsigned long avenrun[3];
static u64 next_update_ns = LOAD_FREQ_NS;

static unsigned long calc_load(unsigned long load, unsigned long exp, unsigned long active)
{
	unsigned long newload = load * exp + active * (FIXED_1 - exp);

	if (active >= load)
		newload += FIXED_1 - 1;		/* round up while rising, as Linux */
	return newload / FIXED_1;
}

void calc_global_load_tick(void)
{
	u64 now = ktime_get_ns();
	unsigned long active;

	if (now < __atomic_load_n(&next_update_ns, __ATOMIC_RELAXED))
		return;
	__atomic_store_n(&next_update_ns, now + LOAD_FREQ_NS, __ATOMIC_RELAXED);
	active = (unsigned long)sched_nr_active() * FIXED_1;
	__atomic_store_n(&avenrun[0], calc_load(avenrun[0], EXP_1, active), __ATOMIC_RELAXED);
	__atomic_store_n(&avenrun[1], calc_load(avenrun[1], EXP_5, active), __ATOMIC_RELAXED);
	__atomic_store_n(&avenrun[2], calc_load(avenrun[2], EXP_15, active), __ATOMIC_RELAXED);
}

void get_avenrun(unsigned long loads[3])
{
	for (int i = 0; i < 3; i++)
		loads[i] = __atomic_load_n(&avenrun[i], __ATOMIC_RELAXED);
}
