/*
 * Kernel threads and the scheduler (kernel/sched.c). Every CPU has a run
 * queue and an idle task; a thread runs on the CPUs its affinity mask allows;
 * the LAPIC timer preempts a thread that has run for its time slice when
 * preemption is enabled. See docs/smp.md.
 *
 * Sleeping follows Linux's pattern:
 *	set_current_state(TASK_UNINTERRUPTIBLE);
 *	if (!condition)
 *		schedule();
 *	__set_current_state(TASK_RUNNING);
 * and the waker sets the condition, then calls wake_up_process(task). A
 * wake-up that comes between the state change and schedule() is not lost.
 */
#ifndef QUIRE_SCHED_H
#define QUIRE_SCHED_H

#include <quire/mempolicy.h>
#include <quire/cputime.h>
#include <quire/types.h>
#include <quire/list.h>
#include <quire/atomic.h>
#include <quire/percpu.h>
#include <quire/preempt.h>
#include <quire/sigaltstack.h>
#include <quire/timer.h>

#define TASK_RUNNING		0
#define TASK_INTERRUPTIBLE	1
#define TASK_UNINTERRUPTIBLE	2
#define TASK_STOPPED		4	/* job control: woken only by SIGCONT or SIGKILL (kernel/signal.c) */
#define TASK_DEAD		16

#define TASK_COMM_LEN		16
#define KERNEL_STACK_ORDER	2		/* 16 KiB kernel stacks */
#define KERNEL_STACK_SIZE	(4096UL << KERNEL_STACK_ORDER)
#define SCHED_SLICE_NS		(10 * 1000 * 1000ULL)	/* a tick */

/*
 * A resource limit (Linux's struct rlimit64, kept here without the uapi
 * header, whose names clash with the C library's in host builds).
 */
#define TASK_RLIMITS		16	/* RLIM_NLIMITS */
struct rlimit64 {
	u64 rlim_cur, rlim_max;
};

typedef u64 cpumask_t;			/* bit n: CPU n (MAX_CPUS = 64) */
#define CPU_MASK_ALL		(~0ULL)
#define cpumask_of(cpu)		(1ULL << (cpu))

