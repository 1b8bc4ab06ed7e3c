/*
 * Resource limits and queued signals from ring 3 (kernel/rlimit.c,
 * kernel/fdtable.c, fs/read_write.c, kernel/fork.c; docs/vfs.md "The fd
 * table", docs/signals.md "Queued signals"): RLIMIT_NOFILE's defaults
 * (1024/4096) and the fd table growing past 1024 once the soft limit is
 * raised, EMFILE/EBADF/EINVAL at the limit, fork and exec of a big table
 * (close-on-exec bits of high descriptors), prlimit64 on a child (get and
 * set, ESRCH once it is gone), EPERM above nr_open, RLIMIT_FSIZE (a short
 * write up to it, then EFBIG with SIGXFSZ; truncate; the default action
 * kills), rt_sigqueueinfo's and rt_tgsigqueueinfo's EPERM, EFAULT, ESRCH
 * and EINVAL, and si_value reaching a handler and sigtimedwait.
 *
 * `rlimit_ktap execcheck OPEN SHUT` (run by the exec case) exits 0 when
 * descriptor OPEN is open and SHUT is closed, else 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdio.h>
#include "ktap.h"

#define NR_OPEN		(1 << 20)	/* Linux's default /proc/sys/fs/nr_open */

struct lim {
	uint64_t cur, max;
};

static char *self_path = "/tests/rlimit_ktap";

static long xprlimit(pid_t pid, int resource, const struct lim *new, struct lim *old)
{
	return syscall(SYS_prlimit64, pid, resource, new, old);
}

/* -errno of a call that should fail, or the value it returned. */
static long err_of(long r)
{
	return r < 0 ? -errno : r;
}

static int set_nofile(rlim_t cur, rlim_t max)
{
	struct rlimit r = { cur, max };

	return setrlimit(RLIMIT_NOFILE, &r);
}

/* Close every descriptor from 3 up to below end. */
static void close_from_3(int end)
{
	for (int fd = 3; fd < end; fd++)
		close(fd);
}

