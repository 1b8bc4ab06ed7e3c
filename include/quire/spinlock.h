/*
 * Spinlocks, with Linux's interface. Two layers:
 *
 *   arch_spinlock_t  a bare test-and-test-and-set byte: no preemption
 *                    control, no debugging. For the few places that must
 *                    not recurse into the lock checks (printk, the checks'
 *                    own report lock).
 *   spinlock_t       what everyone else uses: holding one disables
 *                    preemption, and a DEBUG_LOCKS build (the kernel's
 *                    default) tracks the owner and catches recursion,
 *                    unlock by a non-owner and locks held too long
 *                    (kernel/locking/spinlock_debug.c, docs/locking.md).
 *
 * The same code serves the kernel and the host build; the architecture
 * supplies cpu_relax() and the interrupt flag (asm/irqflags.h). Zeroed
 * memory is an unlocked lock in both builds.
 */
#ifndef QUIRE_SPINLOCK_H
#define QUIRE_SPINLOCK_H

#include <quire/types.h>
#include <asm/irqflags.h>
#include <quire/preempt.h>

typedef struct {
	volatile u8 locked;
} arch_spinlock_t;

static inline bool arch_spin_trylock(arch_spinlock_t *l)
{
	return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void arch_spin_lock(arch_spinlock_t *l)
{
	while (!arch_spin_trylock(l))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			cpu_relax();
}

static inline void arch_spin_unlock(arch_spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

static inline bool arch_spin_is_locked(arch_spinlock_t *l)
{
	return __atomic_load_n(&l->locked, __ATOMIC_RELAXED);
}

#ifdef DEBUG_LOCKS
#define SPINLOCK_TRACE_DEPTH	6

struct percpu;
struct task;

typedef struct {
	arch_spinlock_t raw;
	struct percpu *owner_cpu;	/* NULL while unlocked */
	struct task *owner;		/* current when taken (NULL early in boot) */
	u64 taken_tsc;
	unsigned long taken_ip;		/* the code that called spin_lock */
	u64 trace[SPINLOCK_TRACE_DEPTH];	/* the taker's backtrace, 0-terminated */
} spinlock_t;

/* Out of line, with the checks. */
void do_raw_spin_lock(spinlock_t *l);
bool do_raw_spin_trylock(spinlock_t *l);
void do_raw_spin_unlock(spinlock_t *l);
#else
typedef struct {
	arch_spinlock_t raw;
} spinlock_t;

static inline void do_raw_spin_lock(spinlock_t *l)
{
	arch_spin_lock(&l->raw);
}

static inline bool do_raw_spin_trylock(spinlock_t *l)
{
	return arch_spin_trylock(&l->raw);
}

static inline void do_raw_spin_unlock(spinlock_t *l)
{
	arch_spin_unlock(&l->raw);
}
#endif

#define __SPIN_LOCK_UNLOCKED { .raw = { 0 } }
#define DEFINE_SPINLOCK(x) spinlock_t x = __SPIN_LOCK_UNLOCKED

static inline void spin_lock_init(spinlock_t *l)
{
	*l = (spinlock_t)__SPIN_LOCK_UNLOCKED;
}

/* Holding a spinlock disables preemption: the holder must not be switched out. */
static inline void spin_lock(spinlock_t *l)
{
	preempt_disable();
	do_raw_spin_lock(l);
}

static inline bool spin_trylock(spinlock_t *l)
{
	preempt_disable();
	if (do_raw_spin_trylock(l))
		return true;
	preempt_enable();
	return false;
}

static inline void spin_unlock(spinlock_t *l)
{
	do_raw_spin_unlock(l);
	preempt_enable();
}

static inline bool spin_is_locked(spinlock_t *l)
{
	return arch_spin_is_locked(&l->raw);
}

/*
 * lockdep_assert_held(l): a function whose contract says "l held" checks
 * it. In DEBUG_LOCKS builds a caller that does not hold l on this CPU gets
 * "BUG: lock not held" with a backtrace (counted in
 * lock_debug_counts.assert_not_held) and goes on; otherwise it costs
 * nothing (l is not even evaluated).
 */
#ifdef DEBUG_LOCKS
/* Does this CPU hold l? (A holder cannot migrate: the CPU is the owner.) */
bool spin_is_held_by_me(spinlock_t *l);
void lockdep_assert_failed(const void *lock, const char *what, const char *file, int line);
#define lockdep_assert_held(l)							\
	do {									\
		spinlock_t *__l = (l);						\
		if (__builtin_expect(!spin_is_held_by_me(__l), 0))		\
			lockdep_assert_failed(__l, "spinlock " #l, __FILE__, __LINE__); \
	} while (0)
#else
#define lockdep_assert_held(l)	((void)sizeof(l))
#endif

/* For a lock an interrupt handler also takes: interrupts stay off while it is held. */
#define spin_lock_irqsave(l, flags)					\
	do {								\
		(flags) = arch_local_irq_save();			\
		spin_lock(l);						\
	} while (0)

#define spin_unlock_irqrestore(l, flags)				\
	do {								\
		do_raw_spin_unlock(l);					\
		preempt_enable_no_resched();				\
		arch_local_irq_restore(flags);				\
		preempt_check_resched();				\
	} while (0)

#endif
