/*
 * The random mm sequence's engine (mm_random.h): the operations, the
 * shadow-byte checks, the checks after every step and the bookkeeping of
 * folio orders and splits. It builds into the kernel (for the mm_random
 * suite, tests/kernel/mm_random_test.c) and, #included by
 * tests/host/test_mm_random.c, into the host test and `make fuzz`.
 */
#include "mm_random.h"
#include "../lib/random.h"
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/mmap.h>
#include <quire/huge_mm.h>
#include <quire/rmap.h>
#include <quire/migrate.h>
#include <quire/memremap.h>
#include <quire/swapops.h>
#include <quire/copy_mc.h>
#include "test_device.h"
#include <quire/gup.h>
#include <quire/pte.h>
#include <quire/numa.h>
#include <quire/slab.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/time.h>
#include <quire/task_mmu.h>

/*
 * The shadows: on the host outside the small simulated machine, and copied
 * by the C library (the kernel's byte loops are slow under ASan).
 */
#ifdef QUIRE_HOST
#define shadow_alloc(size)	malloc(size)
#define shadow_free(p)		free(p)
#define shadow_copy(d, s, n)	__builtin_memcpy(d, s, n)
#define shadow_zero(p, n)	__builtin_memset(p, 0, n)
#else
#define shadow_alloc(size)	kmalloc(size, GFP_KERNEL)
#define shadow_free(p)		kfree(p)
#define shadow_copy(d, s, n)	memcpy(d, s, n)
#define shadow_zero(p, n)	memset(p, 0, n)
#endif

struct mmr_state mmr;
static struct mmr_config cfg;
static unsigned long region_pages;

/* ---- randomness ---- */

/* Uniform in [0, n). */
static unsigned long rnd(unsigned long n)
{
	return n ? rng() % n : 0;
}

static bool chance(unsigned int percent)
{
	return rnd(100) < percent;
}

/* ---- reports ---- */

void mmr_printf(const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	mmr_print(text);
}

