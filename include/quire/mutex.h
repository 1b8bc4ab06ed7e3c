/*
 * Mutexes (kernel/locking/mutex.c): a sleeping lock with an owner, for
 * process context only (never in an interrupt handler, never under a
 * spinlock). A contended mutex_lock sleeps in FIFO order; mutex_unlock hands
 * the mutex straight to the first waiter, so nobody starves.
 *
 * Only the owner may unlock, and the owner may not lock it again: a
 * DEBUG_LOCKS build reports both (docs/locking.md).
 */
#ifndef QUIRE_MUTEX_H
#define QUIRE_MUTEX_H

#include <quire/types.h>
#include <quire/list.h>
#include <quire/spinlock.h>

struct task;

struct mutex {
	struct task *owner;		/* NULL while unlocked */
	spinlock_t wait_lock;		/* protects owner changes and wait_list */
	struct list_head wait_list;	/* struct mutex_waiter, FIFO */
#ifdef DEBUG_LOCKS
	unsigned long acquire_ip;	/* where the owner locked it */
#endif
};

#define __MUTEX_INITIALIZER(name)					\
	{ .wait_lock = __SPIN_LOCK_UNLOCKED,				\
	  .wait_list = LIST_HEAD_INIT((name).wait_list) }
#define DEFINE_MUTEX(name) struct mutex name = __MUTEX_INITIALIZER(name)

void mutex_init(struct mutex *m);
void mutex_lock(struct mutex *m);
/* 1 if it took the mutex, 0 if someone holds it (never sleeps). */
int mutex_trylock(struct mutex *m);
void mutex_unlock(struct mutex *m);

static inline bool mutex_is_locked(struct mutex *m)
{
	return __atomic_load_n(&m->owner, __ATOMIC_RELAXED) != NULL;
}

/* The task holding m, or NULL (a snapshot, for reports and tests). */
static inline struct task *mutex_owner(struct mutex *m)
{
	return __atomic_load_n(&m->owner, __ATOMIC_RELAXED);
}

/*
 * mutex_assert_held(m): a function whose contract says "m held" checks it
 * (DEBUG_LOCKS builds report "BUG: lock not held", as lockdep_assert_held
 * does for spinlocks). The caller's file must see current (quire/sched.h).
 */
#ifdef DEBUG_LOCKS
#define mutex_assert_held(m)							\
	do {									\
		struct mutex *__m = (m);					\
		if (__builtin_expect(mutex_owner(__m) != current, 0))		\
			lockdep_assert_failed(__m, "mutex " #m, __FILE__, __LINE__); \
	} while (0)
#else
#define mutex_assert_held(m)	((void)sizeof(m))
#endif

#endif
