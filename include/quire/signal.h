/*
 * Signals (kernel/signal.c; docs/signals.md). A user task has a
 * sighand_struct: the actions set by rt_sigaction, the queue of pending
 * signals with their siginfo, and the alternate stack, behind one lock.
 * Senders queue a signal and wake the target; the target takes it on its
 * way back to user mode (exit_to_user_mode): the default action (ignore or
 * terminate), or a handler entered on Linux's rt_sigframe.
 *
 * A thread has its own pending set (faults, tkill) beside the process's
 * shared one (kill); delivery takes the thread's first.
 */
#ifndef QUIRE_SIGNAL_H
#define QUIRE_SIGNAL_H

#include <quire/sched.h>
#include <quire/spinlock.h>
#include <quire/list.h>
#include <quire/uapi/signal.h>

struct pt_regs;

/*
 * A process's signal state, shared by its threads (Linux splits it into
 * signal_struct and sighand_struct; Quire's CLONE_SIGHAND always comes
 * with CLONE_THREAD, so one structure serves). Everything but count is
 * under siglock, taken with interrupts off.
 */
struct sighand_struct {
	int count;			/* tasks pointing here (atomic); freed at 0 */
	spinlock_t siglock;
	struct k_sigaction action[_NSIG];
	struct sigpending shared_pending;	/* kill(): for whichever thread can take it */
	int nr_queued;			/* queued entries, every pending set of the process */
	struct list_head threads;	/* live threads, by task->thread_node */
	int nr_threads;
	bool group_exit;		/* exit_group or a fatal signal: every thread goes */
	int group_exit_code;		/* the process's wait status, once group_exit */
	struct task *exec_task;		/* a thread in execve, killing the others */
	/*
	 * Group stop (docs/signals.md, "Stopping and continuing"): the threads
	 * that still have to stop, the STOP_* state, and the stop signal a
	 * wait4(WUNTRACED) has yet to report (0: reported, or none).
	 */
	int group_stop_count;
	unsigned int stop_flags;
	int stop_sig;
};

#define STOP_STOPPED		0x1	/* every thread has stopped */
#define STOP_CONTINUED		0x2	/* continued since: for wait4(WCONTINUED), once */
#define STOP_NOTIFY_CONTINUED	0x4	/* the parent is yet to get CLD_CONTINUED */

/* Whether an unblocked signal waits (a sleep that can be interrupted ends). */
static inline bool signal_pending(struct task *t)
{
	return __atomic_load_n(&t->sigpending, __ATOMIC_ACQUIRE);
}

/* A new process's signal state: a copy of parent's actions (fork), or defaults. */
int copy_sighand(struct task *child, const struct task *parent);
/* A new thread joins creator's process (CLONE_THREAD): 0, or -ERESTARTNOINTR if it is dying. */
int share_sighand(struct task *thread, struct task *creator);
/* At thread exit: leave the thread list. Returns whether it was the last thread. */
bool sighand_leave_group(struct task *t);
/* The wait status of a dead process: the group exit's, or the leader's own. */
int group_exit_status(struct task *leader, int own_status);
/* When the task is freed: drop its reference (the last frees the structure). */
void free_sighand(struct task *t);
/* exec: handlers go back to SIG_DFL (ignored signals stay ignored), no altstack. */
void flush_signal_handlers(struct task *t);

/* The siginfo kill and tkill send: sig, si_code, the calling process's pid, uid 0. */
void user_siginfo(siginfo_t *info, int sig, int si_code);
/*
 * Queue sig for t's process from user space with a copy of info (kill's
 * from user_siginfo; rt_sigqueueinfo's the caller's own, si_value too),
 * its si_signo replaced by sig.
 */
int send_sig_info(int sig, const siginfo_t *info, struct task *t);
/* send_sig_info with user_siginfo's info (si_code SI_USER: kill). */
int send_sig(int sig, struct task *t, int si_code);
/*
 * kill/tkill/rt_tgsigqueueinfo by id: find thread tid among leader's
 * threads and queue sig with info for its process, or with to_thread for
 * that thread alone; sig 0 only checks. info NULL: kill's (SI_USER, the
 * caller's pid). -ESRCH when no live thread of the process has that id.
 */
int send_sig_in_group(struct task *leader, int tid, int sig, const siginfo_t *info,
		      bool to_thread);
/*
 * A process died (its last thread, under process_lock): its exit_signal
 * (SIGCHLD after fork) to the parent, with CLD_EXITED or CLD_KILLED, its
 * pid and status. Returns whether the parent leaves no zombies (SIGCHLD
 * ignored, or SA_NOCLDWAIT): then the child is reaped at once.
 */
bool notify_parent(struct task *leader, int status);
/*
 * A process stopped (CLD_STOPPED, with the stop signal) or continued
 * (CLD_CONTINUED, SIGCONT): SIGCHLD to parent unless it ignores SIGCHLD or
 * set SA_NOCLDSTOP. Called under process_lock (kernel/fork.c).
 */
void notify_parent_cldstop(struct task *leader, struct task *parent, int why, int sig);
/*
 * wait4/waitid: whether leader's process has a stop (WUNTRACED: returns
 * the stop signal) or, continued, a continue (WCONTINUED: returns
 * SIGCONT) to report; consume takes it, so that it is reported once.
 * 0: nothing.
 */
int wait_job_report(struct task *leader, bool continued, bool consume);
/* Whether leader's process is stopped (every thread of it). */
bool process_stopped(struct task *leader);
/* Whether sig would be ignored or is blocked by the current thread (job control's test). */
bool current_sig_ignored_or_blocked(int sig);
/* execve: end every other thread (-ENOSYS from a thread but the first). */
int de_thread(struct task *t);
/* exit_group and fatal signals: SIGKILL the other threads, then exit with status. */
__attribute__((noreturn)) void do_group_exit(int status);
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
 * Linux's early kill (find_early_kill_thread, send_sig_mceerr): SIGBUS
 * BUS_MCEERR_AO with si_addr addr and si_addr_lsb lsb to the first thread
 * of leader's process that asked for it (prctl PR_MCE_KILL early), or, with
 * early_default, to the first thread that set no policy. Whether one got it.
 */
bool send_sig_mceerr_early(struct task *leader, unsigned long addr, short lsb,
			   bool early_default);

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
#define ERESTART_RESTARTBLOCK	516	/* restart with restart_syscall, current->restart_block */

/* ppoll, pselect6: a mask for the call (kernel/signal.c); the old one back unless interrupted. */
void set_temporary_sigmask(u64 mask);
void restore_saved_sigmask_unless(bool interrupted);

#endif
