/*
 * Processes by pid (kernel/pgrp.c), for code outside kernel/ that must
 * not include quire/process.h (fs/: /proc/<pid>). The host build has no
 * processes: -ESRCH and none (arch/host/proc.c).
 */
#ifndef QUIRE_PID_H
#define QUIRE_PID_H

#include <quire/sched.h>

/* Job control (kernel/pgrp.c, docs/signals.md): a process's group and session. */
static inline int task_pgid(const struct task *t)
{
	return READ_ONCE(t->group_leader->pgid);
}

static inline int task_sid(const struct task *t)
{
	return READ_ONCE(t->group_leader->sid);
}

/*
 * Call fn on the process whose pid is pid (a zombie too, or the process of
 * thread id pid; 0: the calling task) under process_lock, so that it
 * cannot be freed meanwhile (fn must not sleep); fn's result, or -ESRCH
 * when there is no such process (kernel/pgrp.c).
 */
int with_process_by_pid(int pid, int (*fn)(struct task *p, void *arg), void *arg);
/* The pids of every process, zombies too, ascending: how many were put in pids (at most max). */
int process_list_pids(int *pids, int max);

#endif
