/*
 * A few lines of runtime for the freestanding ring-3 test programs (no libc):
 * raw Linux system calls and output helpers. Programs built with musl live
 * in user/; these exist so the kernel's user-mode path is tested without
 * any toolchain beyond the compiler that builds the kernel.
 */
#ifndef QUIRE_TESTS_ULIB_H
#define QUIRE_TESTS_ULIB_H

typedef unsigned long u64;
typedef long s64;

static inline long syscall6(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ __volatile__("syscall" : "=a"(ret)
			     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			     : "rcx", "r11", "memory");
	return ret;
}
#define syscall3(nr, a, b, c) syscall6(nr, (long)(a), (long)(b), (long)(c), 0, 0, 0)

static inline unsigned long ustrlen(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

static inline int ustreq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static inline void puts_(const char *s)
{
	syscall3(1, 1, s, ustrlen(s));
}

static inline void putnum(long v)
{
	char buf[24];
	int i = 23;
	int neg = v < 0;
	unsigned long u = neg ? -(unsigned long)v : (unsigned long)v;

	buf[i] = 0;
	do {
		buf[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		buf[--i] = '-';
	puts_(&buf[i]);
}

static int failures;

/* A failed check prints where and what, and counts (checks_status). */
#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			puts_("    # user check failed: " #cond " at line "); \
			putnum(__LINE__);				\
			puts_("\n");					\
			failures++;					\
		}							\
	} while (0)

/*
 * The exit status of a mode made of CHECKs: 0 when every check passed,
 * else 1, with the count on a line of its own. Never the count itself: an
 * exit status keeps 8 bits, so 256 failures would read as success.
 */
static inline int checks_status(void)
{
	if (!failures)
		return 0;
	puts_("    # user checks failed: ");
	putnum(failures);
	puts_("\n");
	return 1;
}

#endif
