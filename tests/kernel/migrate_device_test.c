/*
 * The migrate_device suite: migrate_vma (mm/migrate_device.c) with a small
 * device of the test's own (4 MiB of the memory kept at boot, "devmem="),
 * and the reference series 3's bug:
 *   1. a round trip: pages to the device (device-private entries, the
 *      contents in device memory), a CPU read brings one back through
 *      migrate_to_ram, the process's exit frees the device pages;
 *   2. a PMD-mapped THP is split under collection (the device works in
 *      base pages);
 *   3. npages smaller than the folio: 4 pages of a 64 KiB folio, and not
 *      a word more;
 *   4. the PMD under the walk becomes a THP leaf, or empty, while the PTE
 *      lock is dropped to split a folio: what was collected is rolled back
 *      and collection starts again (with collect-time unmap on and off);
 *   5. PTEs that change while the lock is dropped (the PMD stays): no
 *      restart, the changed ones read again;
 *   6. a pinned page is refused and left mapped.
 * After each, mm_verify: every PTE, mapcount and reference as it should be.
 */
#include <quire/ktest.h>
#include <quire/memremap.h>
#include <quire/migrate.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/gup.h>
#include <quire/huge_mm.h>
#include <quire/copy_mc.h>
#include <quire/swapops.h>
#include <quire/spinlock.h>
#include <quire/string.h>
#include <quire/errno.h>
#include "thp_test.h"
#include "test_device.h"

#define DEV_PAGES	1024			/* 4 MiB of device memory */
#define MAX_WORDS	(HPAGE_PMD_NR + 32)	/* the longest range a case migrates */

static struct test_device dev;
static unsigned long src[MAX_WORDS], dst[MAX_WORDS];

static bool device_up(struct ktest *t)
{
	if (test_device_up(&dev, DEV_PAGES))
		return true;
	ktest_skip(t, "no device memory kept at boot (devmem=)");
	return false;
}

struct to_device {
	unsigned long start, npages;
	bool write_lock;	/* hold mmap_lock for writing (the hook may collapse) */
	unsigned long cpages, got;	/* out: collected, and words migrate_vma filled */
	unsigned long migration_entries;	/* out: entries at the range after setup */
};

/* Migrate [start, start + npages pages) of mm to the device; 0 or the setup's error. */
static int to_device(struct mm_struct *mm, struct to_device *td)
{
	struct migrate_vma m = {
		.start = td->start, .end = td->start + (td->npages << PAGE_SHIFT),
		.src = src, .dst = dst, .pgmap_owner = &dev,
		.flags = MIGRATE_VMA_SELECT_SYSTEM,
	};
	int err;

	/* Guard words past the range: the collection must never touch them. */
	for (unsigned long i = td->npages; i < MAX_WORDS; i++)
		src[i] = dst[i] = 0xbad;
	if (td->write_lock)
		down_write(&mm->mmap_lock);
	else
		down_read(&mm->mmap_lock);
	m.vma = find_vma(mm, td->start);
	err = migrate_vma_setup(&m);
	if (!err) {
		td->cpages = m.cpages;
		td->got = m.npages;
		td->migration_entries = 0;
		for (unsigned long i = 0; i < m.npages; i++)
			td->migration_entries +=
				is_migration_pte(thpt_entry_of(mm, td->start + (i << PAGE_SHIFT)));
		for (unsigned long i = 0; i < m.npages; i++) {
			struct page *dpage;

			if (!(src[i] & MIGRATE_PFN_MIGRATE))
				continue;
			dpage = test_device_alloc(&dev);
			if (dpage)
				test_device_fill(dpage, src[i], &dst[i]);
		}
		migrate_vma_pages(&m);
		migrate_vma_finalize(&m);
	}
	if (td->write_lock)
		up_write(&mm->mmap_lock);
	else
		up_read(&mm->mmap_lock);
	return err;
}

static bool guards_intact(unsigned long from)
{
	for (unsigned long i = from; i < MAX_WORDS; i++)
		if (src[i] != 0xbad || dst[i] != 0xbad)
			return false;
	return true;
}

static bool on_device(struct mm_struct *mm, unsigned long addr)
{
	pte_t e = thpt_entry_of(mm, addr);

	return is_device_private_pte(e) &&
	       is_device_private_page(pfn_to_page(swp_offset_pfn(pte_to_swp_entry(e))));
}

static unsigned long count_on_device(struct mm_struct *mm, unsigned long addr, unsigned long n)
{
	unsigned long c = 0;

	for (unsigned long i = 0; i < n; i++)
		c += on_device(mm, addr + (i << PAGE_SHIFT));
	return c;
}

