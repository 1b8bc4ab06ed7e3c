/*
 * mremap (include/quire/mmap.h, docs/mm/mremap.md), with Linux 6.12's rules
 * and errno values: shrink in place (the tail is unmapped), grow in place
 * when the range after the VMA is free, or, with MREMAP_MAYMOVE, move to a
 * new range (MREMAP_FIXED: to new_addr, unmapping what is there;
 * MREMAP_DONTUNMAP: the old range stays mapped, empty). old_len 0 on a
 * shared mapping makes a second mapping of the same pages.
 *
 * A move moves the page-table entries, not the data, as Linux's
 * move_page_tables does: a 2 MiB block that lies whole in both ranges moves
 * as one PMD entry (a THP's leaf, with its deposited table, or a whole PTE
 * table); elsewhere a PMD leaf is split first and the PTEs move one by one.
 * Folios, mapcounts, references and rss stay as they are. The rmap keeps
 * finding them: the new VMA keeps the old range's vm_pgoff (an anonymous
 * folio is found at vm_start + (index - vm_pgoff) pages through the same
 * anon_vmas, which the new VMA is linked to; a file folio through i_mmap),
 * so folio->index never changes. Only an anonymous VMA that has no
 * anon_vma yet (so no folio) takes the new address as its offset, which
 * lets it merge with its new neighbours, as on Linux.
 *
 * Locks (docs/locking.md): mmap_lock for writing (the caller); around the
 * move, the old VMA's rmap locks for writing (i_mmap_rwsem, then the
 * anon_vma root's rwsem; the new VMA shares both), so no rmap walker, nor
 * truncate or a folio split from another address space, sees an entry in
 * flight; then two page-table locks at once: the old table's, then the
 * new one's (PMD locks for a PMD entry, PTE locks for PTEs), one lock when
 * both are the same table. Nobody else holds two page-table locks of one
 * mm (fork's are of two mms, and mmap_lock keeps out every other mover).
 * The old range is flushed from every CPU's TLB once, after the move and
 * before the rmap locks go.
 */
#define pr_fmt(fmt) "mremap: " fmt
#include <quire/mmu_notifier.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/swapops.h>
#include <quire/syscalls.h>
#include <quire/sched.h>
#include <quire/panic.h>
#include <quire/printk.h>
#include <quire/errno.h>

/* ---- moving the entries ---- */

/* Take the lock of the second table after the first's, unless it is the same lock. */
static void lock_second(spinlock_t *first, spinlock_t *second)
{
	if (second != first) {
		spin_lock(second);
		count_mm_cost(MM_COST_PTL_ACQUIRE);
	}
}

static void unlock_pair(spinlock_t *first, spinlock_t *second)
{
	if (second != first)
		spin_unlock(second);
	spin_unlock(first);
}

/*
 * Move a whole 2 MiB block: the PMD entry at old_pmd (a THP's leaf or PMD
 * migration entry, or a PTE table with all its entries and its lock) to
 * new_pmd, which must be empty. A leaf's deposited page table moves to the
 * new PMD table's page.
 * False when new_pmd is not empty (the caller goes by PTEs).
 */
/*
 * A moved entry (PTE or THP leaf) counts as written at its new address
 * (soft-dirty), as on Linux; a page table moved whole keeps its entries as
 * they were (Linux's move_normal_pmd does the same).
 */
static pte_t move_soft_dirty_pte(pte_t pte)
{
	if (pte_has_page(pte))
		return pte_mksoft_dirty(pte);
	return pte_is_swap(pte) ? pte_swp_mksoft_dirty(pte) : pte;
}

static bool move_pmd_entry(struct mm_struct *mm, pte_t *old_pmd, pte_t *new_pmd)
{
	spinlock_t *old_ptl = pmd_lock(mm, old_pmd), *new_ptl = pmd_lockptr(mm, new_pmd);
	bool moved = false;

	lock_second(old_ptl, new_ptl);
	if (!pmdp_get(new_pmd) && pmdp_get(old_pmd)) {
		/*
		 * xchg (as move_ptes): a THP's leaf may get its D bit, and a
		 * table entry its A bit, from another CPU's MMU until it is clear.
		 */
		pte_t entry = pmdp_huge_get_and_clear(mm, 0, old_pmd);

		if (pmd_leaf_or_migration(entry)) {
			struct page *table = pgtable_withdraw(mm, old_pmd);

			if (!table)
				panic("mremap: no page table deposited for the PMD mapping at %p", old_pmd);
			pgtable_deposit(mm, new_pmd, table);
			entry = move_soft_dirty_pte(entry);	/* (a PMD migration entry too) */
		}
		set_pmd(new_pmd, entry);
		moved = true;
	}
	unlock_pair(old_ptl, new_ptl);
	return moved;
}