void mmr_failf(const char *fmt, ...)
{
	char msg[400], line[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (mmr.failed) {
		mmr_printf("    # also: %s\n", msg);
		return;
	}
	mmr.failed = true;
	snprintf(line, sizeof(line), "seed %lu step %lu (%s): %s", mmr.seed, mmr.step, mmr.desc, msg);
	mmr_fail(__FILE__, __LINE__, line);
}

static __printf(1, 2) void describe(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(mmr.desc, sizeof(mmr.desc), fmt, ap);
	va_end(ap);
	if (cfg.verbose)
		mmr_printf("    # %lu: %s\n", mmr.step, mmr.desc);
}

/* A failed expectation of a case (after the sequence): a and b compared as long long. */
static void expect_failed(int line, const char *a, const char *op, const char *b, long long av,
			  long long bv)
{
	char msg[300];

	snprintf(msg, sizeof(msg), "Expected %s %s %s, but %s == %lld, %s == %lld", a, op, b, a, av,
		 b, bv);
	mmr_fail(__FILE__, line, msg);
}

#define EXPECT_CMP(a, op, b)						\
	do {								\
		long long __a = (long long)(a), __b = (long long)(b);	\
		if (!(__a op __b))					\
			expect_failed(__LINE__, #a, #op, #b, __a, __b);	\
	} while (0)

/* ---- address spaces and their shadows ---- */

/* A shadow entry: 0 (nothing written), or the byte written and where. */
#define SH_VALID	(1U << 31)
#define SH_MAKE(off, val) (SH_VALID | ((u32)(off) << 8) | (val))
#define SH_OFF(s)	((unsigned int)((s) >> 8) & 0xfffU)
#define SH_VAL(s)	((u8)(s))

struct tmm {
	struct mm_struct *mm;
	u32 *shadow;	/* region_pages entries */
	int id;		/* for messages */
};

static struct tmm mms[MMR_MAX_MMS];
static int nr_mms, next_id;
static unsigned long zero_pfn;	/* learnt from the first read fault */

/* Counters for the summary and the cases. */
enum op {
	OP_MMAP, OP_WRITE, OP_READ, OP_MUNMAP, OP_MPROTECT, OP_DONTNEED, OP_MADV_FLAGS,
	OP_FORK, OP_EXIT, OP_SPLIT_PMD, OP_SPLIT_FOLIO, OP_DEFERRED_SCAN, OP_THP, OP_MREMAP,
	OP_MIGRATE, OP_PIN, OP_UNPIN, OP_COLLAPSE, OP_CLEAR_REFS, OP_DEVICE, NR_OPS
};
static struct {
	unsigned long ops[NR_OPS];
	unsigned long fault_order[HPAGE_PMD_ORDER + 1];	/* orders of new folios seen after a fault */
	unsigned long huge_zero_reads;	/* read faults that mapped the huge zero page */
	unsigned long cow, enomem, efault, pmd_splits, folio_splits, folio_split_einval;
	unsigned long deferred_split, sweeps, checks, outside, mm_steps;
	unsigned long remap_moves, remap_in_place, remap_errors;
	/* pins: by kind (pin, pin fast, get, get fast), pages, and what they met */
	unsigned long pin_ops[4], pin_pages, pin_longterm, pin_efault, pin_enomem, pin_partial;
	unsigned long unpins, unpin_dirty, device_writes, pin_checks;
	unsigned long fork_pin_copies, migrate_pin_stayed, split_pin_refused;
	/* MADV_COLLAPSE: blocks made PMD-mapped, and calls by result */
	unsigned long collapsed, collapse_ok, collapse_einval, collapse_eagain, collapse_enomem;
	/* clear_refs: soft-dirty clears, entries left writable for a pin, and young clears */
	unsigned long soft_dirty_clears, pinned_kept_writable, young_clears;
	/* device memory: pages moved there, brought back by a CPU fault, left behind */
	unsigned long to_device, device_refused, device_full;
} st;

/* What must come back, and the settings to restore (mmr_snapshot). */
static struct {
	enum thp_mode global, order[HPAGE_PMD_ORDER + 1];
	bool batching, use_zero_page;
	unsigned long free[MAX_NUMNODES];
	unsigned long nr_anon[HPAGE_PMD_ORDER + 1];
	unsigned long fault_alloc[HPAGE_PMD_ORDER + 1], split[HPAGE_PMD_ORDER + 1];
	unsigned long thp_alloc, split_pmd, split_page, page_errors, exit_failures;
	unsigned long device_faults;	/* the device's faults_back */
} snap;

static struct tmm *new_tmm(struct mm_struct *mm, const u32 *copy_from)
{
	struct tmm *t = &mms[nr_mms];

	t->shadow = shadow_alloc(region_pages * sizeof(u32));
	if (!t->shadow) {
		mmr_failf("no memory for a shadow");
		mmput(mm);
		return NULL;
	}
	if (copy_from)
		shadow_copy(t->shadow, copy_from, region_pages * sizeof(u32));
	else
		shadow_zero(t->shadow, region_pages * sizeof(u32));
	t->mm = mm;
	t->id = next_id++;
	nr_mms++;
	return t;
}

static void drop_tmm(int i)
{
	mmput(mms[i].mm);
	shadow_free(mms[i].shadow);
	mms[i] = mms[--nr_mms];
}

static unsigned long region_end(void)
{
	return MMR_REGION_START + cfg.region_size;
}

static bool in_region(unsigned long addr)
{
	return addr >= MMR_REGION_START && addr < region_end();
}

static u32 *shadow_of(struct tmm *t, unsigned long addr)
{
	return &t->shadow[(addr - MMR_REGION_START) >> PAGE_SHIFT];
}

static void shadow_clear(struct tmm *t, unsigned long start, unsigned long end)
{
	start = max(start, MMR_REGION_START);
	end = min(end, region_end());
	if (start < end)
		shadow_zero(shadow_of(t, start), ((end - start) >> PAGE_SHIFT) * sizeof(u32));
}

/* ---- what a page table says about an address ---- */

static const char *const kind_names[] = {
	"nothing", "the zero page", "a PTE", "a PMD", "a device-private entry",
};

struct mmr_mapping mmr_lookup(struct mm_struct *mm, unsigned long addr)
{
	struct mmr_mapping m = { MMR_NONE, 0, 0, false, false };
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte;

	if (!pmd || !*pmd || is_swap_pmd(*pmd))
		return m;	/* (a PMD migration entry never outlives its call: mm_verify says so) */
	if (pmd_leaf(*pmd)) {
		m.kind = is_huge_zero_pmd(*pmd) ? MMR_ZERO : MMR_PMD;
		m.entry = *pmd;
		m.pfn = pmd_pfn(*pmd) + ((addr >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1));
	} else {
		pte = pte_offset(pmd, addr);
		if (is_device_private_pte(*pte)) {
			swp_entry_t e = pte_to_swp_entry(*pte);

			m.kind = MMR_DEVICE;
			m.entry = *pte;
			m.pfn = swp_offset_pfn(e);
			m.write = is_writable_device_private_entry(e);
			return m;
		}
		if (!pte_has_page(*pte))
			return m;
		m.entry = *pte;
		m.pfn = pte_pfn(*pte);
		m.kind = is_zero_pfn(m.pfn) ? MMR_ZERO : MMR_PTE;
	}
	m.present = pte_present(m.entry);
	m.write = pte_write(m.entry);
	return m;
}

static struct folio *mapping_folio(const struct mmr_mapping *m)
{
	return m->kind == MMR_PTE || m->kind == MMR_PMD || m->kind == MMR_DEVICE ?
	       page_folio(pfn_to_page(m->pfn)) : NULL;
}

/* The first offset in [from, to) of p that is not zero, or -1 (a word at a time: it is hot). */
static long nonzero_at(const u8 *p, unsigned long from, unsigned long to)
{
	typedef u64 __attribute__((may_alias)) word_t;
	unsigned long i = from;

	for (; i < to && i % sizeof(word_t); i++)
		if (p[i])
			return (long)i;
	for (; i + sizeof(word_t) <= to && !*(const word_t *)(p + i); i += sizeof(word_t))
		;
	for (; i < to; i++)
		if (p[i])
			return (long)i;
	return -1;
}

/* Does t's page at addr hold what its shadow says? */
static void check_page(struct tmm *t, unsigned long addr, const char *why)
{
	struct mmr_mapping m;
	const u8 *p;
	long bad;
	u32 s;

	if (!in_region(addr))
		return;
	addr &= PAGE_MASK;
	m = mmr_lookup(t->mm, addr);
	s = *shadow_of(t, addr);
	st.checks++;
	if (m.kind == MMR_NONE || m.kind == MMR_ZERO) {
		if (s)
			mmr_failf("%s: mm%d %#lx maps %s, but %#x was written at +%#x", why, t->id, addr,
			      kind_names[m.kind], SH_VAL(s), SH_OFF(s));
		return;
	}
	p = page_address(pfn_to_page(m.pfn));
	if (s && p[SH_OFF(s)] != SH_VAL(s)) {
		mmr_failf("%s: mm%d %#lx (pfn %#lx by %s): %#x at +%#x, but %#x was written there", why,
		      t->id, addr, m.pfn, kind_names[m.kind], p[SH_OFF(s)], SH_OFF(s), SH_VAL(s));
		return;
	}
	bad = s ? nonzero_at(p, 0, SH_OFF(s)) : nonzero_at(p, 0, PAGE_SIZE);
	if (bad < 0 && s)
		bad = nonzero_at(p, SH_OFF(s) + 1, PAGE_SIZE);
	if (bad >= 0)
		mmr_failf("%s: mm%d %#lx (pfn %#lx by %s): %#x at +%#lx, where nothing was written "
		      "(shadow: %s%#x at +%#x)", why, t->id, addr, m.pfn, kind_names[m.kind],
		      p[bad], bad, s ? "" : "none, ", SH_VAL(s), SH_OFF(s));
}

/* Every page of every VMA of t; nothing remembered outside the VMAs. */
static void check_all(struct tmm *t, const char *why)
{
	struct vm_area_struct *v;

	list_for_each_entry(v, &t->mm->vmas, vm_list)
		for (unsigned long a = v->vm_start; a < v->vm_end && !mmr.failed; a += PAGE_SIZE)
			check_page(t, a, why);
	for (unsigned long i = 0; i < region_pages && !mmr.failed; i++) {
		unsigned long a = MMR_REGION_START + (i << PAGE_SHIFT);
		struct vm_area_struct *vma;

		if (!t->shadow[i])
			continue;
		vma = find_vma(t->mm, a);
		if (!vma || vma->vm_start > a)
			mmr_failf("%s: mm%d remembers a byte at %#lx, outside every VMA", why, t->id, a);
	}
}

/* After an operation that may have stopped half way: forget what is gone. */
static void shadow_reconcile(struct tmm *t, unsigned long start, unsigned long end)
{
	start = max(start, MMR_REGION_START);
	end = min(end, region_end());
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		enum mmr_kind k = mmr_lookup(t->mm, a).kind;

		if (k == MMR_NONE || k == MMR_ZERO)
			*shadow_of(t, a) = 0;
	}
}

/*
 * A large anonymous folio that is mapped, but not by a PMD and not every
 * page of it, waits on the deferred split queue (so that its unmapped
 * pages are freed some day), and only such a folio does.
 */
static void check_partially_mapped(struct tmm *t, unsigned long addr, struct folio *folio)
{
	bool partial, queued;

	if (!folio_test_large(folio) || !folio_test_anon(folio))
		return;
	partial = !folio_entire_mapcount(folio) &&
		  (unsigned long)folio_nr_pages_mapped(folio) < folio_nr_pages(folio);
	queued = test_page_flag((struct page *)folio, PG_partially_mapped);
	if (partial != queued)
		mmr_failf("mm%d %#lx: order-%u folio pfn %#lx with %d of its pages mapped (entire %d) "
		      "is %son the deferred split queue", t->id, addr, folio_order(folio),
		      folio_pfn(folio), folio_nr_pages_mapped(folio), folio_entire_mapcount(folio),
		      queued ? "" : "not ");
}

/*
 * What mm_verify does not look at: an mm's rss is the pages its entries
 * map (the zero page aside), it keeps one deposited page table per PMD
 * mapping (split_huge_pmd needs it; one too few panics a later split, one
 * too many is lost memory), and partially mapped folios are queued.
 * Between steps (one thread, every migration finished) there is no PMD
 * migration entry to count: mm_verify reports one (invariant 5).
 */
static void check_mm_counters(struct tmm *t)
{
	unsigned long rss = 0, pmds = 0;
	struct vm_area_struct *v;

	list_for_each_entry(v, &t->mm->vmas, vm_list) {
		for (unsigned long a = v->vm_start; a < v->vm_end;) {
			unsigned long next = min(ALIGN_DOWN(a, PMD_SIZE) + PMD_SIZE, v->vm_end);
			pte_t *pmd = pmd_lookup(t->mm->pgd, a, false);

			if (pmd && pmd_leaf(*pmd)) {
				pmds++;
				/* (The huge zero page is in nobody's RSS, as the 4 KiB one.) */
				rss += is_huge_zero_pmd(*pmd) ? 0 : HPAGE_PMD_NR;
			} else if (pmd && pmd_is_table(*pmd)) {
				for (; a < next; a += PAGE_SIZE) {
					pte_t pte = *pte_offset(pmd, a);

					if (is_device_private_pte(pte)) {
						rss++;	/* maps its page as a PTE does */
						continue;
					}
					if (!pte_has_page(pte) || is_zero_pfn(pte_pfn(pte)))
						continue;
					rss++;
					check_partially_mapped(t, a, page_folio(pfn_to_page(pte_pfn(pte))));
				}
			}
			a = next;
		}
	}
	if ((unsigned long)atomic_long_read(&t->mm->rss) != rss)
		mmr_failf("mm%d: rss %ld, but its entries map %lu pages", t->id,
		      atomic_long_read(&t->mm->rss), rss);
	if (t->mm->nr_deposited != pmds)
		mmr_failf("mm%d: %lu page tables deposited for %lu PMD mappings", t->id,
		      t->mm->nr_deposited, pmds);
}

/* ---- pins: what the sequence holds with pin_user_pages and get_user_pages ---- */

#define MMR_MAX_PINS	16	/* pin records held at once */
#define MMR_PIN_PAGES	256	/* pages one record holds at most */

/*
 * One pin_user_pages or get_user_pages call whose pages the sequence still
 * holds: they stay held across any later steps (munmap, mprotect, fork,
 * migration, splits, madvise, mremap, exit of the mm) until op_unpin.
 */
struct pin_rec {
	int mm_id;		/* the tmm pinned from (it may have exited since) */
	unsigned long start;	/* the address of pages[0] when pinned */
	unsigned long nr;
	unsigned int flags;	/* FOLL_PIN or FOLL_GET, FOLL_WRITE, FOLL_LONGTERM */
	unsigned long step;	/* when (for messages) */
	struct page **pages;	/* the slot's array, MMR_PIN_PAGES long */
};
static struct pin_rec pins[MMR_MAX_PINS];
static struct page *pin_arrays[MMR_MAX_PINS][MMR_PIN_PAGES];
static int nr_pins;
static unsigned long pinned_pages;

/*
 * The folios the records hold, counted (check_pins): an open-addressing
 * table keyed by the folio, emptied after each use through used[].
 */
#define PIN_HASH	(2 * MMR_MAX_PINS * MMR_PIN_PAGES)
struct pin_count {
	struct folio *folio;
	unsigned int pins, gets;	/* pages of it held by FOLL_PIN / FOLL_GET records */
};
static struct pin_count pin_hash[PIN_HASH];
static unsigned int pin_used[PIN_HASH], nr_pin_used;

static struct pin_count *pin_count_of(struct folio *folio)
{
	unsigned int h = (unsigned int)(((unsigned long)folio >> 6) * 0x9e3779b1UL) % PIN_HASH;

	while (pin_hash[h].folio && pin_hash[h].folio != folio)
		h = (h + 1) % PIN_HASH;
	if (!pin_hash[h].folio) {
		pin_hash[h].folio = folio;
		pin_used[nr_pin_used++] = h;
	}
	return &pin_hash[h];
}

static void pin_counts_clear(void)
{
	while (nr_pin_used) {
		struct pin_count *c = &pin_hash[pin_used[--nr_pin_used]];

		c->folio = NULL;
		c->pins = c->gets = 0;
	}
}

/* Either zero page: pins of them are not the sequence's to count. */
static bool is_zero_page(struct page *page)
{
	return is_zero_pfn(page_to_pfn(page)) || is_huge_zero_pfn(page_to_pfn(page));
}

/* Does the sequence hold a pin (pins) or anything (!pins) on folio? */
static bool sequence_holds(struct folio *folio, bool pins_only)
{
	for (int r = 0; r < nr_pins; r++) {
		if (pins_only && !(pins[r].flags & FOLL_PIN))
			continue;
		for (unsigned long i = 0; i < pins[r].nr; i++)
			if (page_folio(pins[r].pages[i]) == folio)
				return true;
	}
	return false;
}

static struct tmm *tmm_by_id(int id)
{
	for (int k = 0; k < nr_mms; k++)
		if (mms[k].id == id)
			return &mms[k];
	return NULL;
}

/* Is page (pinned at addr of the mm with this id) still what that mm maps there? */
static bool pin_still_mapped(int mm_id, unsigned long addr, struct page *page)
{
	struct tmm *t = tmm_by_id(mm_id);
	struct mmr_mapping m;

	if (!t)
		return false;
	m = mmr_lookup(t->mm, addr);
	return (m.kind == MMR_PTE || m.kind == MMR_PMD) && m.pfn == page_to_pfn(page);
}

/* Up to max pinned pages of t still mapped at their pinned addresses (and their pfns). */
static int pinned_and_mapped(struct tmm *t, unsigned long start, unsigned long end,
			     unsigned long *addrs, unsigned long *pfns, int max)
{
	int n = 0;

	for (int r = 0; r < nr_pins; r++) {
		struct pin_rec *p = &pins[r];

		if (p->mm_id != t->id || !(p->flags & FOLL_PIN))
			continue;
		for (unsigned long i = 0; i < p->nr && n < max; i++) {
			unsigned long a = p->start + (i << PAGE_SHIFT);

			if (a >= start && a < end && !is_zero_page(p->pages[i]) &&
			    pin_still_mapped(t->id, a, p->pages[i])) {
				addrs[n] = a;
				pfns[n++] = page_to_pfn(p->pages[i]);
			}
		}
	}
	return n;
}

/* Which records hold folio (a failure's details). */
static void print_holders(struct folio *folio)
{
	for (int r = 0; r < nr_pins; r++)
		for (unsigned long i = 0; i < pins[r].nr; i++)
			if (page_folio(pins[r].pages[i]) == folio)
				mmr_printf("    # held by the %s%s of step %lu: mm%d %#lx, page %lu (pfn %#lx)\n",
					   pins[r].flags & FOLL_GET ? "get" : "pin",
					   pins[r].flags & FOLL_WRITE ? " write" : "", pins[r].step,
					   pins[r].mm_id, pins[r].start, i, page_to_pfn(pins[r].pages[i]));
}

/*
 * After every step: each folio the records hold is counted exactly as
 * they say (docs/mm/gup.md): a large folio's _pincount is its pinned
 * pages, and refcount = mapcount + pins (a pin of a small folio is
 * GUP_PIN_COUNTING_BIAS references, of a large one one) + references;
 * folio_maybe_dma_pinned says so; every pinned page of an anonymous folio
 * is anon-exclusive (invariant 6), mapped or not.
 */
static void check_pins(void)
{
	for (int r = 0; r < nr_pins && !mmr.failed; r++) {
		struct pin_rec *p = &pins[r];

		for (unsigned long i = 0; i < p->nr; i++) {
			struct page *page = p->pages[i];
			struct folio *folio = page_folio(page);
			struct pin_count *c;

			if (is_zero_page(page))
				continue;	/* a pin of the zero page counts nothing */
			c = pin_count_of(folio);
			if (!(p->flags & FOLL_PIN)) {
				c->gets++;
				continue;
			}
			c->pins++;
			if (folio_test_anon(folio) && !PageAnonExclusive(page))
				mmr_failf("page %lu of the pin of mm%d at %#lx (pfn %#lx) is pinned but not "
					  "anon-exclusive (invariant 6)", i, p->mm_id, p->start,
					  page_to_pfn(page));
		}
	}
	for (unsigned int u = 0; u < nr_pin_used && !mmr.failed; u++) {
		struct pin_count *c = &pin_hash[pin_used[u]];
		struct folio *folio = c->folio;
		bool large = folio_test_large(folio);
		long refs = folio_ref_count(folio), maps = folio_mapcount(folio);
		long want = maps + c->gets + (long)c->pins * (large ? 1 : GUP_PIN_COUNTING_BIAS);
		int pincount = large ? atomic_read(&folio->_pincount) : 0;

		st.pin_checks++;
		if (refs != want || (large && pincount != (int)c->pins) ||
		    folio_maybe_dma_pinned(folio) != (c->pins > 0)) {
			mmr_failf("folio pfn %#lx order %u: refcount %ld, mapcount %ld, pincount %d, "
				  "maybe pinned %d; the sequence holds %u pins and %u references",
				  folio_pfn(folio), folio_order(folio), refs, maps, pincount,
				  folio_maybe_dma_pinned(folio), c->pins, c->gets);
			print_holders(folio);
		}
	}
	pin_counts_clear();
}

/* ---- choosing where ---- */

static struct vm_area_struct *random_vma(struct tmm *t)
{
	struct vm_area_struct *v;
	int i;

	if (!t->mm->map_count)
		return NULL;
	i = (int)rnd((unsigned long)t->mm->map_count);
	list_for_each_entry(v, &t->mm->vmas, vm_list)
		if (!i--)
			return v;
	return NULL;
}

/* A random page of a random VMA of t, or 0. */
static unsigned long random_page(struct tmm *t)
{
	struct vm_area_struct *v = random_vma(t);

	return v ? v->vm_start + (rnd((v->vm_end - v->vm_start) >> PAGE_SHIFT) << PAGE_SHIFT) : 0;
}

/* Pages, mostly few, sometimes up to max_pages (4 KiB .. 8 MiB). */
static unsigned long random_pages(unsigned long max_pages)
{
	unsigned long n = 1UL << rnd(12);

	n += rnd(n);
	return min(max(n, 1UL), max_pages);
}

/*
 * A range to work on: mostly inside one VMA of t (sometimes all of it,
 * sometimes running past its end), now and then anywhere in the region.
 */
static void random_range(struct tmm *t, unsigned long max_pages, unsigned long *start,
			 unsigned long *end)
{
	struct vm_area_struct *v = chance(92) ? random_vma(t) : NULL;
	unsigned long pages, s;

	if (!v) {
		pages = random_pages(max_pages);
		s = MMR_REGION_START + (rnd(region_pages - pages + 1) << PAGE_SHIFT);
		if (chance(30))
			s = ALIGN_DOWN(s, PMD_SIZE);
		*start = s;
		*end = s + (pages << PAGE_SHIFT);
		return;
	}
	if (chance(15)) {
		*start = v->vm_start;
		*end = v->vm_end;
		return;
	}
	pages = (v->vm_end - v->vm_start) >> PAGE_SHIFT;
	s = v->vm_start + (rnd(pages) << PAGE_SHIFT);
	if (chance(20) && ALIGN_UP(s, PMD_SIZE) < v->vm_end)
		s = ALIGN_UP(s, PMD_SIZE);
	pages = random_pages(max_pages);
	if (chance(80))
		pages = min(pages, (v->vm_end - s) >> PAGE_SHIFT);
	*start = s;
	*end = min(s + (pages << PAGE_SHIFT), region_end());
}

/* Where a change over [start, end) stops: the first hole (for_each_vma_in_range). */
static unsigned long covered_until(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	unsigned long a = start;

	while (a < end) {
		struct vm_area_struct *v = find_vma(mm, a);

		if (!v || v->vm_start > a)
			break;
		a = v->vm_end;
	}
	return min(a, end);
}

static unsigned long node_pages(enum node_stat_item item)
{
	unsigned long n = 0;

	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid))
			n += node_page_state(nid, item);
	return n;
}

