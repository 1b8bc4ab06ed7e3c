/*
 * Mutexes for the host build (kernel/locking/mutex.c needs the scheduler):
 * the same struct mutex and interface, with a waiter spinning politely
 * (sched_yield) until the owner unlocks. The owner is a per-thread token,
 * so "only the owner unlocks" still holds.
 */
#include <quire/mutex.h>
#include <stdio.h>
#include <stdlib.h>

static __thread char self_token;

#define SELF	((struct task *)&self_token)

void mutex_init(struct mutex *m)
{
	m->owner = NULL;
	spin_lock_init(&m->wait_lock);
	INIT_LIST_HEAD(&m->wait_list);
}

int mutex_trylock(struct mutex *m)
{
	struct task *none = NULL;

	return __atomic_compare_exchange_n(&m->owner, &none, SELF, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

void mutex_lock(struct mutex *m)
{
	if (__atomic_load_n(&m->owner, __ATOMIC_RELAXED) == SELF) {
		fprintf(stderr, "BUG: mutex recursion (host)\n");
		abort();
	}
	while (!mutex_trylock(m))
		cpu_relax();
}

void mutex_unlock(struct mutex *m)
{
	if (__atomic_load_n(&m->owner, __ATOMIC_RELAXED) != SELF) {
		fprintf(stderr, "BUG: mutex unlock by non-owner (host)\n");
		abort();
	}
	__atomic_store_n(&m->owner, NULL, __ATOMIC_RELEASE);
}
