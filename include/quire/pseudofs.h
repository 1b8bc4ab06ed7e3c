/*
 * Synthetic file systems (fs/pseudofs.c): trees of directories and files
 * whose content is made by the kernel when they are read, and whose writes
 * go to a kernel function. /proc (fs/procfs.c) and /sys (fs/sysfs.c) are
 * built from them; docs/procfs.md shows how to add a file.
 *
 *	static ssize_t answer_show(struct pseudo_file *pf, char *buf, size_t size)
 *	{
 *		return scnprintf(buf, size, "%d\n", 42);
 *	}
 *	static const struct pseudo_ops answer_ops = { .show = answer_show };
 *
 *	pseudo_create(proc_root, "answer", 0444, &answer_ops, NULL);
 *
 * A file has either show (text: the whole content is made into a buffer by
 * the read at position 0, and later reads continue in that snapshot, as
 * Linux's seq_file) or read (binary: each read is served directly, for
 * /proc/self/pagemap). store makes it writable: each write(2) is one value.
 * Opening for writing a file without store, or for reading one without
 * show or read, is EACCES (Linux's sysfs answer).
 *
 * Nodes live as long as the kernel: there is no removal. A tree is one
 * super_block (include/quire/fs.h): mount(2) mounts it by its type's name
 * and umount2(2) takes it away, the nodes staying as they are.
 */
#ifndef QUIRE_PSEUDOFS_H
#define QUIRE_PSEUDOFS_H

#include <quire/types.h>
#include <quire/fs.h>
#include <quire/mutex.h>

struct pseudo_node;

/* One open file of a pseudo file system (file->private_data). */
struct pseudo_file {
	const struct pseudo_node *node;
	void *data;		/* what pseudo_create was given */
	void *private;		/* the ops' own, set by open (e.g. an mm) */
	/* show files: the snapshot the reads are served from */
	struct mutex lock;
	char *text;
	size_t len;
};

struct pseudo_ops {
	/* Optional: set up pf->private; 0 or -errno (the open fails). */
	int (*open)(struct pseudo_file *pf);
	void (*release)(struct pseudo_file *pf);
	/*
	 * Text: write the whole content into buf (size bytes, NUL-terminated
	 * as scnprintf does) and return its length, or -errno. A result of
	 * size - 1 or more means "maybe cut": the buffer grows and show runs
	 * again (up to KMALLOC_MAX_SIZE).
	 */
	ssize_t (*show)(struct pseudo_file *pf, char *buf, size_t size);
	/* Binary: count bytes at pos into buf: the bytes, 0 at the end, or -errno. */
	ssize_t (*read)(struct pseudo_file *pf, void *buf, size_t count, loff_t pos);
	/* A write: buf is NUL-terminated (len < PAGE_SIZE bytes); 0 or -errno. */
	int (*store)(struct pseudo_file *pf, const char *buf, size_t len);
	/* Binary write at pos (/proc/self/mem): bytes taken, or -errno. Instead of store. */
	ssize_t (*write)(struct pseudo_file *pf, const void *buf, size_t count, loff_t pos);
	/*
	 * ioctl(2) (/sys/kernel/debug/gup_test): arg is a kernel copy of a
	 * struct argument that fs/ioctl.c's ioctl_arg_size knows, else the
	 * caller's value. A file with ioctl opens for reading and writing
	 * without show or store (its read and write are then EINVAL, as a
	 * Linux file without them).
	 */
	long (*ioctl)(struct pseudo_file *pf, unsigned int cmd, unsigned long arg);
};

/* A new, empty tree of type (a directory 0555, its super_block); NULL when out of memory. */
struct pseudo_node *pseudo_new_root(const struct file_system_type *type);
/*
 * A file_system_type's get_tree for the tree at root: that tree, with a
 * reference on its root for the caller; EINVAL for any mount option.
 */
int pseudo_get_tree(struct pseudo_node *root, const char *options, struct super_block **out);
/* A directory (0555) in parent; NULL when out of memory or the name exists. */
struct pseudo_node *pseudo_mkdir(struct pseudo_node *parent, const char *name);
/* A file in parent with permission bits mode (0444, 0644, 0400...); 0 or -errno. */
int pseudo_create(struct pseudo_node *parent, const char *name, umode_t mode,
		  const struct pseudo_ops *ops, void *data);
/*
 * A symlink in parent whose target target(data) makes when it is read or
 * followed (/proc/self/exe: the calling task's program); the string must
 * stay valid while vfs_ns_mutex, which every caller holds, is held. NULL: no target (lookups through it fail
 * with ENOENT). 0 or -errno.
 */
int pseudo_symlink(struct pseudo_node *parent, const char *name,
		   const char *(*target)(void *data), void *data);
/* The directory inode of a node (for mounting); no reference is taken. */
struct inode *pseudo_inode(struct pseudo_node *node);
/*
 * Names a directory answers without listing them: lookup is asked for a
 * name none of dir's nodes has, and returns the node that stands for it
 * or NULL (ENOENT). /proc/<pid> for the caller's own pid uses it.
 */
void pseudo_dir_set_lookup(struct pseudo_node *dir,
			   struct pseudo_node *(*lookup)(const char *name, size_t len));
/*
 * Entries a listing of dir shows after its own nodes (/proc's pid
 * directories): list_extra emits them with pseudo_dir_emit, at cookies
 * above every listed node's, in a stable order (vfs_ns_mutex held).
 */
void pseudo_dir_set_list_extra(struct pseudo_node *dir, void (*list_extra)(struct dir_context *ctx));
/* Emit n at cookie pos unless the listing is past it; false when the caller's buffer is full. */
bool pseudo_dir_emit(struct dir_context *ctx, struct pseudo_node *n, loff_t pos);
/*
 * A new directory named name under parent, which does not list it (a
 * lookup or list_extra hook hands it out), holding a copy of tmpl's files
 * and symlinks, each with data instead of tmpl's (/proc/<pid> from
 * /proc/self). vfs_ns_mutex held (the hooks run under it). NULL when out
 * of memory. Like every node, it is never freed.
 */
struct pseudo_node *pseudo_clone_dir(const struct pseudo_node *tmpl, struct pseudo_node *parent,
				     const char *name, void *data);

/* The trees mounted at /proc and /sys, and debugfs's (NULL before vfs_init). */
extern struct pseudo_node *proc_root;
extern struct pseudo_node *sysfs_root;
extern struct pseudo_node *debugfs_root;
/* Their types, for mount(2) (fs/super.c): "proc", "sysfs", "debugfs". */
extern const struct file_system_type proc_fs_type;
extern const struct file_system_type sysfs_fs_type;
extern const struct file_system_type debugfs_fs_type;

/*
 * Boot (vfs_init): build the trees and mount them on /proc and /sys;
 * debugfs is built but not mounted (mount -t debugfs none /sys/kernel/debug).
 */
int procfs_init(void);
int sysfs_init(void);
int debugfs_init(void);

#endif
