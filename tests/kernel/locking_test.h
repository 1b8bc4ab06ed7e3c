/*
 * The "locking" suite is in two files: locking_test.c (the locks work, on
 * every online CPU) and locking_debug_test.c (each debug check fires on
 * purpose and is reported). Helpers they share live here.
 */
#ifndef TESTS_KERNEL_LOCKING_TEST_H
#define TESTS_KERNEL_LOCKING_TEST_H

#include <quire/ktest.h>
#include <quire/preempt.h>
#include <quire/sched.h>

/* Threads started by start_on_each_cpu, one per online CPU, bound there. */
struct cpu_threads {
	struct task *task[MAX_CPUS];
	int nr;
};

/* Start fn(arg) on every online CPU; returns how many started. */
int start_on_each_cpu(struct cpu_threads *ct, int (*fn)(void *), void *arg, const char *name);
/* Start fn(arg) bound to one CPU. */
struct task *start_on_cpu(int cpu, int (*fn)(void *), void *arg, const char *name);
/* Join them all; returns the sum of their results. */
int join_all(struct cpu_threads *ct);
/* An online CPU other than cpu, or -1 when there is only one. */
int other_cpu(int cpu);
/* Keep the calling task on the CPU it runs on now (returns it), and let it go again. */
int pin_self(void);
void unpin_self(void);
/* Poll (sleeping 1 ms at a time) until cond, at most ms milliseconds; the value of cond. */
#define poll_until(cond, ms)						\
	({								\
		u64 __end = ktime_get_ns() + (u64)(ms) * NSEC_PER_MSEC;	\
		while (!(cond) && ktime_get_ns() < __end)		\
			msleep(1);					\
		(bool)(cond);						\
	})

void debug_spinlock_tracks_owner(struct ktest *t);
void debug_spinlock_recursion(struct ktest *t);
void debug_spinlock_unlock_by_other_cpu(struct ktest *t);
void debug_spinlock_unlock_unlocked(struct ktest *t);
void debug_spinlock_held_too_long(struct ktest *t);
void debug_might_sleep_with_spinlock(struct ktest *t);
void debug_might_sleep_irqs_off(struct ktest *t);
void debug_might_sleep_quiet_when_allowed(struct ktest *t);
void debug_mutex_recursion_and_bad_unlock(struct ktest *t);
void debug_rwsem_recursion_and_bad_unlock(struct ktest *t);

#endif