/*
 * Move the PTEs of [old_addr, old_end), inside one table, to the PTEs from
 * new_addr on, inside one table (new_pmd points to it). Returns whether
 * any entry moved.
 */
static bool move_ptes(struct mm_struct *mm, pte_t *old_pmd, unsigned long old_addr,
		      unsigned long old_end, pte_t *new_pmd, unsigned long new_addr)
{
	spinlock_t *old_ptl, *new_ptl;
	pte_t *old_pte = pte_offset_map_lock(mm, old_pmd, old_addr, &old_ptl), *new_pte;
	bool moved = false;

	if (!old_pte)
		return false;	/* (no table any more: nothing to move) */
	new_ptl = pte_lockptr(mm, new_pmd);
	lock_second(old_ptl, new_ptl);
	new_pte = pte_offset(new_pmd, new_addr);
	for (; old_addr < old_end; old_addr += PAGE_SIZE, new_addr += PAGE_SIZE, old_pte++,
	     new_pte++) {
		if (!ptep_get(old_pte))
			continue;
		if (ptep_get(new_pte)) {
			/* The new range was emptied first: never here. The entry stays (unmapped later). */
			pr_err("the new range is mapped already at %#lx\n", new_addr);
			continue;
		}
		/* As Linux: xchg, so a D bit the MMU sets until then moves too. */
		set_pte(new_pte, move_soft_dirty_pte(ptep_get_and_clear(mm, old_addr, old_pte)));
		moved = true;
	}
	unlock_pair(old_ptl, new_ptl);
	return moved;
}

/* The bytes from old (up to old_end) and from new that lie in one 2 MiB block on both sides. */
static unsigned long move_extent(unsigned long old, unsigned long old_end, unsigned long new)
{
	unsigned long extent = min(ALIGN_DOWN(old, PMD_SIZE) + PMD_SIZE, old_end) - old;

	return min(extent, ALIGN_DOWN(new, PMD_SIZE) + PMD_SIZE - new);
}

/*
 * Move the entries of [old_addr, old_addr + len) of vma to new_addr on (a
 * VMA that maps nothing there yet and shares vma's rmap: nothing about the
 * folios changes). The caller holds mmap_lock for writing and vma's rmap
 * locks. Returns how many bytes were moved: len, or less when a page table
 * could not be allocated. One TLB flush of the old range at the end.
 */
static unsigned long move_page_tables(struct vm_area_struct *vma, unsigned long old_addr,
				      unsigned long new_addr, unsigned long len)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long start = old_addr, old_end = old_addr + len;
	struct mmu_notifier_range range;
	bool flush = false;

	mmap_assert_write_locked(mm);
	mmu_notifier_start(&range, MMU_NOTIFY_UNMAP, mm, start, old_end);
	while (old_addr < old_end) {
		unsigned long extent = move_extent(old_addr, old_end, new_addr);
		pte_t *old_pmd = pmd_lookup(mm->pgd, old_addr, false), *new_pmd;

		if (!old_pmd || !pmdp_get(old_pmd))
			goto next;	/* nothing mapped in this block */
		new_pmd = pmd_alloc(mm, new_addr);
		if (!new_pmd)
			break;
		if (extent == PMD_SIZE && move_pmd_entry(mm, old_pmd, new_pmd)) {
			flush = true;
			goto next;
		}
		/* Part of a THP's block (or the new block has a table already): by PTEs. */
		if (pmd_leaf_or_migration(pmdp_get(old_pmd)))
			split_huge_pmd(vma, old_addr);
		if (pte_alloc(mm, new_pmd))
			break;
		if (pmd_leaf(pmdp_get(new_pmd))) {
			pr_err("a PMD mapping at %#lx is in the way\n", new_addr);	/* never: emptied */
			break;
		}
		flush |= move_ptes(mm, old_pmd, old_addr, old_addr + extent, new_pmd, new_addr);
next:
		old_addr += extent;
		new_addr += extent;
	}
	if (flush)
		flush_tlb_mm_range(mm, start, old_end);
	mmu_notifier_invalidate_range_end(&range);
	return old_addr - start;
}

