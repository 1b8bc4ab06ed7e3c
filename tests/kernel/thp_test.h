/*
 * Helpers shared by the files of the thp suite (tests/kernel/thp*_test.c):
 * address spaces built in the test, the THP controls saved and restored,
 * page-table lookups, a byte pattern per page. Defined in thp_test_util.c.
 */
#ifndef TESTS_THP_TEST_H
#define TESTS_THP_TEST_H

#include <quire/ktest.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/huge_mm.h>
#include <quire/pte.h>
#include <quire/numa.h>
#include <quire/sched.h>
#include <quire/migrate.h>

#define SZ_4K	0x1000UL
#define SZ_16K	0x4000UL
#define SZ_32K	0x8000UL
#define SZ_64K	0x10000UL
#define SZ_1M	0x100000UL
#define SZ_2M	0x200000UL

/* Where the cases map: 2 MiB aligned, far from anything else. */
#define AREA	0x40000000UL

#define MAX_MMS	4

/* What a case changes and must put back, and what it owns. */
struct thp_ctx {
	enum thp_mode global;
	enum thp_mode order[HPAGE_PMD_ORDER + 1];
	bool batching;
	cpumask_t cpus;
	int nid;			/* the node of the CPU the case runs on */
	unsigned long free_before[MAX_NUMNODES];
	struct mm_struct *mm[MAX_MMS];
};

/* ---- setup and teardown ---- */

/*
 * Pin the case to a CPU of a node with memory, set the default controls,
 * empty the deferred split queue and snapshot the free pages (skips the
 * case when no CPU it may run on has memory on its node).
 */
void thpt_begin(struct ktest *t, struct thp_ctx *c);
/* Drop the case's address spaces, restore what thpt_begin changed, check every page is back. */
void thpt_end(struct ktest *t, struct thp_ctx *c);

/* Check, and on failure go to the case's "out" label (which calls thpt_end()). */
#define CHECK(t, cond)							\
	do {								\
		if (!(cond)) {						\
			KEXPECT_TRUE(t, cond);				\
			goto out;					\
		}							\
	} while (0)

#define CHECK_EQ(t, a, b)						\
	do {								\
		long long __ca = (long long)(a), __cb = (long long)(b);	\
		if (__ca != __cb) {					\
			KEXPECT_EQ(t, __ca, __cb);			\
			goto out;					\
		}							\
	} while (0)

/*
 * Map 2 MiB at addr and write-fault it there (checked, as above); with
 * CHECK_MAP_PMD, a PMD maps it too. mm and addr are evaluated more than once.
 */
#define CHECK_MAP_2M(t, mm, addr)					\
	do {								\
		CHECK_EQ(t, thpt_map_anon(mm, addr, SZ_2M), addr);	\
		CHECK_EQ(t, fault(mm, addr, true), 0);			\
	} while (0)

#define CHECK_MAP_PMD(t, mm, addr)					\
	do {								\
		CHECK_MAP_2M(t, mm, addr);				\
		CHECK(t, thpt_huge_pmd(mm, addr) != NULL);		\
	} while (0)

/* Address spaces owned by the case (at most MAX_MMS; NULL when full or out of memory). */
struct mm_struct *thpt_new_mm(struct thp_ctx *c);
struct mm_struct *thpt_fork_mm(struct thp_ctx *c, struct mm_struct *parent);
void thpt_drop_mm(struct thp_ctx *c, struct mm_struct *mm);

/* ---- address-space operations (taking mmap_lock as the system calls do) ---- */

long thpt_map_anon(struct mm_struct *mm, unsigned long addr, unsigned long len);
int thpt_unmap(struct mm_struct *mm, unsigned long addr, unsigned long len);
int thpt_protect(struct mm_struct *mm, unsigned long addr, unsigned long len,
		 unsigned long prot);
int thpt_advise(struct mm_struct *mm, unsigned long addr, unsigned long len, int advice);

static inline int fault(struct mm_struct *mm, unsigned long addr, bool write)
{
	return handle_mm_fault(mm, addr, write ? FAULT_FLAG_WRITE : 0);
}

