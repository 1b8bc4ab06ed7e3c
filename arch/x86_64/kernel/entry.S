/*
 * Interrupt and exception entry. Each vector has a small stub that makes the
 * stack look the same for all (an error code, 0 when the CPU pushed none,
 * then the vector number), then jumps to a common path that saves the
 * general registers as a struct pt_regs and calls do_trap(regs).
 *
 * Stack alignment: the CPU aligns RSP to 16 bytes before pushing its 5-word
 * frame; with error code, vector and 15 registers (22 words = 176 bytes)
 * RSP is 16-byte aligned again at the call.
 */
#include <asm/entry_regs.h>
#include <quire/percpu.h>
	.text

	.macro isr_stub vector, errcode
	.align 16
isr_\vector:
	.if \errcode == 0
	pushq $0
	.endif
	pushq $\vector
	jmp common_interrupt
	.endm

	.altmacro
	/* The CPU pushes an error code for vectors 8, 10-14, 17, 21, 29, 30. */
	.macro make_stub v
	.if (\v == 8) || ((\v >= 10) && (\v <= 14)) || (\v == 17) || (\v == 21) || (\v == 29) || (\v == 30)
	isr_stub \v, 1
	.else
	isr_stub \v, 0
	.endif
	.endm

	.set i, 0
	.rept 256
	make_stub %i
	.set i, i + 1
	.endr

	.type common_interrupt, @function
common_interrupt:
	/* For debuggers, the outermost kernel frame: the caller is the interrupted code. */
	.cfi_sections .debug_frame
	.cfi_startproc
	.cfi_undefined rip
	cld
	/* From user mode: switch GS to this CPU's per-CPU area (CS is at 24(%rsp)). */
	testb $3, 24(%rsp)
	jz 1f
	swapgs
	/*
	 * A machine check from user mode leaves its IST stack for the task's
	 * kernel stack (empty: the task was in user mode), as Linux's
	 * noist_exc_machine_check: memory_failure() then runs on the way back
	 * to user mode and may sleep, and a later #MC on this CPU cannot
	 * overwrite a stack still in use. The 7 words (vector, error code,
	 * rip, cs, rflags, rsp, ss) move with it.
	 */
	cmpq $18, (%rsp)
	jne 1f
	pushq %rax
	pushq %rcx
	movq %gs:PERCPU_KERNEL_STACK, %rax
	subq $56, %rax
	.irp off, 0, 8, 16, 24, 32, 40, 48
	movq 16+\off(%rsp), %rcx
	movq %rcx, \off(%rax)
	.endr
	popq %rcx
	xchgq %rax, (%rsp)		/* rax back; the new stack on top */
	popq %rsp
1:	PUSH_REGS
	movq %rsp, %rdi
	call do_trap
3:	POP_REGS
	addq $16, %rsp			/* vector and error code */
	testb $3, 8(%rsp)		/* back to user mode: give GS back */
	jz 2f
	swapgs
2:	iretq
	.cfi_endproc
	.size common_interrupt, . - common_interrupt

/*
 * Where do_trap returns to, for the unwinder (stacktrace.c): the frame
 * whose return address this is sits right below the struct pt_regs.
 */
	.pushsection .rodata
	.align 8
	.globl trap_entry_return
trap_entry_return:
	.quad 3b
	.popsection

/* The table of stub addresses, read by idt_init(). */
	.macro stub_addr v
	.quad isr_\v
	.endm
	.section .rodata
	.align 8
	.globl isr_stub_table
isr_stub_table:
	.set i, 0
	.rept 256
	stub_addr %i
	.set i, i + 1
	.endr
