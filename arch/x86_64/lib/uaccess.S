/*
 * copy_user_generic(dst, src, len): rep movsb, returning the bytes not
 * copied. When the copy faults (a bad user pointer), the exception table
 * sends the page-fault handler to the fixup, which returns what rcx still
 * counts. With SMAP, the copy is the only place the kernel opens user
 * memory (stac ... clac).
 */
#include <quire/extable.h>

	.text
	.globl copy_user_generic
	.type copy_user_generic, @function
copy_user_generic:
	movq %rdx, %rcx
	cmpb $0, smap_enabled(%rip)
	jz 1f
	stac				/* SMAP: user memory open for this copy only */
1:	rep movsb
	xorl %eax, %eax
	jmp 3f
2:	movq %rcx, %rax
3:	cmpb $0, smap_enabled(%rip)
	jz 4f
	clac
4:	ret
	.size copy_user_generic, . - copy_user_generic

	EX_ENTRY 1b, 2b, EX_TYPE_UACCESS
