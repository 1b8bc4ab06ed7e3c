/*
 * mount(2) and umount2(2) from ring 3, written to run unchanged on Linux
 * as root: tmpfs mounts (a new empty tree each time, gone after umount,
 * busy while a file is open or a cwd is inside, lazily detached with
 * MNT_DETACH and freed once the last user is gone), proc unmounted and
 * mounted again, debugfs on /sys/kernel/debug, /proc/mounts, the errno
 * values, and debugfs's split_huge_pages splitting this process's THPs
 * (AnonHugePages, the per-size counters, the bytes kept). Run under init
 * as /tests/mount_ktap. Prints KTAP; exits 0 when every case passed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ktap.h"
#include "proc_files.h"

#define DIR_A	"/tmp/mount_ktap_a"
#define DIR_B	"/tmp/mount_ktap_b"
#define DEBUG	"/sys/kernel/debug"
#define SPLIT	DEBUG "/split_huge_pages"
#define THP	"/sys/kernel/mm/transparent_hugepage"
#define PAGE	4096UL
#define PMD	(2UL << 20)
#define BAD_PTR	((void *)0x10)		/* below every mapping: EFAULT */

/* The result of a call that returns -1 and sets errno: 0 or the errno. */
#define ERR(call)	((call) == 0 ? 0 : errno)

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* The line of /proc/mounts whose mount point is dir, into line; 0 when there is none. */
static int mounts_line(const char *dir, char *line, size_t size)
{
	static char buf[16384];

	if (slurp("/proc/mounts", buf, sizeof(buf)) <= 0)
		return 0;
	for (char *l = buf; *l; ) {
		char *nl = strchr(l, '\n'), *sp = strchr(l, ' ');

		if (!nl)
			break;
		if (sp && sp < nl && !strncmp(sp + 1, dir, strlen(dir)) &&
		    sp[1 + strlen(dir)] == ' ') {
			snprintf(line, size, "%.*s", (int)(nl - l), l);
			return 1;
		}
		l = nl + 1;
	}
	return 0;
}

static long meminfo(const char *name)
{
	static char buf[8192];
	char *l;

	if (slurp("/proc/meminfo", buf, sizeof(buf)) <= 0 || !(l = strstr(buf, name)))
		return -1;
	return strtol(l + strlen(name) + 1, NULL, 10);
}

static void mount_errors(void)
{
	int fd = open("/tmp/mount_ktap_file", O_RDWR | O_CREAT, 0600);

	mkdir(DIR_A, 0755);
	CHECK(fd >= 0);
	CHECK(ERR(mount("none", DIR_A, "no_such_fs", 0, NULL)) == ENODEV);
	CHECK(ERR(mount("none", "/tmp/no/such/dir", "tmpfs", 0, NULL)) == ENOENT);
	CHECK(ERR(mount("none", "/tmp/mount_ktap_file/x", "tmpfs", 0, NULL)) == ENOTDIR);
	CHECK(ERR(mount("none", "/tmp/mount_ktap_file", "tmpfs", 0, NULL)) == ENOTDIR);
	CHECK(ERR(mount("none", DIR_A, BAD_PTR, 0, NULL)) == EFAULT);
	CHECK(ERR(mount("none", BAD_PTR, "tmpfs", 0, NULL)) == EFAULT);
	CHECK(ERR(mount(BAD_PTR, DIR_A, "tmpfs", 0, NULL)) == EFAULT);
	CHECK(ERR(mount("none", DIR_A, "tmpfs", 0, BAD_PTR)) == EFAULT);
	CHECK(ERR(mount("none", DIR_A, NULL, 0, NULL)) == EINVAL);
	CHECK(ERR(mount("none", DIR_A, "tmpfs", 0, "no_such_option")) == EINVAL);
	CHECK(ERR(mount("none", DIR_A, "tmpfs", 0, "mode=999")) == EINVAL);
	/* sysfs is mounted on /sys: the same tree on the same place again is EBUSY. */
	CHECK(ERR(mount("sysfs", "/sys", "sysfs", 0, NULL)) == EBUSY);
	CHECK(ERR(umount2(DIR_A, 0)) == EINVAL);		/* not a mount point */
	CHECK(ERR(umount2("/tmp/no/such/dir", 0)) == ENOENT);
	CHECK(ERR(umount2(BAD_PTR, 0)) == EFAULT);
	CHECK(ERR(umount2(DIR_A, 0x100)) == EINVAL);		/* an unknown flag */
	CHECK(ERR(umount2("/proc/self", 0)) == EINVAL);		/* inside a mount, not its root */
	if (fd >= 0)
		close(fd);
	unlink("/tmp/mount_ktap_file");
	ktap_report("mount_errors", NULL);
}

