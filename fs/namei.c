/*
 * Path names: the walk from a starting directory (the root for an absolute
 * path, else the caller's cwd) through each component, with ".", "..",
 * repeated slashes and symlinks, and the operations that create or remove
 * a name (mkdir, mknod, symlink, unlink, rmdir). Errors are Linux's:
 * ENOENT, ENOTDIR, ENAMETOOLONG (a path of PATH_MAX bytes or more, a
 * component over NAME_MAX), ELOOP (over MAXSYMLINKS links, or nested more
 * than MAX_NESTED_LINKS deep), EEXIST, EISDIR, ENOTEMPTY, EBUSY, EINVAL.
 * A directory with another file system mounted on it (fs/mount.c) is
 * crossed into the mounted root.
 *
 * Everything runs under vfs_ns_mutex, so a walk sees a stable tree; each
 * step holds a reference on the directory it stands in.
 */
#define pr_fmt(fmt) "vfs: " fmt
#include <quire/fs.h>
#include <quire/string.h>
#include <quire/errno.h>
#include "internal.h"

#define MAX_NESTED_LINKS	8	/* Linux's nesting limit for links inside links */

DEFINE_MUTEX(vfs_ns_mutex);
struct inode *vfs_root;

enum last_type { LAST_NORM, LAST_DOT, LAST_DOTDOT, LAST_ROOT };

struct nameidata {
	int links;		/* symlinks followed in this call */
	int depth;		/* links being resolved inside links */
};

/* Where a walk stopped: the directory holding the last component. */
struct last {
	struct inode *dir;	/* referenced */
	const char *name;
	size_t len;
	bool slash;		/* a '/' followed the last component */
	enum last_type type;
};

static int path_lookup(struct nameidata *nd, struct inode *start, const char *path,
		       bool follow, struct inode **out);

static bool path_too_long(const char *path)
{
	return strnlen(path, PATH_MAX) >= PATH_MAX;
}

static bool dir_dead(struct inode *dir)
{
	return READ_ONCE(dir->i_nlink) == 0;
}

/* Resolve the symlink `link` found in dir; consumes the reference on link. */
static int follow_link(struct nameidata *nd, struct inode *dir, struct inode *link,
		       struct inode **out)
{
	int err;

	if (++nd->links > MAXSYMLINKS || nd->depth >= MAX_NESTED_LINKS) {
		iput(link);
		return -ELOOP;
	}
	nd->depth++;
	err = path_lookup(nd, dir, link->i_op->get_link(link), true, out);
	nd->depth--;
	iput(link);
	return err;
}

/* One component in dir: ".", "..", or a name (following a symlink if asked). */
static int step(struct nameidata *nd, struct inode *dir, const char *name, size_t len,
		bool follow, struct inode **out)
{
	struct inode *inode;
	int err;

	if (!S_ISDIR(dir->i_mode))
		return -ENOTDIR;
	if (len == 1 && name[0] == '.') {
		*out = igrab(dir);
		return 0;
	}
	if (len == 2 && name[0] == '.' && name[1] == '.') {
		if (!dir->i_parent)
			return -ENOENT;
		*out = igrab(dir->i_parent);
		return 0;
	}
	if (dir_dead(dir))
		return -ENOENT;
	err = dir->i_op->lookup(dir, name, len, &inode);
	if (err)
		return err;
	inode = follow_mount(inode);		/* /proc, /sys: the mounted tree */
	if (follow && S_ISLNK(inode->i_mode))
		return follow_link(nd, dir, inode, out);
	*out = inode;
	return 0;
}

static enum last_type type_of(const char *name, size_t len)
{
	if (len == 1 && name[0] == '.')
		return LAST_DOT;
	if (len == 2 && name[0] == '.' && name[1] == '.')
		return LAST_DOTDOT;
	return LAST_NORM;
}

/*
 * Walk every component of path but the last, from start (or the root for
 * an absolute path). On success l->dir is a referenced directory.
 */
static int walk_parent(struct nameidata *nd, struct inode *start, const char *path,
		       struct last *l)
{
	struct inode *cur = igrab(*path == '/' ? vfs_root : start);
	const char *p = path;

	for (;;) {
		const char *s, *q;
		struct inode *next;
		size_t n;
		int err;

		if (!S_ISDIR(cur->i_mode)) {
			iput(cur);
			return -ENOTDIR;
		}
		while (*p == '/')
			p++;
		if (!*p) {		/* only slashes: the root */
			*l = (struct last){ .dir = cur, .name = p, .type = LAST_ROOT };
			return 0;
		}
		for (s = p; *p && *p != '/'; p++)
			;
		n = (size_t)(p - s);
		if (n > NAME_MAX) {
			iput(cur);
			return -ENAMETOOLONG;
		}
		for (q = p; *q == '/'; q++)
			;
		if (!*q) {
			*l = (struct last){ .dir = cur, .name = s, .len = n,
					    .slash = p != q, .type = type_of(s, n) };
			return 0;
		}
		err = step(nd, cur, s, n, true, &next);
		iput(cur);
		if (err)
			return err;
		cur = next;
		p = q;
	}
}

