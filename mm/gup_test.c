/*
 * /sys/kernel/debug/gup_test: Linux 6.12's CONFIG_GUP_TEST interface
 * (include/quire/uapi/gup_test.h), so that Linux's gup_test, gup_longterm
 * and cow selftests drive Quire's GUP (mm/gup.c) unmodified. Written from
 * the interface's description; docs/mm/gup.md says what each command does.
 *
 * Two kinds of command:
 *
 * - the one-shot ones (the benchmarks, the basic tests, the dump) get or
 *   pin a range nr_pages_per_call pages at a time, time the loop and the
 *   release that follows in microseconds, and release everything before
 *   returning;
 * - PIN_LONGTERM_TEST_START/STOP/READ hold a long-term pin between calls.
 *   As on Linux, that state is one for the whole kernel (a second START
 *   while it is held is EINVAL) and the release of any gup_test file drops
 *   it: a process's pins go at the latest when it exits and its files are
 *   closed.
 *
 * As on Linux, a get/pin call that fails (bad gup_flags included: the GUP
 * call is refused) only ends the loop: the command succeeds and reports in
 * size how far it went (0 when the first call failed).
 */
#define pr_fmt(fmt) "gup_test: " fmt
#include <quire/gup.h>
#include <quire/mm.h>
#include <quire/mm_types.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/sched.h>
#include <quire/rwsem.h>
#include <quire/mutex.h>
#include <quire/slab.h>
#include <quire/time.h>
#include <quire/uaccess.h>
#include <quire/printk.h>
#include <quire/errno.h>
#include <quire/uapi/gup_test.h>

/*
 * Linux 6.12's other FOLL_* values (include/linux/mm_types.h and
 * mm/internal.h there). gup_flags come from user space here, so they are
 * checked as Linux's GUP entry points check them.
 */
#define LFOLL_DUMP		(1U << 2)
#define LFOLL_NOWAIT		(1U << 4)
#define LFOLL_HWPOISON		(1U << 6)
#define LFOLL_ANON		(1U << 7)
#define LFOLL_SPLIT_PMD		(1U << 9)
#define LFOLL_PCI_P2PDMA	(1U << 10)
#define LFOLL_INTERRUPTIBLE	(1U << 11)
#define LFOLL_HONOR_NUMA_FAULT	(1U << 12)
/* Internal to Linux's GUP (FOLL_TOUCH ... FOLL_MADV_POPULATE): a caller passing one is refused. */
#define LFOLL_INTERNAL		(0x7fU << 16)
/* What gup_fast_fallback accepts at all. */
#define LFOLL_FAST_OK		(FOLL_WRITE | FOLL_LONGTERM | FOLL_FORCE | FOLL_PIN | FOLL_GET | \
				 FOLL_NOFAULT | LFOLL_PCI_P2PDMA | LFOLL_HONOR_NUMA_FAULT)
/* Accepted by Linux, with a meaning Quire's GUP does not implement. */
#define LFOLL_UNIMPLEMENTED	(LFOLL_DUMP | LFOLL_NOWAIT | LFOLL_HWPOISON | LFOLL_ANON | \
				 LFOLL_SPLIT_PMD | LFOLL_PCI_P2PDMA)
/* Hints with no effect on Quire (no NUMA hinting faults; GUP never sleeps interruptibly). */
#define LFOLL_NO_EFFECT		(LFOLL_INTERRUPTIBLE | LFOLL_HONOR_NUMA_FAULT)
/* What Quire's GUP is given. */
#define LFOLL_PASSED		(FOLL_WRITE | FOLL_GET | FOLL_FORCE | FOLL_NOFAULT | FOLL_LONGTERM)

/*
 * Linux's is_valid_gup_args (and, fast, gup_fast_fallback's mask) for
 * flags a caller gives an entry point that adds kind (FOLL_GET or
 * FOLL_PIN): 0, -EINVAL, or -ENOSYS for a flag Quire does not implement.
 * *pass: the flags to give Quire's GUP (bits Linux's slow path ignores
 * are dropped).
 */
