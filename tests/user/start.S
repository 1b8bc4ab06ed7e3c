/* Entry of the freestanding test programs: main(argc, argv, envp), then exit. */
	.text
	.globl _start
_start:
	xorl %ebp, %ebp
	movq (%rsp), %rdi		/* argc */
	leaq 8(%rsp), %rsi		/* argv */
	leaq 16(%rsp,%rdi,8), %rdx	/* envp */
	andq $-16, %rsp
	call main
	movl %eax, %edi
	movl $60, %eax			/* exit */
	syscall
	ud2
