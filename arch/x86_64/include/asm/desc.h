/* Segment descriptors, the TSS and the IDT. */
#ifndef ASM_DESC_H
#define ASM_DESC_H

#include <quire/types.h>

/* GDT layout, ordered for SYSCALL/SYSRET (user SS = base + 8, CS = base + 16). */
#define GDT_KERNEL_CS	0x08
#define GDT_KERNEL_DS	0x10
#define GDT_USER32_CS	0x18
#define GDT_USER_DS	0x20
#define GDT_USER_CS	0x28
#define GDT_TSS		0x30	/* 16 bytes */

/* Interrupt stack table slots (1-based, as in the IDT gate). */
#define IST_DOUBLE_FAULT	1
#define IST_NMI			2
#define IST_MACHINE_CHECK	3
#define IST_COUNT		3
#define IST_STACK_SIZE		16384

struct tss {
	u32 reserved0;
	u64 rsp[3];
	u64 reserved1;
	u64 ist[7];
	u64 reserved2;
	u16 reserved3;
	u16 iomap_base;
} __attribute__((packed));

void gdt_init(void);
void idt_init(void);
/* The bounds of an IST stack, for tests and for the stack-trace walker. */
void ist_stack_bounds(int ist, u64 *lo, u64 *hi);

#endif
