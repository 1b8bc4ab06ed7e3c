/*
 * /proc/<pid>: a directory per process, as Linux's, made from /proc/self's
 * files (fs/procfs.c): the same files, each about process pid instead of
 * the reader (pseudo_node data: the pid; 0 in /proc/self: the caller).
 * /proc lists the pids of every process (zombies too) after its own
 * files, in ascending order; a lookup of a pid that is not a process (a
 * thread's id finds its process, as on Linux) is ENOENT.
 *
 * A directory is made the first time its pid is looked up or listed, and
 * kept (pseudofs nodes are never freed) for the next process with that
 * pid: memory grows with the number of distinct pids ever seen, not with
 * the processes alive. A file opened on a process that has gone reads as
 * ESRCH (stat, status, comm) or empty (cmdline, maps).
 *
 * Here too: stat (Linux's 52 fields, those Quire knows: times in USER_HZ
 * ticks, start time since boot, vsize, rss, signals; the rest 0), statm,
 * cmdline (the argv strings execve put on the stack, read from the
 * process's memory), comm.
 */
#define pr_fmt(fmt) "procfs: " fmt
#include <quire/pseudofs.h>
#include <quire/pid.h>
#include <quire/sched.h>
#include <quire/signal.h>
#include <quire/console.h>
#include <quire/task_mmu.h>
#include <quire/mmap.h>
#include <quire/gup.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/kernel.h>
#include <quire/errno.h>
#include <quire/time.h>
#include "internal.h"

#define USER_HZ		100
#define NS_PER_TICK	(NSEC_PER_SEC / USER_HZ)
#define PROC_PID_MAX	4096		/* pids listed at most */
#define PID_POS_BASE	0x10000		/* listing cookies: above /proc's own files */

int proc_pid_of(const struct pseudo_file *pf)
{
	return (int)(long)pf->data;
}

const char *proc_task_state(const struct task *t)
{
	if (t == current || t->state == TASK_RUNNING)
		return "R (running)";
	if (t->exiting || t->state == TASK_DEAD)
		return "Z (zombie)";
	return t->state == TASK_UNINTERRUPTIBLE ? "D (disk sleep)" : "S (sleeping)";
}

/* What stat shows of a process, taken under process_lock. */
struct stat_snap {
	char comm[TASK_COMM_LEN];
	char state;
	int pid, ppid, pgid, sid, tty_nr, tpgid, threads, exit_signal, cpu, exit_code;
	u64 utime, stime, cutime, cstime, minflt, cminflt, start_ns;
	u64 pending, blocked, ignored, caught;
};

static int stat_fill(struct task *t, void *arg)
{
	struct task *p = t->group_leader ? t->group_leader : t;
	struct sighand_struct *sh = p->sighand;
	struct stat_snap *s = arg;
	struct task_cputime c;

	memcpy(s->comm, p->comm, TASK_COMM_LEN);
	s->comm[TASK_COMM_LEN - 1] = '\0';
	s->state = proc_task_state(p)[0];
	s->pid = p->tgid;
	s->ppid = p->parent ? p->parent->tgid : 0;
	s->pgid = task_pgid(p);
	s->sid = task_sid(p);
	s->tty_nr = tty_of_session(s->sid, &s->tpgid);
	s->exit_signal = p->exit_signal;
	s->cpu = p->cpu;
	s->exit_code = s->state == 'Z' ? p->exit_code : 0;
	s->start_ns = p->start_ns;
	thread_group_cputime(p, &c);
	s->utime = c.utime_ns / NS_PER_TICK;
	s->stime = c.stime_ns / NS_PER_TICK;
	s->minflt = c.min_flt;
	s->cutime = p->children_cputime.utime_ns / NS_PER_TICK;
	s->cstime = p->children_cputime.stime_ns / NS_PER_TICK;
	s->cminflt = p->children_cputime.min_flt;
	s->threads = 1;
	if (sh) {
		spin_lock(&sh->siglock);
		s->threads = sh->nr_threads;
		s->pending = p->pending.signal | sh->shared_pending.signal;
		s->blocked = p->blocked;
		for (int i = 0; i < _NSIG; i++) {
			if (sh->action[i].handler == SIG_IGN)
				s->ignored |= 1ULL << i;
			else if (sh->action[i].handler != SIG_DFL)
				s->caught |= 1ULL << i;
		}
		spin_unlock(&sh->siglock);
	}
	return 0;
}

