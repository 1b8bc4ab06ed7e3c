/*
 * User memory in QEMU: a seeded random sequence of mmap, write and read
 * faults, munmap, mprotect, MADV_DONTNEED / MADV_(NO)HUGEPAGE, fork,
 * exit, split_huge_pmd, split_folio_to_order, deferred split scans and
 * THP setting changes, over a few address spaces built from the kernel
 * (mm_alloc, dup_mm, mmput; no process), with mm_verify() after every
 * step. The in-kernel twin of tests/host/test_mm_random.c: the same
 * operations on the real machine (its page tables, its TLB shootdowns
 * across CPUs, its NUMA nodes), fewer steps.
 *
 * On top of mm_verify, a data check: after a write fault the test writes
 * one random byte at a random offset of the page through the direct map
 * and remembers it in the mm's shadow. Every page an mm maps must hold
 * exactly its shadow byte and zeroes elsewhere, whatever fork,
 * copy-on-write, splits and mprotect did in between.
 *
 * Explicit-only (its own plan job): "ktest=mm_random". Options:
 *   mm_random.seed=N    replay a sequence (the seed is printed)
 *   mm_random.steps=N   its length (default MM_RANDOM_STEPS)
 *   mm_random.verbose   print each step
 * A failure prints the seed, the step and its operation, and how to
 * replay it.
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
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/time.h>
#include <quire/cmdline.h>

#define MM_RANDOM_STEPS	600		/* about 15 s in QEMU (TCG) on numa3: mm_verify each step */
#define MAX_MMS		4
#define REGION_START	0x100000000UL	/* every VMA lives in [REGION_START, +REGION_SIZE) */
#define REGION_SIZE	(64UL << 20)
#define REGION_PAGES	(REGION_SIZE >> PAGE_SHIFT)
#define MEM_BUDGET	((32UL << 20) >> PAGE_SHIFT)	/* user pages the sequence aims to stay under */
#define MAX_TOUCH	512		/* pages one fault step touches at most */
#define SWEEP_EVERY	100		/* steps between checks of every page of every mm */
#define THP_EVERY	25		/* steps between changes of the THP settings */

static unsigned long opt_seed = 20261201, opt_steps = MM_RANDOM_STEPS;
static bool opt_verbose;
CMDLINE_UINT("mm_random.seed", opt_seed, 0, ~0UL, "seed of the mm_random test sequence");
CMDLINE_UINT("mm_random.steps", opt_steps, 1, 100000000, "steps of the mm_random test sequence");
CMDLINE_BOOL("mm_random.verbose", opt_verbose, "print each step of the mm_random sequence");

/* ---- randomness ---- */

static u64 rng_state;

