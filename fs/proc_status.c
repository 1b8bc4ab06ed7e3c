/*
 * /proc/self/status, in Linux's format ("Name:\tinit\n", "VmRSS:\t    1234 kB\n"),
 * with the lines Quire knows, in Linux's order:
 *
 *   Name, Umask, State, Tgid, Pid, PPid, TracerPid (0: no ptrace), Uid, Gid
 *   (0: everyone is root), VmSize, VmLck (0: no mlock), VmRSS, RssAnon,
 *   RssFile, VmData, VmStk, VmSwap (0: no swap), HugetlbPages (0: no
 *   hugetlb), Threads, SigQ, SigPnd, ShdPnd, SigBlk, SigIgn, SigCgt,
 *   Cpus_allowed(_list), Mems_allowed(_list)
 *
 * Left out, not faked: Ngid, FDSize, Groups, the NS* lines, VmPeak and VmHWM
 * (no peaks are kept), VmPin, VmExe, VmLib, VmPTE, RssShmem (Quire's shared
 * memory is a RAM file, counted in RssFile), the capabilities, seccomp and
 * speculation lines, and the context-switch counts.
 *
 * Linux's /proc/self is a link to /proc/<tgid>: the process's leader (its
 * State, Pid, pending and blocked signals) and the process's memory.
 * Quire's /proc/self is a directory, and this file describes the process of
 * whoever reads it (a descriptor inherited by a fork child shows the
 * child, where Linux's would still show the parent); /proc/<pid>/status
 * describes process pid (fs/proc_pid.c).
 */
#define pr_fmt(fmt) "procfs: " fmt
#include <quire/pseudofs.h>
#include <quire/task_mmu.h>
#include <quire/sched.h>
#include <quire/signal.h>
#include <quire/fdtable.h>
#include <quire/numa.h>
#include <quire/percpu.h>
#include <quire/mmzone.h>
#include <quire/kernel.h>
#include <quire/errno.h>
#include <quire/pid.h>
#include <quire/mmap.h>
#include "internal.h"

/* "Name:\t...": the command name, newline and backslash escaped as Linux does. */
static int show_name(char *buf, size_t size, const char *comm)
{
	int len = scnprintf(buf, size, "Name:\t");

	for (int i = 0; i < TASK_COMM_LEN && comm[i]; i++) {
		if (comm[i] == '\n')
			len += scnprintf(buf + len, size - len, "\\n");
		else if (comm[i] == '\\')
			len += scnprintf(buf + len, size - len, "\\\\");
		else
			len += scnprintf(buf + len, size - len, "%c", comm[i]);
	}
	return len + scnprintf(buf + len, size - len, "\n");
}

static int show_mem(char *buf, size_t size, struct mm_struct *mm)
{
	static const char fmt[] = "%s\t%8lu kB\n";
	struct task_mem tm;
	int len = 0;

	task_mem_counts(mm, &tm);
	len += scnprintf(buf + len, size - len, fmt, "VmSize:", tm.size >> 10);
	len += scnprintf(buf + len, size - len, fmt, "VmLck:", 0UL);
	len += scnprintf(buf + len, size - len, fmt, "VmRSS:", (tm.rss_anon + tm.rss_file) >> 10);
	len += scnprintf(buf + len, size - len, fmt, "RssAnon:", tm.rss_anon >> 10);
	len += scnprintf(buf + len, size - len, fmt, "RssFile:", tm.rss_file >> 10);
	len += scnprintf(buf + len, size - len, fmt, "VmData:", tm.data >> 10);
	len += scnprintf(buf + len, size - len, fmt, "VmStk:", tm.stack >> 10);
	len += scnprintf(buf + len, size - len, fmt, "VmSwap:", 0UL);
	len += scnprintf(buf + len, size - len, "HugetlbPages:\t%8lu kB\n", 0UL);
	return len;
}

