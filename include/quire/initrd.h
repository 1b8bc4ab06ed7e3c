/*
 * The initrd: a cpio "newc" archive (magic 070701, or 070702 with
 * checksums) handed over as a boot module and unpacked into the root
 * file system at boot. fs/cpio.c parses, fs/initramfs.c unpacks,
 * fs/initrd.c finds the module and gives its memory back. docs/vfs.md.
 */
#ifndef QUIRE_INITRD_H
#define QUIRE_INITRD_H

#include <quire/types.h>

struct inode;

#define CPIO_HEADER_SIZE	110

struct cpio_entry {
	size_t offset;		/* of the header, from the archive's start */
	const char *name;	/* NUL-terminated, inside the archive */
	u32 ino, mode, uid, gid, nlink, mtime;
	u32 devmajor, devminor, rdevmajor, rdevminor;
	const void *data;
	u32 filesize;
};

struct cpio_reader {
	const u8 *buf;
	size_t len;
	size_t pos;		/* the next header */
	bool in_archive;	/* between a header and its TRAILER!!! */
	const char *error;	/* why the archive is malformed */
	size_t err_offset;	/* where */
};

void cpio_init(struct cpio_reader *r, const void *buf, size_t len);
/*
 * The next entry: 1 with *e filled, 0 at the end of the archive (after
 * TRAILER!!! and any zero padding; further archives may follow it), or
 * -EINVAL with r->error and r->err_offset set. Never reads outside buf.
 */
int cpio_next(struct cpio_reader *r, struct cpio_entry *e);

struct initramfs_stats {
	unsigned long files, dirs, symlinks, nodes;
	u64 bytes;		/* regular file data */
	unsigned long skipped;	/* entries refused (each logged) */
};

/*
 * Unpack an archive into the tree under root (names are relative to it;
 * a leading "/" or "./" is dropped). 0, or -EINVAL for a malformed archive
 * (logged with its offset; what came before it stays unpacked).
 */
int unpack_to_rootfs(struct inode *root, const void *buf, size_t len,
		     struct initramfs_stats *st);

struct initrd_info {
	bool found;		/* a boot module was there */
	int result;		/* unpack_to_rootfs's */
	u64 start, end;		/* physical */
	unsigned long freed_pages;
	struct initramfs_stats stats;
};
extern struct initrd_info initrd_info;

/* Boot: unpack the initrd module into the root (vfs_init first). */
void initrd_unpack(void);

#endif
