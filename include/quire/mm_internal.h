/* Interfaces between the files of mm/ that nothing else should call. */
#ifndef QUIRE_MM_INTERNAL_H
#define QUIRE_MM_INTERNAL_H

#include <quire/types.h>

/* page_alloc.c: hand free frames [start, end) of a node to the buddy lists at boot. */
void free_boot_range(int nid, unsigned long start_pfn, unsigned long end_pfn);
/* Index the nodes' memmap spans for pfn_to_page() (mm/page_alloc.c); once they are set. */
void pfn_sections_init(void);
/* page_alloc.c: "bad page" and use-after-free reports so far. */
extern unsigned long page_alloc_errors;
/* slab.c */
void kmem_cache_init(void);

#endif

/* ---- user memory (memory.c, zap.c, fork_copy.c, mprotect.c, huge_memory.c, rmap.c) ---- */
#include <quire/pte.h>

struct folio;
struct page;
struct mm_struct;
struct vm_area_struct;
struct address_space;

/* page_alloc.c: reference counting beyond get/put. */
void folio_ref_add(struct folio *folio, int nr);
void folio_put_refs(struct folio *folio, int nr);
/* A reference unless the folio is already on its way to being freed (refcount 0). */
bool folio_try_get(struct folio *folio);

/* mmap.c, for madvise.c. mmap_lock held for writing. */
/*
 * Give each VMA covering [start, end) the flags (old & ~clear) | set,
 * splitting and merging VMAs as needed (protection: change the entries
 * too). A hole ends the walk with -ENOMEM.
 */
int modify_vma_flags(struct mm_struct *mm, unsigned long start, unsigned long end,
		     unsigned long clear, unsigned long set, bool protection);
/*
 * The general form (mmap.c, for mempolicy.c too): each VMA covering
 * [start, end) that differs(v, arg) is split at the range's ends, given
 * apply(v, arg), then merged with its neighbours; one that does not differ
 * stays whole. A hole: -ENOMEM, or skipped with skip_holes.
 */
struct vma_modify {
	bool (*differs)(struct vm_area_struct *v, void *arg);
	void (*apply)(struct vm_area_struct *v, void *arg);
	void *arg;
	bool skip_holes;
};
int modify_vma_range(struct mm_struct *mm, unsigned long start, unsigned long end,
		     const struct vma_modify *m);
/* fn (when given) on the part of each VMA inside [start, end); a hole: -ENOMEM. */
int for_each_vma_part(struct mm_struct *mm, unsigned long start, unsigned long end,
		      void (*fn)(struct vm_area_struct *v, unsigned long from, unsigned long to));

/* memory.c */
/* A read-only PTE of the shared zero page for vma (what a read fault maps). */
pte_t zero_page_pte(struct vm_area_struct *vma);
/* The bits that may differ inside one batch go (hardware sets them page by page). */
static inline pte_t pte_batch_bits(pte_t pte)
{
	return pte_mkold(pte_mkclean(pte));
}
/*
 * folio_pte_batch: how many PTEs from ptep on (ptep maps a page of folio
 * with the value pte) map the following pages of the same folio with the
 * same bits (accessed and dirty aside); at most max_nr, never past the
 * folio's end. Always 1 with rmap_batching off.
 */
int folio_pte_batch(struct folio *folio, pte_t *ptep, pte_t pte, int max_nr);
/* The same run whatever rmap_batching says (migration has a switch of its own). */
int folio_pte_run(struct folio *folio, pte_t *ptep, pte_t pte, int max_nr);

/*
 * migrate.c, for migrate_device.c: unmap a locked folio everywhere (false:
 * pinned, or still mapped); turn every migration entry naming src into a
 * mapping of dst (src itself: back as it was); hand src's mapping (anon_vma
 * or page-cache slot) to dst when src has no references but the caller's
 * and extra_count more (-EAGAIN otherwise); copy the flags that say what
 * the folio is.
 */
bool try_to_migrate(struct folio *folio);
void remove_migration_ptes(struct folio *src, struct folio *dst);
int folio_migrate_mapping(struct folio *dst, struct folio *src, int extra_count);
void folio_migrate_flags(struct folio *dst, struct folio *src);

/*
 * device_entries.c: a CPU fault on a device-private entry (the owner's
 * migrate_to_ram moves the page back) or on a device-exclusive entry (the
 * present PTE comes back); fork and zap on either. Return as a fault step:
 * -EAGAIN to fault again, or the error.
 */
int device_private_entry_fault(struct vm_area_struct *vma, pte_t *pmd, unsigned long addr,
			       unsigned int flags, pte_t entry);
int device_exclusive_entry_fault(struct vm_area_struct *vma, pte_t *pmd, unsigned long addr,
				 pte_t entry);
/* The PTE at ptep (its lock held) holds a device-exclusive entry: make it present again. */
void restore_exclusive_pte(struct vm_area_struct *vma, pte_t *ptep, unsigned long addr);
/* fork: the child gets the device entry at src (the parent's table lock held; see copy_ptes). */
void copy_device_entry(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
		       pte_t *dst, pte_t *src, unsigned long addr);
/* zap: the device entry's mapping goes (its table's lock held); the folio to put after the flush. */
struct folio *zap_device_entry(struct vm_area_struct *vma, pte_t *ptep, unsigned long addr);

/* rmap.c: the free path of an anonymous folio (page_alloc.c calls it); one more folio reference. */
void folio_free_anon(struct folio *folio);
struct anon_vma;
void anon_vma_get(struct anon_vma *av);