static unsigned long total_free_pages(void)
{
	return node_pages(NR_FREE_PAGES);
}

/* ---- the operations ---- */

static const char *const op_names[NR_OPS] = {
	"mmap", "write", "read", "munmap", "mprotect", "dontneed", "madv_flags",
	"fork", "exit", "split_pmd", "split_folio", "deferred_scan", "thp", "mremap", "migrate",
	"pin", "unpin", "collapse", "clear_refs", "to_device",
};
static const unsigned int op_weight[NR_OPS] = {
	[OP_MMAP] = 10, [OP_WRITE] = 28, [OP_READ] = 10, [OP_MUNMAP] = 7, [OP_MPROTECT] = 7,
	[OP_DONTNEED] = 6, [OP_MADV_FLAGS] = 4, [OP_FORK] = 3, [OP_EXIT] = 2, [OP_SPLIT_PMD] = 5,
	[OP_SPLIT_FOLIO] = 7, [OP_DEFERRED_SCAN] = 3, [OP_THP] = 2, [OP_MREMAP] = 6,
	[OP_MIGRATE] = 4, [OP_PIN] = 6, [OP_UNPIN] = 3, [OP_COLLAPSE] = 3, [OP_CLEAR_REFS] = 2,
	[OP_DEVICE] = 4,
};

static unsigned long random_prot(void)
{
	unsigned long r = rnd(100);

	return r < 70 ? PROT_READ | PROT_WRITE : r < 90 ? PROT_READ : PROT_NONE;
}

static const char *prot_name(unsigned long prot)
{
	return prot == (PROT_READ | PROT_WRITE) ? "rw" : prot == PROT_READ ? "r" : "none";
}

static void op_mmap(struct tmm *t)
{
	unsigned long pages, addr, prot = random_prot();
	bool fixed = chance(90);
	long ret;

	if (chance(35))
		pages = (1 + rnd(4)) * HPAGE_PMD_NR;
	else
		pages = random_pages(2048);
	addr = MMR_REGION_START + (rnd(region_pages - pages + 1) << PAGE_SHIFT);
	if (chance(40))
		addr = ALIGN_DOWN(addr, PMD_SIZE);
	else if (chance(30))
		addr = ALIGN_DOWN(addr, PAGE_SIZE << (2 + rnd(7)));	/* 16 KiB .. 1 MiB aligned */
	describe("mmap mm%d %#lx +%#lx %s%s", t->id, addr, pages << PAGE_SHIFT, prot_name(prot),
		 fixed ? " fixed" : " hint");
	down_write(&t->mm->mmap_lock);
	ret = do_mmap(t->mm, addr, pages << PAGE_SHIFT, prot,
		      MAP_PRIVATE | MAP_ANONYMOUS | (fixed ? MAP_FIXED : 0), NULL, 0);
	if (ret >= 0 && !in_region((unsigned long)ret)) {
		/* The hint was taken: placed below mmap_base. Not ours to track. */
		st.outside++;
		if (do_munmap(t->mm, (unsigned long)ret, pages << PAGE_SHIFT))
			mmr_failf("munmap of the mapping placed at %#lx failed", ret);
	}
	up_write(&t->mm->mmap_lock);
	if (ret < 0 && ret != -ENOMEM)
		mmr_failf("do_mmap returned %ld", ret);
	else if (fixed && ret >= 0 && (unsigned long)ret != addr)
		mmr_failf("MAP_FIXED at %#lx returned %#lx", addr, ret);
	if (fixed)
		(ret >= 0 ? shadow_clear : shadow_reconcile)(t, addr, addr + (pages << PAGE_SHIFT));
}

/* May a fault with these flags succeed at addr? */
static bool fault_allowed(struct tmm *t, unsigned long addr, bool write)
{
	struct vm_area_struct *v = find_vma(t->mm, addr);

	if (!v || addr < v->vm_start)
		return false;
	return write ? v->vm_flags & VM_WRITE : v->vm_flags & (VM_READ | VM_WRITE | VM_EXEC);
}

/* The pages of [start, end) a fault step touches: all of them, a random few, or a stride. */
static int touch_list(unsigned long start, unsigned long end, unsigned long *list)
{
	unsigned long pages = (end - start) >> PAGE_SHIFT;
	unsigned long r = rnd(3), stride = chance(50) ? 16 : HPAGE_PMD_NR;
	int n = 0;

	if (r == 0) {
		for (unsigned long i = 0; i < pages && n < (int)cfg.max_touch; i++)
			list[n++] = start + (i << PAGE_SHIFT);
	} else if (r == 1) {
		for (unsigned long k = 1 + rnd(32); k--;)
			list[n++] = start + (rnd(pages) << PAGE_SHIFT);
	} else {
		for (unsigned long i = rnd(stride); i < pages && n < (int)cfg.max_touch; i += stride)
			list[n++] = start + (i << PAGE_SHIFT);
	}
	return n;
}

/* A fault at a random offset of the page at addr; after a write, a new byte there. */
static void one_fault(struct tmm *t, unsigned long addr, bool write, bool *written)
{
	unsigned long off = rnd(PAGE_SIZE);
	bool allowed = fault_allowed(t, addr, write);
	struct mmr_mapping before = mmr_lookup(t->mm, addr), after;
	const char *what = write ? "write" : "read";
	struct vm_area_struct *v;
	struct folio *folio;
	u8 *p;
	u32 *s;
	int ret;

	*written = false;
	ret = handle_mm_fault(t->mm, addr + off, write ? FAULT_FLAG_WRITE | FAULT_FLAG_USER :
					       FAULT_FLAG_USER);
	if (ret == -ENOMEM) {
		st.enomem++;
		if (total_free_pages() > cfg.low_free)
			mmr_failf("%s fault at %#lx: -ENOMEM with %lu pages free", what, addr + off,
			      total_free_pages());
		return;
	}
	if (!allowed) {
		/* No VMA: -EFAULT (SEGV_MAPERR); a VMA without the right: -EACCES (SEGV_ACCERR). */
		struct vm_area_struct *v = find_vma(t->mm, addr);
		int want = v && addr >= v->vm_start ? -EACCES : -EFAULT;

		if (ret != want)
			mmr_failf("%s fault at %#lx outside the VMA's permissions returned %d", what,
			      addr + off, ret);
		st.efault++;
		return;
	}
	if (ret) {
		mmr_failf("%s fault at %#lx returned %d", what, addr + off, ret);
		return;
	}
	after = mmr_lookup(t->mm, addr);
	if (!after.present || after.kind == MMR_NONE ||
	    (write && (!after.write || after.kind == MMR_ZERO))) {
		mmr_failf("%s fault at %#lx returned 0 but left %s (entry %#llx)", what, addr + off,
		      kind_names[after.kind], (unsigned long long)after.entry);
		return;
	}
	if (after.kind == MMR_ZERO && !zero_pfn)
		zero_pfn = after.pfn;
	if (!write && is_huge_zero_pfn(after.pfn))
		st.huge_zero_reads++;
	if (!write) {
		check_page(t, addr, "after a read fault");
		return;
	}
	folio = mapping_folio(&after);
	v = find_vma(t->mm, addr);
	/* What pagemap's bit 55 says after a write: set. */
	if (!pte_soft_dirty(after.entry) && !(v->vm_flags & VM_SOFTDIRTY))
		mmr_failf("write fault at %#lx left %s and its VMA not soft-dirty (entry %#llx)",
			  addr + off, kind_names[after.kind], (unsigned long long)after.entry);
	if (before.kind == MMR_NONE) {
		unsigned int order = folio_order(folio);

		st.fault_order[order]++;
		if (order && !(thp_vma_allowable_orders(v->vm_flags) & (1UL << order)))
			mmr_failf("write fault at %#lx mapped an order-%u folio, which the THP settings "
			      "do not allow in this VMA (vm_flags %#lx)", addr, order, v->vm_flags);
		if ((order == HPAGE_PMD_ORDER) != (after.kind == MMR_PMD))
			mmr_failf("write fault at %#lx: an order-%u folio mapped by %s", addr, order,
			      kind_names[after.kind]);
	} else if (before.kind == MMR_ZERO || !before.write) {
		st.cow++;
	}
	/* What was there must have survived (copied or reused), then our byte goes in. */
	check_page(t, addr, "after a write fault");
	if (mmr.failed)
		return;
	p = page_address(pfn_to_page(after.pfn));
	s = shadow_of(t, addr);
	if (*s)
		p[SH_OFF(*s)] = 0;
	p[off] = (u8)(1 + rnd(255));
	*s = SH_MAKE(off, p[off]);
	*written = true;
}

