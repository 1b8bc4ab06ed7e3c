/*
 * Address spaces and their VMAs: creation and teardown, lookup, mmap,
 * munmap with VMA splitting, mprotect, brk, and merging adjacent
 * compatible VMAs after mmap, brk and flag changes (vma_merge); madvise,
 * with the helpers below, is in madvise.c. The VMAs are kept in a
 * list sorted by address, for ordered walks, and mirrored in a sorted array
 * that find_vma searches in O(log n). Changes rebuild the array (O(n), as
 * the list insertion already is); lookups, which faults do, are the hot
 * path.
 */
#define pr_fmt(fmt) "mmap: " fmt
#include <quire/mmap.h>
#include <quire/mmu_notifier.h>
#include <quire/mm.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/string.h>
#include <quire/printk.h>
#include <quire/fs.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/mm_internal.h>
#include <asm/pgtable.h>

LIST_HEAD(mm_list);
unsigned long mm_exit_verify_failures;
DEFINE_MUTEX(mm_list_lock);

struct mm_struct *mm_alloc(void)
{
	struct mm_struct *mm = kzalloc(sizeof(*mm), GFP_KERNEL);

	if (!mm)
		return NULL;
	mm->pgd = pgd_alloc();
	if (!mm->pgd) {
		kfree(mm);
		return NULL;
	}
	INIT_LIST_HEAD(&mm->vmas);
	init_rwsem(&mm->mmap_lock);
	spin_lock_init(&mm->page_table_lock);
	atomic_set(&mm->mm_users, 1);
	atomic_set(&mm->mm_count, 1);
	mm->mmap_base = MMAP_BASE;
	mutex_lock(&mm_list_lock);
	list_add_tail(&mm->mm_list, &mm_list);
	mutex_unlock(&mm_list_lock);
	return mm;
}

/* Rebuild the search array after the list changed; without memory, lookups walk the list. */
static void vma_index_update(struct mm_struct *mm)
{
	struct vm_area_struct *v;
	int i = 0;

	if (mm->map_count > mm->index_cap) {
		int cap = max(16, 2 * mm->map_count);
		struct vm_area_struct **n = kmalloc(cap * sizeof(*n), GFP_KERNEL);

		kfree(mm->vma_index);
		mm->vma_index = n;
		mm->index_cap = n ? cap : 0;
		if (!n)
			return;
	}
	if (!mm->vma_index)
		return;
	list_for_each_entry(v, &mm->vmas, vm_list)
		mm->vma_index[i++] = v;
}