/* Threads, SigQ and the five signal masks (the leader's own pending and blocked). */
static int show_signals(char *buf, size_t size, struct task *leader)
{
	struct sighand_struct *sh = leader->sighand;
	u64 pending, shared, blocked, ignored = 0, caught = 0;
	int threads, queued, len;

	if (!sh)
		return 0;
	spin_lock(&sh->siglock);
	threads = sh->nr_threads;
	queued = sh->nr_queued;
	pending = leader->pending.signal;
	shared = sh->shared_pending.signal;
	blocked = leader->blocked;
	for (int i = 0; i < _NSIG; i++) {
		if (sh->action[i].handler == SIG_IGN)
			ignored |= 1ULL << i;
		else if (sh->action[i].handler != SIG_DFL)
			caught |= 1ULL << i;
	}
	spin_unlock(&sh->siglock);
	/* SigQ's limit is RLIMIT_SIGPENDING, which getrlimit reports unlimited. */
	len = scnprintf(buf, size, "Threads:\t%d\nSigQ:\t%d/%lu\n", threads, queued, ~0UL);
	len += scnprintf(buf + len, size - len,
			 "SigPnd:\t%016llx\nShdPnd:\t%016llx\nSigBlk:\t%016llx\n"
			 "SigIgn:\t%016llx\nSigCgt:\t%016llx\n",
			 (unsigned long long)pending, (unsigned long long)shared,
			 (unsigned long long)blocked, (unsigned long long)ignored,
			 (unsigned long long)caught);
	return len;
}

struct status_buf {
	char *buf;
	size_t size;
	int len;
};

/* Name to Gid, under process_lock (t: the process, or the reader's thread for /proc/self). */
static int status_head(struct task *t, void *arg)
{
	struct status_buf *b = arg;
	struct task *leader = t->group_leader ? t->group_leader : t, *parent = leader->parent;

	b->len = show_name(b->buf, b->size, leader->comm);
	b->len += scnprintf(b->buf + b->len, b->size - b->len,
			    "Umask:\t%04o\nState:\t%s\nTgid:\t%d\nPid:\t%d\nPPid:\t%d\nTracerPid:\t0\n"
			    "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n",
			    leader->files ? leader->files->umask : 022, proc_task_state(leader),
			    leader->tgid, leader->tid, parent ? parent->tgid : 0);
	return 0;
}

/* Threads to Mems_allowed_list, under process_lock. */
static int status_tail(struct task *t, void *arg)
{
	struct status_buf *b = arg;
	struct task *leader = t->group_leader ? t->group_leader : t;
	char *buf = b->buf;
	size_t size = b->size;
	int len = b->len;
	u64 mems = 0, cpus = 0;

	for (int cpu = 0; cpu < MAX_CPUS; cpu++)	/* the online ones, as sched_getaffinity says */
		if (cpu_online(cpu) && (leader->cpus_allowed & (1ULL << cpu)))
			cpus |= 1ULL << cpu;
	len += show_signals(buf + len, size - len, leader);
	len += scnprintf(buf + len, size - len, "Cpus_allowed:\t");
	len += show_id_mask(buf + len, size - len, cpus, nr_cpu_ids);
	len += scnprintf(buf + len, size - len, "Cpus_allowed_list:\t");
	len += show_id_list(buf + len, size - len, cpus);
	/* No cpusets: a task may use every node with memory, as Linux's top cpuset. */
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_online(nid) && node_has_memory(nid))
			mems |= 1ULL << nid;
	len += scnprintf(buf + len, size - len, "Mems_allowed:\t");
	len += show_id_mask(buf + len, size - len, mems, MAX_NUMNODES);
	len += scnprintf(buf + len, size - len, "Mems_allowed_list:\t");
	len += show_id_list(buf + len, size - len, mems);
	b->len = len;
	return 0;
}

/*
 * The file's process (proc_pid_of: 0 is the reader's) in three steps, the
 * memory lines outside process_lock (task_mem_counts takes mmap_lock); a
 * process that goes in between is ESRCH.
 */
static ssize_t status_show(struct pseudo_file *pf, char *buf, size_t size)
{
	struct status_buf b = { buf, size, 0 };
	int pid = proc_pid_of(pf), err;
	struct mm_struct *mm;

	if (!current) {			/* a host test: no task */
		buf[0] = '\0';
		return 0;
	}
	err = with_process_by_pid(pid, status_head, &b);
	if (err)
		return err;
	if (!get_process_mm(pid, &mm)) {
		b.len += show_mem(buf + b.len, size - b.len, mm);
		mmput(mm);
	}
	err = with_process_by_pid(pid, status_tail, &b);
	return err ? err : b.len;
}

const struct pseudo_ops proc_status_ops = { .show = status_show };
