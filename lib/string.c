/*
 * String and memory functions for the kernel. Plain C: the compiler turns
 * struct copies into calls to memcpy/memset, so these must exist. The bulk
 * copy with machine-check recovery is copy_mc (arch/x86_64/lib/copy_mc.S).
 */
#include <quire/string.h>
#include <quire/errno.h>

void *memcpy(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	while (n--)
		*d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (d == s || n == 0)
		return dst;
	if (d < s) {
		while (n--)
			*d++ = *s++;
	} else {
		d += n;
		s += n;
		while (n--)
			*--d = *--s;
	}
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;

	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;

	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x < *y ? -1 : 1;
	return 0;
}

size_t strlen(const char *s)
{
	const char *p = s;

	while (*p)
		p++;
	return (size_t)(p - s);
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	return strncmp(a, b, (size_t)-1);
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		unsigned char x = (unsigned char)*a, y = (unsigned char)*b;

		if (x != y)
			return x < y ? -1 : 1;
		if (!x)
			break;
	}
	return 0;
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

void *memchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;

	for (size_t i = 0; i < n; i++)
		if (p[i] == (unsigned char)c)
			return (void *)(p + i);
	return NULL;
}

char *strrchr(const char *s, int c)
{
	const char *last = NULL;

	for (;; s++) {
		if (*s == (char)c)
			last = s;
		if (!*s)
			return (char *)last;
	}
}

char *strstr(const char *haystack, const char *needle)
{
	size_t n = strlen(needle);

	for (; *haystack; haystack++)
		if (!strncmp(haystack, needle, n))
			return (char *)haystack;
	return n ? NULL : (char *)haystack;
}

long strscpy(char *dst, const char *src, size_t size)
{
	size_t i;

	if (size == 0)
		return -E2BIG;
	for (i = 0; i < size - 1 && src[i]; i++)
		dst[i] = src[i];
	dst[i] = '\0';
	return src[i] ? -E2BIG : (long)i;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'Z')
		return c - 'A' + 10;
	return 99;
}

int kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
	unsigned long long v = 0;
	int any = 0;

	if (*s == '+')
		s++;
	if (base == 0 || base == 16) {
		if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
		    digit_value(s[2]) < 16) {
			s += 2;
			base = 16;
		}
	}
	if (base == 0)
		base = (s[0] == '0' && s[1]) ? 8 : 10;
	if (base < 2 || base > 36)
		return -EINVAL;
	for (; *s; s++) {
		unsigned int d = (unsigned int)digit_value(*s);

		if (d >= base)
			return -EINVAL;
		if (v > (~0ULL - d) / base)
			return -ERANGE;
		v = v * base + d;
		any = 1;
	}
	if (!any)
		return -EINVAL;
	*res = v;
	return 0;
}

int kstrtoll(const char *s, unsigned int base, long long *res)
{
	unsigned long long v;
	int neg = (*s == '-');
	int err;

	if (neg && s[1] == '+')
		return -EINVAL;
	err = kstrtoull(s + neg, base, &v);
	if (err)
		return err;
	if (neg) {
		if (v > (unsigned long long)INT64_MAX + 1)
			return -ERANGE;
		*res = (long long)(0 - v);
	} else {
		if (v > INT64_MAX)
			return -ERANGE;
		*res = (long long)v;
	}
	return 0;
}

int kstrtobool(const char *s, bool *res)
{
	static const char *const yes[] = { "1", "y", "yes", "on", "true" };
	static const char *const no[] = { "0", "n", "no", "off", "false" };
	size_t i;

	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i])) {
			*res = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*res = false;
			return 0;
		}
	}
	return -EINVAL;
}
