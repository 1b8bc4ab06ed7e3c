/*
 * might_sleep(): catch a sleep where sleeping is a bug. A task that sleeps
 * holding a spinlock leaves the lock held (and preemption off) while other
 * tasks run on its CPU, and any of them taking that lock spins forever; a
 * task that sleeps with interrupts off, or an interrupt handler that sleeps,
 * stops the CPU's timer and wake-ups. The check is cheap and runs on every
 * call, whether or not the caller would actually have slept this time, so
 * the bug shows on the fast path too.
 */
#include <quire/debug_locks.h>
#include <quire/sched.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/stacktrace.h>
#include <asm/irqflags.h>

#ifdef DEBUG_LOCKS
void __might_sleep(const char *file, int line)
{
	struct task *t = current;
	unsigned long flags;
	struct percpu *cpu;
	int pc, held, depth, id;
	bool irqs_off;

	if (!t || panic_in_progress)
		return;
	/* With interrupts off the task cannot move to another CPU while we read this one's counts. */
	flags = arch_local_irq_save();
	irqs_off = arch_irqs_disabled_flags(flags);
	cpu = this_cpu();
	pc = cpu->preempt_count;
	held = cpu->spinlocks_held;
	depth = cpu->irq_depth;
	id = cpu->cpu;
	arch_local_irq_restore(flags);
	if (!irqs_off && !pc && !held && !depth)
		return;

	flags = lock_report_begin(&lock_debug_counts.might_sleep);
	pr_err("BUG: sleeping function called from invalid context at %s:%d\n", file, line);
	pr_err(" preempt_count: %d, spinlocks held: %d, irqs_disabled: %d, in interrupt: %d, task: %s (tid %d), CPU %d\n",
	       pc, held, irqs_off, depth > 0, t->comm, t->tid, id);
	dump_stack();
	lock_report_end(flags);
}
#endif
