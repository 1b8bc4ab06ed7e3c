/*
 * Queued signals: rt_sigqueueinfo and sigqueue (their siginfo, si_value,
 * and errors: who may send which si_code), real-time signals queueing
 * while blocked and delivered in order with their values, standard ones
 * coalescing, and rt_sigtimedwait taking queued ones with their values.
 */
#include "diff.h"
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static volatile int hits, values[8], nvalues;
static siginfo_t last;

static void on_info(int sig, siginfo_t *si, void *uc)
{
	hits++;
	last = *si;
	if (nvalues < 8)
		values[nvalues++] = si->si_value.sival_int;
}

static void set_handler(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO;
	sigaction(sig, &sa, NULL);
}

static void reset(void)
{
	hits = 0;
	nvalues = 0;
	memset(&last, 0, sizeof(last));
}

static void report(const char *what)
{
	say("%s: hits %d si_signo %d si_code %d si_pid %s si_uid %d si_value %d", what, hits,
	    last.si_signo, last.si_code, last.si_pid == getpid() ? "self" : "other",
	    (int)last.si_uid, last.si_value.sival_int);
}

static void senders(void)
{
	siginfo_t si;
	pid_t child;

	set_handler(SIGUSR1);
	reset();
	memset(&si, 0, sizeof(si));
	si.si_signo = SIGUSR1;
	si.si_code = SI_QUEUE;
	si.si_pid = getpid();
	si.si_value.sival_int = 1234;
	show("rt_sigqueueinfo to itself, SI_QUEUE", syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si));
	report("rt_sigqueueinfo");
	reset();
	si.si_signo = SIGUSR2;			/* the kernel takes the signal argument's */
	si.si_code = -42;
	si.si_value.sival_int = 99;
	show("rt_sigqueueinfo, si_signo other, si_code -42",
	     syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si));
	report("rt_sigqueueinfo");
	reset();
	show("sigqueue to itself", sigqueue(getpid(), SIGUSR1, (union sigval){ .sival_int = 77 }));
	report("sigqueue");
	reset();
	si.si_code = SI_USER;
	show("rt_sigqueueinfo to itself, SI_USER", syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, &si));
	report("rt_sigqueueinfo SI_USER");

	si.si_code = SI_QUEUE;
	show("rt_sigqueueinfo signal 65", syscall(SYS_rt_sigqueueinfo, getpid(), 65, &si));
	show("rt_sigqueueinfo signal 0 probes", syscall(SYS_rt_sigqueueinfo, getpid(), 0, &si));
	show("rt_sigqueueinfo bad pointer", syscall(SYS_rt_sigqueueinfo, getpid(), SIGUSR1, (void *)8));
	show("rt_sigqueueinfo pid nobody has", syscall(SYS_rt_sigqueueinfo, 999999, SIGUSR1, &si));
	child = fork();
	if (child == 0) {
		alarm(10);			/* no test hangs on a signal that never came */
		pause();
		_exit(0);
	}
	si.si_code = SI_USER;
	show("rt_sigqueueinfo SI_USER to another process", syscall(SYS_rt_sigqueueinfo, child, SIGUSR1, &si));
	si.si_code = SI_TKILL;
	show("rt_sigqueueinfo SI_TKILL to another process", syscall(SYS_rt_sigqueueinfo, child, SIGUSR1, &si));
	si.si_code = SI_KERNEL;
	show("rt_sigqueueinfo SI_KERNEL to another process", syscall(SYS_rt_sigqueueinfo, child, SIGUSR1, &si));
	si.si_code = SI_QUEUE;
	show("rt_sigqueueinfo SI_QUEUE to another process", syscall(SYS_rt_sigqueueinfo, child, SIGTERM, &si));
	int st;
	waitpid(child, &st, 0);
	say("that child: signaled %s signal %d", WIFSIGNALED(st) ? "yes" : "no",
	    WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	show("rt_tgsigqueueinfo to itself", syscall(SYS_rt_tgsigqueueinfo, getpid(), getpid(), SIGUSR1, &si));
	show("rt_tgsigqueueinfo thread nobody has",
	     syscall(SYS_rt_tgsigqueueinfo, getpid(), 999999, SIGUSR1, &si));
}

static void queueing(void)
{
	sigset_t set;
	int i;
	char line[64] = "";

	set_handler(SIGRTMIN + 2);
	reset();
	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN + 2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 1; i <= 4; i++)
		show("sigqueue SIGRTMIN+2 while blocked",
		     sigqueue(getpid(), SIGRTMIN + 2, (union sigval){ .sival_int = i * 10 }));
	show("kill SIGRTMIN+2 while blocked", kill(getpid(), SIGRTMIN + 2));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	for (i = 0; i < nvalues; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " %d", values[i]);
	say("SIGRTMIN+2 delivered %d times, values:%s", hits, line);
	say("the last one: si_code %d", last.si_code);

	set_handler(SIGUSR2);
	reset();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 1; i <= 3; i++)
		sigqueue(getpid(), SIGUSR2, (union sigval){ .sival_int = i });
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	say("SIGUSR2 sigqueued 3 times while blocked: delivered %d, value %d", hits,
	    last.si_value.sival_int);
}

static void timed_wait(void)
{
	sigset_t set;
	siginfo_t si;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int i;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigaddset(&set, SIGRTMIN + 3);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigqueue(getpid(), SIGRTMIN + 3, (union sigval){ .sival_int = 3 });
	sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = 1 });
	sigqueue(getpid(), SIGRTMIN, (union sigval){ .sival_int = 2 });
	for (i = 0; i < 4; i++) {
		long r;

		memset(&si, 0, sizeof(si));
		errno = 0;
		r = sigtimedwait(&set, &si, &ts);
		if (r == -1)
			say("sigtimedwait: -1 %s", errname(errno));
		else
			say("sigtimedwait: SIGRTMIN+%ld si_code %d si_value %d", r - SIGRTMIN, si.si_code,
			    si.si_value.sival_int);
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

int main(void)
{
	diff_begin("signal_queue");
	senders();
	queueing();
	timed_wait();
	return 0;
}
