/*
 * The THP controls and counters (include/quire/huge_mm.h, docs/mm/thp.md).
 *
 * Linux's meaning: the global "enabled" is always / madvise / never; each
 * size (16 KiB .. 2 MiB) is always / inherit / madvise / never, where
 * inherit follows the global setting. "madvise" means: only in VMAs with
 * MADV_HUGEPAGE. MADV_NOHUGEPAGE turns every size off for its VMA.
 * Defaults as Linux's: global always, 2 MiB inherit, the other sizes never.
 */
#define pr_fmt(fmt) "thp: " fmt
#include <quire/huge_mm.h>
#include <quire/migrate.h>
#include <quire/gup.h>
#include <quire/mmap.h>
#include <quire/mm.h>
#include <quire/numa.h>
#include <quire/atomic.h>
#include <quire/cmdline.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/printk.h>

static enum thp_mode global_mode = THP_ALWAYS;
static enum thp_mode order_mode[HPAGE_PMD_ORDER + 1] = {
	[HPAGE_PMD_ORDER] = THP_INHERIT,
};

static atomic_long_t thp_events[NR_THP_VM_EVENTS];
static atomic_long_t mthp_stats[HPAGE_PMD_ORDER + 1][NR_MTHP_STAT_ITEMS];
static atomic_long_t anon_thps_pmd_mapped;

const char *const thp_vm_event_names[NR_THP_VM_EVENTS] = {
	[THP_FAULT_ALLOC] = "thp_fault_alloc",
	[THP_FAULT_FALLBACK] = "thp_fault_fallback",
	[THP_SPLIT_PAGE] = "thp_split_page",
	[THP_SPLIT_PAGE_FAILED] = "thp_split_page_failed",
	[THP_DEFERRED_SPLIT_PAGE] = "thp_deferred_split_page",
	[THP_SPLIT_PMD] = "thp_split_pmd",
	[THP_COLLAPSE_ALLOC] = "thp_collapse_alloc",
	[THP_COLLAPSE_ALLOC_FAILED] = "thp_collapse_alloc_failed",
	[THP_ZERO_PAGE_ALLOC] = "thp_zero_page_alloc",
	[THP_ZERO_PAGE_ALLOC_FAILED] = "thp_zero_page_alloc_failed",
};

const char *const mthp_stat_names[NR_MTHP_STAT_ITEMS] = {
	[MTHP_STAT_ANON_FAULT_ALLOC] = "anon_fault_alloc",
	[MTHP_STAT_ANON_FAULT_FALLBACK] = "anon_fault_fallback",
	[MTHP_STAT_SPLIT] = "split",
	[MTHP_STAT_SPLIT_FAILED] = "split_failed",
	[MTHP_STAT_SPLIT_DEFERRED] = "split_deferred",
	[MTHP_STAT_NR_ANON] = "nr_anon",
	[MTHP_STAT_NR_ANON_PARTIALLY_MAPPED] = "nr_anon_partially_mapped",
};

static const char *const mode_names[] = {
	[THP_ALWAYS] = "always", [THP_INHERIT] = "inherit",
	[THP_MADVISE] = "madvise", [THP_NEVER] = "never",
};

static bool order_has_control(unsigned int order)
{
	return order <= HPAGE_PMD_ORDER && (THP_ORDERS_ANON & (1UL << order));
}

enum thp_mode thp_global_mode(void)
{
	return READ_ONCE(global_mode);
}

enum thp_mode thp_order_mode(unsigned int order)
{
	return order_has_control(order) ? READ_ONCE(order_mode[order]) : THP_NEVER;
}

int thp_set_global_mode(enum thp_mode mode)
{
	if (mode == THP_INHERIT || mode > THP_INHERIT)
		return -EINVAL;
	WRITE_ONCE(global_mode, mode);
	return 0;
}

int thp_set_order_mode(unsigned int order, enum thp_mode mode)
{
	if (!order_has_control(order) || mode > THP_INHERIT)
		return -EINVAL;
	WRITE_ONCE(order_mode[order], mode);
	return 0;
}

unsigned long thp_vma_allowable_orders(unsigned long vm_flags)
{
	unsigned long orders = 0;
	bool madvised = vm_flags & VM_HUGEPAGE;

	if (vm_flags & (VM_NOHUGEPAGE | VM_SHARED))
		return 0;
	for (unsigned int order = THP_ORDER_MIN; order <= HPAGE_PMD_ORDER; order++) {
		enum thp_mode mode = thp_order_mode(order);

		if (mode == THP_INHERIT)
			mode = thp_global_mode();
		if (mode == THP_ALWAYS || (mode == THP_MADVISE && madvised))
			orders |= 1UL << order;
	}
	return orders;
}

