/*
 * Opening files: from a path (vfs_open) or an inode (vfs_open_inode), the
 * access checks Linux makes at open time, references on struct file, and
 * truncation.
 */
#define pr_fmt(fmt) "vfs: " fmt
#include <quire/fs.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include "internal.h"

/* Flags that only matter while opening; they are not kept in f_flags. */
#define OPEN_ONLY_FLAGS	(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC)

static unsigned int fmode_of(int flags)
{
	switch (flags & O_ACCMODE) {
	case O_RDONLY: return FMODE_READ;
	case O_WRONLY: return FMODE_WRITE;
	case O_RDWR: return FMODE_READ | FMODE_WRITE;
	default: return 0;	/* 3: neither (Linux allows it, for ioctls) */
	}
}

int may_open(struct inode *inode, int flags)
{
	/* O_TRUNC asks for write access, as in Linux's build_open_flags. */
	bool write = (fmode_of(flags) & FMODE_WRITE) || (flags & O_TRUNC);

	switch (inode->i_mode & S_IFMT) {
	case S_IFLNK:
		return -ELOOP;		/* only reached with O_NOFOLLOW */
	case S_IFDIR:
		if (write)
			return -EISDIR;
		break;
	case S_IFCHR:
		/* A device node on a nodev mount cannot be opened (Linux's may_open_dev). */
		if (inode->i_sb && (inode->i_sb->s_mnt_flags & MS_NODEV))
			return -EACCES;
		break;
	case S_IFBLK:
		if (inode->i_sb && (inode->i_sb->s_mnt_flags & MS_NODEV))
			return -EACCES;
		return -ENXIO;		/* Linux's answer with no driver */
	case S_IFSOCK:
		return -ENXIO;		/* Linux's answer for a socket */
	case S_IFIFO: {
		static bool warned;

		/* Linux would open a pipe here: not implemented yet. */
		if (!__atomic_exchange_n(&warned, true, __ATOMIC_RELAXED))
			pr_warn("open of a FIFO: pipes are not implemented yet (ENOSYS)\n");
		return -ENOSYS;
	}
	default:
		break;
	}
	if ((flags & O_DIRECTORY) && !S_ISDIR(inode->i_mode))
		return -ENOTDIR;
	return 0;
}

int vfs_open_inode(struct inode *inode, int flags, struct file **out)
{
	struct file *f;
	int err = may_open(inode, flags);

	if (err)
		return err;
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	atomic_set(&f->f_count, 1);
	f->f_inode = igrab(inode);
	f->f_op = inode->i_fop;
	f->f_mapping = inode->i_mapping;
	f->f_flags = (unsigned int)flags & ~OPEN_ONLY_FLAGS;
	f->f_mode = fmode_of(flags);
	mutex_init(&f->f_pos_lock);
	if (f->f_op && f->f_op->open) {
		err = f->f_op->open(inode, f);	/* may replace f_op (devices) */
		if (err) {
			iput(inode);
			kfree(f);
			return err;
		}
	}
	*out = f;
	return 0;
}

int vfs_open(struct inode *cwd, const char *path, int flags, umode_t mode, struct file **out)
{
	struct inode *inode;
	bool created;
	int err;

	if (flags & __O_TMPFILE) {
		/* Linux's build_open_flags: O_DIRECTORY with it, no O_CREAT, and write access. */
		if ((flags & (O_TMPFILE | O_CREAT)) != O_TMPFILE || !(fmode_of(flags) & FMODE_WRITE))
			return -EINVAL;
		err = vfs_lookup(cwd, path, &inode);
		if (err)
			return err;
		err = S_ISDIR(inode->i_mode) ? (inode->i_nlink ? vfs_tmpfile(inode, flags, mode, out)
							       : -ENOENT)
					     : -ENOTDIR;
		iput(inode);
		return err;
	}
	/* Linux 6.4 and later refuse this combination outright. */
	if ((flags & O_CREAT) && (flags & O_DIRECTORY))
		return -EINVAL;
	err = open_namei(cwd, path, flags, mode, &inode, &created);
	if (err)
		return err;
	err = may_open(inode, flags);
	if (!err && (flags & O_TRUNC) && !created && S_ISREG(inode->i_mode))
		err = vfs_truncate(inode, 0);
	if (!err)
		err = vfs_open_inode(inode, flags, out);
	iput(inode);
	return err;
}

void fput(struct file *f)
{
	struct inode *inode;

	if (!f || !atomic_dec_and_test(&f->f_count))
		return;
	inode = file_inode(f);
	if (f->f_op && f->f_op->release)
		f->f_op->release(inode, f);
	iput(inode);
	kfree(f);
}

/*
 * A regular file's new size: limited, a truncate from a system call, which
 * may not grow the file past RLIMIT_FSIZE (EFBIG and SIGXFSZ, as Linux's
 * inode_newsize_ok); the kernel's own (O_TRUNC, a shared mapping's file)
 * is not held to it.
 */
static int do_truncate(struct inode *inode, loff_t size, bool limited)
{
	int err = 0;

	if (S_ISDIR(inode->i_mode))
		return -EISDIR;
	if (!S_ISREG(inode->i_mode) || size < 0)
		return -EINVAL;
	if (!inode->i_op || !inode->i_op->setsize)
		return -EINVAL;
	mutex_lock(&inode->i_mutex);
	if (limited && size > inode->i_size)
		err = fsize_check(size, NULL);
	if (!err)
		err = inode->i_op->setsize(inode, size);
	mutex_unlock(&inode->i_mutex);
	return err;
}

int vfs_truncate(struct inode *inode, loff_t size)
{
	return do_truncate(inode, size, false);
}

int vfs_truncate_limited(struct inode *inode, loff_t size)
{
	return do_truncate(inode, size, true);
}

int vfs_ftruncate(struct file *f, loff_t size)
{
	if (!(f->f_mode & FMODE_WRITE))
		return -EINVAL;
	return vfs_truncate_limited(file_inode(f), size);
}

int vfs_fstat(struct file *f, struct stat *st)
{
	vfs_getattr(file_inode(f), st);
	return 0;
}
