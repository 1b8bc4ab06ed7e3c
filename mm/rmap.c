/*
 * The reverse map: anon_vmas and their chains, the file i_mmap lists, the
 * batched mapcount interface, page_vma_mapped_walk and rmap_walk
 * (include/quire/rmap.h, docs/mm/rmap.md).
 *
 * Mapcounts, as on Linux: every page keeps _mapcount (PTEs mapping it,
 * minus one); a large folio also keeps _entire_mapcount (PMDs mapping it
 * whole, minus one), _large_mapcount (all its PTE and PMD mappings, minus
 * one) and _nr_pages_mapped (its pages mapped by at least one PTE). The
 * functions below change them together, for a run of nr pages in one call.
 *
 * Lock order of the whole mm, outermost first (docs/locking.md):
 *   mm->mmap_lock (rwsem)
 *    the folio lock (PG_locked, sleeping; trylock only under the locks below)
 *     anon_vma->root->rwsem, mapping->i_mmap_rwsem
 *       the page-table locks: a PMD table's lock (PMD entries, deposited
 *       tables), then a PTE table's lock (its PTEs); fork: the parent's,
 *       then the child's; mremap (rmap locks held for writing): the old
 *       table's, then the new one's; split_folio_to_order: every mapper's
 *       PTE table lock by trylock; mm->page_table_lock (PGD/P4D/PUD
 *       entries, a VMA's first anon_vma) never together with them
 *         deferred_lock, then the page and slab allocator locks
 * Every rmap call below is made under the lock of the table holding the
 * entry that changes (or before a new table is installed, while no other
 * CPU can reach it).
 */
#define pr_fmt(fmt) "rmap: " fmt
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/fs.h>
#include <quire/slab.h>
#include <quire/errno.h>
#include <quire/panic.h>
#include <quire/printk.h>
#include <quire/cmdline.h>
#include <quire/mm_internal.h>
#include <quire/swapops.h>

bool rmap_batching = true;
CMDLINE_BOOL("rmap_batch", rmap_batching,
	     "handle runs of PTEs of one folio with one rmap call (0: one call per page)");

atomic_long_t mm_cost[NR_MM_COST_ITEMS];
const char *const mm_cost_names[NR_MM_COST_ITEMS] = {
	[MM_COST_RMAP_CALLS] = "rmap_calls",
	[MM_COST_PTL_ACQUIRE] = "ptl_acquire",
	[MM_COST_TLB_FLUSHES] = "tlb_flushes",
	[MM_COST_RMAP_WALK_STEPS] = "rmap_walk_steps",
};

/* ---- anon_vma ---- */

static struct anon_vma *anon_vma_alloc(struct anon_vma *parent)
{
	struct anon_vma *av = kzalloc(sizeof(*av), GFP_KERNEL);

	if (!av)
		return NULL;
	INIT_LIST_HEAD(&av->chains);
	if (parent) {
		av->root = parent->root;
		av->parent = parent;
		atomic_inc(&av->root->refcount);	/* the root's lock must outlive us */
	} else {
		av->root = av;
		init_rwsem(&av->rwsem);
	}
	return av;
}

void anon_vma_get(struct anon_vma *av)
{
	atomic_inc(&av->refcount);
}

void put_anon_vma(struct anon_vma *av)
{
	while (av && atomic_dec_and_test(&av->refcount)) {
		struct anon_vma *root = av->root;

		if (!list_empty(&av->chains))
			panic("put_anon_vma: anon_vma %p freed with VMAs still linked", av);
		kfree(av);
		av = root == av ? NULL : root;
	}
}

static void anon_vma_lock_write(struct anon_vma *av)
{
	down_write(&av->root->rwsem);
}

static void anon_vma_unlock_write(struct anon_vma *av)
{
	up_write(&av->root->rwsem);
}

/* Link vma to av with a new chain (its memory given); the caller holds av's root lock. */
static void anon_vma_chain_link(struct vm_area_struct *vma, struct anon_vma_chain *avc,
				struct anon_vma *av)
{
	avc->vma = vma;
	avc->anon_vma = av;
	anon_vma_get(av);
	list_add_tail(&avc->same_vma, &vma->anon_vma_chain);
	list_add_tail(&avc->same_anon_vma, &av->chains);
}

