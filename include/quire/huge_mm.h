/*
 * Transparent huge pages for anonymous memory (docs/mm/thp.md): which folio
 * orders an anonymous fault may use (Linux's "enabled" controls, globally
 * and per size), the THP counters (/proc/vmstat and the per-size stats
 * under /sys/kernel/mm/transparent_hugepage/), PMD mappings, and splitting.
 */
#ifndef QUIRE_HUGE_MM_H
#define QUIRE_HUGE_MM_H

#include <quire/types.h>
#include <quire/pte.h>

struct folio;
struct page;
struct vm_area_struct;
struct mm_struct;

#define HPAGE_PMD_ORDER	(PMD_SHIFT - PAGE_SHIFT)	/* 9: a 2 MiB folio */
#define HPAGE_PMD_NR	(1UL << HPAGE_PMD_ORDER)
#define THP_ORDER_MIN	2	/* anonymous large folios start at 16 KiB, as on Linux */
/* The orders that have a hugepages-<size>kB directory: 16 KiB .. 2 MiB. */
#define THP_ORDERS_ANON	(((1UL << (HPAGE_PMD_ORDER + 1)) - 1) & ~3UL)

/* ---- the controls ---- */

/* Global "enabled" (always, madvise, never) and per size (+ inherit). */
enum thp_mode { THP_NEVER, THP_ALWAYS, THP_MADVISE, THP_INHERIT };

enum thp_mode thp_global_mode(void);
enum thp_mode thp_order_mode(unsigned int order);
int thp_set_global_mode(enum thp_mode mode);			/* -EINVAL for inherit */
int thp_set_order_mode(unsigned int order, enum thp_mode mode);	/* -EINVAL: no such size */

/*
 * The orders (a bit mask) an anonymous fault in a VMA with these vm_flags
 * may use, largest first in the caller's loop; 0 = order 0 only.
 */
unsigned long thp_vma_allowable_orders(unsigned long vm_flags);
/*
 * The orders of `orders` for which vma holds at least one naturally
 * aligned block (Linux's thp_vma_suitable_order, tried at the VMA's end).
 */
unsigned long thp_vma_suitable_orders(const struct vm_area_struct *vma, unsigned long orders);
/*
 * smaps' THPeligible (Linux 6.12's thp_vma_allowable_orders with
 * TVA_SMAPS | TVA_ENFORCE_SYSFS): an anonymous private VMA for which some
 * allowed size, 16 KiB .. 2 MiB, is suitable. File and shared VMAs: false.
 */
bool thp_vma_smaps_eligible(const struct vm_area_struct *vma);

/*
 * sysfs text, Linux's format: "[always] madvise never" with the current
 * choice in brackets. show returns the length written to buf (NUL-ended);
 * store takes "always\n" etc. and returns 0 or -EINVAL. order is 2..9.
 */
int thp_enabled_show(char *buf, size_t size);
int thp_enabled_store(const char *buf, size_t len);
/* defrag: Linux's five values, kept and shown; no effect (no compaction or reclaim). */
int thp_defrag_show(char *buf, size_t size);
int thp_defrag_store(const char *buf, size_t len);
/* shmem_enabled: Linux's six values, kept and shown; no effect (4 KiB page-cache folios only). */
int thp_shmem_enabled_show(char *buf, size_t size);
int thp_shmem_enabled_store(const char *buf, size_t len);
/*
 * use_zero_page (1 by default: read faults map the huge zero page) and
 * khugepaged/<name>: Linux's numbers, kept and shown with Linux's defaults
 * and ranges; the khugepaged ones have no effect (no khugepaged). show
 * writes "N\n"; store takes a decimal number (EINVAL outside the range).
 */
enum thp_num_setting {
	THP_USE_ZERO_PAGE,
	KHUGEPAGED_DEFRAG,
	KHUGEPAGED_ALLOC_SLEEP_MS,
	KHUGEPAGED_SCAN_SLEEP_MS,
	KHUGEPAGED_MAX_PTES_NONE,
	KHUGEPAGED_MAX_PTES_SWAP,
	KHUGEPAGED_MAX_PTES_SHARED,
	KHUGEPAGED_PAGES_TO_SCAN,
	NR_THP_NUM_SETTINGS
};
extern const char *const thp_num_setting_names[NR_THP_NUM_SETTINGS];
int thp_num_setting_show(enum thp_num_setting which, char *buf, size_t size);
int thp_num_setting_store(enum thp_num_setting which, const char *buf, size_t len);
bool thp_use_zero_page(void);

