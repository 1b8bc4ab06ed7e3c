/*
 * ramfs: every file lives in memory only. Regular files keep their data in
 * the page cache (mm/filemap.c); a directory is a list of entries in
 * creation order; a symlink's target is a kmalloc'd string.
 *
 * Each directory entry gets a position ("cookie") when it is created,
 * counting up from 2 (0 and 1 are "." and ".."); getdents64 reports the
 * next entry's position as d_off, so a listing resumed at any d_off (or
 * after entries were removed) never repeats or skips a surviving entry.
 *
 * Directory operations run under vfs_ns_mutex (fs/namei.c); file data
 * under the inode's i_mutex.
 */
#define pr_fmt(fmt) "ramfs: " fmt
#include <quire/fs.h>
#include <quire/pagemap.h>
#include <quire/mm.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include "internal.h"

struct ramfs_dirent {
	struct list_head list;
	struct inode *inode;	/* a link (i_nlink), not a reference */
	loff_t pos;
	size_t len;
	char name[];
};

struct ramfs_dir {
	struct list_head entries;
	loff_t next_pos;
	unsigned long nr;
	struct inode *dead_parent;	/* removed: a reference keeping ".." valid */
};

static const struct inode_operations ramfs_file_inode_operations;
static const struct inode_operations ramfs_symlink_inode_operations;
static const struct inode_operations ramfs_special_inode_operations;
static const struct address_space_operations ramfs_aops;
static const struct file_operations ramfs_file_operations;

static struct ramfs_dir *dir_of(struct inode *dir)
{
	return dir->i_private;
}

static struct ramfs_dirent *find(struct inode *dir, const char *name, size_t len)
{
	struct ramfs_dirent *d;

	list_for_each_entry(d, &dir_of(dir)->entries, list)
		if (d->len == len && !memcmp(d->name, name, len))
			return d;
	return NULL;
}

static void touch(struct inode *inode)
{
	inode->i_mtime = inode->i_ctime = current_time();
}

static int ramfs_lookup(struct inode *dir, const char *name, size_t len, struct inode **out)
{
	struct ramfs_dirent *d = find(dir, name, len);

	if (!d)
		return -ENOENT;
	*out = igrab(d->inode);
	return 0;
}

static int add_entry(struct inode *dir, const char *name, size_t len, struct inode *inode)
{
	struct ramfs_dirent *d = kmalloc(sizeof(*d) + len, GFP_KERNEL);

	if (!d)
		return -ENOMEM;
	d->inode = inode;
	d->pos = dir_of(dir)->next_pos++;
	d->len = len;
	memcpy(d->name, name, len);
	list_add_tail(&d->list, &dir_of(dir)->entries);
	dir_of(dir)->nr++;
	inc_nlink(inode);
	touch(dir);
	return 0;
}

static void del_entry(struct inode *dir, struct ramfs_dirent *d)
{
	list_del(&d->list);
	dir_of(dir)->nr--;
	kfree(d);
	touch(dir);
}

/* A new inode of any type; for a directory, its entry list too. */
static struct inode *ramfs_new_inode(struct inode *dir, umode_t mode, dev_t rdev)
{
	struct inode *inode = new_inode(mode);

	if (!inode)
		return NULL;
	switch (mode & S_IFMT) {
	case S_IFREG:
		inode->i_op = &ramfs_file_inode_operations;
		inode->i_fop = &ramfs_file_operations;
		inode->i_mapping->a_ops = &ramfs_aops;
		break;
	case S_IFDIR: {
		struct ramfs_dir *rd = kzalloc(sizeof(*rd), GFP_KERNEL);

		if (!rd) {
			clear_nlink(inode);
			iput(inode);
			return NULL;
		}
		INIT_LIST_HEAD(&rd->entries);
		rd->next_pos = 2;
		inode->i_private = rd;
		inode->i_op = &ramfs_dir_inode_operations;
		inode->i_fop = &ramfs_dir_operations;
		inode->i_parent = dir ? dir : inode;
		inc_nlink(inode);		/* its own "." */
		break;
	}
	case S_IFLNK:
		inode->i_op = &ramfs_symlink_inode_operations;
		break;
	default:				/* devices, FIFOs, sockets */
		inode->i_op = &ramfs_special_inode_operations;
		inode->i_fop = &def_chr_fops;
		inode->i_rdev = rdev;
		break;
	}
	return inode;
}

struct inode *ramfs_get_root(void)
{
	struct inode *root = ramfs_new_inode(NULL, S_IFDIR | 0755, 0);

	if (root)
		inc_nlink(root);	/* root's ".." is itself */
	return root;
}

static int ramfs_create(struct inode *dir, const char *name, size_t len, umode_t mode,
			dev_t rdev, struct inode **out)
{
	struct inode *inode;
	int err;

	if (find(dir, name, len))
		return -EEXIST;
	inode = ramfs_new_inode(dir, mode, rdev);
	if (!inode)
		return -ENOMEM;
	err = add_entry(dir, name, len, inode);
	if (err) {
		clear_nlink(inode);
		iput(inode);
		return err;
	}
	if (S_ISDIR(mode))
		inc_nlink(dir);		/* the child's ".." */
	if (out)
		*out = inode;
	else
		iput(inode);
	return 0;
}

static int ramfs_symlink(struct inode *dir, const char *name, size_t len, const char *target)
{
	size_t tlen = strlen(target);
	struct inode *inode;
	char *copy;
	int err;

	copy = kmalloc(tlen + 1, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, target, tlen + 1);
	err = ramfs_create(dir, name, len, S_IFLNK | 0777, 0, &inode);
	if (err) {
		kfree(copy);
		return err;
	}
	inode->i_private = copy;
	inode->i_size = (loff_t)tlen;
	iput(inode);
	return 0;
}

