/*
 * The reverse map (mm/rmap.c, docs/mm/rmap.md): from a folio back to every
 * page-table entry that maps it.
 *
 * Anonymous memory: each VMA that has faulted anonymous pages owns an
 * anon_vma; a fork gives the child's VMA its own anon_vma too and links it,
 * through anon_vma_chains, to every anon_vma its parent's VMA was linked
 * to. A new anonymous folio points (folio->mapping) at the anon_vma of the
 * VMA it was faulted in; every VMA that may map it, after any sequence of
 * fork, exit and munmap, is linked to that anon_vma. A folio holds a
 * reference on its anon_vma until it is freed.
 *
 * Files: each address_space keeps the VMAs that map it (i_mmap), sorted by
 * the first file page they map.
 *
 * The mapcount interface is Linux's after the rmap overhaul: the caller says
 * how the folio is mapped (by one PTE, by a run of nr PTEs, by one PMD) and
 * each call updates the per-page mapcount, the folio's large and entire
 * mapcounts and the number of pages mapped, in one go for a run. Callers
 * hold the page-table lock of the mapping mm. The references the mappings
 * hold (one per PTE, one per PMD) are the caller's business, as on Linux.
 */
#ifndef QUIRE_RMAP_H
#define QUIRE_RMAP_H

#include <quire/mm.h>
#include <quire/list.h>
#include <quire/rwsem.h>
#include <quire/atomic.h>
#include <quire/pte.h>
#include <quire/spinlock.h>

struct vm_area_struct;
struct mm_struct;
struct address_space;

struct anon_vma {
	struct anon_vma *root;		/* the first of its fork tree: holds the lock */
	struct anon_vma *parent;	/* the anon_vma the fork came from (NULL: root) */
	struct rw_semaphore rwsem;	/* the root's: protects every chain list of the tree */
	atomic_t refcount;		/* chains + folios + children pointing here */
	struct list_head chains;	/* struct anon_vma_chain.same_anon_vma */
};

/* Links one VMA to one anon_vma it may find folios of. */
struct anon_vma_chain {
	struct vm_area_struct *vma;
	struct anon_vma *anon_vma;
	struct list_head same_vma;	/* in vma->anon_vma_chain */
	struct list_head same_anon_vma;	/* in anon_vma->chains */
};

/* ---- anon_vma life cycle (mmap_lock held for writing, or for reading in a fault) ---- */

/* Give vma an anon_vma before its first anonymous folio: 0 or -ENOMEM. */
int anon_vma_prepare(struct vm_area_struct *vma);
/* dst (a split-off piece of src, or its fork copy) is linked to everything src is. */
int anon_vma_clone(struct vm_area_struct *dst, struct vm_area_struct *src);
/* fork: clone, then give the child VMA its own anon_vma under the parent's. */
int anon_vma_fork(struct vm_area_struct *vma, struct vm_area_struct *pvma);
/* Drop every chain of a VMA that goes away. */
void unlink_anon_vmas(struct vm_area_struct *vma);
void put_anon_vma(struct anon_vma *anon_vma);

/*
 * Around a change of a VMA's bounds or vm_pgoff (split_vma, expand_stack):
 * rmap walkers, which hold only these locks, never see it half done.
 * i_mmap_rwsem first, then the anon_vma root lock.
 */
void vma_rmap_lock(struct vm_area_struct *vma);
void vma_rmap_unlock(struct vm_area_struct *vma);
/*
 * The rmap half of merging two adjacent VMAs of one file (or none) whose
 * anon_vmas are the same or one is NULL: lo grows over hi and takes hi's
 * chains, and hi leaves i_mmap, in one critical section, so a walk finds
 * each mapping through exactly one of them. hi is left with no rmap links
 * (the caller frees it). mmap_lock held for writing.
 */
void vma_rmap_merge(struct vm_area_struct *lo, struct vm_area_struct *hi);

/* ---- the file side (i_mmap) ---- */

void vma_link_file(struct vm_area_struct *vma);
void vma_unlink_file(struct vm_area_struct *vma);

/* ---- folio state ---- */

static inline bool folio_test_anon(const struct folio *folio)
{
	return test_page_flag((const struct page *)folio, PG_anon);
}

static inline struct anon_vma *folio_anon_vma(const struct folio *folio)
{
	return folio_test_anon(folio) ? (struct anon_vma *)folio->mapping : NULL;
}

