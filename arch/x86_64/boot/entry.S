/*
 * From the loader's 32-bit protected mode to the kernel's C entry in long
 * mode, on early page tables:
 *
 *   _start32 (multiboot2: eax = magic, ebx = info)   pvh_start32 (ebx = start_info)
 *            \___________________ common32 ______________________/
 *   zero .bss, check for long mode, build page tables, enable PAE, LME, NXE,
 *   paging; far jump to 64-bit code; jump to the higher half; call
 *   x86_64_start(magic, info).
 *
 * Early page tables: identity map 0-4 GiB and the higher half
 * 0xffffffff80000000 -> 0-2 GiB, all with 2 MiB pages, in separate page
 * directories. init_direct_map() (arch/x86_64/mm/init.c) replaces the
 * identity map with the direct map; from then on NULL pointers fault.
 */
#include <asm/boot.h>

#define PA(x) ((x) - KERNEL_VMA)
#define COM1 0x3f8

	.section .boot.text, "ax"
	.code32
	.globl _start32
	.type _start32, @function
_start32:
	cli
	cld
	movl %eax, %esi			/* magic (checked in C) */
	movl %ebx, %ebp			/* multiboot2 information, physical */
	jmp common32

	.globl pvh_start32
	.type pvh_start32, @function
pvh_start32:
	cli
	cld
	movl $PVH_BOOT_MAGIC, %esi
	movl %ebx, %ebp			/* hvm_start_info, physical */

common32:
	/* Zero .bss (it holds the page tables and the stack). */
	movl $PA(__bss_start), %edi
	movl $PA(__bss_end), %ecx
	subl %edi, %ecx
	shrl $2, %ecx
	xorl %eax, %eax
	rep stosl

	movl $PA(boot_stack_top), %esp

	/* Long mode present? CPUID 0x80000001 EDX bit 29. */
	movl $0x80000000, %eax
	cpuid
	cmpl $0x80000001, %eax
	jb no_long_mode
	movl $0x80000001, %eax
	cpuid
	btl $29, %edx
	jnc no_long_mode

	/* PML4[0] -> identity PDPT, PML4[511] -> higher-half PDPT. */
	movl $PA(early_pml4), %edi
	movl $PA(early_pdpt_low), %eax
	orl $0x3, %eax
	movl %eax, 0(%edi)
	movl $PA(early_pdpt_high), %eax
	orl $0x3, %eax
	movl %eax, 511*8(%edi)

	/* Identity PDPT[0..3] -> the four PDs (0-4 GiB). */
	movl $PA(early_pdpt_low), %edi
	movl $PA(early_pd), %eax
	orl $0x3, %eax
	movl $4, %ecx
1:	movl %eax, (%edi)
	addl $8, %edi
	addl $4096, %eax
	loop 1b

	/* Higher-half PDPT[510], [511] -> their own two PDs (0-2 GiB), so that
	 * changing the identity map (the NULL guard) leaves the kernel alone. */
	movl $PA(early_pdpt_high), %edi
	movl $PA(early_pd_high), %eax
	orl $0x3, %eax
	movl %eax, 510*8(%edi)
	addl $4096, %eax
	movl %eax, 511*8(%edi)

	/* PD entries of 2 MiB each (present, writable, large page):
	 * 2048 for the identity map (0-4 GiB), then 1024 for the higher half. */
	movl $PA(early_pd), %edi
	movl $2048, %ecx
	call fill_pd
	movl $PA(early_pd_high), %edi
	movl $1024, %ecx
	call fill_pd

	/* PAE, then CR3, then EFER.LME|NXE, then paging. */
	movl %cr4, %eax
	orl $(1 << 5), %eax
	movl %eax, %cr4
	movl $PA(early_pml4), %eax
	movl %eax, %cr3
	movl $0xc0000080, %ecx
	rdmsr
	orl $((1 << 8) | (1 << 11)), %eax
	wrmsr
	movl %cr0, %eax
	orl $((1 << 31) | (1 << 16) | 1), %eax	/* PG, WP, PE */
	movl %eax, %cr0

	lgdt early_gdt_ptr
	ljmp $0x08, $long_mode_entry

/* Fill ecx PD entries at edi mapping 0, 2 MiB, 4 MiB, ... */
fill_pd:
	movl $0x83, %eax
	xorl %edx, %edx			/* bits 32+ of the physical address */
2:	movl %eax, 0(%edi)
	movl %edx, 4(%edi)
	addl $0x200000, %eax
	adcl $0, %edx
	addl $8, %edi
	loop 2b
	ret

no_long_mode:
	movl $no_lm_msg, %ebx
3:	movb (%ebx), %al
	testb %al, %al
	jz 4f
	movw $COM1, %dx
	outb %al, %dx
	incl %ebx
	jmp 3b
4:	hlt
	jmp 4b

	.code64
long_mode_entry:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
	movabsq $higher_half_entry, %rax
	jmpq *%rax

	.section .boot.rodata, "a"
no_lm_msg:
	.asciz "Quire: this CPU has no long mode (x86-64); cannot boot.\r\n"
	.align 16
early_gdt:
	.quad 0
	.quad 0x00af9b000000ffff	/* 0x08: 64-bit code, accessed */
	.quad 0x00cf93000000ffff	/* 0x10: data, accessed */
early_gdt_end:
	.align 8
early_gdt_ptr:
	.word early_gdt_end - early_gdt - 1
	.long early_gdt

	.text
	.globl higher_half_entry
	.type higher_half_entry, @function
higher_half_entry:
	/* Tell debuggers this is the outermost frame (no caller to unwind to). */
	.cfi_sections .debug_frame
	.cfi_startproc
	.cfi_undefined rip
	leaq boot_stack_top(%rip), %rsp
	movl %esi, %edi			/* magic */
	movl %ebp, %esi			/* boot information, physical */
	xorl %ebp, %ebp			/* a zero frame pointer ends backtraces */
	call x86_64_start
5:	cli
	hlt
	jmp 5b
	.cfi_endproc

	.bss
	.align 4096
	.globl early_pml4
early_pml4:	.skip 4096
early_pdpt_low:	.skip 4096
early_pdpt_high: .skip 4096
early_pd:	.skip 4 * 4096
early_pd_high:	.skip 2 * 4096
	.align 16
	.globl boot_stack, boot_stack_top
boot_stack:	.skip BOOT_STACK_SIZE
boot_stack_top:
