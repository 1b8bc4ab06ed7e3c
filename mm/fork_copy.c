/*
 * fork: a copy of the address space (dup_mm). Every VMA is copied (not
 * those under MADV_DONTFORK) and linked to the anon_vmas of its parent
 * (anon_vma_fork); the page tables of those with anonymous memory are
 * copied (the others are faulted in again: vma_needs_copy), and every
 * mapping copied is shared: one more mapping and one more
 * reference per entry, and in private VMAs both sides lose write access, so
 * the first write on either side copies (memory.c). Runs of PTEs that map
 * consecutive pages of one folio are duplicated with one rmap call
 * (folio_pte_batch); a PMD mapping stays one PMD. A page that may be
 * pinned for DMA is never shared: the child gets a copy at once. One TLB
 * flush for the parent at the end.
 *
 * Two page-table locks at once: the parent's table's, then the child's
 * (docs/locking.md). The child's tables are new and the parent's mmap_lock
 * is held for writing, so nobody else waits on them in the other order;
 * rmap walkers take one page-table lock at a time.
 */
#include <quire/mmap.h>
#include <quire/mmu_notifier.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/huge_mm.h>
#include <quire/numa.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/copy_mc.h>

void (*fork_share_hook)(unsigned long addr);

/*
 * The child gets its own copy of one exclusive, maybe-pinned page. The copy
 * is machine-check-safe (as Linux's copy_present_page): a poisoned source
 * queues its frame for memory_failure() and fails the fork with -EHWPOISON.
 */
static int copy_present_page(struct vm_area_struct *dst_vma, pte_t *dst, pte_t src,
			     struct page *page, unsigned long addr)
{
	struct folio *copy = folio_alloc(__GFP_MOVABLE | __GFP_NOWARN, 0, numa_node_id());
	pte_t entry;

	if (!copy)
		return -ENOMEM;
	if (copy_mc_user_highpage(folio_page(copy, 0), page, addr, dst_vma)) {
		folio_put(copy);
		return -EHWPOISON;
	}
	entry = pfn_pte(folio_pfn(copy), pte_write(src), pte_exec(src));
	if (pte_protnone(src))
		entry = pte_mkprotnone(entry);
	/* Release: the copy's bytes before the mapping (the child's table may be live). */
	set_pte_release(dst, entry);
	folio_add_new_anon_rmap(copy, dst_vma, addr, RMAP_EXCLUSIVE);
	atomic_long_inc(&dst_vma->vm_mm->rss);
	return 0;
}

/*
 * A page being migrated: the child gets the entry too (it counts in rss;
 * the restore maps the new page in both). In a private mapping a writable
 * or exclusive entry becomes a plain read-only one on both sides: the page
 * is shared from now on, and the first write copies it, as after any fork.
 */
/*
 * The entry both sides keep: in a private mapping a writable or exclusive
 * migration entry becomes a plain readable one (the same at either level:
 * a PMD's entry has the PTE format).
 */
static pte_t forked_migration_entry(struct vm_area_struct *src_vma, pte_t entry)
{
	swp_entry_t e = pte_to_swp_entry(entry), r;

	if ((src_vma->vm_flags & VM_SHARED) ||
	    !(is_writable_migration_entry(e) || is_readable_exclusive_migration_entry(e)))
		return entry;
	r = make_readable_migration_entry(swp_offset_pfn(e));
	if (is_migration_entry_young(e))
		r = make_migration_entry_young(r);
	if (is_migration_entry_dirty(e))
		r = make_migration_entry_dirty(r);
	return pte_swp_soft_dirty(entry) ? pte_swp_mksoft_dirty(swp_entry_to_pte(r)) :
					   swp_entry_to_pte(r);
}

static void copy_migration_entry(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
				 pte_t *dst, pte_t *src, pte_t entry)
{
	pte_t kept = forked_migration_entry(src_vma, entry);

	if (kept != entry)
		set_pte(src, kept);
	set_pte(dst, kept);
	atomic_long_inc(&dst_vma->vm_mm->rss);
}

