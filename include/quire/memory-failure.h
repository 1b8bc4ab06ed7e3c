/*
 * Poisoned memory: Linux's memory_failure() (mm/memory-failure.c,
 * docs/mm/memory-failure.md). A frame with a memory error is marked
 * PG_hwpoison and never used again: a free one is taken out of the buddy
 * lists, a user page is split out of its large folio and unmapped from
 * every process (its PTEs become hwpoison entries: an access is SIGBUS
 * BUS_MCEERR_AR), a page-cache page stays in the cache so that reads of
 * it fail with EIO, a kernel page is left alone (counted as ignored).
 */
#ifndef QUIRE_MEMORY_FAILURE_H
#define QUIRE_MEMORY_FAILURE_H

#include <quire/types.h>

/* Linux's flag values. */
#define MF_ACTION_REQUIRED	(1 << 0)	/* the caller consumed it: SIGBUS now if it maps it */
#define MF_COUNT_INCREASED	(1 << 1)	/* (accepted, as Linux's) */
#define MF_SW_SIMULATED		(1 << 5)	/* MADV_HWPOISON: an error made up by software */

/* What happened to a frame (Linux's enum mf_result, its sysfs counters). */
enum mf_result {
	MF_IGNORED,	/* nothing could be done: a kernel page */
	MF_FAILED,	/* could not be isolated (a large folio that would not split) */
	MF_DELAYED,	/* will be handled later */
	MF_RECOVERED,	/* isolated: never used again */
	NR_MF_RESULTS
};

/*
 * Handle a poisoned frame, in process context (it sleeps): 0 when it was
 * isolated; -EHWPOISON when it was poisoned already; -EBUSY when it could
 * not be (a kernel page, a split that failed: counted); -ENXIO for a frame
 * with no memory behind it. With MF_ACTION_REQUIRED and the caller mapping
 * the page, the caller gets SIGBUS BUS_MCEERR_AR at that address.
 */
int memory_failure(unsigned long pfn, int flags);
/*
 * Linux's soft_offline_page: take a frame that still works out of service
 * without losing anything. A free frame leaves the buddy lists; a user
 * page (split out of its large folio first) moves to another frame by
 * migration, and the old frame is poisoned as the migration lets it go.
 * Nobody is signalled. 0 when done or poisoned already; -EBUSY when the
 * page could not move (an extra reference, a pin, a failed split); -EIO
 * for a kernel page; -ENXIO for no frame. Sleeps.
 */
int soft_offline_page(unsigned long pfn, int flags);
/*
 * Queue pfn for memory_failure() in process context; callable from any
 * context, the #MC handler's included. The kernel's worker
 * (memory_failure_kick) runs the queue; a full queue says so.
 */
void memory_failure_queue(unsigned long pfn, int flags);
/* Run what is queued (the worker; host tests). */
void memory_failure_process_queue(void);
/* Set by the kernel's worker: wakes it (may be called from any context). */
extern void (*memory_failure_kick)(void);
/* kernel/memory_failure_worker.c: start the worker (boot). */
void memory_failure_worker_start(void);
/* Is memory_failure() working on pfn now (marked, maybe not unmapped yet)? For mm_verify. */
bool memory_failure_busy(unsigned long pfn);
/* How many times pfn was queued since boot (tests). */
unsigned long memory_failure_queued(unsigned long pfn);
/* Frames poisoned since boot (/proc/meminfo HardwareCorrupted). */
unsigned long num_poisoned_pages(void);
/* Frames of node nid with each result (sysfs nodeN/memory_failure/). */
unsigned long memory_failure_stat(int nid, enum mf_result r);

/*
 * Early kill (docs/mm/memory-failure.md): a process that maps a page when
 * memory_failure() takes it away may ask to hear of it at once, SIGBUS
 * BUS_MCEERR_AO, instead of when it touches the page. Per thread, set by
 * prctl(PR_MCE_KILL) (task->mce_kill, Linux's PF_MCE_PROCESS and
 * PF_MCE_EARLY); a thread that set nothing follows
 * /proc/sys/vm/memory_failure_early_kill (0 or 1; 0 by default, as Linux).
 */
#define MCE_KILL_PROCESS	0x1	/* the thread chose: MCE_KILL_EARLY says which */
#define MCE_KILL_EARLY		0x2
extern int sysctl_memory_failure_early_kill;
struct mm_struct;
/*
 * kernel/mce_kill.c: SIGBUS BUS_MCEERR_AO at addr to the early-kill thread
 * of each process whose address space is mm. Takes spinlocks only.
 */
void memory_failure_kill_early(struct mm_struct *mm, unsigned long addr);
/*
 * kernel/mce_kill.c: the machine check the current thread took in user
 * mode (task->mce_addr): memory_failure(MF_ACTION_REQUIRED) for its frame,
 * which sends the SIGBUS; SIGBUS anyway when it fails. Run on the way back
 * to user mode (exit_to_user_mode), in process context: it sleeps.
 */
void mce_kill_me_maybe(void);
/* task->mce_addr of a machine check without an address: SIGBUS, nothing to poison. */
#define MCE_ADDR_NONE	(~0ULL)
/* kernel/mce_kill.c: prctl's PR_MCE_KILL (how, policy) and PR_MCE_KILL_GET, Linux's errors. */
long prctl_mce_kill(u64 how, u64 policy, u64 a4, u64 a5);
long prctl_mce_kill_get(u64 a2, u64 a3, u64 a4, u64 a5);

/*
 * Linux's unpoison_memory (debugfs hwpoison/unpoison-pfn), for tests: give
 * a frame poisoned by software (MADV_HWPOISON, corrupt-pfn, soft offline)
 * back to the allocator. 0; -EBUSY when it is not poisoned, still in use
 * (a reference, a page-cache page, a kernel page), or, Quire's own rule
 * (mm_verify, invariant 7), a hwpoison entry in some page table still
 * names it; -EOPNOTSUPP once a real machine check poisoned any frame (as
 * Linux); -ENXIO for no frame. Holds every mmap_lock for a moment (as
 * mm_verify_system): the caller holds none. Sleeps.
 */
int unpoison_memory(unsigned long pfn);

/* mm/page_alloc.c: take a free frame out of the buddy lists for good. */
struct page;
bool take_page_off_buddy(struct page *page);
/*
 * mm/page_alloc.c: a poisoned frame kept out of the allocator (no
 * reference) goes back to the free lists, unmarked. false when it is not
 * such a frame.
 */
bool put_page_back_buddy(struct page *page);

#endif
