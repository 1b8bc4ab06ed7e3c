/*
 * A page fault that finds no memory (arch/x86_64/kernel/traps.c): the
 * faulting process is killed with SIGKILL and the kernel says "out of
 * memory at a page fault" (Quire has no OOM killer to pick a victim and
 * retry, as Linux would), never a SIGSEGV for an address that is mapped.
 * A child writes to an anonymous mapping larger than the machine's memory;
 * the parent checks how it ended, that the memory came back, and that
 * mm_verify is clean.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include "ktap.h"
#include "mm_verify.h"

static long mem_free_kb(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/meminfo", "r");
	long kb = -1;

	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "MemFree: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

int main(void)
{
	long before = mem_free_kb(), after;
	size_t len = (size_t)(before + (256L << 10)) << 10;	/* 256 MiB more than is free */
	int status = 0;
	pid_t pid;

	ktap_begin("oom_fault", 1);
	CHECK(before > 0);
	pid = fork();
	if (pid == 0) {
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p == MAP_FAILED)
			_exit(2);
		madvise(p, len, MADV_HUGEPAGE);		/* fewer faults to get there */
		for (size_t off = 0; off < len; off += 4096)
			p[off] = 1;
		_exit(3);				/* never: there is not that much */
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	printf("    # child: %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	after = mem_free_kb();
	printf("    # MemFree %ld kB before, %ld kB after\n", before, after);
	CHECK(after >= before - 1024);		/* (a little for slab and page tables kept) */
	CHECK(read_mm_verify() == 0);
	ktap_report("fault_without_memory_kills_with_sigkill", NULL);
	return ktap_finish();
}
