/*
 * Migration to and from device memory (include/quire/migrate.h,
 * docs/mm/device-memory.md), written from Linux's interface: a driver
 * moves a range of a process's memory with
 *
 *   migrate_vma_setup     collect: one src[] word per page of the range
 *                         (the page, or an empty slot the device may
 *                         fill), each collected page referenced, locked
 *                         and unmapped (a migration entry in its place);
 *   (driver)              allocate dst[] pages, copy;
 *   migrate_vma_pages     hand each src's anon_vma over to its dst (or map
 *                         a new page into an empty slot);
 *   migrate_vma_finalize  the migration entries become mappings of dst (of
 *                         src again where the move failed); unlock, put.
 *
 * Collection (reference series 3). It walks the range a PMD block at a
 * time under the block's PTE lock. Two rules make it safe:
 *   - src[] and dst[] have (end - start) / PAGE_SIZE words, and nothing is
 *     ever written past them: a word is written once per page of the range
 *     and collect_word() checks the bound.
 *   - A large folio is split (the device works in base pages) with the PTE
 *     lock dropped. When the lock is taken again, PTEs that changed are
 *     simply read again; but if the PMD no longer points to the same PTE
 *     table (it became a huge leaf, or empty), what was collected so far
 *     may name pages that are not there any more: it is rolled back
 *     (migration entries restored, locks and references dropped, except
 *     the lock of the page the CPU faulted on, which is its caller's) and
 *     collection starts again from the start of the range.
 * A folio locked while collecting is unmapped right there, under the PTE
 * lock (collect-time unmap: no rmap walk later for a page mapped once, the
 * reference's 3x); migrate_device_collect_unmap=0 leaves every page to
 * the rmap walk of the unmap step, for the benchmark.
 *
 * Locks: mmap_lock for reading (the caller's), the PTE lock of each block
 * while collecting, every collected folio's lock from collection to
 * finalize (trylock only: two migrations never wait for each other).
 */
#define pr_fmt(fmt) "migrate_device: " fmt
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
#include <quire/cmdline.h>
#include <quire/debug_locks.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <asm/pgtable.h>

#define MAX_COLLECT_RESTARTS	16	/* then give up on the range: best effort */

bool migrate_device_collect_unmap = true;
CMDLINE_BOOL("migrate_device_collect_unmap", migrate_device_collect_unmap,
	     "unmap a page mapped once while collecting it for device migration "
	     "(0: by an rmap walk later)");
atomic_long_t migrate_device_restarts;
void (*migrate_device_split_hook)(struct migrate_vma *migrate, unsigned long addr);

struct page *migrate_pfn_to_page(unsigned long mpfn)
{
	if (!(mpfn & MIGRATE_PFN_VALID))
		return NULL;
	return pfn_to_page(mpfn >> MIGRATE_PFN_SHIFT);
}

/* ---- collection ---- */

struct collect {
	struct migrate_vma *m;
	unsigned long cap;		/* words in src[] and dst[] */
	struct folio *fault_folio;	/* locked by the fault path, not by us */
};

static void collect_word(struct collect *c, unsigned long mpfn)
{
	struct migrate_vma *m = c->m;

	if (m->npages >= c->cap)
		panic("migrate_vma: collection would write word %lu of a %lu-word array",
		      m->npages, c->cap);
	m->dst[m->npages] = 0;
	m->src[m->npages++] = mpfn;
}

/* [addr, end) has nothing to collect. */
static void collect_skip(struct collect *c, unsigned long addr, unsigned long end)
{
	for (; addr < end; addr += PAGE_SIZE)
		collect_word(c, 0);
}

/* [addr, end) is empty: an anonymous VMA's slots may get a new page. */
static void collect_hole(struct collect *c, unsigned long addr, unsigned long end)
{
	bool anon = !c->m->vma->vm_file;

	for (; addr < end; addr += PAGE_SIZE) {
		collect_word(c, anon ? MIGRATE_PFN_MIGRATE : 0);
		c->m->cpages += anon;
	}
}

