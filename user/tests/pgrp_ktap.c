/*
 * Process groups, sessions and job control from ring 3 (kernel/pgrp.c,
 * kernel/signal.c, drivers/tty.c; docs/signals.md): setpgid, getpgid,
 * getpgrp, setsid and getsid with every errno rule; kill(0), kill(-pgid)
 * and kill(-1); wait4 and waitid by group; stopping and continuing
 * (WUNTRACED, WCONTINUED, WNOWAIT, SIGCHLD's CLD_STOPPED/CLD_CONTINUED,
 * SA_NOCLDSTOP), a threaded process whose threads really stop and whose
 * sleeping calls (futex, nanosleep, pipe read) go on correctly after;
 * SIGCONT and stop signals discarding each other; orphaned process
 * groups; the console's foreground group (tcgetpgrp/tcsetpgrp, SIGTTOU and
 * SIGTTIN for background jobs); pid 1 refusing default actions.
 *
 * Run under /bin/init (job pgrp-numa3), which leads session 1 with the
 * console as its controlling terminal, its group in the foreground.
 * `pgrp_ktap sleep` prints a line and pauses, `pgrp_ktap read` prints a
 * line and reads the terminal (the shell test's ^C and ^Z targets);
 * `pgrp_ktap pause FD` writes a byte to FD, then pauses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <stdio.h>
#include "ktap.h"

#define FUTEX_WAIT	0
#define FUTEX_WAKE	1

static char *self_path = "/tests/pgrp_ktap";

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *shared_page(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The exit status of pid, or -1; reaps it. */
static int exit_code(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
}

/* waitpid with a time limit (3 s): where a broken kernel would leave the test hanging. */
static pid_t wait_limited(pid_t pid, int *st, int options)
{
	long long end = now_ns() + 3000000000LL;
	pid_t w;

	*st = 0;
	while ((w = waitpid(pid, st, options | WNOHANG)) == 0 && now_ns() < end)
		sleep_ms(5);
	return w;
}