/* A file made in a tmpfs is gone after umount; mounted again, the tmpfs is empty. */
static void tmpfs_lifecycle(void)
{
	struct stat under, root, st;
	char buf[64], line[256];
	int fd;

	mkdir(DIR_A, 0755);
	CHECK(stat(DIR_A, &under) == 0);
	CHECK(ERR(mount("tmpfs", DIR_A, "tmpfs", 0, NULL)) == 0);
	CHECK(stat(DIR_A, &root) == 0);
	CHECK(root.st_dev != under.st_dev && root.st_ino != under.st_ino);
	CHECK((root.st_mode & 07777) == 01777 && entries(DIR_A) == 0);
	CHECK(mounts_line(DIR_A, line, sizeof(line)) &&
	      !strncmp(line, "tmpfs " DIR_A " tmpfs rw", strlen("tmpfs " DIR_A " tmpfs rw")));
	CHECK(put(DIR_A "/file", "in the tmpfs") == 12);
	CHECK(mkdir(DIR_A "/sub", 0755) == 0 && put(DIR_A "/sub/deep", "x") == 1);
	CHECK(stat(DIR_A "/file", &st) == 0 && st.st_dev == root.st_dev);
	CHECK(slurp(DIR_A "/file", buf, sizeof(buf)) == 12 && !strcmp(buf, "in the tmpfs"));
	CHECK(entries(DIR_A) == 2);
	/* ".." of the mounted root is the mount point's parent. */
	CHECK(stat(DIR_A "/..", &st) == 0 && stat("/tmp", &under) == 0 && st.st_ino == under.st_ino);
	CHECK(rmdir(DIR_A) == -1 && errno == EBUSY);
	CHECK(ERR(umount(DIR_A)) == 0);
	CHECK(!mounts_line(DIR_A, line, sizeof(line)));
	CHECK(stat(DIR_A "/file", &st) == -1 && errno == ENOENT);
	CHECK(entries(DIR_A) == 0);
	/* Again: a new, empty tree, with the options asked for. */
	CHECK(ERR(mount("tmpfs", DIR_A, "tmpfs", 0, "mode=0700,size=4m")) == 0);
	CHECK(stat(DIR_A, &root) == 0 && (root.st_mode & 07777) == 0700);
	CHECK(entries(DIR_A) == 0);
	CHECK(stat(DIR_A "/file", &st) == -1 && errno == ENOENT);
	CHECK(ERR(umount(DIR_A)) == 0);
	/* Mounts stack: a second tmpfs hides the first until it is unmounted. */
	CHECK(ERR(mount("one", DIR_A, "tmpfs", 0, NULL)) == 0);
	CHECK(put(DIR_A "/first", "1") == 1);
	CHECK(ERR(mount("two", DIR_A, "tmpfs", 0, NULL)) == 0);
	CHECK(entries(DIR_A) == 0);
	CHECK(ERR(umount(DIR_A)) == 0);
	CHECK(slurp(DIR_A "/first", buf, sizeof(buf)) == 1);
	CHECK(ERR(umount(DIR_A)) == 0);
	CHECK(entries(DIR_A) == 0);
	/* The page-cache memory of a removed tmpfs goes back: 1 MiB of Cached. */
	{
		long cached0 = meminfo("Cached"), cached1;
		static char data[1 << 20];

		CHECK(ERR(mount("tmpfs", DIR_A, "tmpfs", 0, NULL)) == 0);
		memset(data, 'm', sizeof(data));
		fd = open(DIR_A "/big", O_WRONLY | O_CREAT, 0600);
		CHECK(fd >= 0 && write(fd, data, sizeof(data)) == sizeof(data));
		close(fd);
		cached1 = meminfo("Cached");
		CHECK(cached1 >= cached0 + 1024);
		CHECK(ERR(umount(DIR_A)) == 0);
		CHECK(meminfo("Cached") <= cached1 - 1024);
	}
	ktap_report("tmpfs_lifecycle", NULL);
}

