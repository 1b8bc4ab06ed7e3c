/*
 * Signals from ring 3 (kernel/signal.c, docs/signals.md): handlers and
 * their siginfo for kill, tgkill and each fault, the ucontext a handler
 * may change, registers and SSE state kept across a handler, masks,
 * SA_RESETHAND/SA_NODEFER, sigaltstack, ignoring, pending sets, and
 * system calls a signal interrupts (sigsuspend, pause, nanosleep, pipe
 * reads with and without SA_RESTART).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ktap.h"

static volatile sig_atomic_t hits, last_sig;
static siginfo_t last_info;
static sigset_t mask_in_handler;
static sigjmp_buf jump;
static volatile uintptr_t local_addr;

static void on_info(int sig, siginfo_t *si, void *uc)
{
	hits++;
	last_sig = sig;
	last_info = *si;
	sigprocmask(SIG_BLOCK, NULL, &mask_in_handler);
	local_addr = (uintptr_t)&sig;
}

static void on_fault_jump(int sig, siginfo_t *si, void *uc)
{
	last_sig = sig;
	last_info = *si;
	siglongjmp(jump, 1);
}

static int set_action(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	return sigaction(sig, &sa, NULL);
}

static void reset(void)
{
	hits = 0;
	last_sig = 0;
	memset(&last_info, 0, sizeof(last_info));
}

static void case_kill_self(void)
{
	reset();
	CHECK(set_action(SIGUSR1, on_info, 0) == 0);
	CHECK(kill(getpid(), SIGUSR1) == 0);
	CHECK(hits == 1);
	CHECK(last_info.si_signo == SIGUSR1);
	CHECK(last_info.si_code == SI_USER);
	CHECK(last_info.si_pid == getpid());
	/* Blocked while its own handler runs (no SA_NODEFER), and not after. */
	CHECK(sigismember(&mask_in_handler, SIGUSR1));
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	CHECK(!sigismember(&now, SIGUSR1));
	reset();
	CHECK(syscall(SYS_tgkill, getpid(), getpid(), SIGUSR1) == 0);
	CHECK(hits == 1 && last_info.si_code == SI_TKILL);
	CHECK(syscall(SYS_tgkill, getpid(), getpid() + 1000, SIGUSR1) == -1 && errno == ESRCH);
	/* kill(pid, 0) probes; a pid nobody has, or a bad number, fails. */
	CHECK(kill(getpid(), 0) == 0);
	CHECK(kill(getppid(), 0) == 0);			/* not our child: any pid is reachable */
	CHECK(kill(999999, 0) == -1 && errno == ESRCH);
	CHECK(kill(getpid(), 65) == -1 && errno == EINVAL);
	ktap_report("kill_and_tgkill_siginfo", NULL);
}

static void case_sigaction_errors(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	CHECK(sigaction(SIGKILL, &sa, NULL) == -1 && errno == EINVAL);
	CHECK(sigaction(SIGSTOP, &sa, NULL) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_rt_sigaction, 0, NULL, &old, 8) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_rt_sigaction, 65, NULL, &old, 8) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_rt_sigaction, SIGUSR1, NULL, &old, 4) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_rt_sigaction, SIGUSR1, (void *)8, NULL, 8) == -1 && errno == EFAULT);
	/* Reading SIGKILL's action is allowed. */
	CHECK(sigaction(SIGKILL, NULL, &old) == 0 && old.sa_handler == SIG_DFL);
	ktap_report("sigaction_errors", NULL);
}

