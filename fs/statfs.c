/*
 * statfs(2) and fstatfs(2): what Linux 6.12 reports for the file systems
 * Quire has. Every tree of regular files is RAM only and unlimited, so it
 * answers as an unlimited tmpfs does (TMPFS_MAGIC, blocks and inodes 0):
 * the root (Linux's rootfs is a tmpfs when booted from an initramfs, as
 * the selftests' machine is), mounted tmpfs trees and files in no tree
 * (memfd_create, O_TMPFILE outside a tree). Pipes answer PIPEFS_MAGIC,
 * /proc, /sys and debugfs their own magic, as Linux's simple_statfs does.
 */
#include <quire/fs.h>
#include <quire/mm.h>
#include <quire/string.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/uapi/statfs.h>

#define STATFS_NAME_MAX	255

static long magic_of(const struct inode *inode)
{
	const struct super_block *sb = inode->i_sb;
	static const struct {
		const char *name;
		long magic;
	} types[] = {
		{ "rootfs", TMPFS_MAGIC }, { "tmpfs", TMPFS_MAGIC }, { "proc", PROC_SUPER_MAGIC },
		{ "sysfs", SYSFS_MAGIC }, { "debugfs", DEBUGFS_MAGIC },
	};

	if (!sb) {
		if (S_ISFIFO(inode->i_mode))
			return PIPEFS_MAGIC;
		return S_ISREG(inode->i_mode) ? TMPFS_MAGIC : ANON_INODE_FS_MAGIC;
	}
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (!strcmp(sb->s_type->name, types[i].name))
			return types[i].magic;
	pr_warn("statfs: no magic number known for file system type %s: reported as tmpfs\n",
		sb->s_type->name);
	return TMPFS_MAGIC;
}

int vfs_statfs(struct inode *inode, struct statfs *st)
{
	const struct super_block *sb = inode->i_sb;

	memset(st, 0, sizeof(*st));
	st->f_type = magic_of(inode);
	st->f_bsize = PAGE_SIZE;
	st->f_frsize = PAGE_SIZE;
	st->f_namelen = STATFS_NAME_MAX;
	st->f_flags = ST_VALID;
	if (sb) {
		st->f_flags |= (long)(sb->s_mnt_flags & (MS_NOSUID | MS_NODEV | MS_NOEXEC));
		st->f_fsid.val[0] = (int)sb->s_dev;
	}
	return 0;
}
