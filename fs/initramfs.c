/*
 * Unpacking a cpio archive into the file tree: directories, regular files,
 * symlinks and device nodes, with the archive's permission bits and
 * modification times. Missing parent directories are made (0755). An entry
 * that cannot be created is logged and skipped; a malformed archive stops
 * the unpacking at the first problem, with its offset.
 */
#define pr_fmt(fmt) "initrd: " fmt
#include <quire/initrd.h>
#include <quire/fs.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/printk.h>

/* A ".." component would leave the directory the archive is unpacked into. */
static bool has_dotdot(const char *name)
{
	for (const char *p = name; (p = strstr(p, "..")); p += 2)
		if ((p == name || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return true;
	return false;
}

/* mkdir -p of every directory above name (name is modified and restored). */
static void make_parents(struct inode *root, char *name)
{
	for (char *p = strchr(name, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		vfs_mkdir(root, name, 0755);	/* EEXIST is fine; others show up below */
		*p = '/';
	}
}

static void set_mtime(struct inode *root, const char *name, u32 mtime)
{
	struct inode *inode;

	if (vfs_lookup_at(root, name, AT_SYMLINK_NOFOLLOW, &inode))
		return;
	inode->i_mtime.tv_sec = mtime;
	inode->i_mtime.tv_nsec = 0;
	iput(inode);
}

static int unpack_file(struct inode *root, const char *name, const struct cpio_entry *e)
{
	struct file *f;
	loff_t pos = 0;
	ssize_t n;
	int err = vfs_open(root, name, O_WRONLY | O_CREAT | O_TRUNC, e->mode & 07777, &f);

	if (err)
		return err;
	n = e->filesize ? vfs_write(f, e->data, e->filesize, &pos) : 0;
	fput(f);
	if (n < 0)
		return (int)n;
	return (u32)n == e->filesize ? 0 : -ENOMEM;
}

static int unpack_symlink(struct inode *root, const char *name, const struct cpio_entry *e)
{
	char *target;
	int err;

	if (e->filesize == 0 || e->filesize >= PATH_MAX)
		return -ENAMETOOLONG;
	target = kmalloc(e->filesize + 1, GFP_KERNEL);
	if (!target)
		return -ENOMEM;
	memcpy(target, e->data, e->filesize);
	target[e->filesize] = '\0';
	if (strlen(target) != e->filesize)
		err = -EINVAL;		/* a NUL inside the target */
	else
		err = vfs_symlink(root, target, name);
	kfree(target);
	return err;
}

static int unpack_one(struct inode *root, char *name, const struct cpio_entry *e,
		      struct initramfs_stats *st)
{
	umode_t mode = e->mode;
	int err;

	make_parents(root, name);
	switch (mode & S_IFMT) {
	case S_IFDIR:
		err = vfs_mkdir(root, name, mode & 07777);
		if (err == -EEXIST) {
			struct stat s;

			err = vfs_stat(root, name, 0, &s) || !S_ISDIR(s.st_mode) ? -EEXIST : 0;
		}
		if (!err)
			st->dirs++;
		break;
	case S_IFREG:
		if (e->nlink > 1)
			pr_warn("%s: hard links are unpacked as separate files\n", name);
		err = unpack_file(root, name, e);
		if (!err) {
			st->files++;
			st->bytes += e->filesize;
		}
		break;
	case S_IFLNK:
		err = unpack_symlink(root, name, e);
		if (!err)
			st->symlinks++;
		break;
	case S_IFCHR:
	case S_IFBLK:
	case S_IFIFO:
	case S_IFSOCK:
		err = vfs_mknod(root, name, mode & (S_IFMT | 07777),
				MKDEV(e->rdevmajor & 0xfff, e->rdevminor & MINORMASK));
		if (!err)
			st->nodes++;
		break;
	default:
		err = -EINVAL;
		break;
	}
	if (!err)
		set_mtime(root, name, e->mtime);
	return err;
}

int unpack_to_rootfs(struct inode *root, const void *buf, size_t len,
		     struct initramfs_stats *st)
{
	struct cpio_reader r;
	struct cpio_entry e;
	int ret;

	*st = (struct initramfs_stats){ 0 };
	cpio_init(&r, buf, len);
	while ((ret = cpio_next(&r, &e)) > 0) {
		const char *name = e.name;
		char *copy;
		int err;

		/* Names are relative to the root: drop leading "/" and "./". */
		while (*name == '/' || (name[0] == '.' && name[1] == '/'))
			name += *name == '/' ? 1 : 2;
		if (!*name || !strcmp(name, "."))
			continue;	/* the root itself */
		if (has_dotdot(name)) {
			err = -EINVAL;		/* a name escaping the root */
		} else if (!(copy = kmalloc(strlen(name) + 1, GFP_KERNEL))) {
			err = -ENOMEM;
		} else {
			memcpy(copy, name, strlen(name) + 1);
			err = unpack_one(root, copy, &e, st);
			kfree(copy);
		}
		if (err) {
			st->skipped++;
			pr_warn("%s (mode %#o, at offset %zu): error %d; skipped\n",
				e.name, e.mode, e.offset, err);
		}
	}
	if (ret < 0) {
		pr_err("malformed archive at offset %zu: %s; unpacking stops\n",
		       r.err_offset, r.error);
		return ret;
	}
	return 0;
}
