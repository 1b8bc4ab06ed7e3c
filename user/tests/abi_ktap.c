/*
 * File and memory system calls that Linux programs (and Linux's mm
 * selftests) need, from ring 3 (docs/syscalls.md, docs/timers.md):
 * pwrite64, preadv/pwritev, preadv2/pwritev2 (offsets, the file position,
 * RWF_* flags and errors); fsync, fdatasync, syncfs, sync; madvise's
 * POPULATE_READ/WRITE (seen in /proc/self/pagemap), COLD, PAGEOUT and
 * FREE; mmap of /dev/zero, private and shared across fork; alarm,
 * getitimer and setitimer (SIGALRM's siginfo, interval timers, re-arming
 * at delivery, fork and exec, exit with a timer running); open with
 * O_TMPFILE; getcwd, fchdir, readlink and /proc/self/exe; the resource
 * limits; mmap's flags and placement. Prints KTAP; run under /bin/init by
 * the abi-numa3 job.
 *
 * With "after-exec" as its argument it is the exec case's second half:
 * it exits with the seconds its inherited alarm had left. With
 * "exe-is PATH" it exits 0 when /proc/self/exe reads PATH.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include "ktap.h"

#define PAGE 4096UL

#ifndef MADV_FREE
#define MADV_FREE		8
#endif
#ifndef MADV_COLD
#define MADV_COLD		20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif
#define RWF_HIPRI	0x01
#define RWF_DSYNC	0x02
#define RWF_APPEND	0x10
#define RWF_NOAPPEND	0x20

#define PM_PRESENT	(1ULL << 63)
#define PM_EXCLUSIVE	(1ULL << 56)
#define PM_PFN(e)	((e) & ((1ULL << 55) - 1))

/* The call failed with errno e. */
#define FAILS(call, e)	((call) == -1 && errno == (e))

static const char *self_path = "/tests/abi_ktap";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static long sys_preadv2(int fd, const struct iovec *iov, int cnt, long off, int flags)
{
	return syscall(SYS_preadv2, fd, iov, cnt, off, 0L, flags);
}

static long sys_pwritev2(int fd, const struct iovec *iov, int cnt, long off, int flags)
{
	return syscall(SYS_pwritev2, fd, iov, cnt, off, 0L, flags);
}

static off_t position(int fd)
{
	return lseek(fd, 0, SEEK_CUR);
}

static off_t file_size(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? -1 : st.st_size;
}

/* The pagemap entry of addr (all ones when the read fails); pread64 at (addr / 4096) * 8. */
static uint64_t pagemap_of(const void *addr)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e = ~0ULL;

	if (fd < 0)
		return e;
	if (pread(fd, &e, 8, (off_t)((uintptr_t)addr / PAGE) * 8) != 8)
		e = ~0ULL;
	close(fd);
	return e;
}

/* ---- 1. positioned and vectored I/O ---- */

static void case_pwrite_pread(void)
{
	int fd = open("/tmp/abi-rw", O_RDWR | O_CREAT | O_TRUNC, 0644);
	int ro = open("/tmp/abi-rw", O_RDONLY), p[2];
	char buf[8192], big[5000];

	CHECK(fd >= 0 && ro >= 0 && pipe(p) == 0);
	CHECK(pwrite(fd, "hello", 5, 100) == 5);
	CHECK(position(fd) == 0);			/* the position stays */
	CHECK(file_size(fd) == 105);
	memset(buf, 'x', sizeof(buf));
	CHECK(pread(fd, buf, 5, 100) == 5 && !memcmp(buf, "hello", 5));
	CHECK(pread(ro, buf, 5, 98) == 5 && !memcmp(buf, "\0\0hel", 5));	/* a hole reads zeroes */
	CHECK(pread(fd, buf, 10, 105) == 0);		/* at the end */
	CHECK(pread(fd, buf, 10, 103) == 2 && !memcmp(buf, "lo", 2));
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	CHECK(pwrite(fd, big, sizeof(big), 4000) == (ssize_t)sizeof(big));	/* across a page */
	CHECK(pread(fd, buf, sizeof(big), 4000) == (ssize_t)sizeof(big) && !memcmp(buf, big, sizeof(big)));
	CHECK(position(fd) == 0 && position(ro) == 0);
	CHECK(write(fd, "AB", 2) == 2 && position(fd) == 2);	/* write still moves it */
	CHECK(pwrite(fd, "", 0, 7) == 0);
	/* Errors, in Linux's order: offset, descriptor, a pipe, the open mode, the buffer. */
	CHECK(FAILS(pwrite(fd, "x", 1, -1), EINVAL));
	CHECK(FAILS(pread(fd, buf, 1, -4096), EINVAL));
	CHECK(FAILS(pwrite(999, "x", 1, 0), EBADF));
	CHECK(FAILS(pread(999, buf, 1, 0), EBADF));
	CHECK(FAILS(pwrite(p[1], "x", 1, 0), ESPIPE));
	CHECK(FAILS(pread(p[0], buf, 1, 0), ESPIPE));
	CHECK(FAILS(pwrite(ro, "x", 1, 0), EBADF));
	CHECK(FAILS(pwrite(fd, (void *)8, 10, 0), EFAULT));
	CHECK(FAILS(pread(fd, (void *)0xffff800000000000UL, 10, 0), EFAULT));
	CHECK(FAILS(pread(fd, buf, 1, -1), EINVAL));
	{
		int dir = open("/tmp", O_RDONLY | O_DIRECTORY);

		CHECK(FAILS(pread(dir, buf, 1, 0), EISDIR));
		close(dir);
	}
	/* O_APPEND: pwrite appends whatever the offset (Linux's documented behaviour). */
	{
		int ap = open("/tmp/abi-rw", O_WRONLY | O_APPEND);
		off_t size = file_size(fd);

		CHECK(pwrite(ap, "Z", 1, 0) == 1 && file_size(fd) == size + 1);
		CHECK(pread(fd, buf, 1, size) == 1 && buf[0] == 'Z');
		close(ap);
	}
	close(p[0]);
	close(p[1]);
	close(ro);
	close(fd);
	unlink("/tmp/abi-rw");
	ktap_report("pwrite64_pread64", NULL);
}

