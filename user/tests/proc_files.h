/*
 * Reading and writing /proc and /sys files from the ring-3 tests, as a
 * shell's cat and "echo -n value > file" would (procfs_ktap, mount_ktap,
 * migrate_ktap, mthp_fault_count).
 */
#ifndef QUIRE_USER_PROC_FILES_H
#define QUIRE_USER_PROC_FILES_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole file into buf (NUL-terminated): its length, or -errno. */
static inline long slurp(const char *path, char *buf, size_t size)
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
static inline long put(const char *path, const char *s)
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

/* The number after "name" and sep on its line of the file ("nr_free_pages 12", "VmRSS:  4 kB"), or -1. */
static inline long named_value(const char *path, const char *name, char sep)
{
	static char buf[8192];
	size_t len = strlen(name);

	if (slurp(path, buf, sizeof(buf)) <= 0)
		return -1;
	for (char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, len) && l[len] == sep)
			return strtol(l + len + 1, NULL, 10);
	return -1;
}

/* The value of the line "name value" of /proc/vmstat, or -1. */
static inline long vmstat(const char *name)
{
	return named_value("/proc/vmstat", name, ' ');
}

/* A per-size THP counter (/sys/kernel/mm/transparent_hugepage/hugepages-<kb>kB/stats/<name>), or -1. */
static inline long mthp_stat(unsigned long kb, const char *name)
{
	char path[128], buf[64];

	snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/hugepages-%lukB/stats/%s",
		 kb, name);
	return slurp(path, buf, sizeof(buf)) > 0 ? strtol(buf, NULL, 10) : -1;
}

/* AnonHugePages of the smaps block of the VMA holding addr, or -1. */
static inline long smaps_anon_huge_kb(const void *addr)
{
	static char buf[1 << 16];
	char *l, *next;

	if (slurp("/proc/self/smaps", buf, sizeof(buf)) <= 0)
		return -1;
	for (l = buf; l && *l; l = next) {
		unsigned long start, end;

		next = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
		if (sscanf(l, "%lx-%lx ", &start, &end) == 2 && start <= (uintptr_t)addr &&
		    (uintptr_t)addr < end) {
			char *a = strstr(l, "AnonHugePages:");

			return a ? strtol(a + 14, NULL, 10) : -1;
		}
	}
	return -1;
}

/* A list of ids as sysfs prints them, "0-2" or "0,2", into a mask. */
static inline unsigned long parse_id_list(const char *s)
{
	unsigned long m = 0;

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

#endif
