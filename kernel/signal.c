/*
 * Signals: queueing, delivery on the way back to user mode, Linux's
 * rt_sigframe, and the rt_sig* system calls. See include/quire/signal.h
 * and docs/signals.md.
 *
 * Locking: sighand->siglock (interrupts off: a timer may send) guards the
 * actions, the queue and the pending bits; task->blocked is changed only
 * by the task itself, under the lock, so that a sender's recalculation of
 * task->sigpending sees a consistent pair.
 */
#define pr_fmt(fmt) "signal: " fmt
#include <quire/signal.h>
#include <quire/memory-failure.h>
#include <quire/itimer.h>
#include <quire/process.h>
#include <quire/syscalls.h>
#include <quire/uaccess.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/smp.h>
#include <quire/mmap.h>
#include <quire/time.h>
#include <asm/ptrace.h>

#define SIGQUEUE_MAX	1024	/* queued entries per process (RLIMIT_SIGPENDING's role) */
#define UNBLOCKABLE	(sigmask(SIGKILL) | sigmask(SIGSTOP))
#define SYNCHRONOUS	(sigmask(SIGSEGV) | sigmask(SIGBUS) | sigmask(SIGILL) | \
			 sigmask(SIGTRAP) | sigmask(SIGFPE) | sigmask(SIGSYS))
#define DEFAULT_IGNORE	(sigmask(SIGCHLD) | sigmask(SIGCONT) | sigmask(SIGURG) | sigmask(SIGWINCH))
#define DEFAULT_STOP	(sigmask(SIGSTOP) | sigmask(SIGTSTP) | sigmask(SIGTTIN) | sigmask(SIGTTOU))
#define __NR_restart_syscall	219

struct sigqueue {
	struct list_head list;
	siginfo_t info;
	const char *why;	/* a fault's description, for the log line if it kills */
};

static bool valid_signal(u64 sig)
{
	return sig >= 1 && sig <= _NSIG;
}

static void lock_sighand(struct sighand_struct *sh, unsigned long *flags)
{
	*flags = arch_local_irq_save();
	spin_lock(&sh->siglock);
}

static void unlock_sighand(struct sighand_struct *sh, unsigned long flags)
{
	spin_unlock(&sh->siglock);
	arch_local_irq_restore(flags);
}

/* Whether delivering sig now would do nothing (ignored by action or by default). */
static bool sig_ignored(const struct sighand_struct *sh, int sig)
{
	u64 h = sh->action[sig - 1].handler;

	return h == SIG_IGN || (h == SIG_DFL && (DEFAULT_IGNORE & sigmask(sig)));
}

static void recalc_sigpending(struct task *t)
{
	struct sighand_struct *sh = t->sighand;

	lockdep_assert_held(&sh->siglock);
	__atomic_store_n(&t->sigpending,
			 ((t->pending.signal | sh->shared_pending.signal) & ~t->blocked) != 0 ||
			 t->stop_pending, __ATOMIC_RELEASE);
}

/* Drop every queued instance of the signals in mask from one pending set. */
static void flush_sigqueue_mask(struct sighand_struct *sh, struct sigpending *p, u64 mask)
{
	struct sigqueue *q, *n;

	lockdep_assert_held(&sh->siglock);
	list_for_each_entry_safe(q, n, &p->list, list)
		if (mask & sigmask(q->info.si_signo)) {
			list_del(&q->list);
			sh->nr_queued--;
			kfree(q);
		}
	p->signal &= ~mask;
}

/* ... from the shared set and every thread's own. */
static void flush_signals_everywhere(struct sighand_struct *sh, u64 mask)
{
	struct task *t;

	flush_sigqueue_mask(sh, &sh->shared_pending, mask);
	list_for_each_entry(t, &sh->threads, thread_node) {
		flush_sigqueue_mask(sh, &t->pending, mask);
		recalc_sigpending(t);
	}
}

static struct sighand_struct *alloc_sighand(void)
{
	struct sighand_struct *sh = kzalloc(sizeof(*sh), GFP_KERNEL);

	if (!sh)
		return NULL;
	sh->count = 1;
	spin_lock_init(&sh->siglock);
	INIT_LIST_HEAD(&sh->shared_pending.list);
	INIT_LIST_HEAD(&sh->threads);
	return sh;
}

int copy_sighand(struct task *child, const struct task *parent)
{
	struct sighand_struct *sh = alloc_sighand();

	if (!sh)
		return -ENOMEM;
	if (parent && parent->sighand) {
		unsigned long flags;

		lock_sighand(parent->sighand, &flags);
		memcpy(sh->action, parent->sighand->action, sizeof(sh->action));
		unlock_sighand(parent->sighand, flags);
		child->sas = parent->sas;	/* fork keeps sigaltstack */
	}
	list_add_tail(&child->thread_node, &sh->threads);	/* not yet visible: no lock */
	sh->nr_threads = 1;
	child->sighand = sh;
	child->sigpending = false;
	return 0;
}

int share_sighand(struct task *thread, struct task *creator)
{
	struct sighand_struct *sh = creator->sighand;
	unsigned long flags;
	int ret = 0;

	lock_sighand(sh, &flags);
	if (sh->group_exit) {
		ret = -ERESTARTNOINTR;		/* the process is dying: no new thread */
	} else {
		__atomic_fetch_add(&sh->count, 1, __ATOMIC_RELAXED);
		list_add_tail(&thread->thread_node, &sh->threads);
		sh->nr_threads++;
		thread->sighand = sh;
		thread->sas = (stack_t){ .ss_flags = SS_DISABLE };	/* a new stack: not the creator's */
		if (sh->group_stop_count) {	/* a group stop in progress: it stops too */
			thread->stop_pending = true;
			sh->group_stop_count++;
		}
		recalc_sigpending(thread);
	}
	unlock_sighand(sh, flags);
	return ret;
}

