/*
 * move_pages_bench: the migration benchmark of reference series 1 from
 * ring 3, the same static binary on Quire and on Linux 6.12
 * (docs/bench.md, "migrate"): MIB MiB of anonymous memory faulted on
 * node 0 in one folio layout, then moved with one move_pages call (one
 * address per folio) to each other node with memory, timed with
 * CLOCK_MONOTONIC (under QEMU's -icount shift=0 one ns is one guest
 * instruction, on both kernels).
 *
 *	move_pages_bench [MIB]		(default 64; a multiple of 2)
 *
 * Layouts: 4K, 16K, 64K, 256K, 1M and 2M folios mapped by PTEs (a 2 MiB
 * THP is made PTE-mapped by an mprotect of one of its pages and back, as
 * both kernels split the PMD and keep the folio), and 2M mapped by a PMD,
 * chosen through /sys/kernel/mm/transparent_hugepage. On Quire each runs
 * twice, with /sys/kernel/mm/quire/migrate_batch 0 ("per-page") and 1
 * ("batched"); on Linux, which has no such switch, once ("linux").
 * Rows, one a line on stdout:
 *
 *	bench-csv: move_pages,nodeN[-pmd],SIZE,MODE,throughput,GB/s value
 *	bench-csv: move_pages,nodeN[-pmd],SIZE,MODE,ns_per_page,...
 *
 * A layout that did not come out as asked (a fault fell back to another
 * size), a page not on the target afterwards, or a failed call prints
 * "move_pages_bench: ..." on stderr and the exit status is 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096UL
#define PMD		(2UL << 20)
#define THP		"/sys/kernel/mm/transparent_hugepage"
#define SWITCH		"/sys/kernel/mm/quire/migrate_batch"
#define MPOL_DEFAULT	0
#define MPOL_BIND	2
#define MPOL_MF_MOVE	(1 << 1)

struct layout {
	unsigned long kb;	/* folio size */
	int pmd;		/* mapped by a PMD */
};

static const struct layout layouts[] = {
	{ 4, 0 }, { 16, 0 }, { 64, 0 }, { 256, 0 }, { 1024, 0 }, { 2048, 0 }, { 2048, 1 },
};
static const unsigned long mthp_kb[] = { 16, 32, 64, 128, 256, 512, 1024, 2048 };
static int failed;

static void fail(const char *what, unsigned long kb, int err)
{
	fprintf(stderr, "move_pages_bench: %lukB: %s (%s)\n", kb, what, strerror(err));
	failed = 1;
}

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

/* Only folios of kb KiB for anonymous faults (4: none but base pages). */
static int choose_size(unsigned long kb)
{
	char path[128];
	int err = write_str(THP "/enabled", kb == 2048 ? "always" : "never");

	for (size_t i = 0; i < sizeof(mthp_kb) / sizeof(mthp_kb[0]); i++) {
		snprintf(path, sizeof(path), THP "/hugepages-%lukB/enabled", mthp_kb[i]);
		/* A size this kernel lacks (no file) is fine; one it refuses is not. */
		if (access(path, F_OK) == 0)
			err |= write_str(path, mthp_kb[i] == kb ? (kb == 2048 ? "inherit" : "always")
							      : "never");
	}
	return err;
}

static long set_policy(int mode, unsigned long mask)
{
	return syscall(SYS_set_mempolicy, mode, mode == MPOL_DEFAULT ? NULL : &mask, 8);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The nodes with memory, from sysfs ("0-2" or "0,2"). */
static unsigned long memory_nodes(void)
{
	char buf[64] = "";
	unsigned long m = 0;
	FILE *f = fopen("/sys/devices/system/node/has_memory", "r");
	char *s = buf;

	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return 1;
	}
	fclose(f);
	while (*s >= '0' && *s <= '9') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long i = a; i <= b && i < 64; i++)
			m |= 1UL << i;
		s = *end == ',' ? end + 1 : end;
	}
	return m;
}

/* len bytes faulted on node 0 in layout l: the address, or NULL. */
static char *populate(const struct layout *l, unsigned long len)
{
	char *raw = mmap(NULL, len + PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + PMD - 1) & ~(PMD - 1));
	if (l->kb == 2048)
		madvise(p, len, MADV_HUGEPAGE);
	set_policy(MPOL_BIND, 1UL);
	for (unsigned long off = 0; off < len; off += PAGE)
		p[off] = (char)off;
	set_policy(MPOL_DEFAULT, 0);
	if (l->kb == 2048 && !l->pmd) {
		/* Split each PMD mapping, keeping the 2 MiB folio PTE-mapped. */
		for (unsigned long off = 0; off < len; off += PMD) {
			mprotect(p + off, PAGE, PROT_READ);
			mprotect(p + off, PAGE, PROT_READ | PROT_WRITE);
		}
	}
	return p;
}