/* Give vma a new anon_vma (under parent's, when forked) as the one its new folios use. */
static int anon_vma_attach_new(struct vm_area_struct *vma, struct anon_vma *parent)
{
	struct anon_vma_chain *avc = kzalloc(sizeof(*avc), GFP_KERNEL);
	struct anon_vma *av = avc ? anon_vma_alloc(parent) : NULL;

	if (!av) {
		kfree(avc);
		return -ENOMEM;
	}
	anon_vma_lock_write(av);
	anon_vma_chain_link(vma, avc, av);
	vma->anon_vma = av;
	anon_vma_unlock_write(av);
	return 0;
}

/*
 * The first anonymous fault of a VMA gives it an anon_vma. Faults of other
 * threads may get here at the same moment (mmap_lock is only read): the
 * first to take page_table_lock attaches its anon_vma, the others free theirs.
 */
int anon_vma_prepare(struct vm_area_struct *vma)
{
	struct anon_vma_chain *avc;
	struct anon_vma *av;

	if (READ_ONCE(vma->anon_vma))
		return 0;
	avc = kzalloc(sizeof(*avc), GFP_KERNEL);
	av = avc ? anon_vma_alloc(NULL) : NULL;
	if (!av) {
		kfree(avc);
		return -ENOMEM;
	}
	anon_vma_lock_write(av);
	spin_lock(&vma->vm_mm->page_table_lock);
	if (!vma->anon_vma) {
		anon_vma_chain_link(vma, avc, av);
		/* Release: faults that find it without the lock use it (anon_vma_get). */
		__atomic_store_n(&vma->anon_vma, av, __ATOMIC_RELEASE);
		avc = NULL;
	}
	spin_unlock(&vma->vm_mm->page_table_lock);
	anon_vma_unlock_write(av);
	if (avc) {
		kfree(avc);
		kfree(av);	/* another fault attached one first; nothing refers to ours */
	}
	return 0;
}

int anon_vma_clone(struct vm_area_struct *dst, struct vm_area_struct *src)
{
	struct anon_vma_chain *pavc;

	list_for_each_entry(pavc, &src->anon_vma_chain, same_vma) {
		struct anon_vma_chain *avc = kzalloc(sizeof(*avc), GFP_KERNEL);

		if (!avc) {
			unlink_anon_vmas(dst);
			return -ENOMEM;
		}
		anon_vma_lock_write(pavc->anon_vma);
		anon_vma_chain_link(dst, avc, pavc->anon_vma);
		anon_vma_unlock_write(pavc->anon_vma);
	}
	dst->anon_vma = src->anon_vma;
	return 0;
}

int anon_vma_fork(struct vm_area_struct *vma, struct vm_area_struct *pvma)
{
	int err;

	vma->anon_vma = NULL;
	if (!pvma->anon_vma)
		return 0;	/* nothing anonymous yet: the child gets its own on first fault */
	err = anon_vma_clone(vma, pvma);
	if (!err)
		err = anon_vma_attach_new(vma, pvma->anon_vma);
	if (err)
		unlink_anon_vmas(vma);
	return err;
}

void unlink_anon_vmas(struct vm_area_struct *vma)
{
	struct anon_vma_chain *avc, *n;

	list_for_each_entry_safe(avc, n, &vma->anon_vma_chain, same_vma) {
		struct anon_vma *av = avc->anon_vma;

		anon_vma_lock_write(av);
		list_del(&avc->same_anon_vma);
		anon_vma_unlock_write(av);
		list_del(&avc->same_vma);
		put_anon_vma(av);
		kfree(avc);
	}
	vma->anon_vma = NULL;
}

void vma_rmap_lock(struct vm_area_struct *vma)
{
	if (vma->vm_file)
		down_write(&vma->vm_file->f_mapping->i_mmap_rwsem);
	if (vma->anon_vma)
		anon_vma_lock_write(vma->anon_vma);
}

