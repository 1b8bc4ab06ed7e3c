/*
 * Process groups and sessions, with Linux's rules (docs/signals.md,
 * "Process groups and sessions"): setpgid, getpgid, getpgrp, setsid,
 * getsid; kill to a group and to every process; orphaned process groups;
 * the terminal's job-control check (drivers/tty.c calls it).
 *
 * A process's pgid and sid live on its leader task (task_pgid, task_sid),
 * written under process_lock (kernel/fork.c), which also guards
 * process_list, the live processes walked here. A zombie (exited, not yet
 * reaped) still belongs to its group, as on Linux: it is found through its
 * parent's children.
 */
#define pr_fmt(fmt) "pgrp: " fmt
#include <quire/process.h>
#include <quire/mmap.h>
#include <quire/signal.h>
#include <quire/syscalls.h>
#include <quire/errno.h>

/*
 * Call fn on every process, the live ones, then the zombies, until fn
 * returns true; returns whether it did. Under process_lock.
 */
static bool walk_processes(bool (*fn)(struct task *p, void *arg), void *arg)
{
	struct task *p, *c;

	lockdep_assert_held(&process_lock);
	list_for_each_entry(p, &process_list, process_node)
		if (fn(p, arg))
			return true;
	list_for_each_entry(p, &process_list, process_node)
		list_for_each_entry(c, &p->children, sibling)
			if (c->exiting && fn(c, arg))
				return true;
	return false;
}

struct walk {
	int id;			/* what is looked for: a pid, */
	bool pgid;		/* or a process group's id */
	struct task *found;
};

static bool matches(struct task *p, void *arg)
{
	struct walk *w = arg;

	if ((w->pgid ? p->pgid : p->tgid) != w->id)
		return false;
	w->found = p;
	return true;
}

/*
 * The process whose pid is id (a zombie too), or the live process that
 * has a thread id (*thread set: it names no group leader). Under process_lock.
 */
static struct task *find_process(int id, bool *thread)
{
	struct walk w = { .id = id };
	struct task *p;

	*thread = false;
	if (id <= 0)
		return NULL;
	if (walk_processes(matches, &w))
		return w.found;
	list_for_each_entry(p, &process_list, process_node)
		if (send_sig_in_group(p, id, 0, NULL, false) == 0) {
			*thread = true;
			return p;
		}
	return NULL;
}

struct pid_collect {
	int *pids;
	int n, max;
};

static bool collect_pid(struct task *p, void *arg)
{
	struct pid_collect *c = arg;

	if (c->n < c->max)
		c->pids[c->n++] = p->tgid;
	return false;
}

int process_list_pids(int *pids, int max)
{
	struct pid_collect c = { pids, 0, max };

	spin_lock(&process_lock);
	walk_processes(collect_pid, &c);
	spin_unlock(&process_lock);
	for (int i = 1; i < c.n; i++)		/* ascending, as /proc lists them */
		for (int j = i; j > 0 && pids[j - 1] > pids[j]; j--) {
			int t = pids[j];

			pids[j] = pids[j - 1];
			pids[j - 1] = t;
		}
	return c.n;
}

int with_process_by_pid(int pid, int (*fn)(struct task *p, void *arg), void *arg)
{
	struct task *p;
	bool thread;
	int err;

	spin_lock(&process_lock);
	p = pid ? find_process(pid, &thread) : current;
	err = p ? fn(p, arg) : -ESRCH;
	spin_unlock(&process_lock);
	return err;
}

static int take_mm(struct task *p, void *arg)
{
	struct mm_struct **mmp = arg;

	if (!p->mm)
		return -EINVAL;		/* exited (a zombie), or a kernel thread: Linux's answer */
	atomic_inc(&p->mm->mm_users);	/* t->mm changes under process_lock (set_task_mm) */
	*mmp = p->mm;
	return 0;
}

int get_process_mm(int pid, struct mm_struct **mmp)
{
	*mmp = NULL;
	return with_process_by_pid(pid, take_mm, mmp);
}

void set_task_mm(struct task *t, struct mm_struct *mm)
{
	spin_lock(&process_lock);
	t->mm = mm;
	spin_unlock(&process_lock);
}

