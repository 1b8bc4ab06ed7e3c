/*
 * madvise(2): what a process tells the kernel about its memory, with
 * Linux 6.12's advice values and errno (docs/mm/faults.md, "madvise").
 *
 * do_madvise runs with mmap_lock held for writing: the hints Quire has
 * no use for (NORMAL, RANDOM, SEQUENTIAL, WILLNEED; COLD and PAGEOUT, with
 * no swap and no LRU) only check the range; DONTNEED and FREE drop pages;
 * DONTFORK/DOFORK and HUGEPAGE/NOHUGEPAGE change VMA flags.
 * madvise_populate runs without it: it faults pages in one at a time
 * through handle_mm_fault, which takes mmap_lock for reading itself.
 */
#define pr_fmt(fmt) "madvise: " fmt
#include <quire/mmap.h>
#include <quire/huge_mm.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <asm/page.h>
#include <asm/pgtable.h>
#include <quire/pte.h>
#include <quire/memory-failure.h>
#include <quire/rmap.h>

/* The range's end, or 0 with -EINVAL in *err; start == end is a range with nothing in it. */
static unsigned long madvise_end(unsigned long start, unsigned long len, int *err)
{
	unsigned long end = start + ALIGN_UP(len, PAGE_SIZE);

	*err = 0;
	/* Unaligned; a length that rounded up to 0 (a small negative one); wrapping around. */
	if (!IS_ALIGNED(start, PAGE_SIZE) || (len && !ALIGN_UP(len, PAGE_SIZE)) || end < start)
		*err = -EINVAL;
	return end;
}

/*
 * MADV_FREE, as DONTNEED: Linux may keep the pages until memory runs
 * short and reads then see either the old bytes or zeroes; dropping them
 * at once is one of the outcomes it allows. Only anonymous private
 * memory: a file mapping, or shared anonymous memory (a RAM file here,
 * shmem on Linux), is EINVAL when the walk reaches it.
 */
static int madvise_free(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	unsigned long addr = start;

	while (addr < end) {
		struct vm_area_struct *v = find_vma(mm, addr);

		if (!v || v->vm_start > addr)
			return -ENOMEM;
		if (v->vm_file)
			return -EINVAL;
		zap_page_range_single(v, addr, min(v->vm_end, end));
		addr = v->vm_end;
	}
	return 0;
}

int do_madvise(struct mm_struct *mm, unsigned long start, unsigned long len, int advice)
{
	int err;
	unsigned long end = madvise_end(start, len, &err);

	mmap_assert_write_locked(mm);
	if (err)
		return err;
	switch (advice) {
	case MADV_NORMAL:
	case MADV_RANDOM:
	case MADV_SEQUENTIAL:
	case MADV_WILLNEED:
		/* Hints Quire has no use for (no readahead): only the range is checked. */
	case MADV_COLD:
	case MADV_PAGEOUT:
		/* No swap and no LRU: nothing to age or reclaim; the data stays. */
		return for_each_vma_part(mm, start, end, NULL);
	case MADV_DONTNEED:
		/* Zaps the pages, never splits a VMA (one call per page stays one VMA). */
		return for_each_vma_part(mm, start, end, zap_page_range_single);
	case MADV_FREE:
		return madvise_free(mm, start, end);
	case MADV_DONTFORK:
		return modify_vma_flags(mm, start, end, 0, VM_DONTCOPY, false);
	case MADV_DOFORK:
		return modify_vma_flags(mm, start, end, VM_DONTCOPY, 0, false);
	case MADV_HUGEPAGE:
		/* Which folio sizes a fault may use (thp_vma_allowable_orders). */
		return modify_vma_flags(mm, start, end, VM_NOHUGEPAGE, VM_HUGEPAGE, false);
	case MADV_NOHUGEPAGE:
		return modify_vma_flags(mm, start, end, VM_HUGEPAGE, VM_NOHUGEPAGE, false);
	case MADV_COLLAPSE:
		return madvise_collapse(mm, start, end);
	case MADV_POPULATE_READ:
	case MADV_POPULATE_WRITE:
		/* It faults, which takes mmap_lock: callers use madvise_populate, unlocked. */
		pr_err("do_madvise: MADV_POPULATE_* under mmap_lock; use madvise_populate\n");
		return -EINVAL;
	default:
		return -EINVAL;
	}
}