static void case_pwritev_preadv(void)
{
	int fd = open("/tmp/abi-rwv", O_RDWR | O_CREAT | O_TRUNC, 0644), p[2];
	char a[4] = "", b[10] = "", big[3 * PAGE];
	struct iovec w[3] = { { "abc", 3 }, { "", 0 }, { "defgh", 5 } };
	struct iovec r[2] = { { a, 4 }, { b, 10 } };
	static struct iovec many[1025];

	CHECK(fd >= 0 && pipe(p) == 0);
	CHECK(pwritev(fd, w, 3, 10) == 8);
	CHECK(position(fd) == 0 && file_size(fd) == 18);
	CHECK(preadv(fd, r, 2, 10) == 8);
	CHECK(!memcmp(a, "abcd", 4) && !memcmp(b, "efgh", 4));
	CHECK(position(fd) == 0);
	/* Bigger than a page per iovec, read back in other pieces. */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i % 251);
	{
		struct iovec w2[2] = { { big, PAGE + 100 }, { big + PAGE + 100, 2 * PAGE - 100 } };
		static char back[3 * PAGE];
		struct iovec r2[3] = { { back, 10 }, { back + 10, 2 * PAGE }, { back + 10 + 2 * PAGE, PAGE - 10 } };

		CHECK(pwritev(fd, w2, 2, 8000) == (ssize_t)sizeof(big));
		CHECK(preadv(fd, r2, 3, 8000) == (ssize_t)sizeof(big) && !memcmp(back, big, sizeof(big)));
		/* A short read stops at the end of the file. */
		CHECK(preadv(fd, r2, 3, 8000 + PAGE) == (ssize_t)(2 * PAGE));
	}
	/* readv/writev at the position, which moves. */
	CHECK(lseek(fd, 10, SEEK_SET) == 10 && readv(fd, r, 2) == 14 && position(fd) == 24);
	CHECK(preadv(fd, r, 0, 0) == 0);
	CHECK(FAILS(preadv(fd, many, 1025, 0), EINVAL));	/* UIO_MAXIOV */
	CHECK(FAILS(pwritev(fd, many, 1025, 0), EINVAL));
	CHECK(FAILS(preadv(fd, (struct iovec *)8, 2, 0), EFAULT));
	{
		struct iovec bad[2] = { { "ok", 2 }, { (void *)0xffff800000000000UL, 4 } };
		off_t size = file_size(fd);

		/* A bad buffer anywhere is EFAULT before anything moves. */
		CHECK(FAILS(pwritev(fd, bad, 2, size), EFAULT) && file_size(fd) == size);
		bad[1].iov_base = a;
		bad[1].iov_len = (size_t)-1;		/* negative as ssize_t, with another iovec */
		CHECK(FAILS(pwritev(fd, bad, 2, 0), EINVAL));
	}
	CHECK(FAILS(preadv(fd, r, 2, -1), EINVAL));
	CHECK(FAILS(pwritev(999, w, 3, 0), EBADF));
	CHECK(FAILS(pwritev(p[1], w, 3, 0), ESPIPE));
	CHECK(FAILS(preadv(p[0], r, 2, 0), ESPIPE));
	/* A pipe's readv takes what is there, across iovecs, without waiting for more. */
	CHECK(write(p[1], "0123456", 7) == 7 && readv(p[0], r, 2) == 7);
	CHECK(!memcmp(a, "0123", 4) && !memcmp(b, "456", 3));
	close(p[0]);
	close(p[1]);
	close(fd);
	unlink("/tmp/abi-rwv");
	ktap_report("pwritev_preadv", NULL);
}

static void case_pwritev2_preadv2(void)
{
	int fd = open("/tmp/abi-rwv2", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char a[8] = "";
	struct iovec xy = { "XY", 2 }, zw = { "ZW", 2 }, r = { a, 4 }, none = { a, 0 };

	CHECK(fd >= 0);
	/* Offset -1: the file position, which moves. */
	CHECK(sys_pwritev2(fd, &xy, 1, -1, 0) == 2 && position(fd) == 2);
	CHECK(sys_pwritev2(fd, &zw, 1, -1, 0) == 2 && position(fd) == 4);
	/* An offset: the position stays. */
	CHECK(sys_pwritev2(fd, &xy, 1, 10, 0) == 2 && position(fd) == 4 && file_size(fd) == 12);
	CHECK(lseek(fd, 1, SEEK_SET) == 1);
	CHECK(sys_preadv2(fd, &r, 1, -1, 0) == 4 && !memcmp(a, "YZW\0", 4) && position(fd) == 5);
	CHECK(sys_preadv2(fd, &r, 1, 10, 0) == 2 && !memcmp(a, "XY", 2) && position(fd) == 5);
	/* Flags Linux accepts on a RAM file: HIPRI (polling, for O_DIRECT only), DSYNC. */
	CHECK(sys_preadv2(fd, &r, 1, 0, RWF_HIPRI) == 4);
	CHECK(sys_pwritev2(fd, &xy, 1, 0, RWF_DSYNC) == 2);
	/* Unknown flags: EOPNOTSUPP; APPEND with NOAPPEND: EINVAL; nothing to move: 0 unchecked. */
	CHECK(FAILS(sys_preadv2(fd, &r, 1, 0, 0x80), EOPNOTSUPP));
	CHECK(FAILS(sys_pwritev2(fd, &xy, 1, 0, 0x100), EOPNOTSUPP));
	CHECK(FAILS(sys_pwritev2(fd, &xy, 1, 0, RWF_APPEND | RWF_NOAPPEND), EINVAL));
	CHECK(sys_preadv2(fd, &none, 1, 0, 0x80) == 0);
	CHECK(FAILS(sys_preadv2(fd, &r, 1, -2, 0), EINVAL));
	CHECK(FAILS(sys_pwritev2(999, &xy, 1, 0, 0), EBADF));
	close(fd);
	unlink("/tmp/abi-rwv2");
	ktap_report("pwritev2_preadv2", NULL);
}

/* ---- 2. the fsync family ---- */

static void case_fsync_family(void)
{
	int fd = open("/tmp/abi-sync", O_RDWR | O_CREAT | O_TRUNC, 0644);
	int ro = open("/tmp/abi-sync", O_RDONLY);
	int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	int null = open("/dev/null", O_RDWR);
	int sys = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY);
	int proc = open("/proc/vmstat", O_RDONLY);
	int p[2];

	CHECK(fd >= 0 && ro >= 0 && dir >= 0 && null >= 0 && sys >= 0 && proc >= 0 && pipe(p) == 0);
	CHECK(write(fd, "data", 4) == 4);
	CHECK(fsync(fd) == 0 && fdatasync(fd) == 0 && syncfs(fd) == 0);
	CHECK(fsync(ro) == 0 && fdatasync(ro) == 0);	/* a read-only descriptor syncs too */
	CHECK(fsync(dir) == 0 && fdatasync(dir) == 0 && syncfs(dir) == 0);
	/* Files whose file system has no fsync: EINVAL; syncfs is fine on any. */
	CHECK(FAILS(fsync(p[0]), EINVAL) && FAILS(fdatasync(p[1]), EINVAL));
	CHECK(syncfs(p[0]) == 0);
	CHECK(FAILS(fsync(null), EINVAL) && syncfs(null) == 0);
	CHECK(FAILS(fsync(proc), EINVAL));		/* procfs has none */
	CHECK(fsync(sys) == 0);				/* sysfs (kernfs): a no-op */
	CHECK(FAILS(fsync(999), EBADF) && FAILS(fdatasync(-1), EBADF) && FAILS(syncfs(999), EBADF));
	sync();
	CHECK(syscall(SYS_sync) == 0);
	close(p[0]);
	close(p[1]);
	close(proc);
	close(sys);
	close(null);
	close(dir);
	close(ro);
	close(fd);
	unlink("/tmp/abi-sync");
	ktap_report("fsync_fdatasync_syncfs_sync", NULL);
}

