/*
 * get_user_pages and pin_user_pages (docs/mm/gup.md), Linux 6.12's
 * behaviour written for Quire:
 *   - the slow path walks VMA by VMA under mmap_lock (read): follow_page_mask
 *     takes what is mapped as needed, faultin_page faults the rest in as a
 *     user access would (or unshares a shared anonymous page for a read-only
 *     pin), and the walk retries;
 *   - follow_page_mask returns how many pages it found: a PMD mapping the
 *     rest of its 2 MiB, a run of PTEs mapping one large folio the whole
 *     run (follow_pte_batch), each run taken with one atomic per counter
 *     (try_grab_folio); gup_batch=0 takes the same pages one at a time;
 *   - the fast path walks the page tables with no lock and interrupts off,
 *     and leaves anything unusual to the slow path;
 *   - FOLL_LONGTERM pins move folios off the slow memory tier first.
 */
#include <quire/gup.h>
#include <quire/memremap.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/migrate.h>
#include <quire/huge_mm.h>
#include <quire/numa.h>
#include <quire/cmdline.h>
#include <quire/printk.h>
#include <quire/percpu.h>
#include <quire/spinlock.h>
#include <quire/sched.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/copy_mc.h>
#include <quire/memory-failure.h>
#include <asm/pgtable.h>

bool gup_batching = true;
CMDLINE_BOOL("gup_batch", gup_batching,
	     "GUP takes a run of PTEs of one folio in one step (0: one page at a time)");

atomic_long_t gup_events[NR_GUP_EVENTS];
const char *const gup_event_names[NR_GUP_EVENTS] = {
	[GUP_PAGES] = "gup_pages",
	[GUP_FOLLOW_STEPS] = "gup_follow_steps",
	[GUP_FOLLOW_LOCKS] = "gup_follow_locks",
	[GUP_GRAB_ATOMICS] = "gup_grab_atomics",
	[GUP_FAULTS] = "gup_faults",
	[GUP_FAST_PAGES] = "gup_fast_pages",
	[GUP_FAST_FALLBACKS] = "gup_fast_fallbacks",
	[GUP_LONGTERM_MIGRATED] = "gup_longterm_migrated",
	[GUP_UNPIN_ATOMICS] = "gup_unpin_atomics",
};

void (*gup_fast_hook)(unsigned long addr);
void (*gup_fast_pte_hook)(unsigned long addr);
void (*gup_fast_grab_hook)(void);

static void count_gup(enum gup_event e, long n)
{
	atomic_long_add(n, &gup_events[e]);
}

static bool folio_is_zero(struct folio *folio)
{
	return is_zero_pfn(folio_pfn(folio));
}

/* ---- references and pins ---- */

int try_grab_folio(struct folio *folio, int refs, unsigned int flags)
{
	/*
	 * The caller's hold (the lock of a table whose entry maps the folio)
	 * keeps it referenced: a count of 0 here is a freed or frozen folio.
	 */
	VM_BUG_ON_FOLIO(folio_ref_count(folio) <= 0, folio);
	if (flags & FOLL_GET) {
		folio_ref_add(folio, refs);
		count_gup(GUP_GRAB_ATOMICS, 1);
		return 0;
	}
	/* A pin of the shared zero page counts nothing (nothing can move or free it). */
	if (folio_is_zero(folio))
		return 0;
	if (folio_test_large(folio)) {
		folio_ref_add(folio, refs);
		atomic_add(refs, &folio->_pincount);
		count_gup(GUP_GRAB_ATOMICS, 2);
	} else {
		if (folio_ref_count(folio) > (int)(0x7fffffff / 2))
			return -ENOMEM;		/* the bias would overflow the count */
		folio_ref_add(folio, refs * GUP_PIN_COUNTING_BIAS);
		count_gup(GUP_GRAB_ATOMICS, 1);
	}
	return 0;
}

void gup_put_folio(struct folio *folio, int refs, unsigned int flags)
{
	if (flags & FOLL_PIN) {
		if (folio_is_zero(folio))
			return;
		if (folio_test_large(folio)) {
			atomic_sub(refs, &folio->_pincount);
			count_gup(GUP_UNPIN_ATOMICS, 1);
		} else {
			refs *= GUP_PIN_COUNTING_BIAS;
		}
	}
	count_gup(GUP_UNPIN_ATOMICS, 1);
	folio_put_refs(folio, refs);
}

