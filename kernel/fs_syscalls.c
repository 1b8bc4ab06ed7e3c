/*
 * The file system calls, over the VFS (include/quire/fs.h) and the
 * process's descriptor table (include/quire/fdtable.h); read, write and
 * their positioned and vectored forms are in kernel/rw_syscalls.c. Every
 * user pointer is copied with the exception-table copies, so a bad one is
 * -EFAULT. Paths are at most PATH_MAX bytes (ENAMETOOLONG).
 */
#define pr_fmt(fmt) "syscall: " fmt
#include <quire/process.h>
#include <quire/syscalls.h>
#include <quire/fdtable.h>
#include <quire/fs.h>
#include <quire/uaccess.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/uapi/fcntl.h>
#include <quire/uapi/statfs.h>
#include <quire/uapi/stat.h>
#include <quire/mmap.h>
#include <quire/time.h>

#define PATH_MAX 4096

static struct files_struct *files(void)
{
	return current->files;
}

/* A kernel copy of a user path; free with kfree. */
static long get_path(const char *upath, char **out)
{
	char *p = kmalloc(PATH_MAX, GFP_KERNEL);
	long n;

	if (!p)
		return -ENOMEM;
	n = strncpy_from_user(p, upath, PATH_MAX);
	if (n < 0) {
		kfree(p);
		return n;
	}
	*out = p;
	return 0;
}

/* The directory a *at call is relative to: the cwd, or a directory fd. */
static long dirfd_inode(int dirfd, struct file **held, struct inode **dir)
{
	*held = NULL;
	if (dirfd == AT_FDCWD) {
		*dir = files()->cwd;
		return 0;
	}
	*held = fget(files(), dirfd);
	if (!*held)
		return -EBADF;
	*dir = file_inode(*held);
	return 0;
}

long sys_openat(u64 dirfd, u64 upath, u64 flags, u64 mode, u64 a4, u64 a5)
{
	struct file *held, *f;
	struct inode *dir;
	char *path;
	long err = get_path((const char *)upath, &path);
	int fd;

	if (err)
		return err;
	err = dirfd_inode((int)dirfd, &held, &dir);
	if (!err)
		err = vfs_open(dir, path, (int)flags, (umode_t)(mode & 07777 & ~files()->umask), &f);
	if (held)
		fput(held);
	kfree(path);
	if (err)
		return err;
	fd = fd_install_min(files(), f, 0, flags & O_CLOEXEC);
	if (fd < 0)
		fput(f);
	return fd;
}

long sys_open(u64 upath, u64 flags, u64 mode, u64 a3, u64 a4, u64 a5)
{
	return sys_openat((u64)AT_FDCWD, upath, flags, mode, 0, 0);
}

long sys_close(u64 fd, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return fd_close(files(), (int)fd);
}

long sys_lseek(u64 fd, u64 off, u64 whence, u64 a3, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	long r;

	if (!f)
		return -EBADF;
	r = vfs_llseek(f, (loff_t)off, (int)whence);
	fput(f);
	return r;
}

long sys_fstat(u64 fd, u64 ust, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	struct stat st;
	long r;

	if (!f)
		return -EBADF;
	r = vfs_fstat(f, &st);
	fput(f);
	if (!r && copy_to_user((void *)ust, &st, sizeof(st)))
		r = -EFAULT;
	return r;
}

