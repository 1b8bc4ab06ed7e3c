/*
 * /proc and /sys seen from ring 3, through the system calls a Linux
 * program uses (the same binary runs on Linux, as root, with THP "always"):
 * the THP controls (defaults, writes, refused values, restored at the end),
 * the per-size counters, /proc/vmstat, listings, errno values, and
 * /proc/self/pagemap and /proc/self/smaps of this process's own memory,
 * before and after a fork and with a PMD-mapped THP, /proc/meminfo and
 * /proc/self/status moving with what the test allocates, starts and
 * blocks, and hpage_pmd_size. Prints KTAP; exits 0 when every case passed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"
#include "proc_files.h"

#define THP "/sys/kernel/mm/transparent_hugepage"
#define PM_PRESENT	(1ULL << 63)
#define PM_FILE		(1ULL << 61)
#define PM_EXCLUSIVE	(1ULL << 56)
#define PM_SOFT_DIRTY	(1ULL << 55)
#define PM_PFN		((1ULL << 55) - 1)
#define PAGE		4096UL
#define PMD		(2UL << 20)

static int open_errno(const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno;
}

/* "[mode]" of an enabled file, into mode. */
static void current_mode(const char *path, char *mode, size_t size)
{
	char buf[64], *b, *e;

	mode[0] = '\0';
	if (slurp(path, buf, sizeof(buf)) > 0 && (b = strchr(buf, '[')) && (e = strchr(b, ']')))
		snprintf(mode, size, "%.*s", (int)(e - b - 1), b + 1);
}

static void thp_enabled(void)
{
	char buf[64], saved[16];

	current_mode(THP "/enabled", saved, sizeof(saved));
	CHECK(slurp(THP "/enabled", buf, sizeof(buf)) == 23);
	CHECK(!strcmp(buf, "[always] madvise never\n"));
	CHECK(put(THP "/enabled", "madvise") == 7);
	slurp(THP "/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always [madvise] never\n"));
	CHECK(put(THP "/enabled", "bogus") == -EINVAL);
	CHECK(put(THP "/enabled", "inherit") == -EINVAL);
	slurp(THP "/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always [madvise] never\n"));
	CHECK(put(THP "/enabled", saved) == (long)strlen(saved));
	ktap_report("thp_enabled", NULL);
}

static void thp_size_enabled(void)
{
	char buf[64], saved[16];

	slurp(THP "/hugepages-2048kB/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always [inherit] madvise never\n"));
	slurp(THP "/hugepages-64kB/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always inherit madvise [never]\n"));
	current_mode(THP "/hugepages-64kB/enabled", saved, sizeof(saved));
	CHECK(put(THP "/hugepages-64kB/enabled", "inherit\n") == 8);
	slurp(THP "/hugepages-64kB/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always [inherit] madvise never\n"));
	CHECK(put(THP "/hugepages-64kB/enabled", "huge") == -EINVAL);
	slurp(THP "/hugepages-64kB/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always [inherit] madvise never\n"));
	CHECK(put(THP "/hugepages-64kB/enabled", saved) == (long)strlen(saved));
	CHECK(open_errno(THP "/hugepages-8kB/enabled", O_RDONLY) == ENOENT);
	ktap_report("thp_size_enabled", NULL);
}

static void thp_stats(void)
{
	static const char *const names[] = {
		"anon_fault_alloc", "anon_fault_fallback", "split", "split_failed",
		"split_deferred", "nr_anon", "nr_anon_partially_mapped",
	};
	char path[128], buf[64], *end;

	for (unsigned long kb = 16; kb <= 2048; kb *= 2)
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(path, sizeof(path), THP "/hugepages-%lukB/stats/%s", kb, names[i]);
			CHECK(slurp(path, buf, sizeof(buf)) >= 2);
			strtoul(buf, &end, 10);
			CHECK(end != buf && !strcmp(end, "\n"));
			CHECK(open_errno(path, O_WRONLY) == EACCES);
		}
	ktap_report("thp_stats", NULL);
}

/* The value of "name N" in /proc/vmstat, or -1. */
static void proc_vmstat(void)
{
	CHECK(vmstat("thp_fault_alloc") >= 0);
	CHECK(vmstat("thp_split_pmd") >= 0);
	CHECK(vmstat("nr_free_pages") > 0);
	CHECK(vmstat("thp_fault") == -1);	/* whole names only */
	CHECK(open_errno("/proc/vmstat", O_WRONLY) == EACCES);
	ktap_report("proc_vmstat", NULL);
}

static void listings_and_errors(void)
{
	int seen_enabled = 0, seen_sizes = 0, seen_pmd_size = 0, other = 0;
	DIR *d = opendir(THP);
	struct dirent *e;

	CHECK(d != NULL);
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!strcmp(e->d_name, "enabled"))
			seen_enabled++;
		else if (!strncmp(e->d_name, "hugepages-", 10) && e->d_type == DT_DIR)
			seen_sizes++;
		else if (!strcmp(e->d_name, "hpage_pmd_size") || !strcmp(e->d_name, "defrag") ||
			 !strcmp(e->d_name, "shmem_enabled") || !strcmp(e->d_name, "use_zero_page") ||
			 (!strcmp(e->d_name, "khugepaged") && e->d_type == DT_DIR))
			seen_pmd_size++;
		else
			other++;
	}
	if (d)
		closedir(d);
	CHECK(seen_enabled == 1 && seen_sizes == 8 && seen_pmd_size == 5 && other == 0);
	CHECK(open_errno("/proc/no_such_file", O_RDONLY) == ENOENT);
	CHECK(open_errno(THP "/hugepages-64kB/nope", O_RDONLY) == ENOENT);
	CHECK(open_errno("/proc/new", O_WRONLY | O_CREAT) == EACCES);
	CHECK(mkdir("/sys/kernel/new", 0755) == -1 && errno == EPERM);
	CHECK(unlink("/proc/vmstat") == -1 && errno == EPERM);
	CHECK(rmdir("/proc") == -1 && errno == EBUSY);
	ktap_report("listings_and_errors", NULL);
}

