/*
 * The user fault path (docs/mm/faults.md, docs/mm/thp.md):
 *   - a read of an anonymous page never touched maps the shared zero page,
 *     read-only;
 *   - a write to an untouched anonymous page maps a new zeroed folio of the
 *     largest enabled order that fits (a 2 MiB folio by one PMD, or a
 *     16 KiB..1 MiB folio by a run of PTEs), falling back order by order
 *     down to one page;
 *   - a write to a read-only anonymous page reuses it when it is
 *     exclusive, or a small folio this process alone maps; otherwise it
 *     copies the one page (copy-on-write; a page of a large folio shared
 *     since fork is always copied, as on Linux 6.12);
 *   - file pages come from the page cache (filemap.c);
 *   - anything outside a VMA, or against its permissions, is -EFAULT, which
 *     the caller turns into SIGSEGV.
 * Unmapping is in zap.c, fork's copy in fork_copy.c, mprotect in
 * mprotect.c, PMD mappings and splitting in huge_memory.c.
 */
#include <quire/mmap.h>
#include <quire/mmu_notifier.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/printk.h>
#include <quire/huge_mm.h>
#include <quire/numa.h>
#include <quire/smp.h>
#include <quire/errno.h>
#include <quire/panic.h>
#include <asm/pgtable.h>
#include <quire/string.h>
#include <quire/slab.h>
#include <quire/fs.h>
#include <quire/pagemap.h>
#include <quire/mempolicy.h>
#include <quire/migrate.h>
#include <quire/copy_mc.h>

static struct page *zero_page;

void zero_page_init(void)
{
	zero_page = alloc_pages(__GFP_ZERO, 0);
	if (!zero_page)
		panic("zero_page_init: no memory for the zero page");
	huge_zero_page_init();
}

bool is_zero_pfn(unsigned long pfn)
{
	return zero_page && pfn == page_to_pfn(zero_page);
}

pte_t zero_page_pte(struct vm_area_struct *vma)
{
	return pfn_pte(page_to_pfn(zero_page), false, vma->vm_flags & VM_EXEC);
}

void flush_tlb_mm_range(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	count_mm_cost(MM_COST_TLB_FLUSHES);
	/*
	 * A read-modify-write of mm->cpus, not a plain load: the entries
	 * cleared before this call are ordered before it, so a GUP-fast
	 * walker that joins mm->cpus (mm/gup.c) afterwards sees them
	 * cleared, and one that joined before gets the IPI, which waits for
	 * its walk to end. Page tables are freed only after this returns.
	 */
	flush_tlb_mask_range(__atomic_fetch_or(&mm->cpus, 0, __ATOMIC_SEQ_CST), start, end);
}

int folio_pte_batch(struct folio *folio, pte_t *ptep, pte_t pte, int max_nr)
{
	return rmap_batching ? folio_pte_run(folio, ptep, pte, max_nr) : 1;
}

int folio_pte_run(struct folio *folio, pte_t *ptep, pte_t pte, int max_nr)
{
	unsigned long folio_end = folio_pfn(folio) + folio_nr_pages(folio);
	pte_t expect = pte_batch_bits(pte);
	int nr = 1;

	if (!folio_test_large(folio))
		return 1;
	if ((unsigned long)max_nr > folio_end - pte_pfn(pte))
		max_nr = (int)(folio_end - pte_pfn(pte));
	while (nr < max_nr) {
		expect = pte_next_pfn(expect);	/* the next page's frame, same bits */
		if (pte_batch_bits(ptep_get(ptep + nr)) != expect)
			break;
		nr++;
	}
	return nr;
}

static bool vma_allows(const struct vm_area_struct *vma, unsigned int flags)
{
	if (flags & FAULT_FLAG_WRITE)
		return vma->vm_flags & VM_WRITE;
	if (flags & FAULT_FLAG_INSTRUCTION)
		return vma->vm_flags & VM_EXEC;
	return vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC);
}

/*
 * Grow a stack VMA down to cover addr, within the stack limit. It changes
 * the VMA's bounds, so mmap_lock is held for writing (as Linux 6.12): two
 * threads faulting below the stack at once must not both move vm_start.
 */