void vma_rmap_unlock(struct vm_area_struct *vma)
{
	if (vma->anon_vma)
		anon_vma_unlock_write(vma->anon_vma);
	if (vma->vm_file)
		up_write(&vma->vm_file->f_mapping->i_mmap_rwsem);
}

static bool vma_links_anon_vma(struct vm_area_struct *vma, struct anon_vma *av)
{
	struct anon_vma_chain *avc;

	list_for_each_entry(avc, &vma->anon_vma_chain, same_vma)
		if (avc->anon_vma == av)
			return true;
	return false;
}

void vma_rmap_merge(struct vm_area_struct *lo, struct vm_area_struct *hi)
{
	struct anon_vma *av = lo->anon_vma ? lo->anon_vma : hi->anon_vma;
	struct anon_vma_chain *avc, *n;
	LIST_HEAD(drop);

	if (lo->vm_file != hi->vm_file || lo->vm_end != hi->vm_start ||
	    (lo->anon_vma && hi->anon_vma && lo->anon_vma != hi->anon_vma))
		panic("vma_rmap_merge: VMAs %p and %p cannot be merged", lo, hi);
	/* Every anon_vma linked to lo or hi shares av's root, and so its lock. */
	if (lo->vm_file)
		down_write(&lo->vm_file->f_mapping->i_mmap_rwsem);
	if (av)
		anon_vma_lock_write(av);
	lo->vm_end = hi->vm_end;
	list_for_each_entry_safe(avc, n, &hi->anon_vma_chain, same_vma) {
		if (vma_links_anon_vma(lo, avc->anon_vma)) {
			list_del(&avc->same_anon_vma);
			list_move_tail(&avc->same_vma, &drop);
		} else {
			avc->vma = lo;
			list_move_tail(&avc->same_vma, &lo->anon_vma_chain);
		}
	}
	lo->anon_vma = av;
	hi->anon_vma = NULL;
	if (hi->vm_file)
		list_del(&hi->shared);
	if (av)
		anon_vma_unlock_write(av);
	if (lo->vm_file)
		up_write(&lo->vm_file->f_mapping->i_mmap_rwsem);
	list_for_each_entry_safe(avc, n, &drop, same_vma) {
		list_del(&avc->same_vma);
		put_anon_vma(avc->anon_vma);
		kfree(avc);
	}
}

/* ---- i_mmap ---- */

void vma_link_file(struct vm_area_struct *vma)
{
	struct address_space *mapping = vma->vm_file->f_mapping;
	struct vm_area_struct *v;
	struct list_head *at = &mapping->i_mmap;

	down_write(&mapping->i_mmap_rwsem);
	list_for_each_entry(v, &mapping->i_mmap, shared) {
		if (v->vm_pgoff > vma->vm_pgoff) {
			at = &v->shared;
			break;
		}
	}
	list_add_tail(&vma->shared, at);
	up_write(&mapping->i_mmap_rwsem);
}

void vma_unlink_file(struct vm_area_struct *vma)
{
	struct address_space *mapping = vma->vm_file->f_mapping;

	down_write(&mapping->i_mmap_rwsem);
	list_del(&vma->shared);
	up_write(&mapping->i_mmap_rwsem);
}

/* ---- "maybe mapped shared" ---- */

#define MM_OWNER_SHARED	1UL