/* A failed populating fault in madvise's terms (Linux's madvise_populate). */
static int populate_errno(int fault)
{
	switch (fault) {
	case -EFAULT:		/* the VMA went away meanwhile */
		return -ENOMEM;
	case -EACCES:		/* ... or lost the permission */
		return -EINVAL;
	case -EIO:		/* past the end of a mapped file: what would be SIGBUS */
		return -EFAULT;
	case -EHWPOISON:
	case -ENOMEM:
		return fault;
	default:
		pr_warn("madvise_populate: fault returned %d; -ENOMEM\n", fault);
		return -ENOMEM;
	}
}

/*
 * Each VMA is checked under mmap_lock (read) as Linux's GUP does for
 * populate: none at an address is ENOMEM (a stack VMA is not grown
 * downwards), one without VM_READ (for a read) or VM_WRITE (for a write)
 * is EINVAL, before any of its pages is touched; pages of the VMAs before
 * stay populated. A write fault breaks copy-on-write, as a store would.
 */
int madvise_populate(struct mm_struct *mm, unsigned long start, unsigned long len, bool write)
{
	unsigned long need = write ? VM_WRITE : VM_READ;
	int err;
	unsigned long end = madvise_end(start, len, &err), addr = start;

	if (err)
		return err;
	while (addr < end) {
		struct vm_area_struct *v;
		unsigned long stop = addr;

		down_read(&mm->mmap_lock);
		v = find_vma(mm, addr);
		if (!v || v->vm_start > addr)
			err = -ENOMEM;
		else if (!(v->vm_flags & need))
			err = -EINVAL;
		else
			stop = min(v->vm_end, end);
		up_read(&mm->mmap_lock);
		if (err)
			return err;
		/* handle_mm_fault takes mmap_lock itself: not held here. */
		for (; addr < stop; addr += PAGE_SIZE) {
			int fault = handle_mm_fault(mm, addr, write ? FAULT_FLAG_WRITE : 0);

			if (fault)
				return populate_errno(fault);
		}
	}
	return 0;
}

/* ---- MADV_HWPOISON ---- */

/* The frame mapped at addr, faulted in for reading (0: none), and its folio's size. */
static unsigned long user_page_pfn(struct mm_struct *mm, unsigned long addr, unsigned long *size)
{
	unsigned long pfn = 0;
	pte_t *pmd, *pte;

	if (handle_mm_fault(mm, addr, 0))
		return 0;
	down_read(&mm->mmap_lock);
	pmd = pmd_lookup(mm->pgd, addr, false);
	if (pmd && pmd_leaf(ptep_get(pmd)))
		pfn = pmd_pfn(ptep_get(pmd)) + ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT);
	else if ((pte = pte_lookup(mm->pgd, addr, false)) && pte_present(ptep_get(pte)))
		pfn = pte_pfn(ptep_get(pte));
	if (pfn)
		*size = PAGE_SIZE << folio_order(page_folio(pfn_to_page(pfn)));
	up_read(&mm->mmap_lock);
	return pfn;
}

int madvise_inject_error(struct mm_struct *mm, unsigned long start, unsigned long len,
			 int advice)
{
	unsigned long end, size = PAGE_SIZE;
	int err;

	end = madvise_end(start, len, &err);
	if (err)
		return err;
	/* A large folio counts once, by its first page's error, as Linux steps by its size. */
	for (unsigned long addr = start; addr < end; addr += size) {
		unsigned long pfn = user_page_pfn(mm, addr, &size);

		if (!pfn)
			return -EFAULT;
		if (advice == MADV_SOFT_OFFLINE) {
			pr_info("Soft offlining pfn %#lx at process virtual address %#lx\n", pfn, addr);
			err = soft_offline_page(pfn, MF_COUNT_INCREASED);
		} else {
			pr_info("Injecting memory failure for pfn %#lx at process virtual address %#lx\n",
				pfn, addr);
			err = memory_failure(pfn, MF_ACTION_REQUIRED | MF_COUNT_INCREASED |
					     MF_SW_SIMULATED);
		}
		if (err)
			return err;
	}
	return 0;
}
