/*
 * Host unit tests of the kernel's generic library: lib/vsprintf.c,
 * lib/string.c, kernel/cmdline.c and printk's log buffer. Built with ASan
 * and UBSan, so the fuzz loops at the end also check memory safety.
 *
 * The names below (snprintf, strlen, ...) are the kernel's (see
 * host_names.h); __builtin_<name> is the C library's, used as a reference.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include "ktap.h"
#include "../lib/random.h"
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/cmdline.h>
#include <quire/printk.h>
#include <quire/errno.h>

/* ---- helpers ---- */

static unsigned int rng_below(unsigned int n)
{
	return (unsigned int)(rng() % n);
}

static int sign(int x)
{
	return (x > 0) - (x < 0);
}

static __attribute__((format(printf, 3, 0)))
int libc_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	return __builtin_vsnprintf(buf, size, fmt, ap);
}

/* The kernel's snprintf without gcc's format checks, for odd formats. */
static int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* Report what the kernel printed against what it should have (libc's, or ours). */
static void fmt_mismatch(const char *file, int line, const char *fmt, size_t size,
			 const char *got, int gn, const char *want, int wn, bool libc)
{
	if (!host_fail(file, line))
		return;
	printf("    Expected vsnprintf(size %zu, ", size);
	host_put_str(fmt);
	printf(") to match %s, but\n        kernel == ", libc ? "the C library" : "the test");
	host_put_str(got);
	printf(" (returned %d)\n        %s == ", gn, libc ? "libc  " : "wanted");
	host_put_str(want);
	printf(" (returned %d)\n", wn);
}

/*
 * Format with the kernel and with libc and compare, byte for byte (a %c of
 * 0 included). Then format again into every smaller buffer, each allocated
 * to its exact size so that ASan sees a write past it: the return value
 * stays the full length and the buffer holds a terminated prefix.
 */
static __attribute__((format(printf, 3, 0)))
void vcheck_fmt(const char *file, int line, const char *fmt, va_list ap)
{
	char want[512], got[512];
	va_list aq;
	int wn, gn;

	va_copy(aq, ap);
	wn = libc_vsnprintf(want, sizeof(want), fmt, aq);
	va_end(aq);
	va_copy(aq, ap);
	gn = vsnprintf(got, sizeof(got), fmt, aq);
	va_end(aq);
	if (wn < 0 || wn >= (int)sizeof(want)) {
		host_fail_msg(file, line, "bad test: libc returned %d for \"%s\"", wn, fmt);
		return;
	}
	if (gn != wn || __builtin_memcmp(got, want, (size_t)wn + 1)) {
		fmt_mismatch(file, line, fmt, sizeof(got), got, gn, want, wn, true);
		return;
	}

	for (size_t size = 0; size <= (size_t)wn; size++) {
		char *buf = malloc(size ? size : 1);
		size_t end = size ? size - 1 : 0;
		int n;

		buf[0] = '#';	/* size 0 must leave this alone */
		va_copy(aq, ap);
		n = vsnprintf(buf, size, fmt, aq);
		va_end(aq);
		if (n != wn || (size && (__builtin_memcmp(buf, want, end) || buf[end])) ||
		    (!size && buf[0] != '#')) {
			buf[end] = '\0';
			fmt_mismatch(file, line, fmt, size, buf, n, want, wn, true);
			free(buf);
			return;
		}
		free(buf);
	}
}

static __attribute__((format(printf, 3, 4)))
void check_fmt(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcheck_fmt(file, line, fmt, ap);
	va_end(ap);
}

/* The same, for valid C that gcc's format check frowns upon. */
static void check_fmt_unchecked(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vcheck_fmt(file, line, fmt, ap);
	va_end(ap);
}

#define CHECK_FMT(fmt, ...) check_fmt(__FILE__, __LINE__, fmt, ##__VA_ARGS__)
#define CHECK_FMT_UNCHECKED(fmt, ...) \
	check_fmt_unchecked(__FILE__, __LINE__, fmt, ##__VA_ARGS__)

/* The kernel's output for fmt must be exactly want, and so its length. */
static void check_kfmt(const char *file, int line, const char *want, const char *fmt, ...)
{
	char got[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(got, sizeof(got), fmt, ap);
	va_end(ap);
	if (n != (int)__builtin_strlen(want) || __builtin_strcmp(got, want))
		fmt_mismatch(file, line, fmt, sizeof(got), got, n, want,
			     (int)__builtin_strlen(want), false);
}

#define CHECK_KFMT(want, fmt, ...) \
	check_kfmt(__FILE__, __LINE__, want, fmt, ##__VA_ARGS__)

/* ---- vsnprintf ---- */

HOST_TEST(fmt_conversions)
{
	int x = 0;

	CHECK_KFMT("", "");
	CHECK_FMT("hello, world");
	CHECK_FMT("100%%");
	CHECK_FMT("%%d %%%% a%%b");
	CHECK_FMT("%d", 0);
	CHECK_FMT("%d", 1);
	CHECK_FMT("%d", -1);
	CHECK_FMT("%d", 42);
	CHECK_FMT("%d", INT_MAX);
	CHECK_FMT("%d", INT_MIN);
	CHECK_FMT("%i", 123);
	CHECK_FMT("%i", -123);
	CHECK_FMT("%u", 0u);
	CHECK_FMT("%u", 3000000000u);
	CHECK_FMT("%u", UINT_MAX);
	CHECK_FMT("%x", 0u);
	CHECK_FMT("%x", 255u);
	CHECK_FMT("%x", 0xdeadbeefu);
	CHECK_FMT("%x", UINT_MAX);
	CHECK_FMT("%X", 0xdeadbeefu);
	CHECK_FMT("%X", 0xabcdefu);
	CHECK_FMT("%o", 0u);
	CHECK_FMT("%o", 8u);
	CHECK_FMT("%o", 0777u);
	CHECK_FMT("%o", UINT_MAX);
	CHECK_FMT("%c", 'a');
	CHECK_FMT("%c", 0);
	CHECK_FMT("%c", 0xe9);
	CHECK_FMT("<%c%c%c>", 'x', 'y', 'z');
	CHECK_FMT("%s", "");
	CHECK_FMT("%s", "abc");
	CHECK_FMT("%s and %s", "this", "that");
	CHECK_FMT("%p", (void *)0x1234);
	CHECK_FMT("%p", (void *)&x);
	CHECK_FMT("%p", (void *)UINTPTR_MAX);
	CHECK_FMT("%d %i %u %x %X %o %c %s %p %%", -5, 6, 7u, 0xabu, 0xabu, 9u, 'q',
		  "str", (void *)0xfeed);
}

HOST_TEST(fmt_flags_width_precision)
{
	/* flags */
	CHECK_FMT("[%-5d]", 42);
	CHECK_FMT("[%05d]", 42);
	CHECK_FMT("[%05d]", -42);
	CHECK_FMT("[%+d]", 42);
	CHECK_FMT("[%+d]", 0);
	CHECK_FMT("[%+d]", -42);
	CHECK_FMT("[% d]", 42);
	CHECK_FMT("[% d]", -42);
	CHECK_FMT("[% 5d]", 42);
	CHECK_FMT("[%+5d]", 42);
	CHECK_FMT("[%+05d]", 42);
	CHECK_FMT("[% 05d]", -42);
	CHECK_FMT("[%#x]", 0u);
	CHECK_FMT("[%#x]", 255u);
	CHECK_FMT("[%#X]", 255u);
	CHECK_FMT("[%#o]", 0u);
	CHECK_FMT("[%#o]", 8u);
	CHECK_FMT("[%#08x]", 255u);
	CHECK_FMT("[%#8x]", 255u);
	CHECK_FMT("[%#-8x]", 255u);
	CHECK_FMT("[%#08o]", 8u);
	CHECK_FMT("[%#5o]", 8u);
	CHECK_FMT("[%08X]", 0xbeefu);
	CHECK_FMT("[%-8X]", 0xbeefu);
	CHECK_FMT("[%-8o]", 8u);
	CHECK_FMT_UNCHECKED("[%-08u]", 17u);	/* '-' wins over '0' */
	CHECK_FMT_UNCHECKED("[%-05d]", -3);
	CHECK_FMT_UNCHECKED("[%+ d]", 3);	/* '+' wins over ' ' */
	/* width */
	CHECK_FMT("[%1d]", 12345);
	CHECK_FMT("[%10d]", 12345);
	CHECK_FMT("[%-10d]", -12345);
	CHECK_FMT("[%010d]", -1);
	CHECK_FMT("[%10s]", "abc");
	CHECK_FMT("[%-10s]", "abc");
	CHECK_FMT("[%2s]", "abcdef");
	CHECK_FMT("[%5c]", 'c');
	CHECK_FMT("[%-5c]", 'c');
	CHECK_FMT("[%20p]", (void *)0xabcdef);
	CHECK_FMT("[%-20p]", (void *)0xabcdef);
	CHECK_FMT("[%300d]", 7);
	/* precision */
	CHECK_FMT("[%.0d]", 0);
	CHECK_FMT("[%.0d]", 1);
	CHECK_FMT("[%.d]", 0);
	CHECK_FMT("[%5.0d]", 0);
	CHECK_FMT("[%-5.0d]", 0);
	CHECK_FMT("[%+.0d]", 0);
	CHECK_FMT("[% .0d]", 0);
	CHECK_FMT("[%.0u]", 0u);
	CHECK_FMT("[%.0x]", 0u);
	CHECK_FMT("[%#.0x]", 0u);
	CHECK_FMT("[%.0o]", 0u);
	CHECK_FMT("[%#.0o]", 0u);
	CHECK_FMT("[%.5d]", 42);
	CHECK_FMT("[%.5d]", -42);
	CHECK_FMT("[%+.5d]", 42);
	CHECK_FMT("[%8.5d]", -42);
	CHECK_FMT("[%-8.5d]", -42);
	CHECK_FMT_UNCHECKED("[%08.5d]", 42);	/* a precision turns '0' off */
	CHECK_FMT_UNCHECKED("[%08.0x]", 0u);
	CHECK_FMT("[%.3u]", 7u);
	CHECK_FMT("[%.3o]", 8u);
	CHECK_FMT("[%#.3o]", 8u);
	CHECK_FMT("[%#.5o]", 8u);
	CHECK_FMT("[%#.1o]", 0u);
	CHECK_FMT("[%.3x]", 0xau);
	CHECK_FMT("[%#.5x]", 255u);
	CHECK_FMT("[%#10.5x]", 255u);
	CHECK_FMT("[%.3s]", "abcdef");
	CHECK_FMT("[%.0s]", "abc");
	CHECK_FMT("[%.10s]", "abc");
	CHECK_FMT("[%5.1s]", "abc");
	CHECK_FMT("[%-5.2s]", "abc");
	/* '*' */
	CHECK_FMT("[%*d]", 5, 42);
	CHECK_FMT("[%*d]", -5, 42);
	CHECK_FMT("[%-*d]", 5, 42);
	CHECK_FMT("[%*d]", 0, 42);
	CHECK_FMT("[%.*d]", 3, 7);
	CHECK_FMT("[%.*d]", -1, 7);
	CHECK_FMT("[%.*d]", -5, 0);
	CHECK_FMT("[%.*s]", -5, "abc");
	CHECK_FMT("[%.*d]", 0, 0);
	CHECK_FMT("[%*.*d]", 8, 4, -7);
	CHECK_FMT("[%*.*d]", -8, 4, -7);
	CHECK_FMT("[%.*s]", 2, "abcdef");
	CHECK_FMT("[%.*s]", -1, "abc");
	CHECK_FMT("[%0*d]", 6, -12);
	CHECK_FMT("[%*s]", -6, "ab");
	CHECK_FMT("[%*c]", 3, 'z');
	CHECK_FMT("[%*x|%-*X|%.*o]", 6, 0xabu, 6, 0xabu, 4, 8u);
}

HOST_TEST(fmt_length_modifiers)
{
	/* An int out of range of hh/h is converted (clang's format check objects). */
	CHECK_FMT_UNCHECKED("%hhd", 300);
	CHECK_FMT_UNCHECKED("%hhd", -129);
	CHECK_FMT_UNCHECKED("%hhd", 127);
	CHECK_FMT_UNCHECKED("%hhu", 256 + 255);
	CHECK_FMT_UNCHECKED("%hhx", 0x1ff);
	CHECK_FMT_UNCHECKED("%hhi", -1);
	CHECK_FMT_UNCHECKED("%hd", 40000);
	CHECK_FMT_UNCHECKED("%hd", -32768);
	CHECK_FMT_UNCHECKED("%hu", 70000);
	CHECK_FMT_UNCHECKED("%hx", -1);
	CHECK_FMT_UNCHECKED("%ho", 65535);
	CHECK_FMT("%ld", LONG_MIN);
	CHECK_FMT("%ld", LONG_MAX);
	CHECK_FMT("%lu", ULONG_MAX);
	CHECK_FMT("%lx", 0x123456789abcdefUL);
	CHECK_FMT("%li", -1L);
	CHECK_FMT("%lld", LLONG_MIN);
	CHECK_FMT("%lld", LLONG_MAX);
	CHECK_FMT("%llu", ULLONG_MAX);
	CHECK_FMT("%llx", ULLONG_MAX);
	CHECK_FMT("%llX", ULLONG_MAX);
	CHECK_FMT("%llo", ULLONG_MAX);
	CHECK_FMT("%#llo", ULLONG_MAX);
	CHECK_FMT("%#llx", ULLONG_MAX);
	CHECK_FMT("%lld", (long long)INT64_MIN);
	CHECK_FMT("%llu", (unsigned long long)UINT64_MAX);
	CHECK_FMT("%+lld", (long long)INT64_MIN);
	CHECK_FMT("[%30lld]", (long long)INT64_MIN);
	CHECK_FMT("[%-30lld]", (long long)INT64_MIN);
	CHECK_FMT("[%030lld]", (long long)INT64_MIN);
	CHECK_FMT("[%.25lld]", (long long)INT64_MIN);
	CHECK_FMT("[%.25llu]", (unsigned long long)UINT64_MAX);
	CHECK_FMT("%zu", SIZE_MAX);
	CHECK_FMT("%zx", (size_t)0xabc);
	CHECK_FMT("%zd", (long)-5);
	CHECK_FMT("%td", (ptrdiff_t)-7);
	CHECK_FMT("%tx", (ptrdiff_t)0x7f);
	CHECK_FMT("%jd", INTMAX_MIN);
	CHECK_FMT("%ju", UINTMAX_MAX);
	/* The right argument is consumed after each modifier. */
	CHECK_FMT("%hhd %lld %hd %zu %d", (signed char)1, -2LL, (short)3, (size_t)4, 5);
	CHECK_FMT("%lld %d %llx", (long long)INT64_MIN, -1, (unsigned long long)UINT64_MAX);
}

/* Where the kernel deliberately differs from (or goes beyond) C. */
HOST_TEST(fmt_kernel_specific)
{
	const char *volatile null_str = NULL;
	void *volatile null_ptr = NULL;
	char buf[64];
	char abc[3] = { 'a', 'b', 'c' };	/* not terminated */

	/* Unknown conversions are printed, and consume no argument. */
	CHECK_KFMT("%k", "%k");
	CHECK_KFMT("a%yb", "a%yb");
	CHECK_KFMT("%k 5", "%k %d", 5);
	CHECK_KFMT("%f 7", "%f %d", 7);
	/* %n writes nothing anywhere. */
	CHECK_KFMT("%n 9", "%n %d", 9);
	/* A lone '%' at the end is dropped, with any flags and width. */
	CHECK_KFMT("abc", "abc%");
	CHECK_KFMT("abc", "abc%-5");
	CHECK_KFMT("abc", "abc%5.");
	CHECK_KFMT("abc", "abc%ll");
	/* '+' and ' ' only apply to signed conversions. */
	CHECK_KFMT("5 5 ff", "%+u % u %+x", 5u, 5u, 0xffu);
	/* NULL strings and pointers. */
	CHECK_KFMT("(null)", "%s", null_str);
	CHECK_KFMT("(nu", "%.3s", null_str);
	CHECK_KFMT("[  (null)]", "[%8s]", null_str);
	CHECK_KFMT("0", "%p", null_ptr);
	/* %p is 0x and lower-case hex digits. */
	CHECK_KFMT("0xabcdef0123", "%p", (void *)0xabcdef0123);
	/* Precision bounds the read of a string that is not terminated. */
	CHECK_KFMT("abc", "%.3s", abc);
	CHECK_KFMT("ab", "%.*s", 2, abc);
	/* Exact values, not only "same as libc". */
	CHECK_KFMT("-9223372036854775808", "%lld", (long long)INT64_MIN);
	CHECK_KFMT("18446744073709551615", "%llu", (unsigned long long)UINT64_MAX);
	CHECK_KFMT("1777777777777777777777", "%llo", (unsigned long long)UINT64_MAX);
	CHECK_KFMT("", "%.0d", 0);
	CHECK_KFMT("010", "%#.3o", 8u);
	EXPECT_EQ(ksnprintf(buf, sizeof(buf), "%c", 0), 1);
	EXPECT_EQ(buf[0], 0);
}

HOST_TEST(fmt_truncation)
{
	char buf[16];
	char *exact;

	__builtin_memset(buf, '#', sizeof(buf));
	EXPECT_EQ(snprintf(buf, 5, "hello world"), 11);
	EXPECT_STREQ(buf, "hell");
	EXPECT_EQ(buf[5], '#');		/* nothing past size */
	EXPECT_EQ(snprintf(NULL, 0, "%d", 12345), 5);
	EXPECT_EQ(ksnprintf(NULL, 0, ""), 0);
	buf[0] = '#';
	EXPECT_EQ(snprintf(buf, 0, "abc"), 3);
	EXPECT_EQ(buf[0], '#');
	EXPECT_EQ(snprintf(buf, 1, "abc"), 3);
	EXPECT_STREQ(buf, "");
	EXPECT_EQ(snprintf(buf, 4, "abc"), 3);
	EXPECT_STREQ(buf, "abc");
	EXPECT_EQ(snprintf(buf, 4, "[%10d]", 5), 12);
	EXPECT_STREQ(buf, "[  ");
	EXPECT_EQ(snprintf(buf, 6, "%s%s", "abc", "def"), 6);
	EXPECT_STREQ(buf, "abcde");

	/* scnprintf returns what it wrote, not what it wanted to. */
	EXPECT_EQ(scnprintf(buf, 5, "hello world"), 4);
	EXPECT_STREQ(buf, "hell");
	EXPECT_EQ(scnprintf(buf, sizeof(buf), "hello"), 5);
	EXPECT_STREQ(buf, "hello");
	EXPECT_EQ(scnprintf(buf, 1, "hello"), 0);
	EXPECT_STREQ(buf, "");
	EXPECT_EQ(scnprintf(buf, 6, "hello"), 5);
	EXPECT_EQ(scnprintf(buf, sizeof(buf), "%s", ""), 0);
	buf[0] = '#';
	EXPECT_EQ(scnprintf(buf, 0, "hello"), 0);
	EXPECT_EQ(buf[0], '#');
	EXPECT_EQ(scnprintf(NULL, 0, "hello"), 0);

	/* Appending with scnprintf never runs past the end. */
	exact = malloc(10);
	{
		int len = 0;

		for (int i = 0; i < 10; i++)
			len += scnprintf(exact + len, 10 - (size_t)len, "%d,", i);
		EXPECT_EQ(len, 9);
		EXPECT_STREQ(exact, "0,1,2,3,4");
	}
	free(exact);
}

/* ---- string functions ---- */

HOST_TEST(mem_copy_set)
{
	char *a = malloc(32), *b = malloc(32);

	for (int i = 0; i < 32; i++)
		a[i] = (char)(i + 1);
	EXPECT_PTR_EQ(memcpy(b, a, 32), b);
	EXPECT_EQ(__builtin_memcmp(a, b, 32), 0);
	EXPECT_PTR_EQ(memcpy(b, "zz", 0), b);
	EXPECT_EQ(b[0], 1);
	EXPECT_PTR_EQ(memset(b, 0x1ab, 32), b);	/* only the low byte counts */
	for (int i = 0; i < 32; i++)
		EXPECT_EQ((unsigned char)b[i], 0xab);
	memset(b + 31, 0, 1);
	EXPECT_EQ(b[30], (char)0xab);
	EXPECT_EQ(b[31], 0);
	memset(b, 'x', 0);
	EXPECT_EQ((unsigned char)b[0], 0xab);
	free(a);
	free(b);
}

HOST_TEST(memmove_overlap)
{
	unsigned char buf[48], ref[48];

	/* Every source/destination/length within a small buffer. */
	for (size_t len = 0; len <= 24; len++) {
		for (size_t src = 0; src + len <= sizeof(buf); src++) {
			for (size_t dst = 0; dst + len <= sizeof(buf); dst++) {
				unsigned char tmp[48];
				void *r;

				for (size_t i = 0; i < sizeof(buf); i++)
					buf[i] = ref[i] = (unsigned char)(i * 7 + 1);
				__builtin_memcpy(tmp, ref + src, len);
				__builtin_memcpy(ref + dst, tmp, len);
				r = memmove(buf + dst, buf + src, len);
				if (r != buf + dst || __builtin_memcmp(buf, ref, sizeof(buf)))
					HOST_FAIL("memmove(buf + %zu, buf + %zu, %zu) is wrong",
						  dst, src, len);
			}
		}
	}

	/* At the very edges of a heap block, both directions. */
	{
		char *p = malloc(16);

		__builtin_memcpy(p, "0123456789abcdef", 16);
		memmove(p + 1, p, 15);
		EXPECT_EQ(__builtin_memcmp(p, "00123456789abcde", 16), 0);
		memmove(p, p + 1, 15);
		EXPECT_EQ(__builtin_memcmp(p, "0123456789abcdee", 16), 0);
		EXPECT_PTR_EQ(memmove(p, p, 16), p);
		free(p);
	}
}

HOST_TEST(memcmp_sign)
{
	EXPECT_EQ(memcmp("abc", "abc", 3), 0);
	EXPECT_LE(memcmp("abc", "abd", 3), -1);
	EXPECT_GE(memcmp("abd", "abc", 3), 1);
	/* Bytes compare as unsigned char. */
	EXPECT_GE(memcmp("\x80", "\x7f", 1), 1);
	EXPECT_LE(memcmp("\x01", "\xff", 1), -1);
	EXPECT_EQ(memcmp("abX", "abY", 2), 0);
	EXPECT_EQ(memcmp("a", "b", 0), 0);
	/* Past a NUL: memcmp does not stop there. */
	EXPECT_LE(memcmp("a\0b", "a\0c", 3), -1);
	/* The first difference decides. */
	EXPECT_GE(memcmp("b\x01", "a\xff", 2), 1);
}

HOST_TEST(strcmp_strncmp)
{
	static const char *const s[] = {
		"", "a", "b", "ab", "abc", "abd", "abcd", "ABC", "\x7f", "\x80",
		"\xff", "a\x80", "a\x7f", "zzz",
	};

	for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(s); j++) {
			int want = sign(__builtin_strcmp(s[i], s[j]));

			if (sign(strcmp(s[i], s[j])) != want)
				HOST_FAIL("strcmp(%zu, %zu) has the wrong sign", i, j);
			for (size_t n = 0; n <= 5; n++)
				if (sign(strncmp(s[i], s[j], n)) !=
				    sign(__builtin_strncmp(s[i], s[j], n)))
					HOST_FAIL("strncmp(%zu, %zu, %zu) has the wrong sign",
						  i, j, n);
		}
	}
	EXPECT_EQ(strncmp("abcX", "abcY", 3), 0);
	EXPECT_EQ(strncmp("abc", "xyz", 0), 0);
	EXPECT_LE(strncmp("ab", "abc", 5), -1);
	EXPECT_EQ(strncmp("ab\0x", "ab\0y", 4), 0);	/* stops at the NUL */
	EXPECT_EQ(strcmp("same", "same"), 0);
}

HOST_TEST(strlen_strnlen)
{
	char four[4] = { 'a', 'b', 'c', 'd' };	/* not terminated */

	EXPECT_EQ(strlen(""), 0);
	EXPECT_EQ(strlen("abc"), 3);
	EXPECT_EQ(strlen("ab\0cd"), 2);
	EXPECT_EQ(strnlen("abc", 0), 0);
	EXPECT_EQ(strnlen("abc", 2), 2);
	EXPECT_EQ(strnlen("abc", 3), 3);
	EXPECT_EQ(strnlen("abc", 10), 3);
	EXPECT_EQ(strnlen(four, 4), 4);		/* and reads no further */
}

HOST_TEST(strchr_strrchr)
{
	static const char *const s[] = { "", "a", "abcabc", "hello world", "x\xe9y\xe9" };
	static const int c[] = { 0, 'a', 'b', 'c', 'l', 'o', ' ', 'z', 'x', 0xe9,
				 (char)0xe9, 0x100 + 'a' };

	for (size_t i = 0; i < ARRAY_SIZE(s); i++) {
		for (size_t j = 0; j < ARRAY_SIZE(c); j++) {
			if (strchr(s[i], c[j]) != __builtin_strchr(s[i], c[j]))
				HOST_FAIL("strchr(\"%s\", %#x) is wrong", s[i], c[j]);
			if (strrchr(s[i], c[j]) != __builtin_strrchr(s[i], c[j]))
				HOST_FAIL("strrchr(\"%s\", %#x) is wrong", s[i], c[j]);
		}
	}
	{
		const char *h = "hello";

		EXPECT_PTR_EQ(strchr(h, '\0'), h + 5);
		EXPECT_PTR_EQ(strrchr(h, '\0'), h + 5);
		EXPECT_PTR_EQ(strchr(h, 'l'), h + 2);
		EXPECT_PTR_EQ(strrchr(h, 'l'), h + 3);
		EXPECT_PTR_EQ(strchr(h, 'q'), NULL);
		EXPECT_PTR_EQ(strrchr(h, 'q'), NULL);
	}
}

HOST_TEST(strstr_cases)
{
	static const char *const hay[] = { "", "a", "abc", "aaab", "abababc", "hello world" };
	static const char *const needle[] = { "", "a", "b", "ab", "aab", "abc", "ababc",
					      "world", "worlds", "hello world!", "x" };
	const char *h = "find me", *e = "";

	for (size_t i = 0; i < ARRAY_SIZE(hay); i++)
		for (size_t j = 0; j < ARRAY_SIZE(needle); j++)
			if (strstr(hay[i], needle[j]) != __builtin_strstr(hay[i], needle[j]))
				HOST_FAIL("strstr(\"%s\", \"%s\") is wrong", hay[i], needle[j]);
	EXPECT_PTR_EQ(strstr(h, ""), h);
	EXPECT_PTR_EQ(strstr(e, ""), e);
	EXPECT_PTR_EQ(strstr(h, "me"), h + 5);
	EXPECT_PTR_EQ(strstr(h, "med"), NULL);
}

HOST_TEST(strscpy_cases)
{
	char *b = malloc(4);	/* exact size: ASan catches a write past it */

	EXPECT_EQ(strscpy(b, "abc", 4), 3);	/* exact fit */
	EXPECT_STREQ(b, "abc");
	EXPECT_EQ(strscpy(b, "ab", 4), 2);
	EXPECT_STREQ(b, "ab");
	EXPECT_EQ(strscpy(b, "", 4), 0);
	EXPECT_STREQ(b, "");
	EXPECT_EQ(strscpy(b, "abcd", 4), -E2BIG);
	EXPECT_STREQ(b, "abc");			/* cut, terminated */
	EXPECT_EQ(strscpy(b, "a much longer string", 4), -E2BIG);
	EXPECT_STREQ(b, "a m");
	EXPECT_EQ(strscpy(b, "x", 1), -E2BIG);
	EXPECT_STREQ(b, "");
	EXPECT_EQ(strscpy(b, "", 1), 0);
	EXPECT_STREQ(b, "");
	__builtin_memcpy(b, "zzz", 4);
	EXPECT_EQ(strscpy(b, "abc", 0), -E2BIG);	/* size 0: nothing written */
	EXPECT_STREQ(b, "zzz");
	EXPECT_EQ(strscpy(NULL, "abc", 0), -E2BIG);
	free(b);
}

struct ull_case {
	const char *s;
	unsigned int base;
	int err;
	unsigned long long v;
};

HOST_TEST(kstrtoull_cases)
{
	static const struct ull_case cases[] = {
		{ "0", 0, 0, 0 },
		{ "1", 0, 0, 1 },
		{ "123", 10, 0, 123 },
		{ "123", 0, 0, 123 },
		{ "+5", 0, 0, 5 },
		{ "0x1f", 0, 0, 31 },
		{ "0X1F", 0, 0, 31 },
		{ "0x1f", 16, 0, 31 },
		{ "1f", 16, 0, 31 },
		{ "DeadBeef", 16, 0, 0xdeadbeef },
		{ "017", 0, 0, 15 },
		{ "017", 10, 0, 17 },
		{ "017", 8, 0, 15 },
		{ "0", 8, 0, 0 },
		{ "00", 0, 0, 0 },
		{ "101", 2, 0, 5 },
		{ "z", 36, 0, 35 },
		{ "18446744073709551615", 0, 0, UINT64_MAX },
		{ "0xffffffffffffffff", 0, 0, UINT64_MAX },
		{ "01777777777777777777777", 0, 0, UINT64_MAX },
		{ "000000000000000000000000000001", 10, 0, 1 },
		{ "18446744073709551616", 0, -ERANGE, 0 },
		{ "18446744073709551620", 10, -ERANGE, 0 },
		{ "99999999999999999999", 10, -ERANGE, 0 },
		{ "0x10000000000000000", 0, -ERANGE, 0 },
		{ "02000000000000000000000", 0, -ERANGE, 0 },
		{ "", 0, -EINVAL, 0 },
		{ "", 10, -EINVAL, 0 },
		{ "x", 0, -EINVAL, 0 },
		{ "0x", 0, -EINVAL, 0 },
		{ "0x", 16, -EINVAL, 0 },
		{ "0X", 0, -EINVAL, 0 },
		{ "0xg", 0, -EINVAL, 0 },
		{ "0x1f", 10, -EINVAL, 0 },
		{ "08", 0, -EINVAL, 0 },
		{ "19", 8, -EINVAL, 0 },
		{ "12a", 10, -EINVAL, 0 },
		{ "2", 2, -EINVAL, 0 },
		{ " 1", 0, -EINVAL, 0 },
		{ "1 ", 0, -EINVAL, 0 },
		{ "1\n", 0, -EINVAL, 0 },
		{ "-1", 0, -EINVAL, 0 },
		{ "+", 0, -EINVAL, 0 },
		{ "++1", 0, -EINVAL, 0 },
		{ "+-1", 0, -EINVAL, 0 },
		{ "1", 1, -EINVAL, 0 },
		{ "1", 37, -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct ull_case *c = &cases[i];
		unsigned long long v = 0x5a5a;
		int err = kstrtoull(c->s, c->base, &v);

		if (err != c->err || v != (c->err ? 0x5a5a : c->v))
			HOST_FAIL("kstrtoull(\"%s\", %u) gave %d, %llu; expected %d, %llu",
				  c->s, c->base, err, v, c->err, c->v);
	}
}

struct ll_case {
	const char *s;
	unsigned int base;
	int err;
	long long v;
};

HOST_TEST(kstrtoll_cases)
{
	static const struct ll_case cases[] = {
		{ "0", 0, 0, 0 },
		{ "-0", 0, 0, 0 },
		{ "-1", 0, 0, -1 },
		{ "+7", 0, 0, 7 },
		{ "-010", 0, 0, -8 },
		{ "-0x10", 0, 0, -16 },
		{ "-ff", 16, 0, -255 },
		{ "9223372036854775807", 0, 0, INT64_MAX },
		{ "-9223372036854775808", 0, 0, INT64_MIN },
		{ "-0x8000000000000000", 0, 0, INT64_MIN },
		{ "0x7fffffffffffffff", 0, 0, INT64_MAX },
		{ "9223372036854775808", 0, -ERANGE, 0 },
		{ "-9223372036854775809", 0, -ERANGE, 0 },
		{ "0x8000000000000000", 0, -ERANGE, 0 },
		{ "18446744073709551615", 0, -ERANGE, 0 },
		{ "-18446744073709551615", 0, -ERANGE, 0 },
		{ "-99999999999999999999", 0, -ERANGE, 0 },
		{ "", 0, -EINVAL, 0 },
		{ "-", 0, -EINVAL, 0 },
		{ "+", 0, -EINVAL, 0 },
		{ "-+7", 0, -EINVAL, 0 },
		{ "+-7", 0, -EINVAL, 0 },
		{ "--7", 0, -EINVAL, 0 },
		{ "- 7", 0, -EINVAL, 0 },
		{ " -7", 0, -EINVAL, 0 },
		{ "-7x", 0, -EINVAL, 0 },
		{ "-0x", 0, -EINVAL, 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct ll_case *c = &cases[i];
		long long v = 0x5a5a;
		int err = kstrtoll(c->s, c->base, &v);

		if (err != c->err || v != (c->err ? 0x5a5a : c->v))
			HOST_FAIL("kstrtoll(\"%s\", %u) gave %d, %lld; expected %d, %lld",
				  c->s, c->base, err, v, c->err, c->v);
	}
}

HOST_TEST(kstrtobool_cases)
{
	static const char *const yes[] = { "1", "y", "yes", "on", "true" };
	static const char *const no[] = { "0", "n", "no", "off", "false" };
	static const char *const bad[] = {
		"", " ", "2", "-1", "01", "yess", "ye", "of", "onn", "o", "t", "f",
		"truee", "fals", "maybe", " y", "y ", "1\n", "on\t",
	};
	bool b;

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		b = false;
		EXPECT_EQ(kstrtobool(yes[i], &b), 0);
		EXPECT_TRUE(b);
		b = true;
		EXPECT_EQ(kstrtobool(no[i], &b), 0);
		EXPECT_FALSE(b);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		b = true;
		if (kstrtobool(bad[i], &b) != -EINVAL || !b)
			HOST_FAIL("kstrtobool(\"%s\") should be rejected", bad[i]);
	}
}

/* The C library as a reference: kstrto* take no leading space or '-'. */
static int ref_strtoull(const char *s, unsigned int base, unsigned long long *res)
{
	unsigned long long v;
	char *end;

	if (!*s || isspace((unsigned char)s[0]) || s[0] == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, (int)base);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*res = v;
	return 0;
}

static int ref_strtoll(const char *s, unsigned int base, long long *res)
{
	long long v;
	char *end;

	if (!*s || isspace((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, (int)base);
	if (end == s || *end)
		return -EINVAL;
	if (errno == ERANGE)
		return -ERANGE;
	*res = v;
	return 0;
}

/*
 * Errors agree, except that the kernel may see an overflow before a bad
 * character later in the string (-ERANGE), where libc sees the character.
 */
static bool same_error(int kernel, int ref)
{
	return kernel == ref || (ref == -EINVAL && kernel == -ERANGE);
}

HOST_TEST(kstrto_fuzz)
{
	static const char alphabet[] = "0123456789abcdefABCDEFxX+- gz\t";
	static const unsigned int bases[] = { 0, 0, 0, 8, 10, 10, 16, 16, 2, 36 };
	char s[40];

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (int iter = 0; iter < 20000; iter++) {
		unsigned int len = rng_below(8) ? rng_below(12) : 15 + rng_below(10);
		unsigned int base = bases[rng_below(ARRAY_SIZE(bases))];
		unsigned long long ku = 1, ru = 2;
		long long ks = 1, rs = 2;
		bool b;
		int k, r;

		for (unsigned int i = 0; i < len; i++) {
			/* Mostly digits, so that long strings reach the limits. */
			if (rng_below(4))
				s[i] = (char)('0' + rng_below(10));
			else
				s[i] = alphabet[rng_below(sizeof(alphabet) - 1)];
		}
		s[len] = '\0';

		k = kstrtoull(s, base, &ku);
		r = ref_strtoull(s, base, &ru);
		if (!same_error(k, r) || (!k && ku != ru))
			HOST_FAIL("kstrtoull(\"%s\", %u): %d %llu, libc says %d %llu",
				  s, base, k, ku, r, ru);
		k = kstrtoll(s, base, &ks);
		r = ref_strtoll(s, base, &rs);
		if (!same_error(k, r) || (!k && ks != rs))
			HOST_FAIL("kstrtoll(\"%s\", %u): %d %lld, libc says %d %lld",
				  s, base, k, ks, r, rs);
		k = kstrtobool(s, &b);
		EXPECT_TRUE(k == 0 || k == -EINVAL);
	}
}

/* ---- command line ---- */

static bool opt_flag;
static unsigned long opt_num, opt_big;
static char opt_word[8];
static int opt_calls;
static bool opt_call_null;
static char opt_call_arg[CMDLINE_VAL_MAX];

static int opt_call(const char *value)
{
	opt_calls++;
	opt_call_null = !value;
	opt_call_arg[0] = '\0';
	if (value) {
		/* The parser never passes more than fits its own buffer. */
		EXPECT_TRUE(__builtin_strlen(value) < CMDLINE_VAL_MAX);
		__builtin_snprintf(opt_call_arg, sizeof(opt_call_arg), "%s", value);
	}
	return value && !__builtin_strcmp(value, "bad") ? -EINVAL : 0;
}

static const struct cmdline_opt opts[] = {
	{ .name = "flag", .kind = CMDLINE_KIND_BOOL, .var = &opt_flag, .help = "a bool" },
	{ .name = "num", .kind = CMDLINE_KIND_UINT, .var = &opt_num, .min = 1, .max = 100,
	  .help = "1 to 100" },
	{ .name = "big", .kind = CMDLINE_KIND_UINT, .var = &opt_big, .min = 0,
	  .max = ULONG_MAX, .help = "any unsigned long" },
	{ .name = "word", .kind = CMDLINE_KIND_STRING, .var = opt_word,
	  .size = sizeof(opt_word), .help = "up to 7 characters" },
	{ .name = "call", .kind = CMDLINE_KIND_CALL, .call = opt_call,
	  .help = "anything but 'bad'" },
};

static void opts_reset(void)
{
	opt_flag = false;
	opt_num = 42;
	opt_big = 7;
	__builtin_strcpy(opt_word, "dflt");
	opt_calls = 0;
	opt_call_null = false;
	opt_call_arg[0] = '\0';
}

static bool opts_are_default(void)
{
	return !opt_flag && opt_num == 42 && opt_big == 7 &&
	       !__builtin_strcmp(opt_word, "dflt") && opt_calls == 0;
}

static int parse(const char *line)
{
	return cmdline_parse(line, opts, ARRAY_SIZE(opts));
}

HOST_TEST(cmdline_good_values)
{
	opts_reset();
	EXPECT_EQ(parse("flag=yes num=0x10 big=18446744073709551615 word=abcdefg call=hi"), 0);
	EXPECT_TRUE(opt_flag);
	EXPECT_EQ(opt_num, 16);
	EXPECT_EQ(opt_big, ULONG_MAX);
	EXPECT_STREQ(opt_word, "abcdefg");	/* 7 characters: an exact fit */
	EXPECT_EQ(opt_calls, 1);
	EXPECT_STREQ(opt_call_arg, "hi");

	opts_reset();
	EXPECT_EQ(parse("num=1 big=0"), 0);
	EXPECT_EQ(opt_num, 1);
	EXPECT_EQ(opt_big, 0);
	EXPECT_EQ(parse("num=100 flag=on"), 0);
	EXPECT_EQ(opt_num, 100);
	EXPECT_TRUE(opt_flag);
	EXPECT_EQ(parse("num=0100 flag=off"), 0);	/* octal */
	EXPECT_EQ(opt_num, 64);
	EXPECT_FALSE(opt_flag);
	EXPECT_EQ(parse("num=+9 flag=1 word=x"), 0);
	EXPECT_EQ(opt_num, 9);
	EXPECT_TRUE(opt_flag);
	EXPECT_STREQ(opt_word, "x");
	EXPECT_EQ(parse("word="), 0);		/* an empty string is a value */
	EXPECT_STREQ(opt_word, "");
}

HOST_TEST(cmdline_bare_keys)
{
	u64 pos = printk_log_pos();

	opts_reset();
	EXPECT_EQ(parse("flag"), 0);
	EXPECT_TRUE(opt_flag);
	EXPECT_EQ(parse("flag=0"), 0);
	EXPECT_FALSE(opt_flag);
	EXPECT_EQ(parse("call"), 0);
	EXPECT_EQ(opt_calls, 1);
	EXPECT_TRUE(opt_call_null);

	/* A number or a string needs a value. */
	opts_reset();
	pos = printk_log_pos();
	EXPECT_EQ(parse("num word"), 2);
	EXPECT_TRUE(opts_are_default());
	EXPECT_TRUE(printk_log_contains(pos, "bad value '' for 'num'"));
	EXPECT_TRUE(printk_log_contains(pos, "bad value '' for 'word' (expected key=value)"));
}

HOST_TEST(cmdline_quoted_values)
{
	opts_reset();
	EXPECT_EQ(parse("word=\"a b\" num=5"), 0);
	EXPECT_STREQ(opt_word, "a b");
	EXPECT_EQ(opt_num, 5);
	EXPECT_EQ(parse("call=\"x y\tz  \" flag=\"on\""), 0);
	EXPECT_STREQ(opt_call_arg, "x y\tz  ");
	EXPECT_TRUE(opt_flag);
	EXPECT_EQ(parse("word=\"\""), 0);
	EXPECT_STREQ(opt_word, "");
	EXPECT_EQ(parse("word=\"k=v\""), 0);
	EXPECT_STREQ(opt_word, "k=v");
	EXPECT_EQ(parse("num=\"12\""), 0);
	EXPECT_EQ(opt_num, 12);
}

HOST_TEST(cmdline_later_overrides)
{
	opts_reset();
	EXPECT_EQ(parse("num=1 num=2 num=3"), 0);
	EXPECT_EQ(opt_num, 3);
	EXPECT_EQ(parse("flag flag=0"), 0);
	EXPECT_FALSE(opt_flag);
	EXPECT_EQ(parse("word=a word=\"b c\" word=d"), 0);
	EXPECT_STREQ(opt_word, "d");
	/* A bad later value leaves the earlier good one. */
	EXPECT_EQ(parse("num=5 num=abc"), 1);
	EXPECT_EQ(opt_num, 5);
}

HOST_TEST(cmdline_unknown_reported_once)
{
	u64 pos = printk_log_pos();

	opts_reset();
	EXPECT_EQ(parse("nosuch=1 nosuch=2 nosuch num=7 other nosuch=\"x y\""), 5);
	EXPECT_EQ(printk_log_count(pos, "unknown option 'nosuch'"), 1);
	EXPECT_EQ(printk_log_count(pos, "unknown option 'other'"), 1);
	EXPECT_EQ(opt_num, 7);	/* good options around bad ones still apply */

	/* Once per parse: the next one says it again. */
	pos = printk_log_pos();
	EXPECT_EQ(parse("nosuch"), 1);
	EXPECT_EQ(printk_log_count(pos, "unknown option 'nosuch'"), 1);

	/* Names are exact: no prefixes, no case folding. */
	pos = printk_log_pos();
	EXPECT_EQ(parse("fla numb=3 FLAG flags"), 4);
	EXPECT_FALSE(opt_flag);
	EXPECT_EQ(opt_num, 7);
}

struct bad_case {
	const char *line;
	const char *log;	/* expected in the log */
};

HOST_TEST(cmdline_malformed_values)
{
	static const struct bad_case cases[] = {
		{ "num=abc", "bad value 'abc' for 'num'" },
		{ "num=101", "bad value '101' for 'num' (expected a number from 1 to 100)" },
		{ "num=0", "bad value '0' for 'num'" },
		{ "num=-1", "bad value '-1' for 'num'" },
		{ "num=", "bad value '' for 'num'" },
		{ "num=5x", "bad value '5x' for 'num'" },
		{ "num=0x", "bad value '0x' for 'num'" },
		{ "big=18446744073709551616", "bad value '18446744073709551616' for 'big'" },
		{ "num=99999999999999999999999", "bad value '99999999999999999999999' for 'num'" },
		{ "flag=maybe", "bad value 'maybe' for 'flag'" },
		{ "flag=", "bad value '' for 'flag'" },
		{ "word=abcdefgh", "bad value 'abcdefgh' for 'word' (longer than 7 characters)" },
		{ "word=\"a b c d e\"", "bad value 'a b c d e' for 'word'" },
		{ "word=\"unterminated", "for 'word' (quote not closed)" },
		{ "num=\"5", "for 'num' (quote not closed)" },
		{ "call=bad", "bad value 'bad' for 'call' (anything but 'bad')" },
		{ "=value", "option without a name ('=value') ignored" },
		{ "=", "option without a name ('=') ignored" },
		{ "=\"a b\"", "option without a name ('=a b') ignored" },
		{ "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl=1",
		  "option name 'abcdefghijklmnop...' too long" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		u64 pos = printk_log_pos();
		int problems;

		opts_reset();
		problems = parse(cases[i].line);
		if (cases[i].line[0] == 'c')
			opt_calls = 0;	/* the call happened; it rejected the value */
		if (problems != 1 || !opts_are_default() ||
		    !printk_log_contains(pos, cases[i].log))
			HOST_FAIL("\"%s\": %d problems (want 1), defaults %s, log %s \"%s\"",
				  cases[i].line, problems,
				  opts_are_default() ? "kept" : "CHANGED",
				  printk_log_contains(pos, cases[i].log) ? "has" : "LACKS",
				  cases[i].log);
	}

	/* All at once, between good ones; each counts. */
	opts_reset();
	EXPECT_EQ(parse("num=abc flag word=toolongvalue num=101 call=bad =x big=3"), 5);
	EXPECT_EQ(opt_num, 42);
	EXPECT_TRUE(opt_flag);
	EXPECT_STREQ(opt_word, "dflt");
	EXPECT_EQ(opt_big, 3);
}

HOST_TEST(cmdline_long_keys_and_values)
{
	char line[CMDLINE_VAL_MAX + 64];
	char key[CMDLINE_KEY_MAX + 8];
	u64 pos;

	/* The longest key that fits is an ordinary (unknown) key. */
	__builtin_memset(key, 'k', CMDLINE_KEY_MAX - 1);
	key[CMDLINE_KEY_MAX - 1] = '\0';
	opts_reset();
	pos = printk_log_pos();
	EXPECT_EQ(parse(key), 1);
	EXPECT_EQ(printk_log_count(pos, "unknown option 'kkkk"), 1);
	EXPECT_FALSE(printk_log_contains(pos, "too long"));

	/* One more character and it is too long. */
	__builtin_memset(key, 'k', CMDLINE_KEY_MAX);
	key[CMDLINE_KEY_MAX] = '\0';
	pos = printk_log_pos();
	EXPECT_EQ(parse(key), 1);
	EXPECT_TRUE(printk_log_contains(pos, "option name 'kkkkkkkkkkkkkkkk...' too long"));

	/* A value that does not fit the parser's buffer. */
	__builtin_strcpy(line, "call=");
	__builtin_memset(line + 5, 'v', CMDLINE_VAL_MAX);
	line[5 + CMDLINE_VAL_MAX] = '\0';
	pos = printk_log_pos();
	EXPECT_EQ(parse(line), 1);
	EXPECT_EQ(opt_calls, 0);
	EXPECT_TRUE(printk_log_contains(pos, "for 'call' (value too long)"));

	/* The longest one that does is passed whole. */
	line[5 + CMDLINE_VAL_MAX - 1] = '\0';
	EXPECT_EQ(parse(line), 0);
	EXPECT_EQ(opt_calls, 1);
	EXPECT_EQ(__builtin_strlen(opt_call_arg), CMDLINE_VAL_MAX - 1);
}

HOST_TEST(cmdline_whitespace)
{
	opts_reset();
	EXPECT_EQ(parse("  \tflag\t\tnum=5 \n word=x\r\n"), 0);
	EXPECT_TRUE(opt_flag);
	EXPECT_EQ(opt_num, 5);
	EXPECT_STREQ(opt_word, "x");
	EXPECT_EQ(parse("num=6\tword=y"), 0);
	EXPECT_EQ(opt_num, 6);
	EXPECT_STREQ(opt_word, "y");
}

HOST_TEST(cmdline_empty)
{
	opts_reset();
	EXPECT_EQ(parse(""), 0);
	EXPECT_EQ(parse("   \t \n"), 0);
	EXPECT_EQ(parse(NULL), 0);
	EXPECT_EQ(cmdline_parse("flag", opts, 0), 1);	/* an empty table */
	EXPECT_EQ(cmdline_parse(NULL, NULL, 0), 0);
	EXPECT_TRUE(opts_are_default());
}

HOST_TEST(cmdline_too_long)
{
	char *line = malloc(3001);
	u64 pos;

	/* Exactly CMDLINE_MAX - 1 characters: all of it counts. */
	__builtin_memset(line, ' ', CMDLINE_MAX - 1);
	__builtin_memcpy(line, "num=5", 5);
	__builtin_memcpy(line + CMDLINE_MAX - 1 - 4, "flag", 4);
	line[CMDLINE_MAX - 1] = '\0';
	opts_reset();
	pos = printk_log_pos();
	EXPECT_EQ(parse(line), 0);
	EXPECT_EQ(opt_num, 5);
	EXPECT_TRUE(opt_flag);
	EXPECT_FALSE(printk_log_contains(pos, "command line longer"));

	/*
	 * Longer: cut after CMDLINE_MAX - 1 characters, as the boot code cuts
	 * it. The word across the cut keeps only its first part, and what
	 * comes after is ignored.
	 */
	__builtin_memset(line, ' ', 3000);
	line[3000] = '\0';
	__builtin_memcpy(line, "num=5", 5);
	__builtin_memcpy(line + CMDLINE_MAX - 1 - 7, "word=xyz", 8);
	__builtin_memcpy(line + 2100, "flag num=9 nosuch", 17);
	opts_reset();
	pos = printk_log_pos();
	EXPECT_EQ(parse(line), 1);
	EXPECT_EQ(opt_num, 5);
	EXPECT_STREQ(opt_word, "xy");
	EXPECT_FALSE(opt_flag);
	EXPECT_TRUE(printk_log_contains(pos, "command line longer than 2047 characters"));
	EXPECT_FALSE(printk_log_contains(pos, "nosuch"));

	/* No terminator before the end of a long run of text: still stops. */
	__builtin_memset(line, 'a', 3000);
	pos = printk_log_pos();
	EXPECT_EQ(parse(line), 2);	/* too long, and a too-long name */
	free(line);
}

/* Random lines: the parser must not crash, and what it sets stays valid. */
HOST_TEST(cmdline_fuzz)
{
	static const char *const pieces[] = {
		"flag", "num", "big", "word", "call", "nosuch", "=", "=", "\"", " ",
		" ", "\t", "0x", "1", "42", "101", "yes", "off", "bad", "-", "abc",
		"18446744073709551616",
	};
	char *line = malloc(CMDLINE_MAX + 200);

	rng_state = 0x243f6a8885a308d3ULL;
	for (int iter = 0; iter < 20000; iter++) {
		size_t max = rng_below(20) ? 120 : CMDLINE_MAX + 100;
		size_t len = 0, target = rng_below((unsigned int)max);
		int p1, p2;
		bool flag;
		unsigned long num, big;
		char word[sizeof(opt_word)];

		while (len < target) {
			if (rng_below(3)) {
				const char *p = pieces[rng_below(ARRAY_SIZE(pieces))];
				size_t n = __builtin_strlen(p);

				if (len + n > target)
					break;
				__builtin_memcpy(line + len, p, n);
				len += n;
			} else {
				line[len++] = (char)(0x20 + rng_below(0x5f));	/* printable */
			}
		}
		line[len] = '\0';

		opts_reset();
		p1 = parse(line);
		EXPECT_GE(p1, 0);
		EXPECT_TRUE(strnlen(opt_word, sizeof(opt_word)) < sizeof(opt_word));
		EXPECT_TRUE(opt_num >= 1 && opt_num <= 100);
		flag = opt_flag;
		num = opt_num;
		big = opt_big;
		__builtin_memcpy(word, opt_word, sizeof(word));

		/* The same line again gives the same result. */
		opts_reset();
		p2 = parse(line);
		if (p1 != p2 || flag != opt_flag || num != opt_num || big != opt_big ||
		    __builtin_memcmp(word, opt_word, sizeof(word)))
			HOST_FAIL("parsing \"%s\" twice gave different results", line);
	}
	free(line);
}

/* ---- printk's log buffer ---- */

HOST_TEST(printk_log_buffer)
{
	unsigned long saved = console_loglevel;
	u64 pos = printk_log_pos();

	EXPECT_EQ(pr_info("host marker %d\n", 4711), 17);
	EXPECT_EQ(printk_log_pos() - pos, 17);
	EXPECT_TRUE(printk_log_contains(pos, "host marker 4711\n"));
	EXPECT_FALSE(printk_log_contains(pos, "marker 4712"));
	EXPECT_FALSE(printk_log_contains(pos, KERN_SOH));	/* level stripped */
	EXPECT_EQ(printk_log_count(pos, "marker"), 1);
	EXPECT_EQ(printk_log_count(pos, ""), 0);
	EXPECT_EQ(printk_log_count(printk_log_pos(), "marker"), 0);
	EXPECT_EQ(printk_log_count(printk_log_pos() + 100, "marker"), 0);

	/* Messages the console does not show are logged all the same. */
	console_loglevel = 0;
	pos = printk_log_pos();
	pr_debug("quiet ");
	pr_cont("continued\n");
	printk("no level\n");
	console_loglevel = saved;
	EXPECT_TRUE(printk_log_contains(pos, "quiet continued\nno level\n"));

	/* A message longer than printk's line buffer is cut to 1023 bytes. */
	{
		char *big = malloc(2001);

		__builtin_memset(big, 'm', 2000);
		big[2000] = '\0';
		pos = printk_log_pos();
		EXPECT_EQ(pr_info("%s", big), 1023);
		EXPECT_EQ(printk_log_pos() - pos, 1023);
		free(big);
	}
}

/* Log exactly n bytes. */
static void log_fill(u64 n, char c)
{
	char chunk[512];

	__builtin_memset(chunk, c, sizeof(chunk));
	while (n) {
		int k = n < sizeof(chunk) ? (int)n : (int)sizeof(chunk);

		pr_info("%.*s", k, chunk);
		n -= (u64)k;
	}
}

HOST_TEST(printk_log_wraps)
{
	const u64 size = 64 * 1024;	/* LOG_BUF_SIZE */
	u64 pos = printk_log_pos(), start, n;

	pr_info("first-marker");
	log_fill(size, '.');
	pr_info("last-marker");
	EXPECT_EQ(printk_log_count(pos, "first-marker"), 0);	/* overwritten */
	EXPECT_EQ(printk_log_count(0, "last-marker"), 1);
	EXPECT_EQ(printk_log_count(pos, "last-marker"), 1);

	/* A message across the wrap point of the ring is still found. */
	n = (2 * size - printk_log_pos() % size - 4) % size;
	log_fill(n < 2 ? n + size : n, ':');
	start = printk_log_pos();
	pr_info("WRAPNEEDLE");
	EXPECT_EQ(start % size, size - 4);
	EXPECT_EQ(printk_log_count(start, "WRAPNEEDLE"), 1);
	EXPECT_EQ(printk_log_count(start + 1, "WRAPNEEDLE"), 0);
	EXPECT_EQ(printk_log_count(pos, "::WRAPNEEDLE"), 1);
}

HOST_TEST_MAIN(host_lib,
	HOST_CASE(fmt_conversions),
	HOST_CASE(fmt_flags_width_precision),
	HOST_CASE(fmt_length_modifiers),
	HOST_CASE(fmt_kernel_specific),
	HOST_CASE(fmt_truncation),
	HOST_CASE(mem_copy_set),
	HOST_CASE(memmove_overlap),
	HOST_CASE(memcmp_sign),
	HOST_CASE(strcmp_strncmp),
	HOST_CASE(strlen_strnlen),
	HOST_CASE(strchr_strrchr),
	HOST_CASE(strstr_cases),
	HOST_CASE(strscpy_cases),
	HOST_CASE(kstrtoull_cases),
	HOST_CASE(kstrtoll_cases),
	HOST_CASE(kstrtobool_cases),
	HOST_CASE(kstrto_fuzz),
	HOST_CASE(cmdline_good_values),
	HOST_CASE(cmdline_bare_keys),
	HOST_CASE(cmdline_quoted_values),
	HOST_CASE(cmdline_later_overrides),
	HOST_CASE(cmdline_unknown_reported_once),
	HOST_CASE(cmdline_malformed_values),
	HOST_CASE(cmdline_long_keys_and_values),
	HOST_CASE(cmdline_whitespace),
	HOST_CASE(cmdline_empty),
	HOST_CASE(cmdline_too_long),
	HOST_CASE(cmdline_fuzz),
	HOST_CASE(printk_log_buffer),
	HOST_CASE(printk_log_wraps));
