/* Descriptor tables (include/quire/fdtable.h). */
#include <quire/fdtable.h>
#include <quire/fs.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/uapi/fcntl.h>
#include <quire/uapi/resource.h>
#include <quire/process.h>
#include <quire/sched.h>
#include <quire/kernel.h>

static void set_cloexec(struct files_struct *files, int fd, bool on)
{
	u64 bit = 1ULL << (fd % 64);

	if (on)
		files->cloexec[fd / 64] |= bit;
	else
		files->cloexec[fd / 64] &= ~bit;
}

struct files_struct *files_alloc_console(const char *path)
{
	struct files_struct *files = kzalloc(sizeof(*files), GFP_KERNEL);
	struct file *f;

	if (!files)
		return NULL;
	files->count = 1;
	files->umask = 022;		/* Linux's default */
	spin_lock_init(&files->lock);
	if (path && vfs_open(NULL, path, O_RDWR, 0, &f) == 0) {
		files->fd[0] = f;
		files->fd[1] = get_file(f);
		files->fd[2] = get_file(f);
	}
	return files;
}

struct files_struct *files_dup(struct files_struct *old)
{
	struct files_struct *files = kzalloc(sizeof(*files), GFP_KERNEL);

	if (!files)
		return NULL;
	files->count = 1;
	spin_lock_init(&files->lock);
	spin_lock(&old->lock);
	for (int i = 0; i < NR_OPEN_MAX; i++)
		if (old->fd[i])
			files->fd[i] = get_file(old->fd[i]);
	memcpy(files->cloexec, old->cloexec, sizeof(files->cloexec));
	files->cwd = old->cwd ? igrab(old->cwd) : NULL;
	files->umask = old->umask;
	spin_unlock(&old->lock);
	return files;
}

struct files_struct *files_get(struct files_struct *files)
{
	__atomic_fetch_add(&files->count, 1, __ATOMIC_RELAXED);
	return files;
}

void files_put(struct files_struct *files)
{
	if (!files || __atomic_sub_fetch(&files->count, 1, __ATOMIC_ACQ_REL))
		return;
	for (int i = 0; i < NR_OPEN_MAX; i++)
		if (files->fd[i])
			fput(files->fd[i]);
	if (files->cwd)
		iput(files->cwd);
	kfree(files);
}

void files_close_on_exec(struct files_struct *files)
{
	for (int i = 0; i < NR_OPEN_MAX; i++)
		if (files->cloexec[i / 64] & (1ULL << (i % 64)))
			fd_close(files, i);
}

/* One more than the highest descriptor the caller may have: RLIMIT_NOFILE. */
int nofile_limit(void)
{
	struct task *t = current;
	u64 lim = t ? task_rlimit(t, RLIMIT_NOFILE) : NR_OPEN_MAX;

	return (int)min(lim, (u64)NR_OPEN_MAX);
}

int fd_install_min(struct files_struct *files, struct file *f, int min, bool cloexec)
{
	int fd, limit = nofile_limit();

	spin_lock(&files->lock);
	for (fd = min < 0 ? 0 : min; fd < limit && files->fd[fd]; fd++)
		;
	if (fd >= limit) {
		spin_unlock(&files->lock);
		return -EMFILE;
	}
	files->fd[fd] = f;
	set_cloexec(files, fd, cloexec);
	spin_unlock(&files->lock);
	return fd;
}

struct file *fget(struct files_struct *files, int fd)
{
	struct file *f = NULL;

	if (!files || fd < 0 || fd >= NR_OPEN_MAX)
		return NULL;
	spin_lock(&files->lock);
	if (files->fd[fd])
		f = get_file(files->fd[fd]);
	spin_unlock(&files->lock);
	return f;
}

int fd_close(struct files_struct *files, int fd)
{
	struct file *f;

	if (fd < 0 || fd >= NR_OPEN_MAX)
		return -EBADF;
	spin_lock(&files->lock);
	f = files->fd[fd];
	files->fd[fd] = NULL;
	set_cloexec(files, fd, false);
	spin_unlock(&files->lock);
	if (!f)
		return -EBADF;
	fput(f);
	return 0;
}

int fd_dup_to(struct files_struct *files, int oldfd, int newfd, bool cloexec)
{
	struct file *f, *old = NULL;

	if (newfd < 0 || newfd >= nofile_limit())
		return -EBADF;
	f = fget(files, oldfd);
	if (!f)
		return -EBADF;
	spin_lock(&files->lock);
	old = files->fd[newfd];
	files->fd[newfd] = f;
	set_cloexec(files, newfd, cloexec);
	spin_unlock(&files->lock);
	if (old)
		fput(old);
	return newfd;
}
