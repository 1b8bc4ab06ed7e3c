/*
 * fork, wait4 and kill: the process tree. A forked child is a copy of its
 * parent: the same registers (fork returns 0 in it), a copy-on-write copy
 * of the address space, the TLS base and FPU registers, its process group
 * and session. process_lock guards parent/children links; exits, stops
 * and continues wake child_exit_wq, where wait4 sleeps. Orphans are
 * handed to the reaper thread, which frees them.
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
#include <quire/slab.h>
#include <quire/uapi/resource.h>

DEFINE_SPINLOCK(process_lock);
static DECLARE_WAIT_QUEUE_HEAD(child_exit_wq);
static LIST_HEAD(reap_list);		/* orphans that exited, by sibling */
LIST_HEAD(process_list);		/* live user processes, by process_node */
static DECLARE_WAIT_QUEUE_HEAD(reaper_wq);
static struct task *reaper;

#define WNOHANG		0x00000001
#define WUNTRACED	0x00000002	/* waitid's WSTOPPED */
#define WEXITED		0x00000004
#define WCONTINUED	0x00000008
#define WNOWAIT		0x01000000
#define P_ALL		0
#define P_PID		1
#define P_PGID		2
#define PID_INT_MIN	(-2147483647 - 1)	/* its negation is no pid */

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

#define CLONE_VM		0x00000100
#define CLONE_FS		0x00000200
#define CLONE_FILES		0x00000400
#define CLONE_SIGHAND		0x00000800
#define CLONE_VFORK		0x00004000
#define CLONE_THREAD		0x00010000
#define CLONE_SYSVSEM		0x00040000
#define CLONE_SETTLS		0x00080000
#define CLONE_PARENT_SETTID	0x00100000
#define CLONE_CHILD_CLEARTID	0x00200000
#define CLONE_DETACHED		0x00400000
#define CLONE_CHILD_SETTID	0x01000000
#define CSIGNAL			0x000000ff

/* What a thread (CLONE_THREAD) shares or takes from its creator. */
struct clone_args_k {
	u64 flags;
	u64 stack;		/* the new thread's user stack pointer (0: the creator's) */
	int *parent_tid;	/* CLONE_PARENT_SETTID */
	int *child_tid;		/* CLONE_CHILD_SETTID / CLONE_CHILD_CLEARTID */
	u64 tls;		/* CLONE_SETTLS: the FS base */
};

static void start_reaper(void)
{
	if (!reaper) {
		struct task *r = kthread_run(reaper_thread, NULL, "reaper");

		if (r && __atomic_exchange_n(&reaper, r, __ATOMIC_SEQ_CST))
			pr_warn("two reapers started\n");	/* harmless: both work */
	}
}

/*
 * A new task for clone: a copy of the caller (a process: its own copy of
 * the address space and descriptors) or, with CLONE_THREAD, a thread that
 * shares them. Returns its tid or -errno.
 */
static long do_clone(const struct clone_args_k *a)
{
	struct task *parent = current, *child;
	bool thread = a->flags & CLONE_THREAD;
	struct mm_struct *mm;
	int err = -ENOMEM;

	start_reaper();
	if (thread) {
		mm = parent->mm;
		atomic_inc(&mm->mm_users);
	} else {
		mm = dup_mm(parent->mm);
		if (!mm)
			return -ENOMEM;
	}
	child = kthread_create(NULL, NULL, parent->comm);
	if (!child)
		goto out_mm;
	if (parent->files) {
		child->files = a->flags & CLONE_FILES ? files_get(parent->files) :
							 files_dup(parent->files);
		if (!child->files)
			goto out_task;
	}
	child->mm = mm;
	child->cpus_allowed = parent->cpus_allowed;
	child->set_child_tid = a->flags & CLONE_CHILD_SETTID ? a->child_tid : NULL;
	child->clear_child_tid = a->flags & CLONE_CHILD_CLEARTID ? a->child_tid : NULL;
	child->mempolicy = parent->mempolicy;
	child->mce_kill = parent->mce_kill;	/* (a pending machine check stays the parent's) */
	if (!thread)
		memcpy(child->rlim, parent->group_leader->rlim, sizeof(child->rlim));
	if (!thread && parent->group_leader->exe_path &&
	    !(child->exe_path = kstrdup(parent->group_leader->exe_path, GFP_KERNEL)))
		goto out_files;
	child->exit_signal = thread ? 0 : (int)(a->flags & CSIGNAL);	/* threads tell nobody */
	if (thread) {
		child->tgid = parent->tgid;
		child->group_leader = parent->group_leader;
		err = share_sighand(child, parent);
	} else {
		err = copy_sighand(child, parent);
	}
	if (err)
		goto out_files;
	arch_fork_frame(child, parent);
	if (a->stack)
		arch_set_user_sp(child, a->stack);
	if (a->flags & CLONE_SETTLS)
		child->fs_base = a->tls;
	if ((a->flags & CLONE_PARENT_SETTID) &&
	    copy_to_user(a->parent_tid, &child->tid, sizeof(child->tid))) {
		/* Linux writes it and ignores a fault; so does Quire. */
		pr_debug("pid %d: CLONE_PARENT_SETTID address unwritable\n", parent->tid);
	}
	if (!thread) {
		spin_lock(&process_lock);
		child->parent = parent->group_leader;	/* a process's children are its leader's */
		child->pgid = child->parent->pgid;
		child->sid = child->parent->sid;
		list_add_tail(&child->sibling, &child->parent->children);
		list_add_tail(&child->process_node, &process_list);
		spin_unlock(&process_lock);
	}
	wake_up_process(child);
	return child->tid;

out_files:
	if (child->files)
		files_put(child->files);
out_task:
	kthread_free_unstarted(child);
out_mm:
	mmput(mm);
	return err;
}

