/*
 * copy_user_generic(dst, src, len): rep movsb, returning the bytes not
 * copied. When the copy faults (a bad user pointer), the exception table
 * sends the page-fault handler to the fixup, which returns what rcx still
 * counts; so does the machine-check handler when the copy reads a
 * poisoned user page (copy_from_user: arch/x86_64/kernel/mce.c). With SMAP, the copy is the only place the kernel opens user
 * memory (stac ... clac).
 */
#include <quire/extable.h>

	.text
	.globl copy_user_generic
	.type copy_user_generic, @function
copy_user_generic:
	cmpb $0, smap_enabled(%rip)
	jz 1f
	stac				/* SMAP: user memory open for this copy only */
	.globl copy_user_generic_before_copy	/* a test that aims a machine */
copy_user_generic_before_copy:		/* check at the copy breaks here */
1:	movq %rdx, %rcx
5:	rep movsb
	xorl %eax, %eax
	jmp 3f
2:	movq %rcx, %rax
3:	cmpb $0, smap_enabled(%rip)
	jz 4f
	clac
4:	ret
	.size copy_user_generic, . - copy_user_generic

	EX_ENTRY 5b, 2b, EX_TYPE_UACCESS

/*
 * __cmpxchg_user_u32(uaddr, old, new, found): lock cmpxchg on a 32-bit
 * user word (aligned by the caller, below USER_TOP). *found gets the value
 * the word held (== old: new is stored now). 0, or -EFAULT when the word
 * cannot be written: a page fault is resolved by the fault handler on the
 * way (the instruction is in the exception table), so a missing or
 * copy-on-write page is faulted in for writing first and the cmpxchg runs
 * again.
 */
	.globl __cmpxchg_user_u32
	.type __cmpxchg_user_u32, @function
__cmpxchg_user_u32:
	movl %esi, %eax
	cmpb $0, smap_enabled(%rip)
	jz 1f
	stac
1:	lock cmpxchgl %edx, (%rdi)
	movl %eax, (%rcx)
	xorl %eax, %eax
	jmp 3f
2:	movl $-14, %eax			/* -EFAULT */
3:	cmpb $0, smap_enabled(%rip)
	jz 4f
	clac
4:	ret
	.size __cmpxchg_user_u32, . - __cmpxchg_user_u32

	EX_ENTRY 1b, 2b, EX_TYPE_UACCESS
