/*
 * CPU time and fault counts of threads and processes (kernel/cputime.c),
 * for getrusage, times, wait4's rusage and the CPU-time clocks.
 *
 * A thread's total run time is exact: the scheduler adds each slice to
 * task->runtime_ns at a switch. How it splits into user and system time is
 * sampled, as Linux does without VIRT_CPU_ACCOUNTING: each timer tick
 * charges one tick to the mode the CPU was interrupted in, and the exact
 * total is shared out in the ratio of those samples (Linux's
 * cputime_adjust). A process's figures are its live threads' plus those of
 * its threads that have ended, kept on the group leader, which lives until
 * the process is reaped; a reaped child's figures (its own and its reaped
 * children's) are added to the parent's "children" figures.
 */
#ifndef QUIRE_CPUTIME_H
#define QUIRE_CPUTIME_H

#include <quire/types.h>

struct task;

struct task_cputime {
	u64 utime_ns, stime_ns;		/* tick samples, by mode */
	u64 sum_exec_ns;		/* exact run time */
	u64 min_flt, maj_flt;		/* page faults resolved (all minor: no disk) */
	u64 nvcsw, nivcsw;		/* switches: gave up the CPU / were preempted */
};

/*
 * The last user/system split reported from a set of figures: later
 * reports never go below it (Linux's prev_cputime), although the samples'
 * ratio may move.
 */
struct prev_cputime {
	u64 utime_ns, stime_ns;
};

/* Timer tick on this CPU: charge one tick to current, in user or kernel mode. */
void account_process_tick(bool user, u64 tick_ns);
/* A user page fault of current was resolved. */
void account_page_fault(void);
/* The ticks a CPU spent in user mode, in the kernel and idle (/proc/stat). */
void cpu_times(int cpu, u64 *user, u64 *system, u64 *idle);
/* Exact run time of a thread, the slice now running included. */
u64 task_sched_runtime(struct task *t);
/* Everything of the process t belongs to: live threads and ended ones. */
void thread_group_cputime(struct task *t, struct task_cputime *out);
/* At thread exit, under its siglock: its figures move to the leader's. */
void cputime_fold_thread(struct task *t);
/* wait4 reaps child (a dead leader): its figures go to parent's children. */
void cputime_reap_child(struct task *parent, struct task *child);
/*
 * Share an exact total out as user and system time in the ratio of the
 * samples, never below what prev says was reported before (prev is
 * updated; NULL: no such history).
 */
void cputime_adjust(const struct task_cputime *c, struct prev_cputime *prev,
		    u64 *utime, u64 *stime);

struct rusage;
/* The rusage wait4 reports for a reaped child (its process and its children). */
void child_rusage(struct task *child, struct rusage *ru);

#endif