static int check_gup_flags(unsigned int flags, unsigned int kind, bool fast, unsigned int *pass)
{
	unsigned int all = flags | kind;

	if (flags & LFOLL_INTERNAL)
		return -EINVAL;
	if ((all & (FOLL_GET | FOLL_PIN)) == (FOLL_GET | FOLL_PIN))
		return -EINVAL;
	if ((all & FOLL_LONGTERM) && !(all & FOLL_PIN))
		return -EINVAL;
	if ((all & FOLL_LONGTERM) && (all & LFOLL_PCI_P2PDMA))
		return -EINVAL;
	if (fast && (all & ~LFOLL_FAST_OK))
		return -EINVAL;
	if (flags & LFOLL_UNIMPLEMENTED) {
		pr_warn("gup_flags %#x: FOLL_* bits %#x are not implemented by Quire's GUP (ENOSYS)\n",
			flags, flags & LFOLL_UNIMPLEMENTED);
		return -ENOSYS;
	}
	*pass = flags & LFOLL_PASSED & ~FOLL_GET;
	return 0;
}

static bool is_pin_cmd(unsigned int cmd, const struct gup_test *gup)
{
	switch (cmd) {
	case PIN_FAST_BENCHMARK:
	case PIN_BASIC_TEST:
	case PIN_LONGTERM_BENCHMARK:
		return true;
	case DUMP_USER_PAGES_TEST:
		return gup->test_flags & GUP_TEST_FLAG_DUMP_PAGES_USE_PIN;
	default:
		return false;
	}
}

static bool is_fast_cmd(unsigned int cmd)
{
	return cmd == GUP_FAST_BENCHMARK || cmd == PIN_FAST_BENCHMARK;
}

/* One get/pin call of a command: pages taken, or -errno. mmap_lock held unless fast. */
static long gup_test_call(unsigned int cmd, const struct gup_test *gup, unsigned long addr,
			  unsigned long nr, struct page **pages)
{
	bool pin = is_pin_cmd(cmd, gup), fast = is_fast_cmd(cmd);
	unsigned int flags = gup->gup_flags, pass;
	int err;

	if (cmd == PIN_LONGTERM_BENCHMARK)
		flags |= FOLL_LONGTERM;
	err = check_gup_flags(flags, pin ? FOLL_PIN : FOLL_GET, fast, &pass);
	if (err)
		return err;
	if (fast)
		return pin ? pin_user_pages_fast(addr, (int)nr, pass, pages)
			   : get_user_pages_fast(addr, (int)nr, pass, pages);
	return pin ? pin_user_pages(addr, nr, pass, pages) : get_user_pages(addr, nr, pass, pages);
}

static void put_back_pages(unsigned int cmd, const struct gup_test *gup, struct page **pages,
			   unsigned long nr)
{
	if (is_pin_cmd(cmd, gup)) {
		unpin_user_pages(pages, nr);
		return;
	}
	for (unsigned long i = 0; i < nr; i++)
		put_page(pages[i]);
}

/* Untimed: every page a pin command took must be seen pinned (a warning otherwise, as Linux). */
static void verify_dma_pinned(unsigned int cmd, const struct gup_test *gup, struct page **pages,
			      unsigned long nr)
{
	if (!is_pin_cmd(cmd, gup) || cmd == DUMP_USER_PAGES_TEST)
		return;
	for (unsigned long i = 0; i < nr; i++) {
		struct folio *folio = page_folio(pages[i]);

		if (!folio_maybe_dma_pinned(folio)) {
			pr_err("WARNING: pages[%lu] (pfn %#lx) is NOT dma-pinned\n", i,
			       page_to_pfn(pages[i]));
			return;
		}
		if (cmd == PIN_LONGTERM_BENCHMARK && !folio_is_longterm_pinnable(folio)) {
			pr_err("WARNING: pages[%lu] (pfn %#lx) is NOT pinnable but pinned\n", i,
			       page_to_pfn(pages[i]));
			return;
		}
	}
}

