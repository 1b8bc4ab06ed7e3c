/*
 * The random mm sequence: one engine (tests/kernel/mm_random.c) for two
 * suites, the kernel's mm_random (tests/kernel/mm_random_test.c, in QEMU)
 * and the host's test_mm_random (tests/host/test_mm_random.c, which
 * #includes mm_random.c and runs it on the host build of mm/).
 *
 * A seeded random sequence of mmap, write and read faults, munmap,
 * mprotect, madvise, mremap, page migration to a node, fork (dup_mm), exit (mmput), split_huge_pmd,
 * split_folio_to_order, deferred split scans and THP setting changes over
 * a few address spaces built from the kernel (no process), with checks
 * after every step: mm_verify(), the page allocator's bad pages, exit-time
 * mm_verify failures, each mm's rss and deposited page tables, the deferred
 * split queue's membership, and the data. After a write fault the engine
 * writes one random byte at a random offset of the page through the direct
 * map and remembers it in the mm's shadow; every page an mm maps must hold
 * exactly its shadow byte and zeroes elsewhere, whatever fork,
 * copy-on-write, splits and mprotect did in between.
 *
 * What differs between the two sides is the machine's size (the numbers in
 * struct mmr_config), the options, and how a line is printed and a failure
 * reported: each side defines mmr_print and mmr_fail.
 */
#ifndef TESTS_KERNEL_MM_RANDOM_H
#define TESTS_KERNEL_MM_RANDOM_H

#include <quire/types.h>
#include <quire/compiler.h>
#include <quire/mmap.h>
#include <quire/pte.h>

#define MMR_REGION_START	0x100000000UL	/* every VMA lives in [start, +region_size) */
#define MMR_MAX_MMS		8		/* the most max_mms can be */
#define MMR_MAX_TOUCH		512		/* the most max_touch can be */

struct mmr_config {
	unsigned long seed;
	bool verbose;			/* print each step */
	int max_mms;			/* address spaces at once */
	unsigned long region_size;	/* where the VMAs are (a shadow entry per page) */
	unsigned long mem_budget;	/* user pages the sequence aims to stay under */
	unsigned long low_free;		/* free pages under which it gives back first; an
					 * allocation failure with more free is a finding */
	unsigned int max_touch;		/* pages one fault step touches at most */
	unsigned long sweep_every;	/* steps between checks of every page of every mm */
	/*
	 * 0, or the steps between new THP settings that put one size (the
	 * focus: 2 MiB every other time, 1 MiB down to 16 KiB in turn in
	 * between) on "always", the larger ones off, with a fresh VMA written
	 * for it the step after: every order faulted in a few hundred steps.
	 */
	unsigned long thp_every;
	void (*after_step)(void);	/* the side's own checks after each step, or NULL */
};

/* Where the sequence is, for messages (and a crash handler). */
struct mmr_state {
	unsigned long seed, step;
	unsigned long steps_done;	/* by the last mmr_run; the failed step included */
	char desc[160];			/* the step's operation */
	bool failed;			/* the sequence stops at its first failure */
};
extern struct mmr_state mmr;

/* Defined by each side: print text (whole lines); a failed check of the current case. */
void mmr_print(const char *text);
void mmr_fail(const char *file, int line, const char *msg);

void mmr_printf(const char *fmt, ...) __printf(1, 2);
/* A failure of the sequence: reported with the seed, the step and its operation. */
void mmr_failf(const char *fmt, ...) __printf(1, 2);

/* Record what must come back (free pages, folios, counters) and the THP settings. */
void mmr_snapshot(void);
/* Snapshot, then run the sequence from one empty mm: steps steps and a final sweep. */
void mmr_run(const struct mmr_config *cfg, unsigned long steps);
/* The folio orders faults made; with expect_all, every one (0, 2..9) at least once. */
void mmr_check_orders(bool expect_all);
/* PMD, folio and deferred splits happened, and their counters agree. */
void mmr_check_splits(void);
/* Every mm gone and the THP settings restored: everything back as at the snapshot. */
void mmr_end(void);
void mmr_expect_all_back(void);

/* What a page table says about an address. */
enum mmr_kind { MMR_NONE, MMR_ZERO, MMR_PTE, MMR_PMD, MMR_DEVICE };
struct mmr_mapping {
	enum mmr_kind kind;
	unsigned long pfn;	/* of the page at addr */
	pte_t entry;
	bool present, write;
};
struct mmr_mapping mmr_lookup(struct mm_struct *mm, unsigned long addr);

#endif