bool sighand_leave_group(struct task *t)
{
	struct sighand_struct *sh = t->sighand;
	unsigned long flags;
	bool last;
	int stop_done = 0;	/* the stop signal, when this exit completes a group stop */

	lock_sighand(sh, &flags);
	cputime_fold_thread(t);		/* in the same step as leaving the list */
	list_del_init(&t->thread_node);
	last = --sh->nr_threads == 0;
	if (t->stop_pending) {		/* the group stop waits for one thread less */
		t->stop_pending = false;
		if (sh->group_stop_count > 0 && --sh->group_stop_count == 0 && !last &&
		    !sh->group_exit) {
			sh->stop_flags = STOP_STOPPED;
			stop_done = sh->stop_sig;
		}
	}
	flush_sigqueue_mask(sh, &t->pending, ~0ULL);
	/* A shared signal this thread was chosen for goes to another one. */
	if (!last && (sh->shared_pending.signal & ~t->blocked)) {
		struct task *o;

		list_for_each_entry(o, &sh->threads, thread_node) {
			recalc_sigpending(o);
			if (o->sigpending && o->state == TASK_INTERRUPTIBLE)
				wake_up_process(o);
		}
	}
	unlock_sighand(sh, flags);
	if (stop_done)
		job_notify_parent(t->group_leader, CLD_STOPPED, stop_done);
	return last;
}

int group_exit_status(struct task *leader, int own_status)
{
	struct sighand_struct *sh = leader->sighand;

	return sh && __atomic_load_n(&sh->group_exit, __ATOMIC_ACQUIRE) ?
	       sh->group_exit_code : own_status;
}

void free_sighand(struct task *t)
{
	struct sighand_struct *sh = t->sighand;
	unsigned long flags;

	if (!sh)
		return;
	t->sighand = NULL;
	lock_sighand(sh, &flags);
	if (!list_empty(&t->thread_node)) {	/* never ran (an unstarted fork child) */
		list_del_init(&t->thread_node);
		sh->nr_threads--;
	}
	flush_sigqueue_mask(sh, &t->pending, ~0ULL);
	unlock_sighand(sh, flags);
	if (__atomic_sub_fetch(&sh->count, 1, __ATOMIC_ACQ_REL))
		return;
	lock_sighand(sh, &flags);		/* the last user: for the assertion's sake */
	flush_sigqueue_mask(sh, &sh->shared_pending, ~0ULL);
	unlock_sighand(sh, flags);
	kfree(sh);
}

void flush_signal_handlers(struct task *t)
{
	struct sighand_struct *sh = t->sighand;
	unsigned long flags;

	lock_sighand(sh, &flags);
	for (int i = 0; i < _NSIG; i++) {
		struct k_sigaction *ka = &sh->action[i];

		if (ka->handler != SIG_IGN)
			ka->handler = SIG_DFL;
		ka->flags = 0;
		ka->restorer = 0;
		ka->mask = 0;
	}
	unlock_sighand(sh, flags);
	t->sas = (stack_t){ .ss_flags = SS_DISABLE };
}

/* Wake t if it sleeps interruptibly; make it look soon if it runs elsewhere. */
static void signal_wake_up(struct task *t)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* sigpending before the state */
	if (t->state == TASK_INTERRUPTIBLE)
		wake_up_process(t);
	else if (t != current && t->on_cpu)
		smp_send_reschedule(t->cpu);
}

/*
 * A signal for the whole process: every thread that does not block it is
 * told; the preferred one (the one kill named, if it can) is woken, as
 * Linux wakes one thread. SIGKILL wakes them all: they all must go.
 */
static void complete_shared_signal(struct sighand_struct *sh, struct task *prefer, int sig)
{
	struct task *t, *chosen = NULL;

	lockdep_assert_held(&sh->siglock);
	list_for_each_entry(t, &sh->threads, thread_node) {
		recalc_sigpending(t);
		if (!(t->blocked & sigmask(sig)) && (!chosen || t == prefer))
			chosen = t;
		if (sig == SIGKILL)
			signal_wake_up(t);
	}
	if (chosen && sig != SIGKILL)
		signal_wake_up(chosen);
}

/* SIGCONT or SIGKILL reached t: it runs again if it was stopped, and need not stop. */
static void wake_stopped(struct task *t)
{
	t->stop_pending = false;
	if (t->stopped) {
		__atomic_store_n(&t->stopped, false, __ATOMIC_RELEASE);
		wake_up_process(t);
	}
	recalc_sigpending(t);
}

/*
 * What sending sig does at once, whatever its action and mask (Linux's
 * prepare_signal): SIGKILL wakes stopped threads (they must die); a stop
 * signal discards a pending SIGCONT; SIGCONT discards pending stop
 * signals and continues a stopped or stopping process, the parent to hear
 * CLD_CONTINUED from the first thread that runs (do_signal).
 */
static void prepare_signal(struct task *target, int sig, bool shared)
{
	struct sighand_struct *sh = target->sighand;
	struct task *t;

	if (sig == SIGKILL) {
		if (!shared)
			wake_stopped(target);
		else
			list_for_each_entry(t, &sh->threads, thread_node)
				wake_stopped(t);
		return;
	}
	if (sh->group_exit)
		return;		/* dying: nothing to stop or continue */
	if (DEFAULT_STOP & sigmask(sig)) {
		flush_signals_everywhere(sh, sigmask(SIGCONT));
	} else if (sig == SIGCONT) {
		flush_signals_everywhere(sh, DEFAULT_STOP);
		list_for_each_entry(t, &sh->threads, thread_node)
			wake_stopped(t);
		if (sh->stop_flags & STOP_STOPPED)
			sh->stop_flags = STOP_CONTINUED | STOP_NOTIFY_CONTINUED;
		sh->group_stop_count = 0;
		sh->stop_sig = 0;
	}
}

/*
 * Queue sig with its entry q (NULL: none could be allocated) on t's own
 * pending set, or with shared on the process's. Standard signals coalesce:
 * one pending instance at most. Returns 0 or -EAGAIN (a full queue of
 * real-time signals). Called with the siglock held; frees q if unused.
 */
