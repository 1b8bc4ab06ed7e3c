/*
 * poll, ppoll, select and pselect6 (fs/select.c), the names (uname,
 * sethostname, setdomainname: kernel/utsname.c) and the /dev nodes a
 * shell uses (/dev/null, /dev/zero, /dev/urandom, /dev/random, /dev/tty),
 * and what busybox's touch, chmod and id call (utimensat, chmod, getgroups):
 * readiness of pipes, regular files, devices and the console, timeouts
 * (and the time left written back), wake-ups from another process, EINTR
 * and the temporary signal masks, and Linux's errno for bad descriptors,
 * counts, pointers and timeouts. The same binary passes on Linux 6.12
 * (run it there: `build/user/tests/poll_ktap`; the /dev/tty case needs a
 * controlling terminal there too).
 *
 * Run under /bin/init (job poll-numa3), which gives the test the console
 * as its controlling terminal.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <grp.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include "ktap.h"

#define BAD_PTR		((void *)8)		/* unmapped */
#define KERNEL_PTR	((void *)0xffff800000000000UL)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static long sys_poll(struct pollfd *fds, unsigned long n, int ms)
{
	return syscall(SYS_poll, fds, n, ms);
}

static long sys_ppoll(struct pollfd *fds, unsigned long n, struct timespec *ts,
		      const sigset_t *mask, size_t size)
{
	return syscall(SYS_ppoll, fds, n, ts, mask, size);
}

static long sys_select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv)
{
	return syscall(SYS_select, n, r, w, e, tv);
}

static long sys_pselect6(int n, fd_set *r, fd_set *w, fd_set *e, struct timespec *ts, void *sig)
{
	return syscall(SYS_pselect6, n, r, w, e, ts, sig);
}

/* A child that sleeps ms, then writes a byte to fd and exits. */
static pid_t write_later(int fd, int ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		usleep((useconds_t)ms * 1000);
		_exit(write(fd, "x", 1) == 1 ? 0 : 1);
	}
	return pid;
}

