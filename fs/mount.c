/*
 * Mounts: a directory whose place is taken by the root of another tree
 * (struct super_block, fs/super.c). A path walk that reaches a mount
 * point continues in the mounted root (follow_mount, from namei.c's step),
 * and ".." from that root leads to the mount point's parent. A mount point
 * cannot be removed (rmdir: EBUSY, as on Linux).
 *
 * mount(2) mounts a tree by type: a new tmpfs, or the one proc, sysfs or
 * debugfs tree; umount2(2) takes one away again (do_mount, do_umount,
 * Linux 6.12's errno values; docs/vfs.md, "Mounts"). A mount on a
 * directory that is itself the root of a mount hides it until it is
 * unmounted (mounts stack, as on Linux). Where Quire differs: a
 * proc/sysfs/debugfs tree is mounted in one place at a time (EBUSY while
 * it is mounted, where Linux would mount it a second time); there is no
 * remount, bind, move or propagation (EINVAL, logged; MS_PRIVATE is
 * accepted, since every mount is private already).
 *
 * The table is a list in mount order (what /proc/mounts shows), read and
 * changed under vfs_ns_mutex, which every walk holds.
 */
#define pr_fmt(fmt) "vfs: " fmt
#include <quire/fs.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/kernel.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include "internal.h"

struct mount {
	struct list_head list;
	struct inode *mountpoint;	/* referenced */
	struct super_block *sb;		/* its root referenced */
	char *devname;			/* mount(2)'s source, as given */
	char *path;			/* where, for /proc/mounts */
};

static LIST_HEAD(mounts);

static struct mount *mount_on(struct inode *inode)
{
	struct mount *m;

	list_for_each_entry(m, &mounts, list)
		if (m->mountpoint == inode)
			return m;
	return NULL;
}

/* The mount whose root inode is, or NULL. */
static struct mount *mount_of_root(struct inode *inode)
{
	struct mount *m;

	list_for_each_entry(m, &mounts, list)
		if (m->sb->s_root == inode)
			return m;
	return NULL;
}

struct inode *mountpoint_of(struct inode *root)
{
	struct mount *m = mount_of_root(root);

	return m ? m->mountpoint : NULL;
}

bool is_mountpoint(struct inode *inode)
{
	return mount_on(inode) != NULL;
}

struct inode *follow_mount(struct inode *inode)
{
	struct mount *m;

	while ((m = mount_on(inode)) != NULL) {
		igrab(m->sb->s_root);
		iput(inode);
		inode = m->sb->s_root;
	}
	return inode;
}

/* Where a directory is (vfs_ns_mutex held): fs/d_path.c's walk up, into PATH_MAX bytes. */
static int dir_path(struct inode *dir, char *buf)
{
	long n = dir_path_locked(dir, buf, PATH_MAX);

	return n < 0 ? (int)n : 0;
}

/* ---- mounting ---- */

/*
 * Put sb's root in the place of dir (referenced; the mount keeps the
 * reference). vfs_ns_mutex held. 0, -EBUSY (the tree is mounted already),
 * -ENOMEM.
 */
static int attach(struct inode *dir, struct super_block *sb, const char *devname)
{
	struct mount *m = kzalloc(sizeof(*m), GFP_KERNEL);
	char *path = kmalloc(PATH_MAX, GFP_KERNEL);
	int err = -ENOMEM;

	if (sb->s_mounted)
		err = -EBUSY;
	else if (m && path && !(err = dir_path(dir, path)) &&
		 (m->devname = kstrdup(devname, GFP_KERNEL)) && (m->path = kstrdup(path, GFP_KERNEL)))
		err = 0;
	kfree(path);
	if (err) {
		if (m)
			kfree(m->devname);
		kfree(m);
		return err;
	}
	m->mountpoint = dir;
	m->sb = sb;
	igrab(sb->s_root);
	sb->s_root->i_parent = dir->i_parent;	/* ".." leaves the mount */
	sb->s_mounted = true;
	WRITE_ONCE(sb->s_detached, false);
	list_add_tail(&m->list, &mounts);
	return 0;
}