/* A large folio gains mappings from mm. */
static void folio_note_mapper(struct folio *folio, struct mm_struct *mm)
{
	unsigned long none = 0, me = (unsigned long)mm;

	if (__atomic_compare_exchange_n(&folio->_mm_owner, &none, me, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	if (none != me)
		__atomic_store_n(&folio->_mm_owner, MM_OWNER_SHARED, __ATOMIC_RELAXED);
}

bool folio_maybe_mapped_shared(const struct folio *folio)
{
	if (!folio_test_large(folio))
		return folio_mapcount(folio) > 1;
	return __atomic_load_n(&folio->_mm_owner, __ATOMIC_RELAXED) == MM_OWNER_SHARED;
}

/* ---- the mapcount core ---- */

/* nr pages from page gain one PTE mapping each: the pages newly mapped. */
static int pages_add_pte_maps(struct page *page, int nr)
{
	int first = 0;

	for (int i = 0; i < nr; i++)
		if (atomic_inc_return(&page[i]._mapcount) == 0)
			first++;
	return first;
}

static void folio_add_ptes(struct folio *folio, struct page *page, int nr,
			   struct vm_area_struct *vma)
{
	count_mm_cost(MM_COST_RMAP_CALLS);
	if (!folio_test_large(folio)) {
		VM_BUG_ON_FOLIO(nr != 1, folio);
		atomic_inc(&page->_mapcount);
		return;
	}
	VM_BUG_ON_FOLIO(page < folio_page(folio, 0) ||
			page + nr > folio_page(folio, folio_nr_pages(folio)), folio);
	atomic_add(pages_add_pte_maps(page, nr), &folio->_nr_pages_mapped);
	atomic_add(nr, &folio->_large_mapcount);
	folio_note_mapper(folio, vma->vm_mm);
}

static void folio_add_pmd(struct folio *folio, struct vm_area_struct *vma)
{
	count_mm_cost(MM_COST_RMAP_CALLS);
	VM_BUG_ON_FOLIO(folio_order(folio) != HPAGE_PMD_ORDER, folio);
	if (atomic_inc_return(&folio->_entire_mapcount) == 0 && folio_test_anon(folio))
		mod_nr_anon_thps(1);
	atomic_inc(&folio->_large_mapcount);
	folio_note_mapper(folio, vma->vm_mm);
}

static void set_anon_exclusive(struct page *page, int nr, int flags)
{
	if (flags & RMAP_EXCLUSIVE)
		for (int i = 0; i < nr; i++)
			SetPageAnonExclusive(&page[i]);
}

static unsigned long linear_page_index(struct vm_area_struct *vma, unsigned long address)
{
	return vma->vm_pgoff + ((address - vma->vm_start) >> PAGE_SHIFT);
}

void folio_add_new_anon_rmap(struct folio *folio, struct vm_area_struct *vma,
			     unsigned long address, int flags)
{
	unsigned long nr = folio_nr_pages(folio);
	struct anon_vma *av = READ_ONCE(vma->anon_vma);	/* set once, by a fault that may race ours */

	if (!av)
		panic("folio_add_new_anon_rmap: new anon folio in a VMA without anon_vma");
	set_page_flag((struct page *)folio, PG_anon);
	set_page_flag((struct page *)folio, PG_swapbacked);
	anon_vma_get(av);
	folio->mapping = av;
	folio->index = linear_page_index(vma, address);
	if (folio_test_large(folio)) {
		INIT_LIST_HEAD(&folio->lru);	/* the deferred split queue's link */
		folio->_mm_owner = 0;
		mod_mthp_stat(folio_order(folio), MTHP_STAT_NR_ANON, 1);
	}
	if (folio_order(folio) == HPAGE_PMD_ORDER)
		folio_add_pmd(folio, vma);
	else
		folio_add_ptes(folio, folio_page(folio, 0), nr, vma);
	set_anon_exclusive(folio_page(folio, 0), nr, flags | RMAP_EXCLUSIVE);
}

void folio_add_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *vma, unsigned long address, int flags)
{
	folio_add_ptes(folio, page, nr, vma);
	set_anon_exclusive(page, nr, flags);
}

void folio_add_anon_rmap_pmd(struct folio *folio, struct page *page,
			     struct vm_area_struct *vma, unsigned long address, int flags)
{
	folio_add_pmd(folio, vma);
	set_anon_exclusive(folio_page(folio, 0), folio_nr_pages(folio), flags);
}

void folio_add_file_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *vma)
{
	folio_add_ptes(folio, page, nr, vma);
}

void folio_add_file_rmap_pmd(struct folio *folio, struct page *page, struct vm_area_struct *vma)
{
	folio_add_pmd(folio, vma);
}

