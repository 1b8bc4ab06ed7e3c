/*
 * User memory on the host, under ASan and UBSan: a seeded random sequence
 * of mmap, faults, munmap, mprotect, madvise, fork, exit, PMD and folio
 * splits, deferred split scans and THP setting changes, across up to six
 * address spaces, with mm_verify() after every step (DESIGN.md's
 * invariants) and a data check on top of it:
 *
 * Each mm has a shadow of what its pages must hold. After a write fault
 * the test writes one random byte, at a random offset, into the page
 * through the direct map (the old byte of that page zeroed first), and
 * remembers it. Every page a mm maps must then hold exactly its shadow
 * byte and zeroes everywhere else, whatever fork, copy-on-write, splits and
 * mprotect did in between; a page the shadow knows must still be mapped,
 * and pages nobody wrote must be zero (or the zero page). Samples are
 * checked every step, every mm's copy of a page just written, and all of
 * every mm now and then.
 *
 * QUIRE_SEED=<n> replays a seed, QUIRE_STEPS=<n> changes the length
 * (default 100000), QUIRE_VERBOSE=1 prints each step; QUIRE_NODE_MIB (node
 * 0's size, default 16) and QUIRE_MEM_MIB (the user memory the sequence
 * stays around, default 4) trade speed for room. `make fuzz` runs the same
 * program, built -O2 without sanitizers, for millions of steps
 * (docs/testing.md).
 */
#include "ktap.h"
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/mmap.h>
#include <quire/huge_mm.h>
#include <quire/rmap.h>
#include <quire/numa.h>
#include <quire/slab.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <asm/host_mm.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#define NODE_MIB	16		/* node 0; nodes 1 and 2 get half: mm_verify walks it all every step */
#define MEM_MIB		4		/* user memory the sequence aims to stay under */
#define MAX_MMS		6
#define REGION_START	0x100000000UL	/* every VMA lives in [REGION_START, +REGION_SIZE) */
#define REGION_SIZE	(256UL << 20)
#define REGION_PAGES	(REGION_SIZE >> PAGE_SHIFT)
#define MAX_TOUCH	256		/* pages one fault step touches at most */
#define SWEEP_EVERY	5000		/* steps between checks of every page of every mm */

/* ---- randomness and the environment ---- */

static u64 rng_state;

