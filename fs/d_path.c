/*
 * Path names back from inodes: getcwd(2) and /proc/self/exe.
 *
 * Quire's VFS keeps no dentries, but every directory knows its parent
 * (i_parent) and every directory can be listed, so the path of a directory
 * is found the way early Unix getcwd found it: go up through "..", and in
 * each parent look for the entry with the child's inode number. A mounted
 * root stands for the mount point it covers (its name is the mount
 * point's). Everything runs under vfs_ns_mutex, so the tree does not
 * change during the walk.
 */
#include <quire/fs.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include "internal.h"

struct find_name {
	struct dir_context ctx;
	unsigned long ino;
	char *name;		/* NAME_MAX + 1 bytes */
	bool found;
};

static bool match_ino(struct dir_context *ctx, const char *name, size_t len, loff_t next_pos,
		      u64 ino, unsigned int d_type)
{
	struct find_name *f = container_of(ctx, struct find_name, ctx);

	if (ino != f->ino || (len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return true;	/* go on */
	memcpy(f->name, name, len);
	f->name[len] = '\0';
	f->found = true;
	return false;
}

/* The name child has in dir, into name (NAME_MAX + 1 bytes); -ENOENT if none. */
static int name_in_dir(struct inode *dir, struct inode *child, char *name)
{
	struct file f = { .f_inode = dir, .f_op = dir->i_fop };
	struct find_name fn = { .ctx.actor = match_ino, .ino = child->i_ino, .name = name };

	if (!dir->i_fop || !dir->i_fop->iterate)
		return -ENOENT;
	fn.ctx.pos = 0;
	dir->i_fop->iterate(&f, &fn.ctx);
	return fn.found ? 0 : -ENOENT;
}

/*
 * The absolute path of directory dir (NULL: the root) into buf: its
 * length without the NUL, -ENOENT when dir was removed, -ERANGE when it
 * does not fit in size bytes. vfs_ns_mutex held.
 */
long dir_path_locked(struct inode *dir, char *buf, size_t size)
{
	char *tmp = kmalloc(PATH_MAX, GFP_KERNEL), *name = kmalloc(NAME_MAX + 1, GFP_KERNEL);
	size_t pos = PATH_MAX - 1, len;
	struct inode *inode = dir ? dir : vfs_root;
	long err = 0;

	if (!tmp || !name) {
		err = -ENOMEM;
		goto out;
	}
	if (READ_ONCE(inode->i_nlink) == 0) {
		err = -ENOENT;
		goto out;
	}
	tmp[pos] = '\0';
	while (inode != vfs_root) {
		struct inode *mp, *parent;
		size_t n;

		while ((mp = mountpoint_of(inode)) != NULL)
			inode = mp;	/* a mounted root (mounts stack) stands for what it covers */
		parent = inode->i_parent;
		if (parent == inode) {
			err = -ENOENT;	/* a root not mounted anywhere (MNT_DETACH) */
			goto out;
		}
		err = name_in_dir(parent, inode, name);
		if (err)
			goto out;
		n = strlen(name);
		if (n + 1 > pos) {
			err = -ENAMETOOLONG;
			goto out;
		}
		pos -= n;
		memcpy(tmp + pos, name, n);
		tmp[--pos] = '/';
		inode = parent;
	}
	if (pos == PATH_MAX - 1)
		tmp[--pos] = '/';	/* the root itself */
	len = PATH_MAX - 1 - pos;
	if (len + 1 > size) {
		err = -ERANGE;
		goto out;
	}
	memcpy(buf, tmp + pos, len + 1);
	err = (long)len;
out:
	kfree(tmp);
	kfree(name);
	return err;
}

long vfs_getcwd(struct inode *cwd, char *buf, size_t size)
{
	long ret;

	mutex_lock(&vfs_ns_mutex);
	ret = dir_path_locked(cwd, buf, size);
	mutex_unlock(&vfs_ns_mutex);
	return ret;
}

/*
 * The absolute path of the file path names (from cwd), with every
 * directory and a symlink at the end resolved, as Linux's /proc/self/exe
 * shows the program execve ran: a kmalloc'd string, or NULL.
 */
char *vfs_real_path(struct inode *cwd, const char *path)
{
	char *p = kstrdup(path, GFP_KERNEL), *out = NULL, *link = NULL;
	struct inode *dir = cwd ? igrab(cwd) : igrab(vfs_root);

	for (int links = 0; p && links <= MAXSYMLINKS; links++) {
		char *slash = strrchr(p, '/'), *last = slash ? slash + 1 : p;
		struct inode *parent;
		struct stat st;
		long n;

		if (slash) {		/* the directories: looked up (symlinks followed) */
			char save = *last;

			*last = '\0';
			n = vfs_lookup(dir, p, &parent);
			*last = save;
			if (n)
				break;
		} else {
			parent = igrab(dir);
		}
		if (!*last || vfs_stat(parent, last, AT_SYMLINK_NOFOLLOW, &st)) {
			iput(parent);
			break;
		}
		if (S_ISLNK(st.st_mode)) {	/* follow it, from the directory it is in */
			kfree(link);
			link = kmalloc(PATH_MAX, GFP_KERNEL);
			n = link ? vfs_readlink(parent, last, link, PATH_MAX - 1) : -ENOMEM;
			iput(dir);
			dir = parent;
			if (n <= 0)
				break;
			link[n] = '\0';
			kfree(p);
			p = kstrdup(link, GFP_KERNEL);
			continue;
		}
		out = kmalloc(PATH_MAX, GFP_KERNEL);
		n = out ? vfs_getcwd(parent, out, PATH_MAX) : -ENOMEM;
		iput(parent);
		if (n < 0 || (size_t)n + 1 + strlen(last) + 1 > PATH_MAX) {
			kfree(out);
			out = NULL;
			break;
		}
		if (n > 1)
			out[n++] = '/';
		strscpy(out + n, last, PATH_MAX - (size_t)n);
		break;
	}
	iput(dir);
	kfree(link);
	kfree(p);
	return out;
}
