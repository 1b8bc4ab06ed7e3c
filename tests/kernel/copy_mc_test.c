/*
 * Machine-check-safe copies (include/quire/copy_mc.h): every offset and
 * length, and a poisoned source page met at every distance and alignment,
 * through the direct-map test hook (the page fault there is handled as a
 * machine check: same fixup, same return value); copy_mc_highpages and
 * folio_mc_copy return -EHWPOISON and queue the right frame; batching
 * makes one copy per folio; copy_mc_to_user stops at a bad user pointer.
 */
#include <quire/ktest.h>
#include <quire/copy_mc.h>
#include <quire/memory-failure.h>
#include <quire/mm.h>
#include <quire/errno.h>
#include <quire/string.h>
#include "../lib/copy_mc_check.h"

static const struct { copy_mc_fn fn; bool movsq; const char *name; } bodies[] = {
	{ __copy_mc_movsq, true, "movsq" },
	{ __copy_mc_movsb, false, "movsb" },
};

extern atomic_long_t copy_mc_calls;

/* Four pages of source, filled, and four of destination. */
static bool get_pages(struct ktest *t, struct page **src, struct page **dst)
{
	*src = alloc_pages(0, 2);
	*dst = alloc_pages(0, 2);
	KEXPECT_TRUE(t, *src && *dst);
	if (!*src || !*dst)
		return false;
	copy_mc_fill(page_address(*src), 4 * PAGE_SIZE);
	return true;
}

static void put_pages(struct page *src, struct page *dst)
{
	if (src)
		__free_pages(src, 2);
	if (dst)
		__free_pages(dst, 2);
}

static void copies_every_offset_and_length(struct ktest *t)
{
	struct page *src, *dst;
	int bad = 0, cases = 0;

	if (!get_pages(t, &src, &dst))
		goto out;
	for (unsigned int b = 0; b < ARRAY_SIZE(bodies); b++)
		for (unsigned long s = 0; s < 10; s++)
			for (unsigned long d = 0; d < 10; d += 5)
				for (unsigned int l = 0; l < ARRAY_SIZE(copy_mc_lens); l++) {
					unsigned char *from = (unsigned char *)page_address(src) + s;
					unsigned char *to = (unsigned char *)page_address(dst) + d;
					int r = copy_mc_check(bodies[b].fn, bodies[b].movsq, to, from,
							      copy_mc_lens[l], 0);

					cases++;
					if (r && bad++ < 5)
						ktest_fail_msg(t, false, __FILE__, __LINE__, "%s src+%lu dst+%lu len %lu: check %d failed",
							  bodies[b].name, s, d, copy_mc_lens[l], r);
				}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, cases, 2 * 10 * 2 * 15);
out:
	put_pages(src, dst);
}

static void poison_stops_the_copy_at_every_distance(struct ktest *t)
{
	struct page *src, *dst;
	unsigned long poison;
	int bad = 0, cases = 0;

	if (!get_pages(t, &src, &dst))
		goto out;
	poison = (unsigned long)page_address(src + 2);
	KASSERT_EQ(t, copy_mc_test_poison_page(src + 2), 0);
	for (unsigned int b = 0; b < ARRAY_SIZE(bodies); b++)
		for (unsigned int i = 0; i < ARRAY_SIZE(copy_mc_dists); i++)
			for (unsigned int e = 0; e < ARRAY_SIZE(copy_mc_extra); e++) {
				unsigned long dist = copy_mc_dists[i], len = dist + copy_mc_extra[e];
				int r = copy_mc_check(bodies[b].fn, bodies[b].movsq,
						      page_address(dst),
						      (const unsigned char *)(poison - dist), len, poison);

				cases++;
				if (r && bad++ < 5)
					ktest_fail_msg(t, false, __FILE__, __LINE__, "%s %lu bytes before the poison, len %lu: check %d failed",
						  bodies[b].name, dist, len, r);
			}
	copy_mc_test_unpoison();
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, cases, 2 * 22 * 7);
	/* The page reads again once the hook lets go. */
	KEXPECT_EQ(t, *(volatile unsigned char *)poison, ((unsigned char *)page_address(src))[2 * PAGE_SIZE]);
out:
	put_pages(src, dst);
}

