/*
 * The per-node counters as a table (the "memstat" boot option, and tests'
 * reference for the format), and summed over the nodes as /proc/meminfo.
 * A new per-node counter adds its row here.
 */
#include <quire/mm.h>
#include <quire/memory-failure.h>
#include <quire/numa.h>
#include <quire/huge_mm.h>
#include <quire/kernel.h>
#include <quire/printk.h>
#include <quire/cmdline.h>

bool memstat_at_boot;
CMDLINE_BOOL("memstat", memstat_at_boot, "print the per-node memory counters at boot");

static const char *const stat_names[NR_NODE_STAT_ITEMS] = {
	[NR_PRESENT_PAGES] = "present",
	[NR_FREE_PAGES] = "free",
	[NR_RESERVED_PAGES] = "reserved",
	[NR_KERNEL_PAGES] = "kernel",
	[NR_USER_PAGES] = "user",
	[NR_SLAB_PAGES] = "slab",
	[NR_CONTIG_PAGES] = "contig",
	[NR_FILE_PAGES] = "file",
};

static const char *const event_names[] = {
	[PGALLOC] = "pgalloc",
	[PGFREE] = "pgfree",
	[PGALLOC_FALLBACK] = "pgalloc_fallback",
	[PGALLOC_FAIL] = "pgalloc_fail",
};

/* Free blocks per order: the "buddyinfo" row of one node. */
static void print_buddyinfo(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);

	printk(KERN_INFO "memstat: node %d free blocks per order:", nid);
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		pr_cont(" %lu", pgdat->free_area[o].nr_free);
	pr_cont("\n");
}

void memstat_print(void)
{
	int nid;

	for_each_online_node(nid) {
		if (!NODE_DATA(nid)->node_mem_map) {
			pr_info("memstat: node %d has no memory\n", nid);
			continue;
		}
		printk(KERN_INFO "memstat: node %d pages:", nid);
		for (int i = 0; i < NR_NODE_STAT_ITEMS; i++)
			pr_cont(" %s %lu", stat_names[i], node_page_state(nid, i));
		pr_cont("\n");
		print_buddyinfo(nid);
		printk(KERN_INFO "memstat: node %d events:", nid);
		for (int i = 0; i <= PGALLOC_FAIL; i++)
			pr_cont(" %s %lu", event_names[i], node_event_count(nid, i));
		pr_cont("\n");
		printk(KERN_INFO "memstat: node %d folios allocated per order:", nid);
		for (int o = 0; o <= MAX_PAGE_ORDER; o++)
			pr_cont(" %lu", node_event_count(nid, FOLIO_ALLOC_ORDER_0 + o));
		pr_cont("\n");
	}
}

/* The sum of one counter over every node. */
static unsigned long global_page_state(enum node_stat_item item)
{
	unsigned long sum = 0;
	int nid;

	for_each_online_node(nid)
		sum += node_page_state(nid, item);
	return sum;
}

static int show_meminfo_kb(char *buf, size_t size, const char *name, unsigned long pages)
{
	return scnprintf(buf, size, "%-16s%8lu kB\n", name, pages << (PAGE_SHIFT - 10));
}

/*
 * /proc/meminfo, Linux's format ("MemTotal:       %8lu kB"), with the
 * lines Quire counts, in Linux's order:
 *   MemTotal      present less reserved pages (what sysinfo's totalram says)
 *   MemFree       the buddy allocator's free pages
 *   MemAvailable  the same: nothing else could be freed for a program (no
 *                 reclaim; the page cache is RAM files, as Linux's shmem)
 *   Buffers, SwapCached, SwapTotal, SwapFree   0: no block devices, no swap
 *   Cached        pages in files' page caches (NR_FILE_PAGES)
 *   Slab, SReclaimable, SUnreclaim   the slab's pages, none reclaimable
 *   HardwareCorrupted  frames memory_failure() poisoned (num_poisoned_pages)
 *   AnonHugePages  anonymous THPs mapped by a PMD (nr_anon_thps), 2 MiB each
 *   ShmemHugePages, ShmemPmdMapped, FileHugePages, FilePmdMapped   0: the
 *                 page cache holds 4 KiB folios only
 *   HugePages_*   0, Hugepagesize 2048 kB, Hugetlb 0: no hugetlb pool yet
 * Left out, not faked: Active/Inactive (no LRU lists), AnonPages and Mapped
 * (no count of mapped pages kept), Shmem, Dirty, KernelStack, PageTables,
 * Committed_AS and the rest Linux counts and Quire does not.
 */
int meminfo_proc_show(char *buf, size_t size)
{
	unsigned long total = global_page_state(NR_PRESENT_PAGES) -
			      global_page_state(NR_RESERVED_PAGES);
	unsigned long free = global_page_state(NR_FREE_PAGES);
	unsigned long slab = global_page_state(NR_SLAB_PAGES);
	int len = 0;

	len += show_meminfo_kb(buf + len, size - len, "MemTotal:", total);
	len += show_meminfo_kb(buf + len, size - len, "MemFree:", free);
	len += show_meminfo_kb(buf + len, size - len, "MemAvailable:", free);
	len += show_meminfo_kb(buf + len, size - len, "Buffers:", 0);
	len += show_meminfo_kb(buf + len, size - len, "Cached:", global_page_state(NR_FILE_PAGES));
	len += show_meminfo_kb(buf + len, size - len, "SwapCached:", 0);
	len += show_meminfo_kb(buf + len, size - len, "SwapTotal:", 0);
	len += show_meminfo_kb(buf + len, size - len, "SwapFree:", 0);
	len += show_meminfo_kb(buf + len, size - len, "Slab:", slab);
	len += show_meminfo_kb(buf + len, size - len, "SReclaimable:", 0);
	len += show_meminfo_kb(buf + len, size - len, "SUnreclaim:", slab);
	/* Linux's own format for this one: "HardwareCorrupted: %5lu kB". */
	len += scnprintf(buf + len, size - len, "HardwareCorrupted: %5lu kB\n",
			 num_poisoned_pages() << (PAGE_SHIFT - 10));
	len += show_meminfo_kb(buf + len, size - len, "AnonHugePages:",
			       nr_anon_thps() << HPAGE_PMD_ORDER);
	len += show_meminfo_kb(buf + len, size - len, "ShmemHugePages:", 0);
	len += show_meminfo_kb(buf + len, size - len, "ShmemPmdMapped:", 0);
	len += show_meminfo_kb(buf + len, size - len, "FileHugePages:", 0);
	len += show_meminfo_kb(buf + len, size - len, "FilePmdMapped:", 0);
	len += scnprintf(buf + len, size - len,
			 "HugePages_Total:   %5lu\nHugePages_Free:    %5lu\n"
			 "HugePages_Rsvd:    %5lu\nHugePages_Surp:    %5lu\n", 0UL, 0UL, 0UL, 0UL);
	len += show_meminfo_kb(buf + len, size - len, "Hugepagesize:", HPAGE_PMD_NR);
	len += show_meminfo_kb(buf + len, size - len, "Hugetlb:", 0);
	return len;
}