unsigned long thp_vma_suitable_orders(const struct vm_area_struct *vma, unsigned long orders)
{
	unsigned long suitable = 0;

	for (unsigned int order = 0; order <= HPAGE_PMD_ORDER; order++) {
		unsigned long size = PAGE_SIZE << order;

		if (!(orders & (1UL << order)) || vma->vm_end - vma->vm_start < size)
			continue;
		if (ALIGN_DOWN(vma->vm_end - size, size) >= vma->vm_start)
			suitable |= 1UL << order;
	}
	return suitable;
}

bool thp_vma_smaps_eligible(const struct vm_area_struct *vma)
{
	if (vma->vm_file || (vma->vm_flags & VM_SHARED))
		return false;
	return thp_vma_suitable_orders(vma, thp_vma_allowable_orders(vma->vm_flags)) != 0;
}

/* ---- sysfs text ---- */

static int show_modes(char *buf, size_t size, enum thp_mode cur, bool with_inherit)
{
	static const enum thp_mode order[] = { THP_ALWAYS, THP_INHERIT, THP_MADVISE, THP_NEVER };
	int len = 0;

	for (size_t i = 0; i < ARRAY_SIZE(order); i++) {
		if (order[i] == THP_INHERIT && !with_inherit)
			continue;
		len += scnprintf(buf + len, size - len, order[i] == cur ? "%s[%s]" : "%s%s",
				 len ? " " : "", mode_names[order[i]]);
	}
	len += scnprintf(buf + len, size - len, "\n");
	return len;
}

/*
 * Linux's sysfs_streq: the value ends at the first NUL or at len, one
 * newline at its end is dropped ("madvise\n", "madvise\0x"); the mode, or
 * -EINVAL for anything else ("madvise\n\n", "madvise\nx").
 */
static int parse_mode(const char *buf, size_t len, bool with_inherit)
{
	len = strnlen(buf, len);
	if (len && buf[len - 1] == '\n')
		len--;
	for (int m = 0; m < (int)ARRAY_SIZE(mode_names); m++) {
		if (m == THP_INHERIT && !with_inherit)
			continue;
		if (strlen(mode_names[m]) == len && !strncmp(buf, mode_names[m], len))
			return m;
	}
	return -EINVAL;
}

int thp_enabled_show(char *buf, size_t size)
{
	return show_modes(buf, size, thp_global_mode(), false);
}

int thp_enabled_store(const char *buf, size_t len)
{
	int mode = parse_mode(buf, len, false);

	return mode < 0 ? mode : thp_set_global_mode(mode);
}

/*
 * Settings Quire keeps and shows but that change nothing here, with
 * Linux's values and defaults: defrag (whether a THP allocation may stall
 * to compact or reclaim: Quire does neither, an allocation that finds no
 * block falls back to a smaller order at once) and shmem_enabled (THPs for
 * shared memory and tmpfs: Quire's page cache holds 4 KiB folios only).
 */
struct named_setting {
	const char *const *names;
	int nr, cur;
};

static const char *const defrag_names[] = { "always", "defer", "defer+madvise", "madvise", "never" };
static const char *const shmem_names[] = { "always", "within_size", "advise", "never", "deny", "force" };
static struct named_setting defrag = { defrag_names, ARRAY_SIZE(defrag_names), 3 };
static struct named_setting shmem_enabled = { shmem_names, ARRAY_SIZE(shmem_names), 3 };

static int setting_show(struct named_setting *s, char *buf, size_t size)
{
	int len = 0, cur = __atomic_load_n(&s->cur, __ATOMIC_RELAXED);

	for (int i = 0; i < s->nr; i++)
		len += scnprintf(buf + len, size - len, i == cur ? "%s[%s]" : "%s%s",
				 i ? " " : "", s->names[i]);
	return len + scnprintf(buf + len, size - len, "\n");
}

/* Linux's sysfs_streq, as parse_mode: one trailing newline is dropped. */
static int setting_store(struct named_setting *s, const char *buf, size_t len)
{
	len = strnlen(buf, len);
	if (len && buf[len - 1] == '\n')
		len--;
	for (int i = 0; i < s->nr; i++)
		if (strlen(s->names[i]) == len && !strncmp(buf, s->names[i], len)) {
			__atomic_store_n(&s->cur, i, __ATOMIC_RELAXED);
			return 0;
		}
	return -EINVAL;
}

int thp_defrag_show(char *buf, size_t size)
{
	return setting_show(&defrag, buf, size);
}

int thp_defrag_store(const char *buf, size_t len)
{
	return setting_store(&defrag, buf, len);
}

int thp_shmem_enabled_show(char *buf, size_t size)
{
	return setting_show(&shmem_enabled, buf, size);
}

int thp_shmem_enabled_store(const char *buf, size_t len)
{
	/* "deny" and "force" are for testing on Linux too; all are accepted. */
	return setting_store(&shmem_enabled, buf, len);
}