struct task {
	u64 rsp;			/* saved stack pointer while switched out */
	volatile int state;		/* TASK_* */
	int cpu;			/* the CPU it runs on, or whose queue it is on */
	bool on_rq;			/* queued on a run queue */
	bool on_cpu;			/* running (or switching out) on some CPU */
	cpumask_t cpus_allowed;
	struct list_head run_list;
	int tid;			/* the thread's id (gettid) */
	int tgid;			/* its process's id (getpid): the group leader's tid */
	struct task *group_leader;	/* the process's first thread (itself when single) */
	char comm[TASK_COMM_LEN];
	void *stack;			/* KERNEL_STACK_SIZE bytes */
	int (*fn)(void *arg);
	void *arg;
	int exit_code;
	struct task *joiner;		/* waiting in kthread_join */
	u64 slice_start_ns;
	u64 runtime_ns;
	u64 start_ns;			/* ktime_get_ns when it was made (/proc/<pid>/stat's starttime) */
	u64 nr_switches;
	u64 nr_migrations;
	/*
	 * CPU time and faults (kernel/cputime.c). cputime.sum_exec_ns is unused:
	 * runtime_ns above is the exact count. The leader also keeps its
	 * process's ended threads' figures and its reaped children's.
	 */
	struct task_cputime cputime;
	struct task_cputime dead_threads;
	struct task_cputime children_cputime;
	struct prev_cputime prev_thread, prev_group, prev_children;	/* reported so far */
	/* Lock debugging (kernel/locking/): what this task holds. */
	int locks_held;
	/* The innermost armed fault_catch (asm/traps.h): faults are caught per task. */
	void *fault_catch;
	/* A user process (NULL for kernel threads): kernel/process.c. */
	struct mm_struct *mm;
	u64 fs_base;			/* the user's FS base (TLS), set by arch_prctl */
	int exit_signal;		/* sent to the parent at death (clone's CSIGNAL; SIGCHLD after fork) */
	int *clear_child_tid;		/* set_tid_address: zeroed and futex-woken at thread exit */
	int *set_child_tid;		/* CLONE_CHILD_SETTID: written once, in schedule_tail */
	/*
	 * Process relations (kernel/fork.c), under process_lock. They are
	 * the group leader's: a process's children hang off its leader,
	 * whichever thread forked them, and only leaders are on process_list.
	 */
	struct task *parent;		/* NULL: started by the kernel, or orphaned */
	struct list_head children;
	struct list_head sibling;	/* in the parent's children; a thread: the reap list */
	struct list_head process_node;	/* in the list kill searches, from exec or fork to exit */
	bool autoreap;			/* nobody will wait: the reaper joins it */
	bool exiting;			/* the whole process has exited: a zombie for wait4 */
	/*
	 * Job control (kernel/pgrp.c), the leader's: the process group and
	 * session ids, inherited at fork (the first process: 0 and 0, as
	 * Linux's pid 1), written under process_lock; did_exec: the process
	 * has run execve since fork (setpgid on it is then EACCES).
	 */
	int pgid;
	int sid;
	bool did_exec;
	struct list_head thread_node;	/* in sighand->threads, under its siglock, until exit */
	void *user_regs;		/* the struct pt_regs of the system call in progress */
	struct files_struct *files;	/* open files and cwd (user processes) */
	struct rlimit64 rlim[TASK_RLIMITS];	/* leader: the process's resource limits (kernel/rlimit.c) */
	char *exe_path;			/* leader: the program's absolute path (/proc/self/exe), kmalloc'd */
	/* Signals (kernel/signal.c, include/quire/signal.h). */
	struct sighand_struct *sighand;	/* actions, pending signals, the lock; user tasks only */
	u64 blocked;			/* blocked signals (rt_sigprocmask); inherited by fork */
	u64 real_blocked;		/* rt_sigtimedwait: the mask before it unblocked what it waits for */
	struct sigpending {
		u64 signal;		/* bit sig-1: at least one queued */
		struct list_head list;	/* struct sigqueue, oldest first */
	} pending;			/* this thread's own: faults, tkill, SIGKILL of a group exit */
	struct k_sigaltstack sas;	/* sigaltstack (per thread); ss_flags SS_DISABLE when none */
	u64 saved_sigmask;		/* rt_sigsuspend's mask to restore once a handler runs */
	bool restore_sigmask;
	volatile bool sigpending;	/* an unblocked signal waits: look at the next return to user */
	/* Group stop (kernel/signal.c), under siglock: this thread must stop, or has. */
	bool stop_pending;
	bool stopped;
	/* restart_syscall (219): how to go on with a sleep a stop interrupted. */
	struct restart_block {
		long (*fn)(struct restart_block *rb);	/* NULL: nothing (-EINTR) */
		u64 end_ns;			/* nanosleep: the clock reading it sleeps until */
		u64 urem;			/* its rem argument */
		u64 poll_ufds;			/* poll: its array, its length, */
		unsigned int poll_nfds;
		bool poll_forever;		/* and no timeout (end_ns unused) */
	} restart_block;
	/*
	 * The last trap that sent this thread a signal, which every signal
	 * frame's sigcontext reports after it (trapno, err, cr2), as on Linux:
	 * set by the architecture's trap handler (arch/x86_64/kernel/traps.c).
	 */
	u64 trap_nr, trap_err, trap_cr2;
	u64 robust_list;		/* set_robust_list (recorded) */
	/*
	 * Machine checks (kernel/mce_kill.c, docs/mm/memory-failure.md).
	 * mce_kill: prctl(PR_MCE_KILL)'s policy for this thread (MCE_KILL_*
	 * bits of quire/memory-failure.h), inherited by fork and clone.
	 * mce_addr, mce_count: a machine check this thread took in user mode
	 * whose memory_failure() has not run yet; it runs on the way back to
	 * user mode (Linux's kill_me_maybe task work), not on the #MC's stack.
	 * mce_copyin: it came in the kernel, reading the thread's user memory
	 * in copy_from_user (Linux's kill_me_never: no SIGBUS now).
	 */
	u8 mce_kill;
	bool mce_copyin;
	int mce_count;
	u64 mce_addr;
	struct mempolicy mempolicy;	/* set_mempolicy; inherited by fork (mm/mempolicy.c) */
	/*
	 * ITIMER_REAL (kernel/itimer.c): SIGALRM when it expires. Kept across
	 * exec, not inherited by fork (a new task's is zeroed), cancelled by
	 * do_exit before the task can be freed. Only the task itself changes
	 * them (one thread per process).
	 */
	struct timer_list real_timer;
	u64 it_real_incr;		/* its interval in ns; 0: it fires once */
	/*
	 * ITIMER_VIRTUAL ([0]) and ITIMER_PROF ([1]): CPU time left (0:
	 * disarmed) and the interval, in ns, counted down by the tick's
	 * samples of the process's threads; the leader's, under its siglock.
	 */
	struct { u64 value, incr; } it_cpu[2];
	/* The user's x87/SSE registers while switched out (fxsave format). */
	u8 fpu_state[512] __attribute__((aligned(16)));
};

