/*
 * The vfs suite: path lookup and its errno cases, open flags, data through
 * read/write/lseek/truncate, directories and getdents64, stat, symlinks,
 * file references. The page cache, devices and the initrd have their own
 * files (vfs_pagecache_test.c, vfs_dev_test.c); the suite is declared here.
 * Each case works in a directory of its own under /, removed at the end.
 */
#include <quire/fs.h>
#include <quire/pagemap.h>
#include <quire/mm.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include "vfs_test.h"

static unsigned long ino_of(struct inode *cwd, const char *path, int flags)
{
	struct inode *inode;
	unsigned long ino;

	if (vfs_lookup_at(cwd, path, flags, &inode))
		return 0;
	ino = inode->i_ino;
	iput(inode);
	return ino;
}

static int open_err(struct inode *cwd, const char *path, int flags)
{
	struct file *f;
	int err = vfs_open(cwd, path, flags, 0644, &f);

	if (!err)
		fput(f);
	return err;
}

/* ---- lookup ---- */

static void lookup_paths(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("lookup"), *in;
	unsigned long null_ino = ino_of(NULL, "/dev/null", 0);

	KASSERT_TRUE(t, dir != NULL);
	KEXPECT_NE(t, null_ino, 0);
	KEXPECT_EQ(t, ino_of(NULL, "/dev//null", 0), null_ino);
	KEXPECT_EQ(t, ino_of(NULL, "//dev/./../dev/null", 0), null_ino);
	KEXPECT_EQ(t, ino_of(NULL, "/..", 0), vfs_root->i_ino);
	KEXPECT_EQ(t, ino_of(NULL, "///", 0), vfs_root->i_ino);
	KEXPECT_EQ(t, ino_of(NULL, "dev/null", 0), null_ino);	/* NULL cwd: the root */
	KEXPECT_EQ(t, ino_of(dir, ".", 0), dir->i_ino);
	KEXPECT_EQ(t, ino_of(dir, "..", 0), vfs_root->i_ino);
	KEXPECT_EQ(t, ino_of(dir, "../dev/null", 0), null_ino);
	KEXPECT_EQ(t, vfs_mkdir(dir, "a", 0755), 0);
	KEXPECT_EQ(t, vfs_mkdir(dir, "a/b/", 0755), 0);
	KEXPECT_EQ(t, ino_of(dir, "a/b/../b/./", 0), ino_of(dir, "a//b", 0));
	KEXPECT_EQ(t, ino_of(dir, "a/b/../..", 0), dir->i_ino);
	KEXPECT_EQ(t, vfs_lookup(dir, "a/b", &in), 0);
	KEXPECT_EQ(t, ino_of(in, "../../..", 0), vfs_root->i_ino);
	iput(in);
	vt_done(dir, "lookup");
}

static void lookup_errors(struct ktest *t)
{
	static char path[PATH_MAX + 8];
	struct inode *dir = vt_tmpdir("lookuperr"), *in;

	KASSERT_TRUE(t, dir != NULL);
	KEXPECT_EQ(t, vt_write_file(dir, "f", "x", 1), 0);
	KEXPECT_EQ(t, vfs_lookup(dir, "", &in), -ENOENT);
	KEXPECT_EQ(t, vfs_lookup(dir, "nope", &in), -ENOENT);
	KEXPECT_EQ(t, vfs_lookup(dir, "nope/x", &in), -ENOENT);
	KEXPECT_EQ(t, vfs_lookup(dir, "f/x", &in), -ENOTDIR);
	KEXPECT_EQ(t, vfs_lookup(dir, "f/", &in), -ENOTDIR);
	KEXPECT_EQ(t, vfs_lookup(dir, "f/.", &in), -ENOTDIR);
	/* NAME_MAX bytes is a name that may exist; one more is too long. */
	memset(path, 'n', NAME_MAX);
	path[NAME_MAX] = '\0';
	KEXPECT_EQ(t, vfs_lookup(dir, path, &in), -ENOENT);
	KEXPECT_EQ(t, vt_write_file(dir, path, "y", 1), 0);
	KEXPECT_EQ(t, vfs_unlink(dir, path), 0);
	path[NAME_MAX] = 'n';
	path[NAME_MAX + 1] = '\0';
	KEXPECT_EQ(t, vfs_lookup(dir, path, &in), -ENAMETOOLONG);
	KEXPECT_EQ(t, vfs_mkdir(dir, path, 0755), -ENAMETOOLONG);
	/* A path of PATH_MAX bytes (no room for its NUL) is too long; one less is fine. */
	memset(path, '/', PATH_MAX);
	path[PATH_MAX] = '\0';
	KEXPECT_EQ(t, vfs_lookup(dir, path, &in), -ENAMETOOLONG);
	path[PATH_MAX - 1] = '\0';
	KEXPECT_EQ(t, vfs_lookup(dir, path, &in), 0);
	iput(in);
	vt_done(dir, "lookuperr");
}