static void highpages_report_and_queue_the_poisoned_page(struct ktest *t)
{
	struct page *src, *dst;
	unsigned long pfn, queued;

	if (!get_pages(t, &src, &dst))
		goto out;
	pfn = page_to_pfn(src + 1);
	queued = memory_failure_queued(pfn);
	KASSERT_EQ(t, copy_mc_test_poison_page(src + 1), 0);
	KEXPECT_EQ(t, copy_mc_highpages(dst, src, 4), -EHWPOISON);
	KEXPECT_EQ(t, memory_failure_queued(pfn), queued + 1);
	copy_mc_test_unpoison();
	KEXPECT_EQ(t, memcmp(page_address(dst), page_address(src), PAGE_SIZE), 0);
	KEXPECT_EQ(t, copy_mc_highpages(dst, src, 4), 0);
	KEXPECT_EQ(t, memcmp(page_address(dst), page_address(src), 4 * PAGE_SIZE), 0);
	KEXPECT_EQ(t, memory_failure_queued(pfn), queued + 1);
out:
	put_pages(src, dst);
}

/* One copy per folio with batching, one per page without; the same bytes. */
static void folio_mc_copy_batches_by_folio(struct ktest *t)
{
	static const unsigned int orders[] = { 0, 2, 4, 9 };
	bool saved = copy_mc_batching;

	for (unsigned int i = 0; i < ARRAY_SIZE(orders); i++) {
		struct page *s = alloc_pages(0, orders[i]), *d = alloc_pages(0, orders[i]);
		unsigned long nr = 1UL << orders[i];

		KEXPECT_TRUE(t, s && d);
		if (s && d) {
			copy_mc_fill(page_address(s), nr * PAGE_SIZE);
			for (int batch = 1; batch >= 0; batch--) {
				long before = atomic_long_read(&copy_mc_calls);

				copy_mc_batching = batch;
				memset(page_address(d), 0, nr * PAGE_SIZE);
				KEXPECT_EQ(t, folio_mc_copy(page_folio(d), page_folio(s)), 0);
				KEXPECT_EQ(t, atomic_long_read(&copy_mc_calls) - before,
					   batch ? 1 : (long)nr);
				KEXPECT_EQ(t, memcmp(page_address(d), page_address(s), nr * PAGE_SIZE), 0);
			}
		}
		if (s)
			__free_pages(s, orders[i]);
		if (d)
			__free_pages(d, orders[i]);
	}
	copy_mc_batching = saved;
}

/* Per page, the copy stops at the poisoned page: the pages before it are copied. */
static void folio_mc_copy_stops_at_the_poisoned_page(struct ktest *t)
{
	struct page *src, *dst;
	bool saved = copy_mc_batching;

	if (!get_pages(t, &src, &dst))
		goto out;
	KASSERT_EQ(t, copy_mc_test_poison_page(src + 3), 0);
	for (int batch = 1; batch >= 0; batch--) {
		unsigned long before = memory_failure_queued(page_to_pfn(src + 3));

		copy_mc_batching = batch;
		memset(page_address(dst), 0, 4 * PAGE_SIZE);
		KEXPECT_EQ(t, folio_mc_copy(page_folio(dst), page_folio(src)), -EHWPOISON);
		KEXPECT_EQ(t, memory_failure_queued(page_to_pfn(src + 3)), before + 1);
		KEXPECT_EQ(t, memcmp(page_address(dst), page_address(src), 3 * PAGE_SIZE), 0);
	}
	copy_mc_test_unpoison();
	copy_mc_batching = saved;
out:
	put_pages(src, dst);
}

static void copy_mc_to_user_stops_at_a_bad_pointer(struct ktest *t)
{
	char buf[16] = "machine check";

	/* A kernel address is refused; an unmapped user page ends the copy. */
	KEXPECT_EQ(t, copy_mc_to_user(buf, buf, sizeof(buf)), sizeof(buf));
	KEXPECT_EQ(t, copy_mc_to_user((void *)0x1000, buf, sizeof(buf)), sizeof(buf));
}

KTEST_SUITE(copy_mc,
	    KTEST_CASE(copies_every_offset_and_length),
	    KTEST_CASE(poison_stops_the_copy_at_every_distance),
	    KTEST_CASE(highpages_report_and_queue_the_poisoned_page),
	    KTEST_CASE(folio_mc_copy_batches_by_folio),
	    KTEST_CASE(folio_mc_copy_stops_at_the_poisoned_page),
	    KTEST_CASE(copy_mc_to_user_stops_at_a_bad_pointer));