/*
 * The migration entry that takes the place of old (a present PTE, or a
 * device-private entry) for page.
 */
static pte_t collect_migration_pte(pte_t old, struct page *page, unsigned long mpfn,
				   bool anon_exclusive)
{
	unsigned long pfn = page_to_pfn(page);
	swp_entry_t e;
	pte_t swp;

	if (mpfn & MIGRATE_PFN_WRITE)
		e = make_writable_migration_entry(pfn);
	else if (anon_exclusive)
		e = make_readable_exclusive_migration_entry(pfn);
	else
		e = make_readable_migration_entry(pfn);
	if (pte_present(old)) {
		if (pte_young(old))
			e = make_migration_entry_young(e);
		if (pte_dirty(old))
			e = make_migration_entry_dirty(e);
	}
	swp = swp_entry_to_pte(e);
	if (pte_present(old) ? pte_soft_dirty(old) : pte_swp_soft_dirty(old))
		swp = pte_swp_mksoft_dirty(swp);
	return swp;
}

/*
 * Collect-time unmap of page (its folio locked and referenced by us) at
 * pte: true, with the migration entry installed and the mapping's
 * reference and mapcount gone; false when the page turned out pinned
 * (the PTE is as it was).
 */
static bool collect_unmap_one(struct vm_area_struct *vma, unsigned long addr, pte_t *pte,
			      struct page *page, unsigned long mpfn)
{
	struct folio *folio = page_folio(page);
	bool anon_exclusive = folio_test_anon(folio) && PageAnonExclusive(page);
	pte_t old;

	lockdep_assert_held(pmd_lockptr(vma->vm_mm, pte));	/* the PTE's own table's lock */
	VM_BUG_ON_FOLIO(!folio_test_locked(folio), folio);
	old = ptep_get_and_clear(vma->vm_mm, addr, pte);

	if (anon_exclusive) {
		/* The pin check needs no CPU able to write through an old translation. */
		if (pte_present(old))
			flush_tlb_mm_range(vma->vm_mm, addr, addr + PAGE_SIZE);
		if (folio_try_share_anon_rmap_pte(folio, page)) {
			set_pte(pte, old);
			return false;
		}
	}
	set_pte(pte, collect_migration_pte(old, page, mpfn, anon_exclusive));
	folio_remove_rmap_pte(folio, page, vma);
	folio_put(folio);	/* the mapping's: ours keeps the folio */
	return true;
}

enum collect_result { COLLECT_DONE, COLLECT_RESTART };

/*
 * The page to collect at a PTE, with its src word in *mpfn: NULL with
 * *mpfn 0 (not selected) or MIGRATE_PFN_MIGRATE (an empty slot, counted).
 */
static struct page *collect_select(struct collect *c, pte_t entry, unsigned long *mpfn)
{
	struct migrate_vma *m = c->m;
	struct page *page;

	*mpfn = 0;
	if (!entry) {
		if (!m->vma->vm_file) {
			*mpfn = MIGRATE_PFN_MIGRATE;
			m->cpages++;
		}
		return NULL;
	}
	if (!pte_present(entry)) {
		swp_entry_t e = pte_to_swp_entry(entry);

		/* Only a device-private page of ours moves; other entries stay. */
		if (!is_swap_pte(entry) || !is_device_private_entry(e))
			return NULL;
		page = pfn_to_page(swp_offset_pfn(e));
		if (!(m->flags & MIGRATE_VMA_SELECT_DEVICE_PRIVATE) ||
		    page->pgmap->owner != m->pgmap_owner)
			return NULL;
		*mpfn = migrate_pfn(page_to_pfn(page)) | MIGRATE_PFN_MIGRATE |
			(is_writable_device_private_entry(e) ? MIGRATE_PFN_WRITE : 0);
		return page;
	}
	if (is_zero_pfn(pte_pfn(entry))) {
		/* Nothing to copy: like an empty slot. */
		if (m->flags & MIGRATE_VMA_SELECT_SYSTEM) {
			*mpfn = MIGRATE_PFN_MIGRATE;
			m->cpages++;
		}
		return NULL;
	}
	page = pfn_to_page(pte_pfn(entry));
	if (!page)
		return NULL;
	if (is_zone_device_page(page)) {
		/* Present device memory: coherent, selected only for its owner. */
		if (!is_device_coherent_page(page) ||
		    !(m->flags & MIGRATE_VMA_SELECT_DEVICE_COHERENT) ||
		    page->pgmap->owner != m->pgmap_owner)
			return NULL;
	} else if (!(m->flags & MIGRATE_VMA_SELECT_SYSTEM)) {
		return NULL;
	}
	*mpfn = migrate_pfn(page_to_pfn(page)) | MIGRATE_PFN_MIGRATE |
		(pte_write(entry) ? MIGRATE_PFN_WRITE : 0);
	return page;
}

