/*
 * mremap, mincore and msync from ring 3 (mm/mremap.c, mm/mincore.c,
 * mm/msync.c; docs/mm/mremap.md): growing and shrinking in place, moves
 * with MREMAP_MAYMOVE and MREMAP_FIXED, MREMAP_DONTUNMAP, a second
 * mapping of shared memory (old_size 0), a THP moved whole, fork after a
 * move, Linux's errno values; mincore on resident, untouched and file
 * pages and its errors; msync's checks. Data is checked after every move.
 * The calls go through syscall(2): musl's mremap() passes new_address
 * only with MREMAP_FIXED (a DONTUNMAP hint would be lost).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ktap.h"

#define PAGE	4096UL
#define SZ_2M	(2UL << 20)

static void *xmremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr)
{
	return (void *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

/* -errno of a failed mremap, or 0 when it succeeded. */
static int mremap_err(void *old, size_t old_len, size_t new_len, int flags, void *new_addr)
{
	void *r = xmremap(old, old_len, new_len, flags, new_addr);

	return r == MAP_FAILED ? -errno : 0;
}

static char *map_anon(void *at, size_t len)
{
	char *p = mmap(at, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A free range of len bytes, aligned to align (mapped and unmapped again). */
static char *free_range(size_t len, size_t align)
{
	char *p = map_anon(NULL, len + align);
	char *a;

	if (!p)
		return NULL;
	a = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	munmap(p, len + align);
	return a;
}

/* Byte i of page k: a pattern that says where it was written. */
static unsigned char byte_of(unsigned long k, unsigned long salt)
{
	return (unsigned char)(k * 13 + salt);
}

static void fill(char *p, unsigned long pages, unsigned long salt)
{
	for (unsigned long k = 0; k < pages; k++) {
		p[k * PAGE] = (char)byte_of(k, salt);
		p[k * PAGE + PAGE - 1] = (char)byte_of(k, salt + 1);
	}
}

static int holds(const char *p, unsigned long pages, unsigned long salt)
{
	for (unsigned long k = 0; k < pages; k++)
		if ((unsigned char)p[k * PAGE] != byte_of(k, salt) ||
		    (unsigned char)p[k * PAGE + PAGE - 1] != byte_of(k, salt + 1))
			return 0;
	return 1;
}

static int mapped(void *p)
{
	unsigned char v;

	return mincore(p, PAGE, &v) == 0;
}

static void case_grow_shrink_in_place(void)
{
	char *p = free_range(16 * PAGE, PAGE);

	CHECK(p && map_anon(p, 4 * PAGE) == p);
	if (!p)
		goto out;
	fill(p, 4, 1);
	CHECK(xmremap(p, 4 * PAGE, 8 * PAGE, 0, NULL) == p);
	CHECK(holds(p, 4, 1));
	CHECK(p[5 * PAGE] == 0 && p[8 * PAGE - 1] == 0);
	p[7 * PAGE] = 7;
	CHECK(xmremap(p, 8 * PAGE, 2 * PAGE, 0, NULL) == p);
	CHECK(holds(p, 2, 1));
	CHECK(!mapped(p + 2 * PAGE) && !mapped(p + 7 * PAGE));
	/* Sizes are rounded up to pages; the same size is a no-op. */
	CHECK(xmremap(p, 2 * PAGE - 100, 3 * PAGE - 100, 0, NULL) == p);
	CHECK(mapped(p + 2 * PAGE) && !mapped(p + 3 * PAGE));
	CHECK(xmremap(p, 3 * PAGE, 3 * PAGE, 0, NULL) == p);
	munmap(p, 3 * PAGE);
out:
	ktap_report("grow_shrink_in_place", NULL);
}

static void case_maymove(void)
{
	char *p = free_range(16 * PAGE, PAGE), *q;

	CHECK(p && map_anon(p, 4 * PAGE) == p && map_anon(p + 4 * PAGE, PAGE) == p + 4 * PAGE);
	if (!p)
		goto out;
	fill(p, 4, 2);
	p[4 * PAGE] = 'x';
	/* Something right after: no room in place. */
	CHECK(mremap_err(p, 4 * PAGE, 8 * PAGE, 0, NULL) == -ENOMEM);
	CHECK(holds(p, 4, 2));
	q = xmremap(p, 4 * PAGE, 8 * PAGE, MREMAP_MAYMOVE, NULL);
	CHECK(q != MAP_FAILED && q != p);
	if (q == MAP_FAILED)
		goto out;
	CHECK(holds(q, 4, 2));
	CHECK(q[6 * PAGE] == 0);
	CHECK(!mapped(p) && !mapped(p + 3 * PAGE));
	CHECK(p[4 * PAGE] == 'x');			/* the neighbour is untouched */
	q[6 * PAGE] = 6;
	munmap(q, 8 * PAGE);
	munmap(p + 4 * PAGE, PAGE);
out:
	ktap_report("maymove", NULL);
}

static void case_fixed(void)
{
	char *p = map_anon(NULL, 8 * PAGE), *q = map_anon(NULL, 8 * PAGE);

	CHECK(p && q);
	if (!p || !q)
		goto out;
	fill(p, 8, 3);
	fill(q, 8, 40);
	/* Onto a mapping: it is replaced. */
	CHECK(xmremap(p, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, q) == q);
	CHECK(holds(q, 8, 3));
	CHECK(!mapped(p));
	/* Shrinking while moving: the tail goes. */
	CHECK(xmremap(q, 8 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, p) == p);
	CHECK(holds(p, 2, 3));
	CHECK(!mapped(q) && !mapped(q + 7 * PAGE) && !mapped(p + 2 * PAGE));
	munmap(p, 2 * PAGE);
out:
	ktap_report("fixed", NULL);
}

static void case_dontunmap(void)
{
	char *p = map_anon(NULL, 4 * PAGE), *hint = free_range(4 * PAGE, PAGE), *q;
	unsigned char vec[4];

	CHECK(p && hint);
	if (!p || !hint)
		goto out;
	fill(p, 4, 4);
	q = xmremap(p, 4 * PAGE, 4 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, hint);
	CHECK(q == hint);		/* a free hint is taken */
	if (q == MAP_FAILED)
		goto out;
	CHECK(holds(q, 4, 4));
	/* The old range stays mapped, with nothing in it: it reads zeroes. */
	CHECK(mincore(p, 4 * PAGE, vec) == 0 && !vec[0] && !vec[3]);
	CHECK(p[0] == 0 && p[3 * PAGE + PAGE - 1] == 0);
	p[PAGE] = 1;
	CHECK(holds(q, 4, 4));
	/* A resize is not allowed, nor DONTUNMAP without MAYMOVE. */
	CHECK(mremap_err(q, 4 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL) == -EINVAL);
	CHECK(mremap_err(q, 4 * PAGE, 4 * PAGE, MREMAP_DONTUNMAP, NULL) == -EINVAL);
	munmap(p, 4 * PAGE);
	munmap(q, 4 * PAGE);
out:
	ktap_report("dontunmap", NULL);
}

/* MAP_SHARED memory: old_size 0 maps the same pages a second time; a move keeps them shared. */
static void case_shared_second_mapping(void)
{
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char *q, *r = NULL;
	int st;

	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		goto out;
	fill(p, 4, 5);
	q = xmremap(p, 0, 4 * PAGE, MREMAP_MAYMOVE, NULL);
	CHECK(q != MAP_FAILED && q != p);
	if (q == MAP_FAILED)
		goto out;
	CHECK(holds(q, 4, 5) && holds(p, 4, 5));
	q[2 * PAGE + 9] = 'q';
	CHECK(p[2 * PAGE + 9] == 'q');
	/* Without MAYMOVE there is nowhere to put it. */
	CHECK(mremap_err(p, 0, 4 * PAGE, 0, NULL) == -ENOMEM);
	/* Moved, it still shares the pages with the other mapping, and with a child. */
	r = xmremap(p, 4 * PAGE, 4 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, free_range(4 * PAGE, PAGE));
	CHECK(r != MAP_FAILED);
	if (r == MAP_FAILED)
		goto out;
	r[PAGE + 3] = 'r';
	CHECK(q[PAGE + 3] == 'r');
	if (fork() == 0) {
		r[3 * PAGE] = 'c';
		_exit(0);
	}
	CHECK(wait(&st) > 0 && WIFEXITED(st));
	CHECK(q[3 * PAGE] == 'c');
	munmap(q, 4 * PAGE);
	munmap(r, 4 * PAGE);
out:
	ktap_report("shared_second_mapping", NULL);
}

/* A 2 MiB-aligned THP moved to a 2 MiB-aligned place: still one huge page (smaps). */
static int anon_huge_kb(const void *addr)
{
	static char buf[1 << 16];
	char head[32], *b, *l;
	int fd = open("/proc/self/smaps", O_RDONLY);
	ssize_t n, len = 0;

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	snprintf(head, sizeof(head), "%08lx-", (unsigned long)(uintptr_t)addr);
	b = strstr(buf, head);
	l = b ? strstr(b, "AnonHugePages:") : NULL;
	return l ? atoi(l + strlen("AnonHugePages:")) : -1;
}

static void case_thp(void)
{
	char *p = free_range(SZ_2M, SZ_2M), *q = NULL;

	CHECK(p && map_anon(p, SZ_2M) == p);
	if (p)
		q = free_range(4 * SZ_2M, SZ_2M);	/* (after p is mapped: not over it) */
	CHECK(q != NULL);
	if (!p || !q)
		goto out;
	madvise(p, SZ_2M, MADV_HUGEPAGE);
	fill(p, SZ_2M / PAGE, 6);
	if (anon_huge_kb(p) != 2048) {
		munmap(p, SZ_2M);
		ktap_report("thp_moves_whole", "no THP for the range (THP off, or no 2 MiB block free)");
		return;
	}
	CHECK(xmremap(p, SZ_2M, SZ_2M, MREMAP_MAYMOVE | MREMAP_FIXED, q) == q);
	CHECK(anon_huge_kb(q) == 2048);
	CHECK(holds(q, SZ_2M / PAGE, 6));
	/* Unaligned: split into pages, the data the same. */
	CHECK(xmremap(q, SZ_2M, SZ_2M, MREMAP_MAYMOVE | MREMAP_FIXED, q + SZ_2M + PAGE) ==
	      q + SZ_2M + PAGE);
	CHECK(anon_huge_kb(q + SZ_2M + PAGE) == 0);
	CHECK(holds(q + SZ_2M + PAGE, SZ_2M / PAGE, 6));
	munmap(q, 4 * SZ_2M);
out:
	ktap_report("thp_moves_whole", NULL);
}

static void case_fork_after_move(void)
{
	char *p = map_anon(NULL, 8 * PAGE), *q = free_range(8 * PAGE, PAGE);
	pid_t pid;
	int st = -1;

	CHECK(p && q);
	if (!p || !q)
		goto out;
	fill(p, 8, 7);
	CHECK(xmremap(p, 8 * PAGE, 8 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, q) == q);
	pid = fork();
	if (pid == 0) {
		int ok = holds(q, 8, 7);

		q[0] = 'c';			/* its own copy */
		_exit(ok && q[0] == 'c' ? 0 : 1);
	}
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
	CHECK(holds(q, 8, 7));
	q[PAGE] = 'p';
	CHECK((unsigned char)q[0] == byte_of(0, 7));
	munmap(q, 8 * PAGE);
out:
	ktap_report("fork_after_move", NULL);
}

/* n pages read-write between two PROT_NONE pages: a VMA of exactly n pages. */
static char *map_isolated(unsigned long n)
{
	char *g = mmap(NULL, (n + 2) * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (g == MAP_FAILED || mprotect(g + PAGE, n * PAGE, PROT_READ | PROT_WRITE))
		return NULL;
	return g + PAGE;
}

static void case_mremap_errors(void)
{
	char *p = map_isolated(4), *hole = free_range(16 * PAGE, PAGE);

	CHECK(p && hole);
	if (!p || !hole)
		goto out;
	fill(p, 4, 8);
	CHECK(mremap_err(p + 1, PAGE, PAGE, 0, NULL) == -EINVAL);
	CHECK(mremap_err(p, PAGE, PAGE, 8, NULL) == -EINVAL);
	CHECK(mremap_err(p, PAGE, PAGE, MREMAP_FIXED, hole) == -EINVAL);
	CHECK(mremap_err(p, PAGE, 0, MREMAP_MAYMOVE, NULL) == -EINVAL);
	CHECK(mremap_err(p, 4 * PAGE, 4 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, p + PAGE) == -EINVAL);
	CHECK(mremap_err(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, hole + 1) == -EINVAL);
	CHECK(mremap_err(p, 0, PAGE, MREMAP_MAYMOVE, NULL) == -EINVAL);	/* private: no duplicate */
	CHECK(mremap_err(hole, PAGE, 2 * PAGE, MREMAP_MAYMOVE, NULL) == -EFAULT);
	CHECK(mremap_err(p, 8 * PAGE, 16 * PAGE, MREMAP_MAYMOVE, NULL) == -EFAULT);
	CHECK(mremap_err(p, PAGE, 1UL << 50, MREMAP_MAYMOVE, NULL) == -ENOMEM);
	CHECK(holds(p, 4, 8));
	munmap(p - PAGE, 6 * PAGE);
out:
	ktap_report("mremap_errors", NULL);
}

/* Write at an offset (no pwrite64 in Quire yet): true when it all went. */
static int put(int fd, const char *s, size_t n, off_t at)
{
	return lseek(fd, at, SEEK_SET) == at && write(fd, s, n) == (ssize_t)n;
}

static void case_mincore(void)
{
	char *p = map_anon(NULL, 10 * PAGE), *f = MAP_FAILED;
	unsigned char vec[8];
	char path[] = "/tmp/mremap_ktap.XXXXXX";
	int fd = mkstemp(path);

	CHECK(p && fd >= 0);
	if (!p || fd < 0)
		goto out;
	CHECK(munmap(p + 8 * PAGE, 2 * PAGE) == 0);	/* a hole after the 8 pages */
	p[0] = 1;
	p[2 * PAGE] = 1;
	(void)*(volatile char *)(p + 5 * PAGE);		/* a read: the zero page, resident too */
	memset(vec, 0xee, sizeof(vec));
	CHECK(mincore(p, 8 * PAGE, vec) == 0);
	CHECK(vec[0] == 1 && vec[1] == 0 && vec[2] == 1 && vec[3] == 0 && vec[5] == 1 && vec[7] == 0);
	CHECK(mincore(p, 8 * PAGE - 1, vec) == 0);	/* a partial page counts */
	/* A file's pages in the page cache count, mapped or not (pages 0 and 2: holes). */
	CHECK(put(fd, "ab", 2, PAGE) && put(fd, "z", 1, 4 * PAGE - 1));
	f = mmap(NULL, 4 * PAGE, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(f != MAP_FAILED);
	if (f != MAP_FAILED) {
		CHECK(mincore(f, 4 * PAGE, vec) == 0);
		CHECK(vec[0] == 0 && vec[1] == 1 && vec[2] == 0 && vec[3] == 1);
		CHECK(f[PAGE] == 'a' && f[0] == 0);
	}
	/* Errors: unaligned start, unmapped or past the top, a bad vec. */
	CHECK(mincore(p + 1, PAGE, vec) == -1 && errno == EINVAL);
	CHECK(mincore(p + 8 * PAGE, PAGE, vec) == -1 && errno == ENOMEM);
	CHECK(mincore(p, 16 * PAGE, vec + 0) == -1 && errno == ENOMEM);	/* runs into a hole */
	CHECK(mincore((void *)0x7ffffffff000UL, 2 * PAGE, vec) == -1 && errno == ENOMEM);
	CHECK(syscall(SYS_mincore, p, PAGE, (void *)0xffff800000000000UL) == -1 && errno == EFAULT);
	CHECK(mincore(p, PAGE, (unsigned char *)8) == -1 && errno == EFAULT);
	CHECK(mincore(p, 0, vec) == 0);
	munmap(p, 8 * PAGE);
	if (f != MAP_FAILED)
		munmap(f, 4 * PAGE);
out:
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	ktap_report("mincore", NULL);
}

static void case_msync(void)
{
	char *p = map_anon(NULL, 4 * PAGE), *f = MAP_FAILED, buf[4] = { 0 };
	char path[] = "/tmp/mremap_ktap.XXXXXX";
	int fd = mkstemp(path);

	CHECK(p && fd >= 0);
	if (!p || fd < 0)
		goto out;
	CHECK(put(fd, "", 1, PAGE - 1));		/* one page long */
	f = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(f != MAP_FAILED);
	if (f != MAP_FAILED) {
		memcpy(f + 100, "sync", 4);
		CHECK(msync(f, PAGE, MS_SYNC) == 0);
		CHECK(pread(fd, buf, 4, 100) == 4 && !memcmp(buf, "sync", 4));
		CHECK(msync(f, PAGE, MS_ASYNC | MS_INVALIDATE) == 0);
	}
	CHECK(msync(p, 4 * PAGE, MS_SYNC) == 0);
	CHECK(msync(p, 4 * PAGE, 0) == 0);
	CHECK(msync(p, 4 * PAGE, 8) == -1 && errno == EINVAL);
	CHECK(msync(p, 4 * PAGE, MS_ASYNC | MS_SYNC) == -1 && errno == EINVAL);
	CHECK(msync(p + 1, PAGE, MS_SYNC) == -1 && errno == EINVAL);
	CHECK(munmap(p + PAGE, PAGE) == 0);
	CHECK(msync(p, 4 * PAGE, MS_SYNC) == -1 && errno == ENOMEM);
	CHECK(msync(p, 4 * PAGE, MS_ASYNC) == -1 && errno == ENOMEM);
	CHECK(msync(p + PAGE, PAGE, MS_SYNC) == -1 && errno == ENOMEM);
	CHECK(msync(p + PAGE, 0, MS_SYNC) == 0);
	munmap(p, 4 * PAGE);
	if (f != MAP_FAILED)
		munmap(f, PAGE);
out:
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	ktap_report("msync", NULL);
}

int main(void)
{
	ktap_begin("mremap", 11);
	case_grow_shrink_in_place();
	case_maymove();
	case_fixed();
	case_dontunmap();
	case_shared_second_mapping();
	case_thp();
	case_fork_after_move();
	case_mremap_errors();
	case_mincore();
	case_msync();
	/* Last: a big grow by moving, copying nothing (the data and the frames go along). */
	{
		size_t len = 64 * PAGE;
		char *p = map_anon(NULL, len), *q;

		CHECK(p != NULL);
		if (p) {
			fill(p, 64, 9);
			q = xmremap(p, len, 256 * PAGE, MREMAP_MAYMOVE, NULL);
			CHECK(q != MAP_FAILED && holds(q, 64, 9) && q[255 * PAGE] == 0);
			if (q != MAP_FAILED)
				munmap(q, 256 * PAGE);
		}
		ktap_report("realloc_like_growth", NULL);
	}
	return ktap_finish();
}