static struct vm_area_struct *expand_stack(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma = find_vma(mm, addr);
	struct vm_area_struct *prev;
	unsigned long start = ALIGN_DOWN(addr, PAGE_SIZE);

	mmap_assert_write_locked(mm);
	if (!vma || !(vma->vm_flags & VM_GROWSDOWN) || addr >= vma->vm_start)
		return vma && addr >= vma->vm_start ? vma : NULL;
	if (vma->vm_end - start > STACK_SIZE_MAX)
		return NULL;
	/* Keep a guard gap of one page above the previous mapping. */
	prev = vma->vm_list.prev != &mm->vmas ?
	       list_entry(vma->vm_list.prev, struct vm_area_struct, vm_list) : NULL;
	if (prev && start < prev->vm_end + PAGE_SIZE)
		return NULL;
	/* Anonymous page offsets stay tied to addresses (folio->index). */
	vma_rmap_lock(vma);
	vma->vm_pgoff -= (vma->vm_start - start) >> PAGE_SHIFT;
	vma->vm_start = start;
	vma_rmap_unlock(vma);
	return vma;
}

static pte_t mk_pte(struct vm_area_struct *vma, struct page *page, bool write)
{
	return pfn_pte(page_to_pfn(page), write, vma->vm_flags & VM_EXEC);
}

/* A new zeroed order-0 anonymous folio for addr of vma (where the policy says). */
static struct folio *alloc_anon_page(struct vm_area_struct *vma, unsigned long addr)
{
	return mpol_folio_alloc(__GFP_ZERO | __GFP_MOVABLE, 0, vma, addr);
}

/*
 * A fault on a file VMA's page that is not mapped yet. The page-cache folio
 * is found or created (filemap_fault_folio: a hole in ramfs reads as
 * zeroes, as on Linux). Shared mappings map it, writable when the VMA is;
 * private ones map it read-only for reading, or take a private (anonymous)
 * copy for writing. Past the end of the file is -EIO (SIGBUS), checked
 * again under the page-table lock, so a racing truncate (which sets the
 * size before it unmaps) never leaves a page mapped beyond the end.
 * mmap_lock is held for reading; -EAGAIN: *pmd changed, fault again.
 */
static int file_fault(struct mm_struct *mm, struct vm_area_struct *vma, pte_t *pmd,
		      unsigned long addr, bool write)
{
	struct inode *inode = file_inode(vma->vm_file);
	struct address_space *mapping = vma->vm_file->f_mapping;
	unsigned long idx = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);
	bool shared = vma->vm_flags & VM_SHARED;
	struct folio *folio, *copy = NULL;
	spinlock_t *ptl;
	pte_t *pte;
	int ret = 0;

	mmap_assert_locked(mm);

	if (!filemap_index_in_file(inode, idx))
		return -EIO;
	if (write && !shared && anon_vma_prepare(vma))
		return -ENOMEM;
	ret = filemap_fault_folio(vma->vm_file, idx, &folio);
	if (ret)
		return ret;
	if (PageHWPoison(folio_page(folio, 0))) {	/* kept in the cache, never mapped again */
		folio_put(folio);
		return -EHWPOISON;
	}
	/* Held until the PTE is in: truncate cannot take the folio out meanwhile. */
	folio_lock(folio);
	if (write && !shared) {
		/* The private copy, machine-check-safe: a poisoned source is SIGBUS, not a panic. */
		copy = mpol_folio_alloc(__GFP_MOVABLE, 0, vma, addr);
		ret = !copy ? -ENOMEM :
		      copy_mc_user_highpage(folio_page(copy, 0), folio_page(folio, 0), addr, vma) ?
		      -EHWPOISON : 0;
		if (ret) {
			if (copy)
				folio_put(copy);
			folio_unlock(folio);
			folio_put(folio);
			return ret;
		}
	}
	pte = pte_alloc(mm, pmd) ? NULL : pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (!pte) {
		ret = READ_ONCE(*pmd) ? -EAGAIN : -ENOMEM;
	} else if (!filemap_index_in_file(inode, idx) || folio->mapping != mapping) {
		ret = -EIO;		/* truncated meanwhile */
	} else if (!pte_present(*pte)) {
		if (copy) {
			/* Release: the copy's bytes before the mapping. */
			/* (Read-only under FOLL_FORCE on a read-only VMA, as Linux.) */
			set_pte_release(pte, mk_pte(vma, folio_page(copy, 0),
						    vma->vm_flags & VM_WRITE));
			folio_add_new_anon_rmap(copy, vma, addr, RMAP_EXCLUSIVE);
			copy = NULL;		/* the mapping keeps our reference */
		} else {
			set_pte(pte, mk_pte(vma, folio_page(folio, 0),
					    shared && (vma->vm_flags & VM_WRITE)));
			folio_add_file_rmap_pte(folio, folio_page(folio, 0), vma);
			folio_get(folio);	/* the mapping's; ours goes below */
		}
		atomic_long_inc(&mm->rss);
	}
	if (pte)
		pte_unmap_unlock(pte, ptl);
	folio_unlock(folio);
	if (copy)
		folio_put(copy);
	folio_put(folio);
	return ret;
}

