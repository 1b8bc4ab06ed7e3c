/* Segment descriptors, the TSS and the IDT. */
#ifndef ASM_DESC_H
#define ASM_DESC_H

#include <quire/types.h>

#include <asm/segment.h>

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

/* One CPU's descriptor tables and exception stacks. */
struct cpu_arch {
	u64 gdt[8] __attribute__((aligned(16)));
	struct tss tss __attribute__((aligned(16)));
	u8 ist_stacks[IST_COUNT][IST_STACK_SIZE] __attribute__((aligned(16)));
};

extern struct cpu_arch boot_cpu_arch;

/* Load a CPU's GDT and TSS (and reload the segment registers). */
void gdt_init(struct cpu_arch *a);
/* Fill the IDT (once) and load it; idt_load() loads it on another CPU. */
void idt_init(void);
void idt_load(void);
/* The bounds of this CPU's IST stack, for tests and the stack-trace walker. */
void ist_stack_bounds(int ist, u64 *lo, u64 *hi);

#endif
