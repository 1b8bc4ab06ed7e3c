/*
 * A process that consumes poisoned memory (job mce-user, with the runner's
 * machine-check injection; docs/mm/memory-failure.md): it pins itself to
 * CPU 0, finds the physical address of one of its pages
 * (/proc/self/pagemap), asks the runner for an action-required machine
 * check there while it is in user mode, and reads the page until its
 * SIGBUS handler runs. Then:
 *   - the handler got BUS_MCEERR_AR with si_addr the page and si_addr_lsb 12
 *     (memory_failure() ran on the way back to user mode, on the process's
 *     own behalf: it knows the page's address);
 *   - the page is poisoned (HardwareCorrupted +4 kB) and unmapped: pagemap
 *     says swapped (a hwpoison entry), a touch is SIGBUS BUS_MCEERR_AR at
 *     the byte, the page next to it keeps its bytes;
 *   - a second machine check on the same frame (poisoned already) while
 *     it reads the next page: SIGBUS BUS_MCEERR_AR at the poisoned page at
 *     once, nothing counted again;
 *   - the frame is never handed out again (64 MiB touched after), and
 *     debugfs unpoison-pfn refuses it (EOPNOTSUPP after a real error);
 *   - another process, waiting meanwhile on CPU 1, carries on and exits 0,
 *     a new child forks and exits, and mm_verify finds nothing.
 * If no machine check arrives in 60 s the first case fails.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "ktap.h"
#include "mm_verify.h"
#include "hwpoison_user.h"

static void pin_to(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
}

/* A process that waits on CPU 1 while the machine check happens, then works. */
static pid_t start_bystander(int go_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		char *q = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char c;
		int bad = 0;

		pin_to(1);
		if (q == MAP_FAILED)
			_exit(2);
		memset(q, 'b', 16 * PAGE);
		if (read(go_fd, &c, 1) != 1)
			_exit(3);
		for (unsigned long i = 0; i < 16 * PAGE; i++)
			bad += q[i] != 'b';
		_exit(bad ? 4 : 0);
	}
	return pid;
}

/*
 * Ask the runner for a machine check at physical address phys while this
 * process is in user mode, and read the page at vp until the SIGBUS
 * handler jumps back (1), or 60 s have passed (0).
 */
static int machine_check_while_reading(volatile char *vp, uint64_t phys)
{
	struct timespec t0, t;
	volatile long sum = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (sigsetjmp(env, 1))
		return 1;
	printf("mce-inject: when cpl=3 mce 0 1 0xbd80000000000000 7 %#llx 0x86\n",
	       (unsigned long long)phys);
	fflush(stdout);
	do {
		for (int i = 0; i < 1000000; i++)
			sum += vp[i & 4095];
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < 60);
	printf("    # mce_user: no SIGBUS for the machine check at %#llx (sum %ld)\n",
	       (unsigned long long)phys, sum);
	return 0;
}

int main(void)
{
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	volatile char *vp = p;
	long corrupted = hardware_corrupted_kb();
	int go[2], status = -1, got;
	uint64_t pfn = 0, e;
	char text[32];
	pid_t bystander, child;

	ktap_begin("mce_user", 6);
	CHECK(p != MAP_FAILED && corrupted >= 0 && pipe(go) == 0);
	if (p == MAP_FAILED)
		return ktap_finish();
	bystander = start_bystander(go[0]);
	CHECK(bystander > 0);
	pin_to(0);
	memset(p, 'm', 2 * PAGE);
	pfn = PM_PFN(pagemap_of(p));
	CHECK(pfn != 0);
	catch_sigbus();
	got = machine_check_while_reading(vp, pfn * PAGE + 0x40);
	CHECK(got && buses == 1);
	CHECK(bus_code == BUS_MCEERR_AR);
	CHECK(bus_addr == p);
	CHECK(bus_lsb == 12);
	if (got)
		printf("    # SIGBUS code %d addr %p (page %p) lsb %d\n", bus_code, bus_addr,
		       (void *)p, bus_lsb);
	ktap_report("sigbus_action_required_in_the_handler", NULL);

	CHECK(hardware_corrupted_kb() == corrupted + 4);
	e = pagemap_of(p);
	CHECK((e & PM_SWAP) && !(e & PM_PRESENT));
	CHECK(touch_bus(p + 100) == 1 && bus_lsb == 12);
	CHECK(p[PAGE] == 'm' && p[2 * PAGE - 1] == 'm');
	ktap_report("page_poisoned_and_unmapped", NULL);

	/*
	 * A second machine check on the frame, poisoned already, while the
	 * process reads the page next to it: memory_failure() says "already
	 * poisoned", counts nothing, and finds the page's hwpoison entry in
	 * this process: SIGBUS BUS_MCEERR_AR at the page at once (Linux's
	 * kill_accessing_process), no panic, no second unmapping.
	 */
	buses = 0;
	got = machine_check_while_reading(vp + PAGE, pfn * PAGE + 0x80);
	CHECK(got && buses == 1 && bus_code == BUS_MCEERR_AR);
	CHECK(bus_addr == p && bus_lsb == 12);
	CHECK(hardware_corrupted_kb() == corrupted + 4);
	e = pagemap_of(p);
	CHECK((e & PM_SWAP) && !(e & PM_PRESENT));
	CHECK(p[PAGE] == 'm');
	ktap_report("repeat_machine_check_on_a_poisoned_page", NULL);

	{
		size_t len = 64UL << 20;
		char *big = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int seen = 0;

		CHECK(big != MAP_FAILED);
		for (size_t off = 0; big != MAP_FAILED && off < len; off += PAGE) {
			big[off] = 1;
			seen += PM_PFN(pagemap_of(big + off)) == pfn;
		}
		CHECK(seen == 0);
		if (big != MAP_FAILED)
			munmap(big, len);
	}
	/* Not even by asking: after a real machine check unpoison-pfn is EOPNOTSUPP (Linux's rule). */
	snprintf(text, sizeof(text), "%#llx\n", (unsigned long long)pfn);
	CHECK(mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) == 0 || errno == EBUSY);
	CHECK(munmap(p, PAGE) == 0);
	CHECK(write_text("/sys/kernel/debug/hwpoison/unpoison-pfn", text) == -EOPNOTSUPP);
	ktap_report("frame_never_reused", NULL);

	CHECK(write(go[1], "g", 1) == 1);
	CHECK(waitpid(bystander, &status, 0) == bystander && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	child = fork();
	if (child == 0)
		_exit(p[PAGE] == 'm' ? 0 : 1);
	CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	ktap_report("other_processes_go_on", NULL);

	CHECK(read_mm_verify() == 0);
	ktap_report("mm_verify_clean", NULL);
	munmap(p, 2 * PAGE);
	return ktap_finish();
}