/*
 * The lockless walk's grab: refs references on expect (the folio the
 * caller found page in when it counted the run) unless the folio is being
 * freed or frozen (refcount 0) or page is no longer in it (split), then
 * the pins. NULL: leave the page to the slow path. The caller rechecks
 * the entries it read.
 */
static struct folio *try_grab_folio_fast(struct page *page, struct folio *expect, int refs,
					 unsigned int flags)
{
	struct folio *folio = page_folio(page);
	bool large = folio_test_large(folio);
	int add = refs;

	/* Split since the run was read: refs would land on one piece only. */
	if (folio != expect)
		return NULL;
	if ((flags & FOLL_PIN) && !large)
		add = refs * GUP_PIN_COUNTING_BIAS;
	if (gup_fast_grab_hook)
		gup_fast_grab_hook();
	for (;;) {
		int old = atomic_read(&folio->_refcount);

		if (old <= 0 || old > 0x7fffffff / 2)
			return NULL;
		if (__atomic_compare_exchange_n(&folio->_refcount.counter, &old, old + add, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	/*
	 * Split before the reference (a split freezes the count: none after
	 * it): the page may have left the folio, or the folio (its first page
	 * keeps the address) may have shrunk under the run. Start again slowly.
	 */
	if (page_folio(page) != folio ||
	    page_to_pfn(page) + (unsigned long)refs > folio_pfn(folio) + folio_nr_pages(folio) ||
	    /*
	     * Split to order 0 with the head staying the folio: a pin counted
	     * the large way (refs, then _pincount) would be unpinned the small
	     * way (refs x BIAS). Start again slowly.
	     */
	    folio_test_large(folio) != large) {
		folio_put_refs(folio, add);
		return NULL;
	}
	count_gup(GUP_GRAB_ATOMICS, 1);
	if ((flags & FOLL_PIN) && folio_test_large(folio)) {
		atomic_add(refs, &folio->_pincount);
		count_gup(GUP_GRAB_ATOMICS, 1);
	}
	return folio;
}

void put_page(struct page *page)
{
	gup_put_folio(page_folio(page), 1, FOLL_GET);
}

void unpin_user_page(struct page *page)
{
	gup_put_folio(page_folio(page), 1, FOLL_PIN);
}

/* How many entries from pages[i] on are pages of the same folio (1 with gup_batch=0). */
static unsigned long same_folio_run(struct page **pages, unsigned long i, unsigned long npages)
{
	struct folio *folio = page_folio(pages[i]);
	unsigned long n = 1;

	if (!gup_batching || !folio_test_large(folio))
		return 1;
	while (i + n < npages && page_folio(pages[i + n]) == folio)
		n++;
	return n;
}

void unpin_user_pages_dirty_lock(struct page **pages, unsigned long npages, bool make_dirty)
{
	for (unsigned long i = 0, n; i < npages; i += n) {
		struct folio *folio = page_folio(pages[i]);

		n = same_folio_run(pages, i, npages);
		if (make_dirty && !folio_is_zero(folio) &&
		    !test_page_flag((struct page *)folio, PG_dirty)) {
			/* Under the folio lock, as Linux: truncation and writeback look at it. */
			folio_lock(folio);
			set_page_flag((struct page *)folio, PG_dirty);
			folio_unlock(folio);
		}
		gup_put_folio(folio, (int)n, FOLL_PIN);
	}
}

void unpin_user_pages(struct page **pages, unsigned long npages)
{
	unpin_user_pages_dirty_lock(pages, npages, false);
}

/* Drop what a walk took on pages[0..nr) (FOLL_GET or FOLL_PIN). */
static void release_pages_taken(struct page **pages, unsigned long nr, unsigned int flags)
{
	for (unsigned long i = 0, n; i < nr; i += n) {
		n = same_folio_run(pages, i, nr);
		gup_put_folio(page_folio(pages[i]), (int)n, flags);
	}
}

/* ---- the slow path: follow_page_mask and faultin_page ---- */

/*
 * Must a read-only pin of this page unshare it first (FAULT_FLAG_UNSHARE),
 * so that the pin and the page table keep naming the same page? Linux
 * 6.12's gup_must_unshare: an anonymous page that is not exclusive; for a
 * long-term pin also a page-cache or zero page of a private mapping (a
 * later write would replace it by a private copy the pin does not see).
 * GUP-fast (no vma) cannot tell a private mapping from a shared one, so a
 * long-term pin of a page that is not anonymous goes to the slow path.
 */
static bool gup_must_unshare(struct vm_area_struct *vma, unsigned int flags, struct page *page)
{
	if ((flags & (FOLL_WRITE | FOLL_PIN)) != FOLL_PIN)
		return false;
	if (is_zero_pfn(page_to_pfn(page)) || !folio_test_anon(page_folio(page)))
		return (flags & FOLL_LONGTERM) && (!vma || !(vma->vm_flags & VM_SHARED));
	return !PageAnonExclusive(page);
}

/*
 * A run of pages of one folio whose first page passed gup_must_unshare:
 * must each later page be asked too? Only PageAnonExclusive differs from
 * page to page (the rest is the folio's, the VMA's and the flags'), and
 * it matters only to a read-only pin of an anonymous folio.
 */
static bool run_checks_exclusive(struct folio *folio, unsigned int flags)
{
	return (flags & (FOLL_WRITE | FOLL_PIN)) == FOLL_PIN && folio_test_anon(folio);
}

/*
 * gup_run_length: of the nr pages from page (one folio's run of entries
 * like pte, folio_pte_run), how many from the first on may be taken
 * together: all, or up to the first that is not PageAnonExclusive where
 * that matters (a read-only pin must not take it shared; a FOLL_FORCE
 * write through a read-only entry, can_follow_write, takes only exclusive
 * pages).
 */
static unsigned long gup_run_length(struct folio *folio, struct page *page, pte_t pte,
				    unsigned long nr, unsigned int flags)
{
	if (run_checks_exclusive(folio, flags) || ((flags & FOLL_WRITE) && !pte_write(pte)))
		for (unsigned long i = 1; i < nr; i++)
			if (!PageAnonExclusive(page + i))
				return i;
	return nr;
}

/*
 * May GUP take this present entry for FOLL_WRITE? Writable, or (FOLL_FORCE
 * on a private read-only VMA, as ptrace writes) an exclusive anonymous
 * page: the copy-on-write has been broken for us.
 */
static bool can_follow_write(struct vm_area_struct *vma, pte_t entry, struct page *page,
			     unsigned int flags)
{
	if (pte_write(entry))
		return true;
	if (!(flags & FOLL_FORCE) || (vma->vm_flags & (VM_SHARED | VM_WRITE)))
		return false;
	return page && !is_zero_pfn(page_to_pfn(page)) && folio_test_anon(page_folio(page)) &&
	       PageAnonExclusive(page);
}

/*
 * follow_pte_batch: how many PTEs from ptep on (the first maps page with
 * the value pte) map consecutive pages of page's folio with the same bits
 * (accessed and dirty aside: folio_pte_run), none needing an unshare; at
 * most max_nr (the caller bounded it by the page table, end and the VMA),
 * never past the folio. The table's lock ptl is held: the entries cannot
 * change meanwhile.
 */
static unsigned long follow_pte_batch(pte_t *ptep, pte_t pte,
				      struct page *page, unsigned long max_nr, unsigned int flags,
				      spinlock_t *ptl)
{
	struct folio *folio = page_folio(page);
	unsigned long nr;

	lockdep_assert_held(ptl);
	if (!gup_batching || !folio_test_large(folio))
		return 1;
	nr = (unsigned long)folio_pte_run(folio, ptep, pte, (int)max_nr);
	return gup_run_length(folio, page, pte, nr, flags);
}

/*
 * What a FOLL_LONGTERM walk saw: a folio that must move first
 * (check_and_migrate_longterm), and the last folio it asked about (a
 * folio's pages come in a run: asked once per run, also one page at a
 * time).
 */
struct longterm_note {
	struct folio *last;
	bool unpinnable;
};

static void note_longterm(struct folio *folio, unsigned int flags, struct longterm_note *note)
{
	if (!(flags & FOLL_LONGTERM) || folio == note->last)
		return;
	note->last = folio;
	if (!folio_is_longterm_pinnable(folio))
		note->unpinnable = true;
}

/* A run of nr pages from page, taken (grabbed): counted, noted, written to pages. */
static unsigned long took_run(struct page *page, unsigned long nr, unsigned int flags,
			      struct page **pages, struct longterm_note *note)
{
	note_longterm(page_folio(page), flags, note);
	count_gup(GUP_FOLLOW_STEPS, 1);
	for (unsigned long j = 0; j < nr; j++)
		pages[j] = page + j;
	return nr;
}

/*
 * follow_pte_run: under ptl, the page the entry at ptep maps and the rest
 * of its folio's run (follow_pte_batch), taken and written to pages; 0
 * when the entry is not there or not usable as asked (then *fault_flags
 * says how to fault it in), or the grab failed (*err).
 */
static unsigned long follow_pte_run(struct vm_area_struct *vma, pte_t *ptep, unsigned long max_nr,
				    unsigned int flags, spinlock_t *ptl, struct page **pages,
				    unsigned int *fault_flags, int *err, struct longterm_note *note)
{
	pte_t entry = ptep_get(ptep);
	struct page *page;
	unsigned long nr;

	lockdep_assert_held(ptl);
	if (!pte_present(entry))	/* none, migration, hwpoison: the fault decides */
		return 0;
	page = pfn_to_page(pte_pfn(entry));
	if ((flags & FOLL_WRITE) && !can_follow_write(vma, entry, page, flags))
		return 0;
	if (gup_must_unshare(vma, flags, page)) {
		*fault_flags = FAULT_FLAG_UNSHARE;
		return 0;
	}
	nr = follow_pte_batch(ptep, entry, page, max_nr, flags, ptl);
	*err = try_grab_folio(page_folio(page), (int)nr, flags);
	return *err ? 0 : took_run(page, nr, flags, pages, note);
}

/*
 * The page at addr in vma and the pages after it, up to end, that the same
 * entry (a PMD) or the following entries of its page table map, taken
 * (FOLL_GET/FOLL_PIN) and written to pages under one hold of that table's
 * lock: one folio's run after another (follow_pte_run), until an entry
 * that is missing or not usable as asked. Returns how many; 0 when the
 * first is not there (*fault_flags: how to fault it in) or on error
 * (*err). With gup_batch=0, one page. note: what a FOLL_LONGTERM walk
 * took. mmap_lock held for reading.
 */
static unsigned long follow_page_mask(struct vm_area_struct *vma, unsigned long addr,
				      unsigned long end, unsigned int flags, struct page **pages,
				      unsigned int *fault_flags, int *err, struct longterm_note *note)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long limit = min(end, vma->vm_end);
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *ptep, entry;
	struct page *page;
	spinlock_t *ptl;
	unsigned long nr, max, run;

	/* The VMA and its page tables stay while mmap_lock is held (for reading). */
	mmap_assert_locked(mm);
	*err = 0;
	*fault_flags = (flags & FOLL_WRITE) ? FAULT_FLAG_WRITE : 0;
	if (!pmd || !READ_ONCE(*pmd))
		return 0;
	if (is_swap_pmd(READ_ONCE(*pmd)))
		return 0;	/* a THP being migrated: the fault waits for it (as Linux's no_page_table) */
	/* To the end of this page table (or PMD), end or the VMA; one page with gup_batch=0. */
	max = gup_batching ? (min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, limit) - addr) >> PAGE_SHIFT
			   : 1;
	if (pmd_leaf(READ_ONCE(*pmd))) {
		ptl = pmd_lock(mm, pmd);
		entry = pmdp_get(pmd);
		if (!pmd_leaf(entry)) {
			spin_unlock(ptl);
			return follow_page_mask(vma, addr, end, flags, pages, fault_flags, err, note);
		}
		page = pfn_to_page(pmd_pfn(entry)) + ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT);
		if ((flags & FOLL_WRITE) && !can_follow_write(vma, pmd_pte(entry), page, flags)) {
			spin_unlock(ptl);
			return 0;
		}
		if (gup_must_unshare(vma, flags, page)) {
			spin_unlock(ptl);
			*fault_flags = FAULT_FLAG_UNSHARE;
			return 0;
		}
		/* The rest of the PMD, in one step. */
		*err = try_grab_folio(page_folio(page), (int)max, flags);
		spin_unlock(ptl);
		return *err ? 0 : took_run(page, max, flags, pages, note);
	}
	ptep = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (!ptep)	/* became a leaf, or went, meanwhile */
		return follow_page_mask(vma, addr, end, flags, pages, fault_flags, err, note);
	nr = follow_pte_run(vma, ptep, max, flags, ptl, pages, fault_flags, err, note);
	/* The next folios' runs under the same hold; the first that stops us is left to the caller. */
	while (nr && nr < max) {
		unsigned int ignored_fault;
		int ignored_err = 0;

		run = follow_pte_run(vma, ptep + nr, max - nr, flags, ptl, pages + nr,
				     &ignored_fault, &ignored_err, note);
		if (!run)
			break;
		nr += run;
	}
	pte_unmap_unlock(ptep, ptl);
	return nr;
}