/* The exit status of pid (1000 + the signal when killed), or -1; reaps it. */
static int exit_code(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

static void case_nofile_default(void)
{
	struct rlimit r;
	struct lim l;

	CHECK(getrlimit(RLIMIT_NOFILE, &r) == 0);
	CHECK(r.rlim_cur == 1024 && r.rlim_max == 4096);
	CHECK(xprlimit(0, RLIMIT_NOFILE, NULL, &l) == 0);
	CHECK(l.cur == 1024 && l.max == 4096);
	ktap_report("nofile_default", NULL);
}

/* Past 1024 once the soft limit allows it: dup, F_DUPFD, dup2 high, FD_CLOEXEC up there. */
static void case_nofile_grow(void)
{
	int fd, last = -1, n = 0, gaps = 0;

	CHECK(set_nofile(4096, 4096) == 0);
	for (int i = 0; i < 3000; i++) {
		fd = dup(0);
		if (fd < 0)
			break;
		if (last >= 0 && fd != last + 1)
			gaps++;		/* the lowest free one each time */
		last = fd;
		n++;
	}
	CHECK(n == 3000);
	CHECK(gaps == 0);
	CHECK(last > 1024);
	CHECK(fcntl(last, F_GETFD) == 0);
	CHECK(fcntl(last, F_SETFD, FD_CLOEXEC) == 0);
	CHECK(fcntl(last, F_GETFD) == FD_CLOEXEC);
	CHECK(dup2(0, 4000) == 4000);
	CHECK(fcntl(4000, F_GETFD) == 0);
	CHECK(fcntl(0, F_DUPFD, 3500) == 3500);
	CHECK(fcntl(0, F_DUPFD_CLOEXEC, 3500) == 3501);
	CHECK(fcntl(3501, F_GETFD) == FD_CLOEXEC);
	CHECK(close(4000) == 0);
	CHECK(close(4000) == -1 && errno == EBADF);
	/* A hole low down is the next one given. */
	CHECK(close(1500) == 0);
	CHECK(dup(0) == 1500);
	close_from_3(4096);
	CHECK(dup(0) == 3);
	close(3);
	ktap_report("nofile_grow", NULL);
}

/* At the soft limit: EMFILE for a new one, EBADF for dup2 to it, EINVAL for F_DUPFD from it. */
static void case_emfile(void)
{
	int fd = 0, fds[2];

	CHECK(set_nofile(1100, 4096) == 0);
	for (int i = 0; i < 1200 && fd >= 0; i++)
		fd = dup(0);
	CHECK(fd == -1 && errno == EMFILE);
	CHECK(fcntl(1099, F_GETFD) == 0);	/* the last one there is */
	CHECK(err_of(dup2(0, 1100)) == -EBADF);
	CHECK(err_of(dup3(0, 1100, O_CLOEXEC)) == -EBADF);
	CHECK(err_of(fcntl(0, F_DUPFD, 1100)) == -EINVAL);
	CHECK(err_of(fcntl(0, F_DUPFD, 50)) == -EMFILE);
	CHECK(err_of(open("/", O_RDONLY)) == -EMFILE);
	CHECK(err_of(pipe(fds)) == -EMFILE);
	CHECK(dup2(0, 1099) == 1099);		/* replacing one below the limit is fine */
	CHECK(close(700) == 0);
	CHECK(err_of(pipe(fds)) == -EMFILE);	/* two needed, one free */
	CHECK(open("/", O_RDONLY) == 700);
	/* Lowering the limit below open descriptors leaves them open. */
	CHECK(set_nofile(10, 4096) == 0);
	CHECK(fcntl(1000, F_GETFD) == 0);
	CHECK(err_of(dup(0)) == -EMFILE);
	CHECK(close(1000) == 0);
	CHECK(err_of(dup(0)) == -EMFILE);	/* 1000 is free but not below 10 */
	close_from_3(1100);
	CHECK(dup(0) == 3);
	close(3);
	CHECK(set_nofile(4096, 4096) == 0);
	ktap_report("emfile_at_limit", NULL);
}

/*
 * fork copies a table of 2500 descriptors (the child sees each one, the
 * close-on-exec bits too, and its closes leave the parent's); exec closes
 * the high close-on-exec ones and keeps the others.
 */
static void case_fork_big(void)
{
	char open_fd[16], shut_fd[16];
	int p[2], fd = -1, code;
	pid_t pid;

	CHECK(set_nofile(4096, 4096) == 0);
	for (int i = 0; i < 2500; i++)
		fd = dup(0);
	CHECK(fd >= 2500);
	CHECK(fcntl(2400, F_SETFD, FD_CLOEXEC) == 0);
	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		int bad = 0;

		for (int i = 3; i <= fd; i++)
			if (fcntl(i, F_GETFD) != (i == 2400 ? FD_CLOEXEC : 0))
				bad++;
		if (close(2000) != 0 || fcntl(2000, F_GETFD) != -1)
			bad++;
		if (dup(0) != 2000)		/* the lowest free one in the copy */
			bad++;
		write(p[1], &bad, sizeof(bad));
		_exit(0);
	}
	int bad = -1;

	CHECK(read(p[0], &bad, sizeof(bad)) == sizeof(bad));
	CHECK(bad == 0);
	CHECK(exit_code(pid) == 0);
	CHECK(fcntl(2000, F_GETFD) == 0);	/* the child's close was its own */
	close(p[0]);
	close(p[1]);

	/* exec: 2300 stays, 2400 (close-on-exec) goes. */
	snprintf(open_fd, sizeof(open_fd), "%d", 2300);
	snprintf(shut_fd, sizeof(shut_fd), "%d", 2400);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { self_path, "execcheck", open_fd, shut_fd, NULL };

		execv(self_path, argv);
		_exit(2);
	}
	code = exit_code(pid);
	CHECK(code == 0);
	/* And the other way round: the checker must be able to say no. */
	pid = fork();
	if (pid == 0) {
		char *argv[] = { self_path, "execcheck", shut_fd, open_fd, NULL };

		execv(self_path, argv);
		_exit(2);
	}
	CHECK(exit_code(pid) == 1);
	close_from_3(4096);
	ktap_report("fork_big_table", NULL);
}