static void open_errno(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("open");

	KASSERT_TRUE(t, dir != NULL);
	KEXPECT_EQ(t, vt_write_file(dir, "f", "data", 4), 0);
	KEXPECT_EQ(t, vfs_mkdir(dir, "d", 0755), 0);
	KEXPECT_EQ(t, open_err(dir, "missing", O_RDONLY), -ENOENT);
	KEXPECT_EQ(t, open_err(dir, "nodir/new", O_RDWR | O_CREAT), -ENOENT);
	KEXPECT_EQ(t, open_err(dir, "f", O_CREAT | O_EXCL | O_WRONLY), -EEXIST);
	KEXPECT_EQ(t, open_err(dir, "d", O_CREAT | O_EXCL | O_WRONLY), -EEXIST);
	KEXPECT_EQ(t, open_err(dir, "f", O_RDONLY | O_DIRECTORY), -ENOTDIR);
	KEXPECT_EQ(t, open_err(dir, "f/", O_RDONLY), -ENOTDIR);
	KEXPECT_EQ(t, open_err(dir, "d", O_WRONLY), -EISDIR);
	KEXPECT_EQ(t, open_err(dir, "d", O_RDWR), -EISDIR);
	KEXPECT_EQ(t, open_err(dir, "d", O_RDONLY | O_TRUNC), -EISDIR);
	KEXPECT_EQ(t, open_err(dir, "d", O_RDONLY | O_CREAT), -EISDIR);
	KEXPECT_EQ(t, open_err(dir, "new/", O_RDWR | O_CREAT), -EISDIR);
	KEXPECT_EQ(t, open_err(dir, "new", O_RDONLY | O_CREAT | O_DIRECTORY), -EINVAL);
	KEXPECT_EQ(t, open_err(dir, "d", O_RDONLY | O_DIRECTORY), 0);
	KEXPECT_EQ(t, open_err(dir, "d/", O_RDONLY), 0);
	KEXPECT_EQ(t, open_err(dir, ".", O_RDONLY), 0);
	KEXPECT_EQ(t, open_err(dir, "/", O_RDONLY | O_CREAT), -EISDIR);
	KEXPECT_EQ(t, open_err(dir, "new", O_RDONLY | O_CREAT | O_EXCL), 0);
	KEXPECT_EQ(t, open_err(dir, "/dev/sda", O_RDONLY), -ENOENT);
	vt_done(dir, "open");
}

