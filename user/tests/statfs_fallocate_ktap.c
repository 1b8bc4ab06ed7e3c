/*
 * statfs(2), fstatfs(2) and fallocate(2) from ring 3 (fs/statfs.c,
 * fs/fallocate.c), what Linux's gup_longterm selftest needs of them: the
 * magic number of each file system (tmpfs for the root, /tmp and memfd),
 * fallocate allocating a RAM file's pages (mincore sees them in the page
 * cache) and extending its size or not (FALLOC_FL_KEEP_SIZE), and Linux
 * 6.12's errno values. Job statfs-fallocate-numa3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "ktap.h"

#define PAGE	4096L
#define TMPFS_MAGIC		0x01021994
#define PROC_SUPER_MAGIC	0x9fa0
#define SYSFS_MAGIC		0x62656572
#define PIPEFS_MAGIC		0x50495045
#define ST_VALID		0x20
#ifndef FALLOC_FL_ZERO_RANGE
#define FALLOC_FL_ZERO_RANGE	0x10
#endif

static long type_of(const char *path)
{
	struct statfs st;

	return statfs(path, &st) ? -errno : (long)st.f_type;
}

static long ftype_of(int fd)
{
	struct statfs st;

	return fstatfs(fd, &st) ? -errno : (long)st.f_type;
}

static long falloc(int fd, int mode, off_t off, off_t len)
{
	return syscall(SYS_fallocate, fd, mode, off, len) ? -errno : 0;
}

static void statfs_magic(void)
{
	struct statfs st;
	int memfd = (int)syscall(SYS_memfd_create, "statfs", 0), p[2];

	CHECK(type_of("/") == TMPFS_MAGIC);
	CHECK(type_of("/tmp") == TMPFS_MAGIC);
	CHECK(type_of("/proc") == PROC_SUPER_MAGIC);
	CHECK(type_of("/proc/self/status") == PROC_SUPER_MAGIC);
	CHECK(type_of("/sys") == SYSFS_MAGIC);
	CHECK(memfd >= 0 && ftype_of(memfd) == TMPFS_MAGIC);
	CHECK(pipe(p) == 0 && ftype_of(p[0]) == PIPEFS_MAGIC);
	CHECK(statfs("/tmp", &st) == 0);
	CHECK(st.f_bsize == PAGE && st.f_frsize == PAGE && st.f_namelen == 255);
	CHECK(st.f_flags & ST_VALID);
	CHECK(type_of("/no/such/file") == -ENOENT);
	errno = 0;
	CHECK(syscall(SYS_statfs, "/", (void *)16) == -1 && errno == EFAULT);
	CHECK(ftype_of(9999) == -EBADF);
	close(memfd);
	close(p[0]);
	close(p[1]);
	ktap_report("statfs_magic", NULL);
}

/* Pages of the first n of a shared mapping of fd in the page cache (mincore). */
static int resident(int fd, int n, unsigned char *vec)
{
	char *m = mmap(NULL, n * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	int count = 0;

	if (m == MAP_FAILED || mincore(m, n * PAGE, vec))
		return -1;
	for (int i = 0; i < n; i++)
		count += vec[i] & 1;
	munmap(m, n * PAGE);
	return count;
}

static void fallocate_allocates(void)
{
	int fd = (int)syscall(SYS_memfd_create, "falloc", 0);
	unsigned char vec[8];
	struct stat st;
	char buf[PAGE];

	CHECK(fd >= 0);
	CHECK(ftruncate(fd, 4 * PAGE) == 0);
	CHECK(resident(fd, 4, vec) == 0);
	/* Keep-size inside: pages 1 and 2 allocated, the size stays. */
	CHECK(falloc(fd, FALLOC_FL_KEEP_SIZE, PAGE + 100, PAGE) == 0);
	CHECK(fstat(fd, &st) == 0 && st.st_size == 4 * PAGE);
	CHECK(resident(fd, 4, vec) == 2 && !vec[0] && vec[1] && vec[2] && !vec[3]);
	/* Mode 0 past the end: allocated and the size extended. */
	CHECK(falloc(fd, 0, 3 * PAGE, 3 * PAGE) == 0);
	CHECK(fstat(fd, &st) == 0 && st.st_size == 6 * PAGE);
	CHECK(resident(fd, 6, vec) == 5 && !vec[0]);
	CHECK(pread(fd, buf, PAGE, 5 * PAGE) == PAGE && buf[0] == 0 && buf[PAGE - 1] == 0);
	/* Keep-size past the end: the size stays. */
	CHECK(falloc(fd, FALLOC_FL_KEEP_SIZE, 6 * PAGE, PAGE) == 0);
	CHECK(fstat(fd, &st) == 0 && st.st_size == 6 * PAGE);
	/* Inside the size: nothing changes it. */
	CHECK(falloc(fd, 0, 0, PAGE) == 0);
	CHECK(fstat(fd, &st) == 0 && st.st_size == 6 * PAGE);
	CHECK(resident(fd, 6, vec) == 6);
	close(fd);
	ktap_report("fallocate_allocates", NULL);
}

static void fallocate_errors(void)
{
	int fd = (int)syscall(SYS_memfd_create, "falloc", 0), p[2];
	int ro = open("/tmp/falloc_ro", O_CREAT | O_RDONLY, 0600);
	int null = open("/dev/null", O_RDWR);

	CHECK(fd >= 0 && ro >= 0 && null >= 0 && pipe(p) == 0);
	CHECK(falloc(fd, 0, 0, 0) == -EINVAL);
	CHECK(falloc(fd, 0, -1, PAGE) == -EINVAL);
	CHECK(falloc(fd, 0x80, 0, PAGE) == -EOPNOTSUPP);
	CHECK(falloc(fd, FALLOC_FL_PUNCH_HOLE, 0, PAGE) == -EOPNOTSUPP);
	CHECK(falloc(fd, FALLOC_FL_ZERO_RANGE, 0, PAGE) == -EOPNOTSUPP);
	/* tmpfs punches holes; Quire does not yet. */
	CHECK(falloc(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, PAGE) == -ENOSYS);
	CHECK(falloc(fd, 0, 0x7fffffffffffffffL - 10, PAGE) == -EFBIG);
	CHECK(falloc(ro, 0, 0, PAGE) == -EBADF);
	CHECK(falloc(p[1], 0, 0, PAGE) == -ESPIPE);
	CHECK(falloc(null, 0, 0, PAGE) == -ENODEV);
	CHECK(falloc(9999, 0, 0, PAGE) == -EBADF);
	close(fd);
	close(ro);
	close(null);
	close(p[0]);
	close(p[1]);
	unlink("/tmp/falloc_ro");
	ktap_report("fallocate_errors", NULL);
}

int main(void)
{
	ktap_begin("statfs_fallocate", 3);
	statfs_magic();
	fallocate_allocates();
	fallocate_errors();
	return ktap_finish();
}