/* prlimit64 on a child: read what it inherited, set its limit, which it then sees; ESRCH once reaped. */
static void case_prlimit_child(void)
{
	struct lim l = { 77, 88 }, now, mine;
	int go[2], back[2];
	pid_t pid;
	char c;

	CHECK(xprlimit(0, RLIMIT_CORE, &l, NULL) == 0);
	CHECK(pipe(go) == 0 && pipe(back) == 0);
	pid = fork();
	if (pid == 0) {
		struct lim seen;

		write(back[1], "r", 1);
		read(go[0], &c, 1);
		xprlimit(0, RLIMIT_CORE, NULL, &seen);
		_exit(seen.cur == 5 && seen.max == 6 ? 0 : 1);
	}
	CHECK(read(back[0], &c, 1) == 1);
	memset(&now, 0, sizeof(now));
	CHECK(xprlimit(pid, RLIMIT_CORE, NULL, &now) == 0);
	CHECK(now.cur == 77 && now.max == 88);
	CHECK(xprlimit(pid, RLIMIT_NOFILE, NULL, &now) == 0);
	CHECK(now.max == 4096);
	l.cur = 5;
	l.max = 6;
	memset(&now, 0, sizeof(now));
	CHECK(xprlimit(pid, RLIMIT_CORE, &l, &now) == 0);
	CHECK(now.cur == 77 && now.max == 88);	/* the old value */
	CHECK(xprlimit(0, RLIMIT_CORE, NULL, &mine) == 0);
	CHECK(mine.cur == 77 && mine.max == 88);
	l.cur = 9;
	CHECK(err_of(xprlimit(pid, RLIMIT_CORE, &l, NULL)) == -EINVAL);
	CHECK(write(go[1], "g", 1) == 1);
	CHECK(exit_code(pid) == 0);
	CHECK(err_of(xprlimit(pid, RLIMIT_CORE, NULL, &now)) == -ESRCH);
	CHECK(err_of(xprlimit(-1, RLIMIT_CORE, NULL, &now)) == -ESRCH);
	close(go[0]);
	close(go[1]);
	close(back[0]);
	close(back[1]);
	l.cur = 0;
	l.max = RLIM_INFINITY;
	xprlimit(0, RLIMIT_CORE, &l, NULL);
	ktap_report("prlimit_child", NULL);
}

static void case_nr_open(void)
{
	struct lim l = { NR_OPEN + 1, NR_OPEN + 1 }, now;

	CHECK(err_of(xprlimit(0, RLIMIT_NOFILE, &l, NULL)) == -EPERM);
	l.cur = 1024;
	CHECK(err_of(xprlimit(0, RLIMIT_NOFILE, &l, NULL)) == -EPERM);	/* the hard limit counts */
	l.max = RLIM_INFINITY;
	CHECK(err_of(xprlimit(0, RLIMIT_NOFILE, &l, NULL)) == -EPERM);
	CHECK(xprlimit(0, RLIMIT_NOFILE, NULL, &now) == 0);
	CHECK(now.cur == 4096 && now.max == 4096);	/* unchanged */
	l.cur = l.max = NR_OPEN;
	CHECK(xprlimit(0, RLIMIT_NOFILE, &l, NULL) == 0);
	CHECK(dup2(0, 100000) == 100000);	/* the table grows that far */
	CHECK(fcntl(100000, F_GETFD) == 0);
	CHECK(close(100000) == 0);
	CHECK(set_nofile(1024, 4096) == 0);
	ktap_report("nofile_nr_open", NULL);
}

static volatile int xfsz_hits, xfsz_code, xfsz_pid;

static void on_xfsz(int sig, siginfo_t *si, void *uc)
{
	xfsz_hits++;
	xfsz_code = si->si_code;
	xfsz_pid = si->si_pid;
}