/*
 * The huge zero page (mm/huge_memory.c): 2 MiB of zeroes that a read fault
 * of an empty THP-sized block maps read-only with one PMD, as Linux does.
 * Made at boot and kept; no rmap, no mapcount, no RSS; a
 * deposited page table as any PMD mapping. A write (or an unshare) splits
 * the PMD into PTEs of the 4 KiB zero page and faults by PTE.
 */
void huge_zero_page_init(void);		/* at boot, from zero_page_init */
void huge_zero_page_forget(void);
bool is_huge_zero_pfn(unsigned long pfn);
bool is_huge_zero_pmd(pte_t pmd);
/* hpage_pmd_size: the size of a PMD mapping in bytes, "2097152\n". */
int thp_hpage_pmd_size_show(char *buf, size_t size);
int thp_order_enabled_show(unsigned int order, char *buf, size_t size);
int thp_order_enabled_store(unsigned int order, const char *buf, size_t len);
/* The "thp_anon=" boot parameter, Linux's syntax: "16K-64K:always;2M:inherit". */
int thp_anon_parse(const char *value);

/* ---- splitting (mm/huge_memory.c) ---- */

/*
 * The PMD mapping of addr in vma, if there is one, becomes 512 PTEs
 * (mmap_lock held); a PMD migration entry becomes 512 PTE migration entries.
 */
void split_huge_pmd(struct vm_area_struct *vma, unsigned long addr);

/* ---- PMD migration entries (mm/huge_memory.c, used by mm/migrate.c) ---- */

struct page_vma_mapped_walk;
/*
 * The PMD leaf pvmw found (its PMD lock held) becomes one migration entry
 * for the whole locked folio, keeping write, anon-exclusive, young, dirty
 * and soft-dirty (a writable leaf comes back dirty: Quire makes every
 * writable entry dirty); the folio loses that mapping and its reference.
 * False (the leaf is left as it was) when an exclusive page may be pinned.
 */
bool set_pmd_migration_entry(struct page_vma_mapped_walk *pvmw, struct folio *folio);
/* The PMD migration entry pvmw found (lock held) becomes a leaf mapping dst. */
void remove_migration_pmd(struct page_vma_mapped_walk *pvmw, struct folio *dst);
/* Wait until the migration behind the PMD's entry (if it is one) unlocks its folio. */
void pmd_migration_entry_wait(struct mm_struct *mm, pte_t *pmd);
/*
 * Split a large anonymous folio into folios of new_order (0 or 2.. order-1;
 * order 1 is not allowed for anonymous memory, as on Linux), mapped or not:
 * PMD mappings are split into PTEs first; every PTE stays as it is. The
 * caller holds the folio lock and one reference; both stay with the folio
 * of the first page (the others start unlocked), as on Linux.
 * -EINVAL: not a large anonymous folio, or a bad order; -EAGAIN: pinned,
 * unexpected references, or a mapper's lock busy (counted as split_failed).
 * Sub-folios no page-table entry maps are freed.
 */
int split_folio_to_order(struct folio *folio, unsigned int new_order);
static inline int split_folio(struct folio *folio)
{
	return split_folio_to_order(folio, 0);
}
/*
 * The deferred split queue: large anonymous folios some of whose pages were
 * unmapped. Split (to order 0, freeing the unmapped pages) by this scan,
 * which runs when a large folio allocation fails and from tests. Returns
 * how many folios were split.
 */
unsigned long deferred_split_scan(unsigned long nr_to_scan);
unsigned long deferred_split_queue_len(void);

/*
 * debugfs's split_huge_pages (fs/debugfs.c parses what is written): split
 * every large folio mapped in [start, end) of mm (from the first VMA
 * containing start, up to the first hole), or in every VMA of every mm,
 * or held in [start, end) of a file's page cache (page indexes), to
 * new_order (a folio of that order or smaller is left alone). Each folio
 * is split under its folio lock, taken by trylock as Linux does (a busy
 * one is skipped), with the mm's mmap_lock held for reading. How many
 * were split, of how many large enough: *split, *total.
 */
