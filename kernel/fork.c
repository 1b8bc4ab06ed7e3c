/*
 * fork, wait4 and kill: the process tree. A forked child is a copy of its
 * parent: the same registers (fork returns 0 in it), a copy-on-write copy
 * of the address space, the TLS base and FPU registers. process_lock
 * guards parent/children links; exits wake child_exit_wq, where wait4
 * sleeps. Orphans are handed to the reaper thread, which frees them.
 */
#define pr_fmt(fmt) "fork: " fmt
#include <quire/process.h>
#include <quire/signal.h>
#include <quire/syscalls.h>
#include <quire/mmap.h>
#include <quire/fdtable.h>
#include <quire/wait.h>
#include <quire/uaccess.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/string.h>

static DEFINE_SPINLOCK(process_lock);
static DECLARE_WAIT_QUEUE_HEAD(child_exit_wq);
static LIST_HEAD(reap_list);		/* orphans that exited, by sibling */
static LIST_HEAD(process_list);		/* live user processes, by process_node */
static DECLARE_WAIT_QUEUE_HEAD(reaper_wq);
static struct task *reaper;

#define WNOHANG 1

static int reaper_thread(void *unused)
{
	for (;;) {
		struct task *t = NULL;

		wait_event(reaper_wq, !list_empty(&reap_list));
		spin_lock(&process_lock);
		if (!list_empty(&reap_list)) {
			t = list_first_entry(&reap_list, struct task, sibling);
			list_del_init(&t->sibling);
		}
		spin_unlock(&process_lock);
		if (t)
			kthread_join(t);
	}
	return 0;
}

#define CLONE_CHILD_CLEARTID	0x00200000
#define CLONE_CHILD_SETTID	0x01000000

/*
 * A copy of the calling process; its tid (the parent's return) or -errno.
 * set_tid: where the child writes its tid before it first runs in user
 * mode (CLONE_CHILD_SETTID); clear_tid: its set_tid_address.
 */
static long do_fork(int *set_tid, int *clear_tid)
{
	struct task *parent = current, *child;
	struct mm_struct *mm;

	if (!reaper) {
		struct task *r = kthread_run(reaper_thread, NULL, "reaper");

		if (r && __atomic_exchange_n(&reaper, r, __ATOMIC_SEQ_CST))
			pr_warn("two reapers started\n");	/* harmless: both work */
	}
	mm = dup_mm(parent->mm);
	if (!mm)
		return -ENOMEM;
	child = kthread_create(NULL, NULL, parent->comm);
	if (!child) {
		mmput(mm);
		return -ENOMEM;
	}
	child->files = parent->files ? files_dup(parent->files) : NULL;
	if (parent->files && !child->files) {
		mmput(mm);
		kthread_free_unstarted(child);
		return -ENOMEM;
	}
	child->mm = mm;
	child->cpus_allowed = parent->cpus_allowed;
	child->set_child_tid = set_tid;
	child->clear_child_tid = clear_tid;
	child->mempolicy = parent->mempolicy;
	if (copy_sighand(child, parent)) {
		mmput(mm);
		files_free(child->files);
		kthread_free_unstarted(child);
		return -ENOMEM;
	}
	arch_fork_frame(child, parent);
	spin_lock(&process_lock);
	child->parent = parent;
	list_add_tail(&child->sibling, &parent->children);
	list_add_tail(&child->process_node, &process_list);
	spin_unlock(&process_lock);
	wake_up_process(child);
	return child->tid;
}

long sys_fork(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return do_fork(NULL, NULL);
}

/*
 * The clone flags fork and vfork need: the exit signal, for vfork
 * CLONE_VM|CLONE_VFORK (copied instead), and glibc's fork's
 * CLONE_CHILD_SETTID|CLONE_CHILD_CLEARTID with ctid (the fourth argument).
 */
long sys_clone(u64 flags, u64 stack, u64 ptid, u64 ctid, u64 tls, u64 a5)
{
	u64 known = 0xffUL | 0x4100UL | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;

	if ((flags & ~known) || stack) {
		pr_warn("clone with flags %#llx: only fork-like clones are supported (-ENOSYS)\n",
			(unsigned long long)flags);
		return -ENOSYS;
	}
	return do_fork(flags & CLONE_CHILD_SETTID ? (int *)ctid : NULL,
		       flags & CLONE_CHILD_CLEARTID ? (int *)ctid : NULL);
}

/* A zombie child matching pid (-1: any), and whether any child matches at all. */
static struct task *find_zombie(struct task *parent, long pid, bool *any)
{
	struct task *c;

	*any = false;
	list_for_each_entry(c, &parent->children, sibling) {
		if (pid != -1 && c->tid != pid)
			continue;
		*any = true;
		if (c->exiting)
			return c;	/* kthread_join waits until it is fully off its CPU */
	}
	return NULL;
}

/*
 * Wait for a child (pid, or -1 for any) to end: its id and Linux wait
 * status, 0 with WNOHANG when none has ended yet, or -ECHILD. With
 * reap=false the child stays a zombie (waitid's WNOWAIT).
 */