/* Fault addr in as GUP needs it: 0 (follow again) or -errno as Linux's GUP reports it. */
static int faultin_page(struct vm_area_struct *vma, unsigned long addr, unsigned int fault_flags)
{
	int ret;

	count_gup(GUP_FAULTS, 1);
	ret = handle_mm_fault_locked(vma, addr, fault_flags);
	switch (ret) {
	case 0:
	case -ENOMEM:
		return ret;
	default:	/* -EIO (past the end of a file: SIGBUS), -EHWPOISON, ... */
		return -EFAULT;
	}
}

/* Linux's check_vma_flags: may GUP touch this VMA with these flags? */
static int check_vma_flags(struct vm_area_struct *vma, unsigned int flags)
{
	if (flags & FOLL_WRITE) {
		if (!(vma->vm_flags & VM_WRITE)) {
			/* FOLL_FORCE breaks copy-on-write of a private mapping only. */
			if (!(flags & FOLL_FORCE) || (vma->vm_flags & VM_SHARED))
				return -EFAULT;
		}
	} else if (!(vma->vm_flags & VM_READ) && !(flags & FOLL_FORCE)) {
		return -EFAULT;
	}
	return 0;
}

/*
 * The slow path: nr_pages pages from start, filling pages (when not NULL,
 * in which case nothing is taken: a populate). Returns how many were
 * taken, or -errno when none was.
 */
