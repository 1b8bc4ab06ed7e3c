/*
 * process_vm_readv (310) and process_vm_writev (311): copy between the
 * caller's memory and another process's (or its own) through GUP, as
 * Linux 6.12's mm/process_vm_access.c does (docs/mm/gup.md):
 *
 *	flags not 0					EINVAL
 *	the local iovec array: over UIO_MAXIOV		EINVAL; unreadable: EFAULT
 *	nothing to copy locally				0
 *	the remote iovec array: over UIO_MAXIOV,
 *	    a negative length				EINVAL; unreadable: EFAULT
 *	no remote byte					0
 *	no such process, or it has no mm		ESRCH
 *
 * then each remote iovec is pinned a few pages at a time
 * (pin_user_pages_remote, FOLL_WRITE for a write; mmap_lock dropped
 * before the copy) and copied from or to the local iovecs. A remote page
 * that cannot be pinned, or a local fault, stops the copy: the bytes
 * copied so far, or EFAULT when none. Quire has no credentials: any
 * process may access any other (Linux: PTRACE_MODE_ATTACH_REALCREDS).
 */
#include <quire/syscalls.h>
#include <quire/gup.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/uaccess.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/kernel.h>

#define PVM_MAX_PAGES	16	/* pinned at a time */

/* Where the copy stands in the local iovecs. */
struct local_iter {
	const struct iovec *iov;
	u32 nr, idx;
	u64 off;		/* into iov[idx] */
	u64 left;		/* bytes left in all of them */
};

/* Copy len bytes between kaddr and the local iovecs: how many moved (less: a fault). */
static u64 copy_local(struct local_iter *it, void *kaddr, u64 len, bool to_remote)
{
	u64 done = 0;

	while (done < len && it->left) {
		const struct iovec *v = &it->iov[it->idx];
		u64 n = min(len - done, v->iov_len - it->off), miss;
		void *u = (void *)(uintptr_t)(v->iov_base + it->off);

		if (!n) {
			it->idx++;
			it->off = 0;
			continue;
		}
		miss = to_remote ? copy_from_user((u8 *)kaddr + done, u, n)
				 : copy_to_user(u, (u8 *)kaddr + done, n);
		done += n - miss;
		it->off += n - miss;
		it->left -= n - miss;
		if (miss)
			break;
	}
	return done;
}

/* One remote iovec: 0, or -EFAULT (a remote page not pinned, a local fault). */
static long rw_single_vec(struct mm_struct *mm, u64 addr, u64 len, struct local_iter *it,
			  bool write)
{
	struct page *pages[PVM_MAX_PAGES];
	u64 off = addr & ~PAGE_MASK, pa = addr & PAGE_MASK;
	unsigned long nr;

	if (!len)
		return 0;
	nr = (unsigned long)((addr + len - 1) / PAGE_SIZE - addr / PAGE_SIZE + 1);
	while (nr && it->left) {
		long pinned;
		u64 bytes, done = 0;

		down_read(&mm->mmap_lock);
		pinned = pin_user_pages_remote(mm, pa, min(nr, (unsigned long)PVM_MAX_PAGES),
					       write ? FOLL_WRITE : 0, pages, NULL);
		up_read(&mm->mmap_lock);
		if (pinned <= 0)
			return -EFAULT;
		bytes = min((u64)pinned * PAGE_SIZE - off, len);
		for (long i = 0; i < pinned && done < bytes; i++) {
			u64 n = min(PAGE_SIZE - off, bytes - done), moved;

			moved = copy_local(it, (u8 *)page_address(pages[i]) + off, n, write);
			done += moved;
			off = 0;
			if (moved < n && it->left) {
				unpin_user_pages_dirty_lock(pages, (unsigned long)pinned, write);
				return -EFAULT;
			}
		}
		unpin_user_pages_dirty_lock(pages, (unsigned long)pinned, write);
		len -= bytes;
		nr -= (unsigned long)pinned;
		pa += (u64)pinned * PAGE_SIZE;
	}
	return 0;
}

static long process_vm_rw(u64 pid, u64 lvec, u64 liovcnt, u64 rvec, u64 riovcnt, u64 flags,
			  bool write)
{
	struct iovec *local = NULL, *remote = NULL;
	struct local_iter it = { 0 };
	struct mm_struct *mm = NULL;
	u64 total = 0, before;
	long rc;

	if (flags)
		return -EINVAL;
	if (liovcnt > UIO_MAXIOV || riovcnt > UIO_MAXIOV)
		return -EINVAL;
	rc = import_iovec(lvec, (u32)liovcnt, &local, &total);
	if (rc)
		return rc;
	if (!total)
		goto out;
	remote = kmalloc(riovcnt * sizeof(*remote) + 1, GFP_KERNEL);
	rc = -ENOMEM;
	if (!remote)
		goto out;
	rc = -EFAULT;
	if (copy_from_user(remote, (void *)(uintptr_t)rvec, riovcnt * sizeof(*remote)))
		goto out;
	rc = -EINVAL;
	for (u64 i = 0; i < riovcnt; i++)
		if ((s64)remote[i].iov_len < 0)
			goto out;
	/* No remote byte: nothing to do, whatever pid is. */
	rc = 0;
	for (u64 i = 0; i < riovcnt; i++)
		if (remote[i].iov_len)
			rc = 1;
	if (!rc)
		goto out;
	rc = get_process_mm((int)pid, &mm);
	if (rc) {
		rc = -ESRCH;	/* none, or no mm (exited): Linux's mm_access answer */
		goto out;
	}
	rc = 0;
	it.iov = local;
	it.nr = (u32)liovcnt;
	it.left = before = total;
	for (u64 i = 0; i < riovcnt && it.left && !rc; i++)
		rc = rw_single_vec(mm, remote[i].iov_base, remote[i].iov_len, &it, write);
	/* Something copied: its size; nothing: the error (or 0). */
	if (before - it.left)
		rc = (long)(before - it.left);
	mmput(mm);
out:
	kfree(local);
	kfree(remote);
	return rc;
}

long sys_process_vm_readv(SYSCALL_ARGS)
{
	return process_vm_rw(a0, a1, a2, a3, a4, a5, false);
}

long sys_process_vm_writev(SYSCALL_ARGS)
{
	return process_vm_rw(a0, a1, a2, a3, a4, a5, true);
}
