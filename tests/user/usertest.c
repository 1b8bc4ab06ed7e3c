/*
 * The first ring-3 test program. Run with one argument naming what to do:
 *   basic        system calls and their errors (exit 1 if a check failed)
 *   write-text   write to its own code (must die of SIGSEGV)
 *   read-hole    read an unmapped address (SIGSEGV)
 *   null         write through NULL (SIGSEGV)
 *   exec-stack   jump into its (non-executable) stack (SIGSEGV)
 *   exit-N       exit with status N
 *   fork         fork, copy-on-write, wait4, kill, a child's crash
 *   fork-many    1000 fork/exit/wait cycles
 *   protect      mprotect and madvise, checked from forked children
 *   filemap      file-backed and shared mappings
 *   fail-256     256 failed checks: must exit 1, not 256 & 0xff = 0
 */
#include "ulib.h"

#define SYS_read 0
#define SYS_write 1
#define SYS_mmap 9
#define SYS_munmap 11
#define SYS_brk 12
#define SYS_writev 20
#define SYS_getpid 39
#define SYS_fork 57
#define SYS_exit 60
#define SYS_wait4 61
#define SYS_kill 62
#define SYS_sched_yield 24
#define SYS_getppid 110
#define SYS_uname 63
#define SYS_sysinfo 99
#define SYS_arch_prctl 158
#define SYS_clock_gettime 228
#define SYS_getrandom 318

#define EFAULT 14
#define EINVAL 22
#define ENOSYS 38
#define EBADF 9
#define EEXIST 17
#define ENOMEM 12
#define ECHILD 10

static long mmap_(u64 addr, u64 len, long prot, long flags)
{
	return syscall6(SYS_mmap, (long)addr, (long)len, prot, flags, -1, 0);
}

static char mask_sink[256];