/*
 * Numbers of Linux's THP sysfs that change nothing here, kept so that
 * programs that save and restore the THP settings (Linux's selftests do)
 * find them: the khugepaged tunables, with Linux's defaults and ranges
 * (Quire has no khugepaged: nothing collapses small pages into a THP in
 * the background). use_zero_page does what Linux's does: 1 (the default),
 * a read fault of an empty 2 MiB block where a THP may go maps the huge
 * zero page (mm/huge_memory.c); 0, it maps the 4 KiB zero page.
 */
static struct {
	unsigned long value, min, max;
} num_settings[NR_THP_NUM_SETTINGS] = {
	[THP_USE_ZERO_PAGE] = { 1, 0, 1 },
	[KHUGEPAGED_DEFRAG] = { 1, 0, 1 },
	[KHUGEPAGED_ALLOC_SLEEP_MS] = { 60000, 0, 0xffffffffUL },
	[KHUGEPAGED_SCAN_SLEEP_MS] = { 10000, 0, 0xffffffffUL },
	[KHUGEPAGED_MAX_PTES_NONE] = { 511, 0, 511 },
	[KHUGEPAGED_MAX_PTES_SWAP] = { 64, 0, 511 },
	[KHUGEPAGED_MAX_PTES_SHARED] = { 256, 0, 511 },
	[KHUGEPAGED_PAGES_TO_SCAN] = { 4096, 1, 0xffffffffUL },
};

const char *const thp_num_setting_names[NR_THP_NUM_SETTINGS] = {
	[THP_USE_ZERO_PAGE] = "use_zero_page",
	[KHUGEPAGED_DEFRAG] = "defrag",
	[KHUGEPAGED_ALLOC_SLEEP_MS] = "alloc_sleep_millisecs",
	[KHUGEPAGED_SCAN_SLEEP_MS] = "scan_sleep_millisecs",
	[KHUGEPAGED_MAX_PTES_NONE] = "max_ptes_none",
	[KHUGEPAGED_MAX_PTES_SWAP] = "max_ptes_swap",
	[KHUGEPAGED_MAX_PTES_SHARED] = "max_ptes_shared",
	[KHUGEPAGED_PAGES_TO_SCAN] = "pages_to_scan",
};

int thp_num_setting_show(enum thp_num_setting which, char *buf, size_t size)
{
	return scnprintf(buf, size, "%lu\n",
			 __atomic_load_n(&num_settings[which].value, __ATOMIC_RELAXED));
}

/* A decimal number (one trailing newline or NUL), in the setting's range: else EINVAL. */
int thp_num_setting_store(enum thp_num_setting which, const char *buf, size_t len)
{
	char text[24];
	unsigned long long v;

	len = strnlen(buf, len);
	if (len && buf[len - 1] == '\n')
		len--;
	if (!len || len >= sizeof(text))
		return -EINVAL;
	memcpy(text, buf, len);
	text[len] = '\0';
	if (kstrtoull(text, 10, &v) || v < num_settings[which].min || v > num_settings[which].max)
		return -EINVAL;
	__atomic_store_n(&num_settings[which].value, (unsigned long)v, __ATOMIC_RELAXED);
	return 0;
}

bool thp_use_zero_page(void)
{
	return __atomic_load_n(&num_settings[THP_USE_ZERO_PAGE].value, __ATOMIC_RELAXED) != 0;
}

int thp_hpage_pmd_size_show(char *buf, size_t size)
{
	return scnprintf(buf, size, "%lu\n", (unsigned long)PMD_SIZE);
}

int thp_order_enabled_show(unsigned int order, char *buf, size_t size)
{
	if (!order_has_control(order))
		return -EINVAL;
	return show_modes(buf, size, thp_order_mode(order), true);
}

int thp_order_enabled_store(unsigned int order, const char *buf, size_t len)
{
	int mode = parse_mode(buf, len, true);

	return mode < 0 ? mode : thp_set_order_mode(order, mode);
}

/* ---- boot parameters ---- */

/* "64K", "2M", "2048k": the folio order of that size, or -EINVAL. */
static int parse_size_order(const char *s, size_t len)
{
	unsigned long long v = 0;
	size_t i = 0;

	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (s[i] - '0');
	if (i == 0 || i + 1 != len || v > (1UL << 20))
		return -EINVAL;
	switch (s[i]) {
	case 'K': case 'k': v <<= 10; break;
	case 'M': case 'm': v <<= 20; break;
	case 'G': case 'g': v <<= 30; break;
	default: return -EINVAL;
	}
	for (unsigned int order = 0; order <= HPAGE_PMD_ORDER; order++)
		if ((PAGE_SIZE << order) == v)
			return order_has_control(order) ? (int)order : -EINVAL;
	return -EINVAL;
}

