/*
 * A dynamically linked glibc program (built with the host's gcc as a PIE):
 * the kernel loads it at ELF_ET_DYN_BASE and starts the interpreter its
 * PT_INTERP names (/lib64/ld-linux-x86-64.so.2), which maps libc.so.6 from
 * the initrd. The cases check what the kernel handed over (argv, envp, the
 * auxiliary vector) and that libc works through the loader's mappings.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"

#define ELF_ET_DYN_BASE 0x555555554000UL	/* Quire does not randomize */

extern char _start[];

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* The load bias: where AT_PHDR is, less the PT_PHDR's own p_vaddr. */
static unsigned long load_bias(void)
{
	const ElfW(Phdr) *ph = (const void *)getauxval(AT_PHDR);
	unsigned long n = getauxval(AT_PHNUM);

	for (unsigned long i = 0; ph && i < n; i++)
		if (ph[i].p_type == PT_PHDR)
			return (unsigned long)ph - ph[i].p_vaddr;
	return 0;
}

static void case_args(int argc, char **argv, char **envp)
{
	CHECK(argc >= 1);
	CHECK(argv[argc] == NULL);
	CHECK(ends_with(argv[0], "hello_dyn"));
	CHECK(envp != NULL);
	ktap_report("argv_envp", NULL);
}

static void case_auxv(void)
{
	const unsigned char *rnd = (const void *)getauxval(AT_RANDOM);
	const char *execfn = (const char *)getauxval(AT_EXECFN);
	const char *platform = (const char *)getauxval(AT_PLATFORM);
	unsigned long base = getauxval(AT_BASE);
	unsigned int any = 0;

	CHECK(getauxval(AT_PAGESZ) == 4096);
	CHECK(base != 0 && (base & 4095) == 0);
	CHECK(getauxval(AT_ENTRY) == (unsigned long)_start);
	CHECK(getauxval(AT_PHENT) == sizeof(ElfW(Phdr)));
	CHECK(getauxval(AT_SECURE) == 0);
	CHECK(getauxval(AT_UID) == getuid() && getauxval(AT_EUID) == geteuid());
	CHECK(getauxval(AT_CLKTCK) == 100);
	CHECK(rnd != NULL);
	for (int i = 0; rnd && i < 16; i++)
		any |= rnd[i];
	CHECK(any != 0);
	CHECK(execfn && ends_with(execfn, "hello_dyn"));
	CHECK(platform && !strcmp(platform, "x86_64"));
	ktap_report("auxv", NULL);
}

static void case_pie_base(void)
{
	unsigned long bias = load_bias();

	CHECK(bias == ELF_ET_DYN_BASE);
	CHECK((unsigned long)_start > ELF_ET_DYN_BASE);
	/* The interpreter and libc lie elsewhere: in the mmap area, above the program. */
	CHECK(getauxval(AT_BASE) > bias + (1UL << 32));
	CHECK((unsigned long)&printf > bias + (1UL << 32));
	ktap_report("pie_at_base", NULL);
}

static void case_libc(void)
{
	char buf[64];
	char *small = malloc(24), *big = malloc(1 << 20);	/* brk, then mmap */

	CHECK(small && big);
	if (small && big) {
		memset(big, 0x5a, 1 << 20);
		CHECK(big[(1 << 20) - 1] == 0x5a);
		strcpy(small, "dynamic");
	}
	snprintf(buf, sizeof(buf), "%s %d %.2f %#lx", small ? small : "", 42, 2.5, 0x1000UL);
	CHECK(!strcmp(buf, "dynamic 42 2.50 0x1000"));
	free(big);
	free(small);
	ktap_report("libc_stdio_malloc", NULL);
}

static void case_tls_errno(void)
{
	struct timespec ts = { 0, 0 };

	errno = 0;
	CHECK(close(-1) == -1 && errno == EBADF);
	/* No vDSO (no AT_SYSINFO_EHDR): glibc makes the system call. */
	CHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0 && (ts.tv_sec || ts.tv_nsec));
	ktap_report("tls_errno_clock", NULL);
}

static void case_fork(void)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0)
		_exit(printf("    # child of a dynamic program\n") > 0 ? 7 : 1);
	CHECK(pid > 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	ktap_report("fork_wait", NULL);
}

/* glibc's fork relies on it: the child finds its own tid at ctid. */
static void case_clone_child_settid(void)
{
	static volatile int ctid;
	int status = -1;
	long pid;

	ctid = -1;
	pid = syscall(SYS_clone, CLONE_CHILD_SETTID | SIGCHLD, 0, NULL, &ctid, 0);
	if (pid == 0)
		_exit(ctid == syscall(SYS_gettid) ? 0 : 1);
	CHECK(pid > 0);
	CHECK(ctid == -1);	/* the parent's copy is untouched */
	CHECK(waitpid((pid_t)pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ktap_report("clone_child_settid", NULL);
}

int main(int argc, char **argv, char **envp)
{
	ktap_begin("hello_dyn", 7);
	case_args(argc, argv, envp);
	case_auxv();
	case_pie_base();
	case_libc();
	case_tls_errno();
	case_fork();
	case_clone_child_settid();
	return ktap_finish();
}