static void read_write_errno(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("rwerr");
	struct file *ro, *wo, *d;
	char buf[8];

	KASSERT_TRUE(t, dir != NULL);
	KEXPECT_EQ(t, vt_write_file(dir, "f", "abcdef", 6), 0);
	KASSERT_EQ(t, vfs_open(dir, "f", O_RDONLY, 0, &ro), 0);
	KASSERT_EQ(t, vfs_open(dir, "f", O_WRONLY, 0, &wo), 0);
	KASSERT_EQ(t, vfs_open(dir, ".", O_RDONLY, 0, &d), 0);
	KEXPECT_EQ(t, vfs_write(ro, "x", 1, NULL), -EBADF);
	KEXPECT_EQ(t, vfs_read(wo, buf, 1, NULL), -EBADF);
	KEXPECT_EQ(t, vfs_read(d, buf, 1, NULL), -EISDIR);
	KEXPECT_EQ(t, vfs_write(d, buf, 1, NULL), -EBADF);
	KEXPECT_EQ(t, vfs_getdents64(ro, buf, sizeof(buf)), -ENOTDIR);
	KEXPECT_EQ(t, vfs_ftruncate(ro, 0), -EINVAL);
	KEXPECT_EQ(t, vfs_ftruncate(wo, -1), -EINVAL);
	KEXPECT_EQ(t, vfs_llseek(ro, -1, SEEK_SET), -EINVAL);
	KEXPECT_EQ(t, vfs_llseek(ro, 0, 5), -EINVAL);
	KEXPECT_EQ(t, vfs_llseek(ro, 1, SEEK_END), 7);	/* past the end is fine */
	KEXPECT_EQ(t, vfs_read(ro, buf, sizeof(buf), NULL), 0);
	KEXPECT_EQ(t, vfs_llseek(d, 0, SEEK_END), -EINVAL);
	KEXPECT_EQ(t, vfs_truncate(dir, 0), -EISDIR);
	fput(ro);
	fput(wo);
	fput(d);
	vt_done(dir, "rwerr");
}

/* ---- data ---- */

static u8 pattern(size_t i)
{
	return (u8)(i * 131 + (i >> 12) * 7 + 1);
}

static void data_across_pages(struct ktest *t)
{
	static u8 wbuf[3 * 4096 + 300], rbuf[sizeof(wbuf)];
	struct inode *dir = vt_tmpdir("data");
	struct file *f;
	struct stat st;
	loff_t pos;

	KASSERT_TRUE(t, dir != NULL);
	for (size_t i = 0; i < sizeof(wbuf); i++)
		wbuf[i] = pattern(i);
	KASSERT_EQ(t, vfs_open(dir, "f", O_RDWR | O_CREAT, 0600, &f), 0);
	/* Written in pieces that straddle page boundaries, from offset 100. */
	KEXPECT_EQ(t, vfs_llseek(f, 100, SEEK_SET), 100);
	KEXPECT_EQ(t, vfs_write(f, wbuf, 4000, NULL), 4000);
	KEXPECT_EQ(t, vfs_write(f, wbuf + 4000, 5000, NULL), 5000);
	KEXPECT_EQ(t, vfs_write(f, wbuf + 9000, sizeof(wbuf) - 9000, NULL), sizeof(wbuf) - 9000);
	KEXPECT_EQ(t, vfs_llseek(f, 0, SEEK_CUR), 100 + sizeof(wbuf));
	KEXPECT_EQ(t, vfs_fstat(f, &st), 0);
	KEXPECT_EQ(t, st.st_size, 100 + sizeof(wbuf));
	/* The first 100 bytes were never written: zeroes. */
	pos = 0;
	KEXPECT_EQ(t, vfs_read(f, rbuf, 100, &pos), 100);
	KEXPECT_EQ(t, rbuf[0] | rbuf[50] | rbuf[99], 0);
	/* Read back in odd-sized chunks through the boundaries. */
	memset(rbuf, 0, sizeof(rbuf));
	for (size_t off = 0; off < sizeof(wbuf);) {
		ssize_t n = vfs_read(f, rbuf + off, min((size_t)777, sizeof(wbuf) - off), &pos);

		KASSERT_GT(t, n, 0);
		off += (size_t)n;
	}
	KEXPECT_EQ(t, memcmp(rbuf, wbuf, sizeof(wbuf)), 0);
	KEXPECT_EQ(t, vfs_read(f, rbuf, 10, &pos), 0);	/* at the end */
	/* Overwrite the middle of a page; the rest stays. */
	pos = 4096 + 10;
	KEXPECT_EQ(t, vfs_write(f, "QUIRE", 5, &pos), 5);
	pos = 4096 + 8;
	KEXPECT_EQ(t, vfs_read(f, rbuf, 9, &pos), 9);
	KEXPECT_EQ(t, rbuf[0], pattern(4096 + 8 - 100));
	KEXPECT_EQ(t, memcmp(rbuf + 2, "QUIRE", 5), 0);
	KEXPECT_EQ(t, rbuf[7], pattern(4096 + 15 - 100));
	fput(f);
	/* O_APPEND writes at the end whatever the position. */
	KASSERT_EQ(t, vfs_open(dir, "f", O_WRONLY | O_APPEND, 0, &f), 0);
	KEXPECT_EQ(t, vfs_write(f, "END", 3, NULL), 3);
	KEXPECT_EQ(t, f->f_pos, 100 + sizeof(wbuf) + 3);
	fput(f);
	/* O_TRUNC empties it. */
	KASSERT_EQ(t, vfs_open(dir, "f", O_RDONLY | O_TRUNC, 0, &f), 0);
	KEXPECT_EQ(t, vfs_fstat(f, &st), 0);
	KEXPECT_EQ(t, st.st_size, 0);
	KEXPECT_EQ(t, st.st_blocks, 0);
	fput(f);
	vt_done(dir, "data");
}