/* Copy the PTEs of [addr, end) (one page table; both PTE tables' locks held). */
static int copy_ptes(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
		     pte_t *dst, pte_t *src, unsigned long addr, unsigned long end)
{
	struct mm_struct *dst_mm = dst_vma->vm_mm;
	bool cow = !(src_vma->vm_flags & VM_SHARED);

	while (addr < end) {
		pte_t entry = ptep_get(src);
		struct page *page;
		struct folio *folio;
		int nr;

		if (is_device_mapping_pte(entry) &&
		    is_device_exclusive_entry(pte_to_swp_entry(entry))) {
			/* The device gives its exclusive access back; copied as present below. */
			restore_exclusive_pte(src_vma, src, addr);
			entry = ptep_get(src);
		} else if (is_device_mapping_pte(entry)) {
			copy_device_entry(dst_vma, src_vma, dst, src, addr);
			src++, dst++, addr += PAGE_SIZE;
			continue;
		}
		if (!pte_has_page(entry)) {
			if (is_migration_pte(entry))
				copy_migration_entry(dst_vma, src_vma, dst, src, entry);
			else if (is_swap_pte(entry))
				set_pte(dst, entry);	/* a hwpoison entry: the child's access is SIGBUS too */
			src++, dst++, addr += PAGE_SIZE;
			continue;
		}
		if (is_zero_pfn(pte_pfn(entry))) {
			set_pte(dst, entry);
			src++, dst++, addr += PAGE_SIZE;
			continue;
		}
		page = pfn_to_page(pte_pfn(entry));
		folio = page_folio(page);
		nr = folio_pte_batch(folio, src, entry, (int)((end - addr) >> PAGE_SHIFT));
		if (folio_test_anon(folio)) {
			if (folio_try_dup_anon_rmap_ptes(folio, page, nr, dst_vma, src_vma)) {
				/* A pinned page: retry one by one; a pinned one is copied. */
				nr = 1;
				if (folio_try_dup_anon_rmap_pte(folio, page, dst_vma, src_vma)) {
					int err = copy_present_page(dst_vma, dst, entry, page, addr);

					if (err)
						return err;
					src++, dst++, addr += PAGE_SIZE;
					continue;
				}
			}
			/* Shared from now on: its pages are no longer anon-exclusive. */
			if (fork_share_hook)
				fork_share_hook(addr);
		} else {
			folio_dup_file_rmap_ptes(folio, page, nr, dst_vma);
		}
		folio_ref_add(folio, nr);
		/*
		 * Each parent PTE loses write access atomically (another thread
		 * of the parent may be writing through it: its MMU sets D), then
		 * the child gets what it holds, D included. One loop per case:
		 * wrprotect_ptes and then a copy loop cost up to 4 instructions a
		 * page more in the rmap benchmark (14 with 4K folios), one loop
		 * testing cow inside 3 (docs/bench.md).
		 */
		if (cow) {
			for (int i = 0; i < nr; i++) {
				ptep_set_wrprotect(src_vma->vm_mm, addr, src + i);
				set_pte(dst + i, ptep_get(src + i));
			}
		} else {
			for (int i = 0; i < nr; i++)
				set_pte(dst + i, ptep_get(src + i));
		}
		atomic_long_add(nr, &dst_mm->rss);
		src += nr, dst += nr, addr += (unsigned long)nr << PAGE_SHIFT;
	}
	return 0;
}

/*
 * The PTEs of one 2 MiB block [addr, end), under the parent's table's lock.
 * Where the child has no table yet, a new one is filled before anyone can
 * see it and then installed under the child's PMD lock; otherwise the
 * child's table's lock is taken (after the parent's).
 */
