/*
 * fsync, fdatasync and syncfs at the VFS (Linux's fs/sync.c). Every file
 * Quire has lives in RAM: ramfs keeps a file's data in its page cache and
 * nowhere else, /proc and /sys make theirs when read, devices and pipes
 * hold none. So there is never anything to write back. What is left is
 * Linux's answer per file: fsync and fdatasync succeed on a file whose
 * file system has an fsync (ramfs files and directories, memfd, shared
 * anonymous memory's file) and are EINVAL on one without (pipes, the
 * console, /dev/null, /dev/zero, /proc, /sys), as Linux's vfs_fsync;
 * syncfs succeeds on any open file, as Linux's does on a file system with
 * nothing dirty.
 */
#include <quire/fs.h>
#include <quire/errno.h>

int noop_fsync(struct file *f, int datasync)
{
	return 0;
}

int vfs_fsync(struct file *f, int datasync)
{
	if (!f->f_op || !f->f_op->fsync)
		return -EINVAL;
	return f->f_op->fsync(f, datasync);
}

int vfs_syncfs(struct file *f)
{
	return 0;
}
