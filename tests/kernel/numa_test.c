/*
 * The node model as the booted kernel sees it (mm/numa.c, drivers/acpi):
 * what can be checked from inside on any topology. tests/qemu/
 * topology_check.py compares the summary lines with the QEMU options.
 */
#include <quire/ktest.h>
#include <quire/acpi.h>
#include <quire/bootinfo.h>
#include <quire/numa.h>
#include <quire/percpu.h>
#include <quire/preempt.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/gfp.h>

static int nodes_with_memory(void)
{
	int nid, n = 0;

	for_each_online_node(nid)
		n += node_has_memory(nid);
	return n;
}

/* RSDT on BIOS (RSDP revision 0), XSDT on UEFI (revision 2); tables found. */
static void acpi_root_table(struct ktest *t)
{
	if (!boot_info.rsdp_len)
		ktest_skip(t, "the loader gave no RSDP");
	KEXPECT_GT(t, acpi_tables.count, 0);
	KEXPECT_EQ(t, acpi_tables.xsdt, boot_info.rsdp[15] >= 2);
	KEXPECT_TRUE(t, acpi_find_table("APIC") != NULL);
	KEXPECT_TRUE(t, acpi_madt.present);
	KEXPECT_EQ(t, nr_cpu_ids, acpi_madt.nr_cpus);
	/* q35 always has an I/O APIC. */
	KEXPECT_GE(t, acpi_madt.nr_ioapics, 1);
	/* A SRAT the firmware gave is used: no topology here is malformed. */
	if (acpi_find_table("SRAT")) {
		KEXPECT_TRUE(t, acpi_srat.present);
		KEXPECT_EQ(t, numa_nodes[0].pxm, (int)acpi_srat.pxm[0]);
	} else {
		KEXPECT_EQ(t, nr_node_ids, 1);
	}
}

static void online_nodes_sane(struct ktest *t)
{
	int nid;

	KASSERT_GE(t, nr_node_ids, 1);
	KASSERT_LE(t, nr_node_ids, MAX_NUMNODES);
	KEXPECT_TRUE(t, node_online(nr_node_ids - 1));
	KEXPECT_GE(t, nodes_with_memory(), 1);
	for_each_online_node(nid)
		KEXPECT_TRUE(t, node_has_cpus(nid) || node_has_memory(nid));
}

/* Itself first when it has memory; every node with memory once; no memoryless node. */
static void fallback_lists(struct ktest *t)
{
	int nid;

	for_each_online_node(nid) {
		const struct numa_node *n = &numa_nodes[nid];
		u32 seen = 0;

		KEXPECT_EQ(t, n->nr_fallback, nodes_with_memory());
		if (node_has_memory(nid)) {
			KEXPECT_EQ(t, n->fallback[0], nid);
		}
		for (int i = 0; i < n->nr_fallback; i++) {
			int f = n->fallback[i];

			KEXPECT_TRUE(t, node_has_memory(f));
			KEXPECT_FALSE(t, seen & (1u << f));
			seen |= 1u << f;
			if (i > 0 && n->fallback[i - 1] != nid)
				KEXPECT_LE(t, node_distance(nid, n->fallback[i - 1]),
					   node_distance(nid, f));
		}
		KEXPECT_EQ(t, numa_mem_id_of(nid), n->fallback[0]);
	}
}

/* For a CPU node, a slow node never comes before a DRAM node. */
static void slow_after_dram(struct ktest *t)
{
	int nid;

	for_each_online_node(nid) {
		const struct numa_node *n = &numa_nodes[nid];
		bool slow_seen = false;

		if (!node_has_cpus(nid))
			continue;
		for (int i = 0; i < n->nr_fallback; i++) {
			bool slow = numa_nodes[n->fallback[i]].tier == MEM_TIER_SLOW;

			KEXPECT_FALSE(t, slow_seen && !slow);
			slow_seen |= slow;
		}
	}
}

static void tiers(struct ktest *t)
{
	int nid;

	for_each_online_node(nid) {
		if (numa_nodes[nid].tier != MEM_TIER_SLOW)
			continue;
		KEXPECT_FALSE(t, node_has_cpus(nid));
		KEXPECT_TRUE(t, node_has_memory(nid));
	}
	/* The boot CPU's node allocates from DRAM first. */
	KEXPECT_EQ(t, numa_nodes[numa_mem_id_of(numa_node_id())].tier, MEM_TIER_DRAM);
}