/* The process's memory figures: 0 when it has none (a zombie, a kernel thread). */
static struct mm_struct *pid_mm(int pid, struct task_mem *tm)
{
	struct mm_struct *mm;

	memset(tm, 0, sizeof(*tm));
	if (get_process_mm(pid, &mm))
		return NULL;
	task_mem_counts(mm, tm);
	return mm;
}

static ssize_t stat_show(struct pseudo_file *pf, char *buf, size_t size)
{
	int pid = proc_pid_of(pf);
	struct stat_snap s = { 0 };
	struct task_mem tm;
	struct mm_struct *mm;
	unsigned long startstack = 0, start_brk = 0, brk = 0, args[4] = { 0 };
	int err;

	if (!current) {			/* a host test: no processes */
		buf[0] = '\0';
		return 0;
	}
	err = with_process_by_pid(pid, stat_fill, &s);
	if (err)
		return err;
	mm = pid_mm(pid, &tm);
	if (mm) {
		startstack = mm->start_stack;
		start_brk = mm->start_brk;
		brk = mm->brk;
		args[0] = mm->arg_start;
		args[1] = mm->arg_end;
		args[2] = mm->env_start;
		args[3] = mm->env_end;
		mmput(mm);
	}
	return scnprintf(buf, size,
			 "%d (%s) %c %d %d %d %d %d %u %llu %llu %llu %llu %llu %llu %llu %llu "
			 "%d %d %d 0 %llu %lu %lu %llu %lu %lu %lu %lu %lu "
			 "%llu %llu %llu %llu %lu %lu %lu %d %d %u %u %llu %lu %lu "
			 "%lu %lu %lu %lu %lu %lu %lu %d\n",
			 s.pid, s.comm, s.state, s.ppid, s.pgid, s.sid, s.tty_nr, s.tpgid,
			 0u /* flags */, (unsigned long long)s.minflt,
			 (unsigned long long)s.cminflt, 0ULL, 0ULL,
			 (unsigned long long)s.utime, (unsigned long long)s.stime,
			 (unsigned long long)s.cutime, (unsigned long long)s.cstime,
			 20 /* priority: nice 0 */, 0 /* nice */, s.threads,
			 (unsigned long long)(s.start_ns / NS_PER_TICK), tm.size,
			 (tm.rss_anon + tm.rss_file) >> 12, ~0ULL /* rsslim: RLIMIT_RSS */,
			 0UL, 0UL /* start/end code */, startstack, 0UL, 0UL /* esp, eip */,
			 (unsigned long long)s.pending, (unsigned long long)s.blocked,
			 (unsigned long long)s.ignored, (unsigned long long)s.caught,
			 0UL, 0UL, 0UL /* wchan, nswap, cnswap */, s.exit_signal, s.cpu,
			 0u, 0u /* rt_priority, policy: SCHED_OTHER */, 0ULL, 0UL, 0UL,
			 0UL, 0UL /* start/end data */, start_brk ? start_brk : brk,
			 args[0], args[1], args[2], args[3], s.exit_code);
}

const struct pseudo_ops proc_stat_ops = { .show = stat_show };

/* statm: size resident shared text lib data dt, in pages (text, lib, dt 0). */
static ssize_t statm_show(struct pseudo_file *pf, char *buf, size_t size)
{
	struct task_mem tm;
	struct mm_struct *mm = current ? pid_mm(proc_pid_of(pf), &tm) : NULL;

	if (!mm) {
		memset(&tm, 0, sizeof(tm));
	} else {
		mmput(mm);
	}
	return scnprintf(buf, size, "%lu %lu %lu 0 0 %lu 0\n", tm.size >> 12,
			 (tm.rss_anon + tm.rss_file) >> 12, tm.rss_file >> 12, tm.data >> 12);
}

