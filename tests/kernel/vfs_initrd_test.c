/*
 * The vfs suite, the initrd: what the boot module held is in the root
 * (every /bin and /tests file a non-empty ELF executable, the module's
 * memory given back), and an archive built here unpacks into a scratch
 * directory with its types, modes, links and times, up to a malformed
 * entry, which stops it with a report.
 */
#include <quire/fs.h>
#include <quire/initrd.h>
#include <quire/printk.h>
#include <quire/slab.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include "vfs_test.h"

/* An ELF executable of some size: the check for each program of the initrd. */
static bool is_elf_program(struct ktest *t, struct inode *cwd, const char *path)
{
	struct inode *inode;
	struct stat st;
	char magic[4];
	struct file *f;
	bool ok;

	if (vfs_stat(cwd, path, 0, &st) || vfs_open(cwd, path, O_RDONLY, 0, &f)) {
		ktest_fail_msg(t, false, __FILE__, __LINE__, "cannot stat or open %s", path);
		return false;
	}
	ok = S_ISREG(st.st_mode) && st.st_size > 64 &&
	     vfs_read(f, magic, 4, NULL) == 4 && !memcmp(magic, "\177ELF", 4);
	inode = file_inode(f);
	ok &= inode_permission(inode, MAY_EXEC) == 0;
	fput(f);
	return ok;
}

void initrd_unpacked(struct ktest *t)
{
	static const char *const progs[] = {
		"/bin/init", "/bin/sh", "/bin/ls", "/bin/cat", "/bin/echo", "/bin/meminfo",
		"/tests/hello_ktap",
	};
	char buf[512], path[300];
	struct stat st;
	struct file *f;
	size_t size;
	void *data;
	ssize_t n;
	int seen = 0;

	if (!initrd_info.found)
		ktest_skip(t, "no initrd (boot with INITRD=build/initrd.cpio)");
	KEXPECT_EQ(t, initrd_info.result, 0);
	KEXPECT_EQ(t, initrd_info.stats.skipped, 0);
	KEXPECT_GE(t, initrd_info.stats.files, ARRAY_SIZE(progs));
	KEXPECT_GT(t, initrd_info.freed_pages, 0);
	KEXPECT_LE(t, initrd_info.freed_pages, (initrd_info.end - initrd_info.start) / 4096);
	for (size_t i = 0; i < ARRAY_SIZE(progs); i++)
		KEXPECT_TRUE(t, is_elf_program(t, NULL, progs[i]));
	/* Every file in /bin, whatever EXTRA_INITRD added. */
	KASSERT_EQ(t, vfs_open(NULL, "/bin", O_RDONLY | O_DIRECTORY, 0, &f), 0);
	while ((n = vfs_getdents64(f, buf, sizeof(buf))) > 0) {
		for (ssize_t off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);

			off += d->d_reclen;
			if (d->d_type != DT_REG)
				continue;
			snprintf(path, sizeof(path), "/bin/%s", d->d_name);
			KEXPECT_TRUE(t, is_elf_program(t, NULL, path));
			seen++;
		}
	}
	fput(f);
	KEXPECT_GE(t, seen, 6);
	/* exec's way in: the whole file in one buffer. */
	KASSERT_EQ(t, kernel_read_file(NULL, "/bin/sh", 4 << 20, &data, &size), 0);
	KEXPECT_EQ(t, vfs_stat(NULL, "/bin/sh", 0, &st), 0);
	KEXPECT_EQ(t, size, st.st_size);
	KEXPECT_EQ(t, memcmp(data, "\177ELF", 4), 0);
	kfree(data);
	KEXPECT_EQ(t, kernel_read_file(NULL, "/bin", 4 << 20, &data, &size), -EACCES);
	KEXPECT_EQ(t, kernel_read_file(NULL, "/bin/sh", 100, &data, &size), -EFBIG);
	KEXPECT_EQ(t, kernel_read_file(NULL, "/bin/nope", 100, &data, &size), -ENOENT);
}