static long __get_user_pages(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
			     unsigned int flags, struct page **pages, struct longterm_note *note)
{
	struct vm_area_struct *vma = NULL;
	unsigned long end = start + (nr_pages << PAGE_SHIFT), i = 0;
	long ret = 0;

	mmap_assert_locked(mm);
	while (i < nr_pages) {
		unsigned long addr = start + (i << PAGE_SHIFT), nr;
		unsigned int fault_flags;
		int err;

		if (!vma || addr >= vma->vm_end) {
			vma = find_vma(mm, addr);
			if (!vma || addr < vma->vm_start) {
				ret = -EFAULT;	/* a hole: GUP never grows a stack */
				break;
			}
			ret = check_vma_flags(vma, flags);
			if (ret)
				break;
		}
		nr = follow_page_mask(vma, addr, end, flags, pages + i, &fault_flags, &err, note);
		if (!nr) {
			if (err) {
				ret = err;
				break;
			}
			if (flags & FOLL_NOFAULT) {
				ret = -EFAULT;
				break;
			}
			ret = faultin_page(vma, addr, fault_flags);
			if (ret)
				break;
			continue;
		}
		count_gup(GUP_PAGES, (long)nr);
		count_gup(GUP_FOLLOW_LOCKS, 1);
		i += nr;
	}
	return i ? (long)i : ret;
}

