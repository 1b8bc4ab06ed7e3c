/*
 * open(2) flags, lseek whence values and *at() flags with Linux x86-64's
 * values (include/uapi/asm-generic/fcntl.h, include/uapi/linux/fcntl.h).
 */
#ifndef QUIRE_UAPI_FCNTL_H
#define QUIRE_UAPI_FCNTL_H

#define O_ACCMODE	00000003
#define O_RDONLY	00000000
#define O_WRONLY	00000001
#define O_RDWR		00000002
#define O_CREAT		00000100
#define O_EXCL		00000200
#define O_NOCTTY	00000400
#define O_TRUNC		00001000
#define O_APPEND	00002000
#define O_NONBLOCK	00004000
#define O_DSYNC		00010000
#define O_LARGEFILE	00100000
#define O_DIRECTORY	00200000
#define O_NOFOLLOW	00400000
#define O_NOATIME	01000000
#define O_CLOEXEC	02000000
#define O_PATH		010000000
#define __O_TMPFILE	020000000
#define O_TMPFILE	(__O_TMPFILE | O_DIRECTORY)	/* an unnamed file in a directory */

#define SEEK_SET	0
#define SEEK_CUR	1
#define SEEK_END	2
#define SEEK_DATA	3
#define SEEK_HOLE	4

#define AT_FDCWD		(-100)
#define AT_SYMLINK_NOFOLLOW	0x100
#define AT_REMOVEDIR		0x200
#define AT_EMPTY_PATH		0x1000

#define PATH_MAX	4096	/* bytes in a path, with its NUL */
#define NAME_MAX	255	/* bytes in one component */
#define MAXSYMLINKS	40	/* symlinks one lookup may follow */

#endif
