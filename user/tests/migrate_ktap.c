/*
 * Page migration from ring 3 (mm/migrate.c, mm/move_pages.c): move_pages
 * in query and move mode, its per-page statuses and its errors;
 * migrate_pages; what moves keep (the bytes, write access, sharing after
 * fork, a shared mapping's page seen by both processes) for small pages, a
 * 64 KiB mTHP and a 2 MiB THP; a thread reading the pages while they move
 * back and forth; /proc/vmstat's counters; and /proc/quire/mm_verify
 * (invariant 5: no migration entry left behind). Needs nodes 0, 1 and 2
 * with memory (topology numa3). Job migrate-numa3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "mm_verify.h"
#include "proc_files.h"

#define MPOL_MF_MOVE		(1 << 1)
#define MPOL_MF_MOVE_ALL	(1 << 2)
#define PAGE			4096UL
#define THP_DIR			"/sys/kernel/mm/transparent_hugepage"

static long move_pages(int pid, unsigned long n, void **pages, const int *nodes, int *status,
		       int flags)
{
	return syscall(SYS_move_pages, pid, n, pages, nodes, status, flags);
}

static long migrate_pages(int pid, unsigned long maxnode, const unsigned long *old,
			  const unsigned long *new)
{
	return syscall(SYS_migrate_pages, pid, maxnode, old, new);
}

/* The node of the page at p (query mode), or its negative status. */
static int node_of(void *p)
{
	int status = -1000;

	if (move_pages(0, 1, &p, NULL, &status, 0))
		return -1000;
	return status;
}

/* Move n pages from p on to node: the call's result; *moved: how many statuses say node. */
static long move_range(char *p, unsigned long n, int node, int flags, int *moved)
{
	void *pages[512];
	int nodes[512], status[512];
	long ret;

	for (unsigned long i = 0; i < n; i++) {
		pages[i] = p + i * PAGE;
		nodes[i] = node;
		status[i] = -1000;
	}
	ret = move_pages(0, n, pages, nodes, status, flags);
	*moved = 0;
	for (unsigned long i = 0; i < n; i++)
		*moved += status[i] == node;
	return ret;
}

static void fill(char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i += 64)
		p[i] = (char)(seed + i / 64 * 7);
}

static int same(const char *p, size_t len, unsigned seed)
{
	for (size_t i = 0; i < len; i += 64)
		if (p[i] != (char)(seed + i / 64 * 7))
			return 0;
	return 1;
}

static int write_setting(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	close(fd);
	return ok ? 0 : -1;
}

/* ---- cases ---- */

static void query_statuses(void)
{
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *pages[4];
	int status[4] = { -1000, -1000, -1000, -1000 };
	volatile char c;

	CHECK(p != MAP_FAILED);
	p[0] = 1;			/* a page */
	c = p[2 * PAGE];		/* the zero page */
	(void)c;
	munmap(p + 3 * PAGE, PAGE);	/* no VMA */
	pages[0] = p;
	pages[1] = p + PAGE;		/* nothing mapped */
	pages[2] = p + 2 * PAGE;
	pages[3] = p + 3 * PAGE;
	CHECK(move_pages(0, 4, pages, NULL, status, 0) == 0);
	CHECK(status[0] >= 0 && status[0] <= 2);
	CHECK(status[1] == -ENOENT);
	CHECK(status[2] == -EFAULT);
	CHECK(status[3] == -EFAULT);
	munmap(p, 3 * PAGE);
	ktap_report("query_statuses", NULL);
}

