/*
 * Page migration (mm/migrate.c, docs/mm/migrate.md): move a folio's
 * contents to a new folio (on another node) while every process that maps
 * it keeps its virtual addresses. Linux's steps and names:
 *
 *   isolate    isolate_folio_to_list: a reference, PG_isolated, on a list
 *   lock       the source folio's lock, held until the end
 *   unmap      try_to_migrate: each PTE that maps it becomes a migration
 *              entry (keeps write/exclusive, dirty, young); a fault on one
 *              waits for the folio lock and retries
 *   copy       the contents, then the metadata (mapping, index, flags,
 *              the per-page anon-exclusive bits)
 *   restore    remove_migration_ptes: each entry becomes a PTE of the new
 *              folio (of the old one when the move failed)
 *
 * migrate_pages() does it for a list: it unmaps every folio of a batch,
 * then copies and restores them. With migrate_batch on (default), a run of
 * PTEs mapping consecutive pages of one folio is unmapped and restored as
 * one step (one rmap call, one TLB flush); migrate_batch=0 (command line or
 * /sys/kernel/mm/migrate/batch) does the same work one page at a time.
 */
#ifndef QUIRE_MIGRATE_H
#define QUIRE_MIGRATE_H

#include <quire/types.h>
#include <quire/list.h>
#include <quire/gfp.h>
#include <quire/atomic.h>
#include <quire/swapops.h>

struct folio;
struct page;
struct vm_area_struct;

/* Why a folio moves (Linux's enum migrate_reason, the ones Quire has). */
enum migrate_reason {
	MR_MEMORY_FAILURE,
	MR_SYSCALL,		/* move_pages, migrate_pages */
	MR_MEMPOLICY_MBIND,	/* mbind with MPOL_MF_MOVE(_ALL) */
	MR_NUMA_MISPLACED,
	MR_LONGTERM_PIN,
	MR_DEMOTION,
	MR_TYPES
};

enum migrate_mode {
	MIGRATE_ASYNC,
	MIGRATE_SYNC_LIGHT,
	MIGRATE_SYNC,
};

/* Where a migrated folio goes: a new folio for src, or NULL (that folio fails with -ENOMEM). */
typedef struct folio *new_folio_t(struct folio *src, unsigned long private);
/* Gives back a new folio the move did not use; NULL: folio_put. */
typedef void free_folio_t(struct folio *dst, unsigned long private);

/* For alloc_migration_target: private points at one of these. */
struct migration_target_control {
	int nid;		/* the node (NUMA_NO_NODE: the source's) */
	gfp_t gfp_mask;		/* __GFP_THISNODE: that node or nothing */
};
struct folio *alloc_migration_target(struct folio *src, unsigned long private);

/*
 * Take a user folio (anonymous or page cache) for migration: true, with a
 * reference held and the folio on list, or false (already isolated by
 * someone, being freed, or not a user folio). The caller holds a reference
 * or the page-table lock of a mapping, so that the folio cannot be freed.
 */
bool isolate_folio_to_list(struct folio *folio, struct list_head *list);
/* Give back every folio on the list (those migrate_pages left there). */
void putback_movable_pages(struct list_head *list);

/*
 * Move every folio on from. Returns the number of folios that were not
 * moved (left on from: putback_movable_pages gives them back), or -ENOMEM
 * when a target could not be had and nothing else failed; *nr_succeeded
 * (may be NULL) gets the number of base pages moved. Sleeps.
 */
int migrate_pages(struct list_head *from, new_folio_t get_new_folio, free_folio_t put_new_folio,
		  unsigned long private, enum migrate_mode mode, int reason,
		  unsigned int *nr_succeeded);

/* Batching switch (default on): off, unmap and restore one PTE at a time. */
extern bool migrate_batching;

/*
 * Tests only (tests/kernel/migrate_test.c): called with the first folio of
 * each batch once the batch is unmapped, before anything is copied, so a
 * test can make a fault meet the migration entries. NULL otherwise.
 */
extern void (*migrate_unmapped_hook)(struct folio *src);

/* A fault met a migration entry: sleep until its folio is unlocked (then fault again). */
void migration_entry_wait_on_locked(swp_entry_t entry);

/* /proc/vmstat's migration counters, with Linux's names. */
enum migrate_event {
	PGMIGRATE_SUCCESS,	/* base pages moved */
	PGMIGRATE_FAIL,		/* base pages that could not be */
	THP_MIGRATION_SUCCESS,	/* PMD-sized folios moved whole */
	THP_MIGRATION_FAIL,
	THP_MIGRATION_SPLIT,	/* PMD-sized folios split to move (no target of their size) */
	NR_MIGRATE_EVENTS
};
extern atomic_long_t migrate_events[NR_MIGRATE_EVENTS];
extern const char *const migrate_event_names[NR_MIGRATE_EVENTS];

