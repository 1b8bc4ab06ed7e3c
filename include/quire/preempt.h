/*
 * Preemption control. A CPU's preempt_count counts reasons not to switch
 * tasks (spinlocks held, explicit preempt_disable); the timer only preempts
 * at count 0, and preempt_enable() switches at once when a reschedule became
 * due meanwhile.
 */
#ifndef QUIRE_PREEMPT_H
#define QUIRE_PREEMPT_H

#include <quire/percpu.h>

/* Switch now if a reschedule is due (kernel/sched.c; a no-op on the host). */
void preempt_schedule(void);

static inline void preempt_disable(void)
{
	this_cpu_add_int(preempt_count, 1);
	__asm__ __volatile__("" ::: "memory");
}

static inline void preempt_enable_no_resched(void)
{
	__asm__ __volatile__("" ::: "memory");
	this_cpu_add_int(preempt_count, -1);
}

/* Switch now if preemption is allowed again and a reschedule is due. */
static inline void preempt_check_resched(void)
{
	if (this_cpu()->preempt_count == 0 && this_cpu()->need_resched)
		preempt_schedule();
}

static inline void preempt_enable(void)
{
	preempt_enable_no_resched();
	preempt_check_resched();
}

static inline int preempt_count(void)
{
	return this_cpu()->preempt_count;
}

#endif