/* ---- FOLL_LONGTERM ---- */

bool folio_is_longterm_pinnable(struct folio *folio)
{
	if (folio_is_device_coherent(folio))
		return false;	/* device memory: the pin moves it to RAM first */
	return folio_is_zero(folio) || numa_nodes[folio_nid(folio)].tier != MEM_TIER_SLOW;
}

/*
 * Linux's check_and_migrate_movable_pages: 0 when every page may stay
 * pinned; otherwise everything taken is dropped, the folios on the slow
 * tier are migrated to the nearest DRAM node and -EAGAIN says walk again;
 * -ENOMEM when they could not be moved.
 */
static long check_and_migrate_longterm(struct page **pages, unsigned long nr, unsigned int flags)
{
	struct migration_target_control mtc = {
		.nid = numa_mem_id_of(numa_node_id()), .gfp_mask = 0,
	};
	struct folio *folio, *seen = NULL, *coherent[16];
	unsigned int nr_coherent = 0;
	LIST_HEAD(list);
	bool any = false, busy = false;
	long ret;

	for (unsigned long i = 0; i < nr; i++) {
		folio = page_folio(pages[i]);
		/* A folio's pages come in a run: decide once per run. */
		if (folio == seen)
			continue;
		seen = folio;
		if (folio_is_longterm_pinnable(folio))
			continue;
		any = true;
		if (folio_is_device_coherent(folio)) {
			/* Moved by the device-migration path, with a reference of ours. */
			if (nr_coherent < ARRAY_SIZE(coherent)) {
				folio_get(folio);
				coherent[nr_coherent++] = folio;
			}
			continue;
		}
		isolate_folio_to_list(folio, &list);	/* false: already on the list */
	}
	if (!any)
		return 0;
	release_pages_taken(pages, nr, flags);
	for (unsigned int i = 0; i < nr_coherent; i++)
		busy |= migrate_device_coherent_folio(coherent[i]) != 0;
	if (busy) {
		pr_warn("gup: a long-term pin could not move a device-coherent page to RAM\n");
		return -ENOMEM;
	}
	if (list_empty(&list))
		return -EAGAIN;		/* isolated by someone else, or device pages moved: again */
	if (numa_nodes[mtc.nid].tier == MEM_TIER_SLOW)
		mtc.nid = NUMA_NO_NODE;
	ret = migrate_pages(&list, alloc_migration_target, NULL, (unsigned long)&mtc, MIGRATE_SYNC,
			    MR_LONGTERM_PIN, NULL);
	putback_movable_pages(&list);
	if (ret) {
		pr_warn("gup: a long-term pin could not move %ld folios off the slow tier\n",
			ret < 0 ? 0 : ret);
		return -ENOMEM;
	}
	count_gup(GUP_LONGTERM_MIGRATED, 1);
	return -EAGAIN;
}

