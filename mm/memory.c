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
#include <quire/fs.h>
#include <quire/pagemap.h>

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

/* A page (anonymous or page cache) gains or loses one PTE (the batched rmap: the folio issue). */
static void page_add_map(struct page *page)
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

/*
 * A fault on a file VMA's page that is not mapped yet. Shared mappings map
 * the page-cache folio itself (created when missing, with the file's lock);
 * private ones map it read-only for reading, or take a private copy for
 * writing; a hole read privately maps the zero page. Past the end of the
 * file is -EIO (SIGBUS). mmap_lock is held for reading.
 */
static int file_fault(struct mm_struct *mm, struct vm_area_struct *vma, unsigned long addr,
		      bool write)
{
	struct inode *inode = file_inode(vma->vm_file);
	struct address_space *mapping = vma->vm_file->f_mapping;
	unsigned long idx = vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT);
	bool shared = vma->vm_flags & VM_SHARED;
	struct folio *folio;
	struct page *copy = NULL, *map;
	pte_t *pte, new;
	int ret = 0;

	if ((loff_t)idx << PAGE_SHIFT >= READ_ONCE(inode->i_size))
		return -EIO;
	folio = filemap_get_folio(mapping, idx);
	if (!folio && (shared || write)) {
		mutex_lock(&inode->i_mutex);
		folio = filemap_grab_folio(mapping, idx);
		mutex_unlock(&inode->i_mutex);
		if (!folio)
			return -ENOMEM;
	}
	if (write && !shared) {
		copy = alloc_pages_node(numa_node_id(), __GFP_ZERO | __GFP_MOVABLE, 0);
		if (!copy) {
			if (folio)
				folio_put(folio);
			return -ENOMEM;
		}
		if (folio) {
			memcpy(page_address(copy), folio_address(folio), PAGE_SIZE);
			folio_put(folio);
			folio = NULL;
		}
	}
	map = copy ? copy : folio ? folio_page(folio, 0) : zero_page;
	new = pfn_pte(page_to_pfn(map), (copy || (shared && (vma->vm_flags & VM_WRITE))),
		      vma->vm_flags & VM_EXEC);
	spin_lock(&mm->page_table_lock);
	pte = pte_lookup(mm->pgd, addr, true);
	if (!pte) {
		ret = -ENOMEM;
	} else if (!pte_present(*pte)) {
		*pte = new;
		if (map != zero_page) {
			page_add_map(map);		/* the mapping keeps our reference */
			atomic_long_inc(&mm->rss);
			copy = NULL;
			folio = NULL;
		}
	}
	spin_unlock(&mm->page_table_lock);
	if (copy)
		__free_pages(copy, 0);
	if (folio)
		folio_put(folio);
	return ret;
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
	if (vma->vm_file) {
		pte_t *p = pte_lookup(mm->pgd, addr, false);	/* a peek: rechecked under the lock */

		if (!p || !pte_present(*p)) {
			ret = file_fault(mm, vma, addr, write);
			up_read(&mm->mmap_lock);
			return ret;
		}
		if (write && (vma->vm_flags & VM_SHARED)) {
			spin_lock(&mm->page_table_lock);
			*p |= _PAGE_RW | _PAGE_DIRTY;		/* the page-cache page itself */
			spin_unlock(&mm->page_table_lock);
			up_read(&mm->mmap_lock);
			flush_tlb_mm_range(mm, addr & PAGE_MASK, (addr & PAGE_MASK) + PAGE_SIZE);
			return 0;
		}
		/* A private write to a present page: the copy-on-write below. */
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
			page_add_map(page);
			*pte = pfn_pte(page_to_pfn(page), true, vma->vm_flags & VM_EXEC);
			page = NULL;
			page_remove_map(shared);
			cow_drop = shared;	/* its reference goes after the flush */
		}
		flush_needed = true;
		goto out;
	}
	page_add_map(page);
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
 * Unmapping gathers the pages it unmapped in a batch: they may only be
 * freed once no CPU can still reach them through a stale TLB entry, so a
 * full batch (or the end) is one shootdown, then the frees. (An array, not
 * a list through page->lru: a page-cache page may be mapped twice.)
 */
#define GATHER_BATCH 256

struct mmu_gather {
	struct mm_struct *mm;
	unsigned long start, end;
	unsigned int nr;
	bool flush;
	struct page *pages[GATHER_BATCH];
};

static void tlb_flush_and_free(struct mmu_gather *tlb)
{
	if (tlb->flush)
		flush_tlb_mm_range(tlb->mm, tlb->start, tlb->end);
	for (unsigned int i = 0; i < tlb->nr; i++)
		__free_pages(tlb->pages[i], 0);
	tlb->nr = 0;
	tlb->flush = false;
}

void unmap_region(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	struct mmu_gather *tlb = kmalloc(sizeof(*tlb), GFP_KERNEL);
	struct mmu_gather fallback;

	if (!tlb) {
		tlb = &fallback;	/* small enough for the stack in a pinch */
	}
	tlb->mm = mm;
	tlb->start = start;
	tlb->end = end;
	tlb->nr = 0;
	tlb->flush = false;
	for (unsigned long addr = start; addr < end; addr += PAGE_SIZE) {
		pte_t *pte;
		struct page *page = NULL;

		spin_lock(&mm->page_table_lock);
		pte = pte_lookup(mm->pgd, addr, false);
		if (pte && pte_has_page(*pte)) {
			page = pfn_to_page(pte_pfn(*pte));
			*pte = 0;
			tlb->flush = true;
			if (page && is_zero_pfn(page_to_pfn(page)))
				page = NULL;
			if (page) {
				page_remove_map(page);
				atomic_long_dec(&mm->rss);
				tlb->pages[tlb->nr++] = page;
			}
		}
		spin_unlock(&mm->page_table_lock);
		if (tlb->nr == GATHER_BATCH)
			tlb_flush_and_free(tlb);
	}
	tlb_flush_and_free(tlb);
	if (tlb != &fallback)
		kfree(tlb);
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
		err = insert_vma_file(mm, v->vm_start, v->vm_end, v->vm_flags, v->vm_file, v->vm_pgoff);
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
			page_add_map(page);
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
