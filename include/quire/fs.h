/*
 * The VFS: inodes, open files and path names, with Linux's vocabulary and
 * errno values (docs/vfs.md). One file system exists today, ramfs, mounted
 * at the root; devices are ramfs inodes of type S_IFCHR whose operations
 * come from the character-device table (fs/char_dev.c).
 *
 * Buffers passed to the calls below are kernel memory. The syscall layer
 * copies user memory in and out around them (docs/vfs.md, "For the syscall
 * layer").
 *
 * Reference counts: an inode lives while it has references (i_count: open
 * files, lookups in progress, a cwd) or links (i_nlink: directory entries).
 * A struct file is shared by reference (get_file/fput), so an fd table can
 * share one across dup and fork; the last fput releases it.
 */
#ifndef QUIRE_FS_H
#define QUIRE_FS_H

#include <quire/types.h>
#include <quire/list.h>
#include <quire/atomic.h>
#include <quire/spinlock.h>
#include <quire/mutex.h>
#include <quire/rwsem.h>
#include <quire/radix-tree.h>
#include <quire/uapi/stat.h>
#include <quire/uapi/fcntl.h>
#include <quire/uapi/dirent.h>

typedef long long loff_t;
typedef long ssize_t;
typedef u32 umode_t;
typedef u32 dev_t;		/* the kernel's form: major << 20 | minor */

#define MINORBITS	20
#define MINORMASK	((1U << MINORBITS) - 1)
#define MAJOR(dev)	((unsigned int)((dev) >> MINORBITS))
#define MINOR(dev)	((unsigned int)((dev) & MINORMASK))
#define MKDEV(ma, mi)	(((dev_t)(ma) << MINORBITS) | (dev_t)(mi))

/* The largest file size and offset (Linux's MAX_LFS_FILESIZE on 64-bit). */
#define MAX_LFS_FILESIZE	((loff_t)0x7fffffffffffffffLL)

struct inode;
struct file;
struct folio;
struct vm_area_struct;
struct super_block;
struct poll_table;

struct timespec64 {
	s64 tv_sec;
	long tv_nsec;
};

/*
 * What the page cache (mm/filemap.c) asks of the file system behind an
 * address_space, with Linux's names. NULL a_ops, or a NULL read_folio: the
 * inode has no page cache, and a fault on a mapping of it is SIGBUS.
 */
struct address_space_operations {
	/*
	 * Fill a new order-0 folio with the file's data at folio->index of
	 * folio->mapping and mark it uptodate; 0 or -errno. The folio is not
	 * in the cache yet (no lookup sees it); i_mutex is held. file may be
	 * NULL: the mapping says which file.
	 */
	int (*read_folio)(struct file *file, struct folio *folio);
};

/*
 * A file's page cache: page index -> folio (order 0 today), in a radix
 * tree. The tree holds one reference on each folio; folio->mapping points
 * back here and folio->index is the page index. i_pages_lock protects the
 * tree (lookups included); changes also hold the inode's i_mutex.
 */
struct address_space {
	struct inode *host;
	const struct address_space_operations *a_ops;	/* set by the file system */
	spinlock_t i_pages_lock;
	struct radix_tree_root i_pages;
	unsigned long nrpages;
	struct rw_semaphore i_mmap_rwsem;	/* protects i_mmap */
	struct list_head i_mmap;		/* VMAs mapping it (vma->shared), by vm_pgoff */
};

