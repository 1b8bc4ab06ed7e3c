/*
 * Poisoned memory (Linux's memory_failure()). Today only the queue exists:
 * a machine-check-safe copy that met a poisoned page queues its frame here
 * and the copy's caller fails with -EHWPOISON. Handling the page (marking
 * it, taking it out of the allocator, unmapping it from every process,
 * SIGBUS) is not implemented yet: memory_failure() says so and returns
 * -ENOSYS. See docs/mm/copy_mc.md.
 */
#ifndef QUIRE_MEMORY_FAILURE_H
#define QUIRE_MEMORY_FAILURE_H

#include <quire/types.h>

#define MF_ACTION_REQUIRED	(1 << 0)	/* Linux's flag values */

/* Queue pfn for memory_failure(); never fails (a full queue says so). */
void memory_failure_queue(unsigned long pfn, int flags);
/* How many times pfn was queued since boot (tests). */
unsigned long memory_failure_queued(unsigned long pfn);
/* Handle a poisoned frame: -ENOSYS for now, with a log line. */
int memory_failure(unsigned long pfn, int flags);

#endif
