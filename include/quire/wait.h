/*
 * Wait queues (kernel/locking/wait.c): a list of sleeping tasks behind a
 * spinlock, with Linux's names and semantics.
 *
 *	wait_event(wq, cond);		sleeps until cond is true
 *	cond = true; wake_up(&wq);	the waker: set the condition, then wake
 *
 * No wake-up is lost: a waiter is on the queue, with its state set, before
 * it tests the condition, so a waker that sets the condition afterwards
 * finds it there. The condition is re-tested after every wake-up; a wake-up
 * promises only that the condition may have changed.
 *
 * wake_up() wakes every non-exclusive waiter and one exclusive waiter
 * (prepare_to_wait_exclusive; they queue at the tail); wake_up_all() wakes
 * everyone. A waker may run in an interrupt handler: the lock is taken with
 * interrupts off. Timeouts are in nanoseconds.
 */
#ifndef QUIRE_WAIT_H
#define QUIRE_WAIT_H

#include <quire/types.h>
#include <quire/list.h>
#include <quire/spinlock.h>
#include <quire/sched.h>
#include <quire/time.h>
#include <quire/debug_locks.h>
#include <quire/signal.h>

#define WQ_FLAG_EXCLUSIVE	0x01

struct wait_queue_entry {
	unsigned int flags;
	struct task *task;
	struct list_head entry;		/* on the head's list; empty when not queued */
};
typedef struct wait_queue_entry wait_queue_entry_t;

struct wait_queue_head {
	spinlock_t lock;
	struct list_head head;
};
typedef struct wait_queue_head wait_queue_head_t;

#define __WAIT_QUEUE_HEAD_INITIALIZER(name) \
	{ .lock = __SPIN_LOCK_UNLOCKED, .head = LIST_HEAD_INIT((name).head) }
#define DECLARE_WAIT_QUEUE_HEAD(name) \
	wait_queue_head_t name = __WAIT_QUEUE_HEAD_INITIALIZER(name)

#define DEFINE_WAIT(name)						\
	wait_queue_entry_t name = {					\
		.task = current,					\
		.entry = LIST_HEAD_INIT((name).entry),			\
	}

void init_waitqueue_head(wait_queue_head_t *wq);
void init_wait_entry(wait_queue_entry_t *w, unsigned int flags);

/* Whether anyone waits (a hint: racy unless the caller holds wq->lock). */
static inline bool waitqueue_active(wait_queue_head_t *wq)
{
	return !list_empty(&wq->head);
}

/*
 * Queue w (if it is not queued) and set the task state, in one step under
 * the lock; then test the condition and schedule() if it is false;
 * finish_wait() when done.
 */
void prepare_to_wait(wait_queue_head_t *wq, wait_queue_entry_t *w, int state);
void prepare_to_wait_exclusive(wait_queue_head_t *wq, wait_queue_entry_t *w, int state);
void finish_wait(wait_queue_head_t *wq, wait_queue_entry_t *w);
/*
 * Queue w (when it is not queued) without changing the task's state, and
 * take it off: for a waiter on several queues at once (poll, select).
 */
void add_wait_queue(wait_queue_head_t *wq, wait_queue_entry_t *w);
void remove_wait_queue(wait_queue_head_t *wq, wait_queue_entry_t *w);

/* Wake the non-exclusive waiters and up to nr_exclusive exclusive ones (0: all). Returns how many woke. */
int __wake_up(wait_queue_head_t *wq, int nr_exclusive);
#define wake_up(wq)		__wake_up(wq, 1)
#define wake_up_nr(wq, nr)	__wake_up(wq, nr)
#define wake_up_all(wq)		__wake_up(wq, 0)

/* The same with wq->lock already held (for locks built on a wait queue). */
int __wake_up_locked(wait_queue_head_t *wq, int nr_exclusive);
void __add_wait_queue_entry_tail(wait_queue_head_t *wq, wait_queue_entry_t *w);

/* Sleep until condition is true. */
#define wait_event(wq, condition)					\
	do {								\
		might_sleep();						\
		if (condition)						\
			break;						\
		__wait_event(wq, condition);				\
	} while (0)

#define __wait_event(wq, condition)					\
	do {								\
		DEFINE_WAIT(__wait);					\
		for (;;) {						\
			prepare_to_wait(&(wq), &__wait, TASK_UNINTERRUPTIBLE); \
			if (condition)					\
				break;					\
			schedule();					\
		}							\
		finish_wait(&(wq), &__wait);				\
	} while (0)

/*
 * Sleep until condition is true (0) or a signal is pending (-ERESTARTSYS:
 * the system call is restarted, or fails with EINTR, as the signal's
 * action says; include/quire/signal.h).
 */
#define wait_event_interruptible(wq, condition)				\
	({								\
		int __ret = 0;						\
		might_sleep();						\
		if (!(condition)) {					\
			DEFINE_WAIT(__wait);				\
			for (;;) {					\
				prepare_to_wait(&(wq), &__wait, TASK_INTERRUPTIBLE); \
				if (condition)				\
					break;				\
				if (signal_pending(current)) {		\
					__ret = -ERESTARTSYS;		\
					break;				\
				}					\
				schedule();				\
			}						\
			finish_wait(&(wq), &__wait);			\
		}							\
		__ret;							\
	})

/*
 * Sleep until condition is true or timeout_ns have passed. Returns 0 if the
 * condition was still false when the time ran out, otherwise the
 * nanoseconds that were left (at least 1), like Linux's (which counts
 * jiffies).
 */
#define wait_event_timeout(wq, condition, timeout_ns)			\
	({								\
		long __ret = (long)(timeout_ns);			\
		might_sleep();						\
		if (condition)						\
			__ret = __ret > 0 ? __ret : 1;			\
		else							\
			__ret = __wait_event_timeout(wq, condition, __ret); \
		__ret;							\
	})

#define __wait_event_timeout(wq, condition, timeout)			\
	({								\
		u64 __deadline = ktime_get_ns() + (u64)(timeout);	\
		long __left;						\
		DEFINE_WAIT(__wait);					\
		for (;;) {						\
			prepare_to_wait(&(wq), &__wait, TASK_UNINTERRUPTIBLE); \
			__left = wait_time_left(__deadline);		\
			if (condition) {				\
				__left = __left ? __left : 1;		\
				break;					\
			}						\
			if (!__left)					\
				break;					\
			schedule_timeout_ns((u64)__left);		\
		}							\
		finish_wait(&(wq), &__wait);				\
		__left;							\
	})

/* Nanoseconds until deadline (ktime_get_ns() time), 0 once it has passed. */
static inline long wait_time_left(u64 deadline)
{
	u64 now = ktime_get_ns();

	return now < deadline ? (long)(deadline - now) : 0;
}

#endif
