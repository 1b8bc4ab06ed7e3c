/*
 * Transparent huge pages and the batched rmap, on address spaces built from
 * the kernel (mm_alloc, do_mmap, handle_mm_fault, dup_mm, mmput; no
 * process): which folio order a write fault maps (PMD, mTHP, fallbacks,
 * the controls), fork and copy-on-write of PMD- and PTE-mapped folios,
 * partial munmap and the deferred split queue, split_folio_to_order,
 * mprotect and madvise of part of a PMD, rmap_walk after fork, and the
 * rmap_batching switch's call counts. Every case ends with mm_verify() == 0
 * and every page back, and leaves the THP controls as it found them.
 */
#include <quire/ktest.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/mmap.h>
#include <quire/huge_mm.h>
#include <quire/rmap.h>
#include <quire/pte.h>
#include <quire/numa.h>
#include <quire/slab.h>
#include <quire/sched.h>
#include <quire/smp.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/time.h>

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

static void snapshot_free(unsigned long before[MAX_NUMNODES])
{
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		before[nid] = node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
}

/* Every page is back and mm_verify agrees. */
static void expect_free_back(struct ktest *t, const unsigned long before[MAX_NUMNODES])
{
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid))
			KEXPECT_EQ(t, (long)before[nid] - (long)node_page_state(nid, NR_FREE_PAGES), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
}

/* Linux's defaults: global "always", 2 MiB "inherit", every other size "never". */
static void thp_defaults(void)
{
	thp_set_global_mode(THP_ALWAYS);
	for (unsigned int o = THP_ORDER_MIN; o < HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, THP_NEVER);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_INHERIT);
}

/*
 * Run on one CPU of a node with memory (faults allocate large folios on
 * the running CPU's node only), with the default controls, nothing on the
 * deferred split queue, and a snapshot of the free pages.
 */
static void begin(struct ktest *t, struct thp_ctx *c)
{
	int cpu, chosen = -1;

	memset(c, 0, sizeof(*c));
	c->global = thp_global_mode();
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		c->order[o] = thp_order_mode(o);
	c->batching = rmap_batching;
	c->cpus = current->cpus_allowed;
	for_each_online_cpu(cpu) {
		if ((c->cpus & cpumask_of(cpu)) && node_has_memory(cpu_to_node(cpu))) {
			chosen = cpu;
			break;
		}
	}
	if (chosen < 0)
		ktest_skip(t, "no CPU on a node with memory");
	set_cpus_allowed(current, cpumask_of(chosen));
	yield();
	c->nid = cpu_to_node(chosen);
	thp_defaults();
	rmap_batching = true;
	deferred_split_scan(~0UL);
	snapshot_free(c->free_before);
}

static void end(struct ktest *t, struct thp_ctx *c)
{
	for (int i = 0; i < MAX_MMS; i++)
		if (c->mm[i])
			mmput(c->mm[i]);
	memset(c->mm, 0, sizeof(c->mm));
	thp_set_global_mode(c->global);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, c->order[o]);
	rmap_batching = c->batching;
	set_cpus_allowed(current, c->cpus);
	expect_free_back(t, c->free_before);
}

/* Check, and on failure go to the case's "out" label (which calls end()). */
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

static struct mm_struct *new_mm(struct thp_ctx *c)
{
	for (int i = 0; i < MAX_MMS; i++) {
		if (!c->mm[i]) {
			c->mm[i] = mm_alloc();
			return c->mm[i];
		}
	}
	return NULL;
}

static struct mm_struct *fork_mm(struct thp_ctx *c, struct mm_struct *parent)
{
	for (int i = 0; i < MAX_MMS; i++) {
		if (!c->mm[i]) {
			c->mm[i] = dup_mm(parent);
			return c->mm[i];
		}
	}
	return NULL;
}

static void drop_mm(struct thp_ctx *c, struct mm_struct *mm)
{
	for (int i = 0; i < MAX_MMS; i++) {
		if (c->mm[i] == mm) {
			c->mm[i] = NULL;
			mmput(mm);
		}
	}
}

/* ---- address-space operations (taking mmap_lock as the system calls do) ---- */

static long map_anon(struct mm_struct *mm, unsigned long addr, unsigned long len)
{
	long ret;

	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, addr, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	up_write(&mm->mmap_lock);
	return ret;
}

static int unmap(struct mm_struct *mm, unsigned long addr, unsigned long len)
{
	int ret;

	down_write(&mm->mmap_lock);
	ret = do_munmap(mm, addr, len);
	up_write(&mm->mmap_lock);
	return ret;
}

static int protect(struct mm_struct *mm, unsigned long addr, unsigned long len,
		   unsigned long prot)
{
	int ret;

	down_write(&mm->mmap_lock);
	ret = do_mprotect(mm, addr, len, prot);
	up_write(&mm->mmap_lock);
	return ret;
}

static int advise(struct mm_struct *mm, unsigned long addr, unsigned long len, int advice)
{
	int ret;

	down_write(&mm->mmap_lock);
	ret = do_madvise(mm, addr, len, advice);
	up_write(&mm->mmap_lock);
	return ret;
}

static int fault(struct mm_struct *mm, unsigned long addr, bool write)
{
	return handle_mm_fault(mm, addr, write ? FAULT_FLAG_WRITE : 0);
}

/* Write-fault every page of [addr, addr + len); the number of failed faults. */
static unsigned long fault_range(struct mm_struct *mm, unsigned long addr, unsigned long len)
{
	unsigned long bad = 0;

	for (unsigned long a = addr; a < addr + len; a += PAGE_SIZE)
		bad += fault(mm, a, true) != 0;
	return bad;
}

static void split_pmd_at(struct mm_struct *mm, unsigned long addr)
{
	down_read(&mm->mmap_lock);
	split_huge_pmd(find_vma(mm, addr), addr);
	up_read(&mm->mmap_lock);
}

/* ---- looking at the page tables ---- */

/* The PMD entry of addr when it is a leaf, else NULL. */
static pte_t *huge_pmd(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false);

	return pmd && pmd_leaf(*pmd) ? pmd : NULL;
}

/* The PTE of addr (not under a PMD leaf), or NULL. */
static pte_t *pte_of(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false);

	if (!pmd || !*pmd || pmd_leaf(*pmd))
		return NULL;
	return pte_offset(pmd, addr);
}

/* The entry (PTE, or the PMD leaf) that maps addr; 0 when none. */
static pte_t entry_of(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd = huge_pmd(mm, addr), *pte;

	if (pmd)
		return *pmd;
	pte = pte_of(mm, addr);
	return pte ? *pte : 0;
}

/* The frame mapped at addr (through a PMD or a PTE), or 0. */
static unsigned long pfn_of(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd = huge_pmd(mm, addr), *pte;

	if (pmd)
		return pmd_pfn(*pmd) + ((addr >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1));
	pte = pte_of(mm, addr);
	return pte && pte_has_page(*pte) ? pte_pfn(*pte) : 0;
}

/* The page mapped at addr; NULL for nothing or the zero page. */
static struct page *page_of(struct mm_struct *mm, unsigned long addr)
{
	unsigned long pfn = pfn_of(mm, addr);

	return pfn && !is_zero_pfn(pfn) ? pfn_to_page(pfn) : NULL;
}

static struct folio *folio_of(struct mm_struct *mm, unsigned long addr)
{
	struct page *page = page_of(mm, addr);

	return page ? page_folio(page) : NULL;
}

/* The first frame of the folio at addr; 0 for none or the zero page. */
static unsigned long head_pfn_of(struct mm_struct *mm, unsigned long addr)
{
	struct folio *folio = folio_of(mm, addr);

	return folio ? folio_pfn(folio) : 0;
}

static bool exclusive_at(struct mm_struct *mm, unsigned long addr)
{
	struct page *page = page_of(mm, addr);

	return page && PageAnonExclusive(page);
}

/* The order of the folio at addr; -1 for none or the zero page. */
static int order_of(struct mm_struct *mm, unsigned long addr)
{
	struct folio *folio = folio_of(mm, addr);

	return folio ? (int)folio_order(folio) : -1;
}

/* Where byte_of points when nothing is mapped: a failed check, not a crash. */
static volatile u8 nowhere;

/* The byte of the mapped page at addr, through the direct map. */
static volatile u8 *byte_of(struct mm_struct *mm, unsigned long addr)
{
	struct page *page = page_of(mm, addr);

	if (!page) {
		nowhere = 0xff;	/* never a pattern byte the checks expect here */
		return &nowhere;
	}
	return (u8 *)page_address(page) + (addr & (PAGE_SIZE - 1));
}

/* A byte per page, distinct for each page, at offset 0x10 (the user's write). */
static u8 pattern(unsigned long addr, u8 salt)
{
	return (u8)((addr >> PAGE_SHIFT) * 7 + salt);
}

static void write_pattern(struct mm_struct *mm, unsigned long addr, unsigned long len, u8 salt)
{
	for (unsigned long a = addr; a < addr + len; a += PAGE_SIZE)
		*byte_of(mm, a + 0x10) = pattern(a, salt);
}

/* The pages of [addr, addr + len) whose byte is not the pattern. */
static unsigned long pattern_mismatches(struct mm_struct *mm, unsigned long addr,
					unsigned long len, u8 salt)
{
	unsigned long bad = 0;

	for (unsigned long a = addr; a < addr + len; a += PAGE_SIZE) {
		volatile u8 *b = byte_of(mm, a + 0x10);

		bad += b == &nowhere || *b != pattern(a, salt);
	}
	return bad;
}

static unsigned long ev(enum thp_vm_event e)
{
	return thp_event_read(e);
}

static unsigned long ms(unsigned int order, enum mthp_stat_item item)
{
	return mthp_stat_read(order, item);
}

static long cost(enum mm_cost_item item)
{
	return atomic_long_read(&mm_cost[item]);
}

/* ---- 1. a PMD fault ---- */

static void pmd_fault_maps_one_pmd(struct ktest *t)
{
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long alloc = ev(THP_FAULT_ALLOC), alloc9 = ms(9, MTHP_STAT_ANON_FAULT_ALLOC);
	unsigned long nr_anon = ms(9, MTHP_STAT_NR_ANON), not_excl = 0, bad_map = 0;
	struct folio *folio;
	pte_t *pmd;

	begin(t, &c);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, map_anon(mm, AREA, SZ_2M), AREA);
	CHECK_EQ(t, fault(mm, AREA + 0x1234, true), 0);
	pmd = huge_pmd(mm, AREA);
	CHECK(t, pmd != NULL);
	KEXPECT_TRUE(t, pte_write(*pmd));
	folio = folio_of(mm, AREA);
	CHECK(t, folio != NULL);
	KEXPECT_PTR_EQ(t, folio_page(folio, 0), pfn_to_page(pmd_pfn(*pmd)));
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	KEXPECT_TRUE(t, folio_test_anon(folio));
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_nr_pages_mapped(folio), 0);
	KEXPECT_EQ(t, folio_ref_count(folio), 1);
	KEXPECT_FALSE(t, folio_maybe_mapped_shared(folio));
	for (unsigned long i = 0; i < HPAGE_PMD_NR; i++) {
		not_excl += !PageAnonExclusive(folio_page(folio, i));
		bad_map += page_mapcount(folio_page(folio, i)) != 1;
	}
	KEXPECT_EQ(t, not_excl, 0);
	KEXPECT_EQ(t, bad_map, 0);
	KEXPECT_EQ(t, atomic_long_read(&mm->rss), HPAGE_PMD_NR);
	KEXPECT_EQ(t, mm->nr_deposited, 1);
	KEXPECT_EQ(t, ev(THP_FAULT_ALLOC) - alloc, 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_ANON_FAULT_ALLOC) - alloc9, 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON) - nr_anon, 1);
	/* Zeroed; a write through it lands in the folio; more faults change nothing. */
	KEXPECT_EQ(t, *byte_of(mm, AREA + 0x1234), 0);
	*byte_of(mm, AREA + 0x1234) = 0x5a;
	KEXPECT_EQ(t, fault(mm, AREA + 5 * SZ_4K, false), 0);
	KEXPECT_EQ(t, fault(mm, AREA + SZ_2M - 1, true), 0);
	KEXPECT_PTR_EQ(t, huge_pmd(mm, AREA), pmd);
	KEXPECT_EQ(t, *byte_of(mm, AREA + 0x1234), 0x5a);
	KEXPECT_EQ(t, ev(THP_FAULT_ALLOC) - alloc, 1);
	KEXPECT_EQ(t, mm_verify_folio_rmap(folio), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON), nr_anon);
}

/* ---- 2. 64 KiB mTHP over a large range ---- */

static void mthp_64k_every_page(struct ktest *t)
{
	const unsigned int order = 4;
	const unsigned long nr = 1UL << order;
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long size, alloc4, fb4, nr_anon4, pmd_alloc, bad = 0;
	u64 t0;

	begin(t, &c);
	/* 256 MiB when the node has room for it (numa3: 768 MiB), 64 MiB otherwise. */
	size = node_page_state(c.nid, NR_FREE_PAGES) >= ((256UL + 128) << 20) / PAGE_SIZE ?
	       256UL << 20 : 64UL << 20;
	thp_set_order_mode(order, THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, map_anon(mm, AREA, size), AREA);
	alloc4 = ms(order, MTHP_STAT_ANON_FAULT_ALLOC);
	fb4 = ms(order, MTHP_STAT_ANON_FAULT_FALLBACK);
	nr_anon4 = ms(order, MTHP_STAT_NR_ANON);
	pmd_alloc = ev(THP_FAULT_ALLOC);
	t0 = ktime_get_ns();
	CHECK_EQ(t, fault_range(mm, AREA, size), 0);
	printk(KERN_RAW "    # %s: %lu MiB faulted in %llu ms\n", t->name, size >> 20,
	       (unsigned long long)((ktime_get_ns() - t0) / 1000000));
	/* The "done when": 64 KiB enabled => size / 64 KiB folios of 64 KiB. */
	KEXPECT_EQ(t, ms(order, MTHP_STAT_ANON_FAULT_ALLOC) - alloc4, size / SZ_64K);
	KEXPECT_EQ(t, ms(order, MTHP_STAT_ANON_FAULT_FALLBACK) - fb4, 0);
	KEXPECT_EQ(t, ms(order, MTHP_STAT_NR_ANON) - nr_anon4, size / SZ_64K);
	KEXPECT_EQ(t, ev(THP_FAULT_ALLOC) - pmd_alloc, 0);
	KEXPECT_EQ(t, atomic_long_read(&mm->rss), size / PAGE_SIZE);
	for (unsigned long a = AREA; a < AREA + size; a += SZ_64K) {
		pte_t *pte = pte_of(mm, a);
		struct folio *folio = folio_of(mm, a);
		bool ok = pte && folio && folio_order(folio) == order &&
			  folio_pfn(folio) == pte_pfn(pte[0]) && folio_mapcount(folio) == (int)nr &&
			  folio_nr_pages_mapped(folio) == (int)nr &&
			  folio_ref_count(folio) == (int)nr;

		for (unsigned long i = 0; ok && i < nr; i++)
			ok = pte_present(pte[i]) && pte_write(pte[i]) &&
			     pte_pfn(pte[i]) == folio_pfn(folio) + i &&
			     PageAnonExclusive(folio_page(folio, i));
		if (!ok && bad++ < 3)
			printk(KERN_RAW "    # %s: the 64 KiB block at %#lx: order %d\n", t->name,
			       a, order_of(mm, a));
	}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/* ---- 3. fallback by geometry: the next smaller enabled order that fits ---- */

static void fallback_to_smaller_orders(struct ktest *t)
{
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long a2, a4, fb4, fb9, thp_fb;
	const unsigned long b = AREA, v = AREA + SZ_2M, w = AREA + 2 * SZ_2M;

	begin(t, &c);
	thp_set_order_mode(2, THP_ALWAYS);
	thp_set_order_mode(4, THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	a2 = ms(2, MTHP_STAT_ANON_FAULT_ALLOC);
	a4 = ms(4, MTHP_STAT_ANON_FAULT_ALLOC);
	fb4 = ms(4, MTHP_STAT_ANON_FAULT_FALLBACK);

	/* 32 KiB at a 32 KiB but not 64 KiB aligned address: two 16 KiB folios. */
	CHECK_EQ(t, map_anon(mm, b + SZ_32K, SZ_32K), b + SZ_32K);
	CHECK_EQ(t, fault_range(mm, b + SZ_32K, SZ_32K), 0);
	KEXPECT_EQ(t, order_of(mm, b + SZ_32K), 2);
	KEXPECT_EQ(t, order_of(mm, b + SZ_32K + SZ_16K), 2);
	KEXPECT_PTR_NE(t, folio_of(mm, b + SZ_32K), folio_of(mm, b + SZ_32K + SZ_16K));
	KEXPECT_EQ(t, head_pfn_of(mm, b + SZ_32K), pfn_of(mm, b + SZ_32K));
	KEXPECT_EQ(t, ms(2, MTHP_STAT_ANON_FAULT_ALLOC) - a2, 2);
	KEXPECT_EQ(t, ms(4, MTHP_STAT_ANON_FAULT_ALLOC) - a4, 0);
	/* A size that does not fit is skipped, not counted as a fallback (Linux too). */
	KEXPECT_EQ(t, ms(4, MTHP_STAT_ANON_FAULT_FALLBACK) - fb4, 0);

	/* 64 KiB, aligned: one 64 KiB folio. */
	CHECK_EQ(t, map_anon(mm, b + SZ_1M, SZ_64K), b + SZ_1M);
	CHECK_EQ(t, fault(mm, b + SZ_1M + 3 * SZ_4K, true), 0);
	KEXPECT_EQ(t, order_of(mm, b + SZ_1M), 4);
	KEXPECT_EQ(t, head_pfn_of(mm, b + SZ_1M), pfn_of(mm, b + SZ_1M));
	KEXPECT_EQ(t, ms(4, MTHP_STAT_ANON_FAULT_ALLOC) - a4, 1);

	/*
	 * A block with a PTE already in it is not used: a read maps the zero
	 * page at page 0, so a write at page 5 gets 16 KiB (pages 4-7), a
	 * write at page 0 copies the zero page into one page, and page 1's
	 * 16 KiB block is taken by page 0: one page too.
	 */
	CHECK_EQ(t, map_anon(mm, v, SZ_64K), v);
	CHECK_EQ(t, fault(mm, v, false), 0);
	KEXPECT_TRUE(t, is_zero_pfn(pfn_of(mm, v)));
	KEXPECT_FALSE(t, pte_write(entry_of(mm, v)));
	CHECK_EQ(t, fault(mm, v + 5 * SZ_4K, true), 0);
	KEXPECT_EQ(t, order_of(mm, v + 5 * SZ_4K), 2);
	KEXPECT_EQ(t, head_pfn_of(mm, v + 5 * SZ_4K), pfn_of(mm, v + 4 * SZ_4K));
	CHECK_EQ(t, fault(mm, v, true), 0);
	KEXPECT_EQ(t, order_of(mm, v), 0);
	KEXPECT_TRUE(t, pte_write(entry_of(mm, v)));
	CHECK_EQ(t, fault(mm, v + SZ_4K, true), 0);
	KEXPECT_EQ(t, order_of(mm, v + SZ_4K), 0);
	CHECK_EQ(t, fault(mm, v + 12 * SZ_4K, true), 0);
	KEXPECT_EQ(t, order_of(mm, v + 12 * SZ_4K), 2);

	/*
	 * 2 MiB enabled too, in a VMA one 64 KiB short of 2 MiB: no PMD, and
	 * that is geometry, not a failed allocation (no thp_fault_fallback).
	 */
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_ALWAYS);
	fb9 = ms(9, MTHP_STAT_ANON_FAULT_FALLBACK);
	thp_fb = ev(THP_FAULT_FALLBACK);
	CHECK_EQ(t, map_anon(mm, w, SZ_2M - SZ_64K), w);
	CHECK_EQ(t, fault(mm, w, true), 0);
	KEXPECT_TRUE(t, huge_pmd(mm, w) == NULL);
	KEXPECT_EQ(t, order_of(mm, w), 4);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_ANON_FAULT_FALLBACK) - fb9, 0);
	KEXPECT_EQ(t, ev(THP_FAULT_FALLBACK) - thp_fb, 0);
	/* 2 MiB, but starting 4 KiB off alignment: no PMD either; 64 KiB where it fits. */
	CHECK_EQ(t, map_anon(mm, w + SZ_2M + SZ_4K, SZ_2M), w + SZ_2M + SZ_4K);
	CHECK_EQ(t, fault(mm, w + SZ_2M + SZ_64K, true), 0);
	KEXPECT_TRUE(t, huge_pmd(mm, w + SZ_2M + SZ_64K) == NULL);
	KEXPECT_EQ(t, order_of(mm, w + SZ_2M + SZ_64K), 4);
	CHECK_EQ(t, fault(mm, w + 2 * SZ_2M, true), 0);		/* 4 KiB of its block in the VMA: one page */
	KEXPECT_EQ(t, order_of(mm, w + 2 * SZ_2M), 0);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_ANON_FAULT_FALLBACK) - fb9, 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/* ---- 4. the controls: MADV_(NO)HUGEPAGE, global and per-size modes ---- */

