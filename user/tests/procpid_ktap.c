/*
 * /proc/<pid> and the system-wide /proc files that ps, top, free,
 * uptime and numastat read (fs/proc_pid.c, fs/proc_sys.c; docs/procfs.md):
 * the listing of pids, another process's stat (its 52 fields), status,
 * cmdline, comm, exe, maps and numa_maps (pages a child placed on node 2
 * seen from its parent), a zombie and a reaped process, and the formats of
 * /proc/loadavg, /proc/uptime, /proc/stat and /proc/cpuinfo. The same
 * binary passes on Linux 6.12 (the node 2 check needs three nodes, as
 * numa3 has). Job procpid-numa3.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ktap.h"

#define MPOL_BIND	2
#define CHILD_PAGES	64

static char self_path[256] = "/tests/procpid_ktap";

/* The whole of a /proc file into buf (NUL-terminated); its length, or -errno. */
static long read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	size_t n = 0;
	ssize_t r;

	if (fd < 0)
		return -errno;
	while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	r = r < 0 ? -errno : 0;
	close(fd);
	buf[n] = '\0';
	return r < 0 ? r : (long)n;
}

/*
 * The child: memory on node 2 (when there is one) touched, then a byte on
 * the pipe, then a pause until killed. Run as `procpid_ktap child FD a b`.
 */
static int child_main(int fd)
{
	unsigned long nodemask = 1UL << 2;
	char *p;

	if (access("/sys/devices/system/node/node2", F_OK) == 0 &&
	    syscall(SYS_set_mempolicy, MPOL_BIND, &nodemask, 64) != 0)
		return 3;
	p = mmap(NULL, CHILD_PAGES * 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 4;
	memset(p, 1, CHILD_PAGES * 4096);
	if (write(fd, "r", 1) != 1)
		return 5;
	for (;;)
		pause();
}

static pid_t start_child(void)
{
	int p[2];
	pid_t pid;
	char c, fdarg[12];

	if (pipe(p))
		return -1;
	snprintf(fdarg, sizeof(fdarg), "%d", p[1]);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		execl(self_path, "procpid_ktap", "child", fdarg, "two words", "", "last", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (read(p[0], &c, 1) != 1) {
		close(p[0]);
		return -1;
	}
	close(p[0]);
	return pid;
}

static void listing(pid_t child)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long last = 0;
	int seen_child = 0, seen_self = 0, seen_init = 0, sorted = 1, self_entry = 0;

	CHECK(d != NULL);
	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (!strcmp(e->d_name, "self"))
			self_entry = 1;
		if (*end || end == e->d_name)
			continue;
		CHECK(e->d_type == DT_DIR);
		if (pid <= last)
			sorted = 0;
		last = pid;
		seen_child |= pid == child;
		seen_self |= pid == getpid();
		seen_init |= pid == 1;
	}
	if (d)
		closedir(d);
	CHECK(seen_child && seen_self && seen_init);
	CHECK(sorted);
	CHECK(self_entry);
	ktap_report("proc_lists_pids", NULL);
}

/* stat's fields: f[1] is the comm (without its parentheses). */
static int split_stat(char *buf, char **f, int max)
{
	char *open = strchr(buf, '('), *close = strrchr(buf, ')');
	int n = 0;

	if (!open || !close)
		return 0;
	*open = '\0';
	*close = '\0';
	f[n++] = buf;
	f[n++] = open + 1;
	for (char *s = strtok(close + 1, " \n"); s && n < max; s = strtok(NULL, " \n"))
		f[n++] = s;
	return n;
}

static void stat_file(pid_t child)
{
	char path[64], buf[2048], *f[64];
	struct timespec ts;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/stat", child);
	/* the child is on its way into pause(): sleeping within a second */
	for (int i = 0; i < 100; i++) {
		CHECK(read_file(path, buf, sizeof(buf)) > 0);
		if (strstr(buf, ") S "))
			break;
		usleep(10000);
	}
	n = split_stat(buf, f, 64);
	CHECK(n == 52);
	if (n == 52) {
		CHECK(atoi(f[0]) == child);
		CHECK(!strcmp(f[1], "procpid_ktap"));
		CHECK(!strcmp(f[2], "S"));
		CHECK(atoi(f[3]) == getpid());			/* ppid */
		CHECK(atoi(f[4]) == getpgid(child));		/* pgrp */
		CHECK(atoi(f[5]) == getsid(child));		/* session */
		CHECK(atoi(f[17]) == 20 && atoi(f[18]) == 0);	/* priority, nice */
		CHECK(atoi(f[19]) == 1);			/* threads */
		clock_gettime(CLOCK_BOOTTIME, &ts);
		CHECK(strtoull(f[21], NULL, 10) <= (unsigned long long)ts.tv_sec * 100 + ts.tv_nsec / 10000000 + 1);
		CHECK(strtoull(f[22], NULL, 10) >= CHILD_PAGES * 4096);	/* vsize */
		CHECK(strtoull(f[23], NULL, 10) >= CHILD_PAGES);		/* rss, pages */
		CHECK(atoi(f[37]) == SIGCHLD);			/* exit_signal */
		CHECK(strtoull(f[47], NULL, 10) < strtoull(f[48], NULL, 10));	/* arg_start < arg_end */
	}
	/* our own, through /proc/self and /proc/<pid>: the same process */
	CHECK(read_file("/proc/self/stat", buf, sizeof(buf)) > 0);
	n = split_stat(buf, f, 64);
	CHECK(n == 52 && atoi(f[0]) == getpid() && !strcmp(f[2], "R"));
	ktap_report("pid_stat", NULL);
}

