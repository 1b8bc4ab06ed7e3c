/*
 * Signals and system calls: a pipe read interrupted by alarm(2) with and
 * without SA_RESTART, and which calls restart (read, wait4, futex) and
 * which never do (nanosleep, pause, sigsuspend); alarm's siginfo and the
 * seconds it reports; the alternate signal stack (sigaltstack's errors,
 * SS_ONSTACK inside, SS_AUTODISARM, EPERM while on it); rt_sigtimedwait
 * of standard signals (queued ones: signal_queue.c); SIGCHLD's siginfo;
 * SIGPIPE's.
 */
#include "diff.h"
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

static volatile int hits, write_fd = -1;
static siginfo_t last;

static void on_alarm(int sig, siginfo_t *si, void *uc)
{
	hits++;
	last = *si;
	if (write_fd >= 0)
		write(write_fd, "!", 1);
}

static void set_alarm_handler(int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_SIGINFO | flags;
	sigaction(SIGALRM, &sa, NULL);
}

/* SIGALRM after ms milliseconds (setitimer, so that waiting costs little). */
static void alarm_in(long ms)
{
	struct itimerval it = { { 0, 0 }, { ms / 1000, (ms % 1000) * 1000 } };

	setitimer(ITIMER_REAL, &it, NULL);
}

static void restarts(void)
{
	int fds[2];
	char c = 0;
	ssize_t r;

	pipe(fds);
	/* alarm(1): the handler writes a byte into the pipe being read. */
	set_alarm_handler(0);
	hits = 0;
	write_fd = fds[1];
	show("alarm(1) first", alarm(1));
	errno = 0;
	r = read(fds[0], &c, 1);
	show_result("read interrupted by alarm without SA_RESTART", r, errno);
	say("SIGALRM: hits %d si_signo %d si_code %d", hits, last.si_signo, last.si_code);
	show("the handler's byte is there to read", read(fds[0], &c, 1));

	set_alarm_handler(SA_RESTART);
	hits = 0;
	alarm(1);
	c = 0;
	errno = 0;
	r = read(fds[0], &c, 1);
	show_result("read interrupted by alarm with SA_RESTART", r, errno);
	say("restarted read got: %c, hits %d", c, hits);

	/* alarm's seconds left, rounded; 0 cancels. */
	show("alarm(5)", alarm(5));
	show("alarm(3) returns the seconds left of alarm(5)", alarm(3));
	show("alarm(0) returns the seconds left of alarm(3)", alarm(0));
	show("alarm(0) again", alarm(0));
	write_fd = -1;

	/* Calls that are never restarted: EINTR even with SA_RESTART. */
	struct timespec ts = { 5, 0 }, rem = { 0, 0 };
	alarm_in(50);
	show("nanosleep interrupted, SA_RESTART", nanosleep(&ts, &rem));
	yesno("nanosleep's remaining time between 2 and 5 s", rem.tv_sec >= 2 && rem.tv_sec <= 5);
	alarm_in(50);
	show("pause interrupted, SA_RESTART", pause());
	sigset_t empty;
	sigemptyset(&empty);
	alarm_in(50);
	show("sigsuspend interrupted, SA_RESTART", sigsuspend(&empty));

	/* wait4 restarts under SA_RESTART; without it, EINTR. */
	pid_t pid = fork();
	if (pid == 0) {
		struct timespec t = { 1, 0 };

		nanosleep(&t, NULL);
		_exit(5);
	}
	int st = 0;
	alarm_in(50);
	errno = 0;
	r = waitpid(pid, &st, 0);
	show_result("waitpid interrupted, SA_RESTART: the child's pid", r == pid ? 1 : r, errno);
	say("waitpid: child's status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	set_alarm_handler(0);
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(5);
	}
	alarm_in(50);
	show("waitpid interrupted, no SA_RESTART", waitpid(pid, &st, 0));
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);

	/* futex: FUTEX_WAIT without a timeout restarts; with one, EINTR. */
	static uint32_t word;
	set_alarm_handler(SA_RESTART);
	alarm_in(50);
	struct timespec ft = { 5, 0 };
	show("futex wait with a timeout interrupted, SA_RESTART: times out or EINTR",
	     syscall(SYS_futex, &word, 0 /* FUTEX_WAIT */, 0, &ft, NULL, 0));
	set_alarm_handler(0);
	alarm_in(50);
	show("futex wait without a timeout interrupted, no SA_RESTART",
	     syscall(SYS_futex, &word, 0, 0, NULL, NULL, 0));
	close(fds[0]);
	close(fds[1]);
	signal(SIGALRM, SIG_DFL);
}

static char altstack[65536];
static volatile int on_alt, alt_flags, alt_perm;

static void on_usr1_alt(int sig)
{
	char here;
	stack_t ss, try;

	on_alt = &here >= altstack && &here < altstack + sizeof(altstack);
	sigaltstack(NULL, &ss);
	alt_flags = ss.ss_flags;
	try.ss_sp = altstack;
	try.ss_size = sizeof(altstack);
	try.ss_flags = 0;
	errno = 0;
	alt_perm = sigaltstack(&try, NULL) == -1 ? errno : 0;
}

