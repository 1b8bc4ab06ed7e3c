/*
 * Reader-writer semaphores for the host build (kernel/locking/rwsem.c needs
 * the scheduler): the same struct and interface; waiters spin politely.
 * count > 0: readers inside; -1: a writer; 0: free.
 */
#include <quire/rwsem.h>
#include <sched.h>

void init_rwsem(struct rw_semaphore *sem)
{
	sem->count = 0;
	sem->owner = NULL;
	spin_lock_init(&sem->wait_lock);
	INIT_LIST_HEAD(&sem->wait_list);
}

int down_read_trylock(struct rw_semaphore *sem)
{
	long c = __atomic_load_n(&sem->count, __ATOMIC_RELAXED);

	return c >= 0 && __atomic_compare_exchange_n(&sem->count, &c, c + 1, false,
						     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void down_read(struct rw_semaphore *sem)
{
	while (!down_read_trylock(sem))
		sched_yield();
}

void up_read(struct rw_semaphore *sem)
{
	__atomic_fetch_sub(&sem->count, 1, __ATOMIC_RELEASE);
}

int down_write_trylock(struct rw_semaphore *sem)
{
	long free = 0;

	return __atomic_compare_exchange_n(&sem->count, &free, -1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void down_write(struct rw_semaphore *sem)
{
	while (!down_write_trylock(sem))
		sched_yield();
}

void up_write(struct rw_semaphore *sem)
{
	__atomic_store_n(&sem->count, 0, __ATOMIC_RELEASE);
}
