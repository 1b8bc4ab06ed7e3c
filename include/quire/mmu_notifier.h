/*
 * MMU interval notifiers (mm/mmu_notifier.c, docs/mm/mmu_notifier.md):
 * how a device that keeps its own copy of some of a process's page
 * tables (a device page table, an IOMMU's) hears that the CPU's ones
 * change. Linux's names and protocol.
 *
 * A driver registers a range of an mm with mmu_interval_notifier_insert.
 * Every path that takes away or weakens a translation (munmap, madvise,
 * mprotect, fork's write-protect, copy-on-write, migration, a PMD split,
 * mremap, soft-dirty clearing, collapse, memory failure, exit) brackets
 * the change with
 *
 *	mmu_notifier_range_init(&range, MMU_NOTIFY_..., 0, mm, start, end);
 *	mmu_notifier_invalidate_range_start(&range);
 *	... change the PTEs, flush the TLB ...
 *	mmu_notifier_invalidate_range_end(&range);
 *
 * and start calls the invalidate op of every notifier overlapping
 * [start, end): the driver drops its copies there. Neither may be called
 * with a spinlock held (the op may sleep, as Linux's blockable ranges).
 *
 * The driver's side, the sequence-count retry (a mirror never uses a
 * translation read while an invalidation ran):
 *
 *	again:
 *	seq = mmu_interval_read_begin(sub);	(waits out a running invalidation)
 *	... read the CPU page tables (hmm_range_fault) ...
 *	lock(driver);
 *	if (mmu_interval_read_retry(sub, seq)) { unlock(driver); goto again; }
 *	... install in the device page table ...
 *	unlock(driver);
 *
 * and its invalidate op, under the same driver lock, calls
 * mmu_interval_set_seq(sub, cur_seq) before dropping its copies.
 */
#ifndef QUIRE_MMU_NOTIFIER_H
#define QUIRE_MMU_NOTIFIER_H

#include <quire/types.h>
#include <quire/compiler.h>
#include <quire/list.h>
#include <quire/atomic.h>
#include <quire/spinlock.h>
#include <quire/mmap.h>

struct mmu_interval_notifier;

/* Why the translations change (Linux's values). */
enum mmu_notifier_event {
	MMU_NOTIFY_UNMAP = 0,		/* the range is unmapped (munmap, mremap's old range, exit) */
	MMU_NOTIFY_CLEAR,		/* entries cleared or replaced (madvise, COW, split, collapse) */
	MMU_NOTIFY_PROTECTION_VMA,	/* mprotect */
	MMU_NOTIFY_PROTECTION_PAGE,	/* fork write-protects the parent's private pages */
	MMU_NOTIFY_SOFT_DIRTY,		/* clear_refs 4 write-protects for soft-dirty */
	MMU_NOTIFY_RELEASE,		/* the mm goes away (mmu_notifier_release) */
	MMU_NOTIFY_MIGRATE,		/* page migration installs migration entries */
	MMU_NOTIFY_EXCLUSIVE,		/* device-exclusive entries */
};

#define MMU_NOTIFIER_RANGE_BLOCKABLE	(1 << 0)

struct mmu_notifier_range {
	struct mm_struct *mm;
	unsigned long start, end;	/* [start, end) */
	unsigned int flags;
	enum mmu_notifier_event event;
	void *owner;			/* MMU_NOTIFY_MIGRATE: the migrating device's, or NULL */
	/*
	 * Start counted this range as running: end must uncount it. (The
	 * mm's first notifier may come between a start and its end: the
	 * paths that walk the rmap run without mmap_lock.)
	 */
	bool counted;
};

struct mmu_interval_notifier_ops {
	/*
	 * The range overlapping this notifier's is about to change: drop
	 * what the device holds there, after mmu_interval_set_seq(sub,
	 * cur_seq) under the lock the driver's read side checks retry under.
	 * Returns true (false is for non-blockable ranges, which Quire never
	 * makes).
	 */
	bool (*invalidate)(struct mmu_interval_notifier *sub,
			   const struct mmu_notifier_range *range, unsigned long cur_seq);
};