/* ---- 3. madvise ---- */

static void case_populate_write(void)
{
	const int n = 8;
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *q = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t e[8];

	CHECK(p != MAP_FAILED && q != MAP_FAILED);
	for (int i = 0; i < n; i++)
		CHECK(!(pagemap_of(p + i * PAGE) & PM_PRESENT));	/* untouched */
	CHECK(madvise(p, n * PAGE, MADV_POPULATE_WRITE) == 0);
	for (int i = 0; i < n; i++) {
		e[i] = pagemap_of(p + i * PAGE);
		CHECK((e[i] & PM_PRESENT) && (e[i] & PM_EXCLUSIVE) && PM_PFN(e[i]));
		for (int j = 0; j < i; j++)
			CHECK(PM_PFN(e[i]) != PM_PFN(e[j]));	/* each its own page */
	}
	for (int i = 0; i < n; i++)
		CHECK(p[i * PAGE] == 0);
	/* POPULATE_READ maps the shared zero page: present, one frame for all. */
	CHECK(madvise(q, n * PAGE, MADV_POPULATE_READ) == 0);
	e[0] = pagemap_of(q);
	for (int i = 0; i < n; i++) {
		uint64_t ei = pagemap_of(q + i * PAGE);

		CHECK((ei & PM_PRESENT) && PM_PFN(ei) == PM_PFN(e[0]));
	}
	/* ... and a write populate then gives each page its own frame, zeroed. */
	CHECK(madvise(q, n * PAGE, MADV_POPULATE_WRITE) == 0);
	CHECK(PM_PFN(pagemap_of(q)) != PM_PFN(e[0]) && q[0] == 0 && q[PAGE] == 0);
	/* Populating what is populated is fine; data stay. */
	p[5] = 55;
	CHECK(madvise(p, n * PAGE, MADV_POPULATE_WRITE) == 0 && p[5] == 55);
	munmap(p, n * PAGE);
	munmap(q, n * PAGE);
	ktap_report("madv_populate_write_pagemap", NULL);
}

static void case_populate_errors(void)
{
	char *ro = mmap(NULL, 4 * PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *none = mmap(NULL, PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *wo = mmap(NULL, PAGE, PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *h = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/tmp/abi-populate", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char *f;

	CHECK(ro != MAP_FAILED && none != MAP_FAILED && wo != MAP_FAILED && h != MAP_FAILED && fd >= 0);
	/* A read-only mapping populates for reading, and refuses a write populate. */
	CHECK(madvise(ro, 4 * PAGE, MADV_POPULATE_READ) == 0);
	CHECK(pagemap_of(ro + 3 * PAGE) & PM_PRESENT);
	CHECK(FAILS(madvise(ro, 4 * PAGE, MADV_POPULATE_WRITE), EINVAL));
	/* PROT_NONE: neither; PROT_WRITE alone: no VM_READ, so no read populate. */
	CHECK(FAILS(madvise(none, PAGE, MADV_POPULATE_READ), EINVAL));
	CHECK(FAILS(madvise(none, PAGE, MADV_POPULATE_WRITE), EINVAL));
	CHECK(FAILS(madvise(wo, PAGE, MADV_POPULATE_READ), EINVAL));
	CHECK(madvise(wo, PAGE, MADV_POPULATE_WRITE) == 0);
	/* A hole: ENOMEM, with what comes before it populated. */
	CHECK(munmap(h + PAGE, PAGE) == 0);
	CHECK(FAILS(madvise(h, 3 * PAGE, MADV_POPULATE_WRITE), ENOMEM));
	CHECK(pagemap_of(h) & PM_PRESENT);
	CHECK(!(pagemap_of(h + 2 * PAGE) & PM_PRESENT));
	CHECK(FAILS(madvise(h + 1, PAGE, MADV_POPULATE_READ), EINVAL));	/* unaligned */
	CHECK(madvise(h, 0, MADV_POPULATE_WRITE) == 0);
	/* Past the end of a mapped file: what would be SIGBUS is EFAULT. */
	CHECK(pwrite(fd, "", 1, PAGE - 1) == 1);	/* a file of one page */
	f = mmap(NULL, 2 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(f != MAP_FAILED);
	if (f != MAP_FAILED) {
		CHECK(FAILS(madvise(f, 2 * PAGE, MADV_POPULATE_READ), EFAULT));
		CHECK(pagemap_of(f) & PM_PRESENT);
		CHECK(madvise(f, PAGE, MADV_POPULATE_READ) == 0);
		munmap(f, 2 * PAGE);
	}
	/* A private file mapping: a write populate breaks copy-on-write; the file keeps its bytes. */
	CHECK(pwrite(fd, "file", 4, 0) == 4);
	f = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	CHECK(f != MAP_FAILED);
	if (f != MAP_FAILED) {
		char back[4];

		CHECK(madvise(f, PAGE, MADV_POPULATE_WRITE) == 0);
		CHECK(!(pagemap_of(f) & (1ULL << 61)));		/* now an anonymous copy */
		f[0] = 'F';
		CHECK(pread(fd, back, 4, 0) == 4 && !memcmp(back, "file", 4));
		munmap(f, PAGE);
	}
	close(fd);
	unlink("/tmp/abi-populate");
	munmap(ro, 4 * PAGE);
	munmap(none, PAGE);
	munmap(wo, PAGE);
	munmap(h, PAGE);
	munmap(h + 2 * PAGE, PAGE);
	ktap_report("madv_populate_read_and_errors", NULL);
}

static void case_cold_pageout_free(void)
{
	char *p = mmap(NULL, 5 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *s = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	bool same = true;

	CHECK(p != MAP_FAILED && s != MAP_FAILED && munmap(p + 4 * PAGE, PAGE) == 0);
	memset(p, 0x5a, 4 * PAGE);
	/* No swap: COLD and PAGEOUT are accepted and every byte stays. */
	CHECK(madvise(p, 4 * PAGE, MADV_COLD) == 0);
	CHECK(madvise(p, 4 * PAGE, MADV_PAGEOUT) == 0);
	for (size_t i = 0; i < 4 * PAGE; i++)
		same &= p[i] == 0x5a;
	CHECK(same);
	CHECK(madvise(s, PAGE, MADV_COLD) == 0 && madvise(s, PAGE, MADV_PAGEOUT) == 0);
	CHECK(FAILS(madvise(p, 5 * PAGE, MADV_COLD), ENOMEM));	/* a hole at the end */
	CHECK(FAILS(madvise(p, 5 * PAGE, MADV_PAGEOUT), ENOMEM));
	/* FREE: each page reads as it was or as zeroes, and a write after it sticks. */
	CHECK(madvise(p, 2 * PAGE, MADV_FREE) == 0);
	CHECK(p[0] == 0x5a || p[0] == 0);
	p[0] = 7;
	CHECK(p[0] == 7 && p[3 * PAGE] == 0x5a);
	/* FREE is for private anonymous memory only. */
	CHECK(FAILS(madvise(s, PAGE, MADV_FREE), EINVAL));
	CHECK(FAILS(madvise(p + 1, PAGE, MADV_FREE), EINVAL));
	munmap(p, 4 * PAGE);
	munmap(s, PAGE);
	ktap_report("madv_cold_pageout_free", NULL);
}

/* ---- 4. /dev/zero ---- */

static void case_dev_zero_private(void)
{
	int zfd = open("/dev/zero", O_RDWR), zro = open("/dev/zero", O_RDONLY);
	int zwo = open("/dev/zero", O_WRONLY), null = open("/dev/null", O_RDWR);
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, zfd, 0);
	char *o = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, zro, PAGE);
	bool zero = true;
	int st;
	pid_t pid;

	CHECK(zfd >= 0 && zro >= 0 && zwo >= 0 && null >= 0 && p != MAP_FAILED && o != MAP_FAILED);
	for (size_t i = 0; i < 4 * PAGE; i++)
		zero &= p[i] == 0;
	CHECK(zero && o[0] == 0 && o[PAGE - 1] == 0);
	p[0] = 1;
	p[3 * PAGE] = 3;
	o[5] = 5;
	pid = fork();
	if (pid == 0) {
		bool ok = p[0] == 1 && p[3 * PAGE] == 3;

		p[0] = 9;			/* the child's own copy */
		_exit(ok && p[0] == 9 ? 0 : 1);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(p[0] == 1 && p[3 * PAGE] == 3 && o[5] == 5);
	{
		char buf[16];

		CHECK(read(zfd, buf, sizeof(buf)) == sizeof(buf) && buf[0] == 0);	/* the device is untouched */
	}
	/* Private anonymous memory: MADV_FREE applies. */
	CHECK(madvise(p, PAGE, MADV_FREE) == 0);
	/* As Linux: /dev/null cannot be mapped, and mapping needs a readable descriptor. */
	CHECK(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, null, 0) == MAP_FAILED && errno == ENODEV);
	CHECK(mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, zwo, 0) == MAP_FAILED && errno == EACCES);
	munmap(p, 4 * PAGE);
	munmap(o, PAGE);
	close(zfd);
	close(zro);
	close(zwo);
	close(null);
	ktap_report("dev_zero_private", NULL);
}

static void case_dev_zero_shared(void)
{
	int zfd = open("/dev/zero", O_RDWR), zro = open("/dev/zero", O_RDONLY);
	char *s = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, zfd, 0);
	char *t = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, zfd, 0);
	char *r = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, zro, 0);
	int st;
	pid_t pid;

	CHECK(zfd >= 0 && zro >= 0 && s != MAP_FAILED && t != MAP_FAILED && r != MAP_FAILED);
	CHECK(s[0] == 0 && s[2 * PAGE - 1] == 0 && r[0] == 0);
	s[0] = 1;
	pid = fork();
	if (pid == 0) {
		bool ok = s[0] == 1;

		s[0] = 42;
		s[PAGE] = 43;
		_exit(ok ? 0 : 1);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(s[0] == 42 && s[PAGE] == 43);	/* the child's writes are ours */
	CHECK(t[0] == 0);			/* each shared mapping is its own memory */
	CHECK(FAILS(madvise(s, PAGE, MADV_FREE), EINVAL));	/* shared: not for FREE */
	/* A writable shared mapping needs a writable descriptor. */
	CHECK(mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, zro, 0) == MAP_FAILED &&
	      errno == EACCES);
	munmap(s, 2 * PAGE);
	munmap(t, PAGE);
	munmap(r, PAGE);
	close(zfd);
	close(zro);
	ktap_report("dev_zero_shared", NULL);
}