int vfs_mount(const char *path, struct inode *root)
{
	struct inode *dir;
	int err = vfs_lookup(NULL, path, &dir);

	if (err)
		return err;
	if (!S_ISDIR(dir->i_mode) || !S_ISDIR(root->i_mode)) {
		iput(dir);
		return -ENOTDIR;
	}
	mutex_lock(&vfs_ns_mutex);
	err = attach(dir, root->i_sb, root->i_sb->s_type->name);
	mutex_unlock(&vfs_ns_mutex);
	if (err) {
		iput(dir);
		pr_err("cannot mount on %s: error %d\n", path, err);
	}
	return err;
}

/* Flags a new mount takes; the atime ones change nothing (Quire never updates atime). */
#define MS_NEW_MOUNT_OK	(MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SILENT | MS_REC | MS_NOATIME | \
			 MS_NODIRATIME | MS_RELATIME | MS_STRICTATIME)
#define MS_PROPAGATION	(MS_SHARED | MS_PRIVATE | MS_SLAVE | MS_UNBINDABLE)

/*
 * MS_PRIVATE (with MS_REC, MS_SILENT) on the root of a mount: nothing to
 * change, every mount is private. Other propagation types: EINVAL.
 */
static int change_type(struct inode *target, unsigned long flags)
{
	unsigned long type = flags & ~(MS_REC | MS_SILENT);
	bool root;

	mutex_lock(&vfs_ns_mutex);
	root = target == vfs_root || mount_of_root(target);
	mutex_unlock(&vfs_ns_mutex);
	if (!root || !type || (type & (type - 1)))
		return -EINVAL;
	if (type != MS_PRIVATE) {
		pr_warn("mount: shared, slave and unbindable mounts are not supported (EINVAL)\n");
		return -EINVAL;
	}
	return 0;
}

int do_mount(struct inode *cwd, const char *source, const char *target, const char *fstype,
	     unsigned long flags, const char *data)
{
	const struct file_system_type *type;
	struct super_block *sb;
	struct inode *dir;
	int err;

	if ((flags & MS_MGC_MSK) == MS_MGC_VAL)
		flags &= ~MS_MGC_MSK;		/* the old magic number, as Linux */
	err = vfs_lookup(cwd, target, &dir);
	if (err)
		return err;
	if (flags & (MS_REMOUNT | MS_BIND | MS_MOVE)) {
		pr_warn("mount: remount, bind and move are not supported (flags %#lx: EINVAL)\n",
			flags);
		err = -EINVAL;
	} else if (flags & MS_PROPAGATION) {
		err = change_type(dir, flags);
	} else if (!fstype) {
		err = -EINVAL;
	} else if (!(type = get_fs_type(fstype)) || !type->get_tree) {
		err = -ENODEV;
	} else if (flags & ~MS_NEW_MOUNT_OK) {
		pr_warn("mount: flags %#lx are not supported (EINVAL)\n", flags & ~MS_NEW_MOUNT_OK);
		err = -EINVAL;
	} else if (!(err = type->get_tree(data ? data : "", &sb))) {
		mutex_lock(&vfs_ns_mutex);
		dir = follow_mount(dir);	/* mounted on meanwhile: go on top */
		if (!S_ISDIR(dir->i_mode))
			err = -ENOTDIR;
		else if (dir->i_nlink == 0)
			err = -ENOENT;		/* removed (someone's cwd) */
		else if (dir->i_sb && dir->i_sb->s_detached)
			err = -EINVAL;		/* inside an unmounted tree */
		else if ((err = attach(dir, sb, source ? source : "none")) == 0)
			sb->s_mnt_flags = flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC);
		mutex_unlock(&vfs_ns_mutex);
		if (err == -EBUSY)
			pr_info("mount: %s is mounted already (EBUSY)\n", fstype);
		if (err && type->kill_sb)
			sb->s_detached = true;	/* a new tree nobody will see: freed by the iput */
		iput(sb->s_root);		/* get_tree's reference; the mount has its own */
		if (!err)
			return 0;		/* the mount keeps the reference on dir */
	}
	iput(dir);
	return err;
}

