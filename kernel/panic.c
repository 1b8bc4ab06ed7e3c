/*
 * panic: the end of the line for a kernel bug. Interrupts off, the message,
 * the place, a backtrace, then power off with QUIRE_EXIT_PANIC so that a
 * script sees a failure and never waits on a hung guest. The other CPUs are
 * stopped first with an NMI, so nothing else runs or prints on top of the
 * report.
 */
#include <quire/panic.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/power.h>
#include <quire/stacktrace.h>
#include <quire/smp.h>
#include <quire/percpu.h>
#include <asm/cpu.h>
#include <quire/time.h>

int panic_in_progress;

void panic_at(const char *file, int line, const char *func, const char *fmt, ...)
{
	static char msg[256];
	va_list ap;

	local_irq_disable();
	if (__atomic_fetch_add(&panic_in_progress, 1, __ATOMIC_SEQ_CST)) {
		/* A panic while panicking: say so and stop, without recursing. */
		printk(KERN_RAW "Kernel panic - nested panic at %s:%d; stopping\n", file, line);
		machine_power_off(QUIRE_EXIT_PANIC);
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	smp_stop_other_cpus();
	mdelay(10);		/* let them take the NMI */
	printk_bust_lock();
	pr_emerg("Kernel panic - not syncing: %s\n", msg);
	pr_emerg("at %s:%d in %s(), on CPU %d\n", file, line, func,
		 this_cpu() ? smp_processor_id() : 0);
	dump_stack();
	pr_emerg("---[ end Kernel panic - not syncing: %s ]---\n", msg);
	machine_power_off(QUIRE_EXIT_PANIC);
}
