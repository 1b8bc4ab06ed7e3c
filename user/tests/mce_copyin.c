/*
 * A real machine check while the kernel reads a user page in
 * copy_from_user (job mce-copyin, with the runner's injection;
 * docs/mm/memory-failure.md "In the kernel, reading user memory"): a
 * process writes one page of its memory into a pipe, again and again, on
 * CPU 0, while the runner injects an action-required memory error when CPU
 * 0 is about to copy from that page (when after=copy_user_generic_before_copy
 * with rsi, the copy's source, in the page). Then, as Linux 6.12
 * (is_copy_from_user, kill_me_never):
 *   - the write(2) fails with EFAULT and the kernel goes on: nothing of the
 *     page reached the pipe, no signal comes with it;
 *   - the page is poisoned (memory_failure() without MF_ACTION_REQUIRED):
 *     it becomes a hwpoison entry, the next touch of it is SIGBUS
 *     BUS_MCEERR_AR with si_addr_lsb 12, the other pages keep their bytes,
 *     HardwareCorrupted goes up by 4 kB;
 *   - a child forks and exits, mm_verify finds nothing.
 * If no machine check lands in 60 s the first case fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ktap.h"
#include "mm_verify.h"
#include "hwpoison_user.h"

#define PAGES	4
#define TARGET	1		/* the page written to the pipe */

static char pattern(size_t i)
{
	return (char)(i / PAGE * 7 + 3);
}

int main(void)
{
	char *p = mmap(NULL, PAGES * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long corrupted = hardware_corrupted_kb(), rounds = 0;
	char *page = p + TARGET * PAGE, sink[PAGE];
	struct timespec t0, t;
	int fds[2], status, ok = 1, err = 0;
	ssize_t n = 0;
	cpu_set_t one;
	pid_t child;

	ktap_begin("mce_copyin", 3);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	CHECK(p != MAP_FAILED && pipe(fds) == 0 && sched_setaffinity(0, sizeof(one), &one) == 0);
	if (p == MAP_FAILED)
		return ktap_finish();
	for (size_t i = 0; i < PAGES * PAGE; i++)
		p[i] = pattern(i);
	printf("mce-inject: when after=copy_user_generic_before_copy rsi=%#lx-%#lx "
	       "mce 0 1 0xbd80000000000000 7 %#llx 0x86\n", (unsigned long)page,
	       (unsigned long)page + PAGE, (unsigned long long)(PM_PFN(pagemap_of(page)) * PAGE));
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		n = write(fds[1], page, PAGE);
		if (n != (ssize_t)PAGE) {
			err = errno;
			break;
		}
		CHECK(read(fds[0], sink, PAGE) == PAGE);
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 60);
	/* No SIGBUS handler yet: a signal now (Linux sends none) kills the test. */
	printf("    # %ld writes, then %zd (errno %d)\n", rounds, n, err);
	CHECK(n == -1 && err == EFAULT);
	/* Nothing of the failed write is in the pipe. */
	CHECK(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0 && read(fds[0], sink, PAGE) == -1 && errno == EAGAIN);
	ktap_report("write_gets_efault", NULL);

	/* memory_failure() ran on the way out of write(): the page is gone. */
	printf("    # pagemap %#llx\n", (unsigned long long)pagemap_of(page));
	CHECK(pagemap_of(page) & PM_SWAP);
	catch_sigbus();
	CHECK(touch_bus(page + 8) == 1 && bus_lsb == 12);
	for (size_t i = 0; i < PAGES * PAGE; i += 64)
		if (i / PAGE != TARGET && p[i] != pattern(i))
			ok = 0;
	CHECK(ok);
	CHECK(hardware_corrupted_kb() == corrupted + 4);
	ktap_report("the_page_alone_is_lost", NULL);

	child = fork();
	if (child == 0)
		_exit(p[0] == pattern(0) ? 0 : 1);
	CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK(read_mm_verify() == 0);
	ktap_report("the_kernel_goes_on", NULL);
	return ktap_finish();
}
