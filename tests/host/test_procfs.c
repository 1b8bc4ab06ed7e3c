/*
 * Host tests of the synthetic file systems (fs/pseudofs.c, fs/mount.c,
 * fs/procfs.c, fs/sysfs.c) under ASan and UBSan: the trees mounted on the
 * host's root, the THP files read and written through the VFS, a show
 * file larger than the first buffer (grown and retried) read in every
 * chunk size, errors from show and store, writes cut at a page, and the
 * walk across the mount points. The kernel's procfs suite covers pagemap
 * and smaps (tests/kernel/procfs_test.c).
 */
#include "ktap.h"
#include "host_setup.h"
#include <quire/fs.h>
#include <quire/pseudofs.h>
#include <quire/huge_mm.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/kernel.h>

#define THP "/sys/kernel/mm/transparent_hugepage"
#define BIG_LEN	(3 * 4096 + 17)

static char last_store[8192];
static size_t last_store_len;
static int show_calls;

static void setup(void)
{
	host_setup(32, 0, HOST_ROOTFS | HOST_PSEUDOFS);
}

/* The whole file into buf (NUL-terminated), reading chunk bytes at a time. */
static ssize_t read_all(const char *path, char *buf, size_t size, size_t chunk)
{
	struct file *f;
	ssize_t n = 0, len = 0;
	int err = vfs_open(NULL, path, O_RDONLY, 0, &f);

	if (err)
		return err;
	while ((size_t)len + chunk < size && (n = vfs_read(f, buf + len, chunk, NULL)) > 0)
		len += n;
	buf[len] = '\0';
	fput(f);
	return n < 0 ? n : len;
}

static ssize_t write_str(const char *path, const char *s, size_t len)
{
	struct file *f;
	ssize_t n;
	int err = vfs_open(NULL, path, O_WRONLY | O_TRUNC, 0, &f);

	if (err)
		return err;
	n = vfs_write(f, s, len, NULL);
	fput(f);
	return n;
}

/* ---- files made by the test ---- */

static ssize_t big_show(struct pseudo_file *pf, char *buf, size_t size)
{
	size_t i;

	show_calls++;
	for (i = 0; i < BIG_LEN && i + 1 < size; i++)
		buf[i] = (char)('a' + i % 26);
	buf[i] = '\0';
	return (ssize_t)i;
}

static ssize_t failing_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return -EIO;
}

static int recording_store(struct pseudo_file *pf, const char *buf, size_t len)
{
	memcpy(last_store, buf, len + 1);	/* with its NUL: ASan checks there is one */
	last_store_len = len;
	return len && buf[0] == '!' ? -EINVAL : 0;
}

static const struct pseudo_ops big_ops = { .show = big_show };
static const struct pseudo_ops failing_ops = { .show = failing_show };
static const struct pseudo_ops store_only_ops = { .store = recording_store };

HOST_TEST(thp_files)
{
	char buf[256];
	enum thp_mode saved = thp_global_mode();

	setup();
	EXPECT_EQ(read_all(THP "/enabled", buf, sizeof(buf), 100), 23);
	EXPECT_STREQ(buf, "[always] madvise never\n");
	EXPECT_EQ(write_str(THP "/enabled", "never\n", 6), 6);
	EXPECT_EQ(thp_global_mode(), THP_NEVER);
	EXPECT_EQ(write_str(THP "/enabled", "nevermore", 9), -EINVAL);
	EXPECT_EQ(thp_global_mode(), THP_NEVER);
	thp_set_global_mode(saved);
	EXPECT_EQ(read_all(THP "/hugepages-32kB/enabled", buf, sizeof(buf), 1), 31);
	EXPECT_STREQ(buf, "always inherit madvise [never]\n");
	EXPECT_EQ(read_all(THP "/hugepages-32kB/stats/nr_anon", buf, sizeof(buf), 7), 2);
	EXPECT_STREQ(buf, "0\n");
	EXPECT_GE(read_all("/proc/vmstat", buf, sizeof(buf), 64), 100);
	EXPECT_TRUE(strstr(buf, "\nthp_fault_alloc 0\n") != NULL);
}

