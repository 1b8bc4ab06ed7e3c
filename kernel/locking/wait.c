/*
 * Wait queues: see include/quire/wait.h. The lock is taken with interrupts
 * off because wakers may be interrupt handlers. Lock order: wq->lock, then
 * the run-queue lock (inside wake_up_process).
 */
#include <quire/wait.h>

void init_waitqueue_head(wait_queue_head_t *wq)
{
	spin_lock_init(&wq->lock);
	INIT_LIST_HEAD(&wq->head);
}

void init_wait_entry(wait_queue_entry_t *w, unsigned int flags)
{
	w->flags = flags;
	w->task = current;
	INIT_LIST_HEAD(&w->entry);
}

void __add_wait_queue_entry_tail(wait_queue_head_t *wq, wait_queue_entry_t *w)
{
	list_add_tail(&w->entry, &wq->head);
}

/* Non-exclusive waiters go first, so that wake_up reaches all of them. */
static void add_entry(wait_queue_head_t *wq, wait_queue_entry_t *w)
{
	if (w->flags & WQ_FLAG_EXCLUSIVE)
		list_add_tail(&w->entry, &wq->head);
	else
		list_add(&w->entry, &wq->head);
}

static void prepare(wait_queue_head_t *wq, wait_queue_entry_t *w, int state,
		    unsigned int flags)
{
	unsigned long irq;

	spin_lock_irqsave(&wq->lock, irq);
	w->flags = (w->flags & ~WQ_FLAG_EXCLUSIVE) | flags;
	if (list_empty(&w->entry))
		add_entry(wq, w);
	set_current_state(state);
	spin_unlock_irqrestore(&wq->lock, irq);
}

void prepare_to_wait(wait_queue_head_t *wq, wait_queue_entry_t *w, int state)
{
	prepare(wq, w, state, 0);
}

void prepare_to_wait_exclusive(wait_queue_head_t *wq, wait_queue_entry_t *w, int state)
{
	prepare(wq, w, state, WQ_FLAG_EXCLUSIVE);
}

/*
 * Always under the lock: a waker may be unlinking w right now, and w lives
 * on the waiter's stack.
 */
void finish_wait(wait_queue_head_t *wq, wait_queue_entry_t *w)
{
	unsigned long irq;

	__set_current_state(TASK_RUNNING);
	spin_lock_irqsave(&wq->lock, irq);
	if (!list_empty(&w->entry))
		list_del_init(&w->entry);
	spin_unlock_irqrestore(&wq->lock, irq);
}

/*
 * A woken entry leaves the queue (Linux's autoremove_wake_function), so the
 * next wake_up goes to the next exclusive waiter; a waiter that finds its
 * condition still false queues itself again. An entry whose task was
 * already running stays, and does not use up an exclusive wake-up.
 */
int __wake_up_locked(wait_queue_head_t *wq, int nr_exclusive)
{
	wait_queue_entry_t *w, *next;
	int woken = 0;

	list_for_each_entry_safe(w, next, &wq->head, entry) {
		bool exclusive = w->flags & WQ_FLAG_EXCLUSIVE;

		if (!wake_up_process(w->task))
			continue;
		list_del_init(&w->entry);
		woken++;
		if (exclusive && nr_exclusive && --nr_exclusive == 0)
			break;
	}
	return woken;
}

int __wake_up(wait_queue_head_t *wq, int nr_exclusive)
{
	unsigned long irq;
	int woken;

	spin_lock_irqsave(&wq->lock, irq);
	woken = __wake_up_locked(wq, nr_exclusive);
	spin_unlock_irqrestore(&wq->lock, irq);
	return woken;
}

/*
 * poll and select (fs/select.c) wait on many queues at once: the entry is
 * queued without touching the task's state (the caller sets it first, as
 * for prepare_to_wait), and only when it is not queued already: a wake-up
 * takes a woken entry off, and the next pass puts it back.
 */
void add_wait_queue(wait_queue_head_t *wq, wait_queue_entry_t *w)
{
	unsigned long irq;

	spin_lock_irqsave(&wq->lock, irq);
	if (list_empty(&w->entry))
		add_entry(wq, w);
	spin_unlock_irqrestore(&wq->lock, irq);
}

void remove_wait_queue(wait_queue_head_t *wq, wait_queue_entry_t *w)
{
	unsigned long irq;

	spin_lock_irqsave(&wq->lock, irq);
	if (!list_empty(&w->entry))
		list_del_init(&w->entry);
	spin_unlock_irqrestore(&wq->lock, irq);
}