/*
 * count bytes of the pagemap at off, with lseek and read (Quire has no
 * pread64 yet): the read's result, or -errno.
 */
static long pm_read(int fd, void *buf, size_t count, off_t off)
{
	long n;

	if (lseek(fd, off, SEEK_SET) != off)
		return -errno;
	n = read(fd, buf, count);
	return n < 0 ? -errno : n;
}

/* The pagemap entry of addr (all ones when the read fails). */
static uint64_t pagemap_of(int fd, const void *addr)
{
	uint64_t e = ~0ULL;

	if (pm_read(fd, &e, 8, (off_t)((uintptr_t)addr / PAGE) * 8) != 8)
		return ~0ULL;
	return e;
}

static void pagemap(void)
{
	char *p = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e0, e1, e3, buf[2];

	CHECK(p != MAP_FAILED && fd >= 0);
	if (p == MAP_FAILED || fd < 0)
		goto out;
	p[0] = 1;
	p[3 * PAGE + 7] = 2;
	e0 = pagemap_of(fd, p);
	e1 = pagemap_of(fd, p + PAGE);
	e3 = pagemap_of(fd, p + 3 * PAGE);
	CHECK((e0 & PM_PRESENT) && (e0 & PM_PFN) != 0);
	CHECK((e0 & PM_EXCLUSIVE) && !(e0 & PM_FILE));
	CHECK(e1 == PM_SOFT_DIRTY);	/* nothing there, in a new (soft-dirty) mapping */
	CHECK((e3 & PM_PRESENT) && (e3 & PM_PFN) != 0 && (e3 & PM_PFN) != (e0 & PM_PFN));
	/* Misaligned offset or size: EINVAL. Past the user range: end of file. */
	CHECK(pm_read(fd, buf, 8, (off_t)((uintptr_t)p / PAGE) * 8 + 4) == -EINVAL);
	CHECK(pm_read(fd, buf, 12, (off_t)((uintptr_t)p / PAGE) * 8) == -EINVAL);
	CHECK(pm_read(fd, buf, 16, (off_t)(0x00007ffffffff000ULL / PAGE) * 8) == 0);
	/* Two entries in one read; the position moves past them. */
	CHECK(pm_read(fd, buf, 16, (off_t)((uintptr_t)p / PAGE) * 8) == 16);
	CHECK(buf[0] == e0 && buf[1] == e1);
	CHECK(lseek(fd, 0, SEEK_CUR) == (off_t)((uintptr_t)p / PAGE) * 8 + 16);
	CHECK(munmap(p, 16 * PAGE) == 0);
	CHECK(pagemap_of(fd, p) == 0);
out:
	if (fd >= 0)
		close(fd);
	ktap_report("pagemap", NULL);
}

/* The smaps block of the VMA starting at addr, into out: 1, or 0 when absent. */
static int smaps_block(const void *addr, char *out, size_t size)
{
	static char buf[1 << 16];
	char head[32], *b, *e;

	if (slurp("/proc/self/smaps", buf, sizeof(buf)) <= 0)
		return 0;
	snprintf(head, sizeof(head), "%08lx-", (unsigned long)(uintptr_t)addr);
	b = strstr(buf, head);
	if (b && b != buf && b[-1] != '\n')
		b = NULL;
	e = b ? strstr(b, "VmFlags:") : NULL;
	e = e ? strchr(e, '\n') : NULL;
	if (!e || (size_t)(e + 1 - b) >= size)
		return 0;
	memcpy(out, b, e + 1 - b);
	out[e + 1 - b] = '\0';
	return 1;
}

/* "Name:   N kB" in an smaps block: N, or -1. */
static long kb(const char *block, const char *name)
{
	const char *l = strstr(block, name);

	return l ? strtol(l + strlen(name), NULL, 10) : -1;
}