/*
 * Map 2 MiB at addr (with advice, unless -1) and write-fault its first byte:
 * the order mapped (9: by a PMD), or a negative step that failed.
 */
static int order_after_fault(struct mm_struct *mm, unsigned long addr, int advice)
{
	if (map_anon(mm, addr, SZ_2M) != (long)addr)
		return -2;
	if (advice >= 0 && advise(mm, addr, SZ_2M, advice))
		return -3;
	if (fault(mm, addr, true))
		return -4;
	if (huge_pmd(mm, addr))
		return order_of(mm, addr) == HPAGE_PMD_ORDER ? HPAGE_PMD_ORDER : -5;
	return order_of(mm, addr);
}

static void controls_choose_the_order(struct ktest *t)
{
	const unsigned long rw = VM_READ | VM_WRITE;
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long a = AREA;

	begin(t, &c);
	/* The allowed orders themselves. */
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw), 1UL << HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw | VM_NOHUGEPAGE), 0);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw | VM_SHARED), 0);
	KEXPECT_EQ(t, thp_set_order_mode(1, THP_ALWAYS), -EINVAL);
	KEXPECT_EQ(t, thp_set_order_mode(HPAGE_PMD_ORDER + 1, THP_ALWAYS), -EINVAL);
	KEXPECT_EQ(t, thp_set_global_mode(THP_INHERIT), -EINVAL);
	KEXPECT_EQ(t, thp_global_mode(), THP_ALWAYS);

	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	/* Defaults: a PMD. */
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), HPAGE_PMD_ORDER);
	a += SZ_2M;
	/* MADV_NOHUGEPAGE: one page, even with 64 KiB enabled too. */
	thp_set_order_mode(4, THP_ALWAYS);
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_NOHUGEPAGE), 0);
	a += SZ_2M;
	thp_set_order_mode(4, THP_NEVER);
	/* Global madvise: a PMD only where MADV_HUGEPAGE says so. */
	thp_set_global_mode(THP_MADVISE);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw), 0);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw | VM_HUGEPAGE), 1UL << HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), 0);
	a += SZ_2M;
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_HUGEPAGE), HPAGE_PMD_ORDER);
	a += SZ_2M;
	/* Global never: not even with MADV_HUGEPAGE. */
	thp_set_global_mode(THP_NEVER);
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_HUGEPAGE), 0);
	a += SZ_2M;
	/* A size set to "always" does not inherit the global "never". */
	thp_set_order_mode(4, THP_ALWAYS);
	KEXPECT_EQ(t, thp_vma_allowable_orders(rw), 1UL << 4);
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), 4);
	a += SZ_2M;
	/* A size set to "madvise": only under MADV_HUGEPAGE. */
	thp_set_global_mode(THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	thp_set_order_mode(4, THP_MADVISE);
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), 0);
	a += SZ_2M;
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_HUGEPAGE), 4);
	a += SZ_2M;
	/* 2 MiB "madvise" under a global "always": the same. */
	thp_set_order_mode(4, THP_NEVER);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_MADVISE);
	KEXPECT_EQ(t, order_after_fault(mm, a, -1), 0);
	a += SZ_2M;
	KEXPECT_EQ(t, order_after_fault(mm, a, MADV_HUGEPAGE), HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/* ---- 5. fallback when the allocation fails ---- */

/* Take every free block of order >= order from node nid (THISNODE), chained on lru. */
static unsigned long hoard(struct list_head *list, int nid, unsigned int order)
{
	unsigned long n = 0;
	struct page *p;

	while ((p = alloc_pages_node(nid, __GFP_THISNODE | __GFP_NOWARN, order))) {
		list_add(&p->lru, list);
		n++;
	}
	return n;
}

/*
 * Give them back. Nobody wrote to them, so they are not poisoned on the
 * way (DEBUG_MM would fill hundreds of MiB with the poison byte, seconds
 * under emulation).
 */
static void release(struct list_head *list, unsigned int order)
{
	bool poison = debug_pagealloc;

	debug_pagealloc = false;
	while (!list_empty(list)) {
		struct page *p = list_first_entry(list, struct page, lru);

		list_del(&p->lru);
		__free_pages(p, order);
	}
	debug_pagealloc = poison;
}

static void alloc_failure_falls_back(struct ktest *t)
{
	const unsigned int mid_order = HPAGE_PMD_ORDER - 1;	/* 1 MiB */
	LIST_HEAD(big);
	LIST_HEAD(mid);
	struct thp_ctx c;
	struct mm_struct *mm;
	unsigned long thp_fb, fb9, fb_mid, a_mid, thp_alloc, nbig, nmid;

	begin(t, &c);
	thp_set_order_mode(mid_order, THP_ALWAYS);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, map_anon(mm, AREA, SZ_2M), AREA);
	/* A page table here already (a read in the second 1 MiB): no PMD will be tried. */
	CHECK_EQ(t, fault(mm, AREA + SZ_2M - SZ_4K, false), 0);
	CHECK_EQ(t, map_anon(mm, AREA + SZ_2M, SZ_2M), AREA + SZ_2M);
	/*
	 * No 2 MiB block left on this node, and exactly one 1 MiB block: take
	 * every block of order >= 9, then of order >= 8, then give one 1 MiB
	 * block back (its buddy is taken, so it stays 1 MiB). What is left
	 * free on the node is in blocks below 1 MiB.
	 */
	nbig = hoard(&big, c.nid, HPAGE_PMD_ORDER);
	nmid = hoard(&mid, c.nid, mid_order);
	if (nmid) {
		struct page *p = list_first_entry(&mid, struct page, lru);

		list_del(&p->lru);
		__free_pages(p, mid_order);
	}
	printk(KERN_RAW "    # %s: held %lu blocks of 2 MiB and %lu of 1 MiB on node %d\n",
	       t->name, nbig, nmid, c.nid);
	thp_fb = ev(THP_FAULT_FALLBACK);
	thp_alloc = ev(THP_FAULT_ALLOC);
	fb9 = ms(9, MTHP_STAT_ANON_FAULT_FALLBACK);
	fb_mid = ms(mid_order, MTHP_STAT_ANON_FAULT_FALLBACK);
	a_mid = ms(mid_order, MTHP_STAT_ANON_FAULT_ALLOC);
	/* A fresh 2 MiB range: the PMD fails, the next size (1 MiB) succeeds. */
	KEXPECT_EQ(t, fault(mm, AREA + SZ_2M, true), 0);
	KEXPECT_TRUE(t, huge_pmd(mm, AREA + SZ_2M) == NULL);
	KEXPECT_EQ(t, ev(THP_FAULT_FALLBACK) - thp_fb, 1);
	KEXPECT_EQ(t, ev(THP_FAULT_ALLOC) - thp_alloc, 0);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_ANON_FAULT_FALLBACK) - fb9, 1);
	if (nmid) {
		KEXPECT_EQ(t, order_of(mm, AREA + SZ_2M), mid_order);
		KEXPECT_EQ(t, ms(mid_order, MTHP_STAT_ANON_FAULT_ALLOC) - a_mid, 1);
	}
	/* The range with a page table: no PMD tried; 1 MiB fails too: one page. */
	KEXPECT_EQ(t, fault(mm, AREA, true), 0);
	KEXPECT_EQ(t, order_of(mm, AREA), 0);
	/* (Without a 1 MiB block to give back, the first fault fell back from 1 MiB too.) */
	KEXPECT_EQ(t, ms(mid_order, MTHP_STAT_ANON_FAULT_FALLBACK) - fb_mid, nmid ? 1 : 2);
	KEXPECT_EQ(t, ev(THP_FAULT_FALLBACK) - thp_fb, 1);
	release(&mid, mid_order);
	release(&big, HPAGE_PMD_ORDER);
	/* With memory back, a fresh range gets its PMD again. */
	CHECK_EQ(t, map_anon(mm, AREA + 2 * SZ_2M, SZ_2M), AREA + 2 * SZ_2M);
	KEXPECT_EQ(t, fault(mm, AREA + 2 * SZ_2M, true), 0);
	KEXPECT_TRUE(t, huge_pmd(mm, AREA + 2 * SZ_2M) != NULL);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	release(&mid, mid_order);
	release(&big, HPAGE_PMD_ORDER);
	end(t, &c);
}