static u64 rng(void)
{
	/* xorshift64*: the host twin's generator */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static unsigned long rnd(unsigned long n)
{
	return n ? rng() % n : 0;
}

static bool chance(unsigned int percent)
{
	return rnd(100) < percent;
}

/* ---- where we are, for reports ---- */

static struct ktest *cur;
static unsigned long step;
static char step_desc[160];
static bool failed;

static __printf(1, 2) void failf(const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (failed) {
		printk(KERN_RAW "    # also: %s\n", msg);
		return;
	}
	failed = true;
	printk(KERN_RAW "    # mm_random: seed %lu step %lu: %s\n", opt_seed, step, step_desc);
	printk(KERN_RAW "    # mm_random: replay with \"ktest=mm_random mm_random.seed=%lu "
	       "mm_random.steps=%lu\"\n", opt_seed, step + 1);
	ktest_fail_msg(cur, false, __FILE__, __LINE__, "step %lu (%s): %s", step, step_desc, msg);
}

static __printf(1, 2) void describe(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(step_desc, sizeof(step_desc), fmt, ap);
	va_end(ap);
	if (opt_verbose)
		printk(KERN_RAW "    # %lu: %s\n", step, step_desc);
}

/* ---- address spaces and their shadows ---- */

/* A shadow entry: 0 (nothing written), or the byte written and where. */
#define SH_VALID	(1U << 31)
#define SH_MAKE(off, val) (SH_VALID | ((u32)(off) << 8) | (val))
#define SH_OFF(s)	((unsigned int)((s) >> 8) & 0xfffU)
#define SH_VAL(s)	((u8)(s))

struct tmm {
	struct mm_struct *mm;
	u32 *shadow;	/* REGION_PAGES entries */
	int id;
};

static struct tmm mms[MAX_MMS];
static int nr_mms, next_id;
static unsigned long zero_pfn;
static u8 zeroes[PAGE_SIZE];

static struct {
	unsigned long ops[16];
	unsigned long fault_order[HPAGE_PMD_ORDER + 1];	/* new folios seen after write faults */
	unsigned long cow, efault, enomem, pmd_splits, folio_splits, folio_split_einval;
	unsigned long deferred_split, checks, sweeps;
} st;

static struct tmm *new_tmm(struct mm_struct *mm, const u32 *copy_from)
{
	struct tmm *t = &mms[nr_mms];

	t->shadow = kmalloc(REGION_PAGES * sizeof(u32), GFP_KERNEL);
	if (!t->shadow) {
		failf("no memory for a shadow");
		mmput(mm);
		return NULL;
	}
	if (copy_from)
		memcpy(t->shadow, copy_from, REGION_PAGES * sizeof(u32));
	else
		memset(t->shadow, 0, REGION_PAGES * sizeof(u32));
	t->mm = mm;
	t->id = next_id++;
	nr_mms++;
	return t;
}

static void drop_tmm(int i)
{
	mmput(mms[i].mm);
	kfree(mms[i].shadow);
	mms[i] = mms[--nr_mms];
}

static bool in_region(unsigned long addr)
{
	return addr >= REGION_START && addr < REGION_START + REGION_SIZE;
}

static u32 *shadow_of(struct tmm *t, unsigned long addr)
{
	return &t->shadow[(addr - REGION_START) >> PAGE_SHIFT];
}

static void shadow_clear(struct tmm *t, unsigned long start, unsigned long end)
{
	start = max(start, REGION_START);
	end = min(end, REGION_START + REGION_SIZE);
	if (start < end)
		memset(shadow_of(t, start), 0, ((end - start) >> PAGE_SHIFT) * sizeof(u32));
}

/* ---- what a page table says about an address ---- */

enum map_kind { MK_NONE, MK_ZERO, MK_PTE, MK_PMD };
static const char *const kind_names[] = { "nothing", "the zero page", "a PTE", "a PMD" };

struct mapping {
	enum map_kind kind;
	unsigned long pfn;	/* of the page at addr */
	pte_t entry;
	bool present, write;
};

static struct mapping lookup(struct mm_struct *mm, unsigned long addr)
{
	struct mapping m = { MK_NONE, 0, 0, false, false };
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte;

	if (!pmd || !*pmd)
		return m;
	if (pmd_leaf(*pmd)) {
		m.kind = MK_PMD;
		m.entry = *pmd;
		m.pfn = pmd_pfn(*pmd) + ((addr >> PAGE_SHIFT) & (HPAGE_PMD_NR - 1));
	} else {
		pte = pte_offset(pmd, addr);
		if (!pte_has_page(*pte))
			return m;
		m.entry = *pte;
		m.pfn = pte_pfn(*pte);
		m.kind = is_zero_pfn(m.pfn) ? MK_ZERO : MK_PTE;
	}
	m.present = pte_present(m.entry);
	m.write = pte_write(m.entry);
	return m;
}

static struct folio *mapping_folio(const struct mapping *m)
{
	return m->kind == MK_PTE || m->kind == MK_PMD ? page_folio(pfn_to_page(m->pfn)) : NULL;
}

/* The first offset in [from, to) of p that is not zero, or -1. */
static long nonzero_at(const u8 *p, unsigned long from, unsigned long to)
{
	if (to <= from || !memcmp(p + from, zeroes, to - from))
		return -1;
	for (unsigned long i = from; i < to; i++)
		if (p[i])
			return (long)i;
	return -1;
}

/* Does t's page at addr hold what its shadow says? */
static void check_page(struct tmm *t, unsigned long addr, const char *why)
{
	struct mapping m;
	const u8 *p;
	long bad;
	u32 s;

	if (!in_region(addr))
		return;
	addr &= PAGE_MASK;
	m = lookup(t->mm, addr);
	s = *shadow_of(t, addr);
	st.checks++;
	if (m.kind == MK_NONE || m.kind == MK_ZERO) {
		if (s)
			failf("%s: mm%d %#lx maps %s, but %#x was written at +%#x", why, t->id, addr,
			      kind_names[m.kind], SH_VAL(s), SH_OFF(s));
		return;
	}
	p = page_address(pfn_to_page(m.pfn));
	if (s && p[SH_OFF(s)] != SH_VAL(s)) {
		failf("%s: mm%d %#lx (pfn %#lx, %s): %#x at +%#x, but %#x was written", why, t->id,
		      addr, m.pfn, kind_names[m.kind], p[SH_OFF(s)], SH_OFF(s), SH_VAL(s));
		return;
	}
	bad = s ? nonzero_at(p, 0, SH_OFF(s)) : nonzero_at(p, 0, PAGE_SIZE);
	if (bad < 0 && s)
		bad = nonzero_at(p, SH_OFF(s) + 1, PAGE_SIZE);
	if (bad >= 0)
		failf("%s: mm%d %#lx (pfn %#lx, %s): %#x at +%#lx, where nothing was written", why,
		      t->id, addr, m.pfn, kind_names[m.kind], p[bad], bad);
}

/* Every page of every VMA of t; nothing remembered outside the VMAs. */
static void check_all(struct tmm *t, const char *why)
{
	struct vm_area_struct *v;

	list_for_each_entry(v, &t->mm->vmas, vm_list)
		for (unsigned long a = v->vm_start; a < v->vm_end && !failed; a += PAGE_SIZE)
			check_page(t, a, why);
	for (unsigned long i = 0; i < REGION_PAGES && !failed; i++) {
		unsigned long a = REGION_START + (i << PAGE_SHIFT);
		struct vm_area_struct *vma;

		if (!t->shadow[i])
			continue;
		vma = find_vma(t->mm, a);
		if (!vma || vma->vm_start > a)
			failf("%s: mm%d remembers a byte at %#lx, outside every VMA", why, t->id, a);
	}
}

/* After an operation that may have stopped half way: forget what is gone. */
static void shadow_reconcile(struct tmm *t, unsigned long start, unsigned long end)
{
	start = max(start, REGION_START);
	end = min(end, REGION_START + REGION_SIZE);
	for (unsigned long a = start; a < end; a += PAGE_SIZE) {
		enum map_kind k = lookup(t->mm, a).kind;

		if (k == MK_NONE || k == MK_ZERO)
			*shadow_of(t, a) = 0;
	}
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

/* Pages, mostly few, sometimes up to max_pages (4 KiB .. 8 MiB). */
static unsigned long random_pages(unsigned long max_pages)
{
	unsigned long n = 1UL << rnd(12);

	n += rnd(n);
	return min(max(n, 1UL), max_pages);
}

/* Mostly inside one VMA (sometimes all of it, sometimes past its end), now and then anywhere. */
static void random_range(struct tmm *t, unsigned long max_pages, unsigned long *start,
			 unsigned long *end)
{
	struct vm_area_struct *v = chance(92) ? random_vma(t) : NULL;
	unsigned long pages, s;

	if (!v) {
		pages = random_pages(max_pages);
		s = REGION_START + (rnd(REGION_PAGES - pages + 1) << PAGE_SHIFT);
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
	*end = min(s + (pages << PAGE_SHIFT), REGION_START + REGION_SIZE);
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

static unsigned long start_free_total;

static unsigned long total_free_pages(void)
{
	unsigned long n = 0;

	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid))
			n += node_page_state(nid, NR_FREE_PAGES);
	return n;
}

/* ---- the operations ---- */

enum op {
	OP_MMAP, OP_WRITE, OP_READ, OP_MUNMAP, OP_MPROTECT, OP_DONTNEED, OP_MADV_HUGE,
	OP_FORK, OP_EXIT, OP_SPLIT_PMD, OP_SPLIT_FOLIO, OP_DEFERRED_SCAN, NR_OPS
};
static const char *const op_names[NR_OPS] = {
	"mmap", "write", "read", "munmap", "mprotect", "dontneed", "madv_huge",
	"fork", "exit", "split_pmd", "split_folio", "deferred_scan",
};
static const unsigned int op_weight[NR_OPS] = {
	[OP_MMAP] = 12, [OP_WRITE] = 28, [OP_READ] = 8, [OP_MUNMAP] = 7, [OP_MPROTECT] = 7,
	[OP_DONTNEED] = 6, [OP_MADV_HUGE] = 4, [OP_FORK] = 4, [OP_EXIT] = 2, [OP_SPLIT_PMD] = 6,
	[OP_SPLIT_FOLIO] = 8, [OP_DEFERRED_SCAN] = 3,
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
	long ret;

	if (chance(35))
		pages = (1 + rnd(3)) * HPAGE_PMD_NR;
	else
		pages = random_pages(1024);
	addr = REGION_START + (rnd(REGION_PAGES - pages + 1) << PAGE_SHIFT);
	if (chance(40))
		addr = ALIGN_DOWN(addr, PMD_SIZE);
	else if (chance(30))
		addr = ALIGN_DOWN(addr, PAGE_SIZE << (2 + rnd(7)));	/* 16 KiB .. 1 MiB aligned */
	describe("mmap mm%d %#lx +%#lx %s", t->id, addr, pages << PAGE_SHIFT, prot_name(prot));
	down_write(&t->mm->mmap_lock);
	ret = do_mmap(t->mm, addr, pages << PAGE_SHIFT, prot,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	up_write(&t->mm->mmap_lock);
	if (ret < 0 && ret != -ENOMEM)
		failf("do_mmap returned %ld", ret);
	else if (ret >= 0 && (unsigned long)ret != addr)
		failf("MAP_FIXED at %#lx returned %#lx", addr, ret);
	(ret >= 0 ? shadow_clear : shadow_reconcile)(t, addr, addr + (pages << PAGE_SHIFT));
}

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
		for (unsigned long i = 0; i < pages && n < MAX_TOUCH; i++)
			list[n++] = start + (i << PAGE_SHIFT);
	} else if (r == 1) {
		for (unsigned long k = 1 + rnd(32); k--;)
			list[n++] = start + (rnd(pages) << PAGE_SHIFT);
	} else {
		for (unsigned long i = rnd(stride); i < pages && n < MAX_TOUCH; i += stride)
			list[n++] = start + (i << PAGE_SHIFT);
	}
	return n;
}

static void one_fault(struct tmm *t, unsigned long addr, bool write, bool *written)
{
	unsigned long off = rnd(PAGE_SIZE);
	bool allowed = fault_allowed(t, addr, write);
	struct mapping before = lookup(t->mm, addr), after;
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
		if (total_free_pages() > 4096)
			failf("%s fault at %#lx: -ENOMEM with %lu pages free", write ? "write" : "read",
			      addr + off, total_free_pages());
		return;
	}
	if (!allowed) {
		if (ret != -EFAULT)
			failf("%s fault at %#lx outside the VMA's permissions returned %d",
			      write ? "write" : "read", addr + off, ret);
		st.efault++;
		return;
	}
	if (ret) {
		failf("%s fault at %#lx returned %d", write ? "write" : "read", addr + off, ret);
		return;
	}
	after = lookup(t->mm, addr);
	if (!after.present || after.kind == MK_NONE ||
	    (write && (!after.write || after.kind == MK_ZERO))) {
		failf("%s fault at %#lx returned 0 but left %s (entry %#llx)",
		      write ? "write" : "read", addr + off, kind_names[after.kind],
		      (unsigned long long)after.entry);
		return;
	}
	if (after.kind == MK_ZERO && !zero_pfn)
		zero_pfn = after.pfn;
	if (!write) {
		check_page(t, addr, "after a read fault");
		return;
	}
	folio = mapping_folio(&after);
	v = find_vma(t->mm, addr);
	if (before.kind == MK_NONE) {
		unsigned int order = folio_order(folio);

		st.fault_order[order]++;
		if (order && !(thp_vma_allowable_orders(v->vm_flags) & (1UL << order)))
			failf("write fault at %#lx mapped an order-%u folio, which the settings do "
			      "not allow here (vm_flags %#lx)", addr, order, v->vm_flags);
		if ((order == HPAGE_PMD_ORDER) != (after.kind == MK_PMD))
			failf("write fault at %#lx: an order-%u folio mapped by %s", addr, order,
			      kind_names[after.kind]);
	} else if (before.kind == MK_ZERO || !before.write) {
		st.cow++;
	}
	/* What was there survived (copied or reused); then our byte goes in. */
	check_page(t, addr, "after a write fault");
	if (failed)
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
	static unsigned long list[MAX_TOUCH];
	unsigned long start, end, done[8];
	int n, nr_done = 0;

	random_range(t, 1024, &start, &end);
	n = touch_list(start, end, list);
	describe("%s mm%d [%#lx, %#lx) %d pages", write ? "write" : "read", t->id, start, end, n);
	for (int i = 0; i < n && !failed; i++) {
		bool written;

		one_fault(t, list[i], write, &written);
		if (written && nr_done < 8)
			done[nr_done++] = list[i];
	}
	/* Copy-on-write: every other mm's copy of these pages is as it was. */
	for (int i = 0; i < nr_done && !failed; i++)
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
		failf("do_munmap returned %d", ret);
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
		failf("do_mprotect returned %d, expected %d", ret, want);
}

