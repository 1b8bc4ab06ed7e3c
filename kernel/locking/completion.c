/*
 * Completions: see include/quire/completion.h. A counter and a wait queue;
 * every waiter is exclusive, so complete() wakes exactly one (FIFO) and
 * complete_all() all of them. The counter is only read and changed under
 * the wait queue's lock, and a waiter decides on it there, so a complete()
 * can neither be lost nor counted twice, even when it races a timeout.
 */
#include <quire/completion.h>

void init_completion(struct completion *x)
{
	x->done = 0;
	init_waitqueue_head(&x->wait);
}

void reinit_completion(struct completion *x)
{
	WRITE_ONCE(x->done, 0);
}

void complete(struct completion *x)
{
	unsigned long flags;

	spin_lock_irqsave(&x->wait.lock, flags);
	if (x->done != COMPLETION_ALL)
		x->done++;
	__wake_up_locked(&x->wait, 1);
	spin_unlock_irqrestore(&x->wait.lock, flags);
}

void complete_all(struct completion *x)
{
	unsigned long flags;

	spin_lock_irqsave(&x->wait.lock, flags);
	x->done = COMPLETION_ALL;
	__wake_up_locked(&x->wait, 0);
	spin_unlock_irqrestore(&x->wait.lock, flags);
}

/* Take one completion if there is one. Under the lock. */
static bool consume(struct completion *x)
{
	if (!x->done)
		return false;
	if (x->done != COMPLETION_ALL)
		x->done--;
	return true;
}

/* Returns 0 on timeout, else the time left (1 when untimed). */
static u64 do_wait(struct completion *x, bool timed, u64 timeout_ns)
{
	u64 deadline = timed ? ktime_get_ns() + timeout_ns : 0;
	unsigned long flags;
	long left = 1;
	wait_queue_entry_t w;
	u64 ret = 0;

	init_wait_entry(&w, WQ_FLAG_EXCLUSIVE);
	spin_lock_irqsave(&x->wait.lock, flags);
	while (!x->done) {
		if (timed && !(left = wait_time_left(deadline)))
			break;
		/* A wake-up took us off the queue; someone else may have taken the completion. */
		if (list_empty(&w.entry))
			__add_wait_queue_entry_tail(&x->wait, &w);
		set_current_state(TASK_UNINTERRUPTIBLE);
		spin_unlock_irqrestore(&x->wait.lock, flags);
		if (timed)
			schedule_timeout_ns((u64)left);
		else
			schedule();
		spin_lock_irqsave(&x->wait.lock, flags);
	}
	__set_current_state(TASK_RUNNING);
	if (!list_empty(&w.entry))
		list_del_init(&w.entry);
	if (consume(x)) {
		left = timed ? wait_time_left(deadline) : 1;
		ret = left > 0 ? (u64)left : 1;
	}
	spin_unlock_irqrestore(&x->wait.lock, flags);
	return ret;
}

void wait_for_completion(struct completion *x)
{
	might_sleep();
	do_wait(x, false, 0);
}

u64 wait_for_completion_timeout(struct completion *x, u64 timeout_ns)
{
	might_sleep();
	return do_wait(x, true, timeout_ns);
}

bool try_wait_for_completion(struct completion *x)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&x->wait.lock, flags);
	ok = consume(x);
	spin_unlock_irqrestore(&x->wait.lock, flags);
	return ok;
}

bool completion_done(struct completion *x)
{
	return READ_ONCE(x->done) != 0;
}
