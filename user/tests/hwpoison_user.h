/*
 * What the poisoned-memory tests share (hwpoison_ktap.c, mce_user.c):
 * a SIGBUS handler that records its siginfo and jumps back, pagemap and
 * /proc/meminfo readers, and a one-line write to a file.
 */
#ifndef QUIRE_USER_HWPOISON_USER_H
#define QUIRE_USER_HWPOISON_USER_H

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#define PAGE		4096UL
#define MADV_HWPOISON	100
#define MADV_SOFT_OFFLINE 101
#ifndef BUS_MCEERR_AR
#define BUS_MCEERR_AR	4
#endif
#ifndef BUS_MCEERR_AO
#define BUS_MCEERR_AO	5
#endif
#ifndef EHWPOISON
#define EHWPOISON	133
#endif
#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_PFN(e)	((e) & ((1ULL << 55) - 1))

static sigjmp_buf env;
static volatile int bus_code;
static void *volatile bus_addr;
static volatile int bus_lsb, buses;

static inline void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	bus_code = si->si_code;
	bus_addr = si->si_addr;
	bus_lsb = si->si_addr_lsb;
	buses++;
	siglongjmp(env, 1);
}

static inline void catch_sigbus(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

static inline uint64_t pagemap_of(const void *addr)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	uint64_t e = 0;

	if (fd >= 0 && pread(fd, &e, 8, (off_t)((uintptr_t)addr / PAGE) * 8) != 8)
		e = 0;
	if (fd >= 0)
		close(fd);
	return e;
}

/* Read one byte; 1 if that was SIGBUS BUS_MCEERR_AR at p (the byte's address, as Linux). */
static inline int touch_bus(volatile char *p)
{
	buses = 0;
	if (sigsetjmp(env, 1) == 0) {
		(void)*p;
		return 0;
	}
	return bus_code == BUS_MCEERR_AR && bus_addr == (void *)p ? 1 : 2;
}

/* /proc/meminfo's HardwareCorrupted, in kB (-1: not there). */
static inline long hardware_corrupted_kb(void)
{
	static char buf[8192];
	char *at;
	int fd = open("/proc/meminfo", O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	at = strstr(buf, "HardwareCorrupted:");
	return at ? strtol(at + strlen("HardwareCorrupted:"), NULL, 10) : -1;
}

/* A write of text to path: its length, or -errno. */
static inline long write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	long n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

#endif
