/*
 * A process's open files: descriptor numbers to struct file, the close-on-
 * exec bits, and the working directory (kernel/fdtable.c). fork copies the
 * table (the files are shared, as on Linux); exec closes O_CLOEXEC ones.
 * The table grows as descriptors are opened, up to RLIMIT_NOFILE.
 */
#ifndef QUIRE_FDTABLE_H
#define QUIRE_FDTABLE_H

#include <quire/types.h>
#include <quire/spinlock.h>

/*
 * nr_open: the most descriptors a process may have (RLIMIT_NOFILE's
 * ceiling), Linux's default /proc/sys/fs/nr_open. The table starts with
 * NR_OPEN_DEFAULT slots and doubles on demand (fd_expand, like Linux's
 * expand_files), up to FD_TABLE_MAX slots: the largest array kmalloc
 * gives; a descriptor above that is -ENOMEM, as a table Linux fails to
 * allocate.
 */
#define NR_OPEN_MAX	(1 << 20)
#define NR_OPEN_DEFAULT	64
#define FD_TABLE_MAX	(1 << 19)

struct files_struct {
	int count;			/* tasks sharing it (CLONE_FILES threads); atomic */
	spinlock_t lock;		/* the arrays, their size and every slot */
	unsigned int max_fds;		/* slots in fd, bits in cloexec: a power of two >= 64 */
	unsigned int next_fd;		/* every descriptor below it is open */
	struct file **fd;		/* fd_inline, or a kmalloc'd array once grown */
	u64 *cloexec;
	struct file *fd_inline[NR_OPEN_DEFAULT];
	u64 cloexec_inline[NR_OPEN_DEFAULT / 64];
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
/* F_GETFD/F_SETFD: fd's close-on-exec bit (fd open: the caller holds it through fget). */
bool fd_get_cloexec(struct files_struct *files, int fd);
void fd_set_cloexec(struct files_struct *files, int fd, bool on);

#endif
