/*
 * A real machine check during page migration's copy (job mce-migrate, with
 * the runner's injection; docs/mm/memory-failure.md): a 2 MiB THP moves
 * between nodes 0 and 1 with move_pages, again and again, while the runner
 * injects an action-required memory error when CPU 0 is inside the
 * machine-check-safe copy (when after=__copy_mc_movsq_before_body: a
 * breakpoint just before its rep movsq). Then, as Linux 6.12:
 *   - move_pages returns 1 (the folio was not migrated) and leaves its
 *     status alone; the THP is still on the node it was on; vmstat's
 *     thp_migration_fail goes up by one;
 *   - the page the copy stopped in is poisoned (the copy queued it for
 *     memory_failure()): exactly one page of the 2 MiB becomes a hwpoison
 *     entry, a touch of it is SIGBUS BUS_MCEERR_AR at that address, the
 *     other 511 keep their bytes and their mappings (the old mappings were
 *     restored), HardwareCorrupted goes up by 4 kB;
 *   - the kernel goes on: a child forks and exits, mm_verify finds nothing.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ktap.h"
#include "mm_verify.h"
#include "proc_files.h"
#include "hwpoison_user.h"

#define MPOL_MF_MOVE	(1 << 1)
#define THP_SIZE	(2UL << 20)
#define NO_STATUS	(-1000)

static long move_one(void *p, int node, int *status)
{
	*status = NO_STATUS;
	return syscall(SYS_move_pages, 0, 1UL, &p, &node, status, MPOL_MF_MOVE);
}

static int node_of(void *p)
{
	int status = NO_STATUS;

	return syscall(SYS_move_pages, 0, 1UL, &p, NULL, &status, 0) ? NO_STATUS : status;
}

static char pattern(size_t i)
{
	return (char)(i / 64 * 7 + 3);
}

/* The one page of the THP that is a hwpoison entry now (-1: none yet, -2: more than one). */
static long poisoned_page(const char *p)
{
	long found = -1;

	for (unsigned long i = 0; i < THP_SIZE / PAGE; i++)
		if (pagemap_of(p + i * PAGE) & PM_SWAP)
			found = found == -1 ? (long)i : -2;
	return found;
}

int main(void)
{
	char *raw = mmap(NULL, 2 * THP_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = (char *)(((uintptr_t)raw + THP_SIZE - 1) & ~(THP_SIZE - 1));
	long success = vmstat("thp_migration_success"), fail, corrupted = hardware_corrupted_kb();
	long ret = 0, page = -1, moves = 0;
	int node, status, child_status = -1, ok = 1;
	struct timespec t0, t;
	cpu_set_t one;
	pid_t child;

	ktap_begin("mce_migrate", 4);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	CHECK(raw != MAP_FAILED && sched_setaffinity(0, sizeof(one), &one) == 0);
	CHECK(write_text("/sys/kernel/mm/transparent_hugepage/enabled", "madvise") > 0);
	CHECK(madvise(p, THP_SIZE, MADV_HUGEPAGE) == 0);
	for (size_t i = 0; i < THP_SIZE; i += 64)
		p[i] = pattern(i);
	node = node_of(p);
	CHECK(node == 0 || node == 1 || node == 2);
	/* A THP moves (whole) before anything is injected. */
	CHECK(move_one(p, node == 0 ? 1 : 0, &status) == 0 && status == (node == 0 ? 1 : 0));
	CHECK(vmstat("thp_migration_success") == success + 1);
	ktap_report("thp_moves", NULL);

	node = node_of(p);
	fail = vmstat("thp_migration_fail");
	catch_sigbus();
	printf("mce-inject: when after=__copy_mc_movsq_before_body mce 0 1 0xbd80000000000000 7 %#llx 0x86\n",
	       (unsigned long long)(PM_PFN(pagemap_of(p)) * PAGE));
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		ret = move_one(p, node == 0 ? 1 : 0, &status);
		if (ret)
			break;
		node = status;
		moves++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 60);
	/*
	 * memory_failure() runs in the kernel's worker: wait for it (10 s at
	 * most) before printing, so that its log lines do not land inside ours.
	 */
	for (int i = 0; ret && i < 100 && (page = poisoned_page(p)) == -1; i++)
		usleep(100000);
	printf("    # move_pages: %ld after %ld moves, status %d\n", ret, moves, status);
	CHECK(ret == 1);
	CHECK(status == NO_STATUS);
	/* Its first and last pages (but the poisoned one, now a hwpoison entry) */
	CHECK(node_of(p + (page == 0 ? PAGE : 0)) == node);
	CHECK(node_of(p + THP_SIZE - (page == THP_SIZE / PAGE - 1 ? 2 : 1) * PAGE) == node);
	CHECK(vmstat("thp_migration_fail") == fail + 1);
	ktap_report("move_pages_reports_the_failure", NULL);

	printf("    # poisoned page %ld of the THP\n", page);
	CHECK(page >= 0);
	if (page >= 0) {
		CHECK(touch_bus(p + page * PAGE + 8) == 1 && bus_lsb == 12);
		for (size_t i = 0; i < THP_SIZE; i += 64)
			if ((long)(i / PAGE) != page && p[i] != pattern(i))
				ok = 0;
		CHECK(ok);
		CHECK(pagemap_of(p + (page ? 0 : PAGE)) & PM_PRESENT);
	}
	CHECK(hardware_corrupted_kb() == corrupted + 4);
	ktap_report("the_poisoned_page_alone_is_lost", NULL);

	child = fork();
	if (child == 0)
		_exit(p[page == 0 ? PAGE : 0] == pattern(page == 0 ? PAGE : 0) ? 0 : 1);
	CHECK(child > 0 && waitpid(child, &child_status, 0) == child && WIFEXITED(child_status) &&
	      WEXITSTATUS(child_status) == 0);
	CHECK(read_mm_verify() == 0);
	ktap_report("the_kernel_goes_on", NULL);
	return ktap_finish();
}
