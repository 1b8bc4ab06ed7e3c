/*
 * The file system calls, over the VFS (include/quire/fs.h) and the
 * process's descriptor table (include/quire/fdtable.h). Data moves through
 * a kernel bounce buffer a page at a time; every user pointer is copied
 * with the exception-table copies, so a bad one is -EFAULT. Paths are at
 * most PATH_MAX bytes (ENAMETOOLONG).
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
#include <quire/uapi/stat.h>
#include <quire/mmap.h>

#define PATH_MAX 4096
#define BOUNCE PAGE_SIZE

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

/* The file behind fd and a bounce buffer for moving len bytes at ubuf: 0 or -errno. */
static long rw_begin(u64 fd, u64 ubuf, u64 len, struct file **f, char **bounce)
{
	if (!access_ok((void *)ubuf, len))
		return -EFAULT;
	*f = fget(files(), (int)fd);
	if (!*f)
		return -EBADF;
	*bounce = kmalloc(BOUNCE, GFP_KERNEL);
	if (!*bounce) {
		fput(*f);
		return -ENOMEM;
	}
	return 0;
}

/* read(2) at the file position (pos NULL) or pread64(2) at *pos. */
static long do_read(u64 fd, u64 ubuf, u64 len, loff_t *pos)
{
	struct file *f;
	char *bounce;
	long done = rw_begin(fd, ubuf, len, &f, &bounce);

	if (done)
		return done;
	if (pos && (!f->f_op || !f->f_op->llseek || f->f_op->llseek == no_llseek)) {
		done = -ESPIPE;		/* a pipe or a terminal has no offsets */
		len = 0;
	}
	while ((u64)done < len) {
		ssize_t n = vfs_read(f, bounce, min(len - done, (u64)BOUNCE), pos);

		if (n <= 0) {
			if (n < 0 && !done)
				done = n;
			break;
		}
		if (copy_to_user((void *)(ubuf + done), bounce, n)) {
			done = done ? done : -EFAULT;
			break;
		}
		done += n;
		if ((size_t)n < min(len - done + n, (u64)BOUNCE))
			break;		/* a short read (a terminal line, the end): return it */
	}
	kfree(bounce);
	fput(f);
	return done;
}

long sys_read(u64 fd, u64 ubuf, u64 len, u64 a3, u64 a4, u64 a5)
{
	return do_read(fd, ubuf, len, NULL);
}

/* pread64: read at offset off without moving the file position. */
long sys_pread64(u64 fd, u64 ubuf, u64 len, u64 off, u64 a4, u64 a5)
{
	loff_t pos = (loff_t)off;

	if (pos < 0)
		return -EINVAL;
	return do_read(fd, ubuf, len, &pos);
}

long sys_write(u64 fd, u64 ubuf, u64 len, u64 a3, u64 a4, u64 a5)
{
	struct file *f;
	char *bounce;
	long done = rw_begin(fd, ubuf, len, &f, &bounce);

	if (done)
		return done;
	while ((u64)done < len) {
		size_t chunk = min(len - done, (u64)BOUNCE);
		ssize_t n;

		if (copy_from_user(bounce, (void *)(ubuf + done), chunk)) {
			done = done ? done : -EFAULT;
			break;
		}
		n = vfs_write(f, bounce, chunk, NULL);
		if (n < 0) {
			done = done ? done : n;
			break;
		}
		done += n;
		if ((size_t)n < chunk)
			break;
	}
	kfree(bounce);
	fput(f);
	return done;
}

struct iovec {
	u64 iov_base;
	u64 iov_len;
};