static int __queue_signal(struct task *t, int sig, struct sigqueue *q, bool shared)
{
	struct sighand_struct *sh = t->sighand;
	struct sigpending *p = shared ? &sh->shared_pending : &t->pending;
	bool rt = sig >= SIGRTMIN;

	lockdep_assert_held(&sh->siglock);
	prepare_signal(t, sig, shared);
	/* Blocked, or awaited by rt_sigtimedwait (real_blocked), it is kept, as Linux. */
	if (sig_ignored(sh, sig) && !((t->blocked | t->real_blocked) & sigmask(sig)) &&
	    sig != SIGKILL)
		goto drop;
	if (!rt && (p->signal & sigmask(sig)))
		goto drop;
	if (q && sh->nr_queued >= SIGQUEUE_MAX) {
		if (rt) {
			kfree(q);
			return -EAGAIN;
		}
		kfree(q);	/* the bit alone still delivers it (si_code SI_KERNEL) */
		q = NULL;
	}
	if (q) {
		list_add_tail(&q->list, &p->list);
		sh->nr_queued++;
	} else if (rt) {
		return -EAGAIN;
	}
	p->signal |= sigmask(sig);
	if (shared) {
		complete_shared_signal(sh, t, sig);
	} else {
		recalc_sigpending(t);
		if (t->sigpending)
			signal_wake_up(t);
	}
	return 0;
drop:
	kfree(q);
	return 0;
}

/*
 * Linux's SIGNAL_UNKILLABLE: pid 1 takes from others (kill, the tty, a
 * timer) only the signals it has a handler for, never a default action,
 * even SIGKILL's; its own faults still end it (force_sig_info).
 */
static bool init_unkillable(struct task *t, int sig)
{
	return t->tgid == 1 && t->sighand->action[sig - 1].handler == SIG_DFL;
}

/* A signal sent to t from outside (kill, tkill, the kernel): queued unless pid 1 refuses it. */
static int send_signal_locked(struct task *t, int sig, struct sigqueue *q, bool shared)
{
	if (init_unkillable(t, sig)) {
		kfree(q);
		return 0;
	}
	return __queue_signal(t, sig, q, shared);
}

static int queue_signal(struct task *t, int sig, struct sigqueue *q, bool shared)
{
	unsigned long flags;
	int ret;

	lock_sighand(t->sighand, &flags);
	ret = send_signal_locked(t, sig, q, shared);
	unlock_sighand(t->sighand, flags);
	return ret;
}

static struct sigqueue *alloc_sigqueue(int sig, int code)
{
	struct sigqueue *q = kzalloc(sizeof(*q), GFP_KERNEL);

	if (q) {
		q->info.si_signo = sig;
		q->info.si_code = code;
	}
	return q;
}

void user_siginfo(siginfo_t *info, int sig, int si_code)
{
	memset(info, 0, sizeof(*info));
	info->si_signo = sig;
	info->si_code = si_code;
	info->f.kill.pid = current->tgid;
	info->f.kill.uid = 0;
}

/*
 * An entry carrying info (the sender's siginfo), numbered sig whatever
 * info's si_signo; NULL info: kill's (user_siginfo, SI_USER).
 */
static struct sigqueue *alloc_user_sigqueue(int sig, const siginfo_t *info)
{
	struct sigqueue *q = kzalloc(sizeof(*q), GFP_KERNEL);

	if (!q)
		return NULL;
	if (info)
		q->info = *info;
	else
		user_siginfo(&q->info, sig, SI_USER);
	q->info.si_signo = sig;
	return q;
}

int send_sig_info(int sig, const siginfo_t *info, struct task *t)
{
	if (!t->sighand)
		return -ESRCH;
	return queue_signal(t, sig, alloc_user_sigqueue(sig, info), true);
}

int send_sig(int sig, struct task *t, int si_code)
{
	siginfo_t info;

	user_siginfo(&info, sig, si_code);
	return send_sig_info(sig, &info, t);
}

int send_sig_in_group(struct task *leader, int tid, int sig, const siginfo_t *info,
		      bool to_thread)
{
	struct sighand_struct *sh = leader->sighand;
	unsigned long flags;
	struct task *t;
	int ret = -ESRCH;

	if (!sh)
		return -ESRCH;
	lock_sighand(sh, &flags);
	list_for_each_entry(t, &sh->threads, thread_node)
		if (t->tid == tid) {
			/* Quire's allocations never sleep: allocating under the lock is safe. */
			ret = sig ? send_signal_locked(t, sig, alloc_user_sigqueue(sig, info),
						       !to_thread) : 0;
			break;
		}
	unlock_sighand(sh, flags);
	return ret;
}

void do_group_exit(int status)
{
	struct task *t = current, *o;
	struct sighand_struct *sh = t->sighand;
	unsigned long flags;

	lock_sighand(sh, &flags);
	if (sh->exec_task && sh->exec_task != t) {
		/* Killed by another thread's execve: the process lives on in it. */
		unlock_sighand(sh, flags);
		do_exit(status);
	}
	if (sh->group_exit) {
		status = sh->group_exit_code;	/* another thread got there first */
	} else {
		sh->group_exit_code = status;
		__atomic_store_n(&sh->group_exit, true, __ATOMIC_RELEASE);
		list_for_each_entry(o, &sh->threads, thread_node)
			if (o != t)
				__queue_signal(o, SIGKILL, NULL, false);
	}
	unlock_sighand(sh, flags);
	do_exit(status);
}

bool notify_parent(struct task *leader, int status)
{
	struct task *parent = leader->parent;
	struct sighand_struct *psh = parent ? parent->sighand : NULL;
	int sig = leader->exit_signal;
	unsigned long flags;
	struct k_sigaction ka;
	bool autoreap;

	if (!psh)
		return false;
	lock_sighand(psh, &flags);
	ka = psh->action[SIGCHLD - 1];
	/* Linux: a parent that ignores SIGCHLD, or asks SA_NOCLDWAIT, leaves no zombies. */
	autoreap = sig == SIGCHLD && (ka.handler == SIG_IGN || (ka.flags & SA_NOCLDWAIT));
	if (sig > 0 && valid_signal((u64)sig) && !(sig == SIGCHLD && ka.handler == SIG_IGN)) {
		struct sigqueue *q = alloc_sigqueue(sig, WIFSIGNALED(status) ? CLD_KILLED : CLD_EXITED);

		if (q) {
			q->info.f.chld.pid = leader->tgid;
			q->info.f.chld.uid = 0;
			q->info.f.chld.status = WIFSIGNALED(status) ? WTERMSIG(status) :
								      WEXITSTATUS(status);
		}
		__queue_signal(parent, sig, q, true);
	}
	unlock_sighand(psh, flags);
	return autoreap;
}