static int basic(void)
{
	char *p, *q;
	long brk0, brk1, r;
	u64 fs = 0;
	char uts[65 * 6];

	/* write and its errors */
	CHECK(syscall3(SYS_write, 1, "    # hello from ring 3\n", 24) == 24);
	CHECK(syscall3(SYS_write, 1, (void *)0x10, 5) == -EFAULT);
	CHECK(syscall3(SYS_write, 1, (void *)0xffff888000000000UL, 5) == -EFAULT);
	CHECK(syscall3(SYS_write, 7, "x", 1) == -EBADF);
	CHECK(syscall3(SYS_read, 0, (void *)0xffff888000000000UL, 5) == -EFAULT);
	CHECK(syscall3(SYS_uname, uts, 0, 0) == 0 && ustreq(uts, "Quire"));
	CHECK(syscall3(SYS_uname, (void *)1, 0, 0) == -EFAULT);
	CHECK(syscall3(SYS_clock_gettime, 1, (void *)0x10, 0) == -EFAULT);
	/* sysinfo: Linux's layout, bytes (mem_unit 1), free <= total, this task counted */
	{
		unsigned long si[14];	/* struct sysinfo: 112 bytes */

		CHECK(syscall3(SYS_sysinfo, si, 0, 0) == 0);
		CHECK((unsigned)si[13] == 1);			/* mem_unit */
		CHECK(si[4] > (64UL << 20) && si[5] <= si[4]);	/* totalram, freeram */
		CHECK((si[10] & 0xffff) >= 1);			/* procs */
		CHECK((long)si[0] >= 0);			/* uptime */
		CHECK(syscall3(SYS_sysinfo, (void *)0x10, 0, 0) == -EFAULT);
		CHECK(syscall3(SYS_sysinfo, (void *)0xffff888000001000UL, 0, 0) == -EFAULT);
	}
	CHECK(syscall3(SYS_getpid, 0, 0, 0) > 0);
	CHECK(syscall3(999, 0, 0, 0) == -ENOSYS);

	/* anonymous mmap: zero-filled, writable, distinct */
	p = (char *)mmap_(0, 3 * 4096, 3, 0x22);
	CHECK((long)p > 0 && ((u64)p & 4095) == 0);
	if ((long)p > 0) {
		CHECK(p[0] == 0 && p[3 * 4096 - 1] == 0);
		for (int i = 0; i < 3 * 4096; i++)
			p[i] = (char)i;
		for (int i = 0; i < 3 * 4096; i++)
			if (p[i] != (char)i) {
				CHECK(!"mmap data kept");
				break;
			}
		/* unmap the middle page: the VMA splits, the ends survive */
		CHECK(syscall3(SYS_munmap, p + 4096, 4096, 0) == 0);
		CHECK(p[0] == 0 && p[2 * 4096] == (char)(2 * 4096));
		/* MAP_FIXED_NOREPLACE over a live page fails, into the hole works */
		CHECK(mmap_((u64)p, 4096, 3, 0x22 | 0x100000) == -EEXIST);
		q = (char *)mmap_((u64)p + 4096, 4096, 3, 0x22 | 0x100000);
		CHECK(q == p + 4096 && q[0] == 0);
		CHECK(syscall3(SYS_munmap, p, 3 * 4096, 0) == 0);
	}
	/* mmap errors */
	CHECK(mmap_(0, 0, 3, 0x22) == -EINVAL);
	CHECK(mmap_(0, 4096, 3, 0x20) == -EINVAL);		/* neither shared nor private */
	CHECK(mmap_(0x1001, 4096, 3, 0x32) == -EINVAL);	/* MAP_FIXED, unaligned */
	CHECK(syscall3(SYS_munmap, 0x1001, 4096, 0) == -EINVAL);
	CHECK(syscall3(SYS_munmap, 0x10000, 0, 0) == -EINVAL);

	/* brk grows and shrinks; memory above the old break is zero */
	brk0 = syscall3(SYS_brk, 0, 0, 0);
	CHECK(brk0 > 0);
	brk1 = syscall3(SYS_brk, brk0 + 100000, 0, 0);
	CHECK(brk1 == brk0 + 100000);
	if (brk1 == brk0 + 100000) {
		char *b = (char *)brk0;

		CHECK(b[0] == 0 && b[99999] == 0);
		b[99999] = 7;
		CHECK(syscall3(SYS_brk, brk0, 0, 0) == brk0);
	}
	CHECK(syscall3(SYS_brk, 0x100, 0, 0) == brk0);		/* refused: unchanged */

	/* TLS base */
	r = syscall3(SYS_arch_prctl, 0x1002, 0x12345000, 0);
	CHECK(r == 0);
	CHECK(syscall3(SYS_arch_prctl, 0x1003, &fs, 0) == 0 && fs == 0x12345000);
	CHECK(syscall3(SYS_arch_prctl, 0x1002, 0xffff800000000000UL, 0) < 0);

	/* files: memfd, lseek, read back; pipes */
	{
		char buf[8] = { 0 };
		int fds[2];
		long fd = syscall3(319, "scratch", 0, 0);		/* memfd_create */

		CHECK(fd >= 3);
		CHECK(syscall3(SYS_write, fd, "quire", 5) == 5);
		CHECK(syscall3(8, fd, 0, 0) == 0);			/* lseek to 0 */
		CHECK(syscall3(SYS_read, fd, buf, 8) == 5 && ustreq(buf, "quire"));
		CHECK(syscall3(3, fd, 0, 0) == 0);			/* close */
		CHECK(syscall3(3, fd, 0, 0) == -EBADF);
		CHECK(syscall3(293, fds, 0, 0) == 0);			/* pipe2 */
		CHECK(syscall3(SYS_write, fds[1], "xy", 2) == 2);
		CHECK(syscall3(SYS_read, fds[0], buf, 8) == 2 && buf[0] == 'x' && buf[1] == 'y');
		CHECK(syscall3(3, fds[1], 0, 0) == 0);
		CHECK(syscall3(SYS_read, fds[0], buf, 8) == 0);		/* end of file */
		CHECK(syscall3(3, fds[0], 0, 0) == 0);
	}
	/* affinity, robust list */
	{
		u64 mask = 0;

		CHECK(syscall3(204, 0, 8, &mask) == 8 && mask != 0);	/* sched_getaffinity */
		CHECK(syscall3(273, 0x10000, 24, 0) == 0);		/* set_robust_list */
		CHECK(syscall3(273, 0x10000, 7, 0) == -EINVAL);
	}
	/* every pointer-taking call refuses a bad pointer with EFAULT */
	{
		void *bad = (void *)0xffff888000001000UL;	/* a kernel address */
		void *hole = (void *)0x10;			/* unmapped user address */

		CHECK(syscall3(2, bad, 0, 0) == -EFAULT);		/* open */
		CHECK(syscall3(2, hole, 0, 0) == -EFAULT);
		CHECK(syscall3(4, "/dev", bad, 0) == -EFAULT);		/* stat: buffer */
		CHECK(syscall3(4, hole, &mask_sink, 0) == -EFAULT);	/* stat: path */
		CHECK(syscall3(5, 1, hole, 0) == -EFAULT);		/* fstat */
		CHECK(syscall3(293, bad, 0, 0) == -EFAULT);		/* pipe2 */
		CHECK(syscall3(20, 1, bad, 1) == -EFAULT);		/* writev */
		CHECK(syscall3(61, -1, bad, 0) == -ECHILD);		/* wait4: no child first */
		CHECK(syscall3(35, hole, 0, 0) == -EFAULT);		/* nanosleep */
		CHECK(syscall3(318, bad, 8, 0) == -EFAULT);		/* getrandom */
		CHECK(syscall3(204, 0, 8, bad) == -EFAULT);		/* sched_getaffinity */
		CHECK(syscall3(14, 0, bad, 0) < 0);			/* rt_sigprocmask: bad size too */
		CHECK(syscall6(14, 0, (long)bad, 0, 8, 0, 0) == -EFAULT);
		CHECK(syscall3(SYS_arch_prctl, 0x1003, bad, 0) == -EFAULT);
		CHECK(syscall3(59, hole, 0, 0) == -EFAULT);		/* execve */
		CHECK(syscall3(80, bad, 0, 0) == -EFAULT);		/* chdir */
		CHECK(syscall3(16, 1, 0x5413, bad) == -EFAULT);		/* ioctl TIOCGWINSZ */
	}

	/* the stack grows on demand below its first pages */
	{
		volatile char big[64 * 1024];

		big[0] = 1;
		big[sizeof(big) - 1] = 2;
		CHECK(big[0] + big[sizeof(big) - 1] == 3);
	}
	return checks_status();
}