static long do_iov(u64 fd, u64 uiov, u64 iovcnt, bool write)
{
	long total = 0;

	if (iovcnt > 1024)
		return -EINVAL;
	for (u64 i = 0; i < iovcnt; i++) {
		struct iovec iov;
		long n;

		if (copy_from_user(&iov, (void *)(uiov + i * sizeof(iov)), sizeof(iov)))
			return total ? total : -EFAULT;
		if (!iov.iov_len)
			continue;
		n = write ? sys_write(fd, iov.iov_base, iov.iov_len, 0, 0, 0)
			  : sys_read(fd, iov.iov_base, iov.iov_len, 0, 0, 0);
		if (n < 0)
			return total ? total : n;
		total += n;
		if ((u64)n < iov.iov_len)
			break;
	}
	return total;
}

long sys_readv(u64 fd, u64 uiov, u64 iovcnt, u64 a3, u64 a4, u64 a5)
{
	return do_iov(fd, uiov, iovcnt, false);
}

long sys_writev(u64 fd, u64 uiov, u64 iovcnt, u64 a3, u64 a4, u64 a5)
{
	return do_iov(fd, uiov, iovcnt, true);
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
		err = vfs_open(dir, path, (int)flags, (umode_t)(mode & 07777 & ~022), &f);
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
	err = vfs_mkdir(files()->cwd, path, (umode_t)(mode & 07777 & ~022));
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

		strscpy(current->comm, base ? base + 1 : path, sizeof(current->comm));
		err = exec_image(path, image, size, (const char *const *)argv, (const char *const *)envp);
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
		if (arg >= NR_OPEN_MAX) {
			r = -EINVAL;
			break;
		}
		r = fd_install_min(fs, get_file(f), (int)arg, cmd == F_DUPFD_CLOEXEC);
		if (r < 0)
			fput(f);
		break;
	case F_GETFD:
		r = (fs->cloexec[fd / 64] >> (fd % 64)) & 1 ? FD_CLOEXEC : 0;
		break;
	case F_SETFD:
		spin_lock(&fs->lock);
		if (arg & FD_CLOEXEC)
			fs->cloexec[fd / 64] |= 1ULL << (fd % 64);
		else
			fs->cloexec[fd / 64] &= ~(1ULL << (fd % 64));
		spin_unlock(&fs->lock);
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

#define MFD_CLOEXEC 1U

/*
 * memfd_create: a ramfs file that no directory names (created, then
 * unlinked), so its page-cache folios live as long as descriptors do.
 */
long sys_memfd_create(u64 uname, u64 flags, u64 a2, u64 a3, u64 a4, u64 a5)
{
	static int seq;
	char *name, path[64];
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
	snprintf(path, sizeof(path), "/tmp/.memfd-%d", __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	err = vfs_open(NULL, path, O_RDWR | O_CREAT | O_EXCL, 0600, &f);
	if (err)
		return err;
	vfs_unlink(NULL, path);
	fd = fd_install_min(files(), f, 0, flags & MFD_CLOEXEC);
	if (fd < 0)
		fput(f);
	return fd;
}

/* Whether a file may be mapped with prot and flags (mmap's file checks, Linux's errno). */
long mmap_file_check(struct file *f, u64 prot, u64 flags)
{
	if (!S_ISREG(file_inode(f)->i_mode))
		return -ENODEV;		/* devices and directories: not mappable yet */
	if (!(f->f_mode & FMODE_READ))
		return -EACCES;
	if ((flags & MAP_SHARED) && (prot & PROT_WRITE) && !(f->f_mode & FMODE_WRITE))
		return -EACCES;
	return 0;
}

/* An unnamed RAM file of size bytes, for MAP_SHARED|MAP_ANONYMOUS. */
long shmem_file_setup(u64 size, struct file **out)
{
	static int seq;
	char path[64];
	long err;

	snprintf(path, sizeof(path), "/tmp/.shmem-%d", __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED));
	err = vfs_open(NULL, path, O_RDWR | O_CREAT | O_EXCL, 0600, out);
	if (err)
		return err;
	vfs_unlink(NULL, path);
	err = vfs_ftruncate(*out, (loff_t)ALIGN_UP(size, PAGE_SIZE));
	if (err) {
		fput(*out);
		return err;
	}
	return 0;
}