/* Would fork have to copy instead of share? A pinned exclusive page must not be shared. */
static bool dup_needs_copy(struct folio *folio, struct page *page, int nr)
{
	if (!folio_maybe_dma_pinned(folio))
		return false;
	for (int i = 0; i < nr; i++)
		if (PageAnonExclusive(&page[i]))
			return true;
	return false;
}

static void clear_anon_exclusive(struct page *page, int nr)
{
	for (int i = 0; i < nr; i++)
		ClearPageAnonExclusive(&page[i]);
}

int folio_try_dup_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
				 struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma)
{
	if (dup_needs_copy(folio, page, nr))
		return -EBUSY;
	clear_anon_exclusive(page, nr);
	folio_add_ptes(folio, page, nr, dst_vma);
	return 0;
}

int folio_try_dup_anon_rmap_pmd(struct folio *folio, struct page *page,
				struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma)
{
	if (dup_needs_copy(folio, folio_page(folio, 0), folio_nr_pages(folio)))
		return -EBUSY;
	clear_anon_exclusive(folio_page(folio, 0), folio_nr_pages(folio));
	folio_add_pmd(folio, dst_vma);
	return 0;
}

int folio_try_share_anon_rmap_pte(struct folio *folio, struct page *page)
{
	if (folio_maybe_dma_pinned(folio))
		return -EBUSY;
	ClearPageAnonExclusive(page);
	return 0;
}

int folio_try_share_anon_rmap_pmd(struct folio *folio, struct page *page)
{
	if (folio_maybe_dma_pinned(folio))
		return -EBUSY;
	clear_anon_exclusive(folio_page(folio, 0), folio_nr_pages(folio));
	return 0;
}

/* After a removal: a large folio fully unmapped forgets its mapper; a partly mapped one is queued. */
static void folio_after_remove(struct folio *folio)
{
	if (atomic_read(&folio->_large_mapcount) < 0) {
		folio->_mm_owner = 0;
		if (folio_test_anon(folio))
			deferred_split_dequeue(folio);
		return;
	}
	if (folio_test_anon(folio) && atomic_read(&folio->_entire_mapcount) < 0 &&
	    (unsigned long)atomic_read(&folio->_nr_pages_mapped) < folio_nr_pages(folio))
		deferred_split_folio(folio);
}

void folio_remove_rmap_ptes(struct folio *folio, struct page *page, int nr,
			    struct vm_area_struct *vma)
{
	int last = 0;

	count_mm_cost(MM_COST_RMAP_CALLS);
	if (!folio_test_large(folio)) {
		atomic_dec(&page->_mapcount);
		return;
	}
	for (int i = 0; i < nr; i++)
		if (atomic_dec_return(&page[i]._mapcount) < 0)
			last++;
	atomic_sub(last, &folio->_nr_pages_mapped);
	atomic_sub(nr, &folio->_large_mapcount);
	folio_after_remove(folio);
}

void folio_remove_rmap_pmd(struct folio *folio, struct page *page, struct vm_area_struct *vma)
{
	count_mm_cost(MM_COST_RMAP_CALLS);
	if (atomic_dec_return(&folio->_entire_mapcount) < 0 && folio_test_anon(folio))
		mod_nr_anon_thps(-1);
	atomic_dec(&folio->_large_mapcount);
	folio_after_remove(folio);
}

/* The free path: an anonymous folio lets go of its anon_vma and its counters. */
void folio_free_anon(struct folio *folio)
{
	if (folio_test_large(folio)) {
		deferred_split_dequeue(folio);
		mod_mthp_stat(folio_order(folio), MTHP_STAT_NR_ANON, -1);
	}
	put_anon_vma(folio->mapping);
	folio->mapping = NULL;
}

/* ---- finding the mappings ---- */

unsigned long vma_address(struct vm_area_struct *vma, unsigned long pgoff, unsigned long nr)
{
	unsigned long vma_pages = (vma->vm_end - vma->vm_start) >> PAGE_SHIFT;

	if (pgoff + nr <= vma->vm_pgoff || pgoff >= vma->vm_pgoff + vma_pages)
		return -EFAULT;
	if (pgoff < vma->vm_pgoff)
		return vma->vm_start;	/* the folio starts below the VMA: its first page inside */
	return vma->vm_start + ((pgoff - vma->vm_pgoff) << PAGE_SHIFT);
}