struct inode_operations {
	/* Directories. name is not NUL-terminated; len is 1..NAME_MAX. */
	int (*lookup)(struct inode *dir, const char *name, size_t len, struct inode **out);
	int (*create)(struct inode *dir, const char *name, size_t len, umode_t mode,
		      dev_t rdev, struct inode **out);
	int (*symlink)(struct inode *dir, const char *name, size_t len, const char *target);
	int (*unlink)(struct inode *dir, const char *name, size_t len);
	int (*rmdir)(struct inode *dir, const char *name, size_t len);
	/*
	 * O_TMPFILE: a new regular file of mode in dir's tree that no
	 * directory names (i_nlink 0), in *out with one reference. NULL: the
	 * file system cannot (open says EOPNOTSUPP, as Linux).
	 */
	int (*tmpfile)(struct inode *dir, umode_t mode, struct inode **out);
	/* Symlinks: the target, valid while the inode is referenced. */
	const char *(*get_link)(struct inode *inode);
	/* Regular files: change the size (truncate or extend), i_mutex held. */
	int (*setsize)(struct inode *inode, loff_t size);
	/* The inode has no references and no links left: free what it owns. */
	void (*evict)(struct inode *inode);
};

struct inode {
	umode_t i_mode;
	unsigned int i_nlink;		/* under i_lock; directories: 2 + subdirectories */
	unsigned long i_ino;
	u32 i_uid, i_gid;
	dev_t i_rdev;			/* device inodes */
	loff_t i_size;			/* under i_mutex */
	u64 i_blocks;			/* 512-byte blocks allocated */
	struct timespec64 i_atime, i_mtime, i_ctime;
	spinlock_t i_lock;		/* i_count and i_nlink */
	int i_count;
	struct mutex i_mutex;		/* Linux's i_rwsem: data, size, times */
	const struct inode_operations *i_op;
	const struct file_operations *i_fop;
	struct address_space i_data;	/* regular files: the page cache */
	struct address_space *i_mapping;
	struct inode *i_parent;		/* directories: the parent (root: itself); kept when removed */
	struct super_block *i_sb;	/* the tree it belongs to (NULL: none, an unnamed RAM file) */
	void *i_private;		/* the file system's */
};

/*
 * A kind of file system mount(2) knows by name (fs/super.c's table):
 * "proc", "sysfs", "debugfs", "tmpfs" ("rootfs" is the root's, never
 * mounted by name).
 */
struct file_system_type {
	const char *name;
	/*
	 * The tree to mount, given mount(2)'s data string (NUL-terminated,
	 * maybe empty): a new one (tmpfs) or the one tree (proc), in *out.
	 * 0 or -errno (EINVAL for an option it does not take).
	 */
	int (*get_tree)(const char *options, struct super_block **out);
	/*
	 * Free a tree that is mounted nowhere and that nothing references
	 * any more (tmpfs: every file and directory, then sb). NULL: the
	 * tree lives as long as the kernel (the pseudofs trees).
	 */
	void (*kill_sb)(struct super_block *sb);
};

/*
 * One tree of inodes (Linux's super_block): its root, its device number
 * (what stat reports as st_dev) and a count of the references (i_count)
 * held on its inodes, which is how umount tells whether it is in use (an
 * open file, a cwd, a mount inside it) without Linux's vfsmount counts.
 */
struct super_block {
	const struct file_system_type *s_type;
	struct inode *s_root;
	dev_t s_dev;
	atomic_long_t s_refs;		/* i_count summed over its inodes */
	long s_pinned;			/* of those, the file system's own (pseudofs nodes) */
	unsigned long s_mnt_flags;	/* MS_NOSUID|MS_NODEV|MS_NOEXEC of its mount */
	char *s_options;		/* what /proc/mounts shows after "rw" (kmalloc'd; NULL: nothing) */
	bool s_mounted;			/* in the mount table (vfs_ns_mutex) */
	bool s_detached;		/* unmounted: freed (kill_sb) when s_refs reaches 0 */
	bool s_dying;
	void *s_fs_info;		/* the file system's */
};

/* The device number stat reports for an inode: its tree's, or ramfs's 0:1. */
static inline dev_t inode_dev(const struct inode *inode)
{
	return inode->i_sb ? inode->i_sb->s_dev : MKDEV(0, 1);
}

/* Passed to a directory's iterate: emit returns false when the buffer is full. */
struct dir_context {
	bool (*actor)(struct dir_context *ctx, const char *name, size_t len,
		      loff_t next_pos, u64 ino, unsigned int d_type);
	loff_t pos;
};