static void smaps(void)
{
	char *p = mmap(NULL, 16 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char blk[2048], header[80];
	int status = -1;
	pid_t pid;

	CHECK(p != MAP_FAILED);
	if (p == MAP_FAILED)
		goto out;
	for (int i = 0; i < 5; i++)
		p[i * 2 * PAGE] = 1;		/* 5 pages of 16 */
	CHECK(smaps_block(p, blk, sizeof(blk)));
	snprintf(header, sizeof(header), "%08lx-%08lx rw-p 00000000 00:00 0",
		 (unsigned long)(uintptr_t)p, (unsigned long)(uintptr_t)(p + 16 * PAGE));
	CHECK(!strncmp(blk, header, strlen(header)));
	CHECK(strstr(blk, "\nSize:                 64 kB\n") != NULL);
	CHECK(strstr(blk, "\nRss:                  20 kB\n") != NULL);
	CHECK(kb(blk, "Pss:") == 20 && kb(blk, "Private_Dirty:") == 20);
	CHECK(kb(blk, "Anonymous:") == 20 && kb(blk, "AnonHugePages:") == 0);
	CHECK(strstr(blk, "\nVmFlags: rd wr") != NULL);
	/* A child shares the pages: Pss is halved there, and nothing is exclusive. */
	pid = fork();
	if (pid == 0) {
		int fd = open("/proc/self/pagemap", O_RDONLY);
		int bad = 0;

		bad |= !smaps_block(p, blk, sizeof(blk));
		bad |= kb(blk, "Rss:") != 20 || kb(blk, "Pss:") != 10;
		bad |= kb(blk, "Shared_Dirty:") + kb(blk, "Shared_Clean:") != 20;
		bad |= fd < 0 || (pagemap_of(fd, p) & (PM_PRESENT | PM_EXCLUSIVE)) != PM_PRESENT;
		_exit(bad);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	munmap(p, 16 * PAGE);
	CHECK(!smaps_block(p, blk, sizeof(blk)));
out:
	ktap_report("smaps", NULL);
}

/* madvise(MADV_HUGEPAGE) on a 2 MiB-aligned range: one PMD-mapped THP, if the kernel makes it. */
static void pmd_thp(void)
{
	char *raw = mmap(NULL, 2 * PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = (char *)(((uintptr_t)raw + PMD - 1) & ~(PMD - 1));
	long before = vmstat("thp_fault_alloc"), after;
	char blk[2048];
	const char *skip = NULL;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	CHECK(raw != MAP_FAILED && fd >= 0);
	if (raw == MAP_FAILED || fd < 0)
		goto out;
	CHECK(madvise(p, PMD, MADV_HUGEPAGE) == 0);
	p[100] = 1;
	after = vmstat("thp_fault_alloc");
	if (after == before) {
		skip = "no PMD-mapped THP from this fault";
		goto out;
	}
	CHECK(after == before + 1);
	CHECK(smaps_block(p, blk, sizeof(blk)));
	CHECK(kb(blk, "AnonHugePages:") == 2048 && kb(blk, "Rss:") == 2048);
	CHECK(kb(blk, "THPeligible:") == 1);
	CHECK(strstr(blk, " hg ") != NULL);
	{
		static uint64_t pm[512];

		CHECK(pm_read(fd, pm, sizeof(pm), (off_t)((uintptr_t)p / PAGE) * 8) == sizeof(pm));
		CHECK((pm[0] & PM_PRESENT) && (pm[0] & PM_PFN) % 512 == 0);
		for (unsigned long i = 1; i < 512; i++)
			if (pm[i] != pm[0] + i) {
				CHECK(!"512 consecutive present frames, exclusive");
				break;
			}
	}
out:
	if (fd >= 0)
		close(fd);
	if (raw != MAP_FAILED)
		munmap(raw, 2 * PMD);
	ktap_report("pmd_thp", skip);
}

/* write(2) of exactly len bytes (NULs included) to path: the result, or -errno. */
static long put_bytes(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY);
	long n;

	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

/*
 * Linux's sysfs store: the value ends at the first NUL, one trailing
 * newline is dropped, an empty write stores nothing and returns 0; the
 * counters refuse to be opened for writing.
 */
static void thp_store_bytes(void)
{
	char buf[64], saved[16], saved64[16];

	current_mode(THP "/enabled", saved, sizeof(saved));
	current_mode(THP "/hugepages-64kB/enabled", saved64, sizeof(saved64));
	CHECK(put_bytes(THP "/enabled", "madvise\0", 8) == 8);
	slurp(THP "/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always [madvise] never\n"));
	CHECK(put_bytes(THP "/enabled", "never\0junk", 10) == 10);
	slurp(THP "/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always madvise [never]\n"));
	CHECK(put_bytes(THP "/enabled", "", 0) == 0);
	CHECK(put_bytes(THP "/enabled", "always\n\n", 8) == -EINVAL);
	CHECK(put_bytes(THP "/enabled", "always\nx", 8) == -EINVAL);
	slurp(THP "/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always madvise [never]\n"));
	CHECK(put_bytes(THP "/hugepages-64kB/enabled", "inherit\0", 8) == 8);
	CHECK(put_bytes(THP "/hugepages-64kB/enabled", "", 0) == 0);
	slurp(THP "/hugepages-64kB/enabled", buf, sizeof(buf));
	CHECK(!strcmp(buf, "always [inherit] madvise never\n"));
	CHECK(put(THP "/hugepages-64kB/enabled", saved64) == (long)strlen(saved64));
	CHECK(put(THP "/enabled", saved) == (long)strlen(saved));
	CHECK(open_errno(THP "/hugepages-64kB/stats/nr_anon", O_RDWR) == EACCES);
	CHECK(open_errno(THP "/hugepages-2048kB/stats/split", O_WRONLY) == EACCES);
	ktap_report("thp_store_bytes", NULL);
}

/* addr rounded up to a multiple of align (a power of two). */
static char *align_up(void *addr, unsigned long align)
{
	return (char *)(((uintptr_t)addr + align - 1) & ~(uintptr_t)(align - 1));
}

/*
 * nr_anon_transparent_hugepages counts THPs mapped by a PMD: a partial
 * mprotect or MADV_DONTNEED splits the mapping and the count drops, while
 * the 2 MiB nr_anon still counts the folio until it is freed.
 */