/* Are the nr PTEs from pte on all empty? (Also a peek without the lock.) */
static bool ptes_none(pte_t *pte, unsigned long nr)
{
	for (unsigned long i = 0; i < nr; i++)
		if (ptep_get(pte + i))
			return false;
	return true;
}

/*
 * The largest allowed order below PMD size whose naturally aligned block
 * around addr lies in the VMA, with every PTE empty, and can be allocated
 * on this node; order 0 last (any node). Counts each order's success or
 * fallback. NULL: no memory at all.
 */
static struct folio *alloc_anon_folio(struct vm_area_struct *vma, unsigned long addr,
				      pte_t *pte0)
{
	unsigned long orders = thp_vma_allowable_orders(vma->vm_flags) &
			       ((1UL << HPAGE_PMD_ORDER) - 1);

	for (int order = HPAGE_PMD_ORDER - 1; order >= THP_ORDER_MIN; order--) {
		unsigned long nr = 1UL << order, start = ALIGN_DOWN(addr, PAGE_SIZE * nr);
		struct folio *folio;

		if (!(orders & (1UL << order)))
			continue;
		if (start < vma->vm_start || start + PAGE_SIZE * nr > vma->vm_end ||
		    !ptes_none(pte0 - ((addr - start) >> PAGE_SHIFT), nr))
			continue;
		folio = mpol_folio_alloc(__GFP_ZERO | __GFP_MOVABLE | __GFP_THISNODE | __GFP_NOWARN,
					 order, vma, start);
		if (folio) {
			count_mthp_stat(order, MTHP_STAT_ANON_FAULT_ALLOC);
			return folio;
		}
		count_mthp_stat(order, MTHP_STAT_ANON_FAULT_FALLBACK);
	}
	return alloc_anon_page(vma, addr);
}

/*
 * A write to an anonymous page not mapped yet: a new folio. *pmd is a page
 * table (the caller made sure); -EAGAIN: it is not any more, fault again.
 */
static int do_anonymous_page(struct mm_struct *mm, struct vm_area_struct *vma, pte_t *pmd,
			     unsigned long addr)
{
	struct folio *folio;
	unsigned long nr, start;
	spinlock_t *ptl;
	pte_t *pte;
	int ret = 0;

	mmap_assert_locked(mm);
	if (anon_vma_prepare(vma))
		return -ENOMEM;
	/*
	 * Peek at the page table to choose an order (rechecked under the
	 * lock). The table stays while mmap_lock is held; only *pmd may change.
	 */
	pte = pte_offset(pmd, addr);
	folio = alloc_anon_folio(vma, addr, pte);
	if (!folio)
		return -ENOMEM;
	nr = folio_nr_pages(folio);
	start = ALIGN_DOWN(addr, PAGE_SIZE * nr);
	pte = pte_offset_map_lock(mm, pmd, start, &ptl);
	if (!pte) {
		folio_put(folio);
		return -EAGAIN;
	}
	if (ptes_none(pte, nr)) {
		/* Release: the folio's zeroes before the mapping (Linux: __folio_mark_uptodate). */
		set_ptes_release(mm, start, pte,
				 mk_pte(vma, folio_page(folio, 0), vma->vm_flags & VM_WRITE),
				 (unsigned int)nr);
		if (nr > 1)
			folio_ref_add(folio, (int)nr - 1);	/* one reference per PTE */
		folio_add_new_anon_rmap(folio, vma, start, RMAP_EXCLUSIVE);
		atomic_long_add(nr, &mm->rss);
		folio = NULL;
	}
	pte_unmap_unlock(pte, ptl);
	if (folio)
		folio_put(folio);	/* someone else filled the range */
	return ret;
}

