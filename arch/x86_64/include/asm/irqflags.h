/* The interrupt flag and the spin-wait hint, for include/quire/spinlock.h. */
#ifndef ASM_IRQFLAGS_H
#define ASM_IRQFLAGS_H

#include <asm/cpu.h>

/* Disable interrupts; return whether they were on, for arch_local_irq_restore. */
static inline unsigned long arch_local_irq_save(void)
{
	unsigned long flags = read_flags();

	local_irq_disable();
	return flags;
}

static inline void arch_local_irq_restore(unsigned long flags)
{
	if (flags & X86_EFLAGS_IF)
		local_irq_enable();
}

static inline bool arch_irqs_disabled_flags(unsigned long flags)
{
	return !(flags & X86_EFLAGS_IF);
}

static inline bool arch_irqs_disabled(void)
{
	return arch_irqs_disabled_flags(read_flags());
}

#endif
