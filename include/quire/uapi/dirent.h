/* getdents64(2): struct linux_dirent64 and the d_type values (Linux's). */
#ifndef QUIRE_UAPI_DIRENT_H
#define QUIRE_UAPI_DIRENT_H

#include <quire/types.h>

struct linux_dirent64 {
	u64 d_ino;
	s64 d_off;		/* position of the next entry (for lseek) */
	u16 d_reclen;		/* this record, 8-byte aligned */
	u8 d_type;
	char d_name[];		/* NUL-terminated */
};

#define DT_UNKNOWN	0
#define DT_FIFO		1
#define DT_CHR		2
#define DT_DIR		4
#define DT_BLK		6
#define DT_REG		8
#define DT_LNK		10
#define DT_SOCK		12

#endif