static int reap(pid_t pid)
{
	int st;

	return waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static void pipe_readiness(void)
{
	int p[2];
	char c;

	CHECK(pipe(p) == 0);
	struct pollfd fds[2] = { { p[0], POLLIN, 0x7f }, { p[1], POLLOUT, 0x7f } };

	/* empty: the write end only */
	CHECK(sys_poll(fds, 2, 0) == 1);
	CHECK(fds[0].revents == 0);
	CHECK(fds[1].revents == POLLOUT);
	/* data: both; POLLRDNORM only when asked */
	CHECK(write(p[1], "ab", 2) == 2);
	fds[0].events = POLLIN | POLLRDNORM;
	CHECK(sys_poll(fds, 2, 0) == 2);
	CHECK(fds[0].revents == (POLLIN | POLLRDNORM));
	CHECK(read(p[0], &c, 1) == 1 && read(p[0], &c, 1) == 1);
	CHECK(sys_poll(fds, 1, 0) == 0 && fds[0].revents == 0);
	/* events 0: nothing but POLLERR/POLLHUP could be reported */
	fds[1].events = 0;
	CHECK(sys_poll(&fds[1], 1, 0) == 0 && fds[1].revents == 0);
	/* the writer gone: POLLHUP, even unasked */
	close(p[1]);
	fds[0].events = POLLIN;
	CHECK(sys_poll(fds, 1, 0) == 1);
	CHECK(fds[0].revents == POLLHUP);
	close(p[0]);
	/* the reader gone: POLLERR on the write end, with POLLOUT */
	CHECK(pipe(p) == 0);
	close(p[0]);
	fds[1] = (struct pollfd){ p[1], POLLOUT, 0 };
	CHECK(sys_poll(&fds[1], 1, 0) == 1);
	CHECK(fds[1].revents == (POLLOUT | POLLERR));
	close(p[1]);
	/* a full pipe is not writable */
	CHECK(pipe2(p, O_NONBLOCK) == 0);
	{
		static char buf[4096];

		while (write(p[1], buf, sizeof(buf)) > 0)
			;
	}
	fds[1] = (struct pollfd){ p[1], POLLOUT, 0 };
	CHECK(sys_poll(&fds[1], 1, 0) == 0);
	close(p[0]);
	close(p[1]);
	ktap_report("poll_pipe_readiness", NULL);
}

static void files_and_devices(void)
{
	int f = open("/tmp/poll_file", O_RDWR | O_CREAT | O_TRUNC, 0600);
	int n = open("/dev/null", O_RDWR), z = open("/dev/zero", O_RDONLY);
	int ro = open("/dev/null", O_RDONLY);
	struct pollfd fds[4] = {
		{ f, POLLIN | POLLOUT, 0 }, { n, POLLIN | POLLOUT | POLLPRI, 0 },
		{ z, POLLIN, 0 }, { ro, POLLOUT, 0 },
	};

	CHECK(f >= 0 && n >= 0 && z >= 0 && ro >= 0);
	/* files without a poll method: always ready for both (DEFAULT_POLLMASK) */
	CHECK(sys_poll(fds, 4, 1000) == 4);
	CHECK(fds[0].revents == (POLLIN | POLLOUT));
	CHECK(fds[1].revents == (POLLIN | POLLOUT));
	CHECK(fds[2].revents == POLLIN);
	CHECK(fds[3].revents == POLLOUT);	/* the open mode does not matter */
	close(f);
	close(n);
	close(z);
	close(ro);
	unlink("/tmp/poll_file");
	ktap_report("poll_files_and_devices", NULL);
}

static void bad_fds(void)
{
	int p[2];

	CHECK(pipe(p) == 0);
	CHECK(write(p[1], "x", 1) == 1);
	struct pollfd fds[4] = {
		{ -1, POLLIN, 0x55 }, { 1000, POLLIN, 0x55 }, { p[0], POLLIN, 0 },
		{ -5, 0, 0x55 },
	};

	/* a negative fd is skipped (revents 0), a closed one is POLLNVAL, counted */
	CHECK(sys_poll(fds, 4, -1) == 2);
	CHECK(fds[0].revents == 0);
	CHECK(fds[1].revents == POLLNVAL);
	CHECK(fds[2].revents == POLLIN);
	CHECK(fds[3].revents == 0);
	/* POLLNVAL alone: no wait even with an infinite timeout */
	CHECK(sys_poll(&fds[1], 1, -1) == 1 && fds[1].revents == POLLNVAL);
	/* nothing to wait for but the time */
	long long t0 = now_ms();

	CHECK(sys_poll(&fds[0], 1, 30) == 0);
	CHECK(now_ms() - t0 >= 25);
	CHECK(sys_poll(NULL, 0, 20) == 0);
	close(p[0]);
	close(p[1]);
	ktap_report("poll_bad_fds", NULL);
}

static void poll_errors(void)
{
	struct rlimit rl;
	struct pollfd fd = { 0, POLLIN, 0 };

	CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
	errno = 0;
	CHECK(sys_poll(&fd, rl.rlim_cur + 1, 0) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(sys_poll(BAD_PTR, 1, 0) == -1 && errno == EFAULT);
	errno = 0;
	CHECK(sys_poll(KERNEL_PTR, 1, 0) == -1 && errno == EFAULT);
	/* nfds at the limit is fine (the array is read first: EFAULT here) */
	errno = 0;
	CHECK(sys_poll(BAD_PTR, rl.rlim_cur, 0) == -1 && errno == EFAULT);
	ktap_report("poll_errors", NULL);
}

static void poll_wakeup_and_timeout(void)
{
	int p[2];
	long long t0;
	pid_t pid;

	CHECK(pipe(p) == 0);
	struct pollfd fd = { p[0], POLLIN, 0 };

	/* a timeout with nothing ready: 0 after at least the time */
	t0 = now_ms();
	CHECK(sys_poll(&fd, 1, 100) == 0);
	CHECK(now_ms() - t0 >= 95);
	CHECK(fd.revents == 0);
	/* another process writes: the sleeper wakes, long before its timeout */
	pid = write_later(p[1], 80);
	t0 = now_ms();
	CHECK(sys_poll(&fd, 1, 10000) == 1);
	CHECK(fd.revents == POLLIN);
	CHECK(now_ms() - t0 < 5000);
	CHECK(reap(pid) == 0);
	close(p[0]);
	close(p[1]);
	/* the last writer closes: POLLHUP wakes an infinite wait */
	CHECK(pipe(p) == 0);
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		usleep(50000);
		_exit(0);
	}
	close(p[1]);
	fd = (struct pollfd){ p[0], POLLIN, 0 };
	CHECK(sys_poll(&fd, 1, -1) == 1 && fd.revents == POLLHUP);
	CHECK(reap(pid) == 0);
	close(p[0]);
	ktap_report("poll_wakeup_and_timeout", NULL);
}

static void poll_eintr(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 0 }, { 0, 50000 } };
	int p[2];

	CHECK(pipe(p) == 0);
	struct pollfd fd = { p[0], POLLIN, 0 };

	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
	/* even with SA_RESTART, a handled signal ends poll with EINTR */
	got_signal = 0;
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	errno = 0;
	CHECK(sys_poll(&fd, 1, 5000) == -1 && errno == EINTR);
	CHECK(got_signal == SIGALRM);
	/* and select too */
	fd_set r;

	FD_ZERO(&r);
	FD_SET(p[0], &r);
	got_signal = 0;
	CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
	errno = 0;
	CHECK(sys_select(p[0] + 1, &r, NULL, NULL, NULL) == -1 && errno == EINTR);
	CHECK(got_signal == SIGALRM);
	signal(SIGALRM, SIG_DFL);
	close(p[0]);
	close(p[1]);
	ktap_report("poll_select_eintr", NULL);
}

