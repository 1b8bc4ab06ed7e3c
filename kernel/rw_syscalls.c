/*
 * read and write and their positioned and vectored forms: read, write,
 * pread64, pwrite64, readv, writev, preadv, pwritev, preadv2, pwritev2,
 * with Linux 6.12's checks in Linux's order (docs/syscalls.md):
 *
 *	a negative offset (the p* calls)	EINVAL
 *	fd not open				EBADF
 *	an offset on a pipe or terminal		ESPIPE
 *	not opened for it, no such operation	EBADF, EINVAL (vfs_may_read/write)
 *	the iovec array: over UIO_MAXIOV	EINVAL; unreadable: EFAULT;
 *	    a negative length			EINVAL (one iovec alone is clamped)
 *	a buffer outside user space		EFAULT (before anything moves)
 *	RWF_* flags (the *v2 calls)		EOPNOTSUPP, EINVAL (rwf_check)
 *
 * then data moves through a kernel bounce buffer a page at a time; a
 * fault part way returns what moved, a fault before anything moved
 * EFAULT. A positioned call leaves the file position alone.
 */
#define pr_fmt(fmt) "syscall: " fmt
#include <quire/process.h>
#include <quire/syscalls.h>
#include <quire/fdtable.h>
#include <quire/fs.h>
#include <quire/uaccess.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/kernel.h>

#define BOUNCE		PAGE_SIZE
/* The most one call moves, as Linux's MAX_RW_COUNT (INT_MAX rounded down to a page). */
#define MAX_RW_COUNT	(0x7fffffffUL & ~4095UL)

/* preadv2/pwritev2 flags (Linux's RWF_*). */
#define RWF_HIPRI	0x01
#define RWF_DSYNC	0x02
#define RWF_SYNC	0x04
#define RWF_NOWAIT	0x08
#define RWF_APPEND	0x10
#define RWF_NOAPPEND	0x20
#define RWF_ATOMIC	0x40
#define RWF_SUPPORTED	0x7f

/*
 * The file for a read or write at *pos (NULL: the file position), or
 * -errno in *err: EBADF, ESPIPE for an offset on a stream, then what
 * vfs_may_read/write say.
 */
static struct file *rw_file(u64 fd, loff_t *pos, bool write, long *err)
{
	struct file *f = fget(current->files, (int)fd);

	*err = -EBADF;
	if (!f)
		return NULL;
	*err = pos && !file_has_offsets(f) ? -ESPIPE : write ? vfs_may_write(f) : vfs_may_read(f);
	if (*err) {
		fput(f);
		return NULL;
	}
	return f;
}

/*
 * Move len bytes between user memory at ubuf and f (any file when
 * writing, one with offsets when reading), at *pos (advanced) or at the
 * file position, a bounce buffer at a time. Bytes moved; -errno only when
 * nothing moved. Stops at the first short transfer: the end of the file,
 * a full O_NONBLOCK pipe.
 */
static long transfer(struct file *f, u64 ubuf, u64 len, loff_t *pos, bool write, char *bounce)
{
	u64 done = 0;

	while (done < len) {
		size_t chunk = min(len - done, (u64)BOUNCE);
		ssize_t n;

		if (write) {
			if (copy_from_user(bounce, (void *)(ubuf + done), chunk))
				return done ? (long)done : -EFAULT;
			n = vfs_write(f, bounce, chunk, pos);
		} else {
			n = vfs_read(f, bounce, chunk, pos);
			if (n > 0 && copy_to_user((void *)(ubuf + done), bounce, n))
				return done ? (long)done : -EFAULT;
		}
		if (n < 0)
			return done ? (long)done : n;
		done += n;
		if ((size_t)n < chunk)
			break;
	}
	return (long)done;
}

/*
 * A read of a stream (a pipe, a terminal) returns what one read gives, as
 * on Linux: what is there now, without waiting for the rest. One read
 * into the bounce buffer, spread over the iovecs in order.
 */
static long read_stream(struct file *f, const struct iovec *iov, u32 count, u64 total,
			char *bounce)
{
	ssize_t n = vfs_read(f, bounce, min(total, (u64)BOUNCE), NULL);
	size_t copied = 0;

	for (u32 i = 0; n > 0 && i < count && copied < (size_t)n; i++) {
		size_t part = min((u64)(n - copied), iov[i].iov_len);

		if (copy_to_user((void *)iov[i].iov_base, bounce + copied, part))
			return copied ? (long)copied : -EFAULT;
		copied += part;
	}
	return n < 0 ? n : (long)copied;
}