static void status_cmdline_comm_exe(pid_t child)
{
	char path[64], buf[4096], want[64], link[256];
	static const char args[] = "procpid_ktap\0child\0";
	long n;

	snprintf(path, sizeof(path), "/proc/%d/status", child);
	CHECK(read_file(path, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "Name:\tprocpid_ktap\n") != NULL);
	snprintf(want, sizeof(want), "\nPid:\t%d\n", child);
	CHECK(strstr(buf, want) != NULL);
	snprintf(want, sizeof(want), "\nPPid:\t%d\n", getpid());
	CHECK(strstr(buf, want) != NULL);
	CHECK(strstr(buf, "\nVmRSS:") != NULL);
	CHECK(strstr(buf, "\nState:\tS (sleeping)\n") != NULL);
	/* cmdline: every argument with its NUL, an empty one too */
	snprintf(path, sizeof(path), "/proc/%d/cmdline", child);
	n = read_file(path, buf, sizeof(buf));
	CHECK(n > (long)sizeof(args) - 1);
	CHECK(memcmp(buf, args, sizeof(args) - 1) == 0);
	if (n > 0) {
		const char *tail = "two words\0\0last\0";

		CHECK(n >= 16 && memcmp(buf + n - 16, tail, 16) == 0);
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", child);
	CHECK(read_file(path, buf, sizeof(buf)) > 0 && !strcmp(buf, "procpid_ktap\n"));
	snprintf(path, sizeof(path), "/proc/%d/exe", child);
	n = readlink(path, link, sizeof(link) - 1);
	CHECK(n > 0);
	if (n > 0) {
		link[n] = '\0';
		CHECK(!strcmp(link, self_path));
	}
	/* statm: size >= resident >= the child's pages */
	snprintf(path, sizeof(path), "/proc/%d/statm", child);
	CHECK(read_file(path, buf, sizeof(buf)) > 0);
	{
		unsigned long size = 0, res = 0;

		CHECK(sscanf(buf, "%lu %lu", &size, &res) == 2);
		CHECK(size >= res && res >= CHILD_PAGES);
	}
	ktap_report("pid_status_cmdline_comm_exe", NULL);
}

static void maps_numa_maps(pid_t child)
{
	char path[64], line[512];
	FILE *f;
	int stack = 0, lines = 0;
	long on_node2 = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", child);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		lines++;
		stack |= strstr(line, "[stack]") != NULL;
	}
	if (f)
		fclose(f);
	CHECK(lines >= 3 && stack);
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", child);
	f = fopen(path, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		char *n2 = strstr(line, " N2=");

		if (n2 && strstr(line, "bind:2"))
			on_node2 += strtol(n2 + 4, NULL, 10);
	}
	if (f)
		fclose(f);
	if (access("/sys/devices/system/node/node2", F_OK) == 0) {
		CHECK(on_node2 >= CHILD_PAGES);
		ktap_report("pid_maps_numa_maps", NULL);
	} else {
		ktap_report("pid_maps_numa_maps", "no node 2");
	}
}