/* The task running on this CPU. */
static inline struct task *get_current(void)
{
	return this_cpu_read(current_task);
}
#define current get_current()

void set_current_state(int state);
#define __set_current_state(s) (current->state = (s))

/* Give up the CPU; returns when the task is chosen to run again. */
void schedule(void);
/* Let other runnable tasks on this CPU go first. */
void yield(void);
/* Make a sleeping task runnable (no-op if it already is). Returns whether it woke it. */
bool wake_up_process(struct task *t);

/*
 * A kernel thread running fn(arg). kthread_create leaves it stopped (call
 * wake_up_process); kthread_run starts it. NULL on allocation failure.
 */
struct task *kthread_create(int (*fn)(void *), void *arg, const char *name);
struct task *kthread_run(int (*fn)(void *), void *arg, const char *name);
/* Free a thread made by kthread_create that was never woken. */
void kthread_free_unstarted(struct task *t);
/*
 * Give a task not yet woken tid 1, the first process's pid as on Linux
 * (other tasks, kernel threads included, count from 2). Only the first
 * call does it; returns whether it did.
 */
bool sched_take_pid_1(struct task *t);
/* Tasks that exist (kernel threads and processes, zombies included). */
long sched_nr_tasks(void);
/* Restrict where a thread may run (before it starts, or any time). -EINVAL for an empty/offline mask. */
int set_cpus_allowed(struct task *t, cpumask_t mask);
static inline int kthread_bind(struct task *t, int cpu)
{
	return set_cpus_allowed(t, cpumask_of(cpu));
}
/* Wait for a thread to finish; returns fn's result and frees the task. */
int kthread_join(struct task *t);
/* End the calling thread. */
__attribute__((noreturn)) void kthread_exit(int code);

/*
 * schedule_timeout_ns: like schedule() (set the state first), but also wakes
 * after ns. msleep: sleep at least ms (other tasks run meanwhile).
 */
void schedule_timeout_ns(u64 ns);
void msleep(u64 ms);

/* Preemption control: quire/preempt.h. */

/* Called by the LAPIC timer interrupt on each CPU. */
void scheduler_tick(void);
/* Called on the way out of an interrupt: switch if a reschedule is due. */
void preempt_schedule_irq(void);
/* Boot: turn the boot context into CPU 0's first task, and each AP's idle loop. */
void sched_init(void);
void sched_init_ap(void);
struct task *sched_adopt_current(const char *name);
__attribute__((noreturn)) void cpu_idle_loop(void);

/* The first run of a forked task: finish the switch (the lock), then return to user. */
void schedule_tail(struct task *last);

/* The architecture's part of a switch: kernel stack for entries, address space, TLS. */
void arch_switch_to(struct task *prev, struct task *next);

/* Counters for tests. */
u64 sched_nr_running(int cpu);

/* /proc/stat, /proc/loadavg (kernel/sched.c): a CPU's idle task; tasks running or queued now; */
bool is_idle_task(const struct task *t);
long sched_nr_active(void);
/* the last id handed out; context switches since boot. */
int sched_last_pid(void);
u64 sched_nr_switches(void);
/*
 * The load average (kernel/loadavg.c), Linux's: every 5 s (CPU 0's tick)
 * the tasks running or queued are folded into 1, 5 and 15 minute
 * exponential averages, fixed point with FSHIFT bits of fraction.
 */
#define FSHIFT		11
#define FIXED_1		(1UL << FSHIFT)
void calc_global_load_tick(void);
void get_avenrun(unsigned long loads[3]);

#endif