static int copy_pte_range(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
			  pte_t *dst_pmd, pte_t *src_pmd, unsigned long addr, unsigned long end)
{
	struct mm_struct *dst_mm = dst_vma->vm_mm;
	struct page *table = READ_ONCE(*dst_pmd) ? NULL : pagetable_alloc();
	spinlock_t *src_ptl, *dst_ptl;
	pte_t *src, *dst;
	int err;

	if (!table && !READ_ONCE(*dst_pmd))
		return -ENOMEM;
	src = pte_offset_map_lock(src_vma->vm_mm, src_pmd, addr, &src_ptl);
	if (!src) {
		if (table)
			pagetable_free(table);
		return 0;	/* a leaf again (cannot happen under the parent's mmap_lock) */
	}
	if (table) {
		dst = (pte_t *)page_address(table) + ((addr >> PAGE_SHIFT) & 511);
		err = copy_ptes(dst_vma, src_vma, dst, src, addr, end);
		/* Even after an error: the entries copied so far are counted in the rmap. */
		dst_ptl = pmd_lock(dst_mm, dst_pmd);
		pmd_populate(dst_pmd, page_to_phys(table));	/* release: its entries first */
		spin_unlock(dst_ptl);
	} else {
		dst = pte_offset_map_lock(dst_mm, dst_pmd, addr, &dst_ptl);
		err = dst ? copy_ptes(dst_vma, src_vma, dst, src, addr, end) : -ENOMEM;
		if (dst)
			pte_unmap_unlock(dst, dst_ptl);
	}
	pte_unmap_unlock(src, src_ptl);
	return err;
}

/*
 * A THP being migrated: the child gets the PMD migration entry too (and a
 * deposited table, rss for its 512 pages); the restore maps the new
 * folio in both. Both PMD locks held.
 */
static void copy_pmd_migration_entry(struct vm_area_struct *dst_vma,
				     struct vm_area_struct *src_vma, pte_t *dst_pmd, pte_t *src_pmd,
				     struct page *table)
{
	pte_t entry = pmdp_get(src_pmd), kept = forked_migration_entry(src_vma, entry);

	lockdep_assert_held(pmd_lockptr(src_vma->vm_mm, src_pmd));
	lockdep_assert_held(pmd_lockptr(dst_vma->vm_mm, dst_pmd));
	if (kept != entry)
		set_pmd(src_pmd, kept);
	set_pmd(dst_pmd, kept);
	pgtable_deposit(dst_vma->vm_mm, dst_pmd, table);
	atomic_long_add(HPAGE_PMD_NR, &dst_vma->vm_mm->rss);
}

/*
 * One PMD mapping (or PMD migration entry): shared with the child, or
 * split (then the caller copies the PTEs).
 */
static int copy_pmd_leaf(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
			 pte_t *dst_pmd, pte_t *src_pmd, unsigned long addr)
{
	struct page *table = pagetable_alloc();	/* the child's deposit */
	spinlock_t *src_ptl, *dst_ptl;
	bool shared = false;

	if (!table)
		return -ENOMEM;
	src_ptl = pmd_lock(src_vma->vm_mm, src_pmd);
	dst_ptl = pmd_lock(dst_vma->vm_mm, dst_pmd);
	if (is_pmd_migration_entry(*src_pmd)) {
		copy_pmd_migration_entry(dst_vma, src_vma, dst_pmd, src_pmd, table);
		shared = true;
	} else if (pmd_leaf(*src_pmd)) {
		shared = copy_huge_pmd(dst_vma, src_vma, dst_pmd, src_pmd, addr, table);
	}
	spin_unlock(dst_ptl);
	spin_unlock(src_ptl);
	if (!shared)
		pagetable_free(table);
	return 0;
}

/*
 * Linux's mm->write_protect_seq: odd while fork makes a private mapping's
 * pages shared. GUP-fast pins nothing while it is odd and gives back what
 * it pinned when it changed meanwhile (mm/gup.c): fork decides to share a
 * page by reading its pin count, and a pin taken by the lockless walk
 * just after that read would otherwise name a page the child shares.
 * The increments are locked instructions: each is ordered before fork's
 * reads of the pin counts that follow it, as the walk's grab (locked too)
 * is before its second read of the count.
 */