/* The slow path with the flag checks and the long-term rule. mmap_lock held. */
static long gup_locked(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
		       unsigned int flags, struct page **pages)
{
	long ret;
	int tries = 0;

	mmap_assert_locked(mm);
	if ((flags & FOLL_PIN) && (flags & FOLL_GET))
		return -EINVAL;
	if (!(flags & (FOLL_PIN | FOLL_GET)) || !pages)
		return -EINVAL;
	start &= PAGE_MASK;	/* the page holding start, as Linux */
	if (!nr_pages)
		return 0;
	if (start + (nr_pages << PAGE_SHIFT) < start || start + (nr_pages << PAGE_SHIFT) > USER_TOP)
		return -EFAULT;
	do {
		struct longterm_note note = { NULL, false };

		ret = __get_user_pages(mm, start, nr_pages, flags, pages, &note);
		if (ret <= 0 || !note.unpinnable)
			return ret;
		{
			long r = check_and_migrate_longterm(pages, (unsigned long)ret, flags);

			if (!r)
				return ret;
			if (r != -EAGAIN)
				return r;
		}
	} while (++tries < 8);
	return -ENOMEM;
}

/* The remote entry points: kind is FOLL_GET or FOLL_PIN; FOLL_PIN is never the caller's. */
static long gup_remote(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
		       unsigned int gup_flags, struct page **pages, unsigned int kind)
{
	if (gup_flags & FOLL_PIN)
		return -EINVAL;
	return gup_locked(mm, start, nr_pages, gup_flags | kind, pages);
}

long get_user_pages_remote(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
			   unsigned int gup_flags, struct page **pages, int *locked)
{
	(void)locked;
	return gup_remote(mm, start, nr_pages, gup_flags, pages, FOLL_GET);
}

long pin_user_pages_remote(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
			   unsigned int gup_flags, struct page **pages, int *locked)
{
	(void)locked;
	return gup_remote(mm, start, nr_pages, gup_flags, pages, FOLL_PIN);
}

long get_user_pages(unsigned long start, unsigned long nr_pages, unsigned int gup_flags,
		    struct page **pages)
{
	return get_user_pages_remote(current->mm, start, nr_pages, gup_flags, pages, NULL);
}

long pin_user_pages(unsigned long start, unsigned long nr_pages, unsigned int gup_flags,
		    struct page **pages)
{
	return pin_user_pages_remote(current->mm, start, nr_pages, gup_flags, pages, NULL);
}

long pin_user_pages_unlocked(unsigned long start, unsigned long nr_pages, struct page **pages,
			     unsigned int gup_flags)
{
	struct mm_struct *mm = current->mm;
	long ret;

	if (!mm)
		return -EFAULT;
	down_read(&mm->mmap_lock);
	ret = pin_user_pages_remote(mm, start, nr_pages, gup_flags, pages, NULL);
	up_read(&mm->mmap_lock);
	return ret;
}