/* The pattern byte of the page at addr wherever it lives (RAM or device). */
static unsigned long device_mismatches(struct mm_struct *mm, unsigned long addr, unsigned long n,
				       u8 salt)
{
	unsigned long bad = 0;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long a = addr + (i << PAGE_SHIFT);
		pte_t e = thpt_entry_of(mm, a);
		u8 *p;

		if (!is_device_private_pte(e)) {
			bad += thpt_pattern_mismatches(mm, a, PAGE_SIZE, salt);
			continue;
		}
		p = page_address(pfn_to_page(swp_offset_pfn(pte_to_swp_entry(e))));
		bad += p[0x10] != pattern(a, salt);
	}
	return bad;
}

/* Read-fault every page back from the device. */
static unsigned long fault_back(struct mm_struct *mm, unsigned long addr, unsigned long n)
{
	unsigned long failed = 0;

	for (unsigned long i = 0; i < n; i++)
		failed += fault(mm, addr + (i << PAGE_SHIFT), false) != 0;
	return failed;
}

static void round_trip(struct ktest *t)
{
	struct to_device td = { .start = AREA, .npages = 16 };
	unsigned long free_before = dev.nr_free;
	struct thp_ctx c;
	struct mm_struct *mm;

	thpt_begin(t, &c);
	CHECK(t, device_up(t));
	free_before = dev.nr_free;
	thp_set_global_mode(THP_NEVER);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, 16 * PAGE_SIZE), AREA);
	CHECK_EQ(t, thpt_fault_range(mm, AREA, 12 * PAGE_SIZE), 0);	/* pages 12-15 stay empty */
	thpt_write_pattern(mm, AREA, 12 * PAGE_SIZE, 3);
	CHECK_EQ(t, to_device(mm, &td), 0);
	KEXPECT_EQ(t, td.got, 16);
	KEXPECT_EQ(t, td.cpages, 16);		/* the empty slots too */
	KEXPECT_EQ(t, td.migration_entries, 12);	/* collect-time unmap */
	KEXPECT_TRUE(t, guards_intact(16));
	KEXPECT_EQ(t, count_on_device(mm, AREA, 16), 16);
	KEXPECT_EQ(t, dev.nr_free, free_before - 16);
	KEXPECT_EQ(t, device_mismatches(mm, AREA, 12, 3), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* A CPU read of page 5: migrate_to_ram brings that page back, only it. */
	KEXPECT_EQ(t, fault(mm, AREA + 5 * PAGE_SIZE, false), 0);
	KEXPECT_FALSE(t, on_device(mm, AREA + 5 * PAGE_SIZE));
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, AREA + 5 * PAGE_SIZE, PAGE_SIZE, 3), 0);
	KEXPECT_EQ(t, count_on_device(mm, AREA, 16), 15);
	KEXPECT_EQ(t, dev.nr_free, free_before - 15);
	/* A write to page 13 (an empty slot that went to the device): back, zeroed. */
	KEXPECT_EQ(t, fault(mm, AREA + 13 * PAGE_SIZE, true), 0);
	KEXPECT_EQ(t, *thpt_byte_of(mm, AREA + 13 * PAGE_SIZE), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The process goes: every device page comes back to the device. */
	thpt_drop_mm(&c, mm);
	KEXPECT_EQ(t, dev.nr_free, free_before);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

static void thp_split_under_collection(struct ktest *t)
{
	struct to_device td = { .start = AREA, .npages = HPAGE_PMD_NR };
	struct thp_ctx c;
	struct mm_struct *mm;

	thpt_begin(t, &c);
	CHECK(t, device_up(t));
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_MAP_PMD(t, mm, AREA);
	thpt_write_pattern(mm, AREA, SZ_2M, 5);
	CHECK_EQ(t, to_device(mm, &td), 0);
	KEXPECT_EQ(t, td.got, HPAGE_PMD_NR);
	KEXPECT_EQ(t, td.cpages, HPAGE_PMD_NR);
	KEXPECT_TRUE(t, guards_intact(HPAGE_PMD_NR));
	KEXPECT_TRUE(t, thpt_huge_pmd(mm, AREA) == NULL);
	KEXPECT_EQ(t, count_on_device(mm, AREA, HPAGE_PMD_NR), HPAGE_PMD_NR);
	KEXPECT_EQ(t, device_mismatches(mm, AREA, HPAGE_PMD_NR, 5), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	KEXPECT_EQ(t, fault_back(mm, AREA, HPAGE_PMD_NR), 0);
	KEXPECT_EQ(t, count_on_device(mm, AREA, HPAGE_PMD_NR), 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, AREA, SZ_2M, 5), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

static void npages_smaller_than_folio(struct ktest *t)
{
	struct to_device td = { .start = AREA + 4 * PAGE_SIZE, .npages = 4 };
	struct thp_ctx c;
	struct mm_struct *mm;

	thpt_begin(t, &c);
	CHECK(t, device_up(t));
	thp_set_global_mode(THP_NEVER);
	CHECK_EQ(t, thp_set_order_mode(4, THP_ALWAYS), 0);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, SZ_64K), AREA);
	CHECK_EQ(t, thpt_fault_range(mm, AREA, SZ_64K), 0);
	thpt_write_pattern(mm, AREA, SZ_64K, 7);
	CHECK_EQ(t, thpt_order_of(mm, AREA), 4);
	CHECK_EQ(t, to_device(mm, &td), 0);
	KEXPECT_EQ(t, td.got, 4);
	KEXPECT_EQ(t, td.cpages, 4);
	KEXPECT_TRUE(t, guards_intact(4));
	KEXPECT_EQ(t, count_on_device(mm, AREA, 16), 4);
	KEXPECT_EQ(t, count_on_device(mm, AREA + 4 * PAGE_SIZE, 4), 4);
	KEXPECT_EQ(t, thpt_order_of(mm, AREA), 0);	/* split: the device works in base pages */
	KEXPECT_EQ(t, device_mismatches(mm, AREA, 16, 7), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	KEXPECT_EQ(t, fault_back(mm, AREA, 16), 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, AREA, SZ_64K, 7), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

/* ---- the PMD or the PTEs change while collection has dropped the lock ---- */

enum hook_action { HOOK_COLLAPSE, HOOK_EMPTY, HOOK_ZAP };
static enum hook_action hook_action;
static int hook_calls;
static struct mm_struct *hook_mm;

static void change_under_collection(struct migrate_vma *m, unsigned long addr)
{
	unsigned long block = ALIGN_DOWN(addr, PMD_SIZE);

	if (hook_calls++)
		return;		/* once: the restart must then get through */
	if (hook_action == HOOK_ZAP) {
		zap_page_range_single(m->vma, block + SZ_64K, block + 2 * SZ_64K);
		return;
	}
	madvise_collapse(hook_mm, block, block + PMD_SIZE);	/* the PMD becomes a leaf */
	if (hook_action == HOOK_EMPTY)	/* and then nothing: the whole leaf zapped */
		zap_page_range_single(m->vma, block, block + PMD_SIZE);
}

/*
 * Block A (AREA) of small pages, block B (AREA + 2 MiB) of 64 KiB folios;
 * the range: A's last 16 pages and all of B. Collection takes A's pages
 * (migration entries, locked), then splits B's first folio with the lock
 * dropped, when the hook changes B.
 */
static void change_while_splitting(struct ktest *t, enum hook_action action, bool collect_unmap,
				   long want_restarts)
{
	const unsigned long b = AREA + SZ_2M, n = 16 + HPAGE_PMD_NR;
	struct to_device td = { .start = b - SZ_64K, .npages = n, .write_lock = true };
	bool saved_unmap = migrate_device_collect_unmap;
	long restarts = atomic_long_read(&migrate_device_restarts);
	struct thp_ctx c;
	struct mm_struct *mm;

	thpt_begin(t, &c);
	CHECK(t, device_up(t));
	thp_set_global_mode(THP_NEVER);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, 2 * SZ_2M), AREA);
	CHECK_EQ(t, thpt_fault_range(mm, AREA, SZ_2M), 0);		/* A: 4 KiB pages */
	CHECK_EQ(t, thp_set_order_mode(4, THP_ALWAYS), 0);
	CHECK_EQ(t, thpt_fault_range(mm, b, SZ_2M), 0);		/* B: 64 KiB folios */
	CHECK_EQ(t, thpt_order_of(mm, b), 4);
	thpt_write_pattern(mm, AREA, 2 * SZ_2M, 9);
	hook_action = action;
	hook_calls = 0;
	hook_mm = mm;
	migrate_device_split_hook = change_under_collection;
	migrate_device_collect_unmap = collect_unmap;
	KEXPECT_EQ(t, to_device(mm, &td), 0);
	migrate_device_split_hook = NULL;
	migrate_device_collect_unmap = saved_unmap;
	KEXPECT_TRUE(t, hook_calls >= 1);
	KEXPECT_EQ(t, atomic_long_read(&migrate_device_restarts) - restarts, want_restarts);
	KEXPECT_EQ(t, td.got, n);			/* every word once, none past the end */
	KEXPECT_EQ(t, td.cpages, n);
	KEXPECT_TRUE(t, guards_intact(n));
	KEXPECT_EQ(t, count_on_device(mm, b - SZ_64K, n), n);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Untouched by the range: A's other pages, in RAM as they were. */
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, AREA, SZ_2M - SZ_64K, 9), 0);
	KEXPECT_EQ(t, fault_back(mm, b - SZ_64K, n), 0);
	if (action == HOOK_ZAP) {
		/* The zapped folio's pages were empty slots: zeroes came back. */
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, b - SZ_64K, 2 * SZ_64K, 9), 0);
		KEXPECT_EQ(t, *thpt_byte_of(mm, b + SZ_64K + 0x10), 0);
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, b + 2 * SZ_64K, SZ_2M - 2 * SZ_64K, 9), 0);
	} else if (action == HOOK_EMPTY) {
		/* A's pages as they were; B was emptied: every slot collected empty, zeroes. */
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, b - SZ_64K, SZ_64K, 9), 0);
		KEXPECT_EQ(t, *thpt_byte_of(mm, b + 0x10), 0);
		KEXPECT_EQ(t, *thpt_byte_of(mm, b + SZ_2M - PAGE_SIZE + 0x10), 0);
	} else {
		KEXPECT_EQ(t, thpt_pattern_mismatches(mm, b - SZ_64K, n << PAGE_SHIFT, 9), 0);
	}
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	migrate_device_split_hook = NULL;
	migrate_device_collect_unmap = saved_unmap;
	thpt_end(t, &c);
}