static void alternate_stack(void)
{
	stack_t ss, old;
	struct sigaction sa;

	show("sigaltstack query", sigaltstack(NULL, &old));
	say("no alternate stack at first: flags %#x size %zu", old.ss_flags, old.ss_size);
	ss.ss_sp = altstack;
	ss.ss_flags = 0;
	ss.ss_size = 1024;
	show("sigaltstack 1024 bytes (under MINSIGSTKSZ)", sigaltstack(&ss, NULL));
	ss.ss_size = sizeof(altstack);
	ss.ss_flags = 0x40;
	show("sigaltstack unknown flag", sigaltstack(&ss, NULL));
	ss.ss_flags = SS_ONSTACK;
	show("sigaltstack SS_ONSTACK as a flag", sigaltstack(&ss, NULL));
	ss.ss_flags = 0;
	show("sigaltstack bad pointer", syscall(SYS_sigaltstack, (stack_t *)8, NULL));
	show("sigaltstack 64 KiB", sigaltstack(&ss, NULL));
	sigaltstack(NULL, &old);
	say("read back: sp ok %s flags %#x size %zu", old.ss_sp == altstack ? "yes" : "no",
	    old.ss_flags, old.ss_size);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1_alt;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	say("SA_ONSTACK handler: on the alternate stack %s, flags inside %#x, changing it: %s",
	    on_alt ? "yes" : "no", alt_flags, alt_perm ? errname(alt_perm) : "0");
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	say("handler without SA_ONSTACK: on the alternate stack %s, flags inside %#x",
	    on_alt ? "yes" : "no", alt_flags);

	ss.ss_flags = SS_AUTODISARM;
	show("sigaltstack SS_AUTODISARM", sigaltstack(&ss, NULL));
	sigaltstack(NULL, &old);
	say("read back with SS_AUTODISARM: flags %#x", old.ss_flags);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	raise(SIGUSR1);
	say("SS_AUTODISARM handler: on the alternate stack %s, flags inside %#x, changing it: %s",
	    on_alt ? "yes" : "no", alt_flags, alt_perm ? errname(alt_perm) : "0");
	sigaltstack(NULL, &old);
	say("after the handler: flags %#x", old.ss_flags);

	ss.ss_flags = SS_DISABLE;
	ss.ss_size = 0;
	show("sigaltstack SS_DISABLE", sigaltstack(&ss, NULL));
	sigaltstack(NULL, &old);
	say("disabled: flags %#x", old.ss_flags);
	signal(SIGUSR1, SIG_DFL);
}

static void timed_wait(void)
{
	sigset_t set;
	siginfo_t si;
	struct timespec ts = { 0, 20 * 1000 * 1000 }, bad = { 0, 1000000000L };

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	kill(getpid(), SIGUSR2);
	kill(getpid(), SIGUSR1);
	memset(&si, 0, sizeof(si));
	show("sigtimedwait takes the lowest pending", sigtimedwait(&set, &si, &ts));
	say("its siginfo: si_signo %d si_code %d si_pid self %s", si.si_signo, si.si_code,
	    si.si_pid == getpid() ? "yes" : "no");
	memset(&si, 0, sizeof(si));
	show("sigtimedwait then the other", sigtimedwait(&set, &si, &ts));
	show("sigwaitinfo of a pending one", (kill(getpid(), SIGUSR2), sigwaitinfo(&set, &si)));
	show("sigtimedwait with nothing pending", sigtimedwait(&set, &si, &ts));
	show("sigtimedwait with a bad timeout", sigtimedwait(&set, &si, &bad));
	struct timespec zero = { 0, 0 };
	show("sigtimedwait with a zero timeout", sigtimedwait(&set, &si, &zero));
	show("rt_sigtimedwait sigsetsize 4", syscall(SYS_rt_sigtimedwait, &set, &si, &ts, 4));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static volatile int chld_hits, chld_code, chld_status, chld_pid;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
	chld_hits++;
	chld_code = si->si_code;
	chld_status = si->si_status;
	chld_pid = si->si_pid;
}

static void children(void)
{
	struct sigaction sa;
	pid_t pid;
	int st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGCHLD, &sa, NULL);
	pid = fork();
	if (pid == 0)
		_exit(9);
	waitpid(pid, &st, 0);
	say("SIGCHLD for an exit: hits %d si_code %d (CLD_EXITED %d) si_status %d si_pid ok %s",
	    chld_hits, chld_code, CLD_EXITED, chld_status, chld_pid == pid ? "yes" : "no");
	chld_hits = 0;
	pid = fork();
	if (pid == 0) {
		raise(SIGTERM);
		_exit(1);
	}
	waitpid(pid, &st, 0);
	say("SIGCHLD for a kill: hits %d si_code %d (CLD_KILLED %d) si_status %d si_pid ok %s",
	    chld_hits, chld_code, CLD_KILLED, chld_status, chld_pid == pid ? "yes" : "no");
	say("wait status: signaled %s signal %d", WIFSIGNALED(st) ? "yes" : "no", WTERMSIG(st));
	signal(SIGCHLD, SIG_DFL);

	/* SIGPIPE: its siginfo, and the write's EPIPE. */
	int fds[2];
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alarm;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGPIPE, &sa, NULL);
	hits = 0;
	memset(&last, 0, sizeof(last));
	pipe(fds);
	close(fds[0]);
	show("write to a pipe with no reader", write(fds[1], "x", 1));
	say("SIGPIPE: hits %d si_signo %d si_code %d si_pid self %s", hits, last.si_signo,
	    last.si_code, last.si_pid == getpid() ? "yes" : "no");
	close(fds[1]);
	signal(SIGPIPE, SIG_DFL);
}

int main(void)
{
	diff_begin("signal_syscall");
	restarts();
	alternate_stack();
	timed_wait();
	children();
	return 0;
}