/* huge_memory.c */
/* Queue a partially mapped large anon folio for splitting; take it off the queue. */
void deferred_split_folio(struct folio *folio);
void deferred_split_dequeue(struct folio *folio);
/*
 * Migration's isolation (mm/migrate.c): set PG_isolated, taking the folio
 * off the deferred split queue (both share folio->lru), under the queue's
 * lock: false when it was isolated already. A partly mapped folio goes
 * back on the queue when it is put back.
 */
bool folio_isolate_deferred(struct folio *folio);
void folio_putback_deferred(struct folio *folio);
/* Queue a large anonymous folio that is mapped only in part (after a migration, a putback). */
void deferred_split_if_partial(struct folio *folio);
/*
 * What a fault handler for one page-table level did (Linux's vm_fault_t,
 * the kinds Quire needs). handle_mm_fault turns it into 0 or -errno.
 */
typedef enum {
	VM_FAULT_DONE,		/* handled here, or by a racing fault meanwhile */
	VM_FAULT_FALLBACK,	/* not at this level: go on by PTEs */
	VM_FAULT_OOM,		/* no memory for what the fault needs */
} vm_fault_t;

/*
 * A fault in a PMD-aligned 2 MiB hole. A write (a forced one of a read-only
 * VMA too: mapped read-only and dirty) maps a new THP, a read the huge
 * zero page: FALLBACK when no 2 MiB folio is to be had.
 */
vm_fault_t do_huge_pmd_anonymous_page(struct vm_area_struct *vma, unsigned long addr,
				      pte_t *pmd, bool write);
/* A 2 MiB folio (zeroed) for haddr of vma, on the node the memory policy says. */
struct folio *alloc_pmd_folio(struct vm_area_struct *vma, unsigned long haddr);
/* A write to a read-only PMD mapping: FALLBACK when the PMD was split (or is gone). */
vm_fault_t do_huge_pmd_wp_page(struct vm_area_struct *vma, unsigned long addr, pte_t *pmd);
/*
 * fork: copy one PMD mapping (both PMD locks held, the parent's first):
 * true when the child shares it (table is deposited for it), false when it
 * was split instead (a maybe-pinned folio): the source PMD then points to a
 * page table whose PTEs the caller copies.
 */
bool copy_huge_pmd(struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma,
		   pte_t *dst_pmd, pte_t *src_pmd, unsigned long addr, struct page *table);
/*
 * munmap of a whole PMD mapping (PMD lock held): the folio to put after the
 * flush (NULL for the huge zero page).
 */
struct folio *zap_huge_pmd(struct vm_area_struct *vma, pte_t *pmd, struct page **table);
/* The PMD mapping at pmd becomes 512 PTEs (PMD lock held; the caller flushes). */
void __split_huge_pmd_locked(struct vm_area_struct *vma, pte_t *pmd, unsigned long haddr);
/* A page table for a future split of the PMD mapping at pmd; withdraw one back (PMD lock held). */
void pgtable_deposit(struct mm_struct *mm, pte_t *pmd, struct page *table);
struct page *pgtable_withdraw(struct mm_struct *mm, pte_t *pmd);

/*
 * pagewalk.c: walk_range hands each entry of [start, end) (inside one VMA,
 * mmap_lock held) to w, under the page-table lock of its 2 MiB block.
 */
struct mmu_walk {
	/* a PTE (possibly empty) of addr */
	void (*pte)(struct mmu_walk *w, unsigned long addr, pte_t pte);
	/* a PMD leaf mapping [addr, end) (part of its 2 MiB) */
	void (*pmd)(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd);
	/* nothing mapped in [addr, end) (optional) */
	void (*hole)(struct mmu_walk *w, unsigned long addr, unsigned long end);
	/*
	 * A PMD migration entry over [addr, end) (optional: without it, pte is
	 * called for each page with the PTE migration entry a split would
	 * make, and slot is NULL: read-only walks see it as PTE entries).
	 */
	void (*swap_pmd)(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd);
	/*
	 * Where the entry handed to pte or pmd lives, for a walk that changes
	 * it (clear_refs); its page-table lock is held during the call.
	 */
	pte_t *slot;
};
void walk_range(struct mm_struct *mm, unsigned long start, unsigned long end, struct mmu_walk *w);
/*
 * The folio behind a frame mapped in a user page table (and its page in
 * *pagep), or NULL for a special page: the shared zero page, or a frame
 * with no struct page. Page-table lock held.
 */
struct folio *normal_folio(unsigned long pfn, struct page **pagep);
/* The same for what a PTE maps: NULL when it maps no frame or a special page. */
struct folio *pte_normal_folio(pte_t pte, struct page **pagep);

/* mmap.c */
/* v (just mapped, moved, grown or given new flags) joins compatible neighbours: the VMA now holding it. */
struct vm_area_struct *vma_merge(struct vm_area_struct *v);
/*
 * Where a new mapping of len bytes goes: [hint, hint + len) when hint is
 * not 0 and that range is free (and above MMAP_MIN_ADDR), else the highest
 * free gap below mmap_base. 0: no room.
 */
unsigned long mmap_free_range(struct mm_struct *mm, unsigned long hint, unsigned long len);

/* zap.c: unmap every page of a file from index first on, in every VMA (truncate). */
void unmap_mapping_pages(struct address_space *mapping, unsigned long first);
