/*
 * Sleeping bit locks for the host build (kernel/locking/wait_bit.c needs
 * the scheduler): the same interface, a waiter yielding its thread until
 * the bit is clear, like arch/host/mutex.c.
 */
#include <quire/wait_bit.h>
#include <sched.h>

static bool bit_is_set(unsigned long *word, int bit)
{
	return __atomic_load_n(word, __ATOMIC_ACQUIRE) & (1UL << bit);
}

void wait_on_bit_lock(unsigned long *word, int bit)
{
	while (!test_and_set_bit_lock(word, bit))
		sched_yield();
}

void wait_on_bit(unsigned long *word, int bit)
{
	while (bit_is_set(word, bit))
		sched_yield();
}

void clear_bit_unlock_wake(unsigned long *word, int bit)
{
	__atomic_fetch_and(word, ~(1UL << bit), __ATOMIC_RELEASE);
}
