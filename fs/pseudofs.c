/*
 * Synthetic file systems (include/quire/pseudofs.h): a tree of nodes built
 * by the kernel, each with an inode made when the node is, kept for the
 * life of the kernel. Directories are lists of nodes in creation order;
 * files call their pseudo_ops. /proc and /sys are two such trees, mounted
 * at boot (fs/procfs.c, fs/sysfs.c, fs/mount.c); debugfs is a third, mounted
 * by whoever wants it (fs/debugfs.c). Each tree is a super_block whose
 * inodes' node references are pinned: mount(2) can take them away and back.
 *
 * Nothing here can be created, removed or renamed from user space: create
 * (open with O_CREAT) is EACCES, mkdir, mknod, symlink, unlink and rmdir are
 * EPERM, as in Linux's /proc and /sys.
 *
 * Locking: the tree changes under vfs_ns_mutex, which every path walk and
 * listing holds too. A show file's snapshot is under its pseudo_file's lock.
 */
#define pr_fmt(fmt) "pseudofs: " fmt
#include <quire/pseudofs.h>
#include <quire/sched.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include <quire/printk.h>
#include <asm/page.h>
#include "internal.h"

struct pseudo_node {
	struct inode *inode;		/* one reference, never dropped */
	struct pseudo_node *parent;	/* NULL: a root */
	struct list_head children;	/* directories, in creation order */
	struct list_head sibling;
	loff_t pos;			/* the getdents cookie in the parent */
	loff_t next_pos;		/* directories: the next child's cookie */
	const struct pseudo_ops *ops;	/* files */
	const char *(*target)(void *data);	/* symlinks */
	/* directories: names not listed (pseudo_dir_set_lookup) */
	struct pseudo_node *(*lookup)(const char *name, size_t len);
	/* directories: entries after the listed ones (pseudo_dir_set_list_extra) */
	void (*list_extra)(struct dir_context *ctx);
	void *data;
	size_t len;
	char name[];
};

static const struct inode_operations pseudo_dir_iops;
static const struct file_operations pseudo_dir_fops;
static const struct inode_operations pseudo_file_iops;
static const struct file_operations pseudo_file_fops;
static const struct inode_operations pseudo_link_iops;

static struct pseudo_node *node_of(struct inode *inode)
{
	return inode->i_private;
}

struct inode *pseudo_inode(struct pseudo_node *node)
{
	return node->inode;
}

static struct pseudo_node *find(struct pseudo_node *dir, const char *name, size_t len)
{
	struct pseudo_node *n;

	list_for_each_entry(n, &dir->children, sibling)
		if (n->len == len && !memcmp(n->name, name, len))
			return n;
	return NULL;
}

/* A node with its inode; for a directory the inode is its own parent until linked. */
static struct pseudo_node *new_node(const char *name, umode_t mode)
{
	size_t len = strlen(name);
	struct pseudo_node *n = kzalloc(sizeof(*n) + len + 1, GFP_KERNEL);

	if (!n)
		return NULL;
	n->inode = new_inode(mode);
	if (!n->inode) {
		kfree(n);
		return NULL;
	}
	INIT_LIST_HEAD(&n->children);
	INIT_LIST_HEAD(&n->sibling);
	n->next_pos = 2;
	n->len = len;
	memcpy(n->name, name, len + 1);
	n->inode->i_private = n;
	if (S_ISLNK(mode)) {
		n->inode->i_op = &pseudo_link_iops;
		n->inode->i_nlink = 1;
	} else if (S_ISDIR(mode)) {
		n->inode->i_op = &pseudo_dir_iops;
		n->inode->i_fop = &pseudo_dir_fops;
		n->inode->i_parent = n->inode;
		n->inode->i_nlink = 2;
	} else {
		n->inode->i_op = &pseudo_file_iops;
		n->inode->i_fop = &pseudo_file_fops;
		n->inode->i_nlink = 1;
	}
	return n;
}

