/*
 * What reaches GUP from ring 3 (mm/gup.c, kernel/process_vm.c, fs/procfs.c;
 * docs/mm/gup.md): process_vm_readv and process_vm_writev on the caller and
 * on a child (the child's copy-on-write pages, written by the parent),
 * their errors and partial transfers as Linux 6.12 gives them, and
 * /proc/self/mem with FOLL_FORCE (a read-only private mapping is written
 * through a private copy, a shared read-only one is refused), then
 * /proc/quire/mm_verify. Job gup-user-numa3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "mm_verify.h"

#define PAGE	4096UL

static long pvm(bool write, pid_t pid, const struct iovec *l, unsigned long ln,
		const struct iovec *r, unsigned long rn, unsigned long flags)
{
	return syscall(write ? SYS_process_vm_writev : SYS_process_vm_readv, pid, l, ln, r, rn,
		       flags);
}

static void *map(size_t len, int prot, int flags)
{
	return mmap(NULL, len, prot, flags | MAP_ANONYMOUS, -1, 0);
}

/* Reading and writing the caller's own memory, several iovecs each side. */
static void readv_writev_self(void)
{
	char *src = map(4 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	char a[100], b[5000];
	struct iovec l[2] = { { a, sizeof(a) }, { b, sizeof(b) } };
	struct iovec r[2] = { { src + 10, 3000 }, { src + 2 * PAGE - 50, 2100 } };

	for (size_t i = 0; i < 4 * PAGE; i++)
		src[i] = (char)(i * 13 + 1);
	CHECK(pvm(false, getpid(), l, 2, r, 2, 0) == 5100);
	CHECK(memcmp(a, src + 10, 100) == 0);
	CHECK(memcmp(b, src + 110, 2900) == 0);
	CHECK(memcmp(b + 2900, src + 2 * PAGE - 50, 2100) == 0);
	memset(a, 0x5a, sizeof(a));
	CHECK(pvm(true, getpid(), l, 1, r, 1, 0) == 100);
	CHECK(src[10] == 0x5a && src[109] == 0x5a && src[110] == (char)(110 * 13 + 1));
	munmap(src, 4 * PAGE);
	ktap_report("readv_writev_self", NULL);
}

/* The parent writes into its child's copy-on-write page and reads it back; its own stays. */
static void writev_child(void)
{
	char *buf = map(PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	int go[2], status = -1;
	char msg[] = "written by the parent", back[sizeof(msg)];
	struct iovec l = { msg, sizeof(msg) }, lb = { back, sizeof(back) };
	struct iovec r = { buf + 100, sizeof(msg) };
	pid_t child;

	strcpy(buf + 100, "the original text here");
	CHECK(pipe(go) == 0);
	child = fork();
	if (child == 0) {
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(strcmp(buf + 100, msg) == 0 ? 0 : 1);
	}
	close(go[0]);
	CHECK(pvm(true, child, &l, 1, &r, 1, 0) == (long)sizeof(msg));
	CHECK(pvm(false, child, &lb, 1, &r, 1, 0) == (long)sizeof(msg));
	CHECK(strcmp(back, msg) == 0);
	CHECK(strcmp(buf + 100, "the original text here") == 0);
	CHECK(write(go[1], "x", 1) == 1);
	CHECK(waitpid(child, &status, 0) == child);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(go[1]);
	munmap(buf, PAGE);
	ktap_report("writev_child", NULL);
}

static void errors_and_partial(void)
{
	char *p = map(2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE), local[3 * PAGE];
	struct iovec l = { local, sizeof(local) }, r = { p, 2 * PAGE };
	struct iovec hole = { p + PAGE, PAGE }, big = { p, 2 * PAGE };
	struct iovec bad_local = { (void *)16, 100 }, none = { local, 0 };

	memset(p, 7, 2 * PAGE);
	errno = 0;
	CHECK(pvm(false, getpid(), &l, 1, &r, 1, 1) == -1 && errno == EINVAL);
	CHECK(pvm(false, getpid(), &l, 1025, &r, 1, 0) == -1 && errno == EINVAL);
	CHECK(pvm(false, getpid(), &l, 1, &r, 1025, 0) == -1 && errno == EINVAL);
	CHECK(pvm(false, getpid(), &none, 1, &r, 1, 0) == 0);
	CHECK(pvm(false, 999999, &l, 1, &r, 1, 0) == -1 && errno == ESRCH);
	CHECK(pvm(false, getpid(), (void *)16, 1, &r, 1, 0) == -1 && errno == EFAULT);
	CHECK(pvm(false, getpid(), &bad_local, 1, &r, 1, 0) == -1 && errno == EFAULT);
	/* Nothing there: EFAULT. Half there: the bytes of the half. */
	munmap(p + PAGE, PAGE);
	CHECK(pvm(false, getpid(), &l, 1, &hole, 1, 0) == -1 && errno == EFAULT);
	CHECK(pvm(false, getpid(), &l, 1, &big, 1, 0) == (long)PAGE);
	CHECK(pvm(true, getpid(), &l, 1, &big, 1, 0) == (long)PAGE);
	/* A read-only page cannot be written this way (no FOLL_FORCE). */
	mprotect(p, PAGE, PROT_READ);
	CHECK(pvm(true, getpid(), &l, 1, &r, 1, 0) == -1 && errno == EFAULT);
	munmap(p, PAGE);
	ktap_report("errors_and_partial", NULL);
}

/* /proc/self/mem: FOLL_FORCE writes a read-only private mapping through a copy. */
static void proc_self_mem_force(void)
{
	char *ro = map(2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	char *shared = map(PAGE, PROT_READ | PROT_WRITE, MAP_SHARED), got[16], path[64];
	int fd = open("/proc/self/mem", O_RDWR), fd2;

	CHECK(fd >= 0);
	strcpy(ro, "before");
	CHECK(mprotect(ro, 2 * PAGE, PROT_READ) == 0);
	CHECK(pread(fd, got, 7, (off_t)(uintptr_t)ro) == 7 && strcmp(got, "before") == 0);
	CHECK(pwrite(fd, "after", 6, (off_t)(uintptr_t)ro) == 6);
	CHECK(strcmp(ro, "after") == 0);
	/* A page never touched (the zero page) gets a private copy too. */
	CHECK(pwrite(fd, "zero", 5, (off_t)(uintptr_t)(ro + PAGE)) == 5);
	CHECK(strcmp(ro + PAGE, "zero") == 0);
	/* Across the page boundary. */
	CHECK(pwrite(fd, "0123456789", 10, (off_t)(uintptr_t)(ro + PAGE - 5)) == 10);
	CHECK(memcmp(ro + PAGE - 5, "0123456789", 10) == 0);
	/* A shared read-only mapping is not written; nothing mapped: EIO. */
	shared[0] = 's';
	CHECK(mprotect(shared, PAGE, PROT_READ) == 0);
	errno = 0;
	CHECK(pwrite(fd, "x", 1, (off_t)(uintptr_t)shared) == -1 && errno == EIO);
	CHECK(shared[0] == 's');
	munmap(ro + PAGE, PAGE);
	CHECK(pread(fd, got, 4, (off_t)(uintptr_t)(ro + PAGE)) == -1 && errno == EIO);
	/* A read running into the hole: what came before it. */
	CHECK(pread(fd, got, 16, (off_t)(uintptr_t)(ro + PAGE - 8)) == 8);
	close(fd);
	/* /proc/<own pid>/mem is the same file. */
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)getpid());
	fd2 = open(path, O_RDONLY);
	CHECK(fd2 >= 0 && pread(fd2, got, 6, (off_t)(uintptr_t)ro) == 6 &&
	      strcmp(got, "after") == 0);
	close(fd2);
	munmap(ro, PAGE);
	munmap(shared, PAGE);
	ktap_report("proc_self_mem_force", NULL);
}

int main(void)
{
	ktap_begin("gup_user", 5);
	readv_writev_self();
	writev_child();
	errors_and_partial();
	proc_self_mem_force();
	CHECK(read_mm_verify() == 0);
	ktap_report("mm_verify_clean", NULL);
	return ktap_finish();
}