/* ---- 6. fork of a PMD mapping, and copy-on-write ---- */

static unsigned long count_exclusive(struct folio *folio)
{
	unsigned long n = 0;

	for (unsigned long i = 0; i < folio_nr_pages(folio); i++)
		n += PageAnonExclusive(folio_page(folio, i));
	return n;
}

static void fork_shares_pmd_and_cow_copies_one_page(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *parent, *child;
	struct folio *folio;
	unsigned long split_pmd, pfn, copy_pfn, queued;
	pte_t *ppmd, *cpmd;

	begin(t, &c);
	parent = new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_EQ(t, map_anon(parent, a, SZ_2M), a);
	CHECK_EQ(t, fault(parent, a, true), 0);
	CHECK(t, huge_pmd(parent, a) != NULL);
	write_pattern(parent, a, SZ_2M, 1);
	folio = folio_of(parent, a);
	pfn = folio_pfn(folio);

	child = fork_mm(&c, parent);
	CHECK(t, child != NULL);
	ppmd = huge_pmd(parent, a);
	cpmd = huge_pmd(child, a);
	CHECK(t, ppmd && cpmd);
	KEXPECT_EQ(t, pmd_pfn(*ppmd), pfn);
	KEXPECT_EQ(t, pmd_pfn(*cpmd), pfn);
	KEXPECT_FALSE(t, pte_write(*ppmd));
	KEXPECT_FALSE(t, pte_write(*cpmd));
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 2);
	KEXPECT_EQ(t, folio_mapcount(folio), 2);
	KEXPECT_EQ(t, page_mapcount(folio_page(folio, 7)), 2);
	KEXPECT_EQ(t, folio_ref_count(folio), 2);
	KEXPECT_EQ(t, count_exclusive(folio), 0);
	KEXPECT_TRUE(t, folio_maybe_mapped_shared(folio));
	KEXPECT_EQ(t, atomic_long_read(&child->rss), HPAGE_PMD_NR);
	KEXPECT_EQ(t, child->nr_deposited, 1);
	KEXPECT_EQ(t, pattern_mismatches(child, a, SZ_2M, 1), 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The child writes page 3: its PMD is split and that one page copied. */
	split_pmd = ev(THP_SPLIT_PMD);
	queued = deferred_split_queue_len();
	CHECK_EQ(t, fault(child, a + 3 * SZ_4K + 0x10, true), 0);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_TRUE(t, huge_pmd(child, a) == NULL);
	KEXPECT_TRUE(t, huge_pmd(parent, a) != NULL);
	copy_pfn = pfn_of(child, a + 3 * SZ_4K);
	KEXPECT_NE(t, copy_pfn, pfn + 3);
	KEXPECT_EQ(t, order_of(child, a + 3 * SZ_4K), 0);
	KEXPECT_TRUE(t, pte_write(entry_of(child, a + 3 * SZ_4K)));
	KEXPECT_TRUE(t, exclusive_at(child, a + 3 * SZ_4K));
	/* Every other page of the child still maps the shared folio, read-only. */
	KEXPECT_EQ(t, pfn_of(child, a + 4 * SZ_4K), pfn + 4);
	KEXPECT_FALSE(t, pte_write(entry_of(child, a + 4 * SZ_4K)));
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_mapcount(folio), 1 + HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, folio_nr_pages_mapped(folio), HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, folio_ref_count(folio), HPAGE_PMD_NR);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued);	/* the PMD maps all of it */
	/* The copy has the data; the child's write does not reach the parent. */
	KEXPECT_EQ(t, pattern_mismatches(child, a, SZ_2M, 1), 0);
	*byte_of(child, a + 3 * SZ_4K + 0x10) = 0xee;
	KEXPECT_EQ(t, pattern_mismatches(parent, a, SZ_2M, 1), 0);
	/* A second write to the copy copies nothing. */
	CHECK_EQ(t, fault(child, a + 3 * SZ_4K, true), 0);
	KEXPECT_EQ(t, pfn_of(child, a + 3 * SZ_4K), copy_pfn);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The parent writes page 5: the folio is still shared, so its PMD splits and it copies. */
	CHECK_EQ(t, fault(parent, a + 5 * SZ_4K, true), 0);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 2);
	KEXPECT_NE(t, pfn_of(parent, a + 5 * SZ_4K), pfn + 5);
	*byte_of(parent, a + 5 * SZ_4K + 0x10) = 0xdd;
	KEXPECT_EQ(t, *byte_of(child, a + 5 * SZ_4K + 0x10), pattern(a + 5 * SZ_4K, 1));
	KEXPECT_EQ(t, *byte_of(parent, a + 3 * SZ_4K + 0x10), pattern(a + 3 * SZ_4K, 1));
	KEXPECT_EQ(t, folio_mapcount(folio), 2 * (HPAGE_PMD_NR - 1));
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/*
 * After the child is gone the parent is the folio's only user (refcount 1,
 * one PMD): a write reuses the folio in place, as Linux's
 * do_huge_pmd_wp_page does (folio_ref_count == 1), with no split and no copy.
 */
