/*
 * Poisoned memory from ring 3 (mm/memory-failure.c, docs/mm/memory-failure.md),
 * through MADV_HWPOISON, which runs memory_failure() on a page as if it had
 * a memory error: the caller gets SIGBUS BUS_MCEERR_AR at the page (si_addr,
 * si_addr_lsb 12), later touches of it too, the other pages keep their
 * bytes, a large folio loses only that page, a forked child that shares it
 * gets SIGBUS when it touches it, a file page reads as EIO, the frame is
 * never handed out again, and /proc/quire/mm_verify stays 0; and
 * MADV_SOFT_OFFLINE, which moves the page to another frame instead. Job
 * hwpoison-numa3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ktap.h"
#include "mm_verify.h"
#include "hwpoison_user.h"

/* madvise(MADV_HWPOISON) on one page: did it raise SIGBUS AR for exactly that page? */
static int poison(void *p)
{
	buses = 0;
	bus_code = 0;
	if (sigsetjmp(env, 1) == 0) {
		if (madvise(p, PAGE, MADV_HWPOISON))
			return -errno;
		return 0;	/* no SIGBUS */
	}
	return bus_code == BUS_MCEERR_AR && bus_addr == p && bus_lsb == 12 ? 1 : 2;
}

static uint64_t poisoned_pfn;

/* The node of the page at p (move_pages' query), or -1. */
static int node_of(void *p)
{
	int status = -1;

	return syscall(SYS_move_pages, 0, 1UL, &p, NULL, &status, 0) ? -1 : status;
}

