/* Interfaces between the files of fs/ that nothing else should call. */
#ifndef FS_INTERNAL_H
#define FS_INTERNAL_H

#include <quire/fs.h>

/*
 * The namespace lock (namei.c): held across every path walk and every
 * change to a directory (create, unlink, rmdir, symlink) and while a
 * directory is listed. Taken before any inode's i_mutex, never after.
 */
extern struct mutex vfs_ns_mutex;

/* namei.c: open's walk. *created tells whether it made a new regular file. */
int open_namei(struct inode *cwd, const char *path, int flags, umode_t mode,
	       struct inode **out, bool *created);

/* ramfs.c */
extern const struct inode_operations ramfs_dir_inode_operations;
extern const struct file_operations ramfs_dir_operations;

/* open.c: the checks open makes on the inode it found, before the file exists. */
int may_open(struct inode *inode, int flags);

/*
 * mount.c: put root (the root of a tree, root->i_sb) in the place of the
 * directory at path, at boot; 0 or -errno (ENOENT, ENOTDIR, EBUSY: the
 * tree is mounted already). follow_mount swaps a looked-up inode for what
 * is mounted on it (consumes the reference, returns one); vfs_ns_mutex
 * held for both tests.
 */
int vfs_mount(const char *path, struct inode *root);
struct inode *follow_mount(struct inode *inode);
bool is_mountpoint(struct inode *inode);
/*
 * d_path.c: the absolute path of directory dir (NULL: the root) into buf;
 * its length, -ENOENT (removed or unreachable), -ERANGE. vfs_ns_mutex held.
 */
long dir_path_locked(struct inode *dir, char *buf, size_t size);
/* The directory root is mounted on, or NULL (vfs_ns_mutex held). */
struct inode *mountpoint_of(struct inode *root);

/*
 * super.c: the references on a tree's inodes (igrab and iput call these);
 * the put that leaves a detached tree unreferenced frees it (kill_sb).
 * free_super frees the structure itself (kill_sb's last step).
 */
void sb_get_ref(struct super_block *sb);
void sb_put_ref(struct super_block *sb);
void free_super(struct super_block *sb);
extern const struct file_system_type tmpfs_fs_type;

/* /sys/devices/system/{node,cpu} (fs/sysfs_node.c), built by sysfs_init. */
struct pseudo_node;
int sysfs_node_init(struct pseudo_node *root);
/*
 * Linux's two ways to print a set of ids (fs/sysfs_node.c), each ending
 * in a newline: a list, "0-2,5" ("%*pbl"), and a hex mask over bits ids,
 * 32 a group with commas between ("%*pb": "c", "00000001,ffffffff").
 */
ssize_t show_id_list(char *buf, size_t size, u64 mask);
ssize_t show_id_mask(char *buf, size_t size, u64 mask, int bits);
/* /proc/self/status's file (fs/proc_status.c), made by procfs_init. */
struct pseudo_ops;
extern const struct pseudo_ops proc_status_ops;
/* /proc/<pid> (fs/proc_pid.c): its files' ops, the pid a file is about (0: the reader). */
struct pseudo_file;
struct task;
extern const struct pseudo_ops proc_stat_ops, proc_statm_ops, proc_cmdline_ops, proc_comm_ops;
int proc_pid_of(const struct pseudo_file *pf);
/* "R (running)", "S (sleeping)", ... as status shows it; stat shows the letter. */
const char *proc_task_state(const struct task *t);
/* /proc/loadavg, uptime, stat, cpuinfo (fs/proc_sys.c). */
extern const struct pseudo_ops proc_loadavg_ops, proc_uptime_ops, proc_stat_sys_ops,
	proc_cpuinfo_ops;
/* Make /proc list and look up /proc/<pid>, each a copy of self's files for that pid. */
void proc_pid_dirs_init(struct pseudo_node *root, struct pseudo_node *self);

/*
 * pipe.c, for vmsplice (splice.c): a pipe holds PIPE_DEF_BUFFERS buffers of
 * up to a page each (Linux's default, 64 KiB). get_pipe_info: the pipe of a
 * pipe's file, NULL for any other file.
 */
#define PIPE_DEF_BUFFERS	16
struct pipe;
struct page;
struct pipe *get_pipe_info(struct file *f);
ssize_t pipe_read_bytes(struct pipe *p, void *buf, size_t count, bool nonblock,
			int (*accept)(void *arg, const void *buf, size_t n), void *arg);
long pipe_wait_for_space(struct pipe *p, bool nonblock);
long pipe_add_user_pages(struct pipe *p, struct page **pages, const unsigned int *off,
			 const unsigned int *len, unsigned int nr);

#endif
