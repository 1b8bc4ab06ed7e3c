/*
 * Resource limits through getrlimit, setrlimit and prlimit64: the limits a
 * process started by the kernel has (those that do not depend on the
 * machine's memory: RLIMIT_NPROC and RLIMIT_SIGPENDING do, and only their
 * shape is printed), setting and reading back, prlimit64's old value and
 * other processes, inheritance by fork, every errno, and RLIMIT_NOFILE
 * and RLIMIT_FSIZE at work.
 */
#include "diff.h"
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

struct lim {
	uint64_t cur, max;
};

static const char *const names[] = {
	"RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_DATA", "RLIMIT_STACK", "RLIMIT_CORE", "RLIMIT_RSS",
	"RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_MEMLOCK", "RLIMIT_AS", "RLIMIT_LOCKS",
	"RLIMIT_SIGPENDING", "RLIMIT_MSGQUEUE", "RLIMIT_NICE", "RLIMIT_RTPRIO", "RLIMIT_RTTIME",
};

static long xprlimit(pid_t pid, int resource, const struct lim *new, struct lim *old)
{
	return syscall(SYS_prlimit64, pid, resource, new, old);
}

static const char *value(uint64_t v)
{
	static char buf[2][32];
	static int n;

	n ^= 1;
	if (v == ~0ULL)
		return "unlimited";
	snprintf(buf[n], sizeof(buf[n]), "%llu", (unsigned long long)v);
	return buf[n];
}

static void defaults(void)
{
	struct lim l;
	struct rlimit r;

	for (int i = 0; i < 16; i++) {
		if (xprlimit(0, i, NULL, &l) != 0) {
			say("%s: -1 %s", names[i], errname(errno));
			continue;
		}
		if (i == RLIMIT_NPROC || i == RLIMIT_SIGPENDING)	/* the machine's memory */
			say("%s: soft == hard %s", names[i], l.cur == l.max ? "yes" : "no");
		else
			say("%s: soft %s hard %s", names[i], value(l.cur), value(l.max));
		getrlimit(i, &r);
		yesno("  getrlimit says the same", r.rlim_cur == l.cur && r.rlim_max == l.max);
	}
}

static void set_and_read(void)
{
	struct lim l, old, now;

	l.cur = 1000;
	l.max = 2000;
	show("prlimit64 set RLIMIT_CORE 1000/2000", xprlimit(0, RLIMIT_CORE, &l, NULL));
	xprlimit(0, RLIMIT_CORE, NULL, &now);
	say("RLIMIT_CORE now: soft %s hard %s", value(now.cur), value(now.max));
	l.cur = 500;
	l.max = 1500;
	if (xprlimit(0, RLIMIT_CORE, &l, &old) == 0)
		say("prlimit64 set and read at once: the old value: soft %s hard %s", value(old.cur),
		    value(old.max));
	else
		say("prlimit64 set and read at once: -1 %s", errname(errno));
	xprlimit(0, RLIMIT_CORE, NULL, &now);
	say("  now: soft %s hard %s", value(now.cur), value(now.max));
	l.cur = 1600;
	show("soft above hard", xprlimit(0, RLIMIT_CORE, &l, NULL));
	l.cur = 100;
	l.max = 3000;
	show("raise the hard limit (root may)", xprlimit(0, RLIMIT_CORE, &l, NULL));
	l.cur = l.max = ~0ULL;
	show("back to unlimited", xprlimit(0, RLIMIT_CORE, &l, NULL));
	l.cur = 0;
	show("soft 0, hard unlimited", xprlimit(0, RLIMIT_CORE, &l, NULL));
	xprlimit(0, RLIMIT_CORE, NULL, &now);
	say("  now: soft %s hard %s", value(now.cur), value(now.max));
	l.cur = l.max = 1 << 21;
	show("RLIMIT_NOFILE above nr_open (1048576)", xprlimit(0, RLIMIT_NOFILE, &l, NULL));
	l.cur = l.max = 1 << 20;
	show("RLIMIT_NOFILE at nr_open", xprlimit(0, RLIMIT_NOFILE, &l, NULL));
	l.cur = 1024;
	l.max = 4096;
	show("RLIMIT_NOFILE back to 1024/4096", xprlimit(0, RLIMIT_NOFILE, &l, NULL));

	struct rlimit r = { 64, 128 };
	show("setrlimit RLIMIT_MSGQUEUE 64/128", setrlimit(RLIMIT_MSGQUEUE, &r));
	getrlimit(RLIMIT_MSGQUEUE, &r);
	say("  getrlimit: soft %s hard %s", value(r.rlim_cur), value(r.rlim_max));

	/* Errors. */
	show("getrlimit resource 16", getrlimit(16, &r));
	show("prlimit64 resource 16", xprlimit(0, 16, NULL, &now));
	show("prlimit64 resource -1", xprlimit(0, -1, NULL, &now));
	show("prlimit64 pid nobody has", xprlimit(999999, RLIMIT_CORE, NULL, &now));
	show("prlimit64 bad old pointer", xprlimit(0, RLIMIT_CORE, NULL, (void *)8));
	show("prlimit64 bad new pointer", xprlimit(0, RLIMIT_CORE, (void *)8, NULL));
	show("getrlimit bad pointer", syscall(SYS_getrlimit, RLIMIT_CORE, (void *)8));
	show("setrlimit bad pointer", syscall(SYS_setrlimit, RLIMIT_CORE, (void *)8));
	show("prlimit64 own pid", xprlimit(getpid(), RLIMIT_CORE, NULL, &now));
	show("prlimit64 nothing to do", xprlimit(0, RLIMIT_CORE, NULL, NULL));
}

