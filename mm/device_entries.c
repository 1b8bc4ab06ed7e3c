/*
 * Device entries in page tables (include/quire/swapops.h,
 * docs/mm/device-memory.md): what faults, fork and zap do with a
 * device-private entry (the page lives in a device's memory) and a
 * device-exclusive entry (a normal page that a device holds for atomic
 * access), and make_device_exclusive_range, which installs the latter.
 *
 * Both kinds map their page as a present PTE does: the entry holds a
 * reference on the folio and counts in its mapcount, so the rmap finds it
 * (page_vma_mapped_walk) and mm_verify checks it. Neither is ever in a TLB,
 * so changing one needs no flush.
 */
#define pr_fmt(fmt) "device entries: " fmt
#include <quire/memremap.h>
#include <quire/migrate.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/mmap.h>
#include <quire/mmu_notifier.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/huge_mm.h>
#include <quire/gup.h>
#include <quire/wait_bit.h>
#include <quire/debug_locks.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/errno.h>
#include <asm/pgtable.h>

static struct page *entry_page(pte_t entry)
{
	return pfn_to_page(swp_offset_pfn(pte_to_swp_entry(entry)));
}

/*
 * Lock the folio of the entry found at addr, with a reference, and check
 * the entry is still there: the folio, or NULL (the caller faults again;
 * if someone else held the lock, after waiting for it).
 */
static struct folio *lock_entry_folio(struct vm_area_struct *vma, pte_t *pmd, unsigned long addr,
				      pte_t entry)
{
	struct folio *folio = NULL;
	spinlock_t *ptl;
	pte_t *pte = pte_offset_map_lock(vma->vm_mm, pmd, addr, &ptl);

	if (!pte)
		return NULL;
	if (ptep_get(pte) == entry) {
		folio = page_folio(entry_page(entry));
		folio_get(folio);	/* the entry holds one: the folio cannot go meanwhile */
	}
	pte_unmap_unlock(pte, ptl);
	if (!folio)
		return NULL;
	if (!folio_trylock(folio)) {
		/* Being migrated or handed over: wait for it, then fault again. */
		wait_on_bit(&folio->flags, PG_locked);
		folio_put(folio);
		return NULL;
	}
	pte = pte_offset_map_lock(vma->vm_mm, pmd, addr, &ptl);
	if (pte && ptep_get(pte) == entry) {
		pte_unmap_unlock(pte, ptl);
		return folio;
	}
	if (pte)
		pte_unmap_unlock(pte, ptl);
	folio_unlock(folio);
	folio_put(folio);
	return NULL;
}

int device_private_entry_fault(struct vm_area_struct *vma, pte_t *pmd, unsigned long addr,
			       unsigned int flags, pte_t entry)
{
	struct folio *folio = lock_entry_folio(vma, pmd, addr & PAGE_MASK, entry);
	struct vm_fault vmf = { .vma = vma, .address = addr & PAGE_MASK, .flags = flags };
	int err;

	if (!folio)
		return -EAGAIN;
	vmf.page = folio_page(folio, 0);
	/*
	 * The owner moves the page back (migrate_vma_setup with fault_page:
	 * the folio is ours, locked, with our reference). 0: fault again,
	 * and find the page in RAM, or the entry again if the move failed
	 * for a passing reason.
	 */
	err = vmf.page->pgmap->ops->migrate_to_ram(&vmf);
	folio_unlock(folio);
	folio_put(folio);
	if (err && err != -ENOMEM && err != -EIO) {
		pr_err("migrate_to_ram at %#lx: unexpected error %d, taken as -EIO\n", addr, err);
		err = -EIO;
	}
	return err ? err : -EAGAIN;
}