static void kill_and_reap(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* A child that pauses until killed, once it has said it runs. */
static pid_t pauser(void)
{
	int fds[2];
	char c;
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		write(fds[1], "r", 1);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (pid > 0)
		read(fds[0], &c, 1);
	close(fds[0]);
	return pid;
}

/* The next SIGCHLD (blocked by the caller), with its siginfo; 0 if none came in 3 s. */
static int next_sigchld(siginfo_t *si)
{
	struct timespec ts = { 3, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	memset(si, 0, sizeof(*si));
	return sigtimedwait(&set, si, &ts) == SIGCHLD;
}

static void block(int sig, int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(how, &set, NULL);
}

static int pending(int sig)
{
	sigset_t set;

	sigpending(&set);
	return sigismember(&set, sig);
}

static void drain_sigchld(void)
{
	struct timespec ts = { 0, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	while (sigtimedwait(&set, NULL, &ts) == SIGCHLD)
		;
}

/* ---- ids ---- */

static void *report_tid(void *arg)
{
	*(volatile pid_t *)arg = (pid_t)syscall(SYS_gettid);
	for (;;)
		pause();
	return NULL;
}

static void case_ids_inherited(void)
{
	int fds[2];
	pid_t child, got[2], tid = 0;
	pthread_t th;
	siginfo_t si;

	CHECK(getpgrp() == getpgid(0));
	CHECK(getpgrp() == getpgid(getpid()));
	CHECK(getsid(0) == getsid(getpid()));
	/* Under /bin/init: its session, which it leads, and its group. */
	CHECK(getsid(1) == 1);
	CHECK(getsid(0) == getsid(getppid()));
	CHECK(getpgid(0) == getpgid(getppid()));
	/* A child is in its parent's group and session. */
	CHECK(pipe(fds) == 0);
	child = fork();
	if (child == 0) {
		pid_t ids[2] = { getpgrp(), getsid(0) };

		write(fds[1], ids, sizeof(ids));
		_exit(0);
	}
	CHECK(read(fds[0], got, sizeof(got)) == sizeof(got));
	CHECK(got[0] == getpgrp() && got[1] == getsid(0));
	close(fds[0]);
	close(fds[1]);
	/* A zombie is still in its group; once reaped, no longer there. */
	CHECK(waitid(P_PID, child, &si, WEXITED | WNOWAIT) == 0 && si.si_pid == child);
	CHECK(getpgid(child) == getpgrp());
	CHECK(getsid(child) == getsid(0));
	CHECK(exit_code(child) == 0);
	errno = 0;
	CHECK(getpgid(child) == -1 && errno == ESRCH);
	/* No such process, and negative pids. */
	errno = 0;
	CHECK(getpgid(999999) == -1 && errno == ESRCH);
	errno = 0;
	CHECK(getsid(999999) == -1 && errno == ESRCH);
	errno = 0;
	CHECK(getpgid(-5) == -1 && errno == ESRCH);
	/* A thread's id names its process; setpgid on it: EINVAL (not a group leader). */
	CHECK(pthread_create(&th, NULL, report_tid, &tid) == 0);
	for (int i = 0; i < 300 && !*(volatile pid_t *)&tid; i++)
		sleep_ms(10);
	CHECK(tid > 0 && tid != getpid());
	CHECK(getpgid(tid) == getpgrp());
	CHECK(getsid(tid) == getsid(0));
	errno = 0;
	CHECK(setpgid(tid, 0) == -1 && errno == EINVAL);
	pthread_cancel(th);
	pthread_join(th, NULL);
	ktap_report("ids_inherited_and_found", NULL);
}

/* ---- setpgid ---- */

/* Child code: setsid, tell the parent its pid, report an errno and wait to be killed. */
static pid_t session_child(int *report)
{
	int fds[2];
	pid_t pid;

	if (pipe(fds) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int r[3];

		r[0] = (int)setsid();
		r[1] = setpgid(0, 0) == -1 ? errno : 0;	/* a session leader: EPERM */
		r[2] = tcgetpgrp(0) == -1 ? errno : 0;	/* no controlling terminal: ENOTTY */
		write(fds[1], r, sizeof(r));
		for (;;)
			pause();
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], report, 3 * sizeof(int)) != 3 * sizeof(int))
		report[0] = -1;
	close(fds[0]);
	return pid;
}

static void case_setpgid_rules(void)
{
	pid_t c, s, e, me = getpid();
	int rep[3], fds[2];
	char c1;

	/* Out of init's group into one of our own: the tests below need it. */
	CHECK(setpgid(0, 0) == 0);
	CHECK(getpgrp() == me && getpgid(0) == me);
	CHECK(setpgid(0, 0) == 0);			/* again: nothing changes */
	CHECK(setpgid(me, me) == 0);
	errno = 0;
	CHECK(setpgid(0, -1) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(setpgid(999999, 0) == -1 && errno == ESRCH);
	errno = 0;
	CHECK(setpgid(1, 0) == -1 && errno == ESRCH);	/* neither us nor our child */
	errno = 0;
	CHECK(setpgid(0, 999999) == -1 && errno == EPERM);	/* no such group */
	/* A child: into a group of its own, back, and not into a group that is not there. */
	c = pauser();
	CHECK(c > 0);
	CHECK(setpgid(c, c) == 0 && getpgid(c) == c);
	CHECK(setpgid(c, me) == 0 && getpgid(c) == me);
	errno = 0;
	CHECK(setpgid(c, 999999) == -1 && errno == EPERM);
	CHECK(setpgid(c, 0) == 0 && getpgid(c) == c);
	/* A child in another session: EPERM; its group cannot be joined (EPERM). */
	s = session_child(rep);
	CHECK(s > 0 && rep[0] == s);
	CHECK(rep[1] == EPERM);				/* a session leader cannot move */
	CHECK(rep[2] == ENOTTY);
	CHECK(getsid(s) == s && getpgid(s) == s);
	errno = 0;
	CHECK(setpgid(s, 0) == -1 && errno == EPERM);
	errno = 0;
	CHECK(setpgid(c, s) == -1 && errno == EPERM);
	errno = 0;
	CHECK(setpgid(0, s) == -1 && errno == EPERM);
	/* A child that has run execve: EACCES. */
	CHECK(pipe(fds) == 0);
	e = fork();
	if (e == 0) {
		char fd[16];

		snprintf(fd, sizeof(fd), "%d", fds[1]);
		close(fds[0]);
		execl(self_path, self_path, "pause", fd, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	CHECK(read(fds[0], &c1, 1) == 1);		/* written after the exec */
	close(fds[0]);
	errno = 0;
	CHECK(setpgid(e, e) == -1 && errno == EACCES);
	CHECK(getpgid(e) == me);
	kill_and_reap(e);
	kill_and_reap(s);
	kill_and_reap(c);
	ktap_report("setpgid_rules", NULL);
}

/* ---- setsid ---- */

static void case_setsid_rules(void)
{
	pid_t a, b;
	int st;

	/* A group leader cannot start a session. */
	errno = 0;
	CHECK(setsid() == -1 && errno == EPERM);
	/* A child (in our group: no leader) can, once; it is then without a terminal. */
	a = fork();
	if (a == 0) {
		int bad = 0, sid;

		sid = (int)setsid();
		bad |= sid != getpid();
		bad |= (getsid(0) != getpid()) << 1;
		bad |= (getpgrp() != getpid()) << 2;
		bad |= !(setsid() == -1 && errno == EPERM) << 3;
		bad |= !(tcgetpgrp(0) == -1 && errno == ENOTTY) << 4;
		bad |= !(ioctl(0, TIOCGSID, &sid) == -1 && errno == ENOTTY) << 5;
		bad |= !(ioctl(0, TIOCSCTTY, 0) == -1 && errno == EPERM) << 6;	/* the console is init's */
		_exit(bad);
	}
	CHECK(a > 0 && exit_code(a) == 0);
	/*
	 * A process whose id is still some group's (its old group, where a
	 * child of it stayed) cannot start a session either.
	 */
	b = fork();
	if (b == 0) {
		pid_t g;
		int bad = 0;

		bad |= setpgid(0, 0) != 0;
		g = pauser();			/* in group b */
		bad |= (g <= 0) << 1;
		bad |= (setpgid(0, getppid()) != 0) << 2;	/* b back in its parent's group */
		bad |= (getpgid(g) != getpid()) << 3;
		bad |= !(setsid() == -1 && errno == EPERM) << 4;
		kill_and_reap(g);
		bad |= (setsid() != getpid()) << 5;	/* group b is gone: now it can */
		_exit(bad);
	}
	CHECK(b > 0 && waitpid(b, &st, 0) == b && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ktap_report("setsid_rules", NULL);
}

/* ---- kill to groups ---- */

/*
 * Four children, each with SIGUSR1 and SIGUSR2 blocked: two in our group,
 * two in group kids[2]. Each ends with the lower-numbered of the two it
 * finds pending (sigtimedwait takes the lowest), so after a kill of
 * SIGUSR1 to some and SIGUSR2 to all, exit 10 says it got SIGUSR1.
 */
static void waiters(pid_t kids[4])
{
	sigset_t set;
	int fds[2];
	char c;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	pipe(fds);
	for (int i = 0; i < 4; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			struct timespec ts = { 10, 0 };

			sigprocmask(SIG_BLOCK, &set, NULL);
			if (i >= 2)
				setpgid(0, i == 2 ? 0 : kids[2]);
			write(fds[1], "r", 1);
			_exit(sigtimedwait(&set, NULL, &ts));
		}
		if (i >= 2)
			setpgid(kids[i], kids[2]);
	}
	for (int i = 0; i < 4; i++)
		read(fds[0], &c, 1);
	close(fds[0]);
	close(fds[1]);
}

/* SIGUSR2 to each; which of them had SIGUSR1 (bit i), or -1 if one ended otherwise. */
static int which_got_usr1(pid_t kids[4])
{
	int mask = 0;

	for (int i = 0; i < 4; i++) {
		int code;

		kill(kids[i], SIGUSR2);
		code = exit_code(kids[i]);
		if (code == SIGUSR1)
			mask |= 1 << i;
		else if (code != SIGUSR2)
			return -1;
	}
	return mask;
}

static void case_kill_groups(void)
{
	siginfo_t si;
	pid_t kids[4], z;
	struct timespec ts = { 1, 0 };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	block(SIGUSR1, SIG_BLOCK);
	/* kill(-pgid): that group only. */
	waiters(kids);
	CHECK(getpgid(kids[0]) == getpgrp() && getpgid(kids[3]) == kids[2]);
	CHECK(kill(-kids[2], 0) == 0);
	CHECK(kill(-kids[2], SIGUSR1) == 0);
	CHECK(which_got_usr1(kids) == 0xc);
	CHECK(!pending(SIGUSR1));
	/* kill(0): the caller's group, the caller too. */
	waiters(kids);
	CHECK(kill(0, 0) == 0);
	CHECK(kill(0, SIGUSR1) == 0);
	CHECK(which_got_usr1(kids) == 0x3);
	memset(&si, 0, sizeof(si));
	CHECK(sigtimedwait(&set, &si, &ts) == SIGUSR1);
	CHECK(si.si_code == SI_USER && si.si_pid == getpid());
	/* kill(-1): every process but pid 1 and the caller. */
	waiters(kids);
	CHECK(kill(-1, 0) == 0);
	CHECK(kill(-1, SIGUSR1) == 0);
	CHECK(which_got_usr1(kids) == 0xf);
	CHECK(!pending(SIGUSR1));
	/* Errors. */
	errno = 0;
	CHECK(kill(-999999, 0) == -1 && errno == ESRCH);
	errno = 0;
	CHECK(kill(-999999, SIGUSR1) == -1 && errno == ESRCH);
	errno = 0;
	CHECK(kill(INT_MIN, 0) == -1 && errno == ESRCH);
	errno = 0;
	CHECK(kill(0, 65) == -1 && errno == EINVAL);
	/* A group whose only process is a zombie still exists (nothing is delivered). */
	z = fork();
	if (z == 0) {
		setpgid(0, 0);
		_exit(0);
	}
	setpgid(z, z);
	CHECK(waitid(P_PID, z, &si, WEXITED | WNOWAIT) == 0);
	CHECK(kill(-z, 0) == 0);
	CHECK(kill(-z, SIGUSR1) == 0);
	CHECK(exit_code(z) == 0);
	errno = 0;
	CHECK(kill(-z, 0) == -1 && errno == ESRCH);
	block(SIGUSR1, SIG_UNBLOCK);
	ktap_report("kill_to_groups_and_all", NULL);
}

/* ---- wait by group ---- */

static pid_t exiter(int code, int own_group, int delay_ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (own_group)
			setpgid(0, 0);
		if (delay_ms)
			sleep_ms(delay_ms);
		_exit(code);
	}
	if (pid > 0 && own_group)
		setpgid(pid, pid);
	return pid;
}

static void case_wait_groups(void)
{
	siginfo_t si;
	pid_t a, b, c;
	int st;

	a = exiter(3, 0, 1000);
	b = exiter(4, 1, 0);
	CHECK(waitid(P_PID, b, &si, WEXITED | WNOWAIT) == 0);	/* b is a zombie */
	CHECK(waitpid(0, &st, WNOHANG) == 0);		/* a (our group) still runs; b is not ours */
	CHECK(waitpid(-b, &st, 0) == b && WIFEXITED(st) && WEXITSTATUS(st) == 4);
	CHECK(waitpid(0, &st, 0) == a && WIFEXITED(st) && WEXITSTATUS(st) == 3);
	errno = 0;
	CHECK(waitpid(0, &st, WNOHANG) == -1 && errno == ECHILD);
	errno = 0;
	CHECK(waitpid(-999999, &st, 0) == -1 && errno == ECHILD);
	errno = 0;
	CHECK(waitpid(INT_MIN, &st, 0) == -1 && errno == ESRCH);
	/* waitid(P_PGID): a group, and 0 for the caller's. */
	a = exiter(6, 0, 0);
	c = exiter(5, 1, 0);
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PGID, c, &si, WEXITED) == 0);
	CHECK(si.si_pid == c && si.si_code == CLD_EXITED && si.si_status == 5 &&
	      si.si_signo == SIGCHLD);
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PGID, 0, &si, WEXITED) == 0 && si.si_pid == a && si.si_status == 6);
	errno = 0;
	CHECK(waitid(P_PGID, (id_t)-1, &si, WEXITED) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(waitid(P_ALL, 0, &si, WNOHANG) == -1 && errno == EINVAL);	/* nothing to wait for */
	errno = 0;
	CHECK(waitpid(-1, &st, WNOHANG | 0x100) == -1 && errno == EINVAL);
	drain_sigchld();
	ktap_report("wait_by_group", NULL);
}