long sys_fork(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct clone_args_k a = { .flags = SIGCHLD };

	return do_clone(&a);
}

#define CLONE_KNOWN	(CSIGNAL | CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | \
			 CLONE_VFORK | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS | \
			 CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_DETACHED | \
			 CLONE_CHILD_SETTID)

/* The clones Quire builds: a fork-like copy, or a thread sharing what pthreads share. */
static bool clone_supported(u64 flags, u64 stack)
{
	if (flags & ~CLONE_KNOWN)
		return false;
	if (flags & CLONE_THREAD)	/* with SIGHAND and VM: sys_clone checked */
		return !(flags & CLONE_FILES) == !(flags & CLONE_FS);	/* cwd lives in files */
	return !stack && !(flags & (CLONE_SIGHAND | CLONE_FILES | CLONE_FS | CLONE_SETTLS |
				    CLONE_PARENT_SETTID)) &&
	       (!(flags & CLONE_VM) || (flags & CLONE_VFORK));	/* vfork: done as a copy */
}

/*
 * clone: fork-like clones (an exit signal, CLONE_VM|CLONE_VFORK done as a
 * copy, glibc's fork's CHILD_SETTID|CHILD_CLEARTID) and threads with the
 * flags glibc's and musl's pthread_create pass. Other sharing (an address
 * space without a thread group, a separate cwd) is -ENOSYS, logged.
 */
long sys_clone(u64 flags, u64 stack, u64 ptid, u64 ctid, u64 tls, u64 a5)
{
	struct clone_args_k a = { .flags = flags, .stack = stack, .parent_tid = (int *)ptid,
				  .child_tid = (int *)ctid, .tls = tls };

	/* Linux's consistency rules first: these are EINVAL there too. */
	if (((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND)) ||
	    ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM)))
		return -EINVAL;
	if (!clone_supported(flags, stack)) {
		pr_warn("pid %d (%s): clone with flags %#llx is not implemented (-ENOSYS): "
			"fork-like clones and pthread-style threads only\n", current->tgid,
			current->comm, (unsigned long long)flags);
		return -ENOSYS;
	}
	if (!(flags & CLONE_THREAD))
		a.flags &= CSIGNAL | CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
	return do_clone(&a);
}

/* What a wait4 or waitid asks, and what it found. */
struct wait_opts {
	int type;		/* P_ALL, P_PID, P_PGID */
	int id;			/* the pid or the pgid */
	unsigned int flags;	/* WNOHANG, WEXITED, WUNTRACED, WCONTINUED, WNOWAIT */
	int status;		/* found: the wait4 status */
	int code;		/* and waitid's si_code (CLD_*) */
	struct rusage *ru;	/* a dead child's resource usage, or NULL */
};

static bool wait_selects(const struct wait_opts *wo, const struct task *c)
{
	if (wo->type == P_PID)
		return c->tid == wo->id;
	return wo->type == P_ALL || c->pgid == wo->id;
}

/*
 * Under process_lock: the first child wo selects that has something to
 * report, in Linux's order for each child (its death, its stop, its
 * continue), the report taken (a stop or continue is reported once,
 * unless WNOWAIT; a zombie to reap leaves the children list). *any:
 * whether some child could report later (a zombie counts only for
 * WEXITED, as Linux).
 */