static long wait_(long pid, int *status, long options)
{
	return syscall6(SYS_wait4, pid, (long)status, options, 0, 0, 0);
}

#define COW_PAGES 64

static int fork_checks(void)
{
	char *p = (char *)mmap_(0, COW_PAGES * 4096, 3, 0x22);
	long me = syscall3(SYS_getpid, 0, 0, 0), pid;
	int status = -1;

	CHECK((long)p > 0);
	if ((long)p <= 0)
		return checks_status();
	for (int i = 0; i < COW_PAGES; i++)
		p[i * 4096] = (char)i;
	CHECK(wait_(-1, &status, 0) == -ECHILD);		/* no children yet */

	pid = syscall3(SYS_fork, 0, 0, 0);
	if (pid == 0) {
		/* The child sees the parent's data, writes its own, and exits. */
		int bad = syscall3(SYS_getppid, 0, 0, 0) != me;

		for (int i = 0; i < COW_PAGES; i++) {
			bad += p[i * 4096] != (char)i;
			p[i * 4096] = (char)(100 + i);
		}
		for (int i = 0; i < COW_PAGES; i++)
			bad += p[i * 4096] != (char)(100 + i);
		syscall3(SYS_exit, bad ? 40 + (bad > 9 ? 9 : bad) : 42, 0, 0);
	}
	CHECK(pid > 0);
	CHECK(wait_(pid, &status, 0) == pid);
	CHECK((status & 0x7f) == 0 && ((status >> 8) & 0xff) == 42);
	/* The parent's pages did not change when the child wrote. */
	for (int i = 0; i < COW_PAGES; i++)
		if (p[i * 4096] != (char)i) {
			CHECK(!"parent data intact after the child wrote");
			break;
		}
	/* And the parent can write its own copy afterwards. */
	for (int i = 0; i < COW_PAGES; i++)
		p[i * 4096] = (char)(200 + i);
	CHECK(p[5 * 4096] == (char)205);

	/* A child that crashes dies alone. */
	pid = syscall3(SYS_fork, 0, 0, 0);
	if (pid == 0) {
		volatile int *bad = (volatile int *)8;

		__asm__("" : "+r"(bad));	/* keep the compiler from seeing through it */
		*bad = 1;
		syscall3(SYS_exit, 0, 0, 0);
	}
	CHECK(wait_(pid, &status, 0) == pid && (status & 0x7f) == 11);

	/* kill: a child spinning in sched_yield ends with SIGKILL. */
	pid = syscall3(SYS_fork, 0, 0, 0);
	if (pid == 0)
		for (;;)
			syscall3(SYS_sched_yield, 0, 0, 0);
	CHECK(wait_(pid, &status, 1) == 0);			/* WNOHANG: still running */
	CHECK(syscall3(SYS_kill, pid, 9, 0) == 0);
	CHECK(wait_(pid, &status, 0) == pid && (status & 0x7f) == 9);
	CHECK(syscall3(SYS_kill, pid, 9, 0) < 0);		/* gone */
	CHECK(wait_(-1, &status, 0) == -ECHILD);

	/* waitid: WNOWAIT leaves the zombie, then a plain waitid reaps it. */
	pid = syscall3(SYS_fork, 0, 0, 0);
	if (pid == 0)
		syscall3(SYS_exit, 33, 0, 0);
	{
		int info[32];

		CHECK(syscall6(247, 1, pid, (long)info, 4 | 0x01000000, 0, 0) == 0);
		CHECK(info[0] == 17 && info[2] == 1 && info[4] == pid && info[6] == 33);
		CHECK(syscall6(247, 1, pid, (long)info, 4, 0, 0) == 0 && info[6] == 33);
		CHECK(syscall6(247, 1, pid, (long)info, 4, 0, 0) == -ECHILD);
		CHECK(syscall6(247, 0, 0, (long)info, 0, 0, 0) == -EINVAL);	/* no WEXITED */
	}
	return checks_status();
}