struct mmu_interval_notifier {
	struct list_head node;		/* the mm's list, or its deferred list */
	const struct mmu_interval_notifier_ops *ops;
	struct mm_struct *mm;		/* a reference (mmgrab) while inserted */
	unsigned long start, last;	/* [start, last], as Linux's interval tree */
	unsigned long invalidate_seq;
	bool inserted;
};

/*
 * One per mm that ever had a notifier (mm->notifier_subscriptions),
 * freed with the mm_struct. invalidate_seq is odd while an invalidation
 * that met a notifier runs; the list changes only while no invalidation
 * runs (inserts meanwhile wait on the deferred list).
 */
struct mmu_notifier_subscriptions {
	spinlock_t lock;
	struct list_head subs;
	struct list_head deferred;
	unsigned long invalidate_seq;
	unsigned long active_invalidate_ranges;
	unsigned long invalidating;	/* bit 0 set while invalidate_seq is odd (wait_on_bit) */
};

int mmu_interval_notifier_insert(struct mmu_interval_notifier *sub, struct mm_struct *mm,
				 unsigned long start, unsigned long length,
				 const struct mmu_interval_notifier_ops *ops);
void mmu_interval_notifier_remove(struct mmu_interval_notifier *sub);

unsigned long mmu_interval_read_begin(struct mmu_interval_notifier *sub);

/* Did an invalidation meet sub since read_begin returned seq? (under the driver's lock) */
static inline bool mmu_interval_read_retry(struct mmu_interval_notifier *sub, unsigned long seq)
{
	return READ_ONCE(sub->invalidate_seq) != seq;
}

/* The same, without the driver's lock: a hint to stop early. */
static inline bool mmu_interval_check_retry(struct mmu_interval_notifier *sub, unsigned long seq)
{
	return READ_ONCE(sub->invalidate_seq) != seq;
}

/* In the invalidate op, under the driver's lock. */
static inline void mmu_interval_set_seq(struct mmu_interval_notifier *sub, unsigned long cur_seq)
{
	WRITE_ONCE(sub->invalidate_seq, cur_seq);
}

static inline void mmu_notifier_range_init(struct mmu_notifier_range *range,
					   enum mmu_notifier_event event, unsigned int flags,
					   struct mm_struct *mm, unsigned long start,
					   unsigned long end)
{
	range->mm = mm;
	range->start = start;
	range->end = end;
	range->flags = flags | MMU_NOTIFIER_RANGE_BLOCKABLE;
	range->event = event;
	range->owner = NULL;
	range->counted = false;
}

void __mmu_notifier_invalidate_range_start(struct mmu_notifier_range *range);
void __mmu_notifier_invalidate_range_end(struct mmu_notifier_range *range);

/* Has mm ever had a notifier? (Cheap: the common case does nothing more.) */
static inline bool mm_has_notifiers(struct mm_struct *mm)
{
	return READ_ONCE(mm->notifier_subscriptions) != NULL;
}

static inline void mmu_notifier_invalidate_range_start(struct mmu_notifier_range *range)
{
	if (mm_has_notifiers(range->mm))
		__mmu_notifier_invalidate_range_start(range);
}

static inline void mmu_notifier_invalidate_range_end(struct mmu_notifier_range *range)
{
	if (range->counted)
		__mmu_notifier_invalidate_range_end(range);
}

/* Shorthand: init and start, for the callers that need nothing else. */
static inline void mmu_notifier_start(struct mmu_notifier_range *range,
				      enum mmu_notifier_event event, struct mm_struct *mm,
				      unsigned long start, unsigned long end)
{
	mmu_notifier_range_init(range, event, 0, mm, start, end);
	mmu_notifier_invalidate_range_start(range);
}

/* mm_struct teardown (__mmdrop): the subscriptions go, none may be left. */
void mmu_notifier_subscriptions_destroy(struct mm_struct *mm);

#endif