/*
 * One "sizes:policy" group: sizes is a comma list of sizes or ranges
 * ("16K-64K"); every size must be one with a control. Nothing is changed
 * unless the whole group is valid.
 */
static int parse_group(const char *g, size_t len)
{
	const char *colon = memchr(g, ':', len);
	unsigned long orders = 0;
	const char *s = g;
	int mode;

	if (!colon)
		return -EINVAL;
	mode = parse_mode(colon + 1, g + len - colon - 1, true);
	if (mode < 0)
		return mode;
	while (s < colon) {
		const char *end = memchr(s, ',', colon - s), *dash;
		int lo, hi;

		end = end ? end : colon;
		dash = memchr(s, '-', end - s);
		lo = parse_size_order(s, (dash ? dash : end) - s);
		hi = dash ? parse_size_order(dash + 1, end - dash - 1) : lo;
		if (lo < 0 || hi < 0 || lo > hi)
			return -EINVAL;
		for (int o = lo; o <= hi; o++)
			orders |= 1UL << o;
		s = end + 1;
	}
	for (unsigned int o = 0; o <= HPAGE_PMD_ORDER; o++)
		if (orders & THP_ORDERS_ANON & (1UL << o))
			order_mode[o] = mode;
	return 0;
}

int thp_anon_parse(const char *value)
{
	const char *g = value;
	int err = 0;

	if (!value || !*value)
		return -EINVAL;
	while (*g) {
		const char *end = strchr(g, ';');
		size_t len = end ? (size_t)(end - g) : strlen(g);

		if (parse_group(g, len)) {
			pr_warn("thp_anon=: cannot parse \"%.*s\" (sizes like 16K-64K,2M, then "
				":always|inherit|madvise|never); that group is ignored\n", (int)len, g);
			err = -EINVAL;
		}
		g += len + (end ? 1 : 0);
	}
	return err;
}
CMDLINE_CALL("thp_anon", thp_anon_parse,
	     "anonymous THP sizes, e.g. 16K-64K:always;2M:inherit (Linux's syntax)");

static int transparent_hugepage_parse(const char *value)
{
	int mode = value ? parse_mode(value, strlen(value), false) : -EINVAL;

	return mode < 0 ? -EINVAL : thp_set_global_mode(mode);
}
CMDLINE_CALL("transparent_hugepage", transparent_hugepage_parse,
	     "global THP mode: always, madvise or never");

/* ---- counters ---- */

void count_thp_event(enum thp_vm_event item)
{
	atomic_long_inc(&thp_events[item]);
}

unsigned long thp_event_read(enum thp_vm_event item)
{
	return atomic_long_read(&thp_events[item]);
}

void mod_mthp_stat(unsigned int order, enum mthp_stat_item item, long delta)
{
	if (order <= HPAGE_PMD_ORDER)
		atomic_long_add(delta, &mthp_stats[order][item]);
}

unsigned long mthp_stat_read(unsigned int order, enum mthp_stat_item item)
{
	return order <= HPAGE_PMD_ORDER ? atomic_long_read(&mthp_stats[order][item]) : 0;
}

void mod_nr_anon_thps(long delta)
{
	atomic_long_add(delta, &anon_thps_pmd_mapped);
}

unsigned long nr_anon_thps(void)
{
	return atomic_long_read(&anon_thps_pmd_mapped);
}

int vmstat_show(char *buf, size_t size)
{
	static const struct { const char *name; int item; } stats[] = {
		{ "nr_free_pages", NR_FREE_PAGES },
		{ "nr_user_pages", NR_USER_PAGES },
		{ "nr_kernel_pages", NR_KERNEL_PAGES },
	};
	unsigned long anon_thp = nr_anon_thps();
	int len = 0, nid;

	for (size_t i = 0; i < ARRAY_SIZE(stats); i++) {
		unsigned long sum = 0;

		for_each_online_node(nid)
			if (NODE_DATA(nid)->node_mem_map)
				sum += node_page_state(nid, stats[i].item);
		len += scnprintf(buf + len, size - len, "%s %lu\n", stats[i].name, sum);
	}
	len += scnprintf(buf + len, size - len, "nr_anon_transparent_hugepages %lu\n", anon_thp);
	for (int i = 0; i < NR_THP_VM_EVENTS; i++)
		len += scnprintf(buf + len, size - len, "%s %lu\n", thp_vm_event_names[i],
				 thp_event_read(i));
	for (int i = 0; i < NR_MIGRATE_EVENTS; i++)
		len += scnprintf(buf + len, size - len, "%s %ld\n", migrate_event_names[i],
				 atomic_long_read(&migrate_events[i]));
	for (int i = 0; i < NR_GUP_EVENTS; i++)
		len += scnprintf(buf + len, size - len, "%s %ld\n", gup_event_names[i],
				 atomic_long_read(&gup_events[i]));
	return len;
}