static int path_lookup(struct nameidata *nd, struct inode *start, const char *path,
		       bool follow, struct inode **out)
{
	struct inode *inode;
	struct last l;
	int err;

	if (!*path)
		return -ENOENT;
	err = walk_parent(nd, start, path, &l);
	if (err)
		return err;
	if (l.type == LAST_ROOT) {
		*out = l.dir;
		return 0;
	}
	err = step(nd, l.dir, l.name, l.len, follow || l.slash, &inode);
	iput(l.dir);
	if (err)
		return err;
	if (l.slash && !S_ISDIR(inode->i_mode)) {
		iput(inode);
		return -ENOTDIR;
	}
	*out = inode;
	return 0;
}

static struct inode *start_of(struct inode *cwd)
{
	return cwd ? cwd : vfs_root;
}

int vfs_lookup_at(struct inode *cwd, const char *path, int flags, struct inode **out)
{
	struct nameidata nd = { 0 };
	int err;

	if (path_too_long(path))
		return -ENAMETOOLONG;
	mutex_lock(&vfs_ns_mutex);
	err = path_lookup(&nd, start_of(cwd), path, !(flags & AT_SYMLINK_NOFOLLOW), out);
	mutex_unlock(&vfs_ns_mutex);
	return err;
}

int vfs_stat(struct inode *cwd, const char *path, int flags, struct stat *st)
{
	struct inode *inode;
	int err = vfs_lookup_at(cwd, path, flags, &inode);

	if (err)
		return err;
	vfs_getattr(inode, st);
	iput(inode);
	return 0;
}

/*
 * Walk to the parent of a name about to be created; ns mutex held. A
 * trailing slash is only allowed for a directory: for anything else the
 * name must then exist (EEXIST) or it is ENOENT, as Linux's filename_create.
 */
static int create_parent(struct nameidata *nd, struct inode *cwd, const char *path,
			 bool want_dir, struct last *l)
{
	struct inode *existing;
	int err;

	if (!*path)
		return -ENOENT;
	if (path_too_long(path))
		return -ENAMETOOLONG;
	err = walk_parent(nd, start_of(cwd), path, l);
	if (err)
		return err;
	if (l->type != LAST_NORM)
		err = -EEXIST;
	else if (dir_dead(l->dir))
		err = -ENOENT;
	else if (!l->dir->i_op->lookup(l->dir, l->name, l->len, &existing)) {
		iput(existing);
		err = -EEXIST;
	} else if (l->slash && !want_dir)
		err = -ENOENT;
	if (err)
		iput(l->dir);
	return err;
}

static int create_node(struct inode *cwd, const char *path, umode_t mode, dev_t rdev)
{
	struct nameidata nd = { 0 };
	struct last l;
	int err;

	mutex_lock(&vfs_ns_mutex);
	err = create_parent(&nd, cwd, path, S_ISDIR(mode), &l);
	if (!err) {
		err = l.dir->i_op->create(l.dir, l.name, l.len, mode, rdev, NULL);
		iput(l.dir);
	}
	mutex_unlock(&vfs_ns_mutex);
	return err;
}

int vfs_mkdir(struct inode *cwd, const char *path, umode_t mode)
{
	return create_node(cwd, path, S_IFDIR | (mode & 07777), 0);
}

int vfs_mknod(struct inode *cwd, const char *path, umode_t mode, dev_t rdev)
{
	switch (mode & S_IFMT) {
	case 0:
		mode |= S_IFREG;
		break;
	case S_IFREG: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		break;
	case S_IFDIR:
		return -EPERM;		/* mknod never makes directories */
	default:
		return -EINVAL;
	}
	return create_node(cwd, path, mode & (S_IFMT | 07777), rdev);
}

int vfs_symlink(struct inode *cwd, const char *target, const char *path)
{
	struct nameidata nd = { 0 };
	struct last l;
	int err;

	if (!*target)
		return -ENOENT;
	if (path_too_long(target))
		return -ENAMETOOLONG;
	mutex_lock(&vfs_ns_mutex);
	err = create_parent(&nd, cwd, path, false, &l);
	if (!err) {
		err = l.dir->i_op->symlink(l.dir, l.name, l.len, target);
		iput(l.dir);
	}
	mutex_unlock(&vfs_ns_mutex);
	return err;
}

/* Walk to the parent of a name about to be removed; ns mutex held. */
static int remove_parent(struct nameidata *nd, struct inode *cwd, const char *path,
			 struct last *l)
{
	if (!*path)
		return -ENOENT;
	if (path_too_long(path))
		return -ENAMETOOLONG;
	return walk_parent(nd, start_of(cwd), path, l);
}