struct file_operations {
	ssize_t (*read)(struct file *file, void *buf, size_t count, loff_t *pos);
	ssize_t (*write)(struct file *file, const void *buf, size_t count, loff_t *pos);
	/*
	 * A stream that takes write(2)'s bytes from user memory itself, whole
	 * (a pipe: how it fills its buffers depends on the write's size); the
	 * write system calls use it instead of write when it is set.
	 */
	ssize_t (*write_user)(struct file *file, const void *ubuf, size_t count);
	loff_t (*llseek)(struct file *file, loff_t offset, int whence);
	/* Directories: emit entries from ctx->pos on (Linux's iterate_shared). */
	int (*iterate)(struct file *file, struct dir_context *ctx);
	/* arg is a kernel pointer for the ioctls with a struct argument (fs/ioctl.c). */
	long (*ioctl)(struct file *file, unsigned int cmd, unsigned long arg);
	/*
	 * A device mmap(2) may map, as what (NULL: mmap of it is ENODEV):
	 * before the VMA is made, say in *backing which file's page cache to
	 * map instead, with a reference for the caller, or NULL for private
	 * anonymous memory (/dev/zero). len and flags are mmap's. 0 or
	 * -errno. Regular files do not use it: mmap maps their page cache.
	 */
	int (*mmap_backing)(struct file *file, u64 len, u64 flags, struct file **backing);
	/*
	 * The device's pages are there from mmap on (Linux drivers that
	 * vm_insert_page in their mmap): mmap faults the new VMA in for
	 * reading, as MAP_POPULATE does.
	 */
	bool mmap_prefault;
	/*
	 * fsync(2) and fdatasync(2): write the file's data (and, unless
	 * datasync, its metadata) back to its storage. NULL: the file cannot
	 * be synced (a pipe, a device: EINVAL, as Linux says).
	 */
	int (*fsync)(struct file *file, int datasync);
	/*
	 * poll(2), select(2): the POLL* bits the file is ready for, after
	 * poll_wait on each queue whose wake-up may change them (quire/poll.h).
	 * NULL: always ready to read and write (DEFAULT_POLLMASK).
	 */
	unsigned int (*poll)(struct file *file, struct poll_table *pt);
	int (*open)(struct inode *inode, struct file *file);
	int (*release)(struct inode *inode, struct file *file);
};

/* f_mode */
#define FMODE_READ	0x1u
#define FMODE_WRITE	0x2u

struct file {
	atomic_t f_count;
	struct inode *f_inode;		/* holds a reference */
	const struct file_operations *f_op;
	struct address_space *f_mapping;
	unsigned int f_flags;		/* O_* given to open, less O_CREAT/O_EXCL/O_TRUNC */
	unsigned int f_mode;		/* FMODE_READ | FMODE_WRITE */
	struct mutex f_pos_lock;
	loff_t f_pos;
	void *private_data;
};

static inline struct inode *file_inode(const struct file *f)
{
	return f->f_inode;
}

/* The size, read without i_mutex (a fault's check; truncate changes it first). */
static inline loff_t i_size_read(const struct inode *inode)
{
	return READ_ONCE(inode->i_size);
}

/* ---- boot ---- */

/*
 * Boot (fs/init.c): make the root (ramfs) with /dev (console, null, zero)
 * and /tmp, and register the drivers behind those nodes. Idempotent.
 */
void vfs_init(void);
/* The tree part of vfs_init, without drivers (fs/rootfs.c; host tests use it). */
int init_rootfs(void);
/* The root directory (a reference is not taken). */
extern struct inode *vfs_root;
/* Drivers of the /dev nodes (drivers/mem.c, drivers/tty.c), registered by vfs_init. */
void mem_devices_init(void);
/* /dev/hmm_dmirror0..1 (drivers/hmm_dmirror.c): Linux's test_hmm devices, on a major of their own. */
#define HMM_DMIRROR_MAJOR	240
void hmm_dmirror_init(void);	/* after debugfs_init: it adds /sys/kernel/debug/hmm_dmirror */
void tty_init(void);
/* Drop the console's pending input and line being edited (tests). */
void tty_flush_input(void);