/* Mapped by one PMD or more. */
static inline int folio_entire_mapcount(const struct folio *folio)
{
	return folio_test_large(folio) ? atomic_read(&folio->_entire_mapcount) + 1 : 0;
}

/* Every PTE and PMD that maps any page of the folio. */
static inline int folio_mapcount(const struct folio *folio)
{
	if (!folio_test_large(folio))
		return atomic_read(&folio->_mapcount) + 1;
	return atomic_read(&folio->_large_mapcount) + 1;
}

static inline bool folio_mapped(const struct folio *folio)
{
	return folio_mapcount(folio) > 0;
}

/* The PTEs that map this page, plus the PMDs that map its whole folio. */
static inline int page_mapcount(const struct page *page)
{
	const struct folio *folio = page_folio(page);

	return atomic_read(&page->_mapcount) + 1 + folio_entire_mapcount(folio);
}

/* Pages of the folio mapped by at least one PTE. */
static inline int folio_nr_pages_mapped(const struct folio *folio)
{
	return folio_test_large(folio) ? atomic_read(&folio->_nr_pages_mapped) : 0;
}

/*
 * False only when every mapping of the folio belongs to one mm. Small
 * folios: more than one mapping. Large folios remember the one mm that
 * mapped them since they were last fully unmapped; a second mm makes them
 * "maybe shared" until they are fully unmapped again (docs/mm/rmap.md).
 */
bool folio_maybe_mapped_shared(const struct folio *folio);

/* Pinned for DMA (FOLL_PIN; GUP is not implemented yet): such a page is never shared by fork. */
#define GUP_PIN_COUNTING_BIAS	1024
static inline bool folio_maybe_dma_pinned(const struct folio *folio)
{
	if (folio_test_large(folio))
		return atomic_read(&folio->_pincount) > 0;
	return folio_ref_count(folio) >= GUP_PIN_COUNTING_BIAS;
}

/*
 * A copy-on-write fault may reuse the folio in place: it is not pinned,
 * every reference is a mapping, and every mapping is the faulting mm's
 * (only one mapping at all, the faulting one, or no other mm maps it).
 */
static inline bool folio_mapped_by_us_only(const struct folio *folio)
{
	return !folio_maybe_dma_pinned(folio) && folio_ref_count(folio) == folio_mapcount(folio) &&
	       (folio_mapcount(folio) == 1 || !folio_maybe_mapped_shared(folio));
}

/* ---- the batched rmap interface (page-table lock held) ---- */

#define RMAP_NONE	0
#define RMAP_EXCLUSIVE	1	/* the new mapping is PageAnonExclusive */

/* A new anonymous folio mapped whole at address (by PTEs, or a PMD when PMD-sized). */
void folio_add_new_anon_rmap(struct folio *folio, struct vm_area_struct *vma,
			     unsigned long address, int flags);
void folio_add_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *vma, unsigned long address, int flags);
#define folio_add_anon_rmap_pte(folio, page, vma, address, flags) \
	folio_add_anon_rmap_ptes(folio, page, 1, vma, address, flags)
void folio_add_anon_rmap_pmd(struct folio *folio, struct page *page,
			     struct vm_area_struct *vma, unsigned long address, int flags);

/*
 * fork: the child maps what the parent maps. Anonymous pages lose
 * PageAnonExclusive (both now share them); -EBUSY, with nothing changed,
 * when a page is exclusive and its folio may be pinned: the caller copies.
 */
int folio_try_dup_anon_rmap_ptes(struct folio *folio, struct page *page, int nr,
				 struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma);
#define folio_try_dup_anon_rmap_pte(folio, page, dst, src) \
	folio_try_dup_anon_rmap_ptes(folio, page, 1, dst, src)
int folio_try_dup_anon_rmap_pmd(struct folio *folio, struct page *page,
				struct vm_area_struct *dst_vma, struct vm_area_struct *src_vma);

/*
 * An exclusive page is about to be unmapped for a while (migration, later
 * swap) and mapped again: it stops being PageAnonExclusive, unless its folio
 * may be pinned (-EBUSY, nothing changed: the caller must leave it mapped).
 * The caller has cleared the entry and flushed the TLB.
 */
int folio_try_share_anon_rmap_pte(struct folio *folio, struct page *page);
int folio_try_share_anon_rmap_pmd(struct folio *folio, struct page *page);

void folio_add_file_rmap_ptes(struct folio *folio, struct page *page, int nr,
			      struct vm_area_struct *vma);
