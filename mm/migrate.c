/*
 * Page migration (include/quire/migrate.h, docs/mm/migrate.md): a folio's
 * contents move to a new folio, usually on another node, while every
 * process that maps it keeps its addresses.
 *
 * migrate_pages() takes a list of isolated folios and, one batch at a time:
 *   1. unmaps them all: each folio is locked and try_to_migrate() turns
 *      every PTE mapping it into a migration entry (a fault on one waits
 *      for the folio lock, then faults again);
 *   2. moves each one: the contents are copied (folio_mc_copy: a poisoned
 *      source page fails the move instead of the kernel), the reference
 *      count is checked (an extra reference, a pin, fails the move), the
 *      page cache slot or anon_vma passes to the new folio, with the flags;
 *   3. restores: remove_migration_ptes() turns each entry into a PTE of the
 *      new folio, or of the old one when the move failed.
 * A folio whose move failed for a transient reason (a lock or reference
 * held by someone else) is tried again, up to NR_MIGRATE_PASSES times.
 *
 * Batching (the reference series 1): a run of PTEs that map consecutive
 * pages of one folio in one page table is unmapped with one rmap call and
 * one TLB flush, and restored with one rmap call; migrate_batch=0 does the
 * same one PTE at a time.
 *
 * A PMD-mapped THP moves whole with one PMD migration entry per mapping
 * (set_pmd_migration_entry, remove_migration_pmd in mm/huge_memory.c) and
 * comes back PMD-mapped. A large folio for which the target node has no
 * folio of its order is split (thp_migration_split) and its pieces move.
 *
 * Locks: the folio lock of the source from unmap to restore (the first
 * folio of a batch may wait for it; the others only trylock, so that two
 * migrations never wait for each other's folios), the destination's lock
 * while it becomes visible; rmap_walk's locks and each page-table lock
 * inside. Invariant 5 (mm_verify): a migration entry exists only while
 * its folio is locked.
 */
#define pr_fmt(fmt) "migrate: " fmt
#include <quire/migrate.h>
#include <quire/memremap.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/mmap.h>
#include <quire/mmu_notifier.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/swapops.h>
#include <quire/copy_mc.h>
#include <quire/wait_bit.h>
#include <quire/debug_locks.h>
#include <quire/cmdline.h>
#include <quire/fs.h>
#include <quire/numa.h>
#include <quire/sched.h>
#include <quire/kernel.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <asm/pgtable.h>

#define NR_MIGRATE_PASSES	10	/* Linux's NR_MAX_MIGRATE_PAGES_RETRY */
#define MIGRATE_BATCH_PAGES	HPAGE_PMD_NR	/* pages unmapped before the first copy */

bool migrate_batching = true;
CMDLINE_BOOL("migrate_batch", migrate_batching,
	     "unmap and restore a run of PTEs of one folio in one step (0: one PTE at a time)");

void (*migrate_unmapped_hook)(struct folio *src);

atomic_long_t migrate_events[NR_MIGRATE_EVENTS];
const char *const migrate_event_names[NR_MIGRATE_EVENTS] = {
	[PGMIGRATE_SUCCESS] = "pgmigrate_success",
	[PGMIGRATE_FAIL] = "pgmigrate_fail",
	[THP_MIGRATION_SUCCESS] = "thp_migration_success",
	[THP_MIGRATION_FAIL] = "thp_migration_fail",
	[THP_MIGRATION_SPLIT] = "thp_migration_split",
};

static void count_migrate_events(enum migrate_event item, long n)
{
	if (n)
		atomic_long_add(n, &migrate_events[item]);
}

/* ---- isolation ---- */

bool isolate_folio_to_list(struct folio *folio, struct list_head *list)
{
	if (!folio_try_get(folio))
		return false;
	/*
	 * A user folio: anonymous, or in a page cache (not the zero page, not a
	 * kernel page); not device memory (its owner moves it, and its lru
	 * words hold the pagemap).
	 */
	if ((!folio_test_anon(folio) && !folio->mapping) || folio_is_zone_device(folio) ||
	    !folio_isolate_deferred(folio)) {
		folio_put(folio);
		return false;
	}
	list_add_tail(&folio->lru, list);
	return true;
}