/* ---- inodes (fs/inode.c) ---- */

struct inode *new_inode(umode_t mode);
struct inode *igrab(struct inode *inode);
void iput(struct inode *inode);
void inc_nlink(struct inode *inode);
void drop_nlink(struct inode *inode);
void clear_nlink(struct inode *inode);
struct timespec64 current_time(void);
/* Fill st from the inode (what fstat reports). */
void vfs_getattr(struct inode *inode, struct stat *st);
/* Linux's new_encode_dev: dev_t as stat's st_dev/st_rdev carry it. */
u64 new_encode_dev(dev_t dev);
/* Permission check with root's rights (no users yet): MAY_EXEC needs an x bit. */
#define MAY_EXEC	0x1
#define MAY_WRITE	0x2
#define MAY_READ	0x4
int inode_permission(struct inode *inode, int mask);
/* Inodes alive now, for leak checks in tests. */
extern long nr_inodes;

/* ---- names (fs/namei.c) ---- */

/*
 * Resolve path relative to cwd (NULL: the root) and return a referenced
 * inode in *out. Symlinks are followed, the last one too unless
 * AT_SYMLINK_NOFOLLOW is in flags. Errors: ENOENT, ENOTDIR, ENAMETOOLONG,
 * ELOOP.
 */
int vfs_lookup_at(struct inode *cwd, const char *path, int flags, struct inode **out);
static inline int vfs_lookup(struct inode *cwd, const char *path, struct inode **out)
{
	return vfs_lookup_at(cwd, path, 0, out);
}
int vfs_mkdir(struct inode *cwd, const char *path, umode_t mode);
int vfs_mknod(struct inode *cwd, const char *path, umode_t mode, dev_t rdev);
int vfs_symlink(struct inode *cwd, const char *target, const char *path);
int vfs_unlink(struct inode *cwd, const char *path);
int vfs_rmdir(struct inode *cwd, const char *path);
/* readlink: copy the target (not NUL-terminated); its length or -errno. */
ssize_t vfs_readlink(struct inode *cwd, const char *path, char *buf, size_t size);
/*
 * fs/d_path.c. vfs_getcwd: the absolute path of directory cwd (NULL: the
 * root) into buf, NUL-terminated; its length, or -ENOENT (removed),
 * -ERANGE (size too small). vfs_real_path: the absolute path of the file
 * path names, directories and a final symlink resolved; kmalloc'd, or NULL.
 */
long vfs_getcwd(struct inode *cwd, char *buf, size_t size);
char *vfs_real_path(struct inode *cwd, const char *path);
int vfs_stat(struct inode *cwd, const char *path, int flags, struct stat *st);

/* ---- open files (fs/open.c, fs/read_write.c, fs/readdir.c, fs/ioctl.c) ---- */

/*
 * Open path (relative to cwd, NULL: the root) with O_* flags; mode is used
 * with O_CREAT (the caller applies the umask). On success *out holds a file
 * with one reference.
 */
int vfs_open(struct inode *cwd, const char *path, int flags, umode_t mode, struct file **out);
/* Open an inode the caller already holds (a reference is added for the file). */
int vfs_open_inode(struct inode *inode, int flags, struct file **out);
/* Another reference to an open file (a VMA, a dup'ed fd); fput drops one. */
static inline struct file *get_file(struct file *f)
{
	atomic_inc(&f->f_count);
	return f;
}
void fput(struct file *f);
/* The kernel's own truncate (O_TRUNC, a shared mapping's file): no RLIMIT_FSIZE. */
int vfs_truncate(struct inode *inode, loff_t size);
/* truncate(2) and ftruncate(2) (not opened for writing: EINVAL): growing past RLIMIT_FSIZE is EFBIG + SIGXFSZ. */
int vfs_truncate_limited(struct inode *inode, loff_t size);
int vfs_ftruncate(struct file *f, loff_t size);
/*
 * RLIMIT_FSIZE for a regular file (Linux's generic_write_check_limits and
 * inode_newsize_ok): a write at pos (count: its length, cut to end at the
 * limit) or, count NULL, a new size pos. 0, or -EFBIG with SIGXFSZ sent
 * to the caller's process when nothing fits.
 */