/* What do_wp_page did. */
enum wp_result {
	WP_REUSED,		/* the page itself became writable */
	WP_COPIED,		/* copy now maps there (the caller's reference went with it) */
	WP_NEED_COPY,		/* a copy is needed and copy was NULL: allocate, come back */
	WP_HWPOISON,		/* the source page is poisoned: nothing changed, copy unused */
};

/*
 * A write to a present, read-only PTE of a writable private VMA. An
 * anonymous page marked PageAnonExclusive becomes writable in place, and
 * so does a small anonymous folio this process owns alone. A page of a
 * large folio that is not exclusive (shared since fork, even when the
 * other process has gone) is copied, as Linux 6.12's
 * wp_can_reuse_anon_folio does; so is anything else (a page-cache page,
 * the zero page). PTE-table lock held; returns with it held. *old_out:
 * the folio whose reference the caller drops after the TLB flush.
 */
static enum wp_result do_wp_page(struct vm_area_struct *vma, unsigned long addr, pte_t *pte,
				 struct folio *copy, struct folio **old_out, unsigned int flags)
{
	/*
	 * An unshare (GUP's read-only pin of a shared page), or a FOLL_FORCE
	 * write to a read-only VMA, makes the page exclusive but leaves the
	 * entry read-only.
	 */
	bool writable = (flags & FAULT_FLAG_WRITE) && (vma->vm_flags & VM_WRITE);
	pte_t entry = ptep_get(pte);
	unsigned long pfn = pte_pfn(entry);
	struct page *page = is_zero_pfn(pfn) ? NULL : pfn_to_page(pfn);
	struct folio *folio = page ? page_folio(page) : NULL;

	bool reuse = false;

	if (folio && folio_test_anon(folio) && PageAnonExclusive(page)) {
		reuse = true;
	} else if (folio && folio_test_anon(folio) && !folio_test_large(folio) &&
		   folio_trylock(folio)) {
		/* As Linux: decide with the folio locked; if someone holds it, copy. */
		reuse = folio_mapped_by_us_only(folio);
		folio_unlock(folio);
	}
	if (reuse) {
		if (writable)
			entry = pte_mkwrite(entry);
		if (flags & FAULT_FLAG_WRITE)
			entry = pte_mkdirty(entry);
		ptep_set_access_flags(vma, addr, pte, pte_mkyoung(entry), true);
		SetPageAnonExclusive(page);
		return WP_REUSED;
	}
	if (!copy)
		return WP_NEED_COPY;
	/*
	 * Machine-check-safe, as Linux's __wp_page_copy_user: a poisoned
	 * source stops the copy, its frame is queued for memory_failure(),
	 * and the fault fails with -EHWPOISON (SIGBUS BUS_MCEERR_AR), the
	 * old mapping left as it was.
	 */
	if (page && copy_mc_user_highpage(folio_page(copy, 0), page, addr & PAGE_MASK, vma))
		return WP_HWPOISON;
	if (!page)
		memset(folio_address(copy), 0, PAGE_SIZE);
	/*
	 * Release: the copy's bytes before the mapping. One store over the old
	 * entry, no xchg: it is not writable, so the MMU can only have set its
	 * A bit, which nobody needs once the old page is unmapped.
	 */
	entry = mk_pte(vma, folio_page(copy, 0), writable);
	set_pte_release(pte, (flags & FAULT_FLAG_WRITE) ? pte_mkdirty(entry) : entry);
	folio_add_new_anon_rmap(copy, vma, addr & PAGE_MASK, RMAP_EXCLUSIVE);
	if (folio) {
		folio_remove_rmap_pte(folio, page, vma);
		*old_out = folio;	/* its reference goes after the flush */
	} else {
		atomic_long_inc(&vma->vm_mm->rss);	/* the zero page was not counted */
	}
	return WP_COPIED;
}

