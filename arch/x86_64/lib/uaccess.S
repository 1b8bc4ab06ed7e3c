/*
 * copy_user_generic(dst, src, len): rep movsb, returning the bytes not
 * copied. When the copy faults (a bad user pointer), the exception table
 * sends the page-fault handler to the fixup, which returns what rcx still
 * counts.
 */
	.text
	.globl copy_user_generic
	.type copy_user_generic, @function
copy_user_generic:
	movq %rdx, %rcx
1:	rep movsb
	xorl %eax, %eax
	ret
2:	movq %rcx, %rax
	ret
	.size copy_user_generic, . - copy_user_generic

	.section __ex_table, "a"
	.balign 8
	.quad 1b, 2b
