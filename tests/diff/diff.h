/*
 * Helpers of the differential programs (the .c files of tests/diff, docs/difftest.md).
 * Each program runs on Quire and on Linux 6.12 and its stdout must be the
 * same on both, so it prints only what both must agree on: return values,
 * errno names, si_code and si_signo, memory contents, and "ok"/"bad" for
 * addresses and times (never an address, a pid or a duration). One line a
 * check, each with a label that says what it is.
 *
 *	say("...", ...);		a line of its own
 *	show("label", expr);		"label: 0", or "label: -1 EINVAL"
 *	yesno("label", cond);		"label: yes" or "label: no"
 *
 * Children end with _exit(), so that nothing buffered is printed twice.
 * Include it first: it defines _GNU_SOURCE.
 */
#ifndef QUIRE_DIFF_H
#define QUIRE_DIFF_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Linux's names for the errno values these programs can meet. */
static inline const char *errname(int e)
{
	static char other[24];

	switch (e) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case E2BIG: return "E2BIG";
	case EBADF: return "EBADF";
	case ECHILD: return "ECHILD";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case EFBIG: return "EFBIG";
	case ENOSPC: return "ENOSPC";
	case EPIPE: return "EPIPE";
	case ERANGE: return "ERANGE";
	case ENOSYS: return "ENOSYS";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EDEADLK: return "EDEADLK";
	case EOVERFLOW: return "EOVERFLOW";
	}
	snprintf(other, sizeof(other), "errno %d", e);
	return other;
}

static inline void __attribute__((format(printf, 1, 2))) say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* A system call's result: its value, or -1 and the errno's name. */
static inline void show_result(const char *label, long r, int e)
{
	if (r == -1)
		say("%s: -1 %s", label, errname(e));
	else
		say("%s: %ld", label, r);
}

#define show(label, expr)					\
	do {							\
		long show_r_;					\
		errno = 0;					\
		show_r_ = (long)(expr);				\
		show_result(label, show_r_, errno);		\
	} while (0)

static inline void yesno(const char *label, int cond)
{
	say("%s: %s", label, cond ? "yes" : "no");
}

/*
 * The line of /proc/self/smaps that starts with field ("AnonHugePages:",
 * "VmFlags:") in the block of the VMA that holds p, into line; 0 when
 * there is none.
 */
static inline int smaps_line(const void *p, const char *field, char *line, int len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	int in = 0, found = 0;

	while (f && !found && fgets(line, len, f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = (unsigned long)p >= lo && (unsigned long)p < hi;
		else if (in && !strncmp(line, field, strlen(field)))
			found = 1;
	}
	if (f)
		fclose(f);
	return found;
}

/* The number (kB) after field in that line, or -1. */
static inline long smaps_kb(const void *p, const char *field)
{
	char line[256];
	long kb = -1;

	if (smaps_line(p, field, line, sizeof(line)))
		sscanf(line + strlen(field), " %ld", &kb);
	return kb;
}

/* Line-buffered stdout: the order of lines stays the order of events. */
static inline void diff_begin(const char *name)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	say("== %s", name);
}

#endif