static void putback_folio(struct folio *folio)
{
	list_del(&folio->lru);
	folio_putback_deferred(folio);
	folio_put(folio);
}

void putback_movable_pages(struct list_head *list)
{
	while (!list_empty(list))
		putback_folio(list_first_entry(list, struct folio, lru));
}

/* ---- targets ---- */

struct folio *alloc_migration_target(struct folio *src, unsigned long private)
{
	struct migration_target_control *mtc = (struct migration_target_control *)private;
	int nid = mtc->nid == NUMA_NO_NODE ? folio_nid(src) : mtc->nid;

	return folio_alloc(mtc->gfp_mask | __GFP_MOVABLE | __GFP_NOWARN, folio_order(src), nid);
}

/* ---- migration entries: waiting ---- */

void migration_entry_wait_on_locked(swp_entry_t entry)
{
	struct page *page = pfn_to_page(swp_offset_pfn(entry));

	wait_on_bit(&page_folio(page)->flags, PG_locked);
}

/* ---- unmap: present PTEs become migration entries ---- */

/* What the PTE allowed, in a migration entry for page. */
static pte_t make_migration_pte(pte_t old, struct page *page, bool anon)
{
	return make_migration_entry_from(old, page_to_pfn(page), anon && PageAnonExclusive(page));
}

/* PTEs the walk may take from pvmw's on: the rest of its table and of the VMA's part. */
static int run_limit(struct page_vma_mapped_walk *pvmw)
{
	unsigned long block_end = ALIGN_DOWN(pvmw->address, PMD_SIZE) + PMD_SIZE;

	return (int)((min(block_end, pvmw->end) - pvmw->address) >> PAGE_SHIFT);
}

/* The walk goes on after the run of nr entries it just handled. */
static void pvmw_skip(struct page_vma_mapped_walk *pvmw, int nr)
{
	pvmw->pte += nr - 1;
	pvmw->address += (unsigned long)(nr - 1) << PAGE_SHIFT;
}

/* Of the run from page on, the pages before the first poisoned one (at least 1). */
static int stop_at_hwpoison(struct page *page, int nr)
{
	for (int i = 1; i < nr; i++)
		if (PageHWPoison(page + i))
			return i;
	return nr;
}

static void restore_entries(struct folio *folio, struct folio *dst, struct vm_area_struct *vma,
			    pte_t *pte, unsigned long addr, int nr);

/*
 * A device-private or device-exclusive entry (one page) becomes a
 * migration entry with what it allowed.
 */
static pte_t device_entry_to_migration_pte(pte_t old, struct page *page, bool anon)
{
	swp_entry_t d = pte_to_swp_entry(old), e;
	unsigned long pfn = page_to_pfn(page);

	if (is_writable_device_private_entry(d) || is_writable_device_exclusive_entry(d))
		e = make_writable_migration_entry(pfn);
	else if (anon && PageAnonExclusive(page))
		e = make_readable_exclusive_migration_entry(pfn);
	else
		e = make_readable_migration_entry(pfn);
	return pte_swp_soft_dirty(old) ? pte_swp_mksoft_dirty(swp_entry_to_pte(e)) :
					 swp_entry_to_pte(e);
}

/*
 * rmap_walk callback: every PTE of vma that maps the folio becomes a
 * migration entry, a run at a time (a device-private or device-exclusive
 * entry, which maps its page too, one at a time). False (and *arg false)
 * when a page turned out pinned: that run is restored and the walk stops.
 */