/* Link n into dir (vfs_ns_mutex held); -EEXIST when the name is taken. */
static int link_node(struct pseudo_node *dir, struct pseudo_node *n)
{
	if (!S_ISDIR(dir->inode->i_mode))
		return -ENOTDIR;
	if (find(dir, n->name, n->len))
		return -EEXIST;
	/* The node's reference on its inode is the tree's own: it never makes the tree busy. */
	inode_set_sb(n->inode, dir->inode->i_sb, true);
	n->parent = dir;
	n->pos = dir->next_pos++;
	list_add_tail(&n->sibling, &dir->children);
	if (S_ISDIR(n->inode->i_mode)) {
		n->inode->i_parent = dir->inode;
		inc_nlink(dir->inode);		/* the child's ".." */
	}
	return 0;
}

static void free_node(struct pseudo_node *n)
{
	clear_nlink(n->inode);
	iput(n->inode);
	kfree(n);
}

static int add_node(struct pseudo_node *parent, struct pseudo_node *n)
{
	int err;

	mutex_lock(&vfs_ns_mutex);
	err = link_node(parent, n);
	mutex_unlock(&vfs_ns_mutex);
	if (err)
		free_node(n);
	return err;
}

struct pseudo_node *pseudo_new_root(const struct file_system_type *type)
{
	struct super_block *sb = alloc_super(type);
	struct pseudo_node *root = sb ? new_node("", S_IFDIR | 0555) : NULL;

	if (!root) {
		kfree(sb);
		return NULL;
	}
	inode_set_sb(root->inode, sb, true);
	sb->s_root = root->inode;
	return root;
}

int pseudo_get_tree(struct pseudo_node *root, const char *options, struct super_block **out)
{
	if (!root)
		return -ENODEV;		/* it could not be built at boot */
	if (*options) {
		pr_warn("%s: mount options \"%s\" are not supported (EINVAL)\n",
			root->inode->i_sb->s_type->name, options);
		return -EINVAL;
	}
	*out = root->inode->i_sb;
	igrab(root->inode);		/* the caller's reference */
	return 0;
}

struct pseudo_node *pseudo_mkdir(struct pseudo_node *parent, const char *name)
{
	struct pseudo_node *n = new_node(name, S_IFDIR | 0555);

	if (!n || add_node(parent, n))
		return NULL;
	return n;
}

int pseudo_create(struct pseudo_node *parent, const char *name, umode_t mode,
		  const struct pseudo_ops *ops, void *data)
{
	struct pseudo_node *n;

	if (!ops || (!ops->show && !ops->read && !ops->store && !ops->write && !ops->ioctl))
		return -EINVAL;
	n = new_node(name, S_IFREG | (mode & 0777));
	if (!n)
		return -ENOMEM;
	n->ops = ops;
	n->data = data;
	return add_node(parent, n);
}

int pseudo_symlink(struct pseudo_node *parent, const char *name,
		   const char *(*target)(void *data), void *data)
{
	struct pseudo_node *n = new_node(name, S_IFLNK | 0777);

	if (!n)
		return -ENOMEM;
	n->target = target;
	n->data = data;
	return add_node(parent, n);
}

/*
 * A copy of tmpl's files and symlinks (not its subdirectories) in a new
 * directory that parent does not list, each with data (vfs_ns_mutex held:
 * a lookup or list_extra hook). NULL when out of memory.
 */
struct pseudo_node *pseudo_clone_dir(const struct pseudo_node *tmpl, struct pseudo_node *parent,
				     const char *name, void *data)
{
	struct pseudo_node *dir = new_node(name, S_IFDIR | 0555), *c;

	mutex_assert_held(&vfs_ns_mutex);
	if (!dir)
		return NULL;
	inode_set_sb(dir->inode, parent->inode->i_sb, true);
	dir->parent = parent;
	dir->inode->i_parent = parent->inode;
	list_for_each_entry(c, &tmpl->children, sibling) {
		struct pseudo_node *n;

		if (S_ISDIR(c->inode->i_mode))
			continue;
		n = new_node(c->name, c->inode->i_mode);
		if (!n)
			return dir;	/* a partial directory: its files are what memory allowed */
		n->ops = c->ops;
		n->target = c->target;
		n->data = data;
		if (link_node(dir, n))
			free_node(n);
	}
	return dir;
}

