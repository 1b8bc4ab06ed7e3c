/*
 * The machine-check-safe copies of include/quire/copy_mc.h on the host:
 * no machine checks here, so the copy checks the test hook's poisoned
 * range itself and stops where x86's rep movsq / rep movsb would stop on a
 * machine check (before the 8-byte word, or the byte, that reads poison),
 * returning the same count of bytes not copied.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <quire/copy_mc.h>
#include <quire/mm.h>
#include <quire/string.h>
#include <asm/host_mm.h>

static unsigned long poison_start, poison_end;

int copy_mc_test_poison_page(struct page *page)
{
	poison_start = (unsigned long)page_address(page);
	poison_end = poison_start + PAGE_SIZE;
	return 0;
}

void copy_mc_test_unpoison(void)
{
	poison_start = poison_end = 0;
}

bool copy_mc_test_poisoned(unsigned long addr)
{
	return addr >= poison_start && addr < poison_end;
}

/* Does [addr, addr + len) read a poisoned byte? */
static bool reads_poison(unsigned long addr, size_t len)
{
	return addr < poison_end && addr + len > poison_start;
}

/* Copy in units of `unit` bytes while no unit reads poison; bytes not copied. */
static size_t copy_units(unsigned char **dst, const unsigned char **src, size_t len, size_t unit)
{
	while (len >= unit) {
		if (reads_poison((unsigned long)*src, unit))
			return len;
		for (size_t i = 0; i < unit; i++)
			(*dst)[i] = (*src)[i];
		*dst += unit;
		*src += unit;
		len -= unit;
	}
	return len;
}

/*
 * The C library's memcpy: lib/string.c's byte loop takes the name memcpy
 * in these programs, so the library's comes by dlsym (that loop when it
 * cannot be found).
 */
void *host_memcpy(void *dst, const void *src, size_t len)
{
	static void *(*libc_memcpy)(void *, const void *, size_t);

	if (!__atomic_load_n(&libc_memcpy, __ATOMIC_RELAXED)) {
		void *(*f)(void *, const void *, size_t) = dlsym(RTLD_NEXT, "memcpy");

		__atomic_store_n(&libc_memcpy, f ? f : memcpy, __ATOMIC_RELAXED);
	}
	return __atomic_load_n(&libc_memcpy, __ATOMIC_RELAXED)(dst, src, len);
}

/*
 * A copy that reads no poison is the host's memcpy (the bandwidth the
 * benchmark compares with); only one that does is copied unit by unit, to
 * stop where x86 would.
 */
unsigned long __copy_mc_movsq(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	size_t tail = len & 7, body_left;

	if (!reads_poison((unsigned long)src, len)) {
		host_memcpy(dst, src, len);
		return 0;
	}
	body_left = copy_units(&d, &s, len - tail, 8);

	if (body_left)
		return body_left + tail;
	return copy_units(&d, &s, tail, 1);
}

unsigned long __copy_mc_movsb(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	if (!reads_poison((unsigned long)src, len)) {
		host_memcpy(dst, src, len);
		return 0;
	}

	return copy_units(&d, &s, len, 1);
}