/* RLIMIT_FSIZE: a write up to it comes short, then EFBIG and SIGXFSZ; truncate too. */
static void case_fsize(void)
{
	char path[] = "/tmp/rlimit-fsize-XXXXXX", buf[8192];
	struct rlimit r = { 4096, RLIM_INFINITY }, inf = { RLIM_INFINITY, RLIM_INFINITY };
	struct sigaction sa;
	struct stat st;
	int fd = mkstemp(path), afd;
	pid_t pid;

	CHECK(fd >= 0);
	memset(buf, 'q', sizeof(buf));
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_xfsz;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGXFSZ, &sa, NULL);
	CHECK(setrlimit(RLIMIT_FSIZE, &r) == 0);
	CHECK(write(fd, buf, 3000) == 3000);
	CHECK(xfsz_hits == 0);
	CHECK(write(fd, buf, 3000) == 1096);	/* short, up to the limit, no signal */
	CHECK(xfsz_hits == 0);
	CHECK(err_of(write(fd, buf, 1)) == -EFBIG);
	CHECK(xfsz_hits == 1);
	CHECK(xfsz_code == SI_USER && xfsz_pid == getpid());
	CHECK(err_of(pwrite(fd, buf, 10, 5000)) == -EFBIG);
	CHECK(xfsz_hits == 2);
	CHECK(pwrite(fd, buf, 10, 4090) == 6);
	CHECK(err_of(ftruncate(fd, 4097)) == -EFBIG);
	CHECK(xfsz_hits == 3);
	CHECK(err_of(truncate(path, 10000)) == -EFBIG);
	CHECK(xfsz_hits == 4);
	CHECK(fstat(fd, &st) == 0 && st.st_size == 4096);
	CHECK(ftruncate(fd, 4096) == 0);	/* not past it */
	CHECK(ftruncate(fd, 100) == 0);		/* shrinking */
	afd = open(path, O_WRONLY | O_APPEND);
	CHECK(afd >= 0);
	CHECK(write(afd, buf, 8192) == 3996);	/* appended at 100, up to the limit */
	CHECK(err_of(write(afd, buf, 1)) == -EFBIG);
	CHECK(xfsz_hits == 5);
	close(afd);
	CHECK(setrlimit(RLIMIT_FSIZE, &inf) == 0);
	CHECK(write(fd, buf, 100) == 100);
	CHECK(xfsz_hits == 5);
	close(fd);
	unlink(path);
	signal(SIGXFSZ, SIG_DFL);

	/* The default action ends the writer. */
	pid = fork();
	if (pid == 0) {
		struct rlimit small = { 10, RLIM_INFINITY };
		int f = open("/tmp/rlimit-fsize-2", O_CREAT | O_TRUNC | O_WRONLY, 0600);

		setrlimit(RLIMIT_FSIZE, &small);
		if (write(f, buf, 10) != 10)
			_exit(3);
		write(f, buf, 10);
		_exit(0);
	}
	CHECK(exit_code(pid) == 1000 + SIGXFSZ);
	unlink("/tmp/rlimit-fsize-2");
	ktap_report("fsize", NULL);
}

static siginfo_t sq_info(int code, int value)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	si.si_code = code;
	si.si_pid = getpid();
	si.si_value.sival_int = value;
	return si;
}

/* rt_sigqueueinfo and rt_tgsigqueueinfo: who may claim which si_code, and the errors. */
static void case_sigqueue_errors(void)
{
	siginfo_t si = sq_info(SI_QUEUE, 1);
	int go[2], ready[2];
	pid_t pid, gone;
	char c;

	CHECK(pipe(go) == 0 && pipe(ready) == 0);
	pid = fork();
	if (pid == 0) {
		signal(SIGUSR1, SIG_IGN);
		write(ready[1], "r", 1);
		read(go[0], &c, 1);
		_exit(0);
	}
	CHECK(read(ready[0], &c, 1) == 1);
	gone = fork();
	if (gone == 0)
		_exit(0);
	CHECK(exit_code(gone) == 0);
	si.si_code = SI_USER;
	CHECK(err_of(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si)) == -EPERM);
	si.si_code = SI_TKILL;
	CHECK(err_of(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si)) == -EPERM);
	si.si_code = SI_KERNEL;
	CHECK(err_of(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si)) == -EPERM);
	CHECK(err_of(syscall(SYS_rt_tgsigqueueinfo, pid, pid, SIGUSR1, &si)) == -EPERM);
	si.si_code = SI_QUEUE;
	CHECK(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, &si) == 0);
	CHECK(syscall(SYS_rt_sigqueueinfo, pid, 0, &si) == 0);
	CHECK(syscall(SYS_rt_tgsigqueueinfo, pid, pid, SIGUSR1, &si) == 0);
	CHECK(err_of(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, (void *)8)) == -EFAULT);
	CHECK(err_of(syscall(SYS_rt_sigqueueinfo, pid, SIGUSR1, (void *)-4096L)) == -EFAULT);
	CHECK(err_of(syscall(SYS_rt_sigqueueinfo, gone, SIGUSR1, &si)) == -ESRCH);
	CHECK(err_of(syscall(SYS_rt_sigqueueinfo, pid, 65, &si)) == -EINVAL);
	CHECK(err_of(syscall(SYS_rt_tgsigqueueinfo, getpid(), pid, SIGUSR1, &si)) == -ESRCH);
	CHECK(err_of(syscall(SYS_rt_tgsigqueueinfo, pid, gone, SIGUSR1, &si)) == -ESRCH);
	CHECK(err_of(syscall(SYS_rt_tgsigqueueinfo, 0, pid, SIGUSR1, &si)) == -EINVAL);
	CHECK(err_of(syscall(SYS_rt_tgsigqueueinfo, pid, -1, SIGUSR1, &si)) == -EINVAL);
	CHECK(write(go[1], "g", 1) == 1);
	CHECK(exit_code(pid) == 0);
	close(go[0]);
	close(go[1]);
	close(ready[0]);
	close(ready[1]);
	/* To itself, a kernel-like si_code is allowed. */
	signal(SIGUSR1, SIG_IGN);
	si.si_code = SI_USER;
	CHECK(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si) == 0);
	CHECK(syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), SIGUSR1, &si) == 0);
	signal(SIGUSR1, SIG_DFL);
	ktap_report("sigqueue_errors", NULL);
}