static u64 rng(void)
{
	/* xorshift64*: small, fast, reproducible everywhere */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* Uniform in [0, n). */
static unsigned long rnd(unsigned long n)
{
	return n ? rng() % n : 0;
}

static bool chance(unsigned int percent)
{
	return rnd(100) < percent;
}

static unsigned long env_number(const char *name, unsigned long dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : dflt;
}

/* ---- the kernel's log ----
 *
 * Kernel messages (mm_verify's findings among them) are captured in memory
 * instead of being dropped, so that a failure can show them as KTAP
 * diagnostics. Set QUIRE_HOST_CONSOLE=1 to see them live on stderr instead.
 */
static FILE *klog;
static char *klog_buf;
static size_t klog_len, klog_seen;

__attribute__((constructor)) static void klog_capture(void)
{
	const char *e = getenv("QUIRE_HOST_CONSOLE");

	if (e && *e)
		return;
	klog = open_memstream(&klog_buf, &klog_len);
	if (!klog)
		return;
	setenv("QUIRE_HOST_CONSOLE", "1", 1);
	stderr = klog;		/* console_write (arch/host/console.c) writes here */
}

/* Bytes logged since the last call (and marks them seen). */
static size_t klog_new(const char **text)
{
	size_t n;

	if (!klog)
		return 0;
	fflush(klog);
	*text = klog_buf + klog_seen;
	n = klog_len - klog_seen;
	klog_seen = klog_len;
	return n;
}

/* Drop what was captured so far (memory stays bounded over millions of steps). */
static void klog_reset(void)
{
	if (!klog || klog_len < (1UL << 20))
		return;
	fclose(klog);		/* (updates klog_buf: free it after) */
	free(klog_buf);
	klog_buf = NULL;
	klog_len = klog_seen = 0;
	klog = open_memstream(&klog_buf, &klog_len);
	stderr = klog ? klog : fdopen(2, "w");
}

/* Print up to max lines of text as KTAP diagnostics. */
static void print_klog(const char *text, size_t n, int max)
{
	int lines = 0;

	while (n && lines < max) {
		const char *nl = __builtin_memchr(text, '\n', n);
		size_t len = nl ? (size_t)(nl - text) : n;

		printf("    # kernel: %.*s\n", (int)len, text);
		lines++;
		if (!nl)
			return;
		n -= len + 1;
		text = nl + 1;
	}
	if (n)
		printf("    # kernel: ... (more)\n");
}

/* ---- where we are, for reports and for a crash ---- */

static unsigned long seed, step;
static char step_desc[160];
static bool verbose;

static void print_where(int fd)
{
	dprintf(fd, "# test_mm_random: seed %lu step %lu: %s (replay: QUIRE_SEED=%lu QUIRE_STEPS=%lu)\n",
		seed, step, step_desc, seed, step + 1);
}

static void on_death(void)
{
	const char *text;
	size_t n = klog_new(&text);

	if (n > 4096) {
		text += n - 4096;
		n = 4096;
	}
	if (n && write(2, text, n) < 0)
		return;
	print_where(2);
	print_where(1);
}

static void on_abort(int sig)
{
	on_death();
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void install_death_hooks(void)
{
	signal(SIGABRT, on_abort);
#if defined(__SANITIZE_ADDRESS__)
	__sanitizer_set_death_callback(on_death);
#endif
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
	int id;		/* for messages */
};

static struct tmm mms[MAX_MMS];
static int nr_mms, next_id;
static bool failed;		/* the sequence stops at the first failure */
static unsigned long zero_pfn;	/* learnt from the first read fault */
static unsigned long page_errors_start;
static u8 zeroes[PAGE_SIZE];

/* Counters for the summary and the KTAP cases. */
static struct {
	unsigned long ops[16];				/* by enum op (NR_OPS of them) */
	unsigned long fault_order[HPAGE_PMD_ORDER + 1];	/* orders of new folios seen after a fault */
	unsigned long cow, enomem, efault, pmd_splits, folio_splits, folio_split_einval;
	unsigned long deferred_split, sweeps, checks, outside, mm_steps, oom_reports;
} st;

static void failf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	__builtin_vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!failed)
		HOST_FAIL("seed %lu step %lu (%s): %s", seed, step, step_desc, msg);
	else
		printf("    # also: %s\n", msg);
	failed = true;
}

static struct tmm *new_tmm(struct mm_struct *mm, const u32 *copy_from)
{
	struct tmm *t = &mms[nr_mms++];

	t->mm = mm;
	t->id = next_id++;
	t->shadow = malloc(REGION_PAGES * sizeof(u32));
	if (!t->shadow) {
		fprintf(stdout, "out of host memory\n");
		exit(1);
	}
	if (copy_from)
		__builtin_memcpy(t->shadow, copy_from, REGION_PAGES * sizeof(u32));
	else
		__builtin_memset(t->shadow, 0, REGION_PAGES * sizeof(u32));
	return t;
}

static void drop_tmm(int i)
{
	mmput(mms[i].mm);
	free(mms[i].shadow);
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
		__builtin_memset(shadow_of(t, start), 0, ((end - start) >> PAGE_SHIFT) * sizeof(u32));
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
	if (to <= from || !__builtin_memcmp(p + from, zeroes, to - from))
		return -1;
	for (unsigned long i = from; i < to; i++)
		if (p[i])
			return (long)i;
	return -1;
}

