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

#endif