static void unlinked_but_open(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("unlinked");
	long inodes = READ_ONCE(nr_inodes);
	struct file *f, *g;
	struct stat st;
	char buf[8] = { 0 };
	loff_t pos = 0;

	KASSERT_TRUE(t, dir != NULL);
	KASSERT_EQ(t, vfs_open(dir, "f", O_RDWR | O_CREAT, 0600, &f), 0);
	KEXPECT_EQ(t, READ_ONCE(nr_inodes), inodes + 1);
	g = get_file(f);
	KEXPECT_EQ(t, vfs_unlink(dir, "f"), 0);
	KEXPECT_EQ(t, vfs_unlink(dir, "f"), -ENOENT);
	KEXPECT_EQ(t, vfs_write(f, "alive", 5, &pos), 5);
	pos = 0;
	KEXPECT_EQ(t, vfs_read(g, buf, sizeof(buf), &pos), 5);
	KEXPECT_STREQ(t, buf, "alive");
	KEXPECT_EQ(t, vfs_fstat(f, &st), 0);
	KEXPECT_EQ(t, st.st_nlink, 0);
	fput(f);
	KEXPECT_EQ(t, READ_ONCE(nr_inodes), inodes + 1);	/* g still holds it */
	fput(g);
	KEXPECT_EQ(t, READ_ONCE(nr_inodes), inodes);
	vt_done(dir, "unlinked");
}

/* ---- directories ---- */