static bool try_to_migrate_one(struct folio *folio, struct vm_area_struct *vma,
			       unsigned long address, void *arg)
{
	struct page_vma_mapped_walk pvmw = { .folio = folio, .vma = vma, .address = address };
	struct mm_struct *mm = vma->vm_mm;
	bool anon = folio_test_anon(folio), *ok = arg;
	struct mmu_notifier_range range;

	/* What the folio may map in vma: a device must forget it before the entries change. */
	mmu_notifier_start(&range, MMU_NOTIFY_MIGRATE, mm, max(address, vma->vm_start),
			   min(address + folio_size(folio), vma->vm_end));
	while (page_vma_mapped_walk(&pvmw)) {
		unsigned long addr = pvmw.address;
		struct page *page;
		pte_t first;
		bool device;
		int nr = 1;

		if (pvmw.pmd) {
			/* A PMD-mapped THP: one PMD migration entry for the whole folio. */
			if (set_pmd_migration_entry(&pvmw, folio))
				continue;
			page_vma_mapped_walk_done(&pvmw);
			mmu_notifier_invalidate_range_end(&range);
			*ok = false;
			return false;
		}
		first = ptep_get(pvmw.pte);
		device = !pte_has_page(first);
		page = pfn_to_page(device ? swp_offset_pfn(pte_to_swp_entry(first)) : pte_pfn(first));
		if (migrate_batching && !device)
			nr = stop_at_hwpoison(page, folio_pte_run(folio, pvmw.pte, first,
								  run_limit(&pvmw)));
		/*
		 * xchg each entry (a D bit set meanwhile is kept) for its
		 * migration entry, then one flush: after it no CPU can write
		 * through an old translation, and the copy may start.
		 */
		for (int i = 0; i < nr; i++) {
			pte_t old = ptep_get_and_clear(mm, addr + ((unsigned long)i << PAGE_SHIFT),
						       pvmw.pte + i);

			set_pte(pvmw.pte + i, device ? device_entry_to_migration_pte(old, page, anon) :
					      make_migration_pte(old, page + i, anon));
		}
		if (!device)
			flush_tlb_mm_range(mm, addr, addr + ((unsigned long)nr << PAGE_SHIFT));
		for (int i = 0; anon && i < nr; i++) {
			if (PageAnonExclusive(page + i) && folio_try_share_anon_rmap_pte(folio, page + i)) {
				/* Pinned: this run goes back as it was, and the folio stays. */
				restore_entries(folio, folio, vma, pvmw.pte, addr, nr);
				page_vma_mapped_walk_done(&pvmw);
				mmu_notifier_invalidate_range_end(&range);
				*ok = false;
				return false;
			}
		}
		folio_remove_rmap_ptes(folio, page, nr, vma);
		folio_put_refs(folio, nr);	/* the mappings' references (the caller holds one) */
		pvmw_skip(&pvmw, nr);
	}
	mmu_notifier_invalidate_range_end(&range);
	return true;
}

/*
 * Unmap a locked folio from every process: false when it could not be
 * (pinned). A PMD mapping becomes a PMD migration entry.
 */
bool try_to_migrate(struct folio *folio)
{
	bool ok = true;
	struct rmap_walk_control rwc = { .arg = &ok, .rmap_one = try_to_migrate_one };

	VM_BUG_ON_FOLIO(!folio_test_locked(folio), folio);
	if (folio_mapped(folio))
		rmap_walk(folio, &rwc);
	return ok && !folio_mapped(folio);
}

/* ---- restore: migration entries become PTEs again ---- */

/* How many entries from pte on name the following frames with the same kind (young/dirty aside). */
static int migration_entry_run(pte_t *pte, swp_entry_t first, int max)
{
	int nr = 1;

	while (nr < max) {
		pte_t next = ptep_get(pte + nr);
		swp_entry_t e;

		if (!is_migration_pte(next))
			break;
		e = pte_to_swp_entry(next);
		if (e.type != first.type || swp_offset_pfn(e) != swp_offset_pfn(first) + nr)
			break;
		nr++;
	}
	return nr;
}

/*
 * nr migration entries from pte on (at addr in vma; their table's lock
 * held), naming pages of folio, become present PTEs of the same pages of
 * dst (folio itself when the move failed), with one rmap call.
 */
