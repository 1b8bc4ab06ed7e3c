/*
 * /sys/kernel/debug/gup_test from ring 3 (mm/gup_test.c, docs/mm/gup.md),
 * the interface Linux's gup_test, gup_longterm and cow selftests use:
 * each command on an anonymous range, what it reports (size, which_pages)
 * and what GUP counted (/proc/vmstat's gup_pages, gup_fast_pages), the
 * gup_flags Linux refuses, the errors, and the long-term pin: the pinned
 * pages cannot be migrated (move_pages leaves them on their node) until
 * STOP, the file's close or the process's exit, and READ sees what the
 * process writes; a long-term pin of one page of an mTHP or THP of each
 * order holds the whole folio. Then /proc/quire/mm_verify. Job
 * gup-test-user-numa3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "mm_verify.h"
#include "proc_files.h"

#define PAGE	4096UL
#define GUP_TEST_FILE	"/sys/kernel/debug/gup_test"

/* Linux 6.12's mm/gup_test.h interface, restated (user programs have no kernel header for it). */
struct gup_test {
	uint64_t get_delta_usec, put_delta_usec, addr, size;
	uint32_t nr_pages_per_call, gup_flags, test_flags, which_pages[8];
};
struct pin_longterm_test {
	uint64_t addr, size;
	uint32_t flags;
};
#define GUP_FAST_BENCHMARK	_IOWR('g', 1, struct gup_test)
#define PIN_FAST_BENCHMARK	_IOWR('g', 2, struct gup_test)
#define PIN_LONGTERM_BENCHMARK	_IOWR('g', 3, struct gup_test)
#define GUP_BASIC_TEST		_IOWR('g', 4, struct gup_test)
#define PIN_BASIC_TEST		_IOWR('g', 5, struct gup_test)
#define DUMP_USER_PAGES_TEST	_IOWR('g', 6, struct gup_test)
#define PIN_LONGTERM_TEST_START	_IOW('g', 7, struct pin_longterm_test)
#define PIN_LONGTERM_TEST_STOP	_IO('g', 8)
#define PIN_LONGTERM_TEST_READ	_IOW('g', 9, uint64_t)
#define GUP_TEST_FLAG_DUMP_PAGES_USE_PIN	1
#define PIN_LONGTERM_TEST_FLAG_USE_WRITE	1
#define PIN_LONGTERM_TEST_FLAG_USE_FAST		2

#define FOLL_WRITE		0x01
#define FOLL_GET		0x02
#define FOLL_DUMP		0x04
#define FOLL_LONGTERM		0x100
#define FOLL_HONOR_NUMA_FAULT	0x1000
#define FOLL_TOUCH		0x10000		/* internal to Linux's GUP */

static int gup_fd = -1;

static char *map_anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Small pages only: the counts below are per page. */
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < len; i += PAGE)
		p[i] = (char)(i / PAGE + 1);
	return p;
}

static int run(unsigned long cmd, char *p, size_t len, unsigned int per_call, unsigned int flags,
	       struct gup_test *g)
{
	memset(g, 0, sizeof(*g));
	g->addr = (uintptr_t)p;
	g->size = len;
	g->nr_pages_per_call = per_call;
	g->gup_flags = flags;
	return ioctl(gup_fd, cmd, g);
}

/* The node of the page at p, or a negative status. */
static int node_of(void *p)
{
	int status = -1000;

	if (syscall(SYS_move_pages, 0, 1, &p, NULL, &status, 0))
		return -1000;
	return status;
}

/* Try to move n pages from p to node; how many are there afterwards. */
static int move_to(char *p, int n, int node)
{
	void *pages[16];
	int nodes[16], status[16], there = 0;

	for (int i = 0; i < n; i++) {
		pages[i] = p + i * PAGE;
		nodes[i] = node;
	}
	syscall(SYS_move_pages, 0, n, pages, nodes, status, 0);
	for (int i = 0; i < n; i++)
		there += node_of(p + i * PAGE) == node;
	return there;
}

