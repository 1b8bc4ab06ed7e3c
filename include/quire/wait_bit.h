/*
 * Bit locks that sleep (kernel/locking/wait_bit.c): one bit of a word used
 * as a lock, with the waiters kept in a small hashed table of wait queues
 * instead of in the object, as Linux does for the folio lock (PG_locked).
 *
 *	wait_on_bit_lock(&word, bit);	set the bit, sleeping while another has it
 *	...
 *	clear_bit_unlock_wake(&word, bit);	clear it and wake whoever waits on it
 *
 * A sleeping lock: process context only, never under a spinlock (a
 * trylock, an atomic test-and-set of the bit, may be). On the host build
 * (arch/host/wait_bit.c) a waiter yields its thread instead of sleeping.
 */
#ifndef QUIRE_WAIT_BIT_H
#define QUIRE_WAIT_BIT_H

#include <quire/types.h>

/* Set bit in *word, first sleeping until it is clear. */
void wait_on_bit_lock(unsigned long *word, int bit);
/* Sleep until bit in *word is clear (without taking it). */
void wait_on_bit(unsigned long *word, int bit);
/* Clear bit in *word (release ordering) and wake the tasks that wait on it. */
void clear_bit_unlock_wake(unsigned long *word, int bit);

/* Set bit in *word if it was clear (acquire ordering): whether it did. Never sleeps. */
static inline bool test_and_set_bit_lock(unsigned long *word, int bit)
{
	return !(__atomic_fetch_or(word, 1UL << bit, __ATOMIC_ACQUIRE) & (1UL << bit));
}

#endif
