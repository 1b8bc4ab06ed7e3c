/*
 * The host build has no processes, no scheduler and no timer: what /proc's
 * files (fs/proc_pid.c, fs/proc_sys.c) ask of them answers "none" here, so
 * the host tests of the pseudofs trees link and read those files empty or
 * zero.
 */
#include <quire/pid.h>
#include <quire/sched.h>
#include <quire/cputime.h>
#include <quire/console.h>
#include <quire/cpuinfo.h>
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/errno.h>

int with_process_by_pid(int pid, int (*fn)(struct task *p, void *arg), void *arg)
{
	(void)pid;
	(void)fn;
	(void)arg;
	return -ESRCH;
}

int process_list_pids(int *pids, int max)
{
	(void)pids;
	(void)max;
	return 0;
}

void thread_group_cputime(struct task *t, struct task_cputime *out)
{
	(void)t;
	memset(out, 0, sizeof(*out));
}

int tty_of_session(int sid, int *tpgid)
{
	(void)sid;
	*tpgid = -1;
	return 0;
}

long sched_nr_active(void)
{
	return 0;
}

long sched_nr_tasks(void)
{
	return 0;
}

int sched_last_pid(void)
{
	return 0;
}

u64 sched_nr_switches(void)
{
	return 0;
}

void cpu_times(int cpu, u64 *user, u64 *system, u64 *idle)
{
	(void)cpu;
	*user = *system = *idle = 0;
}

void get_avenrun(unsigned long loads[3])
{
	loads[0] = loads[1] = loads[2] = 0;
}

int arch_cpuinfo_show(int cpu, char *buf, size_t size)
{
	return scnprintf(buf, size, "processor\t: %d\n\n", cpu);
}