static struct task *wait_find(struct wait_opts *wo, bool *any)
{
	bool consume = !(wo->flags & WNOWAIT);
	struct task *c;
	int sig;

	*any = false;
	list_for_each_entry(c, &current->group_leader->children, sibling) {
		if (!wait_selects(wo, c))
			continue;
		if (c->exiting) {
			if (!(wo->flags & WEXITED))
				continue;
			*any = true;
			if (consume)
				list_del_init(&c->sibling);
			wo->code = 0;	/* set once the task is dead: wait_reap */
			return c;
		}
		*any = true;
		if ((wo->flags & WUNTRACED) && (sig = wait_job_report(c, false, consume))) {
			wo->status = W_STOPCODE(sig);
			wo->code = CLD_STOPPED;
			return c;
		}
		if ((wo->flags & WCONTINUED) && wait_job_report(c, true, consume)) {
			wo->status = W_CONTINUED;
			wo->code = CLD_CONTINUED;
			return c;
		}
	}
	return NULL;
}

/*
 * A zombie wait_find chose: its status once it is fully dead, and its
 * resource usage (wo->ru); reaped unless WNOWAIT, its usage then added to
 * the caller's "children" figures (getrusage's RUSAGE_CHILDREN).
 */
static void wait_reap(struct wait_opts *wo, struct task *z)
{
	/* Every thread is gone: a group exit's status is final (-1: there was none). */
	int group = group_exit_status(z, -1);

	if (wo->ru)
		child_rusage(z, wo->ru);
	if (!(wo->flags & WNOWAIT)) {
		cputime_reap_child(current, z);
		wo->status = kthread_join(z);
	} else {
		/* Not reaped: read the status once the task is fully dead. */
		while (__atomic_load_n(&z->state, __ATOMIC_ACQUIRE) != TASK_DEAD)
			yield();
		wo->status = z->exit_code;
	}
	if (group != -1)
		wo->status = group;
	wo->code = WIFSIGNALED(wo->status) ? CLD_KILLED : CLD_EXITED;
}

/*
 * Wait for a child wo selects to end, stop or continue (as wo->flags
 * ask): its id, with wo->status and wo->code; 0 with WNOHANG when none
 * has yet; -ECHILD when no child can; -ERESTARTSYS for a signal.
 */
static long do_wait(struct wait_opts *wo)
{
	DEFINE_WAIT(w);
	struct task *c;
	bool any;
	long ret;

	for (;;) {
		prepare_to_wait(&child_exit_wq, &w, TASK_INTERRUPTIBLE);
		spin_lock(&process_lock);
		c = wait_find(wo, &any);
		spin_unlock(&process_lock);
		if (c || !any || (wo->flags & WNOHANG) || signal_pending(current))
			break;
		schedule();
	}
	finish_wait(&child_exit_wq, &w);
	if (!c)
		return !any ? -ECHILD : (wo->flags & WNOHANG) ? 0 : -ERESTARTSYS;
	ret = c->tid;
	if (!wo->code)
		wait_reap(wo, c);
	return ret;
}

long sys_wait4(u64 upid, u64 ustatus, u64 options, u64 urusage, u64 a4, u64 a5)
{
	struct rusage ru = { 0 };	/* a stop or continue report: zero */
	struct wait_opts wo = { .type = P_PID, .id = (int)upid,
				.flags = (unsigned int)options | WEXITED, .ru = &ru };
	long id;

	if (options & ~(u64)(WNOHANG | WUNTRACED | WCONTINUED))
		return -EINVAL;
	if (wo.id == PID_INT_MIN)
		return -ESRCH;		/* -INT_MIN is no pgid, as Linux */
	if (wo.id == -1) {
		wo.type = P_ALL;
	} else if (wo.id <= 0) {
		wo.type = P_PGID;	/* 0: the caller's group; -N: group N */
		wo.id = wo.id ? -wo.id : task_pgid(current);
	}
	id = do_wait(&wo);
	if (id > 0 && ustatus && copy_to_user((void *)ustatus, &wo.status, sizeof(wo.status)))
		return -EFAULT;
	if (id > 0 && urusage && copy_to_user((void *)urusage, &ru, sizeof(ru)))
		return -EFAULT;
	return id;
}