struct vm_area_struct *find_vma(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *v;
	int lo = 0, hi = mm->map_count;

	if (!mm->vma_index) {
		list_for_each_entry(v, &mm->vmas, vm_list)
			if (v->vm_end > addr)
				return v;
		return NULL;
	}
	/* The first VMA whose end is above addr. */
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (mm->vma_index[mid]->vm_end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < mm->map_count ? mm->vma_index[lo] : NULL;
}

static void remove_vma(struct vm_area_struct *v)
{
	struct mm_struct *mm = v->vm_mm;

	unlink_anon_vmas(v);
	if (v->vm_file) {
		vma_unlink_file(v);
		fput(v->vm_file);
	}
	list_del(&v->vm_list);
	mm->map_count--;
	kfree(v);
	vma_index_update(mm);
}

void mmput(struct mm_struct *mm)
{
	struct vm_area_struct *v, *n;

	if (!atomic_dec_and_test(&mm->mm_users))
		return;
	/*
	 * Nobody else uses mm, but mm_verify_system may be walking it (it is
	 * still on mm_list): the teardown holds mmap_lock for writing, as
	 * Linux's exit_mmap does, and mm_list_lock is taken only after it.
	 */
	down_write(&mm->mmap_lock);
#ifdef DEBUG_MM
	if (mm_verify_mm(mm)) {
		pr_err("mm %p failed mm_verify at exit\n", mm);
		mm_exit_verify_failures++;
	}
#endif
	list_for_each_entry_safe(v, n, &mm->vmas, vm_list) {
		unmap_region(v, v->vm_start, v->vm_end);
		remove_vma(v);
	}
	if (mm->nr_deposited)
		pr_err("mm %p: %lu page tables still deposited at exit\n", mm, mm->nr_deposited);
	up_write(&mm->mmap_lock);
	mutex_lock(&mm_list_lock);
	list_del(&mm->mm_list);
	mutex_unlock(&mm_list_lock);
	pgd_free(mm->pgd);
	kfree(mm->vma_index);
	mmdrop(mm);
}

void mmgrab(struct mm_struct *mm)
{
	atomic_inc(&mm->mm_count);
}

void mmdrop(struct mm_struct *mm)
{
	if (!atomic_dec_and_test(&mm->mm_count))
		return;
	mmu_notifier_subscriptions_destroy(mm);
	kfree(mm);
}

int insert_vma(struct mm_struct *mm, unsigned long start, unsigned long end,
	       unsigned long vm_flags)
{
	/* Anonymous: page offsets are addresses in pages (folio->index, rmap.c). */
	return insert_vma_file(mm, start, end, vm_flags, NULL, start >> PAGE_SHIFT);
}

int insert_vma_file(struct mm_struct *mm, unsigned long start, unsigned long end,
		    unsigned long vm_flags, struct file *file, unsigned long pgoff)
{
	struct vm_area_struct *v, *at = find_vma(mm, start);

	if (start >= end || (at && at->vm_start < end))
		return -EEXIST;
	v = kzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	v->vm_start = start;
	v->vm_end = end;
	v->vm_flags = vm_flags;
	v->vm_mm = mm;
	v->vm_file = file ? get_file(file) : NULL;
	v->vm_pgoff = pgoff;
	INIT_LIST_HEAD(&v->anon_vma_chain);
	if (file)
		vma_link_file(v);
	/* Before the first VMA that ends after it: the list stays sorted. */
	list_add_tail(&v->vm_list, at ? &at->vm_list : &mm->vmas);
	mm->map_count++;
	vma_index_update(mm);
	return 0;
}

/* Split v at addr (inside it): v keeps [start, addr), a new VMA gets [addr, end). */
static int split_vma(struct vm_area_struct *v, unsigned long addr)
{
	struct vm_area_struct *n = kzalloc(sizeof(*n), GFP_KERNEL);

	if (!n)
		return -ENOMEM;
	/* No PMD mapping may straddle the new boundary (Linux: vma_adjust_trans_huge). */
	if (!IS_ALIGNED(addr, PMD_SIZE))
		split_huge_pmd(v, addr);
	*n = *v;
	n->vm_start = addr;
	n->vm_pgoff = v->vm_pgoff + ((addr - v->vm_start) >> PAGE_SHIFT);
	INIT_LIST_HEAD(&n->anon_vma_chain);
	if (anon_vma_clone(n, v)) {
		kfree(n);
		return -ENOMEM;
	}
	if (n->vm_file) {
		get_file(n->vm_file);
		vma_link_file(n);
	}
	vma_rmap_lock(v);
	v->vm_end = addr;
	vma_rmap_unlock(v);
	list_add(&n->vm_list, &v->vm_list);
	v->vm_mm->map_count++;
	vma_index_update(v->vm_mm);
	return 0;
}

static struct vm_area_struct *vma_prev(struct vm_area_struct *v)
{
	return v->vm_list.prev == &v->vm_mm->vmas ? NULL :
	       list_entry(v->vm_list.prev, struct vm_area_struct, vm_list);
}

static struct vm_area_struct *vma_next(struct vm_area_struct *v)
{
	return v->vm_list.next == &v->vm_mm->vmas ? NULL :
	       list_entry(v->vm_list.next, struct vm_area_struct, vm_list);
}

/*
 * Linux 6.12's is_mergeable_anon_vma: src's anon_vma may join tgt when they
 * are the same, or when one is NULL and tgt is linked to exactly one
 * anon_vma. So a VMA that fork linked to its parent's anon_vmas, and an
 * unfaulted tgt next to a faulted src, are not merged.
 */
static bool anon_vma_mergeable(struct anon_vma *src, struct vm_area_struct *tgt)
{
	if ((!src || !tgt->anon_vma) && tgt->anon_vma_chain.next != &tgt->anon_vma_chain &&
	    tgt->anon_vma_chain.next->next == &tgt->anon_vma_chain)
		return true;
	return src == tgt->anon_vma;
}

/* Can adjacent lo and hi be one VMA, tgt (lo or hi) the one the other joins? */
static bool vmas_mergeable(struct vm_area_struct *lo, struct vm_area_struct *hi,
			   struct vm_area_struct *tgt)
{
	struct vm_area_struct *src = tgt == lo ? hi : lo;

	return lo->vm_end == hi->vm_start && !((lo->vm_flags ^ hi->vm_flags) & ~VM_SOFTDIRTY) &&
	       lo->vm_file == hi->vm_file && mpol_equal(&lo->vm_policy, &hi->vm_policy) &&
	       lo->vm_pgoff + ((lo->vm_end - lo->vm_start) >> PAGE_SHIFT) == hi->vm_pgoff &&
	       anon_vma_mergeable(src->anon_vma, tgt);
}

/* lo grows over hi, which is freed. */
static void vma_merge_pair(struct vm_area_struct *lo, struct vm_area_struct *hi)
{
	struct mm_struct *mm = lo->vm_mm;

	vma_rmap_merge(lo, hi);
	lo->vm_flags |= hi->vm_flags & VM_SOFTDIRTY;	/* soft-dirty if either part was */
	if (hi->vm_file)
		fput(hi->vm_file);
	list_del(&hi->vm_list);
	mm->map_count--;
	kfree(hi);
	vma_index_update(mm);
}

/*
 * Linux's vma_merge for v, just mapped, moved, grown or given new flags or
 * a new policy: v joins its neighbours where they are compatible (same
 * flags, same file and contiguous offsets, equal memory policies,
 * anon_vma_mergeable); joining both also needs
 * prev's and next's anon_vmas to be the same or one NULL. Returns the VMA
 * that now holds v's range. mmap_lock held for writing.
 */
struct vm_area_struct *vma_merge(struct vm_area_struct *v)
{
	struct vm_area_struct *prev = vma_prev(v), *next = vma_next(v);
	bool left = prev && vmas_mergeable(prev, v, prev);
	bool right = next && vmas_mergeable(v, next, next);

	mmap_assert_write_locked(v->vm_mm);
	if (left && right && prev->anon_vma && next->anon_vma && prev->anon_vma != next->anon_vma)
		right = false;
	if (right)
		vma_merge_pair(v, next);
	if (left) {
		vma_merge_pair(prev, v);
		v = prev;
	}
	return v;
}

/*
 * After an unmap: free the page tables of the 2 MiB blocks in or around
 * [start, end) that no VMA uses any more. They are unhooked first, the TLB
 * is flushed (CPUs cache paging structures too), then they are freed.
 */
static void free_unused_pgtables(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	struct vm_area_struct *next = find_vma(mm, start), *prev;
	unsigned long lo, hi, freed = 0;
	struct page *tables[64];

	prev = next ? (next->vm_list.prev != &mm->vmas ?
		       list_entry(next->vm_list.prev, struct vm_area_struct, vm_list) : NULL)
		    : (list_empty(&mm->vmas) ? NULL :
		       list_entry(mm->vmas.prev, struct vm_area_struct, vm_list));
	lo = max(ALIGN_DOWN(start, PMD_SIZE), prev ? ALIGN_UP(prev->vm_end, PMD_SIZE) : 0UL);
	hi = min(ALIGN_UP(end, PMD_SIZE), next ? ALIGN_DOWN(next->vm_start, PMD_SIZE) : USER_TOP);
	while (lo < hi) {
		unsigned int n = 0;
		unsigned long from = lo;

		spin_lock(&mm->page_table_lock);
		for (; lo < hi && n < ARRAY_SIZE(tables); lo += PMD_SIZE) {
			struct page *t = pte_table_detach(mm->pgd, lo);

			if (t)
				tables[n++] = t;
		}
		spin_unlock(&mm->page_table_lock);
		if (!n)
			continue;
		flush_tlb_mm_range(mm, from, lo);
		for (unsigned int i = 0; i < n; i++)
			pagetable_free(tables[i]);
		freed += n;
	}
	mm->pgtables_freed += freed;
}

int do_munmap(struct mm_struct *mm, unsigned long start, unsigned long len)
{
	unsigned long end;
	struct vm_area_struct *v;

	if (!IS_ALIGNED(start, PAGE_SIZE) || len == 0)
		return -EINVAL;
	len = ALIGN_UP(len, PAGE_SIZE);
	end = start + len;
	if (end < start || end > USER_TOP)
		return -EINVAL;
	while ((v = find_vma(mm, start)) && v->vm_start < end) {
		int err;

		if (v->vm_start < start) {		/* keep the head */
			err = split_vma(v, start);
			if (err)
				return err;
			continue;
		}
		if (v->vm_end > end) {			/* keep the tail */
			err = split_vma(v, end);
			if (err)
				return err;
		}
		unmap_region(v, v->vm_start, v->vm_end);
		remove_vma(v);
	}
	free_unused_pgtables(mm, start, end);
	return 0;
}

static unsigned long prot_to_vm_flags(unsigned long prot)
{
	return (prot & PROT_READ ? VM_READ : 0) | (prot & PROT_WRITE ? VM_WRITE : 0) |
	       (prot & PROT_EXEC ? VM_EXEC : 0);
}

/*
 * The lowest free gap of len bytes at or above from, keeping
 * STACK_GUARD_GAP below a stack (a VM_GROWSDOWN VMA). 0 when none.
 */
static unsigned long unmapped_area_bottom_up(struct mm_struct *mm, unsigned long from,
					     unsigned long len)
{
	unsigned long start = from;
	struct vm_area_struct *v;

	list_for_each_entry(v, &mm->vmas, vm_list) {
		unsigned long end = v->vm_start;

		if (v->vm_end <= start)
			continue;
		if (v->vm_flags & VM_GROWSDOWN)
			end = end > STACK_GUARD_GAP ? end - STACK_GUARD_GAP : 0;
		if (end > start && end - start >= len)
			return start;
		start = max(start, v->vm_end);
	}
	return USER_TOP - start >= len ? start : 0;
}

/*
 * A free gap of len bytes: searched downwards from mmap_base, as Linux's
 * top-down layout; when everything below is taken, upwards from mmap_base
 * (the room left for the stack), as Linux falls back to a bottom-up
 * search. 0 when none.
 */
static unsigned long get_unmapped_area(struct mm_struct *mm, unsigned long len)
{
	unsigned long top = mm->mmap_base;
	struct vm_area_struct *v;

	/* Walk the VMAs from the highest one below top. */
	for (;;) {
		struct vm_area_struct *below = NULL;

		list_for_each_entry(v, &mm->vmas, vm_list)
			if (v->vm_end <= top)
				below = v;
		if (top - (below ? below->vm_end : MMAP_MIN_ADDR) >= len && top >= len)
			return top - len;
		if (!below)
			return unmapped_area_bottom_up(mm, mm->mmap_base, len);
		top = below->vm_start;
	}
}

unsigned long mmap_free_range(struct mm_struct *mm, unsigned long hint, unsigned long len)
{
	/* A hint is used when the range is free, as on Linux. */
	struct vm_area_struct *v = hint ? find_vma(mm, ALIGN_DOWN(hint, PAGE_SIZE)) : NULL;

	hint = ALIGN_DOWN(hint, PAGE_SIZE);
	if (hint && hint >= MMAP_MIN_ADDR && len <= USER_TOP && hint <= USER_TOP - len &&
	    !(v && v->vm_start < hint + len))
		return hint;
	return get_unmapped_area(mm, len);
}

long do_mmap(struct mm_struct *mm, unsigned long addr, unsigned long len,
	     unsigned long prot, unsigned long flags, struct file *file, unsigned long pgoff)
{
	unsigned long type = flags & (MAP_SHARED | MAP_PRIVATE);
	unsigned long vm_flags;
	int err;

	if (len == 0 || (type != MAP_PRIVATE && type != MAP_SHARED))
		return -EINVAL;
	if (len > USER_TOP)
		return -ENOMEM;
	len = ALIGN_UP(len, PAGE_SIZE);
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (!IS_ALIGNED(addr, PAGE_SIZE))
			return -EINVAL;
		if (addr < MMAP_MIN_ADDR || addr + len > USER_TOP || addr + len < addr)
			return -ENOMEM;
		if (flags & MAP_FIXED_NOREPLACE) {
			struct vm_area_struct *v = find_vma(mm, addr);

			if (v && v->vm_start < addr + len)
				return -EEXIST;
		} else {
			err = do_munmap(mm, addr, len);
			if (err)
				return err;
		}
	} else {
		addr = mmap_free_range(mm, addr, len);
		if (!addr)
			return -ENOMEM;
	}
	/* A new region is soft-dirty all over (Linux's mmap_region). */
	vm_flags = prot_to_vm_flags(prot) | (type == MAP_SHARED ? VM_SHARED : 0) | VM_SOFTDIRTY;
	if ((flags & MAP_GROWSDOWN) && !file)
		vm_flags |= VM_GROWSDOWN;	/* grows as the stack does (expand_stack) */
	err = file ? insert_vma_file(mm, addr, addr + len, vm_flags, file, pgoff) :
		     insert_vma(mm, addr, addr + len, vm_flags);
	if (err)
		return err;
	vma_merge(find_vma(mm, addr));
	return (long)addr;
}