long sys_newfstatat(u64 dirfd, u64 upath, u64 ust, u64 flags, u64 a4, u64 a5)
{
	struct file *held;
	struct inode *dir;
	struct stat st;
	char *path;
	long err;

	if (flags & ~(u64)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	err = get_path((const char *)upath, &path);
	if (err)
		return err;
	if (!path[0] && (flags & AT_EMPTY_PATH)) {
		kfree(path);
		return sys_fstat(dirfd, ust, 0, 0, 0, 0);
	}
	err = dirfd_inode((int)dirfd, &held, &dir);
	if (!err)
		err = vfs_stat(dir, path, (int)flags, &st);
	if (held)
		fput(held);
	kfree(path);
	if (!err && copy_to_user((void *)ust, &st, sizeof(st)))
		err = -EFAULT;
	return err;
}

long sys_stat(u64 upath, u64 ust, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return sys_newfstatat((u64)AT_FDCWD, upath, ust, 0, 0, 0);
}

long sys_lstat(u64 upath, u64 ust, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return sys_newfstatat((u64)AT_FDCWD, upath, ust, AT_SYMLINK_NOFOLLOW, 0, 0);
}

#define X_OK	1
#define W_OK	2
#define R_OK	4

/*
 * faccessat(2) (no flags; Linux's faccessat2 has them): whether path
 * exists and allows mode for the caller. Every process runs as root, so
 * only X_OK can fail: a regular file needs an execute bit.
 */
long sys_faccessat(u64 dirfd, u64 upath, u64 mode, u64 a3, u64 a4, u64 a5)
{
	struct file *held;
	struct inode *dir;
	struct stat st;
	char *path;
	long err;

	if (mode & ~(u64)(R_OK | W_OK | X_OK))
		return -EINVAL;
	err = get_path((const char *)upath, &path);
	if (err)
		return err;
	err = dirfd_inode((int)dirfd, &held, &dir);
	if (!err)
		err = vfs_stat(dir, path, 0, &st);
	if (held)
		fput(held);
	kfree(path);
	if (!err && (mode & X_OK) && S_ISREG(st.st_mode) && !(st.st_mode & 0111))
		err = -EACCES;
	return err;
}

/*
 * utimensat (280): a file's access and modification times, from times[2]
 * (NULL: both now), each tv_nsec UTIME_NOW or UTIME_OMIT or a time;
 * the change time becomes now unless both are omitted. A NULL path: the
 * file dirfd names (AT_SYMLINK_NOFOLLOW with it EINVAL). Linux's order:
 * flags EINVAL, times EFAULT, then EINVAL for a bad tv_nsec, then the path.
 * Every process is root: no EPERM or EACCES.
 */
#define UTIME_NOW	((1L << 30) - 1)
#define UTIME_OMIT	((1L << 30) - 2)

long sys_utimensat(u64 dirfd, u64 upath, u64 utimes, u64 flags, u64 a4, u64 a5)
{
	struct kernel_timespec ts[2];
	struct timespec64 now = current_time();
	struct inode *inode = NULL, *dir;
	struct file *held;
	char *path = NULL;
	long err;

	if (flags & ~(u64)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return -EINVAL;
	if (utimes) {
		if (copy_from_user(ts, (void *)utimes, sizeof(ts)))
			return -EFAULT;
		for (int i = 0; i < 2; i++)
			if (ts[i].tv_nsec != UTIME_NOW && ts[i].tv_nsec != UTIME_OMIT &&
			    (ts[i].tv_nsec < 0 || ts[i].tv_nsec >= (s64)NSEC_PER_SEC))
				return -EINVAL;
		if (ts[0].tv_nsec == UTIME_OMIT && ts[1].tv_nsec == UTIME_OMIT)
			return 0;
	} else {
		ts[0].tv_nsec = ts[1].tv_nsec = UTIME_NOW;
	}
	if (!upath) {
		struct file *f;

		if (flags & AT_SYMLINK_NOFOLLOW)
			return -EINVAL;
		f = fget(files(), (int)dirfd);
		if (!f)
			return -EBADF;
		inode = igrab(file_inode(f));
		fput(f);
	} else {
		err = get_path((const char *)upath, &path);
		if (err)
			return err;
		err = dirfd_inode((int)dirfd, &held, &dir);
		if (!err)
			err = vfs_lookup_at(dir, path, (int)(flags & AT_SYMLINK_NOFOLLOW), &inode);
		if (held)
			fput(held);
		kfree(path);
		if (err)
			return err;
	}
	for (int i = 0; i < 2; i++) {
		struct timespec64 *t = i ? &inode->i_mtime : &inode->i_atime;

		if (ts[i].tv_nsec == UTIME_OMIT)
			continue;
		*t = ts[i].tv_nsec == UTIME_NOW ? now
			: (struct timespec64){ ts[i].tv_sec, (long)ts[i].tv_nsec };
	}
	inode->i_ctime = now;
	iput(inode);
	return 0;
}

/*
 * chmod (90), fchmod (91), fchmodat (268): the permission bits, set-id
 * and sticky bits (mode & 07777) of a file, symlinks followed; the change
 * time becomes now. Every process is root: no EPERM. fchmodat2 (452,
 * with flags) is not there (-ENOSYS).
 */
static long chmod_inode(struct inode *inode, u64 mode)
{
	inode->i_mode = (inode->i_mode & S_IFMT) | ((umode_t)mode & 07777);
	inode->i_ctime = current_time();
	return 0;
}

long sys_fchmodat(u64 dirfd, u64 upath, u64 mode, u64 a3, u64 a4, u64 a5)
{
	struct inode *inode, *dir;
	struct file *held;
	char *path;
	long err = get_path((const char *)upath, &path);

	if (err)
		return err;
	err = dirfd_inode((int)dirfd, &held, &dir);
	if (!err)
		err = vfs_lookup(dir, path, &inode);
	if (held)
		fput(held);
	kfree(path);
	if (err)
		return err;
	err = chmod_inode(inode, mode);
	iput(inode);
	return err;
}

long sys_chmod(u64 upath, u64 mode, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return sys_fchmodat((u64)AT_FDCWD, upath, mode, 0, 0, 0);
}

long sys_fchmod(u64 fd, u64 mode, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	long err;

	if (!f)
		return -EBADF;
	err = chmod_inode(file_inode(f), mode);
	fput(f);
	return err;
}

long sys_access(u64 upath, u64 mode, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return sys_faccessat((u64)AT_FDCWD, upath, mode, 0, 0, 0);
}

long sys_getdents64(u64 fd, u64 ubuf, u64 count, u64 a3, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	char *buf;
	long n;

	if (!f)
		return -EBADF;
	count = min(count, (u64)(64 * 1024));
	buf = kmalloc(count ? count : 1, GFP_KERNEL);
	if (!buf) {
		fput(f);
		return -ENOMEM;
	}
	n = vfs_getdents64(f, buf, count);
	if (n > 0 && copy_to_user((void *)ubuf, buf, n))
		n = -EFAULT;
	kfree(buf);
	fput(f);
	return n;
}

long sys_ioctl(u64 fd, u64 cmd, u64 arg, u64 a3, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	bool in, out;
	size_t size;
	u8 kbuf[256];
	long r;

	if (!f)
		return -EBADF;
	size = ioctl_arg_size((unsigned int)cmd, &in, &out);
	if (size > sizeof(kbuf)) {
		fput(f);
		return -EINVAL;
	}
	if (size && in && copy_from_user(kbuf, (void *)arg, size)) {
		fput(f);
		return -EFAULT;
	}
	r = vfs_ioctl(f, (unsigned int)cmd, size ? (unsigned long)kbuf : arg);
	fput(f);
	if (!r && size && out && copy_to_user((void *)arg, kbuf, size))
		r = -EFAULT;
	return r;
}

long sys_dup(u64 fd, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	int nfd;

	if (!f)
		return -EBADF;
	nfd = fd_install_min(files(), f, 0, false);
	if (nfd < 0)
		fput(f);
	return nfd;
}

long sys_dup3(u64 oldfd, u64 newfd, u64 flags, u64 a3, u64 a4, u64 a5)
{
	if (flags & ~(u64)O_CLOEXEC)
		return -EINVAL;
	if (oldfd == newfd)
		return -EINVAL;
	return fd_dup_to(files(), (int)oldfd, (int)newfd, flags & O_CLOEXEC);
}

long sys_dup2(u64 oldfd, u64 newfd, u64 a2, u64 a3, u64 a4, u64 a5)
{
	if (oldfd == newfd) {
		struct file *f = fget(files(), (int)oldfd);

		if (!f)
			return -EBADF;
		fput(f);
		return (long)newfd;
	}
	return fd_dup_to(files(), (int)oldfd, (int)newfd, false);
}

long sys_mkdir(u64 upath, u64 mode, u64 a2, u64 a3, u64 a4, u64 a5)
{
	char *path;
	long err = get_path((const char *)upath, &path);

	if (err)
		return err;
	err = vfs_mkdir(files()->cwd, path, (umode_t)(mode & 07777 & ~files()->umask));
	kfree(path);
	return err;
}

static long path_op(u64 upath, int (*op)(struct inode *, const char *))
{
	char *path;
	long err = get_path((const char *)upath, &path);

	if (err)
		return err;
	err = op(files()->cwd, path);
	kfree(path);
	return err;
}

long sys_unlink(u64 upath, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return path_op(upath, vfs_unlink);
}

long sys_rmdir(u64 upath, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return path_op(upath, vfs_rmdir);
}

/*
 * truncate(2) and ftruncate(2): a regular file's size, in Linux's order of
 * errors: a negative length EINVAL first; then the path (ENOENT, ...) or
 * the descriptor (EBADF); a directory EISDIR (truncate) or, with
 * ftruncate, anything not a regular file opened for writing EINVAL.
 */
long sys_truncate(u64 upath, u64 length, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct inode *inode;
	char *path;
	long err;

	if ((long)length < 0)
		return -EINVAL;
	err = get_path((const char *)upath, &path);
	if (err)
		return err;
	err = vfs_lookup(files()->cwd, path, &inode);
	kfree(path);
	if (err)
		return err;
	err = vfs_truncate_limited(inode, (loff_t)length);
	iput(inode);
	return err;
}

long sys_ftruncate(u64 fd, u64 length, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct file *f;
	long err;

	if ((long)length < 0)
		return -EINVAL;
	f = fget(files(), (int)fd);
	if (!f)
		return -EBADF;
	err = S_ISREG(file_inode(f)->i_mode) ? vfs_ftruncate(f, (loff_t)length) : -EINVAL;
	fput(f);
	return err;
}

long sys_fallocate(u64 fd, u64 mode, u64 offset, u64 len, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	long err;

	if (!f)
		return -EBADF;
	err = vfs_fallocate(f, (int)mode, (loff_t)offset, (loff_t)len);
	fput(f);
	return err;
}

static long put_statfs(struct inode *inode, u64 ubuf)
{
	struct statfs st;
	long err = vfs_statfs(inode, &st);

	if (!err && copy_to_user((void *)ubuf, &st, sizeof(st)))
		err = -EFAULT;
	return err;
}

long sys_statfs(u64 upath, u64 ubuf, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct inode *inode;
	char *path;
	long err = get_path((const char *)upath, &path);

	if (err)
		return err;
	err = vfs_lookup(files()->cwd, path, &inode);
	kfree(path);
	if (err)
		return err;
	err = put_statfs(inode, ubuf);
	iput(inode);
	return err;
}

long sys_fstatfs(u64 fd, u64 ubuf, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	long err;

	if (!f)
		return -EBADF;
	err = put_statfs(file_inode(f), ubuf);
	fput(f);
	return err;
}

/* umask(2): set the process's mask (its low nine bits), return the old one. */
long sys_umask(u64 mask, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return (long)__atomic_exchange_n(&files()->umask, (unsigned int)mask & 0777, __ATOMIC_RELAXED);
}

long sys_chdir(u64 upath, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct inode *dir, *old;
	char *path;
	long err = get_path((const char *)upath, &path);

	if (err)
		return err;
	err = vfs_lookup(files()->cwd, path, &dir);
	kfree(path);
	if (err)
		return err;
	if (!S_ISDIR(dir->i_mode)) {
		iput(dir);
		return -ENOTDIR;
	}
	old = files()->cwd;
	files()->cwd = dir;
	if (old)
		iput(old);
	return 0;
}

/* symlinkat: a new symlink at path (from dirfd) holding target, which is not checked. */
long sys_symlinkat(u64 utarget, u64 dirfd, u64 upath, u64 a3, u64 a4, u64 a5)
{
	struct file *held;
	struct inode *dir;
	char *target, *path;
	long err = get_path((const char *)utarget, &target);

	if (err)
		return err;
	err = get_path((const char *)upath, &path);
	if (!err) {
		err = dirfd_inode((int)dirfd, &held, &dir);
		if (!err) {
			err = *target ? vfs_symlink(dir, target, path) : -ENOENT;
			if (held)
				fput(held);
		}
		kfree(path);
	}
	kfree(target);
	return err;
}

long sys_symlink(u64 utarget, u64 upath, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return sys_symlinkat(utarget, (u64)AT_FDCWD, upath, 0, 0, 0);
}

/* fchdir: the directory an open descriptor names becomes the cwd. */
long sys_fchdir(u64 fd, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	struct inode *old;

	if (!f)
		return -EBADF;
	if (!S_ISDIR(file_inode(f)->i_mode)) {
		fput(f);
		return -ENOTDIR;
	}
	old = files()->cwd;
	files()->cwd = igrab(file_inode(f));
	fput(f);
	if (old)
		iput(old);
	return 0;
}

/*
 * getcwd: the cwd's absolute path and its length with the NUL (Linux's
 * return value; glibc returns the buffer). -ERANGE when it does not fit,
 * -ENOENT when the directory was removed (fs/d_path.c).
 */
long sys_getcwd(u64 ubuf, u64 size, u64 a2, u64 a3, u64 a4, u64 a5)
{
	char *buf = kmalloc(PATH_MAX, GFP_KERNEL);
	long len;

	if (!buf)
		return -ENOMEM;
	len = vfs_getcwd(files()->cwd, buf, min(size, (u64)PATH_MAX));
	if (len >= 0 && copy_to_user((void *)ubuf, buf, (size_t)len + 1))
		len = -EFAULT;
	else if (len >= 0)
		len++;
	kfree(buf);
	return len;
}

/* readlinkat: a symlink's target, not NUL-terminated, cut to bufsiz; EINVAL for anything else. */
long sys_readlinkat(u64 dirfd, u64 upath, u64 ubuf, u64 bufsiz, u64 a4, u64 a5)
{
	struct file *held;
	struct inode *dir;
	char *path, *buf;
	long err;

	if ((int)bufsiz <= 0)
		return -EINVAL;
	err = get_path((const char *)upath, &path);
	if (err)
		return err;
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	err = buf ? dirfd_inode((int)dirfd, &held, &dir) : -ENOMEM;
	if (!err) {
		err = vfs_readlink(dir, path, buf, min((u64)(int)bufsiz, (u64)PATH_MAX));
		if (held)
			fput(held);
	}
	if (err > 0 && copy_to_user((void *)ubuf, buf, (size_t)err))
		err = -EFAULT;
	kfree(buf);
	kfree(path);
	return err;
}

long sys_readlink(u64 upath, u64 ubuf, u64 bufsiz, u64 a3, u64 a4, u64 a5)
{
	return sys_readlinkat((u64)AT_FDCWD, upath, ubuf, bufsiz, 0, 0);
}

#define MAX_ARGV 256

/* A kernel copy of a user string vector (argv, envp); NULL-terminated. */
static long get_strings(u64 uvec, char ***out)
{
	char **v = kzalloc((MAX_ARGV + 1) * sizeof(char *), GFP_KERNEL);
	int n = 0;

	if (!v)
		return -ENOMEM;
	for (; uvec; n++) {
		u64 uptr;
		long err;

		if (n == MAX_ARGV) {
			err = -E2BIG;
			goto fail;
		}
		if (copy_from_user(&uptr, (void *)(uvec + n * 8), 8)) {
			err = -EFAULT;
			goto fail;
		}
		if (!uptr)
			break;
		err = get_path((const char *)uptr, &v[n]);
		if (err) {
fail:
			while (n--)
				kfree(v[n]);
			kfree(v);
			return err == -ENAMETOOLONG ? -E2BIG : err;
		}
	}
	*out = v;
	return 0;
}

static void put_strings(char **v)
{
	for (int i = 0; v && v[i]; i++)
		kfree(v[i]);
	kfree(v);
}

#define EXEC_MAX_SIZE (64UL << 20)

long sys_execve(u64 upath, u64 uargv, u64 uenvp, u64 a3, u64 a4, u64 a5)
{
	char *path, **argv = NULL, **envp = NULL;
	void *image = NULL;
	size_t size;
	long err = get_path((const char *)upath, &path);

	if (err)
		return err;
	err = get_strings(uargv, &argv);
	if (!err)
		err = get_strings(uenvp, &envp);
	if (!err)
		err = kernel_read_file(files()->cwd, path, EXEC_MAX_SIZE, &image, &size);
	if (!err) {
		const char *base = strrchr(path, '/');
		char old_comm[TASK_COMM_LEN];

		memcpy(old_comm, current->comm, sizeof(old_comm));
		strscpy(current->comm, base ? base + 1 : path, sizeof(current->comm));
		err = exec_image(path, image, size, (const char *const *)argv, (const char *const *)envp);
		memcpy(current->comm, old_comm, sizeof(old_comm));	/* it failed: still the old program */
	}
	/* Only a failed exec gets here: the process continues as it was. */
	kfree(image);
	put_strings(argv);
	put_strings(envp);
	kfree(path);
	return err;
}

#define F_DUPFD		0
#define F_GETFD		1
#define F_SETFD		2
#define F_GETFL		3
#define F_SETFL		4
#define F_DUPFD_CLOEXEC	1030
#define FD_CLOEXEC	1

long sys_fcntl(u64 fd, u64 cmd, u64 arg, u64 a3, u64 a4, u64 a5)
{
	struct files_struct *fs = files();
	struct file *f = fget(fs, (int)fd);
	long r = 0;

	if (!f)
		return -EBADF;
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		if (arg >= (u64)nofile_limit()) {
			r = -EINVAL;
			break;
		}
		r = fd_install_min(fs, get_file(f), (int)arg, cmd == F_DUPFD_CLOEXEC);
		if (r < 0)
			fput(f);
		break;
	case F_GETFD:
		r = fd_get_cloexec(fs, (int)fd) ? FD_CLOEXEC : 0;
		break;
	case F_SETFD:
		fd_set_cloexec(fs, (int)fd, arg & FD_CLOEXEC);
		break;
	case F_GETFL:
		r = (long)f->f_flags | (f->f_mode == (FMODE_READ | FMODE_WRITE) ? O_RDWR :
					f->f_mode == FMODE_WRITE ? O_WRONLY : O_RDONLY);
		break;
	case F_SETFL:
		/* Only O_APPEND and O_NONBLOCK may change, as on Linux. */
		f->f_flags = (f->f_flags & ~(unsigned int)(O_APPEND | O_NONBLOCK)) |
			     ((unsigned int)arg & (O_APPEND | O_NONBLOCK));
		break;
	default:
		r = -EINVAL;
		break;
	}
	fput(f);
	return r;
}

/*
 * fsync, fdatasync, syncfs and sync: nothing is ever written back (every
 * file lives in RAM, fs/sync.c), so these answer what Linux answers for
 * such a file: 0, EBADF for a bad descriptor, and for fsync/fdatasync
 * EINVAL on a file that cannot be synced (a pipe, a device).
 */
static long do_fsync(u64 fd, int datasync)
{
	struct file *f = fget(files(), (int)fd);
	long r;

	if (!f)
		return -EBADF;
	r = vfs_fsync(f, datasync);
	fput(f);
	return r;
}

long sys_fsync(u64 fd, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return do_fsync(fd, 0);
}

long sys_fdatasync(u64 fd, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return do_fsync(fd, 1);
}

long sys_syncfs(u64 fd, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct file *f = fget(files(), (int)fd);
	long r;

	if (!f)
		return -EBADF;
	r = vfs_syncfs(f);
	fput(f);
	return r;
}

long sys_sync(u64 a0, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return 0;
}

long sys_pipe2(u64 ufds, u64 flags, u64 a2, u64 a3, u64 a4, u64 a5)
{
	struct file *f[2];
	int fds[2];
	long err;

	if (flags & ~(u64)(O_CLOEXEC | O_NONBLOCK))
		return -EINVAL;
	if (!access_ok((void *)ufds, sizeof(fds)))
		return -EFAULT;
	err = create_pipe_files(f, (int)flags);
	if (err)
		return err;
	fds[0] = fd_install_min(files(), f[0], 0, flags & O_CLOEXEC);
	if (fds[0] < 0) {
		fput(f[0]);
		fput(f[1]);
		return fds[0];
	}
	fds[1] = fd_install_min(files(), f[1], 0, flags & O_CLOEXEC);
	if (fds[1] < 0) {
		fd_close(files(), fds[0]);
		fput(f[1]);
		return fds[1];
	}
	if (copy_to_user((void *)ufds, fds, sizeof(fds))) {
		fd_close(files(), fds[0]);
		fd_close(files(), fds[1]);
		return -EFAULT;
	}
	return 0;
}

long sys_pipe(u64 ufds, u64 a1, u64 a2, u64 a3, u64 a4, u64 a5)
{
	return sys_pipe2(ufds, 0, 0, 0, 0, 0);
}

/*
 * A string argument of mount(2) (Linux's copy_mount_string): NULL stays
 * NULL; at most a page with its NUL (longer: EINVAL); a bad pointer EFAULT.
 */
static long get_mount_string(u64 uptr, char **out)
{
	char *p;
	long n;

	*out = NULL;
	if (!uptr)
		return 0;
	p = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	n = strncpy_from_user(p, (const char *)uptr, PAGE_SIZE);
	if (n < 0) {
		kfree(p);
		return n == -ENAMETOOLONG ? -EINVAL : n;
	}
	*out = p;
	return 0;
}

/*
 * mount(2): the file system type, the source, the options (a string for
 * every type Quire has), then the target, in Linux's order (fs/mount.c's
 * do_mount does the rest).
 */
long sys_mount(u64 usource, u64 utarget, u64 utype, u64 flags, u64 udata, u64 a5)
{
	char *type, *source = NULL, *data = NULL, *target = NULL;
	long err = get_mount_string(utype, &type);

	if (!err)
		err = get_mount_string(usource, &source);
	if (!err)
		err = get_mount_string(udata, &data);
	if (!err)
		err = get_path((const char *)utarget, &target);
	if (!err)
		err = do_mount(files()->cwd, source, target, type, flags, data);
	kfree(type);
	kfree(source);
	kfree(data);
	kfree(target);
	return err;
}

/* umount2(2): the flags first, then the path, as Linux's ksys_umount. */
long sys_umount2(u64 utarget, u64 flags, u64 a2, u64 a3, u64 a4, u64 a5)
{
	char *target;
	long err;

	if (flags & ~(u64)(MNT_FORCE | MNT_DETACH | MNT_EXPIRE | UMOUNT_NOFOLLOW))
		return -EINVAL;
	err = get_path((const char *)utarget, &target);
	if (err)
		return err;
	err = do_umount(files()->cwd, target, (int)flags);
	kfree(target);
	return err;
}

#define MFD_CLOEXEC 1U

/*
 * memfd_create: a ramfs file that no directory names, in no tree (so no
 * mount is busy because of it), whose page-cache folios live as long as
 * descriptors do.
 */
long sys_memfd_create(u64 uname, u64 flags, u64 a2, u64 a3, u64 a4, u64 a5)
{
	char *name;
	struct file *f;
	long err;
	int fd;

	if (flags & ~(u64)MFD_CLOEXEC)
		return -EINVAL;
	err = get_path((const char *)uname, &name);
	if (err)
		return err;
	if (strlen(name) > 249)		/* Linux's limit on the name */
		err = -EINVAL;
	kfree(name);
	if (err)
		return err;
	err = vfs_tmpfile(NULL, O_RDWR, 0600, &f);	/* in no tree: Linux's internal shm mount */
	if (err)
		return err;
	fd = fd_install_min(files(), f, 0, flags & MFD_CLOEXEC);
	if (fd < 0)
		fput(f);
	return fd;
}

/*
 * mmap's checks of a file, in Linux's order (EACCES for the access, then
 * ENODEV for what cannot be mapped), and what the VMA will map, in
 * *mapped: f itself for a regular file (its page cache; a new reference),
 * or what a device's mmap_backing says (/dev/zero: NULL for private
 * anonymous memory, a shared RAM file). The caller keeps its own
 * reference on f.
 */
long mmap_file_prepare(struct file *f, u64 len, u64 prot, u64 flags, struct file **mapped)
{
	*mapped = NULL;
	if ((flags & MAP_SHARED) && (prot & PROT_WRITE) && !(f->f_mode & FMODE_WRITE))
		return -EACCES;
	if (!(f->f_mode & FMODE_READ))
		return -EACCES;
	if (S_ISREG(file_inode(f)->i_mode)) {
		*mapped = get_file(f);
		return 0;
	}
	if (!f->f_op || !f->f_op->mmap_backing)
		return -ENODEV;		/* directories, pipes, the console, /dev/null */
	return f->f_op->mmap_backing(f, len, flags, mapped);
}

/* An unnamed RAM file of size bytes, for MAP_SHARED|MAP_ANONYMOUS. */
long shmem_file_setup(u64 size, struct file **out)
{
	long err = vfs_tmpfile(NULL, O_RDWR, 0600, out);

	if (err)
		return err;
	err = vfs_truncate(file_inode(*out), (loff_t)ALIGN_UP(size, PAGE_SIZE));
	if (err) {
		fput(*out);
		return err;
	}
	return 0;
}
