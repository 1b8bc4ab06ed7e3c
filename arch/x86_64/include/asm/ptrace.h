/*
 * The registers saved on the stack when an exception or interrupt enters the
 * kernel. The layout is fixed by arch/x86_64/kernel/entry.S: general
 * registers pushed by the stub, then vector and error code, then the frame
 * the CPU pushed.
 */
#ifndef ASM_PTRACE_H
#define ASM_PTRACE_H

#include <quire/types.h>

struct pt_regs {
	u64 r15, r14, r13, r12, rbp, rbx, r11, r10, r9, r8;
	u64 rax, rcx, rdx, rsi, rdi;
	u64 vector;		/* pushed by the stub */
	u64 error_code;		/* by the CPU, or 0 pushed by the stub */
	u64 rip, cs, rflags, rsp, ss;	/* pushed by the CPU */
};

static inline bool user_mode(const struct pt_regs *regs)
{
	return (regs->cs & 3) != 0;
}

#endif
