/*
 * Waiting on many files at once (fs/select.c): poll(2), ppoll(2),
 * select(2) and pselect6(2), as Linux's.
 *
 * A file that can block says so with file_operations.poll:
 *
 *	static __poll_t pipe_poll(struct file *f, poll_table *pt)
 *	{
 *		poll_wait(f, &p->rd_wait, pt);	   first: queue on what wakes it
 *		return nonempty ? POLLIN | POLLRDNORM : 0;   then test
 *	}
 *
 * poll_wait queues the caller on wq (only on the first pass; later passes
 * pass pt with nothing to record); every wake_up of wq wakes it. The poll
 * function runs with the task already marked TASK_INTERRUPTIBLE (as a
 * prepare_to_wait caller tests its condition), so it must not sleep: a
 * spinlock or mutex_trylock, no mutex_lock, no user memory. A file
 * without poll is always ready for reading and writing (Linux's
 * DEFAULT_POLLMASK), as regular files, /dev/null and /proc files are.
 */
#ifndef QUIRE_POLL_H
#define QUIRE_POLL_H

#include <quire/types.h>
#include <quire/wait.h>
#include <quire/uapi/poll.h>

typedef unsigned int __poll_t;

#define DEFAULT_POLLMASK (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM)

struct file;
struct poll_table_chunk;

typedef struct poll_table {
	bool record;			/* the first pass: poll_wait queues */
	int error;			/* -ENOMEM when an entry could not be had */
	/*
	 * The longest sleep before the files are asked again (0: no limit):
	 * a file whose readiness no wake-up reports (the console when its
	 * input is polled, not interrupt driven) sets it.
	 */
	u64 max_sleep_ns;
	struct poll_table_chunk *chunks;
} poll_table;

/* Queue the polling task on wq, to be woken when f may have changed. */
void poll_wait(struct file *f, wait_queue_head_t *wq, poll_table *pt);
/* Ask for a new look after at most ns even without a wake-up. */
static inline void poll_recheck_after(poll_table *pt, u64 ns)
{
	if (pt && (!pt->max_sleep_ns || ns < pt->max_sleep_ns))
		pt->max_sleep_ns = ns;
}
/* What f is ready for now (POLL* bits), queueing on pt's first pass. */
__poll_t vfs_poll(struct file *f, poll_table *pt);

#endif