/* ---- stop and continue ---- */

struct counter {
	volatile long count[4];
	volatile pid_t tids[4];
	volatile int futex_word;
	volatile int in_futex, in_read, in_sleep, quit;
	volatile long futex_ret, read_ret, sleep_ret;
	volatile int futex_errno, sleep_errno;
	volatile long long slept_ns;
};

/* A child in a group of its own (its parent's group is another: not orphaned) that counts. */
static pid_t counting_child(struct counter *k, int own_group)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (own_group)
			setpgid(0, 0);
		for (;;)
			k->count[0]++;
	}
	if (pid > 0 && own_group)
		setpgid(pid, pid);
	return pid;
}

/* Whether count moves within 2 s (then 1), or stays put for 300 ms (then 0). */
static int counting(volatile long *count, int expect_moving)
{
	long before = *count;

	for (int i = 0; i < (expect_moving ? 200 : 30); i++) {
		sleep_ms(10);
		if (*count != before)
			return 1;
	}
	return 0;
}

static void case_stop_continue(void)
{
	struct counter *k = shared_page(4096);
	siginfo_t si;
	pid_t x;
	int st;

	block(SIGCHLD, SIG_BLOCK);
	drain_sigchld();
	x = counting_child(k, 1);
	CHECK(x > 0 && counting(&k->count[0], 1));
	/* SIGSTOP: wait4(WUNTRACED) reports it once; SIGCHLD says CLD_STOPPED. */
	CHECK(kill(x, SIGSTOP) == 0);
	CHECK(waitpid(x, &st, WUNTRACED) == x && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	CHECK(next_sigchld(&si) && si.si_code == CLD_STOPPED && si.si_status == SIGSTOP &&
	      si.si_pid == x);
	CHECK(!counting(&k->count[0], 0));
	CHECK(waitpid(x, &st, WUNTRACED | WNOHANG) == 0);	/* reported already */
	CHECK(waitpid(x, &st, WNOHANG) == 0);			/* not asked for */
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PID, x, &si, WSTOPPED | WNOHANG) == 0 && si.si_pid == 0);
	/* SIGCONT: WCONTINUED once, CLD_CONTINUED, and it counts again. */
	CHECK(kill(x, SIGCONT) == 0);
	CHECK(waitpid(x, &st, WCONTINUED) == x && WIFCONTINUED(st));
	CHECK(next_sigchld(&si) && si.si_code == CLD_CONTINUED && si.si_status == SIGCONT &&
	      si.si_pid == x);
	CHECK(waitpid(x, &st, WCONTINUED | WNOHANG) == 0);
	CHECK(counting(&k->count[0], 1));
	/* SIGTSTP, SIGTTIN and SIGTTOU stop it too; waitid with WNOWAIT leaves the report. */
	CHECK(kill(x, SIGTSTP) == 0);
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PID, x, &si, WSTOPPED | WNOWAIT) == 0);
	CHECK(si.si_pid == x && si.si_code == CLD_STOPPED && si.si_status == SIGTSTP);
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PID, x, &si, WSTOPPED) == 0 && si.si_code == CLD_STOPPED &&
	      si.si_status == SIGTSTP);
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PID, x, &si, WSTOPPED | WNOHANG) == 0 && si.si_pid == 0);
	CHECK(kill(x, SIGCONT) == 0);
	memset(&si, 0, sizeof(si));
	CHECK(waitid(P_PID, x, &si, WCONTINUED | WNOWAIT) == 0 && si.si_code == CLD_CONTINUED &&
	      si.si_status == SIGCONT && si.si_pid == x);
	CHECK(waitid(P_PID, x, &si, WCONTINUED) == 0 && si.si_code == CLD_CONTINUED);
	CHECK(waitpid(x, &st, WCONTINUED | WNOHANG) == 0);
	CHECK(kill(x, SIGTTIN) == 0);
	CHECK(waitpid(x, &st, WUNTRACED) == x && WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTIN);
	CHECK(kill(x, SIGCONT) == 0);
	CHECK(kill(x, SIGTTOU) == 0);
	CHECK(waitpid(x, &st, WUNTRACED) == x && WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU);
	/* SIGKILL ends a stopped process. */
	CHECK(kill(x, SIGKILL) == 0);
	CHECK(waitpid(x, &st, 0) == x && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	drain_sigchld();
	block(SIGCHLD, SIG_UNBLOCK);
	munmap(k, 4096);
	ktap_report("stop_continue_wait_and_sigchld", NULL);
}

