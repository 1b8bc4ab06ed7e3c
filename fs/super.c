/*
 * Trees of inodes (struct super_block, include/quire/fs.h) and the kinds
 * of file system mount(2) knows by name.
 *
 * Every inode of a tree counts its references (i_count) in its tree's
 * s_refs, so umount can tell whether anything still uses the tree: an
 * open file or a mapping (a struct file holds its inode), a process's
 * cwd, a directory fd, a mount on a directory inside it, a walk in
 * progress. The pseudofs trees hold one reference on each of their inodes
 * for good: those are s_pinned and do not count as use.
 *
 * A tree that umount has detached (s_detached) and whose s_refs falls to
 * zero is unreachable: no path leads into it and nobody holds any of its
 * inodes. The iput that drops the last reference then frees it through
 * its type's kill_sb (tmpfs); the pseudofs trees have none and stay.
 */
#define pr_fmt(fmt) "vfs: " fmt
#include <quire/fs.h>
#include <quire/pseudofs.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include "internal.h"

/* 0:1 is the root file system's (and unnamed files'); mounts take 0:2 on. */
static unsigned int last_anon_minor = 1;

struct super_block *alloc_super(const struct file_system_type *type)
{
	struct super_block *sb = kzalloc(sizeof(*sb), GFP_KERNEL);

	if (!sb)
		return NULL;
	sb->s_type = type;
	sb->s_dev = MKDEV(0, __atomic_add_fetch(&last_anon_minor, 1, __ATOMIC_RELAXED));
	atomic_long_set(&sb->s_refs, 0);
	return sb;
}

void inode_set_sb(struct inode *inode, struct super_block *sb, bool pinned)
{
	spin_lock(&inode->i_lock);
	inode->i_sb = sb;
	atomic_long_add(inode->i_count, &sb->s_refs);
	if (pinned)
		sb->s_pinned += inode->i_count;
	spin_unlock(&inode->i_lock);
}

void sb_get_ref(struct super_block *sb)
{
	atomic_long_inc(&sb->s_refs);
}

void sb_put_ref(struct super_block *sb)
{
	if (atomic_long_add_return(-1, &sb->s_refs) != 0 || !READ_ONCE(sb->s_detached) ||
	    !sb->s_type->kill_sb)
		return;
	/* Unreachable now; the kill's own igrab/iput pairs must not start another. */
	if (__atomic_exchange_n(&sb->s_dying, true, __ATOMIC_ACQ_REL))
		return;
	sb->s_type->kill_sb(sb);
}

void free_super(struct super_block *sb)
{
	kfree(sb->s_options);
	kfree(sb);
}

/* ---- the kinds mount(2) knows ---- */

/* tmpfs: a new, empty ramfs tree per mount (fs/ramfs.c); the others are pseudofs trees. */
static const struct file_system_type *const fs_types[] = {
	&proc_fs_type, &sysfs_fs_type, &debugfs_fs_type, &tmpfs_fs_type,
};

const struct file_system_type *get_fs_type(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(fs_types); i++)
		if (!strcmp(fs_types[i]->name, name))
			return fs_types[i];
	return NULL;
}