bool pseudo_dir_emit(struct dir_context *ctx, struct pseudo_node *n, loff_t pos)
{
	if (pos < ctx->pos)
		return true;
	if (!ctx->actor(ctx, n->name, n->len, pos + 1, n->inode->i_ino,
			(n->inode->i_mode & S_IFMT) >> 12))
		return false;
	ctx->pos = pos + 1;
	return true;
}

/* A symlink's target, made by its function for the caller; "" (ENOENT on lookup) when none. */
static const char *pseudo_get_link(struct inode *inode)
{
	const char *t = node_of(inode)->target(node_of(inode)->data);

	return t ? t : "";
}

static const struct inode_operations pseudo_link_iops = {
	.get_link = pseudo_get_link,
};

/* ---- directories ---- */

void pseudo_dir_set_lookup(struct pseudo_node *dir,
			   struct pseudo_node *(*lookup)(const char *name, size_t len))
{
	dir->lookup = lookup;
}

void pseudo_dir_set_list_extra(struct pseudo_node *dir, void (*list_extra)(struct dir_context *ctx))
{
	dir->list_extra = list_extra;
}

static int pseudo_lookup(struct inode *dir, const char *name, size_t len, struct inode **out)
{
	struct pseudo_node *n = find(node_of(dir), name, len);

	if (!n && node_of(dir)->lookup)
		n = node_of(dir)->lookup(name, len);

	if (!n)
		return -ENOENT;
	*out = igrab(n->inode);
	return 0;
}

/* open(O_CREAT) of a new name is EACCES (no ->create on Linux); mknod, mkdir EPERM. */
static int pseudo_no_create(struct inode *dir, const char *name, size_t len, umode_t mode,
			    dev_t rdev, struct inode **out)
{
	return S_ISREG(mode) ? -EACCES : -EPERM;
}

static int pseudo_no_symlink(struct inode *dir, const char *name, size_t len, const char *target)
{
	return -EPERM;
}

static int pseudo_no_remove(struct inode *dir, const char *name, size_t len)
{
	return find(node_of(dir), name, len) ? -EPERM : -ENOENT;
}

static int pseudo_iterate(struct file *f, struct dir_context *ctx)
{
	struct inode *dir = file_inode(f);
	struct pseudo_node *n;

	if (!dir_emit_dots(dir, ctx))
		return 0;
	list_for_each_entry(n, &node_of(dir)->children, sibling) {
		if (n->pos < ctx->pos)
			continue;
		if (!ctx->actor(ctx, n->name, n->len, n->pos + 1, n->inode->i_ino,
				(n->inode->i_mode & S_IFMT) >> 12))
			return 0;
		ctx->pos = n->pos + 1;
	}
	if (node_of(dir)->list_extra)
		node_of(dir)->list_extra(ctx);
	return 0;
}

static const struct inode_operations pseudo_dir_iops = {
	.lookup = pseudo_lookup,
	.create = pseudo_no_create,
	.symlink = pseudo_no_symlink,
	.unlink = pseudo_no_remove,
	.rmdir = pseudo_no_remove,
};

static const struct file_operations pseudo_dir_fops = {
	.iterate = pseudo_iterate,
	.llseek = dir_position_llseek,
};

/* ---- files ---- */

/* O_TRUNC (a shell's "echo x > file") is accepted on a writable file and ignored, as sysfs does. */
static int pseudo_setsize(struct inode *inode, loff_t size)
{
	return node_of(inode)->ops->store || node_of(inode)->ops->write ? 0 : -EACCES;
}

static int pseudo_open(struct inode *inode, struct file *f)
{
	struct pseudo_node *n = node_of(inode);
	const struct pseudo_ops *ops = n->ops;
	struct pseudo_file *pf;
	int err;

	if ((f->f_mode & FMODE_WRITE) && !ops->store && !ops->write && !ops->ioctl)
		return -EACCES;
	if ((f->f_mode & FMODE_READ) && !ops->show && !ops->read && !ops->ioctl)
		return -EACCES;
	pf = kzalloc(sizeof(*pf), GFP_KERNEL);
	if (!pf)
		return -ENOMEM;
	pf->node = n;
	pf->data = n->data;
	mutex_init(&pf->lock);
	if (ops->open) {
		err = ops->open(pf);
		if (err) {
			kfree(pf);
			return err;
		}
	}
	f->private_data = pf;
	return 0;
}