int access_remote_vm(struct mm_struct *mm, unsigned long addr, void *buf, int len,
		     unsigned int gup_flags)
{
	bool write = gup_flags & FOLL_WRITE;
	int done = 0;

	down_read(&mm->mmap_lock);
	while (done < len) {
		unsigned long off = (addr + (unsigned long)done) & ~PAGE_MASK;
		int n = (int)min((unsigned long)(len - done), PAGE_SIZE - off);
		struct page *page;
		u8 *kaddr;

		if (get_user_pages_remote(mm, addr + (unsigned long)done, 1, gup_flags, &page,
					  NULL) <= 0)
			break;
		kaddr = (u8 *)page_address(page) + off;
		if (write) {
			struct folio *folio = page_folio(page);

			memcpy(kaddr, (u8 *)buf + done, (size_t)n);
			folio_lock(folio);
			set_page_flag((struct page *)folio, PG_dirty);
			folio_unlock(folio);
		} else {
			/* Machine-check-safe: a poisoned page ends the access there. */
			unsigned long left = copy_mc_to_kernel((u8 *)buf + done, kaddr, (size_t)n);

			if (left) {
				memory_failure_queue(page_to_pfn(page), 0);
				put_page(page);
				done += n - (int)left;
				break;
			}
		}
		put_page(page);
		done += n;
	}
	up_read(&mm->mmap_lock);
	return done;
}

/* ---- the fast path ---- */

/*
 * The lockless PTE walk of one page table: pages from addr up to end
 * (inside the table). The entries are read once; each run is taken, then
 * its entries and the PMD are read again: anything changed meanwhile
 * (zapped, migrated, split) gives the run back and ends the walk.
 */
static unsigned long gup_fast_pte_range(pte_t *pmdp, pte_t pmdval, unsigned long addr,
					unsigned long end, unsigned int flags, struct page **pages)
{
	pte_t *ptep = pte_offset(&pmdval, addr);
	unsigned long got = 0, max = (end - addr) >> PAGE_SHIFT;

	while (got < max) {
		pte_t pte = READ_ONCE(ptep[got]);
		struct page *page;
		struct folio *folio;
		unsigned long nr = 1;

		/* Not present (none, migration, hwpoison), the zero page: the slow path. */
		if (!pte_present(pte) || is_zero_pfn(pte_pfn(pte)))
			break;
		if ((flags & FOLL_WRITE) && !pte_write(pte))
			break;
		page = pfn_to_page(pte_pfn(pte));
		if (!page || gup_must_unshare(NULL, flags, page))
			break;
		folio = page_folio(page);
		if ((flags & FOLL_LONGTERM) && !folio_is_longterm_pinnable(folio))
			break;
		if (gup_batching && folio_test_large(folio)) {
			nr = (unsigned long)folio_pte_run(folio, ptep + got, pte, (int)(max - got));
			nr = gup_run_length(folio, page, pte, nr, flags);
		}
		if (gup_fast_pte_hook)
			gup_fast_pte_hook(addr + (got << PAGE_SHIFT));
		folio = try_grab_folio_fast(page, folio, (int)nr, flags);
		if (!folio)
			break;
		/* Still the same entries (accessed and dirty aside) under the same table? */
		if (READ_ONCE(*pmdp) != pmdval ||
		    pte_batch_bits(READ_ONCE(ptep[got])) != pte_batch_bits(pte) ||
		    (nr > 1 && (unsigned long)folio_pte_run(folio, ptep + got, pte, (int)nr) != nr)) {
			gup_put_folio(folio, (int)nr, flags);
			break;
		}
		for (unsigned long j = 0; j < nr; j++)
			pages[got + j] = page + j;
		got += nr;
	}
	return got;
}

/* A PMD leaf: the pages of [addr, end) inside it, or 0 (the slow path decides). */
static unsigned long gup_fast_pmd_leaf(pte_t *pmdp, pte_t pmdval, unsigned long addr,
				       unsigned long end, unsigned int flags, struct page **pages)
{
	struct page *page = pfn_to_page(pmd_pfn(pmdval)) + ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT);
	unsigned long nr = (end - addr) >> PAGE_SHIFT, got = 0;
	struct folio *folio;

	if (!pte_present(pmd_pte(pmdval)) || ((flags & FOLL_WRITE) && !pte_write(pmdval)))
		return 0;
	if (gup_must_unshare(NULL, flags, page))
		return 0;
	if ((flags & FOLL_LONGTERM) && !folio_is_longterm_pinnable(page_folio(page)))
		return 0;
	if (!gup_batching)
		nr = 1;
	while (got < (end - addr) >> PAGE_SHIFT) {
		folio = try_grab_folio_fast(page + got, page_folio(page), (int)nr, flags);
		if (!folio)
			break;
		if (READ_ONCE(*pmdp) != pmdval) {	/* split, zapped or migrated meanwhile */
			gup_put_folio(folio, (int)nr, flags);
			break;
		}
		for (unsigned long j = 0; j < nr; j++)
			pages[got + j] = page + got + j;
		got += nr;
	}
	return got;
}

