/*
 * Descriptor tables (include/quire/fdtable.h). A table starts with the
 * arrays inside files_struct (NR_OPEN_DEFAULT slots) and doubles when a
 * descriptor beyond its end is wanted: new arrays are allocated with the
 * lock dropped, then swapped in under it if the table is still too small
 * (another thread may have grown it meanwhile), as Linux's expand_files.
 * Every reader takes the lock, so the old arrays are freed at once.
 */
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

static void files_init(struct files_struct *files)
{
	files->count = 1;
	spin_lock_init(&files->lock);
	files->max_fds = NR_OPEN_DEFAULT;
	files->fd = files->fd_inline;
	files->cloexec = files->cloexec_inline;
}

/* Arrays of nr slots (a multiple of 64), zeroed; false when out of memory. */
static bool alloc_arrays(unsigned int nr, struct file ***fdp, u64 **cloexecp)
{
	*fdp = kzalloc(nr * sizeof(struct file *), GFP_KERNEL);
	*cloexecp = kzalloc(nr / 8, GFP_KERNEL);
	if (*fdp && *cloexecp)
		return true;
	kfree(*fdp);
	kfree(*cloexecp);
	return false;
}

static void free_arrays(struct files_struct *files, struct file **fd, u64 *cloexec)
{
	if (fd != files->fd_inline)
		kfree(fd);
	if (cloexec != files->cloexec_inline)
		kfree(cloexec);
}

/*
 * Make slot fd exist. Called and returns with the lock held (dropped
 * while allocating). 0, -EMFILE beyond nr_open, -ENOMEM.
 */
static int fd_expand(struct files_struct *files, int fd)
{
	while ((unsigned int)fd >= files->max_fds) {
		unsigned int nr = files->max_fds;
		struct file **nfd;
		u64 *ncloexec;

		if (fd >= NR_OPEN_MAX)
			return -EMFILE;
		if (fd >= FD_TABLE_MAX)
			return -ENOMEM;
		while (nr <= (unsigned int)fd)
			nr *= 2;
		spin_unlock(&files->lock);
		if (!alloc_arrays(nr, &nfd, &ncloexec)) {
			spin_lock(&files->lock);
			return -ENOMEM;
		}
		spin_lock(&files->lock);
		if (files->max_fds >= nr) {	/* another thread grew it */
			kfree(nfd);
			kfree(ncloexec);
			continue;
		}
		memcpy(nfd, files->fd, files->max_fds * sizeof(struct file *));
		memcpy(ncloexec, files->cloexec, files->max_fds / 8);
		free_arrays(files, files->fd, files->cloexec);
		files->fd = nfd;
		files->cloexec = ncloexec;
		files->max_fds = nr;
	}
	return 0;
}

struct files_struct *files_alloc_console(const char *path)
{
	struct files_struct *files = kzalloc(sizeof(*files), GFP_KERNEL);
	struct file *f;

	if (!files)
		return NULL;
	files_init(files);
	files->umask = 022;		/* Linux's default */
	if (path && vfs_open(NULL, path, O_RDWR, 0, &f) == 0) {
		files->fd[0] = f;
		files->fd[1] = get_file(f);
		files->fd[2] = get_file(f);
		files->next_fd = 3;
	}
	return files;
}

/* A copy the size of old's table: allocated first, then filled under old's lock. */
struct files_struct *files_dup(struct files_struct *old)
{
	struct files_struct *files = kzalloc(sizeof(*files), GFP_KERNEL);
	unsigned int nr;