/* ---- 5. alarm and the interval timers ---- */

static volatile sig_atomic_t alrm_hits;
static volatile int alrm_code, alrm_pid;

static void on_alrm(int sig, siginfo_t *si, void *uc)
{
	alrm_hits++;
	alrm_code = si->si_code;
	alrm_pid = si->si_pid;
}

static void catch_alrm(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_alrm;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGALRM, &sa, NULL);
	alrm_hits = 0;
	alrm_code = alrm_pid = -1;
}

static long k_alarm(unsigned int s)
{
	return syscall(SYS_alarm, s);	/* the kernel's rounding (musl's alarm goes through setitimer) */
}

static const struct itimerval disarm;

static void case_alarm_pause(void)
{
	uint64_t t0, dt;
	int r;

	catch_alrm();
	t0 = now_ns();
	CHECK(k_alarm(1) == 0);
	r = pause();
	dt = now_ns() - t0;
	CHECK(r == -1 && errno == EINTR);
	CHECK(alrm_hits == 1);
	CHECK(alrm_code == SI_KERNEL && alrm_pid == 0);	/* sent by the kernel, as Linux's alarm */
	CHECK(dt >= 990000000ULL && dt < 1500000000ULL);
	printf("    # SIGALRM after %llu ms\n", (unsigned long long)(dt / 1000000));
	CHECK(k_alarm(0) == 0);		/* nothing left */
	ktap_report("alarm_pause_sigalrm", NULL);
}

static void case_alarm_cancel(void)
{
	catch_alrm();
	CHECK(k_alarm(5) == 0);
	CHECK(k_alarm(0) == 5);		/* 4.99 s left: rounded to 5 */
	CHECK(k_alarm(2) == 0);
	sleep_ms(600);
	CHECK(k_alarm(0) == 1);		/* 1.4 s left: to the nearest second */
	CHECK(k_alarm(1) == 0);
	sleep_ms(800);
	CHECK(k_alarm(0) == 1);		/* 0.2 s left: never 0 while pending */
	sleep_ms(400);
	CHECK(alrm_hits == 0);		/* cancelled: nothing came */
	ktap_report("alarm_cancel_returns_seconds_left", NULL);
}