/* A stream that takes user memory itself (a pipe): each iovec whole, in order. */
static long write_user_iovecs(struct file *f, const struct iovec *iov, u32 count)
{
	long done = 0, err = vfs_may_write(f);

	for (u32 i = 0; !err && i < count; i++) {
		ssize_t n;

		if (!iov[i].iov_len)
			continue;
		n = f->f_op->write_user(f, (const void *)iov[i].iov_base, iov[i].iov_len);
		if (n < 0)
			err = n;
		else
			done += n;
		if (n < 0 || (u64)n < iov[i].iov_len)
			break;
	}
	return done ? done : err;
}

/*
 * Move the bytes the (checked) iovecs describe, total of them, at *pos or
 * the file position; stops at the first short segment. Bytes moved, or
 * -errno when nothing moved.
 */
static long rw_iovecs(struct file *f, const struct iovec *iov, u32 count, u64 total,
		      loff_t *pos, bool write)
{
	char *bounce, small[256];
	long done = 0;

	if (write && total && f->f_op->write_user)
		return write_user_iovecs(f, iov, count);
	if (!total)	/* the file's own answer to a 0-byte transfer (a directory: EISDIR) */
		return write ? vfs_write(f, NULL, 0, pos) : vfs_read(f, NULL, 0, pos);
	/*
	 * A small transfer bounces through the stack: a page from kmalloc costs
	 * more than the transfer (about 150 us under TCG with DEBUG_MM's slab
	 * checks, where a 1-byte write is 4 us otherwise).
	 */
	bounce = total <= sizeof(small) ? small : kmalloc(BOUNCE, GFP_KERNEL);
	if (!bounce)
		return -ENOMEM;
	if (!write && !file_has_offsets(f)) {
		done = read_stream(f, iov, count, total, bounce);
		if (bounce != small)
			kfree(bounce);
		return done;
	}
	for (u32 i = 0; i < count; i++) {
		long n;

		if (!iov[i].iov_len)
			continue;
		n = transfer(f, iov[i].iov_base, iov[i].iov_len, pos, write, bounce);
		if (n < 0) {
			if (!done)
				done = n;
			break;
		}
		done += n;
		if ((u64)n < iov[i].iov_len)
			break;
	}
	if (bounce != small)
		kfree(bounce);
	return done;
}

/* read, write, pread64, pwrite64: pos NULL means the file position. */
static long do_rw(u64 fd, u64 ubuf, u64 len, loff_t *pos, bool write)
{
	long ret;
	struct file *f = rw_file(fd, pos, write, &ret);
	struct iovec one = { ubuf, min(len, (u64)MAX_RW_COUNT) };

	if (!f)
		return ret;
	ret = access_ok((void *)ubuf, len) ? rw_iovecs(f, &one, 1, one.iov_len, pos, write) : -EFAULT;
	fput(f);
	return ret;
}

long sys_read(u64 fd, u64 ubuf, u64 len, u64 a3, u64 a4, u64 a5)
{
	return do_rw(fd, ubuf, len, NULL, false);
}

long sys_write(u64 fd, u64 ubuf, u64 len, u64 a3, u64 a4, u64 a5)
{
	return do_rw(fd, ubuf, len, NULL, true);
}

/* pread64: read at off, the file position unchanged. */
long sys_pread64(u64 fd, u64 ubuf, u64 len, u64 off, u64 a4, u64 a5)
{
	loff_t pos = (loff_t)off;

	if (pos < 0)
		return -EINVAL;
	return do_rw(fd, ubuf, len, &pos, false);
}

long sys_pwrite64(u64 fd, u64 ubuf, u64 len, u64 off, u64 a4, u64 a5)
{
	loff_t pos = (loff_t)off;

	if (pos < 0)
		return -EINVAL;
	return do_rw(fd, ubuf, len, &pos, true);
}

/*
 * A user iovec array in a kmalloc'd copy (*iovp, NULL when count is 0),
 * checked as Linux's import_iovec: the total in *total, capped at
 * MAX_RW_COUNT by shortening the segment that crosses it.
 */
long import_iovec(u64 uiov, u32 count, struct iovec **iovp, u64 *total)
{
	struct iovec *iov;

	*iovp = NULL;
	*total = 0;
	if (!count)
		return 0;
	if (count > UIO_MAXIOV)
		return -EINVAL;
	iov = kmalloc(count * sizeof(*iov), GFP_KERNEL);
	if (!iov)
		return -ENOMEM;
	if (copy_from_user(iov, (void *)uiov, count * sizeof(*iov))) {
		kfree(iov);
		return -EFAULT;
	}
	for (u32 i = 0; i < count; i++) {
		/* A length that is negative as ssize_t: EINVAL, but one iovec alone is clamped. */
		if ((s64)iov[i].iov_len < 0 && count > 1) {
			kfree(iov);
			return -EINVAL;
		}
		if (iov[i].iov_len > MAX_RW_COUNT - *total)
			iov[i].iov_len = MAX_RW_COUNT - *total;
		if (!access_ok((void *)iov[i].iov_base, iov[i].iov_len)) {
			kfree(iov);
			return -EFAULT;
		}
		*total += iov[i].iov_len;
	}
	*iovp = iov;
	return 0;
}

