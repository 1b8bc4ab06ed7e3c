/*
 * Inodes: allocation, references and links, attributes.
 *
 * An inode is freed when both its reference count (i_count: open files,
 * lookups in progress, a process's cwd) and its link count (i_nlink:
 * directory entries naming it) are zero. Both change under i_lock, and
 * only iput frees: whoever drops the last link holds a reference while
 * doing it, so the decision is made exactly once.
 */
#define pr_fmt(fmt) "vfs: " fmt
#include <quire/fs.h>
#include <quire/pagemap.h>
#include <quire/slab.h>
#include <quire/printk.h>
#include <quire/time.h>
#include <quire/errno.h>
#include <asm/page.h>
#include "internal.h"

long nr_inodes;
static unsigned long last_ino;

struct timespec64 current_time(void)
{
	u64 ns = ktime_get_real_ns();		/* CLOCK_REALTIME */

	return (struct timespec64){ .tv_sec = (s64)(ns / NSEC_PER_SEC),
				    .tv_nsec = (long)(ns % NSEC_PER_SEC) };
}

struct inode *new_inode(umode_t mode)
{
	struct inode *inode = kzalloc(sizeof(*inode), GFP_KERNEL);

	if (!inode)
		return NULL;
	inode->i_mode = mode;
	inode->i_ino = __atomic_add_fetch(&last_ino, 1, __ATOMIC_RELAXED);
	inode->i_count = 1;
	spin_lock_init(&inode->i_lock);
	mutex_init(&inode->i_mutex);
	address_space_init(&inode->i_data, inode);
	inode->i_mapping = &inode->i_data;
	inode->i_atime = inode->i_mtime = inode->i_ctime = current_time();
	__atomic_add_fetch(&nr_inodes, 1, __ATOMIC_RELAXED);
	return inode;
}

struct inode *igrab(struct inode *inode)
{
	spin_lock(&inode->i_lock);
	inode->i_count++;
	spin_unlock(&inode->i_lock);
	if (inode->i_sb)
		sb_get_ref(inode->i_sb);
	return inode;
}

void iput(struct inode *inode)
{
	struct super_block *sb;
	bool dead;

	if (!inode)
		return;
	spin_lock(&inode->i_lock);
	if (inode->i_count <= 0) {
		spin_unlock(&inode->i_lock);
		pr_err("BUG: iput of inode %lu with no references\n", inode->i_ino);
		return;
	}
	dead = --inode->i_count == 0 && inode->i_nlink == 0;
	sb = inode->i_sb;
	spin_unlock(&inode->i_lock);
	if (dead) {
		if (inode->i_op && inode->i_op->evict)
			inode->i_op->evict(inode);
		__atomic_sub_fetch(&nr_inodes, 1, __ATOMIC_RELAXED);
		kfree(inode);
	}
	/* Last: this may free a detached tree (tmpfs after umount). */
	if (sb)
		sb_put_ref(sb);
}

void inc_nlink(struct inode *inode)
{
	spin_lock(&inode->i_lock);
	inode->i_nlink++;
	spin_unlock(&inode->i_lock);
}

void drop_nlink(struct inode *inode)
{
	spin_lock(&inode->i_lock);
	if (inode->i_nlink)
		inode->i_nlink--;
	spin_unlock(&inode->i_lock);
}

void clear_nlink(struct inode *inode)
{
	spin_lock(&inode->i_lock);
	inode->i_nlink = 0;
	spin_unlock(&inode->i_lock);
}

u64 new_encode_dev(dev_t dev)
{
	u64 major = MAJOR(dev), minor = MINOR(dev);

	return (minor & 0xff) | (major << 8) | ((minor & ~0xffULL) << 12);
}

void vfs_getattr(struct inode *inode, struct stat *st)
{
	*st = (struct stat){ 0 };
	mutex_lock(&inode->i_mutex);
	st->st_dev = new_encode_dev(inode_dev(inode));	/* an anonymous device, as Linux numbers them */
	st->st_ino = inode->i_ino;
	st->st_nlink = READ_ONCE(inode->i_nlink);
	st->st_mode = inode->i_mode;
	st->st_uid = inode->i_uid;
	st->st_gid = inode->i_gid;
	st->st_rdev = new_encode_dev(inode->i_rdev);
	st->st_size = inode->i_size;
	st->st_blksize = PAGE_SIZE;
	st->st_blocks = (s64)inode->i_blocks;
	st->st_atime = (u64)inode->i_atime.tv_sec;
	st->st_atime_nsec = (u64)inode->i_atime.tv_nsec;
	st->st_mtime = (u64)inode->i_mtime.tv_sec;
	st->st_mtime_nsec = (u64)inode->i_mtime.tv_nsec;
	st->st_ctime = (u64)inode->i_ctime.tv_sec;
	st->st_ctime_nsec = (u64)inode->i_ctime.tv_nsec;
	mutex_unlock(&inode->i_mutex);
}

/*
 * Every process is root for now, with root's override of the permission
 * bits (CAP_DAC_OVERRIDE): read and write are always allowed, and execute
 * needs a directory or at least one x bit, as on Linux.
 */
int inode_permission(struct inode *inode, int mask)
{
	if ((mask & MAY_EXEC) && !S_ISDIR(inode->i_mode) &&
	    !(inode->i_mode & (S_IXUSR | S_IXGRP | S_IXOTH)))
		return -EACCES;
	/* A file on a noexec mount cannot be run, root or not (Linux's path_noexec). */
	if ((mask & MAY_EXEC) && S_ISREG(inode->i_mode) && inode->i_sb &&
	    (inode->i_sb->s_mnt_flags & MS_NOEXEC))
		return -EACCES;
	return 0;
}
