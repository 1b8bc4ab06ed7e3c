/*
 * vmsplice(2) and the pipe it fills: user pages into a pipe by reference
 * (what a reader sees after the page is written by the same process, by a
 * forked child, or unmapped), how much one call moves (a pipe holds 16
 * buffers), unaligned ranges, several iovecs, the zero page of untouched
 * memory, a THP, the read end (a copy out), SPLICE_F_NONBLOCK, no reader
 * left (EPIPE), and the errors in Linux's order. Then the pipe itself:
 * how many bytes writes of 1, 100, 4096 and 4097 bytes put in a
 * non-blocking pipe before EAGAIN, and a write after a vmsplice'd buffer.
 */
#include "diff.h"
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#define PAGE		4096UL
#define PIPE_BYTES	(16 * PAGE)
#ifndef SPLICE_F_NONBLOCK
#define SPLICE_F_NONBLOCK	0x02
#endif

static long vms(int fd, const struct iovec *iov, unsigned long nr, unsigned int flags)
{
	return syscall(SYS_vmsplice, fd, iov, nr, flags);
}

static long vms1(int fd, void *p, size_t len, unsigned int flags)
{
	struct iovec iov = { p, len };

	return vms(fd, &iov, 1, flags);
}

static char *map(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		say("mmap failed");
		exit(1);
	}
	return p;
}

/* Read exactly len bytes of the pipe into buf (the pipe holds them). */
static long drain(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n <= 0)
			return n < 0 ? -1 : (long)got;
		got += (size_t)n;
	}
	return (long)got;
}

static int all(const char *p, size_t len, char c)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != c)
			return 0;
	return 1;
}

/* What the pipe gave: one letter throughout, or a mix. */
static void gave(const char *label, const char *buf, size_t len)
{
	if (all(buf, len, buf[0]))
		say("%s: all '%c'", label, buf[0] ? buf[0] : '0');
	else
		say("%s: mixed", label);
}

static void errors(void)
{
	char *p = map(PAGE);
	struct iovec many[1025];
	int fds[2], file;

	say("-- errors");
	p[0] = 1;
	pipe(fds);
	file = open("/proc/self/status", O_RDONLY);
	for (int i = 0; i < 1025; i++)
		many[i] = (struct iovec){ p, 1 };
	show("unknown flag 0x10", vms1(fds[1], p, PAGE, 0x10));
	show("a closed fd", vms1(1000, p, PAGE, 0));
	show("a file that is not a pipe", vms1(file, p, PAGE, 0));
	show("a file that is not a pipe, nothing to move", vms1(file, p, 0, 0));
	show("1025 iovecs", vms(fds[1], many, 1025, 0));
	show("iovecs at an unmapped address", vms((fds[1]), (struct iovec *)8, 1, 0));
	show("no iovecs", vms(fds[1], NULL, 0, 0));
	show("a range at NULL", vms1(fds[1], NULL, PAGE, 0));
	show("a kernel address", vms1(fds[1], (void *)0xffff800000000000UL, PAGE, 0));
	munmap(p, PAGE);
	show("an unmapped range", vms1(fds[1], p, PAGE, 0));
	show("flags MOVE|MORE|GIFT accepted", vms1(fds[1], map(PAGE), 10, 0x01 | 0x04 | 0x08));
	close(fds[0]);
	signal(SIGPIPE, SIG_IGN);
	show("no reader left", vms1(fds[1], map(PAGE), 10, 0));
	signal(SIGPIPE, SIG_DFL);
	close(fds[1]);
	close(file);
}

