/*
 * Entering and leaving user mode.
 *
 * syscall_entry: the SYSCALL instruction lands here (MSR_LSTAR) with the
 * user's rip in rcx and rflags in r11, interrupts off (MSR_SYSCALL_MASK),
 * still on the user stack. Switch GS to the per-CPU area, switch to the
 * task's kernel stack, and save a struct pt_regs shaped like an interrupt
 * frame (so signals, fork and the exception path all see one layout; the
 * syscall number sits in the vector slot). Return with iretq: slower than
 * sysret, but free of its pitfalls (non-canonical rcx, a restored rflags).
 *
 * enter_user_mode(rip, rsp): the first entry of a new program.
 */
#include <asm/entry_regs.h>
#include <asm/segment.h>
#include <quire/percpu.h>

	.text
	.globl syscall_entry
	.type syscall_entry, @function
syscall_entry:
	/* For debuggers, the outermost kernel frame (the caller is user space). */
	.cfi_sections .debug_frame
	.cfi_startproc
	.cfi_undefined rip
	swapgs
	movq %rsp, %gs:PERCPU_USER_RSP
	movq %gs:PERCPU_KERNEL_STACK, %rsp
	pushq $(GDT_USER_DS | 3)		/* ss */
	pushq %gs:PERCPU_USER_RSP		/* rsp */
	pushq %r11				/* rflags */
	pushq $(GDT_USER_CS | 3)		/* cs */
	pushq %rcx				/* rip */
	pushq $0				/* error code */
	pushq %rax				/* "vector": the syscall number */
	PUSH_REGS
	xorl %ebp, %ebp				/* backtraces stop here */
	sti
	movq %rsp, %rdi
	call do_syscall
1:	cli
	.globl ret_to_user
ret_to_user:
	POP_REGS
	addq $16, %rsp
	swapgs
	iretq
	.cfi_endproc
	.size syscall_entry, . - syscall_entry

/* Where do_syscall returns to, for the unwinder, as trap_entry_return. */
	.pushsection .rodata
	.align 8
	.globl syscall_entry_return
syscall_entry_return:
	.quad 1b
	.popsection

/*
 * A forked child's first run: switch_to "returns" here with the previous
 * task in rax and the stack pointing at the child's copy of its parent's
 * pt_regs (rax = 0 in it): finish the switch, then return to user mode.
 */
	.globl ret_from_fork
	.type ret_from_fork, @function
ret_from_fork:
	movq %rax, %rdi
	call schedule_tail
	cli
	jmp ret_to_user
	.size ret_from_fork, . - ret_from_fork

/*
 * enter_user_mode(rip, rsp): start a program at rip with stack rsp, all
 * other registers zero, interrupts on. Never returns.
 */
	.globl enter_user_mode
	.type enter_user_mode, @function
enter_user_mode:
	cli
	pushq $(GDT_USER_DS | 3)		/* ss */
	pushq %rsi				/* rsp */
	pushq $0x202				/* rflags: IF */
	pushq $(GDT_USER_CS | 3)		/* cs */
	pushq %rdi				/* rip */
	xorl %eax, %eax
	xorl %ebx, %ebx
	xorl %ecx, %ecx
	xorl %edx, %edx
	xorl %esi, %esi
	xorl %edi, %edi
	xorl %ebp, %ebp
	xorl %r8d, %r8d
	xorl %r9d, %r9d
	xorl %r10d, %r10d
	xorl %r11d, %r11d
	xorl %r12d, %r12d
	xorl %r13d, %r13d
	xorl %r14d, %r14d
	xorl %r15d, %r15d
	swapgs
	iretq
	.size enter_user_mode, . - enter_user_mode