static void op_fault(struct tmm *t, bool write)
{
	static unsigned long list[MMR_MAX_TOUCH];
	unsigned long start, end, done[8];
	int n, nr_done = 0;

	random_range(t, 2 * cfg.max_touch, &start, &end);
	n = touch_list(start, end, list);
	describe("%s mm%d [%#lx, %#lx) %d pages", write ? "write" : "read", t->id, start, end, n);
	for (int i = 0; i < n && !mmr.failed; i++) {
		bool written;

		one_fault(t, list[i], write, &written);
		if (written && nr_done < 8)
			done[nr_done++] = list[i];
	}
	/* Copy-on-write: every other mm's copy of these pages is as it was. */
	for (int i = 0; i < nr_done && !mmr.failed; i++)
		for (int k = 0; k < nr_mms; k++)
			check_page(&mms[k], done[i], "after a write in another mm");
}

static void op_munmap(struct tmm *t)
{
	unsigned long start, end;
	int ret;

	random_range(t, 2048, &start, &end);
	describe("munmap mm%d [%#lx, %#lx)", t->id, start, end);
	down_write(&t->mm->mmap_lock);
	ret = do_munmap(t->mm, start, end - start);
	up_write(&t->mm->mmap_lock);
	if (ret == 0)
		shadow_clear(t, start, end);
	else if (ret == -ENOMEM)
		shadow_reconcile(t, start, end);
	else
		mmr_failf("do_munmap returned %d", ret);
}

static void op_mprotect(struct tmm *t)
{
	unsigned long start, end, prot = random_prot();
	int ret, want;

	random_range(t, 2048, &start, &end);
	describe("mprotect mm%d [%#lx, %#lx) %s", t->id, start, end, prot_name(prot));
	down_write(&t->mm->mmap_lock);
	want = covered_until(t->mm, start, end) == end ? 0 : -ENOMEM;
	ret = do_mprotect(t->mm, start, end - start, prot);
	up_write(&t->mm->mmap_lock);
	if (ret != want && ret != -ENOMEM)
		mmr_failf("do_mprotect returned %d, expected %d", ret, want);
}

static void op_madvise(struct tmm *t, int advice)
{
	unsigned long start, end, until;
	int ret, want;

	random_range(t, 2048, &start, &end);
	describe("madvise mm%d [%#lx, %#lx) %s", t->id, start, end,
		 advice == MADV_DONTNEED ? "dontneed" : advice == MADV_HUGEPAGE ? "hugepage" :
		 advice == MADV_NOHUGEPAGE ? "nohugepage" : advice == MADV_DONTFORK ? "dontfork" :
		 advice == MADV_DOFORK ? "dofork" : "normal");
	down_write(&t->mm->mmap_lock);
	until = covered_until(t->mm, start, end);
	want = until == end ? 0 : -ENOMEM;
	ret = do_madvise(t->mm, start, end - start, advice);
	up_write(&t->mm->mmap_lock);
	if (ret != want && ret != -ENOMEM)
		mmr_failf("do_madvise returned %d, expected %d", ret, want);
	if (advice != MADV_DONTNEED)
		return;
	if (ret == want)
		shadow_clear(t, start, until);	/* the VMAs up to the first hole, nothing after */
	else
		shadow_reconcile(t, start, end);
	for (unsigned long a = start; a < until && ret == want && !mmr.failed; a += PAGE_SIZE) {
		enum mmr_kind k = mmr_lookup(t->mm, a).kind;

		if (k != MMR_NONE)
			mmr_failf("MADV_DONTNEED left %s at %#lx", kind_names[k], a);
	}
}

static unsigned long find_pmd_mapping(struct tmm *t);

/* Some page of the 2 MiB block at addr is mapped by a PTE (what MADV_COLLAPSE can gather). */
static bool block_has_pte_page(struct tmm *t, unsigned long addr)
{
	for (unsigned long p = addr; p < addr + PMD_SIZE; p += PAGE_SIZE) {
		enum mmr_kind k = mmr_lookup(t->mm, p).kind;

		if (k == MMR_PTE)
			return true;
		if (k == MMR_PMD)
			return false;
	}
	return false;
}

/*
 * A 2 MiB block inside one VMA of t that block_has_pte_page(), each such
 * block equally likely (reservoir sampling); 0 if there is none. Its VMA
 * in *vp.
 */
static unsigned long find_collapsible_block(struct tmm *t, struct vm_area_struct **vp)
{
	unsigned long found = 0, n = 0;
	struct vm_area_struct *v;

	list_for_each_entry(v, &t->mm->vmas, vm_list)
		for (unsigned long a = ALIGN_UP(v->vm_start, PMD_SIZE); a + PMD_SIZE <= v->vm_end;
		     a += PMD_SIZE)
			if (block_has_pte_page(t, a) && !rnd(++n)) {
				found = a;
				*vp = v;
			}
	return found;
}

/*
 * MADV_COLLAPSE of one or two 2 MiB blocks of a random VMA: every result
 * Linux allows (0, EINVAL, EAGAIN, ENOMEM); a block it says it collapsed
 * must be PMD-mapped after, and the bytes everywhere must be as before
 * (the shadow is not touched: a collapse copies, it never changes data).
 */
static void op_collapse(struct tmm *t)
{
	struct vm_area_struct *v = NULL;
	unsigned long first, blocks, start, end;
	bool pmd_ok;
	int ret;

	/* Mostly a block with pages in it: a random block is mostly empty (EINVAL). */
	start = chance(75) ? find_collapsible_block(t, &v) : 0;
	if (!start) {
		v = random_vma(t);
		if (!v)
			return;
		first = ALIGN_UP(v->vm_start, PMD_SIZE);
		if (first + PMD_SIZE > v->vm_end)
			return;
		blocks = (ALIGN_DOWN(v->vm_end, PMD_SIZE) - first) / PMD_SIZE;
		start = first + rnd(blocks) * PMD_SIZE;
	}
	end = min(start + (1 + rnd(2)) * PMD_SIZE, ALIGN_DOWN(v->vm_end, PMD_SIZE));
	describe("collapse mm%d [%#lx, %#lx)", t->id, start, end);
	down_write(&t->mm->mmap_lock);
	pmd_ok = !(v->vm_flags & VM_NOHUGEPAGE) && !v->vm_file;
	ret = do_madvise(t->mm, start, end - start, MADV_COLLAPSE);
	switch (ret) {
	case 0:
		st.collapse_ok++;
		for (unsigned long a = start; a < end && !mmr.failed; a += PMD_SIZE) {
			struct mmr_mapping m = mmr_lookup(t->mm, a);

			if (m.kind == MMR_PMD)
				st.collapsed++;
			/* (The huge zero page is PMD-mapped already: left, as Linux.) */
			else if (!(m.kind == MMR_ZERO && pmd_leaf(m.entry)))
				mmr_failf("MADV_COLLAPSE said 0 but %#lx is not PMD-mapped", a);
		}
		if (!pmd_ok)
			mmr_failf("MADV_COLLAPSE of a NOHUGEPAGE or file VMA said 0");
		break;
	case -EINVAL:
		st.collapse_einval++;
		break;
	case -EAGAIN:
		st.collapse_eagain++;
		break;
	case -ENOMEM:
		st.collapse_enomem++;
		break;
	default:
		mmr_failf("MADV_COLLAPSE returned %d", ret);
	}
	up_write(&t->mm->mmap_lock);
	for (int i = 0; i < 4 && !mmr.failed; i++)
		check_page(t, start + (rnd((end - start) >> PAGE_SHIFT) << PAGE_SHIFT),
			   "after MADV_COLLAPSE");
}

/*
 * /proc/<pid>/clear_refs (mm/clear_refs.c): mostly 4 (soft-dirty), else
 * 1-3 (the accessed bit). After a 4 no VMA is VM_SOFTDIRTY and no entry
 * is writable or soft-dirty, except a maybe-pinned folio's (left as it
 * was); the next write fault makes its entry soft-dirty again (one_fault
 * checks), and every byte stays (the shadow sweeps check).
 */
static void op_clear_refs(struct tmm *t)
{
	enum clear_refs_type type = rnd(4) ? CLEAR_REFS_SOFT_DIRTY :
				    (enum clear_refs_type)(CLEAR_REFS_ALL + rnd(3));
	struct vm_area_struct *v;
	int ret;

	describe("clear_refs %d mm%d", type, t->id);
	ret = clear_refs(t->mm, type);
	if (ret) {
		mmr_failf("clear_refs %d of mm%d returned %d", type, t->id, ret);
		return;
	}
	if (type != CLEAR_REFS_SOFT_DIRTY) {
		st.young_clears++;
		return;
	}
	st.soft_dirty_clears++;
	down_read(&t->mm->mmap_lock);
	list_for_each_entry(v, &t->mm->vmas, vm_list) {
		if (v->vm_flags & VM_SOFTDIRTY)
			mmr_failf("clear_refs 4: mm%d's VMA [%#lx, %#lx) is still VM_SOFTDIRTY", t->id,
				  v->vm_start, v->vm_end);
		for (unsigned long a = max(v->vm_start, MMR_REGION_START);
		     a < min(v->vm_end, region_end()) && !mmr.failed; a += PAGE_SIZE) {
			struct mmr_mapping m = mmr_lookup(t->mm, a);
			struct folio *folio = mapping_folio(&m);

			bool dirty = m.kind == MMR_DEVICE ? pte_swp_soft_dirty(m.entry) :
							    pte_soft_dirty(m.entry);

			if (!m.write && !dirty)
				continue;
			if (folio && folio_maybe_dma_pinned(folio)) {
				st.pinned_kept_writable++;
				continue;
			}
			mmr_failf("clear_refs 4: mm%d %#lx is still %s%s (%s, entry %#llx)", t->id, a,
				  m.write ? "writable" : "", dirty ? " soft-dirty" : "",
				  kind_names[m.kind], (unsigned long long)m.entry);
		}
	}
	up_read(&t->mm->mmap_lock);
}

/* Is [start, end) inside one VMA of mm? */
static bool one_vma(struct mm_struct *mm, unsigned long start, unsigned long end)
{
	struct vm_area_struct *v = find_vma(mm, start);

	return v && v->vm_start <= start && end <= v->vm_end;
}

/*
 * mremap of a random range: a move (MREMAP_FIXED into the region, often at
 * the same offset in a 2 MiB block so that whole PMDs move; or
 * MREMAP_DONTUNMAP), a resize in place, or one that may move anywhere.
 * The shadow follows the pages: a move takes the old range's bytes to the
 * new one and leaves the old range empty (DONTUNMAP: zeroes, every VMA
 * here being private anonymous). A call that fails may have unmapped the
 * target (MREMAP_FIXED) or the old tail first, as on Linux: the shadow
 * forgets what is gone.
 */