static void on_chld(int sig)
{
}

static void case_nocldstop(void)
{
	struct counter *k = shared_page(4096);
	struct sigaction sa;
	siginfo_t si;
	pid_t x;
	int st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_chld;
	sa.sa_flags = SA_NOCLDSTOP;
	CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
	block(SIGCHLD, SIG_BLOCK);
	drain_sigchld();
	x = counting_child(k, 1);
	CHECK(x > 0);
	CHECK(kill(x, SIGSTOP) == 0);
	CHECK(waitpid(x, &st, WUNTRACED) == x && WIFSTOPPED(st));
	CHECK(kill(x, SIGCONT) == 0);
	CHECK(waitpid(x, &st, WCONTINUED) == x && WIFCONTINUED(st));
	sleep_ms(50);
	CHECK(!pending(SIGCHLD));		/* neither stop nor continue sent one */
	CHECK(kill(x, SIGKILL) == 0);
	CHECK(waitpid(x, &st, 0) == x && WIFSIGNALED(st));
	CHECK(next_sigchld(&si) && si.si_code == CLD_KILLED && si.si_pid == x);	/* death does */
	sa.sa_handler = SIG_DFL;
	sa.sa_flags = 0;
	sigaction(SIGCHLD, &sa, NULL);
	block(SIGCHLD, SIG_UNBLOCK);
	munmap(k, 4096);
	ktap_report("sa_nocldstop", NULL);
}