/*
 * The lockless walk of [start, start + nr_pages pages): how many pages it
 * took, stopping at the first it cannot take. Interrupts stay off
 * throughout and this CPU is in mm->cpus before the first entry is read:
 * a page table is freed only after flush_tlb_mm_range, whose IPI to this
 * CPU cannot be taken before the walk ends (docs/mm/gup.md).
 */
static unsigned long gup_fast(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
			      unsigned int flags, struct page **pages)
{
	unsigned long addr = start, end = start + (nr_pages << PAGE_SHIFT), got = 0;
	unsigned int seq = 0;
	cpumask_t me;
	unsigned long irq;

	/* A fork sharing this mm's pages right now: a pin waits for the slow path. */
	if (flags & FOLL_PIN) {
		seq = __atomic_load_n(&mm->write_protect_seq, __ATOMIC_ACQUIRE);
		if (seq & 1)
			return 0;
	}
	irq = arch_local_irq_save();
	me = cpumask_of(smp_processor_id());
	/* A full barrier (locked): the join is seen before any entry is read. */
	if (!(__atomic_load_n(&mm->cpus, __ATOMIC_ACQUIRE) & me))
		__atomic_fetch_or(&mm->cpus, me, __ATOMIC_SEQ_CST);
	while (addr < end) {
		unsigned long next = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, end), n;
		pte_t *pmdp = pmd_lookup(mm->pgd, addr, false);
		pte_t pmdval = pmdp ? READ_ONCE(*pmdp) : 0;

		if (!pmdval || is_swap_pmd(pmdval))
			break;	/* nothing, or a THP being migrated: the slow path */
		if (gup_fast_hook)
			gup_fast_hook(addr);
		if (pmd_leaf(pmdval))
			n = gup_fast_pmd_leaf(pmdp, pmdval, addr, next, flags, pages + got);
		else
			n = gup_fast_pte_range(pmdp, pmdval, addr, next, flags, pages + got);
		got += n;
		addr += n << PAGE_SHIFT;
		if (addr != next)
			break;
	}
	arch_local_irq_restore(irq);
	/*
	 * A fork started meanwhile may have decided to share a page before
	 * our pin showed (mm/fork_copy.c): give everything back. Our grabs
	 * were locked instructions, so this read comes after them.
	 */
	if ((flags & FOLL_PIN) && got &&
	    __atomic_load_n(&mm->write_protect_seq, __ATOMIC_SEQ_CST) != seq) {
		release_pages_taken(pages, got, flags);
		got = 0;
	}
	count_gup(GUP_FAST_PAGES, (long)got);
	return got;
}

long gup_fast_mm(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
		 unsigned int gup_flags, struct page **pages, bool fast_only)
{
	unsigned long got;
	long ret;

	if ((gup_flags & (FOLL_PIN | FOLL_GET)) == (FOLL_PIN | FOLL_GET) ||
	    !(gup_flags & (FOLL_PIN | FOLL_GET)))
		return -EINVAL;
	start &= PAGE_MASK;
	if (!nr_pages)
		return 0;
	if (start + (nr_pages << PAGE_SHIFT) < start || start + (nr_pages << PAGE_SHIFT) > USER_TOP)
		return -EFAULT;
	got = gup_fast(mm, start, nr_pages, gup_flags, pages);
	if (got == nr_pages || fast_only)
		return (long)got;
	count_gup(GUP_FAST_FALLBACKS, 1);
	down_read(&mm->mmap_lock);
	ret = gup_locked(mm, start + (got << PAGE_SHIFT), nr_pages - got, gup_flags, pages + got);
	up_read(&mm->mmap_lock);
	if (ret < 0)
		return got ? (long)got : ret;
	return (long)got + ret;
}

int get_user_pages_fast(unsigned long start, int nr_pages, unsigned int gup_flags,
			struct page **pages)
{
	if (!current->mm || nr_pages < 0 || (gup_flags & FOLL_PIN))
		return -EINVAL;
	return (int)gup_fast_mm(current->mm, start, (unsigned long)nr_pages, gup_flags | FOLL_GET,
				pages, false);
}

int pin_user_pages_fast(unsigned long start, int nr_pages, unsigned int gup_flags,
			struct page **pages)
{
	if (!current->mm || nr_pages < 0 || (gup_flags & FOLL_GET))
		return -EINVAL;
	return (int)gup_fast_mm(current->mm, start, (unsigned long)nr_pages, gup_flags | FOLL_PIN,
				pages, false);
}
