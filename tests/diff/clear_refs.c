/*
 * /proc/self/clear_refs and the soft-dirty bit (pagemap bit 55): what a
 * write of each number returns (bad numbers, blanks, long writes), the
 * soft-dirty bit of a new mapping and of its pages as they are written,
 * cleared, write-protected and unprotected by mprotect, the "sd" VmFlag, a
 * page written after a clear staying the same page and exclusive (the
 * write fault reuses it), a THP cleared and written as one PMD, a fork
 * after a clear, and smaps' Referenced after a clear of the accessed bits
 * (1: all, 2: anonymous, 3: file VMAs).
 */
#include "diff.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE		4096UL
#define THP		(2UL << 20)
#define PM_SOFT_DIRTY	(1ULL << 55)
#define PM_EXCLUSIVE	(1ULL << 56)
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN		((1ULL << 55) - 1)

static int pagemap_fd = -1;

static uint64_t pagemap(const void *p)
{
	uint64_t e = 0;

	if (pread(pagemap_fd, &e, sizeof(e), (off_t)((uintptr_t)p / PAGE * 8)) != sizeof(e))
		say("pagemap read failed");
	return e;
}

static int soft_dirty(const void *p)
{
	return (pagemap(p) & PM_SOFT_DIRTY) != 0;
}

/* One write(2) of s to clear_refs: its result, or -1 and errno. */
static void clear_refs_write(const char *label, const char *s, size_t len)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);
	long r;

	if (fd < 0) {
		say("%s: open: %s", label, errname(errno));
		return;
	}
	r = write(fd, s, len);
	show_result(label, r, errno);
	close(fd);
}

static void clear(const char *s)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);

	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s))
		say("clear_refs %s failed: %s", s, errname(errno));
	if (fd >= 0)
		close(fd);
}

/* Whether the VMA that holds p shows "sd" in its VmFlags (1, 0; -1: no VMA). */
static long sd_flag_of(const void *p)
{
	char line[256];

	return smaps_line(p, "VmFlags:", line, sizeof(line)) ? strstr(line, " sd") != NULL : -1;
}

static void writes(void)
{
	say("-- what a write returns");
	clear_refs_write("\"4\"", "4", 1);
	clear_refs_write("\"4\\n\"", "4\n", 2);
	clear_refs_write("\" 4 \"", " 4 ", 3);
	clear_refs_write("\"+4\"", "+4", 2);
	clear_refs_write("\"04\"", "04", 2);
	clear_refs_write("\"1\"", "1", 1);
	clear_refs_write("\"2\"", "2", 1);
	clear_refs_write("\"3\"", "3", 1);
	clear_refs_write("\"0\"", "0", 1);
	clear_refs_write("\"6\"", "6", 1);
	clear_refs_write("\"-1\"", "-1", 2);
	clear_refs_write("\"4x\"", "4x", 2);
	clear_refs_write("\"x\"", "x", 1);
	clear_refs_write("\"99999999999\"", "99999999999", 11);
	clear_refs_write("\"000000000004\" (12 bytes)", "000000000004", 12);
	clear_refs_write("\"4           x\" (13 bytes: x not read)", "4           x", 13);
	clear_refs_write("\"0000000000004\" (13 bytes)", "0000000000004", 13);
}

/*
 * A read-write mapping of pages between two PROT_NONE guard pages, so
 * that no later mapping (stdio's buffers) merges with it: a merge makes
 * the whole VMA soft-dirty again, on both kernels.
 */
