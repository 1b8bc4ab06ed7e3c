/*
 * Lock debugging (DEBUG_LOCKS builds, the kernel's default; make
 * DEBUG_LOCKS=0 drops it): might_sleep(), the counters of every report the
 * checks made, and the knobs tests use. What each report looks like is in
 * docs/locking.md.
 */
#ifndef QUIRE_DEBUG_LOCKS_H
#define QUIRE_DEBUG_LOCKS_H

#include <quire/types.h>
#include <quire/atomic.h>

#ifdef DEBUG_LOCKS
/*
 * Report "BUG: sleeping function called from invalid context" with a
 * backtrace when the caller holds a spinlock, has preemption or interrupts
 * disabled, or is in an interrupt handler. Called at the top of everything
 * that may sleep (mutex_lock, down_read/down_write, wait_for_completion,
 * wait_event, msleep, schedule). Silent before the scheduler runs (no
 * current task yet).
 */
void __might_sleep(const char *file, int line);
#define might_sleep() __might_sleep(__FILE__, __LINE__)
#else
#define might_sleep() do { } while (0)
#endif

/* Reports made since boot, one counter per check. */
struct lock_debug_counts {
	atomic_t spin_recursion;
	atomic_t spin_bad_unlock;	/* unlock by a non-owner, or of an unlocked lock */
	atomic_t spin_held_too_long;
	atomic_t might_sleep;
	atomic_t mutex_recursion;
	atomic_t mutex_bad_unlock;
	atomic_t rwsem_recursion;
	atomic_t rwsem_bad_unlock;
	atomic_t assert_not_held;	/* lockdep_assert_held and the rwsem asserts */
};
extern struct lock_debug_counts lock_debug_counts;

/* How long a spinlock waiter spins before "held too long" (spinlock_timeout_ms=, 0: never). */
extern unsigned long spinlock_timeout_ms;
#define SPINLOCK_TIMEOUT_MS		1000	/* the default on hardware and KVM */
#define SPINLOCK_TIMEOUT_MS_EMULATED	10000	/* under QEMU's TCG */

/*
 * The architecture found the CPU emulated (QEMU's TCG): a virtual CPU is a
 * host thread that the host may not run for a second or more, so a hold
 * the waiter measures in wall time (the TSC follows the host's clock) can
 * look long with nothing wrong. Raises spinlock_timeout_ms's default to
 * SPINLOCK_TIMEOUT_MS_EMULATED; called before the command line is parsed,
 * which still decides.
 */
void lock_debug_cpu_emulated(void);

/*
 * Recursion on a spinlock, a mutex or a write-held rwsem is a certain
 * deadlock: it is reported, then the kernel panics. A test sets this to make
 * the next recursive acquisition report and return without taking the lock
 * (nor changing any count), instead of panicking. One-shot: the check clears it.
 */
extern bool lock_debug_recursion_returns;

/*
 * Open and close a multi-line report (lines of different CPUs' reports do
 * not interleave), and bump its counter. Used by kernel/locking/ only.
 */
unsigned long lock_report_begin(atomic_t *counter);
void lock_report_end(unsigned long flags);
/* "name+0x12/0x80" of a code address, into buf. */
const char *lock_debug_sym(char *buf, size_t len, unsigned long addr);

#endif
