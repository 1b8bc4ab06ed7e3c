/*
 * User memory on the host, under ASan and UBSan: the random mm sequence
 * (tests/kernel/mm_random.h; its engine, tests/kernel/mm_random.c, is
 * #included here and runs on the host build of mm/) for many more steps
 * than in QEMU: mmap, faults, munmap, mprotect, madvise, fork, exit, PMD
 * and folio splits, deferred split scans and THP setting changes, across
 * up to six address spaces, with mm_verify() after every step (docs/design.md's
 * invariants) and a data check on top of it:
 *
 * Each mm has a shadow of what its pages must hold. After a write fault
 * the engine writes one random byte, at a random offset, into the page
 * through the direct map (the old byte of that page zeroed first), and
 * remembers it. Every page a mm maps must then hold exactly its shadow
 * byte and zeroes everywhere else, whatever fork, copy-on-write, splits and
 * mprotect did in between; a page the shadow knows must still be mapped,
 * and pages nobody wrote must be zero (or the zero page). Samples are
 * checked every step, every mm's copy of a page just written, and all of
 * every mm now and then. Here, on top of the engine's checks, the kernel
 * must log nothing but allocation failures.
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
#include <unistd.h>
#include "../kernel/mm_random.c"
#include "../kernel/test_device.c"
#include <quire/gup.h>
#include "host_setup.h"
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#define NODE_MIB	16		/* node 0; nodes 1 and 2 get half: mm_verify walks it all every step */
#define MEM_MIB		4		/* user memory the sequence aims to stay under */

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

/* ---- where we are, for a crash ---- */