unsigned long do_brk(struct mm_struct *mm, unsigned long brk)
{
	unsigned long old_end = ALIGN_UP(mm->brk, PAGE_SIZE);
	unsigned long new_end = ALIGN_UP(brk, PAGE_SIZE);
	struct vm_area_struct *next;

	/* Like Linux: a failed or out-of-range request returns the old break. */
	if (brk < mm->start_brk || brk > mm->mmap_base)
		return mm->brk;
	if (new_end < old_end) {
		if (do_munmap(mm, new_end, old_end - new_end))
			return mm->brk;
	} else if (new_end > old_end) {
		next = find_vma(mm, old_end);
		if (next && next->vm_start < new_end + PAGE_SIZE)
			return mm->brk;		/* would run into a mapping (and its guard) */
		if (insert_vma(mm, old_end, new_end, VM_READ | VM_WRITE | VM_SOFTDIRTY))
			return mm->brk;
		/* The heap grows as one VMA; it never joins the program's segments. */
		next = find_vma(mm, old_end);
		if (vma_prev(next) && vma_prev(next)->vm_start >= mm->start_brk)
			vma_merge(next);
	}
	mm->brk = brk;
	return brk;
}

/*
 * For each VMA covering [start, end) that m->differs: split it at the
 * range's ends, m->apply the change, then merge it with its neighbours
 * (vma_merge); a VMA that does not differ is left whole, as Linux's
 * mprotect_fixup, madvise_update_vma and mbind_range do. A hole ends the
 * walk with -ENOMEM after the VMAs before it were handled, unless
 * m->skip_holes. mmap_lock held for writing.
 */
