/*
 * A process's open files: descriptor numbers to struct file, the close-on-
 * exec bits, and the working directory (kernel/fdtable.c). fork copies the
 * table (the files are shared, as on Linux); exec closes O_CLOEXEC ones.
 */
#ifndef QUIRE_FDTABLE_H
#define QUIRE_FDTABLE_H

#include <quire/types.h>
#include <quire/spinlock.h>

#define NR_OPEN_MAX 256

struct file;
struct inode;
struct task;

struct files_struct {
	int count;			/* tasks sharing it (CLONE_FILES threads); atomic */
	spinlock_t lock;
	struct file *fd[NR_OPEN_MAX];
	u64 cloexec[NR_OPEN_MAX / 64];
	struct inode *cwd;		/* NULL: the root */
	unsigned int umask;		/* umask(2): mode bits a new file or directory loses */
};

/* A table with 0, 1 and 2 open on path (the console). NULL on failure. */
struct files_struct *files_alloc_console(const char *path);
/* A copy for a new process (fork): the same open files, one more reference each. */
struct files_struct *files_dup(struct files_struct *old);
/* Share with a new thread (CLONE_FILES). */
struct files_struct *files_get(struct files_struct *files);
/* Drop a reference; the last one closes every descriptor. */
void files_put(struct files_struct *files);
void files_close_on_exec(struct files_struct *files);

/* The lowest free descriptor >= min for f (taking the caller's reference), or -EMFILE. */
int fd_install_min(struct files_struct *files, struct file *f, int min, bool cloexec);
/* One more than the highest descriptor the calling process may have (RLIMIT_NOFILE). */
int nofile_limit(void);
/* The file behind fd with a new reference, or NULL (EBADF). */
struct file *fget(struct files_struct *files, int fd);
int fd_close(struct files_struct *files, int fd);
/* dup2/dup3: newfd now names oldfd's file. */
int fd_dup_to(struct files_struct *files, int oldfd, int newfd, bool cloexec);

#endif