static void write_protect_seq_inc(struct mm_struct *mm)
{
	__atomic_fetch_add(&mm->write_protect_seq, 1, __ATOMIC_SEQ_CST);
}

static int copy_page_range(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma)
{
	struct mm_struct *dst_mm = dst_vma->vm_mm, *src_mm = src_vma->vm_mm;
	bool cow = !(src_vma->vm_flags & VM_SHARED);
	struct mmu_notifier_range range;
	int err = 0;

	mmap_assert_write_locked(src_mm);
	if (cow) {
		/* The parent's private entries become read-only: a device must forget them. */
		mmu_notifier_start(&range, MMU_NOTIFY_PROTECTION_PAGE, src_mm, src_vma->vm_start,
				   src_vma->vm_end);
		write_protect_seq_inc(src_mm);
	}
	for (unsigned long addr = src_vma->vm_start, next; addr < src_vma->vm_end && !err;
	     addr = next) {
		pte_t *src_pmd = pmd_lookup(src_mm->pgd, addr, false), *dst_pmd;

		next = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, src_vma->vm_end);
		if (!src_pmd || !READ_ONCE(*src_pmd))
			continue;
		dst_pmd = pmd_alloc(dst_mm, addr);
		if (!dst_pmd) {
			err = -ENOMEM;	/* (not a return: the sequence and the notifier end below) */
			break;
		}
		if (pmd_leaf_or_migration(READ_ONCE(*src_pmd)))
			err = copy_pmd_leaf(dst_vma, src_vma, dst_pmd, src_pmd, addr);
		/* A table here, or the PMD split instead of copied: copy by PTE. */
		if (!err && pmd_is_table(READ_ONCE(*src_pmd)))
			err = copy_pte_range(dst_vma, src_vma, dst_pmd, src_pmd, addr, next);
	}
	if (cow) {
		write_protect_seq_inc(src_mm);
		mmu_notifier_invalidate_range_end(&range);
	}
	return err;
}

/*
 * Linux's vma_needs_copy: only a VMA with anonymous memory (an anon_vma)
 * has pages a fault in the child could not bring back. The entries of a
 * shared or never-written file VMA are left out; the child faults them in
 * from the page cache (or the shared object) when it touches them, so its
 * pages are not counted as mapped twice until then (move_pages without
 * MPOL_MF_MOVE_ALL moves them, as on Linux).
 */
static bool vma_needs_copy(const struct vm_area_struct *src_vma)
{
	return READ_ONCE(src_vma->anon_vma) != NULL;
}

struct mm_struct *dup_mm(struct mm_struct *old)
{
	struct mm_struct *mm = mm_alloc();
	struct vm_area_struct *v;
	int err = 0;

	if (!mm)
		return NULL;
	down_write(&old->mmap_lock);
	list_for_each_entry(v, &old->vmas, vm_list) {
		struct vm_area_struct *nv;

		if (v->vm_flags & VM_DONTCOPY)
			continue;		/* MADV_DONTFORK: the child has a hole here */
		err = insert_vma_file(mm, v->vm_start, v->vm_end, v->vm_flags, v->vm_file, v->vm_pgoff);
		if (err)
			break;
		nv = find_vma(mm, v->vm_start);
		nv->vm_policy = v->vm_policy;	/* mbind's policy goes with the VMA */
		err = anon_vma_fork(nv, v);
		if (!err && vma_needs_copy(v))
			err = copy_page_range(nv, v);
		if (err)
			break;
	}
	mm->start_brk = old->start_brk;
	mm->brk = old->brk;
	mm->start_stack = old->start_stack;
	mm->arg_start = old->arg_start;
	mm->arg_end = old->arg_end;
	mm->env_start = old->env_start;
	mm->env_end = old->env_end;
	mm->mmap_base = old->mmap_base;
	up_write(&old->mmap_lock);
	flush_tlb_mm_range(old, 0, USER_TOP);
	if (err) {
		mmput(mm);
		return NULL;
	}
	return mm;
}
