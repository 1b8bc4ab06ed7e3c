/*
 * Sending and delivering signals: the siginfo of kill, raise, tgkill and
 * tkill, the errors of each, masks and pending sets, standard signals
 * coalescing, the order in which signals pending together reach their
 * handlers, sigaction's flags (SA_RESETHAND, SA_NODEFER, sa_mask, the
 * flags read back, unknown ones dropped), ignoring, and what fork and
 * execve keep. (Queued signals: signal_queue.c.)
 */
#include "diff.h"
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define SIGSET_SIZE 8		/* the kernel's sigset_t: 64 bits */

static volatile int hits, order[16], norder;
static siginfo_t last;
static sigset_t mask_inside;

static void on_info(int sig, siginfo_t *si, void *uc)
{
	hits++;
	last = *si;
	if (norder < 16)
		order[norder++] = sig;
	sigprocmask(SIG_BLOCK, NULL, &mask_inside);
}

static int set_handler(int sig, int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO | flags;
	return sigaction(sig, &sa, NULL);
}

static void reset(void)
{
	hits = 0;
	norder = 0;
	memset(&last, 0, sizeof(last));
}

static const char *code_name(int code)
{
	static char other[16];

	switch (code) {
	case SI_USER: return "SI_USER";
	case SI_KERNEL: return "SI_KERNEL";
	case SI_QUEUE: return "SI_QUEUE";
	case SI_TKILL: return "SI_TKILL";
	case SI_TIMER: return "SI_TIMER";
	case SI_MESGQ: return "SI_MESGQ";
	case SI_ASYNCIO: return "SI_ASYNCIO";
	}
	snprintf(other, sizeof(other), "%d", code);
	return other;
}

static void report(const char *what)
{
	say("%s: hits %d si_signo %d si_code %s si_errno %d si_pid %s si_uid %d", what, hits,
	    last.si_signo, code_name(last.si_code), last.si_errno,
	    last.si_pid == getpid() ? "self" : last.si_pid == 0 ? "0" : "other", (int)last.si_uid);
}

static void senders(void)
{
	set_handler(SIGUSR1, 0);
	reset();
	show("kill self SIGUSR1", kill(getpid(), SIGUSR1));
	report("kill");
	reset();
	show("raise SIGUSR1", raise(SIGUSR1));
	report("raise");
	reset();
	show("tgkill self SIGUSR1", syscall(SYS_tgkill, getpid(), getpid(), SIGUSR1));
	report("tgkill");
	reset();
	show("tkill self SIGUSR1", syscall(SYS_tkill, getpid(), SIGUSR1));
	report("tkill");

	/* Errors: a bad signal number, nobody with that pid, bad thread ids. */
	show("kill signal 0 probes", kill(getpid(), 0));
	show("kill signal 65", kill(getpid(), 65));
	show("kill signal -1", kill(getpid(), -1));
	show("kill pid nobody has", kill(999999, SIGUSR1));
	show("kill pid nobody has, signal 0", kill(999999, 0));
	show("tgkill thread nobody has", syscall(SYS_tgkill, getpid(), 999999, SIGUSR1));
	show("tgkill group nobody has", syscall(SYS_tgkill, 999999, getpid(), SIGUSR1));
	show("tgkill tid 0", syscall(SYS_tgkill, getpid(), 0, SIGUSR1));
	show("tgkill tgid 0", syscall(SYS_tgkill, 0, getpid(), SIGUSR1));
	show("tgkill signal 65", syscall(SYS_tgkill, getpid(), getpid(), 65));
	show("tkill tid -1", syscall(SYS_tkill, -1, SIGUSR1));
	show("tkill signal 0 probes", syscall(SYS_tkill, getpid(), 0));
}