static void anon_thp_counter(void)
{
	char *raw = mmap(NULL, 3 * PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = align_up(raw, PMD);
	long thps = vmstat("nr_anon_transparent_hugepages"), nr = mthp_stat(2048, "nr_anon");
	long alloc = vmstat("thp_fault_alloc");
	const char *skip = NULL;

	CHECK(raw != MAP_FAILED && thps >= 0 && nr >= 0);
	if (raw == MAP_FAILED)
		goto out;
	CHECK(madvise(p, 2 * PMD, MADV_HUGEPAGE) == 0);
	p[0] = 1;
	p[PMD] = 1;
	if (vmstat("thp_fault_alloc") != alloc + 2) {
		skip = "no PMD-mapped THPs from these faults";
		goto out;
	}
	CHECK(vmstat("nr_anon_transparent_hugepages") == thps + 2);
	CHECK(mthp_stat(2048, "nr_anon") == nr + 2);
	CHECK(mprotect(p + PMD - PAGE, PAGE, PROT_READ) == 0);
	CHECK(vmstat("nr_anon_transparent_hugepages") == thps + 1);
	CHECK(madvise(p + PMD, PAGE, MADV_DONTNEED) == 0);
	CHECK(vmstat("nr_anon_transparent_hugepages") == thps);
	CHECK(mthp_stat(2048, "nr_anon") == nr + 2);
	CHECK(munmap(raw, 3 * PMD) == 0);
	raw = MAP_FAILED;
	CHECK(mthp_stat(2048, "nr_anon") == nr);
	CHECK(vmstat("nr_anon_transparent_hugepages") == thps);
out:
	if (raw != MAP_FAILED)
		munmap(raw, 3 * PMD);
	ktap_report("anon_thp_counter", skip);
}

/* THPeligible of the VMA starting at addr, or -1. */
static long thp_eligible_of(const void *addr)
{
	char blk[2048];

	return smaps_block(addr, blk, sizeof(blk)) ? kb(blk, "THPeligible:") : -1;
}

/*
 * THPeligible: some enabled size (after the global, per-size and madvise
 * settings) has a naturally aligned block inside the VMA.
 */
static void thp_eligible(void)
{
	const unsigned long K64 = 64 * 1024;
	char saved16[16], saved64[16];
	char *raw = mmap(NULL, 8 * K64, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *a = align_up(raw, K64), *b = a + 2 * K64 + PAGE;

	current_mode(THP "/hugepages-16kB/enabled", saved16, sizeof(saved16));
	current_mode(THP "/hugepages-64kB/enabled", saved64, sizeof(saved64));
	CHECK(raw != MAP_FAILED);
	if (raw == MAP_FAILED)
		goto out;
	munmap(raw, 8 * K64);
	/* a: 64 KiB, 64 KiB-aligned; b: 64 KiB at 4 KiB past a 64 KiB boundary. */
	CHECK(mmap(a, K64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == a);
	CHECK(mmap(b, K64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == b);
	CHECK(put(THP "/hugepages-16kB/enabled", "never") == 5);
	CHECK(put(THP "/hugepages-64kB/enabled", "never") == 5);
	CHECK(thp_eligible_of(a) == 0);		/* only 2 MiB is enabled: it does not fit */
	CHECK(put(THP "/hugepages-64kB/enabled", "always") == 6);
	CHECK(thp_eligible_of(a) == 1);
	CHECK(thp_eligible_of(b) == 0);		/* no aligned 64 KiB block inside b */
	CHECK(put(THP "/hugepages-16kB/enabled", "always") == 6);
	CHECK(thp_eligible_of(b) == 1);
	CHECK(put(THP "/hugepages-16kB/enabled", "never") == 5);
	CHECK(put(THP "/hugepages-64kB/enabled", "madvise") == 7);
	CHECK(thp_eligible_of(a) == 0);
	CHECK(madvise(a, K64, MADV_HUGEPAGE) == 0);
	CHECK(thp_eligible_of(a) == 1);
	CHECK(madvise(a, K64, MADV_NOHUGEPAGE) == 0);
	CHECK(thp_eligible_of(a) == 0);
	munmap(a, K64);
	munmap(b, K64);
out:
	CHECK(put(THP "/hugepages-16kB/enabled", saved16) == (long)strlen(saved16));
	CHECK(put(THP "/hugepages-64kB/enabled", saved64) == (long)strlen(saved64));
	ktap_report("thp_eligible", NULL);
}

/* n pagemap entries from addr into pm: 1 when read whole. */
static int pagemap_range(int fd, const void *addr, uint64_t *pm, unsigned long n)
{
	return pm_read(fd, pm, n * 8, (off_t)((uintptr_t)addr / PAGE) * 8) == (long)(n * 8);
}

/* Which of n pagemap entries have the exclusive bit: a bit mask (n <= 64). */
static uint64_t exclusive_mask(int fd, const void *addr, unsigned long n)
{
	uint64_t pm[64], mask = 0;

	if (!pagemap_range(fd, addr, pm, n))
		return ~0ULL;
	for (unsigned long i = 0; i < n; i++)
		if (pm[i] & PM_EXCLUSIVE)
			mask |= 1ULL << i;
	return mask;
}

/*
 * A child that writes page `page` of [p, ...) (its copy-on-write), tells
 * the parent through done[1] and exits when told through go[0].
 */
static pid_t cow_child(char *p, unsigned long page, int done[2], int go[2])
{
	pid_t pid;
	char c = 0;

	if (pipe(done) || pipe(go))
		return -1;
	pid = fork();
	if (pid == 0) {
		p[page * PAGE + 1] = 0x55;
		c = write(done[1], &c, 1) == 1 ? 0 : 1;
		c |= read(go[0], &c, 1) != 1;
		_exit(c);
	}
	return pid;
}

static int cow_child_wait_written(int done[2])
{
	char c;

	return read(done[0], &c, 1) == 1;
}

static int cow_child_finish(pid_t pid, int done[2], int go[2])
{
	char c = 0;
	int status = -1;
	int ok = write(go[1], &c, 1) == 1 && waitpid(pid, &status, 0) == pid &&
		 WIFEXITED(status) && WEXITSTATUS(status) == 0;

	close(done[0]);
	close(done[1]);
	close(go[0]);
	close(go[1]);
	return ok;
}

/*
 * The exclusive bit is per page (the page's mapcount is 1): after a
 * child's copy-on-write of page 3 of a shared 64 KiB folio, the parent's
 * page 3 is exclusive and the other 15 are not; once the child is gone
 * all 16 are. A write then still copies (a large folio's page shared since
 * fork is not reused).
 */
static void exclusive_per_page_mthp(void)
{
	const unsigned long K64 = 64 * 1024;
	char saved64[16];
	char *raw = mmap(NULL, 2 * K64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = align_up(raw, K64);
	int fd = open("/proc/self/pagemap", O_RDONLY), done[2], go[2];
	const char *skip = NULL;
	uint64_t pm[16], pm2[16];
	pid_t pid;

	current_mode(THP "/hugepages-64kB/enabled", saved64, sizeof(saved64));
	CHECK(raw != MAP_FAILED && fd >= 0);
	if (raw == MAP_FAILED || fd < 0)
		goto out;
	CHECK(put(THP "/hugepages-64kB/enabled", "always") == 6);
	for (unsigned long i = 0; i < 16; i++)
		p[i * PAGE] = (char)i;
	CHECK(pagemap_range(fd, p, pm, 16));
	for (unsigned long i = 0; i < 16; i++)
		if (pm[i] != pm[0] + i || (pm[0] & PM_PFN) % 16) {
			skip = "no 64 KiB folio from this fault";
			goto out;
		}
	CHECK(exclusive_mask(fd, p, 16) == 0xffff);
	pid = cow_child(p, 3, done, go);
	CHECK(pid > 0);
	if (pid <= 0)
		goto out;
	CHECK(cow_child_wait_written(done));
	CHECK(exclusive_mask(fd, p, 16) == 1ULL << 3);
	CHECK(pagemap_range(fd, p, pm2, 16) && pm2[3] == (pm[3] | PM_EXCLUSIVE));
	CHECK(cow_child_finish(pid, done, go));
	CHECK(exclusive_mask(fd, p, 16) == 0xffff);
	/* Linux 6.12 copies the page to a 4 KiB folio rather than reuse it. */
	p[5 * PAGE + 1] = 1;
	CHECK(pagemap_range(fd, p, pm2, 16));
	CHECK((pm2[5] & PM_PFN) != (pm[5] & PM_PFN) && (pm2[5] & PM_EXCLUSIVE));
	CHECK(pm2[4] == (pm[4] | PM_EXCLUSIVE) && pm2[6] == (pm[6] | PM_EXCLUSIVE));
	CHECK(p[5 * PAGE] == 5 && p[3 * PAGE + 1] == 0);
out:
	if (fd >= 0)
		close(fd);
	if (raw != MAP_FAILED)
		munmap(raw, 2 * K64);
	CHECK(put(THP "/hugepages-64kB/enabled", saved64) == (long)strlen(saved64));
	ktap_report("exclusive_per_page_mthp", skip);
}

/*
 * The same with a PMD-mapped THP: while parent and child map it by PMD no
 * page is exclusive; the child's write splits its PMD and copies page 9,
 * which alone becomes exclusive in the parent; once the child is gone all
 * are, and a write reuses the folio in place, still PMD-mapped.
 */
static void exclusive_per_page_pmd(void)
{
	char *raw = mmap(NULL, 2 * PMD, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = align_up(raw, PMD);
	long alloc = vmstat("thp_fault_alloc"), thps;
	int fd = open("/proc/self/pagemap", O_RDONLY), done[2], go[2];
	const char *skip = NULL;
	uint64_t pm[16], pm2[16];
	pid_t pid;

	CHECK(raw != MAP_FAILED && fd >= 0);
	if (raw == MAP_FAILED || fd < 0)
		goto out;
	CHECK(madvise(p, PMD, MADV_HUGEPAGE) == 0);
	p[0] = 1;
	if (vmstat("thp_fault_alloc") != alloc + 1) {
		skip = "no PMD-mapped THP from this fault";
		goto out;
	}
	thps = vmstat("nr_anon_transparent_hugepages");
	CHECK(pagemap_range(fd, p, pm, 16) && exclusive_mask(fd, p, 16) == 0xffff);
	pid = cow_child(p, 9, done, go);
	CHECK(pid > 0);
	if (pid <= 0)
		goto out;
	CHECK(cow_child_wait_written(done));
	CHECK(exclusive_mask(fd, p, 16) == 1ULL << 9);
	CHECK(exclusive_mask(fd, p + PMD - 16 * PAGE, 16) == 0);
	CHECK(vmstat("nr_anon_transparent_hugepages") == thps);
	CHECK(cow_child_finish(pid, done, go));
	CHECK(exclusive_mask(fd, p, 16) == 0xffff);
	p[5 * PAGE] = 1;
	CHECK(pagemap_range(fd, p, pm2, 16) && !memcmp(pm, pm2, sizeof(pm)));
	CHECK(vmstat("nr_anon_transparent_hugepages") == thps);
out:
	if (fd >= 0)
		close(fd);
	if (raw != MAP_FAILED)
		munmap(raw, 2 * PMD);
	ktap_report("exclusive_per_page_pmd", skip);
}

/* How many VMAs (smaps blocks) overlap [a, a + len): -1 when smaps cannot be read. */
static int vmas_in(const void *a, unsigned long len)
{
	static char buf[1 << 16];
	unsigned long lo = (uintptr_t)a, hi = lo + len, s, e;
	int n = 0;

	if (slurp("/proc/self/smaps", buf, sizeof(buf)) <= 0)
		return -1;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (sscanf(l, "%lx-%lx ", &s, &e) == 2 && strchr(l, '-') < strchr(l, ' ') &&
		    s < hi && e > lo)
			n++;
	return n;
}

/*
 * mprotect, madvise and mmap merge a VMA with compatible neighbours, as
 * Linux's vma_merge does: one smaps block again.
 */
static void vma_merge(void)
{
	char *raw = mmap(NULL, 10 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = raw + PAGE, blk[2048], header[40];

	CHECK(raw != MAP_FAILED);
	if (raw == MAP_FAILED)
		goto out;
	/* p: 6 pages with a hole below and three free pages above. */
	CHECK(munmap(raw, PAGE) == 0 && munmap(raw + 7 * PAGE, 3 * PAGE) == 0);
	p[0] = 1;
	p[3 * PAGE] = 1;
	CHECK(vmas_in(p, 6 * PAGE) == 1);
	CHECK(mprotect(p + 2 * PAGE, 2 * PAGE, PROT_READ) == 0);
	CHECK(vmas_in(p, 6 * PAGE) == 3);
	CHECK(mprotect(p + 2 * PAGE, 2 * PAGE, PROT_READ | PROT_WRITE) == 0);
	CHECK(vmas_in(p, 6 * PAGE) == 1);
	CHECK(madvise(p, 2 * PAGE, MADV_DONTFORK) == 0);
	CHECK(vmas_in(p, 6 * PAGE) == 2);
	CHECK(madvise(p, 2 * PAGE, MADV_DOFORK) == 0);
	CHECK(vmas_in(p, 6 * PAGE) == 1);
	CHECK(mmap(p + 6 * PAGE, PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == p + 6 * PAGE);
	CHECK(vmas_in(p, 7 * PAGE) == 1);
	CHECK(smaps_block(p, blk, sizeof(blk)));
	snprintf(header, sizeof(header), "%08lx-%08lx rw-p ", (unsigned long)(uintptr_t)p,
		 (unsigned long)(uintptr_t)(p + 7 * PAGE));
	CHECK(!strncmp(blk, header, strlen(header)));
	CHECK(p[0] == 1 && p[3 * PAGE] == 1 && p[6 * PAGE] == 0);
	CHECK(munmap(p, 7 * PAGE) == 0);
out:
	ktap_report("vma_merge", NULL);
}

/* /proc/self/maps: one line per VMA, the smaps header lines, Linux's format. */
static void maps(void)
{
	static char mbuf[16384], sbuf[65536];
	char want[128], *line;
	char *p = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int lines = 0, vmas = 0;

	CHECK(p != MAP_FAILED);
	CHECK(mprotect(p + 4096, 4096, PROT_READ) == 0);	/* three VMAs: rw-p r--p rw-p */
	CHECK(slurp("/proc/self/maps", mbuf, sizeof(mbuf)) > 0);
	snprintf(want, sizeof(want), "%08lx-%08lx r--p 00000000 00:00 0",
		 (unsigned long)(p + 4096), (unsigned long)(p + 8192));
	CHECK(strstr(mbuf, want) != NULL);
	CHECK(strstr(mbuf, "[stack]") != NULL);
	for (line = mbuf; (line = strchr(line, '\n')); line++)
		lines++;
	CHECK(slurp("/proc/self/smaps", sbuf, sizeof(sbuf)) > 0);
	for (line = sbuf; (line = strstr(line, "VmFlags:")); line++)
		vmas++;
	CHECK(lines == vmas);				/* the same VMAs as smaps */
	munmap(p, 3 * 4096);
	ktap_report("proc_self_maps", NULL);
}

/* ---- /proc/meminfo, /proc/self/status, hpage_pmd_size ---- */

/* "Name:   N kB" (or "Name:   N") of /proc/meminfo or /proc/self/status: N, or -1. */
static long field(const char *path, const char *name)
{
	return named_value(path, name, ':');
}

/* The text after "Name:\t" on its line of /proc/self/status, into out. */
static int status_text(const char *name, char *out, size_t size)
{
	static char buf[8192];
	size_t len = strlen(name);

	if (slurp("/proc/self/status", buf, sizeof(buf)) <= 0)
		return 0;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, len) && l[len] == ':' && l[len + 1] == '\t') {
			char *e = strchr(l, '\n');

			snprintf(out, size, "%.*s", (int)((e ? e : l + strlen(l)) - l - len - 2),
				 l + len + 2);
			return 1;
		}
	return 0;
}

#define MEMINFO	"/proc/meminfo"

/*
 * Every line is Linux's "Name:" padded to 16 columns and a number (8 wide,
 * then " kB", but for HugePages_*); the counters move with what the test does.
 */
static void meminfo(void)
{
	static char buf[8192];
	long total = field(MEMINFO, "MemTotal"), free0, free1, cached0, cached1;
	char *p, data[4096];
	int lines = 0, bad = 0, fd;

	CHECK(slurp(MEMINFO, buf, sizeof(buf)) > 0);
	for (char *l = buf; *l; l = strchr(l, '\n') + 1, lines++) {
		char *colon = strchr(l, ':'), *nl = strchr(l, '\n');

		if (!nl || !colon || colon > nl) {
			bad++;
			break;
		}
		if (!strncmp(l, "HardwareCorrupted: ", 19)) {
			bad += nl - l != 27 || strncmp(nl - 3, " kB", 3);	/* Linux's %5lu kB */
		} else if (strncmp(l, "HugePages_", 10)) {
			bad += nl - l != 27 || strncmp(nl - 3, " kB", 3) || colon - l > 15;
		} else {
			bad += nl - l != 24;
		}
	}
	CHECK(bad == 0 && lines >= 10);
	CHECK(!strncmp(buf, "MemTotal:", 9));
	CHECK(total > 0 && field(MEMINFO, "MemFree") > 0 && field(MEMINFO, "MemFree") < total);
	CHECK(field(MEMINFO, "MemAvailable") > 0 && field(MEMINFO, "MemAvailable") <= total);
	CHECK(field(MEMINFO, "SwapTotal") == 0 && field(MEMINFO, "SwapFree") == 0);
	CHECK(field(MEMINFO, "Hugepagesize") == 2048);
	CHECK(field(MEMINFO, "HugePages_Total") >= 0 && field(MEMINFO, "Slab") > 0);
	/* 32 MiB of anonymous memory written: MemFree drops by at least that much... */
	free0 = field(MEMINFO, "MemFree");
	p = mmap(NULL, 32 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		madvise(p, 32 << 20, MADV_NOHUGEPAGE);
		memset(p, 1, 32 << 20);
		free1 = field(MEMINFO, "MemFree");
		CHECK(free1 <= free0 - 32 * 1024);
		/* ...and comes back when it is unmapped (other allocations aside: 2 MiB). */
		munmap(p, 32 << 20);
		CHECK(field(MEMINFO, "MemFree") >= free1 + 30 * 1024);
	}
	/* A 1 MiB file in /tmp is 1 MiB more Cached; removed, it is gone again. */
	cached0 = field(MEMINFO, "Cached");
	memset(data, 'c', sizeof(data));
	fd = open("/tmp/procfs_ktap_cached", O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	for (int i = 0; fd >= 0 && i < 256; i++)
		CHECK(write(fd, data, sizeof(data)) == sizeof(data));
	cached1 = field(MEMINFO, "Cached");
	CHECK(cached1 >= cached0 + 1024);
	if (fd >= 0)
		close(fd);
	unlink("/tmp/procfs_ktap_cached");
	CHECK(field(MEMINFO, "Cached") <= cached1 - 1024);
	CHECK(open_errno(MEMINFO, O_WRONLY) == EACCES);
	ktap_report("meminfo", NULL);
}

static volatile int thread_go;

static void *parked(void *arg)
{
	while (!thread_go)
		usleep(1000);
	return arg;
}

static void on_hup(int sig)
{
	(void)sig;
}

#define STATUS	"/proc/self/status"

/* /proc/self/status against what the process knows of itself, each line moved by the test. */
static void self_status(void)
{
	char text[256], list[256], has_mem[64];
	long rss0, anon0, size0;
	sigset_t set, old;
	mode_t mask;
	pthread_t th;
	cpu_set_t cpus;
	char *p;

	CHECK(status_text("Name", text, sizeof(text)) && !strcmp(text, "procfs_ktap"));
	CHECK(field(STATUS, "Pid") == getpid() && field(STATUS, "Tgid") == getpid());
	CHECK(field(STATUS, "PPid") == getppid());
	CHECK(status_text("State", text, sizeof(text)) && !strcmp(text, "R (running)"));
	mask = umask(027);
	CHECK(status_text("Umask", text, sizeof(text)) && !strcmp(text, "0027"));
	umask(mask);
	/* Threads: one, then two while a thread runs, then one again. */
	CHECK(field(STATUS, "Threads") == 1);
	thread_go = 0;
	CHECK(pthread_create(&th, NULL, parked, NULL) == 0);
	CHECK(field(STATUS, "Threads") == 2);
	thread_go = 1;
	pthread_join(th, NULL);
	CHECK(field(STATUS, "Threads") == 1);
	/* The signal masks: SIGUSR1 (bit 9) blocked and pending, SIGUSR2 (11) ignored, SIGHUP (0) caught. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGUSR1, on_hup);	/* as init, a signal with no handler is not even queued */
	signal(SIGUSR2, SIG_IGN);
	signal(SIGHUP, on_hup);
	kill(getpid(), SIGUSR1);
	CHECK(status_text("SigBlk", text, sizeof(text)) && strtoull(text, NULL, 16) & 0x200);
	CHECK(status_text("ShdPnd", text, sizeof(text)) && strtoull(text, NULL, 16) == 0x200);
	CHECK(status_text("SigIgn", text, sizeof(text)) && strtoull(text, NULL, 16) & 0x800);
	CHECK(status_text("SigCgt", text, sizeof(text)) && strtoull(text, NULL, 16) & 0x1);
	CHECK(status_text("SigQ", text, sizeof(text)) && !strncmp(text, "1/", 2));
	sigtimedwait(&set, NULL, &(struct timespec){ 0, 0 });	/* take it */
	CHECK(status_text("ShdPnd", text, sizeof(text)) && strtoull(text, NULL, 16) == 0);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	CHECK(status_text("SigCgt", text, sizeof(text)) && !(strtoull(text, NULL, 16) & 0x1));
	/* Memory: 16 MiB mapped is VmSize; written, it is VmRSS and RssAnon. */
	size0 = field(STATUS, "VmSize");
	rss0 = field(STATUS, "VmRSS");
	anon0 = field(STATUS, "RssAnon");
	CHECK(size0 > 0 && rss0 > 0 && anon0 > 0 && field(STATUS, "RssFile") >= 0);
	CHECK(field(STATUS, "VmStk") > 0 && field(STATUS, "VmData") > 0);
	p = mmap(NULL, 16 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(p != MAP_FAILED);
	if (p != MAP_FAILED) {
		CHECK(field(STATUS, "VmSize") >= size0 + 16 * 1024);
		CHECK(field(STATUS, "VmData") >= 16 * 1024);
		memset(p, 1, 16 << 20);
		CHECK(field(STATUS, "VmRSS") >= rss0 + 16 * 1024);
		CHECK(field(STATUS, "RssAnon") >= anon0 + 16 * 1024);
		munmap(p, 16 << 20);
		CHECK(field(STATUS, "RssAnon") < anon0 + 1024);
	}
	/* The CPUs sched_getaffinity gives, the nodes with memory. */
	CHECK(sched_getaffinity(0, sizeof(cpus), &cpus) == 0);
	CHECK(status_text("Cpus_allowed_list", list, sizeof(list)));
	{
		char want[256] = "";
		int n = 0;

		for (int c = 0; c < CPU_SETSIZE; c++) {
			int e = c;

			if (!CPU_ISSET(c, &cpus))
				continue;
			while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &cpus))
				e++;
			n += snprintf(want + n, sizeof(want) - n, e > c ? "%s%d-%d" : "%s%d",
				      n ? "," : "", c, e);
			c = e;
		}
		CHECK(!strcmp(list, want));
	}
	CHECK(slurp("/sys/devices/system/node/has_memory", has_mem, sizeof(has_mem)) > 0);
	has_mem[strcspn(has_mem, "\n")] = '\0';
	CHECK(status_text("Mems_allowed_list", list, sizeof(list)) && !strcmp(list, has_mem));
	CHECK(status_text("Cpus_allowed", text, sizeof(text)) && strtoul(text, NULL, 16) != 0);
	ktap_report("self_status", NULL);
}

static int reads(const char *path, const char *want)
{
	char buf[64];

	return slurp(path, buf, sizeof(buf)) > 0 && !strcmp(buf, want);
}

/*
 * A setting Quire keeps and shows (defrag, shmem_enabled): Linux's text
 * with the default in brackets, a write of other that reads back as
 * other_text, a bad value EINVAL, and the default written back.
 */
static void kept_setting(const char *path, const char *text, const char *other,
			 const char *other_text, const char *dflt)
{
	CHECK(reads(path, text));
	CHECK(put(path, other) == (long)strlen(other));
	CHECK(reads(path, other_text));
	CHECK(put(path, "sometimes") == -EINVAL);
	CHECK(put(path, dflt) == (long)strlen(dflt));
	CHECK(reads(path, text));
}

static void hpage_pmd_size(void)
{
	CHECK(reads(THP "/hpage_pmd_size", "2097152\n"));
	CHECK(open_errno(THP "/hpage_pmd_size", O_WRONLY) == EACCES);
	kept_setting(THP "/defrag", "always defer defer+madvise [madvise] never\n",
		     "defer+madvise\n", "always defer [defer+madvise] madvise never\n", "madvise");
	kept_setting(THP "/shmem_enabled", "always within_size advise [never] deny force\n",
		     "advise", "always within_size [advise] never deny force\n", "never");
	/* The huge zero page: on by default, as Linux; 0 or 1, nothing else. */
	CHECK(reads(THP "/use_zero_page", "1\n"));
	CHECK(put(THP "/use_zero_page", "2") == -EINVAL);
	CHECK(put(THP "/use_zero_page", "0") == 1);
	CHECK(reads(THP "/use_zero_page", "0\n"));
	CHECK(put(THP "/use_zero_page", "1\n") == 2);
	CHECK(reads(THP "/use_zero_page", "1\n"));
	/* khugepaged's numbers: Linux's defaults and ranges. */
	CHECK(reads(THP "/khugepaged/max_ptes_none", "511\n"));
	CHECK(reads(THP "/khugepaged/pages_to_scan", "4096\n"));
	CHECK(reads(THP "/khugepaged/defrag", "1\n"));
	CHECK(put(THP "/khugepaged/max_ptes_none", "512") == -EINVAL);
	CHECK(put(THP "/khugepaged/pages_to_scan", "0") == -EINVAL);
	CHECK(put(THP "/khugepaged/defrag", "2") == -EINVAL);
	CHECK(put(THP "/khugepaged/max_ptes_shared", "100\n") == 4);
	CHECK(reads(THP "/khugepaged/max_ptes_shared", "100\n"));
	CHECK(put(THP "/khugepaged/max_ptes_shared", "256") == 3);
	CHECK(reads(THP "/khugepaged/scan_sleep_millisecs", "10000\n"));
	ktap_report("hpage_pmd_size_and_defrag", NULL);
}

int main(void)
{
	ktap_begin("procfs_user", 18);
	meminfo();
	self_status();
	hpage_pmd_size();
	thp_enabled();
	thp_size_enabled();
	thp_stats();
	proc_vmstat();
	listings_and_errors();
	pagemap();
	smaps();
	pmd_thp();
	thp_store_bytes();
	anon_thp_counter();
	thp_eligible();
	exclusive_per_page_mthp();
	exclusive_per_page_pmd();
	vma_merge();
	maps();
	return ktap_finish();
}