/*
 * The PTE-level fault on an anonymous (or private file COW) page. *pmd is
 * not a 2 MiB leaf when called; -EAGAIN: it became one (or the table went
 * away) meanwhile, fault again.
 */
/* Has a write (or unshare) fault at this present entry nothing left to do? */
static bool wp_done(struct vm_area_struct *vma, pte_t entry, unsigned int flags)
{
	struct page *page;

	if ((flags & FAULT_FLAG_WRITE) && (vma->vm_flags & VM_WRITE))
		return pte_write(entry);
	if (is_zero_pfn(pte_pfn(entry)))
		return false;
	page = pfn_to_page(pte_pfn(entry));
	return folio_test_anon(page_folio(page)) && PageAnonExclusive(page);
}

static int handle_pte_fault(struct mm_struct *mm, struct vm_area_struct *vma, pte_t *pmd,
			    unsigned long addr, unsigned int flags)
{
	bool write = flags & FAULT_FLAG_WRITE, cow = write || (flags & FAULT_FLAG_UNSHARE);
	struct folio *copy = NULL, *old = NULL;
	struct mmu_notifier_range range;
	enum wp_result wp;
	bool flush = false, notified = false;
	spinlock_t *ptl;
	pte_t *pte;
	int ret = 0;

	if (pte_alloc(mm, pmd))
		return -ENOMEM;
	if (!cow) {
		pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
		if (!pte)
			return -EAGAIN;
		if (!ptep_get(pte))
			set_pte(pte, mk_pte(vma, zero_page, false));
		pte_unmap_unlock(pte, ptl);
		return 0;
	}
	if (!pmd_is_table(READ_ONCE(*pmd)))
		return -EAGAIN;			/* a leaf (or a PMD migration entry) meanwhile */
	pte = pte_offset(pmd, addr);		/* a peek: rechecked under the lock */
	if (!pte_present(READ_ONCE(*pte)))	/* (a file page zapped meanwhile: fault again) */
		return vma->vm_file || !write ? 0 : do_anonymous_page(mm, vma, pmd, addr);
	for (;;) {
		pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
		if (!pte) {
			ret = -EAGAIN;
			break;
		}
		if (!pte_present(*pte) || wp_done(vma, *pte, flags)) {
			pte_unmap_unlock(pte, ptl);
			break;		/* resolved meanwhile, or unmapped: retry from the top */
		}
		wp = do_wp_page(vma, addr, pte, copy, &old, flags);
		pte_unmap_unlock(pte, ptl);
		if (wp == WP_NEED_COPY) {
			if (anon_vma_prepare(vma))
				return -ENOMEM;
			/* Not zeroed: do_wp_page fills it (a copy, or zeroes for the zero page). */
			copy = mpol_folio_alloc(__GFP_MOVABLE, 0, vma, addr);
			if (!copy)
				return -ENOMEM;
			/* The entry will name the copy: a device must forget the old page. */
			mmu_notifier_start(&range, MMU_NOTIFY_CLEAR, mm, addr & PAGE_MASK,
					   (addr & PAGE_MASK) + PAGE_SIZE);
			notified = true;
			continue;
		}
		if (wp == WP_HWPOISON) {
			ret = -EHWPOISON;	/* copy is put below */
			break;
		}
		if (wp == WP_COPIED)
			copy = NULL;
		flush = true;
		break;
	}
	if (flush)
		flush_tlb_mm_range(mm, addr & PAGE_MASK, (addr & PAGE_MASK) + PAGE_SIZE);
	if (notified)
		mmu_notifier_invalidate_range_end(&range);
	if (copy)
		folio_put(copy);
	if (old)
		folio_put(old);
	return ret;
}

