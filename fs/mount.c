/*
 * Mount points: a directory of the tree whose place is taken by the root
 * of another file system (a pseudofs tree: /proc, /sys). A path walk that
 * reaches a mount point continues in the mounted root (follow_mount, from
 * namei.c's step); ".." from the mounted root leads to the mount point's
 * parent. A mount point cannot be removed (rmdir: EBUSY, as on Linux).
 *
 * Mounts are made at boot and never undone; the table is read and changed
 * under vfs_ns_mutex, which every walk holds.
 */
#define pr_fmt(fmt) "vfs: " fmt
#include <quire/fs.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include "internal.h"

#define MAX_MOUNTS	8

static struct {
	struct inode *mountpoint;	/* referenced */
	struct inode *root;		/* referenced */
} mounts[MAX_MOUNTS];

static struct inode *mounted_on(struct inode *inode)
{
	for (int i = 0; i < MAX_MOUNTS; i++)
		if (mounts[i].mountpoint == inode)
			return mounts[i].root;
	return NULL;
}

struct inode *mountpoint_of(struct inode *root)
{
	for (int i = 0; i < MAX_MOUNTS; i++)
		if (mounts[i].root == root)
			return mounts[i].mountpoint;
	return NULL;
}

bool is_mountpoint(struct inode *inode)
{
	return mounted_on(inode) != NULL;
}

struct inode *follow_mount(struct inode *inode)
{
	struct inode *root;

	while ((root = mounted_on(inode)) != NULL) {
		igrab(root);
		iput(inode);
		inode = root;
	}
	return inode;
}

int vfs_mount(const char *path, struct inode *root)
{
	struct inode *dir;
	int err = vfs_lookup(NULL, path, &dir);
	int slot = -1;

	if (err)
		return err;
	if (!S_ISDIR(dir->i_mode) || !S_ISDIR(root->i_mode)) {
		iput(dir);
		return -ENOTDIR;
	}
	mutex_lock(&vfs_ns_mutex);
	for (int i = MAX_MOUNTS - 1; i >= 0; i--) {
		if (mounts[i].root == root || mounts[i].mountpoint == dir)
			err = -EBUSY;
		if (!mounts[i].mountpoint)
			slot = i;
	}
	if (!err && slot < 0)
		err = -ENOSPC;
	if (!err) {
		root->i_parent = dir->i_parent;		/* ".." leaves the mount */
		mounts[slot].mountpoint = dir;		/* keeps the lookup's reference */
		mounts[slot].root = igrab(root);
	}
	mutex_unlock(&vfs_ns_mutex);
	if (err) {
		iput(dir);
		pr_err("cannot mount on %s: error %d\n", path, err);
	}
	return err;
}