void notify_parent_cldstop(struct task *leader, struct task *parent, int why, int sig)
{
	struct sighand_struct *psh = parent->sighand;
	const struct k_sigaction *ka;
	unsigned long flags;

	if (!psh)
		return;
	lock_sighand(psh, &flags);
	ka = &psh->action[SIGCHLD - 1];
	if (ka->handler != SIG_IGN && !(ka->flags & SA_NOCLDSTOP)) {
		struct sigqueue *q = alloc_sigqueue(SIGCHLD, why);

		if (q) {
			q->info.f.chld.pid = leader->tgid;
			q->info.f.chld.uid = 0;
			q->info.f.chld.status = sig;
		}
		__queue_signal(parent, SIGCHLD, q, true);
	}
	unlock_sighand(psh, flags);
}

int wait_job_report(struct task *leader, bool continued, bool consume)
{
	struct sighand_struct *sh = leader->sighand;
	unsigned long flags;
	int sig;

	if (!sh)
		return 0;
	lock_sighand(sh, &flags);
	if (continued) {
		sig = (sh->stop_flags & STOP_CONTINUED) ? SIGCONT : 0;
		if (sig && consume)
			sh->stop_flags &= ~STOP_CONTINUED;
	} else {
		sig = (sh->stop_flags & STOP_STOPPED) ? sh->stop_sig : 0;
		if (sig && consume)	/* not before: a stop still under way keeps its signal */
			sh->stop_sig = 0;
	}
	unlock_sighand(sh, flags);
	return sig;
}

bool process_stopped(struct task *leader)
{
	struct sighand_struct *sh = leader->sighand;

	return sh && (READ_ONCE(sh->stop_flags) & STOP_STOPPED);
}

bool current_sig_ignored_or_blocked(int sig)
{
	struct task *t = current;

	return (t->blocked & sigmask(sig)) || READ_ONCE(t->sighand->action[sig - 1].handler) == SIG_IGN;
}

int de_thread(struct task *t)
{
	struct sighand_struct *sh = t->sighand;
	unsigned long flags;
	struct task *o;

	lock_sighand(sh, &flags);
	if (sh->nr_threads == 1) {
		unlock_sighand(sh, flags);
		return 0;
	}
	if (t != t->group_leader) {
		unlock_sighand(sh, flags);
		pr_warn("pid %d (%s): execve from a thread other than the first is not implemented "
			"(-ENOSYS)\n", t->tgid, t->comm);
		return -ENOSYS;
	}
	if (sh->group_exit || sh->exec_task) {
		unlock_sighand(sh, flags);
		return -ERESTARTNOINTR;		/* dying already, or another thread's exec */
	}
	sh->exec_task = t;
	list_for_each_entry(o, &sh->threads, thread_node)
		if (o != t)
			__queue_signal(o, SIGKILL, NULL, false);
	unlock_sighand(sh, flags);
	/* Each leaves the thread list at the end of its exit (rare path: poll). */
	while (__atomic_load_n(&sh->nr_threads, __ATOMIC_ACQUIRE) > 1)
		msleep(1);
	lock_sighand(sh, &flags);
	sh->exec_task = NULL;
	unlock_sighand(sh, flags);
	return 0;
}

int send_sig_kernel(int sig, struct task *t)
{
	if (!t->sighand)
		return -ESRCH;
	if (sig >= SIGRTMIN)
		return -EINVAL;		/* a real-time signal needs an entry: not from here */
	return queue_signal(t, sig, NULL, true);	/* the bit alone: si_code SI_KERNEL, pid and uid 0 */
}

/* A fault's signal cannot be blocked or ignored away: Linux resets such an action. */
static void force_sig_info(struct sigqueue *q, int sig)
{
	struct task *t = current;
	struct sighand_struct *sh = t->sighand;
	unsigned long flags;

	lock_sighand(sh, &flags);
	if (sh->action[sig - 1].handler == SIG_IGN || (t->blocked & sigmask(sig))) {
		sh->action[sig - 1].handler = SIG_DFL;
		t->blocked &= ~sigmask(sig);
	}
	/* The new fault's info replaces an older one. */
	flush_sigqueue_mask(sh, &t->pending, sigmask(sig));
	__queue_signal(t, sig, q, false);
	unlock_sighand(sh, flags);
}

void force_sig_fault(int sig, int si_code, unsigned long addr, const char *why)
{
	struct sigqueue *q = alloc_sigqueue(sig, si_code);

	if (q) {
		q->info.f.fault.addr = addr;
		q->why = why;
	}
	force_sig_info(q, sig);
}

void force_sig_mceerr(int si_code, unsigned long addr, short lsb, const char *why)
{
	struct sigqueue *q = alloc_sigqueue(SIGBUS, si_code);

	if (q) {
		q->info.f.fault.addr = addr;
		q->info.f.fault.addr_lsb = lsb;
		q->why = why;
	}
	force_sig_info(q, SIGBUS);
}

bool send_sig_mceerr_early(struct task *leader, unsigned long addr, short lsb,
			   bool early_default)
{
	struct sighand_struct *sh = leader->sighand;
	siginfo_t info = { .si_signo = SIGBUS, .si_code = BUS_MCEERR_AO };
	unsigned long flags;
	struct task *t;
	bool sent = false;

	if (!sh)
		return false;
	info.f.fault.addr = addr;
	info.f.fault.addr_lsb = lsb;
	lock_sighand(sh, &flags);
	list_for_each_entry(t, &sh->threads, thread_node) {
		u8 policy = READ_ONCE(t->mce_kill);

		if (policy & MCE_KILL_PROCESS ? !(policy & MCE_KILL_EARLY) : !early_default)
			continue;
		sent = send_signal_locked(t, SIGBUS, alloc_user_sigqueue(SIGBUS, &info), false) == 0;
		break;
	}
	unlock_sighand(sh, flags);
	return sent;
}