static void restore_entries(struct folio *folio, struct folio *dst, struct vm_area_struct *vma,
			    pte_t *pte, unsigned long addr, int nr)
{
	swp_entry_t e = pte_to_swp_entry(ptep_get(pte));
	struct page *page = folio_page(dst, swp_offset_pfn(e) - folio_pfn(folio));
	bool write = is_writable_migration_entry(e) && (vma->vm_flags & VM_WRITE);
	bool none = !(vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC));
	bool anon = folio_test_anon(dst), device = folio_is_device_private(dst);
	int flags = RMAP_NONE;

	if (anon && (is_writable_migration_entry(e) || is_readable_exclusive_migration_entry(e)))
		flags = RMAP_EXCLUSIVE;
	folio_ref_add(dst, nr);
	if (anon)
		folio_add_anon_rmap_ptes(dst, page, nr, vma, addr, flags);
	else
		folio_add_file_rmap_ptes(dst, page, nr, vma);
	for (int i = 0; i < nr; i++) {
		pte_t old = ptep_get(pte + i);
		pte_t new;

		if (device) {	/* the page lives on the device: an entry that remembers write */
			swp_entry_t d = write ? make_writable_device_private_entry(page_to_pfn(page + i)) :
				make_readable_device_private_entry(page_to_pfn(page + i));

			new = swp_entry_to_pte(d);
			set_pte(pte + i, pte_swp_soft_dirty(old) ? pte_swp_mksoft_dirty(new) : new);
			continue;
		}
		new = restore_migration_entry_bits(pfn_pte(page_to_pfn(page + i), write,
							   vma->vm_flags & VM_EXEC), old);
		/* Release: the copied bytes before the mapping. */
		set_pte_release(pte + i, none ? pte_mkprotnone(new) : new);
	}
}

struct restore_walk {
	struct folio *src, *dst;
};

/* rmap_walk callback (walking dst, which has src's place now): src's entries in vma. */
static bool remove_migration_pte(struct folio *walked, struct vm_area_struct *vma,
				 unsigned long address, void *arg)
{
	struct restore_walk *rw = arg;
	struct folio *folio = rw->src;
	struct page_vma_mapped_walk pvmw = { .folio = folio, .vma = vma, .address = address,
					     .flags = PVMW_MIGRATION };

	(void)walked;

	while (page_vma_mapped_walk(&pvmw)) {
		swp_entry_t e;
		int nr = 1;

		if (pvmw.pmd) {
			remove_migration_pmd(&pvmw, rw->dst);
			continue;
		}
		e = pte_to_swp_entry(ptep_get(pvmw.pte));

		if (migrate_batching)
			nr = migration_entry_run(pvmw.pte, e,
						 min(run_limit(&pvmw),
						     (int)(folio_pfn(folio) + folio_nr_pages(folio) -
							   swp_offset_pfn(e))));
		restore_entries(folio, rw->dst, vma, pvmw.pte, pvmw.address, nr);
		pvmw_skip(&pvmw, nr);
	}
	return true;
}

/*
 * Every migration entry naming src becomes a PTE of dst (src: put back as
 * it was). The walk goes by dst's rmap: a page-cache src has left its
 * mapping already.
 */
void remove_migration_ptes(struct folio *src, struct folio *dst)
{
	struct restore_walk rw = { .src = src, .dst = dst };
	struct rmap_walk_control rwc = { .arg = &rw, .rmap_one = remove_migration_pte };

	rmap_walk(dst, &rwc);
}

/* ---- move: contents, mapping, flags ---- */