struct mm_struct;
/* Every folio mapped in [start, end) of mm to node (mm/move_pages.c): pages not moved, or an error. */
long migrate_range_to_node(struct mm_struct *mm, unsigned long start, unsigned long end, int node);
long sys_move_pages(u64 pid, u64 nr_pages, u64 pages, u64 nodes, u64 status, u64 flags);
long sys_migrate_pages(u64 pid, u64 maxnode, u64 old_nodes, u64 new_nodes, u64 a4, u64 a5);

/* ---- device migration (mm/migrate_device.c, docs/mm/device-memory.md) ---- */

/*
 * A src[]/dst[] word: a frame number above MIGRATE_PFN_SHIFT and these
 * bits, as Linux's. src: MIGRATE_PFN_MIGRATE when the page (or the empty
 * slot) may move, MIGRATE_PFN_WRITE when it was mapped writable. dst: the
 * driver's new page with MIGRATE_PFN_VALID, locked and referenced.
 */
#define MIGRATE_PFN_VALID	(1UL << 0)
#define MIGRATE_PFN_MIGRATE	(1UL << 1)
#define MIGRATE_PFN_WRITE	(1UL << 3)
#define MIGRATE_PFN_SHIFT	6

static inline unsigned long migrate_pfn(unsigned long pfn)
{
	return (pfn << MIGRATE_PFN_SHIFT) | MIGRATE_PFN_VALID;
}

struct page *migrate_pfn_to_page(unsigned long mpfn);

enum migrate_vma_direction {
	MIGRATE_VMA_SELECT_SYSTEM = 1 << 0,		/* pages of system memory */
	MIGRATE_VMA_SELECT_DEVICE_PRIVATE = 1 << 1,	/* device-private pages of pgmap_owner */
	MIGRATE_VMA_SELECT_DEVICE_COHERENT = 1 << 2,	/* (no coherent memory in Quire yet) */
};

struct migrate_vma {
	struct vm_area_struct *vma;
	unsigned long *dst;		/* (end - start) / PAGE_SIZE words each */
	unsigned long *src;
	unsigned long cpages;		/* out: pages collected, then unmapped */
	unsigned long npages;		/* out: words of src[] filled */
	unsigned long start, end;	/* in: page aligned, inside vma; out: end = start + npages pages */
	void *pgmap_owner;		/* the device's (device-private pages of it are selected) */
	unsigned long flags;		/* MIGRATE_VMA_SELECT_* */
	struct page *fault_page;	/* from migrate_to_ram: the locked page the CPU touched */
};

/*
 * Collect [start, end) of vma (mmap_lock held for reading) into src[],
 * lock and unmap what can move: 0, or -EINVAL for a bad range or arrays.
 * Then the driver fills dst[] and copies, migrate_vma_pages() moves the
 * metadata, migrate_vma_finalize() maps the new pages (or the old ones
 * back) and unlocks everything.
 */
int migrate_vma_setup(struct migrate_vma *args);
void migrate_vma_pages(struct migrate_vma *migrate);
void migrate_vma_finalize(struct migrate_vma *migrate);
/* Eviction: the device pages [start, start + npages) that are in use, locked and unmapped. */
int migrate_device_range(unsigned long *src_pfns, unsigned long start, unsigned long npages);
void migrate_device_pages(unsigned long *src_pfns, unsigned long *dst_pfns, unsigned long npages);
void migrate_device_finalize(unsigned long *src_pfns, unsigned long *dst_pfns,
			     unsigned long npages);

/*
 * A device-coherent folio out to system memory (a FOLL_LONGTERM pin): the
 * caller's reference goes with it. 0 or -EBUSY.
 */
int migrate_device_coherent_folio(struct folio *folio);

/*
 * Collect-time unmap (default on): a folio locked while collecting gets
 * its migration entry there, under the PTE lock, instead of in a later
 * rmap walk. Off ("migrate_device_collect_unmap=0", sysfs), the later walk
 * unmaps every page: for the benchmark.
 */
extern bool migrate_device_collect_unmap;
/* Collections started again from the start because a PMD changed under them. */
extern atomic_long_t migrate_device_restarts;
/* Tests: called while collection has dropped the PTE lock to split a folio. */
extern void (*migrate_device_split_hook)(struct migrate_vma *migrate, unsigned long addr);

/*
 * Give a device exclusive access to the pages of [start, start + npages)
 * (mmap_lock held for reading): each is faulted in writable and its PTE
 * becomes a device-exclusive entry; pages[i] is returned locked and
 * referenced (NULL where it could not be). The number of pages, or -errno.
 */
int make_device_exclusive_range(struct mm_struct *mm, unsigned long start, unsigned long end,
				struct page **pages, void *owner);

#endif