/*
 * Split a large folio met at addr; the PTE lock is not held. 0, or an
 * error (the page is skipped).
 */
static int collect_split(struct folio *folio)
{
	int err;

	if (!folio_trylock(folio))
		return -EBUSY;
	err = split_folio(folio);
	folio_unlock(folio);
	return err;
}

/* One PMD block's part [addr, end); *pmd is addr's PMD entry. */
static enum collect_result collect_pmd(struct collect *c, pte_t *pmd, unsigned long addr,
				       unsigned long end)
{
	struct migrate_vma *m = c->m;
	struct vm_area_struct *vma = m->vma;
	struct mm_struct *mm = vma->vm_mm;
	unsigned long unmapped_from = 0, unmapped_to = 0;
	pte_t table, *pte;
	spinlock_t *ptl;

again:
	table = READ_ONCE(*pmd);
	if (!table) {
		collect_hole(c, addr, end);
		return COLLECT_DONE;
	}
	if (is_swap_pmd(table)) {
		/* A THP being migrated by someone else: skipped (Linux's pmd_bad check does too). */
		collect_skip(c, addr, end);
		return COLLECT_DONE;
	}
	if (is_huge_zero_pmd(table)) {
		/* As Linux: its PMD becomes 4 KiB zero-page PTEs, collected as holes are. */
		split_huge_pmd(vma, addr);
		goto again;
	}
	if (pmd_leaf(table)) {
		/* A THP: the device works in base pages, so it is split first. */
		struct folio *folio = page_folio(pfn_to_page(pmd_pfn(table)));
		int err;

		ptl = pmd_lock(mm, pmd);
		if (pmdp_get(pmd) != table) {
			spin_unlock(ptl);
			goto again;
		}
		folio_get(folio);
		spin_unlock(ptl);
		err = collect_split(folio);
		folio_put(folio);
		if (err) {
			collect_skip(c, addr, end);
			return COLLECT_DONE;
		}
		goto again;
	}
	pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (!pte)
		goto again;
	for (; addr < end; addr += PAGE_SIZE, pte++) {
		pte_t entry = ptep_get(pte);
		unsigned long mpfn;
		struct page *page = collect_select(c, entry, &mpfn);
		struct folio *folio;

		if (!page)
			goto next;
		folio = page_folio(page);
		if (!folio->mapping) {	/* (not anonymous, not in a file: nothing to move) */
			mpfn = 0;
			goto next;
		}
		if (folio_test_large(folio)) {
			int err;

			/*
			 * Split with the PTE lock dropped. What was unmapped
			 * so far is flushed first: no CPU may write to a
			 * collected page from now on.
			 */
			if (unmapped_to)
				flush_tlb_mm_range(mm, unmapped_from, unmapped_to);
			unmapped_to = 0;
			folio_get(folio);
			pte_unmap_unlock(pte, ptl);
			err = collect_split(folio);
			folio_put(folio);
			if (migrate_device_split_hook)
				migrate_device_split_hook(m, addr);
			/* The PMD must still point to the same table for what we hold to be valid. */
			if (READ_ONCE(*pmd) != table)
				return COLLECT_RESTART;
			pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
			if (!pte)
				return COLLECT_RESTART;
			if (pmdp_get(pmd) != table) {
				pte_unmap_unlock(pte, ptl);
				return COLLECT_RESTART;
			}
			if (err) {
				mpfn = 0;
				goto next;
			}
			/* This PTE (and maybe others) changed: read it again. */
			addr -= PAGE_SIZE;
			pte--;
			continue;
		}
		folio_get(folio);
		/* Locked here (or by the fault path) or not collected: never a wait. */
		if (folio != c->fault_folio && !folio_trylock(folio)) {
			folio_put(folio);
			mpfn = 0;
			goto next;
		}
		if (migrate_device_collect_unmap) {
			bool present = pte_present(entry);

			if (!collect_unmap_one(vma, addr, pte, page, mpfn)) {
				/* Pinned: it stays where it is. */
				if (folio != c->fault_folio)
					folio_unlock(folio);
				folio_put(folio);
				mpfn = 0;
				goto next;
			}
			if (present) {
				if (!unmapped_to)
					unmapped_from = addr;
				unmapped_to = addr + PAGE_SIZE;
			}
		}
		m->cpages++;
next:
		collect_word(c, mpfn);
	}
	if (unmapped_to)
		flush_tlb_mm_range(mm, unmapped_from, unmapped_to);
	pte_unmap_unlock(pte - 1, ptl);
	return COLLECT_DONE;
}