#define SYS_mprotect 10
#define SYS_madvise 28

/* Run fn in a child; return its wait status. */
static int in_child(void (*fn)(char *), char *arg)
{
	int status = -1;
	long pid = syscall3(SYS_fork, 0, 0, 0);

	if (pid == 0) {
		fn(arg);
		syscall3(SYS_exit, 0, 0, 0);
	}
	wait_(pid, &status, 0);
	return status;
}

static void touch_write(char *p)
{
	p[0] = 1;
}

static void touch_read(char *p)
{
	syscall3(SYS_exit, *(volatile char *)p, 0, 0);
}

static int protect_checks(void)
{
	char *p = (char *)mmap_(0, 4 * 4096, 3, 0x22);

	CHECK((long)p > 0);
	if ((long)p <= 0)
		return checks_status();
	for (int i = 0; i < 4; i++)
		p[i * 4096] = (char)(10 + i);
	/* The middle pages read-only: writes kill, reads work, the ends stay writable. */
	CHECK(syscall3(SYS_mprotect, p + 4096, 2 * 4096, 1) == 0);
	CHECK((in_child(touch_write, p + 4096) & 0x7f) == 11);
	CHECK(((in_child(touch_read, p + 2 * 4096) >> 8) & 0xff) == 12);
	CHECK(in_child(touch_write, p) == 0 && in_child(touch_write, p + 3 * 4096) == 0);
	/* PROT_NONE: even reads kill. Back to read-write: the data is still there. */
	CHECK(syscall3(SYS_mprotect, p + 4096, 4096, 0) == 0);
	CHECK((in_child(touch_read, p + 4096) & 0x7f) == 11);
	CHECK(syscall3(SYS_mprotect, p, 4 * 4096, 3) == 0);
	CHECK(p[4096] == 11);
	p[4096] = 42;
	/* Errors: unaligned, bad bits, and a range running into a hole. */
	CHECK(syscall3(SYS_mprotect, p + 1, 4096, 1) == -EINVAL);
	CHECK(syscall3(SYS_mprotect, p, 4096, 0x100) == -EINVAL);
	CHECK(syscall3(SYS_munmap, p + 3 * 4096, 4096, 0) == 0);
	CHECK(syscall3(SYS_mprotect, p, 4 * 4096, 1) == -ENOMEM);
	/* madvise: DONTNEED drops the contents (zero on next touch). */
	CHECK(syscall3(SYS_madvise, p + 4096, 4096, 4) == 0);
	CHECK(p[4096] == 0 && p[0] == 10);
	CHECK(syscall3(SYS_madvise, p, 4096, 12345) == -EINVAL);
	CHECK(syscall3(SYS_madvise, p + 3 * 4096, 4096, 4) == -ENOMEM);
	CHECK(syscall3(SYS_madvise, p + 1, 4096, 4) == -EINVAL);
	CHECK(syscall3(SYS_madvise, p, 4096, 14) == 0);	/* MADV_HUGEPAGE: accepted */
	/* DONTFORK: the child has a hole there. */
	CHECK(syscall3(SYS_madvise, p + 2 * 4096, 4096, 10) == 0);
	CHECK((in_child(touch_read, p + 2 * 4096) & 0x7f) == 11);
	CHECK(p[2 * 4096] == 12);				/* the parent keeps it */
	return checks_status();
}

static void touch_read_exit(char *p)
{
	syscall3(SYS_exit, *(volatile char *)p, 0, 0);
}