int modify_vma_range(struct mm_struct *mm, unsigned long start, unsigned long end,
		     const struct vma_modify *m)
{
	unsigned long addr = start;

	mmap_assert_write_locked(mm);
	while (addr < end) {
		struct vm_area_struct *v = find_vma(mm, addr);
		int err;

		if (!v || v->vm_start >= end)
			return m->skip_holes ? 0 : -ENOMEM;
		if (v->vm_start > addr && !m->skip_holes)
			return -ENOMEM;
		addr = max(addr, v->vm_start);
		if (!m->differs(v, m->arg)) {
			addr = v->vm_end;
			continue;
		}
		if (v->vm_start < addr) {
			err = split_vma(v, addr);
			if (err)
				return err;
			continue;
		}
		if (v->vm_end > end) {
			err = split_vma(v, end);
			if (err)
				return err;
		}
		m->apply(v, m->arg);
		addr = v->vm_end;
		vma_merge(v);
	}
	return 0;
}

struct flags_change {
	unsigned long clear, set;
	bool protection;
};

static bool flags_differ(struct vm_area_struct *v, void *arg)
{
	const struct flags_change *c = arg;

	return ((v->vm_flags & ~c->clear) | c->set) != v->vm_flags;
}

static void flags_apply(struct vm_area_struct *v, void *arg)
{
	const struct flags_change *c = arg;

	v->vm_flags = (v->vm_flags & ~c->clear) | c->set;
	if (c->protection)
		change_protection(v, v->vm_start, v->vm_end);
}

