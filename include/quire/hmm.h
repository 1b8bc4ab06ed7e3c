/*
 * hmm_range_fault (mm/hmm.c, docs/mm/mmu_notifier.md): a snapshot of a
 * range of a process's page tables for a device, as Linux's (its names,
 * flag bits and errors), faulting in what the caller asks for. Used with
 * an MMU interval notifier's sequence count:
 *
 *	range.notifier_seq = mmu_interval_read_begin(range.notifier);
 *	mmap_read_lock; ret = hmm_range_fault(&range); mmap_read_unlock;
 *	-EBUSY: an invalidation met the notifier meanwhile: start again.
 *
 * Each hmm_pfns[] word, on output: the page frame number in the low bits,
 * HMM_PFN_VALID when a page is mapped (HMM_PFN_WRITE when writable, the
 * mapping's order above HMM_PFN_ORDER_SHIFT), HMM_PFN_ERROR where the
 * range cannot be read, 0 where nothing is mapped and nothing was asked.
 * On input, the request per page: (word & pfn_flags_mask) |
 * default_flags, HMM_PFN_REQ_FAULT to fault a page in (read),
 * HMM_PFN_REQ_WRITE to fault it writable.
 */
#ifndef QUIRE_HMM_H
#define QUIRE_HMM_H

#include <quire/types.h>
#include <quire/mmu_notifier.h>

#define HMM_PFN_VALID		(1UL << 63)
#define HMM_PFN_WRITE		(1UL << 62)
#define HMM_PFN_ERROR		(1UL << 61)
#define HMM_PFN_ORDER_SHIFT	56
#define HMM_PFN_FLAGS		(0xffUL << HMM_PFN_ORDER_SHIFT)
#define HMM_PFN_REQ_FAULT	HMM_PFN_VALID
#define HMM_PFN_REQ_WRITE	HMM_PFN_WRITE

struct hmm_range {
	struct mmu_interval_notifier *notifier;	/* its mm is the one walked */
	unsigned long notifier_seq;		/* from mmu_interval_read_begin */
	unsigned long start, end;		/* page aligned, [start, end) */
	unsigned long *hmm_pfns;		/* (end - start) >> PAGE_SHIFT words */
	unsigned long default_flags;
	unsigned long pfn_flags_mask;
	void *dev_private_owner;		/* device-private pages of this owner are reported, not faulted */
};

/*
 * Fill range->hmm_pfns. mmap_lock held for reading. 0; -EBUSY (the
 * notifier's sequence moved: start again from read_begin); -EFAULT (a
 * page asked for could not be faulted in: no VMA, no access, a memory
 * error, past the end of a file); -EPERM (a write asked of a VMA without
 * VM_WRITE); -ENOMEM; -EINVAL (a bad range).
 */
int hmm_range_fault(struct hmm_range *range);

static inline unsigned long hmm_pfn_to_pfn(unsigned long hmm_pfn)
{
	return hmm_pfn & ~HMM_PFN_FLAGS;	/* (the flags are the top 8 bits) */
}

static inline unsigned int hmm_pfn_to_map_order(unsigned long hmm_pfn)
{
	return (hmm_pfn >> HMM_PFN_ORDER_SHIFT) & 0x1f;
}

#endif
