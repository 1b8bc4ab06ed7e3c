/*
 * fork: a copy of the address space (dup_mm). Every VMA is copied (not
 * those under MADV_DONTFORK) and linked to the anon_vmas of its parent
 * (anon_vma_fork); every mapping is shared: one more mapping and one more
 * reference per entry, and in private VMAs both sides lose write access, so
 * the first write on either side copies (memory.c). Runs of PTEs that map
 * consecutive pages of one folio are duplicated with one rmap call
 * (folio_pte_batch); a PMD mapping stays one PMD. A page that may be
 * pinned for DMA is never shared: the child gets a copy at once. One TLB
 * flush for the parent at the end.
 */
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/numa.h>
#include <quire/errno.h>
#include <quire/string.h>

/* The child gets its own copy of one exclusive, maybe-pinned page. */
static int copy_present_page(struct vm_area_struct *dst_vma, pte_t *dst, pte_t src,
			     struct page *page, unsigned long addr)
{
	struct folio *copy = folio_alloc(__GFP_MOVABLE | __GFP_NOWARN, 0, numa_node_id());

	if (!copy)
		return -ENOMEM;
	memcpy(folio_address(copy), page_address(page), PAGE_SIZE);
	*dst = pfn_pte(folio_pfn(copy), pte_write(src), !(src & _PAGE_NX)) |
	       (src & _PAGE_PROTNONE);
	if (src & _PAGE_PROTNONE)
		*dst &= ~(pte_t)_PAGE_PRESENT;
	folio_add_new_anon_rmap(copy, dst_vma, addr, RMAP_EXCLUSIVE);
	atomic_long_inc(&dst_vma->vm_mm->rss);
	return 0;
}

/* Copy the PTEs of [addr, end) (one page table; both page-table locks held). */
static int copy_pte_range(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
			  unsigned long addr, unsigned long end)
{
	struct mm_struct *dst_mm = dst_vma->vm_mm, *src_mm = src_vma->vm_mm;
	bool cow = !(src_vma->vm_flags & VM_SHARED);
	pte_t *src = pte_lookup(src_mm->pgd, addr, false), *dst;

	if (!src)
		return 0;
	dst = pte_lookup(dst_mm->pgd, addr, true);
	if (!dst)
		return -ENOMEM;
	while (addr < end) {
		pte_t entry = *src;
		struct page *page;
		struct folio *folio;
		int nr;

		if (!pte_has_page(entry)) {
			src++, dst++, addr += PAGE_SIZE;
			continue;
		}
		if (is_zero_pfn(pte_pfn(entry))) {
			*dst = entry;
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
		} else {
			folio_dup_file_rmap_ptes(folio, page, nr, dst_vma);
		}
		folio_ref_add(folio, nr);
		for (int i = 0; i < nr; i++) {
			if (cow)
				src[i] &= ~(pte_t)_PAGE_RW;
			dst[i] = src[i];
		}
		atomic_long_add(nr, &dst_mm->rss);
		src += nr, dst += nr, addr += (unsigned long)nr << PAGE_SHIFT;
	}
	return 0;
}

static int copy_page_range(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma)
{
	struct mm_struct *dst_mm = dst_vma->vm_mm, *src_mm = src_vma->vm_mm;
	unsigned long addr = src_vma->vm_start;
	int err = 0;

	while (addr < src_vma->vm_end && !err) {
		unsigned long next = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, src_vma->vm_end);
		pte_t *src_pmd, *dst_pmd;

		pte_lock(src_mm);
		pte_lock(dst_mm);
		src_pmd = pmd_lookup(src_mm->pgd, addr, false);
		if (src_pmd && pmd_leaf(*src_pmd)) {
			dst_pmd = pmd_lookup(dst_mm->pgd, addr, true);
			err = dst_pmd ? copy_huge_pmd(dst_vma, src_vma, dst_pmd, src_pmd, addr) : -ENOMEM;
		}
		/* A table here, or the PMD split instead of copied: copy by PTE. */
		if (!err && src_pmd && *src_pmd && !pmd_leaf(*src_pmd))
			err = copy_pte_range(dst_vma, src_vma, addr, next);
		pte_unlock(dst_mm);
		pte_unlock(src_mm);
		addr = next;
	}
	return err;
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
		err = anon_vma_fork(nv, v);
		if (!err)
			err = copy_page_range(nv, v);
		if (err)
			break;
	}
	mm->start_brk = old->start_brk;
	mm->brk = old->brk;
	mm->start_stack = old->start_stack;
	mm->mmap_base = old->mmap_base;
	up_write(&old->mmap_lock);
	flush_tlb_mm_range(old, 0, USER_TOP);
	if (err) {
		mmput(mm);
		return NULL;
	}
	return mm;
}
