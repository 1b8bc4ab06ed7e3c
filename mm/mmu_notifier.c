/*
 * MMU interval notifiers (include/quire/mmu_notifier.h has the protocol;
 * docs/mm/mmu_notifier.md the why). Written from Linux's interface; the
 * structure is simpler: an mm's notifiers are a list, not an interval
 * tree (a handful per mm; a tree is a later change behind the same calls).
 *
 * The sequence count. subs->invalidate_seq is even while no invalidation
 * that met a notifier runs. The first range_start that overlaps a
 * notifier makes it odd and passes it to the ops as cur_seq; the ops
 * store it in their notifier (mmu_interval_set_seq). When the last
 * running range ends, it becomes even again and the waiters wake. So:
 *  - read_begin finds sub->invalidate_seq == subs->invalidate_seq exactly
 *    when an invalidation that met sub still runs: it waits for the end;
 *  - read_retry sees sub->invalidate_seq change exactly when an
 *    invalidation met sub after read_begin.
 *
 * The list. range_start walks it without the lock, so it changes only
 * while no range runs (active_invalidate_ranges == 0): an insert
 * meanwhile goes on the deferred list (range_end moves it over), and a
 * remove waits for the running ranges to end.
 */
#include <quire/mmu_notifier.h>
#include <quire/mmap.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/wait_bit.h>
#include <quire/debug_locks.h>

/*
 * Bits of subs->invalidating, each changed under subs->lock and waited on
 * with wait_on_bit: MN_INVALIDATING while invalidate_seq is odd,
 * MN_ACTIVE while active_invalidate_ranges is not 0.
 */
#define MN_INVALIDATING	0
#define MN_ACTIVE	1

static void mn_set(struct mmu_notifier_subscriptions *subs, int bit)
{
	lockdep_assert_held(&subs->lock);
	(void)test_and_set_bit_lock(&subs->invalidating, bit);
}

static void mn_clear(struct mmu_notifier_subscriptions *subs, int bit)
{
	lockdep_assert_held(&subs->lock);
	clear_bit_unlock_wake(&subs->invalidating, bit);
}

static bool overlaps(const struct mmu_interval_notifier *sub, unsigned long start,
		     unsigned long end)
{
	return sub->start < end && start <= sub->last;
}

/*
 * The mm's subscriptions, made on first use under mmap_lock held for
 * writing (one maker; the paths that change translations under mmap_lock
 * see them whole). Only that first insert takes the lock, as Linux's.
 */
static struct mmu_notifier_subscriptions *get_subscriptions(struct mm_struct *mm)
{
	struct mmu_notifier_subscriptions *subs =
		__atomic_load_n(&mm->notifier_subscriptions, __ATOMIC_ACQUIRE);

	if (subs)
		return subs;
	down_write(&mm->mmap_lock);
	subs = mm->notifier_subscriptions;
	if (subs) {
		up_write(&mm->mmap_lock);
		return subs;
	}
	subs = kzalloc(sizeof(*subs), GFP_KERNEL);
	if (!subs) {
		up_write(&mm->mmap_lock);
		return NULL;
	}
	spin_lock_init(&subs->lock);
	INIT_LIST_HEAD(&subs->subs);
	INIT_LIST_HEAD(&subs->deferred);
	/* Published after its fields: range_start reads it without the lock. */
	__atomic_store_n(&mm->notifier_subscriptions, subs, __ATOMIC_RELEASE);
	up_write(&mm->mmap_lock);
	return subs;
}

/*
 * Watch [start, start + length) of mm. The mm's first insert takes
 * mmap_lock for writing (so not with it held, as Linux's
 * mmu_interval_notifier_insert). Takes a reference to the mm_struct until
 * the remove. -EINVAL for an empty or wrapping range or no op, -ENOMEM.
 */
int mmu_interval_notifier_insert(struct mmu_interval_notifier *sub, struct mm_struct *mm,
				 unsigned long start, unsigned long length,
				 const struct mmu_interval_notifier_ops *ops)
{
	struct mmu_notifier_subscriptions *subs;

	if (!length || start + length - 1 < start || !ops || !ops->invalidate)
		return -EINVAL;
	subs = get_subscriptions(mm);
	if (!subs)
		return -ENOMEM;
	sub->ops = ops;
	sub->mm = mm;
	sub->start = start;
	sub->last = start + length - 1;
	mmgrab(mm);
	spin_lock(&subs->lock);
	if (subs->active_invalidate_ranges) {
		/*
		 * Ranges run: the list must not change under them. The new
		 * notifier waits on the deferred list, and its first
		 * read_begin waits for them to end (the sequence made odd if
		 * it was not: a range that met nobody ends by making it even).
		 */
		subs->invalidate_seq |= 1;
		mn_set(subs, MN_INVALIDATING);
		sub->invalidate_seq = subs->invalidate_seq;
		list_add_tail(&sub->node, &subs->deferred);
	} else {
		/* Not the running sequence: read_begin does not wait. */
		sub->invalidate_seq = subs->invalidate_seq - 1;
		list_add_tail(&sub->node, &subs->subs);
	}
	sub->inserted = true;
	spin_unlock(&subs->lock);
	return 0;
}

