/*
 * hmm_migrate_bench: the device-migration benchmark of reference series 3
 * from ring 3 (docs/bench.md, "hmm_migrate"), shaped like the later hmm-tests'
 * THP migration benchmark: MIB MiB of anonymous memory, as 2 MiB THPs
 * (MADV_HUGEPAGE, PMD-mapped) or as base pages (MADV_NOHUGEPAGE), moved
 * into /dev/hmm_dmirror0's memory with one HMM_DMIRROR_MIGRATE_TO_DEV and
 * back with one HMM_DMIRROR_MIGRATE_TO_SYS, each timed with
 * CLOCK_MONOTONIC (under QEMU's -icount shift=0 one ns is one guest
 * instruction).
 *
 *	hmm_migrate_bench [MIB...]	(default 2 8 256)
 *
 * After an unreported round trip of the largest size (the device's memory
 * is set up as it is first used), each size runs twice, with /sys/kernel/mm/quire/migrate_device_collect_unmap
 * 0 ("walk-later": every page unmapped by an rmap walk after collection)
 * and 1 ("collect-unmap": a page mapped once unmapped while collected).
 * Rows, one a line on stdout:
 *
 *	bench-csv: hmm_migrate,S2D-THP|S2D-4K|D2S-THP|D2S-4K,SIZE,MODE,throughput,V,GB/s
 *	bench-csv: hmm_migrate,...,ns_per_page,V,ns
 *	bench-csv: hmm_migrate,...,rmap_walk_steps,V,per-page	(and ptl_acquire,
 *		tlb_flushes, rmap_calls: Quire's counters, /sys/kernel/debug/mm_cost,
 *		per page moved; stable where wall time is not)
 *
 * MIGRATE_TO_DEV's time includes the driver's read-back of the range into
 * the user's buffer, as the ioctl defines it. Every page's contents are
 * checked after the round trip; a THP that did not come out PMD-mapped, a
 * short migration, or wrong contents print "hmm_migrate_bench: ..." on
 * stderr and the exit status is 1. Linux's cloud kernel has no test_hmm:
 * this runs on Quire only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096UL
#define PMD		(2UL << 20)
#define DEVICE		"/dev/hmm_dmirror0"
#define SWITCH		"/sys/kernel/mm/quire/migrate_device_collect_unmap"
#define DEBUGFS		"/sys/kernel/debug"
#define NR_COSTS	4

/* Linux's test_hmm interface (include/quire/uapi/hmm_dmirror.h). */
struct hmm_dmirror_cmd {
	uint64_t addr, ptr, npages, cpages, faults;
};
#define HMM_DMIRROR_MIGRATE_TO_DEV	_IOWR('H', 0x02, struct hmm_dmirror_cmd)
#define HMM_DMIRROR_MIGRATE_TO_SYS	_IOWR('H', 0x03, struct hmm_dmirror_cmd)
#define HMM_DMIRROR_SNAPSHOT		_IOWR('H', 0x04, struct hmm_dmirror_cmd)
#define HMM_DMIRROR_PROT_PMD		0x04

static int failed;
static const char *const cost_names[NR_COSTS] = {
	"rmap_calls", "ptl_acquire", "tlb_flushes", "rmap_walk_steps",
};

/* Quire's cost counters now (0s when there are none). */
static void read_costs(long costs[NR_COSTS])
{
	FILE *f = fopen(DEBUGFS "/mm_cost", "r");
	char name[64];
	long v;

	memset(costs, 0, NR_COSTS * sizeof(*costs));
	while (f && fscanf(f, "%63s %ld", name, &v) == 2)
		for (int i = 0; i < NR_COSTS; i++)
			if (!strcmp(name, cost_names[i]))
				costs[i] = v;
	if (f)
		fclose(f);
}