/*
 * The RWF_* flags of preadv2/pwritev2, as Linux checks them for a file
 * on ramfs (kiocb_set_rw_flags): unknown bits and RWF_ATOMIC (ramfs has
 * no atomic writes; reads never) are EOPNOTSUPP, APPEND with NOAPPEND
 * EINVAL. RWF_HIPRI (polling, for O_DIRECT) does nothing, as for any
 * buffered file; RWF_DSYNC and RWF_SYNC have nothing to write back (files
 * live in RAM); APPEND and NOAPPEND mean nothing to a read, nor NOAPPEND
 * to a file without O_APPEND. Not implemented, logged: RWF_NOWAIT (Linux's
 * EOPNOTSUPP for files that cannot promise it), and RWF_APPEND /
 * RWF_NOAPPEND where a write would change where it goes.
 */
static long rwf_check(struct file *f, u64 flags, bool write)
{
	const char *missing = NULL;

	if (!flags)
		return 0;
	if (flags & ~(u64)RWF_SUPPORTED)
		return -EOPNOTSUPP;
	if ((flags & RWF_APPEND) && (flags & RWF_NOAPPEND))
		return -EINVAL;
	if (flags & RWF_ATOMIC)
		return -EOPNOTSUPP;
	if (flags & RWF_NOWAIT)
		missing = "RWF_NOWAIT";
	else if (write && (flags & RWF_APPEND) && !(f->f_flags & O_APPEND))
		missing = "RWF_APPEND";
	else if (write && (flags & RWF_NOAPPEND) && (f->f_flags & O_APPEND))
		missing = "RWF_NOAPPEND on an O_APPEND file";
	if (missing) {
		pr_warn("pid %d (%s): %s is not implemented (-EOPNOTSUPP)\n", current->tid,
			current->comm, missing);
		return -EOPNOTSUPP;
	}
	return 0;
}

/* readv, writev, preadv, pwritev, preadv2, pwritev2: pos NULL means the file position. */
static long do_rwv(u64 fd, u64 uiov, u64 count, loff_t *pos, u64 flags, bool write)
{
	struct iovec *iov;
	long ret;
	struct file *f = rw_file(fd, pos, write, &ret);
	u64 total;

	if (!f)
		return ret;
	/* Linux's import_iovec takes the count as an unsigned int. */
	ret = import_iovec(uiov, (u32)count, &iov, &total);
	if (!ret && total) {
		ret = rwf_check(f, flags, write);
		if (!ret)
			ret = rw_iovecs(f, iov, (u32)count, total, pos, write);
	}
	kfree(iov);
	fput(f);
	return ret;
}

long sys_readv(u64 fd, u64 uiov, u64 count, u64 a3, u64 a4, u64 a5)
{
	return do_rwv(fd, uiov, count, NULL, 0, false);
}

long sys_writev(u64 fd, u64 uiov, u64 count, u64 a3, u64 a4, u64 a5)
{
	return do_rwv(fd, uiov, count, NULL, 0, true);
}

/*
 * The offset of preadv/pwritev comes in two registers for 32-bit ABIs
 * (pos_l, pos_h); on x86-64 the low one holds all 64 bits and the high
 * one is ignored, as Linux's pos_from_hilo does.
 */
static long do_prwv(u64 fd, u64 uiov, u64 count, u64 pos_l, u64 flags, bool write, bool v2)
{
	loff_t pos = (loff_t)pos_l;

	if (v2 && pos == -1)
		return do_rwv(fd, uiov, count, NULL, flags, write);	/* the file position */
	if (pos < 0)
		return -EINVAL;
	return do_rwv(fd, uiov, count, &pos, flags, write);
}

long sys_preadv(u64 fd, u64 uiov, u64 count, u64 pos_l, u64 pos_h, u64 a5)
{
	return do_prwv(fd, uiov, count, pos_l, 0, false, false);
}

long sys_pwritev(u64 fd, u64 uiov, u64 count, u64 pos_l, u64 pos_h, u64 a5)
{
	return do_prwv(fd, uiov, count, pos_l, 0, true, false);
}

long sys_preadv2(u64 fd, u64 uiov, u64 count, u64 pos_l, u64 pos_h, u64 flags)
{
	return do_prwv(fd, uiov, count, pos_l, flags, false, true);
}

long sys_pwritev2(u64 fd, u64 uiov, u64 count, u64 pos_l, u64 pos_h, u64 flags)
{
	return do_prwv(fd, uiov, count, pos_l, flags, true, true);
}