/* Take the first queued instance of sig from p (the bit stays if another waits). */
static bool dequeue_from(struct sighand_struct *sh, struct sigpending *p, int sig,
			 siginfo_t *info, const char **why)
{
	struct sigqueue *q, *found = NULL;
	bool more = false;

	if (!(p->signal & sigmask(sig)))
		return false;
	list_for_each_entry(q, &p->list, list) {
		if (q->info.si_signo != sig)
			continue;
		if (found) {
			more = true;
			break;
		}
		found = q;
	}
	if (!more)
		p->signal &= ~sigmask(sig);
	if (found) {
		*info = found->info;
		*why = found->why;
		list_del(&found->list);
		sh->nr_queued--;
		kfree(found);
	} else {
		info->si_signo = sig;
		info->si_code = SI_KERNEL;
	}
	return true;
}

/* The lowest signal in ready, synchronous faults first. */
static int next_signal(u64 ready)
{
	if (ready & SYNCHRONOUS)
		ready &= SYNCHRONOUS;
	return ready ? __builtin_ctzll(ready) + 1 : 0;
}

/* The next signal among mask: the thread's own first, then the process's. */
static int dequeue_signal(struct task *t, u64 mask, siginfo_t *info, const char **why)
{
	struct sighand_struct *sh = t->sighand;
	int sig;

	lockdep_assert_held(&sh->siglock);
	memset(info, 0, sizeof(*info));
	*why = NULL;
	sig = next_signal(t->pending.signal & mask);
	if (!sig || !dequeue_from(sh, &t->pending, sig, info, why)) {
		sig = next_signal(sh->shared_pending.signal & mask);
		if (sig)
			dequeue_from(sh, &sh->shared_pending, sig, info, why);
	}
	recalc_sigpending(t);
	if (sig == SIGALRM)
		itimer_real_rearm(t->group_leader);	/* the process's timer: next period */
	return sig;
}

/* ---- delivery ---- */

static bool on_sig_stack(const struct task *t, u64 sp)
{
	const stack_t *ss = &t->sas;

	return !(ss->ss_flags & SS_DISABLE) && sp > ss->ss_sp && sp - ss->ss_sp <= ss->ss_size;
}

__attribute__((noreturn)) static void sig_fatal(int sig, const siginfo_t *info, const char *why,
						 const struct pt_regs *regs)
{
	struct task *t = current;
	bool quiet = sig == SIGKILL && (__atomic_load_n(&t->sighand->group_exit, __ATOMIC_ACQUIRE) ||
					t->sighand->exec_task);

	if (quiet)		/* another thread's exit_group or execve: no news */
		do_group_exit(W_EXITCODE(0, sig));
	if (why)
		pr_warn("pid %d (%s): killed by signal %d: %s at %#lx, ip %#lx\n",
			t->tgid, t->comm, sig, why, (unsigned long)info->f.fault.addr,
			(unsigned long)regs->rip);
	else
		pr_warn("pid %d (%s): killed by signal %d\n", t->tgid, t->comm, sig);
	do_group_exit(W_EXITCODE(0, sig));	/* every thread of the process ends */
}

#define FIX_EFLAGS	0x50dd5UL	/* CF PF AF ZF SF TF DF OF RF AC: the user's to change */

static void fill_sigcontext(struct sigcontext *sc, const struct pt_regs *regs, u64 oldmask,
			    u64 fpstate)
{
	*sc = (struct sigcontext){
		.r8 = regs->r8, .r9 = regs->r9, .r10 = regs->r10, .r11 = regs->r11,
		.r12 = regs->r12, .r13 = regs->r13, .r14 = regs->r14, .r15 = regs->r15,
		.rdi = regs->rdi, .rsi = regs->rsi, .rbp = regs->rbp, .rbx = regs->rbx,
		.rdx = regs->rdx, .rax = regs->rax, .rcx = regs->rcx, .rsp = regs->rsp,
		.rip = regs->rip, .eflags = regs->rflags, .cs = (u16)regs->cs,
		.ss = (u16)regs->ss, .oldmask = oldmask, .fpstate = fpstate,
		/* The last trap that sent a signal, whichever this one is (as Linux). */
		.trapno = current->trap_nr, .err = current->trap_err, .cr2 = current->trap_cr2,
	};
}

/* Build the rt_sigframe on the user stack and point the registers at the handler. */
static int setup_rt_frame(int sig, const siginfo_t *info, const struct k_sigaction *ka,
			  u64 oldmask, struct pt_regs *regs)
{
	struct rt_sigframe f;
	u64 sp = regs->rsp, fp, frame;
	bool on_alt = on_sig_stack(current, sp);

	if (!(ka->flags & SA_RESTORER))
		return -EFAULT;		/* x86-64 has no default return path: Linux refuses too */
	if ((ka->flags & SA_ONSTACK) && !(current->sas.ss_flags & SS_DISABLE) && !on_alt)
		sp = current->sas.ss_sp + current->sas.ss_size;
	else
		sp -= 128;		/* the red zone */
	fp = (sp - 512) & ~63UL;
	frame = ((fp - sizeof(f)) & ~15UL) - 8;	/* as after a call: rsp+8 16-aligned */

	memset(&f, 0, sizeof(f));
	f.pretcode = ka->restorer;
	f.uc.uc_flags = UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	f.uc.uc_stack = current->sas;
	if (on_alt)
		f.uc.uc_stack.ss_flags = SS_ONSTACK;
	fill_sigcontext(&f.uc.uc_mcontext, regs, oldmask, fp);
	f.uc.uc_sigmask = oldmask;
	f.info = *info;

	preempt_disable();
	fpu_save_current(current->fpu_state);
	preempt_enable();
	if (copy_to_user((void *)fp, current->fpu_state, 512) ||
	    copy_to_user((void *)frame, &f, sizeof(f)))
		return -EFAULT;

	if (current->sas.ss_flags & SS_AUTODISARM)
		current->sas = (stack_t){ .ss_flags = SS_DISABLE };
	regs->rip = ka->handler;
	regs->rsp = frame;
	regs->rdi = (u64)sig;
	regs->rsi = frame + __builtin_offsetof(struct rt_sigframe, info);
	regs->rdx = frame + __builtin_offsetof(struct rt_sigframe, uc);
	regs->rax = 0;
	regs->rflags &= ~(0x100UL | 0x400UL | 0x10000UL | 0x40000UL);	/* TF DF RF AC */
	return 0;	/* cs and ss stay the user's: the frame returns to user mode */
}