static volatile int sv_hits;
static siginfo_t sv;		/* what the handler got last */

static void on_value(int sig, siginfo_t *si, void *uc)
{
	sv_hits++;
	sv = *si;
}

/*
 * si_value reaches an SA_SIGINFO handler and sigtimedwait in another
 * process; real-time signals queue in order, a standard one coalesces.
 */
static void case_sigqueue_value(void)
{
	struct sigaction sa;
	siginfo_t si;
	sigset_t set;
	int p[2], ready[2], go[2], results[8];
	pid_t pid;
	char c;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_value;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR2, &sa, NULL);
	sv_hits = 0;
	si = sq_info(-42, 4242);
	si.si_signo = SIGUSR1;			/* the signal argument wins */
	CHECK(syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR2, &si) == 0);
	CHECK(sv_hits == 1);
	CHECK(sv.si_signo == SIGUSR2 && sv.si_code == -42 && sv.si_value.sival_int == 4242);
	CHECK(sv.si_pid == getpid() && sv.si_uid == 0);
	CHECK(sigqueue(getpid(), SIGUSR2, (union sigval){ .sival_int = 31 }) == 0);
	CHECK(sv_hits == 2 && sv.si_code == SI_QUEUE && sv.si_value.sival_int == 31);

	/* A standard signal sent three times while blocked: once, the first value. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (int i = 1; i <= 3; i++)
		sigqueue(getpid(), SIGUSR2, (union sigval){ .sival_int = 100 + i });
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	CHECK(sv_hits == 3 && sv.si_value.sival_int == 101);
	signal(SIGUSR2, SIG_DFL);

	/* Another process takes three queued SIGRTMIN+1 with sigtimedwait, in order. */
	CHECK(pipe(p) == 0 && pipe(ready) == 0 && pipe(go) == 0);
	pid = fork();
	if (pid == 0) {
		struct timespec ts = { 5, 0 };
		int out[8], n = 0;

		sigemptyset(&set);
		sigaddset(&set, SIGRTMIN + 1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		write(ready[1], "r", 1);
		read(go[0], &c, 1);	/* the parent has sent them all */
		for (int i = 0; i < 3; i++) {
			memset(&si, 0, sizeof(si));
			if (sigtimedwait(&set, &si, &ts) != SIGRTMIN + 1)
				break;
			out[n++] = si.si_value.sival_int;
			out[n++] = si.si_code == SI_QUEUE && si.si_pid == getppid();
		}
		ts.tv_sec = 0;
		out[6] = n;
		out[7] = sigtimedwait(&set, &si, &ts) == -1 && errno == EAGAIN;
		write(p[1], out, sizeof(out));
		_exit(0);
	}
	CHECK(read(ready[0], &c, 1) == 1);
	for (int i = 1; i <= 3; i++)
		CHECK(sigqueue(pid, SIGRTMIN + 1, (union sigval){ .sival_int = i * 7 }) == 0);
	CHECK(write(go[1], "g", 1) == 1);
	CHECK(exit_code(pid) == 0);
	memset(results, 0, sizeof(results));
	CHECK(read(p[0], results, sizeof(results)) == sizeof(results));
	CHECK(results[6] == 6);
	CHECK(results[0] == 7 && results[2] == 14 && results[4] == 21);
	CHECK(results[1] && results[3] && results[5]);
	CHECK(results[7]);
	close(p[0]);
	close(p[1]);
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	ktap_report("sigqueue_value", NULL);
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "execcheck"))
		return fcntl(atoi(argv[2]), F_GETFD) >= 0 && fcntl(atoi(argv[3]), F_GETFD) < 0 ? 0 : 1;
	if (argc >= 1 && argv[0][0] == '/')
		self_path = argv[0];
	ktap_begin("rlimit", 9);
	case_nofile_default();
	case_nofile_grow();
	case_emfile();
	case_fork_big();
	case_prlimit_child();
	case_nr_open();
	case_fsize();
	case_sigqueue_errors();
	case_sigqueue_value();
	return ktap_finish();
}