static long do_wait(long pid, bool nohang, bool reap, int *status)
{
	struct task *z = NULL;
	bool any;
	int id;

	if (pid == 0 || pid < -1)
		return -EINVAL;		/* process groups: not yet */
	for (;;) {
		spin_lock(&process_lock);
		z = find_zombie(current, pid, &any);
		if (z && reap)
			list_del_init(&z->sibling);
		spin_unlock(&process_lock);
		if (z || !any)
			break;
		if (nohang)
			return 0;
		if (wait_event_interruptible(child_exit_wq, ({
			bool found;
			spin_lock(&process_lock);
			found = find_zombie(current, pid, &any) != NULL || !any;
			spin_unlock(&process_lock);
			found; })))
			return -ERESTARTSYS;
	}
	if (!z)
		return -ECHILD;
	id = z->tid;
	if (reap) {
		*status = kthread_join(z);
	} else {
		/* Not reaped: read the status once the task is fully dead. */
		while (__atomic_load_n(&z->state, __ATOMIC_ACQUIRE) != TASK_DEAD)
			yield();
		*status = z->exit_code;
	}
	return id;
}

long sys_wait4(u64 upid, u64 ustatus, u64 options, u64 urusage, u64 a4, u64 a5)
{
	int status;
	long id;

	if (options & ~(u64)WNOHANG)
		return -EINVAL;
	id = do_wait((long)upid, options & WNOHANG, true, &status);
	if (id > 0 && ustatus && copy_to_user((void *)ustatus, &status, sizeof(status)))
		return -EFAULT;
	(void)urusage;
	return id;
}

#define P_ALL		0
#define P_PID		1
#define WEXITED		4
#define WNOWAIT		0x01000000
#define SIGCHLD		17
#define CLD_EXITED	1
#define CLD_KILLED	2

/* waitid: exited children only (WEXITED); stopped/continued need signals. */
long sys_waitid(u64 idtype, u64 id, u64 uinfo, u64 options, u64 a4, u64 a5)
{
	int info[32] = { 0 };	/* siginfo_t, 128 bytes */
	long pid;
	int status;

	if (options & ~(u64)(WNOHANG | WEXITED | WNOWAIT) || !(options & WEXITED))
		return -EINVAL;
	if (idtype == P_ALL)
		pid = -1;
	else if (idtype == P_PID && (long)id > 0)
		pid = (long)id;
	else
		return -EINVAL;
	pid = do_wait(pid, options & WNOHANG, !(options & WNOWAIT), &status);
	if (pid < 0)
		return pid;
	if (pid > 0) {
		info[0] = SIGCHLD;					/* si_signo */
		info[2] = WIFSIGNALED(status) ? CLD_KILLED : CLD_EXITED;	/* si_code */
		info[4] = (int)pid;					/* si_pid */
		info[6] = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status);
	}
	/* With WNOHANG and nothing ended, Linux zeroes the structure. */
	if (uinfo && copy_to_user((void *)uinfo, info, sizeof(info)))
		return -EFAULT;
	return 0;
}

/* A task that has become a process (its first exec) joins the list kill searches. */
void process_list_add(struct task *t)
{
	spin_lock(&process_lock);
	if (list_empty(&t->process_node) && !t->exiting)
		list_add_tail(&t->process_node, &process_list);
	spin_unlock(&process_lock);
}

/*
 * The target of kill/tkill: any live process by pid. Sends under
 * process_lock, so the target cannot exit and be freed meanwhile (exit
 * takes it off the list first). A zombie is not found (Linux finds it and
 * returns 0; nothing is delivered either way).
 */
static long kill_one(long pid, int sig, int si_code)
{
	struct task *t;
	long ret = -ESRCH;

	spin_lock(&process_lock);
	list_for_each_entry(t, &process_list, process_node)
		if (t->tid == pid) {
			ret = sig ? send_sig(sig, t, si_code) : 0;
			break;
		}
	spin_unlock(&process_lock);
	return ret;
}

long sys_kill(u64 pid, u64 sig, u64 a2, u64 a3, u64 a4, u64 a5)
{
	if (sig > _NSIG)
		return -EINVAL;
	if ((long)pid <= 0) {
		pr_warn("kill(%ld): process groups and broadcast are not implemented (-ENOSYS)\n",
			(long)pid);
		return -ENOSYS;
	}
	return kill_one((long)pid, (int)sig, SI_USER);
}

long sys_tkill(u64 tid, u64 sig, u64 a2, u64 a3, u64 a4, u64 a5)
{
	if ((long)tid <= 0 || sig > _NSIG)
		return -EINVAL;
	return kill_one((long)tid, (int)sig, SI_TKILL);
}

long sys_tgkill(u64 tgid, u64 tid, u64 sig, u64 a3, u64 a4, u64 a5)
{
	if ((long)tgid <= 0 || (long)tid <= 0 || sig > _NSIG)
		return -EINVAL;
	if (tgid != tid)	/* one thread per process: a thread's group is its own id */
		return -ESRCH;
	return kill_one((long)tid, (int)sig, SI_TKILL);
}

/* Called by do_exit: hand the children to the reaper, tell the parent. */
void exit_notify(struct task *t)
{
	struct task *c, *n;

	spin_lock(&process_lock);
	t->exiting = true;
	list_del_init(&t->process_node);	/* kill finds it no more */
	list_for_each_entry_safe(c, n, &t->children, sibling) {
		c->parent = NULL;
		list_del_init(&c->sibling);
		if (c->exiting)
			list_add_tail(&c->sibling, &reap_list);
		else
			c->autoreap = true;
	}
	if (!t->parent && t->autoreap)
		list_add_tail(&t->sibling, &reap_list);
	spin_unlock(&process_lock);
	wake_up_all(&reaper_wq);
	wake_up_all(&child_exit_wq);
}