void restore_exclusive_pte(struct vm_area_struct *vma, pte_t *ptep, unsigned long addr)
{
	pte_t entry = ptep_get(ptep), pte;
	swp_entry_t e = pte_to_swp_entry(entry);
	bool write = is_writable_device_exclusive_entry(e) && (vma->vm_flags & VM_WRITE);
	bool none = !(vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC));

	lockdep_assert_held(pmd_lockptr(vma->vm_mm, ptep));	/* (the lock of ptep's own table) */
	VM_BUG_ON_FOLIO(!is_device_exclusive_entry(e), page_folio(entry_page(entry)));
	pte = pfn_pte(swp_offset_pfn(e), write, vma->vm_flags & VM_EXEC);
	if (write)
		pte = pte_mkdirty(pte);
	if (pte_swp_soft_dirty(entry))
		pte = pte_mksoft_dirty(pte);
	/* The mapping, its reference and its mapcount stay: only the kind of entry changes. */
	set_pte(ptep, none ? pte_mkprotnone(pte) : pte);
	(void)addr;
}

int device_exclusive_entry_fault(struct vm_area_struct *vma, pte_t *pmd, unsigned long addr,
				 pte_t entry)
{
	struct folio *folio = lock_entry_folio(vma, pmd, addr & PAGE_MASK, entry);
	struct mmu_notifier_range range;
	spinlock_t *ptl;
	pte_t *pte;

	if (!folio)
		return -EAGAIN;
	addr &= PAGE_MASK;
	/* The device must give its access up (owner NULL: no device skips this). */
	mmu_notifier_start(&range, MMU_NOTIFY_EXCLUSIVE, vma->vm_mm, addr, addr + PAGE_SIZE);
	pte = pte_offset_map_lock(vma->vm_mm, pmd, addr, &ptl);
	if (pte && ptep_get(pte) == entry)
		restore_exclusive_pte(vma, pte, addr);
	if (pte)
		pte_unmap_unlock(pte, ptl);
	mmu_notifier_invalidate_range_end(&range);
	folio_unlock(folio);
	folio_put(folio);
	return -EAGAIN;
}

void copy_device_entry(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
		       pte_t *dst, pte_t *src, unsigned long addr)
{
	pte_t entry = ptep_get(src);
	swp_entry_t e = pte_to_swp_entry(entry);
	struct page *page = entry_page(entry);
	struct folio *folio = page_folio(page);

	/*
	 * The parent's table lock (pmd_lockptr of an entry: the lock of the
	 * table holding it). The child's table is either locked too or not
	 * yet installed, seen by nobody (fork_copy.c): nothing to assert.
	 */
	lockdep_assert_held(pmd_lockptr(src_vma->vm_mm, src));
	VM_BUG_ON_FOLIO(!is_device_private_entry(e), folio);
	folio_get(folio);
	atomic_long_inc(&dst_vma->vm_mm->rss);
	if (folio_test_anon(folio)) {
		/* Device pages are never pinned: sharing cannot fail. */
		if (folio_try_dup_anon_rmap_pte(folio, page, dst_vma, src_vma))
			panic("fork: device page %#lx refused to be shared", page_to_pfn(page));
	} else {
		folio_dup_file_rmap_pte(folio, page, dst_vma);
	}
	if (is_writable_device_private_entry(e) && !(src_vma->vm_flags & VM_SHARED)) {
		/* Shared from now on: the first write (CPU or device) copies. */
		pte_t r = swp_entry_to_pte(make_readable_device_private_entry(swp_offset_pfn(e)));

		entry = pte_swp_soft_dirty(entry) ? pte_swp_mksoft_dirty(r) : r;
		set_pte(src, entry);
	}
	set_pte(dst, entry);
	(void)addr;
}

struct folio *zap_device_entry(struct vm_area_struct *vma, pte_t *ptep, unsigned long addr)
{
	pte_t entry = ptep_get(ptep);
	struct page *page = entry_page(entry);
	struct folio *folio = page_folio(page);

	lockdep_assert_held(pmd_lockptr(vma->vm_mm, ptep));	/* (the lock of ptep's own table) */
	pte_clear(vma->vm_mm, addr, ptep);
	folio_remove_rmap_pte(folio, page, vma);
	atomic_long_dec(&vma->vm_mm->rss);
	return folio;
}