static void op_mremap(struct tmm *t)
{
	unsigned long start, end, old_len, new_len, dest = 0, flags, r = rnd(100);
	struct mm_struct *mm = t->mm;
	bool expect_ok, thp = false;
	long ret;

	random_range(t, 1024, &start, &end);
	/* Now and then a THP's 2 MiB (or 4 MiB from there): it may move as a PMD. */
	if (r < 50 && chance(50)) {
		unsigned long pmd = find_pmd_mapping(t);

		if (pmd) {
			thp = true;
			start = pmd;
			end = min(pmd + PMD_SIZE * (1 + rnd(2)), region_end());
		}
	}
	old_len = end - start;
	new_len = old_len;
	if (chance(15))
		new_len = random_pages(1024) << PAGE_SHIFT;
	if (r < 50) {
		flags = MREMAP_MAYMOVE | MREMAP_FIXED;
	} else if (r < 65) {
		flags = MREMAP_MAYMOVE | MREMAP_DONTUNMAP | (chance(50) ? MREMAP_FIXED : 0);
		new_len = old_len;
	} else if (r < 85) {
		flags = chance(50) ? MREMAP_MAYMOVE : 0;
	} else {
		flags = 0;	/* in place only */
	}
	/* Every VMA stays in the region: a grow in place stops at its end. */
	new_len = min(new_len, region_end() - start);
	if (flags & (MREMAP_FIXED | MREMAP_DONTUNMAP)) {
		unsigned long pages = new_len >> PAGE_SHIFT;

		dest = MMR_REGION_START + (rnd(region_pages - pages + 1) << PAGE_SHIFT);
		/* The same offset in a 2 MiB block: whole blocks can move as PMD entries. */
		if ((thp || chance(40)) && ALIGN_DOWN(dest, PMD_SIZE) + (start & (PMD_SIZE - 1)) + new_len <=
				  region_end())
			dest = ALIGN_DOWN(dest, PMD_SIZE) + (start & (PMD_SIZE - 1));
	}
	describe("mremap mm%d [%#lx, %#lx) -> %#lx +%#lx%s%s%s", t->id, start, end, dest, new_len,
		 flags & MREMAP_MAYMOVE ? " maymove" : "", flags & MREMAP_FIXED ? " fixed" : "",
		 flags & MREMAP_DONTUNMAP ? " dontunmap" : "");
	down_write(&mm->mmap_lock);
	/* A move of a range inside one VMA to a place that does not overlap it cannot fail. */
	expect_ok = (flags & MREMAP_FIXED) && one_vma(mm, start, end) &&
		    (start + old_len <= dest || dest + new_len <= start);
	ret = do_mremap(mm, start, old_len, new_len, flags, dest);
	if (ret >= 0 && !in_region((unsigned long)ret)) {
		/* Moved below mmap_base: not ours to track. */
		st.outside++;
		if (do_munmap(mm, (unsigned long)ret, new_len))
			mmr_failf("munmap of the range moved to %#lx failed", ret);
	}
	up_write(&mm->mmap_lock);
	if (ret < 0) {
		st.remap_errors++;
		if (ret != -EINVAL && ret != -EFAULT && ret != -ENOMEM)
			mmr_failf("do_mremap returned %ld", ret);
		else if (expect_ok && (ret != -ENOMEM || total_free_pages() > cfg.low_free))
			mmr_failf("do_mremap returned %ld for a move that should work", ret);
		shadow_reconcile(t, start, start + old_len);
		if (dest)
			shadow_reconcile(t, dest, dest + new_len);
		return;
	}
	if ((flags & MREMAP_FIXED) && (unsigned long)ret != dest) {
		mmr_failf("MREMAP_FIXED to %#lx returned %#lx", dest, ret);
		return;
	}
	if ((unsigned long)ret == start && !(flags & (MREMAP_FIXED | MREMAP_DONTUNMAP))) {
		/* In place: a shrink loses the tail, a grow adds pages nothing wrote. */
		st.remap_in_place++;
		if (new_len < old_len)
			shadow_clear(t, start + new_len, start + old_len);
	} else {
		unsigned long moved = min(old_len, new_len), to = (unsigned long)ret;

		st.remap_moves++;
		if (in_region(to)) {
			shadow_clear(t, to, to + new_len);
			shadow_copy(shadow_of(t, to), shadow_of(t, start),
				    (moved >> PAGE_SHIFT) * sizeof(u32));
		}
		shadow_clear(t, start, start + old_len);
		for (unsigned long a = to; a < to + moved && in_region(to) && !mmr.failed;
		     a += PAGE_SIZE * 7)
			check_page(t, a, "after mremap, at the new address");
	}
	for (unsigned long a = start; a < start + old_len && !mmr.failed; a += PAGE_SIZE * 7)
		check_page(t, a, "after mremap, at the old address");
}

/*
 * move_pages of a random range to a random node with memory, shared pages
 * too (MPOL_MF_MOVE_ALL: a page shared with another mm after fork moves
 * for both). The bytes must come along (the checks after every step read
 * them at the new frames), mm_verify checks that no migration entry is
 * left (invariant 5), and when the call says every page moved, every page
 * mapped in the range is on the node.
 */
static void op_migrate(struct tmm *t)
{
	unsigned long start, end, addrs[32], pfns[32];
	int node, n = 0, npinned;
	bool away = false;
	long left;

	random_range(t, 512, &start, &end);
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		n += node_has_memory(nid);
	n = (int)rnd((unsigned long)n);
	for (node = 0; !node_has_memory(node) || n--; node++)
		;
	describe("migrate mm%d [%#lx, %#lx) to node %d", t->id, start, end, node);
	npinned = pinned_and_mapped(t, start, end, addrs, pfns, ARRAY_SIZE(addrs));
	for (int i = 0; i < npinned; i++)
		away |= page_to_nid(pfn_to_page(pfns[i])) != node;
	left = migrate_range_to_node(t->mm, start, end, node);
	if (left < 0 && left != -ENOMEM) {
		mmr_failf("migrate_range_to_node returned %ld", left);
		return;
	}
	/* A pinned folio is busy: it stays, and the call says some pages did not move. */
	if (away && left == 0)
		mmr_failf("migrate_range_to_node moved everything, pinned pages included");
	for (int i = 0; i < npinned && !mmr.failed; i++) {
		if (!pin_still_mapped(t->id, addrs[i], pfn_to_page(pfns[i])))
			mmr_failf("the pinned page pfn %#lx at %#lx was migrated", pfns[i], addrs[i]);
		else
			st.migrate_pin_stayed++;
	}
	for (unsigned long a = start; a < end && left == 0 && !mmr.failed; a += PAGE_SIZE) {
		struct mmr_mapping m = mmr_lookup(t->mm, a);

		if ((m.kind == MMR_PTE || m.kind == MMR_PMD) &&
		    folio_nid(page_folio(pfn_to_page(m.pfn))) != node)
			mmr_failf("%#lx (pfn %#lx, %s) is on node %d after moving to node %d", a,
				  m.pfn, kind_names[m.kind], folio_nid(page_folio(pfn_to_page(m.pfn))),
				  node);
	}
}

/* ---- device memory: a device of the sequence's own (include/quire/memremap.h) ---- */

#define MMR_DEV_PAGES	512	/* 2 MiB of what was kept at boot (devmem=, HOST_DEVMEM) */

static struct test_device mmr_dev;

/*
 * Part of one VMA to the device (migrate_vma, as a driver does): the pages
 * (and empty anonymous slots) that move become device-private entries,
 * their contents in device memory, where check_page reads them; a pinned
 * page stays. A later read or write faults them back (mmr_migrate_to_ram).
 */
static void op_device(struct tmm *t)
{
	static unsigned long src[64], dst[64];
	unsigned long start, end, addrs[32], pfns[32];
	struct migrate_vma m = { .src = src, .dst = dst, .pgmap_owner = &mmr_dev,
				 .flags = MIGRATE_VMA_SELECT_SYSTEM };
	struct vm_area_struct *v;
	int npinned, err;

	if (!test_device_up(&mmr_dev, MMR_DEV_PAGES)) {
		describe("to_device: no device memory");
		return;
	}
	random_range(t, ARRAY_SIZE(src), &start, &end);
	v = find_vma(t->mm, start);
	if (!v || v->vm_start > start) {
		describe("to_device mm%d %#lx: no VMA", t->id, start);
		return;
	}
	end = min(min(end, v->vm_end), start + ARRAY_SIZE(src) * PAGE_SIZE);	/* the arrays' size */
	describe("to_device mm%d [%#lx, %#lx)", t->id, start, end);
	npinned = pinned_and_mapped(t, start, end, addrs, pfns, ARRAY_SIZE(addrs));
	m.vma = v;
	m.start = start;
	m.end = end;
	down_read(&t->mm->mmap_lock);
	err = migrate_vma_setup(&m);
	if (err) {
		up_read(&t->mm->mmap_lock);
		mmr_failf("migrate_vma_setup [%#lx, %#lx) returned %d", start, end, err);
		return;
	}
	if (m.npages != (end - start) >> PAGE_SHIFT)
		mmr_failf("migrate_vma_setup collected %lu words for %lu pages", m.npages,
			  (end - start) >> PAGE_SHIFT);
	for (unsigned long i = 0; i < m.npages; i++) {
		struct page *dpage;

		if (!(src[i] & MIGRATE_PFN_MIGRATE))
			continue;
		dpage = test_device_alloc(&mmr_dev);
		if (!dpage) {
			st.device_full++;
			continue;
		}
		test_device_fill(dpage, src[i], &dst[i]);
	}
	migrate_vma_pages(&m);
	for (unsigned long i = 0; i < m.npages; i++) {
		if (!(src[i] & MIGRATE_PFN_MIGRATE) || !dst[i])
			continue;
		st.to_device++;
	}
	migrate_vma_finalize(&m);
	up_read(&t->mm->mmap_lock);
	/* Pinned pages are refused: still mapped where they were. */
	for (int i = 0; i < npinned && !mmr.failed; i++) {
		if (!pin_still_mapped(t->id, addrs[i], pfn_to_page(pfns[i])))
			mmr_failf("the pinned page pfn %#lx at %#lx went to the device", pfns[i],
				  addrs[i]);
		else
			st.device_refused++;
	}
	for (unsigned long a = start; a < end && !mmr.failed; a += PAGE_SIZE)
		check_page(t, a, "after to_device");
}

/* How many pages from start GUP may take: up to the first hole or VMA it refuses (check_vma_flags). */
static unsigned long gup_reach(struct mm_struct *mm, unsigned long start, unsigned long nr,
			       bool write)
{
	unsigned long a = start, end = start + (nr << PAGE_SHIFT);

	while (a < end) {
		struct vm_area_struct *v = find_vma(mm, a);

		if (!v || v->vm_start > a || !(v->vm_flags & (write ? VM_WRITE : VM_READ)))
			break;
		a = v->vm_end;
	}
	return (min(a, end) - start) >> PAGE_SHIFT;
}

static void op_unpin(void);

static unsigned long dram_free_pages(void)
{
	unsigned long n = 0;

	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid) && numa_nodes[nid].tier != MEM_TIER_SLOW)
			n += node_page_state(nid, NR_FREE_PAGES);
	return n;
}

/* Does the sequence hold a folio on the slow tier mapped in t's [start, +nr pages)? */
static bool holds_slow_folio(struct tmm *t, unsigned long start, unsigned long nr)
{
	for (unsigned long i = 0; i < nr; i++) {
		struct mmr_mapping m = mmr_lookup(t->mm, start + (i << PAGE_SHIFT));
		struct folio *folio = mapping_folio(&m);

		if (folio && numa_nodes[folio_nid(folio)].tier == MEM_TIER_SLOW &&
		    sequence_holds(folio, false))
			return true;
	}
	return false;
}

static const char *const pin_kinds[4] = { "pin", "pin_fast", "get", "get_fast" };

/*
 * Pin (or get) a random range of t, slowly (pin_user_pages_remote,
 * get_user_pages_remote under mmap_lock) or by the lockless walk with its
 * fallback (gup_fast_mm), FOLL_WRITE or not, FOLL_LONGTERM now and then.
 * What comes back is checked at once: the count (Linux's: up to the first
 * hole or refused VMA, -EFAULT when that is the first page), each page is
 * the one mapped there now, writable for FOLL_WRITE, a pinned anonymous
 * page is anon-exclusive and maybe-pinned, a long-term pin is off the slow
 * tier. The record then stays until op_unpin.
 */
