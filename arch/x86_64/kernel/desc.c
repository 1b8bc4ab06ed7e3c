/*
 * The GDT (with the TSS), and the IDT. Every one of the 256 vectors gets a
 * stub (entry.S) that ends in do_trap(). Double fault, NMI and machine check
 * run on their own IST stacks, so that they work even when the kernel stack
 * is broken (a double fault is usually a stack overflow). Each CPU has its
 * own GDT, TSS and IST stacks (struct cpu_arch); the IDT is shared.
 */
#include <asm/desc.h>
#include <asm/traps.h>
#include <quire/string.h>
#include <quire/percpu.h>

/* The boot CPU's; the others are allocated by smpboot.c. */
struct cpu_arch boot_cpu_arch;

struct idt_gate {
	u16 offset_low;
	u16 selector;
	u8 ist;
	u8 type_attr;
	u16 offset_mid;
	u32 offset_high;
	u32 reserved;
} __attribute__((packed));

static struct idt_gate idt[256] __aligned(16);

struct desc_ptr {
	u16 limit;
	u64 base;
} __attribute__((packed));

extern const u64 isr_stub_table[256];

void ist_stack_bounds(int ist, u64 *lo, u64 *hi)
{
	struct cpu_arch *a = this_cpu()->arch;

	*lo = (u64)(uintptr_t)a->ist_stacks[ist - 1];
	*hi = *lo + IST_STACK_SIZE;
}

void gdt_init(struct cpu_arch *a)
{
	u64 *gdt = a->gdt;
	struct tss *tss = &a->tss;
	u64 base = (u64)(uintptr_t)tss;
	u64 limit = sizeof(*tss) - 1;
	struct desc_ptr ptr = { sizeof(a->gdt) - 1, (u64)(uintptr_t)gdt };

	for (int i = 0; i < IST_COUNT; i++)
		tss->ist[i] = (u64)(uintptr_t)a->ist_stacks[i] + IST_STACK_SIZE;
	tss->iomap_base = sizeof(*tss);	/* no I/O permission bitmap */

	gdt[0] = 0;
	gdt[GDT_KERNEL_CS / 8] = 0x00af9b000000ffffULL;	/* 64-bit code, DPL 0 */
	gdt[GDT_KERNEL_DS / 8] = 0x00cf93000000ffffULL;	/* data, DPL 0 */
	gdt[GDT_USER32_CS / 8] = 0x00cffb000000ffffULL;	/* 32-bit code, DPL 3 */
	gdt[GDT_USER_DS / 8] = 0x00cff3000000ffffULL;	/* data, DPL 3 */
	gdt[GDT_USER_CS / 8] = 0x00affb000000ffffULL;	/* 64-bit code, DPL 3 */
	/* 64-bit TSS descriptor (type 9, present), two slots. */
	gdt[GDT_TSS / 8] = (limit & 0xffff) | ((base & 0xffffff) << 16) |
			   (0x89ULL << 40) | (((limit >> 16) & 0xf) << 48) |
			   (((base >> 24) & 0xff) << 56);
	gdt[GDT_TSS / 8 + 1] = base >> 32;

	__asm__ __volatile__(
		"lgdt %0\n\t"
		"pushq %1\n\t"
		"leaq 1f(%%rip), %%rax\n\t"
		"pushq %%rax\n\t"
		"lretq\n"
		"1:\n\t"
		"movw %w2, %%ax\n\t"
		"movw %%ax, %%ds\n\t"
		"movw %%ax, %%es\n\t"
		"movw %%ax, %%ss\n\t"
		"ltr %w3"
		:
		: "m"(ptr), "i"(GDT_KERNEL_CS), "r"(GDT_KERNEL_DS), "r"(GDT_TSS)
		: "rax", "memory");
}

static void set_gate(int vector, u64 handler, int ist)
{
	struct idt_gate *g = &idt[vector];

	g->offset_low = handler & 0xffff;
	g->selector = GDT_KERNEL_CS;
	g->ist = (u8)ist;
	g->type_attr = 0x8e;		/* present, DPL 0, 64-bit interrupt gate */
	g->offset_mid = (handler >> 16) & 0xffff;
	g->offset_high = (u32)(handler >> 32);
	g->reserved = 0;
}

void idt_init(void)
{
	for (int v = 0; v < 256; v++)
		set_gate(v, isr_stub_table[v], 0);
	/*
	 * int3 and into may be executed in user mode (DPL 3), as on Linux: a
	 * breakpoint is #BP (SIGTRAP), not a #GP for entering a kernel gate.
	 */
	idt[X86_TRAP_BP].type_attr = 0xee;
	idt[X86_TRAP_OF].type_attr = 0xee;
	idt[8].ist = IST_DOUBLE_FAULT;
	idt[2].ist = IST_NMI;
	idt[18].ist = IST_MACHINE_CHECK;
	idt_load();
}

/* Load the shared IDT on this CPU. */
void idt_load(void)
{
	struct desc_ptr ptr = { sizeof(idt) - 1, (u64)(uintptr_t)idt };

	__asm__ __volatile__("lidt %0" : : "m"(ptr));
}