static void masks(void)
{
	sigset_t set, pend, old;

	set_handler(SIGUSR2, 0);
	reset();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	show("block SIGUSR2", sigprocmask(SIG_BLOCK, &set, &old));
	yesno("SIGUSR2 was blocked before", sigismember(&old, SIGUSR2));
	show("kill SIGUSR2 while blocked", kill(getpid(), SIGUSR2));
	show("kill SIGUSR2 again", kill(getpid(), SIGUSR2));
	say("hits while blocked: %d", hits);
	sigpending(&pend);
	yesno("SIGUSR2 pending", sigismember(&pend, SIGUSR2));
	show("unblock SIGUSR2", sigprocmask(SIG_UNBLOCK, &set, NULL));
	say("hits after unblocking (standard signals coalesce): %d", hits);
	sigpending(&pend);
	yesno("SIGUSR2 still pending", sigismember(&pend, SIGUSR2));
	yesno("SIGUSR2 blocked inside its handler", sigismember(&mask_inside, SIGUSR2));

	/* SIGKILL and SIGSTOP cannot be blocked; the mask reads back without them. */
	sigfillset(&set);
	show("block everything", sigprocmask(SIG_SETMASK, &set, &old));
	sigprocmask(SIG_SETMASK, NULL, &set);
	yesno("SIGKILL in the mask", sigismember(&set, SIGKILL));
	yesno("SIGSTOP in the mask", sigismember(&set, SIGSTOP));
	yesno("SIGUSR1 in the mask", sigismember(&set, SIGUSR1));
	yesno("SIGRTMAX in the mask", sigismember(&set, SIGRTMAX));
	sigprocmask(SIG_SETMASK, &old, NULL);

	/* The raw calls' errors. */
	uint64_t raw = 0, raw_old = 0;
	show("rt_sigprocmask how 3", syscall(SYS_rt_sigprocmask, 3, &raw, NULL, SIGSET_SIZE));
	show("rt_sigprocmask how 3, no set", syscall(SYS_rt_sigprocmask, 3, NULL, &raw_old, SIGSET_SIZE));
	show("rt_sigprocmask sigsetsize 4", syscall(SYS_rt_sigprocmask, SIG_BLOCK, &raw, NULL, 4));
	show("rt_sigprocmask sigsetsize 16", syscall(SYS_rt_sigprocmask, SIG_BLOCK, &raw, NULL, 16));
	show("rt_sigprocmask bad set pointer",
	     syscall(SYS_rt_sigprocmask, SIG_BLOCK, (void *)8, NULL, SIGSET_SIZE));
	show("rt_sigprocmask bad old pointer",
	     syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, (void *)8, SIGSET_SIZE));
	show("rt_sigpending sigsetsize 8", syscall(SYS_rt_sigpending, &raw, SIGSET_SIZE));
	show("rt_sigpending sigsetsize 4", syscall(SYS_rt_sigpending, &raw, 4));
	show("rt_sigpending sigsetsize 16", syscall(SYS_rt_sigpending, &raw, 16));
	show("rt_sigpending bad pointer", syscall(SYS_rt_sigpending, (void *)8, SIGSET_SIZE));
}

/* Signals pending together, unblocked at once: the order their handlers run. */
static void delivery_order(void)
{
	const int sigs[] = { SIGTERM, SIGRTMIN + 1, SIGUSR2, SIGHUP, SIGUSR1, SIGRTMIN };
	sigset_t set;
	unsigned i;
	char line[128] = "";

	sigemptyset(&set);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		set_handler(sigs[i], 0);
		sigaddset(&set, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		kill(getpid(), sigs[i]);
	reset();
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	for (i = 0; i < (unsigned)norder; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " %d", order[i]);
	say("handlers ran for %d signals, in this order:%s", norder, line);

	/* The same with each handler blocking all the others (sa_mask). */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_info;
		sa.sa_flags = SA_SIGINFO;
		sa.sa_mask = set;
		sigaction(sigs[i], &sa, NULL);
	}
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		kill(getpid(), sigs[i]);
	reset();
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	line[0] = '\0';
	for (i = 0; i < (unsigned)norder; i++)
		snprintf(line + strlen(line), sizeof(line) - strlen(line), " %d", order[i]);
	say("with sa_mask blocking the others: %d signals, in this order:%s", norder, line);
}