/* waitid: P_ALL, P_PID, P_PGID (0: the caller's group); exits, stops and continues. */
long sys_waitid(u64 idtype, u64 id, u64 uinfo, u64 options, u64 urusage, u64 a5)
{
	struct wait_opts wo = { .type = (int)idtype, .id = (int)id, .flags = (unsigned int)options };
	int info[32] = { 0 };	/* siginfo_t, 128 bytes */
	struct rusage ru = { 0 };
	long pid;

	if (options & ~(u64)(WNOHANG | WEXITED | WUNTRACED | WCONTINUED | WNOWAIT) ||
	    !(options & (WEXITED | WUNTRACED | WCONTINUED)))
		return -EINVAL;
	if (idtype == P_PID && wo.id <= 0)
		return -EINVAL;
	if (idtype == P_PGID) {
		if (wo.id < 0)
			return -EINVAL;
		if (!wo.id)
			wo.id = task_pgid(current);
	} else if (idtype != P_ALL && idtype != P_PID) {
		return -EINVAL;		/* P_PIDFD: no pidfds */
	}
	wo.ru = &ru;
	pid = do_wait(&wo);
	if (pid < 0)
		return pid;
	if (pid > 0) {
		info[0] = SIGCHLD;			/* si_signo */
		info[2] = wo.code;			/* si_code */
		info[4] = (int)pid;			/* si_pid */
		info[6] = wo.code == CLD_EXITED ? WEXITSTATUS(wo.status) :	/* si_status */
			  wo.code == CLD_KILLED ? WTERMSIG(wo.status) :
			  wo.code == CLD_STOPPED ? (wo.status >> 8) & 0xff : SIGCONT;
	}
	/* With WNOHANG and nothing to report, Linux zeroes the structure. */
	if (uinfo && copy_to_user((void *)uinfo, info, sizeof(info)))
		return -EFAULT;
	if (pid > 0 && urusage && copy_to_user((void *)urusage, &ru, sizeof(ru)))
		return -EFAULT;
	return 0;
}

void job_notify_parent(struct task *leader, int why, int sig)
{
	spin_lock(&process_lock);
	if (leader->parent && !leader->exiting)
		notify_parent_cldstop(leader, leader->parent, why, sig);
	spin_unlock(&process_lock);
	wake_up_all(&child_exit_wq);
}

/*
 * A task that has become a process (its first exec) joins the list kill
 * searches; any execve marks the process for setpgid's EACCES.
 */
void process_list_add(struct task *t)
{
	spin_lock(&process_lock);
	t->group_leader->did_exec = true;
	if (list_empty(&t->process_node) && !t->exiting)
		list_add_tail(&t->process_node, &process_list);
	spin_unlock(&process_lock);
}

/*
 * kill, tkill, tgkill, rt_sigqueueinfo and rt_tgsigqueueinfo find their
 * target on process_list (leaders of live processes) under process_lock,
 * so it cannot exit and be freed meanwhile: the last thread's exit takes
 * its process off the list first. A zombie is not found (Linux finds it
 * and returns 0; nothing is delivered either way). info is what the
 * target's handler or sigtimedwait will see.
 */
enum kill_kind { KILL_PROCESS, KILL_THREAD, KILL_THREAD_IN_GROUP };

static long kill_by_id(enum kill_kind kind, long tgid, long tid, int sig, const siginfo_t *info)
{
	struct task *p;
	long ret = -ESRCH;

	spin_lock(&process_lock);
	list_for_each_entry(p, &process_list, process_node) {
		if (kind == KILL_PROCESS && p->tgid == tid) {
			ret = sig ? send_sig_info(sig, info, p) : 0;
			break;
		}
		if (kind == KILL_THREAD_IN_GROUP && p->tgid != tgid)
			continue;
		/* kill(tid of a thread) signals its process, as Linux does. */
		ret = send_sig_in_group(p, (int)tid, sig, info, kind != KILL_PROCESS);
		if (ret != -ESRCH || kind == KILL_THREAD_IN_GROUP)
			break;
	}
	spin_unlock(&process_lock);
	return ret;
}

/* kill/tkill/tgkill: the siginfo user_siginfo makes (si_code, the caller's pid). */
static long kill_by_id_code(enum kill_kind kind, long tgid, long tid, int sig, int si_code)
{
	siginfo_t info;

	user_siginfo(&info, sig, si_code);
	return kill_by_id(kind, tgid, tid, sig, &info);
}

