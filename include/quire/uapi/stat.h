/*
 * struct stat as Linux x86-64 lays it out for stat/fstat/newfstatat
 * (arch/x86/include/uapi/asm/stat.h), and the file type and permission
 * bits of st_mode. Shared by the VFS and the system calls.
 */
#ifndef QUIRE_UAPI_STAT_H
#define QUIRE_UAPI_STAT_H

#include <quire/types.h>

#define S_IFMT		0170000
#define S_IFSOCK	0140000
#define S_IFLNK		0120000
#define S_IFREG		0100000
#define S_IFBLK		0060000
#define S_IFDIR		0040000
#define S_IFCHR		0020000
#define S_IFIFO		0010000
#define S_ISUID		0004000
#define S_ISGID		0002000
#define S_ISVTX		0001000

#define S_ISLNK(m)	(((m) & S_IFMT) == S_IFLNK)
#define S_ISREG(m)	(((m) & S_IFMT) == S_IFREG)
#define S_ISDIR(m)	(((m) & S_IFMT) == S_IFDIR)
#define S_ISCHR(m)	(((m) & S_IFMT) == S_IFCHR)
#define S_ISBLK(m)	(((m) & S_IFMT) == S_IFBLK)
#define S_ISFIFO(m)	(((m) & S_IFMT) == S_IFIFO)
#define S_ISSOCK(m)	(((m) & S_IFMT) == S_IFSOCK)

#define S_IRWXU		00700
#define S_IRUSR		00400
#define S_IWUSR		00200
#define S_IXUSR		00100
#define S_IRWXG		00070
#define S_IXGRP		00010
#define S_IRWXO		00007
#define S_IXOTH		00001
#define S_IALLUGO	(S_ISUID | S_ISGID | S_ISVTX | S_IRWXU | S_IRWXG | S_IRWXO)

/* 144 bytes; the field order is x86-64's, not the generic one. */
struct stat {
	u64 st_dev;
	u64 st_ino;
	u64 st_nlink;
	u32 st_mode;
	u32 st_uid;
	u32 st_gid;
	u32 __pad0;
	u64 st_rdev;
	s64 st_size;
	s64 st_blksize;
	s64 st_blocks;		/* 512-byte blocks allocated */
	u64 st_atime;
	u64 st_atime_nsec;
	u64 st_mtime;
	u64 st_mtime_nsec;
	u64 st_ctime;
	u64 st_ctime_nsec;
	s64 __reserved[3];
};

_Static_assert(sizeof(struct stat) == 144, "struct stat is 144 bytes on x86-64");

#endif