/* A process of group pgid (a zombie too), or NULL. Under process_lock. */
static struct task *pgrp_member(int pgid)
{
	struct walk w = { .id = pgid, .pgid = true };

	walk_processes(matches, &w);
	return w.found;
}

/* ---- sending to many ---- */

struct kill_walk {
	int pgid;		/* kill_pgrp's group */
	int sig;
	bool priv;		/* from the kernel: SI_KERNEL */
	int count;		/* processes signalled */
	int ok;			/* of them, without an error */
	int err;		/* the last error */
};

/* One process of a kill to many: a zombie counts, and takes nothing, as on Linux. */
static void kill_one(struct task *p, struct kill_walk *k)
{
	int err = 0;

	k->count++;
	if (k->sig && !p->exiting)
		err = k->priv ? send_sig_kernel(k->sig, p) : send_sig(k->sig, p, SI_USER);
	if (err)
		k->err = err;
	else
		k->ok++;
}

static bool kill_in_pgrp(struct task *p, void *arg)
{
	struct kill_walk *k = arg;

	if (p->pgid == k->pgid)
		kill_one(p, k);
	return false;
}

/* -ESRCH when nobody was there; else 0 if one took it, as Linux's __kill_pgrp_info. */
static int kill_result(const struct kill_walk *k)
{
	return !k->count ? -ESRCH : k->ok ? 0 : k->err;
}

static int __kill_pgrp(int pgid, int sig, bool priv)
{
	struct kill_walk k = { .pgid = pgid, .sig = sig, .priv = priv };

	walk_processes(kill_in_pgrp, &k);
	return kill_result(&k);
}

int kill_pgrp(int pgid, int sig, bool priv)
{
	int ret;

	spin_lock(&process_lock);
	ret = __kill_pgrp(pgid, sig, priv);
	spin_unlock(&process_lock);
	return ret;
}

static bool kill_other(struct task *p, void *arg)
{
	if (p->tgid > 1 && p->tgid != current->tgid)
		kill_one(p, arg);
	return false;
}

int kill_all(int sig)
{
	struct kill_walk k = { .sig = sig };

	spin_lock(&process_lock);
	walk_processes(kill_other, &k);
	spin_unlock(&process_lock);
	return kill_result(&k);
}

/* ---- orphaned process groups ---- */

/*
 * Whether group pgid is orphaned (POSIX): no live member has a parent in
 * another group of the same session. A parent that is pid 1, gone or
 * exiting is no such link, as in Linux's will_become_orphaned_pgrp.
 * Under process_lock.
 */
static bool pgrp_orphaned(int pgid)
{
	struct task *p, *q;

	list_for_each_entry(p, &process_list, process_node) {
		if (p->pgid != pgid || p->exiting)
			continue;
		q = p->parent;
		if (q && !q->exiting && q->tgid != 1 && q->pgid != pgid && q->sid == p->sid)
			return false;
	}
	return true;
}

bool current_pgrp_orphaned(void)
{
	bool ret;

	spin_lock(&process_lock);
	ret = pgrp_orphaned(task_pgid(current));
	spin_unlock(&process_lock);
	return ret;
}

/* A group this exit leaves orphaned, with a stopped process: SIGHUP, then SIGCONT (POSIX). */
static void hangup_if_orphaned(int pgid)
{
	struct task *p;

	if (!pgrp_orphaned(pgid))
		return;
	list_for_each_entry(p, &process_list, process_node)
		if (p->pgid == pgid && process_stopped(p)) {
			__kill_pgrp(pgid, SIGHUP, true);
			__kill_pgrp(pgid, SIGCONT, true);
			return;
		}
}

void exit_orphaned_pgrps(struct task *leader)
{
	struct task *parent = leader->parent, *c;

	lockdep_assert_held(&process_lock);
	/* Its own group, if this process was what tied it to another group of the session, */
	if (parent && parent->pgid != leader->pgid && parent->sid == leader->sid)
		hangup_if_orphaned(leader->pgid);
	/* and its children's groups. */
	list_for_each_entry(c, &leader->children, sibling)
		if (!c->exiting && c->pgid != leader->pgid && c->sid == leader->sid)
			hangup_if_orphaned(c->pgid);
}

/* ---- the terminal ---- */