static void mkdir_rmdir_unlink(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("dirs");
	struct stat st;

	KASSERT_TRUE(t, dir != NULL);
	KEXPECT_EQ(t, vfs_mkdir(dir, "a", 0750), 0);
	KEXPECT_EQ(t, vfs_mkdir(dir, "a", 0750), -EEXIST);
	KEXPECT_EQ(t, vfs_mkdir(dir, "a/", 0750), -EEXIST);
	KEXPECT_EQ(t, vfs_mkdir(dir, ".", 0750), -EEXIST);
	KEXPECT_EQ(t, vfs_mkdir(dir, "/", 0750), -EEXIST);
	KEXPECT_EQ(t, vfs_mkdir(dir, "x/y", 0750), -ENOENT);
	KEXPECT_EQ(t, vfs_mkdir(dir, "a/b", 0750), 0);
	KEXPECT_EQ(t, vfs_mkdir(dir, "a/c", 0750), 0);
	KEXPECT_EQ(t, vt_write_file(dir, "a/f", "1", 1), 0);
	KEXPECT_EQ(t, vfs_mkdir(dir, "a/f/g", 0750), -ENOTDIR);
	KEXPECT_EQ(t, vfs_mknod(dir, "a/n/", S_IFREG | 0600, 0), -ENOENT);
	KEXPECT_EQ(t, vfs_mknod(dir, "a/f/", S_IFREG | 0600, 0), -EEXIST);
	KEXPECT_EQ(t, vfs_mknod(dir, "a/n", S_IFDIR | 0600, 0), -EPERM);
	/* Directory link counts: 2 + subdirectories. */
	KEXPECT_EQ(t, vfs_stat(dir, "a", 0, &st), 0);
	KEXPECT_EQ(t, st.st_nlink, 4);
	KEXPECT_EQ(t, st.st_mode, S_IFDIR | 0750);
	KEXPECT_EQ(t, vfs_rmdir(dir, "a"), -ENOTEMPTY);
	KEXPECT_EQ(t, vfs_rmdir(dir, "a/f"), -ENOTDIR);
	KEXPECT_EQ(t, vfs_rmdir(dir, "a/."), -EINVAL);
	KEXPECT_EQ(t, vfs_rmdir(dir, "a/b/.."), -ENOTEMPTY);
	KEXPECT_EQ(t, vfs_rmdir(dir, "/"), -EBUSY);
	KEXPECT_EQ(t, vfs_rmdir(dir, "a/zz"), -ENOENT);
	KEXPECT_EQ(t, vfs_unlink(dir, "a/b"), -EISDIR);
	KEXPECT_EQ(t, vfs_unlink(dir, "a/f/"), -ENOTDIR);
	KEXPECT_EQ(t, vfs_unlink(dir, "a/b/"), -EISDIR);
	KEXPECT_EQ(t, vfs_unlink(dir, "."), -EISDIR);
	KEXPECT_EQ(t, vfs_unlink(dir, "a/f"), 0);
	KEXPECT_EQ(t, vfs_rmdir(dir, "a/b/"), 0);
	KEXPECT_EQ(t, vfs_stat(dir, "a", 0, &st), 0);
	KEXPECT_EQ(t, st.st_nlink, 3);
	KEXPECT_EQ(t, vfs_rmdir(dir, "a/c"), 0);
	KEXPECT_EQ(t, vfs_rmdir(dir, "a"), 0);
	KEXPECT_EQ(t, vfs_stat(dir, ".", 0, &st), 0);
	KEXPECT_EQ(t, st.st_nlink, 2);
	vt_done(dir, "dirs");
}

static void removed_cwd(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("deadcwd"), *cwd, *in;
	struct file *f;
	char buf[64];

	KASSERT_TRUE(t, dir != NULL);
	KEXPECT_EQ(t, vfs_mkdir(dir, "d", 0755), 0);
	KASSERT_EQ(t, vfs_lookup(dir, "d", &cwd), 0);
	KASSERT_EQ(t, vfs_open(cwd, ".", O_RDONLY, 0, &f), 0);
	KEXPECT_EQ(t, vfs_rmdir(dir, "d"), 0);
	/* Linux: nothing can be created in, or found from, a removed directory. */
	KEXPECT_EQ(t, open_err(cwd, "new", O_RDWR | O_CREAT), -ENOENT);
	KEXPECT_EQ(t, vfs_mkdir(cwd, "sub", 0755), -ENOENT);
	KEXPECT_EQ(t, vfs_lookup(cwd, "x", &in), -ENOENT);
	KEXPECT_EQ(t, vfs_lookup(cwd, ".", &in), 0);
	iput(in);
	KEXPECT_EQ(t, vfs_lookup(cwd, "..", &in), 0);	/* still the old parent */
	KEXPECT_PTR_EQ(t, in, dir);
	iput(in);
	KEXPECT_EQ(t, vfs_getdents64(f, buf, sizeof(buf)), -ENOENT);
	fput(f);
	iput(cwd);
	vt_done(dir, "deadcwd");
}