static void case_getitimer_setitimer(void)
{
	struct itimerval v = { { 0, 0 }, { 1, 500000 } }, old, cur;
	long left;

	catch_alrm();
	memset(&old, 0xff, sizeof(old));
	CHECK(setitimer(ITIMER_REAL, &v, &old) == 0);
	CHECK(old.it_value.tv_sec == 0 && old.it_value.tv_usec == 0 && old.it_interval.tv_sec == 0);
	sleep_ms(100);
	CHECK(getitimer(ITIMER_REAL, &cur) == 0);
	left = cur.it_value.tv_sec * 1000000L + cur.it_value.tv_usec;
	CHECK(left > 1000000L && left <= 1400000L);	/* 1.5 s less the 100 ms slept */
	CHECK(cur.it_interval.tv_sec == 0 && cur.it_interval.tv_usec == 0);
	CHECK(cur.it_value.tv_usec >= 0 && cur.it_value.tv_usec < 1000000);
	/* Disarming returns what was left. */
	CHECK(setitimer(ITIMER_REAL, &disarm, &old) == 0);
	left = old.it_value.tv_sec * 1000000L + old.it_value.tv_usec;
	CHECK(left > 1000000L && left <= 1400000L);
	CHECK(getitimer(ITIMER_REAL, &cur) == 0 && cur.it_value.tv_sec == 0 && cur.it_value.tv_usec == 0);
	/* Errors: the timer's number, a bad timeval, bad pointers. */
	CHECK(FAILS(getitimer(3, &cur), EINVAL));
	CHECK(FAILS(setitimer(3, &v, NULL), EINVAL));
	v.it_value.tv_usec = 1000000;
	CHECK(FAILS(setitimer(ITIMER_REAL, &v, NULL), EINVAL));
	v.it_value.tv_usec = 0;
	v.it_interval.tv_sec = -1;
	CHECK(FAILS(setitimer(ITIMER_REAL, &v, NULL), EINVAL));
	CHECK(FAILS(syscall(SYS_setitimer, ITIMER_REAL, (void *)8, NULL), EFAULT));
	CHECK(FAILS(syscall(SYS_getitimer, ITIMER_REAL, (void *)8), EFAULT));
	/* A bad old pointer: EFAULT, but the new setting is in force (Linux's order). */
	v.it_interval.tv_sec = 0;
	v.it_value.tv_sec = 5;
	CHECK(FAILS(syscall(SYS_setitimer, ITIMER_REAL, &v, (void *)8), EFAULT));
	CHECK(getitimer(ITIMER_REAL, &cur) == 0 && cur.it_value.tv_sec >= 4);
	CHECK(setitimer(ITIMER_REAL, &disarm, NULL) == 0);
	/* The CPU-time timers, never armed here, read as zeroes and disarm. */
	memset(&cur, 0xff, sizeof(cur));
	CHECK(getitimer(ITIMER_VIRTUAL, &cur) == 0 && cur.it_value.tv_sec == 0 && cur.it_value.tv_usec == 0);
	CHECK(getitimer(ITIMER_PROF, &cur) == 0 && cur.it_interval.tv_usec == 0);
	CHECK(setitimer(ITIMER_PROF, &disarm, NULL) == 0);
	CHECK(alrm_hits == 0);
	ktap_report("getitimer_setitimer", NULL);
}

static void case_interval_timer(void)
{
	struct itimerval v = { { 0, 50000 }, { 0, 50000 } }, cur, old;
	uint64_t t0, dt;
	int hits;

	catch_alrm();
	t0 = now_ns();
	CHECK(setitimer(ITIMER_REAL, &v, NULL) == 0);
	while (alrm_hits < 5 && now_ns() - t0 < 3000000000ULL)
		pause();
	dt = now_ns() - t0;
	CHECK(alrm_hits >= 5);
	CHECK(dt >= 240000000ULL && dt < 1000000000ULL);	/* 5 periods of 50 ms */
	printf("    # 5 SIGALRMs of a 50 ms timer in %llu ms\n", (unsigned long long)(dt / 1000000));
	CHECK(getitimer(ITIMER_REAL, &cur) == 0);
	CHECK(cur.it_interval.tv_sec == 0 && cur.it_interval.tv_usec == 50000);
	CHECK(cur.it_value.tv_sec == 0 && cur.it_value.tv_usec > 0 && cur.it_value.tv_usec <= 50000);
	CHECK(alrm_code == SI_KERNEL);
	/* Disarmed: the interval goes too, and nothing comes any more. */
	CHECK(setitimer(ITIMER_REAL, &disarm, &old) == 0);
	CHECK(old.it_interval.tv_usec == 50000);
	hits = alrm_hits;
	sleep_ms(200);
	CHECK(alrm_hits == hits);
	CHECK(getitimer(ITIMER_REAL, &cur) == 0 && cur.it_interval.tv_usec == 0 && cur.it_value.tv_usec == 0);
	ktap_report("interval_timer_fires_then_disarmed", NULL);
}

/*
 * Linux re-arms an interval timer when its SIGALRM is delivered, not when
 * it fires: while the signal waits (blocked here), the timer is disarmed.
 */
static void case_interval_rearms_at_delivery(void)
{
	struct itimerval v = { { 0, 20000 }, { 0, 20000 } }, cur;
	sigset_t block, pending;

	catch_alrm();
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	CHECK(sigprocmask(SIG_BLOCK, &block, NULL) == 0);
	CHECK(setitimer(ITIMER_REAL, &v, NULL) == 0);
	sleep_ms(150);
	CHECK(sigpending(&pending) == 0 && sigismember(&pending, SIGALRM));
	CHECK(getitimer(ITIMER_REAL, &cur) == 0);
	CHECK(cur.it_value.tv_sec == 0 && cur.it_value.tv_usec == 0);	/* waits for delivery */
	CHECK(cur.it_interval.tv_usec == 20000);
	CHECK(alrm_hits == 0);
	CHECK(sigprocmask(SIG_UNBLOCK, &block, NULL) == 0);
	CHECK(alrm_hits == 1);			/* one, however many periods went by */
	CHECK(getitimer(ITIMER_REAL, &cur) == 0 && cur.it_value.tv_usec > 0);	/* armed again */
	CHECK(setitimer(ITIMER_REAL, &disarm, NULL) == 0);
	ktap_report("interval_rearms_at_delivery", NULL);
}

static void case_timer_not_inherited(void)
{
	struct itimerval v = { { 1, 0 }, { 2, 0 } }, cur;
	int st;
	pid_t pid;

	catch_alrm();
	CHECK(setitimer(ITIMER_REAL, &v, NULL) == 0);
	pid = fork();
	if (pid == 0) {
		struct itimerval c;
		bool ok = getitimer(ITIMER_REAL, &c) == 0 && c.it_value.tv_sec == 0 &&
			  c.it_value.tv_usec == 0 && c.it_interval.tv_sec == 0;

		ok &= k_alarm(0) == 0;
		_exit(ok ? 0 : 1);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(getitimer(ITIMER_REAL, &cur) == 0 && cur.it_value.tv_sec == 1 && cur.it_interval.tv_sec == 1);
	CHECK(setitimer(ITIMER_REAL, &disarm, NULL) == 0);
	ktap_report("timer_not_inherited_by_fork", NULL);
}

static void case_alarm_kept_across_exec(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { (char *)self_path, "after-exec", NULL };

		k_alarm(3);
		execv(self_path, argv);
		_exit(100);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);	/* the alarm went on, with 3 s left */
	ktap_report("alarm_kept_across_exec", NULL);
}

/* Processes that exit while their timer fires, or about to: the kernel must cope. */
static void case_exit_with_timer_running(void)
{
	const int n = 40;
	int ok = 0;

	catch_alrm();
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			struct itimerval v = { { 0, 1000 }, { 0, 1000 * (i % 20 + 1) } };
			uint64_t t0 = now_ns();

			setitimer(ITIMER_REAL, &v, NULL);
			while (now_ns() - t0 < (uint64_t)(i % 4) * 5000000ULL)
				;	/* sometimes spin past an expiry or two */
			_exit(0);
		}
		if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok++;
	}
	CHECK(ok == n);
	sleep_ms(50);		/* any late expiry would find freed tasks now */
	CHECK(alrm_hits == 0);	/* and none reached the parent */
	ktap_report("exit_with_timer_running", NULL);
}