/* EBUSY while anything uses the tree, and MNT_DETACH with an open file. */
static void tmpfs_busy(void)
{
	char buf[64];
	int fd, dfd, xfd;
	long cached;

	mkdir(DIR_A, 0755);
	CHECK(ERR(mount("tmpfs", DIR_A, "tmpfs", 0, NULL)) == 0);
	/* An open file. */
	fd = open(DIR_A "/open", O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0);
	CHECK(ERR(umount(DIR_A)) == EBUSY);
	close(fd);
	/* A cwd inside. */
	CHECK(mkdir(DIR_A "/d", 0755) == 0 && chdir(DIR_A "/d") == 0);
	CHECK(ERR(umount(DIR_A)) == EBUSY);
	CHECK(chdir("/") == 0);
	/* A mount inside. */
	CHECK(ERR(mount("tmpfs", DIR_A "/d", "tmpfs", 0, NULL)) == 0);
	CHECK(ERR(umount(DIR_A)) == EBUSY);
	CHECK(ERR(umount(DIR_A "/d")) == 0);
	/* An unlinked file still open (an O_TMPFILE one, too). */
	fd = open(DIR_A "/gone", O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0 && unlink(DIR_A "/gone") == 0);
	CHECK(ERR(umount(DIR_A)) == EBUSY);
	close(fd);
	fd = open(DIR_A, O_TMPFILE | O_RDWR, 0600);
	CHECK(fd >= 0);
	CHECK(ERR(umount(DIR_A)) == EBUSY);
	close(fd);
	CHECK(ERR(umount(DIR_A)) == 0);
	/*
	 * MNT_DETACH with a file open and a directory fd: the path shows what
	 * is under the mount at once, the descriptors go on working, and the
	 * tree's memory is freed with the last of them.
	 */
	CHECK(ERR(mount("tmpfs", DIR_A, "tmpfs", 0, NULL)) == 0);
	cached = meminfo("Cached");
	fd = open(DIR_A "/kept", O_RDWR | O_CREAT, 0600);
	CHECK(fd >= 0 && write(fd, "kept", 4) == 4);
	CHECK(ftruncate(fd, 256 * PAGE) == 0 && pwrite(fd, "z", 1, 255 * PAGE) == 1);
	CHECK(mkdir(DIR_A "/sub", 0755) == 0);
	dfd = open(DIR_A "/sub", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0);
	CHECK(ERR(mount("tmpfs", DIR_A "/sub", "tmpfs", 0, NULL)) == 0);
	CHECK(ERR(umount2(DIR_A, MNT_DETACH)) == 0);
	CHECK(entries(DIR_A) == 0 && access(DIR_A "/kept", F_OK) == -1 && errno == ENOENT);
	CHECK(!mounts_line(DIR_A "/sub", buf, sizeof(buf)));	/* gone with its parent */
	CHECK(pread(fd, buf, 4, 0) == 4 && !memcmp(buf, "kept", 4));
	CHECK(pwrite(fd, "more", 4, 4) == 4);
	xfd = openat(dfd, "x", O_RDWR | O_CREAT, 0600);	/* in the detached tree */
	CHECK(xfd >= 0);
	CHECK(meminfo("Cached") >= cached + 2 * 4);
	close(fd);
	close(xfd);
	CHECK(meminfo("Cached") >= cached + 2 * 4);		/* dfd still holds the tree */
	close(dfd);
	CHECK(meminfo("Cached") <= cached);
	ktap_report("tmpfs_busy", NULL);
}

/* proc unmounted: its files are gone; mounted again: back. Busy while a file is open. */
static void proc_remount(void)
{
	char buf[256];
	int fd;

	fd = open("/proc/meminfo", O_RDONLY);
	CHECK(fd >= 0);
	CHECK(ERR(umount("/proc")) == EBUSY);
	close(fd);
	CHECK(ERR(umount("/proc")) == 0);
	CHECK(access("/proc/meminfo", F_OK) == -1 && errno == ENOENT);
	CHECK(entries("/proc") == 0);
	mkdir(DIR_B, 0755);
	CHECK(ERR(mount("proc", DIR_B, "proc", 0, "bogus_option")) == EINVAL);
	CHECK(ERR(mount("proc", DIR_B, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) == 0);
	CHECK(slurp(DIR_B "/meminfo", buf, sizeof(buf)) > 0 && !strncmp(buf, "MemTotal:", 9));
	CHECK(slurp(DIR_B "/mounts", buf, sizeof(buf)) > 0);
	CHECK(mounts_line(DIR_B, buf, sizeof(buf)) == 0);	/* /proc/mounts is not there... */
	CHECK(ERR(umount(DIR_B)) == 0);
	CHECK(ERR(mount("proc", "/proc", "proc", 0, NULL)) == 0);
	CHECK(mounts_line("/proc", buf, sizeof(buf)) && !strncmp(buf, "proc /proc proc rw", 18));
	CHECK(slurp("/proc/meminfo", buf, sizeof(buf)) > 0);
	/* MS_PRIVATE on a mount root is accepted (every mount is private); elsewhere EINVAL. */
	CHECK(ERR(mount(NULL, "/proc", NULL, MS_PRIVATE, NULL)) == 0);
	CHECK(ERR(mount(NULL, "/proc/self", NULL, MS_PRIVATE, NULL)) == EINVAL);
	ktap_report("proc_remount", NULL);
}

static void debugfs(void)
{
	char line[256];
	struct stat st;
	int mounted_before = access(SPLIT, F_OK) == 0;

	if (mounted_before)
		CHECK(ERR(umount(DEBUG)) == 0);
	CHECK(stat(DEBUG, &st) == 0 && S_ISDIR(st.st_mode) && entries(DEBUG) == 0);
	CHECK(ERR(mount("none", DEBUG, "debugfs", 0, NULL)) == 0);
	CHECK(stat(SPLIT, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0200);
	CHECK(ERR(mount("none", DEBUG, "debugfs", 0, NULL)) == EBUSY);
	CHECK(mounts_line(DEBUG, line, sizeof(line)) &&
	      !strncmp(line, "none " DEBUG " debugfs ", strlen("none " DEBUG " debugfs ")));
	CHECK(ERR(umount(DEBUG)) == 0);
	CHECK(access(SPLIT, F_OK) == -1 && errno == ENOENT);
	CHECK(ERR(mount("none", DEBUG, "debugfs", 0, NULL)) == 0);	/* left mounted */
	ktap_report("debugfs", NULL);
}

static long split_write(const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return put(SPLIT, buf);
}

/* Four THPs of this process, filled with a pattern: 0 when the kernel made them. */
static char *four_thps(char **raw)
{
	char *p;

	*raw = mmap(NULL, 5 * PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)*raw + PMD - 1) & ~(PMD - 1));
	madvise(p, 4 * PMD, MADV_HUGEPAGE);
	for (unsigned long i = 0; i < 4 * PMD; i++)
		p[i] = (char)(i * 7);
	return p;
}

