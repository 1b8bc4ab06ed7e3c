/*
 * Saving and restoring the general registers as struct pt_regs lays them
 * out (asm/ptrace.h), shared by the interrupt entry (entry.S) and the
 * system-call entry (syscall.S). Assembly only.
 */
#ifndef ASM_ENTRY_REGS_H
#define ASM_ENTRY_REGS_H

	.macro PUSH_REGS
	pushq %rdi
	pushq %rsi
	pushq %rdx
	pushq %rcx
	pushq %rax
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %rbx
	pushq %rbp
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	.endm

	.macro POP_REGS
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbp
	popq %rbx
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rax
	popq %rcx
	popq %rdx
	popq %rsi
	popq %rdi
	.endm

#endif
