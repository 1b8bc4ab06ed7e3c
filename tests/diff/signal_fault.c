/*
 * Faults and their signals: for each kind of bad access or instruction,
 * the signal, its siginfo (si_signo, si_code, si_errno, whether si_addr is
 * the address it must be) and what the handler's ucontext says (trapno,
 * err, and whether cr2 and rip are right); then how a fault ends a
 * process that does not handle it (default, ignored, blocked, nested).
 */
#include "diff.h"
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE 4096UL

static sigjmp_buf jump;
static volatile int got_sig, jump_back = 1;
static siginfo_t got;
static long got_trapno, got_err, got_cr2, got_rip;
static volatile uintptr_t expect_ip;	/* where a faulting instruction is */
static volatile int *volatile bad_pointer = (volatile int *)16;

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	got_sig = sig;
	got = *si;
	got_trapno = uc->uc_mcontext.gregs[REG_TRAPNO];
	got_err = uc->uc_mcontext.gregs[REG_ERR];
	got_cr2 = uc->uc_mcontext.gregs[REG_CR2];
	got_rip = uc->uc_mcontext.gregs[REG_RIP];
	if (jump_back)
		siglongjmp(jump, 1);
}

static const char *code_name(int sig, int code)
{
	static char other[16];

	if (code == SI_KERNEL)
		return "SI_KERNEL";
	if (code == SI_USER)
		return "SI_USER";
	if (sig == SIGSEGV && code == SEGV_MAPERR)
		return "SEGV_MAPERR";
	if (sig == SIGSEGV && code == SEGV_ACCERR)
		return "SEGV_ACCERR";
	if (sig == SIGBUS && code == BUS_ADRERR)
		return "BUS_ADRERR";
	if (sig == SIGFPE && code == FPE_INTDIV)
		return "FPE_INTDIV";
	if (sig == SIGILL && code == ILL_ILLOPN)
		return "ILL_ILLOPN";
	if (sig == SIGTRAP && code == TRAP_BRKPT)
		return "TRAP_BRKPT";
	snprintf(other, sizeof(other), "%d", code);
	return other;
}

enum kind {
	PF,		/* a page fault at addr: si_addr and cr2 are addr */
	INSN,		/* si_addr is the instruction at expect_ip, and so is rip */
	GP,		/* a general protection fault: no address, rip at expect_ip */
};

/* Runs fn(arg); returns 1 when it faulted (the handler jumped back). */
static int faults(void (*fn)(void *), void *arg)
{
	got_sig = 0;
	memset(&got, 0, sizeof(got));
	if (sigsetjmp(jump, 1))
		return 1;
	fn(arg);
	return 0;
}

/* Runs fn(arg), which should fault; prints what the handler saw. */
static void fault(const char *what, void (*fn)(void *), void *arg, void *addr, enum kind kind)
{
	if (!faults(fn, arg)) {
		say("%s: no signal", what);
		return;
	}
	say("%s: signal %d si_signo %d si_code %s si_errno %d", what, got_sig, got.si_signo,
	    code_name(got.si_signo, got.si_code), got.si_errno);
	if (kind == INSN)
		addr = (void *)expect_ip;
	else if (kind == GP)
		addr = NULL;
	say("%s: si_addr %s", what, got.si_addr == addr ? "ok" : "wrong");
	say("%s: trapno %ld err %#lx", what, got_trapno, got_err);
	if (kind == PF)
		say("%s: cr2 %s", what, got_cr2 == (long)(uintptr_t)addr ? "ok" : "wrong");
	else
		say("%s: rip %s", what, got_rip == (long)expect_ip ? "ok" : "wrong");
}

static void do_read(void *p)
{
	(void)*(volatile char *)p;
}

static void do_write(void *p)
{
	*(volatile char *)p = 1;
}

/* A read whose instruction's address is known (expect_ip). */
static void do_read_insn(void *p)
{
	__asm__ volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %0\n1:\tmovb (%1), %%al"
			 : "=m"(expect_ip) : "r"(p) : "rax", "memory");
}

static void do_call(void *p)
{
	((void (*)(void))p)();
}

static void do_ud2(void *p)
{
	__asm__ volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %0\n1:\tud2"
			 : "=m"(expect_ip) : : "rax", "memory");
}

static void do_divide_by_zero(void *p)
{
	__asm__ volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %0\n\t"
			 "xorl %%ecx, %%ecx\n\tmovl $1, %%eax\n\tcltd\n1:\tidivl %%ecx"
			 : "=m"(expect_ip) : : "rax", "rcx", "rdx", "memory");
}

static void do_divide_overflow(void *p)
{
	__asm__ volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %0\n\t"
			 "movl $-1, %%ecx\n\tmovl $0x80000000, %%eax\n\tcltd\n1:\tidivl %%ecx"
			 : "=m"(expect_ip) : : "rax", "rcx", "rdx", "memory");
}

static void do_cli(void *p)
{
	__asm__ volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %0\n1:\tcli"
			 : "=m"(expect_ip) : : "rax", "memory");
}

static void do_hlt(void *p)
{
	__asm__ volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %0\n1:\thlt"
			 : "=m"(expect_ip) : : "rax", "memory");
}