static void other_processes(void)
{
	struct lim l = { 77, 88 }, now;
	int fds[2], back[2], st;
	char c;
	pid_t pid;

	xprlimit(0, RLIMIT_CORE, &l, NULL);
	pipe(fds);
	pipe(back);
	pid = fork();
	if (pid == 0) {
		xprlimit(0, RLIMIT_CORE, NULL, &now);
		say("fork child inherits: soft %s hard %s", value(now.cur), value(now.max));
		fflush(stdout);
		write(back[1], "x", 1);		/* its line first, then the parent's */
		read(fds[0], &c, 1);		/* until the parent has set its limit */
		xprlimit(0, RLIMIT_CORE, NULL, &now);
		say("fork child after its parent set it: soft %s hard %s", value(now.cur), value(now.max));
		_exit(0);
	}
	read(back[0], &c, 1);
	if (xprlimit(pid, RLIMIT_CORE, NULL, &now) == 0)
		say("prlimit64 read the child's: soft %s hard %s", value(now.cur), value(now.max));
	else
		say("prlimit64 read the child's: -1 %s", errname(errno));
	l.cur = 5;
	l.max = 6;
	show("prlimit64 set the child's", xprlimit(pid, RLIMIT_CORE, &l, NULL));
	xprlimit(0, RLIMIT_CORE, NULL, &now);
	say("  the parent's own unchanged: soft %s hard %s", value(now.cur), value(now.max));
	write(fds[1], "x", 1);
	waitpid(pid, &st, 0);
	close(fds[0]);
	close(fds[1]);
	close(back[0]);
	close(back[1]);
}

static void nofile_at_work(void)
{
	struct rlimit r = { 8, 4096 }, old;
	int fd, fds[2];

	getrlimit(RLIMIT_NOFILE, &old);
	for (fd = 3; fd < 32; fd++)
		close(fd);
	show("setrlimit RLIMIT_NOFILE soft 8", setrlimit(RLIMIT_NOFILE, &r));
	for (int i = 3; i < 9; i++) {
		errno = 0;
		fd = open("/", O_RDONLY);
		show_result("open", fd, errno);
	}
	show("dup2 to fd 8", dup2(0, 8));
	show("dup2 to fd 7", dup2(0, 7));
	show("fcntl F_DUPFD from 8", fcntl(0, F_DUPFD, 8));
	show("fcntl F_DUPFD from 3", fcntl(0, F_DUPFD, 3));
	close(7);
	close(6);
	show("pipe with one free fd", pipe(fds));
	show("open with two free fds", open("/", O_RDONLY));
	for (fd = 3; fd < 32; fd++)
		close(fd);
	r.rlim_cur = 0;
	show("setrlimit RLIMIT_NOFILE soft 0", setrlimit(RLIMIT_NOFILE, &r));
	show("open with soft limit 0", open("/", O_RDONLY));
	show("dup of stdin with soft limit 0", dup(0));
	setrlimit(RLIMIT_NOFILE, &old);
}

static void fsize_at_work(void)
{
	char path[] = "/tmp/diff-fsize-XXXXXX", buf[8192];
	struct rlimit r = { 4096, ~0UL };
	int fd = mkstemp(path);

	memset(buf, 'z', sizeof(buf));
	signal(SIGXFSZ, SIG_IGN);
	show("setrlimit RLIMIT_FSIZE 4096", setrlimit(RLIMIT_FSIZE, &r));
	show("write 3000 bytes", write(fd, buf, 3000));
	show("write 3000 more: up to the limit", write(fd, buf, 3000));
	show("write at the limit", write(fd, buf, 1));
	show("pwrite past the limit", pwrite(fd, buf, 1, 10000));
	show("ftruncate past the limit", ftruncate(fd, 10000));
	show("ftruncate to the limit", ftruncate(fd, 4096));
	r.rlim_cur = ~0UL;
	setrlimit(RLIMIT_FSIZE, &r);
	show("write once unlimited", write(fd, buf, 100));
	signal(SIGXFSZ, SIG_DFL);
	close(fd);
	unlink(path);

	/* Without SIGXFSZ ignored, a write past the limit kills with it. */
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit small = { 10, ~0UL };
		int f = open("/tmp/diff-fsize-2", O_CREAT | O_TRUNC | O_WRONLY, 0600);

		setrlimit(RLIMIT_FSIZE, &small);
		write(f, buf, 10);
		write(f, buf, 10);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	say("write past RLIMIT_FSIZE: signaled %s signal %d", WIFSIGNALED(st) ? "yes" : "no",
	    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	unlink("/tmp/diff-fsize-2");
}

int main(void)
{
	diff_begin("prlimit");
	defaults();
	set_and_read();
	other_processes();
	nofile_at_work();
	fsize_at_work();
	return 0;
}