/* /sys/devices/system/node/nodeN/memory_failure/<name> (-1: not there). */
static long mf_stat(int nid, const char *name)
{
	char path[96], buf[32] = "";
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/memory_failure/%s", nid, name);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static void case_anonymous_page(void)
{
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long corrupted = hardware_corrupted_kb(), recovered, total;
	uint64_t e;
	int ok = 1, nid;

	CHECK(p != MAP_FAILED && corrupted >= 0);
	memset(p, 'a', 4 * PAGE);
	poisoned_pfn = PM_PFN(pagemap_of(p + PAGE));
	CHECK(poisoned_pfn != 0);
	nid = node_of(p + PAGE);
	recovered = mf_stat(nid, "recovered");
	total = mf_stat(nid, "total");
	CHECK(nid >= 0 && recovered >= 0 && total >= recovered && mf_stat(nid, "failed") >= 0 &&
	      mf_stat(nid, "ignored") >= 0 && mf_stat(nid, "delayed") == 0);
	CHECK(poison(p + PAGE) == 1);		/* the caller hears of it at once */
	CHECK(hardware_corrupted_kb() == corrupted + 4);
	CHECK(mf_stat(nid, "recovered") == recovered + 1 && mf_stat(nid, "total") == total + 1);
	e = pagemap_of(p + PAGE);
	CHECK((e & PM_SWAP) && !(e & PM_PRESENT));
	CHECK(touch_bus(p + PAGE + 100) == 1);	/* and at every touch after */
	CHECK(touch_bus(p + PAGE) == 1);
	for (unsigned long i = 0; i < 4 * PAGE; i++)
		if (i / PAGE != 1 && p[i] != 'a')
			ok = 0;
	CHECK(ok);				/* the other pages are untouched */
	/* munmap drops the entry; the same address mapped again is a new page. */
	CHECK(munmap(p, 4 * PAGE) == 0);
	p = mmap(p, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	CHECK(p != MAP_FAILED && touch_bus(p + PAGE) == 0 && p[PAGE] == 0);
	munmap(p, 4 * PAGE);
	ktap_report("anonymous_page", NULL);
}

static void case_never_reused(void)
{
	size_t len = 64UL << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int seen = 0;

	CHECK(p != MAP_FAILED && poisoned_pfn);
	for (size_t off = 0; off < len; off += PAGE) {
		p[off] = 1;
		if (PM_PFN(pagemap_of(p + off)) == poisoned_pfn)
			seen++;
	}
	CHECK(seen == 0);
	munmap(p, len);
	ktap_report("frame_never_reused", NULL);
}

static void case_shared_with_a_child(void)
{
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int go[2], status = 0;
	pid_t pid;
	char c;

	memset(p, 'f', 2 * PAGE);
	CHECK(pipe(go) == 0);
	pid = fork();
	if (pid == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		if (touch_bus(p) != 1)
			_exit(4);	/* the shared page is gone for the child too */
		_exit(p[PAGE] == 'f' ? 0 : 5);
	}
	CHECK(pid > 0);
	CHECK(poison(p) == 1);
	CHECK(write(go[1], "x", 1) == 1);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		printf("    # child status %#x\n", status);
	close(go[0]);
	close(go[1]);
	munmap(p, 2 * PAGE);
	ktap_report("shared_with_a_forked_child", NULL);
}

static void case_large_folio(void)
{
	size_t len = 4UL << 20;
	char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = (char *)(((uintptr_t)raw + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	int ok = 1;

	CHECK(raw != MAP_FAILED);
	madvise(p, 2UL << 20, MADV_HUGEPAGE);
	for (unsigned long i = 0; i < (2UL << 20); i += 64)
		p[i] = (char)(i / PAGE);
	CHECK(poison(p + 5 * PAGE) == 1);
	CHECK(touch_bus(p + 5 * PAGE) == 1);
	for (unsigned long i = 0; i < (2UL << 20); i += 64)
		if (i / PAGE != 5 && p[i] != (char)(i / PAGE))
			ok = 0;
	CHECK(ok);				/* only that page of the 2 MiB is lost */
	CHECK(pagemap_of(p + 6 * PAGE) & PM_PRESENT);
	munmap(raw, len);
	ktap_report("large_folio_loses_one_page", NULL);
}

static void case_file_page(void)
{
	int fd = open("/tmp/hwpoison-file", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char buf[PAGE], *p;

	memset(buf, 'F', sizeof(buf));
	for (int i = 0; i < 4; i++)
		CHECK(write(fd, buf, PAGE) == (ssize_t)PAGE);
	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED);
	CHECK(p[PAGE] == 'F');
	CHECK(poison(p + PAGE) == 1);
	CHECK(touch_bus(p + PAGE) == 1);
	CHECK(p[0] == 'F' && p[2 * PAGE] == 'F');
	errno = 0;
	CHECK(pread(fd, buf, PAGE, PAGE) == -1 && errno == EIO);
	{
		static char two[2 * PAGE];
		ssize_t n = pread(fd, two, 2 * PAGE, 0);

		CHECK(n == (ssize_t)PAGE);	/* up to the lost page */
		if (n != (ssize_t)PAGE)
			printf("    # pread of 2 pages: %zd (errno %d)\n", n, errno);
	}
	CHECK(pread(fd, buf, PAGE, 2 * PAGE) == (ssize_t)PAGE && buf[0] == 'F');
	munmap(p, 4 * PAGE);
	close(fd);
	ktap_report("file_page_reads_eio", NULL);
}

/*
 * MADV_SOFT_OFFLINE: the page moves to another frame (no signal, every
 * byte kept, writable), the old frame is poisoned (HardwareCorrupted up by
 * 4 kB) and never handed out again; again on the same address takes the
 * new frame out too. In a 2 MiB THP and a 64 KiB mTHP only that page
 * leaves (the folio is split first); a MAP_SHARED file page moves in the
 * page cache, so that read(2) sees the same bytes.
 */
static void case_soft_offline(void)
{
	size_t len = 4UL << 20;
	char *p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *t;
	long corrupted = hardware_corrupted_kb();
	uint64_t old, first;
	int ok = 1, fd;

	CHECK(p != MAP_FAILED && raw != MAP_FAILED && corrupted >= 0);
	memset(p, 's', 4 * PAGE);
	old = PM_PFN(pagemap_of(p + 2 * PAGE));
	buses = 0;
	CHECK(madvise(p + 2 * PAGE, PAGE, MADV_SOFT_OFFLINE) == 0);
	CHECK(buses == 0);
	first = PM_PFN(pagemap_of(p + 2 * PAGE));
	CHECK(first != 0 && first != old);		/* another frame now */
	for (unsigned long i = 0; i < 4 * PAGE; i++)
		if (p[i] != 's')
			ok = 0;
	CHECK(ok);
	p[2 * PAGE] = 'w';
	CHECK(p[2 * PAGE] == 'w');
	CHECK(hardware_corrupted_kb() == corrupted + 4);
	CHECK(madvise(p + 2 * PAGE, PAGE, MADV_SOFT_OFFLINE) == 0);	/* the new frame too */
	CHECK(PM_PFN(pagemap_of(p + 2 * PAGE)) != first && p[2 * PAGE] == 'w');
	CHECK(hardware_corrupted_kb() == corrupted + 8);
	/* A THP: page 9 leaves; the others keep their bytes. */
	t = (char *)(((uintptr_t)raw + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	madvise(t, 2UL << 20, MADV_HUGEPAGE);
	for (unsigned long i = 0; i < (2UL << 20); i += 64)
		t[i] = (char)(i / PAGE + 1);
	old = PM_PFN(pagemap_of(t + 9 * PAGE));
	CHECK(madvise(t + 9 * PAGE, PAGE, MADV_SOFT_OFFLINE) == 0);
	CHECK(PM_PFN(pagemap_of(t + 9 * PAGE)) != old);
	CHECK(PM_PFN(pagemap_of(t + 8 * PAGE)) == old - 1);	/* its neighbour stayed */
	for (unsigned long i = 0; i < (2UL << 20); i += 64)
		if (t[i] != (char)(i / PAGE + 1))
			ok = 0;
	CHECK(ok);
	CHECK(hardware_corrupted_kb() == corrupted + 12);
	/* A file page of the page cache. */
	fd = open("/tmp/soft-offline-file", O_RDWR | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0 && ftruncate(fd, 2 * PAGE) == 0);
	{
		char *f = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		char buf[16] = "";

		CHECK(f != MAP_FAILED);
		strcpy(f + PAGE, "cache bytes");
		old = PM_PFN(pagemap_of(f + PAGE));
		CHECK(madvise(f + PAGE, PAGE, MADV_SOFT_OFFLINE) == 0);
		CHECK(PM_PFN(pagemap_of(f + PAGE)) != old);
		CHECK(pread(fd, buf, 11, PAGE) == 11 && !memcmp(buf, "cache bytes", 11));
		strcpy(f + PAGE, "after");
		CHECK(pread(fd, buf, 5, PAGE) == 5 && !memcmp(buf, "after", 5));
		munmap(f, 2 * PAGE);
	}
	close(fd);
	CHECK(hardware_corrupted_kb() == corrupted + 16);
	munmap(p, 4 * PAGE);
	munmap(raw, len);
	ktap_report("soft_offline", NULL);
}

#define CORRUPT_PFN	"/sys/kernel/debug/hwpoison/corrupt-pfn"
#define UNPOISON_PFN	"/sys/kernel/debug/hwpoison/unpoison-pfn"

/* Two private pages filled with c; the first one's frame number, as debugfs reads it, in text. */
static char *two_pages(char c, char text[32])
{
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		exit(ktap_finish());
	memset(p, c, 2 * PAGE);
	snprintf(text, 32, "%#llx\n", (unsigned long long)PM_PFN(pagemap_of(p)));
	return p;
}

/*
 * debugfs hwpoison/corrupt-pfn: memory_failure() on a frame by number,
 * nobody signalled at once; the process that maps it gets SIGBUS
 * BUS_MCEERR_AR when it touches it; again is EHWPOISON; a bad number is
 * EINVAL, a frame that does not exist ENXIO.
 */
static void case_corrupt_pfn(void)
{
	const char *path = CORRUPT_PFN;
	long corrupted = hardware_corrupted_kb();
	char text[32], *p = two_pages('c', text);

	CHECK(mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) == 0 || errno == EBUSY);
	buses = 0;
	CHECK(write_text(path, text) == (long)strlen(text));
	CHECK(buses == 0);				/* no signal until the page is touched */
	CHECK(hardware_corrupted_kb() == corrupted + 4);
	CHECK(touch_bus(p + 10) == 1);
	CHECK(p[PAGE] == 'c');
	CHECK(write_text(path, text) == -EHWPOISON);
	CHECK(write_text(path, "12abc") == -EINVAL);
	CHECK(write_text(path, "0x7fffffffffff") == -ENXIO);
	munmap(p, 2 * PAGE);
	ktap_report("debugfs_corrupt_pfn", NULL);
}

/*
 * Early kill (prctl PR_MCE_KILL): a process that asked for it hears of a
 * page it maps at once, SIGBUS BUS_MCEERR_AO at the page, when someone
 * else poisons it (here debugfs corrupt-pfn: nobody's access); one that
 * did not, only at its touch. Also the policy read back, its EINVALs, and
 * the sysctl vm.memory_failure_early_kill (0/1, EINVAL else).
 */
static void case_early_kill(void)
{
	const char *sysctl = "/proc/sys/vm/memory_failure_early_kill";
	char text[32], *p = two_pages('e', text);
	int got;

	CHECK(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) == PR_MCE_KILL_DEFAULT);
	CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_SET, 7, 0, 0) == -1 && errno == EINVAL);
	CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_CLEAR, 1, 0, 0) == -1 && errno == EINVAL);
	CHECK(prctl(PR_MCE_KILL_GET, 1, 0, 0, 0) == -1 && errno == EINVAL);
	CHECK(write_text(sysctl, "2\n") == -EINVAL && write_text(sysctl, "1\n") == 2 &&
	      write_text(sysctl, "0\n") == 2);
	CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0) == 0);
	CHECK(prctl(PR_MCE_KILL_GET, 0, 0, 0, 0) == PR_MCE_KILL_EARLY);
	buses = 0;
	got = sigsetjmp(env, 1);
	if (!got)
		CHECK(write_text(CORRUPT_PFN, text) == (long)strlen(text));
	CHECK(got && buses == 1 && bus_code == BUS_MCEERR_AO && bus_addr == p && bus_lsb == 12);
	CHECK(touch_bus(p + 5) == 1);		/* and a touch is AR, as before */
	CHECK(p[PAGE] == 'e');
	/* Late again: the next one is heard only at the touch. */
	CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_LATE, 0, 0) == 0);
	snprintf(text, sizeof(text), "%#llx\n", (unsigned long long)PM_PFN(pagemap_of(p + PAGE)));
	buses = 0;
	CHECK(write_text(CORRUPT_PFN, text) == (long)strlen(text) && buses == 0);
	CHECK(touch_bus(p + PAGE) == 1);
	CHECK(prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_DEFAULT, 0, 0) == 0);
	munmap(p, 2 * PAGE);
	ktap_report("early_kill", NULL);
}

