/*
 * What the lock checks share: their counters, the knobs, and the report
 * lock that keeps one CPU's report from interleaving with another's. The
 * report lock is a bare arch_spinlock_t (the checks must not check
 * themselves) taken with interrupts off; a CPU that reports while already
 * reporting (an interrupt handler, a nested check) goes straight through.
 */
#include <quire/debug_locks.h>
#include <quire/spinlock.h>
#include <quire/percpu.h>
#include <quire/cmdline.h>
#include <quire/ksyms.h>
#include <quire/printk.h>

struct lock_debug_counts lock_debug_counts;
bool lock_debug_recursion_returns;

unsigned long spinlock_timeout_ms = SPINLOCK_TIMEOUT_MS;
CMDLINE_UINT("spinlock_timeout_ms", spinlock_timeout_ms, 0, 3600000,
	     "report a spinlock waiter that spins longer than this, in ms (0: never; DEBUG_LOCKS builds; "
	     "default 1000, 10000 under QEMU's TCG)");

void lock_debug_cpu_emulated(void)
{
	spinlock_timeout_ms = SPINLOCK_TIMEOUT_MS_EMULATED;
	pr_info("locking: the CPU is emulated (QEMU TCG): spinlock_timeout_ms defaults to %lu\n",
		spinlock_timeout_ms);
}

static arch_spinlock_t report_lock;
static struct percpu *report_cpu;	/* the CPU holding report_lock */
static int report_depth;		/* written by report_cpu only */

unsigned long lock_report_begin(atomic_t *counter)
{
	unsigned long flags = arch_local_irq_save();
	struct percpu *me = this_cpu();

	atomic_inc(counter);
	if (READ_ONCE(report_cpu) != me) {
		arch_spin_lock(&report_lock);
		WRITE_ONCE(report_cpu, me);
	}
	report_depth++;
	return flags;
}

void lock_report_end(unsigned long flags)
{
	if (--report_depth == 0) {
		WRITE_ONCE(report_cpu, NULL);
		arch_spin_unlock(&report_lock);
	}
	arch_local_irq_restore(flags);
}

const char *lock_debug_sym(char *buf, size_t len, unsigned long addr)
{
	if (!addr)
		return "(unknown)";
	ksym_format(buf, len, addr);
	return buf;
}