const struct pseudo_ops proc_statm_ops = { .show = statm_show };

static int comm_fill(struct task *t, void *arg)
{
	struct task *p = t->group_leader ? t->group_leader : t;

	memcpy(arg, p->comm, TASK_COMM_LEN);
	return 0;
}

static ssize_t comm_show(struct pseudo_file *pf, char *buf, size_t size)
{
	char comm[TASK_COMM_LEN + 1] = { 0 };
	int err;

	if (!current) {
		buf[0] = '\0';
		return 0;
	}
	err = with_process_by_pid(proc_pid_of(pf), comm_fill, comm);
	return err ? err : scnprintf(buf, size, "%s\n", comm);
}

const struct pseudo_ops proc_comm_ops = { .show = comm_show };

/*
 * cmdline: the argument strings, each NUL-terminated, as execve left them
 * on the process's stack (empty for a zombie or a kernel thread).
 */
static ssize_t cmdline_show(struct pseudo_file *pf, char *buf, size_t size)
{
	struct mm_struct *mm;
	unsigned long len;
	int got = 0;

	buf[0] = '\0';
	if (!current || get_process_mm(proc_pid_of(pf), &mm))
		return 0;
	len = mm->arg_end > mm->arg_start ? mm->arg_end - mm->arg_start : 0;
	if (len > size - 1)
		len = size - 1;		/* "maybe cut": the buffer grows and this runs again */
	if (len)
		got = access_remote_vm(mm, mm->arg_start, buf, (int)len, 0);
	mmput(mm);
	return got > 0 ? got : 0;
}

const struct pseudo_ops proc_cmdline_ops = { .show = cmdline_show };

/* ---- the directories ---- */

struct pid_dir {
	struct pid_dir *next;
	int pid;
	struct pseudo_node *node;
};

static struct pid_dir *pid_dirs;	/* under vfs_ns_mutex */
static struct pseudo_node *pid_template, *pid_parent;

static int exists(struct task *p, void *arg)
{
	return 0;
}

/* pid's directory, made on first use (vfs_ns_mutex held); NULL when out of memory. */
static struct pseudo_node *pid_dir(int pid)
{
	struct pid_dir *d;
	char name[12];

	for (d = pid_dirs; d; d = d->next)
		if (d->pid == pid)
			return d->node;
	d = kmalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return NULL;
	scnprintf(name, sizeof(name), "%d", pid);
	d->node = pseudo_clone_dir(pid_template, pid_parent, name, (void *)(long)pid);
	if (!d->node) {
		kfree(d);
		return NULL;
	}
	d->pid = pid;
	d->next = pid_dirs;
	pid_dirs = d;
	return d->node;
}

static struct pseudo_node *pid_lookup(const char *name, size_t len)
{
	long pid = 0;

	if (!current || !len || len > 9 || name[0] == '0')
		return NULL;
	for (size_t i = 0; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return NULL;
		pid = pid * 10 + (name[i] - '0');
	}
	if (with_process_by_pid((int)pid, exists, NULL))
		return NULL;
	return pid_dir((int)pid);
}

static void pid_list(struct dir_context *ctx)
{
	int *pids = kmalloc(PROC_PID_MAX * sizeof(int), GFP_KERNEL);
	int n;

	if (!pids)
		return;
	n = process_list_pids(pids, PROC_PID_MAX);
	for (int i = 0; i < n; i++) {
		struct pseudo_node *node = pid_dir(pids[i]);

		if (node && !pseudo_dir_emit(ctx, node, PID_POS_BASE + pids[i]))
			break;
	}
	kfree(pids);
}

void proc_pid_dirs_init(struct pseudo_node *root, struct pseudo_node *self)
{
	pid_parent = root;
	pid_template = self;
	pseudo_dir_set_lookup(root, pid_lookup);
	pseudo_dir_set_list_extra(root, pid_list);
}