/*
 * A fault on a swap entry. hwpoison (the page had a memory error):
 * -EHWPOISON, which the arch turns into SIGBUS BUS_MCEERR_AR. A migration
 * entry: wait until the migration unlocks its folio, then fault again
 * (Linux's migration_entry_wait). A device-private entry: the page's owner
 * moves it back to RAM (mm/device_entries.c); a device-exclusive entry:
 * the present PTE comes back. Gone meanwhile (zapped): fault again.
 */
static int do_swap_page(struct vm_area_struct *vma, pte_t *pmd, unsigned long addr,
			unsigned int flags)
{
	spinlock_t *ptl;
	pte_t *pte = pte_offset_map_lock(vma->vm_mm, pmd, addr, &ptl), entry;
	swp_entry_t e;

	if (!pte)
		return -EAGAIN;
	entry = ptep_get(pte);
	pte_unmap_unlock(pte, ptl);
	if (!is_swap_pte(entry))
		return -EAGAIN;
	e = pte_to_swp_entry(entry);
	if (is_hwpoison_entry(e))
		return -EHWPOISON;
	if (is_migration_entry(e)) {
		/*
		 * No reference taken (it would make the migration fail its
		 * reference count check): the memmap entry stays, whatever
		 * becomes of the folio, and a folio unlocked, freed and reused
		 * meanwhile only makes this a short wait on someone else's lock.
		 */
		migration_entry_wait_on_locked(e);
		return -EAGAIN;
	}
	if (is_device_private_entry(e))
		return device_private_entry_fault(vma, pmd, addr, flags, entry);
	if (is_device_exclusive_entry(e))
		return device_exclusive_entry_fault(vma, pmd, addr, entry);
	pr_err("fault at %#lx: unknown swap entry %#llx\n", addr, (unsigned long long)entry);
	return -EFAULT;
}

/* Is a 2 MiB PMD fault possible here: anonymous private, allowed, aligned inside the VMA? */
static bool pmd_fault_allowed(struct vm_area_struct *vma, unsigned long addr)
{
	unsigned long haddr = ALIGN_DOWN(addr, PMD_SIZE);

	return !vma->vm_file && haddr >= vma->vm_start && haddr + PMD_SIZE <= vma->vm_end &&
	       (thp_vma_allowable_orders(vma->vm_flags) & (1UL << HPAGE_PMD_ORDER));
}

/* A write to a present page of a shared file mapping: the page-cache page itself. */
static int shared_file_write(struct mm_struct *mm, struct vm_area_struct *vma, pte_t *pmd,
			     unsigned long addr)
{
	spinlock_t *ptl;
	pte_t *p = pte_offset_map_lock(mm, pmd, addr, &ptl), entry;

	if (!p)
		return -EAGAIN;
	entry = ptep_get(p);
	if (pte_present(entry))
		ptep_set_access_flags(vma, addr, p, pte_mkdirty(pte_mkwrite(pte_mkyoung(entry))),
				      true);
	pte_unmap_unlock(p, ptl);
	flush_tlb_mm_range(mm, addr & PAGE_MASK, (addr & PAGE_MASK) + PAGE_SIZE);
	return 0;
}

/*
 * The fault below the VMA checks, mmap_lock held for reading. Another CPU
 * may fill or split the same PMD at any time: each step rechecks under the
 * lock it takes and says -EAGAIN when what it saw changed; the caller
 * starts over from the PMD.
 */
