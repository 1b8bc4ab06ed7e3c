/*
 * Linux's x86-64 signal ABI: numbers, siginfo_t, the kernel's struct
 * sigaction, stack_t and the rt_sigframe a handler is entered with.
 */
#ifndef QUIRE_UAPI_SIGNAL_H
#define QUIRE_UAPI_SIGNAL_H

#include <quire/types.h>
#include <quire/sigaltstack.h>

#define SIGHUP		1
#define SIGINT		2
#define SIGQUIT		3
#define SIGILL		4
#define SIGTRAP		5
#define SIGABRT		6
#define SIGBUS		7
#define SIGFPE		8
#define SIGKILL		9
#define SIGUSR1		10
#define SIGSEGV		11
#define SIGUSR2		12
#define SIGPIPE		13
#define SIGALRM		14
#define SIGTERM		15
#define SIGSTKFLT	16
#define SIGCHLD		17
#define SIGCONT		18
#define SIGSTOP		19
#define SIGTSTP		20
#define SIGTTIN		21
#define SIGTTOU		22
#define SIGURG		23
#define SIGXCPU		24
#define SIGXFSZ		25
#define SIGVTALRM	26
#define SIGPROF		27
#define SIGWINCH	28
#define SIGIO		29
#define SIGPWR		30
#define SIGSYS		31
#define SIGRTMIN	32
#define _NSIG		64

#define sigmask(sig)	(1ULL << ((sig) - 1))

#define SIG_DFL		0UL
#define SIG_IGN		1UL

#define SA_NOCLDSTOP	0x00000001
#define SA_NOCLDWAIT	0x00000002
#define SA_SIGINFO	0x00000004
#define SA_RESTORER	0x04000000
#define SA_ONSTACK	0x08000000
#define SA_RESTART	0x10000000
#define SA_NODEFER	0x40000000
#define SA_RESETHAND	0x80000000
#define SA_EXPOSE_TAGBITS 0x00000800	/* arm64's; kept, meaning nothing here, as on Linux */
/* The flags rt_sigaction keeps: others are dropped, so that a program can tell them unknown. */
#define SA_UAPI_FLAGS	(SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART | \
			 SA_NODEFER | SA_RESETHAND | SA_EXPOSE_TAGBITS | SA_RESTORER)

#define SS_ONSTACK	1
#define SS_DISABLE	2
#define SS_AUTODISARM	(1U << 31)
#define MINSIGSTKSZ	2048

/* si_code values. */
#define SI_USER		0
#define SI_KERNEL	0x80
#define SI_TKILL	(-6)
#define SEGV_MAPERR	1
#define SEGV_ACCERR	2
#define BUS_ADRALN	1
#define BUS_ADRERR	2
#define BUS_MCEERR_AR	4
#define BUS_MCEERR_AO	5
#define ILL_ILLOPN	2
#define FPE_INTDIV	1
#define TRAP_BRKPT	1
#define CLD_EXITED	1
#define CLD_KILLED	2
#define CLD_STOPPED	5
#define CLD_CONTINUED	6

/* 128 bytes, as on Linux x86-64; the union starts at offset 16. */
typedef struct siginfo {
	int si_signo;
	int si_errno;
	int si_code;
	int __pad0;
	union {
		struct { int pid; unsigned int uid; } kill;
		struct { u64 addr; short addr_lsb; } fault;
		struct { int pid; unsigned int uid; int status; } chld;
		int __pad[28];
	} f;
} siginfo_t;

/* rt_sigaction's struct (the kernel's, not libc's). */
struct k_sigaction {
	u64 handler;
	u64 flags;
	u64 restorer;
	u64 mask;
};

typedef struct k_sigaltstack stack_t;

struct sigcontext {
	u64 r8, r9, r10, r11, r12, r13, r14, r15;
	u64 rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip;
	u64 eflags;
	u16 cs, gs, fs, ss;
	u64 err, trapno, oldmask, cr2;
	u64 fpstate;		/* user address of the 512-byte fxsave image */
	u64 reserved1[8];
};

struct ucontext {
	u64 uc_flags;
	u64 uc_link;
	stack_t uc_stack;
	struct sigcontext uc_mcontext;
	u64 uc_sigmask;
};

#define UC_SIGCONTEXT_SS	0x2
#define UC_STRICT_RESTORE_SS	0x4

/* What the handler's stack holds: its return address (the restorer) first. */
struct rt_sigframe {
	u64 pretcode;
	struct ucontext uc;
	siginfo_t info;
};

#endif