/* ---- what SIGCONT and the stop signals discard ---- */

/*
 * A child in a group of its own with the signals of mask blocked: after
 * the parent's go it exits with the bits (1: SIGTSTP pending, 2: SIGCONT
 * pending). *go: the pipe to write the go to.
 */
static pid_t masked_child(const sigset_t *mask, int *go)
{
	int ready[2], gop[2];
	pid_t pid;
	char c;

	pipe(ready);
	pipe(gop);
	pid = fork();
	if (pid == 0) {
		int bits;

		sigprocmask(SIG_BLOCK, mask, NULL);
		setpgid(0, 0);
		write(ready[1], "r", 1);
		while (read(gop[0], &c, 1) < 0 && errno == EINTR)
			;
		bits = pending(SIGTSTP) | pending(SIGCONT) << 1;
		_exit(bits);
	}
	setpgid(pid, pid);
	read(ready[0], &c, 1);
	close(ready[0]);
	close(ready[1]);
	close(gop[0]);
	*go = gop[1];
	return pid;
}

static void case_stop_cont_discard(void)
{
	struct counter *k = shared_page(4096);
	sigset_t mask;
	pid_t p;
	int go, st;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTSTP);
	sigaddset(&mask, SIGCONT);
	/* The control: a blocked SIGTSTP stays pending. */
	p = masked_child(&mask, &go);
	CHECK(kill(p, SIGTSTP) == 0);
	write(go, "g", 1);
	close(go);
	CHECK(exit_code(p) == 1);
	/* SIGCONT discards a pending stop signal. */
	p = masked_child(&mask, &go);
	CHECK(kill(p, SIGTSTP) == 0);
	CHECK(kill(p, SIGCONT) == 0);
	write(go, "g", 1);
	close(go);
	CHECK(exit_code(p) == 2);		/* SIGCONT pending (blocked), SIGTSTP gone */
	/* A stop signal discards a pending SIGCONT. */
	p = masked_child(&mask, &go);
	CHECK(kill(p, SIGCONT) == 0);
	CHECK(kill(p, SIGTSTP) == 0);
	write(go, "g", 1);
	close(go);
	CHECK(exit_code(p) == 1);
	/* A blocked SIGCONT still continues a stopped process (and stays pending). */
	k->count[0] = 0;
	p = fork();
	if (p == 0) {
		block(SIGCONT, SIG_BLOCK);
		setpgid(0, 0);
		while (!k->quit)
			k->count[0]++;
		_exit(pending(SIGCONT) ? 0 : 1);
	}
	setpgid(p, p);
	CHECK(counting(&k->count[0], 1));
	CHECK(kill(p, SIGSTOP) == 0);
	CHECK(waitpid(p, &st, WUNTRACED) == p && WIFSTOPPED(st));
	CHECK(kill(p, SIGCONT) == 0);
	CHECK(waitpid(p, &st, WCONTINUED) == p && WIFCONTINUED(st));
	CHECK(counting(&k->count[0], 1));
	k->quit = 1;
	CHECK(exit_code(p) == 0);
	drain_sigchld();
	munmap(k, 4096);
	ktap_report("sigcont_and_stops_discard_each_other", NULL);
}