static void pmd_reused_after_the_child_exits(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *parent, *child;
	struct folio *folio;
	unsigned long split_pmd, pfn;

	begin(t, &c);
	parent = new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_EQ(t, map_anon(parent, a, SZ_2M), a);
	CHECK_EQ(t, fault(parent, a, true), 0);
	write_pattern(parent, a, SZ_2M, 2);
	folio = folio_of(parent, a);
	pfn = folio_pfn(folio);
	child = fork_mm(&c, parent);
	CHECK(t, child != NULL);
	KEXPECT_TRUE(t, folio_maybe_mapped_shared(folio));
	drop_mm(&c, child);
	KEXPECT_EQ(t, folio_mapcount(folio), 1);
	KEXPECT_EQ(t, folio_ref_count(folio), 1);
	KEXPECT_FALSE(t, pte_write(entry_of(parent, a)));
	split_pmd = ev(THP_SPLIT_PMD);
	CHECK_EQ(t, fault(parent, a + 9 * SZ_4K, true), 0);
	KEXPECT_TRUE(t, huge_pmd(parent, a) != NULL);
	KEXPECT_EQ(t, pfn_of(parent, a + 9 * SZ_4K), pfn + 9);
	KEXPECT_TRUE(t, pte_write(entry_of(parent, a)));
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 0);
	KEXPECT_EQ(t, pattern_mismatches(parent, a, SZ_2M, 2), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/* ---- 7. fork of 64 KiB folios ---- */

static void fork_shares_mthp_and_cow_copies_one_page(struct ktest *t)
{
	const unsigned long a = AREA, len = 4 * SZ_64K;
	struct thp_ctx c;
	struct mm_struct *parent, *child;
	struct folio *f0;
	unsigned long bad = 0, queued, split_deferred;

	begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	parent = new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_EQ(t, map_anon(parent, a, len), a);
	CHECK_EQ(t, fault_range(parent, a, len), 0);
	write_pattern(parent, a, len, 3);
	child = fork_mm(&c, parent);
	CHECK(t, child != NULL);
	for (unsigned long b = a; b < a + len; b += SZ_64K) {
		struct folio *f = folio_of(parent, b);

		bad += !f || folio_order(f) != 4 || folio_of(child, b) != f ||
		       folio_mapcount(f) != 32 || folio_ref_count(f) != 32 ||
		       folio_nr_pages_mapped(f) != 16 || count_exclusive(f) != 0 ||
		       !folio_maybe_mapped_shared(f);
		for (unsigned long p = b; p < b + SZ_64K; p += SZ_4K)
			bad += pte_write(entry_of(parent, p)) || pte_write(entry_of(child, p)) ||
			       pfn_of(parent, p) != pfn_of(child, p);
	}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The child writes page 2: only that page is copied. */
	f0 = folio_of(parent, a);
	queued = deferred_split_queue_len();
	split_deferred = ms(4, MTHP_STAT_SPLIT_DEFERRED);
	CHECK_EQ(t, fault(child, a + 2 * SZ_4K, true), 0);
	KEXPECT_EQ(t, order_of(child, a + 2 * SZ_4K), 0);
	KEXPECT_TRUE(t, pte_write(entry_of(child, a + 2 * SZ_4K)));
	KEXPECT_PTR_EQ(t, folio_of(child, a + 3 * SZ_4K), f0);
	KEXPECT_FALSE(t, pte_write(entry_of(child, a + 3 * SZ_4K)));
	KEXPECT_EQ(t, folio_mapcount(f0), 31);
	KEXPECT_EQ(t, folio_nr_pages_mapped(f0), 16);
	*byte_of(child, a + 2 * SZ_4K + 0x10) = 0xee;
	KEXPECT_EQ(t, pattern_mismatches(parent, a, len, 3), 0);
	KEXPECT_EQ(t, pattern_mismatches(child, a + 3 * SZ_4K, len - 3 * SZ_4K, 3), 0);
	/* The parent writes page 7 of the same folio: copied too. */
	CHECK_EQ(t, fault(parent, a + 7 * SZ_4K, true), 0);
	KEXPECT_EQ(t, order_of(parent, a + 7 * SZ_4K), 0);
	*byte_of(parent, a + 7 * SZ_4K + 0x10) = 0xdd;
	KEXPECT_EQ(t, *byte_of(child, a + 7 * SZ_4K + 0x10), pattern(a + 7 * SZ_4K, 3));
	KEXPECT_EQ(t, folio_mapcount(f0), 30);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The child exits: page 7 of f0 is mapped by nobody now, so f0 waits for a split. */
	drop_mm(&c, child);
	KEXPECT_EQ(t, folio_mapcount(f0), 15);
	KEXPECT_EQ(t, folio_nr_pages_mapped(f0), 15);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, ms(4, MTHP_STAT_SPLIT_DEFERRED) - split_deferred, 1);
	KEXPECT_EQ(t, pattern_mismatches(parent, a + SZ_64K, len - SZ_64K, 3), 0);
	/* The other folios are the parent's alone again: a write is correct, whatever it costs. */
	CHECK_EQ(t, fault(parent, a + SZ_64K, true), 0);
	KEXPECT_TRUE(t, pte_write(entry_of(parent, a + SZ_64K)));
	KEXPECT_EQ(t, pattern_mismatches(parent, a + SZ_64K, len - SZ_64K, 3), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/*
 * DESIGN.md's invariant 6: fork never shares a pinned anonymous page. A
 * pinned PMD-mapped folio and a pinned 64 KiB folio: the parent keeps
 * them, writable and exclusive; the child gets a copy of every page.
 */
static void fork_copies_pinned_folios(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *parent, *child;
	struct folio *fa = NULL, *fb = NULL;
	unsigned long bad = 0;

	begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	parent = new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_EQ(t, map_anon(parent, a, SZ_2M + SZ_64K), a);
	CHECK_EQ(t, fault(parent, a, true), 0);
	CHECK_EQ(t, fault_range(parent, b, SZ_64K), 0);
	CHECK(t, huge_pmd(parent, a) != NULL);
	CHECK_EQ(t, order_of(parent, b), 4);
	write_pattern(parent, a, SZ_2M + SZ_64K, 6);
	fa = folio_of(parent, a);
	fb = folio_of(parent, b);
	/* Pinned as FOLL_PIN pins a large folio: one reference and one pin each. */
	folio_get(fa);
	atomic_inc(&fa->_pincount);
	folio_get(fb);
	atomic_inc(&fb->_pincount);
	KEXPECT_EQ(t, mm_verify(), 0);

	child = fork_mm(&c, parent);
	CHECK(t, child != NULL);
	KEXPECT_EQ(t, folio_mapcount(fa), HPAGE_PMD_NR);	/* PTE-mapped now, by the parent only */
	KEXPECT_EQ(t, folio_mapcount(fb), 16);
	KEXPECT_EQ(t, count_exclusive(fa), HPAGE_PMD_NR);
	KEXPECT_EQ(t, count_exclusive(fb), 16);
	for (unsigned long p = a; p < a + SZ_2M + SZ_64K; p += SZ_4K) {
		struct folio *cf = folio_of(child, p);

		bad += !cf || cf == fa || cf == fb || folio_test_large(cf);
		bad += !pte_write(entry_of(parent, p)) || !exclusive_at(parent, p);
		bad += !exclusive_at(child, p);
	}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, pattern_mismatches(child, a, SZ_2M + SZ_64K, 6), 0);
	KEXPECT_EQ(t, atomic_long_read(&child->rss), HPAGE_PMD_NR + 16);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The parent writes without a fault, and the child does not see it. */
	*byte_of(parent, a + 0x10) = 0x77;
	KEXPECT_EQ(t, *byte_of(child, a + 0x10), pattern(a, 6));
out:
	if (fa) {
		atomic_dec(&fa->_pincount);
		folio_put(fa);
	}
	if (fb) {
		atomic_dec(&fb->_pincount);
		folio_put(fb);
	}
	end(t, &c);
}

/* ---- 8. partial munmap and the deferred split queue ---- */

static void partial_munmap_queues_a_deferred_split(struct ktest *t)
{
	const unsigned long a = AREA, m = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long split_pmd, queued, sd9, dsp, pm9, split9, thp_split, nr_anon9, bad = 0;
	unsigned long free0, sd4;
	int nid;

	begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, map_anon(mm, a, SZ_2M), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	CHECK(t, huge_pmd(mm, a) != NULL);
	write_pattern(mm, a, SZ_2M, 4);
	folio = folio_of(mm, a);
	nid = folio_nid(folio);
	split_pmd = ev(THP_SPLIT_PMD);
	queued = deferred_split_queue_len();
	sd9 = ms(9, MTHP_STAT_SPLIT_DEFERRED);
	dsp = ev(THP_DEFERRED_SPLIT_PAGE);
	pm9 = ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED);

	/* Unmap the second half: the PMD splits, half the folio stays mapped. */
	CHECK_EQ(t, unmap(mm, a + SZ_1M, SZ_1M), 0);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_TRUE(t, huge_pmd(mm, a) == NULL);
	KEXPECT_PTR_EQ(t, folio_of(mm, a), folio);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, folio_entire_mapcount(folio), 0);
	KEXPECT_EQ(t, folio_mapcount(folio), HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, folio_nr_pages_mapped(folio), HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, atomic_long_read(&mm->rss), HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, mm->nr_deposited, 0);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT_DEFERRED) - sd9, 1);
	KEXPECT_EQ(t, ev(THP_DEFERRED_SPLIT_PAGE) - dsp, 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED) - pm9, 1);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* The scan splits it and frees the unmapped half. */
	split9 = ms(9, MTHP_STAT_SPLIT);
	thp_split = ev(THP_SPLIT_PAGE);
	nr_anon9 = ms(9, MTHP_STAT_NR_ANON);
	slab_shrink_all();
	free0 = node_page_state(nid, NR_FREE_PAGES);
	KEXPECT_EQ(t, deferred_split_scan(~0UL), 1);
	slab_shrink_all();
	KEXPECT_EQ(t, node_page_state(nid, NR_FREE_PAGES) - free0, HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT) - split9, 1);
	KEXPECT_EQ(t, ev(THP_SPLIT_PAGE) - thp_split, 1);
	KEXPECT_EQ(t, nr_anon9 - ms(9, MTHP_STAT_NR_ANON), 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED), pm9);
	for (unsigned long p = a; p < a + SZ_1M; p += SZ_4K) {
		struct folio *f = folio_of(mm, p);

		bad += !f || folio_test_large(f) || folio_ref_count(f) != 1 ||
		       folio_mapcount(f) != 1 || !PageAnonExclusive((struct page *)f) ||
		       !pte_write(entry_of(mm, p));
	}
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, pattern_mismatches(mm, a, SZ_1M, 4), 0);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* 64 KiB folios: a hole in one queues it; unmapping a whole one does not. */
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	CHECK_EQ(t, map_anon(mm, m, 2 * SZ_64K), m);
	CHECK_EQ(t, fault_range(mm, m, 2 * SZ_64K), 0);
	CHECK_EQ(t, order_of(mm, m), 4);
	folio = folio_of(mm, m);
	sd4 = ms(4, MTHP_STAT_SPLIT_DEFERRED);
	CHECK_EQ(t, unmap(mm, m + 5 * SZ_4K, SZ_4K), 0);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, ms(4, MTHP_STAT_SPLIT_DEFERRED) - sd4, 1);
	KEXPECT_EQ(t, folio_nr_pages_mapped(folio), 15);
	CHECK_EQ(t, unmap(mm, m + SZ_64K, SZ_64K), 0);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, mm_verify(), 0);
	slab_shrink_all();
	free0 = node_page_state(folio_nid(folio), NR_FREE_PAGES);
	KEXPECT_EQ(t, deferred_split_scan(~0UL), 1);
	slab_shrink_all();
	KEXPECT_EQ(t, node_page_state(folio_nid(folio), NR_FREE_PAGES) - free0, 1);
	KEXPECT_EQ(t, order_of(mm, m), 0);
	KEXPECT_EQ(t, order_of(mm, m + 6 * SZ_4K), 0);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/*
 * A queued folio the scan cannot split (pinned, here) stays queued, still
 * counted as partially mapped, and is split by a later scan once it can
 * be (Linux's deferred_split_scan puts it back on the queue).
 */