/* The node of the page at addr (move_pages' query mode), or its error status. */
static int node_of(void *addr)
{
	int status = -1;

	syscall(SYS_move_pages, 0, 1, &addr, NULL, &status, 0);
	return status;
}

static void report(const struct layout *l, int node, const char *mode, double ns,
		   unsigned long len)
{
	char size[24];

	if (l->kb >= 1024)
		snprintf(size, sizeof(size), "%luM", l->kb / 1024);
	else
		snprintf(size, sizeof(size), "%luK", l->kb);
	printf("bench-csv: move_pages,node%d%s,%s,%s,throughput,%.3f,GB/s\n", node,
	       l->pmd ? "-pmd" : "", size, mode, len / ns);
	printf("bench-csv: move_pages,node%d%s,%s,%s,ns_per_page,%.3f,ns\n", node,
	       l->pmd ? "-pmd" : "", size, mode, ns / (len / PAGE));
}

/* One timed move of len bytes in layout l to node; report: print its rows. */
static void run(const struct layout *l, int node, const char *mode, unsigned long len, int print)
{
	unsigned long step = l->kb * 1024, n = len / step;
	void **pages = calloc(n, sizeof(*pages));
	int *nodes = calloc(n, sizeof(*nodes)), *status = calloc(n, sizeof(*status));
	char *p = populate(l, len);
	double t0;
	long ret;

	if (!p || !pages || !nodes || !status) {
		fail("no memory for the run", l->kb, ENOMEM);
		return;
	}
	for (unsigned long i = 0; i < n; i++) {
		pages[i] = p + i * step;
		nodes[i] = node;
		status[i] = -1000;
	}
	if (node_of(p) != 0 || node_of(p + len - PAGE) != 0)
		fail("not populated on node 0", l->kb, EINVAL);
	t0 = now_ns();
	ret = syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE);
	t0 = now_ns() - t0;
	if (ret)
		fail("move_pages", l->kb, ret < 0 ? errno : EBUSY);
	for (unsigned long i = 0; i < n; i++)
		if (status[i] != node) {
			fprintf(stderr, "move_pages_bench: %lukB: folio %lu: status %d\n", l->kb, i,
				status[i]);
			failed = 1;
			break;
		}
	/* Every page followed its folio: a smaller folio than asked would show here. */
	for (unsigned long off = PAGE; off < len; off += step)
		if (node_of(p + off) != node) {
			fail("a page of a folio stayed (smaller folios than asked?)", l->kb, EINVAL);
			break;
		}
	if (print)
		report(l, node, mode, t0, len);
	munmap(p, len);
	free(pages);
	free(nodes);
	free(status);
}

int main(int argc, char **argv)
{
	unsigned long mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 64, len = mib << 20;
	unsigned long nodes = memory_nodes();
	int quire = access(SWITCH, W_OK) == 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!mib || len % PMD) {
		fprintf(stderr, "move_pages_bench: %lu MiB is not a multiple of 2\n", mib);
		return 2;
	}
	printf("# move_pages_bench: %lu MiB from node 0, %s\n", mib,
	       quire ? "migrate_batch 0 and 1" : "no migrate_batch switch (Linux)");
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		if (choose_size(layouts[i].kb)) {
			fail("cannot choose the folio size in sysfs", layouts[i].kb, errno);
			continue;
		}
		for (int node = 1; node < 64; node++) {
			if (!(nodes & (1UL << node)))
				continue;
			if (!quire) {
				run(&layouts[i], node, "linux", PMD, 0);	/* untimed first */
				run(&layouts[i], node, "linux", len, 1);
				continue;
			}
			/* Untimed small runs of both first: TCG translates each path once. */
			for (int pass = 0; pass < 2; pass++) {
				for (int batched = 0; batched <= 1; batched++) {
					write_str(SWITCH, batched ? "1" : "0");
					run(&layouts[i], node, batched ? "batched" : "per-page",
					    pass ? len : PMD, pass);
				}
			}
		}
	}
	if (quire)
		write_str(SWITCH, "1");
	return failed;
}