static void pmd_becomes_leaf_rolls_back(struct ktest *t)
{
	change_while_splitting(t, HOOK_COLLAPSE, true, 1);
}

static void pmd_becomes_leaf_rolls_back_walk_later(struct ktest *t)
{
	change_while_splitting(t, HOOK_COLLAPSE, false, 1);
}

static void pmd_becomes_empty_rolls_back(struct ktest *t)
{
	change_while_splitting(t, HOOK_EMPTY, true, 1);
}

static void ptes_change_without_restart(struct ktest *t)
{
	change_while_splitting(t, HOOK_ZAP, true, 0);
}

static void pinned_page_refused(struct ktest *t)
{
	struct to_device td = { .start = AREA, .npages = 8 };
	struct page *pinned = NULL;
	struct thp_ctx c;
	struct mm_struct *mm;

	thpt_begin(t, &c);
	CHECK(t, device_up(t));
	thp_set_global_mode(THP_NEVER);
	mm = thpt_new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, thpt_map_anon(mm, AREA, 8 * PAGE_SIZE), AREA);
	CHECK_EQ(t, thpt_fault_range(mm, AREA, 8 * PAGE_SIZE), 0);
	thpt_write_pattern(mm, AREA, 8 * PAGE_SIZE, 11);
	down_read(&mm->mmap_lock);
	KEXPECT_EQ(t, pin_user_pages_remote(mm, AREA + 3 * PAGE_SIZE, 1, FOLL_WRITE, &pinned, NULL),
		   1);
	up_read(&mm->mmap_lock);
	CHECK(t, pinned != NULL);
	CHECK_EQ(t, to_device(mm, &td), 0);
	KEXPECT_EQ(t, td.got, 8);
	KEXPECT_EQ(t, td.cpages, 7);
	KEXPECT_FALSE(t, src[3] & MIGRATE_PFN_MIGRATE);
	KEXPECT_FALSE(t, on_device(mm, AREA + 3 * PAGE_SIZE));
	KEXPECT_EQ(t, thpt_page_of(mm, AREA + 3 * PAGE_SIZE), pinned);
	KEXPECT_EQ(t, count_on_device(mm, AREA, 8), 7);
	KEXPECT_EQ(t, mm_verify(), 0);
	unpin_user_page(pinned);
	KEXPECT_EQ(t, fault_back(mm, AREA, 8), 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(mm, AREA, 8 * PAGE_SIZE, 11), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	thpt_end(t, &c);
}

KTEST_SUITE(migrate_device,
	    KTEST_CASE(round_trip),
	    KTEST_CASE(thp_split_under_collection),
	    KTEST_CASE(npages_smaller_than_folio),
	    KTEST_CASE(pmd_becomes_leaf_rolls_back),
	    KTEST_CASE(pmd_becomes_leaf_rolls_back_walk_later),
	    KTEST_CASE(pmd_becomes_empty_rolls_back),
	    KTEST_CASE(ptes_change_without_restart),
	    KTEST_CASE(pinned_page_refused));
