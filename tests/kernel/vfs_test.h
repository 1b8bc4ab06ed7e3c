/* Helpers shared by the files of the vfs suite (tests/kernel/vfs*_test.c). */
#ifndef TESTS_VFS_TEST_H
#define TESTS_VFS_TEST_H

#include <quire/ktest.h>
#include <quire/fs.h>
#include <quire/numa.h>

/* A fresh, empty directory /ktest-<name> (removed first if left over); referenced. */
struct inode *vt_tmpdir(const char *name);
/* Remove path and everything under it (relative to cwd). */
void vt_rm_rf(struct inode *cwd, const char *path);
/* Create (or truncate) path with len bytes of buf; 0 or -errno. */
int vt_write_file(struct inode *cwd, const char *path, const void *buf, size_t len);
/* Drop a tmpdir made by vt_tmpdir. */
void vt_done(struct inode *dir, const char *name);

/* Free pages per node, after giving the slab caches' spare pages back. */
struct vt_mem {
	unsigned long free[MAX_NUMNODES];
	long inodes;
	long radix_nodes;
};
void vt_mem_snapshot(struct vt_mem *m);
/* Checks that every node's free count, the inode count and the tree nodes are back. */
void vt_mem_expect_same(struct ktest *t, const struct vt_mem *before);

/* Cases in other files of the suite. */
void pagecache_three_pages(struct ktest *t);
void pagecache_truncate_and_holes(struct ktest *t);
void pagecache_far_offsets(struct ktest *t);
void pagecache_folio_outlives_file(struct ktest *t);
void dev_null_zero(struct ktest *t);
void console_ioctls(struct ktest *t);
void console_read_canonical(struct ktest *t);
void console_write_and_raw(struct ktest *t);
void initrd_unpacked(struct ktest *t);
void initrd_unpack_archive(struct ktest *t);

#endif