static void op_pin(struct tmm *t)
{
	unsigned long cap = min(cfg.mem_budget / 4, (unsigned long)MMR_MAX_PINS * MMR_PIN_PAGES);
	unsigned long start, end, nr, want, r = rnd(100);
	int kind = r < 45 ? 0 : r < 80 ? 1 : r < 92 ? 2 : 3;
	bool get = kind >= 2, fast = kind & 1;
	unsigned int flags = 0;
	struct pin_rec *p;
	long ret;

	if (nr_pins == MMR_MAX_PINS || pinned_pages >= cap) {
		op_unpin();
		return;
	}
	random_range(t, MMR_PIN_PAGES, &start, &end);	/* (a whole VMA may be longer) */
	nr = min(min((end - start) >> PAGE_SHIFT, cap - pinned_pages), (unsigned long)MMR_PIN_PAGES);
	if (chance(60))
		flags |= FOLL_WRITE;
	if (!get && chance(20))
		flags |= FOLL_LONGTERM;
	p = &pins[nr_pins];
	describe("%s mm%d [%#lx, %#lx) %lu pages%s%s", pin_kinds[kind], t->id, start,
		 start + (nr << PAGE_SHIFT), nr, flags & FOLL_WRITE ? " write" : "",
		 flags & FOLL_LONGTERM ? " longterm" : "");
	want = gup_reach(t->mm, start, nr, flags & FOLL_WRITE);
	if (fast) {
		ret = gup_fast_mm(t->mm, start, nr, flags | (get ? FOLL_GET : FOLL_PIN), p->pages,
				  false);
	} else {
		down_read(&t->mm->mmap_lock);
		ret = get ? get_user_pages_remote(t->mm, start, nr, flags, p->pages, NULL)
			  : pin_user_pages_remote(t->mm, start, nr, flags, p->pages, NULL);
		up_read(&t->mm->mmap_lock);
	}
	st.pin_ops[kind]++;
	if (ret > 0) {
		p->mm_id = t->id;
		p->start = start;
		p->nr = (unsigned long)ret;
		p->flags = flags | (get ? FOLL_GET : FOLL_PIN);
		p->step = mmr.step;
		nr_pins++;
		pinned_pages += p->nr;
		st.pin_pages += p->nr;
		st.pin_longterm += !!(flags & FOLL_LONGTERM);
	}
	if (!want) {
		if (ret != -EFAULT)
			mmr_failf("%s of a range GUP cannot start returned %ld, not -EFAULT",
				  pin_kinds[kind], ret);
		st.pin_efault++;
		return;
	}
	if (ret == -ENOMEM || (ret > 0 && (unsigned long)ret < want)) {
		/*
		 * Out of memory (a fault, or a long-term pin's migration off the
		 * slow tier), or a slow-tier folio the sequence holds (a
		 * reference or a pin keeps it from moving).
		 */
		if (ret < 0)
			st.pin_enomem++;
		else
			st.pin_partial++;
		if (dram_free_pages() > cfg.low_free &&
		    !((flags & FOLL_LONGTERM) && holds_slow_folio(t, start, want)))
			mmr_failf("%s returned %ld of %lu pages with %lu pages free on the DRAM nodes",
				  pin_kinds[kind], ret, want, dram_free_pages());
	} else if (ret != (long)want) {
		mmr_failf("%s returned %ld, expected %lu (the range up to the first hole or refused VMA)",
			  pin_kinds[kind], ret, want);
		return;
	}
	for (long i = 0; i < ret && !mmr.failed; i++) {
		unsigned long a = start + ((unsigned long)i << PAGE_SHIFT);
		struct mmr_mapping m = mmr_lookup(t->mm, a);
		struct page *page = p->pages[i];
		struct folio *folio = page_folio(page);
		bool zero = is_zero_page(page);

		if (!m.present || m.kind == MMR_NONE || m.pfn != page_to_pfn(page))
			mmr_failf("page %ld (pfn %#lx) is not what %#lx maps (%s pfn %#lx)", i,
				  page_to_pfn(page), a, kind_names[m.kind], m.pfn);
		else if ((flags & FOLL_WRITE) && (zero || !m.write))
			mmr_failf("a FOLL_WRITE %s took %s at %#lx, %swritable", pin_kinds[kind],
				  zero ? "the zero page" : "a page", a, m.write ? "" : "not ");
		else if (!get && zero && (flags & FOLL_LONGTERM))
			mmr_failf("a long-term pin took the zero page at %#lx (it must unshare)", a);
		else if (!get && !zero && (!PageAnonExclusive(page) || !folio_maybe_dma_pinned(folio)))
			mmr_failf("pinned page at %#lx: anon-exclusive %d, maybe pinned %d", a,
				  PageAnonExclusive(page), folio_maybe_dma_pinned(folio));
		else if ((flags & FOLL_LONGTERM) && !zero &&
			 numa_nodes[folio_nid(folio)].tier == MEM_TIER_SLOW)
			mmr_failf("a long-term pin left the page at %#lx on slow-tier node %d", a,
				  folio_nid(folio));
	}
	check_page(t, start, "after a pin");
}

/*
 * A device's write through a write pin: into a page the mm still maps at
 * the pinned address (a pinned anonymous page is that mm's alone, so the
 * shadow is that mm's), a new byte as a write fault does.
 */
static void device_write(struct pin_rec *p, unsigned long i)
{
	struct page *page = p->pages[i];
	unsigned long addr = p->start + (i << PAGE_SHIFT), off = rnd(PAGE_SIZE);
	struct tmm *t = tmm_by_id(p->mm_id);
	u8 *kaddr;
	u32 *s;

	if (!t || !in_region(addr) || !pin_still_mapped(p->mm_id, addr, page))
		return;
	kaddr = page_address(page);
	s = shadow_of(t, addr);
	if (*s)
		kaddr[SH_OFF(*s)] = 0;
	kaddr[off] = (u8)(1 + rnd(255));
	*s = SH_MAKE(off, kaddr[off]);
	st.device_writes++;
	for (int k = 0; k < nr_mms; k++)
		check_page(&mms[k], addr, "after a write through a pin");
}

/*
 * Drop a random record: references with put_page; pins with
 * unpin_user_pages, unpin_user_page one by one, or (a write pin the
 * "device" wrote through first) unpin_user_pages_dirty_lock(.., true),
 * after which each folio must be dirty.
 */
static void op_unpin(void)
{
	struct pin_rec *p, tmp;
	bool dirty;
	int i;

	if (!nr_pins) {
		describe("unpin: nothing pinned");
		return;
	}
	i = (int)rnd((unsigned long)nr_pins);
	p = &pins[i];
	dirty = (p->flags & FOLL_PIN) && chance(50);
	describe("unpin%s mm%d [%#lx, +%lu pages) %s%s", dirty ? "_dirty" : "", p->mm_id, p->start,
		 p->nr, p->flags & FOLL_GET ? "get" : "pin", p->flags & FOLL_WRITE ? " write" : "");
	if (p->flags & FOLL_GET) {
		for (unsigned long j = 0; j < p->nr; j++)
			put_page(p->pages[j]);
	} else if (dirty) {
		if (p->flags & FOLL_WRITE)
			for (int k = 0; k < 4; k++)
				device_write(p, rnd(p->nr));
		/* References of our own, to look at the folios after the pins went. */
		for (unsigned long j = 0; j < p->nr; j++)
			if (!is_zero_page(p->pages[j]))
				folio_get(page_folio(p->pages[j]));
		unpin_user_pages_dirty_lock(p->pages, p->nr, true);
		for (unsigned long j = 0; j < p->nr; j++) {
			struct folio *folio = page_folio(p->pages[j]);

			if (is_zero_page(p->pages[j]))
				continue;
			if (!test_page_flag((struct page *)folio, PG_dirty) && !mmr.failed)
				mmr_failf("unpin_user_pages_dirty_lock left folio pfn %#lx clean",
					  folio_pfn(folio));
			folio_put(folio);
		}
		st.unpin_dirty++;
	} else if (chance(30)) {
		for (unsigned long j = 0; j < p->nr; j++)
			unpin_user_page(p->pages[j]);
	} else {
		unpin_user_pages(p->pages, p->nr);
	}
	st.unpins++;
	pinned_pages -= p->nr;
	/* Swap with the last: each slot keeps its own array. */
	tmp = pins[i];
	pins[i] = pins[nr_pins - 1];
	pins[nr_pins - 1] = tmp;
	nr_pins--;
}

/* Everything the sequence holds, dropped (the end, or a new run). */
static void unpin_all(void)
{
	while (nr_pins)
		op_unpin();
}

/*
 * fork (dup_mm). A pinned anonymous page must not be shared: the parent
 * keeps it (still mapped where it was), the child gets a copy of it.
 */
static void op_fork(struct tmm *t)
{
	unsigned long addrs[32], pfns[32];
	struct vm_area_struct *v;
	struct mm_struct *child;
	struct tmm *c;
	int npinned;

	describe("fork mm%d -> mm%d", t->id, next_id);
	npinned = pinned_and_mapped(t, 0, ~0UL, addrs, pfns, ARRAY_SIZE(addrs));
	child = dup_mm(t->mm);
	if (!child) {
		if (total_free_pages() > cfg.low_free)
			mmr_failf("dup_mm failed with %lu pages free", total_free_pages());
		return;
	}
	c = new_tmm(child, t->shadow);
	if (!c)
		return;
	/* MADV_DONTFORK: the child has holes there. */
	list_for_each_entry(v, &t->mm->vmas, vm_list)
		if (v->vm_flags & VM_DONTCOPY)
			shadow_clear(c, v->vm_start, v->vm_end);
	for (int i = 0; i < npinned && !mmr.failed; i++) {
		struct mmr_mapping pm = mmr_lookup(t->mm, addrs[i]), cm = mmr_lookup(child, addrs[i]);

		v = find_vma(t->mm, addrs[i]);
		if (pm.pfn != pfns[i] || (pm.kind != MMR_PTE && pm.kind != MMR_PMD))
			mmr_failf("fork: the parent no longer maps its pinned page pfn %#lx at %#lx "
				  "(%s pfn %#lx)", pfns[i], addrs[i], kind_names[pm.kind], pm.pfn);
		else if (v && (v->vm_flags & VM_DONTCOPY))
			continue;
		else if (cm.kind != MMR_PTE || cm.pfn == pfns[i])
			mmr_failf("fork: the child maps %s pfn %#lx at %#lx, where the parent's page "
				  "pfn %#lx is pinned (it must get a copy)", kind_names[cm.kind], cm.pfn,
				  addrs[i], pfns[i]);
		else
			st.fork_pin_copies++;
		check_page(c, addrs[i], "after fork, the child's copy of a pinned page");
	}
	/* Both see the same bytes: a sample now (the sweep sees them all later). */
	for (int i = 0; i < 16 && !mmr.failed; i++) {
		unsigned long a = random_page(c);

		if (a) {
			check_page(c, a, "after fork, in the child");
			check_page(t, a, "after fork, in the parent");
		}
	}
}

static void op_exit(int i)
{
	describe("exit mm%d", mms[i].id);
	drop_tmm(i);
	if (!nr_mms) {
		struct mm_struct *mm = mm_alloc();

		if (!mm)
			mmr_failf("mm_alloc failed");
		else
			new_tmm(mm, NULL);
	}
}