/* The reference count from expected to 0, if it is expected (Linux's folio_ref_freeze). */
static bool folio_ref_freeze(struct folio *folio, int expected)
{
	return __atomic_compare_exchange_n(&folio->_refcount.counter, &expected, 0, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void folio_ref_unfreeze(struct folio *folio, int count)
{
	__atomic_store_n(&folio->_refcount.counter, count, __ATOMIC_RELEASE);
}

/*
 * The page cache slot (or the anon_vma) passes from src to dst, if src
 * has no reference but ours, extra_count more, and the cache's: -EAGAIN
 * otherwise. dst's allocation reference becomes the cache's.
 */
int folio_migrate_mapping(struct folio *dst, struct folio *src, int extra_count)
{
	struct address_space *mapping = folio_test_anon(src) ? NULL : src->mapping;
	int expected = 1 + extra_count + (mapping ? 1 : 0);

	if (!mapping) {
		if (folio_ref_count(src) != expected)
			return -EAGAIN;
		dst->index = src->index;
		dst->mapping = src->mapping;
		if (folio_test_anon(src))
			anon_vma_get(src->mapping);	/* each folio holds its own */
		return 0;
	}
	spin_lock(&mapping->i_pages_lock);
	if (!folio_ref_freeze(src, expected)) {
		spin_unlock(&mapping->i_pages_lock);
		return -EAGAIN;
	}
	dst->index = src->index;
	dst->mapping = mapping;
	folio_get(dst);			/* the cache's; the allocation's stays ours */
	radix_tree_replace(&mapping->i_pages, src->index, dst);
	atomic_long_dec(&NODE_DATA(folio_nid(src))->stat[NR_FILE_PAGES]);
	atomic_long_inc(&NODE_DATA(folio_nid(dst))->stat[NR_FILE_PAGES]);
	src->mapping = NULL;
	folio_ref_unfreeze(src, expected - 1);	/* ours is left */
	spin_unlock(&mapping->i_pages_lock);
	return 0;
}

/* Linux's folio_migrate_flags: what the folio is, not where it is. */
void folio_migrate_flags(struct folio *dst, struct folio *src)
{
	static const int moved[] = { PG_anon, PG_swapbacked, PG_uptodate, PG_dirty,
				     PG_referenced, PG_large_rmappable };

	for (size_t i = 0; i < ARRAY_SIZE(moved); i++)
		if (test_page_flag((struct page *)src, moved[i]))
			set_page_flag((struct page *)dst, moved[i]);
	if (folio_test_large(dst) && folio_test_anon(dst))
		mod_mthp_stat(folio_order(dst), MTHP_STAT_NR_ANON, 1);	/* src's -1 when it is freed */
}

/* Copy, then hand over: 0, -EAGAIN (a reference we do not know), -EHWPOISON (the copy failed). */
static int move_to_new_folio(struct folio *dst, struct folio *src)
{
	int err;

	if (folio_mc_copy(dst, src))
		return -EHWPOISON;
	err = folio_migrate_mapping(dst, src, 0);
	if (!err)
		folio_migrate_flags(dst, src);
	return err;
}

/* ---- one folio's steps ---- */

struct migrating {
	struct folio *src, *dst;
};

struct migrate_stats {
	unsigned int nr_succeeded;	/* base pages moved */
	unsigned int nr_failed;		/* folios failed for good */
	unsigned int nr_failed_pages;
	unsigned int nr_thp_succeeded, nr_thp_failed, nr_thp_split;
	bool nomem;
	int reason;			/* enum migrate_reason */
};

static bool folio_is_thp(struct folio *folio)
{
	return folio_order(folio) == HPAGE_PMD_ORDER;
}

static void count_failure(struct migrate_stats *st, struct folio *folio)
{
	st->nr_failed++;
	st->nr_failed_pages += folio_nr_pages(folio);
	st->nr_thp_failed += folio_is_thp(folio);
}

/* The source is done with (moved, or gone from every mapping): its isolation ends. */
static void release_source(struct folio *src, int reason)
{
	/*
	 * Soft offline (a page, split out of its folio first): the frame is
	 * poisoned before its last reference goes, so that the allocator
	 * keeps it out of its lists for good (Linux keeps a reference instead).
	 */
	if (reason == MR_MEMORY_FAILURE && !folio_test_large(src))
		SetPageHWPoison(folio_page(src, 0));
	list_del(&src->lru);
	folio_putback_deferred(src);
	folio_unlock(src);
	folio_put(src);		/* the isolation's: the last one when it moved */
}

static void release_target(struct folio *dst, free_folio_t put_new_folio, unsigned long private)
{
	if (put_new_folio)
		put_new_folio(dst, private);
	else
		folio_put(dst);
}

/*
 * A large folio whose target has no folio of its order: split it (anon
 * only) and put its pieces on from, isolated, to move as small folios.
 * False: it stays whole (it failed).
 */
static bool split_for_migration(struct folio *src, struct list_head *from,
				struct migrate_stats *st)
{
	unsigned long pfn = folio_pfn(src), nr = folio_nr_pages(src);
	bool thp = folio_is_thp(src), split;
	LIST_HEAD(pieces);

	/* Never wait for a lock here: the batch may hold others' (a busy one fails). */
	if (!folio_test_anon(src) || !folio_trylock(src))
		return false;
	/* The split rewrites lru; PG_isolated stays on src's page (the others' start clear). */
	list_del(&src->lru);
	split = !split_folio(src);
	folio_unlock(src);
	if (split) {
		for (unsigned long i = 0; i < nr;) {
			struct folio *piece = page_folio(pfn_to_page(pfn + i));

			i += folio_nr_pages(piece);
			if (piece != src)
				isolate_folio_to_list(piece, &pieces);	/* fails only when freed */
		}
	}
	list_add(&src->lru, &pieces);
	list_splice_tail_init(&pieces, from);
	st->nr_thp_split += split && thp;
	return split;
}

/*
 * Lock and unmap src for a move to a new folio: 0 with *m filled;
 * -EAGAIN: try again in the next pass (lock busy); -ENOMEM: no target;
 * -EBUSY: it stays mapped (pinned); 1: nothing maps it and nobody else
 * holds it (freed by its owners meanwhile: nothing to move).
 */
static int migrate_folio_unmap(struct folio *src, new_folio_t get_new_folio, unsigned long private,
			       bool may_wait, struct migrating *m)
{
	struct folio *dst;

	if (folio_ref_count(src) == 1 && !folio_mapped(src) &&
	    (folio_test_anon(src) || !src->mapping))
		return 1;
	if (!folio_trylock(src)) {
		if (!may_wait)
			return -EAGAIN;
		folio_lock(src);
	}
	if (folio_maybe_dma_pinned(src)) {
		folio_unlock(src);
		return -EBUSY;
	}
	dst = get_new_folio(src, private);
	if (!dst) {
		folio_unlock(src);
		return -ENOMEM;
	}
	folio_trylock(dst);	/* new: nobody else can hold it */
	if (!try_to_migrate(src)) {
		remove_migration_ptes(src, src);
		folio_unlock(dst);
		folio_put(dst);
		folio_unlock(src);
		return -EBUSY;
	}
	m->src = src;
	m->dst = dst;
	return 0;
}

/* Move an unmapped src to m->dst and restore: 0, or -EAGAIN/-EHWPOISON with src restored. */
static int migrate_folio_move(struct migrating *m, free_folio_t put_new_folio,
			      unsigned long private, int reason)
{
	struct folio *src = m->src, *dst = m->dst;
	int err = move_to_new_folio(dst, src);

	remove_migration_ptes(src, err ? src : dst);
	folio_unlock(dst);
	if (err) {
		release_target(dst, put_new_folio, private);
		folio_unlock(src);
		return err;
	}
	deferred_split_if_partial(dst);
	folio_put(dst);		/* the allocation's: the mappings (and cache) hold theirs */
	release_source(src, reason);
	return 0;
}

/* ---- the list ---- */

/*
 * One pass over (at most a batch of) the folios on from: unmap them all,
 * then move and restore each. A folio that moved, or failed for good,
 * leaves from (failures onto ret); one to try again stays. Returns how
 * many stayed to be tried again.
 */
static int migrate_pages_batch(struct list_head *from, new_folio_t get_new_folio,
			       free_folio_t put_new_folio, unsigned long private,
			       enum migrate_mode mode, struct list_head *ret,
			       struct migrate_stats *st)
{
	struct migrating batch[64];
	struct folio *src, *next;
	unsigned long pages = 0;
	int nr = 0, retry = 0;

	list_for_each_entry_safe(src, next, from, lru) {
		int err;

		if (nr == ARRAY_SIZE(batch) || pages >= MIGRATE_BATCH_PAGES)
			break;
		/* Wait only for the first lock: never for one while holding others. */
		err = migrate_folio_unmap(src, get_new_folio, private,
					  mode != MIGRATE_ASYNC && nr == 0, &batch[nr]);
		switch (err) {
		case 0:
			pages += folio_nr_pages(src);
			nr++;
			break;
		case 1:		/* freed by its owners meanwhile: counted as moved, as Linux */
			st->nr_succeeded += folio_nr_pages(src);
			list_del(&src->lru);
			folio_putback_deferred(src);
			folio_put(src);
			break;
		case -EAGAIN:
			retry++;
			break;
		case -ENOMEM:
			if (folio_test_large(src) && split_for_migration(src, from, st))
				break;	/* its pieces are on from now, after next */
			st->nomem = true;
			/* fall through */
		default:
			count_failure(st, src);
			list_move_tail(&src->lru, ret);
			break;
		}
	}
	if (nr && migrate_unmapped_hook)
		migrate_unmapped_hook(batch[0].src);
	for (int i = 0; i < nr; i++) {
		struct folio *f = batch[i].src;
		unsigned long n = folio_nr_pages(f);
		bool thp = folio_is_thp(f);
		int err = migrate_folio_move(&batch[i], put_new_folio, private, st->reason);

		if (!err) {
			st->nr_succeeded += n;
			st->nr_thp_succeeded += thp;
		} else if (err == -EAGAIN) {
			retry++;
		} else {
			count_failure(st, f);
			list_move_tail(&f->lru, ret);
		}
	}
	return retry;
}

int migrate_pages(struct list_head *from, new_folio_t get_new_folio, free_folio_t put_new_folio,
		  unsigned long private, enum migrate_mode mode, int reason,
		  unsigned int *nr_succeeded)
{
	struct migrate_stats st = { .reason = reason };
	struct folio *f;
	LIST_HEAD(ret);

	might_sleep();
	for (int pass = 0; pass < NR_MIGRATE_PASSES && !list_empty(from); pass++) {
		LIST_HEAD(again);

		/*
		 * Folios to try again: busy with a transient reference, often a
		 * fault holding one while it waits for the folio lock. Quire's
		 * folio lock is not handed to a waiter at unlock as Linux's is,
		 * so without a pause this thread would take it back before the
		 * waiter runs, pass after pass.
		 */
		if (pass && mode != MIGRATE_ASYNC)
			msleep(1);

		/* Every folio once per pass, a batch at a time; the busy ones wait for the next. */
		while (!list_empty(from)) {
			int retry = migrate_pages_batch(from, get_new_folio, put_new_folio, private,
							mode, &ret, &st);

			/* A batch leaves the folios to try again at the head of from. */
			while (retry-- > 0)
				list_move_tail(from->next, &again);
		}
		list_splice_tail_init(&again, from);
	}
	list_for_each_entry(f, from, lru)
		count_failure(&st, f);	/* still busy after every pass */
	list_splice_tail_init(&ret, from);

	count_migrate_events(PGMIGRATE_SUCCESS, st.nr_succeeded);
	count_migrate_events(PGMIGRATE_FAIL, st.nr_failed_pages);
	count_migrate_events(THP_MIGRATION_SUCCESS, st.nr_thp_succeeded);
	count_migrate_events(THP_MIGRATION_FAIL, st.nr_thp_failed);
	count_migrate_events(THP_MIGRATION_SPLIT, st.nr_thp_split);
	if (nr_succeeded)
		*nr_succeeded = st.nr_succeeded;
	return st.nomem ? -ENOMEM : (int)st.nr_failed;
}