static int ramfs_unlink(struct inode *dir, const char *name, size_t len)
{
	struct ramfs_dirent *d = find(dir, name, len);
	struct inode *inode;

	if (!d)
		return -ENOENT;
	if (S_ISDIR(d->inode->i_mode))
		return -EISDIR;
	inode = igrab(d->inode);	/* the last iput decides, not us */
	del_entry(dir, d);
	drop_nlink(inode);
	inode->i_ctime = current_time();
	iput(inode);
	return 0;
}

static int ramfs_rmdir(struct inode *dir, const char *name, size_t len)
{
	struct ramfs_dirent *d = find(dir, name, len);
	struct inode *inode;

	if (!d)
		return -ENOENT;
	inode = d->inode;
	if (!S_ISDIR(inode->i_mode))
		return -ENOTDIR;
	if (dir_of(inode)->nr)
		return -ENOTEMPTY;
	igrab(inode);
	del_entry(dir, d);
	/* Dead: names in it give ENOENT, but ".." still leads up (Linux's d_parent). */
	dir_of(inode)->dead_parent = igrab(dir);
	clear_nlink(inode);
	drop_nlink(dir);
	iput(inode);
	return 0;
}

static const char *ramfs_get_link(struct inode *inode)
{
	return inode->i_private;
}

static int ramfs_setsize(struct inode *inode, loff_t size)
{
	loff_t old = inode->i_size;

	/* The size first, as Linux's truncate_setsize: a fault from now on sees it. */
	WRITE_ONCE(inode->i_size, size);
	if (size < old)
		truncate_inode_pages(inode->i_mapping, size);
	touch(inode);
	return 0;
}

static void ramfs_evict(struct inode *inode)
{
	switch (inode->i_mode & S_IFMT) {
	case S_IFREG:
		truncate_inode_pages(inode->i_mapping, 0);
		break;
	case S_IFDIR:
		if (inode->i_private)		/* empty: rmdir checked */
			iput(dir_of(inode)->dead_parent);
		kfree(inode->i_private);
		break;
	case S_IFLNK:
		kfree(inode->i_private);
		break;
	}
}

/* ---- file operations ---- */

/*
 * ramfs has no backing store: a folio the page cache asks for is a hole,
 * zeroes. It is valid, and dirty for good: nothing could write it back.
 */
static int ramfs_read_folio(struct file *file, struct folio *folio)
{
	memset(folio_address(folio), 0, PAGE_SIZE);
	set_page_flag((struct page *)folio, PG_uptodate);
	set_page_flag((struct page *)folio, PG_dirty);
	return 0;
}

static ssize_t ramfs_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	struct inode *inode = file_inode(f);
	ssize_t ret;

	mutex_lock(&inode->i_mutex);
	ret = filemap_read(inode, buf, count, *pos);
	mutex_unlock(&inode->i_mutex);
	if (ret > 0)
		*pos += ret;
	return ret;
}

static ssize_t ramfs_write(struct file *f, const void *buf, size_t count, loff_t *pos)
{
	struct inode *inode = file_inode(f);
	ssize_t ret;

	mutex_lock(&inode->i_mutex);
	if (f->f_flags & O_APPEND)
		*pos = inode->i_size;
	if (*pos >= MAX_LFS_FILESIZE) {
		mutex_unlock(&inode->i_mutex);
		return -EFBIG;
	}
	if (count > (u64)(MAX_LFS_FILESIZE - *pos))
		count = (size_t)(MAX_LFS_FILESIZE - *pos);
	ret = filemap_write(inode, buf, count, *pos);
	if (ret > 0) {
		*pos += ret;
		touch(inode);
	}
	mutex_unlock(&inode->i_mutex);
	return ret;
}

/* Emit ".", "..", then every entry from ctx->pos on. */
static int ramfs_iterate(struct file *f, struct dir_context *ctx)
{
	struct inode *dir = file_inode(f);
	struct ramfs_dirent *d;

	if (!dir_emit_dots(dir, ctx))
		return 0;
	list_for_each_entry(d, &dir_of(dir)->entries, list) {
		if (d->pos < ctx->pos)
			continue;
		if (!ctx->actor(ctx, d->name, d->len, d->pos + 1, d->inode->i_ino,
				(d->inode->i_mode & S_IFMT) >> 12))
			return 0;
		ctx->pos = d->pos + 1;
	}
	return 0;
}

const struct inode_operations ramfs_dir_inode_operations = {
	.lookup = ramfs_lookup,
	.create = ramfs_create,
	.symlink = ramfs_symlink,
	.unlink = ramfs_unlink,
	.rmdir = ramfs_rmdir,
	.evict = ramfs_evict,
};

const struct file_operations ramfs_dir_operations = {
	.iterate = ramfs_iterate,
	.llseek = dir_position_llseek,
	.fsync = noop_fsync,
};

static const struct inode_operations ramfs_file_inode_operations = {
	.setsize = ramfs_setsize,
	.evict = ramfs_evict,
};

static const struct inode_operations ramfs_symlink_inode_operations = {
	.get_link = ramfs_get_link,
	.evict = ramfs_evict,
};

static const struct inode_operations ramfs_special_inode_operations = {
	.evict = ramfs_evict,
};

static const struct address_space_operations ramfs_aops = {
	.read_folio = ramfs_read_folio,
};

static const struct file_operations ramfs_file_operations = {
	.read = ramfs_read,
	.write = ramfs_write,
	.llseek = generic_file_llseek,
	.fsync = noop_fsync,	/* the page cache is the only copy: nothing to write back */
};