/* int3 traps after the instruction: the handler returns and the code goes on. */
static void breakpoint(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGTRAP, &sa, NULL);
	jump_back = 0;
	got_sig = 0;
	__asm__ volatile("lea 1f(%%rip), %%rax\n\tmov %%rax, %0\n\tint3\n1:"
			 : "=m"(expect_ip) : : "rax", "memory");
	jump_back = 1;
	say("int3: signal %d si_signo %d si_code %s si_errno %d", got_sig, got.si_signo,
	    code_name(got.si_signo, got.si_code), got.si_errno);
	say("int3: si_addr is NULL: %s", got.si_addr == NULL ? "yes" : "no");
	say("int3: trapno %ld err %#lx", got_trapno, got_err);
	say("int3: rip after the instruction: %s", got_rip == (long)expect_ip ? "yes" : "no");
}

/* How a child doing fn(arg) ends, after setup (0: a handler, 1: default, 2: ignored, 3: blocked). */
static void child_fault(const char *what, int setup)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		struct sigaction sa;
		sigset_t set;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = setup == 2 ? SIG_IGN : SIG_DFL;
		sigaction(SIGSEGV, &sa, NULL);
		if (setup == 3) {
			sigemptyset(&set);
			sigaddset(&set, SIGSEGV);
			sigprocmask(SIG_BLOCK, &set, NULL);
		}
		*bad_pointer = 1;
		_exit(42);
	}
	if (waitpid(pid, &st, 0) != pid) {
		say("%s: waitpid: %s", what, errname(errno));
		return;
	}
	say("%s: exited %s status %d signaled %s signal %d core %s", what,
	    WIFEXITED(st) ? "yes" : "no", WIFEXITED(st) ? WEXITSTATUS(st) : 0,
	    WIFSIGNALED(st) ? "yes" : "no", WIFSIGNALED(st) ? WTERMSIG(st) : 0,
	    WCOREDUMP(st) ? "yes" : "no");
}

/* A fault inside the SIGSEGV handler (no SA_NODEFER: SIGSEGV is blocked there). */
static void on_fault_again(int sig)
{
	bad_pointer[4] = 1;
	_exit(43);
}

static void nested_fault(void)
{
	pid_t pid = fork();
	int st = 0;

	if (pid == 0) {
		signal(SIGSEGV, on_fault_again);
		*bad_pointer = 1;
		_exit(42);
	}
	waitpid(pid, &st, 0);
	say("fault in the SIGSEGV handler: signaled %s signal %d",
	    WIFSIGNALED(st) ? "yes" : "no", WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void file_past_end(void)
{
	char path[] = "/tmp/diff-sigbus-XXXXXX", buf[2 * PAGE];
	int fd = mkstemp(path);
	char *p;

	memset(buf, 'f', sizeof(buf));
	show("sigbus file write 2 pages", write(fd, buf, sizeof(buf)));
	p = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	yesno("sigbus file mapped", p != MAP_FAILED);
	show("sigbus file truncate to 1 page", ftruncate(fd, PAGE));
	say("sigbus file first page still reads: %c", p[10]);
	fault("read of a truncated page", do_read, p + PAGE + 8, p + PAGE + 8, PF);
	fault("write of a truncated page", do_write, p + PAGE + 9, p + PAGE + 9, PF);
	fault("read past the file's end", do_read, p + 2 * PAGE, p + 2 * PAGE, PF);
	munmap(p, 3 * PAGE);
	p = mmap(NULL, 2 * PAGE, PROT_READ, MAP_PRIVATE, fd, 0);
	fault("private mapping past the end", do_read, p + PAGE + 100, p + PAGE + 100, PF);
	munmap(p, 2 * PAGE);
	close(fd);
	unlink(path);
}

int main(void)
{
	struct sigaction sa;
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	char *p;

	diff_begin("signal_fault");
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	for (unsigned i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);

	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p[0] = 1;
	munmap(p + PAGE, PAGE);
	fault("read of an unmapped page", do_read, p + PAGE + 12, p + PAGE + 12, PF);
	fault("write of an unmapped page", do_write, p + PAGE + 13, p + PAGE + 13, PF);
	fault("read of NULL", do_read, NULL, NULL, PF);
	mprotect(p, PAGE, PROT_READ);
	fault("write of a read-only page", do_write, p + 100, p + 100, PF);
	mprotect(p, PAGE, PROT_NONE);
	fault("read of a PROT_NONE page", do_read, p + 200, p + 200, PF);
	mprotect(p, PAGE, PROT_READ | PROT_WRITE);
	p[0] = (char)0xc3;			/* ret */
	fault("call into a non-executable page", do_call, p, p, PF);
	mprotect(p, PAGE, PROT_READ | PROT_EXEC);
	fault("call into an executable page", do_call, p, NULL, PF);
	fault("write to the program's code", do_write, (void *)do_read, (void *)do_read, PF);
	fault("read of a kernel address", do_read, (void *)0xffffffff80000000UL,
	      (void *)0xffffffff80000000UL, PF);
	fault("read of a non-canonical address", do_read_insn, (void *)0x8000000000000000UL, NULL, GP);
	munmap(p, PAGE);

	file_past_end();

	fault("ud2", do_ud2, NULL, NULL, INSN);
	fault("divide by zero", do_divide_by_zero, NULL, NULL, INSN);
	fault("divide overflow", do_divide_overflow, NULL, NULL, INSN);
	fault("cli in user mode", do_cli, NULL, NULL, GP);
	fault("hlt in user mode", do_hlt, NULL, NULL, GP);
	breakpoint();

	child_fault("unhandled fault", PF);
	child_fault("fault with SIGSEGV ignored", 2);
	child_fault("fault with SIGSEGV blocked", 3);
	nested_fault();
	return 0;
}
