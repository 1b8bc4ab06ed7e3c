/*
 * A real machine check during copy-on-write (job mce-cow, with the runner's
 * injection; docs/mm/copy_mc.md "Callers"): a process shares 16 MiB with a
 * child, which writes every page (each write copies the page with the
 * machine-check-safe copy), child after child, on CPU 0, while the runner
 * injects an action-required memory error when CPU 0 is about to copy the
 * body of one of those pages (when after=__copy_mc_movsq_before_body with
 * CR2, the faulting address, in the 16 MiB: a breakpoint, exact; sampling
 * the CPU's RIP missed the copy on a loaded machine). Then, as Linux 6.12
 * (__wp_page_copy_user,
 * VM_FAULT_HWPOISON):
 *   - the child's write fails: its handler gets SIGBUS BUS_MCEERR_AR at the
 *     page it was writing, si_addr_lsb 12;
 *   - the page the copy read is poisoned (the copy queued it for
 *     memory_failure()): in the parent exactly that page of the 16 MiB
 *     becomes a hwpoison entry, a touch of it is SIGBUS BUS_MCEERR_AR, the
 *     others keep their bytes, HardwareCorrupted goes up by 4 kB;
 *   - the kernel goes on: a child forks and exits, mm_verify finds nothing.
 * If no machine check lands in a copy in 60 s the first case fails.
 */
#define _GNU_SOURCE
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

#define LEN	(16UL << 20)

struct report {
	uintptr_t addr;
	int code, lsb;
};

static char pattern(size_t i)
{
	return (char)(i / PAGE * 5 + 1);
}

/* A child writes every page; on SIGBUS it reports through fd and exits 7. */
static void writer(char *p, int fd)
{
	struct report r;

	catch_sigbus();
	if (sigsetjmp(env, 1) == 0) {
		for (size_t i = 0; i < LEN; i += PAGE)
			p[i] = 'w';
		_exit(0);
	}
	r.addr = (uintptr_t)bus_addr;
	r.code = bus_code;
	r.lsb = bus_lsb;
	_exit(write(fd, &r, sizeof(r)) == sizeof(r) ? 7 : 3);
}

/* The pages of the region that are hwpoison entries: how many, and the last one in *which. */
static long poisoned_pages(const char *p, long *which)
{
	long n = 0;

	for (size_t i = 0; i < LEN / PAGE; i++) {
		if (pagemap_of(p + i * PAGE) & PM_SWAP) {
			*which = (long)i;
			n++;
		}
	}
	return n;
}

int main(void)
{
	char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long corrupted = hardware_corrupted_kb(), rounds = 0, page = -1, n = 0;
	struct report r = { 0, 0, 0 };
	struct timespec t0, t;
	int fds[2], status = -1, ok = 1;
	cpu_set_t one;
	pid_t child;

	ktap_begin("mce_cow", 3);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	CHECK(p != MAP_FAILED && pipe(fds) == 0 && sched_setaffinity(0, sizeof(one), &one) == 0);
	if (p == MAP_FAILED)
		return ktap_finish();
	CHECK(madvise(p, LEN, MADV_NOHUGEPAGE) == 0);	/* a page-sized copy per write */
	for (size_t i = 0; i < LEN; i++)
		p[i] = pattern(i);
	printf("mce-inject: when after=__copy_mc_movsq_before_body cr2=%#lx-%#lx "
	       "mce 0 1 0xbd80000000000000 7 %#llx 0x86\n", (unsigned long)p, (unsigned long)p + LEN,
	       (unsigned long long)(PM_PFN(pagemap_of(p)) * PAGE));
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		child = fork();
		if (child == 0)
			writer(p, fds[1]);
		if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
			break;
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (WEXITSTATUS(status) == 0 && t.tv_sec - t0.tv_sec < 60);
	printf("    # %ld children, the last exit status %d\n", rounds,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 7)
		CHECK(read(fds[0], &r, sizeof(r)) == sizeof(r));
	printf("    # SIGBUS code %d addr %#lx lsb %d\n", r.code, (unsigned long)r.addr, r.lsb);
	CHECK(r.code == BUS_MCEERR_AR && r.lsb == 12);
	CHECK(r.addr >= (uintptr_t)p && r.addr < (uintptr_t)p + LEN && !(r.addr % PAGE));
	ktap_report("cow_write_gets_sigbus_action_required", NULL);

	/* memory_failure() runs in the kernel's worker: 10 s at most. */
	catch_sigbus();
	for (int i = 0; i < 100 && (n = poisoned_pages(p, &page)) == 0; i++)
		usleep(100000);
	printf("    # %ld poisoned page(s), the last %ld\n", n, page);
	CHECK(n == 1 && r.addr == (uintptr_t)(p + page * PAGE));
	if (n == 1) {
		CHECK(touch_bus(p + page * PAGE + 8) == 1 && bus_lsb == 12);
		for (size_t i = 0; i < LEN; i += 64)
			if ((long)(i / PAGE) != page && p[i] != pattern(i))
				ok = 0;
		CHECK(ok);
	}
	CHECK(hardware_corrupted_kb() == corrupted + 4);
	ktap_report("the_source_page_alone_is_lost", NULL);

	child = fork();
	if (child == 0)
		_exit(p[page == 0 ? PAGE : 0] == pattern(page == 0 ? PAGE : 0) ? 0 : 1);
	CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK(read_mm_verify() == 0);
	ktap_report("the_kernel_goes_on", NULL);
	return ktap_finish();
}