/* ---- orphaned process groups ---- */

static void on_hup(int sig)
{
}

static void case_orphaned(void)
{
	struct counter *k = shared_page(4096);
	int fds[2], st, rep[3];
	pid_t x, s, i;
	char c = 0;

	/*
	 * Our group is orphaned (our parent is init, which does not count):
	 * a terminal stop (SIGTSTP) does nothing to it; SIGSTOP still stops.
	 */
	x = counting_child(k, 0);
	CHECK(x > 0 && counting(&k->count[0], 1));
	CHECK(kill(x, SIGTSTP) == 0);
	CHECK(counting(&k->count[0], 1));
	CHECK(waitpid(x, &st, WUNTRACED | WNOHANG) == 0);
	CHECK(kill(x, SIGSTOP) == 0);
	CHECK(wait_limited(x, &st, WUNTRACED) == x && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	kill_and_reap(x);
	/* So is a new session's group. */
	s = session_child(rep);
	CHECK(s > 0 && rep[0] == s);
	CHECK(kill(s, SIGTTIN) == 0);
	sleep_ms(100);
	CHECK(waitpid(s, &st, WUNTRACED | WNOHANG) == 0);
	kill_and_reap(s);
	/*
	 * A group that an exit orphans while a process of it is stopped gets
	 * SIGHUP and SIGCONT: i leads group i with a child j that stops
	 * itself; when i exits, j is continued with a SIGHUP to handle.
	 */
	CHECK(pipe(fds) == 0);
	i = fork();
	if (i == 0) {
		pid_t j;

		setpgid(0, 0);
		j = fork();
		if (j == 0) {
			struct sigaction sa;

			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_hup;
			sigaction(SIGHUP, &sa, NULL);
			k->tids[0] = getpid();
			raise(SIGSTOP);
			write(fds[1], pending(SIGHUP) ? "p" : "H", 1);	/* the handler ran: H */
			_exit(0);
		}
		waitpid(j, &st, WUNTRACED);
		_exit(WIFSTOPPED(st) ? 0 : 1);
	}
	close(fds[1]);
	CHECK(exit_code(i) == 0);
	fcntl(fds[0], F_SETFL, O_NONBLOCK);	/* j may stay stopped: do not hang */
	for (int n = 0; n < 300 && read(fds[0], &c, 1) != 1; n++)
		sleep_ms(10);
	CHECK(c == 'H');
	close(fds[0]);
	if (c != 'H' && k->tids[0] > 0)
		kill(k->tids[0], SIGKILL);	/* still stopped: not ours to wait for */
	drain_sigchld();
	munmap(k, 4096);
	ktap_report("orphaned_process_groups", NULL);
}

/* ---- a threaded process stops whole ---- */

static struct counter *tk;

static void *spinner(void *arg)
{
	long i = (long)arg;

	tk->tids[i] = (pid_t)syscall(SYS_gettid);
	while (!tk->quit)
		tk->count[i]++;
	return NULL;
}

static void *futex_waiter(void *arg)
{
	tk->in_futex = 1;
	tk->futex_ret = syscall(SYS_futex, &tk->futex_word, FUTEX_WAIT, 0, NULL, NULL, 0);
	tk->futex_errno = errno;
	return NULL;
}

static void *pipe_reader(void *arg)
{
	char c;

	tk->in_read = 1;
	tk->read_ret = read(*(int *)arg, &c, 1);
	return NULL;
}

/* The caller's thread (and the threads it creates) on that CPU only; -1: on any. */
static void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (cpu < 0 || i == cpu)
			CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);	/* one CPU only: never mind */
}