/* A random address of t mapped by a PMD, or 0. */
static unsigned long find_pmd_mapping(struct tmm *t)
{
	unsigned long found = 0, n = 0;
	struct vm_area_struct *v;

	list_for_each_entry(v, &t->mm->vmas, vm_list)
		for (unsigned long a = ALIGN_UP(v->vm_start, PMD_SIZE); a + PMD_SIZE <= v->vm_end;
		     a += PMD_SIZE)
			if (mmr_lookup(t->mm, a).kind == MMR_PMD && !rnd(++n))
				found = a;	/* reservoir sampling: each equally likely */
	return found;
}

static void op_split_pmd(struct tmm *t)
{
	unsigned long addr = chance(90) ? find_pmd_mapping(t) : 0;
	struct vm_area_struct *v;
	struct mmr_mapping before;

	if (!addr) {
		unsigned long start, end;

		random_range(t, 1, &start, &end);
		addr = ALIGN_DOWN(start, PMD_SIZE);
	}
	addr += rnd(HPAGE_PMD_NR) << PAGE_SHIFT;
	describe("split_huge_pmd mm%d %#lx", t->id, addr);
	down_write(&t->mm->mmap_lock);
	before = mmr_lookup(t->mm, addr);
	v = find_vma(t->mm, addr);
	if (v && addr >= v->vm_start) {
		split_huge_pmd(v, addr);
		if (mmr_lookup(t->mm, addr).kind == MMR_PMD)
			mmr_failf("split_huge_pmd left the PMD mapping");
		else if (before.kind == MMR_PMD)
			st.pmd_splits++;
	}
	up_write(&t->mm->mmap_lock);
	check_page(t, addr, "after split_huge_pmd");
}

/* A random address of t in a large folio (PTE- or PMD-mapped), or 0. */
static unsigned long find_large_folio(struct tmm *t)
{
	for (int tries = 0; tries < 8; tries++) {
		struct vm_area_struct *v = random_vma(t);
		unsigned long pages, first;

		if (!v)
			return 0;
		pages = (v->vm_end - v->vm_start) >> PAGE_SHIFT;
		first = rnd(pages);
		for (unsigned long i = 0; i < min(pages, 256UL); i++) {
			unsigned long a = v->vm_start + (((first + i * 16) % pages) << PAGE_SHIFT);
			struct mmr_mapping m = mmr_lookup(t->mm, a);
			struct folio *f = mapping_folio(&m);

			if (f && folio_test_large(f))
				return a;
		}
	}
	return 0;
}

static void op_split_folio(struct tmm *t)
{
	unsigned long addr = find_large_folio(t);
	unsigned int order, new_order;
	struct folio *folio, *now;
	struct mmr_mapping m;
	bool bad_order, held;
	int ret, refs, maps;

	if (!addr) {
		describe("split_folio mm%d: no large folio", t->id);
		return;
	}
	down_read(&t->mm->mmap_lock);
	m = mmr_lookup(t->mm, addr);
	folio = mapping_folio(&m);
	if (!folio || !folio_test_large(folio)) {
		up_read(&t->mm->mmap_lock);
		mmr_failf("the large folio at %#lx went away", addr);
		return;
	}
	folio_get(folio);
	up_read(&t->mm->mmap_lock);
	order = folio_order(folio);
	new_order = (unsigned int)rnd(order - 1);	/* 0 .. order-2; 1 means order-1 */
	if (new_order == 1)
		new_order = order - 1;
	bad_order = chance(5);
	if (bad_order)
		new_order = chance(50) ? 1 : order + (unsigned int)rnd(2);
	describe("split_folio mm%d %#lx pfn %#lx order %u -> %u", t->id, addr, folio_pfn(folio),
		 order, new_order);
	refs = folio_ref_count(folio);
	maps = folio_mapcount(folio);
	held = sequence_holds(folio, false);
	folio_lock(folio);
	ret = split_folio_to_order(folio, new_order);
	folio_unlock(folio);
	if (bad_order) {
		if (ret != -EINVAL)
			mmr_failf("split to order %u of an order-%u folio returned %d", new_order, order, ret);
		st.folio_split_einval++;
	} else if (held) {
		/* Pinned (or referenced) by the sequence: refused, as Linux (-EAGAIN). */
		if (ret != -EAGAIN)
			mmr_failf("split_folio_to_order of a folio the sequence %s returned %d",
				  sequence_holds(folio, true) ? "pins" : "holds", ret);
		st.split_pin_refused++;
	} else if (ret == -EAGAIN) {
		/* Nothing else holds references or locks here: the counts must have been wrong. */
		mmr_failf("split_folio_to_order returned -EAGAIN (refcount %d, mapcount %d before)",
		      refs, maps);
	} else if (ret && ret != -ENOMEM) {
		mmr_failf("split_folio_to_order returned %d", ret);
	} else if (!ret) {
		st.folio_splits++;
	}
	folio_put(folio);
	if (!ret && !bad_order) {
		down_read(&t->mm->mmap_lock);
		m = mmr_lookup(t->mm, addr);
		now = mapping_folio(&m);
		if (!now || folio_order(now) != new_order || m.kind == MMR_PMD)
			mmr_failf("after the split the page at %#lx is in %s of order %u", addr,
			      kind_names[m.kind], now ? folio_order(now) : 0);
		up_read(&t->mm->mmap_lock);
	}
	for (int k = 0; k < nr_mms; k++)
		check_page(&mms[k], addr, "after split_folio_to_order");
}

static void op_deferred_scan(void)
{
	unsigned long n = chance(30) ? ~0UL : 1 + rnd(8), before = deferred_split_queue_len();
	unsigned long split;

	describe("deferred_split_scan %ld (queue %lu)", (long)n, before);
	split = deferred_split_scan(n);
	st.deferred_split += split;
	if (split > before || deferred_split_queue_len() > before)
		mmr_failf("deferred_split_scan split %lu of %lu, the queue is now %lu", split, before,
		      deferred_split_queue_len());
}

/*
 * New THP settings: random modes, global and per size, and rmap batching
 * mostly on. With a focus order (cfg.thp_every), that size is "always" and
 * the larger ones are off.
 */
static unsigned int thp_focus = HPAGE_PMD_ORDER;

static void op_thp(int focus)
{
	static const enum thp_mode global[] = {
		THP_ALWAYS, THP_ALWAYS, THP_ALWAYS, THP_MADVISE, THP_MADVISE, THP_NEVER,
	};
	static const enum thp_mode per[] = {
		THP_ALWAYS, THP_ALWAYS, THP_INHERIT, THP_INHERIT, THP_MADVISE, THP_NEVER,
	};
	static const char mode_char[] = { [THP_NEVER] = 'n', [THP_ALWAYS] = 'a',
					  [THP_MADVISE] = 'm', [THP_INHERIT] = 'i' };
	char desc[16] = "";

	if (thp_set_global_mode(global[rnd(ARRAY_SIZE(global))]))
		mmr_failf("thp_set_global_mode failed");
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		enum thp_mode m = per[rnd(ARRAY_SIZE(per))];

		if (focus >= 0 && o == (unsigned int)focus)
			m = THP_ALWAYS;
		else if (focus >= 0 && o > (unsigned int)focus)
			m = THP_NEVER;
		if (thp_set_order_mode(o, m))
			mmr_failf("thp_set_order_mode(%u) failed", o);
		desc[o - THP_ORDER_MIN] = mode_char[m];
	}
	if (focus >= 0)
		thp_focus = (unsigned int)focus;
	rmap_batching = chance(80);
	if (thp_num_setting_store(THP_USE_ZERO_PAGE, chance(50) ? "1" : "0", 1))
		mmr_failf("use_zero_page could not be set");
	describe("thp global %s orders 2-9 %s, rmap_batching %d, use_zero_page %d",
		 thp_global_mode() == THP_ALWAYS ? "always" :
		 thp_global_mode() == THP_MADVISE ? "madvise" : "never", desc, rmap_batching,
		 thp_use_zero_page());
}

/* The focus of the window-th THP window: 2 MiB every other one, 1 MiB .. 16 KiB in between. */
static int window_focus(unsigned long window)
{
	if (window % 2 == 0)
		return HPAGE_PMD_ORDER;
	return HPAGE_PMD_ORDER - 1 - (int)(window / 2 % (HPAGE_PMD_ORDER - THP_ORDER_MIN));
}

/*
 * The step after op_thp with a focus: a fresh VMA aligned to the focus
 * size, one to three of them long, at a random place (MAP_FIXED: whatever
 * was there goes), and a write at a random page of each block.
 */
static void op_focus(struct tmm *t)
{
	unsigned long size = PAGE_SIZE << thp_focus, n = 1 + rnd(3), addr;
	long ret;

	addr = MMR_REGION_START + rnd(cfg.region_size / size - n + 1) * size;
	describe("mmap mm%d %#lx +%#lx rw for order %u, and write", t->id, addr, n * size, thp_focus);
	down_write(&t->mm->mmap_lock);
	ret = do_mmap(t->mm, addr, n * size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	up_write(&t->mm->mmap_lock);
	if (ret != (long)addr) {
		mmr_failf("do_mmap returned %ld", ret);
		return;
	}
	shadow_clear(t, addr, addr + n * size);
	for (unsigned long b = addr; b < addr + n * size && !mmr.failed; b += size) {
		bool written;

		one_fault(t, b + (rnd(size >> PAGE_SHIFT) << PAGE_SHIFT), true, &written);
	}
}

static enum op choose_op(void)
{
	static unsigned int total;
	unsigned int r;

	/*
	 * Over the budget of user pages (mm_verify's cost grows with what is
	 * mapped), or short of memory: give some back first.
	 */
	if ((node_pages(NR_USER_PAGES) > cfg.mem_budget || total_free_pages() < cfg.low_free) &&
	    chance(60)) {
		static const enum op give_back[] = {
			OP_MUNMAP, OP_MUNMAP, OP_MUNMAP, OP_DONTNEED, OP_DONTNEED, OP_DONTNEED,
			OP_DEFERRED_SCAN, OP_EXIT, OP_UNPIN,
		};

		return give_back[rnd(ARRAY_SIZE(give_back))];
	}
	if (!total)
		for (int i = 0; i < NR_OPS; i++)
			total += op_weight[i];
	r = (unsigned int)rnd(total);
	for (int i = 0; i < NR_OPS; i++) {
		if (r < op_weight[i])
			return (enum op)i;
		r -= op_weight[i];
	}
	return OP_WRITE;
}

static void do_step(void)
{
	int i = (int)rnd((unsigned long)nr_mms);
	struct tmm *t = &mms[i];
	enum op op = choose_op();

	st.ops[op]++;
	switch (op) {
	case OP_MMAP:		op_mmap(t); break;
	case OP_WRITE:		op_fault(t, true); break;
	case OP_READ:		op_fault(t, false); break;
	case OP_MUNMAP:		op_munmap(t); break;
	case OP_MPROTECT:	op_mprotect(t); break;
	case OP_DONTNEED:	op_madvise(t, MADV_DONTNEED); break;
	case OP_MADV_FLAGS: {
		static const int advice[] = {
			MADV_HUGEPAGE, MADV_HUGEPAGE, MADV_HUGEPAGE, MADV_HUGEPAGE, MADV_NOHUGEPAGE,
			MADV_NOHUGEPAGE, MADV_DONTFORK, MADV_DOFORK, MADV_NORMAL,
		};

		op_madvise(t, advice[rnd(ARRAY_SIZE(advice))]);
		break;
	}
	case OP_FORK:
		if (nr_mms < cfg.max_mms)
			op_fork(t);
		else
			op_exit(i);
		break;
	case OP_EXIT:		op_exit(i); break;
	case OP_SPLIT_PMD:	op_split_pmd(t); break;
	case OP_SPLIT_FOLIO:	op_split_folio(t); break;
	case OP_DEFERRED_SCAN:	op_deferred_scan(); break;
	case OP_THP:		op_thp(-1); break;
	case OP_MREMAP:		op_mremap(t); break;
	case OP_MIGRATE:	op_migrate(t); break;
	case OP_DEVICE:		op_device(t); break;
	case OP_PIN:		op_pin(t); break;
	case OP_UNPIN:		op_unpin(); break;
	case OP_COLLAPSE:	op_collapse(t); break;
	case OP_CLEAR_REFS:	op_clear_refs(t); break;
	default:		break;
	}
}

/* After every step: mm_verify, the allocator's reports, the mms' counters, samples. */
static void check_step(void)
{
	int problems = mm_verify();

	if (problems)
		mmr_failf("mm_verify found %d problem(s)", problems);
	if (page_alloc_errors != snap.page_errors)
		mmr_failf("the page allocator reported %lu bad page(s)", page_alloc_errors - snap.page_errors);
	if (mm_exit_verify_failures != snap.exit_failures)
		mmr_failf("an address space failed mm_verify as it exited");
	if (zero_pfn && nonzero_at(page_address(pfn_to_page(zero_pfn)), 0, PAGE_SIZE) >= 0)
		mmr_failf("the zero page is not zero");
	for (int k = 0; k < nr_mms && !mmr.failed; k++)
		check_mm_counters(&mms[k]);
	if (!mmr.failed)
		check_pins();
	for (int k = 0; k < 4 && !mmr.failed; k++) {
		struct tmm *t = &mms[rnd((unsigned long)nr_mms)];
		unsigned long a = random_page(t);

		if (a)
			check_page(t, a, "sample");
	}
	if (cfg.after_step)
		cfg.after_step();
}

/* ---- the sequence and the cases ---- */

void mmr_snapshot(void)
{
	snap.global = thp_global_mode();
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		snap.order[o] = thp_order_mode(o);
	snap.batching = rmap_batching;
	snap.use_zero_page = thp_use_zero_page();
	deferred_split_scan(~0UL);
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		snap.free[nid] = node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++) {
		snap.nr_anon[o] = mthp_stat_read(o, MTHP_STAT_NR_ANON);
		snap.fault_alloc[o] = mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC);
		snap.split[o] = mthp_stat_read(o, MTHP_STAT_SPLIT);
	}
	snap.thp_alloc = thp_event_read(THP_FAULT_ALLOC);
	snap.split_pmd = thp_event_read(THP_SPLIT_PMD);
	snap.split_page = thp_event_read(THP_SPLIT_PAGE);
	snap.page_errors = page_alloc_errors;
	snap.exit_failures = mm_exit_verify_failures;
	snap.device_faults = mmr_dev.faults_back;
}