/* Does t's page at addr hold what its shadow says? */
static void check_page(struct tmm *t, unsigned long addr, const char *why)
{
	struct mapping m = lookup(t->mm, addr);
	u32 s = in_region(addr) ? *shadow_of(t, addr) : 0;
	const u8 *p;
	long bad;

	if (!in_region(addr))
		return;
	st.checks++;
	addr &= PAGE_MASK;
	if (m.kind == MK_NONE || m.kind == MK_ZERO) {
		if (s)
			failf("%s: mm%d %#lx maps %s, but %#x was written at +%#x", why, t->id, addr,
			      kind_names[m.kind], SH_VAL(s), SH_OFF(s));
		return;
	}
	p = page_address(pfn_to_page(m.pfn));
	if (s && p[SH_OFF(s)] != SH_VAL(s)) {
		failf("%s: mm%d %#lx (pfn %#lx by %s): %#x at +%#x, but %#x was written there", why,
		      t->id, addr, m.pfn, kind_names[m.kind], p[SH_OFF(s)], SH_OFF(s), SH_VAL(s));
		return;
	}
	bad = s ? nonzero_at(p, 0, SH_OFF(s)) : nonzero_at(p, 0, PAGE_SIZE);
	if (bad < 0 && s)
		bad = nonzero_at(p, SH_OFF(s) + 1, PAGE_SIZE);
	if (bad >= 0)
		failf("%s: mm%d %#lx (pfn %#lx by %s): %#x at +%#lx, where nothing was written "
		      "(shadow: %s%#x at +%#x)", why, t->id, addr, m.pfn, kind_names[m.kind],
		      p[bad], bad, s ? "" : "none, ", SH_VAL(s), SH_OFF(s));
}