/* truncate(2) and ftruncate(2): sizes, zeroes past the end, mappings, errors. */
static void case_truncate_ftruncate(void)
{
	int fd = open("/tmp/abi-trunc", O_RDWR | O_CREAT | O_TRUNC, 0644);
	int ro = open("/tmp/abi-trunc", O_RDONLY), dir = open("/tmp", O_RDONLY | O_DIRECTORY);
	int mfd = memfd_create("abi-trunc", 0), p[2];
	char page[4096], buf[16];
	char *m;

	CHECK(fd >= 0 && ro >= 0 && dir >= 0 && mfd >= 0 && pipe(p) == 0);
	memset(page, 'a', sizeof(page));
	for (int i = 0; i < 3; i++)
		CHECK(write(fd, page, sizeof(page)) == (ssize_t)sizeof(page));
	m = mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(m != MAP_FAILED);
	CHECK(m[2 * 4096] == 'a');
	CHECK(ftruncate(fd, 4096 + 100) == 0);
	CHECK(file_size(fd) == 4096 + 100);
	CHECK(m[4096 + 99] == 'a' && m[4096 + 100] == 0);	/* the partial page's tail is zeroed */
	CHECK(ftruncate(fd, 3 * 4096) == 0);			/* growing: zeroes, not old data */
	CHECK(pread(fd, buf, 4, 2 * 4096) == 4 && !memcmp(buf, "\0\0\0\0", 4));
	CHECK(pread(fd, buf, 2, 4096 + 99) == 2 && buf[0] == 'a' && buf[1] == 0);
	munmap(m, 3 * 4096);
	CHECK(truncate("/tmp/abi-trunc", 10) == 0 && file_size(fd) == 10);
	CHECK(ftruncate(mfd, 8192) == 0 && file_size(mfd) == 8192);	/* memfd: sized this way */

	errno = 0;
	CHECK(ftruncate(fd, -1) == -1 && errno == EINVAL);
	CHECK(ftruncate(12345, 0) == -1 && errno == EBADF);
	CHECK(ftruncate(ro, 0) == -1 && errno == EINVAL);	/* not open for writing */
	CHECK(ftruncate(dir, 0) == -1 && errno == EINVAL);
	CHECK(ftruncate(p[1], 0) == -1 && errno == EINVAL);
	CHECK(truncate("/tmp", 0) == -1 && errno == EISDIR);
	CHECK(truncate("/tmp/no-such-file", 0) == -1 && errno == ENOENT);
	CHECK(truncate("/tmp/abi-trunc", -5) == -1 && errno == EINVAL);
	CHECK(truncate((const char *)8, 0) == -1 && errno == EFAULT);
	close(fd); close(ro); close(dir); close(mfd); close(p[0]); close(p[1]);
	unlink("/tmp/abi-trunc");
	ktap_report("truncate_ftruncate", NULL);
}

/* The entries of a directory other than "." and ".." (getdents64). */
static int dir_entries(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_DIRECTORY), n = 0;
	long len;

	if (fd < 0)
		return -1;
	while ((len = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < len; ) {
			const char *name = buf + off + 19;	/* d_ino, d_off, d_reclen, d_type */

			n += strcmp(name, ".") && strcmp(name, "..");
			off += *(unsigned short *)(buf + off + 16);
		}
	close(fd);
	return n;
}

/*
 * O_TMPFILE: an unnamed regular file in a directory of the RAM file
 * system (Linux's tmpfs and ramfs can), read and written like any, never
 * listed; EOPNOTSUPP where the file system cannot (/proc), and Linux's
 * EINVAL and ENOTDIR cases.
 */
static void case_o_tmpfile(void)
{
	int before = dir_entries("/tmp"), fd = open("/tmp", O_TMPFILE | O_RDWR, 0640);
	char buf[16];
	struct stat st;

	CHECK(fd >= 0);
	CHECK(write(fd, "unnamed", 7) == 7 && pread(fd, buf, 7, 0) == 7 && !memcmp(buf, "unnamed", 7));
	CHECK(fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 0 && st.st_size == 7);
	CHECK((st.st_mode & 0777) == (0640 & ~022));
	CHECK(dir_entries("/tmp") == before);
	close(fd);
	fd = open("/tmp", O_TMPFILE | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	errno = 0;
	CHECK(open("/proc", O_TMPFILE | O_RDWR, 0600) == -1 && errno == EOPNOTSUPP);
	CHECK(open("/tmp", O_TMPFILE | O_RDONLY, 0600) == -1 && errno == EINVAL);
	CHECK(open("/tmp", O_TMPFILE | O_RDWR | O_CREAT, 0600) == -1 && errno == EINVAL);
	CHECK(open("/tmp/no-such-dir", O_TMPFILE | O_RDWR, 0600) == -1 && errno == ENOENT);
	fd = open("/tmp/abi-tmpfile-plain", O_RDWR | O_CREAT, 0600);
	CHECK(open("/tmp/abi-tmpfile-plain", O_TMPFILE | O_RDWR, 0600) == -1 && errno == ENOTDIR);
	close(fd);
	unlink("/tmp/abi-tmpfile-plain");
	ktap_report("o_tmpfile", NULL);
}

/* clock_nanosleep (relative, TIMER_ABSTIME, errors) and umask. */
static long ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1000 + (t1.tv_nsec - t0->tv_nsec) / 1000000;
}

static void case_clock_nanosleep_umask(void)
{
	struct timespec t0, req = { 0, 30 * 1000000L }, abs, bad = { 0, -1 };
	struct stat st;
	int fd;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &req, NULL) == 0);
	CHECK(ms_since(&t0) >= 30);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	abs = t0;
	abs.tv_nsec += 40 * 1000000L;
	if (abs.tv_nsec >= 1000000000L) {
		abs.tv_sec++;
		abs.tv_nsec -= 1000000000L;
	}
	CHECK(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, TIMER_ABSTIME, &abs, NULL) == 0);
	CHECK(ms_since(&t0) >= 40);
	CHECK(syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, &req, NULL) == 0);
	errno = 0;
	CHECK(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &bad, NULL) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_clock_nanosleep, 99, 0, &req, NULL) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_clock_nanosleep, CLOCK_THREAD_CPUTIME_ID, 0, &req, NULL) == -1 &&
	      errno == EINVAL);
	CHECK(syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, (void *)8, NULL) == -1 &&
	      errno == EFAULT);

	CHECK(umask(027) == 022);			/* Linux's default */
	CHECK(umask(077) == 027);
	fd = open("/tmp/abi-umask", O_RDWR | O_CREAT | O_TRUNC, 0666);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0600);
	close(fd);
	unlink("/tmp/abi-umask");
	CHECK(mkdir("/tmp/abi-umask-dir", 0777) == 0 && stat("/tmp/abi-umask-dir", &st) == 0 &&
	      (st.st_mode & 0777) == 0700);
	rmdir("/tmp/abi-umask-dir");
	CHECK(umask(0123456) == 077);			/* only the low nine bits are kept */
	CHECK(umask(022) == 0456);
	ktap_report("clock_nanosleep_and_umask", NULL);
}

