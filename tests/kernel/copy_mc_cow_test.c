/*
 * Kernel copies of user data on the machine-check-safe path, with a source
 * page made to read like poison by the direct-map test hook
 * (include/quire/copy_mc.h; docs/mm/copy_mc.md "Callers"):
 *   - copy-on-write of an anonymous page (do_wp_page): the write fault
 *     fails with -EHWPOISON (SIGBUS BUS_MCEERR_AR for a user task), maps
 *     nothing new and keeps no page; the frame is queued for
 *     memory_failure(), which then puts a hwpoison entry in every address
 *     space that mapped it;
 *   - fork of a pinned page (copy_present_page): the fork fails;
 *   - a private file mapping's copy (file_fault) and read() of the page
 *     cache (filemap_read): -EHWPOISON, and EIO after the bytes before it;
 *   - memory_failure() on a frame poisoned already: -EHWPOISON, counted
 *     nowhere, nothing unmapped twice; -EFAULT for an action-required call
 *     from a thread without an address space (Linux's kill_accessing_process).
 * Job copy-mc-cow (an explicit suite: each case loses a frame for good).
 */
#include <quire/copy_mc.h>
#include <quire/memory-failure.h>
#include <quire/swapops.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/time.h>
#include <quire/fs.h>
#include <quire/pagemap.h>
#include <quire/uapi/fcntl.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/gup.h>
#include "thp_test.h"
#include "vfs_test.h"

#define LEN	(4 * SZ_4K)

extern atomic_long_t copy_mc_calls;

static unsigned long free_total(void)
{
	unsigned long n = 0;

	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid))
			n += node_page_state(nid, NR_FREE_PAGES);
	return n;
}

static unsigned long mf_results(int nid)
{
	unsigned long n = 0;

	for (int r = 0; r < NR_MF_RESULTS; r++)
		n += memory_failure_stat(nid, (enum mf_result)r);
	return n;
}

static bool hwpoison_entry_at(struct mm_struct *mm, unsigned long addr, unsigned long pfn)
{
	pte_t *pte = thpt_pte_of(mm, addr);
	pte_t e = pte ? READ_ONCE(*pte) : 0;

	return is_swap_pte(e) && is_hwpoison_entry(pte_to_swp_entry(e)) &&
	       pte_to_swp_entry(e).offset == pfn;
}

/* Run the queue (the worker may have it) until mm holds a hwpoison entry at addr: 1 s at most. */
static bool wait_hwpoison_entry(struct mm_struct *mm, unsigned long addr, unsigned long pfn)
{
	for (int i = 0; i < 500; i++) {
		memory_failure_process_queue();
		if (hwpoison_entry_at(mm, addr, pfn))
			return true;
		msleep(2);
	}
	return false;
}

/* Four anonymous pages at AREA, written with the pattern (salt); NULL on failure. */
static struct mm_struct *four_pages(struct ktest *t, u8 salt)
{
	struct mm_struct *mm = mm_alloc();

	KEXPECT_TRUE(t, mm != NULL);
	if (!mm)
		return NULL;
	if (thpt_map_anon(mm, AREA, LEN) != (long)AREA || thpt_fault_range(mm, AREA, LEN)) {
		KEXPECT_TRUE(t, false);
		mmput(mm);
		return NULL;
	}
	thpt_write_pattern(mm, AREA, LEN, salt);
	return mm;
}

/*
 * A child writes a page it shares with its parent since fork, and the
 * page reads like poison: -EHWPOISON, the child's entry unchanged until
 * memory_failure() replaces it in both; the other pages copy as usual;
 * only the poisoned frame is lost. Then memory_failure() again on it.
 */
