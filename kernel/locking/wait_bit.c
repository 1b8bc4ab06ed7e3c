/*
 * Sleeping bit locks (include/quire/wait_bit.h). A waiter sleeps on one of
 * BIT_WAIT_QUEUES wait queues chosen by hashing the word's address and the
 * bit; an unlock wakes that whole queue (others hashed there test their
 * own bit again and go back to sleep), which keeps the objects themselves
 * free of wait queues: a struct page has no room for one.
 */
#include <quire/wait_bit.h>
#include <quire/wait.h>

#define BIT_WAIT_QUEUES	64

#define WQ1(i)	[i] = __WAIT_QUEUE_HEAD_INITIALIZER(bit_wait_table[i])
#define WQ4(i)	WQ1(i), WQ1(i + 1), WQ1(i + 2), WQ1(i + 3)
#define WQ16(i)	WQ4(i), WQ4(i + 4), WQ4(i + 8), WQ4(i + 12)
static wait_queue_head_t bit_wait_table[BIT_WAIT_QUEUES] = {
	WQ16(0), WQ16(16), WQ16(32), WQ16(48)
};

static wait_queue_head_t *bit_waitqueue(unsigned long *word, int bit)
{
	u64 key = ((u64)(unsigned long)word >> 3) * 31 + (u64)bit;

	key ^= key >> 17;
	return &bit_wait_table[(key * 0x9e3779b97f4a7c15ULL) >> 58];	/* top 6 bits */
}

static bool bit_is_set(unsigned long *word, int bit)
{
	return __atomic_load_n(word, __ATOMIC_ACQUIRE) & (1UL << bit);
}

void wait_on_bit_lock(unsigned long *word, int bit)
{
	might_sleep();
	while (!test_and_set_bit_lock(word, bit))
		wait_event(*bit_waitqueue(word, bit), !bit_is_set(word, bit));
}

void wait_on_bit(unsigned long *word, int bit)
{
	wait_event(*bit_waitqueue(word, bit), !bit_is_set(word, bit));
}

void clear_bit_unlock_wake(unsigned long *word, int bit)
{
	__atomic_fetch_and(word, ~(1UL << bit), __ATOMIC_RELEASE);
	/* The waiter queues itself before testing the bit: this wake finds it. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	wake_up_all(bit_waitqueue(word, bit));
}