/* Linux's dump_page, in Quire's words: what GUP holds on the page. */
static void dump_one_page(unsigned int index, u64 base, struct page *page)
{
	struct folio *folio = page_folio(page);

	pr_info("page #%u from user address %#llx: pfn %#lx, folio pfn %#lx order %u node %d, "
		"refcount %d mapcount %d pincount %d, %s, maybe_dma_pinned %d\n",
		index, (unsigned long long)base, page_to_pfn(page), folio_pfn(folio),
		folio_order(folio), folio_nid(folio), folio_ref_count(folio), folio_mapcount(folio),
		folio_test_large(folio) ? atomic_read(&folio->_pincount) : 0,
		folio_test_anon(folio) ? "anon" : "file", folio_maybe_dma_pinned(folio));
}

/* which_pages: 1-based page numbers; those past what was taken become 0 (the caller sees it). */
static void dump_pages_test(struct gup_test *gup, struct page **pages, unsigned long nr)
{
	for (unsigned int i = 0; i < GUP_TEST_MAX_PAGES_TO_DUMP; i++) {
		if (gup->which_pages[i] > nr) {
			pr_warn("which_pages[%u] = %u is past the %lu pages taken: zeroed\n", i,
				gup->which_pages[i], nr);
			gup->which_pages[i] = 0;
		}
	}
	for (unsigned int i = 0; i < GUP_TEST_MAX_PAGES_TO_DUMP; i++)
		if (gup->which_pages[i])
			dump_one_page(gup->which_pages[i] - 1, gup->addr,
				      pages[gup->which_pages[i] - 1]);
}

static u64 usec_since(u64 start_ns)
{
	return (ktime_get_ns() - start_ns) / 1000;
}

/* The one-shot commands. gup is a kernel copy, written back by the syscall layer on success. */
static long gup_test_run(unsigned int cmd, struct gup_test *gup)
{
	struct mm_struct *mm = current->mm;
	bool lock = !is_fast_cmd(cmd);
	unsigned long nr_pages = gup->size / PAGE_SIZE, i = 0;
	u64 addr, next, end = gup->addr + gup->size;
	struct page **pages;
	long nr;
	u64 t0;

	if (!mm)
		return -EFAULT;
	/* Linux's kvcalloc: too many pages for one array is ENOMEM. */
	if (nr_pages > KMALLOC_MAX_SIZE / sizeof(*pages))
		return -ENOMEM;
	pages = kcalloc(nr_pages ? nr_pages : 1, sizeof(*pages), GFP_KERNEL);
	if (!pages)
		return -ENOMEM;
	if (lock)
		down_read(&mm->mmap_lock);
	nr = gup->nr_pages_per_call;
	t0 = ktime_get_ns();
	for (addr = gup->addr; addr < end; addr = next) {
		if (nr != (long)gup->nr_pages_per_call)
			break;		/* the last call took fewer: stop */
		next = addr + (u64)nr * PAGE_SIZE;
		if (next > end) {
			next = end;
			nr = (long)((next - addr) / PAGE_SIZE);
		}
		nr = gup_test_call(cmd, gup, addr, (unsigned long)nr, pages + i);
		if (nr <= 0)
			break;
		i += (unsigned long)nr;
	}
	gup->get_delta_usec = usec_since(t0);
	gup->size = addr - gup->addr;

	verify_dma_pinned(cmd, gup, pages, i);
	if (cmd == DUMP_USER_PAGES_TEST)
		dump_pages_test(gup, pages, i);

	t0 = ktime_get_ns();
	put_back_pages(cmd, gup, pages, i);
	gup->put_delta_usec = usec_since(t0);

	if (lock)
		up_read(&mm->mmap_lock);
	kfree(pages);
	return 0;
}

/* ---- the long-term pin held between calls ---- */

static DEFINE_MUTEX(longterm_mutex);
static struct page **longterm_pages;	/* NULL: none held */
static unsigned long longterm_nr;	/* pages pinned in it */

static void longterm_stop(void)
{
	mutex_assert_held(&longterm_mutex);
	if (!longterm_pages)
		return;
	unpin_user_pages(longterm_pages, longterm_nr);
	kfree(longterm_pages);
	longterm_pages = NULL;
	longterm_nr = 0;
}