static bool pfn_in_folio(struct page_vma_mapped_walk *pvmw, unsigned long pfn)
{
	return pfn >= pvmw->pfn && pfn < pvmw->pfn + pvmw->nr_pages;
}

/*
 * Present PTEs and PROT_NONE-kept PTEs map a page; with PVMW_MIGRATION,
 * the walk looks for migration entries naming a page of the folio instead.
 * Device-private and device-exclusive entries map their page as a PTE does
 * (a reference, a mapcount): the walk finds them too.
 */
static bool check_pte(struct page_vma_mapped_walk *pvmw, pte_t pte)
{
	if (pvmw->flags & PVMW_MIGRATION)
		return is_migration_pte(pte) &&
		       pfn_in_folio(pvmw, swp_offset_pfn(pte_to_swp_entry(pte)));
	if (is_device_mapping_pte(pte))
		return pfn_in_folio(pvmw, swp_offset_pfn(pte_to_swp_entry(pte)));
	return pte_has_page(pte) && pfn_in_folio(pvmw, pte_pfn(pte));
}

void page_vma_mapped_walk_done(struct page_vma_mapped_walk *pvmw)
{
	if (pvmw->ptl)
		spin_unlock(pvmw->ptl);
	pvmw->ptl = NULL;
	pvmw->locked = false;
	pvmw->pte = pvmw->pmd = NULL;
}

/*
 * What the walk looks for in a PMD: a leaf mapping the folio, or with
 * PVMW_MIGRATION a PMD migration entry naming it.
 */
static bool check_pmd(struct page_vma_mapped_walk *pvmw, pte_t pmd)
{
	if (pvmw->flags & PVMW_MIGRATION)
		return is_pmd_migration_entry(pmd) &&
		       pfn_in_folio(pvmw, swp_offset_pfn(pmd_to_swp_entry(pmd)));
	return pmd_leaf(pmd) && pfn_in_folio(pvmw, pmd_pfn(pmd));
}

/*
 * The PMD the walk looks for, at pmd: true with its PMD lock held in
 * pvmw->ptl. False: not there; true in *again: a page table now (split
 * meanwhile), to walk by PTE.
 */
static bool pvmw_lock_pmd(struct page_vma_mapped_walk *pvmw, pte_t *pmd, bool *again)
{
	pvmw->ptl = pmd_lock(pvmw->vma->vm_mm, pmd);
	if (check_pmd(pvmw, *pmd))
		return true;
	*again = pmd_is_table(*pmd);
	spin_unlock(pvmw->ptl);
	pvmw->ptl = NULL;
	return false;
}