static void op_madvise(struct tmm *t, int advice)
{
	unsigned long start, end, until;
	int ret, want;

	random_range(t, 2048, &start, &end);
	describe("madvise mm%d [%#lx, %#lx) %s", t->id, start, end,
		 advice == MADV_DONTNEED ? "dontneed" : advice == MADV_HUGEPAGE ? "hugepage" :
		 "nohugepage");
	down_write(&t->mm->mmap_lock);
	until = covered_until(t->mm, start, end);
	want = until == end ? 0 : -ENOMEM;
	ret = do_madvise(t->mm, start, end - start, advice);
	up_write(&t->mm->mmap_lock);
	if (ret != want && ret != -ENOMEM)
		failf("do_madvise returned %d, expected %d", ret, want);
	if (advice != MADV_DONTNEED)
		return;
	if (ret == want)
		shadow_clear(t, start, until);	/* the VMAs up to the first hole */
	else
		shadow_reconcile(t, start, end);
	for (unsigned long a = start; a < until && ret == want && !failed; a += PAGE_SIZE)
		if (lookup(t->mm, a).kind != MK_NONE)
			failf("MADV_DONTNEED left %s at %#lx", kind_names[lookup(t->mm, a).kind], a);
}

static void op_fork(struct tmm *t)
{
	struct mm_struct *child;
	struct tmm *c;

	describe("fork mm%d -> mm%d", t->id, next_id);
	child = dup_mm(t->mm);
	if (!child) {
		if (total_free_pages() > 4096)
			failf("dup_mm failed with %lu pages free", total_free_pages());
		return;
	}
	c = new_tmm(child, t->shadow);
	for (int i = 0; c && i < 16 && !failed; i++) {
		struct vm_area_struct *v = random_vma(c);

		if (v) {
			unsigned long a = v->vm_start +
					  (rnd((v->vm_end - v->vm_start) >> PAGE_SHIFT) << PAGE_SHIFT);

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
			failf("mm_alloc failed");
		else
			new_tmm(mm, NULL);
	}
}

/* A random address of t mapped by a PMD, or 0 (reservoir sampling). */
static unsigned long find_pmd_mapping(struct tmm *t)
{
	unsigned long found = 0, n = 0;
	struct vm_area_struct *v;

	list_for_each_entry(v, &t->mm->vmas, vm_list)
		for (unsigned long a = ALIGN_UP(v->vm_start, PMD_SIZE); a + PMD_SIZE <= v->vm_end;
		     a += PMD_SIZE)
			if (lookup(t->mm, a).kind == MK_PMD && !rnd(++n))
				found = a;
	return found;
}

static void op_split_pmd(struct tmm *t)
{
	unsigned long addr = chance(90) ? find_pmd_mapping(t) : 0;
	struct vm_area_struct *v;
	struct mapping before;

	if (!addr) {
		unsigned long start, end;

		random_range(t, 1, &start, &end);
		addr = ALIGN_DOWN(start, PMD_SIZE);
	}
	addr += rnd(HPAGE_PMD_NR) << PAGE_SHIFT;
	describe("split_huge_pmd mm%d %#lx", t->id, addr);
	down_write(&t->mm->mmap_lock);
	before = lookup(t->mm, addr);
	v = find_vma(t->mm, addr);
	if (v && addr >= v->vm_start) {
		split_huge_pmd(v, addr);
		if (lookup(t->mm, addr).kind == MK_PMD)
			failf("split_huge_pmd left the PMD mapping");
		else if (before.kind == MK_PMD)
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
			struct mapping m = lookup(t->mm, a);
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
	struct mapping m;
	bool bad_order;
	int ret, refs, maps;

	if (!addr) {
		describe("split_folio mm%d: no large folio", t->id);
		return;
	}
	down_read(&t->mm->mmap_lock);
	m = lookup(t->mm, addr);
	folio = mapping_folio(&m);
	if (!folio || !folio_test_large(folio)) {
		up_read(&t->mm->mmap_lock);
		failf("the large folio at %#lx went away", addr);
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
	ret = split_folio_to_order(folio, new_order);
	if (bad_order) {
		if (ret != -EINVAL)
			failf("split to order %u of an order-%u folio returned %d", new_order, order, ret);
		st.folio_split_einval++;
	} else if (ret == -EAGAIN) {
		/* Nothing else holds references or locks here: the counts were wrong. */
		failf("split_folio_to_order returned -EAGAIN (refcount %d, mapcount %d before)",
		      refs, maps);
	} else if (ret && ret != -ENOMEM) {
		failf("split_folio_to_order returned %d", ret);
	} else if (!ret) {
		st.folio_splits++;
	}
	folio_put(folio);
	if (!ret && !bad_order) {
		down_read(&t->mm->mmap_lock);
		m = lookup(t->mm, addr);
		now = mapping_folio(&m);
		if (!now || folio_order(now) != new_order || m.kind == MK_PMD)
			failf("after the split the page at %#lx is in %s of order %u", addr,
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
		failf("deferred_split_scan split %lu of %lu, the queue is now %lu", split, before,
		      deferred_split_queue_len());
}

/*
 * New THP settings, every THP_EVERY steps: random modes for every size,
 * except that each window puts one size (the focus) on "always" and the
 * larger ones off: 2 MiB every other window, the others (1 MiB down to
 * 16 KiB) in turn in between, so that every order gets faulted in a few
 * hundred steps (op_focus). rmap batching mostly on.
 */
static unsigned int thp_focus = HPAGE_PMD_ORDER;

static void op_thp(unsigned long window)
{
	static const enum thp_mode global[] = { THP_ALWAYS, THP_ALWAYS, THP_MADVISE, THP_NEVER };
	static const enum thp_mode per[] = { THP_ALWAYS, THP_INHERIT, THP_MADVISE, THP_NEVER, THP_NEVER };
	unsigned int focus = window % 2 ? HPAGE_PMD_ORDER - 1 - (unsigned int)(window / 2 % 7) :
			     HPAGE_PMD_ORDER;
	char desc[16] = "";

	thp_set_global_mode(global[rnd(4)]);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		enum thp_mode m = per[rnd(5)];

		if (o == focus)
			m = THP_ALWAYS;
		else if (o > focus)
			m = THP_NEVER;
		thp_set_order_mode(o, m);
		desc[o - THP_ORDER_MIN] = "nami"[m];
	}
	thp_focus = focus;
	rmap_batching = chance(80);
	describe("thp global %s orders 2-9 %s, rmap_batching %d",
		 thp_global_mode() == THP_ALWAYS ? "always" :
		 thp_global_mode() == THP_MADVISE ? "madvise" : "never", desc, rmap_batching);
}

/*
 * The step after op_thp: a fresh VMA aligned to the focus size, one to
 * three of them long, at a random place (MAP_FIXED: whatever was there
 * goes), and a write at a random page of each block.
 */
static void op_focus(struct tmm *t)
{
	unsigned long size = PAGE_SIZE << thp_focus, n = 1 + rnd(3), addr;
	long ret;

	addr = REGION_START + rnd(REGION_SIZE / size - n + 1) * size;
	describe("mmap mm%d %#lx +%#lx rw for order %u, and write", t->id, addr, n * size, thp_focus);
	down_write(&t->mm->mmap_lock);
	ret = do_mmap(t->mm, addr, n * size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	up_write(&t->mm->mmap_lock);
	if (ret != (long)addr) {
		failf("do_mmap returned %ld", ret);
		return;
	}
	shadow_clear(t, addr, addr + n * size);
	for (unsigned long b = addr; b < addr + n * size && !failed; b += size) {
		bool written;

		one_fault(t, b + (rnd(size >> PAGE_SHIFT) << PAGE_SHIFT), true, &written);
	}
}

static enum op choose_op(void)
{
	static unsigned int total;
	unsigned int r;

	/* Over the budget of user memory, or short of memory: give some back first. */
	if ((start_free_total - total_free_pages() > MEM_BUDGET || total_free_pages() < 8192) &&
	    chance(60)) {
		static const enum op give_back[] = { OP_MUNMAP, OP_DONTNEED, OP_EXIT, OP_DEFERRED_SCAN };

		return give_back[rnd(4)];
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
	case OP_MADV_HUGE:	op_madvise(t, chance(70) ? MADV_HUGEPAGE : MADV_NOHUGEPAGE); break;
	case OP_FORK:
		if (nr_mms < MAX_MMS)
			op_fork(t);
		else
			op_exit(i);
		break;
	case OP_EXIT:		op_exit(i); break;
	case OP_SPLIT_PMD:	op_split_pmd(t); break;
	case OP_SPLIT_FOLIO:	op_split_folio(t); break;
	case OP_DEFERRED_SCAN:	op_deferred_scan(); break;
	default:		break;
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
		failf("mm%d %#lx: order-%u folio pfn %#lx with %d of its pages mapped (entire %d) "
		      "is %son the deferred split queue", t->id, addr, folio_order(folio),
		      folio_pfn(folio), folio_nr_pages_mapped(folio), folio_entire_mapcount(folio),
		      queued ? "" : "not ");
}

/*
 * What mm_verify does not look at: an mm's rss is the pages its entries
 * map (the zero page aside), it keeps one deposited page table per PMD
 * mapping (split_huge_pmd needs it; one too few panics a later split, one
 * too many is lost memory), and partially mapped folios are queued.
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
				rss += HPAGE_PMD_NR;
			} else if (pmd && *pmd) {
				for (; a < next; a += PAGE_SIZE) {
					pte_t pte = *pte_offset(pmd, a);

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
		failf("mm%d: rss %ld, but its entries map %lu pages", t->id,
		      atomic_long_read(&t->mm->rss), rss);
	if (t->mm->nr_deposited != pmds)
		failf("mm%d: %lu page tables deposited for %lu PMD mappings", t->id,
		      t->mm->nr_deposited, pmds);
}

/* ---- the suite ---- */

static unsigned long page_errors_start, exit_failures_start;

/* After every step: mm_verify, the page allocator's reports, the zero page, samples. */
static void check_step(void)
{
	int problems = mm_verify();

	if (problems)
		failf("mm_verify found %d problem(s) (above)", problems);
	if (page_alloc_errors != page_errors_start)
		failf("the page allocator reported %lu bad page(s)",
		      page_alloc_errors - page_errors_start);
	if (mm_exit_verify_failures != exit_failures_start)
		failf("an address space failed mm_verify as it exited");
	if (zero_pfn && nonzero_at(page_address(pfn_to_page(zero_pfn)), 0, PAGE_SIZE) >= 0)
		failf("the zero page is not zero");
	for (int k = 0; k < nr_mms && !failed; k++)
		check_mm_counters(&mms[k]);
	for (int k = 0; k < 4 && !failed; k++) {
		struct tmm *t = &mms[rnd((unsigned long)nr_mms)];
		struct vm_area_struct *v = random_vma(t);

		if (v)
			check_page(t, v->vm_start +
				   (rnd((v->vm_end - v->vm_start) >> PAGE_SHIFT) << PAGE_SHIFT), "sample");
	}
}

/* State the cases share: set up by the first, checked by the others, restored by the last. */
static struct {
	enum thp_mode global, order[HPAGE_PMD_ORDER + 1];
	bool batching;
	cpumask_t cpus;
	unsigned long free[MAX_NUMNODES];
	unsigned long nr_anon[HPAGE_PMD_ORDER + 1];
	unsigned long fault_alloc[HPAGE_PMD_ORDER + 1], split[HPAGE_PMD_ORDER + 1];
	unsigned long thp_alloc, split_pmd;
	bool ran;
	unsigned long steps_done;
} saved;

static void restore_settings(void)
{
	thp_set_global_mode(saved.global);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, saved.order[o]);
	rmap_batching = saved.batching;
	set_cpus_allowed(current, saved.cpus);
}

static void random_sequence(struct ktest *t)
{
	unsigned long steps = opt_steps;
	struct mm_struct *mm;
	int cpu, chosen = -1, len;
	char line[200];
	u64 t0, ms;

	cur = t;
	memset(&st, 0, sizeof(st));
	failed = false;
	nr_mms = 0;
	next_id = 0;
	zero_pfn = 0;
	saved.global = thp_global_mode();
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		saved.order[o] = thp_order_mode(o);
	saved.batching = rmap_batching;
	saved.cpus = current->cpus_allowed;
	/* Large folios come from the faulting CPU's node only: run on one with memory. */
	for_each_online_cpu(cpu) {
		if ((saved.cpus & cpumask_of(cpu)) && node_has_memory(cpu_to_node(cpu))) {
			chosen = cpu;
			break;
		}
	}
	if (chosen < 0)
		ktest_skip(t, "no CPU on a node with memory");
	set_cpus_allowed(current, cpumask_of(chosen));
	yield();
	deferred_split_scan(~0UL);
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		saved.free[nid] = node_has_memory(nid) ? node_page_state(nid, NR_FREE_PAGES) : 0;
	start_free_total = total_free_pages();
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++) {
		saved.nr_anon[o] = mthp_stat_read(o, MTHP_STAT_NR_ANON);
		saved.fault_alloc[o] = mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC);
		saved.split[o] = mthp_stat_read(o, MTHP_STAT_SPLIT);
	}
	saved.thp_alloc = thp_event_read(THP_FAULT_ALLOC);
	saved.split_pmd = thp_event_read(THP_SPLIT_PMD);
	page_errors_start = page_alloc_errors;
	exit_failures_start = mm_exit_verify_failures;
	saved.ran = true;

	printk(KERN_RAW "    # mm_random: seed %lu, %lu steps, on CPU %d (node %d)\n", opt_seed, steps,
	       chosen, cpu_to_node(chosen));
	rng_state = opt_seed * 0x9e3779b97f4a7c15ULL + 1;
	if (!rng_state)
		rng_state = 1;
	mm = mm_alloc();
	KASSERT_TRUE(t, mm != NULL);
	new_tmm(mm, NULL);
	t0 = ktime_get_ns();
	for (step = 0; step < steps && !failed; step++) {
		if (step % THP_EVERY == 0)
			op_thp(step / THP_EVERY);
		else if (step % THP_EVERY == 1)
			op_focus(&mms[rnd((unsigned long)nr_mms)]);
		else
			do_step();
		check_step();
		if (!failed && step % SWEEP_EVERY == SWEEP_EVERY - 1) {
			st.sweeps++;
			for (int k = 0; k < nr_mms && !failed; k++)
				check_all(&mms[k], "sweep");
		}
	}
	saved.steps_done = step;
	if (!failed) {
		snprintf(step_desc, sizeof(step_desc), "the final sweep");
		for (int k = 0; k < nr_mms && !failed; k++)
			check_all(&mms[k], "final sweep");
	}
	ms = (ktime_get_ns() - t0) / 1000000;
	printk(KERN_RAW "    # mm_random: %lu steps in %llu ms, %lu page checks\n", saved.steps_done,
	       (unsigned long long)ms, st.checks);
	len = 0;
	for (int i = 0; i < NR_OPS; i++)
		len += scnprintf(line + len, sizeof(line) - len, " %s %lu", op_names[i], st.ops[i]);
	printk(KERN_RAW "    # ops:%s\n", line);
	printk(KERN_RAW "    # faults: cow %lu, efault %lu, enomem %lu; splits: pmd %lu, folio %lu "
	       "(+%lu bad orders), deferred %lu\n", st.cow, st.efault, st.enomem, st.pmd_splits,
	       st.folio_splits, st.folio_split_einval, st.deferred_split);
}

/* Every folio order (0, 2..9) came from a write fault at least once. */
static void every_order_faulted(struct ktest *t)
{
	char line[160];
	int len = 0;

	if (!saved.ran)
		ktest_skip(t, "the sequence did not run");
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++)
		if (o != 1)
			len += scnprintf(line + len, sizeof(line) - len, " %u:%lu", o, st.fault_order[o]);
	printk(KERN_RAW "    # new folios after write faults, by order:%s\n", line);
	if (saved.steps_done < MM_RANDOM_STEPS)
		ktest_skip(t, "%lu steps: too few to expect every order", saved.steps_done);
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++) {
		if (o == 1)
			continue;
		if (!st.fault_order[o])
			ktest_fail_msg(t, false, __FILE__, __LINE__,
				       "no order-%u folio came from a fault (seed %lu)", o, opt_seed);
		if (o >= THP_ORDER_MIN)
			KEXPECT_GE(t, mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC) -
				   saved.fault_alloc[o], st.fault_order[o]);
	}
	KEXPECT_EQ(t, thp_event_read(THP_FAULT_ALLOC) - saved.thp_alloc,
		   mthp_stat_read(HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_ALLOC) -
		   saved.fault_alloc[HPAGE_PMD_ORDER]);
	/* And both kinds of split happened. */
	KEXPECT_GE(t, st.pmd_splits, 1);
	KEXPECT_GE(t, thp_event_read(THP_SPLIT_PMD) - saved.split_pmd, st.pmd_splits);
	KEXPECT_GE(t, st.folio_splits, 1);
}

/* Every mm gone: every page back on its node, no anonymous folio left. */
static void all_memory_back(struct ktest *t)
{
	if (!saved.ran)
		ktest_skip(t, "the sequence did not run");
	snprintf(step_desc, sizeof(step_desc), "teardown");
	while (nr_mms)
		drop_tmm(nr_mms - 1);
	restore_settings();
	saved.ran = false;
	KEXPECT_EQ(t, deferred_split_queue_len(), 0);
	slab_shrink_all();
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (node_has_memory(nid))
			KEXPECT_EQ(t, node_page_state(nid, NR_FREE_PAGES), saved.free[nid]);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		KEXPECT_EQ(t, mthp_stat_read(o, MTHP_STAT_NR_ANON), saved.nr_anon[o]);
	KEXPECT_EQ(t, mm_verify(), 0);
	KEXPECT_EQ(t, page_alloc_errors, page_errors_start);
	KEXPECT_EQ(t, mm_exit_verify_failures, exit_failures_start);
}

KTEST_SUITE_EXPLICIT(mm_random,
		     KTEST_CASE(random_sequence),
		     KTEST_CASE(every_order_faulted),
		     KTEST_CASE(all_memory_back));
