/*
 * The per-node counters as a table (the "memstat" boot option, and tests'
 * reference for the format). A new per-node counter adds its row here.
 */
#include <quire/mm.h>
#include <quire/numa.h>
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
