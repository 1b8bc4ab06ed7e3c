/*
 * panic: the end of the line for a kernel bug. Interrupts off, the message,
 * the place, a backtrace, then power off with QUIRE_EXIT_PANIC so that a
 * script sees a failure and never waits on a hung guest. (With one CPU
 * running there is nothing else to stop yet; the SMP issue adds stopping
 * the other CPUs here.)
 */
#include <quire/panic.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/power.h>
#include <quire/stacktrace.h>
#include <asm/cpu.h>

int panic_in_progress;

void panic_at(const char *file, int line, const char *func, const char *fmt, ...)
{
	static char msg[256];
	va_list ap;

	local_irq_disable();
	if (panic_in_progress++) {
		/* A panic while panicking: say so and stop, without recursing. */
		printk(KERN_RAW "Kernel panic - nested panic at %s:%d; stopping\n", file, line);
		machine_power_off(QUIRE_EXIT_PANIC);
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	pr_emerg("Kernel panic - not syncing: %s\n", msg);
	pr_emerg("at %s:%d in %s(), CPU 0\n", file, line, func);
	dump_stack();
	pr_emerg("---[ end Kernel panic - not syncing: %s ]---\n", msg);
	machine_power_off(QUIRE_EXIT_PANIC);
}