int pgrp_session(int id)
{
	struct task *p;
	bool thread;
	int ret = -ESRCH;

	spin_lock(&process_lock);
	p = id > 0 ? pgrp_member(id) : NULL;
	if (!p)
		p = find_process(id, &thread);	/* Linux takes a process id too */
	if (p)
		ret = p->sid;
	spin_unlock(&process_lock);
	return ret;
}

bool session_leader_alive(int sid)
{
	struct task *p;
	bool ret = false;

	spin_lock(&process_lock);
	list_for_each_entry(p, &process_list, process_node)
		if (p->tgid == sid) {
			ret = p->sid == sid;
			break;
		}
	spin_unlock(&process_lock);
	return ret;
}

int tty_job_control(int tty_sid, int fg_pgrp, int sig)
{
	struct task *t = current;
	int pgid;

	if (!t->sighand || !tty_sid || task_sid(t) != tty_sid)
		return 0;		/* not the caller's controlling terminal */
	pgid = task_pgid(t);
	if (!fg_pgrp || pgid == fg_pgrp)
		return 0;		/* in the foreground */
	if (current_sig_ignored_or_blocked(sig))
		return sig == SIGTTIN ? -EIO : 0;
	if (current_pgrp_orphaned())
		return -EIO;		/* nobody would continue it */
	kill_pgrp(pgid, sig, true);
	return -ERESTARTSYS;		/* again once continued */
}

/* ---- system calls ---- */

/*
 * setpgid (109): move process pid (0: the caller) into group pgid (0: its
 * own id). Linux's rules and errno: the caller or a child of it in its
 * session (else ESRCH, or EPERM for a child in another session), a child
 * that has not run execve (EACCES), not a session leader (EPERM), into
 * an existing group of the caller's session or a new one of its own id
 * (EPERM); a thread id is EINVAL, a negative pgid EINVAL.
 */
long sys_setpgid(u64 upid, u64 upgid, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *me = current->group_leader, *p, *g;
	int pid = (int)upid, pgid = (int)upgid;
	bool thread;
	long err = -ESRCH;

	if (!pid)
		pid = me->tgid;
	if (!pgid)
		pgid = pid;
	if (pgid < 0)
		return -EINVAL;
	spin_lock(&process_lock);
	p = find_process(pid, &thread);
	if (!p)
		goto out;
	err = -EINVAL;
	if (thread)
		goto out;
	if (p->parent == me) {
		err = -EPERM;
		if (p->sid != me->sid)
			goto out;
		err = -EACCES;
		if (p->did_exec)
			goto out;
	} else if (p != me) {
		err = -ESRCH;
		goto out;
	}
	err = -EPERM;
	if (p->sid == p->tgid)
		goto out;	/* a session leader stays in its group */
	if (pgid != pid) {
		g = pgrp_member(pgid);
		if (!g || g->sid != me->sid)
			goto out;
	}
	p->pgid = pgid;
	err = 0;
out:
	spin_unlock(&process_lock);
	return err;
}

/* getpgid (121) and getsid (124): of process pid (0: the caller; a thread id names its process). */
static long get_id(int pid, bool sid)
{
	struct task *p;
	bool thread;
	long ret = -ESRCH;

	if (!pid)
		return sid ? task_sid(current) : task_pgid(current);
	spin_lock(&process_lock);
	p = find_process(pid, &thread);
	if (p)
		ret = sid ? p->sid : p->pgid;
	spin_unlock(&process_lock);
	return ret;
}

long sys_getpgid(u64 pid, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return get_id((int)pid, false);
}

long sys_getsid(u64 pid, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return get_id((int)pid, true);
}

long sys_getpgrp(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return task_pgid(current);
}

/*
 * setsid (112): a new session and group, both of the caller's id, with no
 * controlling terminal. EPERM when the caller leads a group already, or
 * any process's group has its id.
 */
long sys_setsid(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct task *me = current->group_leader;
	long ret = -EPERM;

	spin_lock(&process_lock);
	if (me->sid != me->tgid && !pgrp_member(me->tgid)) {
		me->sid = me->pgid = me->tgid;
		ret = me->tgid;
	}
	spin_unlock(&process_lock);
	return ret;
}