/* Every page of every VMA of t, and its rss (pages mapped, the zero page aside). */
static void check_all(struct tmm *t, const char *why)
{
	struct vm_area_struct *v;
	long rss = 0;

	list_for_each_entry(v, &t->mm->vmas, vm_list)
		for (unsigned long a = v->vm_start; a < v->vm_end && !failed; a += PAGE_SIZE) {
			enum map_kind k = lookup(t->mm, a).kind;

			rss += k == MK_PTE || k == MK_PMD;
			check_page(t, a, why);
		}
	if (!failed && rss != atomic_long_read(&t->mm->rss))
		failf("%s: mm%d maps %ld pages, but its rss says %ld", why, t->id, rss,
		      atomic_long_read(&t->mm->rss));
	/* And nothing outside the VMAs is remembered. */
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

/* After an operation that may have unmapped part of [start, end) (a failure half way). */
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

/* Pages, mostly small, sometimes up to max_pages. */
static unsigned long random_pages(unsigned long max_pages)
{
	unsigned long n = 1UL << rnd(12);	/* 1 .. 2048 pages: 4 KiB .. 8 MiB */

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

static unsigned long mem_budget;	/* pages */

static unsigned long user_pages(void)
{
	unsigned long n = 0;

	for (int nid = 0; nid < 3; nid++)
		n += node_page_state(nid, NR_USER_PAGES);
	return n;
}

static unsigned long total_free_pages(void)
{
	unsigned long n = 0;

	for (int nid = 0; nid < 3; nid++)
		n += node_page_state(nid, NR_FREE_PAGES);
	return n;
}

/* ---- the operations ---- */

enum op {
	OP_MMAP, OP_WRITE, OP_READ, OP_MUNMAP, OP_MPROTECT, OP_DONTNEED, OP_MADV_FLAGS,
	OP_FORK, OP_EXIT, OP_SPLIT_PMD, OP_SPLIT_FOLIO, OP_DEFERRED_SCAN, OP_THP, NR_OPS
};
_Static_assert(NR_OPS <= ARRAY_SIZE(st.ops), "st.ops holds every op");
static const char *const op_names[NR_OPS] = {
	"mmap", "write", "read", "munmap", "mprotect", "dontneed", "madv_flags",
	"fork", "exit", "split_pmd", "split_folio", "deferred_scan", "thp",
};
static const unsigned int op_weight[NR_OPS] = {
	[OP_MMAP] = 10, [OP_WRITE] = 28, [OP_READ] = 10, [OP_MUNMAP] = 7, [OP_MPROTECT] = 7,
	[OP_DONTNEED] = 6, [OP_MADV_FLAGS] = 4, [OP_FORK] = 3, [OP_EXIT] = 2, [OP_SPLIT_PMD] = 5,
	[OP_SPLIT_FOLIO] = 7, [OP_DEFERRED_SCAN] = 3, [OP_THP] = 2,
};

static void describe(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void describe(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	__builtin_vsnprintf(step_desc, sizeof(step_desc), fmt, ap);
	va_end(ap);
	if (verbose)
		printf("    # %lu: %s\n", step, step_desc);
}

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
	addr = REGION_START + (rnd(REGION_PAGES - pages + 1) << PAGE_SHIFT);
	if (chance(40))
		addr = ALIGN_DOWN(addr, PMD_SIZE);
	else if (chance(20))
		addr = ALIGN_DOWN(addr, 16 * PAGE_SIZE);
	describe("mmap mm%d %#lx +%#lx %s%s", t->id, addr, pages << PAGE_SHIFT, prot_name(prot),
		 fixed ? " fixed" : " hint");
	down_write(&t->mm->mmap_lock);
	ret = do_mmap(t->mm, addr, pages << PAGE_SHIFT, prot,
		      MAP_PRIVATE | MAP_ANONYMOUS | (fixed ? MAP_FIXED : 0), NULL, 0);
	if (ret >= 0 && !in_region((unsigned long)ret)) {
		/* The hint was taken: placed below mmap_base. Not ours to track. */
		st.outside++;
		if (do_munmap(t->mm, (unsigned long)ret, pages << PAGE_SHIFT))
			failf("munmap of the mapping placed at %#lx failed", ret);
	}
	up_write(&t->mm->mmap_lock);
	if (ret < 0 && ret != -ENOMEM)
		failf("do_mmap returned %ld", ret);
	else if (fixed && ret >= 0 && (unsigned long)ret != addr)
		failf("MAP_FIXED at %#lx returned %#lx", addr, ret);
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

/* The pages [start, end) a fault step touches: all of them, a random few, or a stride. */
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
		if (total_free_pages() > 2048)
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
	if (!after.present || after.kind == MK_NONE || (write && (!after.write || after.kind == MK_ZERO))) {
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
			failf("write fault at %#lx mapped an order-%u folio, which the THP settings "
			      "do not allow in this VMA (vm_flags %#lx)", addr, order, v->vm_flags);
		if ((order == HPAGE_PMD_ORDER) != (after.kind == MK_PMD))
			failf("write fault at %#lx: an order-%u folio mapped by %s", addr, order,
			      kind_names[after.kind]);
	} else if (before.kind == MK_ZERO || !before.write) {
		st.cow++;
	}
	/* What was there must have survived (copied or reused), then our byte goes in. */
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

	random_range(t, 512, &start, &end);
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
		 advice == MADV_NOHUGEPAGE ? "nohugepage" : advice == MADV_DONTFORK ? "dontfork" :
		 advice == MADV_DOFORK ? "dofork" : "normal");
	down_write(&t->mm->mmap_lock);
	until = covered_until(t->mm, start, end);
	want = until == end ? 0 : -ENOMEM;
	ret = do_madvise(t->mm, start, end - start, advice);
	up_write(&t->mm->mmap_lock);
	if (ret != want && ret != -ENOMEM)
		failf("do_madvise returned %d, expected %d", ret, want);
	if (advice != MADV_DONTNEED)
		return;
	if (ret == want) {
		/* The VMAs up to the first hole are zapped, nothing after it. */
		shadow_clear(t, start, until);
	} else {
		shadow_reconcile(t, start, end);
	}
	for (unsigned long a = start; a < until && !failed; a += PAGE_SIZE) {
		struct mapping m = lookup(t->mm, a);

		if (m.kind != MK_NONE && ret == want)
			failf("MADV_DONTNEED left %s at %#lx", kind_names[m.kind], a);
	}
}

static void op_fork(struct tmm *t)
{
	struct vm_area_struct *v;
	struct mm_struct *child;
	struct tmm *c;

	describe("fork mm%d -> mm%d", t->id, next_id);
	child = dup_mm(t->mm);
	if (!child) {
		if (total_free_pages() > 2048)
			failf("dup_mm failed with %lu pages free", total_free_pages());
		return;
	}
	c = new_tmm(child, t->shadow);
	/* MADV_DONTFORK: the child has holes there. */
	list_for_each_entry(v, &t->mm->vmas, vm_list)
		if (v->vm_flags & VM_DONTCOPY)
			shadow_clear(c, v->vm_start, v->vm_end);
	/* Both see the same bytes: a sample now (the sweep sees them all later). */
	for (int i = 0; i < 16 && !failed; i++) {
		v = random_vma(c);
		if (v) {
			unsigned long a = v->vm_start + (rnd((v->vm_end - v->vm_start) >> PAGE_SHIFT)
							 << PAGE_SHIFT);

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

		if (!mm) {
			failf("mm_alloc failed");
			return;
		}
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
			if (lookup(t->mm, a).kind == MK_PMD && !rnd(++n))
				found = a;	/* reservoir sampling: each equally likely */
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
		addr = start;
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
	struct folio *folio;
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
	new_order = (unsigned int)rnd(order - 1);	/* 0 .. order-2, then 1 -> order-1 */
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
		/* Nothing else holds references or locks here: the counts must have been wrong. */
		failf("split_folio_to_order returned -EAGAIN (refcount %d, mapcount %d before)",
		      refs, maps);
	} else if (ret && ret != -ENOMEM) {
		failf("split_folio_to_order returned %d", ret);
	} else if (!ret) {
		st.folio_splits++;
	}
	folio_put(folio);
	if (!ret && !bad_order) {
		struct folio *now;

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

static void op_thp(void)
{
	static const enum thp_mode global[] = {
		THP_ALWAYS, THP_ALWAYS, THP_ALWAYS, THP_MADVISE, THP_MADVISE, THP_NEVER,
	};
	static const enum thp_mode per[] = {
		THP_ALWAYS, THP_ALWAYS, THP_INHERIT, THP_INHERIT, THP_MADVISE, THP_NEVER,
	};
	char desc[32] = "";

	EXPECT_EQ(thp_set_global_mode(global[rnd(ARRAY_SIZE(global))]), 0);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		enum thp_mode m = per[rnd(ARRAY_SIZE(per))];

		EXPECT_EQ(thp_set_order_mode(o, m), 0);
		desc[o - THP_ORDER_MIN] = "aimn"[m == THP_ALWAYS ? 0 : m == THP_INHERIT ? 1 :
						  m == THP_MADVISE ? 2 : 3];
	}
	rmap_batching = chance(80);
	describe("thp global %d orders 2-9 %s, rmap_batching %d", thp_global_mode(), desc,
		 rmap_batching);
}

static enum op choose_op(void)
{
	static unsigned int total;
	unsigned int r;

	/*
	 * Over the budget of user pages (mm_verify's cost grows with what is
	 * mapped), or short of memory: give some back first.
	 */
	if ((user_pages() > mem_budget || total_free_pages() < 2048) && chance(60)) {
		static const enum op give_back[] = {
			OP_MUNMAP, OP_MUNMAP, OP_MUNMAP, OP_DONTNEED, OP_DONTNEED, OP_DONTNEED,
			OP_DEFERRED_SCAN, OP_EXIT,
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
		if (nr_mms < MAX_MMS)
			op_fork(t);
		else
			op_exit(i);
		break;
	case OP_EXIT:		op_exit(i); break;
	case OP_SPLIT_PMD:	op_split_pmd(t); break;
	case OP_SPLIT_FOLIO:	op_split_folio(t); break;
	case OP_DEFERRED_SCAN:	op_deferred_scan(); break;
	case OP_THP:		op_thp(); break;
	default:		break;
	}
}

/*
 * Out of memory (QUIRE_MEM_MIB beyond the machine), an allocation failure is
 * reported, and is no finding: is that all the text says?
 */
static bool only_oom_reports(const char *text, size_t n)
{
	static const char oom[] = "page_alloc: allocation failure: ";

	while (n) {
		const char *nl = __builtin_memchr(text, '\n', n);
		size_t len = nl ? (size_t)(nl - text) + 1 : n;

		bool found = false;

		for (size_t i = 0; i + sizeof(oom) - 1 <= len && !found; i++)
			found = !__builtin_memcmp(text + i, oom, sizeof(oom) - 1);
		if (!found)
			return false;
		st.oom_reports++;
		n -= len;
		text += len;
	}
	return true;
}

/* After every step: mm_verify, the page allocator's own reports, the kernel log, samples. */
static void check_step(void)
{
	const char *text;
	size_t n;
	int problems = mm_verify();

	if (problems)
		failf("mm_verify found %d problem(s)", problems);
	if (page_alloc_errors != page_errors_start)
		failf("the page allocator reported %lu bad page(s)", page_alloc_errors - page_errors_start);
	n = klog_new(&text);
	if (n && !failed && !only_oom_reports(text, n))
		failf("the kernel logged something (a sequence like this one logs nothing)");
	if (n && failed)
		print_klog(text, n, 60);
	if (zero_pfn && nonzero_at(page_address(pfn_to_page(zero_pfn)), 0, PAGE_SIZE) >= 0)
		failf("the zero page is not zero");
	for (int k = 0; k < 4 && !failed; k++) {
		struct tmm *t = &mms[rnd((unsigned long)nr_mms)];
		struct vm_area_struct *v = random_vma(t);

		if (v)
			check_page(t, v->vm_start + (rnd((v->vm_end - v->vm_start) >> PAGE_SHIFT) <<
						    PAGE_SHIFT), "sample");
	}
	klog_reset();
}

/* ---- setup ---- */

static unsigned long boot_free[3];
static unsigned long nr_anon_start[HPAGE_PMD_ORDER + 1];

static unsigned long node_mib = NODE_MIB;

static void setup(void)
{
	struct host_topology topo;
	const char *boot_log;

	/* Faults allocate on node 0 (CPU 0's): it gets the room for 2 MiB folios. */
	host_topology_numa3(&topo, node_mib / 2);
	topo.mib[0] = node_mib;
	if (host_mm_init(&topo)) {
		HOST_FAIL("host_mm_init failed");
		exit(1);
	}
	zero_page_init();
	zero_pfn = 0;
	slab_shrink_all();
	for (int nid = 0; nid < 3; nid++)
		boot_free[nid] = node_page_state(nid, NR_FREE_PAGES);
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++)
		nr_anon_start[o] = mthp_stat_read(o, MTHP_STAT_NR_ANON);
	page_errors_start = page_alloc_errors;
	klog_new(&boot_log);	/* the boot's messages are not the sequence's */
}

/* Everything given back: free pages per node as after setup, no anonymous folio left. */
static void expect_all_back(void)
{
	slab_shrink_all();
	for (int nid = 0; nid < 3; nid++)
		EXPECT_EQ(node_page_state(nid, NR_FREE_PAGES), boot_free[nid]);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		EXPECT_EQ(mthp_stat_read(o, MTHP_STAT_NR_ANON), nr_anon_start[o]);
	EXPECT_EQ(deferred_split_queue_len(), 0);
	EXPECT_EQ(mm_verify(), 0);
	EXPECT_EQ(page_alloc_errors, page_errors_start);
}

static void thp_defaults(void)
{
	thp_set_global_mode(THP_ALWAYS);
	for (unsigned int o = THP_ORDER_MIN; o < HPAGE_PMD_ORDER; o++)
		thp_set_order_mode(o, THP_NEVER);
	thp_set_order_mode(HPAGE_PMD_ORDER, THP_INHERIT);
	rmap_batching = true;
}

/* ---- the cases ---- */

/* mm_verify notices a mapcount that does not match the page tables, and is quiet again after. */
HOST_TEST(verify_catches_bad_mapcount)
{
	unsigned long addr = REGION_START;
	struct mm_struct *mm;
	struct mapping m;
	struct page *page;
	const char *text;
	u64 pos;
	long ret;

	setup();
	mm = mm_alloc();
	if (!mm) {
		HOST_FAIL("mm_alloc failed");
		return;
	}
	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, addr, 4 * PMD_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	up_write(&mm->mmap_lock);
	EXPECT_EQ(ret, (long)addr);
	EXPECT_EQ(handle_mm_fault(mm, addr + 5 * PAGE_SIZE, FAULT_FLAG_WRITE), 0);	/* PMD */
	EXPECT_EQ(handle_mm_fault(mm, addr + PMD_SIZE, 0), 0);				/* zero page */
	EXPECT_EQ(mm_verify(), 0);

	/* A page of the folio, now mapped by a PTE: one mapping too many on it. */
	down_write(&mm->mmap_lock);
	split_huge_pmd(find_vma(mm, addr), addr);
	up_write(&mm->mmap_lock);
	m = lookup(mm, addr + 5 * PAGE_SIZE);
	EXPECT_EQ(m.kind, MK_PTE);
	page = pfn_to_page(m.pfn);
	pos = printk_log_pos();
	atomic_inc(&page->_mapcount);
	EXPECT_GE(mm_verify(), 1);
	EXPECT_TRUE(printk_log_contains(pos, "mapcount 2 but the rmap finds 1 PTEs"));
	atomic_dec(&page->_mapcount);
	EXPECT_EQ(mm_verify(), 0);

	/* A folio's total mapcount off by one, every page's right. */
	atomic_dec(&page_folio(page)->_large_mapcount);
	EXPECT_GE(mm_verify(), 1);
	atomic_inc(&page_folio(page)->_large_mapcount);
	EXPECT_EQ(mm_verify(), 0);

	mmput(mm);
	EXPECT_EQ(mm_verify(), 0);
	expect_all_back();
	klog_new(&text);
	thp_defaults();
	host_mm_exit();
}

static unsigned long steps_done;
static double run_seconds;
static unsigned long fault_alloc_start[HPAGE_PMD_ORDER + 1], split_start[HPAGE_PMD_ORDER + 1];
static unsigned long thp_alloc_start, split_pmd_start, split_page_start;

HOST_TEST(random_sequence)
{
	unsigned long steps = env_number("QUIRE_STEPS", 100000);
	struct timespec t0, t1;

	seed = env_number("QUIRE_SEED", 20261201);
	verbose = env_number("QUIRE_VERBOSE", 0);
	node_mib = env_number("QUIRE_NODE_MIB", NODE_MIB);
	mem_budget = env_number("QUIRE_MEM_MIB", MEM_MIB) << (20 - PAGE_SHIFT);
	printf("    # seed %lu\n", seed);
	printf("    # random_sequence: %lu steps (QUIRE_SEED, QUIRE_STEPS, QUIRE_VERBOSE)\n", steps);
	rng_state = seed * 0x9e3779b97f4a7c15ULL + 1;
	if (!rng_state)
		rng_state = 1;
	setup();
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++) {
		fault_alloc_start[o] = mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC);
		split_start[o] = mthp_stat_read(o, MTHP_STAT_SPLIT);
	}
	thp_alloc_start = thp_event_read(THP_FAULT_ALLOC);
	split_pmd_start = thp_event_read(THP_SPLIT_PMD);
	split_page_start = thp_event_read(THP_SPLIT_PAGE);
	__builtin_memset(&st, 0, sizeof(st));
	failed = false;
	nr_mms = 0;
	next_id = 0;
	new_tmm(mm_alloc(), NULL);
	op_thp();

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (step = 0; step < steps && !failed; step++) {
		do_step();
		check_step();
		st.mm_steps += nr_mms;
		if (!failed && step % SWEEP_EVERY == SWEEP_EVERY - 1) {
			st.sweeps++;
			for (int k = 0; k < nr_mms && !failed; k++)
				check_all(&mms[k], "sweep");
		}
	}
	steps_done = step;
	step_desc[0] = 0;
	if (!failed) {
		__builtin_snprintf(step_desc, sizeof(step_desc), "the final sweep");
		for (int k = 0; k < nr_mms && !failed; k++)
			check_all(&mms[k], "final sweep");
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	run_seconds = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("    # random_sequence: %lu steps in %.1f s (%.0f steps/s), %.1f mms on average, "
	       "%lu page checks, %lu sweeps\n", steps_done, run_seconds,
	       steps_done / (run_seconds > 0 ? run_seconds : 1),
	       (double)st.mm_steps / (steps_done ? steps_done : 1), st.checks, st.sweeps);
	printf("    # ops:");
	for (int i = 0; i < NR_OPS; i++)
		printf(" %s %lu", op_names[i], st.ops[i]);
	printf("\n    # faults: cow %lu, efault %lu, enomem %lu (allocation failures reported %lu); "
	       "splits: pmd %lu, folio %lu (+%lu bad orders), deferred %lu\n", st.cow, st.efault,
	       st.enomem, st.oom_reports, st.pmd_splits, st.folio_splits, st.folio_split_einval,
	       st.deferred_split);
}

HOST_TEST(every_order_faulted)
{
	printf("    # new folios seen after write faults, by order:");
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++)
		if (o != 1)
			printf(" %u:%lu", o, st.fault_order[o]);
	printf("\n    # anon_fault_alloc:");
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++)
		printf(" %u:%lu", o, mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC) - fault_alloc_start[o]);
	printf(", thp_fault_alloc %lu\n", thp_event_read(THP_FAULT_ALLOC) - thp_alloc_start);
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++) {
		if (o == 1)
			continue;
		if (!st.fault_order[o])
			HOST_FAIL("no order-%u folio came from a fault", o);
		if (o >= THP_ORDER_MIN)
			EXPECT_GE(mthp_stat_read(o, MTHP_STAT_ANON_FAULT_ALLOC) - fault_alloc_start[o],
				  st.fault_order[o]);
	}
	EXPECT_EQ(thp_event_read(THP_FAULT_ALLOC) - thp_alloc_start,
		  mthp_stat_read(HPAGE_PMD_ORDER, MTHP_STAT_ANON_FAULT_ALLOC) -
		  fault_alloc_start[HPAGE_PMD_ORDER]);
}