static void actions(void)
{
	struct sigaction sa, old;
	sigset_t pend, set;

	/* SA_RESETHAND: once, then the default. SA_NODEFER: not blocked inside. */
	set_handler(SIGUSR1, SA_RESETHAND);
	reset();
	raise(SIGUSR1);
	sigaction(SIGUSR1, NULL, &old);
	say("SA_RESETHAND: hits %d, handler now SIG_DFL: %s", hits,
	    old.sa_handler == SIG_DFL ? "yes" : "no");
	say("SA_RESETHAND: flags now %#x", (unsigned)old.sa_flags & ~0x04000000u);
	set_handler(SIGUSR1, SA_NODEFER);
	reset();
	raise(SIGUSR1);
	yesno("SA_NODEFER: SIGUSR1 blocked inside", sigismember(&mask_inside, SIGUSR1));
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO;
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGKILL);
	sigaction(SIGUSR1, &sa, NULL);
	reset();
	raise(SIGUSR1);
	yesno("sa_mask: SIGTERM blocked inside", sigismember(&mask_inside, SIGTERM));
	yesno("sa_mask: SIGKILL blocked inside", sigismember(&mask_inside, SIGKILL));
	sigaction(SIGUSR1, NULL, &old);
	yesno("sa_mask read back has SIGTERM", sigismember(&old.sa_mask, SIGTERM));
	yesno("sa_mask read back has SIGKILL", sigismember(&old.sa_mask, SIGKILL));

	/* The flags read back (SA_RESTORER aside, which the C library adds). */
	static const struct { const char *name; int flags; } f[] = {
		{ "SA_SIGINFO|SA_RESTART", SA_SIGINFO | SA_RESTART },
		{ "SA_ONSTACK|SA_NODEFER|SA_RESETHAND", SA_ONSTACK | SA_NODEFER | SA_RESETHAND },
		{ "SA_NOCLDSTOP|SA_NOCLDWAIT", SA_NOCLDSTOP | SA_NOCLDWAIT },
		{ "an unknown bit 0x400", SA_SIGINFO | 0x400 },
		{ "an unknown bit 0x200000", SA_SIGINFO | 0x200000 },
	};
	for (unsigned i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_IGN;
		sa.sa_flags = f[i].flags;
		sigaction(SIGURG, &sa, NULL);
		sigaction(SIGURG, NULL, &old);
		say("flags %s read back as %#x", f[i].name, (unsigned)old.sa_flags & ~0x04000000u);
	}
	signal(SIGURG, SIG_DFL);

	/* Errors. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	show("sigaction SIGKILL", sigaction(SIGKILL, &sa, NULL));
	show("sigaction SIGSTOP", sigaction(SIGSTOP, &sa, NULL));
	show("sigaction read SIGKILL", sigaction(SIGKILL, NULL, &old));
	show("rt_sigaction signal 0", syscall(SYS_rt_sigaction, 0, NULL, &old, SIGSET_SIZE));
	show("rt_sigaction signal 65", syscall(SYS_rt_sigaction, 65, NULL, &old, SIGSET_SIZE));
	show("rt_sigaction sigsetsize 4", syscall(SYS_rt_sigaction, SIGUSR1, NULL, &old, 4));
	show("rt_sigaction sigsetsize 16", syscall(SYS_rt_sigaction, SIGUSR1, NULL, &old, 16));
	show("rt_sigaction bad new pointer", syscall(SYS_rt_sigaction, SIGUSR1, (void *)8, NULL, SIGSET_SIZE));
	show("rt_sigaction bad old pointer", syscall(SYS_rt_sigaction, SIGUSR1, NULL, (void *)8, SIGSET_SIZE));

	/* Ignoring discards: a pending signal set to SIG_IGN is gone. */
	set_handler(SIGUSR2, 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	kill(getpid(), SIGUSR2);
	signal(SIGUSR2, SIG_IGN);
	sigpending(&pend);
	yesno("a pending SIGUSR2 stays pending once ignored", sigismember(&pend, SIGUSR2));
	kill(getpid(), SIGUSR2);
	sigpending(&pend);
	yesno("an ignored SIGUSR2 sent while blocked is pending", sigismember(&pend, SIGUSR2));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	signal(SIGUSR2, SIG_DFL);
	/* Ignored by default: SIGCHLD, SIGURG, SIGWINCH. */
	show("raise SIGURG with its default action", raise(SIGURG));
	show("raise SIGWINCH with its default action", raise(SIGWINCH));
	show("raise SIGCHLD with its default action", raise(SIGCHLD));
}

/* What a child keeps: the handlers, the mask; not the pending signals. */
static void inherit(const char *self)
{
	sigset_t set;
	pid_t pid;
	int st;

	set_handler(SIGUSR1, 0);
	signal(SIGUSR2, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	raise(SIGTERM);				/* pending in the parent only */
	pid = fork();
	if (pid == 0) {
		struct sigaction sa;
		sigset_t now, pend;

		sigaction(SIGUSR1, NULL, &sa);
		sigprocmask(SIG_BLOCK, NULL, &now);
		sigpending(&pend);
		say("fork child: SIGUSR1 handler kept: %s", sa.sa_sigaction == on_info ? "yes" : "no");
		say("fork child: SIGTERM still blocked: %s", sigismember(&now, SIGTERM) ? "yes" : "no");
		say("fork child: SIGTERM pending: %s", sigismember(&pend, SIGTERM) ? "yes" : "no");
		fflush(stdout);
		/* execve: handlers back to SIG_DFL, ignored stays ignored, the mask stays. */
		execl(self, self, "exec-child", (char *)NULL);
		say("fork child: execl: %s", errname(errno));
		_exit(1);
	}
	waitpid(pid, &st, 0);
	say("fork child ended with status %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	/* SIGTERM, pending and blocked here: discarded by ignoring it. */
	signal(SIGTERM, SIG_IGN);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

static int exec_child(void)
{
	struct sigaction sa;
	sigset_t now, pend;

	sigaction(SIGUSR1, NULL, &sa);
	say("after execve: SIGUSR1 is SIG_DFL: %s", sa.sa_handler == SIG_DFL ? "yes" : "no");
	sigaction(SIGUSR2, NULL, &sa);
	say("after execve: SIGUSR2 is SIG_IGN: %s", sa.sa_handler == SIG_IGN ? "yes" : "no");
	sigprocmask(SIG_BLOCK, NULL, &now);
	say("after execve: SIGTERM still blocked: %s", sigismember(&now, SIGTERM) ? "yes" : "no");
	sigpending(&pend);
	say("after execve: SIGTERM pending: %s", sigismember(&pend, SIGTERM) ? "yes" : "no");
	return 7;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "exec-child"))
		return exec_child();
	diff_begin("signal_deliver");
	senders();
	masks();
	delivery_order();
	actions();
	inherit(argv[0]);
	return 0;
}