int vfs_unlink(struct inode *cwd, const char *path)
{
	struct nameidata nd = { 0 };
	struct inode *inode;
	struct last l;
	int err;

	mutex_lock(&vfs_ns_mutex);
	err = remove_parent(&nd, cwd, path, &l);
	if (err)
		goto out;
	if (l.type != LAST_NORM) {
		err = -EISDIR;
	} else if (l.slash) {
		/* "name/": a directory is EISDIR, anything else ENOTDIR. */
		err = step(&nd, l.dir, l.name, l.len, false, &inode);
		if (!err) {
			err = S_ISDIR(inode->i_mode) ? -EISDIR : -ENOTDIR;
			iput(inode);
		}
	} else {
		err = dir_dead(l.dir) ? -ENOENT : l.dir->i_op->unlink(l.dir, l.name, l.len);
	}
	iput(l.dir);
out:
	mutex_unlock(&vfs_ns_mutex);
	return err;
}

/* The name in dir is a mount point (rmdir: EBUSY). */
static bool mountpoint_at(struct inode *dir, const char *name, size_t len)
{
	struct inode *inode;
	bool ret;

	if (dir->i_op->lookup(dir, name, len, &inode))
		return false;
	ret = is_mountpoint(inode);
	iput(inode);
	return ret;
}

int vfs_rmdir(struct inode *cwd, const char *path)
{
	static const int errs[] = {
		[LAST_DOT] = -EINVAL, [LAST_DOTDOT] = -ENOTEMPTY, [LAST_ROOT] = -EBUSY,
	};
	struct nameidata nd = { 0 };
	struct last l;
	int err;

	mutex_lock(&vfs_ns_mutex);
	err = remove_parent(&nd, cwd, path, &l);
	if (!err) {
		if (l.type != LAST_NORM)
			err = errs[l.type];
		else if (dir_dead(l.dir))
			err = -ENOENT;
		else if (mountpoint_at(l.dir, l.name, l.len))
			err = -EBUSY;
		else
			err = l.dir->i_op->rmdir(l.dir, l.name, l.len);
		iput(l.dir);
	}
	mutex_unlock(&vfs_ns_mutex);
	return err;
}

ssize_t vfs_readlink(struct inode *cwd, const char *path, char *buf, size_t size)
{
	struct inode *inode;
	const char *target;
	size_t len;
	int err;

	if (!size)
		return -EINVAL;
	err = vfs_lookup_at(cwd, path, AT_SYMLINK_NOFOLLOW, &inode);
	if (err)
		return err;
	if (!S_ISLNK(inode->i_mode)) {
		iput(inode);
		return -EINVAL;
	}
	target = inode->i_op->get_link(inode);
	len = min(strlen(target), size);
	memcpy(buf, target, len);
	iput(inode);
	return (ssize_t)len;
}

/*
 * open's walk: find or create the last component. A symlink at the end is
 * followed (unless O_NOFOLLOW) by walking its target from the directory it
 * is in, so O_CREAT through a dangling link creates the target, as on Linux.
 */
int open_namei(struct inode *cwd, const char *path, int flags, umode_t mode,
	       struct inode **out, bool *created)
{
	struct nameidata nd = { 0 };
	struct inode *link = NULL, *inode = NULL;
	struct last l;
	int err;

	*created = false;
	if (!*path)
		return -ENOENT;
	if (path_too_long(path))
		return -ENAMETOOLONG;
	mutex_lock(&vfs_ns_mutex);
	err = walk_parent(&nd, start_of(cwd), path, &l);
	if (err)
		goto unlock;
	for (;;) {
		struct last next;
		bool slash = l.slash;

		if (l.type == LAST_ROOT) {
			inode = igrab(l.dir);
			err = 0;
		} else {
			err = step(&nd, l.dir, l.name, l.len, false, &inode);
		}
		if (err == -ENOENT && (flags & O_CREAT) && l.type == LAST_NORM) {
			if (l.slash)
				err = -EISDIR;
			else if (!dir_dead(l.dir))
				err = l.dir->i_op->create(l.dir, l.name, l.len,
							  S_IFREG | (mode & 07777), 0, &inode);
			*created = !err;
			break;
		}
		if (err)
			break;
		if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
			err = -EEXIST;
			break;
		}
		if (!S_ISLNK(inode->i_mode) || ((flags & O_NOFOLLOW) && !l.slash))
			break;
		/* Follow the link: its target's parent becomes the place to look. */
		if (++nd.links > MAXSYMLINKS) {
			err = -ELOOP;
			break;
		}
		err = walk_parent(&nd, l.dir, inode->i_op->get_link(inode), &next);
		if (err)
			break;
		iput(l.dir);
		iput(link);
		link = inode;		/* next.name points into its target */
		inode = NULL;
		l = next;
		l.slash |= slash;
	}
	if (!err && l.slash && !S_ISDIR(inode->i_mode))
		err = -ENOTDIR;
	if (!err && (flags & O_CREAT) && !*created && S_ISDIR(inode->i_mode))
		err = -EISDIR;
	if (err && inode)
		iput(inode);
	else if (!err)
		*out = inode;
	iput(l.dir);
	iput(link);
unlock:
	mutex_unlock(&vfs_ns_mutex);
	return err;
}
