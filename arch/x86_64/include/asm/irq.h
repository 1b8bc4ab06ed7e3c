/* Interrupt vectors ≥ 32: who handles them (arch/x86_64/kernel/irq.c). */
#ifndef ASM_IRQ_H
#define ASM_IRQ_H

#include <quire/types.h>
#include <asm/ptrace.h>

typedef void (*vector_handler_t)(struct pt_regs *regs, void *data);

/* Install the handler of an interrupt vector (32-255). -EBUSY if taken. */
int request_vector(u8 vector, vector_handler_t fn, void *data, const char *name);
/* Called by do_trap for vectors ≥ 32 and for NMIs. */
void handle_irq(struct pt_regs *regs);
void handle_nmi(struct pt_regs *regs);
/* Whether a pending NMI was sent on purpose (backtrace, panic stop). */
bool nmi_is_for_us(void);
/* Count of interrupts seen per vector (all CPUs). */
u64 vector_count(u8 vector);
/* Every online CPU prints its registers' place and backtrace (NMI); for hangs. */
void trigger_all_cpu_backtrace(void);
/* Install the LAPIC timer handler (boot). */
void irq_init(void);

#endif