static void case_mask_and_pending(void)
{
	sigset_t set, pend;

	reset();
	CHECK(set_action(SIGUSR2, on_info, 0) == 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
	CHECK(kill(getpid(), SIGUSR2) == 0);
	CHECK(hits == 0);
	CHECK(sigpending(&pend) == 0 && sigismember(&pend, SIGUSR2));
	/* Standard signals coalesce: two sends, one delivery. */
	CHECK(kill(getpid(), SIGUSR2) == 0);
	CHECK(sigprocmask(SIG_UNBLOCK, &set, NULL) == 0);
	CHECK(hits == 1 && last_sig == SIGUSR2);
	CHECK(sigpending(&pend) == 0 && !sigismember(&pend, SIGUSR2));
	/* SIGKILL cannot be blocked: the mask reads back without it. */
	sigfillset(&set);
	CHECK(sigprocmask(SIG_SETMASK, &set, NULL) == 0);
	CHECK(sigprocmask(SIG_SETMASK, NULL, &pend) == 0);
	CHECK(!sigismember(&pend, SIGKILL) && !sigismember(&pend, SIGSTOP) &&
	      sigismember(&pend, SIGUSR1));
	sigemptyset(&set);
	CHECK(sigprocmask(SIG_SETMASK, &set, NULL) == 0);
	ktap_report("mask_pending_coalesce", NULL);
}

static void case_ignore(void)
{
	sigset_t set, pend;
	struct sigaction sa;

	reset();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	CHECK(kill(getpid(), SIGUSR1) == 0);		/* ignored: would kill by default */
	/* A pending signal is discarded when its action becomes SIG_IGN. */
	CHECK(set_action(SIGUSR1, on_info, 0) == 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	kill(getpid(), SIGUSR1);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	CHECK(sigpending(&pend) == 0 && !sigismember(&pend, SIGUSR1));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	CHECK(hits == 0);
	/* SIGCHLD and SIGURG are ignored by default. */
	sa.sa_handler = SIG_DFL;
	sigaction(SIGURG, &sa, NULL);
	CHECK(kill(getpid(), SIGURG) == 0);
	ktap_report("ignore_and_discard", NULL);
}

static void case_resethand_nodefer_samask(void)
{
	struct sigaction sa;

	reset();
	CHECK(set_action(SIGURG, on_info, SA_RESETHAND) == 0);
	kill(getpid(), SIGURG);
	CHECK(hits == 1);
	CHECK(sigaction(SIGURG, NULL, &sa) == 0 && sa.sa_handler == SIG_DFL);
	kill(getpid(), SIGURG);				/* default now: ignored */
	CHECK(hits == 1);

	reset();
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_info;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaddset(&sa.sa_mask, SIGUSR2);
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	kill(getpid(), SIGUSR1);
	CHECK(hits == 1);
	CHECK(!sigismember(&mask_in_handler, SIGUSR1));	/* SA_NODEFER */
	CHECK(sigismember(&mask_in_handler, SIGUSR2));	/* sa_mask */
	ktap_report("resethand_nodefer_samask", NULL);
}

static void case_fault_siginfo(void)
{
	char *p;
	volatile char *vp;

	/* SEGV_MAPERR at an unmapped address. */
	CHECK(set_action(SIGSEGV, on_fault_jump, 0) == 0);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	munmap(p, 4096);
	reset();
	if (!sigsetjmp(jump, 1)) {
		vp = p + 12;
		*vp = 1;
		CHECK(0);				/* not reached */
	}
	CHECK(last_sig == SIGSEGV && last_info.si_code == SEGV_MAPERR);
	CHECK(last_info.si_addr == p + 12);

	/* SEGV_ACCERR: a write to a read-only page. */
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reset();
	if (!sigsetjmp(jump, 1)) {
		vp = p + 100;
		*vp = 1;
		CHECK(0);
	}
	CHECK(last_sig == SIGSEGV && last_info.si_code == SEGV_ACCERR);
	CHECK(last_info.si_addr == p + 100);
	munmap(p, 4096);

	/* BUS_ADRERR: past the end of a file mapping. */
	int fd = memfd_create("sigbus", 0);
	char page[4096] = { 7 };

	CHECK(fd >= 0 && write(fd, page, sizeof(page)) == sizeof(page));
	p = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK(set_action(SIGBUS, on_fault_jump, 0) == 0);
	reset();
	if (!sigsetjmp(jump, 1)) {
		vp = p + 4096 + 8;
		(void)*vp;
		CHECK(0);
	}
	CHECK(last_sig == SIGBUS && last_info.si_code == BUS_ADRERR);
	CHECK(last_info.si_addr == p + 4096 + 8);
	CHECK(p[0] == 7);
	munmap(p, 8192);
	close(fd);

	/* SIGILL (ud2) and SIGFPE (divide by zero): si_addr is the instruction. */
	CHECK(set_action(SIGILL, on_fault_jump, 0) == 0);
	reset();
	if (!sigsetjmp(jump, 1))
		__asm__ volatile("ud2");
	CHECK(last_sig == SIGILL && last_info.si_code == ILL_ILLOPN && last_info.si_addr != NULL);
	CHECK(set_action(SIGFPE, on_fault_jump, 0) == 0);
	reset();
	if (!sigsetjmp(jump, 1)) {
		int zero = 0, r;

		__asm__ volatile("cltd; idivl %1" : "=a"(r) : "r"(zero), "a"(1) : "edx");
		CHECK(r == -1);				/* not reached */
	}
	CHECK(last_sig == SIGFPE && last_info.si_code == FPE_INTDIV);
	ktap_report("fault_siginfo", NULL);
}

/* The handler skips the faulting 3-byte store by moving the saved RIP. */
static void on_segv_skip(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	hits++;
	last_info = *si;
	uc->uc_mcontext.gregs[REG_RIP] += 3;
	uc->uc_mcontext.gregs[REG_RBX] = 0x1234;
}

static char *fix_page;

/* The handler makes the page writable and returns: the store runs again. */
static void on_segv_fix(int sig, siginfo_t *si, void *uc)
{
	hits++;
	mprotect(fix_page, 4096, PROT_READ | PROT_WRITE);
}

static void case_handler_returns(void)
{
	long rbx = 0;

	fix_page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(fix_page != MAP_FAILED);
	CHECK(set_action(SIGSEGV, on_segv_fix, 0) == 0);
	reset();
	((volatile char *)fix_page)[5] = 42;
	CHECK(hits == 1 && fix_page[5] == 42);

	/* movb $1, (%rax) is c6 00 01: three bytes. */
	CHECK(set_action(SIGSEGV, on_segv_skip, 0) == 0);
	CHECK(mprotect(fix_page, 4096, PROT_READ) == 0);
	reset();
	__asm__ volatile("xorl %%ebx, %%ebx\n\t.byte 0xc6, 0x00, 0x01\n\tmovq %%rbx, %0"
			 : "=r"(rbx) : "a"(fix_page + 9) : "rbx", "memory");
	CHECK(hits == 1 && rbx == 0x1234 && fix_page[9] == 0);
	CHECK(last_info.si_addr == fix_page + 9 && last_info.si_code == SEGV_ACCERR);
	munmap(fix_page, 4096);
	signal(SIGSEGV, SIG_DFL);
	ktap_report("handler_returns_and_ucontext", NULL);
}

/* A handler that clobbers xmm5 and r12: the interrupted code must not notice. */
static void on_clobber(int sig)
{
	hits++;
	__asm__ volatile("pxor %%xmm5, %%xmm5; xorl %%r12d, %%r12d" ::: "xmm5", "r12");
}

static void case_registers_kept(void)
{
	unsigned long x = 0, r12 = 0;

	reset();
	signal(SIGUSR1, on_clobber);
	__asm__ volatile(
		"movq $0x1122334455667788, %%rcx\n\t"
		"movq %%rcx, %%xmm5\n\t"
		"movq %%rcx, %%r12\n\t"
		"movl %[nr], %%eax\n\t"
		"syscall\n\t"
		"movq %%xmm5, %[x]\n\t"
		"movq %%r12, %[r12]"
		: [x] "=r"(x), [r12] "=r"(r12)
		: [nr] "i"(SYS_kill), "D"((long)getpid()), "S"((long)SIGUSR1)
		: "rax", "rcx", "r11", "r12", "xmm5", "memory");
	CHECK(hits == 1);
	CHECK(x == 0x1122334455667788UL);
	CHECK(r12 == 0x1122334455667788UL);
	ktap_report("registers_and_sse_kept", NULL);
}

static void case_sigaltstack(void)
{
	static char altstack[16384];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) }, old;

	CHECK(sigaltstack(NULL, &old) == 0 && (old.ss_flags & SS_DISABLE));
	stack_t small = { .ss_sp = altstack, .ss_size = 1024 };
	CHECK(sigaltstack(&small, NULL) == -1 && errno == ENOMEM);
	stack_t bad = { .ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0x40 };
	CHECK(sigaltstack(&bad, NULL) == -1 && errno == EINVAL);
	CHECK(sigaltstack(&ss, NULL) == 0);
	CHECK(sigaltstack(NULL, &old) == 0 && old.ss_sp == altstack && old.ss_flags == 0 &&
	      old.ss_size == sizeof(altstack));
	reset();
	CHECK(set_action(SIGUSR2, on_info, SA_ONSTACK) == 0);
	kill(getpid(), SIGUSR2);
	CHECK(hits == 1);
	CHECK(local_addr >= (uintptr_t)altstack && local_addr < (uintptr_t)altstack + sizeof(altstack));
	/* Without SA_ONSTACK the handler runs on the normal stack. */
	reset();
	CHECK(set_action(SIGUSR2, on_info, 0) == 0);
	kill(getpid(), SIGUSR2);
	CHECK(hits == 1 && !(local_addr >= (uintptr_t)altstack &&
			     local_addr < (uintptr_t)altstack + sizeof(altstack)));
	ss.ss_flags = SS_DISABLE;
	CHECK(sigaltstack(&ss, NULL) == 0);
	ktap_report("sigaltstack", NULL);
}