/* ---- the VMAs ---- */

/*
 * Move [old_addr, old_addr + old_len) of vma to a new VMA at new_addr of
 * new_len bytes (the range is free): its entries move, then the old range
 * is unmapped (MREMAP_DONTUNMAP: it stays, empty; exactly one VMA then
 * forgets its anon_vmas, as on Linux) and the new VMA merges with its
 * neighbours. Returns new_addr, or -ENOMEM with the entries back where
 * they were (a THP split on the way stays split, as on Linux).
 */
static long move_vma(struct vm_area_struct *vma, unsigned long old_addr, unsigned long old_len,
		     unsigned long new_len, unsigned long new_addr, unsigned long flags)
{
	struct mm_struct *mm = vma->vm_mm;
	unsigned long pgoff = vma->vm_pgoff + ((old_addr - vma->vm_start) >> PAGE_SHIFT);
	struct vm_area_struct *new_vma;
	unsigned long moved;
	int err;

	mmap_assert_write_locked(mm);
	/* No folio can depend on the offset of an anonymous VMA without an anon_vma. */
	if (!vma->vm_file && !vma->anon_vma)
		pgoff = new_addr >> PAGE_SHIFT;
	err = insert_vma_file(mm, new_addr, new_addr + new_len, vma->vm_flags, vma->vm_file, pgoff);
	if (err)
		return err == -EEXIST ? -ENOMEM : err;
	new_vma = find_vma(mm, new_addr);
	new_vma->vm_policy = vma->vm_policy;
	if (anon_vma_clone(new_vma, vma)) {
		do_munmap(mm, new_addr, new_len);
		return -ENOMEM;
	}

	vma_rmap_lock(vma);
	moved = move_page_tables(vma, old_addr, new_addr, old_len);
	if (moved < old_len) {
		/* Back where they were: the old tables are all still there, nothing to allocate. */
		move_page_tables(new_vma, new_addr, old_addr, moved);
		err = -ENOMEM;
	}
	vma_rmap_unlock(vma);
	if (err) {
		do_munmap(mm, new_addr, new_len);
		return err;
	}

	if (flags & MREMAP_DONTUNMAP) {
		if (vma->vm_start == old_addr && vma->vm_end == old_addr + old_len)
			unlink_anon_vmas(vma);	/* it maps nothing now; new faults get a new one */
	} else if (old_len) {
		/* Only splitting a VMA can fail (no memory): the range then stays, empty (Linux too). */
		do_munmap(mm, old_addr, old_len);
	}
	vma_merge(new_vma);
	return (long)new_addr;
}

/*
 * Linux's vma_to_resize: the VMA holding [addr, addr + old_len), checked
 * for a resize to new_len. 0, or -EFAULT (not wholly inside one VMA),
 * -EINVAL (old_len 0 on a private mapping; the file offset would overflow).
 */
static int vma_to_resize(struct mm_struct *mm, unsigned long addr, unsigned long old_len,
			 unsigned long new_len, struct vm_area_struct **vmap)
{
	struct vm_area_struct *vma = find_vma(mm, addr);
	unsigned long pgoff;

	if (!vma || vma->vm_start > addr)
		return -EFAULT;
	if (!old_len && !(vma->vm_flags & VM_SHARED)) {
		/* Linux logs this once per boot and refuses. */
		static bool warned;

		if (!warned) {
			warned = true;
			pr_warn("pid %d (%s): old_size 0 on a private mapping: not supported (-EINVAL)\n",
				current ? current->tid : 0, current ? current->comm : "-");
		}
		return -EINVAL;
	}
	if (old_len > vma->vm_end - addr)
		return -EFAULT;
	pgoff = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);
	if (new_len != old_len && pgoff + (new_len >> PAGE_SHIFT) < pgoff)
		return -EINVAL;
	*vmap = vma;
	return 0;
}

/* Is [vm_end, vm_end + delta) free for vma to grow over? */
static bool vma_expandable(struct vm_area_struct *vma, unsigned long delta)
{
	unsigned long end = vma->vm_end + delta;
	struct vm_area_struct *next;

	if (end < vma->vm_end || end > USER_TOP)
		return false;
	next = find_vma(vma->vm_mm, vma->vm_end);
	return !next || next->vm_start >= end;
}

