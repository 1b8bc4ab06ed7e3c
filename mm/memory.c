/*
 * The user fault path and page-range teardown (docs/mm/faults.md):
 *   - a read of an anonymous page never touched maps the shared zero page,
 *     read-only;
 *   - a write to an untouched page, or to the zero page, maps a new zeroed
 *     page from the faulting CPU's node;
 *   - anything outside a VMA, or against its permissions, is -EFAULT, which
 *     the caller turns into SIGSEGV.
 * Copy-on-write of shared private pages arrives with fork; large folios and
 * the batched rmap with the folio issue.
 */
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/numa.h>
#include <quire/smp.h>
#include <quire/errno.h>
#include <quire/panic.h>
#include <asm/pgtable.h>
#include <quire/string.h>
#include <quire/slab.h>

static struct page *zero_page;

void zero_page_init(void)
{
	zero_page = alloc_pages(__GFP_ZERO, 0);
	if (!zero_page)
		panic("no memory for the zero page");
}

static bool is_zero_pfn(unsigned long pfn)
{
	return zero_page && pfn == page_to_pfn(zero_page);
}

/* A page becomes mapped by one more PTE / one fewer (rmap proper: the folio issue). */
static void page_add_anon_map(struct page *page)
{
	atomic_inc(&page->_mapcount);
}

static void page_remove_map(struct page *page)
{
	atomic_dec(&page->_mapcount);
}

static bool vma_allows(const struct vm_area_struct *vma, unsigned int flags)
{
	if (flags & FAULT_FLAG_WRITE)
		return vma->vm_flags & VM_WRITE;
	if (flags & FAULT_FLAG_INSTRUCTION)
		return vma->vm_flags & VM_EXEC;
	return vma->vm_flags & (VM_READ | VM_WRITE | VM_EXEC);
}

/* Grow a stack VMA down to cover addr, within the stack limit. */
static struct vm_area_struct *expand_stack(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma = find_vma(mm, addr);
	struct vm_area_struct *prev;

	if (!vma || !(vma->vm_flags & VM_GROWSDOWN) || addr >= vma->vm_start)
		return vma && addr >= vma->vm_start ? vma : NULL;
	if (vma->vm_end - ALIGN_DOWN(addr, PAGE_SIZE) > STACK_SIZE_MAX)
		return NULL;
	/* Keep a guard gap of one page above the previous mapping. */
	prev = vma->vm_list.prev != &mm->vmas ?
	       list_entry(vma->vm_list.prev, struct vm_area_struct, vm_list) : NULL;
	if (prev && ALIGN_DOWN(addr, PAGE_SIZE) < prev->vm_end + PAGE_SIZE)
		return NULL;
	vma->vm_start = ALIGN_DOWN(addr, PAGE_SIZE);
	return vma;
}

int handle_mm_fault(struct mm_struct *mm, unsigned long addr, unsigned int flags)
{
	struct vm_area_struct *vma;
	struct page *page;
	pte_t *pte, old;
	bool write = flags & FAULT_FLAG_WRITE;
	struct page *cow_drop = NULL;
	bool flush_needed = false;
	int ret = 0;

	if (addr >= USER_TOP)
		return -EFAULT;
	down_read(&mm->mmap_lock);
	vma = find_vma(mm, addr);
	if (vma && addr < vma->vm_start)
		vma = expand_stack(mm, addr);	/* (under the read lock: one thread per mm for now) */
	if (!vma || addr < vma->vm_start || !vma_allows(vma, flags)) {
		up_read(&mm->mmap_lock);
		return -EFAULT;
	}
	/* Allocate before taking the page-table lock: it is a spinlock. */
	page = write ? alloc_pages_node(numa_node_id(), __GFP_ZERO | __GFP_MOVABLE, 0) : NULL;
	if (write && !page) {
		up_read(&mm->mmap_lock);
		return -ENOMEM;
	}
	spin_lock(&mm->page_table_lock);
	pte = pte_lookup(mm->pgd, addr, true);
	if (!pte) {
		ret = -ENOMEM;
		goto out;
	}
	old = *pte;
	if (pte_present(old) && (!write || pte_write(old)))
		goto out;			/* someone else resolved it */
	if (!write) {
		*pte = pfn_pte(page_to_pfn(zero_page), false, vma->vm_flags & VM_EXEC);
		goto out;
	}
	if (pte_present(old) && !is_zero_pfn(pte_pfn(old))) {
		/*
		 * A write to a present, read-only page of a writable VMA: the page
		 * is shared copy-on-write since a fork. If this is its only
		 * mapping, take it back; otherwise copy it.
		 */
		struct page *shared = pfn_to_page(pte_pfn(old));

		if (atomic_read(&shared->_mapcount) == 0 && page_count(shared) == 1) {
			*pte = old | _PAGE_RW | _PAGE_DIRTY;
		} else {
			memcpy(page_address(page), page_address(shared), PAGE_SIZE);
			page_add_anon_map(page);
			*pte = pfn_pte(page_to_pfn(page), true, vma->vm_flags & VM_EXEC);
			page = NULL;
			page_remove_map(shared);
			cow_drop = shared;	/* its reference goes after the flush */
		}
		flush_needed = true;
		goto out;
	}
	page_add_anon_map(page);
	*pte = pfn_pte(page_to_pfn(page), true, vma->vm_flags & VM_EXEC);
	atomic_long_inc(&mm->rss);
	page = NULL;
	flush_needed = pte_present(old);
out:
	spin_unlock(&mm->page_table_lock);
	/* Outside the page-table lock: a shootdown waits for other CPUs. */
	if (flush_needed)
		flush_tlb_mm_range(mm, addr & PAGE_MASK, (addr & PAGE_MASK) + PAGE_SIZE);
	up_read(&mm->mmap_lock);
	if (page)
		__free_pages(page, 0);
	if (cow_drop)
		__free_pages(cow_drop, 0);
	return ret;
}