HOST_TEST(both_splits_happened)
{
	unsigned long folio_splits = 0;

	printf("    # thp_split_pmd %lu, thp_split_page %lu, split by order:",
	       thp_event_read(THP_SPLIT_PMD) - split_pmd_start,
	       thp_event_read(THP_SPLIT_PAGE) - split_page_start);
	for (unsigned int o = THP_ORDER_MIN; o <= HPAGE_PMD_ORDER; o++) {
		unsigned long n = mthp_stat_read(o, MTHP_STAT_SPLIT) - split_start[o];

		printf(" %u:%lu", o, n);
		folio_splits += n;
	}
	printf("\n");
	EXPECT_GE(st.pmd_splits, 1);
	EXPECT_GE(thp_event_read(THP_SPLIT_PMD) - split_pmd_start, st.pmd_splits);
	EXPECT_GE(st.folio_splits, 1);
	EXPECT_GE(folio_splits, st.folio_splits);
	EXPECT_GE(st.deferred_split, 1);
}

HOST_TEST(all_memory_back)
{
	step_desc[0] = 0;
	__builtin_snprintf(step_desc, sizeof(step_desc), "teardown");
	while (nr_mms)
		drop_tmm(nr_mms - 1);
	EXPECT_EQ(deferred_split_queue_len(), 0);
	expect_all_back();
	if (!failed) {
		const char *text;
		size_t n = klog_new(&text);

		if (n) {
			HOST_FAIL("the kernel logged something at teardown");
			print_klog(text, n, 40);
		}
	}
	thp_defaults();
	host_mm_exit();
}

HOST_TEST_MAIN(host_mm_random,
	       HOST_CASE(verify_catches_bad_mapcount),
	       HOST_CASE(random_sequence),
	       HOST_CASE(every_order_faulted),
	       HOST_CASE(both_splits_happened),
	       HOST_CASE(all_memory_back));