/*
 * debugfs hwpoison/unpoison-pfn: a frame poisoned by software comes back
 * once nothing names it: EBUSY while this process still has its hwpoison
 * entry (Quire's rule: every entry names a poisoned frame), 0 after munmap
 * dropped it (HardwareCorrupted back down by 4 kB), EBUSY once unpoisoned;
 * bad numbers EINVAL and ENXIO.
 */
static void case_unpoison(void)
{
	const char *unpoison = UNPOISON_PFN;
	char text[32], *p = two_pages('u', text);
	long corrupted;

	CHECK(write_text(CORRUPT_PFN, text) == (long)strlen(text));
	corrupted = hardware_corrupted_kb();
	CHECK(write_text(unpoison, text) == -EBUSY);
	CHECK(touch_bus(p) == 1);			/* still poisoned */
	CHECK(munmap(p, PAGE) == 0);
	CHECK(write_text(unpoison, text) == (long)strlen(text));
	CHECK(hardware_corrupted_kb() == corrupted - 4);
	CHECK(write_text(unpoison, text) == -EBUSY);
	CHECK(write_text(unpoison, "12abc") == -EINVAL);
	CHECK(write_text(unpoison, "0x7fffffffffff") == -ENXIO);
	CHECK(p[PAGE] == 'u');
	munmap(p + PAGE, PAGE);
	ktap_report("debugfs_unpoison_pfn", NULL);
}

int main(void)
{
	ktap_begin("hwpoison", 10);
	catch_sigbus();
	case_anonymous_page();
	case_never_reused();
	case_shared_with_a_child();
	case_large_folio();
	case_file_page();
	case_soft_offline();
	case_corrupt_pfn();
	case_early_kill();
	case_unpoison();
	CHECK(read_mm_verify() == 0);
	ktap_report("mm_verify_clean", NULL);
	return ktap_finish();
}
