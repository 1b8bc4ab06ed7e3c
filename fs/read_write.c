/*
 * read, write and lseek on open files, and kernel_read_file for exec.
 *
 * Regular files and directories keep a file position shared by everyone
 * holding the file (dup, fork); f_pos_lock serialises its users, as Linux's
 * FMODE_ATOMIC_POS. Devices are streams: they get a private copy of the
 * position and no lock, so a reader blocked on the console never holds up
 * a writer of the same file.
 */
#define pr_fmt(fmt) "vfs: " fmt
#include <quire/fs.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/printk.h>

/* The most one call moves, as Linux's MAX_RW_COUNT (INT_MAX rounded down to a page). */
#define MAX_RW_COUNT	(0x7fffffffUL & ~4095UL)

static bool atomic_pos(struct file *f)
{
	umode_t m = file_inode(f)->i_mode;

	return S_ISREG(m) || S_ISDIR(m);
}

/* Run op at *pos, or at f->f_pos (locked when shared) when pos is NULL. */
static ssize_t rw_at(struct file *f, void *buf, size_t count, loff_t *pos, bool write)
{
	loff_t local;
	ssize_t ret;
	bool lock = !pos && atomic_pos(f);

	if (count > MAX_RW_COUNT)
		count = MAX_RW_COUNT;
	if (lock)
		mutex_lock(&f->f_pos_lock);
	local = pos ? *pos : f->f_pos;
	if (local < 0)
		ret = -EINVAL;
	else if (!count)
		ret = 0;
	else if (write)
		ret = f->f_op->write(f, buf, count, &local);
	else
		ret = f->f_op->read(f, buf, count, &local);
	if (pos)
		*pos = local;
	else if (ret >= 0)
		f->f_pos = local;	/* a stream's position is not shared: no lock */
	if (lock)
		mutex_unlock(&f->f_pos_lock);
	return ret;
}

int vfs_may_read(struct file *f)
{
	if (!(f->f_mode & FMODE_READ))
		return -EBADF;
	if (!S_ISDIR(file_inode(f)->i_mode) && (!f->f_op || !f->f_op->read))
		return -EINVAL;		/* a directory "reads" as EISDIR, later */
	return 0;
}

int vfs_may_write(struct file *f)
{
	if (!(f->f_mode & FMODE_WRITE))
		return -EBADF;
	if (!f->f_op || !f->f_op->write)
		return -EINVAL;
	return 0;
}

ssize_t vfs_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	int err = vfs_may_read(f);

	if (err)
		return err;
	if (S_ISDIR(file_inode(f)->i_mode))
		return -EISDIR;
	return rw_at(f, buf, count, pos, false);
}

ssize_t vfs_write(struct file *f, const void *buf, size_t count, loff_t *pos)
{
	int err = vfs_may_write(f);

	if (err)
		return err;
	return rw_at(f, (void *)buf, count, pos, true);
}

bool file_has_offsets(struct file *f)
{
	return f->f_op && f->f_op->llseek && f->f_op->llseek != no_llseek;
}

loff_t vfs_llseek(struct file *f, loff_t offset, int whence)
{
	loff_t ret;

	if (!f->f_op || !f->f_op->llseek)
		return -ESPIPE;
	if (whence < SEEK_SET || whence > SEEK_HOLE)
		return -EINVAL;
	if (atomic_pos(f))
		mutex_lock(&f->f_pos_lock);
	ret = f->f_op->llseek(f, offset, whence);
	if (atomic_pos(f))
		mutex_unlock(&f->f_pos_lock);
	return ret;
}

/*
 * Linux's generic_file_llseek: SEEK_DATA and SEEK_HOLE treat the whole file
 * as data (ENXIO at or past the end). f_pos_lock held by vfs_llseek.
 */
loff_t generic_file_llseek(struct file *f, loff_t offset, int whence)
{
	struct inode *inode = file_inode(f);
	loff_t size = READ_ONCE(inode->i_size), base, pos;

	switch (whence) {
	case SEEK_SET:
		base = 0;
		break;
	case SEEK_CUR:
		if (!offset)
			return f->f_pos;
		base = f->f_pos;
		break;
	case SEEK_END:
		base = size;
		break;
	case SEEK_DATA:
		if (offset < 0 || offset >= size)
			return -ENXIO;
		base = 0;
		break;
	case SEEK_HOLE:
		if (offset < 0 || offset >= size)
			return -ENXIO;
		base = 0;
		offset = size;
		break;
	default:
		return -EINVAL;
	}
	if (__builtin_add_overflow(base, offset, &pos) || pos < 0)
		return -EINVAL;
	f->f_pos = pos;
	return pos;
}

/* The position never moves (/dev/null, /dev/zero). */
loff_t noop_llseek(struct file *f, loff_t offset, int whence)
{
	return f->f_pos;
}

/* Not seekable (a terminal). */
loff_t no_llseek(struct file *f, loff_t offset, int whence)
{
	return -ESPIPE;
}

int kernel_read_file(struct inode *cwd, const char *path, size_t max_size,
		     void **buf, size_t *size)
{
	struct file *f;
	loff_t pos = 0, len;
	size_t done = 0;
	void *data;
	int err;

	err = vfs_open(cwd, path, O_RDONLY, 0, &f);
	if (err)
		return err;
	err = -EACCES;
	if (!S_ISREG(file_inode(f)->i_mode))
		goto out;
	/* Nothing on a noexec mount is run (Linux's path_noexec in open_exec). */
	if (file_inode(f)->i_sb && (file_inode(f)->i_sb->s_mnt_flags & MS_NOEXEC))
		goto out;
	len = READ_ONCE(file_inode(f)->i_size);
	err = -EFBIG;
	if ((u64)len > max_size)
		goto out;
	err = -ENOMEM;
	data = kmalloc(len ? (size_t)len : 1, GFP_KERNEL);
	if (!data)
		goto out;
	while (done < (size_t)len) {
		ssize_t n = vfs_read(f, (char *)data + done, (size_t)len - done, &pos);

		if (n <= 0)
			break;		/* the file shrank meanwhile: return what was there */
		done += (size_t)n;
	}
	*buf = data;
	*size = done;
	err = 0;
out:
	fput(f);
	return err;
}