/* Collect "name/type " for each entry of a listing, in order. */
static ssize_t list(struct file *f, size_t bufsize, char *out, size_t outsize)
{
	char buf[256];
	ssize_t n, total = 0;

	out[0] = '\0';
	while ((n = vfs_getdents64(f, buf, bufsize)) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);
			size_t len = strlen(out);

			snprintf(out + len, outsize - len, "%s/%u ", d->d_name, d->d_type);
			off += d->d_reclen;
			total++;
		}
	}
	return n < 0 ? n : total;
}

static void getdents64_lists(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("getdents");
	char out[256], buf[64];
	struct linux_dirent64 *d = (void *)buf;
	struct file *f;
	loff_t resume;

	KASSERT_TRUE(t, dir != NULL);
	KEXPECT_EQ(t, vt_write_file(dir, "alpha", "", 0), 0);
	KEXPECT_EQ(t, vfs_mkdir(dir, "beta", 0755), 0);
	KEXPECT_EQ(t, vfs_symlink(dir, "alpha", "gamma"), 0);
	KEXPECT_EQ(t, vfs_mknod(dir, "delta", S_IFCHR | 0600, MKDEV(1, 3)), 0);
	KASSERT_EQ(t, vfs_open(dir, ".", O_RDONLY | O_DIRECTORY, 0, &f), 0);
	KEXPECT_EQ(t, list(f, sizeof(buf), out, sizeof(out)), 6);
	KEXPECT_STREQ(t, out, "./4 ../4 alpha/8 beta/4 gamma/10 delta/2 ");
	/* A buffer too small for one record is EINVAL; one record per call works. */
	KEXPECT_EQ(t, vfs_llseek(f, 0, SEEK_SET), 0);
	KEXPECT_EQ(t, vfs_getdents64(f, buf, 20), -EINVAL);
	KEXPECT_EQ(t, list(f, 32, out, sizeof(out)), 6);
	KEXPECT_STREQ(t, out, "./4 ../4 alpha/8 beta/4 gamma/10 delta/2 ");
	/* Record layout: 8-byte aligned, d_off the next position, NUL-terminated. */
	KEXPECT_EQ(t, vfs_llseek(f, 2, SEEK_SET), 2);
	KEXPECT_EQ(t, vfs_getdents64(f, buf, 32), 32);	/* 19 + "alpha" + NUL, rounded up */
	KEXPECT_STREQ(t, d->d_name, "alpha");
	KEXPECT_EQ(t, d->d_reclen, 32);
	KEXPECT_EQ(t, d->d_type, DT_REG);
	resume = d->d_off;
	/* Removing entries does not disturb a listing resumed at a d_off. */
	KEXPECT_EQ(t, vfs_rmdir(dir, "beta"), 0);
	KEXPECT_EQ(t, vfs_llseek(f, resume, SEEK_SET), resume);
	KEXPECT_EQ(t, list(f, sizeof(buf), out, sizeof(out)), 2);
	KEXPECT_STREQ(t, out, "gamma/10 delta/2 ");
	KEXPECT_EQ(t, vfs_getdents64(f, buf, sizeof(buf)), 0);
	fput(f);
	vt_done(dir, "getdents");
}

/* ---- stat ---- */