/*
 * Stop watching. Waits until no invalidation runs in the mm (none calls
 * the op any more once this returns), so it may not be called from the
 * op. Drops the mm_struct reference.
 */
void mmu_interval_notifier_remove(struct mmu_interval_notifier *sub)
{
	struct mm_struct *mm = sub->mm;
	struct mmu_notifier_subscriptions *subs = mm->notifier_subscriptions;

	BUG_ON(!sub->inserted);
	might_sleep();
	for (;;) {
		spin_lock(&subs->lock);
		if (!subs->active_invalidate_ranges)
			break;
		spin_unlock(&subs->lock);
		wait_on_bit(&subs->invalidating, MN_ACTIVE);
	}
	list_del(&sub->node);
	sub->inserted = false;
	spin_unlock(&subs->lock);
	mmdrop(mm);
}

/*
 * The sequence to check mmu_interval_read_retry against, once the
 * invalidation that last met sub (if it still runs) has ended.
 */
unsigned long mmu_interval_read_begin(struct mmu_interval_notifier *sub)
{
	struct mmu_notifier_subscriptions *subs = sub->mm->notifier_subscriptions;
	unsigned long seq;

	might_sleep();
	spin_lock(&subs->lock);
	seq = sub->invalidate_seq;
	spin_unlock(&subs->lock);
	/* Odd and current: that invalidation runs. Wait until the count moves on. */
	while (READ_ONCE(subs->invalidate_seq) == seq)
		wait_on_bit(&subs->invalidating, MN_INVALIDATING);
	return seq;
}

void __mmu_notifier_invalidate_range_start(struct mmu_notifier_range *range)
{
	struct mmu_notifier_subscriptions *subs = 
		__atomic_load_n(&range->mm->notifier_subscriptions, __ATOMIC_ACQUIRE);
	struct mmu_interval_notifier *sub;
	unsigned long cur_seq;
	bool met = false;

	might_sleep();
	spin_lock(&subs->lock);
	if (!subs->active_invalidate_ranges++)
		mn_set(subs, MN_ACTIVE);
	range->counted = true;
	list_for_each_entry(sub, &subs->subs, node)
		met |= overlaps(sub, range->start, range->end);
	if (met && !(subs->invalidate_seq & 1)) {
		subs->invalidate_seq++;
		mn_set(subs, MN_INVALIDATING);
	}
	cur_seq = subs->invalidate_seq;
	spin_unlock(&subs->lock);
	if (!met)
		return;
	/* The list cannot change while this range is counted active. */
	list_for_each_entry(sub, &subs->subs, node) {
		if (!overlaps(sub, range->start, range->end))
			continue;
		if (!sub->ops->invalidate(sub, range, cur_seq))
			pr_warn("mmu_notifier: an invalidate op failed a blockable range\n");
	}
}

void __mmu_notifier_invalidate_range_end(struct mmu_notifier_range *range)
{
	struct mmu_notifier_subscriptions *subs = range->mm->notifier_subscriptions;

	range->counted = false;
	spin_lock(&subs->lock);
	BUG_ON(!subs->active_invalidate_ranges);
	if (!--subs->active_invalidate_ranges) {
		list_splice_tail_init(&subs->deferred, &subs->subs);
		if (subs->invalidate_seq & 1) {
			subs->invalidate_seq++;
			mn_clear(subs, MN_INVALIDATING);
		}
		mn_clear(subs, MN_ACTIVE);
	}
	spin_unlock(&subs->lock);
}

void mmu_notifier_subscriptions_destroy(struct mm_struct *mm)
{
	struct mmu_notifier_subscriptions *subs = mm->notifier_subscriptions;

	if (!subs)
		return;
	/* Every notifier holds the mm_struct: none can be left when it goes. */
	BUG_ON(!list_empty(&subs->subs) || !list_empty(&subs->deferred));
	kfree(subs);
	mm->notifier_subscriptions = NULL;
}