#define folio_add_file_rmap_pte(folio, page, vma) folio_add_file_rmap_ptes(folio, page, 1, vma)
void folio_add_file_rmap_pmd(struct folio *folio, struct page *page, struct vm_area_struct *vma);
#define folio_dup_file_rmap_ptes(folio, page, nr, vma) \
	folio_add_file_rmap_ptes(folio, page, nr, vma)
#define folio_dup_file_rmap_pte(folio, page, vma) folio_add_file_rmap_ptes(folio, page, 1, vma)
#define folio_dup_file_rmap_pmd(folio, page, vma) folio_add_file_rmap_pmd(folio, page, vma)

void folio_remove_rmap_ptes(struct folio *folio, struct page *page, int nr,
			    struct vm_area_struct *vma);
#define folio_remove_rmap_pte(folio, page, vma) folio_remove_rmap_ptes(folio, page, 1, vma)
void folio_remove_rmap_pmd(struct folio *folio, struct page *page, struct vm_area_struct *vma);

/* ---- walking the mappings of a folio ---- */

/*
 * page_vma_mapped_walk: the entries of one VMA that map the folio's pages.
 * Set folio, vma, address (where the folio would be in vma), call it until
 * it returns false; each true leaves pte or pmd (the other NULL) pointing
 * at one mapping, with the lock of the table holding that entry held in
 * ptl (the PTE table's for a PTE, the PMD table's for a PMD). A caller that stops
 * early calls page_vma_mapped_walk_done. With PVMW_MIGRATION in flags it
 * finds the migration entries that name the folio's pages instead (a PMD
 * migration entry, for a THP that was PMD-mapped, with pmd set). A walk
 * without it passes PMD migration entries by. A caller that handled a run
 * of entries from pte on may move pte and address to the run's last entry
 * (in the same table) before the next call.
 */

#define PVMW_MIGRATION	(1 << 0)

struct page_vma_mapped_walk {
	struct folio *folio;
	unsigned long pfn, nr_pages;
	struct vm_area_struct *vma;
	unsigned long address;		/* in: the folio's first page; out: this entry's */
	unsigned int flags;		/* in: PVMW_MIGRATION */
	pte_t *pmd;			/* a PMD mapping (a pmd entry), or NULL */
	pte_t *pte;			/* a PTE mapping, or NULL */
	spinlock_t *ptl;		/* held while pte or pmd is set */
	bool locked;			/* private: the walk has started */
	unsigned long end;		/* private */
};

bool page_vma_mapped_walk(struct page_vma_mapped_walk *pvmw);
void page_vma_mapped_walk_done(struct page_vma_mapped_walk *pvmw);

/* Where page index pgoff would be in vma, or -EFAULT when outside. */
unsigned long vma_address(struct vm_area_struct *vma, unsigned long pgoff, unsigned long nr);

/*
 * rmap_walk: call rmap_one(folio, vma, address, arg) for every VMA that may
 * map the folio (address: where its first page would be); returning false
 * stops the walk. Takes the anon_vma root lock or i_mmap_rwsem for reading
 * (docs/locking.md); rmap_one takes page-table locks itself.
 */
struct rmap_walk_control {
	void *arg;
	bool (*rmap_one)(struct folio *folio, struct vm_area_struct *vma,
			 unsigned long address, void *arg);
	bool locked;	/* the caller holds the anon_vma / i_mmap lock already */
};
void rmap_walk(struct folio *folio, struct rmap_walk_control *rwc);

/* ---- batching switch and cost counters (make bench, docs/bench.md) ---- */

/*
 * rmap_batching: on (default), runs of PTEs that map consecutive pages of one
 * folio are handled with one _ptes call; off ("rmap_batch=0" on the command
 * line, or a benchmark), every PTE takes the per-page call.
 */
extern bool rmap_batching;

enum mm_cost_item {
	MM_COST_RMAP_CALLS,	/* calls into the folio_*_rmap_* interface */
	MM_COST_PTL_ACQUIRE,	/* page-table lock acquisitions */
	MM_COST_TLB_FLUSHES,	/* flush_tlb_mm_range calls */
	MM_COST_RMAP_WALK_STEPS,/* VMAs visited by rmap_walk */
	NR_MM_COST_ITEMS,
};
extern atomic_long_t mm_cost[NR_MM_COST_ITEMS];
extern const char *const mm_cost_names[NR_MM_COST_ITEMS];

static inline void count_mm_cost(enum mm_cost_item item)
{
	atomic_long_inc(&mm_cost[item]);
}

#endif
