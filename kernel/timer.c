/*
 * Kernel timers (include/quire/timer.h, docs/timers.md): one list of
 * pending timers for the whole machine, sorted by expiry, under
 * timer_lock. Every CPU's LAPIC tick calls run_timers; the first CPU to
 * find a timer due runs every due function, one at a time, with the lock
 * dropped and interrupts off (a second CPU arriving meanwhile leaves it
 * to the first). Arming is O(n) in the pending timers, which are few (one
 * per process with an alarm); the tick's common case, nothing due, reads
 * one word without the lock.
 *
 * del_timer_sync relies on `running`: the timer whose function is being
 * called. It is cleared under the lock only after the function returned,
 * so a waiter that sees it clear knows the function is done with the
 * timer's memory.
 */
#define pr_fmt(fmt) "timer: " fmt
#include <quire/timer.h>
#include <quire/spinlock.h>
#include <quire/percpu.h>
#include <quire/panic.h>
#include <quire/time.h>

static DEFINE_SPINLOCK(timer_lock);
static LIST_HEAD(pending);		/* by expiry, earliest first */
static u64 next_expiry = ~0ULL;		/* the first one's, or ~0: none (read without the lock) */
static struct timer_list *running;	/* whose function runs now, or NULL */
static int running_cpu = -1;		/* the CPU running functions, or -1 */

static void update_next_expiry(void)
{
	lockdep_assert_held(&timer_lock);
	__atomic_store_n(&next_expiry, list_empty(&pending) ? ~0ULL :
			 list_first_entry(&pending, struct timer_list, entry)->expires,
			 __ATOMIC_RELEASE);
}

/* Take a pending timer off the list. Lock held. */
static bool detach(struct timer_list *timer)
{
	lockdep_assert_held(&timer_lock);
	if (!timer->entry.next)
		return false;
	list_del(&timer->entry);	/* leaves entry.next NULL: not pending */
	return true;
}

void timer_setup(struct timer_list *timer, void (*function)(struct timer_list *timer))
{
	BUG_ON(timer_pending(timer));
	timer->entry.next = timer->entry.prev = NULL;
	timer->expires = 0;
	timer->function = function;
}

bool mod_timer(struct timer_list *timer, u64 expires)
{
	struct timer_list *t;
	unsigned long flags;
	bool was;

	BUG_ON(!timer->function);
	spin_lock_irqsave(&timer_lock, flags);
	was = detach(timer);
	timer->expires = expires;
	/* After every timer due at the same time: equal expiries run in arming order. */
	list_for_each_entry(t, &pending, entry)
		if (t->expires > expires)
			break;
	list_add_tail(&timer->entry, &t->entry);
	update_next_expiry();
	spin_unlock_irqrestore(&timer_lock, flags);
	return was;
}

bool del_timer(struct timer_list *timer)
{
	unsigned long flags;
	bool was;

	spin_lock_irqsave(&timer_lock, flags);
	was = detach(timer);
	update_next_expiry();
	spin_unlock_irqrestore(&timer_lock, flags);
	return was;
}

bool del_timer_sync(struct timer_list *timer)
{
	bool was = false;

	for (;;) {
		unsigned long flags;
		bool busy;

		spin_lock_irqsave(&timer_lock, flags);
		was |= detach(timer);
		update_next_expiry();
		busy = running == timer;
		/* Waiting for ourselves would never end. */
		BUG_ON(busy && running_cpu == smp_processor_id());
		spin_unlock_irqrestore(&timer_lock, flags);
		if (!busy)
			return was;
		cpu_relax();	/* its function runs on another CPU: wait for it to return */
	}
}

bool timer_pending(const struct timer_list *timer)
{
	return __atomic_load_n(&timer->entry.next, __ATOMIC_ACQUIRE) != NULL;
}

bool timer_active(struct timer_list *timer, u64 *expires)
{
	unsigned long flags;
	bool active;

	spin_lock_irqsave(&timer_lock, flags);
	active = timer->entry.next || running == timer;
	*expires = timer->expires;
	spin_unlock_irqrestore(&timer_lock, flags);
	return active;
}

void run_timers(void)
{
	u64 now = ktime_get_ns();
	LIST_HEAD(due);

	if (__atomic_load_n(&next_expiry, __ATOMIC_ACQUIRE) > now)
		return;
	spin_lock(&timer_lock);		/* interrupts are off: the tick */
	if (running_cpu >= 0) {
		spin_unlock(&timer_lock);	/* another CPU is at it, and will see these too */
		return;
	}
	running_cpu = smp_processor_id();
	/*
	 * What is due now moves to a list of its own (still pending: del_timer
	 * takes a timer off it), so a function that re-arms its timer for a
	 * time already past runs again at the next tick, not in a loop here.
	 */
	while (!list_empty(&pending) &&
	       list_first_entry(&pending, struct timer_list, entry)->expires <= now)
		list_move_tail(pending.next, &due);
	update_next_expiry();
	while (!list_empty(&due)) {
		struct timer_list *t = list_first_entry(&due, struct timer_list, entry);

		detach(t);
		running = t;
		spin_unlock(&timer_lock);
		t->function(t);		/* may re-arm t, or arm others */
		spin_lock(&timer_lock);
		running = NULL;
	}
	running_cpu = -1;
	spin_unlock(&timer_lock);
}