static void on_plain(int sig)
{
	hits++;
	last_sig = sig;
}

/* A child that sends sig to the parent after a short sleep, then exits. */
static pid_t send_later(int sig, long ms)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct timespec ts = { 0, ms * 1000000L };

		nanosleep(&ts, NULL);
		kill(getppid(), sig);
		_exit(0);
	}
	return pid;
}

static void reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
		;
}

static void case_interrupted_calls(void)
{
	sigset_t set, empty, now;
	pid_t pid;
	struct sigaction sa;
	int fds[2];
	char c;

	/* sigsuspend: waits with the given mask, returns EINTR, the old mask comes back. */
	reset();
	signal(SIGUSR1, on_plain);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	pid = send_later(SIGUSR1, 20);
	sigemptyset(&empty);
	CHECK(sigsuspend(&empty) == -1 && errno == EINTR);
	CHECK(hits == 1);
	sigprocmask(SIG_BLOCK, NULL, &now);
	CHECK(sigismember(&now, SIGUSR1));
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	reap(pid);

	/* pause and nanosleep: EINTR once a handler ran. */
	reset();
	pid = send_later(SIGUSR1, 20);
	CHECK(pause() == -1 && errno == EINTR && hits == 1);
	reap(pid);
	reset();
	pid = send_later(SIGUSR1, 20);
	struct timespec ts = { 5, 0 }, rem = { 0, 0 };
	CHECK(nanosleep(&ts, &rem) == -1 && errno == EINTR && hits == 1);
	CHECK(rem.tv_sec >= 3 && rem.tv_sec <= 5);
	reap(pid);

	/* A pipe read: EINTR without SA_RESTART, restarted with it. */
	CHECK(pipe(fds) == 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_plain;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	reset();
	pid = send_later(SIGUSR1, 20);
	CHECK(read(fds[0], &c, 1) == -1 && errno == EINTR && hits == 1);
	reap(pid);
	sa.sa_flags = SA_RESTART;
	CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
	reset();
	pid = fork();
	if (pid == 0) {
		struct timespec t = { 0, 20000000L };

		nanosleep(&t, NULL);
		kill(getppid(), SIGUSR1);
		nanosleep(&t, NULL);
		write(fds[1], "x", 1);
		_exit(0);
	}
	c = 0;
	CHECK(read(fds[0], &c, 1) == 1 && c == 'x' && hits == 1);
	reap(pid);
	close(fds[0]);
	close(fds[1]);
	ktap_report("interrupted_calls_and_sa_restart", NULL);
}

static void case_sigpipe_and_default_kill(void)
{
	int fds[2], st;
	pid_t pid;

	/* SIGPIPE reaches a handler; the write fails with EPIPE. */
	reset();
	signal(SIGPIPE, on_plain);
	CHECK(pipe(fds) == 0);
	close(fds[0]);
	CHECK(write(fds[1], "x", 1) == -1 && errno == EPIPE);
	CHECK(hits == 1 && last_sig == SIGPIPE);
	close(fds[1]);
	signal(SIGPIPE, SIG_DFL);

	/* A child killed by SIGTERM's default action; one killed by an unhandled fault. */
	pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	struct timespec t = { 0, 20000000L };
	nanosleep(&t, NULL);
	CHECK(kill(pid, SIGTERM) == 0);
	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	pid = fork();
	if (pid == 0) {
		static volatile int *volatile bad = (volatile int *)16;

		signal(SIGSEGV, SIG_IGN);	/* a fault's signal cannot be ignored away */
		*bad = 1;
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	/* A forked child keeps its parent's handlers (SIGUSR1's is on_plain here). */
	pid = fork();
	if (pid == 0) {
		struct sigaction sa;

		sigaction(SIGUSR1, NULL, &sa);
		_exit(sa.sa_handler == on_plain ? 0 : 1);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	ktap_report("sigpipe_default_kill_fork", NULL);
}

/* SIGCHLD: its siginfo, and no zombies when it is ignored. */
static volatile int chld_code, chld_pid, chld_status;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
	chld_code = si->si_code;
	chld_pid = si->si_pid;
	chld_status = si->si_status;
}

static void case_sigchld(void)
{
	struct sigaction sa;
	pid_t pid;
	int st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_chld;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
	chld_code = chld_pid = chld_status = 0;
	pid = fork();
	if (pid == 0)
		_exit(7);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 7);
	CHECK(chld_code == CLD_EXITED && chld_pid == pid && chld_status == 7);

	/* pid_t arguments are ints: garbage in a register's upper half is ignored, as Linux. */
	pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	CHECK(syscall(SYS_kill, (1L << 32) | (unsigned)pid, SIGTERM) == 0);
	CHECK(syscall(SYS_wait4, (1L << 32) | (unsigned)pid, &st, 0, NULL) == pid);
	CHECK(syscall(SYS_wait4, 0xffffffffL, &st, WNOHANG, NULL) == -1 && errno == ECHILD);

	chld_code = 0;
	pid = fork();
	if (pid == 0) {
		raise(SIGTERM);
		_exit(0);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFSIGNALED(st));
	CHECK(chld_code == CLD_KILLED && chld_status == SIGTERM);

	/* Ignored: the child is reaped by itself; wait finds no child. */
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
	pid = fork();
	if (pid == 0)
		_exit(3);
	errno = 0;
	CHECK(waitpid(pid, &st, 0) == -1 && errno == ECHILD);
	sa.sa_handler = SIG_DFL;
	CHECK(sigaction(SIGCHLD, &sa, NULL) == 0);
	ktap_report("sigchld_siginfo_and_ignored_means_no_zombie", NULL);
}

/* rt_sigtimedwait: take a blocked signal synchronously, time out, errors. */
static void case_sigtimedwait(void)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 }, t0, t1, bad = { 0, 1000000000L };
	sigset_t set;
	siginfo_t si;
	pid_t pid;
	long ms;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
	CHECK(kill(getpid(), SIGUSR1) == 0);
	memset(&si, 0, sizeof(si));
	CHECK(sigtimedwait(&set, &si, &ts) == SIGUSR1);
	CHECK(si.si_signo == SIGUSR1 && si.si_code == SI_USER && si.si_pid == getpid());

	clock_gettime(CLOCK_MONOTONIC, &t0);
	errno = 0;
	CHECK(sigtimedwait(&set, &si, &ts) == -1 && errno == EAGAIN);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	CHECK(ms >= 40);
	CHECK(sigtimedwait(&set, &si, &bad) == -1 && errno == EINVAL);

	/* A signal sent while waiting wakes it (from a child, 100 ms later). */
	pid = send_later(SIGUSR1, 100);
	CHECK(sigwaitinfo(&set, &si) == SIGUSR1 && si.si_pid == pid);
	reap(pid);
	CHECK(sigprocmask(SIG_UNBLOCK, &set, NULL) == 0);

	/*
	 * A signal ignored by default (SIGCHLD) that comes while it is waited
	 * for is taken, not dropped (the child ends 100 ms into the wait).
	 */
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	CHECK(sigprocmask(SIG_BLOCK, &set, NULL) == 0);
	pid = send_later(0, 100);
	ts.tv_sec = 3;
	memset(&si, 0, sizeof(si));
	CHECK(sigtimedwait(&set, &si, &ts) == SIGCHLD && si.si_pid == pid &&
	      si.si_code == CLD_EXITED);
	reap(pid);
	CHECK(sigprocmask(SIG_UNBLOCK, &set, NULL) == 0);
	ktap_report("rt_sigtimedwait", NULL);
}

int main(void)
{
	ktap_begin("signal", 13);
	case_kill_self();
	case_sigaction_errors();
	case_mask_and_pending();
	case_ignore();
	case_resethand_nodefer_samask();
	case_fault_siginfo();
	case_handler_returns();
	case_registers_kept();
	case_sigaltstack();
	case_interrupted_calls();
	case_sigpipe_and_default_kill();
	case_sigchld();
	case_sigtimedwait();
	return ktap_finish();
}
