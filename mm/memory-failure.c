/*
 * The queue of poisoned frames found by machine-check-safe copies
 * (include/quire/memory-failure.h). The frames stay queued: handling them
 * is not implemented yet, and memory_failure() says so.
 */
#include <quire/memory-failure.h>
#include <quire/spinlock.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/kernel.h>

#define MF_QUEUE_LEN	64

static DEFINE_SPINLOCK(mf_lock);
static struct { unsigned long pfn; int flags; } mf_queue[MF_QUEUE_LEN];
static unsigned int mf_queued;		/* entries used, at most MF_QUEUE_LEN */

int memory_failure(unsigned long pfn, int flags)
{
	pr_err("memory_failure: pfn %#lx: handling poisoned memory is not implemented (ENOSYS)\n",
	       pfn);
	return -ENOSYS;
}

void memory_failure_queue(unsigned long pfn, int flags)
{
	bool full;

	spin_lock(&mf_lock);
	full = mf_queued == MF_QUEUE_LEN;
	if (!full) {
		mf_queue[mf_queued].pfn = pfn;
		mf_queue[mf_queued].flags = flags;
		mf_queued++;
	}
	spin_unlock(&mf_lock);
	if (full)
		pr_err("memory_failure_queue: queue full, pfn %#lx not queued\n", pfn);
	else
		pr_debug("memory_failure_queue: pfn %#lx queued\n", pfn);
	memory_failure(pfn, flags);
}

unsigned long memory_failure_queued(unsigned long pfn)
{
	unsigned long n = 0;

	spin_lock(&mf_lock);
	for (unsigned int i = 0; i < mf_queued; i++)
		n += mf_queue[i].pfn == pfn;
	spin_unlock(&mf_lock);
	return n;
}