static void deferred_split_keeps_what_it_cannot_split(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long queued, pm9, failed9, split;
	bool pinned = false;

	begin(t, &c);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, map_anon(mm, a, SZ_2M), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	CHECK(t, huge_pmd(mm, a) != NULL);
	folio = folio_of(mm, a);
	queued = deferred_split_queue_len();
	pm9 = ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED);
	CHECK_EQ(t, unmap(mm, a + SZ_1M, SZ_1M), 0);
	CHECK_EQ(t, deferred_split_queue_len(), queued + 1);
	failed9 = ms(9, MTHP_STAT_SPLIT_FAILED);

	atomic_inc(&folio->_pincount);
	pinned = true;
	split = deferred_split_scan(~0UL);
	KEXPECT_EQ(t, split, 0);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT_FAILED) - failed9, 1);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued + 1);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED) - pm9, 1);
	atomic_dec(&folio->_pincount);
	pinned = false;

	/* Unpinned: the next scan splits it and frees the unmapped half. */
	KEXPECT_EQ(t, deferred_split_scan(~0UL), 1);
	KEXPECT_EQ(t, order_of(mm, a), 0);
	KEXPECT_EQ(t, deferred_split_queue_len(), queued);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_NR_ANON_PARTIALLY_MAPPED), pm9);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	if (pinned)
		atomic_dec(&folio->_pincount);
	end(t, &c);
}

/* ---- 9. split_folio_to_order ---- */

/* A PTE-mapped 2 MiB folio at a (faulted as a PMD, then the PMD split). */
static struct folio *pte_mapped_2m(struct mm_struct *mm, unsigned long a, u8 salt)
{
	if (map_anon(mm, a, SZ_2M) != (long)a || fault(mm, a, true) || !huge_pmd(mm, a))
		return NULL;
	write_pattern(mm, a, SZ_2M, salt);
	split_pmd_at(mm, a);
	if (huge_pmd(mm, a))
		return NULL;
	return folio_of(mm, a);
}

static void split_folio_to_each_order(struct ktest *t)
{
	static const unsigned int orders[] = { 0, 2, 4, 8 };
	struct thp_ctx c;
	struct mm_struct *mm;
	pte_t *saved = NULL;

	begin(t, &c);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	saved = kmalloc(HPAGE_PMD_NR * sizeof(*saved), GFP_KERNEL);
	CHECK(t, saved != NULL);
	for (unsigned int k = 0; k < ARRAY_SIZE(orders); k++) {
		const unsigned int new_order = orders[k];
		const unsigned long a = AREA + k * SZ_2M, step = 1UL << new_order;
		unsigned long split9 = ms(9, MTHP_STAT_SPLIT), thp_split = ev(THP_SPLIT_PAGE);
		unsigned long nr_new = new_order ? ms(new_order, MTHP_STAT_NR_ANON) : 0;
		struct folio *folio = pte_mapped_2m(mm, a, (u8)k);
		unsigned long nr9 = ms(9, MTHP_STAT_NR_ANON), bad = 0;
		pte_t *pte = pte_of(mm, a);

		CHECK(t, folio != NULL && pte != NULL);
		CHECK_EQ(t, folio_mapcount(folio), HPAGE_PMD_NR);
		CHECK_EQ(t, folio_ref_count(folio), HPAGE_PMD_NR);
		memcpy(saved, pte, HPAGE_PMD_NR * sizeof(*saved));
		folio_get(folio);
		KEXPECT_EQ(t, split_folio_to_order(folio, new_order), 0);
		/* The caller's reference stays with the first new folio. */
		KEXPECT_EQ(t, folio_ref_count(folio), (int)step + 1);
		folio_put(folio);
		for (unsigned long i = 0; i < HPAGE_PMD_NR; i++) {
			struct page *page = pfn_to_page(pte_pfn(pte[i]));
			struct folio *f = page_folio(page);

			bad += pte[i] != saved[i];
			bad += folio_order(f) != new_order;
			bad += folio_page(f, 0) != folio_page(folio, ALIGN_DOWN(i, step));
			bad += folio_mapcount(f) != (int)step || folio_ref_count(f) != (int)step;
			bad += !PageAnonExclusive(page) || page_mapcount(page) != 1;
			bad += f->index != (a >> PAGE_SHIFT) + ALIGN_DOWN(i, step);
			if (new_order)
				bad += folio_nr_pages_mapped(f) != (int)step ||
				       folio_entire_mapcount(f) != 0;
		}
		KEXPECT_EQ(t, bad, 0);
		KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT) - split9, 1);
		KEXPECT_EQ(t, ev(THP_SPLIT_PAGE) - thp_split, 1);
		KEXPECT_EQ(t, nr9 - ms(9, MTHP_STAT_NR_ANON), 1);
		if (new_order)
			KEXPECT_EQ(t, ms(new_order, MTHP_STAT_NR_ANON) - nr_new, HPAGE_PMD_NR / step);
		KEXPECT_EQ(t, pattern_mismatches(mm, a, SZ_2M, (u8)k), 0);
		KEXPECT_EQ(t, mm_verify(), 0);
	}
	/* Orders that are not allowed. */
	{
		struct folio *f8 = folio_of(mm, AREA + 3 * SZ_2M);	/* order 8 */
		struct folio *f4 = folio_of(mm, AREA + 2 * SZ_2M);	/* order 4 */
		struct folio *f0 = folio_of(mm, AREA);			/* order 0 */

		CHECK(t, f8 && f4 && f0);
		folio_get(f8);
		folio_get(f4);
		folio_get(f0);
		KEXPECT_EQ(t, split_folio_to_order(f4, 1), -EINVAL);
		KEXPECT_EQ(t, split_folio_to_order(f4, 4), -EINVAL);
		KEXPECT_EQ(t, split_folio_to_order(f4, 5), -EINVAL);
		KEXPECT_EQ(t, split_folio_to_order(f0, 0), -EINVAL);
		/* Splits of splits: 8 -> 4 -> 2 -> 0. */
		KEXPECT_EQ(t, split_folio_to_order(f8, 4), 0);
		KEXPECT_EQ(t, folio_order(f8), 4);
		KEXPECT_EQ(t, split_folio_to_order(f8, 2), 0);
		KEXPECT_EQ(t, split_folio_to_order(f8, 0), 0);
		KEXPECT_EQ(t, folio_order(f8), 0);
		KEXPECT_EQ(t, order_of(mm, AREA + 3 * SZ_2M + SZ_64K), 4);
		KEXPECT_EQ(t, order_of(mm, AREA + 3 * SZ_2M + SZ_16K), 2);
		folio_put(f8);
		folio_put(f4);
		folio_put(f0);
		KEXPECT_EQ(t, pattern_mismatches(mm, AREA + 3 * SZ_2M, SZ_2M, 3), 0);
	}
	/* A PMD-mapped folio is split too: its PMD first. */
	{
		const unsigned long a = AREA + 4 * SZ_2M;
		unsigned long split_pmd = ev(THP_SPLIT_PMD), bad = 0;
		struct folio *folio;

		CHECK_EQ(t, map_anon(mm, a, SZ_2M), a);
		CHECK_EQ(t, fault(mm, a, true), 0);
		CHECK(t, huge_pmd(mm, a) != NULL);
		write_pattern(mm, a, SZ_2M, 9);
		folio = folio_of(mm, a);
		folio_get(folio);
		KEXPECT_EQ(t, split_folio_to_order(folio, 2), 0);
		folio_put(folio);
		KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
		KEXPECT_TRUE(t, huge_pmd(mm, a) == NULL);
		KEXPECT_EQ(t, mm->nr_deposited, 0);
		for (unsigned long p = a; p < a + SZ_2M; p += SZ_4K)
			bad += order_of(mm, p) != 2 || !pte_write(entry_of(mm, p));
		KEXPECT_EQ(t, bad, 0);
		KEXPECT_EQ(t, pattern_mismatches(mm, a, SZ_2M, 9), 0);
	}
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	kfree(saved);
	end(t, &c);
}

