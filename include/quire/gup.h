/*
 * get_user_pages and pin_user_pages (mm/gup.c, docs/mm/gup.md): take
 * references (FOLL_GET) or pins (FOLL_PIN) on the pages that back a range
 * of a user address space, faulting them in as a user access would.
 * Linux 6.12's names, flags and errno values.
 *
 * A reference only keeps the folio from being freed. A pin says "someone
 * (a device, another process) reads or writes this memory behind the page
 * tables' back": migration and split refuse a pinned folio, fork copies a
 * pinned anonymous page instead of sharing it, and a read-only pin of a
 * shared anonymous page unshares it first so the pin keeps seeing what the
 * process writes. Pins are dropped with unpin_user_page(s), references
 * with put_page / folio_put.
 */
#ifndef QUIRE_GUP_H
#define QUIRE_GUP_H

#include <quire/types.h>
#include <quire/atomic.h>

struct page;
struct folio;
struct mm_struct;

/* gup_flags (Linux 6.12's values for the ones callers pass). */
#define FOLL_WRITE	(1U << 0)	/* the caller will write to the pages */
#define FOLL_GET	(1U << 1)	/* take a reference (get_user_pages*) */
#define FOLL_FORCE	(1U << 3)	/* ignore the VMA's protection as ptrace does (private COW) */
#define FOLL_NOFAULT	(1U << 5)	/* never fault: what is not mapped ends the walk */
#define FOLL_LONGTERM	(1U << 8)	/* the pin may be held indefinitely (see docs/mm/gup.md) */
#define FOLL_PIN	(1U << 19)	/* internal: take a pin (pin_user_pages*) */

/*
 * A pin of a small folio adds GUP_PIN_COUNTING_BIAS (1024) to its
 * reference count; a large folio counts pins in _pincount and takes one
 * reference per pin. folio_maybe_dma_pinned and the bias are in rmap.h.
 */

/* mmap_lock held for reading by the caller; current's address space. */
long get_user_pages(unsigned long start, unsigned long nr_pages, unsigned int gup_flags,
		    struct page **pages);
long pin_user_pages(unsigned long start, unsigned long nr_pages, unsigned int gup_flags,
		    struct page **pages);
/*
 * Any address space (the caller holds a reference on mm and its
 * mmap_lock for reading). locked may be NULL: Quire never drops the lock
 * in the middle (no fault retries that sleep without it).
 */
long get_user_pages_remote(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
			   unsigned int gup_flags, struct page **pages, int *locked);
long pin_user_pages_remote(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
			   unsigned int gup_flags, struct page **pages, int *locked);
/* mmap_lock not held: taken and dropped here. */
long pin_user_pages_unlocked(unsigned long start, unsigned long nr_pages, struct page **pages,
			     unsigned int gup_flags);
/*
 * The lockless walk first (interrupts off: see docs/mm/gup.md for why page
 * tables cannot go away under it), then the slow path with mmap_lock for
 * what it left. mmap_lock not held.
 */
int get_user_pages_fast(unsigned long start, int nr_pages, unsigned int gup_flags,
			struct page **pages);
int pin_user_pages_fast(unsigned long start, int nr_pages, unsigned int gup_flags,
			struct page **pages);
/*
 * The same on any mm (a kernel test's, or a remote one the caller holds a
 * reference on). fast_only: only the lockless walk, no fallback (it stops
 * at the first page it cannot take); returns how many pages it took.
 */
long gup_fast_mm(struct mm_struct *mm, unsigned long start, unsigned long nr_pages,
		 unsigned int gup_flags, struct page **pages, bool fast_only);

/*
 * Copy len bytes at addr of mm to or from (FOLL_WRITE) buf, a kernel
 * buffer, page by page through get_user_pages_remote with gup_flags
 * (/proc/PID/mem passes FOLL_FORCE). Takes mmap_lock itself. Returns the
 * bytes moved: fewer at the first page that could not be had.
 */
int access_remote_vm(struct mm_struct *mm, unsigned long addr, void *buf, int len,
		     unsigned int gup_flags);

void unpin_user_page(struct page *page);
void unpin_user_pages(struct page **pages, unsigned long npages);
/* make_dirty: each folio is marked dirty (under its lock) before its pins go. */
void unpin_user_pages_dirty_lock(struct page **pages, unsigned long npages, bool make_dirty);
/* The reference FOLL_GET took. */
void put_page(struct page *page);

/*
 * Take refs references (FOLL_GET) or pins (FOLL_PIN) on folio with one
 * atomic per counter; the caller holds something that keeps the folio
 * alive (the page-table lock of an entry that maps it). 0, or -ENOMEM when
 * the count would overflow.
 */
int try_grab_folio(struct folio *folio, int refs, unsigned int flags);
/* May a long-term pin stay on this folio's memory? Not on the slow tier (docs/mm/gup.md). */
bool folio_is_longterm_pinnable(struct folio *folio);

/* Drop what try_grab_folio took. */
void gup_put_folio(struct folio *folio, int refs, unsigned int flags);

/*
 * gup_batch (default on; "gup_batch=0" on the command line, or
 * /sys/kernel/mm/quire/gup_batch): a run of PTEs mapping one folio is taken
 * in one step. Off: the same walk one page at a time.
 */
extern bool gup_batching;

enum gup_event {
	GUP_PAGES,		/* pages returned by the slow path */
	GUP_FOLLOW_STEPS,	/* runs taken by follow_page_mask: a folio's run of PTEs, a PMD */
	GUP_FOLLOW_LOCKS,	/* page-table lock holds of follow_page_mask that took pages */
	GUP_GRAB_ATOMICS,	/* atomic operations on refcount / pincount */
	GUP_FAULTS,		/* faultin_page calls */
	GUP_FAST_PAGES,		/* pages taken by the lockless walk */
	GUP_FAST_FALLBACKS,	/* lockless walks that left pages to the slow path */
	GUP_LONGTERM_MIGRATED,	/* folios moved off the slow tier before a long-term pin */
	GUP_UNPIN_ATOMICS,	/* atomic operations dropping pins or references */
	NR_GUP_EVENTS
};
extern atomic_long_t gup_events[NR_GUP_EVENTS];
extern const char *const gup_event_names[NR_GUP_EVENTS];

/*
 * /sys/kernel/debug/gup_test (mm/gup_test.c; fs/debugfs.c makes the file):
 * an ioctl of include/quire/uapi/gup_test.h (arg: the kernel copy of its
 * argument, fs/ioctl.c's sizes), and the release of one of its files
 * (drops the long-term pin held, as Linux does).
 */
long gup_test_ioctl(unsigned int cmd, unsigned long arg);
void gup_test_release(void);

/*
 * Test hook: called by the lockless walk with interrupts off, after it
 * read a PMD and before it takes the pages (NULL normally).
 */
extern void (*gup_fast_hook)(unsigned long addr);
/*
 * Test hook: called by the lockless walk with interrupts off, after it
 * read the PTEs of a run and before it takes the run's folio (the window
 * its re-read of the entries closes); NULL normally.
 */
extern void (*gup_fast_pte_hook)(unsigned long addr);
/* Tests: GUP-fast's grab, between deciding how to count the references and taking them. */
extern void (*gup_fast_grab_hook)(void);

#endif