/*
 * Clear the PTEs of [start, end) and collect the pages they mapped on
 * 'gather' (through page->lru): they may only be freed once no CPU can
 * still reach them through a stale TLB entry (unmap_region).
 */
static unsigned long zap_page_range(struct mm_struct *mm, unsigned long start,
				    unsigned long end, struct list_head *gather)
{
	unsigned long cleared = 0;

	spin_lock(&mm->page_table_lock);
	for (unsigned long addr = start; addr < end; addr += PAGE_SIZE) {
		pte_t *pte = pte_lookup(mm->pgd, addr, false);
		struct page *page;

		if (!pte || !pte_has_page(*pte))
			continue;
		page = pfn_to_page(pte_pfn(*pte));
		*pte = 0;
		cleared++;
		if (!page || is_zero_pfn(page_to_pfn(page)))
			continue;
		page_remove_map(page);
		atomic_long_dec(&mm->rss);
		list_add(&page->lru, gather);
	}
	spin_unlock(&mm->page_table_lock);
	return cleared;
}

void unmap_region(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	LIST_HEAD(gather);
	struct page *page, *next;

	if (!zap_page_range(mm, start, end, &gather))
		return;
	flush_tlb_mm_range(mm, start, end);	/* one shootdown for the whole range */
	list_for_each_entry_safe(page, next, &gather, lru) {
		list_del(&page->lru);
		__free_pages(page, 0);
	}
}

void flush_tlb_mm_range(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	flush_tlb_mask_range(__atomic_load_n(&mm->cpus, __ATOMIC_ACQUIRE), start, end);
}

/*
 * Give the PTEs of [start, end) that hold a page the protection of vm_flags:
 * writable only with VM_WRITE (and never the shared zero page), executable
 * only with VM_EXEC, and not present at all without any access (PROT_NONE:
 * the page is kept, marked _PAGE_PROTNONE). One TLB flush for the range
 * when anything changed.
 */
void change_protection(struct mm_struct *mm, unsigned long start, unsigned long end,
		       unsigned long vm_flags)
{
	bool changed = false;

	spin_lock(&mm->page_table_lock);
	for (unsigned long addr = start; addr < end; addr += PAGE_SIZE) {
		pte_t *pte = pte_lookup(mm->pgd, addr, false);
		pte_t new;

		if (!pte || !pte_has_page(*pte))
			continue;
		new = pfn_pte(pte_pfn(*pte), (vm_flags & VM_WRITE) && !is_zero_pfn(pte_pfn(*pte)),
			      vm_flags & VM_EXEC);
		if (!(vm_flags & (VM_READ | VM_WRITE | VM_EXEC)))
			new = (new & ~(_PAGE_PRESENT | _PAGE_RW)) | _PAGE_PROTNONE;
		if (new != *pte) {
			*pte = new;
			changed = true;
		}
	}
	spin_unlock(&mm->page_table_lock);
	if (changed)
		flush_tlb_mm_range(mm, start, end);
}

/*
 * fork: a copy of the address space. Every VMA is copied; every present
 * page is shared: one more mapping and one more reference, and in private
 * writable VMAs both sides lose write access, so the first write on either
 * side copies (the fault path above). One TLB flush for the parent at the end.
 */
struct mm_struct *dup_mm(struct mm_struct *old)
{
	struct mm_struct *mm = mm_alloc();
	struct vm_area_struct *v;
	int err = 0;

	if (!mm)
		return NULL;
	down_write(&old->mmap_lock);
	list_for_each_entry(v, &old->vmas, vm_list) {
		if (v->vm_flags & VM_DONTCOPY)
			continue;		/* MADV_DONTFORK: the child has a hole here */
		err = insert_vma(mm, v->vm_start, v->vm_end, v->vm_flags);
		if (err)
			break;
		spin_lock(&old->page_table_lock);
		for (unsigned long addr = v->vm_start; addr < v->vm_end && !err; addr += PAGE_SIZE) {
			pte_t *src = pte_lookup(old->pgd, addr, false), *dst;
			struct page *page;

			if (!src || !pte_has_page(*src))
				continue;
			dst = pte_lookup(mm->pgd, addr, true);
			if (!dst) {
				err = -ENOMEM;
				break;
			}
			if (!(v->vm_flags & VM_SHARED))
				*src &= ~_PAGE_RW;
			*dst = *src;
			if (is_zero_pfn(pte_pfn(*src)))
				continue;
			page = pfn_to_page(pte_pfn(*src));
			folio_get(page_folio(page));
			page_add_anon_map(page);
			atomic_long_inc(&mm->rss);
		}
		spin_unlock(&old->page_table_lock);
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
