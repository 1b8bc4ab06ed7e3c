/*
 * The machine-check-safe copies on the host (arch/host/copy_mc.c): the
 * same checks as the kernel's copy_mc suite (tests/lib/copy_mc_check.h),
 * every offset and length, and a poisoned page met at every distance;
 * copy_mc_highpages and folio_mc_copy report -EHWPOISON and queue the
 * frame; batching makes one copy per folio.
 */
#include "ktap.h"
#include "host_setup.h"
#include <quire/copy_mc.h>
#include <quire/memory-failure.h>
#include <quire/mm.h>
#include <quire/errno.h>
#include <quire/string.h>
#include "../lib/copy_mc_check.h"

extern atomic_long_t copy_mc_calls;

static const struct { copy_mc_fn fn; bool movsq; } bodies[] = {
	{ __copy_mc_movsq, true },
	{ __copy_mc_movsb, false },
};

static struct page *src, *dst;

static void setup(void)
{
	if (host_setup(32, 0, 0)) {
		src = alloc_pages(0, 2);
		dst = alloc_pages(0, 2);
		if (!src || !dst)
			abort();
	}
	copy_mc_fill(page_address(src), 4 * PAGE_SIZE);
}

HOST_TEST(copies_every_offset_and_length)
{
	int bad = 0;

	setup();
	for (unsigned int b = 0; b < 2; b++)
		for (unsigned long s = 0; s < 10; s++)
			for (unsigned int l = 0; l < ARRAY_SIZE(copy_mc_lens); l++)
				bad += copy_mc_check(bodies[b].fn, bodies[b].movsq, page_address(dst),
						     (unsigned char *)page_address(src) + s,
						     copy_mc_lens[l], 0) != 0;
	EXPECT_EQ(bad, 0);
}

HOST_TEST(poison_stops_the_copy_at_every_distance)
{
	unsigned long poison;
	int bad = 0, cases = 0;

	setup();
	poison = (unsigned long)page_address(src + 2);
	EXPECT_EQ(copy_mc_test_poison_page(src + 2), 0);
	for (unsigned int b = 0; b < 2; b++)
		for (unsigned int i = 0; i < ARRAY_SIZE(copy_mc_dists); i++)
			for (unsigned int e = 0; e < ARRAY_SIZE(copy_mc_extra); e++) {
				unsigned long dist = copy_mc_dists[i];
				int r = copy_mc_check(bodies[b].fn, bodies[b].movsq, page_address(dst),
						      (const unsigned char *)(poison - dist),
						      dist + copy_mc_extra[e], poison);

				if (r && bad++ < 5)
					printf("    # %s: %lu bytes before the poison, len %lu: check %d\n",
					       b ? "movsb" : "movsq", dist, dist + copy_mc_extra[e], r);
				cases++;
			}
	copy_mc_test_unpoison();
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(cases, 2 * 22 * 7);
}

HOST_TEST(folio_mc_copy_reports_and_queues)
{
	unsigned long pfn;
	bool saved = copy_mc_batching;

	setup();
	pfn = page_to_pfn(src + 3);
	EXPECT_EQ(copy_mc_test_poison_page(src + 3), 0);
	for (int batch = 1; batch >= 0; batch--) {
		unsigned long queued = memory_failure_queued(pfn);
		long calls = atomic_long_read(&copy_mc_calls);

		copy_mc_batching = batch;
		memset(page_address(dst), 0, 4 * PAGE_SIZE);
		EXPECT_EQ(folio_mc_copy(page_folio(dst), page_folio(src)), -EHWPOISON);
		EXPECT_EQ(memory_failure_queued(pfn), queued + 1);
		EXPECT_EQ(atomic_long_read(&copy_mc_calls) - calls, batch ? 1 : 4);
		EXPECT_EQ(memcmp(page_address(dst), page_address(src), 3 * PAGE_SIZE), 0);
	}
	copy_mc_test_unpoison();
	copy_mc_batching = saved;
	EXPECT_EQ(folio_mc_copy(page_folio(dst), page_folio(src)), 0);
	EXPECT_EQ(memcmp(page_address(dst), page_address(src), 4 * PAGE_SIZE), 0);
}

HOST_TEST_MAIN(host_copy_mc,
	       HOST_CASE(copies_every_offset_and_length),
	       HOST_CASE(poison_stops_the_copy_at_every_distance),
	       HOST_CASE(folio_mc_copy_reports_and_queues));