/* The child: three counting threads, one in FUTEX_WAIT, one reading a pipe, main in nanosleep. */
static int threaded_child(int rfd, int sleeps)
{
	pthread_t th[5];
	struct timespec ts = { 2, 0 };
	long long t0;

	setpgid(0, 0);
	if (sleeps)
		pin_to_cpu(1);		/* every thread on one CPU: the stop takes a few slices */
	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, spinner, (void *)i);
	if (!sleeps) {
		for (;;)
			pause();
	}
	pthread_create(&th[3], NULL, futex_waiter, NULL);
	pthread_create(&th[4], NULL, pipe_reader, &rfd);
	t0 = now_ns();
	tk->in_sleep = 1;
	tk->sleep_ret = nanosleep(&ts, NULL);
	tk->sleep_errno = errno;
	tk->slept_ns = now_ns() - t0;
	pthread_join(th[3], NULL);
	pthread_join(th[4], NULL);
	tk->quit = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* expect_moving: whether all three counters move within 2 s; else whether any moves in 300 ms. */
static int all_counting(int expect_moving)
{
	long before[3];

	for (int i = 0; i < 3; i++)
		before[i] = tk->count[i];
	for (int n = 0; n < (expect_moving ? 200 : 30); n++) {
		int moved = 0;

		sleep_ms(10);
		for (int i = 0; i < 3; i++)
			moved += tk->count[i] != before[i];
		if (expect_moving ? moved == 3 : moved != 0)
			return 1;
	}
	return 0;
}

static void case_threads_stop(void)
{
	siginfo_t si;
	int fds[2], st, woken = 0;
	pid_t t, hogs[3];

	tk = shared_page(4096);
	block(SIGCHLD, SIG_BLOCK);
	drain_sigchld();
	CHECK(pipe(fds) == 0);
	tk->futex_ret = tk->read_ret = tk->sleep_ret = -99;
	t = fork();
	if (t == 0)
		_exit(threaded_child(fds[0], 1));
	setpgid(t, t);
	for (int i = 0; i < 500 && !(tk->in_futex && tk->in_read && tk->in_sleep &&
				      tk->count[0] && tk->count[1] && tk->count[2]); i++)
		sleep_ms(10);
	sleep_ms(50);			/* into their system calls */
	CHECK(tk->in_futex && tk->in_read && tk->in_sleep);
	/*
	 * Every thread stops: no counter moves; the sleepers stay asleep. The
	 * parent, on another CPU than the child's, polls while the stop is
	 * under way: a look too early must not lose the report (it once did,
	 * and a blocking wait then hung).
	 */
	for (int i = 0; i < 3; i++) {	/* busy processes on the child's CPU: slices between its threads */
		hogs[i] = fork();
		if (hogs[i] == 0) {
			pin_to_cpu(1);
			for (;;)
				;
		}
	}
	pin_to_cpu(0);
	CHECK(kill(t, SIGSTOP) == 0);
	for (long long end = now_ns() + 3000000000LL;
	     waitpid(t, &st, WUNTRACED | WNOHANG) == 0 && now_ns() < end; st = 0)
		;
	pin_to_cpu(-1);
	for (int i = 0; i < 3; i++)
		kill_and_reap(hogs[i]);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	CHECK(next_sigchld(&si) && si.si_code == CLD_STOPPED && si.si_pid == t);
	CHECK(!all_counting(0));
	CHECK(tk->futex_ret == -99 && tk->read_ret == -99 && tk->sleep_ret == -99);
	/* Continued: all count again; the calls the stop interrupted go on. */
	CHECK(kill(t, SIGCONT) == 0);
	CHECK(waitpid(t, &st, WCONTINUED) == t && WIFCONTINUED(st));
	CHECK(next_sigchld(&si) && si.si_code == CLD_CONTINUED && si.si_pid == t);
	CHECK(all_counting(1));
	CHECK(tk->futex_ret == -99 && tk->read_ret == -99);	/* asleep again, not EINTR */
	for (int i = 0; i < 300 && !woken; i++) {
		woken = (int)syscall(SYS_futex, &tk->futex_word, FUTEX_WAKE, 1, NULL, NULL, 0);
		if (!woken)
			sleep_ms(10);
	}
	CHECK(woken == 1);
	CHECK(write(fds[1], "x", 1) == 1);
	CHECK(exit_code(t) == 0);
	CHECK(tk->futex_ret == 0);
	CHECK(tk->read_ret == 1);
	CHECK(tk->sleep_ret == 0);		/* slept its whole time, no EINTR */
	CHECK(tk->slept_ns >= 2000000000LL);
	close(fds[0]);
	close(fds[1]);
	/* A stop signal to one thread (tgkill) stops them all; SIGKILL ends them stopped. */
	memset((void *)tk, 0, sizeof(*tk));
	t = fork();
	if (t == 0)
		_exit(threaded_child(-1, 0));
	setpgid(t, t);
	for (int i = 0; i < 500 && !(tk->tids[2] && tk->count[0] && tk->count[1] && tk->count[2]);
	     i++)
		sleep_ms(10);
	CHECK(syscall(SYS_tgkill, t, tk->tids[2], SIGTSTP) == 0);
	CHECK(waitpid(t, &st, WUNTRACED) == t && WIFSTOPPED(st) && WSTOPSIG(st) == SIGTSTP);
	CHECK(!all_counting(0));
	CHECK(kill(t, SIGKILL) == 0);
	CHECK(waitpid(t, &st, 0) == t && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	drain_sigchld();
	block(SIGCHLD, SIG_UNBLOCK);
	munmap((void *)tk, 4096);
	ktap_report("threaded_process_stops_whole", NULL);
}

/* ---- the terminal ---- */

/* A child in a background group (not orphaned: we are its parent) that does fn; its status. */
static int background(int (*fn)(void))
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGTTOU, SIG_DFL);	/* the parent ignores it */
		_exit(fn());
	}
	setpgid(pid, pid);
	if (wait_limited(pid, &st, WUNTRACED) != pid) {
		kill_and_reap(pid);
		return -1;
	}
	if (WIFSTOPPED(st))
		kill_and_reap(pid);
	return st;
}