/* ---- make_device_exclusive_range ---- */

/*
 * The present, writable PTE at addr mapping page becomes a device-exclusive
 * entry (folio locked): true, or false when the PTE is something else now.
 */
static bool make_exclusive_one(struct vm_area_struct *vma, unsigned long addr, struct page *page,
			       void *owner)
{
	struct mm_struct *mm = vma->vm_mm;
	struct mmu_notifier_range range;
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte, old, entry;
	spinlock_t *ptl;
	bool done = false;

	if (!pmd || !READ_ONCE(*pmd) || pmd_leaf(READ_ONCE(*pmd)))
		return false;
	/* The device asking is told too, but with its owner: it keeps what it is setting up. */
	mmu_notifier_range_init(&range, MMU_NOTIFY_EXCLUSIVE, 0, mm, addr, addr + PAGE_SIZE);
	range.owner = owner;
	mmu_notifier_invalidate_range_start(&range);
	pte = pte_offset_map_lock(mm, pmd, addr, &ptl);
	if (pte) {
		old = ptep_get(pte);
		if (pte_present(old) && pte_pfn(old) == page_to_pfn(page) && pte_write(old)) {
			old = ptep_get_and_clear(mm, addr, pte);
			flush_tlb_mm_range(mm, addr, addr + PAGE_SIZE);
			entry = swp_entry_to_pte(pte_write(old) ?
				make_writable_device_exclusive_entry(page_to_pfn(page)) :
				make_readable_device_exclusive_entry(page_to_pfn(page)));
			if (pte_soft_dirty(old))
				entry = pte_swp_mksoft_dirty(entry);
			set_pte(pte, entry);
			done = true;
		}
		pte_unmap_unlock(pte, ptl);
	}
	mmu_notifier_invalidate_range_end(&range);
	return done;
}

int make_device_exclusive_range(struct mm_struct *mm, unsigned long start, unsigned long end,
				struct page **pages, void *owner)
{
	unsigned long npages = (end - start) >> PAGE_SHIFT;
	long got;

	mmap_assert_locked(mm);
	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start >= end)
		return -EINVAL;
	for (got = 0; got < (long)npages; got++) {
		unsigned long addr = start + ((unsigned long)got << PAGE_SHIFT);
		struct vm_area_struct *vma;
		struct folio *folio;
		long i = got;
		/*
		 * A page at a time: a large folio is split below, which needs
		 * our reference to be the only extra one on it.
		 */
		long ret = get_user_pages_remote(mm, addr, 1, FOLL_GET | FOLL_WRITE, &pages[i], NULL);

		if (ret != 1) {
			if (!got)
				return ret < 0 ? (int)ret : -EFAULT;
			break;
		}
		folio = page_folio(pages[i]);
		vma = find_vma(mm, addr);

		if (!folio_trylock(folio)) {
			folio_put(folio);
			pages[i] = NULL;
			continue;
		}
		/*
		 * Only small folios: the split and THP paths walk present PTEs
		 * and would not know the entry. A large anonymous folio is
		 * split; our lock and reference stay with its first page's
		 * folio and move to pages[i]'s.
		 */
		if (folio_test_large(folio)) {
			struct folio *head = folio;
			int err = folio_test_anon(head) ? split_folio(head) : -EINVAL;

			folio = page_folio(pages[i]);
			if (!err && folio != head && !folio_try_get(folio))
				err = -EAGAIN;
			if (err || folio != head) {
				folio_unlock(head);
				folio_put(head);
			}
			if (!err && folio != head && !folio_trylock(folio)) {
				folio_put(folio);
				err = -EAGAIN;
			}
			if (err) {
				pages[i] = NULL;
				continue;
			}
		}
		if (!vma || !folio_test_anon(folio) || folio_test_large(folio) ||
		    !make_exclusive_one(vma, addr, pages[i], owner)) {
			folio_unlock(folio);
			folio_put(folio);
			pages[i] = NULL;
		}
	}
	return (int)got;
}