static int pseudo_release(struct inode *inode, struct file *f)
{
	struct pseudo_file *pf = f->private_data;

	if (pf->node->ops->release)
		pf->node->ops->release(pf);
	kfree(pf->text);
	kfree(pf);
	return 0;
}

/* Make a new snapshot of a show file (pf->lock held). */
static int fill(struct pseudo_file *pf)
{
	size_t size = PAGE_SIZE;

	for (;;) {
		char *buf = kmalloc(size, GFP_KERNEL);
		ssize_t n;

		if (!buf)
			return -ENOMEM;
		n = pf->node->ops->show(pf, buf, size);
		if (n < 0) {
			kfree(buf);
			return (int)n;
		}
		if ((size_t)n + 1 < size || size * 2 > KMALLOC_MAX_SIZE) {
			kfree(pf->text);
			pf->text = buf;
			pf->len = min((size_t)n, size - 1);
			return 0;
		}
		kfree(buf);
		size *= 2;
	}
}

static ssize_t pseudo_read(struct file *f, void *buf, size_t count, loff_t *pos)
{
	struct pseudo_file *pf = f->private_data;
	ssize_t ret = 0;

	if (!pf->node->ops->show && !pf->node->ops->read)
		return -EINVAL;		/* an ioctl-only file */
	if (!pf->node->ops->show) {
		ret = pf->node->ops->read(pf, buf, count, *pos);
		if (ret > 0)
			*pos += ret;
		return ret;
	}
	mutex_lock(&pf->lock);
	if (!pf->text || *pos == 0)
		ret = fill(pf);
	if (!ret && (u64)*pos < pf->len) {
		ret = (ssize_t)min(count, pf->len - (size_t)*pos);
		memcpy(buf, pf->text + *pos, (size_t)ret);
		*pos += ret;
	}
	mutex_unlock(&pf->lock);
	return ret;
}

/* One write is one value, wherever the position is (Linux's sysfs). */
static ssize_t pseudo_write(struct file *f, const void *buf, size_t count, loff_t *pos)
{
	struct pseudo_file *pf = f->private_data;
	char *copy;
	int err;

	if (!pf->node->ops->store && !pf->node->ops->write)
		return -EINVAL;		/* an ioctl-only file */
	if (pf->node->ops->write) {
		ssize_t ret = pf->node->ops->write(pf, buf, count, *pos);

		if (ret > 0)
			*pos += ret;
		return ret;
	}
	if (!count)
		return 0;	/* an empty write stores nothing (Linux's sysfs_kf_write) */
	count = min(count, (size_t)PAGE_SIZE - 1);
	copy = kmalloc(count + 1, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, count);
	copy[count] = '\0';
	err = pf->node->ops->store(pf, copy, count);
	kfree(copy);
	if (err)
		return err;
	*pos += (loff_t)count;
	return (ssize_t)count;
}

/*
 * Linux's sysfs files sync as a no-op (kernfs's noop_fsync); its /proc
 * files have no fsync at all (EINVAL). Nothing here is ever written back.
 */
static int pseudo_fsync(struct file *f, int datasync)
{
	const struct pseudo_node *n = ((struct pseudo_file *)f->private_data)->node;

	while (n->parent)
		n = n->parent;
	return n == sysfs_root ? 0 : -EINVAL;
}

static long pseudo_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct pseudo_file *pf = f->private_data;

	if (!pf->node->ops->ioctl)
		return -ENOTTY;
	return pf->node->ops->ioctl(pf, cmd, arg);
}

static const struct inode_operations pseudo_file_iops = {
	.setsize = pseudo_setsize,
};

static const struct file_operations pseudo_file_fops = {
	.open = pseudo_open,
	.release = pseudo_release,
	.read = pseudo_read,
	.write = pseudo_write,
	.llseek = generic_file_llseek,
	.fsync = pseudo_fsync,
	.ioctl = pseudo_ioctl,
};