static int bg_tcsetpgrp(void)
{
	return tcsetpgrp(0, getpgrp()) == 0 ? 0 : errno;
}

static int bg_read(void)
{
	char c;

	return read(0, &c, 1) < 0 ? errno : 0;
}

static int bg_read_ttin_ignored(void)
{
	signal(SIGTTIN, SIG_IGN);
	return bg_read();
}

static void case_terminal(void)
{
	pid_t init_pgrp = getpgid(1), s;
	struct termios tio;
	int sid = 0, st, rep[3];

	/* init made the console its session's terminal, its group the foreground. */
	CHECK(tcgetpgrp(0) == init_pgrp);
	CHECK(ioctl(0, TIOCGSID, &sid) == 0 && sid == getsid(0));
	CHECK(tcgetsid(0) == getsid(0));
	errno = 0;
	CHECK(ioctl(0, TIOCSCTTY, 0) == -1 && errno == EPERM);	/* not a session leader */
	/*
	 * We are a background group now, and orphaned: changing the terminal
	 * is refused (EIO; tcsetpgrp's ENOTTY, as Linux) instead of stopping.
	 */
	CHECK(tcgetattr(0, &tio) == 0);
	errno = 0;
	CHECK(tcsetattr(0, TCSANOW, &tio) == -1 && errno == EIO);
	errno = 0;
	CHECK(tcsetpgrp(0, getpgrp()) == -1 && errno == ENOTTY);
	/* With SIGTTOU ignored it may. */
	signal(SIGTTOU, SIG_IGN);
	CHECK(tcsetattr(0, TCSANOW, &tio) == 0);
	CHECK(tcsetpgrp(0, getpgrp()) == 0);
	CHECK(tcgetpgrp(0) == getpgrp());
	errno = 0;
	CHECK(tcsetpgrp(0, 999999) == -1 && errno == ESRCH);
	errno = 0;
	CHECK(tcsetpgrp(0, -2) == -1 && errno == EINVAL);
	s = session_child(rep);
	errno = 0;
	CHECK(s > 0 && tcsetpgrp(0, s) == -1 && errno == EPERM);	/* another session's group */
	kill_and_reap(s);
	/* A background job that is not orphaned is stopped: SIGTTOU, SIGTTIN. */
	st = background(bg_tcsetpgrp);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTOU);
	st = background(bg_read);
	CHECK(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTTIN);
	st = background(bg_read_ttin_ignored);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == EIO);
	/* The foreground back to init's group. */
	CHECK(tcsetpgrp(0, init_pgrp) == 0 && tcgetpgrp(0) == init_pgrp);
	signal(SIGTTOU, SIG_DFL);
	drain_sigchld();
	ktap_report("terminal_foreground_group", NULL);
}

/* pid 1 takes no signal it has no handler for (Linux's SIGNAL_UNKILLABLE). */
static void case_init_unkillable(void)
{
	CHECK(kill(1, SIGTERM) == 0);
	CHECK(kill(1, SIGINT) == 0);
	CHECK(kill(1, SIGSTOP) == 0);
	sleep_ms(50);
	CHECK(kill(1, 0) == 0);
	CHECK(getppid() == 1);
	ktap_report("pid1_refuses_default_actions", NULL);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "sleep")) {
		printf("pgrp_ktap: sleeping in group %d\n", (int)getpgrp());
		fflush(stdout);
		for (;;)
			pause();
	}
	if (argc >= 2 && !strcmp(argv[1], "read")) {
		char buf[64];
		ssize_t n;

		printf("pgrp_ktap: reading the terminal\n");
		fflush(stdout);
		n = read(0, buf, sizeof(buf));
		printf("pgrp_ktap: read returned %zd\n", n);
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "pause")) {
		write(atoi(argv[2]), "e", 1);
		for (;;)
			pause();
	}
	if (argc >= 1 && argv[0][0] == '/')
		self_path = argv[0];
	ktap_begin("pgrp", 12);
	case_ids_inherited();
	case_setpgid_rules();
	case_setsid_rules();
	case_kill_groups();
	case_wait_groups();
	case_stop_continue();
	case_nocldstop();
	case_stop_cont_discard();
	case_orphaned();
	case_threads_stop();
	case_terminal();
	case_init_unkillable();
	return ktap_finish();
}
