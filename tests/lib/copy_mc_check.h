/*
 * What a machine-check-safe copy must do, checked the same way by the
 * kernel's copy_mc suite (tests/kernel/copy_mc_test.c, real copies and the
 * direct-map test hook) and the host's test_copy_mc (arch/host's C copy).
 */
#ifndef QUIRE_TESTS_COPY_MC_CHECK_H
#define QUIRE_TESTS_COPY_MC_CHECK_H

typedef unsigned long (*copy_mc_fn)(void *dst, const void *src, size_t len);

/* Distances from the copy's start to the poisoned page, and extra lengths. */
static const unsigned long copy_mc_dists[] = {
	1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 31, 32, 33, 4095, 4096,
};
static const unsigned long copy_mc_extra[] = { 0, 1, 7, 8, 9, 100, 4096 };
static const unsigned long copy_mc_lens[] = {
	0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 4095, 4096, 4097, 8191,
};

/*
 * Bytes a copy of len bytes from src leaves uncopied when poison starts at
 * `poison` (0: nowhere): rep movsq stops before the first 8-byte word that
 * reads poison, rep movsb (and movsq's tail) before the first byte.
 */
static inline unsigned long copy_mc_expected_left(unsigned long src, unsigned long len,
						  unsigned long poison, bool movsq)
{
	unsigned long clean = poison - src;

	if (!poison || poison < src || clean >= len)
		return 0;
	if (movsq && clean < (len & ~7UL))
		return len - (clean & ~7UL);
	return len - clean;
}

/*
 * Copy len bytes with fn into dst (8 guard bytes after it) and check: the
 * bytes not copied as expected, the copied ones equal, the rest untouched.
 * 0 when all holds, else 1 (count), 2 (data) or 3 (wrote too far).
 */
static inline int copy_mc_check(copy_mc_fn fn, bool movsq, unsigned char *dst,
				const unsigned char *src, unsigned long len, unsigned long poison)
{
	unsigned long want = copy_mc_expected_left((unsigned long)src, len, poison, movsq);
	unsigned long left, i;

	for (i = 0; i < len + 8; i++)
		dst[i] = 0xee;
	left = fn(dst, src, len);
	if (left != want)
		return 1;
	for (i = 0; i < len - left; i++)
		if (dst[i] != src[i])
			return 2;
	for (; i < len + 8; i++)
		if (dst[i] != 0xee)
			return 3;
	return 0;
}

/* Fill n bytes with a pattern that differs from the guard byte. */
static inline void copy_mc_fill(unsigned char *p, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + 1) == 0xee ? 0x11 : (unsigned char)(i * 7 + 1);
}

#endif