/*
 * Give each VMA covering [start, end) the flags (old & ~clear) | set (its
 * entries too, for mprotect), splitting and merging as modify_vma_range
 * does; a hole: -ENOMEM.
 */
int modify_vma_flags(struct mm_struct *mm, unsigned long start, unsigned long end,
		     unsigned long clear, unsigned long set, bool protection)
{
	struct flags_change c = { .clear = clear, .set = set, .protection = protection };
	const struct vma_modify m = { .differs = flags_differ, .apply = flags_apply, .arg = &c };

	return modify_vma_range(mm, start, end, &m);
}

int do_mprotect(struct mm_struct *mm, unsigned long start, unsigned long len, unsigned long prot)
{
	unsigned long end;

	if (!IS_ALIGNED(start, PAGE_SIZE) || (prot & ~(unsigned long)(PROT_READ | PROT_WRITE | PROT_EXEC)))
		return -EINVAL;
	end = start + ALIGN_UP(len, PAGE_SIZE);
	if (end < start)
		return -ENOMEM;
	if (end == start)
		return 0;
	return modify_vma_flags(mm, start, end, VM_READ | VM_WRITE | VM_EXEC,
				prot_to_vm_flags(prot), true);
}

/*
 * Call fn (when given) on the part of each VMA inside [start, end), without
 * splitting any; like modify_vma_flags, a hole ends the walk with
 * -ENOMEM after the VMAs before it were handled.
 */
int for_each_vma_part(struct mm_struct *mm, unsigned long start, unsigned long end,
		      void (*fn)(struct vm_area_struct *v, unsigned long from, unsigned long to))
{
	unsigned long addr = start;

	while (addr < end) {
		struct vm_area_struct *v = find_vma(mm, addr);

		if (!v || v->vm_start > addr)
			return -ENOMEM;
		if (fn)
			fn(v, addr, min(v->vm_end, end));
		addr = v->vm_end;
	}
	return 0;
}
