/*
 * Reader-writer semaphores (kernel/locking/rwsem.c): many readers or one
 * writer, sleeping, process context only. Waiters are served in FIFO order
 * and a waiting writer blocks new readers, so writers are not starved; a
 * writer's release lets in the run of readers queued at the head together.
 *
 * The writer is tracked (up_write by another task, down_write by the writer
 * itself are reported in DEBUG_LOCKS builds); readers are only counted.
 */
#ifndef QUIRE_RWSEM_H
#define QUIRE_RWSEM_H

#include <quire/types.h>
#include <quire/list.h>
#include <quire/spinlock.h>

struct task;

struct rw_semaphore {
	long count;			/* > 0: readers inside; -1: a writer; 0: free */
	struct task *owner;		/* the writer, while count == -1 */
	spinlock_t wait_lock;		/* protects all of it */
	struct list_head wait_list;	/* struct rwsem_waiter, FIFO */
};

#define __RWSEM_INITIALIZER(name)					\
	{ .wait_lock = __SPIN_LOCK_UNLOCKED,				\
	  .wait_list = LIST_HEAD_INIT((name).wait_list) }
#define DECLARE_RWSEM(name) struct rw_semaphore name = __RWSEM_INITIALIZER(name)

void init_rwsem(struct rw_semaphore *sem);

void down_read(struct rw_semaphore *sem);
/* 1 if it got in; 0 if a writer holds it or waits for it (never sleeps). */
int down_read_trylock(struct rw_semaphore *sem);
void up_read(struct rw_semaphore *sem);

void down_write(struct rw_semaphore *sem);
/* 1 if it got in; 0 if anyone holds it (never sleeps). */
int down_write_trylock(struct rw_semaphore *sem);
void up_write(struct rw_semaphore *sem);

static inline bool rwsem_is_locked(struct rw_semaphore *sem)
{
	return __atomic_load_n(&sem->count, __ATOMIC_RELAXED) != 0;
}

/*
 * rwsem_assert_held (for reading or writing: readers are only counted, so
 * "someone holds it") and rwsem_assert_held_write (this task is the
 * writer): reported like lockdep_assert_held (quire/spinlock.h) in
 * DEBUG_LOCKS builds, nothing otherwise.
 */
#ifdef DEBUG_LOCKS
bool rwsem_is_write_held_by_me(struct rw_semaphore *sem);
#define rwsem_assert_held(sem)							\
	do {									\
		struct rw_semaphore *__s = (sem);				\
		if (__builtin_expect(!rwsem_is_locked(__s), 0))			\
			lockdep_assert_failed(__s, "rwsem " #sem, __FILE__, __LINE__); \
	} while (0)
#define rwsem_assert_held_write(sem)						\
	do {									\
		struct rw_semaphore *__s = (sem);				\
		if (__builtin_expect(!rwsem_is_write_held_by_me(__s), 0))	\
			lockdep_assert_failed(__s, "rwsem (for writing) " #sem,	\
					      __FILE__, __LINE__);		\
	} while (0)
#else
#define rwsem_assert_held(sem)		((void)sizeof(sem))
#define rwsem_assert_held_write(sem)	((void)sizeof(sem))
#endif

/* Whether anyone waits (a snapshot, for tests). */
static inline bool rwsem_is_contended(struct rw_semaphore *sem)
{
	return !list_empty(&sem->wait_list);
}

#endif
