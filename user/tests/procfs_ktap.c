/*
 * /proc and /sys seen from ring 3, through the system calls a Linux
 * program uses (the same binary runs on Linux, as root, with THP "always"):
 * the THP controls (defaults, writes, refused values, restored at the end),
 * the per-size counters, /proc/vmstat, listings, errno values, and
 * /proc/self/pagemap and /proc/self/smaps of this process's own memory,
 * before and after a fork and with a PMD-mapped THP. Prints KTAP; exits 0
 * when every case passed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ktap.h"

#define THP "/sys/kernel/mm/transparent_hugepage"
#define PM_PRESENT	(1ULL << 63)
#define PM_FILE		(1ULL << 61)
#define PM_EXCLUSIVE	(1ULL << 56)
#define PM_PFN		((1ULL << 55) - 1)
#define PAGE		4096UL
#define PMD		(2UL << 20)

/* The whole file into buf (NUL-terminated): its length, or -errno. */
static long slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	long len = 0, n;

	if (fd < 0)
		return -errno;
	while (len + 1 < (long)size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	close(fd);
	return len;
}

/* As a shell's "echo -n s > path": the write's result, or -errno. */
static long put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	long n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

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
static long vmstat(const char *name)
{
	static char buf[8192];
	size_t len = strlen(name);

	if (slurp("/proc/vmstat", buf, sizeof(buf)) <= 0)
		return -1;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, len) && l[len] == ' ')
			return strtol(l + len + 1, NULL, 10);
	return -1;
}

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
	int seen_enabled = 0, seen_sizes = 0, other = 0;
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
		else
			other++;
	}
	if (d)
		closedir(d);
	CHECK(seen_enabled == 1 && seen_sizes == 8 && other == 0);
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
	CHECK(e1 == 0);
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

int main(void)
{
	ktap_begin("procfs_user", 8);
	thp_enabled();
	thp_size_enabled();
	thp_stats();
	proc_vmstat();
	listings_and_errors();
	pagemap();
	smaps();
	pmd_thp();
	return ktap_finish();
}
