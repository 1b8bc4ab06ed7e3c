/*
 * System-wide /proc files in Linux's formats, as far as Quire counts
 * what they show (busybox's top, uptime, free and ps, procps, numastat
 * read them):
 *
 *   /proc/loadavg   "0.12 0.05 0.01 1/23 456": the load averages
 *                   (kernel/loadavg.c), tasks running or queued / all
 *                   tasks, the last pid handed out
 *   /proc/uptime    seconds since boot and the CPUs' idle seconds, summed,
 *                   with two decimals
 *   /proc/stat      "cpu" (all CPUs) and "cpuN" lines in USER_HZ ticks: user,
 *                   nice (0), system, idle, then iowait, irq, softirq,
 *                   steal, guest, guest_nice (0: not counted apart);
 *                   intr (the timer's interrupts only), ctxt, btime,
 *                   processes (ids handed out), procs_running,
 *                   procs_blocked (0), softirq (0)
 *   /proc/cpuinfo   a block per online CPU (include/quire/cpuinfo.h)
 */
#define pr_fmt(fmt) "procfs: " fmt
#include <quire/pseudofs.h>
#include <quire/sched.h>
#include <quire/cputime.h>
#include <quire/cpuinfo.h>
#include <quire/percpu.h>
#include <quire/kernel.h>
#include <quire/time.h>
#include "internal.h"

#define USER_HZ		100

static int show_fixed(char *buf, size_t size, unsigned long x)
{
	x += FIXED_1 / 200;		/* round to two decimals, as Linux's LOAD_INT/LOAD_FRAC */
	return scnprintf(buf, size, "%lu.%02lu", x >> FSHIFT, ((x & (FIXED_1 - 1)) * 100) >> FSHIFT);
}

static ssize_t loadavg_show(struct pseudo_file *pf, char *buf, size_t size)
{
	unsigned long loads[3];
	int len = 0;

	get_avenrun(loads);
	for (int i = 0; i < 3; i++) {
		len += show_fixed(buf + len, size - len, loads[i]);
		len += scnprintf(buf + len, size - len, " ");
	}
	return len + scnprintf(buf + len, size - len, "%ld/%ld %d\n", sched_nr_active(),
			       sched_nr_tasks(), sched_last_pid());
}

const struct pseudo_ops proc_loadavg_ops = { .show = loadavg_show };

static ssize_t uptime_show(struct pseudo_file *pf, char *buf, size_t size)
{
	u64 up = ktime_get_ns() / (NSEC_PER_SEC / 100), idle = 0;
	int cpu;

	for_each_online_cpu(cpu) {
		u64 u, s, i;

		cpu_times(cpu, &u, &s, &i);
		idle += i * 100 / USER_HZ;
	}
	return scnprintf(buf, size, "%llu.%02llu %llu.%02llu\n",
			 (unsigned long long)(up / 100), (unsigned long long)(up % 100),
			 (unsigned long long)(idle / 100), (unsigned long long)(idle % 100));
}

const struct pseudo_ops proc_uptime_ops = { .show = uptime_show };

static int cpu_line(char *buf, size_t size, const char *name, u64 user, u64 sys, u64 idle)
{
	return scnprintf(buf, size, "%s %llu 0 %llu %llu 0 0 0 0 0 0\n", name,
			 (unsigned long long)user, (unsigned long long)sys,
			 (unsigned long long)idle);
}

static ssize_t stat_show(struct pseudo_file *pf, char *buf, size_t size)
{
	u64 user = 0, sys = 0, idle = 0, ticks = 0;
	u64 now = ktime_get_ns();
	int len, cpu;

	for_each_online_cpu(cpu) {
		u64 u, s, i;

		cpu_times(cpu, &u, &s, &i);
		user += u;
		sys += s;
		idle += i;
		ticks += per_cpu_ptr(cpu)->timer_ticks;
	}
	len = cpu_line(buf, size, "cpu ", user, sys, idle);
	for_each_online_cpu(cpu) {
		char name[12];
		u64 u, s, i;

		cpu_times(cpu, &u, &s, &i);
		scnprintf(name, sizeof(name), "cpu%d", cpu);
		len += cpu_line(buf + len, size - len, name, u, s, i);
	}
	len += scnprintf(buf + len, size - len,
			 "intr %llu\nctxt %llu\nbtime %llu\nprocesses %d\nprocs_running %ld\n"
			 "procs_blocked 0\nsoftirq 0 0 0 0 0 0 0 0 0 0 0\n",
			 (unsigned long long)ticks, (unsigned long long)sched_nr_switches(),
			 (unsigned long long)((ktime_get_real_ns() - now) / NSEC_PER_SEC),
			 sched_last_pid(), sched_nr_active());
	return len;
}

const struct pseudo_ops proc_stat_sys_ops = { .show = stat_show };

static ssize_t cpuinfo_show(struct pseudo_file *pf, char *buf, size_t size)
{
	int len = 0, cpu;

	for_each_online_cpu(cpu)
		len += arch_cpuinfo_show(cpu, buf + len, size - len);
	return len;
}

const struct pseudo_ops proc_cpuinfo_ops = { .show = cpuinfo_show };