int fsize_check(loff_t pos, size_t *count);

/*
 * fallocate(2) (fs/fallocate.c): Linux's checks, then mode 0 or
 * FALLOC_FL_KEEP_SIZE on a RAM file. 0 or -errno.
 */
long vfs_fallocate(struct file *f, int mode, loff_t offset, loff_t len);
/* statfs(2) of the file system inode belongs to (fs/statfs.c). */
struct statfs;
int vfs_statfs(struct inode *inode, struct statfs *st);
int vfs_fstat(struct file *f, struct stat *st);

/*
 * Read or write at *pos, or at (and advancing) f->f_pos under f_pos_lock
 * when pos is NULL. Returns the bytes moved or -errno (EBADF when the file
 * was not opened for it, EISDIR for a directory, EINVAL for a negative
 * position, EFBIG past the largest size).
 */
ssize_t vfs_read(struct file *f, void *buf, size_t count, loff_t *pos);
ssize_t vfs_write(struct file *f, const void *buf, size_t count, loff_t *pos);
/*
 * What vfs_read/vfs_write check first, for callers that must answer
 * before they move anything (the system calls, before checking the
 * user's buffer, as Linux): 0, -EBADF (not opened for it) or -EINVAL (the
 * file has no such operation). A directory passes vfs_may_read; reading
 * it is EISDIR.
 */
int vfs_may_read(struct file *f);
int vfs_may_write(struct file *f);
/* Whether the file has offsets: pread/pwrite work on it (a pipe or terminal: ESPIPE). */
bool file_has_offsets(struct file *f);
loff_t vfs_llseek(struct file *f, loff_t offset, int whence);
/* Fill buf with struct linux_dirent64 records from f_pos on: bytes, 0 at the end, or -errno. */
ssize_t vfs_getdents64(struct file *f, void *buf, size_t count);
long vfs_ioctl(struct file *f, unsigned int cmd, unsigned long arg);
/*
 * The size of the structure an ioctl's argument points to, for the syscall
 * layer to copy: > 0 bytes, with *in and *out telling the direction; 0 when arg
 * is a plain value (or the command is unknown: the driver says ENOTTY).
 */
size_t ioctl_arg_size(unsigned int cmd, bool *in, bool *out);

/* Generic helpers for file systems. */
loff_t generic_file_llseek(struct file *f, loff_t offset, int whence);
/* Directories: emit "." and ".." (positions 0 and 1); false when the caller's buffer is full. */
bool dir_emit_dots(struct inode *dir, struct dir_context *ctx);
/* Directories seek to a position only (SEEK_SET/SEEK_CUR), as Linux's dcache_dir_lseek. */
loff_t dir_position_llseek(struct file *f, loff_t offset, int whence);
loff_t noop_llseek(struct file *f, loff_t offset, int whence);
loff_t no_llseek(struct file *f, loff_t offset, int whence);
/* fsync of a file whose data lives only in memory: nothing to write back, 0 (fs/sync.c). */
int noop_fsync(struct file *f, int datasync);

/*
 * fsync and fdatasync (fs/sync.c): the file's fsync, or -EINVAL for a file
 * without one (pipes, devices, /proc). syncfs: the file system
 * holding f, which for every file system Quire has means nothing to do.
 */
int vfs_fsync(struct file *f, int datasync);
int vfs_syncfs(struct file *f);

/*
 * Read a whole file into a kmalloc'd buffer (exec's loader): *buf and
 * *size on success; the caller kfrees *buf. Fails with the open errors,
 * EACCES (not a regular file), EFBIG (over max_size bytes), ENOMEM.
 */