/*
 * MADV_COLLAPSE (mm/khugepaged.c): each aligned 2 MiB block of the private
 * anonymous VMAs in [start, end) mapped by a PMD-mapped THP, a copy of what
 * its page table mapped. mmap_lock held for writing. 0, -EINVAL, -EAGAIN,
 * -ENOMEM (a hole in the range, or no 2 MiB folio), as Linux.
 */
int madvise_collapse(struct mm_struct *mm, unsigned long start, unsigned long end);
void split_huge_pages_in_mm(struct mm_struct *mm, unsigned long start, unsigned long end,
			    unsigned int new_order, unsigned long *split, unsigned long *total);
void split_huge_pages_all(unsigned long *split, unsigned long *total);
struct address_space;
void split_huge_pages_in_mapping(struct address_space *mapping, unsigned long start,
				 unsigned long end, unsigned int new_order,
				 unsigned long *split, unsigned long *total);

/* ---- counters ---- */

/* /proc/vmstat events, Linux's names (vmstat_show lists them). */
enum thp_vm_event {
	THP_FAULT_ALLOC,		/* a PMD-sized folio mapped by a fault */
	THP_FAULT_FALLBACK,		/* a PMD-sized fault fell back to smaller folios */
	THP_SPLIT_PAGE,			/* a large folio (PMD order) split */
	THP_SPLIT_PAGE_FAILED,
	THP_DEFERRED_SPLIT_PAGE,	/* a PMD-order folio queued for deferred split */
	THP_SPLIT_PMD,			/* a PMD mapping turned into PTE mappings */
	THP_COLLAPSE_ALLOC,		/* MADV_COLLAPSE made a THP of a PTE-mapped range */
	THP_COLLAPSE_ALLOC_FAILED,	/* ... and had no 2 MiB folio for it */
	THP_ZERO_PAGE_ALLOC,		/* the huge zero page made (once) */
	THP_ZERO_PAGE_ALLOC_FAILED,	/* ... and no 2 MiB folio for it: a read fault fell back */
	NR_THP_VM_EVENTS,
};

/* Per-size counters (…/hugepages-<size>kB/stats/<name>), Linux's names. */
enum mthp_stat_item {
	MTHP_STAT_ANON_FAULT_ALLOC,		/* faults that mapped a folio of this order */
	MTHP_STAT_ANON_FAULT_FALLBACK,		/* faults that tried this order and fell back */
	MTHP_STAT_SPLIT,			/* folios of this order split */
	MTHP_STAT_SPLIT_FAILED,
	MTHP_STAT_SPLIT_DEFERRED,		/* queued for deferred split */
	MTHP_STAT_NR_ANON,			/* anonymous folios of this order now */
	MTHP_STAT_NR_ANON_PARTIALLY_MAPPED,	/* of them, on the deferred split queue */
	NR_MTHP_STAT_ITEMS,
};

extern const char *const thp_vm_event_names[NR_THP_VM_EVENTS];
extern const char *const mthp_stat_names[NR_MTHP_STAT_ITEMS];

void count_thp_event(enum thp_vm_event item);
unsigned long thp_event_read(enum thp_vm_event item);
void mod_mthp_stat(unsigned int order, enum mthp_stat_item item, long delta);
static inline void count_mthp_stat(unsigned int order, enum mthp_stat_item item)
{
	mod_mthp_stat(order, item, 1);
}
unsigned long mthp_stat_read(unsigned int order, enum mthp_stat_item item);
/*
 * Anonymous folios mapped by at least one PMD (/proc/vmstat
 * nr_anon_transparent_hugepages, Linux's NR_ANON_THPS): the rmap adds one
 * when a folio's first PMD mapping appears and removes it with the last.
 */
void mod_nr_anon_thps(long delta);
unsigned long nr_anon_thps(void);

/*
 * /proc/vmstat: "name value\n" lines (memory counters summed over nodes,
 * then the THP events). Returns the length written (NUL-ended, cut at size).
 */
int vmstat_show(char *buf, size_t size);

#endif