static void fail(const char *what, unsigned long mib, int thp, int err)
{
	fprintf(stderr, "hmm_migrate_bench: %luM %s: %s (%s)\n", mib, thp ? "THP" : "4K", what,
		strerror(err));
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

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

struct measure {
	double ns;
	long costs[NR_COSTS];	/* the counters' growth */
};

/* One ioctl over [p, p + len), measured: 0, or -1 (and errno). */
static int timed(int fd, unsigned long request, char *p, unsigned long len, void *buf,
		 uint64_t *cpages, struct measure *ms)
{
	struct hmm_dmirror_cmd cmd = {
		.addr = (uintptr_t)p, .ptr = (uintptr_t)buf, .npages = len / PAGE,
	};
	long before[NR_COSTS];
	double t0;
	int ret;

	read_costs(before);
	t0 = now_ns();
	do
		ret = ioctl(fd, request, &cmd);
	while (ret < 0 && errno == EINTR);
	ms->ns = now_ns() - t0;
	read_costs(ms->costs);
	for (int i = 0; i < NR_COSTS; i++)
		ms->costs[i] -= before[i];
	if (ret < 0)
		return -1;
	*cpages = cmd.cpages;
	return 0;
}

static void report(const char *dir, int thp, unsigned long mib, const char *mode,
		   const struct measure *ms, unsigned long len)
{
	const char *kind = thp ? "THP" : "4K";
	double pages = len / PAGE;

	printf("bench-csv: hmm_migrate,%s-%s,%luM,%s,throughput,%.3f,GB/s\n", dir, kind, mib,
	       mode, len / ms->ns);
	printf("bench-csv: hmm_migrate,%s-%s,%luM,%s,ns_per_page,%.3f,ns\n", dir, kind, mib,
	       mode, ms->ns / pages);
	for (int i = 0; i < NR_COSTS; i++)
		printf("bench-csv: hmm_migrate,%s-%s,%luM,%s,%s,%.3f,per-page\n", dir, kind, mib,
		       mode, cost_names[i], ms->costs[i] / pages);
}

static void run(int fd, unsigned long mib, int thp, const char *mode, void *buf, int print)
{
	unsigned long len = mib << 20, bad = 0;
	char *raw = mmap(NULL, len + PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	char *p = (char *)(((uintptr_t)raw + PMD - 1) & ~(PMD - 1));
	uint64_t cpages = 0;
	struct measure snap, s2d, d2s;
	int s2d_err, d2s_err;

	if (raw == MAP_FAILED) {
		fail("mmap", mib, thp, errno);
		return;
	}
	if (madvise(p, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE))
		fail("madvise", mib, thp, errno);
	for (unsigned long off = 0; off < len; off += PAGE)
		*(unsigned long *)(p + off) = off ^ 0x5a5a;
	if (thp) {
		unsigned char byte = 0;

		/* The first page's snapshot says whether a PMD maps it. */
		if (timed(fd, HMM_DMIRROR_SNAPSHOT, p, PAGE, &byte, &cpages, &snap) < 0 ||
		    !(byte & HMM_DMIRROR_PROT_PMD))
			fail("not PMD-mapped", mib, thp, EINVAL);
	}
	s2d_err = timed(fd, HMM_DMIRROR_MIGRATE_TO_DEV, p, len, buf, &cpages, &s2d);
	if (s2d_err || cpages != len / PAGE)
		fail("MIGRATE_TO_DEV", mib, thp, s2d_err ? errno : EINVAL);
	d2s_err = timed(fd, HMM_DMIRROR_MIGRATE_TO_SYS, p, len, buf, &cpages, &d2s);
	if (d2s_err || cpages != len / PAGE)
		fail("MIGRATE_TO_SYS", mib, thp, d2s_err ? errno : EINVAL);
	for (unsigned long off = 0; off < len; off += PAGE)
		bad += *(unsigned long *)(p + off) != (off ^ 0x5a5a);
	if (bad)
		fail("contents changed", mib, thp, EIO);
	if (!s2d_err && !d2s_err && !bad && print) {
		report("S2D", thp, mib, mode, &s2d, len);
		report("D2S", thp, mib, mode, &d2s, len);
	}
	munmap(raw, len + PMD);
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "walk-later", "collect-unmap" };
	unsigned long sizes[16] = { 2, 8, 256 }, nsizes = 3, max = 0;
	int fd = open(DEVICE, O_RDWR);
	void *buf;

	if (argc > 1) {
		nsizes = 0;
		for (int i = 1; i < argc && nsizes < 16; i++)
			sizes[nsizes++] = strtoul(argv[i], NULL, 0);
	}
	for (unsigned long i = 0; i < nsizes; i++)
		max = sizes[i] > max ? sizes[i] : max;
	if (fd < 0) {
		fprintf(stderr, "hmm_migrate_bench: %s: %s\n", DEVICE, strerror(errno));
		return 1;
	}
	if (access(DEBUGFS "/mm_cost", R_OK))
		mount("none", DEBUGFS, "debugfs", 0, NULL);	/* the counters (init mounts none) */
	buf = malloc(max << 20);	/* MIGRATE_TO_DEV's read-back */
	if (!buf) {
		fprintf(stderr, "hmm_migrate_bench: no memory for a %lu MiB buffer\n", max);
		return 1;
	}
	/*
	 * A round trip of the largest size first, not reported: the device
	 * takes its memory in chunks as it first needs them, which the first
	 * measured run would pay for (about 16000 instructions a page).
	 */
	run(fd, max, 1, "warm-up", buf, 0);
	for (unsigned long i = 0; i < nsizes; i++)
		for (int thp = 1; thp >= 0; thp--)
			for (int m = 0; m < 2; m++) {
				if (write_str(SWITCH, m ? "1" : "0")) {
					fprintf(stderr, "hmm_migrate_bench: cannot write %s\n", SWITCH);
					return 1;
				}
				run(fd, sizes[i], thp, modes[m], buf, 1);
			}
	write_str(SWITCH, "1");
	close(fd);
	return failed;
}