/* ---- unmounting ---- */

/* Take m out of the table (vfs_ns_mutex held); its tree is freed when unused. */
static void detach(struct mount *m)
{
	struct super_block *sb = m->sb;

	list_del(&m->list);
	sb->s_mounted = false;
	WRITE_ONCE(sb->s_detached, true);
	sb->s_root->i_parent = sb->s_root;	/* ".." of a detached root stays there */
	iput(m->mountpoint);
	iput(sb->s_root);
	kfree(m->devname);
	kfree(m->path);
	kfree(m);
}

/* MNT_DETACH: every mount on a directory of a detached tree goes too (vfs_ns_mutex held). */
static void detach_below(void)
{
	struct mount *m, *n;
	bool again = true;

	while (again) {
		again = false;
		list_for_each_entry_safe(m, n, &mounts, list) {
			struct super_block *above = m->mountpoint->i_sb;

			if (above && above->s_detached && !above->s_mounted) {
				detach(m);
				again = true;
				break;
			}
		}
	}
}

int do_umount(struct inode *cwd, const char *target, int flags)
{
	struct inode *root;
	struct mount *m;
	int err;

	if (flags & ~(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW))
		return -EINVAL;
	err = vfs_lookup_at(cwd, target, flags & UMOUNT_NOFOLLOW ? AT_SYMLINK_NOFOLLOW : 0, &root);
	if (err)
		return err;
	mutex_lock(&vfs_ns_mutex);
	m = mount_of_root(root);
	if (!m) {
		if (root == vfs_root)
			pr_info("umount: the root file system cannot be unmounted (EINVAL)\n");
		err = -EINVAL;			/* not the root of a mount */
	} else if (flags & MNT_EXPIRE) {
		pr_warn("umount: MNT_EXPIRE is not supported (EINVAL)\n");
		err = -EINVAL;
	} else if (!(flags & MNT_DETACH) &&
		   atomic_long_read(&m->sb->s_refs) - m->sb->s_pinned > 2) {
		/* More than the mount's reference and ours: an open file, a cwd, a mount inside. */
		err = -EBUSY;
	} else {
		detach(m);
		detach_below();
	}
	mutex_unlock(&vfs_ns_mutex);
	iput(root);			/* maybe the last: a tmpfs is freed here */
	return err;
}

/* ---- /proc/mounts ---- */

/* Linux's mangle(): space, tab, newline and backslash as \ooo. */
static int show_mangled(char *buf, size_t size, const char *s)
{
	int len = 0;

	for (; *s; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\\')
			len += scnprintf(buf + len, size - len, "\\%03o", (unsigned char)*s);
		else
			len += scnprintf(buf + len, size - len, "%c", *s);
	}
	return len;
}

static int show_mount(char *buf, size_t size, const char *devname, const char *path,
		      const struct super_block *sb)
{
	int len = show_mangled(buf, size, devname);

	len += scnprintf(buf + len, size - len, " ");
	len += show_mangled(buf + len, size - len, path);
	len += scnprintf(buf + len, size - len, " %s rw%s%s%s%s%s 0 0\n", sb->s_type->name,
			 sb->s_mnt_flags & MS_NOSUID ? ",nosuid" : "",
			 sb->s_mnt_flags & MS_NODEV ? ",nodev" : "",
			 sb->s_mnt_flags & MS_NOEXEC ? ",noexec" : "",
			 sb->s_options ? "," : "", sb->s_options ? sb->s_options : "");
	return len;
}

ssize_t mounts_show(char *buf, size_t size)
{
	struct mount *m;
	int len = 0;

	mutex_lock(&vfs_ns_mutex);
	if (vfs_root && vfs_root->i_sb)
		len = show_mount(buf, size, "rootfs", "/", vfs_root->i_sb);
	list_for_each_entry(m, &mounts, list)
		len += show_mount(buf + len, size - len, m->devname, m->path, m->sb);
	mutex_unlock(&vfs_ns_mutex);
	return len;
}
