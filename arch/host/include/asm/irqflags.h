/* The host has no interrupts to mask; threads spin politely (sched_yield). */
#ifndef ASM_IRQFLAGS_H
#define ASM_IRQFLAGS_H

#include <sched.h>

static inline unsigned long arch_local_irq_save(void)
{
	return 0;
}

static inline void arch_local_irq_restore(unsigned long flags)
{
	(void)flags;
}

static inline bool arch_irqs_disabled_flags(unsigned long flags)
{
	(void)flags;
	return false;
}

static inline bool arch_irqs_disabled(void)
{
	return false;
}

static inline void cpu_relax(void)
{
	sched_yield();
}

#endif
