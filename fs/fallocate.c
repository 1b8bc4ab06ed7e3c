/*
 * fallocate(2) as Linux 6.12's vfs_fallocate checks it and as its tmpfs
 * (shmem_fallocate) does it, for Quire's RAM files: mode 0 allocates the
 * page-cache folios of [offset, offset + len) and extends the size to
 * offset + len; FALLOC_FL_KEEP_SIZE allocates without extending.
 * FALLOC_FL_PUNCH_HOLE (which Linux's tmpfs has) is not implemented yet:
 * ENOSYS with a log line; the other modes are EOPNOTSUPP, as on tmpfs.
 * Quire's RAM files have no size limit: a range memory cannot hold fails
 * with ENOSPC at the first folio that cannot be had, and the folios
 * allocated before it stay in the file (Linux's tmpfs takes them back).
 */
#define pr_fmt(fmt) "fallocate: " fmt
#include <quire/fs.h>
#include <quire/mm.h>
#include <quire/pagemap.h>
#include <quire/printk.h>
#include <quire/errno.h>

#define FALLOC_FL_KEEP_SIZE		0x01
#define FALLOC_FL_PUNCH_HOLE		0x02
#define FALLOC_FL_NO_HIDE_STALE		0x04
#define FALLOC_FL_COLLAPSE_RANGE	0x08
#define FALLOC_FL_ZERO_RANGE		0x10
#define FALLOC_FL_INSERT_RANGE		0x20
#define FALLOC_FL_UNSHARE_RANGE		0x40
#define FALLOC_FL_SUPPORTED_MASK	0x7f

/* Allocate the folios of [offset, end) and, unless keep_size, extend the size; i_mutex held. */
static int ram_fallocate(struct inode *inode, loff_t offset, loff_t end, bool keep_size)
{
	unsigned long first = (unsigned long)(offset >> PAGE_SHIFT);
	unsigned long last = (unsigned long)((end - 1) >> PAGE_SHIFT);
	int err = 0;

	if (!keep_size && end > inode->i_size) {
		err = fsize_check(end, NULL);
		if (err)
			return err;
	}
	for (unsigned long index = first; index <= last; index++) {
		struct folio *folio = filemap_grab_folio(inode->i_mapping, index);

		if (!folio)
			return -ENOSPC;	/* what tmpfs answers when it cannot allocate */
		folio_put(folio);
	}
	if (!keep_size && end > inode->i_size)
		err = inode->i_op->setsize(inode, end);
	return err;
}

long vfs_fallocate(struct file *f, int mode, loff_t offset, loff_t len)
{
	struct inode *inode = file_inode(f);
	long err;

	if (offset < 0 || len <= 0)
		return -EINVAL;
	if (mode & ~FALLOC_FL_SUPPORTED_MASK)
		return -EOPNOTSUPP;
	/* Linux's combinations: punch only with keep-size, the range ops alone. */
	if ((mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) ==
	    (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	if ((mode & (FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE | FALLOC_FL_UNSHARE_RANGE)) &&
	    (mode & ~(FALLOC_FL_COLLAPSE_RANGE | FALLOC_FL_INSERT_RANGE |
		      (mode & FALLOC_FL_UNSHARE_RANGE ? FALLOC_FL_KEEP_SIZE | FALLOC_FL_UNSHARE_RANGE : 0))))
		return -EINVAL;
	if (!(f->f_mode & FMODE_WRITE))
		return -EBADF;
	if (S_ISFIFO(inode->i_mode))
		return -ESPIPE;
	if (S_ISDIR(inode->i_mode))
		return -EISDIR;
	if (!S_ISREG(inode->i_mode))
		return -ENODEV;
	if ((u64)offset + (u64)len > (u64)MAX_LFS_FILESIZE)
		return -EFBIG;
	/* tmpfs: keep-size and punch-hole only. */
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE))
		return -EOPNOTSUPP;
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		pr_warn("FALLOC_FL_PUNCH_HOLE is not implemented (ENOSYS)\n");
		return -ENOSYS;
	}
	if (!inode->i_op || !inode->i_op->setsize || !inode->i_mapping)
		return -EOPNOTSUPP;
	mutex_lock(&inode->i_mutex);
	err = ram_fallocate(inode, offset, offset + len, mode & FALLOC_FL_KEEP_SIZE);
	mutex_unlock(&inode->i_mutex);
	return err;
}