	if (!files)
		return NULL;
	files_init(files);
	spin_lock(&old->lock);
	while ((nr = old->max_fds) > files->max_fds) {
		struct file **nfd;
		u64 *ncloexec;

		spin_unlock(&old->lock);
		if (!alloc_arrays(nr, &nfd, &ncloexec)) {
			free_arrays(files, files->fd, files->cloexec);
			kfree(files);
			return NULL;
		}
		free_arrays(files, files->fd, files->cloexec);
		files->fd = nfd;
		files->cloexec = ncloexec;
		files->max_fds = nr;
		spin_lock(&old->lock);
	}
	for (unsigned int i = 0; i < old->max_fds; i++)
		if (old->fd[i])
			files->fd[i] = get_file(old->fd[i]);
	memcpy(files->cloexec, old->cloexec, old->max_fds / 8);
	files->next_fd = old->next_fd;
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
	for (unsigned int i = 0; i < files->max_fds; i++)
		if (files->fd[i])
			fput(files->fd[i]);
	if (files->cwd)
		iput(files->cwd);
	free_arrays(files, files->fd, files->cloexec);
	kfree(files);
}

/* Past exec's point of no return: no other thread shares the table any more. */
void files_close_on_exec(struct files_struct *files)
{
	for (unsigned int w = 0; w < files->max_fds / 64; w++)
		while (files->cloexec[w])
			fd_close(files, (int)(w * 64 + __builtin_ctzll(files->cloexec[w])));
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
	int fd, start, err, limit = nofile_limit();

	if (min < 0)
		min = 0;
	spin_lock(&files->lock);
	start = max(min, (int)files->next_fd);
	for (;;) {
		for (fd = start; fd < limit && (unsigned int)fd < files->max_fds && files->fd[fd];
		     fd++)
			;
		if (fd >= limit) {
			err = -EMFILE;
			goto out;
		}
		if ((unsigned int)fd < files->max_fds)
			break;
		err = fd_expand(files, fd);	/* may drop the lock: look again */
		if (err)
			goto out;
	}
	files->fd[fd] = f;
	set_cloexec(files, fd, cloexec);
	if (start == (int)files->next_fd)
		files->next_fd = (unsigned int)fd + 1;
	spin_unlock(&files->lock);
	return fd;
out:
	spin_unlock(&files->lock);
	return err;
}

struct file *fget(struct files_struct *files, int fd)
{
	struct file *f = NULL;

	if (!files || fd < 0)
		return NULL;
	spin_lock(&files->lock);
	if ((unsigned int)fd < files->max_fds && files->fd[fd])
		f = get_file(files->fd[fd]);
	spin_unlock(&files->lock);
	return f;
}

int fd_close(struct files_struct *files, int fd)
{
	struct file *f = NULL;

	if (fd < 0)
		return -EBADF;
	spin_lock(&files->lock);
	if ((unsigned int)fd < files->max_fds) {
		f = files->fd[fd];
		files->fd[fd] = NULL;
		set_cloexec(files, fd, false);
		if (f && (unsigned int)fd < files->next_fd)
			files->next_fd = (unsigned int)fd;
	}
	spin_unlock(&files->lock);
	if (!f)
		return -EBADF;
	fput(f);
	return 0;
}

int fd_dup_to(struct files_struct *files, int oldfd, int newfd, bool cloexec)
{
	struct file *f, *old = NULL;
	int err;

	if (newfd < 0 || newfd >= nofile_limit())
		return -EBADF;
	f = fget(files, oldfd);
	if (!f)
		return -EBADF;
	spin_lock(&files->lock);
	err = fd_expand(files, newfd);
	if (err) {
		spin_unlock(&files->lock);
		fput(f);
		return err;
	}
	old = files->fd[newfd];
	files->fd[newfd] = f;
	set_cloexec(files, newfd, cloexec);
	spin_unlock(&files->lock);
	if (old)
		fput(old);
	return newfd;
}

bool fd_get_cloexec(struct files_struct *files, int fd)
{
	bool on = false;

	spin_lock(&files->lock);
	if ((unsigned int)fd < files->max_fds)
		on = (files->cloexec[fd / 64] >> (fd % 64)) & 1;
	spin_unlock(&files->lock);
	return on;
}

void fd_set_cloexec(struct files_struct *files, int fd, bool on)
{
	spin_lock(&files->lock);
	if ((unsigned int)fd < files->max_fds)
		set_cloexec(files, fd, on);
	spin_unlock(&files->lock);
}
