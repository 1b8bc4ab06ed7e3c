/*
 * Kernel timers (kernel/timer.c, docs/timers.md): run a function at a time,
 * with Linux's timer_list names. Times are ktime_get_ns() values, not
 * jiffies; a timer runs from the first LAPIC tick (10 ms) at or after its
 * time, on whichever CPU takes that tick, with interrupts off. So its
 * function must not sleep, allocate with GFP_KERNEL or take a mutex.
 *
 *	timer_setup(&t->timer, my_fn);
 *	mod_timer(&t->timer, ktime_get_ns() + 50 * NSEC_PER_MSEC);
 *	...
 *	del_timer_sync(&t->timer);	before t is freed
 *
 * Zeroed memory is a timer that is not pending (give it a function with
 * timer_setup before arming it).
 */
#ifndef QUIRE_TIMER_H
#define QUIRE_TIMER_H

#include <quire/types.h>
#include <quire/list.h>

struct timer_list {
	struct list_head entry;		/* in the pending list, by expiry; next NULL: not pending */
	u64 expires;			/* ktime_get_ns() time it runs at (or after) */
	void (*function)(struct timer_list *timer);
};

/* Give a timer its function; it is not pending afterwards. Not on a pending timer. */
void timer_setup(struct timer_list *timer, void (*function)(struct timer_list *timer));
/*
 * Arm the timer for expires (a pending one is moved). Returns whether it
 * was pending. Any context; the function itself may re-arm its timer.
 */
bool mod_timer(struct timer_list *timer, u64 expires);
/* Disarm; whether it was pending. Its function may still be running on another CPU. */
bool del_timer(struct timer_list *timer);
/*
 * Disarm, and wait until its function is not running anywhere: after it
 * the timer's memory may be freed (unless someone arms it again). Not from
 * the timer's own function, and not holding a lock that function takes.
 */
bool del_timer_sync(struct timer_list *timer);
/* Whether the timer is armed (a snapshot). */
bool timer_pending(const struct timer_list *timer);
/*
 * Whether the timer is armed or its function runs right now (Linux's
 * hrtimer_active), and then its expiry in *expires.
 */
bool timer_active(struct timer_list *timer, u64 *expires);

/* The tick (every CPU, interrupts off): run the functions of the timers that are due. */
void run_timers(void);

#endif