/* Append one newc entry. */
static size_t add(u8 *buf, size_t len, const char *name, u32 mode, const char *data,
		  u32 size, u32 rdevmajor, u32 rdevminor)
{
	u32 namesize = (u32)strlen(name) + 1;

	len += (size_t)snprintf((char *)buf + len, 111,
				"070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
				1u, mode, 0u, 0u, 1u, 1234567u, size, 0u, 0u,
				rdevmajor, rdevminor, namesize, 0u);
	memcpy(buf + len, name, namesize);
	len = ALIGN_UP(len + namesize, 4);
	memcpy(buf + len, data, size);
	return ALIGN_UP(len + size, 4);
}

void initrd_unpack_archive(struct ktest *t)
{
	static u8 buf[2048];
	struct initramfs_stats st;
	struct inode *dir = vt_tmpdir("cpio");
	struct stat s;
	char target[16] = { 0 };
	size_t len = 0, good;
	u64 pos;

	KASSERT_TRUE(t, dir != NULL);
	memset(buf, 0, sizeof(buf));
	len = add(buf, len, ".", S_IFDIR | 0755, "", 0, 0, 0);
	len = add(buf, len, "./etc", S_IFDIR | 0700, "", 0, 0, 0);
	len = add(buf, len, "etc/motd", S_IFREG | 0640, "hello", 5, 0, 0);
	len = add(buf, len, "/deep/er/file", S_IFREG | 0755, "x", 1, 0, 0);
	len = add(buf, len, "etc/link", S_IFLNK | 0777, "motd", 4, 0, 0);
	len = add(buf, len, "null", S_IFCHR | 0600, "", 0, 1, 3);
	len = add(buf, len, "TRAILER!!!", 0, "", 0, 0, 0);
	good = len;
	KEXPECT_EQ(t, unpack_to_rootfs(dir, buf, len, &st), 0);
	KEXPECT_EQ(t, st.files, 2);
	KEXPECT_EQ(t, st.dirs, 1);
	KEXPECT_EQ(t, st.symlinks, 1);
	KEXPECT_EQ(t, st.nodes, 1);
	KEXPECT_EQ(t, st.bytes, 6);
	KEXPECT_EQ(t, vfs_stat(dir, "etc", 0, &s), 0);
	KEXPECT_EQ(t, s.st_mode, S_IFDIR | 0700);
	KEXPECT_EQ(t, vfs_stat(dir, "etc/link", 0, &s), 0);
	KEXPECT_EQ(t, s.st_mode, S_IFREG | 0640);
	KEXPECT_EQ(t, s.st_size, 5);
	KEXPECT_EQ(t, s.st_mtime, 1234567);
	KEXPECT_EQ(t, vfs_readlink(dir, "etc/link", target, sizeof(target)), 4);
	KEXPECT_STREQ(t, target, "motd");
	KEXPECT_EQ(t, vfs_stat(dir, "deep/er/file", 0, &s), 0);
	KEXPECT_EQ(t, s.st_mode, S_IFREG | 0755);
	KEXPECT_EQ(t, vfs_stat(dir, "null", 0, &s), 0);
	KEXPECT_EQ(t, s.st_rdev, 0x103);
	/* Unpacking again replaces the files' contents. */
	KEXPECT_EQ(t, unpack_to_rootfs(dir, buf, len, &st), 0);
	KEXPECT_EQ(t, st.files, 2);
	KEXPECT_EQ(t, st.skipped, 2);	/* the symlink and the node exist already */
	/* A second archive after the first, then a bad one: stops with its offset. */
	len = add(buf, good, "late", S_IFREG | 0600, "L", 1, 0, 0);
	memcpy(buf + len, "070799", 6);
	pos = printk_log_pos();
	KEXPECT_EQ(t, unpack_to_rootfs(dir, buf, len + 110, &st), -EINVAL);
	KEXPECT_EQ(t, st.files, 3);
	KEXPECT_TRUE(t, printk_log_contains(pos, "malformed archive at offset"));
	KEXPECT_TRUE(t, printk_log_contains(pos, "bad magic"));
	KEXPECT_EQ(t, vfs_stat(dir, "late", 0, &s), 0);
	vt_done(dir, "cpio");
}
