/*
 * mremap(2): growing and shrinking in place, moving (MREMAP_MAYMOVE),
 * to a given place (MREMAP_FIXED, replacing what was there), keeping the
 * old range (MREMAP_DONTUNMAP), a second mapping of shared memory
 * (old_size 0), part of a mapping, file mappings, the protection and the
 * data kept, and every errno. Where a mapping went is printed as "same",
 * "fixed" (the address asked for) or "moved", and which pages of a range
 * are mapped as a string: M mapped, . not.
 */
#include "diff.h"
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define PAGE 4096UL

/* The raw call: musl's mremap() passes new_address only with MREMAP_FIXED. */
static char *xmremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr)
{
	return (char *)syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
}

static char *anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* A free range of len bytes (mapped, then unmapped). */
static char *hole(size_t len)
{
	char *p = anon(len);

	munmap(p, len);
	return p;
}

static void fill(char *p, size_t pages, char tag)
{
	for (size_t i = 0; i < pages; i++)
		memset(p + i * PAGE, tag + (char)i, PAGE);
}

/* Whether each page holds what fill() wrote. */
static int kept(const char *p, size_t pages, char tag)
{
	for (size_t i = 0; i < pages; i++)
		for (size_t j = 0; j < PAGE; j += 512)
			if (p[i * PAGE + j] != (char)(tag + (char)i))
				return 0;
	return 1;
}

/* "MM.M": which pages of [p, p + pages) are mapped (msync fails with ENOMEM where not). */
static void which(const char *what, char *p, size_t pages)
{
	char s[64];
	size_t i;

	for (i = 0; i < pages && i < sizeof(s) - 1; i++)
		s[i] = msync(p + i * PAGE, PAGE, MS_ASYNC) == 0 ? 'M' : '.';
	s[i] = '\0';
	say("%s: %s", what, s);
}

/* The result of an mremap: where it went, or the errno. */
static char *moved(const char *what, char *r, char *old, char *fixed)
{
	int e = errno;

	if (r == MAP_FAILED)
		say("%s: -1 %s", what, errname(e));
	else
		say("%s: %s", what, r == old ? "same" : r == fixed ? "fixed" : "moved");
	return r;
}

static sigjmp_buf jump;
static volatile int segv_code;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	segv_code = si->si_code;
	siglongjmp(jump, 1);
}

/* Whether a write to p faults (and how). */
static void try_write(const char *what, char *p)
{
	segv_code = 0;
	if (!sigsetjmp(jump, 1)) {
		*(volatile char *)p = 1;
		say("%s: written", what);
	} else {
		say("%s: SIGSEGV si_code %d", what, segv_code);
	}
}