/*
 * Undo a collection: every collected page is mapped again as it was,
 * unlocked (the faulting page stays locked: its lock is the fault's) and
 * let go; the arrays are empty again.
 */
static void collect_rollback(struct collect *c)
{
	struct migrate_vma *m = c->m;

	for (unsigned long i = 0; i < m->npages; i++) {
		struct page *page = migrate_pfn_to_page(m->src[i]);
		struct folio *folio;

		m->src[i] = m->dst[i] = 0;
		if (!page)
			continue;
		folio = page_folio(page);
		remove_migration_ptes(folio, folio);	/* (none left to restore: nothing done) */
		if (folio != c->fault_folio)
			folio_unlock(folio);
		folio_put(folio);
	}
	m->npages = 0;
	m->cpages = 0;
}

static void migrate_vma_collect(struct migrate_vma *m)
{
	struct collect c = {
		.m = m,
		.cap = (m->end - m->start) >> PAGE_SHIFT,
		.fault_folio = m->fault_page ? page_folio(m->fault_page) : NULL,
	};
	struct mm_struct *mm = m->vma->vm_mm;
	struct mmu_notifier_range range;
	int restarts = 0;

restart:
	/* The owner is passed on: the device's own migration does not invalidate itself. */
	mmu_notifier_range_init(&range, MMU_NOTIFY_MIGRATE, 0, mm, m->start, m->end);
	range.owner = m->pgmap_owner;
	mmu_notifier_invalidate_range_start(&range);
	for (unsigned long addr = m->start, next; addr < m->end; addr = next) {
		pte_t *pmd = pmd_lookup(mm->pgd, addr, false);

		next = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, m->end);
		if (!pmd) {
			collect_hole(&c, addr, next);
			continue;
		}
		if (collect_pmd(&c, pmd, addr, next) == COLLECT_RESTART) {
			mmu_notifier_invalidate_range_end(&range);
			collect_rollback(&c);
			atomic_long_inc(&migrate_device_restarts);
			if (++restarts > MAX_COLLECT_RESTARTS) {
				pr_warn("[%#lx, %#lx): page tables kept changing under "
					"collection; nothing collected\n", m->start, m->end);
				collect_skip(&c, m->start, m->end);
				return;	/* (the range's notifier has ended above) */
			}
			goto restart;
		}
	}
	mmu_notifier_invalidate_range_end(&range);
	m->end = m->start + (m->npages << PAGE_SHIFT);
}

/* ---- unmap: whatever collection left mapped, and the reference check ---- */

