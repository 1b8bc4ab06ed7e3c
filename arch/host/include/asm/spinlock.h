/*
 * Spinlocks for the host build: the same test-and-set lock as the kernel's,
 * yielding while it waits (threads stand in for CPUs). "irqsave" has no
 * interrupts to save.
 */
#ifndef ASM_SPINLOCK_H
#define ASM_SPINLOCK_H

#include <quire/types.h>
#include <sched.h>

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
			sched_yield();
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
	return l->locked;
}

#define spin_lock_irqsave(l, flags)	do { (flags) = 0; spin_lock(l); } while (0)
#define spin_unlock_irqrestore(l, flags) do { (void)(flags); spin_unlock(l); } while (0)

#endif
