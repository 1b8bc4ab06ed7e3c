/*
 * A process that consumes poisoned memory (job mce-user, with the runner's
 * machine-check injection): it pins itself to CPU 0, finds the physical
 * address of one of its pages (/proc/self/pagemap), asks the runner for an
 * action-required machine check there while it is in user mode, and reads
 * the page until it arrives. The kernel must kill it with SIGBUS and keep
 * running (init then reports "killed by signal 7"). If nothing arrives in
 * 60 s the case fails.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "ktap.h"

#define PM_PRESENT	(1ULL << 63)
#define PM_PFN		((1ULL << 55) - 1)

static uint64_t phys_of(volatile char *p)
{
	uint64_t e = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)p / 4096) * 8) != sizeof(e))
		e = 0;
	close(fd);
	return (e & PM_PRESENT) ? (e & PM_PFN) * 4096 : 0;
}

int main(void)
{
	volatile char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cpu_set_t one;
	struct timespec t0, t;
	uint64_t pa;
	long sum = 0;

	ktap_begin("mce_user", 1);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	CHECK(p != MAP_FAILED);
	CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
	if (p == MAP_FAILED)
		return ktap_finish();
	p[0] = 1;
	pa = phys_of(p);
	CHECK(pa != 0);
	printf("mce-inject: when cpl=3 mce 0 1 0xbd80000000000000 7 %#llx 0x86\n",
	       (unsigned long long)pa);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000000; i++)
			sum += p[i & 4095];
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 60);
	printf("    # mce_user: no machine check arrived (sum %ld)\n", sum);
	CHECK(!"killed by SIGBUS");
	ktap_report("killed_by_sigbus", NULL);
	return ktap_finish();
}