static int __handle_mm_fault(struct mm_struct *mm, struct vm_area_struct *vma, pte_t *pmd,
			     unsigned long addr, unsigned int flags)
{
	bool write = flags & FAULT_FLAG_WRITE, cow = write || (flags & FAULT_FLAG_UNSHARE);
	bool writable = write && (vma->vm_flags & VM_WRITE);
	pte_t *p;

	mmap_assert_locked(mm);
	if (is_pmd_migration_entry(READ_ONCE(*pmd))) {
		/* A THP being migrated: wait until its folio is unlocked, then fault again. */
		pmd_migration_entry_wait(mm, pmd);
		return -EAGAIN;
	}
	/*
	 * A write maps a THP (a forced write of a read-only VMA too: mapped
	 * read-only, dirty); a read the huge zero page, as Linux.
	 */
	if (!READ_ONCE(*pmd) &&
	    (write || (!cow && !(vma->vm_flags & VM_SHARED) && thp_use_zero_page())) &&
	    pmd_fault_allowed(vma, addr)) {
		vm_fault_t huge = do_huge_pmd_anonymous_page(vma, addr, pmd, write);

		if (huge != VM_FAULT_FALLBACK)
			return huge == VM_FAULT_OOM ? -ENOMEM : 0;
	}
	if (pmd_leaf(READ_ONCE(*pmd)) && cow && !writable) {
		/*
		 * An unshare or a forced write of a PMD mapping: by PTEs
		 * (Linux reuses an exclusive PMD in place; Quire splits it,
		 * and the PTE path reuses or copies each page).
		 */
		split_huge_pmd(vma, addr);
		return -EAGAIN;
	}
	if (pmd_leaf(READ_ONCE(*pmd))) {
		if (write && !pte_write(READ_ONCE(*pmd)) &&
		    do_huge_pmd_wp_page(vma, addr, pmd) == VM_FAULT_DONE)
			return 0;
		if (pmd_leaf(READ_ONCE(*pmd)))
			return 0;	/* a read of a present PMD, or writable meanwhile */
	}
	/*
	 * The peeks below read a page table only where the PMD points to one:
	 * a leaf may have become a PMD migration entry since the check above.
	 */
	if (pmd_is_table(READ_ONCE(*pmd)) &&
	    is_swap_pte(ptep_get(pte_offset(pmd, addr))))	/* a peek: do_swap_page rechecks */
		return do_swap_page(vma, pmd, addr, flags);
	if (is_swap_pmd(READ_ONCE(*pmd)))
		return -EAGAIN;		/* a PMD migration entry since: wait for it above */
	if (vma->vm_file) {
		p = pmd_is_table(READ_ONCE(*pmd)) ? pte_offset(pmd, addr) : NULL;	/* a peek */
		if (!p || !pte_present(READ_ONCE(*p)))
			return file_fault(mm, vma, pmd, addr, write);
		if (!cow)
			return 0;	/* present: nothing to do for a read */
		if (vma->vm_flags & VM_SHARED)	/* (never unshared: the page is the file's) */
			return write ? shared_file_write(mm, vma, pmd, addr) : 0;
		/* A private write to a present page: copy-on-write below. */
	}
	return handle_pte_fault(mm, vma, pmd, addr, flags);
}

int handle_mm_fault_locked(struct vm_area_struct *vma, unsigned long addr, unsigned int flags)
{
	pte_t *pmd = pmd_alloc(vma->vm_mm, addr);
	int ret;

	do {
		ret = pmd ? __handle_mm_fault(vma->vm_mm, vma, pmd, addr, flags) : -ENOMEM;
	} while (ret == -EAGAIN);
	return ret;
}

int handle_mm_fault(struct mm_struct *mm, unsigned long addr, unsigned int flags)
{
	struct vm_area_struct *vma;
	int ret;

	if (addr >= USER_TOP)
		return -EFAULT;
	down_read(&mm->mmap_lock);
	vma = find_vma(mm, addr);
	if (vma && addr < vma->vm_start && (vma->vm_flags & VM_GROWSDOWN)) {
		/* Stack growth: retake the lock for writing, then look again from scratch. */
		up_read(&mm->mmap_lock);
		down_write(&mm->mmap_lock);
		expand_stack(mm, addr);
		up_write(&mm->mmap_lock);
		down_read(&mm->mmap_lock);
		vma = find_vma(mm, addr);
	}
	if (!vma || addr < vma->vm_start) {
		up_read(&mm->mmap_lock);
		return -EFAULT;		/* nothing mapped there: SEGV_MAPERR */
	}
	if (!vma_allows(vma, flags)) {
		up_read(&mm->mmap_lock);
		return -EACCES;		/* mapped, but not for this access: SEGV_ACCERR */
	}
	ret = handle_mm_fault_locked(vma, addr, flags & ~FAULT_FLAG_UNSHARE);
	up_read(&mm->mmap_lock);
	return ret;
}
