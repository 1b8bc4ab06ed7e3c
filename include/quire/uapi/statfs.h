/*
 * struct statfs as Linux's statfs(2) and fstatfs(2) fill it on x86-64
 * (120 bytes), the magic numbers of the file systems Quire has, and the
 * ST_* bits of f_flags.
 */
#ifndef QUIRE_UAPI_STATFS_H
#define QUIRE_UAPI_STATFS_H

#include <quire/types.h>

struct statfs {
	long f_type;		/* the file system's magic number */
	long f_bsize;		/* block size */
	u64 f_blocks;		/* blocks in all (0: no limit, as an unlimited tmpfs) */
	u64 f_bfree;
	u64 f_bavail;
	u64 f_files;		/* inodes in all (0: no limit) */
	u64 f_ffree;
	struct {
		int val[2];
	} f_fsid;
	long f_namelen;		/* longest name */
	long f_frsize;		/* fragment size */
	long f_flags;		/* ST_* */
	long f_spare[4];
};

/* Linux's include/uapi/linux/magic.h values. */
#define TMPFS_MAGIC		0x01021994
#define PROC_SUPER_MAGIC	0x9fa0
#define SYSFS_MAGIC		0x62656572
#define DEBUGFS_MAGIC		0x64626720
#define PIPEFS_MAGIC		0x50495045
#define ANON_INODE_FS_MAGIC	0x09041934

#define ST_RDONLY	0x0001
#define ST_NOSUID	0x0002
#define ST_NODEV	0x0004
#define ST_NOEXEC	0x0008
#define ST_VALID	0x0020	/* f_flags is filled in */

_Static_assert(sizeof(struct statfs) == 120, "Linux's x86-64 struct statfs");

#endif
