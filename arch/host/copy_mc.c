/*
 * The machine-check-safe copies of include/quire/copy_mc.h on the host:
 * no machine checks here, so the copy checks the test hook's poisoned
 * range itself and stops where x86's rep movsq / rep movsb would stop on a
 * machine check (before the 8-byte word, or the byte, that reads poison),
 * returning the same count of bytes not copied.
 */
#include <quire/copy_mc.h>
#include <quire/mm.h>

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

unsigned long __copy_mc_movsq(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;
	size_t tail = len & 7, body_left = copy_units(&d, &s, len - tail, 8);

	if (body_left)
		return body_left + tail;
	return copy_units(&d, &s, tail, 1);
}

unsigned long __copy_mc_movsb(void *dst, const void *src, size_t len)
{
	unsigned char *d = dst;
	const unsigned char *s = src;

	return copy_units(&d, &s, len, 1);
}