static char *guarded_map(size_t pages)
{
	char *g = mmap(NULL, (pages + 2) * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (g == MAP_FAILED || mprotect(g + PAGE, pages * PAGE, PROT_READ | PROT_WRITE)) {
		say("guarded mapping failed: %s", errname(errno));
		exit(1);
	}
	return g + PAGE;
}

static void small_pages(void)
{
	char *p = guarded_map(4);
	uint64_t before, after;
	long sd_flag;
	int d0, d1;
	volatile char c;

	say("-- small pages");
	sd_flag = sd_flag_of(p);
	say("new mapping, untouched: soft-dirty %d, sd in VmFlags %ld", soft_dirty(p), sd_flag);
	p[0] = 1;
	say("written: soft-dirty %d", soft_dirty(p));
	clear("4");
	sd_flag = sd_flag_of(p);
	d0 = soft_dirty(p);
	d1 = soft_dirty(p + PAGE);
	say("after clear: page 0 soft-dirty %d, untouched page 1 %d, sd in VmFlags %ld", d0, d1,
	    sd_flag);
	c = p[0];
	(void)c;
	say("read after clear: soft-dirty %d", soft_dirty(p));
	before = pagemap(p);
	p[0] = 2;
	after = pagemap(p);
	say("written after clear: soft-dirty %d, same page %s, exclusive %s, byte %d",
	    soft_dirty(p), (before & PM_PFN) == (after & PM_PFN) ? "yes" : "no",
	    after & PM_EXCLUSIVE ? "yes" : "no", p[0]);
	p[PAGE] = 1;
	say("page 1 first written after clear: soft-dirty %d", soft_dirty(p + PAGE));
	clear("4");
	mprotect(p, 4 * PAGE, PROT_READ);
	say("mprotect read-only: soft-dirty %d", soft_dirty(p));
	mprotect(p, 4 * PAGE, PROT_READ | PROT_WRITE);
	say("mprotect read-write again: soft-dirty %d", soft_dirty(p));
	p[0] = 3;
	say("written: soft-dirty %d, byte %d", soft_dirty(p), p[0]);
	clear("4");
	mprotect(p + PAGE, PAGE, PROT_NONE);
	mprotect(p + PAGE, PAGE, PROT_READ | PROT_WRITE);
	say("after PROT_NONE and back: page 1 soft-dirty %d, byte %d", soft_dirty(p + PAGE),
	    p[PAGE]);
	p[PAGE] = 4;
	say("written: page 1 soft-dirty %d", soft_dirty(p + PAGE));
	munmap(p - PAGE, 6 * PAGE);
}

static void huge_page(void)
{
	char *raw = mmap(NULL, 2 * THP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = (char *)(((uintptr_t)raw + THP - 1) & ~(THP - 1));
	uint64_t before;
	int d0, d1;

	say("-- a THP");
	madvise(p, THP, MADV_HUGEPAGE);
	memset(p, 1, THP);
	say("AnonHugePages %ld kB", smaps_kb(p, "AnonHugePages:"));
	say("first and last page soft-dirty %d %d", soft_dirty(p), soft_dirty(p + THP - PAGE));
	clear("4");
	say("after clear: %d %d", soft_dirty(p), soft_dirty(p + THP - PAGE));
	before = pagemap(p);
	p[0] = 2;
	d0 = soft_dirty(p);
	d1 = soft_dirty(p + THP - PAGE);
	say("first page written: %d %d, same THP %s", d0, d1,
	    (before & PM_PFN) == (pagemap(p) & PM_PFN) ? "yes" : "no");
	say("AnonHugePages %ld kB", smaps_kb(p, "AnonHugePages:"));
	munmap(raw, 2 * THP);
}

static void after_fork(void)
{
	char *p = guarded_map(1);
	int status;
	pid_t pid;

	say("-- fork after a clear");
	p[0] = 1;
	clear("4");
	pid = fork();
	if (pid == 0) {
		int before;

		/* The child's own pagemap: an inherited fd reads the opener's mm. */
		close(pagemap_fd);
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
		before = soft_dirty(p);
		p[0] = 2;
		say("child: soft-dirty %d, written %d, byte %d", before, soft_dirty(p), p[0]);
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	say("parent after the child wrote: soft-dirty %d, byte %d", soft_dirty(p), p[0]);
	p[0] = 3;
	say("parent written: soft-dirty %d, byte %d", soft_dirty(p), p[0]);
	munmap(p - PAGE, 3 * PAGE);
}

/*
 * Only what does not hang on the TLB: clearing the accessed bit flushes
 * nothing (Linux's rule, and Quire's), so a page touched again may or may
 * not look referenced; a page faulted in is.
 */
static void referenced(void)
{
	char *a = guarded_map(4), *b;
	int fd = open("/tmp/diff-clear-refs", O_RDWR | O_CREAT | O_TRUNC, 0644);
	char *f;

	say("-- Referenced");
	if (fd < 0 || ftruncate(fd, 4 * PAGE)) {
		say("file: %s", errname(errno));
		return;
	}
	f = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	memset(a, 1, 4 * PAGE);
	memset(f, 1, 4 * PAGE);
	say("anon %ld kB, file %ld kB", smaps_kb(a, "Referenced:"), smaps_kb(f, "Referenced:"));
	clear("2");
	say("after 2: anon %ld kB, file %ld kB", smaps_kb(a, "Referenced:"),
	    smaps_kb(f, "Referenced:"));
	clear("3");
	say("after 3: anon %ld kB, file %ld kB", smaps_kb(a, "Referenced:"),
	    smaps_kb(f, "Referenced:"));
	b = guarded_map(2);
	memset(b, 1, 2 * PAGE);
	say("new pages faulted in: %ld kB", smaps_kb(b, "Referenced:"));
	clear("1");
	say("after 1: new %ld kB, anon %ld kB, file %ld kB", smaps_kb(b, "Referenced:"),
	    smaps_kb(a, "Referenced:"), smaps_kb(f, "Referenced:"));
	say("bytes kept: %d %d %d", a[3 * PAGE], f[3 * PAGE], b[PAGE]);
	munmap(a - PAGE, 6 * PAGE);
	munmap(b - PAGE, 4 * PAGE);
	munmap(f, 4 * PAGE);
	close(fd);
	unlink("/tmp/diff-clear-refs");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0) {
		say("pagemap: %s", errname(errno));
		return 1;
	}
	writes();
	small_pages();
	huge_page();
	after_fork();
	referenced();
	return 0;
}
