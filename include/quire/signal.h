/*
 * Signals (kernel/signal.c; docs/signals.md). A user task has a
 * sighand_struct: the actions set by rt_sigaction, the queue of pending
 * signals with their siginfo, and the alternate stack, behind one lock.
 * Senders queue a signal and wake the target; the target takes it on its
 * way back to user mode (exit_to_user_mode): the default action (ignore or
 * terminate), or a handler entered on Linux's rt_sigframe.
 *
 * Quire has one thread per process so far: the process's pending set is
 * the thread's. When threads come, per-thread and shared pending sets
 * split here.
 */
#ifndef QUIRE_SIGNAL_H
#define QUIRE_SIGNAL_H

#include <quire/sched.h>
#include <quire/spinlock.h>
#include <quire/list.h>
#include <quire/uapi/signal.h>

struct pt_regs;

struct sighand_struct {
	spinlock_t siglock;
	struct k_sigaction action[_NSIG];
	u64 pending;			/* bit sig-1: at least one queued */
	struct list_head queue;		/* struct sigqueue, oldest first */
	int nr_queued;
	stack_t altstack;		/* sigaltstack; ss_flags SS_DISABLE when none */
};

/* Whether an unblocked signal waits (a sleep that can be interrupted ends). */
static inline bool signal_pending(struct task *t)
{
	return __atomic_load_n(&t->sigpending, __ATOMIC_ACQUIRE);
}

/* A new task's signal state: a copy of parent's actions (fork), or defaults. */
int copy_sighand(struct task *child, const struct task *parent);
void free_sighand(struct task *t);
/* exec: handlers go back to SIG_DFL (ignored signals stay ignored), no altstack. */
void flush_signal_handlers(struct task *t);

/* Queue sig for t, from user space (kill: si_code SI_USER, the sender's pid). */
int send_sig(int sig, struct task *t, int si_code);
/*
 * Queue a standard signal (below SIGRTMIN) for t from the kernel itself,
 * as Linux's SEND_SIG_PRIV: si_code SI_KERNEL, si_pid and si_uid 0 (an
 * alarm's SIGALRM). It allocates nothing, so an interrupt handler or a
 * timer's function may call it. 0, or -ESRCH (no signal state).
 */
int send_sig_kernel(int sig, struct task *t);
/*
 * A synchronous fault: queue sig with si_code and si_addr for the current
 * task, unblocking it and resetting an ignoring action (as Linux's
 * force_sig_fault): a fault cannot be ignored. why is logged if the
 * signal ends the process.
 */
void force_sig_fault(int sig, int si_code, unsigned long addr, const char *why);
/* The same with si_addr_lsb (BUS_MCEERR_AR: the poisoned granule's size). */
void force_sig_mceerr(int si_code, unsigned long addr, short lsb, const char *why);

/*
 * On every return to user mode, interrupts on: deliver pending signals
 * (from_syscall: regs->rax is a system call's result, which -ERESTART*
 * values turn into a restart or -EINTR). Returns with interrupts off.
 */
void exit_to_user_mode(struct pt_regs *regs, bool from_syscall);

/* Syscall results that never reach user space (Linux's values). */
#define ERESTARTSYS		512
#define ERESTARTNOINTR		513
#define ERESTARTNOHAND		514

#endif