static int pattern_ok(const char *p)
{
	for (unsigned long i = 0; i < 4 * PMD; i++)
		if (p[i] != (char)(i * 7))
			return 0;
	return 1;
}

static void split_huge_pages(void)
{
	char *raw, *p = four_thps(&raw);
	long splits = vmstat("thp_split_page"), n64;
	const char *skip = NULL;

	CHECK(p != NULL);
	if (!p)
		goto out;
	if (smaps_anon_huge_kb(p) != 4 * 2048) {
		skip = "no PMD-mapped THPs";
		goto out;
	}
	/* The errors: a bad format, a path that cannot be opened. */
	CHECK(split_write("bogus") == -EINVAL);
	CHECK(split_write("%d,%lx,%lx", getpid(), 0UL, 0UL) == -EINVAL);	/* no 0x */
	CHECK(split_write("/no/such/file,0x0,0x10") == -EINVAL);
	CHECK(split_write("/tmp/mount_ktap_pc,16") == -EINVAL);
	/* A file's page cache: nothing large to split, and the write succeeds. */
	CHECK(put("/tmp/mount_ktap_pc", "page cache") == 10);
	CHECK(split_write("/tmp/mount_ktap_pc,0x0,0x10") == (long)strlen("/tmp/mount_ktap_pc,0x0,0x10"));
	unlink("/tmp/mount_ktap_pc");
	/* Half of the first THP's range: that whole folio is split to order 0, the rest stays. */
	CHECK(split_write("%d,0x%lx,0x%lx", getpid(), (unsigned long)p,
			  (unsigned long)p + PMD / 2) > 0);
	CHECK(smaps_anon_huge_kb(p) == 3 * 2048);
	CHECK(vmstat("thp_split_page") == splits + 1);
	/* The second to order 4: 32 folios of 64 KiB (their own counter). */
	n64 = mthp_stat(64, "nr_anon");
	CHECK(split_write("%d,0x%lx,0x%lx,4", getpid(), (unsigned long)p + PMD,
			  (unsigned long)p + 2 * PMD) > 0);
	CHECK(smaps_anon_huge_kb(p) == 2 * 2048);
	CHECK(mthp_stat(64, "nr_anon") == n64 + 32);
	/* The rest. */
	CHECK(split_write("%d,0x%lx,0x%lx,0", getpid(), (unsigned long)p,
			  (unsigned long)p + 4 * PMD) > 0);
	CHECK(smaps_anon_huge_kb(p) == 0);
	CHECK(mthp_stat(64, "nr_anon") == n64);		/* the 64 KiB folios went to order 0 too */
	CHECK(vmstat("thp_split_page") == splits + 4);
	CHECK(pattern_ok(p));
	munmap(raw, 5 * PMD);
	/* "1": every THP of the system. */
	p = four_thps(&raw);
	CHECK(p && smaps_anon_huge_kb(p) == 4 * 2048);
	CHECK(put(SPLIT, "1") == 1);
	CHECK(smaps_anon_huge_kb(p) == 0 && pattern_ok(p));
out:
	if (p)
		munmap(raw, 5 * PMD);
	ktap_report("split_huge_pages", skip);
}

int main(void)
{
	ktap_begin("mount", 6);
	mount_errors();
	tmpfs_lifecycle();
	tmpfs_busy();
	proc_remount();
	debugfs();
	split_huge_pages();
	rmdir(DIR_A);
	rmdir(DIR_B);
	return ktap_finish();
}