/* A system call a signal interrupted: restart it, or make it fail with EINTR. */
static void syscall_restart(struct pt_regs *regs, const struct k_sigaction *ka)
{
	long ret = (long)regs->rax;
	u64 nr = regs->vector;	/* the system call number again */
	bool restart;

	switch (ret) {
	case -ERESTARTNOHAND:
		restart = !ka;
		break;
	case -ERESTARTSYS:
		restart = !ka || (ka->flags & SA_RESTART);
		break;
	case -ERESTARTNOINTR:
		restart = true;
		break;
	case -ERESTART_RESTARTBLOCK:	/* a sleep: on with restart_syscall, where it was */
		restart = !ka;
		nr = __NR_restart_syscall;
		break;
	default:
		return;
	}
	if (restart) {
		regs->rax = nr;
		regs->rip -= 2;			/* back onto the syscall instruction */
	} else {
		regs->rax = (u64)-EINTR;
	}
}

static void handle_signal(int sig, const siginfo_t *info, const struct k_sigaction *ka,
			  struct pt_regs *regs, bool from_syscall)
{
	struct task *t = current;
	u64 oldmask = t->restore_sigmask ? t->saved_sigmask : t->blocked;
	unsigned long flags;

	if (from_syscall)
		syscall_restart(regs, ka);
	if (setup_rt_frame(sig, info, ka, oldmask, regs)) {
		pr_warn("pid %d (%s): cannot build the frame for signal %d at sp %#lx\n",
			t->tid, t->comm, sig, (unsigned long)regs->rsp);
		sig_fatal(SIGSEGV, info, NULL, regs);
	}
	lock_sighand(t->sighand, &flags);
	t->restore_sigmask = false;
	t->blocked |= ka->mask;
	if (!(ka->flags & SA_NODEFER))
		t->blocked |= sigmask(sig);
	t->blocked &= ~UNBLOCKABLE;
	recalc_sigpending(t);
	unlock_sighand(t->sighand, flags);
}

/*
 * This thread's part in a group stop (Linux's do_signal_stop). sig: the
 * stop signal it took, which starts the stop (every other thread not
 * stopped yet is asked to stop too), or 0 when it was asked. The last
 * thread to stop marks the process stopped and tells the parent. The
 * thread then sleeps in TASK_STOPPED, which only SIGCONT and SIGKILL end
 * (wake_stopped); a system call it was in restarts afterwards, as for a
 * signal without a handler.
 */
