/*
 * msync (include/quire/mmap.h, docs/mm/mremap.md), Linux 6.12's checks and
 * errno values: -EINVAL for unknown flags, MS_ASYNC with MS_SYNC, or an
 * unaligned start; -ENOMEM when the range has a hole (with MS_ASYNC alone
 * at once; otherwise after the VMAs that are there). Quire's files (ramfs,
 * the RAM files behind shared anonymous memory) live in the page cache and
 * nowhere else, so there is nothing to write back (MS_SYNC, MS_ASYNC) and
 * no other copy to invalidate mappings against (MS_INVALIDATE): a valid
 * call returns 0 having changed nothing. MS_INVALIDATE on locked memory
 * (Linux: -EBUSY) cannot happen: there is no mlock.
 */
#include <quire/mmap.h>
#include <quire/syscalls.h>
#include <quire/sched.h>
#include <quire/errno.h>

long do_msync(struct mm_struct *mm, unsigned long start, unsigned long len, unsigned long flags)
{
	struct vm_area_struct *vma;
	unsigned long end;
	long err, unmapped = 0;

	if (flags & ~(unsigned long)(MS_ASYNC | MS_INVALIDATE | MS_SYNC))
		return -EINVAL;
	if (start & (PAGE_SIZE - 1))
		return -EINVAL;
	if ((flags & MS_ASYNC) && (flags & MS_SYNC))
		return -EINVAL;
	len = ALIGN_UP(len, PAGE_SIZE);
	end = start + len;
	if (end < start)
		return -ENOMEM;
	if (end == start)
		return 0;
	down_read(&mm->mmap_lock);
	vma = find_vma(mm, start);
	for (;;) {
		err = -ENOMEM;
		if (!vma)
			break;
		if (start < vma->vm_start) {
			/* A hole: MS_ASYNC alone stops here, the others go on and report it at the end. */
			if (flags == MS_ASYNC)
				break;
			start = vma->vm_start;
			if (start >= end)
				break;
			unmapped = -ENOMEM;
		}
		/* MS_SYNC of a shared file mapping would write [start, min(end, vm_end)) back here. */
		start = vma->vm_end;
		err = 0;
		if (start >= end)
			break;
		vma = vma->vm_list.next == &mm->vmas ? NULL :
		      list_entry(vma->vm_list.next, struct vm_area_struct, vm_list);
	}
	up_read(&mm->mmap_lock);
	return err ? err : unmapped;
}

long sys_msync(u64 start, u64 len, u64 flags, u64 a3, u64 a4, u64 a5)
{
	return do_msync(current->mm, start, len, flags);
}
