/*
 * The root file system: a ramfs with the directories and device nodes a
 * program expects before anything is unpacked into it, as Linux's
 * devtmpfs would give: /dev/console (5:1), /dev/null (1:3), /dev/zero
 * (1:5), /dev/random (1:8), /dev/urandom (1:9), /dev/tty (5:0), and /tmp; and the empty directories /proc and /sys, where
 * vfs_init mounts procfs and sysfs (fs/procfs.c, fs/sysfs.c). The nodes
 * exist whether or not a driver has registered their numbers (opening one
 * without a driver is ENXIO).
 */
#define pr_fmt(fmt) "vfs: " fmt
#include <quire/fs.h>
#include <quire/errno.h>
#include <quire/printk.h>

static const struct {
	const char *path;
	umode_t mode;
	unsigned int major, minor;
} nodes[] = {
	{ "/dev", S_IFDIR | 0755, 0, 0 },
	{ "/dev/console", S_IFCHR | 0600, 5, 1 },
	{ "/dev/null", S_IFCHR | 0666, 1, 3 },
	{ "/dev/zero", S_IFCHR | 0666, 1, 5 },
	{ "/dev/random", S_IFCHR | 0666, 1, 8 },
	{ "/dev/urandom", S_IFCHR | 0666, 1, 9 },
	{ "/dev/tty", S_IFCHR | 0666, 5, 0 },
	{ "/dev/hmm_dmirror0", S_IFCHR | 0600, HMM_DMIRROR_MAJOR, 0 },	/* drivers/hmm_dmirror.c */
	{ "/dev/hmm_dmirror1", S_IFCHR | 0600, HMM_DMIRROR_MAJOR, 1 },
	{ "/tmp", S_IFDIR | 01777, 0, 0 },
	{ "/proc", S_IFDIR | 0555, 0, 0 },
	{ "/sys", S_IFDIR | 0555, 0, 0 },
};

/* The root's tree: never mounted by name, never unmounted. */
static const struct file_system_type rootfs_fs_type = { .name = "rootfs" };

int init_rootfs(void)
{
	struct super_block *sb;

	if (vfs_root)
		return 0;
	sb = ramfs_new_sb(&rootfs_fs_type);
	if (!sb)
		return -ENOMEM;
	sb->s_dev = MKDEV(0, 1);	/* ramfs's anonymous device, as before mounts existed */
	sb->s_mounted = true;
	vfs_root = sb->s_root;
	for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
		int err = S_ISDIR(nodes[i].mode)
			? vfs_mkdir(NULL, nodes[i].path, nodes[i].mode)
			: vfs_mknod(NULL, nodes[i].path, nodes[i].mode,
				    MKDEV(nodes[i].major, nodes[i].minor));

		if (err) {
			pr_err("cannot create %s: error %d\n", nodes[i].path, err);
			return err;
		}
	}
	return 0;
}
