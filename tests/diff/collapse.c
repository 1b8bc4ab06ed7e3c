/*
 * MADV_COLLAPSE of private anonymous memory: a PTE-mapped THP (made so by
 * an mprotect of one of its pages), small pages faulted one by one with
 * holes among them, a block shared with a forked child (each side keeps
 * its bytes), a range that is already PMD-mapped, one that is too small or
 * unaligned, and the errors: a hole in the range, MADV_NOHUGEPAGE, a block
 * with no page table, a page held by a pipe (vmsplice). Whether a block
 * is a THP is read from /proc/self/smaps' AnonHugePages of its VMA.
 */
#include "diff.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define PAGE	4096UL
#define THP	(2UL << 20)
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

/* AnonHugePages (kB) of the VMA that holds p, or -1. */
static long anon_huge_kb(const void *p)
{
	return smaps_kb(p, "AnonHugePages:");
}

/* A 2 MiB-aligned block inside a fresh mapping of 3 blocks (the rest unmapped). */
static char *aligned_block(size_t blocks)
{
	char *raw = mmap(NULL, (blocks + 1) * THP, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED) {
		say("mmap failed");
		exit(1);
	}
	p = (char *)(((uintptr_t)raw + THP - 1) & ~(THP - 1));
	if (p > raw)
		munmap(raw, (size_t)(p - raw));
	munmap(p + blocks * THP, (size_t)(raw + THP - p));
	return p;
}

static int pattern_ok(const char *p, size_t len, int seed)
{
	for (size_t i = 0; i < len; i += PAGE)
		if (p[i] != (char)(i / PAGE + seed) || p[i + PAGE - 1] != (char)(i / PAGE + seed))
			return 0;
	return 1;
}

static void fill(char *p, size_t len, int seed)
{
	for (size_t i = 0; i < len; i += PAGE) {
		p[i] = (char)(i / PAGE + seed);
		p[i + PAGE - 1] = (char)(i / PAGE + seed);
	}
}

static void collapse(const char *label, char *p, size_t len)
{
	show(label, madvise(p, len, MADV_COLLAPSE));
}

static void thp_state(const char *label, char *p)
{
	say("%s: AnonHugePages %ld kB", label, anon_huge_kb(p));
}

static void pte_mapped_thp(void)
{
	char *p = aligned_block(1);

	say("-- a PTE-mapped THP");
	madvise(p, THP, MADV_HUGEPAGE);
	fill(p, THP, 1);
	thp_state("after the first touch", p);
	mprotect(p + PAGE, PAGE, PROT_READ);
	mprotect(p + PAGE, PAGE, PROT_READ | PROT_WRITE);
	thp_state("after mprotect of one page and back", p);
	collapse("collapse", p, THP);
	thp_state("after collapse", p);
	yesno("the bytes kept", pattern_ok(p, THP, 1));
	collapse("collapse again (PMD-mapped already)", p, THP);
	munmap(p, THP);
}

static void small_pages(void)
{
	char *p = aligned_block(2);

	say("-- small pages with holes");
	madvise(p, 2 * THP, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < THP; i += 3 * PAGE)
		p[i] = 'a';
	p[THP] = 'b';
	thp_state("faulted by pages", p);
	collapse("collapse, MADV_NOHUGEPAGE", p, THP);
	madvise(p, 2 * THP, MADV_HUGEPAGE);
	collapse("collapse", p, 2 * THP);
	thp_state("after collapse", p);
	{
		int ok = 1;

		for (size_t i = 0; i < THP; i += PAGE)
			ok &= p[i] == (i % (3 * PAGE) ? 0 : 'a');
		yesno("the bytes kept, holes zero", ok && p[THP] == 'b' && !p[THP + PAGE]);
	}
	munmap(p, 2 * THP);
}

static void shared_with_child(void)
{
	char *p = aligned_block(1);
	int to_child[2], to_parent[2], status;
	char c;
	pid_t pid;

	say("-- shared with a forked child");
	madvise(p, THP, MADV_NOHUGEPAGE);
	fill(p, THP, 3);
	madvise(p, THP, MADV_HUGEPAGE);
	pipe(to_child);
	pipe(to_parent);
	pid = fork();
	if (pid == 0) {
		read(to_child[0], &c, 1);
		_exit(pattern_ok(p, THP, 3) ? 0 : 1);
	}
	collapse("collapse in the parent, every page COW-shared", p, THP);
	thp_state("the parent", p);
	p[5 * PAGE] = 3 + 5;	/* one page the parent's own now, writable */
	collapse("collapse after the parent wrote one page", p, THP);
	thp_state("the parent", p);
	fill(p, THP, 9);
	write(to_child[1], "x", 1);
	waitpid(pid, &status, 0);
	say("the child's bytes as they were: %s", WEXITSTATUS(status) == 0 ? "yes" : "no");
	yesno("the parent's new bytes", pattern_ok(p, THP, 9));
	close(to_child[0]);
	close(to_child[1]);
	close(to_parent[0]);
	close(to_parent[1]);
	munmap(p, THP);
}

static void errors(void)
{
	char *p = aligned_block(2), buf[PAGE];
	struct iovec iov;
	int fds[2];

	say("-- ranges and errors");
	madvise(p, 2 * THP, MADV_HUGEPAGE | 0);
	collapse("nothing faulted (no page table)", p, THP);
	madvise(p, 2 * THP, MADV_NOHUGEPAGE);
	p[0] = 1;
	madvise(p, 2 * THP, MADV_HUGEPAGE);
	collapse("less than 2 MiB", p, THP - PAGE);
	collapse("an unaligned start", p + PAGE, THP);
	collapse("unaligned start and length", p + PAGE, THP - PAGE);
	collapse("a few pages inside one block", p + PAGE, 3 * PAGE);
	munmap(p + THP, THP);
	collapse("a range with a hole after it", p, 2 * THP);
	thp_state("the block before the hole", p);
	munmap(p, THP);

	p = aligned_block(1);
	madvise(p, THP, MADV_NOHUGEPAGE);
	fill(p, THP, 5);
	madvise(p, THP, MADV_HUGEPAGE);
	pipe(fds);
	iov = (struct iovec){ p + 7 * PAGE, PAGE };
	show("vmsplice one page", syscall(SYS_vmsplice, fds[1], &iov, 1, 0));
	collapse("collapse while a pipe holds the page", p, THP);
	thp_state("after it", p);
	show("read the pipe", read(fds[0], buf, PAGE));
	collapse("collapse once the pipe let it go", p, THP);
	thp_state("after it", p);
	yesno("the bytes kept", pattern_ok(p, THP, 5));
	close(fds[0]);
	close(fds[1]);
	munmap(p, THP);
	show("an unmapped range", madvise(p, THP, MADV_COLLAPSE));
}

int main(void)
{
	diff_begin("collapse");
	pte_mapped_thp();
	small_pages();
	shared_with_child();
	errors();
	return 0;
}
