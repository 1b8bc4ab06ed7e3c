/* setjmp/longjmp: save and restore the callee-saved registers, rsp and rip. */
	.text
	.globl setjmp
	.type setjmp, @function
setjmp:
	movq %rbx, 0(%rdi)
	movq %rbp, 8(%rdi)
	movq %r12, 16(%rdi)
	movq %r13, 24(%rdi)
	movq %r14, 32(%rdi)
	movq %r15, 40(%rdi)
	leaq 8(%rsp), %rdx		/* rsp as it will be after our return */
	movq %rdx, 48(%rdi)
	movq (%rsp), %rdx		/* return address */
	movq %rdx, 56(%rdi)
	xorl %eax, %eax
	ret
	.size setjmp, . - setjmp

/*
 * longjmp_irq_on: longjmp that also turns interrupts on, for leaving an
 * exception handler (entered with interrupts off) back into code that ran
 * with them on. sti acts after the next instruction, so the first interrupt
 * arrives once the stack is back.
 */
	.globl longjmp_irq_on
	.type longjmp_irq_on, @function
longjmp_irq_on:
	movb $1, %cl
	jmp 0f
	.size longjmp_irq_on, . - longjmp_irq_on

	.globl longjmp
	.type longjmp, @function
longjmp:
	xorb %cl, %cl
0:
	movl %esi, %eax
	testl %eax, %eax
	jnz 1f
	incl %eax			/* longjmp(env, 0) returns 1 */
1:	movq 0(%rdi), %rbx
	movq 8(%rdi), %rbp
	movq 16(%rdi), %r12
	movq 24(%rdi), %r13
	movq 32(%rdi), %r14
	movq 40(%rdi), %r15
	movq 48(%rdi), %rsp
	testb %cl, %cl
	jz 2f
	sti
2:	jmpq *56(%rdi)
	.size longjmp, . - longjmp