static long longterm_start(const struct pin_longterm_test *args)
{
	unsigned int flags = FOLL_LONGTERM;
	struct mm_struct *mm = current->mm;
	bool fast = args->flags & PIN_LONGTERM_TEST_FLAG_USE_FAST;
	unsigned long nr_pages;
	long ret = 0;

	mutex_assert_held(&longterm_mutex);
	if (longterm_pages)
		return -EINVAL;		/* one at a time, for the whole kernel */
	if (args->flags & ~(u32)(PIN_LONGTERM_TEST_FLAG_USE_WRITE | PIN_LONGTERM_TEST_FLAG_USE_FAST))
		return -EINVAL;
	if ((args->addr | args->size) & (PAGE_SIZE - 1))
		return -EINVAL;
	if (args->size > (u64)0x7fffffffffffffffULL /* LONG_MAX */)
		return -EINVAL;
	nr_pages = args->size / PAGE_SIZE;
	if (!nr_pages)
		return -EINVAL;
	if (!mm)
		return -EFAULT;
	if (nr_pages > KMALLOC_MAX_SIZE / sizeof(struct page *))
		return -ENOMEM;
	longterm_pages = kcalloc(nr_pages, sizeof(struct page *), GFP_KERNEL);
	if (!longterm_pages)
		return -ENOMEM;
	if (args->flags & PIN_LONGTERM_TEST_FLAG_USE_WRITE)
		flags |= FOLL_WRITE;
	if (!fast)
		down_read(&mm->mmap_lock);
	while (longterm_nr < nr_pages) {
		unsigned long addr = args->addr + longterm_nr * PAGE_SIZE;
		unsigned long left = nr_pages - longterm_nr;
		long got;

		if (fast)
			got = pin_user_pages_fast(addr, (int)min(left, 0x7fffffffUL /* INT_MAX */), flags,
						  longterm_pages + longterm_nr);
		else
			got = pin_user_pages(addr, left, flags, longterm_pages + longterm_nr);
		if (got <= 0) {
			ret = got ? got : -EFAULT;	/* GUP never takes 0 of a range: no endless loop */
			break;
		}
		longterm_nr += (unsigned long)got;
	}
	if (!fast)
		up_read(&mm->mmap_lock);
	if (ret)
		longterm_stop();
	return ret;
}

/* Copy the pinned pages' content, as they are now, to the user buffer at *uaddr. */
static long longterm_read(const u64 *uaddr)
{
	u64 dst = *uaddr;

	mutex_assert_held(&longterm_mutex);
	if (!longterm_pages)
		return -EINVAL;
	for (unsigned long i = 0; i < longterm_nr; i++, dst += PAGE_SIZE)
		if (copy_to_user((void *)dst, page_address(longterm_pages[i]), PAGE_SIZE))
			return -EFAULT;
	return 0;
}

long gup_test_ioctl(unsigned int cmd, unsigned long arg)
{
	long ret;

	switch (cmd) {
	case GUP_FAST_BENCHMARK:
	case PIN_FAST_BENCHMARK:
	case PIN_LONGTERM_BENCHMARK:
	case GUP_BASIC_TEST:
	case PIN_BASIC_TEST:
	case DUMP_USER_PAGES_TEST:
		return gup_test_run(cmd, (struct gup_test *)arg);
	case PIN_LONGTERM_TEST_START:
	case PIN_LONGTERM_TEST_STOP:
	case PIN_LONGTERM_TEST_READ:
		break;
	default:
		return -EINVAL;
	}
	mutex_lock(&longterm_mutex);
	if (cmd == PIN_LONGTERM_TEST_START) {
		ret = longterm_start((const struct pin_longterm_test *)arg);
	} else if (cmd == PIN_LONGTERM_TEST_READ) {
		ret = longterm_read((const u64 *)arg);
	} else {
		longterm_stop();
		ret = 0;
	}
	mutex_unlock(&longterm_mutex);
	return ret;
}

void gup_test_release(void)
{
	mutex_lock(&longterm_mutex);
	longterm_stop();
	mutex_unlock(&longterm_mutex);
}