static void gone(pid_t child)
{
	char path[64], buf[2048], *f[64];
	int fd, st;

	/* a zombie: still listed, state Z, empty cmdline */
	snprintf(path, sizeof(path), "/proc/%d/stat", child);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(kill(child, SIGKILL) == 0);
	{
		siginfo_t si;

		CHECK(waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT) == 0);
	}
	CHECK(read_file(path, buf, sizeof(buf)) > 0);
	CHECK(split_stat(buf, f, 64) == 52 && !strcmp(f[2], "Z"));
	snprintf(path, sizeof(path), "/proc/%d/cmdline", child);
	CHECK(read_file(path, buf, sizeof(buf)) == 0);
	CHECK(waitpid(child, &st, 0) == child);
	/* reaped: no directory; a file opened before reads ESRCH */
	snprintf(path, sizeof(path), "/proc/%d", child);
	errno = 0;
	CHECK(access(path, F_OK) == -1 && errno == ENOENT);
	snprintf(path, sizeof(path), "/proc/%d/status", child);
	errno = 0;
	CHECK(open(path, O_RDONLY) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(pread(fd, buf, sizeof(buf), 0) == -1 && errno == ESRCH);
	close(fd);
	CHECK(access("/proc/0", F_OK) == -1 && access("/proc/01", F_OK) == -1);
	ktap_report("pid_zombie_and_reaped", NULL);
}

static void loadavg_uptime(void)
{
	char buf[256];
	double l1, l5, l15, up1, up2, idle;
	int running, total, last;
	struct timespec ts;

	CHECK(read_file("/proc/loadavg", buf, sizeof(buf)) > 0);
	CHECK(sscanf(buf, "%lf %lf %lf %d/%d %d", &l1, &l5, &l15, &running, &total, &last) == 6);
	CHECK(l1 >= 0 && l5 >= 0 && l15 >= 0);
	CHECK(running >= 1 && running <= total);
	CHECK(last >= getpid());
	CHECK(buf[strlen(buf) - 1] == '\n');
	CHECK(read_file("/proc/uptime", buf, sizeof(buf)) > 0);
	CHECK(sscanf(buf, "%lf %lf", &up1, &idle) == 2);
	clock_gettime(CLOCK_BOOTTIME, &ts);
	CHECK(up1 <= ts.tv_sec + 1.0 && up1 >= ts.tv_sec - 1.0);
	CHECK(idle >= 0);
	usleep(30000);
	CHECK(read_file("/proc/uptime", buf, sizeof(buf)) > 0 && sscanf(buf, "%lf", &up2) == 1);
	CHECK(up2 >= up1 + 0.02);
	ktap_report("loadavg_uptime", NULL);
}

static void stat_cpuinfo(void)
{
	char buf[65536], *line, *save;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned long long u1 = 0, u2 = 0, v[10];
	int cpus = 0, processors = 0, fpu = 0, has_btime = 0, has_ctxt = 0;
	long long btime = 0;

	CHECK(read_file("/proc/stat", buf, sizeof(buf)) > 0);
	CHECK(sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		     &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]) == 10);
	u1 = v[0] + v[1] + v[2];	/* user, nice, system */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "cpu", 3) && isdigit((unsigned char)line[3]))
			cpus++;
		if (sscanf(line, "btime %lld", &btime) == 1)
			has_btime = 1;
		has_ctxt |= !strncmp(line, "ctxt ", 5) && atoll(line + 5) > 0;
	}
	CHECK(cpus == ncpu);
	CHECK(has_ctxt);
	CHECK(has_btime);
	{
		struct timespec bt;

		clock_gettime(CLOCK_BOOTTIME, &bt);
		CHECK(llabs(time(NULL) - bt.tv_sec - btime) <= 2);
	}
	/* busy for 300 ms: user + system ticks grow */
	{
		struct timespec t0, t1;
		volatile unsigned long x = 0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			for (int i = 0; i < 100000; i++)
				x += i;
			clock_gettime(CLOCK_MONOTONIC, &t1);
		} while ((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 300);
	}
	CHECK(read_file("/proc/stat", buf, sizeof(buf)) > 0);
	CHECK(sscanf(buf, "cpu %llu %llu %llu", &v[0], &v[1], &v[2]) == 3);
	u2 = v[0] + v[1] + v[2];
	CHECK(u2 >= u1 + 20);
	CHECK(read_file("/proc/cpuinfo", buf, sizeof(buf)) > 0);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		processors += !strncmp(line, "processor\t: ", 12);
		fpu |= !strncmp(line, "flags\t\t: fpu", 12);
	}
	CHECK(processors == ncpu);
	CHECK(fpu);
	ktap_report("proc_stat_cpuinfo", NULL);
}

int main(int argc, char **argv)
{
	pid_t child;

	if (argc >= 3 && !strcmp(argv[1], "child"))
		return child_main(atoi(argv[2]));
	{
		ssize_t n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);

		if (n > 0)
			self_path[n] = '\0';
	}
	ktap_begin("procpid", 7);
	child = start_child();
	CHECK(child > 0);
	listing(child);
	stat_file(child);
	status_cmdline_comm_exe(child);
	maps_numa_maps(child);
	gone(child);
	loadavg_uptime();
	stat_cpuinfo();
	return ktap_finish();
}