static int filemap_checks(void)
{
	char page[4096];
	char *priv, *shr, *anon;
	long fd = syscall3(2, "/tmp/mapped", 0102, 0644);	/* O_RDWR|O_CREAT */
	int status;

	CHECK(fd >= 0);
	for (int i = 0; i < 3; i++) {
		for (int j = 0; j < 4096; j++)
			page[j] = (char)('a' + i);
		CHECK(syscall3(SYS_write, fd, page, 4096) == 4096);
	}
	/* Private: the file's contents; writes stay private. */
	priv = (char *)syscall6(SYS_mmap, 0, 3 * 4096, 3, 0x02, fd, 0);
	CHECK((long)priv > 0);
	CHECK(priv[0] == 'a' && priv[4096] == 'b' && priv[2 * 4096 + 100] == 'c');
	priv[4096] = 'X';
	CHECK(syscall3(8, fd, 4096, 0) == 4096 && syscall3(SYS_read, fd, page, 1) == 1 && page[0] == 'b');
	/* Shared, at an offset: writes reach the file. */
	shr = (char *)syscall6(SYS_mmap, 0, 4096, 3, 0x01, fd, 2 * 4096);
	CHECK((long)shr > 0 && shr[0] == 'c');
	shr[1] = 'Z';
	CHECK(syscall3(8, fd, 2 * 4096 + 1, 0) > 0 && syscall3(SYS_read, fd, page, 1) == 1 && page[0] == 'Z');
	/* A private mapping keeps its copy; the shared one sees the file. */
	CHECK(priv[4096] == 'X' && priv[2 * 4096 + 1] == 'Z');
	/* Past the end of the file: SIGBUS (7). */
	{
		char *big = (char *)syscall6(SYS_mmap, 0, 8 * 4096, 1, 0x02, fd, 0);

		CHECK((long)big > 0);
		CHECK((in_child(touch_read_exit, big + 5 * 4096) & 0x7f) == 7);
	}
	/* Errors: unaligned offset, bad fd, write-shared on a read-only file. */
	CHECK(syscall6(SYS_mmap, 0, 4096, 1, 0x02, fd, 100) == -EINVAL);
	CHECK(syscall6(SYS_mmap, 0, 4096, 1, 0x02, 77, 0) == -EBADF);
	{
		long ro = syscall3(2, "/tmp/mapped", 0, 0);

		CHECK(syscall6(SYS_mmap, 0, 4096, 3, 0x01, ro, 0) == -13);	/* EACCES */
		syscall3(3, ro, 0, 0);
	}
	syscall3(3, fd, 0, 0);
	/* Shared anonymous memory is shared with a forked child. */
	anon = (char *)syscall6(SYS_mmap, 0, 4096, 3, 0x21, -1, 0);
	CHECK((long)anon > 0);
	anon[0] = 1;
	if (syscall3(SYS_fork, 0, 0, 0) == 0) {
		anon[0] = 42;
		syscall3(SYS_exit, 0, 0, 0);
	}
	wait_(-1, &status, 0);
	CHECK(anon[0] == 42);
	syscall3(87, "/tmp/mapped", 0, 0);		/* unlink: the mappings keep the pages */
	CHECK(priv[0] == 'a' && shr[1] == 'Z');
	return checks_status();
}

static int fork_many(void)
{
	for (int i = 0; i < 1000; i++) {
		int status;
		long pid = syscall3(SYS_fork, 0, 0, 0);

		if (pid == 0)
			syscall3(SYS_exit, i & 0x7f, 0, 0);
		if (pid < 0 || wait_(pid, &status, 0) != pid || ((status >> 8) & 0xff) != (i & 0x7f))
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";

	if (ustreq(mode, "basic"))
		return basic();
	if (ustreq(mode, "fork"))
		return fork_checks();
	if (ustreq(mode, "fork-many"))
		return fork_many();
	if (ustreq(mode, "protect"))
		return protect_checks();
	if (ustreq(mode, "filemap"))
		return filemap_checks();
	if (ustreq(mode, "fail-256")) {
		failures = 256;		/* as if 256 CHECKs had failed, without the noise */
		return checks_status();
	}
	if (ustreq(mode, "write-text")) {
		*(volatile char *)(u64)main = 0;
		return 100;
	}
	if (ustreq(mode, "read-hole"))
		return *(volatile char *)0x7f0000001000UL;
	if (ustreq(mode, "null")) {
		*(volatile int *)0 = 1;
		return 100;
	}
	if (ustreq(mode, "exec-stack")) {
		unsigned char code[16] = { 0xc3 };	/* ret */

		((void (*)(void))code)();
		return 100;
	}
	if (mode[0] == 'e' && mode[1] == 'x' && mode[2] == 'i' && mode[3] == 't' && mode[4] == '-')
		return mode[5] - '0';
	return 99;
}