static void how_much(void)
{
	size_t len = 64 * PAGE;
	char *p = map(len), *buf = malloc(len);
	struct iovec iov[3];
	int fds[2];

	say("-- how much one call moves");
	for (size_t i = 0; i < len; i++)
		p[i] = (char)(i / PAGE + 1);
	pipe(fds);
	show("256 KiB into an empty pipe", vms1(fds[1], p, len, 0));
	show("more, SPLICE_F_NONBLOCK, pipe full", vms1(fds[1], p, PAGE, SPLICE_F_NONBLOCK));
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	show("a write, pipe full, O_NONBLOCK", write(fds[1], "x", 1));
	fcntl(fds[1], F_SETFL, 0);
	show("read it all", drain(fds[0], buf, PIPE_BYTES));
	yesno("the first 16 pages, in order", !memcmp(buf, p, PIPE_BYTES));
	show("from 100 bytes into a page, 10000 bytes", vms1(fds[1], p + 100, 10000, 0));
	show("read them", drain(fds[0], buf, 10000));
	yesno("the same bytes", !memcmp(buf, p + 100, 10000));
	show("17 pages from 100 bytes into a page", vms1(fds[1], p + 100, 17 * PAGE, 0));
	show("read them", drain(fds[0], buf, 16 * PAGE - 100));
	yesno("the same bytes", !memcmp(buf, p + 100, 16 * PAGE - 100));
	iov[0] = (struct iovec){ p + 5 * PAGE, 10 };
	iov[1] = (struct iovec){ p + 7 * PAGE + 4000, 200 };
	iov[2] = (struct iovec){ p, 0 };
	show("three iovecs, one empty", vms(fds[1], iov, 3, 0));
	show("read them", drain(fds[0], buf, 210));
	yesno("in order", !memcmp(buf, p + 5 * PAGE, 10) && !memcmp(buf + 10, p + 7 * PAGE + 4000, 200));
	iov[0] = (struct iovec){ p, 15 * PAGE };
	iov[1] = (struct iovec){ p + 20 * PAGE, 3 * PAGE };
	show("two iovecs of 15 and 3 pages", vms(fds[1], iov, 2, 0));
	show("read them", drain(fds[0], buf, 16 * PAGE));
	yesno("15 pages, then one of the second", !memcmp(buf, p, 15 * PAGE) &&
	      !memcmp(buf + 15 * PAGE, p + 20 * PAGE, PAGE));
	munmap(p, len);
	p = map(4 * PAGE);
	show("untouched memory (the zero page)", vms1(fds[1], p, 4 * PAGE, 0));
	p[0] = 7;
	show("read it", drain(fds[0], buf, 4 * PAGE));
	yesno("zeros, though the first byte is written now", all(buf, 4 * PAGE, 0));
	munmap(p, 4 * PAGE);
	close(fds[0]);
	close(fds[1]);
	free(buf);
}