/* No reference but ours (and the fault's, and a page cache's): nobody else uses it. */
static bool migrate_device_refs_ok(struct folio *folio, struct folio *fault_folio)
{
	int expected = 1 + (folio == fault_folio) + (!folio_test_anon(folio) && folio->mapping);

	return !folio_test_large(folio) && folio_ref_count(folio) == expected;
}

/*
 * Each collected page (locked, referenced) is unmapped everywhere it is
 * still mapped; one that cannot be (pinned, used) is mapped back, unlocked
 * and let go, its word cleared. Returns the words still migrating.
 */
static unsigned long migrate_device_unmap(unsigned long *src, unsigned long npages,
					  struct folio *fault_folio)
{
	unsigned long unmapped = 0, restore = 0;

	for (unsigned long i = 0; i < npages; i++) {
		struct page *page = migrate_pfn_to_page(src[i]);
		struct folio *folio;

		if (!page) {
			unmapped += !!(src[i] & MIGRATE_PFN_MIGRATE);
			continue;
		}
		folio = page_folio(page);
		if (!(src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		if (folio_mapped(folio))
			try_to_migrate(folio);	/* (small: collection split large folios) */
		if (folio_mapped(folio) || !migrate_device_refs_ok(folio, fault_folio)) {
			src[i] &= ~MIGRATE_PFN_MIGRATE;
			restore++;
			continue;
		}
		unmapped++;
	}
	for (unsigned long i = 0; i < npages && restore; i++) {
		struct page *page = migrate_pfn_to_page(src[i]);
		struct folio *folio;

		if (!page || (src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		folio = page_folio(page);
		remove_migration_ptes(folio, folio);
		src[i] = 0;
		if (folio != fault_folio)
			folio_unlock(folio);
		folio_put(folio);
		restore--;
	}
	return unmapped;
}

int migrate_vma_setup(struct migrate_vma *args)
{
	long nr_pages;

	args->start &= PAGE_MASK;
	args->end &= PAGE_MASK;
	nr_pages = (long)(args->end - args->start) >> PAGE_SHIFT;
	if (!args->vma || nr_pages <= 0)
		return -EINVAL;
	mmap_assert_locked(args->vma->vm_mm);
	if (args->start < args->vma->vm_start || args->start >= args->vma->vm_end ||
	    args->end <= args->vma->vm_start || args->end > args->vma->vm_end)
		return -EINVAL;
	if (!args->src || !args->dst)
		return -EINVAL;
	if (args->fault_page && !is_device_private_page(args->fault_page))
		return -EINVAL;
	memset(args->src, 0, sizeof(*args->src) * (unsigned long)nr_pages);
	args->cpages = 0;
	args->npages = 0;
	migrate_vma_collect(args);
	if (args->cpages)
		args->cpages = migrate_device_unmap(args->src, args->npages,
						    args->fault_page ?
						    page_folio(args->fault_page) : NULL);
	/* Collected pages are locked and unmapped: their contents hold still for the copy. */
	return 0;
}

/* ---- pages: the metadata moves ---- */

/* A new page in an empty slot (or the zero page's) at addr: as an anonymous fault would map it. */
static void migrate_vma_insert_page(struct migrate_vma *m, unsigned long addr, struct page *page,
				    unsigned long *src)
{
	struct vm_area_struct *vma = m->vma;
	struct mm_struct *mm = vma->vm_mm;
	struct folio *folio = page_folio(page);
	bool write = vma->vm_flags & VM_WRITE;
	pte_t *pmd, *pte, entry, orig;
	spinlock_t *ptl;

	if (vma->vm_file)
		goto abort;
	pmd = pmd_alloc(mm, addr);
	if (!pmd || pmd_leaf_or_migration(READ_ONCE(*pmd)) || pte_alloc(mm, pmd) ||
	    anon_vma_prepare(vma))
		goto abort;
	set_page_flag((struct page *)folio, PG_uptodate);
	if (folio_is_device_private(folio))	/* (writable: dirty, and so soft-dirty, as pte_mkdirty) */
		entry = write ? pte_swp_mksoft_dirty(swp_entry_to_pte(
					make_writable_device_private_entry(page_to_pfn(page)))) :
				swp_entry_to_pte(make_readable_device_private_entry(page_to_pfn(page)));
	else if (folio_is_zone_device(folio) && !folio_is_device_coherent(folio))
		goto abort;
	else
		entry = write ? pte_mkdirty(pfn_pte(page_to_pfn(page), true,
						    vma->vm_flags & VM_EXEC)) :
				pfn_pte(page_to_pfn(page), false, vma->vm_flags & VM_EXEC);
	if (!folio_is_device_private(folio) && (vma->vm_flags & VM_SOFTDIRTY))
		entry = pte_mksoft_dirty(entry);
	pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (!pte)
		goto abort;
	orig = ptep_get(pte);
	if (pte_present(orig) ? !is_zero_pfn(pte_pfn(orig)) : orig != 0) {
		pte_unmap_unlock(pte, ptl);
		goto abort;
	}
	atomic_long_inc(&mm->rss);
	folio_add_new_anon_rmap(folio, vma, addr, RMAP_EXCLUSIVE);
	folio_get(folio);	/* the mapping's */
	if (pte_present(orig)) {
		ptep_get_and_clear(mm, addr, pte);	/* the zero page goes */
		flush_tlb_mm_range(mm, addr, addr + PAGE_SIZE);
	}
	set_pte(pte, entry);
	pte_unmap_unlock(pte, ptl);
	*src = MIGRATE_PFN_MIGRATE;
	return;
abort:
	*src &= ~MIGRATE_PFN_MIGRATE;
}

static void __migrate_device_pages(unsigned long *src, unsigned long *dst, unsigned long npages,
				   struct migrate_vma *m)
{
	struct mmu_notifier_range range;
	bool notified = false;

	for (unsigned long i = 0; i < npages; i++) {
		struct page *newpage = migrate_pfn_to_page(dst[i]);
		struct page *page = migrate_pfn_to_page(src[i]);
		struct folio *newfolio, *folio;

		if (!newpage) {
			src[i] &= ~MIGRATE_PFN_MIGRATE;
			continue;
		}
		if (!page) {
			unsigned long addr;

			if (!(src[i] & MIGRATE_PFN_MIGRATE) || !m)
				continue;
			addr = m->start + (i << PAGE_SHIFT);
			if (!notified) {
				notified = true;
				mmu_notifier_range_init(&range, MMU_NOTIFY_MIGRATE, 0, m->vma->vm_mm,
							addr, m->end);
				range.owner = m->pgmap_owner;
				mmu_notifier_invalidate_range_start(&range);
			}
			migrate_vma_insert_page(m, addr, newpage, &src[i]);
			continue;
		}
		newfolio = page_folio(newpage);
		folio = page_folio(page);
		/* Only anonymous memory goes to a device (as on Linux). */
		if (folio_is_zone_device(newfolio) && !folio_test_anon(folio)) {
			src[i] &= ~MIGRATE_PFN_MIGRATE;
			continue;
		}
		if (folio_migrate_mapping(newfolio, folio,
					  m && m->fault_page == page ? 1 : 0))
			src[i] &= ~MIGRATE_PFN_MIGRATE;
		else
			folio_migrate_flags(newfolio, folio);
	}
	if (notified)
		mmu_notifier_invalidate_range_end(&range);
}

void migrate_vma_pages(struct migrate_vma *migrate)
{
	__migrate_device_pages(migrate->src, migrate->dst, migrate->npages, migrate);
}

void migrate_device_pages(unsigned long *src_pfns, unsigned long *dst_pfns, unsigned long npages)
{
	__migrate_device_pages(src_pfns, dst_pfns, npages, NULL);
}

/* ---- finalize: the entries become mappings ---- */

static void __migrate_device_finalize(unsigned long *src, unsigned long *dst,
				      unsigned long npages, struct folio *fault_folio)
{
	long moved = 0, failed = 0;

	for (unsigned long i = 0; i < npages; i++) {
		struct page *newpage = migrate_pfn_to_page(dst[i]);
		struct page *page = migrate_pfn_to_page(src[i]);
		struct folio *d = newpage ? page_folio(newpage) : NULL, *s;

		if (!page) {
			if (d) {
				folio_unlock(d);
				folio_put(d);
			}
			continue;
		}
		s = page_folio(page);
		if (!(src[i] & MIGRATE_PFN_MIGRATE) || !d) {
			if (d) {
				folio_unlock(d);
				folio_put(d);
			}
			d = s;
			failed++;
		} else {
			moved++;
		}
		remove_migration_ptes(s, d);
		if (s != fault_folio)
			folio_unlock(s);
		folio_put(s);
		if (d != s) {
			folio_unlock(d);
			folio_put(d);
		}
	}
	if (moved)
		atomic_long_add(moved, &migrate_events[PGMIGRATE_SUCCESS]);
	if (failed)
		atomic_long_add(failed, &migrate_events[PGMIGRATE_FAIL]);
}

void migrate_vma_finalize(struct migrate_vma *migrate)
{
	__migrate_device_finalize(migrate->src, migrate->dst, migrate->npages,
				  migrate->fault_page ? page_folio(migrate->fault_page) : NULL);
}

void migrate_device_finalize(unsigned long *src_pfns, unsigned long *dst_pfns,
			     unsigned long npages)
{
	__migrate_device_finalize(src_pfns, dst_pfns, npages, NULL);
}

/* ---- eviction: a range of device frames, wherever they are mapped ---- */

int migrate_device_range(unsigned long *src_pfns, unsigned long start, unsigned long npages)
{
	for (unsigned long i = 0; i < npages; i++) {
		struct page *page = pfn_to_page(start + i);
		struct folio *folio;

		src_pfns[i] = 0;
		if (!page || PageTail(page))
			continue;
		folio = page_folio(page);
		if (!folio_try_get(folio))	/* free */
			continue;
		if (!folio_trylock(folio)) {
			folio_put(folio);
			continue;
		}
		src_pfns[i] = migrate_pfn(start + i) | MIGRATE_PFN_MIGRATE;
	}
	migrate_device_unmap(src_pfns, npages, NULL);
	return 0;
}

/*
 * A device-coherent folio that must leave device memory (a FOLL_LONGTERM
 * pin): moved to a new page of system memory, wherever it is mapped. The
 * caller's reference goes with it (to the new folio's mappings on
 * success, dropped otherwise). 0, or -EBUSY (locked, pinned, no memory).
 */
int migrate_device_coherent_folio(struct folio *folio)
{
	unsigned long src, dst = 0;
	struct folio *dfolio;

	VM_BUG_ON_FOLIO(folio_test_large(folio) || !folio_is_device_coherent(folio), folio);
	folio_lock(folio);
	src = migrate_pfn(folio_pfn(folio)) | MIGRATE_PFN_MIGRATE;
	migrate_device_unmap(&src, 1, NULL);	/* (on failure it unlocked the folio and dropped our reference) */
	if (!(src & MIGRATE_PFN_MIGRATE))
		return -EBUSY;
	dfolio = folio_alloc(GFP_USER | __GFP_NOWARN, 0, NUMA_NO_NODE);
	if (dfolio) {
		folio_lock(dfolio);
		dst = migrate_pfn(folio_pfn(dfolio));
	}
	migrate_device_pages(&src, &dst, 1);
	if ((src & MIGRATE_PFN_MIGRATE) && copy_mc_highpages(folio_page(dfolio, 0),
							     folio_page(folio, 0), 1))
		src &= ~MIGRATE_PFN_MIGRATE;	/* (the metadata moved; the mappings go back to src) */
	migrate_device_finalize(&src, &dst, 1);
	return (src & MIGRATE_PFN_MIGRATE) ? 0 : -EBUSY;
}