bool page_vma_mapped_walk(struct page_vma_mapped_walk *pvmw)
{
	struct vm_area_struct *vma = pvmw->vma;
	struct mm_struct *mm = vma->vm_mm;
	unsigned long addr;

	if (!pvmw->locked) {
		/* First call: the folio's range clipped to the VMA. */
		struct folio *folio = pvmw->folio;
		unsigned long first = folio->index;
		unsigned long last_page = vma->vm_pgoff + ((vma->vm_end - vma->vm_start) >> PAGE_SHIFT);
		unsigned long end_pgoff;

		pvmw->pfn = folio_pfn(folio);
		pvmw->nr_pages = folio_nr_pages(folio);
		pvmw->ptl = NULL;
		if (pvmw->address == (unsigned long)-EFAULT || pvmw->address < vma->vm_start)
			return false;
		end_pgoff = first + pvmw->nr_pages < last_page ? first + pvmw->nr_pages : last_page;
		pvmw->end = vma->vm_start + ((end_pgoff - vma->vm_pgoff) << PAGE_SHIFT);
		pvmw->locked = true;
		addr = pvmw->address;
	} else if (pvmw->pmd) {
		/* Past the PMD mapping: its lock goes. */
		addr = ALIGN_DOWN(pvmw->address, PMD_SIZE) + PMD_SIZE;
		spin_unlock(pvmw->ptl);
		pvmw->ptl = NULL;
	} else {
		addr = pvmw->address + PAGE_SIZE;	/* the PTE table's lock stays if addr is in it */
		if (IS_ALIGNED(addr, PMD_SIZE)) {	/* the next block has a table (or none) of its own */
			spin_unlock(pvmw->ptl);
			pvmw->ptl = NULL;
		}
	}
	pvmw->pte = pvmw->pmd = NULL;
	while (addr < pvmw->end) {
		unsigned long block_end = ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE;
		pte_t *pmd = pmd_lookup(mm->pgd, addr, false);
		pte_t pmdval = pmd ? READ_ONCE(*pmd) : 0;
		bool again = false;

		if (!pvmw->ptl) {
			if (!pmdval) {
				addr = block_end;
				continue;
			}
			if (!pmd_is_table(pmdval)) {
				/* A leaf or a PMD migration entry: the folio's, or nothing to find here. */
				if (check_pmd(pvmw, pmdval) && pvmw_lock_pmd(pvmw, pmd, &again)) {
					pvmw->pmd = pmd;
					pvmw->address = ALIGN_DOWN(addr, PMD_SIZE);
					return true;
				}
				if (!again)
					addr = block_end;
				continue;
			}
			if (!pte_offset_map_lock(mm, pmd, addr, &pvmw->ptl))
				continue;	/* a leaf now: look again */
		}
		for (; addr < pvmw->end && addr < block_end; addr += PAGE_SIZE) {
			pte_t *pte = pte_offset(pmd, addr);

			if (check_pte(pvmw, *pte)) {
				pvmw->pte = pte;
				pvmw->address = addr;
				return true;
			}
		}
		spin_unlock(pvmw->ptl);
		pvmw->ptl = NULL;
	}
	page_vma_mapped_walk_done(pvmw);
	return false;
}

static void rmap_walk_anon(struct folio *folio, struct rmap_walk_control *rwc)
{
	struct anon_vma *av = folio_anon_vma(folio);
	struct anon_vma_chain *avc;
	unsigned long nr = folio_nr_pages(folio);

	if (!av)
		return;
	if (!rwc->locked)
		down_read(&av->root->rwsem);
	else
		rwsem_assert_held(&av->root->rwsem);
	list_for_each_entry(avc, &av->chains, same_anon_vma) {
		unsigned long address = vma_address(avc->vma, folio->index, nr);

		count_mm_cost(MM_COST_RMAP_WALK_STEPS);
		if (address == (unsigned long)-EFAULT)
			continue;
		if (!rwc->rmap_one(folio, avc->vma, address, rwc->arg))
			break;
	}
	if (!rwc->locked)
		up_read(&av->root->rwsem);
}

static void rmap_walk_file(struct folio *folio, struct rmap_walk_control *rwc)
{
	struct address_space *mapping = folio->mapping;
	unsigned long nr = folio_nr_pages(folio);
	struct vm_area_struct *vma;

	if (!mapping)
		return;
	if (!rwc->locked)
		down_read(&mapping->i_mmap_rwsem);
	/* Sorted by first page: VMAs that start after the folio's end cannot map it. */
	list_for_each_entry(vma, &mapping->i_mmap, shared) {
		unsigned long address;

		if (vma->vm_pgoff >= folio->index + nr)
			break;
		count_mm_cost(MM_COST_RMAP_WALK_STEPS);
		address = vma_address(vma, folio->index, nr);
		if (address == (unsigned long)-EFAULT)
			continue;
		if (!rwc->rmap_one(folio, vma, address, rwc->arg))
			break;
	}
	if (!rwc->locked)
		up_read(&mapping->i_mmap_rwsem);
}

void rmap_walk(struct folio *folio, struct rmap_walk_control *rwc)
{
	if (folio_test_anon(folio))
		rmap_walk_anon(folio, rwc);
	else
		rmap_walk_file(folio, rwc);
}
