/*
 * Spinlocks: a test-and-test-and-set byte, with Linux's interface. The same
 * code serves the kernel and the host build; the architecture supplies
 * cpu_relax() and the interrupt flag (asm/irqflags.h). The SMP issue adds
 * the debug checks (recursion, owner, held too long).
 */
#ifndef QUIRE_SPINLOCK_H
#define QUIRE_SPINLOCK_H

#include <quire/types.h>
#include <asm/irqflags.h>

typedef struct {
	volatile u8 locked;
} spinlock_t;

#define __SPIN_LOCK_UNLOCKED { 0 }
#define DEFINE_SPINLOCK(x) spinlock_t x = __SPIN_LOCK_UNLOCKED

static inline void spin_lock_init(spinlock_t *l)
{
	l->locked = 0;
}

static inline void spin_lock(spinlock_t *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			cpu_relax();
}

static inline bool spin_trylock(spinlock_t *l)
{
	return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void spin_unlock(spinlock_t *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

static inline bool spin_is_locked(spinlock_t *l)
{
	return __atomic_load_n(&l->locked, __ATOMIC_RELAXED);
}

#define spin_lock_irqsave(l, flags)					\
	do {								\
		(flags) = arch_local_irq_save();			\
		spin_lock(l);						\
	} while (0)

#define spin_unlock_irqrestore(l, flags)				\
	do {								\
		spin_unlock(l);						\
		arch_local_irq_restore(flags);				\
	} while (0)

#endif