static void open_and_errors(void)
{
	struct gup_test g;
	char buf[8], *p = map_anon(4 * PAGE);

	CHECK(mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL) == 0 || errno == EBUSY);
	gup_fd = open(GUP_TEST_FILE, O_RDWR);
	CHECK(gup_fd >= 0);
	/* Nothing to read or write: EINVAL; an unknown ioctl: EINVAL (Linux's answers). */
	errno = 0;
	CHECK(read(gup_fd, buf, sizeof(buf)) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(ioctl(gup_fd, _IO('g', 10), 0) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(ioctl(gup_fd, _IOWR('g', 1, uint32_t), &g) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(ioctl(gup_fd, GUP_BASIC_TEST, (void *)16) == -1 && errno == EFAULT);
	/* More pages than one array can hold: ENOMEM, nothing taken. */
	errno = 0;
	CHECK(run(GUP_BASIC_TEST, p, 1UL << 40, 1, 0, &g) == -1 && errno == ENOMEM);
	/* Size 0, or 0 pages per call: nothing done, success. */
	CHECK(run(GUP_BASIC_TEST, p, 0, 1, 0, &g) == 0 && g.size == 0);
	CHECK(run(GUP_BASIC_TEST, p, 4 * PAGE, 0, 0, &g) == 0 && g.size == 0);
	munmap(p, 4 * PAGE);
	ktap_report("open_and_errors", NULL);
}

/* Every one-shot command takes the whole range and GUP counts each page. */
static void commands_count_pages(void)
{
	static const struct {
		unsigned long cmd;
		const char *name;
		bool fast;
	} cmds[] = {
		{ GUP_FAST_BENCHMARK, "GUP_FAST_BENCHMARK", true },
		{ PIN_FAST_BENCHMARK, "PIN_FAST_BENCHMARK", true },
		{ PIN_LONGTERM_BENCHMARK, "PIN_LONGTERM_BENCHMARK", false },
		{ GUP_BASIC_TEST, "GUP_BASIC_TEST", false },
		{ PIN_BASIC_TEST, "PIN_BASIC_TEST", false },
		{ DUMP_USER_PAGES_TEST, "DUMP_USER_PAGES_TEST", false },
	};
	const int n = 64;
	char *p = map_anon(n * PAGE);
	struct gup_test g;

	for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
		const char *counter = cmds[c].fast ? "gup_fast_pages" : "gup_pages";
		long before = vmstat(counter), after;
		int ret = run(cmds[c].cmd, p, n * PAGE, 5, FOLL_WRITE, &g);

		after = vmstat(counter);
		if (ret || g.size != n * PAGE || after - before < n) {
			printf("    # %s: ret %d size %llu, %s +%ld\n", cmds[c].name, ret,
			       (unsigned long long)g.size, counter, after - before);
			CHECK(0);
		}
		CHECK(g.get_delta_usec < 60000000 && g.put_delta_usec < 60000000);
	}
	/* Read-only too; a read-only mapping can be got for reading only. */
	CHECK(run(PIN_BASIC_TEST, p, n * PAGE, 64, 0, &g) == 0 && g.size == n * PAGE);
	CHECK(mprotect(p, n * PAGE, PROT_READ) == 0);
	CHECK(run(GUP_BASIC_TEST, p, n * PAGE, 7, 0, &g) == 0 && g.size == n * PAGE);
	CHECK(run(GUP_BASIC_TEST, p, n * PAGE, 1, FOLL_WRITE, &g) == 0 && g.size == 0);
	munmap(p, n * PAGE);
	ktap_report("commands_count_pages", NULL);
}

/* A hole ends the loop: size says how far it got; a failing call stops it at once. */
static void partial_ranges(void)
{
	char *p = map_anon(8 * PAGE);
	struct gup_test g;

	munmap(p + 4 * PAGE, PAGE);
	CHECK(run(GUP_BASIC_TEST, p, 8 * PAGE, 1, FOLL_WRITE, &g) == 0 && g.size == 4 * PAGE);
	CHECK(run(PIN_FAST_BENCHMARK, p, 8 * PAGE, 1, FOLL_WRITE, &g) == 0 && g.size == 4 * PAGE);
	CHECK(run(PIN_BASIC_TEST, p + 4 * PAGE, 4 * PAGE, 2, 0, &g) == 0 && g.size == 0);
	/* A call that took fewer than asked ends the loop after it (Linux's size: the call's end). */
	CHECK(run(PIN_BASIC_TEST, p, 8 * PAGE, 6, 0, &g) == 0 && g.size == 6 * PAGE);
	munmap(p, 8 * PAGE);
	ktap_report("partial_ranges", NULL);
}

/*
 * gup_flags as Linux's entry points check them: a refused call takes
 * nothing and the command reports size 0 (as on Linux, not an error).
 */
static void gup_flags_checked(void)
{
	char *p = map_anon(4 * PAGE);
	struct gup_test g;

	/* Internal to GUP: refused everywhere. */
	CHECK(run(GUP_BASIC_TEST, p, 4 * PAGE, 4, FOLL_TOUCH, &g) == 0 && g.size == 0);
	CHECK(run(GUP_FAST_BENCHMARK, p, 4 * PAGE, 4, FOLL_TOUCH, &g) == 0 && g.size == 0);
	/* FOLL_LONGTERM only with a pin; FOLL_GET never with one. */
	CHECK(run(GUP_BASIC_TEST, p, 4 * PAGE, 4, FOLL_LONGTERM, &g) == 0 && g.size == 0);
	CHECK(run(PIN_BASIC_TEST, p, 4 * PAGE, 4, FOLL_LONGTERM, &g) == 0 && g.size == 4 * PAGE);
	CHECK(run(PIN_BASIC_TEST, p, 4 * PAGE, 4, FOLL_GET, &g) == 0 && g.size == 0);
	CHECK(run(GUP_BASIC_TEST, p, 4 * PAGE, 4, FOLL_GET, &g) == 0 && g.size == 4 * PAGE);
	/* A bit the fast path does not take; the slow path ignores it. */
	CHECK(run(PIN_FAST_BENCHMARK, p, 4 * PAGE, 4, 1U << 13, &g) == 0 && g.size == 0);
	CHECK(run(PIN_BASIC_TEST, p, 4 * PAGE, 4, 1U << 13, &g) == 0 && g.size == 4 * PAGE);
	/* A hint without effect here; a flag Quire does not implement (ENOSYS, logged). */
	CHECK(run(PIN_FAST_BENCHMARK, p, 4 * PAGE, 4, FOLL_HONOR_NUMA_FAULT, &g) == 0 &&
	      g.size == 4 * PAGE);
	CHECK(run(GUP_BASIC_TEST, p, 4 * PAGE, 4, FOLL_DUMP, &g) == 0 && g.size == 0);
	munmap(p, 4 * PAGE);
	ktap_report("gup_flags_checked", NULL);
}

/* which_pages past what was taken come back zeroed; the others as given. */
static void dump_user_pages(void)
{
	char *p = map_anon(8 * PAGE);
	struct gup_test g;

	for (int pin = 0; pin < 2; pin++) {
		memset(&g, 0, sizeof(g));
		g.addr = (uintptr_t)p;
		g.size = 8 * PAGE;
		g.nr_pages_per_call = 8;
		g.test_flags = pin ? GUP_TEST_FLAG_DUMP_PAGES_USE_PIN : 0;
		g.which_pages[0] = 1;
		g.which_pages[1] = 8;
		g.which_pages[2] = 9;
		g.which_pages[5] = 4097;
		CHECK(ioctl(gup_fd, DUMP_USER_PAGES_TEST, &g) == 0);
		CHECK(g.size == 8 * PAGE);
		CHECK(g.which_pages[0] == 1 && g.which_pages[1] == 8);
		CHECK(g.which_pages[2] == 0 && g.which_pages[5] == 0);
	}
	munmap(p, 8 * PAGE);
	ktap_report("dump_user_pages", NULL);
}

static int start(int fd, char *p, size_t len, unsigned int flags)
{
	struct pin_longterm_test args = { (uintptr_t)p, len, flags };

	return ioctl(fd, PIN_LONGTERM_TEST_START, &args);
}

/* The other DRAM node than the page's (numa3: 0 and 1). */
static int other_node(char *p)
{
	return node_of(p) == 0 ? 1 : 0;
}

static void longterm_errors(void)
{
	char *p = map_anon(4 * PAGE);
	uint64_t dst = 0;

	errno = 0;
	CHECK(ioctl(gup_fd, PIN_LONGTERM_TEST_READ, &dst) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(start(gup_fd, p + 1, PAGE, 0) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(start(gup_fd, p, PAGE + 1, 0) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(start(gup_fd, p, 0, 0) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(start(gup_fd, p, PAGE, 4) == -1 && errno == EINVAL);
	errno = 0;
	CHECK(start(gup_fd, p, 1UL << 40, 0) == -1 && errno == ENOMEM);
	munmap(p + 2 * PAGE, PAGE);
	for (unsigned int flags = 0; flags < 4; flags++) {
		errno = 0;
		CHECK(start(gup_fd, p, 4 * PAGE, flags) == -1 && errno == EFAULT);
	}
	/* A read-only mapping cannot be pinned for writing. */
	CHECK(mprotect(p, PAGE, PROT_READ) == 0);
	errno = 0;
	CHECK(start(gup_fd, p, PAGE, PIN_LONGTERM_TEST_FLAG_USE_WRITE) == -1 && errno == EFAULT);
	/* Nothing is held after the failures. */
	errno = 0;
	CHECK(ioctl(gup_fd, PIN_LONGTERM_TEST_READ, &dst) == -1 && errno == EINVAL);
	CHECK(ioctl(gup_fd, PIN_LONGTERM_TEST_STOP) == 0);
	munmap(p, 4 * PAGE);
	ktap_report("longterm_errors", NULL);
}

/* Pinned pages stay put and READ sees the process's writes, slow and fast, R/O and R/W. */
static void longterm_pin_holds(void)
{
	const int n = 4;

	for (unsigned int flags = 0; flags < 4; flags++) {
		char *p = map_anon(n * PAGE), *copy = malloc(n * PAGE);
		uint64_t dst = (uintptr_t)copy;
		int from = node_of(p), to = other_node(p);
		struct pin_longterm_test again = { (uintptr_t)p, PAGE, 0 };

		CHECK(from >= 0);
		CHECK(start(gup_fd, p, n * PAGE, flags) == 0);
		errno = 0;
		CHECK(ioctl(gup_fd, PIN_LONGTERM_TEST_START, &again) == -1 && errno == EINVAL);
		CHECK(move_to(p, n, to) == 0);
		for (int i = 0; i < n; i++)
			CHECK(node_of(p + i * PAGE) == from);
		/* What the process writes now, the pin sees. */
		for (int i = 0; i < n; i++)
			memset(p + i * PAGE, 'a' + i + (int)flags, PAGE);
		CHECK(ioctl(gup_fd, PIN_LONGTERM_TEST_READ, &dst) == 0);
		CHECK(memcmp(copy, p, n * PAGE) == 0);
		CHECK(ioctl(gup_fd, PIN_LONGTERM_TEST_STOP) == 0);
		CHECK(ioctl(gup_fd, PIN_LONGTERM_TEST_STOP) == 0);
		/* Unpinned: they move now. */
		CHECK(move_to(p, n, to) == n);
		free(copy);
		munmap(p, n * PAGE);
	}
	ktap_report("longterm_pin_holds", NULL);
}

#define THP_DIR	"/sys/kernel/mm/transparent_hugepage"

/* Write v to hugepages-<kb>kB/enabled; the old choice (the bracketed word) into old. */
static int set_mthp(unsigned long kb, const char *v, char *old, size_t oldlen)
{
	char path[128], buf[128], *a, *b;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), THP_DIR "/hugepages-%lukB/enabled", kb);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	if (old && a && b && (size_t)(b - a) < oldlen) {
		memcpy(old, a + 1, (size_t)(b - a - 1));
		old[b - a - 1] = '\0';
	}
	n = pwrite(fd, v, strlen(v), 0);
	close(fd);
	return n == (ssize_t)strlen(v) ? 0 : -1;
}

/*
 * Each folio order an mTHP or the THP can have (16 KiB .. 2 MiB, one size
 * enabled at a time): a long-term pin of the folio's first page holds the
 * whole folio (move_pages of its last page leaves it: a large folio counts
 * its pins in _pincount), and GUP_BASIC_TEST and PIN_FAST_BENCHMARK take
 * every page of a range of such folios, 123 pages a call (not a multiple
 * of any folio).
 */
static void pins_every_folio_order(void)
{
	static const unsigned long sizes_kb[] = { 16, 32, 64, 128, 256, 512, 1024, 2048 };
	char saved[8][16];

	for (size_t i = 0; i < 8; i++)
		CHECK(set_mthp(sizes_kb[i], "never", saved[i], sizeof(saved[i])) == 0);
	for (size_t i = 0; i < 8; i++) {
		size_t size = sizes_kb[i] * 1024, len = 4 * size;
		char *raw = mmap(NULL, len + size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		char *p = (char *)(((uintptr_t)raw + size - 1) & ~(uintptr_t)(size - 1));
		char *last = p + size - PAGE;
		struct gup_test g;
		int to;

		CHECK(set_mthp(sizes_kb[i], "always", NULL, 0) == 0);
		CHECK(madvise(p, len, MADV_HUGEPAGE) == 0);
		for (size_t off = 0; off < len; off += PAGE)
			p[off] = 1;
		to = other_node(p);
		for (unsigned int flags = 0; flags < 4; flags++) {
			CHECK(start(gup_fd, p, PAGE, flags) == 0);
			if (move_to(last, 1, to) != 0) {
				printf("    # %lu kB: the folio's last page moved while its first was pinned\n",
				       sizes_kb[i]);
				CHECK(0);
			}
			CHECK(ioctl(gup_fd, PIN_LONGTERM_TEST_STOP) == 0);
		}
		CHECK(move_to(last, 1, to) == 1);
		CHECK(node_of(p) == to);	/* the folio moved whole */
		CHECK(run(GUP_BASIC_TEST, p, len, 123, FOLL_WRITE, &g) == 0 && g.size == len);
		CHECK(run(PIN_FAST_BENCHMARK, p, len, 123, FOLL_WRITE, &g) == 0 && g.size == len);
		CHECK(run(PIN_LONGTERM_BENCHMARK, p, len, 123, 0, &g) == 0 && g.size == len);
		CHECK(set_mthp(sizes_kb[i], "never", NULL, 0) == 0);
		munmap(raw, len + size);
	}
	for (size_t i = 0; i < 8; i++)
		CHECK(set_mthp(sizes_kb[i], saved[i], NULL, 0) == 0);
	ktap_report("pins_every_folio_order", NULL);
}

/* The pins go with the file's release: its close, or the process's exit. */
static void longterm_released(void)
{
	char *p = map_anon(2 * PAGE);
	int to = other_node(p), fd = open(GUP_TEST_FILE, O_RDWR), status = -1;
	pid_t child;

	CHECK(fd >= 0);
	CHECK(start(fd, p, 2 * PAGE, PIN_LONGTERM_TEST_FLAG_USE_WRITE) == 0);
	CHECK(move_to(p, 2, to) == 0);
	CHECK(close(fd) == 0);
	CHECK(move_to(p, 2, to) == 2);
	/* A child pins its copy and exits without STOP. */
	child = fork();
	if (child == 0) {
		int cfd = open(GUP_TEST_FILE, O_RDWR);

		p[0] = 'c';	/* its own copy */
		_exit(cfd >= 0 && start(cfd, p, 2 * PAGE, 0) == 0 ? 0 : 1);
	}
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Nothing held any more: a new START works. */
	CHECK(start(gup_fd, p, PAGE, 0) == 0);
	CHECK(ioctl(gup_fd, PIN_LONGTERM_TEST_STOP) == 0);
	munmap(p, 2 * PAGE);
	ktap_report("longterm_released", NULL);
}

int main(void)
{
	ktap_begin("gup_test_user", 10);
	open_and_errors();
	commands_count_pages();
	partial_ranges();
	gup_flags_checked();
	dump_user_pages();
	longterm_errors();
	longterm_pin_holds();
	pins_every_folio_order();
	longterm_released();
	close(gup_fd);
	CHECK(read_mm_verify() == 0);
	ktap_report("mm_verify_clean", NULL);
	return ktap_finish();
}