static void stat_fields(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("stat");
	struct stat st, st2;
	struct timespec64 before;

	KASSERT_TRUE(t, dir != NULL);
	/* The x86-64 layout, as glibc and musl read it. */
	KEXPECT_EQ(t, offsetof(struct stat, st_mode), 24);
	KEXPECT_EQ(t, offsetof(struct stat, st_rdev), 40);
	KEXPECT_EQ(t, offsetof(struct stat, st_size), 48);
	KEXPECT_EQ(t, offsetof(struct stat, st_blocks), 64);
	KEXPECT_EQ(t, offsetof(struct stat, st_mtime), 88);
	before = current_time();
	KEXPECT_EQ(t, vt_write_file(dir, "f", "hello", 5), 0);
	KEXPECT_EQ(t, vfs_stat(dir, "f", 0, &st), 0);
	KEXPECT_EQ(t, st.st_mode, S_IFREG | 0644);
	KEXPECT_EQ(t, st.st_size, 5);
	KEXPECT_EQ(t, st.st_nlink, 1);
	KEXPECT_EQ(t, st.st_blksize, 4096);
	KEXPECT_EQ(t, st.st_blocks, 8);
	KEXPECT_EQ(t, st.st_uid, 0);
	KEXPECT_EQ(t, st.st_ino, ino_of(dir, "f", 0));
	KEXPECT_GE(t, st.st_mtime, (u64)before.tv_sec);
	KEXPECT_EQ(t, vfs_stat(NULL, "/dev/null", 0, &st2), 0);
	KEXPECT_EQ(t, st2.st_mode, S_IFCHR | 0666);
	KEXPECT_EQ(t, st2.st_rdev, 0x103);	/* makedev(1, 3) */
	KEXPECT_EQ(t, st2.st_dev, st.st_dev);
	KEXPECT_EQ(t, new_encode_dev(MKDEV(259, 300)), 0x11032cULL);
	KEXPECT_EQ(t, vfs_stat(NULL, "/", 0, &st2), 0);
	KEXPECT_EQ(t, st2.st_mode & S_IFMT, S_IFDIR);
	KEXPECT_EQ(t, st2.st_ino, vfs_root->i_ino);
	KEXPECT_EQ(t, vfs_stat(NULL, "/tmp", 0, &st2), 0);
	KEXPECT_EQ(t, st2.st_mode, S_IFDIR | 01777);
	KEXPECT_EQ(t, vfs_stat(dir, "nope", 0, &st2), -ENOENT);
	vt_done(dir, "stat");
}

/* ---- symlinks ---- */

static void symlinks(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("symlink"), *in;
	struct stat st;
	char buf[32] = { 0 };
	struct file *f;

	KASSERT_TRUE(t, dir != NULL);
	KEXPECT_EQ(t, vt_write_file(dir, "target", "T", 1), 0);
	KEXPECT_EQ(t, vfs_mkdir(dir, "d", 0755), 0);
	KEXPECT_EQ(t, vfs_symlink(dir, "target", "link"), 0);
	KEXPECT_EQ(t, vfs_symlink(dir, "../d", "d/up"), 0);
	KEXPECT_EQ(t, vfs_symlink(dir, "loop2", "loop1"), 0);
	KEXPECT_EQ(t, vfs_symlink(dir, "loop1", "loop2"), 0);
	KEXPECT_EQ(t, vfs_symlink(dir, "missing", "dangling"), 0);
	KEXPECT_EQ(t, vfs_symlink(dir, "x", "link"), -EEXIST);
	KEXPECT_EQ(t, vfs_symlink(dir, "", "empty"), -ENOENT);
	KEXPECT_EQ(t, ino_of(dir, "link", 0), ino_of(dir, "target", 0));
	KEXPECT_NE(t, ino_of(dir, "link", AT_SYMLINK_NOFOLLOW), ino_of(dir, "target", 0));
	KEXPECT_EQ(t, ino_of(dir, "d/up/up/up", 0), ino_of(dir, "d", 0));
	KEXPECT_EQ(t, vfs_stat(dir, "link", AT_SYMLINK_NOFOLLOW, &st), 0);
	KEXPECT_EQ(t, st.st_mode, S_IFLNK | 0777);
	KEXPECT_EQ(t, st.st_size, 6);
	KEXPECT_EQ(t, vfs_readlink(dir, "link", buf, sizeof(buf)), 6);
	KEXPECT_STREQ(t, buf, "target");
	KEXPECT_EQ(t, vfs_readlink(dir, "target", buf, sizeof(buf)), -EINVAL);
	KEXPECT_EQ(t, vfs_lookup(dir, "loop1", &in), -ELOOP);
	KEXPECT_EQ(t, vfs_lookup(dir, "loop1/x", &in), -ELOOP);
	KEXPECT_EQ(t, open_err(dir, "loop1", O_RDONLY), -ELOOP);
	KEXPECT_EQ(t, open_err(dir, "link", O_RDONLY | O_NOFOLLOW), -ELOOP);
	KEXPECT_EQ(t, open_err(dir, "link", O_RDWR | O_CREAT | O_EXCL), -EEXIST);
	KEXPECT_EQ(t, vfs_lookup(dir, "dangling", &in), -ENOENT);
	/* O_CREAT through a dangling link creates its target, as on Linux. */
	KEXPECT_EQ(t, open_err(dir, "dangling", O_WRONLY | O_CREAT), 0);
	KEXPECT_EQ(t, ino_of(dir, "missing", 0), ino_of(dir, "dangling", 0));
	KASSERT_EQ(t, vfs_open(dir, "link", O_RDONLY, 0, &f), 0);
	KEXPECT_EQ(t, vfs_read(f, buf, sizeof(buf), NULL), 1);
	KEXPECT_EQ(t, buf[0], 'T');
	fput(f);
	/* Unlinking a link leaves the target. */
	KEXPECT_EQ(t, vfs_unlink(dir, "link"), 0);
	KEXPECT_NE(t, ino_of(dir, "target", 0), 0);
	vt_done(dir, "symlink");
}