int kernel_read_file(struct inode *cwd, const char *path, size_t max_size,
		     void **buf, size_t *size);

/* ---- pipes (fs/pipe.c) ---- */

/* A pipe's read end (res[0]) and write end (res[1]); flags: O_NONBLOCK. */
int create_pipe_files(struct file *res[2], int flags);

/* ---- character devices (fs/char_dev.c) ---- */

/* Register the operations of device numbers [MKDEV(major, minor), + count). */
int register_chrdev_region(unsigned int major, unsigned int minor, unsigned int count,
			   const char *name, const struct file_operations *fops);
void unregister_chrdev_region(unsigned int major, unsigned int minor, unsigned int count);
extern const struct file_operations def_chr_fops;

/* ---- trees and mounts (fs/super.c, fs/mount.c) ---- */

/* A new tree of type: s_dev an anonymous device number (0:2 on), no root yet; NULL: no memory. */
struct super_block *alloc_super(const struct file_system_type *type);
/*
 * inode (just made, i_count references) belongs to sb from now on;
 * pinned: those references are the file system's own, for as long as the
 * inode lives (a pseudofs node's), and do not make the tree busy.
 */
void inode_set_sb(struct inode *inode, struct super_block *sb, bool pinned);
/* A file system type by name (mount(2)'s fstype), or NULL. */
const struct file_system_type *get_fs_type(const char *name);

/* mount(2) flags (Linux's include/uapi/linux/mount.h). */
#define MS_RDONLY	0x1
#define MS_NOSUID	0x2
#define MS_NODEV	0x4
#define MS_NOEXEC	0x8
#define MS_SYNCHRONOUS	0x10
#define MS_REMOUNT	0x20
#define MS_MANDLOCK	0x40
#define MS_DIRSYNC	0x80
#define MS_NOSYMFOLLOW	0x100
#define MS_NOATIME	0x400
#define MS_NODIRATIME	0x800
#define MS_BIND		0x1000
#define MS_MOVE		0x2000
#define MS_REC		0x4000
#define MS_SILENT	0x8000
#define MS_UNBINDABLE	0x20000
#define MS_PRIVATE	0x40000
#define MS_SLAVE	0x80000
#define MS_SHARED	0x100000
#define MS_RELATIME	0x200000
#define MS_STRICTATIME	0x1000000
#define MS_LAZYTIME	0x2000000
#define MS_MGC_VAL	0xc0ed0000UL
#define MS_MGC_MSK	0xffff0000UL
/* umount2(2) flags */
#define MNT_FORCE	0x1
#define MNT_DETACH	0x2
#define MNT_EXPIRE	0x4
#define UMOUNT_NOFOLLOW	0x8

/*
 * mount(2) and umount2(2) on kernel strings (fs/mount.c, Linux's
 * semantics and errno values; docs/vfs.md, "Mounts"): mount fstype's tree
 * (a new tmpfs, or the one proc/sysfs/debugfs tree) on the directory at
 * target, relative to cwd; source is only recorded (/proc/mounts), data
 * is the file system's options. umount the tree whose root target names.
 */
int do_mount(struct inode *cwd, const char *source, const char *target, const char *fstype,
	     unsigned long flags, const char *data);
int do_umount(struct inode *cwd, const char *target, int flags);
/* /proc/mounts: one line per mount, Linux's format ("proc /proc proc rw 0 0"). */
ssize_t mounts_show(char *buf, size_t size);

/* ---- ramfs (fs/ramfs.c) ---- */

/* A new ramfs tree of type (its sb, the root directory 0755 in sb->s_root); NULL: no memory. */
struct super_block *ramfs_new_sb(const struct file_system_type *type);
/*
 * O_TMPFILE: a regular file with no name in dir's tree (dir NULL: in
 * none, Linux's internal shm mount: memfd, shared anonymous memory), open
 * with flags; -EOPNOTSUPP where the file system cannot (/proc, /sys).
 */
int vfs_tmpfile(struct inode *dir, int flags, umode_t mode, struct file **out);

#endif