/* Write-fault every page of [addr, addr + len); the number of failed faults. */
unsigned long thpt_fault_range(struct mm_struct *mm, unsigned long addr, unsigned long len);
void thpt_split_pmd_at(struct mm_struct *mm, unsigned long addr);
/* split_folio_to_order with the folio lock held around it, as its callers must. */
int thpt_split(struct folio *folio, unsigned int new_order);

/* ---- migration ---- */

/* A node with memory other than nid, or NUMA_NO_NODE. */
int thpt_other_node(int nid);
/* thpt_begin, and a target node other than the case's: skips the case on one node. */
int thpt_begin_two_nodes(struct ktest *t, struct thp_ctx *c);
/* Migrate the folio mapped at addr to nid with get (NULL: alloc_migration_target). */
int thpt_move_folio(struct mm_struct *mm, unsigned long addr, int nid, new_folio_t *get);

/* ---- looking at the page tables ---- */

/* The PMD entry of addr when it is a leaf, else NULL. */
pte_t *thpt_huge_pmd(struct mm_struct *mm, unsigned long addr);
/* The PTE of addr (in a page table: not under a PMD leaf or migration entry), or NULL. */
pte_t *thpt_pte_of(struct mm_struct *mm, unsigned long addr);
/* The entry (PTE, or the PMD leaf) that maps addr; 0 when none. */
pte_t thpt_entry_of(struct mm_struct *mm, unsigned long addr);
/* The frame mapped at addr (through a PMD or a PTE), or 0. */
unsigned long thpt_pfn_of(struct mm_struct *mm, unsigned long addr);
/* The page, the folio, its first frame, its order mapped at addr: NULL, 0, -1 for none or the zero page. */
struct page *thpt_page_of(struct mm_struct *mm, unsigned long addr);
struct folio *thpt_folio_of(struct mm_struct *mm, unsigned long addr);
unsigned long thpt_head_pfn_of(struct mm_struct *mm, unsigned long addr);
int thpt_order_of(struct mm_struct *mm, unsigned long addr);
bool thpt_exclusive_at(struct mm_struct *mm, unsigned long addr);

/* ---- data ---- */

/* The byte of the mapped page at addr, through the direct map (a dummy when unmapped). */
volatile u8 *thpt_byte_of(struct mm_struct *mm, unsigned long addr);

/* A byte per page, distinct for each page, at offset 0x10 (the user's write). */
static inline u8 pattern(unsigned long addr, u8 salt)
{
	return (u8)((addr >> PAGE_SHIFT) * 7 + salt);
}

void thpt_write_pattern(struct mm_struct *mm, unsigned long addr, unsigned long len, u8 salt);
/* The pages of [addr, addr + len) whose byte is not the pattern. */
unsigned long thpt_pattern_mismatches(struct mm_struct *mm, unsigned long addr,
				      unsigned long len, u8 salt);

/* ---- counters ---- */

static inline unsigned long ev(enum thp_vm_event e)
{
	return thp_event_read(e);
}

static inline unsigned long ms(unsigned int order, enum mthp_stat_item item)
{
	return mthp_stat_read(order, item);
}

/* ---- cases in the other files of the suite (registered in thp_test.c) ---- */

void fork_shares_pmd_and_cow_copies_one_page(struct ktest *t);
void pmd_reused_after_the_child_exits(struct ktest *t);
void fork_shares_mthp_and_cow_copies_one_page(struct ktest *t);
void fork_copies_pinned_folios(struct ktest *t);
void try_share_clears_exclusive_unless_pinned(struct ktest *t);
void partial_munmap_queues_a_deferred_split(struct ktest *t);
void deferred_split_keeps_what_it_cannot_split(struct ktest *t);
void split_folio_to_each_order(struct ktest *t);
void split_refuses_pinned_and_referenced(struct ktest *t);
void mprotect_splits_pmd_and_keeps_shared_pages_read_only(struct ktest *t);
void rmap_walk_finds_every_mapping(struct ktest *t);
void rmap_batching_counts_calls(struct ktest *t);
void madvise_of_part_of_a_pmd_splits_it(struct ktest *t);

#endif
