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

/*
 * A new inode of any type in dir's tree (dir NULL: a root, or a file in no
 * tree); for a directory, its entry list too.
 */
static struct inode *ramfs_new_inode(struct inode *dir, umode_t mode, dev_t rdev)
{
	struct inode *inode = new_inode(mode);

	if (!inode)
		return NULL;
	if (dir && dir->i_sb)
		inode_set_sb(inode, dir->i_sb, false);
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

struct super_block *ramfs_new_sb(const struct file_system_type *type)
{
	struct super_block *sb = alloc_super(type);
	struct inode *root = sb ? ramfs_new_inode(NULL, S_IFDIR | 0755, 0) : NULL;

	if (!root) {
		kfree(sb);
		return NULL;
	}
	inc_nlink(root);	/* root's ".." is itself */
	inode_set_sb(root, sb, false);
	sb->s_root = root;	/* new_inode's reference: the caller's */
	return sb;
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

static int ramfs_tmpfile(struct inode *dir, umode_t mode, struct inode **out)
{
	struct inode *inode = ramfs_new_inode(dir, S_IFREG | (mode & 07777), 0);

	if (!inode)
		return -ENOMEM;
	*out = inode;		/* no link: the last iput frees it */
	return 0;
}

int vfs_tmpfile(struct inode *dir, int flags, umode_t mode, struct file **out)
{
	struct inode *inode;
	int err;

	if (dir && !S_ISDIR(dir->i_mode))
		return -ENOTDIR;
	if (dir && !dir->i_op->tmpfile)
		return -EOPNOTSUPP;
	err = dir ? dir->i_op->tmpfile(dir, mode, &inode) : ramfs_tmpfile(NULL, mode, &inode);
	if (err)
		return err;
	err = vfs_open_inode(inode, flags & ~(O_TMPFILE | O_CREAT | O_EXCL | O_TRUNC), out);
	iput(inode);
	return err;
}

/*
 * Free a whole tree nobody can reach any more (a tmpfs after umount, once
 * its last user is gone): every entry, deepest first, without recursion
 * (a directory's i_parent leads back up), then the root and sb. Files
 * still open cannot exist here: their references would have kept the tree.
 */
static void ramfs_kill_sb(struct super_block *sb)
{
	struct inode *root = sb->s_root, *dir = root;

	igrab(root);
	for (;;) {
		struct ramfs_dir *rd = dir_of(dir);
		struct ramfs_dirent *d;

		if (list_empty(&rd->entries)) {
			if (dir == root)
				break;
			dir = dir->i_parent;	/* emptied: its parent removes it next */
			continue;
		}
		d = list_first_entry(&rd->entries, struct ramfs_dirent, list);
		if (S_ISDIR(d->inode->i_mode) && dir_of(d->inode)->nr)
			dir = d->inode;		/* empty it first */
		else if (S_ISDIR(d->inode->i_mode))
			ramfs_rmdir(dir, d->name, d->len);
		else
			ramfs_unlink(dir, d->name, d->len);
	}
	clear_nlink(root);
	iput(root);
	free_super(sb);
}

/*
 * tmpfs: a new, empty ramfs tree per mount. mount(2)'s options, as Linux's
 * tmpfs spells them: mode= (the root's permissions, octal), uid=, gid=
 * (its owner); size=, nr_blocks=, nr_inodes= are accepted and shown in
 * /proc/mounts but not enforced (ramfs has no limit); huge= never, always,
 * within_size or advise is recorded, but the page cache holds 4 KiB folios
 * only, so a tmpfs file never gets a large folio (as on Linux when every
 * huge allocation fails). Anything else is EINVAL, as Linux's "Unknown
 * parameter".
 */
static int tmpfs_option(struct super_block *sb, const char *opt, size_t len)
{
	static const char *const limits[] = { "size", "nr_blocks", "nr_inodes" };
	static const char *const huge[] = { "never", "always", "within_size", "advise" };
	const char *eq = memchr(opt, '=', len);
	size_t klen = eq ? (size_t)(eq - opt) : len, vlen = eq ? len - klen - 1 : 0;
	const char *val = eq ? eq + 1 : NULL;
	unsigned long v = 0;
	size_t i;

	if (!eq || !vlen)
		goto bad;
	if ((klen == 4 && !memcmp(opt, "mode", 4)) || (klen == 3 && !memcmp(opt, "uid", 3)) ||
	    (klen == 3 && !memcmp(opt, "gid", 3))) {
		unsigned int base = opt[0] == 'm' ? 8 : 10;

		for (i = 0; i < vlen; i++) {
			if (val[i] < '0' || val[i] >= '0' + (int)base || v > 0xffffffffUL / base)
				goto bad;
			v = v * base + (unsigned long)(val[i] - '0');
		}
		if (opt[0] == 'm')
			sb->s_root->i_mode = S_IFDIR | (umode_t)(v & 07777);
		else if (opt[0] == 'u')
			sb->s_root->i_uid = (u32)v;
		else
			sb->s_root->i_gid = (u32)v;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(limits); i++)
		if (klen == strlen(limits[i]) && !memcmp(opt, limits[i], klen)) {
			if (val[0] < '0' || val[0] > '9')
				goto bad;
			pr_info("tmpfs: %.*s is not enforced (ramfs has no limit)\n", (int)len, opt);
			return 0;
		}
	if (klen == 4 && !memcmp(opt, "huge", 4)) {
		for (i = 0; i < ARRAY_SIZE(huge); i++)
			if (vlen == strlen(huge[i]) && !memcmp(val, huge[i], vlen)) {
				if (i)
					pr_info("tmpfs: huge=%s: the page cache has no large folios yet, "
						"files get 4 KiB pages\n", huge[i]);
				return 0;
			}
	}
bad:
	pr_warn("tmpfs: unknown or bad mount option \"%.*s\" (EINVAL)\n", (int)len, opt);
	return -EINVAL;
}

static int tmpfs_get_tree(const char *options, struct super_block **out)
{
	struct super_block *sb = ramfs_new_sb(&tmpfs_fs_type);
	const char *p = options;
	int err = 0;

	if (!sb)
		return -ENOMEM;
	sb->s_root->i_mode = S_IFDIR | 01777;		/* Linux's tmpfs root */
	while (*p && !err) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len)
			err = tmpfs_option(sb, p, len);
		p += len + (end ? 1 : 0);
	}
	if (!err && *options) {
		size_t olen = strlen(options) + 1;

		sb->s_options = kmalloc(olen, GFP_KERNEL);
		if (sb->s_options)
			memcpy(sb->s_options, options, olen);
	}
	if (err) {
		sb->s_detached = true;
		iput(sb->s_root);	/* the last reference: ramfs_kill_sb frees it all */
		return err;
	}
	*out = sb;
	return 0;
}

const struct file_system_type tmpfs_fs_type = {
	.name = "tmpfs",
	.get_tree = tmpfs_get_tree,
	.kill_sb = ramfs_kill_sb,
};

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
	/* RLIMIT_FSIZE first, then the largest size, as Linux's generic_write_check_limits. */
	ret = fsize_check(*pos, &count);
	if (!ret && *pos >= MAX_LFS_FILESIZE)
		ret = -EFBIG;
	if (ret) {
		mutex_unlock(&inode->i_mutex);
		return ret;
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
	.tmpfile = ramfs_tmpfile,
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