static void ppoll_cases(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, unblock, now;
	struct timespec ts;
	int p[2];

	CHECK(pipe(p) == 0);
	struct pollfd fd = { p[0], POLLIN, 0 };

	/* the time left is written back */
	ts = (struct timespec){ 0, 60000000 };
	CHECK(sys_ppoll(&fd, 1, &ts, NULL, 8) == 0);
	CHECK(ts.tv_sec == 0 && ts.tv_nsec == 0);
	CHECK(write(p[1], "x", 1) == 1);
	ts = (struct timespec){ 100, 0 };
	CHECK(sys_ppoll(&fd, 1, &ts, NULL, 8) == 1);
	CHECK(ts.tv_sec >= 99 && ts.tv_sec <= 100);
	/* bad timespecs and sizes */
	ts = (struct timespec){ 0, 1000000000 };
	errno = 0;
	CHECK(sys_ppoll(&fd, 1, &ts, NULL, 8) == -1 && errno == EINVAL);
	ts = (struct timespec){ -1, 0 };
	errno = 0;
	CHECK(sys_ppoll(&fd, 1, &ts, NULL, 8) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(sys_ppoll(&fd, 1, BAD_PTR, NULL, 8) == -1 && errno == EFAULT);
	sigemptyset(&unblock);
	errno = 0;
	CHECK(sys_ppoll(&fd, 1, NULL, &unblock, 4) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(sys_ppoll(&fd, 1, NULL, BAD_PTR, 8) == -1 && errno == EFAULT);
	/* a NULL mask: the size is not looked at */
	CHECK(sys_ppoll(&fd, 1, NULL, NULL, 1) == 1);
	/*
	 * SIGUSR1 blocked and pending: ppoll with a mask without it is
	 * interrupted at once, the handler runs, and the old mask (blocking
	 * it) is back afterwards.
	 */
	char c;

	CHECK(read(p[0], &c, 1) == 1);
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	CHECK(sigprocmask(SIG_BLOCK, &block, NULL) == 0);
	got_signal = 0;
	CHECK(kill(getpid(), SIGUSR1) == 0);
	CHECK(got_signal == 0);
	ts = (struct timespec){ 5, 0 };
	errno = 0;
	CHECK(sys_ppoll(&fd, 1, &ts, &unblock, 8) == -1 && errno == EINTR);
	CHECK(got_signal == SIGUSR1);
	CHECK(sigprocmask(SIG_SETMASK, NULL, &now) == 0);
	CHECK(sigismember(&now, SIGUSR1));
	/*
	 * Not interrupted: the mask comes back at once, so a signal that it
	 * blocks and that the call's mask let through stays pending.
	 */
	CHECK(write(p[1], "x", 1) == 1);
	got_signal = 0;
	CHECK(kill(getpid(), SIGUSR1) == 0);
	{
		sigset_t all_but;

		sigfillset(&all_but);
		CHECK(sys_ppoll(&fd, 1, NULL, &all_but, 8) == 1);
	}
	CHECK(got_signal == 0);
	CHECK(sigpending(&now) == 0 && sigismember(&now, SIGUSR1));
	CHECK(sigprocmask(SIG_UNBLOCK, &block, NULL) == 0);
	CHECK(got_signal == SIGUSR1);
	signal(SIGUSR1, SIG_DFL);
	close(p[0]);
	close(p[1]);
	ktap_report("ppoll", NULL);
}

static void select_cases(void)
{
	int p[2], q[2];
	fd_set r, w, e;
	struct timeval tv;
	long long t0;

	CHECK(pipe(p) == 0 && pipe(q) == 0);
	CHECK(write(q[1], "x", 1) == 1);
	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_ZERO(&e);
	FD_SET(p[0], &r);
	FD_SET(q[0], &r);
	FD_SET(p[1], &w);
	FD_SET(p[0], &e);
	tv = (struct timeval){ 1, 0 };
	/* q's read end and p's write end: one bit each, counted */
	CHECK(sys_select(FD_SETSIZE, &r, &w, &e, &tv) == 2);
	CHECK(!FD_ISSET(p[0], &r) && FD_ISSET(q[0], &r));
	CHECK(FD_ISSET(p[1], &w));
	CHECK(!FD_ISSET(p[0], &e));
	CHECK(tv.tv_sec <= 1 && tv.tv_usec >= 0 && tv.tv_usec < 1000000);
	/* a descriptor in two sets counts twice; a pipe's read end is never writable */
	int d = open("/dev/null", O_RDWR);

	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_SET(d, &r);
	FD_SET(d, &w);
	FD_SET(q[0], &r);
	FD_SET(q[0], &w);
	CHECK(sys_select(d + 1, &r, &w, NULL, NULL) == 3);
	CHECK(FD_ISSET(d, &r) && FD_ISSET(d, &w) && FD_ISSET(q[0], &r) && !FD_ISSET(q[0], &w));
	close(d);
	/* a timeout: 0, the sets emptied, the timeval at 0 */
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	tv = (struct timeval){ 0, 80000 };
	t0 = now_ms();
	CHECK(sys_select(p[0] + 1, &r, NULL, NULL, &tv) == 0);
	CHECK(now_ms() - t0 >= 75);
	CHECK(!FD_ISSET(p[0], &r));
	CHECK(tv.tv_sec == 0 && tv.tv_usec == 0);
	/* bits at or above n are not looked at */
	FD_ZERO(&r);
	FD_SET(q[0], &r);
	tv = (struct timeval){ 0, 0 };
	CHECK(sys_select(q[0], &r, NULL, NULL, &tv) == 0);
	/* a wake-up from another process */
	pid_t pid = write_later(p[1], 50);

	FD_ZERO(&r);
	FD_SET(p[0], &r);
	CHECK(sys_select(p[0] + 1, &r, NULL, NULL, NULL) == 1 && FD_ISSET(p[0], &r));
	CHECK(reap(pid) == 0);
	/* n = 0 with a timeout: a sleep */
	tv = (struct timeval){ 0, 30000 };
	t0 = now_ms();
	CHECK(sys_select(0, NULL, NULL, NULL, &tv) == 0);
	CHECK(now_ms() - t0 >= 25);
	/* errors */
	errno = 0;
	CHECK(sys_select(-1, NULL, NULL, NULL, NULL) == -1 && errno == EINVAL);
	FD_ZERO(&r);
	FD_SET(40, &r);		/* closed, inside the table's 64 slots */
	errno = 0;
	CHECK(sys_select(41, &r, NULL, NULL, NULL) == -1 && errno == EBADF);
	tv = (struct timeval){ 0, -1 };
	errno = 0;
	CHECK(sys_select(1, NULL, NULL, NULL, &tv) == -1 && errno == EINVAL);
	/* microseconds past a second carry over (Linux normalizes) */
	tv = (struct timeval){ 0, 1010000 };
	FD_ZERO(&r);
	FD_SET(q[0], &r);
	CHECK(sys_select(q[0] + 1, &r, NULL, NULL, &tv) == 1);
	CHECK(tv.tv_sec == 1 && tv.tv_usec > 0 && tv.tv_usec <= 10000);
	tv = (struct timeval){ -1, 0 };
	errno = 0;
	CHECK(sys_select(1, NULL, NULL, NULL, &tv) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(sys_select(1, BAD_PTR, NULL, NULL, NULL) == -1 && errno == EFAULT);
	errno = 0;
	CHECK(sys_select(1, NULL, NULL, NULL, BAD_PTR) == -1 && errno == EFAULT);
	/* n far above the table is cut to its size: fine */
	FD_ZERO(&r);
	FD_SET(q[0], &r);
	tv = (struct timeval){ 0, 0 };
	{
		static unsigned long big[1 << 14];

		memcpy(big, &r, sizeof(r));
		CHECK(sys_select(1 << 20, (fd_set *)big, NULL, NULL, &tv) == 1);
	}
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	ktap_report("select", NULL);
}

static void pselect_cases(void)
{
	int p[2];
	fd_set r;
	struct timespec ts;
	sigset_t mask;
	struct { const sigset_t *ss; size_t len; } sig;

	CHECK(pipe(p) == 0);
	sigemptyset(&mask);
	sig.ss = &mask;
	sig.len = 8;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	ts = (struct timespec){ 0, 50000000 };
	CHECK(sys_pselect6(p[0] + 1, &r, NULL, NULL, &ts, &sig) == 0);
	CHECK(ts.tv_sec == 0 && ts.tv_nsec == 0);
	CHECK(write(p[1], "x", 1) == 1);
	FD_SET(p[0], &r);
	ts = (struct timespec){ 3, 0 };
	CHECK(sys_pselect6(p[0] + 1, &r, NULL, NULL, &ts, &sig) == 1 && FD_ISSET(p[0], &r));
	CHECK(ts.tv_sec >= 2 && ts.tv_sec <= 3);
	/* a NULL mask in the pack: no mask, the size ignored */
	sig.ss = NULL;
	sig.len = 3;
	CHECK(sys_pselect6(p[0] + 1, &r, NULL, NULL, NULL, &sig) == 1);
	/* errors: the pack, a size, the mask, the timespec */
	sig.ss = &mask;
	sig.len = 16;
	errno = 0;
	CHECK(sys_pselect6(p[0] + 1, &r, NULL, NULL, NULL, &sig) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(sys_pselect6(p[0] + 1, &r, NULL, NULL, NULL, BAD_PTR) == -1 && errno == EFAULT);
	sig.ss = BAD_PTR;
	sig.len = 8;
	errno = 0;
	CHECK(sys_pselect6(p[0] + 1, &r, NULL, NULL, NULL, &sig) == -1 && errno == EFAULT);
	ts = (struct timespec){ 0, -1 };
	errno = 0;
	CHECK(sys_pselect6(p[0] + 1, &r, NULL, NULL, &ts, NULL) == -1 && errno == EINVAL);
	close(p[0]);
	close(p[1]);
	ktap_report("pselect6", NULL);
}

/* The console: always writable; the same answer through /dev/tty. */
static void terminal(void)
{
	int t = open("/dev/tty", O_RDWR);
	struct pollfd fds[2] = { { 1, POLLOUT, 0 }, { t, POLLOUT, 0 } };

	CHECK(t >= 0);
	CHECK(isatty(t));
	CHECK(sys_poll(fds, 2, 0) == 2);
	CHECK(fds[0].revents == POLLOUT && fds[1].revents == POLLOUT);
	close(t);
	/* a new session has no controlling terminal: /dev/tty is ENXIO */
	pid_t pid = fork();

	if (pid == 0) {
		int fd;

		if (setsid() < 0)
			_exit(2);
		fd = open("/dev/tty", O_RDWR);
		_exit(fd < 0 && errno == ENXIO ? 0 : 1);
	}
	CHECK(reap(pid) == 0);
	ktap_report("terminal_and_dev_tty", NULL);
}

static void random_devices(void)
{
	unsigned char a[64], b[64], zero[64] = { 0 };
	int u = open("/dev/urandom", O_RDWR), r = open("/dev/random", O_RDONLY);

	CHECK(u >= 0 && r >= 0);
	CHECK(read(u, a, sizeof(a)) == (ssize_t)sizeof(a));
	CHECK(read(r, b, sizeof(b)) == (ssize_t)sizeof(b));
	CHECK(memcmp(a, zero, sizeof(a)) != 0);
	CHECK(memcmp(a, b, sizeof(a)) != 0);
	CHECK(write(u, "seed", 4) == 4);
	{
		struct pollfd fd = { r, POLLIN, 0 };

		CHECK(sys_poll(&fd, 1, 0) == 1 && (fd.revents & POLLIN));
	}
	close(u);
	close(r);
	ktap_report("dev_random_urandom", NULL);
}

static void names(void)
{
	struct utsname u;
	char host[128], long_name[80];

	CHECK(uname(&u) == 0);
	CHECK(strcmp(u.machine, "x86_64") == 0);
	CHECK(sethostname("numa-box", 8) == 0);
	CHECK(uname(&u) == 0 && strcmp(u.nodename, "numa-box") == 0);
	CHECK(gethostname(host, sizeof(host)) == 0 && strcmp(host, "numa-box") == 0);
	/* a name is not NUL-terminated by the caller: len bytes */
	CHECK(sethostname("abcdef", 3) == 0);
	CHECK(gethostname(host, sizeof(host)) == 0 && strcmp(host, "abc") == 0);
	memset(long_name, 'x', sizeof(long_name));
	CHECK(sethostname(long_name, 64) == 0);
	CHECK(uname(&u) == 0 && strlen(u.nodename) == 64);
	errno = 0;
	CHECK(syscall(SYS_sethostname, long_name, 65) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(syscall(SYS_sethostname, long_name, -1) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(syscall(SYS_sethostname, BAD_PTR, 4) == -1 && errno == EFAULT);
	CHECK(uname(&u) == 0 && strlen(u.nodename) == 64);	/* unchanged by failures */
	CHECK(setdomainname("example", 7) == 0);
	CHECK(uname(&u) == 0 && strcmp(u.domainname, "example") == 0);
	errno = 0;
	CHECK(syscall(SYS_uname, BAD_PTR) == -1 && errno == EFAULT);
	CHECK(sethostname("quire", 5) == 0);
	/* the thread's command name: prctl PR_SET_NAME/PR_GET_NAME, /proc/self/comm */
	{
		char name[32] = { 0 }, comm[64] = { 0 };
		int fd;

		CHECK(prctl(PR_SET_NAME, "a-very-long-thread-name") == 0);
		CHECK(prctl(PR_GET_NAME, name) == 0 && strcmp(name, "a-very-long-thr") == 0);
		fd = open("/proc/self/comm", O_RDONLY);
		CHECK(fd >= 0 && read(fd, comm, sizeof(comm) - 1) > 0);
		CHECK(strcmp(comm, "a-very-long-thr\n") == 0);
		if (fd >= 0)
			close(fd);
		errno = 0;
		CHECK(prctl(PR_SET_NAME, BAD_PTR) == -1 && errno == EFAULT);
		errno = 0;
		CHECK(prctl(PR_GET_NAME, BAD_PTR) == -1 && errno == EFAULT);
		CHECK(prctl(PR_SET_NAME, "poll_ktap") == 0);
	}
	ktap_report("uname_sethostname_prctl_name", NULL);
}

/* What busybox's touch, chmod and id call: utimensat, chmod/fchmod/fchmodat, getgroups. */
static void file_times_modes_groups(void)
{
	const char *f = "/tmp/poll_times";
	struct timespec t[2] = { { 1000000, 5 }, { 2000000, 7 } }, keep[2];
	struct stat st;
	gid_t groups[4];
	int fd = open(f, O_RDWR | O_CREAT | O_TRUNC, 0644);

	CHECK(fd >= 0);
	CHECK(utimensat(AT_FDCWD, f, t, 0) == 0);
	CHECK(stat(f, &st) == 0);
	CHECK(st.st_atim.tv_sec == 1000000 && st.st_atim.tv_nsec == 5);
	CHECK(st.st_mtim.tv_sec == 2000000 && st.st_mtim.tv_nsec == 7);
	/* UTIME_OMIT keeps one, UTIME_NOW sets it to now; NULL: both now */
	keep[0] = (struct timespec){ 0, UTIME_OMIT };
	keep[1] = (struct timespec){ 0, UTIME_NOW };
	CHECK(futimens(fd, keep) == 0);
	CHECK(stat(f, &st) == 0);
	CHECK(st.st_atim.tv_sec == 1000000 && st.st_mtim.tv_sec > 2000000);
	CHECK(utimensat(AT_FDCWD, f, NULL, 0) == 0);
	CHECK(stat(f, &st) == 0 && st.st_atim.tv_sec > 1000000);
	t[0].tv_nsec = 1000000000;
	errno = 0;
	CHECK(utimensat(AT_FDCWD, f, t, 0) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(utimensat(AT_FDCWD, f, NULL, 0x4) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(utimensat(AT_FDCWD, "/tmp/no/such", NULL, 0) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(syscall(SYS_utimensat, AT_FDCWD, f, BAD_PTR, 0) == -1 && errno == EFAULT);
	/* chmod: the permission bits only, the type kept */
	CHECK(chmod(f, 04711) == 0);
	CHECK(stat(f, &st) == 0 && st.st_mode == (S_IFREG | 04711));
	CHECK(fchmod(fd, 0600) == 0);
	CHECK(stat(f, &st) == 0 && st.st_mode == (S_IFREG | 0600));
	CHECK(fchmodat(AT_FDCWD, f, 0444, 0) == 0);
	CHECK(stat(f, &st) == 0 && (st.st_mode & 07777) == 0444);
	errno = 0;
	CHECK(chmod("/tmp/no/such", 0600) == -1 && errno == ENOENT);
	errno = 0;
	CHECK(fchmod(1000, 0600) == -1 && errno == EBADF);
	/* root, and no supplementary groups */
	CHECK(getgroups(4, groups) == 0);
	CHECK(getgroups(0, NULL) == 0);
	errno = 0;
	CHECK(syscall(SYS_getgroups, -1, groups) == -1 && errno == EINVAL);
	close(fd);
	unlink(f);
	ktap_report("utimensat_chmod_getgroups", NULL);
}

int main(void)
{
	ktap_begin("poll", 13);
	pipe_readiness();
	files_and_devices();
	bad_fds();
	poll_errors();
	poll_wakeup_and_timeout();
	poll_eintr();
	ppoll_cases();
	select_cases();
	pselect_cases();
	terminal();
	random_devices();
	names();
	file_times_modes_groups();
	return ktap_finish();
}