static void do_signal_stop(int sig)
{
	struct task *t = current, *o;
	struct sighand_struct *sh = t->sighand;
	unsigned long flags;
	bool done = false;

	lock_sighand(sh, &flags);
	if (sh->group_exit || sh->exec_task ||
	    ((t->pending.signal | sh->shared_pending.signal) & sigmask(SIGKILL))) {
		t->stop_pending = false;	/* dying: no stop */
		recalc_sigpending(t);
		unlock_sighand(sh, flags);
		return;
	}
	if (sig && !t->stop_pending) {
		if (!(sh->stop_flags & STOP_STOPPED))
			sh->stop_sig = sig;
		sh->group_stop_count = 1;
		t->stop_pending = true;
		list_for_each_entry(o, &sh->threads, thread_node) {
			if (o == t || o->stopped)
				continue;
			o->stop_pending = true;
			sh->group_stop_count++;
			recalc_sigpending(o);
			signal_wake_up(o);
		}
	}
	if (!t->stop_pending) {		/* a SIGCONT came first */
		recalc_sigpending(t);
		unlock_sighand(sh, flags);
		return;
	}
	t->stop_pending = false;
	if (sh->group_stop_count > 0 && --sh->group_stop_count == 0) {
		sh->stop_flags = STOP_STOPPED;
		done = true;
	}
	t->stopped = true;
	recalc_sigpending(t);
	sig = sh->stop_sig;
	unlock_sighand(sh, flags);
	if (done)
		job_notify_parent(t->group_leader, CLD_STOPPED, sig);
	for (;;) {
		set_current_state(TASK_STOPPED);
		if (!__atomic_load_n(&t->stopped, __ATOMIC_ACQUIRE))
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

static void do_signal(struct pt_regs *regs, bool from_syscall)
{
	struct task *t = current;
	struct sighand_struct *sh = t->sighand;
	unsigned long flags;

	for (;;) {
		struct k_sigaction ka;
		const char *why;
		siginfo_t info;
		int sig;

		lock_sighand(sh, &flags);
		if (sh->stop_flags & STOP_NOTIFY_CONTINUED) {
			sh->stop_flags &= ~STOP_NOTIFY_CONTINUED;
			unlock_sighand(sh, flags);
			job_notify_parent(t->group_leader, CLD_CONTINUED, SIGCONT);
			continue;
		}
		if (t->stop_pending) {		/* another thread started a group stop */
			unlock_sighand(sh, flags);
			do_signal_stop(0);
			continue;
		}
		sig = dequeue_signal(t, ~t->blocked, &info, &why);
		if (!sig) {
			unlock_sighand(sh, flags);
			break;
		}
		ka = sh->action[sig - 1];
		if (ka.handler != SIG_DFL && ka.handler != SIG_IGN && (ka.flags & SA_RESETHAND))
			sh->action[sig - 1].handler = SIG_DFL;
		unlock_sighand(sh, flags);

		if (ka.handler == SIG_IGN)
			continue;
		if (ka.handler != SIG_DFL) {
			/*
			 * As Linux: a frame for each signal pending and unblocked
			 * (under the mask this handler adds), each on top of the
			 * last, before going back; the last one's handler runs
			 * first. The interrupted call is settled by the first.
			 */
			handle_signal(sig, &info, &ka, regs, from_syscall);
			from_syscall = false;
			continue;
		}
		if (DEFAULT_IGNORE & sigmask(sig))
			continue;
		if (DEFAULT_STOP & sigmask(sig)) {
			/* The terminal's stops do nothing to an orphaned process group (POSIX). */
			if (sig != SIGSTOP && current_pgrp_orphaned())
				continue;
			do_signal_stop(sig);
			continue;
		}
		sig_fatal(sig, &info, why, regs);
	}
	/* No handler ran: an interrupted call restarts; sigsuspend's mask comes back. */
	if (from_syscall)
		syscall_restart(regs, NULL);
	if (t->restore_sigmask) {
		lock_sighand(sh, &flags);
		t->restore_sigmask = false;
		t->blocked = t->saved_sigmask;
		recalc_sigpending(t);
		unlock_sighand(sh, flags);
	}
}

void exit_to_user_mode(struct pt_regs *regs, bool from_syscall)
{
	struct task *t = current;
	bool restart = from_syscall && (long)regs->rax <= -ERESTARTSYS &&
		       (long)regs->rax >= -ERESTART_RESTARTBLOCK;

	if (t->mce_count) {		/* a machine check in user mode (kernel/mce_kill.c) */
		local_irq_enable();
		mce_kill_me_maybe();
		local_irq_disable();
	}
	if (!t->sighand || (!signal_pending(t) && !restart && !t->restore_sigmask))
		return;
	local_irq_enable();
	do_signal(regs, from_syscall);
	local_irq_disable();
}

/* ---- system calls ---- */

long sys_rt_sigaction(u64 sig, u64 uact, u64 uoact, u64 sigsetsize, u64 a4, u64 a5)
{
	struct sighand_struct *sh = current->sighand;
	struct k_sigaction act = { 0 }, old;	/* (read only when uact: the compiler cannot tell) */
	unsigned long flags;

	if (sigsetsize != 8 || !valid_signal(sig))
		return -EINVAL;
	if (uact && (sig == SIGKILL || sig == SIGSTOP))
		return -EINVAL;
	if (uact && copy_from_user(&act, (void *)uact, sizeof(act)))
		return -EFAULT;
	act.flags &= SA_UAPI_FLAGS;		/* as Linux: unknown flags read back as 0 */
	lock_sighand(sh, &flags);
	old = sh->action[sig - 1];
	if (uact) {
		act.mask &= ~UNBLOCKABLE;
		sh->action[sig - 1] = act;
		/* A signal now ignored is discarded, even while pending (POSIX). */
		if (sig_ignored(sh, (int)sig))
			flush_signals_everywhere(sh, sigmask(sig));
	}
	unlock_sighand(sh, flags);
	if (uoact && copy_to_user((void *)uoact, &old, sizeof(old)))
		return -EFAULT;
	return 0;
}

#define SIG_BLOCK	0
#define SIG_UNBLOCK	1
#define SIG_SETMASK	2

static void set_current_blocked(u64 mask)
{
	unsigned long flags;

	lock_sighand(current->sighand, &flags);
	current->blocked = mask & ~UNBLOCKABLE;
	recalc_sigpending(current);
	unlock_sighand(current->sighand, flags);
}

/*
 * ppoll and pselect6 (fs/select.c): the mask given for the call's
 * duration; the old one comes back when a handler has run (as for
 * rt_sigsuspend) or, when the call was not interrupted, at once
 * (restore_saved_sigmask_unless), so that a signal the old mask blocks is
 * not delivered on the way out, as on Linux.
 */
void set_temporary_sigmask(u64 mask)
{
	current->saved_sigmask = current->blocked;
	current->restore_sigmask = true;
	set_current_blocked(mask);
}

void restore_saved_sigmask_unless(bool interrupted)
{
	if (interrupted || !current->restore_sigmask)
		return;
	current->restore_sigmask = false;
	set_current_blocked(current->saved_sigmask);
}

long sys_rt_sigprocmask(u64 how, u64 uset, u64 uold, u64 sigsetsize, u64 a4, u64 a5)
{
	u64 set, old = current->blocked;

	if (sigsetsize != 8)
		return -EINVAL;
	if (uset) {
		if (copy_from_user(&set, (void *)uset, 8))
			return -EFAULT;
		switch (how) {
		case SIG_BLOCK: set |= old; break;
		case SIG_UNBLOCK: set = old & ~set; break;
		case SIG_SETMASK: break;
		default: return -EINVAL;
		}
		set_current_blocked(set);
	}
	if (uold && copy_to_user((void *)uold, &old, 8))
		return -EFAULT;
	return 0;
}

long sys_rt_sigpending(u64 uset, u64 sigsetsize, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 set;

	if (sigsetsize > 8)
		return -EINVAL;
	set = (current->pending.signal | current->sighand->shared_pending.signal) & current->blocked;
	if (copy_to_user((void *)uset, &set, sigsetsize))
		return -EFAULT;
	return 0;
}

/* Sleep until a signal is pending; the caller returns -ERESTARTNOHAND. */
static void sleep_until_signal(void)
{
	for (;;) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (signal_pending(current))
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

long sys_pause(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	sleep_until_signal();
	return -ERESTARTNOHAND;
}

/*
 * rt_sigtimedwait: take a pending signal of the set without running its
 * handler. While waiting, the set is unblocked (as Linux does) so that its
 * signals wake us; they are taken here, before any return to user mode.
 * -EAGAIN when the timeout passes, -EINTR when another signal comes.
 */
long sys_rt_sigtimedwait(u64 uthese, u64 uinfo, u64 uts, u64 sigsetsize, u64 a4, u64 a5)
{
	struct task *t = current;
	struct sighand_struct *sh = t->sighand;
	struct kernel_timespec ts;
	u64 these, saved, deadline = 0;
	unsigned long flags;
	const char *why;
	siginfo_t info;
	int sig;

	if (sigsetsize != 8)
		return -EINVAL;
	if (copy_from_user(&these, (void *)uthese, 8))
		return -EFAULT;
	these &= ~UNBLOCKABLE;
	if (uts) {
		if (copy_from_user(&ts, (void *)uts, sizeof(ts)))
			return -EFAULT;
		if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
			return -EINVAL;
		deadline = ktime_get_ns() + (u64)ts.tv_sec * 1000000000ULL + (u64)ts.tv_nsec;
	}
	lock_sighand(sh, &flags);
	sig = dequeue_signal(t, these, &info, &why);
	if (!sig && !(uts && ts.tv_sec == 0 && ts.tv_nsec == 0)) {
		saved = t->blocked;
		t->real_blocked = saved;
		t->blocked &= ~these;
		recalc_sigpending(t);
		unlock_sighand(sh, flags);
		for (;;) {
			u64 now = ktime_get_ns();

			set_current_state(TASK_INTERRUPTIBLE);
			if (signal_pending(t) || (uts && now >= deadline))
				break;
			if (uts)
				schedule_timeout_ns(deadline - now);
			else
				schedule();
		}
		__set_current_state(TASK_RUNNING);
		lock_sighand(sh, &flags);
		sig = dequeue_signal(t, these, &info, &why);
		t->blocked = saved;
		t->real_blocked = 0;
		recalc_sigpending(t);
	}
	unlock_sighand(sh, flags);
	if (!sig)
		return signal_pending(t) ? -EINTR : -EAGAIN;
	if (uinfo && copy_to_user((void *)uinfo, &info, sizeof(info)))
		return -EFAULT;
	return sig;
}

long sys_rt_sigsuspend(u64 umask, u64 sigsetsize, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 mask;

	if (sigsetsize != 8)
		return -EINVAL;
	if (copy_from_user(&mask, (void *)umask, 8))
		return -EFAULT;
	current->saved_sigmask = current->blocked;
	current->restore_sigmask = true;
	set_current_blocked(mask);
	sleep_until_signal();
	return -ERESTARTNOHAND;
}

/*
 * restart_syscall (219): what a stop or a signal without a handler
 * interrupted goes on (nanosleep, until its first deadline). Nothing
 * recorded (a handler ran since): -EINTR, as Linux.
 */
long sys_restart_syscall(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct restart_block *rb = &current->restart_block;
	long (*fn)(struct restart_block *) = rb->fn;

	rb->fn = NULL;
	return fn ? fn(rb) : -EINTR;
}

long sys_rt_sigreturn(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct pt_regs *regs = current->user_regs;
	struct ucontext uc;
	const struct sigcontext *sc = &uc.uc_mcontext;
	u64 frame = regs->rsp - 8;	/* the handler's ret popped pretcode */

	if (copy_from_user(&uc, (void *)(frame + __builtin_offsetof(struct rt_sigframe, uc)),
			   sizeof(uc)) || sc->rip >= USER_TOP)
		goto bad;
	if (sc->fpstate) {
		u8 fx[512] __attribute__((aligned(16)));

		if (copy_from_user(fx, (void *)sc->fpstate, sizeof(fx)))
			goto bad;
		*(u32 *)(fx + 24) &= 0xffff;	/* MXCSR: reserved bits would fault fxrstor */
		preempt_disable();
		memcpy(current->fpu_state, fx, sizeof(fx));
		fpu_restore_current(current->fpu_state);
		preempt_enable();
	} else {
		fpu_reset_current();
	}
	regs->r8 = sc->r8; regs->r9 = sc->r9; regs->r10 = sc->r10; regs->r11 = sc->r11;
	regs->r12 = sc->r12; regs->r13 = sc->r13; regs->r14 = sc->r14; regs->r15 = sc->r15;
	regs->rdi = sc->rdi; regs->rsi = sc->rsi; regs->rbp = sc->rbp; regs->rbx = sc->rbx;
	regs->rdx = sc->rdx; regs->rax = sc->rax; regs->rcx = sc->rcx; regs->rsp = sc->rsp;
	regs->rip = sc->rip;
	regs->rflags = (regs->rflags & ~FIX_EFLAGS) | (sc->eflags & FIX_EFLAGS);
	regs->vector = (u64)-1;	/* not a system call any more: nothing to restart */
	current->restart_block.fn = NULL;
	set_current_blocked(uc.uc_sigmask);
	return (long)regs->rax;
bad:
	pr_warn("pid %d (%s): rt_sigreturn with a bad frame at %#lx\n",
		current->tid, current->comm, (unsigned long)frame);
	force_sig_fault(SIGSEGV, SI_KERNEL, 0, "bad signal frame");
	regs->vector = (u64)-1;
	return (long)regs->rax;
}

long sys_sigaltstack(u64 uss, u64 uoss, u64 a2, u64 a3, u64 a4, u64 a5)
{
	u64 sp = ((struct pt_regs *)current->user_regs)->rsp;
	bool on = on_sig_stack(current, sp);
	stack_t old = current->sas, ss;

	if (uss) {
		int mode;

		if (copy_from_user(&ss, (void *)uss, sizeof(ss)))
			return -EFAULT;
		if (on)
			return -EPERM;
		mode = ss.ss_flags & ~(int)SS_AUTODISARM;
		if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
			return -EINVAL;
		if (mode == SS_DISABLE) {
			ss.ss_sp = 0;
			ss.ss_size = 0;
		} else if (ss.ss_size < MINSIGSTKSZ) {
			return -ENOMEM;
		}
		current->sas = (stack_t){ .ss_sp = ss.ss_sp, .ss_size = ss.ss_size,
					  .ss_flags = mode == SS_DISABLE ? SS_DISABLE :
						      (ss.ss_flags & (int)SS_AUTODISARM) };
	}
	if (uoss) {
		if (on)
			old.ss_flags = SS_ONSTACK | (old.ss_flags & (int)SS_AUTODISARM);
		if (copy_to_user((void *)uoss, &old, sizeof(old)))
			return -EFAULT;
	}
	return 0;
}