static void cow_of_a_poisoned_page_fails_with_ehwpoison(struct ktest *t)
{
	const unsigned long a = AREA + SZ_4K;
	unsigned long before = free_total(), mid, split = 0, pfn = 0, queued, poisoned, results;
	struct mm_struct *parent, *child = NULL;
	struct page *page;
	long calls;
	int nid;

	parent = four_pages(t, 3);
	if (!parent)
		return;
	child = dup_mm(parent);
	CHECK(t, child != NULL);
	page = thpt_page_of(child, a);
	CHECK(t, page != NULL && page == thpt_page_of(parent, a));
	CHECK(t, !pte_write(thpt_entry_of(child, a)));
	pfn = page_to_pfn(page);
	nid = page_to_nid(page);
	queued = memory_failure_queued(pfn);
	poisoned = num_poisoned_pages();
	calls = atomic_long_read(&copy_mc_calls);
	mid = free_total();
	CHECK_EQ(t, copy_mc_test_poison_page(page), 0);
	/* (The hook splits the direct map's large page there for good: page tables.) */
	split = mid - free_total();
	mid -= split;

	KEXPECT_EQ(t, fault(child, a + 0x10, true), -EHWPOISON);
	copy_mc_test_unpoison();
	KEXPECT_EQ(t, atomic_long_read(&copy_mc_calls) - calls, 1);
	KEXPECT_EQ(t, memory_failure_queued(pfn), queued + 1);
	KEXPECT_EQ(t, free_total(), mid);		/* the copy went back */
	/* Its neighbour copies as ever. */
	KEXPECT_EQ(t, fault(child, AREA + 0x10, true), 0);
	KEXPECT_NE(t, thpt_pfn_of(child, AREA), thpt_pfn_of(parent, AREA));
	KEXPECT_TRUE(t, pte_write(thpt_entry_of(child, AREA)));
	KEXPECT_EQ(t, thpt_pattern_mismatches(child, AREA, SZ_4K, 3), 0);
	KEXPECT_EQ(t, thpt_pattern_mismatches(child, AREA + 2 * SZ_4K, 2 * SZ_4K, 3), 0);

	/* memory_failure() ran for the frame: a hwpoison entry in both. */
	KEXPECT_TRUE(t, wait_hwpoison_entry(child, a, pfn));
	KEXPECT_TRUE(t, wait_hwpoison_entry(parent, a, pfn));
	KEXPECT_TRUE(t, PageHWPoison(page));
	KEXPECT_EQ(t, num_poisoned_pages(), poisoned + 1);
	KEXPECT_EQ(t, fault(child, a, true), -EHWPOISON);
	KEXPECT_EQ(t, fault(parent, a, false), -EHWPOISON);
	KEXPECT_EQ(t, thpt_pattern_mismatches(parent, AREA + 2 * SZ_4K, 2 * SZ_4K, 3), 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* Again on a frame poisoned already: said, not counted, nothing changed. */
	results = mf_results(nid);
	KEXPECT_EQ(t, memory_failure(pfn, 0), -EHWPOISON);
	KEXPECT_EQ(t, memory_failure(pfn, MF_ACTION_REQUIRED), current->mm ? 0 : -EFAULT);
	KEXPECT_EQ(t, mf_results(nid), results);
	KEXPECT_EQ(t, num_poisoned_pages(), poisoned + 1);
	KEXPECT_TRUE(t, hwpoison_entry_at(child, a, pfn) && hwpoison_entry_at(parent, a, pfn));
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	if (child)
		mmput(child);
	mmput(parent);
	/* Only the poisoned frame is lost (and the direct map's split stays). */
	KEXPECT_EQ(t, (long)before - (long)free_total(), pfn ? 1 + (long)split : 0);
}

/* Fork copies a pinned anonymous page; a poisoned one fails the fork. */
static void fork_of_a_pinned_poisoned_page_fails(struct ktest *t)
{
	const unsigned long a = AREA + 2 * SZ_4K;
	unsigned long before = free_total(), pfn = 0, split = 0, queued;
	struct mm_struct *parent, *child = NULL;
	struct folio *folio = NULL;
	struct page *page;

	parent = four_pages(t, 5);
	if (!parent)
		return;
	page = thpt_page_of(parent, a);
	CHECK(t, page != NULL && thpt_exclusive_at(parent, a));
	folio = page_folio(page);
	folio_ref_add(folio, GUP_PIN_COUNTING_BIAS);	/* as FOLL_PIN pins a small folio */
	pfn = page_to_pfn(page);
	queued = memory_failure_queued(pfn);
	split = free_total();
	CHECK_EQ(t, copy_mc_test_poison_page(page), 0);
	split -= free_total();
	child = dup_mm(parent);
	copy_mc_test_unpoison();
	KEXPECT_TRUE(t, child == NULL);
	KEXPECT_EQ(t, memory_failure_queued(pfn), queued + 1);
	KEXPECT_TRUE(t, wait_hwpoison_entry(parent, a, pfn));
	KEXPECT_EQ(t, thpt_pattern_mismatches(parent, AREA, 2 * SZ_4K, 5), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	if (folio)
		unpin_user_page(folio_page(folio, 0));
	if (child)
		mmput(child);
	mmput(parent);
	KEXPECT_EQ(t, (long)before - (long)free_total(), pfn ? 1 + (long)split : 0);
}

/*
 * A page-cache page reads like poison: read() gives the bytes before it,
 * then EIO; a private mapping's write fault (its copy) is -EHWPOISON.
 */
static void page_cache_copies_stop_at_a_poisoned_page(struct ktest *t)
{
	static u8 buf[2 * 4096];
	struct inode *dir = vt_tmpdir("copy_mc");
	struct mm_struct *mm = NULL;
	struct folio *folio = NULL;
	struct file *f = NULL;
	unsigned long pfn, queued;
	loff_t pos = 0;

	KASSERT_TRUE(t, dir != NULL);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)(i * 7 + 1);
	CHECK_EQ(t, vt_write_file(dir, "f", buf, sizeof(buf)), 0);
	CHECK_EQ(t, vfs_open(dir, "f", O_RDWR, 0, &f), 0);
	folio = filemap_get_folio(file_inode(f)->i_mapping, 1);
	CHECK(t, folio != NULL);
	pfn = folio_pfn(folio);
	queued = memory_failure_queued(pfn);
	mm = mm_alloc();
	CHECK(t, mm != NULL);
	down_write(&mm->mmap_lock);
	CHECK_EQ(t, do_mmap(mm, AREA, sizeof(buf), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED,
			    f, 0), AREA);
	up_write(&mm->mmap_lock);

	CHECK_EQ(t, copy_mc_test_poison_page(folio_page(folio, 0)), 0);
	memset(buf, 0, sizeof(buf));
	KEXPECT_EQ(t, vfs_read(f, buf, sizeof(buf), &pos), 4096);
	KEXPECT_EQ(t, buf[4095], (u8)(4095 * 7 + 1));
	KEXPECT_EQ(t, buf[4096], 0);
	KEXPECT_EQ(t, fault(mm, AREA + SZ_4K + 8, true), -EHWPOISON);
	KEXPECT_EQ(t, fault(mm, AREA + 8, true), 0);	/* page 0 copies */
	copy_mc_test_unpoison();
	/* (Once memory_failure() has marked it, the fault says so before any copy.) */
	KEXPECT_GE(t, memory_failure_queued(pfn), queued + 1);
	for (int i = 0; i < 500 && !PageHWPoison(folio_page(folio, 0)); i++) {
		memory_failure_process_queue();
		msleep(2);
	}
	KEXPECT_TRUE(t, PageHWPoison(folio_page(folio, 0)));
	KEXPECT_EQ(t, vfs_read(f, buf, sizeof(buf), &pos), -EIO);	/* pos is 4096 */
	KEXPECT_EQ(t, fault(mm, AREA + SZ_4K, true), -EHWPOISON);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	if (folio)
		folio_put(folio);
	if (mm)
		mmput(mm);
	if (f)
		fput(f);
	vt_done(dir, "copy_mc");
}

KTEST_SUITE_EXPLICIT(copy_mc_cow,
		     KTEST_CASE(cow_of_a_poisoned_page_fails_with_ehwpoison),
		     KTEST_CASE(fork_of_a_pinned_poisoned_page_fails),
		     KTEST_CASE(page_cache_copies_stop_at_a_poisoned_page));