static void split_refuses_pinned_and_referenced(struct ktest *t)
{
	const unsigned long a = AREA;
	struct thp_ctx c;
	struct mm_struct *mm;
	struct folio *folio;
	unsigned long failed9, thp_failed;
	int ret;

	begin(t, &c);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, map_anon(mm, a, SZ_2M), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	folio = folio_of(mm, a);
	CHECK(t, folio != NULL && huge_pmd(mm, a));
	folio_get(folio);	/* the caller's reference */
	failed9 = ms(9, MTHP_STAT_SPLIT_FAILED);
	thp_failed = ev(THP_SPLIT_PAGE_FAILED);

	/* Pinned (a large folio counts pins in _pincount): refused, nothing changed. */
	atomic_inc(&folio->_pincount);
	ret = split_folio_to_order(folio, 0);
	atomic_dec(&folio->_pincount);
	KEXPECT_EQ(t, ret, -EAGAIN);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT_FAILED) - failed9, 1);
	KEXPECT_EQ(t, ev(THP_SPLIT_PAGE_FAILED) - thp_failed, 1);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	KEXPECT_TRUE(t, huge_pmd(mm, a) != NULL);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* An unexpected reference: refused; the folio stays whole and mapped. */
	folio_get(folio);
	ret = split_folio_to_order(folio, 4);
	folio_put(folio);
	KEXPECT_EQ(t, ret, -EAGAIN);
	KEXPECT_EQ(t, ms(9, MTHP_STAT_SPLIT_FAILED) - failed9, 2);
	KEXPECT_EQ(t, ev(THP_SPLIT_PAGE_FAILED) - thp_failed, 2);
	KEXPECT_EQ(t, folio_order(folio), HPAGE_PMD_ORDER);
	/* (Linux too may leave it PTE-mapped: the PMD is split before the references are checked.) */
	KEXPECT_EQ(t, folio_mapcount(folio), huge_pmd(mm, a) ? 1 : (int)HPAGE_PMD_NR);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* Without them it goes through. */
	KEXPECT_EQ(t, split_folio_to_order(folio, 0), 0);
	KEXPECT_EQ(t, order_of(mm, a + SZ_1M), 0);
	folio_put(folio);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/* ---- 10. mprotect ---- */

