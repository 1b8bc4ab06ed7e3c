/*
 * Machine-check-safe copies: each returns the number of bytes NOT copied
 * (0: all of it). Every string instruction that reads the source has an
 * exception-table entry of the machine-check-safe kind, so a machine check
 * on a poisoned source (or, in copy_mc_to_user, a fault on the user
 * destination) resumes at a fixup that returns what rcx still counts. See
 * include/quire/copy_mc.h and docs/mm/copy_mc.md.
 *
 * __copy_mc_movsq(dst, src, len): rep movsq for the 8-byte body, rep movsb
 *	for the tail: 8 bytes an iteration on every CPU (and under TCG, where
 *	each iteration is emulated, about 6x faster than movsb).
 * __copy_mc_movsb(dst, src, len): rep movsb only (fast with ERMS/FSRM; kept
 *	for the benchmark).
 * __copy_mc_to_user(udst, src, len): movsq + movsb with SMAP opened.
 */
#include <quire/extable.h>

	.text
	.globl __copy_mc_movsq
	.type __copy_mc_movsq, @function
__copy_mc_movsq:
	movq %rdx, %rcx
	shrq $3, %rcx			/* 8-byte words */
	.globl __copy_mc_movsq_before_body	/* tests that aim a machine */
__copy_mc_movsq_before_body:		/* check at the copy break here */
	andl $7, %edx			/* then the tail */
1:	rep movsq
	movl %edx, %ecx
2:	rep movsb
	xorl %eax, %eax
	ret
3:	leaq (%rdx,%rcx,8), %rax	/* stopped in the body: words left + tail */
	ret
4:	movq %rcx, %rax			/* stopped in the tail */
	ret
	.globl __copy_mc_movsq_end	/* for tests that aim a machine check at the copy */
__copy_mc_movsq_end:
	.size __copy_mc_movsq, . - __copy_mc_movsq
	EX_ENTRY 1b, 3b, EX_TYPE_MCE_SAFE
	EX_ENTRY 2b, 4b, EX_TYPE_MCE_SAFE

	.globl __copy_mc_movsb
	.type __copy_mc_movsb, @function
__copy_mc_movsb:
	movq %rdx, %rcx
1:	rep movsb
	xorl %eax, %eax
	ret
2:	movq %rcx, %rax
	ret
	.size __copy_mc_movsb, . - __copy_mc_movsb
	EX_ENTRY 1b, 2b, EX_TYPE_MCE_SAFE

	.globl __copy_mc_to_user
	.type __copy_mc_to_user, @function
__copy_mc_to_user:
	cmpb $0, smap_enabled(%rip)
	jz 1f
	stac				/* SMAP: user memory open for this copy only */
1:	movq %rdx, %rcx
	shrq $3, %rcx
	andl $7, %edx
2:	rep movsq
	movl %edx, %ecx
3:	rep movsb
	xorl %eax, %eax
	jmp 6f
4:	leaq (%rdx,%rcx,8), %rax
	jmp 6f
5:	movq %rcx, %rax
6:	cmpb $0, smap_enabled(%rip)
	jz 7f
	clac
7:	ret
	.size __copy_mc_to_user, . - __copy_mc_to_user
	EX_ENTRY 2b, 4b, EX_TYPE_UACCESS_MCE_SAFE
	EX_ENTRY 3b, 5b, EX_TYPE_UACCESS_MCE_SAFE