/* MREMAP_FIXED or MREMAP_DONTUNMAP: a move to new_addr (or near it). */
static long mremap_to(struct mm_struct *mm, unsigned long addr, unsigned long old_len,
		      unsigned long new_addr, unsigned long new_len, unsigned long flags)
{
	struct vm_area_struct *vma;
	int err;

	if (!IS_ALIGNED(new_addr, PAGE_SIZE))
		return -EINVAL;
	if (new_len > USER_TOP || new_addr > USER_TOP - new_len)
		return -EINVAL;
	if (addr + old_len > new_addr && new_addr + new_len > addr)
		return -EINVAL;		/* the ranges overlap */
	if (flags & MREMAP_FIXED) {
		err = do_munmap(mm, new_addr, new_len);
		if (err)
			return err;
	}
	if (old_len > new_len) {
		err = do_munmap(mm, addr + new_len, old_len - new_len);
		if (err)
			return err;
		old_len = new_len;
	}
	err = vma_to_resize(mm, addr, old_len, new_len, &vma);
	if (err)
		return err;
	if (flags & MREMAP_FIXED) {
		/* Below the NULL guard: what Linux answers a process without CAP_SYS_RAWIO. */
		if (new_addr < MMAP_MIN_ADDR)
			return -EPERM;
	} else {
		new_addr = mmap_free_range(mm, new_addr, new_len);	/* new_addr is a hint */
		if (!new_addr)
			return -ENOMEM;
	}
	return move_vma(vma, addr, old_len, new_len, new_addr, flags);
}

long do_mremap(struct mm_struct *mm, unsigned long addr, unsigned long old_len,
	       unsigned long new_len, unsigned long flags, unsigned long new_addr)
{
	struct vm_area_struct *vma;
	int err;

	mmap_assert_write_locked(mm);
	if (flags & ~(unsigned long)(MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP))
		return -EINVAL;
	if ((flags & MREMAP_FIXED) && !(flags & MREMAP_MAYMOVE))
		return -EINVAL;
	/* DONTUNMAP is a move without a resize (the sizes as given, before rounding). */
	if ((flags & MREMAP_DONTUNMAP) && (!(flags & MREMAP_MAYMOVE) || old_len != new_len))
		return -EINVAL;
	if (!IS_ALIGNED(addr, PAGE_SIZE))
		return -EINVAL;
	old_len = ALIGN_UP(old_len, PAGE_SIZE);
	new_len = ALIGN_UP(new_len, PAGE_SIZE);
	if (!new_len)
		return -EINVAL;
	vma = find_vma(mm, addr);
	if (!vma || vma->vm_start > addr)
		return -EFAULT;
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP))
		return mremap_to(mm, addr, old_len, new_addr, new_len, flags);

	/* Shrinking always works in place: the tail goes (it may span several VMAs). */
	if (old_len >= new_len) {
		if (old_len > new_len) {
			err = do_munmap(mm, addr + new_len, old_len - new_len);
			if (err)
				return err;
		}
		return (long)addr;
	}

	err = vma_to_resize(mm, addr, old_len, new_len, &vma);
	if (err)
		return err;
	/* The range ends the VMA and the space after it is free: grow in place. */
	if (old_len == vma->vm_end - addr && vma_expandable(vma, new_len - old_len)) {
		vma_rmap_lock(vma);
		vma->vm_end += new_len - old_len;
		vma_rmap_unlock(vma);
		vma_merge(vma);
		return (long)addr;
	}
	if (!(flags & MREMAP_MAYMOVE))
		return -ENOMEM;
	new_addr = mmap_free_range(mm, 0, new_len);
	if (!new_addr)
		return -ENOMEM;
	return move_vma(vma, addr, old_len, new_len, new_addr, flags);
}

long sys_mremap(u64 addr, u64 old_len, u64 new_len, u64 flags, u64 new_addr, u64 a5)
{
	struct mm_struct *mm = current->mm;
	long ret;

	down_write(&mm->mmap_lock);
	ret = do_mremap(mm, addr, old_len, new_len, flags, new_addr);
	up_write(&mm->mmap_lock);
	return ret;
}