HOST_TEST(big_file_every_chunk_size)
{
	static char buf[BIG_LEN + 4096];
	static const size_t chunks[] = { 1, 7, 8, 4095, 4096, 4097, BIG_LEN, 4096 * 4 };

	setup();
	EXPECT_EQ(pseudo_create(proc_root, "big", 0444, &big_ops, NULL), 0);
	EXPECT_EQ(pseudo_create(proc_root, "big", 0444, &big_ops, NULL), -EEXIST);
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		int calls = show_calls;
		bool same = true;

		EXPECT_EQ(read_all("/proc/big", buf, sizeof(buf), chunks[c]), BIG_LEN);
		for (size_t i = 0; i < BIG_LEN; i++)
			same &= buf[i] == (char)('a' + i % 26);
		EXPECT_TRUE(same);
		/* 4 KiB, 8 KiB, 16 KiB: three tries, and one snapshot for the whole read */
		EXPECT_EQ(show_calls - calls, 3);
	}
}

HOST_TEST(errors_of_show_and_store)
{
	char buf[64], *page = malloc(5000);
	struct file *f;

	setup();
	EXPECT_EQ(pseudo_create(proc_root, "failing", 0444, &failing_ops, NULL), 0);
	EXPECT_EQ(pseudo_create(proc_root, "sink", 0200, &store_only_ops, NULL), 0);
	EXPECT_EQ(pseudo_create(proc_root, "nothing", 0444, &(struct pseudo_ops){ 0 }, NULL),
		  -EINVAL);
	EXPECT_EQ(read_all("/proc/failing", buf, sizeof(buf), 10), -EIO);
	EXPECT_EQ(vfs_open(NULL, "/proc/sink", O_RDONLY, 0, &f), -EACCES);
	EXPECT_EQ(write_str("/proc/sink", "hello", 5), 5);
	EXPECT_STREQ(last_store, "hello");
	EXPECT_EQ(write_str("/proc/sink", "!no", 3), -EINVAL);
	/* One write is one value, cut at a page less its NUL. */
	memset(page, 'x', 5000);
	EXPECT_EQ(write_str("/proc/sink", page, 5000), 4095);
	EXPECT_EQ(last_store_len, 4095);
	EXPECT_EQ(strlen(last_store), 4095);
	free(page);
}

HOST_TEST(mount_points)
{
	struct stat st, root;
	struct inode *dir;

	setup();
	EXPECT_EQ(vfs_stat(NULL, "/sys/kernel/../..", 0, &st), 0);
	EXPECT_EQ(vfs_stat(NULL, "/", 0, &root), 0);
	EXPECT_EQ(st.st_ino, root.st_ino);
	EXPECT_EQ(vfs_stat(NULL, "/proc", 0, &st), 0);
	EXPECT_EQ(st.st_ino, pseudo_inode(proc_root)->i_ino);
	EXPECT_EQ(vfs_rmdir(NULL, "/proc"), -EBUSY);
	EXPECT_EQ(vfs_rmdir(NULL, "/sys/kernel"), -EPERM);
	EXPECT_EQ(vfs_unlink(NULL, "/proc/vmstat"), -EPERM);
	EXPECT_EQ(vfs_mkdir(NULL, "/proc/x", 0755), -EPERM);
	EXPECT_EQ(vfs_open(NULL, "/proc/x", O_WRONLY | O_CREAT, 0644, &(struct file *){ 0 }),
		  -EACCES);
	EXPECT_EQ(vfs_lookup(NULL, "/sys/kernel/mm", &dir), 0);
	EXPECT_EQ(vfs_stat(dir, "transparent_hugepage/hugepages-2048kB/stats", 0, &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_stat(dir, "../../../tmp", 0, &st), 0);
	iput(dir);
	/* A kernel thread (here: no task at all) sees empty /proc/self files. */
	EXPECT_EQ(read_all("/proc/self/smaps", (char[64]){ 0 }, 64, 16), 0);
}

HOST_TEST_MAIN(procfs_host,
	       HOST_CASE(thp_files),
	       HOST_CASE(big_file_every_chunk_size),
	       HOST_CASE(errors_of_show_and_store),
	       HOST_CASE(mount_points));