static void errors(void)
{
	char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *pages[1] = { p };
	int node = 1, bad = 7, neg = -1, status = -1000;
	unsigned long none = 0, one = 1;

	p[0] = 1;
	errno = 0;
	CHECK(move_pages(0, 1, pages, &node, &status, 8) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(move_pages(0, 1, pages, &bad, &status, MPOL_MF_MOVE) == -1 && errno == ENODEV);
	errno = 0;
	CHECK(move_pages(0, 1, pages, &neg, &status, MPOL_MF_MOVE) == -1 && errno == ENODEV);
	errno = 0;
	CHECK(move_pages(999999, 1, pages, &node, &status, MPOL_MF_MOVE) == -1 && errno == ESRCH);
	errno = 0;
	CHECK(move_pages(0, 1, (void **)8, &node, &status, MPOL_MF_MOVE) == -1 && errno == EFAULT);
	errno = 0;
	CHECK(move_pages(0, 1, pages, NULL, (int *)8, 0) == -1 && errno == EFAULT);
	errno = 0;
	CHECK(migrate_pages(0, 8, &one, &none) == -1 && errno == EINVAL);	/* no target */
	errno = 0;
	CHECK(migrate_pages(999999, 8, &one, &one) == -1 && errno == ESRCH);
	munmap(p, PAGE);
	ktap_report("errors", NULL);
}

/* Small pages round the three nodes: the bytes stay, the statuses say where. */
static void small_pages_round_nodes(void)
{
	unsigned long n = 32;
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long before = vmstat("pgmigrate_success");
	int moved;

	CHECK(p != MAP_FAILED);
	fill(p, n * PAGE, 3);
	for (int node = 1; node <= 3; node++) {
		int target = node % 3;

		CHECK(move_range(p, n, target, MPOL_MF_MOVE, &moved) == 0);
		CHECK(moved == (int)n);
		CHECK(node_of(p) == target && node_of(p + (n - 1) * PAGE) == target);
		CHECK(same(p, n * PAGE, 3));
	}
	p[5] = 9;			/* still writable after the moves */
	CHECK(p[5] == 9);
	CHECK(vmstat("pgmigrate_success") >= before + 3 * (long)n - (long)n);
	munmap(p, n * PAGE);
	ktap_report("small_pages_round_nodes", NULL);
}

/* Two pages of one 64 KiB folio in one call: the second is -EBUSY (taken), as Linux. */
static void mthp_moves_whole(void)
{
	char path[128];
	char *raw, *p;
	void *pages[2];
	int nodes[2] = { 1, 1 }, status[2], moved;
	long before = vmstat("pgmigrate_success");

	snprintf(path, sizeof(path), THP_DIR "/hugepages-64kB/enabled");
	CHECK(write_setting(path, "always") == 0);
	raw = mmap(NULL, 256 * 1024, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p = (char *)(((uintptr_t)raw + 65535) & ~65535UL);
	p[0] = 1;		/* the fault maps one 64 KiB folio */
	fill(p, 65536, 11);
	CHECK(move_range(p, 1, 0, MPOL_MF_MOVE, &moved) == 0);	/* onto node 0 first */
	CHECK(node_of(p + 15 * PAGE) == 0);
	pages[0] = p;
	pages[1] = p + 5 * PAGE;
	CHECK(move_pages(0, 2, pages, nodes, status, MPOL_MF_MOVE) == 0);
	CHECK(status[0] == 1);
	CHECK(status[1] == -EBUSY);
	/* The whole folio moved: every page is on node 1 now. */
	for (int i = 0; i < 16; i++)
		CHECK(node_of(p + i * PAGE) == 1);
	CHECK(same(p, 65536, 11));
	CHECK(vmstat("pgmigrate_success") >= before + 16);
	CHECK(write_setting(path, "never") == 0);
	munmap(raw, 256 * 1024);
	ktap_report("mthp_moves_whole", NULL);
}

static void thp_moves(void)
{
	size_t len = 4UL << 20;
	char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
	long before = vmstat("thp_migration_success");
	int moved;

	p = (char *)(((uintptr_t)raw + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	CHECK(write_setting(THP_DIR "/enabled", "madvise") == 0);
	CHECK(madvise(p, 2UL << 20, MADV_HUGEPAGE) == 0);
	fill(p, 2UL << 20, 21);
	CHECK(smaps_anon_huge_kb(p) == 2048);
	moved = node_of(p);
	CHECK(move_range(p, 1, moved == 2 ? 1 : 2, MPOL_MF_MOVE, &moved) == 0);
	CHECK(moved == 1);
	CHECK(node_of(p + (2UL << 20) - PAGE) == node_of(p));
	CHECK(same(p, 2UL << 20, 21));
	CHECK(vmstat("thp_migration_success") == before + 1);
	/* Moved with a PMD migration entry: still mapped by one PMD, as on Linux. */
	CHECK(smaps_anon_huge_kb(p) == 2048);
	munmap(raw, len);
	ktap_report("thp_moves", NULL);
}

/* After fork a page is shared: -EACCES without MOVE_ALL; with it both keep their view and COW works. */
static void shared_after_fork(void)
{
	char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int pipefd[2], status, target;
	pid_t pid;
	char c;

	p[0] = 'a';
	target = node_of(p) == 1 ? 2 : 1;
	CHECK(pipe(pipefd) == 0);
	pid = fork();
	if (pid == 0) {
		int ok;

		read(pipefd[0], &c, 1);		/* the parent moved it */
		ok = p[0] == 'a' && node_of(p) == target;
		p[0] = 'c';			/* copies: the parent keeps 'a' */
		_exit(ok && p[0] == 'c' ? 0 : 1);
	}
	CHECK(move_range(p, 1, target, MPOL_MF_MOVE, &status) == 0);
	CHECK(status == 0);		/* -EACCES: not moved */
	CHECK(move_range(p, 1, target, MPOL_MF_MOVE_ALL, &status) == 0);
	CHECK(status == 1);
	write(pipefd[1], "x", 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK(p[0] == 'a');		/* the child's write copied the page */
	p[0] = 'b';
	CHECK(p[0] == 'b');
	close(pipefd[0]);
	close(pipefd[1]);
	munmap(p, PAGE);
	ktap_report("shared_after_fork", NULL);
}

/* A MAP_SHARED page moves; the other process sees the same page (and writes) after. */
static void shared_mapping(void)
{
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status, wst, target;
	pid_t pid;

	fill(p, 4 * PAGE, 31);
	target = node_of(p) == 2 ? 0 : 2;
	pid = fork();
	if (pid == 0) {
		while (*(volatile char *)(p + 3 * PAGE + 64) != 'z')
			usleep(1000);
		/* Read first: fork copied no entries of a shared VMA (Linux's vma_needs_copy). */
		_exit(same(p, 3 * PAGE, 31) && node_of(p) == target ? 0 : 1);
	}
	CHECK(move_range(p, 4, target, MPOL_MF_MOVE_ALL, &status) == 0);
	CHECK(status == 4);
	p[3 * PAGE + 64] = 'z';		/* through the new page: the child must see it */
	CHECK(waitpid(pid, &wst, 0) == pid && WIFEXITED(wst) && WEXITSTATUS(wst) == 0);
	munmap(p, 4 * PAGE);
	ktap_report("shared_mapping", NULL);
}

static volatile int stop_reader;
static volatile long reader_bad;

static void *reader(void *arg)
{
	volatile uint64_t *x = arg;

	while (!stop_reader)
		for (int i = 0; i < 8; i++)
			if (x[i * 512] != (uint64_t)i * 0x0101010101010101ULL)
				reader_bad++;
	return NULL;
}

/* A thread reads the pages while they move between nodes 200 times. */
static void moves_under_reader(void)
{
	uint64_t *p = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	pthread_t t;
	int moved, fails = 0;

	for (int i = 0; i < 8; i++)
		p[i * 512] = (uint64_t)i * 0x0101010101010101ULL;
	CHECK(pthread_create(&t, NULL, reader, p) == 0);
	for (int round = 0; round < 200; round++) {
		long r = move_range((char *)p, 8, round % 3, MPOL_MF_MOVE_ALL, &moved);

		fails += r != 0;	/* > 0: busy after every pass (best effort, as Linux) */
	}
	stop_reader = 1;
	pthread_join(t, NULL);
	CHECK(reader_bad == 0);
	CHECK(fails < 20);
	CHECK(node_of(p) == 199 % 3);
	munmap(p, 8 * PAGE);
	ktap_report("moves_under_reader", NULL);
}

static void migrate_pages_moves_all(void)
{
	unsigned long n = 16, from = 1UL << 0, to = 1UL << 2, back = 1UL << 0;
	char *p = mmap(NULL, n * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int moved;

	fill(p, n * PAGE, 41);
	CHECK(move_range(p, n, 0, MPOL_MF_MOVE, &moved) == 0 && moved == (int)n);
	CHECK(migrate_pages(0, 8, &from, &to) == 0);
	for (unsigned long i = 0; i < n; i++)
		CHECK(node_of(p + i * PAGE) == 2);
	CHECK(same(p, n * PAGE, 41));
	/* A mask of another size: pages already on a node of new stay. */
	from = (1UL << 2) | (1UL << 1);
	CHECK(migrate_pages(0, 8, &from, &back) == 0);
	CHECK(node_of(p) == 0);
	CHECK(same(p, n * PAGE, 41));
	munmap(p, n * PAGE);
	ktap_report("migrate_pages_moves_all", NULL);
}

int main(void)
{
	ktap_begin("migrate", 10);
	query_statuses();
	errors();
	small_pages_round_nodes();
	mthp_moves_whole();
	thp_moves();
	shared_after_fork();
	shared_mapping();
	moves_under_reader();
	migrate_pages_moves_all();
	CHECK(read_mm_verify() == 0);
	ktap_report("mm_verify_clean", NULL);
	return ktap_finish();
}