/* QEMU mirrors distances given one way, and 10 is local. */
static void distances_symmetric(struct ktest *t)
{
	int a, b;

	for_each_online_node(a) {
		KEXPECT_EQ(t, node_distance(a, a), LOCAL_DISTANCE);
		for_each_online_node(b) {
			KEXPECT_EQ(t, node_distance(a, b), node_distance(b, a));
			if (a != b)
				KEXPECT_GT(t, node_distance(a, b), LOCAL_DISTANCE);
		}
	}
}

static bool in_available(u64 start, u64 end)
{
	/* Available regions may be split in the map: walk from start on. */
	for (bool progress = true; start < end && progress;) {
		progress = false;
		for (u32 i = 0; i < boot_info.nr_mmap; i++) {
			const struct boot_mem_region *r = &boot_info.mmap[i];

			if (r->type == BOOT_MEM_AVAILABLE && r->base <= start &&
			    start < r->base + r->len) {
				start = r->base + r->len;
				progress = true;
			}
		}
	}
	return start >= end;
}

/* Node ranges: sorted, disjoint, inside the firmware's available memory. */
static void ranges_in_firmware_memory(struct ktest *t)
{
	u64 total = 0;
	int nid;

	for_each_online_node(nid) {
		const struct numa_node *n = &numa_nodes[nid];
		u64 sum = 0;

		for (int i = 0; i < n->nr_ranges; i++) {
			const struct numa_range *r = &n->ranges[i];

			KEXPECT_LT(t, r->start, r->end);
			KEXPECT_TRUE(t, in_available(r->start, r->end));
			if (i)
				KEXPECT_LE(t, n->ranges[i - 1].end, r->start);
			KEXPECT_EQ(t, phys_to_nid(r->start), nid);
			KEXPECT_EQ(t, phys_to_nid(r->end - 1), nid);
			sum += r->end - r->start;
		}
		KEXPECT_EQ(t, sum, n->present_bytes);
		total += sum;
	}
	KEXPECT_LE(t, total, bootinfo_available_bytes());
	/* SRAT may leave out at most 1 MiB of RAM (else it is not used). */
	KEXPECT_LE(t, bootinfo_available_bytes() - total, NUMA_UNCOVERED_MAX);
}

static void cpus_consistent(struct ktest *t)
{
	u64 all = 0;
	int nid;

	KASSERT_GE(t, nr_cpu_ids, 1);
	KASSERT_LE(t, nr_cpu_ids, MAX_CPUS);
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++) {
		int n = cpu_to_node(cpu);

		KEXPECT_TRUE(t, node_online(n));
		KEXPECT_TRUE(t, (numa_nodes[n].cpus >> cpu) & 1);
	}
	for_each_online_node(nid) {
		KEXPECT_EQ(t, all & numa_nodes[nid].cpus, 0);	/* one node per CPU */
		all |= numa_nodes[nid].cpus;
	}
	KEXPECT_EQ(t, all, nr_cpu_ids == 64 ? ~0ULL : (1ULL << nr_cpu_ids) - 1);
	/* The running CPU's node (pinned while asking). */
	preempt_disable();
	KEXPECT_EQ(t, numa_node_id(), cpu_to_node(smp_processor_id()));
	preempt_enable();
}

static unsigned int count_nodes(bool slow_only)
{
	unsigned int n = 0;
	int nid;

	for_each_online_node(nid)
		n += !slow_only || numa_nodes[nid].tier == MEM_TIER_SLOW;
	return n;
}

/* The summary: three lines per online node, in the documented format. */
static void summary_lines(struct ktest *t)
{
	static const char *const kinds[] = { "cpus", "distance", "fallback" };
	u64 pos = printk_log_pos();
	char line[64];
	int nid;

	numa_print_summary();
	KEXPECT_EQ(t, printk_log_count(pos, "numa: node "), 3 * count_nodes(false));
	KEXPECT_EQ(t, printk_log_count(pos, " tier slow\n"), count_nodes(true));
	for_each_online_node(nid) {
		for (int k = 0; k < 3; k++) {
			snprintf(line, sizeof(line), "numa: node %d %s ", nid, kinds[k]);
			KEXPECT_TRUE(t, printk_log_contains(pos, line));
		}
	}
}

KTEST_SUITE(numa,
	    KTEST_CASE(acpi_root_table),
	    KTEST_CASE(online_nodes_sane),
	    KTEST_CASE(fallback_lists),
	    KTEST_CASE(slow_after_dram),
	    KTEST_CASE(tiers),
	    KTEST_CASE(distances_symmetric),
	    KTEST_CASE(ranges_in_firmware_memory),
	    KTEST_CASE(cpus_consistent),
	    KTEST_CASE(summary_lines));
