/*
 * The application processors' first code. smpboot.c copies this blob to
 * TRAMPOLINE_BASE (below 1 MiB, page aligned) and sends INIT-SIPI-SIPI; the
 * AP starts here in 16-bit real mode at CS:IP = 0x0800:0000. It goes to
 * protected mode, then long mode on the trampoline page tables (which map
 * the blob one to one and the kernel half like the kernel's own), loads the
 * stack smpboot.c left in the data area and jumps to ap_entry(percpu).
 *
 * TRAMP(x) is x's address once copied: the blob runs at TRAMPOLINE_BASE.
 */
#define TRAMPOLINE_BASE 0x8000
#define TRAMP(x) ((x) - trampoline_start + TRAMPOLINE_BASE)

	.section .rodata.trampoline, "a"
	.code16
	.globl trampoline_start, trampoline_end
	.globl tramp_cr3, tramp_stack, tramp_percpu, tramp_entry, tramp_alive
trampoline_start:
	cli
	cld
	xorw %ax, %ax
	movw %ax, %ds
	movl $1, TRAMP(tramp_alive)		/* tell the BSP we got here */
	lgdtl TRAMP(tramp_gdt_ptr)
	movl %cr0, %eax
	orl $1, %eax				/* PE */
	movl %eax, %cr0
	ljmpl $0x08, $TRAMP(tramp32)

	.code32
tramp32:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movl %cr4, %eax
	orl $(1 << 5), %eax			/* PAE */
	movl %eax, %cr4
	movl TRAMP(tramp_cr3), %eax
	movl %eax, %cr3
	movl $0xc0000080, %ecx			/* EFER: LME, NXE */
	rdmsr
	orl $((1 << 8) | (1 << 11)), %eax
	wrmsr
	movl %cr0, %eax
	orl $((1 << 31) | (1 << 16)), %eax	/* PG, WP */
	movl %eax, %cr0
	ljmpl $0x18, $TRAMP(tramp64)

	.code64
tramp64:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movq TRAMP(tramp_stack), %rsp
	movq TRAMP(tramp_percpu), %rdi
	xorl %ebp, %ebp
	movq TRAMP(tramp_entry), %rax
	jmpq *%rax

	.align 16
tramp_gdt:
	.quad 0
	.quad 0x00cf9b000000ffff		/* 0x08: 32-bit code */
	.quad 0x00cf93000000ffff		/* 0x10: data */
	.quad 0x00af9b000000ffff		/* 0x18: 64-bit code */
tramp_gdt_ptr:
	.word tramp_gdt_ptr - tramp_gdt - 1
	.long TRAMP(tramp_gdt)

	/* Filled in by smpboot.c for each AP. */
	.align 8
tramp_cr3:	.quad 0
tramp_stack:	.quad 0
tramp_percpu:	.quad 0
tramp_entry:	.quad 0
tramp_alive:	.quad 0
trampoline_end:
