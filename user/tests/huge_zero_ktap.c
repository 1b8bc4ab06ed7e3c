/*
 * The huge zero page from ring 3 (mm/huge_memory.c; docs/mm/thp.md): a
 * read of an empty 2 MiB block where a THP may go maps the huge zero page
 * with one PMD, as Linux 6.12 does with use_zero_page=1. Checked through
 * what a program sees: /proc/self/pagemap (present, "file" as Linux says
 * of a page that is not anonymous, one frame run for the whole block),
 * smaps (no RSS), /proc/vmstat (thp_zero_page_alloc once, thp_split_pmd),
 * the bytes after a write, fork, mprotect, MADV_DONTNEED of part of it,
 * move_pages (-EFAULT, as for the 4 KiB zero page), use_zero_page=0, and
 * /proc/quire/mm_verify after each case.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ktap.h"
#include "mm_verify.h"
#include "proc_files.h"

#define PAGE	4096UL
#define SZ_2M	(2UL << 20)
#define THP	"/sys/kernel/mm/transparent_hugepage"

#define PM_PRESENT	(1ULL << 63)
#define PM_FILE		(1ULL << 61)
#define PM_EXCLUSIVE	(1ULL << 56)
#define PM_PFN(e)	((e) & ((1ULL << 55) - 1))

static uint64_t pagemap(const void *addr)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd >= 0) {
		if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)addr / PAGE * 8)) != sizeof(e))
			e = 0;
		close(fd);
	}
	return e;
}

/* The smaps field (kB) of the VMA starting at addr, or -1. */
static long smaps_kb(const void *addr, const char *field)
{
	static char buf[1 << 16];
	char head[32], *b, *l, *next;

	if (slurp("/proc/self/smaps", buf, sizeof(buf)) <= 0)
		return -1;
	snprintf(head, sizeof(head), "%08lx-", (unsigned long)(uintptr_t)addr);
	b = strstr(buf, head);
	if (!b)
		return -1;
	next = strstr(b + 1, "VmFlags:");
	l = strstr(b, field);
	return l && (!next || l < next) ? atol(l + strlen(field)) : -1;
}

/*
 * An anonymous private 2 MiB block, 2 MiB-aligned, MADV_HUGEPAGE (the
 * mapping in *map), its first byte read when read: NULL if any step failed.
 */
static char *huge_block(char **map, bool read)
{
	char *p = mmap(NULL, 2 * SZ_2M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	char *a;

	if (p == MAP_FAILED)
		return NULL;
	a = (char *)(((uintptr_t)p + SZ_2M - 1) & ~(SZ_2M - 1));
	munmap(p, (size_t)(a - p));
	munmap(a + SZ_2M, (size_t)(p + 2 * SZ_2M - (a + SZ_2M)));
	*map = a;
	if (madvise(a, SZ_2M, MADV_HUGEPAGE))
		return NULL;
	if (read)
		(void)*(volatile char *)a;
	return a;
}

/* Every byte of [p, p + len) is zero. */
static int all_zero(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i += 512)
		if (p[i] || p[i + 511])
			return 0;
	return 1;
}

/* Is the whole block the huge zero page, as pagemap says: one run of frames, "file". */
static int maps_huge_zero(const char *p)
{
	uint64_t first = pagemap(p), last = pagemap(p + SZ_2M - PAGE);

	return (first & PM_PRESENT) && (first & PM_FILE) && !(first & PM_EXCLUSIVE) &&
	       (last & PM_PRESENT) && PM_PFN(first) % 512 == 0 &&
	       PM_PFN(last) == PM_PFN(first) + 511;
}

static void case_read_maps_it(void)
{
	long allocs = vmstat("thp_zero_page_alloc");
	char *map = NULL, *p = huge_block(&map, false), *q, *map2 = NULL;
	volatile char c;

	CHECK(p != NULL);
	if (!p)
		goto out;
	c = p[5 * PAGE];		/* one read, of a page in the middle */
	(void)c;
	CHECK(maps_huge_zero(p));
	CHECK(all_zero(p, SZ_2M));
	CHECK(smaps_kb(map, "Rss:") == 0 && smaps_kb(map, "AnonHugePages:") == 0);
	/* A second block maps the same frames; the page was made once in all. */
	q = huge_block(&map2, false);
	CHECK(q != NULL);
	if (q) {
		c = q[0];
		CHECK(maps_huge_zero(q) && PM_PFN(pagemap(q)) == PM_PFN(pagemap(p)));
		munmap(map2, SZ_2M);
	}
	CHECK(allocs >= 0 && vmstat("thp_zero_page_alloc") == (allocs ? allocs : 1));
	munmap(map, SZ_2M);
	CHECK(read_mm_verify() == 0);
out:
	ktap_report("read_maps_huge_zero_page", NULL);
}

/* A write splits the PMD: the written page is the process's own 4 KiB page, the rest zero. */
static void case_write_splits(void)
{
	long splits = vmstat("thp_split_pmd");
	char *map = NULL, *p = huge_block(&map, true);

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK(maps_huge_zero(p));
	p[7 * PAGE + 3] = 42;
	CHECK(vmstat("thp_split_pmd") == splits + 1);
	CHECK(p[7 * PAGE + 3] == 42 && all_zero(p, 7 * PAGE) &&
	      all_zero(p + 8 * PAGE, SZ_2M - 8 * PAGE));
	CHECK((pagemap(p + 7 * PAGE) & (PM_PRESENT | PM_FILE | PM_EXCLUSIVE)) ==
	      (PM_PRESENT | PM_EXCLUSIVE));
	/* The others map the 4 KiB zero page now: present, not anonymous-exclusive. */
	CHECK((pagemap(p) & PM_PRESENT) && !(pagemap(p) & PM_EXCLUSIVE));
	CHECK(smaps_kb(map, "Rss:") == 4 && smaps_kb(map, "AnonHugePages:") == 0);
	munmap(map, SZ_2M);
	CHECK(read_mm_verify() == 0);
out:
	ktap_report("write_splits_to_small_pages", NULL);
}

/* fork shares it; a write on either side is seen on that side only. */
static void case_fork(void)
{
	char *map = NULL, *p = huge_block(&map, true);
	int status = -1;
	pid_t pid;

	CHECK(p != NULL);
	if (!p)
		goto out;
	pid = fork();
	if (pid == 0) {
		int ok = maps_huge_zero(p) && all_zero(p, SZ_2M);

		p[SZ_2M - 1] = 1;
		ok = ok && p[SZ_2M - 1] == 1 && all_zero(p, SZ_2M - PAGE);
		_exit(ok ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK(maps_huge_zero(p) && all_zero(p, SZ_2M));
	p[0] = 2;
	CHECK(p[0] == 2 && all_zero(p + PAGE, SZ_2M - PAGE));
	munmap(map, SZ_2M);
	CHECK(read_mm_verify() == 0);
out:
	ktap_report("fork_shares_it", NULL);
}

/* mprotect keeps it read-only and mapped; DONTNEED of part of it leaves zeroes. */
static void case_mprotect_and_dontneed(void)
{
	char *map = NULL, *p = huge_block(&map, true);
	volatile char c;

	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK(mprotect(p, SZ_2M, PROT_READ) == 0 && maps_huge_zero(p));
	CHECK(mprotect(p, SZ_2M, PROT_READ | PROT_WRITE) == 0 && maps_huge_zero(p));
	p[PAGE] = 5;			/* writable again: by a copy of one page */
	CHECK(p[PAGE] == 5 && p[0] == 0);
	CHECK(madvise(p + SZ_2M / 2, SZ_2M / 2, MADV_DONTNEED) == 0);
	CHECK(p[PAGE] == 5 && all_zero(p + SZ_2M / 2, SZ_2M / 2));
	munmap(map, SZ_2M);
	/* Zapped whole: a second block read and then unmapped at once. */
	p = huge_block(&map, false);
	CHECK(p != NULL);
	if (p) {
		c = p[SZ_2M - 1];
		(void)c;
		CHECK(maps_huge_zero(p) && madvise(p, SZ_2M, MADV_DONTNEED) == 0);
		CHECK(!(pagemap(p) & PM_PRESENT));
		munmap(map, SZ_2M);
	}
	CHECK(read_mm_verify() == 0);
out:
	ktap_report("mprotect_and_dontneed", NULL);
}

/* move_pages: -EFAULT for its pages, as Linux for both zero pages; nothing moves. */
static void case_move_pages(void)
{
	char *map = NULL, *p = huge_block(&map, true);
	void *pages[2];
	int nodes[2] = { 1, 1 }, status[2] = { 99, 99 };
	long r;

	CHECK(p != NULL);
	if (!p)
		goto out;
	pages[0] = p;
	pages[1] = p + 9 * PAGE;
	r = syscall(SYS_move_pages, 0, 2, pages, NULL, status, 0);
	CHECK(r == 0 && status[0] == -EFAULT && status[1] == -EFAULT);
	status[0] = status[1] = 99;
	r = syscall(SYS_move_pages, 0, 2, pages, nodes, status, 0);
	CHECK(r == 0 && status[0] == -EFAULT && status[1] == -EFAULT);
	CHECK(maps_huge_zero(p));
	munmap(map, SZ_2M);
	CHECK(read_mm_verify() == 0);
out:
	ktap_report("move_pages_says_efault", NULL);
}

/* use_zero_page=0: a read maps the 4 KiB zero page only (the next page is not populated). */
static void case_switch_off(void)
{
	char *map = NULL, *p;

	CHECK(put(THP "/use_zero_page", "0") == 1);
	p = huge_block(&map, true);
	CHECK(p != NULL);
	if (p) {
		CHECK((pagemap(p) & PM_PRESENT) && !(pagemap(p) & PM_FILE));
		CHECK(!(pagemap(p + PAGE) & PM_PRESENT));
		munmap(map, SZ_2M);
	}
	CHECK(put(THP "/use_zero_page", "1") == 1);
	CHECK(read_mm_verify() == 0);
	ktap_report("use_zero_page_0_maps_small_zero_page", NULL);
}

int main(void)
{
	ktap_begin("huge_zero", 6);
	if (put(THP "/enabled", "madvise") < 0)
		printf("    # could not set THP enabled=madvise\n");
	case_read_maps_it();
	case_write_splits();
	case_fork();
	case_mprotect_and_dontneed();
	case_move_pages();
	case_switch_off();
	return ktap_finish();
}
