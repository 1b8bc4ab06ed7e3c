/*
 * Context switch between kernel tasks. Only the callee-saved registers need
 * saving: switch_to is an ordinary function call for the C code around it.
 *
 *	struct task *switch_to(struct task *prev, struct task *next)
 *
 * saves prev's registers on its stack and its stack pointer in prev->rsp
 * (offset 0), loads next's, and returns, in next's context, the task that
 * ran before (prev of that switch) so the scheduler can finish with it.
 */
	.cfi_sections .debug_frame
	.text
	.globl switch_to
	.type switch_to, @function
switch_to:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, 0(%rdi)
	movq 0(%rsi), %rsp
	movq %rdi, %rax
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size switch_to, . - switch_to

/*
 * First "return" of a new task: switch_to pops six zeroes and returns here
 * with the previous task in rax.
 */
	.globl kthread_trampoline
	.type kthread_trampoline, @function
kthread_trampoline:
	.cfi_startproc
	.cfi_undefined rip
	xorl %ebp, %ebp
	movq %rax, %rdi
	call kthread_start		/* never returns */
	ud2
	.cfi_endproc
	.size kthread_trampoline, . - kthread_trampoline