static void grow_and_shrink(void)
{
	char *p = anon(8 * PAGE), *r;

	fill(p, 4, 'a');
	munmap(p + 4 * PAGE, 4 * PAGE);
	r = moved("grow 4 -> 6 pages, room after", xmremap(p, 4 * PAGE, 6 * PAGE, 0, NULL), p, NULL);
	yesno("data kept", kept(p, 4, 'a'));
	p[5 * PAGE] = 'x';
	say("new pages read zero then written: %c", p[5 * PAGE]);
	char *next = mmap(p + 6 * PAGE, PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	yesno("a neighbour mapped after it", next == p + 6 * PAGE);
	moved("grow 6 -> 8 pages into the neighbour, no MAYMOVE",
	      xmremap(p, 6 * PAGE, 8 * PAGE, 0, NULL), p, NULL);
	r = moved("grow 6 -> 8 pages, MAYMOVE", xmremap(p, 6 * PAGE, 8 * PAGE, MREMAP_MAYMOVE, NULL),
		  p, NULL);
	yesno("data kept after the move", kept(r, 4, 'a') && r[5 * PAGE] == 'x');
	which("old range (6 pages) and the neighbour", p, 7);
	which("new range", r, 8);
	moved("shrink 8 -> 3 pages", xmremap(r, 8 * PAGE, 3 * PAGE, 0, NULL), r, NULL);
	which("after the shrink", r, 8);
	yesno("data kept after the shrink", kept(r, 3, 'a'));
	moved("same size", xmremap(r, 3 * PAGE, 3 * PAGE, 0, NULL), r, NULL);
	moved("shrink to 1 page with MAYMOVE: stays", xmremap(r, 3 * PAGE, PAGE, MREMAP_MAYMOVE, NULL),
	      r, NULL);
	munmap(r, PAGE);
	munmap(next, PAGE);
}

static void fixed_moves(void)
{
	char *p = anon(4 * PAGE), *t = anon(6 * PAGE), *r;

	fill(p, 4, 'A');
	fill(t, 6, 'T');
	r = moved("FIXED onto a mapped range", xmremap(p, 4 * PAGE, 4 * PAGE,
						       MREMAP_MAYMOVE | MREMAP_FIXED, t + PAGE), p, t + PAGE);
	yesno("moved data there", kept(t + PAGE, 4, 'A'));
	yesno("the target's first page untouched", t[0] == 'T');
	yesno("the target's last page untouched", t[5 * PAGE] == 'T' + 5);
	which("the old range", p, 4);
	r = moved("FIXED and shrink 4 -> 2 pages", xmremap(t + PAGE, 4 * PAGE, 2 * PAGE,
							    MREMAP_MAYMOVE | MREMAP_FIXED, p), t + PAGE, p);
	yesno("moved data kept", kept(p, 2, 'A'));
	which("the target range now", t, 6);
	r = moved("FIXED and grow 2 -> 5 pages", xmremap(p, 2 * PAGE, 5 * PAGE,
							  MREMAP_MAYMOVE | MREMAP_FIXED, t), p, t);
	yesno("moved data kept", kept(t, 2, 'A'));
	say("grown pages read: %d", t[4 * PAGE]);
	munmap(t, 6 * PAGE);
	(void)r;
}

static void dontunmap(void)
{
	char *p = anon(3 * PAGE), *r, *s;

	fill(p, 3, 'd');
	r = moved("DONTUNMAP", xmremap(p, 3 * PAGE, 3 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL),
		  p, NULL);
	yesno("data at the new address", kept(r, 3, 'd'));
	which("the old range stays mapped", p, 3);
	say("the old range reads zero: %s", p[0] == 0 && p[2 * PAGE] == 0 ? "yes" : "no");
	munmap(r, 3 * PAGE);
	s = hole(3 * PAGE);
	fill(p, 3, 'e');
	r = moved("DONTUNMAP with FIXED", xmremap(p, 3 * PAGE, 3 * PAGE,
						  MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, s),
		  p, s);
	yesno("data at the new address", kept(s, 3, 'e'));
	moved("DONTUNMAP without MAYMOVE", xmremap(p, 3 * PAGE, 3 * PAGE, MREMAP_DONTUNMAP, NULL), p, NULL);
	moved("DONTUNMAP growing", xmremap(p, 2 * PAGE, 3 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL),
	      p, NULL);
	moved("DONTUNMAP shrinking", xmremap(p, 3 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL),
	      p, NULL);
	munmap(s, 3 * PAGE);
	munmap(p, 3 * PAGE);

	/* Shared memory: the old range still maps the same pages. */
	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fill(p, 2, 's');
	r = moved("DONTUNMAP of shared memory",
		  xmremap(p, 2 * PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL), p, NULL);
	yesno("data at the new address", r != MAP_FAILED && kept(r, 2, 's'));
	yesno("the old range reads the same pages", kept(p, 2, 's'));
	if (r != MAP_FAILED) {
		r[0] = 'Z';
		yesno("a write through the new range seen through the old", p[0] == 'Z');
		munmap(r, 2 * PAGE);
	}
	munmap(p, 2 * PAGE);
}

static void parts_and_aliases(void)
{
	char *p = anon(5 * PAGE), *r, *q;

	fill(p, 5, 'p');
	r = moved("move the middle page out", xmremap(p + 2 * PAGE, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
						      hole(PAGE)), p + 2 * PAGE, NULL);
	which("the first range after", p, 5);
	yesno("the moved page holds its data", r != MAP_FAILED && r[0] == 'p' + 2);
	yesno("the pages around it kept theirs", kept(p, 2, 'p') && p[3 * PAGE] == 'p' + 3);
	moved("mremap across the hole", xmremap(p, 4 * PAGE, 4 * PAGE, MREMAP_MAYMOVE, NULL), p, NULL);
	moved("mremap past the mapping's end", xmremap(p + 3 * PAGE, 3 * PAGE, 3 * PAGE, MREMAP_MAYMOVE, NULL),
	      p + 3 * PAGE, NULL);
	munmap(p, 5 * PAGE);
	munmap(r, PAGE);

	/* old_size 0: a second mapping of the same shared pages. */
	p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	fill(p, 2, 'q');
	q = moved("old_size 0 of shared memory", xmremap(p, 0, 2 * PAGE, MREMAP_MAYMOVE, NULL), p, NULL);
	if (q != MAP_FAILED) {
		yesno("the alias reads the data", kept(q, 2, 'q'));
		q[PAGE] = 'W';
		yesno("a write through the alias seen through the first", p[PAGE] == 'W');
		which("the first mapping still there", p, 2);
		munmap(q, 2 * PAGE);
	}
	moved("old_size 0 of shared memory without MAYMOVE", xmremap(p, 0, 2 * PAGE, 0, NULL), p, NULL);
	munmap(p, 2 * PAGE);
	p = anon(PAGE);
	moved("old_size 0 of private memory", xmremap(p, 0, PAGE, MREMAP_MAYMOVE, NULL), p, NULL);
	munmap(p, PAGE);
}

static void protections_and_files(void)
{
	struct sigaction sa;
	char *p = anon(2 * PAGE), *r;
	char path[] = "/tmp/diff-mremap-XXXXXX", buf[3 * PAGE];
	int fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	fill(p, 2, 'r');
	mprotect(p, 2 * PAGE, PROT_READ);
	r = moved("move a read-only mapping, growing it",
		  xmremap(p, 2 * PAGE, 3 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, hole(3 * PAGE)), p, NULL);
	yesno("data kept", kept(r, 2, 'r'));
	try_write("write to the moved read-only mapping", r);
	try_write("write to its grown page", r + 2 * PAGE);
	munmap(r, 3 * PAGE);

	fd = mkstemp(path);
	for (int i = 0; i < 3; i++)
		memset(buf + i * PAGE, 'F' + i, PAGE);
	write(fd, buf, sizeof(buf));
	p = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	munmap(p + 2 * PAGE, 2 * PAGE);
	r = moved("grow a shared file mapping 2 -> 3 pages, room after",
		  xmremap(p, 2 * PAGE, 3 * PAGE, MREMAP_MAYMOVE, NULL), p, NULL);
	say("its pages read: %c %c %c", r[0], r[PAGE], r[2 * PAGE]);
	r[PAGE] = 'w';
	pread(fd, buf, 1, PAGE);
	say("a write through it reaches the file: %c", buf[0]);
	munmap(r, 3 * PAGE);
	p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	p[0] = 'c';
	r = moved("move a private file mapping, growing it",
		  xmremap(p, PAGE, 2 * PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, hole(2 * PAGE)), p, NULL);
	say("its copied page and its file page read: %c %c", r[0], r[PAGE]);
	pread(fd, buf, 1, 0);
	say("the file's first byte: %c", buf[0]);
	munmap(r, 2 * PAGE);

	/* A moved mapping seen by a forked child. */
	p = anon(PAGE);
	p[0] = 'k';
	r = xmremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, hole(PAGE));
	pid_t pid = fork();
	if (pid == 0) {
		r[1] = 'c';
		_exit(r[0] == 'k' ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	say("the child read the moved page: %s; the parent's copy untouched: %s",
	    WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "yes" : "no", r[1] == 0 ? "yes" : "no");
	munmap(r, PAGE);
	close(fd);
	unlink(path);
	signal(SIGSEGV, SIG_DFL);
}

static void errors(void)
{
	char *p = anon(2 * PAGE), *h = hole(4 * PAGE);

	moved("unaligned old address", xmremap(p + 1, PAGE, PAGE, 0, NULL), p, NULL);
	moved("new_size 0", xmremap(p, PAGE, 0, 0, NULL), p, NULL);
	moved("unknown flag 0x8", xmremap(p, PAGE, PAGE, 0x8, NULL), p, NULL);
	moved("FIXED without MAYMOVE", xmremap(p, PAGE, PAGE, MREMAP_FIXED, h), p, h);
	moved("FIXED at an unaligned address", xmremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, h + 1),
	      p, h + 1);
	moved("FIXED overlapping the old range", xmremap(p, 2 * PAGE, 2 * PAGE,
							 MREMAP_MAYMOVE | MREMAP_FIXED, p + PAGE), p, p + PAGE);
	moved("FIXED at a kernel address",
	      xmremap(p, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)0xffffffff80000000UL), p, NULL);
	moved("old range not mapped", xmremap(h, PAGE, PAGE, MREMAP_MAYMOVE, NULL), h, NULL);
	moved("old range not mapped, growing", xmremap(h, PAGE, 2 * PAGE, MREMAP_MAYMOVE, NULL), h, NULL);
	moved("a huge new size", xmremap(p, PAGE, 1UL << 62, MREMAP_MAYMOVE, NULL), p, NULL);
	moved("an old size past the address space", xmremap(p, 1UL << 62, PAGE, MREMAP_MAYMOVE, NULL), p, NULL);
	moved("unaligned sizes round up", xmremap(p, PAGE - 1, PAGE + 1, MREMAP_MAYMOVE, NULL), p, NULL);
	which("after the rounding", p, 2);
	munmap(p, 2 * PAGE);
}

int main(void)
{
	diff_begin("mremap");
	grow_and_shrink();
	fixed_moves();
	dontunmap();
	parts_and_aliases();
	protections_and_files();
	errors();
	return 0;
}
