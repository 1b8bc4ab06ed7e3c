/*
 * vmsplice(2), the one splice-family call Quire has: user memory into a
 * pipe by reference, or out of a pipe by copy.
 *
 * Into a pipe (fd open for writing): each page of the user range is taken
 * with get_user_pages_fast (a FOLL_GET reference, read-only: no FOLL_WRITE,
 * no pin, so no unsharing, as Linux) and becomes one pipe buffer that keeps
 * the reference until a reader has copied it out. The reader sees the page
 * as it is then: what keeps a later write by this process or a forked one
 * out of the pipe is the COW rule that a page with extra references is
 * copied, not reused, on a write fault (Linux's cow selftest checks it).
 * The call waits for one free buffer (or fails: SPLICE_F_NONBLOCK EAGAIN,
 * no reader EPIPE with SIGPIPE), then fills what is free and returns the
 * bytes it added: at most PIPE_DEF_BUFFERS pages' worth.
 *
 * Out of a pipe (fd open for reading only): a copy, as read(2) would, into
 * the iovecs in order, waiting for the first byte unless SPLICE_F_NONBLOCK
 * and stopping when the pipe is empty. Bytes that cannot be copied out (a
 * bad buffer: EFAULT) stay in the pipe.
 *
 * Errors in Linux's order: unknown flags EINVAL; a bad fd EBADF; the
 * iovecs (over UIO_MAXIOV EINVAL, unreadable EFAULT); nothing to move 0
 * (even on a file that is not a pipe); not a pipe EBADF.
 */
#include <quire/syscalls.h>
#include <quire/fdtable.h>
#include <quire/sched.h>
#include <quire/slab.h>
#include <quire/gup.h>
#include <quire/uaccess.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include <asm/page.h>
#include "internal.h"

#define SPLICE_F_MOVE		0x01
#define SPLICE_F_NONBLOCK	0x02
#define SPLICE_F_MORE		0x04
#define SPLICE_F_GIFT		0x08	/* accepted; Quire never steals the pages */
#define SPLICE_F_ALL		0x0f

/* One segment into the pipe: the bytes added, or -errno if none. */
static long splice_segment(struct pipe *p, unsigned long addr, unsigned long left)
{
	long total = 0;

	while (left) {
		struct page *pages[PIPE_DEF_BUFFERS];
		unsigned int off[PIPE_DEF_BUFFERS], len[PIPE_DEF_BUFFERS];
		unsigned long start = addr & ~PAGE_MASK, want_bytes = 0;
		long free = pipe_wait_for_space(p, true), added;
		int want, got;

		if (free == -EAGAIN)
			break;			/* full: what was added is the answer */
		if (free < 0)
			return total ? total : free;
		want = (int)min((unsigned long)free, (start + left + PAGE_SIZE - 1) >> PAGE_SHIFT);
		got = get_user_pages_fast(addr & PAGE_MASK, want, 0, pages);
		if (got <= 0)
			return total ? total : (got ? got : -EFAULT);
		for (int i = 0; i < got; i++) {
			off[i] = i ? 0 : (unsigned int)start;
			len[i] = (unsigned int)min(left - want_bytes, PAGE_SIZE - off[i]);
			want_bytes += len[i];
		}
		added = pipe_add_user_pages(p, pages, off, len, (unsigned int)got);
		if (added < 0)
			return total ? total : added;
		total += added;
		addr += (unsigned long)added;
		left -= (unsigned long)added;
		if ((unsigned long)added < want_bytes)
			break;			/* another writer filled it meanwhile */
	}
	return total;
}

static long vmsplice_to_pipe(struct pipe *p, const struct iovec *iov, u32 count,
			     unsigned int flags)
{
	long ret = pipe_wait_for_space(p, flags & SPLICE_F_NONBLOCK), total = 0;

	if (ret < 0)
		return ret;
	for (u32 i = 0; i < count; i++) {
		ret = splice_segment(p, iov[i].iov_base, iov[i].iov_len);
		if (ret < 0)
			break;
		total += ret;
		if ((u64)ret < iov[i].iov_len)
			break;
	}
	return total ? total : ret;
}

/* pipe_read_bytes' accept: the bytes to user memory at *arg. */
static int copy_out(void *arg, const void *buf, size_t n)
{
	return copy_to_user(*(void **)arg, buf, n) ? -EFAULT : 0;
}

static long vmsplice_to_user(struct pipe *p, const struct iovec *iov, u32 count,
			     unsigned int flags)
{
	char *bounce = kmalloc(PAGE_SIZE, GFP_KERNEL);
	long total = 0, ret = 0;

	if (!bounce)
		return -ENOMEM;
	for (u32 i = 0; i < count && !ret; i++) {
		for (u64 done = 0; done < iov[i].iov_len;) {
			size_t chunk = (size_t)min(iov[i].iov_len - done, PAGE_SIZE);
			void *to = (void *)(iov[i].iov_base + done);
			/* Wait for the first byte only; then take what is there. */
			ssize_t n = pipe_read_bytes(p, bounce, chunk,
						    (flags & SPLICE_F_NONBLOCK) || total, copy_out, &to);

			if (n <= 0) {
				ret = n ? n : 1;	/* 1: the end of the file, or empty */
				break;
			}
			done += (u64)n;
			total += n;
		}
	}
	kfree(bounce);
	if (total)
		return total;
	return ret == 1 ? 0 : ret;
}

long sys_vmsplice(u64 fd, u64 uiov, u64 nr_segs, u64 uflags, u64 a4, u64 a5)
{
	unsigned int flags = (unsigned int)uflags;
	struct iovec *iov;
	struct file *f;
	struct pipe *p;
	u64 total;
	long ret;

	if (flags & ~SPLICE_F_ALL)
		return -EINVAL;
	f = fget(current->files, (int)fd);
	if (!f)
		return -EBADF;
	if (!(f->f_mode & (FMODE_READ | FMODE_WRITE))) {
		ret = -EBADF;
		goto out;
	}
	ret = nr_segs > UIO_MAXIOV ? -EINVAL : import_iovec(uiov, (u32)nr_segs, &iov, &total);
	if (ret)
		goto out;
	p = get_pipe_info(f);
	if (!total)
		ret = 0;
	else if (!p)
		ret = -EBADF;
	else if (f->f_mode & FMODE_WRITE)
		ret = vmsplice_to_pipe(p, iov, (u32)nr_segs, flags);
	else
		ret = vmsplice_to_user(p, iov, (u32)nr_segs, flags);
	kfree(iov);
out:
	fput(f);
	return ret;
}
