/*
 * Spinlocks for x86-64: a test-and-test-and-set byte. The SMP issue adds the
 * debug checks (recursion, owner, held too long); the interface is Linux's.
 */
#ifndef ASM_SPINLOCK_H
#define ASM_SPINLOCK_H

#include <quire/types.h>
#include <asm/cpu.h>

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
		while (l->locked)
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
	return l->locked;
}

#define spin_lock_irqsave(l, flags)					\
	do {								\
		(flags) = read_flags();					\
		local_irq_disable();					\
		spin_lock(l);						\
	} while (0)

#define spin_unlock_irqrestore(l, flags)				\
	do {								\
		spin_unlock(l);						\
		if ((flags) & X86_EFLAGS_IF)				\
			local_irq_enable();				\
	} while (0)

#endif