/* kill: a process (pid > 0), the caller's group (0), every process (-1), group -pid. */
long sys_kill(u64 upid, u64 sig, u64 a2, u64 a3, u64 a4, u64 a5)
{
	int pid = (int)upid;

	if (sig > _NSIG)
		return -EINVAL;
	if (pid > 0)
		return kill_by_id_code(KILL_PROCESS, 0, pid, (int)sig, SI_USER);
	if (pid == -1)
		return kill_all((int)sig);
	if (pid == PID_INT_MIN)
		return -ESRCH;		/* -INT_MIN is no pgid, as Linux */
	return kill_pgrp(pid ? -pid : task_pgid(current), (int)sig, false);
}

long sys_tkill(u64 tid, u64 sig, u64 a2, u64 a3, u64 a4, u64 a5)
{
	if ((int)tid <= 0 || sig > _NSIG)
		return -EINVAL;
	return kill_by_id_code(KILL_THREAD, 0, (int)tid, (int)sig, SI_TKILL);
}

long sys_tgkill(u64 tgid, u64 tid, u64 sig, u64 a3, u64 a4, u64 a5)
{
	if ((int)tgid <= 0 || (int)tid <= 0 || sig > _NSIG)
		return -EINVAL;
	return kill_by_id_code(KILL_THREAD_IN_GROUP, (int)tgid, (int)tid, (int)sig, SI_TKILL);
}

/*
 * rt_sigqueueinfo and rt_tgsigqueueinfo send the caller's own siginfo
 * (sigqueue's SI_QUEUE and si_value), with Linux's order: the copy
 * (EFAULT), then who may claim which si_code: one that says the kernel or
 * kill sent it (si_code >= 0, or SI_TKILL) only to the caller itself
 * (its pid, or its thread id for rt_tgsigqueueinfo), else EPERM even for
 * root; then the target (ESRCH), as kill and tgkill.
 */
static long sigqueueinfo(enum kill_kind kind, int tgid, int id, u64 sig, u64 uinfo)
{
	siginfo_t info;

	if (copy_from_user(&info, (void *)uinfo, sizeof(info)))
		return -EFAULT;
	if ((info.si_code >= 0 || info.si_code == SI_TKILL) &&
	    id != (kind == KILL_PROCESS ? current->tgid : current->tid))
		return -EPERM;
	if (sig > _NSIG)
		return -EINVAL;
	return kill_by_id(kind, tgid, id, (int)sig, &info);
}

long sys_rt_sigqueueinfo(u64 pid, u64 sig, u64 uinfo, u64 a3, u64 a4, u64 a5)
{
	return sigqueueinfo(KILL_PROCESS, 0, (int)pid, sig, uinfo);
}

long sys_rt_tgsigqueueinfo(u64 tgid, u64 tid, u64 sig, u64 uinfo, u64 a4, u64 a5)
{
	if ((int)tgid <= 0 || (int)tid <= 0)
		return -EINVAL;
	return sigqueueinfo(KILL_THREAD_IN_GROUP, (int)tgid, (int)tid, sig, uinfo);
}

/*
 * Called by do_exit of every thread, after it left its thread group
 * (group_dead: it was the last), with its exit status. A thread other than the leader goes
 * to the reaper (nobody waits for it). The last thread of a process makes
 * the process a zombie: off process_list, its children to the reaper,
 * its parent told (the leader stands for the process, whenever it left).
 */
void exit_notify(struct task *t, bool group_dead, int status)
{
	struct task *leader = t->group_leader, *c, *n;

	spin_lock(&process_lock);
	if (t != leader)
		list_add_tail(&t->sibling, &reap_list);
	if (group_dead) {
		leader->exiting = true;
		list_del_init(&leader->process_node);	/* kill finds it no more */
		exit_orphaned_pgrps(leader);
		list_for_each_entry_safe(c, n, &leader->children, sibling) {
			c->parent = NULL;
			list_del_init(&c->sibling);
			if (c->exiting)
				list_add_tail(&c->sibling, &reap_list);
			else
				c->autoreap = true;
		}
		/* The process's status: the group exit's, or the leader's own. */
		status = group_exit_status(leader, t == leader ? status : leader->exit_code);
		if (leader->parent && notify_parent(leader, status)) {
			leader->parent = NULL;		/* the parent wants no zombie */
			list_del_init(&leader->sibling);
			leader->autoreap = true;
		}
		if (!leader->parent && leader->autoreap)
			list_add_tail(&leader->sibling, &reap_list);
	}
	spin_unlock(&process_lock);
	wake_up_all(&reaper_wq);
	wake_up_all(&child_exit_wq);
}