static void exec_permission(struct ktest *t)
{
	struct inode *dir = vt_tmpdir("perm"), *in;
	struct file *f;

	KASSERT_TRUE(t, dir != NULL);
	KASSERT_EQ(t, vfs_open(dir, "plain", O_WRONLY | O_CREAT, 0644, &f), 0);
	fput(f);
	KASSERT_EQ(t, vfs_open(dir, "prog", O_WRONLY | O_CREAT, 0755, &f), 0);
	fput(f);
	KASSERT_EQ(t, vfs_lookup(dir, "plain", &in), 0);
	KEXPECT_EQ(t, inode_permission(in, MAY_EXEC), -EACCES);
	KEXPECT_EQ(t, inode_permission(in, MAY_READ | MAY_WRITE), 0);
	iput(in);
	KASSERT_EQ(t, vfs_lookup(dir, "prog", &in), 0);
	KEXPECT_EQ(t, inode_permission(in, MAY_EXEC), 0);
	iput(in);
	KEXPECT_EQ(t, inode_permission(dir, MAY_EXEC), 0);
	vt_done(dir, "perm");
}

KTEST_SUITE(vfs,
	    KTEST_CASE(lookup_paths),
	    KTEST_CASE(lookup_errors),
	    KTEST_CASE(open_errno),
	    KTEST_CASE(read_write_errno),
	    KTEST_CASE(data_across_pages),
	    KTEST_CASE(unlinked_but_open),
	    KTEST_CASE(mkdir_rmdir_unlink),
	    KTEST_CASE(removed_cwd),
	    KTEST_CASE(getdents64_lists),
	    KTEST_CASE(stat_fields),
	    KTEST_CASE(symlinks),
	    KTEST_CASE(exec_permission),
	    KTEST_CASE(pagecache_three_pages),
	    KTEST_CASE(pagecache_truncate_and_holes),
	    KTEST_CASE(pagecache_far_offsets),
	    KTEST_CASE(pagecache_folio_outlives_file),
	    KTEST_CASE(dev_null_zero),
	    KTEST_CASE(console_ioctls),
	    KTEST_CASE(console_read_canonical),
	    KTEST_CASE(console_write_and_raw),
	    KTEST_CASE(initrd_unpacked),
	    KTEST_CASE(initrd_unpack_archive));