/* ---- 5. where am I: getcwd, fchdir, readlink, /proc/self/exe ---- */

static long k_getcwd(char *buf, unsigned long size)
{
	return syscall(SYS_getcwd, buf, size);
}

static bool cwd_is(const char *want)
{
	char buf[256];
	long n = k_getcwd(buf, sizeof(buf));

	if (n < 0 || strcmp(buf, want)) {
		printf("    # cwd: %ld \"%s\", expected \"%s\"\n", n, n < 0 ? "" : buf, want);
		return false;
	}
	return n == (long)strlen(want) + 1;	/* the length with the NUL */
}

static void case_getcwd_fchdir(void)
{
	char buf[64];
	int fd;

	CHECK(chdir("/") == 0 && cwd_is("/"));
	mkdir("/tmp/cwd-a", 0755);
	mkdir("/tmp/cwd-a/b", 0755);
	CHECK(chdir("/tmp/cwd-a/b") == 0 && cwd_is("/tmp/cwd-a/b"));
	CHECK(chdir("..") == 0 && cwd_is("/tmp/cwd-a"));
	CHECK(chdir("./b/../b/.") == 0 && cwd_is("/tmp/cwd-a/b"));
	errno = 0;
	CHECK(k_getcwd(buf, 12) == -1 && errno == ERANGE);	/* 12 bytes: no room for the NUL */
	CHECK(k_getcwd(buf, 13) == 13 && !strcmp(buf, "/tmp/cwd-a/b"));
	CHECK(k_getcwd(buf, 0) == -1 && errno == ERANGE);
	CHECK(k_getcwd((char *)8, 64) == -1 && errno == EFAULT);
	/* Through a symlink: the directory's own path, as Linux. */
	unlink("/tmp/cwd-link");
	CHECK(symlink("/tmp/cwd-a", "/tmp/cwd-link") == 0);
	CHECK(chdir("/tmp/cwd-link/b") == 0 && cwd_is("/tmp/cwd-a/b"));
	/* Across a mount point. */
	CHECK(chdir("/proc/self") == 0 && cwd_is("/proc/self"));
	CHECK(chdir("..") == 0 && cwd_is("/proc"));
	/* fchdir */
	fd = open("/tmp/cwd-a", O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0 && fchdir(fd) == 0 && cwd_is("/tmp/cwd-a"));
	close(fd);
	fd = open("/tests/abi_ktap", O_RDONLY);
	CHECK(fd >= 0 && fchdir(fd) == -1 && errno == ENOTDIR);
	close(fd);
	CHECK(fchdir(999) == -1 && errno == EBADF);
	/* A removed cwd has no path. */
	mkdir("/tmp/cwd-gone", 0755);
	CHECK(chdir("/tmp/cwd-gone") == 0 && rmdir("/tmp/cwd-gone") == 0);
	CHECK(k_getcwd(buf, sizeof(buf)) == -1 && errno == ENOENT);
	CHECK(chdir("/") == 0 && cwd_is("/"));
	unlink("/tmp/cwd-link");
	rmdir("/tmp/cwd-a/b");
	rmdir("/tmp/cwd-a");
	ktap_report("getcwd_and_fchdir", NULL);
}

/* Run this program as exec_path from directory dir; it checks /proc/self/exe reads want. */
static int exec_sees_exe(const char *dir, const char *exec_path, const char *want)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (chdir(dir) == 0)
			execl(exec_path, "abi_ktap", "exe-is", want, (char *)NULL);
		_exit(99);
	}
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int exe_is(const char *want)
{
	char buf[256];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n < 0)
		return 2;
	buf[n] = '\0';
	return strcmp(buf, want) ? 1 : 0;
}

static void case_readlink_proc_self_exe(void)
{
	char buf[64];
	int dfd;

	CHECK(readlink("/proc/self/exe", buf, sizeof(buf)) == (ssize_t)strlen(self_path) &&
	      !memcmp(buf, self_path, strlen(self_path)));
	CHECK(exec_sees_exe("/tests", "./abi_ktap", "/tests/abi_ktap") == 0);
	CHECK(exec_sees_exe("/tmp", "../tests/../tests/abi_ktap", "/tests/abi_ktap") == 0);
	unlink("/tmp/abi-exe-link");
	CHECK(symlink("/tests/abi_ktap", "/tmp/abi-exe-link") == 0);
	CHECK(exec_sees_exe("/", "/tmp/abi-exe-link", "/tests/abi_ktap") == 0);
	CHECK(exec_sees_exe("/", "/tmp/abi-exe-link", "/tmp/abi-exe-link") == 1);	/* can fail */

	/* A failed execve leaves the program as it was. */
	{
		static const char bad_elf[] = "\177ELF not really";
		int fd = open("/tmp/abi-bad-elf", O_WRONLY | O_CREAT | O_TRUNC, 0755);

		CHECK(fd >= 0 && write(fd, bad_elf, sizeof(bad_elf)) == sizeof(bad_elf));
		close(fd);
		CHECK(execl("/tmp/abi-bad-elf", "abi-bad-elf", (char *)NULL) == -1 && errno == ENOEXEC);
		unlink("/tmp/abi-bad-elf");
		CHECK(readlink("/proc/self/exe", buf, sizeof(buf)) == (ssize_t)strlen(self_path) &&
		      !memcmp(buf, self_path, strlen(self_path)));
	}

	/* readlink's rules */
	memset(buf, 'x', sizeof(buf));
	CHECK(readlink("/tmp/abi-exe-link", buf, 5) == 5 && !memcmp(buf, "/testx", 6));
	errno = 0;
	CHECK(syscall(SYS_readlink, "/tmp/abi-exe-link", buf, 0) == -1 && errno == EINVAL);
	CHECK(readlink("/tests/abi_ktap", buf, sizeof(buf)) == -1 && errno == EINVAL);
	CHECK(readlink("/tmp/no-such-link", buf, sizeof(buf)) == -1 && errno == ENOENT);
	CHECK(readlink("/tmp/abi-exe-link", (char *)8, sizeof(buf)) == -1 && errno == EFAULT);
	dfd = open("/tmp", O_RDONLY | O_DIRECTORY);
	CHECK(dfd >= 0 && readlinkat(dfd, "abi-exe-link", buf, sizeof(buf)) == 15 &&
	      !memcmp(buf, "/tests/abi_ktap", 15));
	close(dfd);
	unlink("/tmp/abi-exe-link");
	ktap_report("readlink_and_proc_self_exe", NULL);
}

/* ---- 7. mmap's flags and where mmap puts things ---- */

#ifndef MAP_SHARED_VALIDATE
#define MAP_SHARED_VALIDATE	0x03
#endif

static int present_pages(const char *p, int n)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += (pagemap_of(p + i * PAGE) & PM_PRESENT) != 0;
	return k;
}