void mmr_run(const struct mmr_config *c, unsigned long steps)
{
	struct mm_struct *mm;
	char line[256];
	u64 t0, ms;
	int len = 0;

	cfg = *c;
	cfg.max_mms = min(max(cfg.max_mms, 1), MMR_MAX_MMS);
	cfg.max_touch = min(cfg.max_touch, (unsigned int)MMR_MAX_TOUCH);
	region_pages = cfg.region_size >> PAGE_SHIFT;
	memset(&st, 0, sizeof(st));
	memset(&mmr, 0, sizeof(mmr));
	mmr.seed = cfg.seed;
	nr_mms = 0;
	next_id = 0;
	zero_pfn = 0;
	unpin_all();	/* (a run that was not ended) */
	pinned_pages = 0;
	for (int k = 0; k < MMR_MAX_PINS; k++)
		pins[k].pages = pin_arrays[k];
	thp_focus = HPAGE_PMD_ORDER;
	rng_state = cfg.seed * 0x9e3779b97f4a7c15ULL + 1;
	if (!rng_state)
		rng_state = 1;
	mmr_snapshot();
	mm = mm_alloc();
	if (!mm) {
		mmr_failf("mm_alloc failed");
		return;
	}
	new_tmm(mm, NULL);
	op_thp(-1);

	t0 = ktime_get_ns();
	for (mmr.step = 0; mmr.step < steps && !mmr.failed; mmr.step++) {
		unsigned long every = cfg.thp_every;

		if (every && mmr.step % every == 0)
			op_thp(window_focus(mmr.step / every));
		else if (every && mmr.step % every == 1)
			op_focus(&mms[rnd((unsigned long)nr_mms)]);
		else
			do_step();
		check_step();
		st.mm_steps += nr_mms;
		if (!mmr.failed && mmr.step % cfg.sweep_every == cfg.sweep_every - 1) {
			st.sweeps++;
			for (int k = 0; k < nr_mms && !mmr.failed; k++)
				check_all(&mms[k], "sweep");
		}
	}
	mmr.steps_done = mmr.step;
	if (!mmr.failed) {
		snprintf(mmr.desc, sizeof(mmr.desc), "the final sweep");
		for (int k = 0; k < nr_mms && !mmr.failed; k++)
			check_all(&mms[k], "final sweep");
	}
	ms = (ktime_get_ns() - t0) / 1000000;
	mmr_printf("    # mm_random: %lu steps in %llu ms (%llu steps/s), %lu.%lu mms on average, "
		   "%lu page checks, %lu sweeps\n", mmr.steps_done, (unsigned long long)ms,
		   (unsigned long long)(mmr.steps_done * 1000 / (ms ? ms : 1)),
		   st.mm_steps / max(mmr.steps_done, 1UL),
		   st.mm_steps * 10 / max(mmr.steps_done, 1UL) % 10, st.checks, st.sweeps);
	for (int i = 0; i < NR_OPS; i++)
		len += scnprintf(line + len, sizeof(line) - len, " %s %lu", op_names[i], st.ops[i]);
	mmr_printf("    # ops:%s\n", line);
	mmr_printf("    # faults: cow %lu, efault %lu, enomem %lu; splits: pmd %lu, folio %lu "
		   "(+%lu bad orders), deferred %lu; mmaps and moves placed outside the region %lu\n",
		   st.cow, st.efault, st.enomem, st.pmd_splits, st.folio_splits, st.folio_split_einval,
		   st.deferred_split, st.outside);
	mmr_printf("    # mremap: %lu moves, %lu in place, %lu refused\n", st.remap_moves,
		   st.remap_in_place, st.remap_errors);
	mmr_printf("    # collapse: %lu blocks made PMD-mapped; calls: %lu ok, %lu EINVAL, %lu EAGAIN, "
		   "%lu ENOMEM\n", st.collapsed, st.collapse_ok, st.collapse_einval,
		   st.collapse_eagain, st.collapse_enomem);
	mmr_printf("    # clear_refs: %lu soft-dirty clears (%lu pinned pages kept writable), "
		   "%lu accessed-bit clears\n", st.soft_dirty_clears, st.pinned_kept_writable,
		   st.young_clears);
	mmr_printf("    # pins: %lu pin, %lu pin_fast, %lu get, %lu get_fast calls, %lu pages "
		   "(%lu long-term), %lu -EFAULT, %lu -ENOMEM, %lu partial; %lu unpins (%lu dirtying, "
		   "%lu device writes); %lu folio checks; met: %lu fork copies, %lu kept by migration, "
		   "%lu splits refused\n", st.pin_ops[0], st.pin_ops[1], st.pin_ops[2], st.pin_ops[3],
		   st.pin_pages, st.pin_longterm, st.pin_efault, st.pin_enomem, st.pin_partial,
		   st.unpins, st.unpin_dirty, st.device_writes, st.pin_checks, st.fork_pin_copies,
		   st.migrate_pin_stayed, st.split_pin_refused);
	mmr_printf("    # device: %lu pages moved there, %lu brought back by CPU faults, %lu pinned "
		   "pages refused, %lu pages left for want of device memory\n", st.to_device,
		   mmr_dev.faults_back - snap.device_faults, st.device_refused, st.device_full);
}

void mmr_check_orders(bool expect_all)
{
	char line[200];
	int len = 0;

	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++)
		if (o != 1)
			len += scnprintf(line + len, sizeof(line) - len, " %u:%lu", o, st.fault_order[o]);
	mmr_printf("    # new folios seen after write faults, by order:%s\n", line);
	len = 0;
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		len += scnprintf(line + len, sizeof(line) - len, " %u:%lu", o,
				 mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC) - snap.fault_alloc[o]);
	mmr_printf("    # anon_fault_alloc:%s, thp_fault_alloc %lu, huge zero page reads %lu\n",
		   line, thp_event_read(THP_FAULT_ALLOC) - snap.thp_alloc, st.huge_zero_reads);
	if (!expect_all)
		return;
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++) {
		if (o == 1)
			continue;
		if (!st.fault_order[o]) {
			snprintf(line, sizeof(line), "no order-%u folio came from a fault (seed %lu)", o,
				 mmr.seed);
			mmr_fail(__FILE__, __LINE__, line);
		}
		if (o >= THP_ORDER_MIN)
			EXPECT_CMP(mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC) - snap.fault_alloc[o],
				   >=, st.fault_order[o]);
	}
	EXPECT_CMP(thp_event_read(THP_FAULT_ALLOC) - snap.thp_alloc, ==,
		   mthp_stat_read(HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_ALLOC) -
		   snap.fault_alloc[HPAGE_PMD_ORDER]);
}

void mmr_check_splits(void)
{
	unsigned long folio_splits = 0;
	char line[200];
	int len = 0;

	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		unsigned long n = mthp_stat_read(o, MTHP_STAT_SPLIT) - snap.split[o];

		len += scnprintf(line + len, sizeof(line) - len, " %u:%lu", o, n);
		folio_splits += n;
	}
	mmr_printf("    # thp_split_pmd %lu, thp_split_page %lu, split by order:%s\n",
		   thp_event_read(THP_SPLIT_PMD) - snap.split_pmd,
		   thp_event_read(THP_SPLIT_PAGE) - snap.split_page, line);
	EXPECT_CMP(st.pmd_splits, >=, 1);
	EXPECT_CMP(thp_event_read(THP_SPLIT_PMD) - snap.split_pmd, >=, st.pmd_splits);
	EXPECT_CMP(st.collapsed, >=, 1);
	EXPECT_CMP(st.soft_dirty_clears, >=, 1);
	EXPECT_CMP(st.folio_splits, >=, 1);
	EXPECT_CMP(folio_splits, >=, st.folio_splits);
	EXPECT_CMP(st.deferred_split, >=, 1);
	if (mmr_dev.pgmap.ops) {	/* device memory was there: pages went and came back */
		EXPECT_CMP(st.to_device, >=, 1);
		EXPECT_CMP(mmr_dev.faults_back - snap.device_faults, >=, 1);
	}
}

void mmr_expect_all_back(void)
{
	EXPECT_CMP(deferred_split_queue_len(), ==, 0);
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid))
			EXPECT_CMP(node_page_state(nid, NR_FREE_PAGES), ==, snap.free[nid]);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		EXPECT_CMP(mthp_stat_read(o, MTHP_STAT_NR_ANON), ==, snap.nr_anon[o]);
	EXPECT_CMP(mm_verify(), ==, 0);
	EXPECT_CMP(page_alloc_errors, ==, snap.page_errors);
	EXPECT_CMP(mm_exit_verify_failures, ==, snap.exit_failures);
}

void mmr_end(void)
{
	snprintf(mmr.desc, sizeof(mmr.desc), "teardown");
	unpin_all();
	while (nr_mms)
		drop_tmm(nr_mms - 1);
	thp_set_global_mode(snap.global);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, snap.order[o]);
	rmap_batching = snap.batching;
	thp_num_setting_store(THP_USE_ZERO_PAGE, snap.use_zero_page ? "1" : "0", 1);
	mmr_expect_all_back();
}