/* The page is written after the vmsplice: by whom, and what the pipe gives. */
static void who_writes(void)
{
	char *p = map(PAGE), buf[PAGE];
	int fds[2], status;
	pid_t pid;

	say("-- writes after the vmsplice");
	pipe(fds);
	memset(p, 'A', PAGE);
	show("vmsplice a page", vms1(fds[1], p, PAGE, 0));
	memset(p, 'B', PAGE);
	show("read after this process wrote it", drain(fds[0], buf, PAGE));
	gave("what the pipe gave", buf, PAGE);

	show("vmsplice it again", vms1(fds[1], p, PAGE, 0));
	munmap(p, PAGE);
	show("read after munmap", drain(fds[0], buf, PAGE));
	gave("what the pipe gave", buf, PAGE);

	p = map(PAGE);
	memset(p, 'A', PAGE);
	show("vmsplice, then fork", vms1(fds[1], p, PAGE, 0));
	pid = fork();
	if (pid == 0) {
		memset(p, 'C', PAGE);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	memset(p, 'D', PAGE);
	show("read after the child and the parent wrote", drain(fds[0], buf, PAGE));
	gave("what the pipe gave", buf, PAGE);

	memset(p, 'A', PAGE);
	pid = fork();
	if (pid == 0) {
		long r = vms1(fds[1], p, PAGE, 0);

		munmap(p, PAGE);
		_exit(r == (long)PAGE ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	say("the child's vmsplice and munmap: exit %d", WEXITSTATUS(status));
	memset(p, 'E', PAGE);
	show("read after the parent wrote", drain(fds[0], buf, PAGE));
	gave("what the pipe gave", buf, PAGE);

	memset(p, 'A', PAGE);
	show("vmsplice, then fork; the child writes", vms1(fds[1], p, PAGE, 0));
	pid = fork();
	if (pid == 0) {
		memset(p, 'F', PAGE);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	munmap(p, PAGE);
	show("read after the parent unmapped", drain(fds[0], buf, PAGE));
	gave("what the pipe gave", buf, PAGE);
	close(fds[0]);
	close(fds[1]);
}

static void thp(void)
{
	size_t len = 4UL << 20;
	char *raw = map(len), *p = (char *)(((uintptr_t)raw + (2UL << 20) - 1) & ~((2UL << 20) - 1));
	static char buf[PIPE_BYTES];
	int fds[2], status;
	pid_t pid;

	say("-- a 2 MiB THP");
	madvise(p, 2UL << 20, MADV_HUGEPAGE);
	memset(p, 'T', 2UL << 20);
	pipe(fds);
	show("vmsplice 2 MiB", vms1(fds[1], p + PAGE, 2UL << 20, 0));
	pid = fork();
	if (pid == 0) {
		memset(p, 'U', 2UL << 20);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	memset(p, 'V', 2UL << 20);
	show("read after the child and the parent wrote", drain(fds[0], buf, PIPE_BYTES));
	gave("what the pipe gave", buf, PIPE_BYTES);
	munmap(raw, len);
	close(fds[0]);
	close(fds[1]);
}

static void read_end(void)
{
	char buf[64] = "", big[PAGE];
	struct iovec iov[2] = { { buf, 3 }, { buf + 10, 20 } };
	int fds[2];

	say("-- the read end: a copy out");
	pipe(fds);
	write(fds[1], "hello, world", 12);
	show("into two iovecs", vms(fds[0], iov, 2, 0));
	yesno("hel, then lo, world", !memcmp(buf, "hel", 3) && !memcmp(buf + 10, "lo, world", 9));
	show("empty, SPLICE_F_NONBLOCK", vms1(fds[0], buf, 10, SPLICE_F_NONBLOCK));
	write(fds[1], "ab", 2);
	show("two bytes there, 10 asked", vms1(fds[0], big, 10, 0));
	show("empty, into an unmapped buffer", vms1(fds[0], (void *)8, 10, SPLICE_F_NONBLOCK));
	write(fds[1], "cd", 2);
	show("two bytes there, into a buffer at NULL", vms1(fds[0], NULL, 10, 0));
	close(fds[1]);
	show("no writer left", vms1(fds[0], buf, 10, 0));
	close(fds[0]);
}

/* Non-blocking writes of size bytes into an empty pipe until EAGAIN. */
static void fill(size_t size)
{
	static char chunk[2 * PAGE];
	size_t total = 0;
	int fds[2], n = 0;
	long r;

	pipe2(fds, O_NONBLOCK);
	while ((r = write(fds[1], chunk, size)) > 0) {
		total += (size_t)r;
		n++;
	}
	say("writes of %zu bytes: %d calls, %zu bytes, then %s", size, n, total,
	    errname(r < 0 ? errno : 0));
	close(fds[0]);
	close(fds[1]);
}

static void pipe_itself(void)
{
	char *p = map(PAGE), buf[3 * PAGE];
	int fds[2];

	say("-- the pipe");
	fill(1);
	fill(100);
	fill(4096);
	fill(4097);
	memset(p, 'P', PAGE);
	pipe(fds);
	show("write 10 bytes", write(fds[1], "0123456789", 10));
	show("vmsplice 100 bytes", vms1(fds[1], p, 100, 0));
	show("write 10 bytes", write(fds[1], "abcdefghij", 10));
	show("read all", read(fds[0], buf, sizeof(buf)));
	show("read again, non-blocking", (fcntl(fds[0], F_SETFL, O_NONBLOCK), read(fds[0], buf, 10)));
	close(fds[0]);
	close(fds[1]);
	pipe(fds);
	write(fds[1], "0123456789", 10);
	vms1(fds[1], p, 100, 0);
	write(fds[1], "abcdefghij", 10);
	show("read 5", read(fds[0], buf, 5));
	show("read 200", read(fds[0], buf + 5, 200));
	yesno("the 120 bytes in order", !memcmp(buf, "0123456789", 10) && all(buf + 10, 100, 'P') &&
	      !memcmp(buf + 110, "abcdefghij", 10));
	show("read 200, non-blocking", (fcntl(fds[0], F_SETFL, O_NONBLOCK), read(fds[0], buf, 200)));
	close(fds[0]);
	close(fds[1]);
	munmap(p, PAGE);
}

int main(void)
{
	diff_begin("vmsplice");
	errors();
	how_much();
	who_writes();
	thp();
	read_end();
	pipe_itself();
	return 0;
}