static void case_mmap_flags(void)
{
	char *p, *q;
	int fd;

	/* MAP_POPULATE faults everything in at once; without it, nothing is there. */
	p = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED && present_pages(p, 16) == 0);
	munmap(p, 16 * PAGE);
	p = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	CHECK(p != MAP_FAILED && present_pages(p, 16) == 16);
	CHECK(p[5 * PAGE] == 0);
	munmap(p, 16 * PAGE);
	fd = open("/tmp/abi-populate", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 8 * PAGE) == 0);
	p = mmap(NULL, 8 * PAGE, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	CHECK(p != MAP_FAILED && present_pages(p, 8) == 8);
	munmap(p, 8 * PAGE);
	/* MAP_SHARED_VALIDATE: MAP_SHARED, and unknown flags refused. */
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED_VALIDATE, fd, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		p[0] = 'v';
		CHECK(pread(fd, &p[1], 1, 0) == 1 && p[1] == 'v');	/* shared with the file */
		munmap(p, PAGE);
	}
	errno = 0;
	CHECK(mmap(NULL, PAGE, PROT_READ, MAP_SHARED_VALIDATE | 0x400000, fd, 0) == MAP_FAILED &&
	      errno == EOPNOTSUPP);
	CHECK(mmap(NULL, PAGE, PROT_READ, MAP_SHARED | 0x400000, fd, 0) != MAP_FAILED);	/* ignored */
	close(fd);
	unlink("/tmp/abi-populate");
	/* No hugetlb pool: ENOMEM, as Linux with none reserved. */
	CHECK(mmap(NULL, 2UL << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0) == MAP_FAILED && errno == ENOMEM);
	/* MAP_GROWSDOWN grows like a stack when touched just below. */
	q = (char *)0x200000000000UL;
	p = mmap(q, 2 * PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_GROWSDOWN | MAP_FIXED_NOREPLACE, -1, 0);
	CHECK(p == q);
	if (p == q) {
		volatile char *below = (volatile char *)((uintptr_t)p - PAGE);

		*below = 'g';			/* one page below its start: it grows */
		CHECK(*below == 'g');
		CHECK(munmap((void *)below, 3 * PAGE) == 0);
	}
	ktap_report("mmap_flags", NULL);
}

/*
 * With the space below mmap_base full, mmap looks above it (Linux's
 * bottom-up fallback). Filled with PROT_NONE mappings of shrinking sizes.
 */
static void case_mmap_fallback_search(void)
{
	static struct { char *p; unsigned long len; } maps[512];
	int n = 0;
	char *first = NULL, *above = NULL;

	for (unsigned long len = 1UL << 40; len >= 64UL << 20 && !above; len >>= 1) {
		while (n < 512) {
			char *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				       -1, 0);

			if (p == MAP_FAILED)
				break;
			maps[n].p = p;
			maps[n++].len = len;
			if (!first)
				first = p;
			else if (p > first) {
				above = p;
				break;
			}
		}
	}
	if (!above)
		printf("    # first %p, %d mappings made\n", (void *)first, n);
	while (n-- > 0)
		munmap(maps[n].p, maps[n].len);
	CHECK(first != NULL);
	CHECK(above != NULL);	/* found room above mmap_base */
	CHECK((unsigned long)above < 0x7ffffffff000UL - (1UL << 20));
	ktap_report("mmap_fallback_search", NULL);
}

/* ---- 6. resource limits ---- */

static void case_rlimits(void)
{
	struct rlimit r, lim8 = { 8, 256 }, saved;
	int fds[16], n = 0, status;
	pid_t pid;

	CHECK(getrlimit(RLIMIT_NOFILE, &saved) == 0 && saved.rlim_cur == 1024 &&
	      saved.rlim_max == 4096);	/* Linux's defaults */
	CHECK(setrlimit(RLIMIT_NOFILE, &lim8) == 0);
	CHECK(getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur == 8 && r.rlim_max == 256);
	for (n = 0; n < 16; n++) {
		fds[n] = open("/dev/null", O_RDONLY);
		if (fds[n] < 0)
			break;
	}
	CHECK(n > 0 && n < 16 && fds[n - 1] == 7 && errno == EMFILE);	/* fds 0..7 only */
	errno = 0;
	CHECK(dup2(0, 8) == -1 && errno == EBADF);
	CHECK(fcntl(0, F_DUPFD, 8) == -1 && errno == EINVAL);
	pid = fork();
	if (pid == 0)
		_exit(getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur == 8 ? 0 : 1);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);	/* fork copies the limits */
	while (n-- > 0)
		close(fds[n]);
	CHECK(setrlimit(RLIMIT_NOFILE, &saved) == 0);
	CHECK(dup2(0, 8) == 8);		/* allowed again */
	close(8);

	r = (struct rlimit){ 10, 5 };
	CHECK(setrlimit(RLIMIT_CORE, &r) == -1 && errno == EINVAL);	/* cur > max */
	r = (struct rlimit){ (1 << 20) + 1, (1 << 20) + 1 };
	CHECK(setrlimit(RLIMIT_NOFILE, &r) == -1 && errno == EPERM);	/* above nr_open */
	CHECK(syscall(SYS_setrlimit, 99, &r) == -1 && errno == EINVAL);
	CHECK(syscall(SYS_setrlimit, RLIMIT_CORE, (void *)8) == -1 && errno == EFAULT);
	CHECK(syscall(SYS_getrlimit, RLIMIT_CORE, (void *)8) == -1 && errno == EFAULT);
	{
		struct rlimit new = { 4096, RLIM_INFINITY }, old;

		CHECK(syscall(SYS_prlimit64, 0, RLIMIT_CORE, &new, &old) == 0 &&
		      old.rlim_cur == 0);
		CHECK(getrlimit(RLIMIT_CORE, &r) == 0 && r.rlim_cur == 4096);
		CHECK(syscall(SYS_prlimit64, 0, RLIMIT_CORE, &old, NULL) == 0);
		CHECK(syscall(SYS_prlimit64, 99999, RLIMIT_CORE, NULL, &old) == -1 &&
		      errno == ESRCH);
	}
	ktap_report("resource_limits", NULL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "after-exec"))
		return (int)k_alarm(0);
	if (argc > 2 && !strcmp(argv[1], "exe-is"))
		return exe_is(argv[2]);
	if (argc > 0 && argv[0][0] == '/')
		self_path = argv[0];
	ktap_begin("abi", 25);
	case_pwrite_pread();
	case_pwritev_preadv();
	case_pwritev2_preadv2();
	case_fsync_family();
	case_populate_write();
	case_populate_errors();
	case_cold_pageout_free();
	case_dev_zero_private();
	case_dev_zero_shared();
	case_alarm_pause();
	case_alarm_cancel();
	case_getitimer_setitimer();
	case_interval_timer();
	case_interval_rearms_at_delivery();
	case_timer_not_inherited();
	case_alarm_kept_across_exec();
	case_exit_with_timer_running();
	case_truncate_ftruncate();
	case_clock_nanosleep_umask();
	case_getcwd_fchdir();
	case_readlink_proc_self_exe();
	case_rlimits();
	case_mmap_flags();
	case_mmap_fallback_search();
	case_o_tmpfile();
	return ktap_finish();
}