static void print_where(int fd)
{
	dprintf(fd, "# test_mm_random: seed %lu step %lu: %s (replay: QUIRE_SEED=%lu QUIRE_STEPS=%lu)\n",
		mmr.seed, mmr.step, mmr.desc, mmr.seed, mmr.step + 1);
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

/* ---- the engine's side: KTAP on stdout, and the kernel's log ---- */

void mmr_print(const char *text)
{
	fputs(text, stdout);
}

void mmr_fail(const char *file, int line, const char *msg)
{
	host_fail_msg(file, line, "%s", msg);
}

static unsigned long oom_reports;

/* Does the line [text, text + len) contain what? */
static bool line_has(const char *text, size_t len, const char *what)
{
	size_t w = __builtin_strlen(what);

	for (size_t i = 0; i + w <= len; i++)
		if (!__builtin_memcmp(text + i, what, w))
			return true;
	return false;
}

/*
 * Out of memory (QUIRE_MEM_MIB beyond the machine), an allocation failure is
 * reported, and is no finding; nor is a long-term pin that could not move a
 * folio off the slow tier (the engine checks that one itself: the folio is
 * held by the sequence, or memory is short). Is that all the text says?
 */
static bool only_oom_reports(const char *text, size_t n)
{
	while (n) {
		const char *nl = __builtin_memchr(text, '\n', n);
		size_t len = nl ? (size_t)(nl - text) + 1 : n;

		if (!line_has(text, len, "page_alloc: allocation failure: ") &&
		    !line_has(text, len, "gup: a long-term pin could not move "))
			return false;
		oom_reports++;
		n -= len;
		text += len;
	}
	return true;
}

/* After every step (mmr_config.after_step): the kernel logged nothing else; on a failure, what it logged. */
static void check_klog(void)
{
	const char *text;
	size_t n = klog_new(&text);

	if (n && !mmr.failed && !only_oom_reports(text, n))
		mmr_failf("the kernel logged something (a sequence like this one logs nothing)");
	if (n && mmr.failed)
		print_klog(text, n, 60);
	klog_reset();
}

/* ---- setup ---- */

static unsigned long node_mib = NODE_MIB;

static void setup(void)
{
	const char *boot_log;

	/* Faults allocate on node 0 (CPU 0's): it gets the room for 2 MiB folios. */
	if (host_machine_init(node_mib / 2, node_mib, HOST_ZERO_PAGE | HOST_DEVMEM)) {
		HOST_FAIL("host_mm_init failed");
		exit(1);
	}
	klog_new(&boot_log);	/* the boot's messages are not the sequence's */
}

/* ---- the cases ---- */

/*
 * The machine built, what must come back recorded, and a new mm with len
 * bytes of private anonymous memory at MMR_REGION_START (rw); NULL
 * (reported) on failure.
 */
static struct mm_struct *setup_with_anon(unsigned long len)
{
	struct mm_struct *mm;
	long ret;

	setup();
	mmr_snapshot();
	mm = mm_alloc();
	if (!mm) {
		HOST_FAIL("mm_alloc failed");
		return NULL;
	}
	down_write(&mm->mmap_lock);
	ret = do_mmap(mm, MMR_REGION_START, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, NULL, 0);
	up_write(&mm->mmap_lock);
	EXPECT_EQ(ret, (long)MMR_REGION_START);
	return mm;
}

/* mm_verify notices a mapcount that does not match the page tables, and is quiet again after. */
HOST_TEST(verify_catches_bad_mapcount)
{
	unsigned long addr = MMR_REGION_START;
	struct mmr_mapping m;
	struct mm_struct *mm;
	struct page *page;
	const char *text;
	u64 pos;

	mm = setup_with_anon(4 * PMD_SIZE);
	if (!mm)
		return;
	EXPECT_EQ(handle_mm_fault(mm, addr + 5 * PAGE_SIZE, FAULT_FLAG_WRITE), 0);	/* PMD */
	EXPECT_EQ(handle_mm_fault(mm, addr + PMD_SIZE, 0), 0);				/* zero page */
	EXPECT_EQ(mm_verify(), 0);

	/* A page of the folio, now mapped by a PTE: one mapping too many on it. */
	down_write(&mm->mmap_lock);
	split_huge_pmd(find_vma(mm, addr), addr);
	up_write(&mm->mmap_lock);
	m = mmr_lookup(mm, addr + 5 * PAGE_SIZE);
	EXPECT_EQ(m.kind, MMR_PTE);
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
	mmr_expect_all_back();
	klog_new(&text);
	host_mm_exit();
}

/* A pinned small page made not anon-exclusive: mm_verify says so, and is quiet once it is again. */
static void expect_exclusive_checked(struct page *page)
{
	u64 pos;

	ClearPageAnonExclusive(page);
	pos = printk_log_pos();
	EXPECT_GE(mm_verify(), 1);
	EXPECT_TRUE(printk_log_contains(pos, "but not anon-exclusive (invariant 6)"));
	SetPageAnonExclusive(page);
	EXPECT_EQ(mm_verify(), 0);
}

/*
 * mm_verify notices pins counted wrong (invariant 3: refcount >= mapcount
 * + pins, a pincount below 0) and a pinned anonymous page that is not
 * anon-exclusive (invariant 6), on a mapped folio and on one pinned after
 * its munmap, and is quiet again once each is put back.
 */
HOST_TEST(verify_catches_bad_pins)
{
	unsigned long addr = MMR_REGION_START, small = MMR_REGION_START + PMD_SIZE;
	bool exclusive[HPAGE_PMD_NR];
	struct page *pages[2];
	struct folio *large, *folio;
	struct mm_struct *mm;
	const char *text;
	u64 pos;

	mm = setup_with_anon(2 * PMD_SIZE);
	if (!mm)
		return;
	down_write(&mm->mmap_lock);
	EXPECT_EQ(do_madvise(mm, small, PMD_SIZE, MADV_NOHUGEPAGE), 0);
	up_write(&mm->mmap_lock);
	EXPECT_EQ(handle_mm_fault(mm, addr, FAULT_FLAG_WRITE), 0);		/* a PMD */
	EXPECT_EQ(handle_mm_fault(mm, small, FAULT_FLAG_WRITE), 0);	/* 4 KiB */
	EXPECT_EQ(mmr_lookup(mm, addr).kind, MMR_PMD);
	down_read(&mm->mmap_lock);
	EXPECT_EQ(pin_user_pages_remote(mm, addr + 5 * PAGE_SIZE, 1, FOLL_WRITE, &pages[0], NULL), 1);
	EXPECT_EQ(pin_user_pages_remote(mm, small, 1, FOLL_WRITE, &pages[1], NULL), 1);
	up_read(&mm->mmap_lock);
	large = page_folio(pages[0]);
	folio = page_folio(pages[1]);
	EXPECT_TRUE(folio_test_large(large));
	EXPECT_FALSE(folio_test_large(folio));
	EXPECT_EQ(atomic_read(&large->_pincount), 1);
	EXPECT_EQ(mm_verify(), 0);

	/* Pins the references do not cover. */
	pos = printk_log_pos();
	atomic_add(1000, &large->_pincount);
	EXPECT_GE(mm_verify(), 1);
	EXPECT_TRUE(printk_log_contains(pos, "below mapcount 1 + pins 1001"));
	atomic_sub(1000, &large->_pincount);
	EXPECT_EQ(mm_verify(), 0);

	/* A pinned large folio none of whose pages is anon-exclusive. */
	for (unsigned long i = 0; i < HPAGE_PMD_NR; i++) {
		exclusive[i] = PageAnonExclusive(folio_page(large, i));
		ClearPageAnonExclusive(folio_page(large, i));
	}
	pos = printk_log_pos();
	EXPECT_GE(mm_verify(), 1);
	EXPECT_TRUE(printk_log_contains(pos, "but none of its pages is anon-exclusive"));
	for (unsigned long i = 0; i < HPAGE_PMD_NR; i++)
		if (exclusive[i])
			SetPageAnonExclusive(folio_page(large, i));
	EXPECT_EQ(mm_verify(), 0);

	/* A pinned small page that is not anon-exclusive, mapped, then unmapped. */
	expect_exclusive_checked(pages[1]);
	down_write(&mm->mmap_lock);
	EXPECT_EQ(do_munmap(mm, addr, 2 * PMD_SIZE), 0);
	up_write(&mm->mmap_lock);
	EXPECT_EQ(folio_mapcount(large), 0);
	EXPECT_EQ(mm_verify(), 0);
	expect_exclusive_checked(pages[1]);

	/* More unpins than pins, on a folio mapped nowhere. */
	atomic_sub(2, &large->_pincount);
	pos = printk_log_pos();
	EXPECT_GE(mm_verify(), 1);
	EXPECT_TRUE(printk_log_contains(pos, "pincount -1: more unpins than pins"));
	atomic_add(2, &large->_pincount);
	EXPECT_EQ(mm_verify(), 0);

	unpin_user_pages(pages, 2);
	mmput(mm);
	EXPECT_EQ(mm_verify(), 0);
	mmr_expect_all_back();
	klog_new(&text);
	host_mm_exit();
}

HOST_TEST(random_sequence)
{
	const struct mmr_config cfg = {
		.seed = env_number("QUIRE_SEED", 20261201),
		.verbose = env_number("QUIRE_VERBOSE", 0),
		.max_mms = 6,
		.region_size = 256UL << 20,
		.mem_budget = env_number("QUIRE_MEM_MIB", MEM_MIB) << (20 - PAGE_SHIFT),
		.low_free = 2048,
		.max_touch = 256,
		.sweep_every = 5000,
		.after_step = check_klog,
	};
	unsigned long steps = env_number("QUIRE_STEPS", 100000);

	node_mib = env_number("QUIRE_NODE_MIB", NODE_MIB);
	printf("    # seed %lu\n", cfg.seed);
	printf("    # random_sequence: %lu steps (QUIRE_SEED, QUIRE_STEPS, QUIRE_VERBOSE)\n", steps);
	setup();
	mmr_run(&cfg, steps);
	printf("    # allocation failures reported: %lu\n", oom_reports);
	if (mmr.failed)
		printf("    # replay: QUIRE_SEED=%lu QUIRE_STEPS=%lu\n", cfg.seed, mmr.steps_done);
}

HOST_TEST(every_order_faulted)
{
	mmr_check_orders(true);
}

HOST_TEST(both_splits_happened)
{
	mmr_check_splits();
}

HOST_TEST(all_memory_back)
{
	mmr_end();
	if (!mmr.failed) {
		const char *text;
		size_t n = klog_new(&text);

		if (n) {
			HOST_FAIL("the kernel logged something at teardown");
			print_klog(text, n, 40);
		}
	}
	host_mm_exit();
}

HOST_TEST_MAIN(host_mm_random,
	       HOST_CASE(verify_catches_bad_mapcount),
	       HOST_CASE(verify_catches_bad_pins),
	       HOST_CASE(random_sequence),
	       HOST_CASE(every_order_faulted),
	       HOST_CASE(both_splits_happened),
	       HOST_CASE(all_memory_back));