static void mprotect_splits_pmd_and_keeps_shared_pages_read_only(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M, d = AREA + 2 * SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm, *child;
	struct folio *folio;
	unsigned long split_pmd, bad = 0;
	struct vm_area_struct *vma;

	begin(t, &c);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	/* Part of a PMD: it splits; the rest stays writable. */
	CHECK_EQ(t, map_anon(mm, a, SZ_2M), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	folio = folio_of(mm, a);
	split_pmd = ev(THP_SPLIT_PMD);
	CHECK_EQ(t, protect(mm, a, SZ_4K, PROT_READ), 0);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_TRUE(t, huge_pmd(mm, a) == NULL);
	KEXPECT_FALSE(t, pte_write(entry_of(mm, a)));
	KEXPECT_TRUE(t, pte_write(entry_of(mm, a + SZ_4K)));
	KEXPECT_PTR_EQ(t, folio_of(mm, a + SZ_1M), folio);
	KEXPECT_EQ(t, folio_mapcount(folio), HPAGE_PMD_NR);
	vma = find_vma(mm, a);
	KEXPECT_EQ(t, vma->vm_end, a + SZ_4K);
	KEXPECT_EQ(t, fault(mm, a, true), -EFAULT);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* Back to read-write: exclusive pages are writable again, with no fault. */
	CHECK_EQ(t, protect(mm, a, SZ_4K, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, pte_write(entry_of(mm, a)));

	/* The whole PMD: it stays one entry, through PROT_NONE and back. */
	CHECK_EQ(t, map_anon(mm, b, SZ_2M), b);
	CHECK_EQ(t, fault(mm, b, true), 0);
	write_pattern(mm, b, SZ_2M, 5);
	split_pmd = ev(THP_SPLIT_PMD);
	CHECK_EQ(t, protect(mm, b, SZ_2M, PROT_READ), 0);
	KEXPECT_TRUE(t, huge_pmd(mm, b) != NULL);
	KEXPECT_FALSE(t, pte_write(entry_of(mm, b)));
	CHECK_EQ(t, protect(mm, b, SZ_2M, PROT_NONE), 0);
	KEXPECT_TRUE(t, huge_pmd(mm, b) != NULL);
	KEXPECT_FALSE(t, pte_present(entry_of(mm, b)));
	KEXPECT_EQ(t, fault(mm, b, false), -EFAULT);
	KEXPECT_EQ(t, mm_verify(), 0);
	CHECK_EQ(t, protect(mm, b, SZ_2M, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, pte_present(entry_of(mm, b)) && pte_write(entry_of(mm, b)));
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 0);
	KEXPECT_EQ(t, pattern_mismatches(mm, b, SZ_2M, 5), 0);

	/* After fork: read-write again must not make shared pages writable. */
	thp_set_order_mode(4, THP_ALWAYS);
	CHECK_EQ(t, map_anon(mm, d, 2 * SZ_64K), d);
	CHECK_EQ(t, fault_range(mm, d, 2 * SZ_64K), 0);
	CHECK_EQ(t, order_of(mm, d), 4);
	child = fork_mm(&c, mm);
	CHECK(t, child != NULL);
	CHECK_EQ(t, protect(mm, b, SZ_2M, PROT_READ), 0);
	CHECK_EQ(t, protect(mm, b, SZ_2M, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, huge_pmd(mm, b) != NULL);
	KEXPECT_FALSE(t, pte_write(entry_of(mm, b)));
	CHECK_EQ(t, protect(mm, b, SZ_64K, PROT_READ), 0);	/* splits the PMD */
	CHECK_EQ(t, protect(mm, b, SZ_64K, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, huge_pmd(mm, b) == NULL);
	for (unsigned long p = b; p < b + SZ_2M; p += SZ_4K)
		bad += pte_write(entry_of(mm, p));
	CHECK_EQ(t, protect(mm, d, 2 * SZ_64K, PROT_NONE), 0);
	CHECK_EQ(t, protect(mm, d, 2 * SZ_64K, PROT_READ | PROT_WRITE), 0);
	for (unsigned long p = d; p < d + 2 * SZ_64K; p += SZ_4K)
		bad += pte_write(entry_of(mm, p)) || !pte_present(entry_of(mm, p));
	KEXPECT_EQ(t, bad, 0);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* The child copies one page; after read-only and back, only that page is writable. */
	CHECK_EQ(t, fault(child, d + SZ_4K, true), 0);
	CHECK_EQ(t, protect(child, d, 2 * SZ_64K, PROT_READ), 0);
	CHECK_EQ(t, protect(child, d, 2 * SZ_64K, PROT_READ | PROT_WRITE), 0);
	KEXPECT_TRUE(t, pte_write(entry_of(child, d + SZ_4K)));
	KEXPECT_FALSE(t, pte_write(entry_of(child, d)));
	KEXPECT_FALSE(t, pte_write(entry_of(child, d + 2 * SZ_4K)));
	KEXPECT_EQ(t, mm_verify(), 0);
	/* A write still resolves, by copy, and the other side keeps its data. */
	CHECK_EQ(t, fault(mm, b + SZ_4K, true), 0);
	*byte_of(mm, b + SZ_4K + 0x10) = 0xcc;
	KEXPECT_EQ(t, *byte_of(child, b + SZ_4K + 0x10), pattern(b + SZ_4K, 5));
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/* ---- 11. rmap_walk after fork ---- */

struct walk_count {
	int pmds, ptes, vmas;
	struct mm_struct *mms[MAX_MMS];
	int nr_mms;
};

static bool count_mappings(struct folio *folio, struct vm_area_struct *vma,
			   unsigned long address, void *arg)
{
	struct walk_count *w = arg;
	struct page_vma_mapped_walk pvmw = { .folio = folio, .vma = vma, .address = address };
	bool found = false, seen = false;

	while (page_vma_mapped_walk(&pvmw)) {
		found = true;
		if (pvmw.pmd)
			w->pmds++;
		else
			w->ptes++;
	}
	if (found) {
		w->vmas++;
		for (int i = 0; i < w->nr_mms; i++)
			seen |= w->mms[i] == vma->vm_mm;
		if (!seen && w->nr_mms < MAX_MMS)
			w->mms[w->nr_mms++] = vma->vm_mm;
	}
	return true;
}

static struct walk_count walk(struct folio *folio)
{
	struct walk_count w = { 0 };
	struct rmap_walk_control rwc = { .arg = &w, .rmap_one = count_mappings };

	rmap_walk(folio, &rwc);
	return w;
}

static void rmap_walk_finds_every_mapping(struct ktest *t)
{
	const unsigned long p = AREA, q = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *parent, *child, *grandchild;
	struct folio *fp, *fq0, *fq1;
	struct walk_count w;

	begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	parent = new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_EQ(t, map_anon(parent, p, SZ_2M), p);
	CHECK_EQ(t, fault(parent, p, true), 0);
	CHECK_EQ(t, map_anon(parent, q, 2 * SZ_64K), q);
	CHECK_EQ(t, fault_range(parent, q, 2 * SZ_64K), 0);
	fp = folio_of(parent, p);
	fq0 = folio_of(parent, q);
	fq1 = folio_of(parent, q + SZ_64K);
	CHECK(t, fp && huge_pmd(parent, p) && fq0 && fq1 && folio_order(fq0) == 4 && fq0 != fq1);

	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 1);
	KEXPECT_EQ(t, w.ptes, 0);
	KEXPECT_EQ(t, w.nr_mms, 1);

	child = fork_mm(&c, parent);
	CHECK(t, child != NULL);
	grandchild = fork_mm(&c, child);
	CHECK(t, grandchild != NULL);
	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 3);
	KEXPECT_EQ(t, w.ptes, 0);
	KEXPECT_EQ(t, w.vmas, 3);
	KEXPECT_EQ(t, w.nr_mms, 3);
	KEXPECT_EQ(t, w.pmds + w.ptes, folio_mapcount(fp));
	w = walk(fq0);
	KEXPECT_EQ(t, w.pmds, 0);
	KEXPECT_EQ(t, w.ptes, 48);
	KEXPECT_EQ(t, w.nr_mms, 3);
	KEXPECT_EQ(t, w.ptes, folio_mapcount(fq0));

	/* The child's write splits its PMD and copies one page. */
	CHECK_EQ(t, fault(child, p, true), 0);
	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 2);
	KEXPECT_EQ(t, w.ptes, HPAGE_PMD_NR - 1);
	KEXPECT_EQ(t, w.nr_mms, 3);
	KEXPECT_EQ(t, w.pmds + w.ptes, folio_mapcount(fp));
	/* The grandchild unmaps the second 64 KiB folio. */
	CHECK_EQ(t, unmap(grandchild, q + SZ_64K, SZ_64K), 0);
	w = walk(fq1);
	KEXPECT_EQ(t, w.ptes, 32);
	KEXPECT_EQ(t, w.nr_mms, 2);
	/* The child exits: the parent's and the grandchild's PMDs are left. */
	drop_mm(&c, child);
	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 2);
	KEXPECT_EQ(t, w.ptes, 0);
	KEXPECT_EQ(t, w.nr_mms, 2);
	w = walk(fq0);
	KEXPECT_EQ(t, w.ptes, 32);
	KEXPECT_EQ(t, mm_verify_folio_rmap(fp), 0);
	KEXPECT_EQ(t, mm_verify_folio_rmap(fq0), 0);
	KEXPECT_EQ(t, mm_verify_folio_rmap(fq1), 0);
	/* The parent exits: the grandchild's mappings remain, found through the parent's anon_vma. */
	drop_mm(&c, parent);
	w = walk(fp);
	KEXPECT_EQ(t, w.pmds, 1);
	KEXPECT_EQ(t, w.nr_mms, 1);
	KEXPECT_PTR_EQ(t, w.mms[0], grandchild);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/* ---- 12. the rmap_batching switch ---- */

/*
 * The rmap calls a fork of parent and the child's exit make. The counter
 * is global: should anything else in the kernel touch a mapping meanwhile
 * (a reaped process), the measurement is taken again, up to three times.
 */
static void fork_exit_rmap_calls(struct thp_ctx *c, struct mm_struct *parent, long want,
				 long *fork_calls, long *exit_calls)
{
	for (int attempt = 0; attempt < 3; attempt++) {
		long calls = cost(MM_COST_RMAP_CALLS);
		struct mm_struct *child = fork_mm(c, parent);

		*fork_calls = cost(MM_COST_RMAP_CALLS) - calls;
		if (!child)
			return;
		calls = cost(MM_COST_RMAP_CALLS);
		drop_mm(c, child);
		*exit_calls = cost(MM_COST_RMAP_CALLS) - calls;
		if (*fork_calls == want && *exit_calls == want)
			return;
	}
}

static void rmap_batching_counts_calls(struct ktest *t)
{
	const unsigned long a = AREA, len = SZ_1M, nr_pages = SZ_1M / SZ_4K, nr_folios = SZ_1M / SZ_64K;
	struct thp_ctx c;
	struct mm_struct *parent;
	long calls, fork_calls = -1, exit_calls = -1;

	begin(t, &c);
	thp_set_order_mode(4, THP_ALWAYS);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_NEVER);
	parent = new_mm(&c);
	CHECK(t, parent != NULL);
	CHECK_EQ(t, map_anon(parent, a, len), a);
	CHECK_EQ(t, fault_range(parent, a, len), 0);
	CHECK_EQ(t, order_of(parent, a), 4);

	/* Fork of 16 folios of 64 KiB: one call per page without batching, per folio with. */
	rmap_batching = false;
	fork_exit_rmap_calls(&c, parent, nr_pages, &fork_calls, &exit_calls);
	KEXPECT_EQ(t, fork_calls, nr_pages);
	KEXPECT_EQ(t, exit_calls, nr_pages);
	rmap_batching = true;
	fork_exit_rmap_calls(&c, parent, nr_folios, &fork_calls, &exit_calls);
	KEXPECT_EQ(t, fork_calls, nr_folios);
	KEXPECT_EQ(t, exit_calls, nr_folios);
	KEXPECT_EQ(t, mm_verify(), 0);

	/* Splitting a PMD: one call for the 512 PTEs and one for the PMD, or 512 + 1. */
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_INHERIT);
	for (int batched = 0; batched <= 1; batched++) {
		const unsigned long b = AREA + (2 + batched) * SZ_2M;

		CHECK_EQ(t, map_anon(parent, b, SZ_2M), b);
		CHECK_EQ(t, fault(parent, b, true), 0);
		CHECK(t, huge_pmd(parent, b) != NULL);
		rmap_batching = batched;
		calls = cost(MM_COST_RMAP_CALLS);
		split_pmd_at(parent, b);
		KEXPECT_EQ(t, cost(MM_COST_RMAP_CALLS) - calls, batched ? 2 : HPAGE_PMD_NR + 1);
		/* Unmapping: one call for the run of the folio, or one per page. */
		calls = cost(MM_COST_RMAP_CALLS);
		CHECK_EQ(t, unmap(parent, b, SZ_2M), 0);
		KEXPECT_EQ(t, cost(MM_COST_RMAP_CALLS) - calls, batched ? 1 : HPAGE_PMD_NR);
	}
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

/* ---- 13. madvise of part of a PMD mapping ---- */

/*
 * A VMA split in the middle of a PMD mapping must split the PMD (Linux:
 * vma_adjust_trans_huge from __split_vma): a PMD never maps across a VMA
 * boundary, and fork copies each VMA on its own.
 */
static void madvise_of_part_of_a_pmd_splits_it(struct ktest *t)
{
	const unsigned long a = AREA, b = AREA + SZ_2M;
	struct thp_ctx c;
	struct mm_struct *mm, *child;
	struct folio *fa, *fb;
	unsigned long split_pmd;

	begin(t, &c);
	mm = new_mm(&c);
	CHECK(t, mm != NULL);
	CHECK_EQ(t, map_anon(mm, a, 2 * SZ_2M), a);
	CHECK_EQ(t, fault(mm, a, true), 0);
	CHECK_EQ(t, fault(mm, b, true), 0);
	CHECK(t, huge_pmd(mm, a) && huge_pmd(mm, b));
	fa = folio_of(mm, a);
	fb = folio_of(mm, b);
	split_pmd = ev(THP_SPLIT_PMD);
	/*
	 * MADV_NOHUGEPAGE on the second half of the first PMD. (A PMD left
	 * across the boundary would be copied once per VMA by fork: stop here.)
	 */
	KEXPECT_EQ(t, advise(mm, a + SZ_1M, SZ_1M, MADV_NOHUGEPAGE), 0);
	CHECK(t, huge_pmd(mm, a) == NULL);
	KEXPECT_EQ(t, ev(THP_SPLIT_PMD) - split_pmd, 1);
	KEXPECT_EQ(t, mm_verify(), 0);
	/* MADV_DONTFORK on the first half of the second: the child gets only the rest. */
	KEXPECT_EQ(t, advise(mm, b, SZ_1M, MADV_DONTFORK), 0);
	CHECK(t, huge_pmd(mm, b) == NULL);
	KEXPECT_EQ(t, mm_verify(), 0);
	child = fork_mm(&c, mm);
	CHECK(t, child != NULL);
	KEXPECT_EQ(t, pfn_of(child, b), 0);
	KEXPECT_EQ(t, pfn_of(child, b + SZ_1M), folio_pfn(fb) + HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, folio_mapcount(fa), 2 * HPAGE_PMD_NR);
	KEXPECT_EQ(t, folio_mapcount(fb), HPAGE_PMD_NR + HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, atomic_long_read(&child->rss), HPAGE_PMD_NR + HPAGE_PMD_NR / 2);
	KEXPECT_EQ(t, mm_verify(), 0);
out:
	end(t, &c);
}

KTEST_SUITE(thp,
	    KTEST_CASE(pmd_fault_maps_one_pmd),
	    KTEST_CASE(mthp_64k_every_page),
	    KTEST_CASE(fallback_to_smaller_orders),
	    KTEST_CASE(controls_choose_the_order),
	    KTEST_CASE(alloc_failure_falls_back),
	    KTEST_CASE(fork_shares_pmd_and_cow_copies_one_page),
	    KTEST_CASE(pmd_reused_after_the_child_exits),
	    KTEST_CASE(fork_shares_mthp_and_cow_copies_one_page),
	    KTEST_CASE(fork_copies_pinned_folios),
	    KTEST_CASE(partial_munmap_queues_a_deferred_split),
	    KTEST_CASE(deferred_split_keeps_what_it_cannot_split),
	    KTEST_CASE(split_folio_to_each_order),
	    KTEST_CASE(split_refuses_pinned_and_referenced),
	    KTEST_CASE(mprotect_splits_pmd_and_keeps_shared_pages_read_only),
	    KTEST_CASE(rmap_walk_finds_every_mapping),
	    KTEST_CASE(rmap_batching_counts_calls),
	    KTEST_CASE(madvise_of_part_of_a_pmd_splits_it));
