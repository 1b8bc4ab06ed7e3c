/*
 * Checks shared by the ACPI/NUMA host tests: run the parsers and the node
 * model on the installed machine, search the log, the invariants every
 * model must satisfy, and the exact model of numa3.
 */
#ifndef TESTS_HOST_NUMA_CHECKS_H
#define TESTS_HOST_NUMA_CHECKS_H

#include "acpi_machine.h"
#include <quire/gfp.h>
#include <quire/numa.h>
#include <quire/numa_desc.h>
#include <quire/printk.h>

/* As the kernel boots: parse the tables, describe the machine, build the model. */
static __unused u64 run(void)
{
	static struct numa_desc desc;
	u64 pos = printk_log_pos();

	acpi_init();
	memset(&desc, 0, sizeof(desc));
	acpi_numa_describe(&desc);
	bootinfo_describe_ram(&desc);
	numa_init(&desc);
	numa_print_summary();
	return pos;
}

static __unused bool logged(u64 pos, const char *s)
{
	return printk_log_contains(pos, s);
}

#define EXPECT_LOG(pos, s)						\
	do {								\
		if (!logged(pos, s))					\
			HOST_FAIL("expected the log to contain \"%s\"", s); \
	} while (0)
#define EXPECT_NO_LOG(pos, s)						\
	do {								\
		if (logged(pos, s))					\
			HOST_FAIL("the log should not contain \"%s\"", s); \
	} while (0)

#define FALLBACK_WARN "numa: No NUMA configuration found; one node with all memory and CPUs"

static __unused u64 avail_sum(void)
{
	u64 sum = 0;

	for (u32 i = 0; i < boot_info.nr_mmap; i++)
		if (boot_info.mmap[i].type == BOOT_MEM_AVAILABLE)
			sum += boot_info.mmap[i].len;
	return sum;
}

/* The model every run must satisfy, whatever the tables said. */
static __unused void check_invariants(void)
{
	int nid;
	u64 total = 0;

	EXPECT_TRUE(nr_node_ids >= 1 && nr_node_ids <= MAX_NUMNODES);
	EXPECT_TRUE(nr_cpu_ids >= 1 && nr_cpu_ids <= MAX_CPUS);
	EXPECT_TRUE(node_online(nr_node_ids - 1));
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++) {
		int n = cpu_to_node(cpu);

		EXPECT_TRUE(node_online(n));
		EXPECT_TRUE(n >= 0 && n < MAX_NUMNODES && (numa_nodes[n].cpus >> cpu) & 1);
	}
	for_each_online_node(nid) {
		const struct numa_node *n = &numa_nodes[nid];
		u64 sum = 0;

		EXPECT_EQ(node_distance(nid, nid), LOCAL_DISTANCE);
		EXPECT_TRUE(n->nr_ranges >= 0 && n->nr_ranges <= NUMA_MAX_RANGES);
		for (int i = 0; i < n->nr_ranges; i++) {
			EXPECT_TRUE(n->ranges[i].start < n->ranges[i].end);
			if (i)
				EXPECT_TRUE(n->ranges[i - 1].end <= n->ranges[i].start);
			EXPECT_EQ(phys_to_nid(n->ranges[i].start), nid);
			sum += n->ranges[i].end - n->ranges[i].start;
		}
		EXPECT_EQ(sum, n->present_bytes);
		total += sum;
		EXPECT_TRUE(n->nr_fallback >= 0 && n->nr_fallback <= MAX_NUMNODES);
		if (node_has_memory(nid))
			EXPECT_EQ(n->fallback[0], nid);
		for (int i = 0; i < n->nr_fallback; i++) {
			EXPECT_TRUE(node_has_memory(n->fallback[i]));
			if (i)
				EXPECT_TRUE(node_distance(nid, n->fallback[i - 1]) <=
					    node_distance(nid, n->fallback[i]) ||
					    n->fallback[i - 1] == nid);
		}
		EXPECT_TRUE(node_has_memory(numa_mem_id_of(nid)) || !total);
	}
	EXPECT_TRUE(total <= avail_sum());
}

static __unused void expect_range(int nid, int i, u64 start, u64 end)
{
	const struct numa_node *n = &numa_nodes[nid];

	if (i >= n->nr_ranges) {
		HOST_FAIL("node %d has %d ranges, wanted range %d", nid, n->nr_ranges, i);
		return;
	}
	EXPECT_EQ(n->ranges[i].start, start);
	EXPECT_EQ(n->ranges[i].end, end);
}

static __unused void expect_fallback(int nid, int nr, const int *want)
{
	EXPECT_EQ(numa_nodes[nid].nr_fallback, nr);
	for (int i = 0; i < nr && i < numa_nodes[nid].nr_fallback; i++)
		EXPECT_EQ(numa_nodes[nid].fallback[i], want[i]);
}

static __unused void expect_distances(const u8 want[3][3])
{
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			EXPECT_EQ(node_distance(i, j), want[i][j]);
}

static const u8 numa3_slit[3][3] = { { 10, 21, 30 }, { 21, 10, 40 }, { 30, 40, 10 } };

/* The node model of numa3, exactly. */
static __unused void check_numa3(u64 pos)
{
	static const int fb0[] = { 0, 1, 2 }, fb1[] = { 1, 0, 2 }, fb2[] = { 2, 0, 1 };

	EXPECT_EQ(nr_node_ids, 3);
	EXPECT_EQ(nr_cpu_ids, 4);
	EXPECT_EQ(numa_nodes[0].cpus, 0x3);
	EXPECT_EQ(numa_nodes[1].cpus, 0xc);
	EXPECT_EQ(numa_nodes[2].cpus, 0);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(numa_nodes[i].pxm, i);
	EXPECT_EQ(numa_nodes[0].nr_ranges, 2);
	expect_range(0, 0, 0, 0x9fc00);
	expect_range(0, 1, 0x100000, 0x30000000);
	EXPECT_EQ(numa_nodes[1].nr_ranges, 1);
	expect_range(1, 0, 0x30000000, 0x60000000);
	EXPECT_EQ(numa_nodes[2].nr_ranges, 1);
	expect_range(2, 0, 0x60000000, 0x7ffe0000);
	EXPECT_EQ(numa_nodes[0].present_bytes, 0x9fc00 + 0x2ff00000);
	expect_distances(numa3_slit);
	EXPECT_EQ(numa_nodes[0].tier, MEM_TIER_DRAM);
	EXPECT_EQ(numa_nodes[1].tier, MEM_TIER_DRAM);
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_SLOW);
	expect_fallback(0, 3, fb0);
	expect_fallback(1, 3, fb1);
	expect_fallback(2, 3, fb2);
	/* HMAT: access numbers stand for read and write; 10 ns and 1024 MB/s units. */
	EXPECT_EQ(numa_nodes[0].read_latency_ns[0], 80);
	EXPECT_EQ(numa_nodes[0].read_latency_ns[1], 130);
	EXPECT_EQ(numa_nodes[2].read_latency_ns[0], 250);
	EXPECT_EQ(numa_nodes[2].read_latency_ns[1], 300);
	EXPECT_EQ(numa_nodes[2].write_latency_ns[1], 300);
	EXPECT_EQ(numa_nodes[0].read_bandwidth_mbs[0], 20480);
	EXPECT_EQ(numa_nodes[2].read_bandwidth_mbs[0], 6144);
	EXPECT_EQ(numa_nodes[2].write_bandwidth_mbs[1], 4096);
	EXPECT_EQ(numa_nodes[2].read_latency_ns[2], 0);	/* node 2 is no initiator */
	EXPECT_EQ(numa_nodes[0].initiator, 0);
	EXPECT_EQ(numa_nodes[1].initiator, 1);
	EXPECT_EQ(numa_nodes[2].initiator, 0);
	for (int cpu = 0; cpu < 4; cpu++)
		EXPECT_EQ(cpu_to_node(cpu), cpu / 2);
	EXPECT_EQ(numa_node_id(), 0);
	EXPECT_EQ(phys_to_nid(0x1000), 0);
	EXPECT_EQ(phys_to_nid(0x50000000), 1);
	EXPECT_EQ(phys_to_nid(0x7ffdffff), 2);
	EXPECT_EQ(phys_to_nid(0xa0000), NUMA_NO_NODE);
	EXPECT_EQ(phys_to_nid(0x7ffe0000), NUMA_NO_NODE);
	EXPECT_EQ(numa_mem_id_of(2), 2);
	EXPECT_EQ(acpi_madt.nr_ioapics, 1);
	EXPECT_LOG(pos, "numa: node 0 cpus 0-1 mem 767 MiB tier dram\n");
	EXPECT_LOG(pos, "numa: node 0 distance 10 21 30\n");
	EXPECT_LOG(pos, "numa: node 0 fallback 0 1 2\n");
	EXPECT_LOG(pos, "numa: node 1 cpus 2-3 mem 768 MiB tier dram\n");
	EXPECT_LOG(pos, "numa: node 1 distance 21 10 40\n");
	EXPECT_LOG(pos, "numa: node 1 fallback 1 0 2\n");
	EXPECT_LOG(pos, "numa: node 2 cpus none mem 511 MiB tier slow\n");
	EXPECT_LOG(pos, "numa: node 2 distance 30 40 10\n");
	EXPECT_LOG(pos, "numa: node 2 fallback 2 0 1\n");
	EXPECT_NO_LOG(pos, "No NUMA configuration");
	check_invariants();
}

static __unused void check_one_node(u64 pos, int cpus)
{
	static const int fb[] = { 0 };

	EXPECT_LOG(pos, FALLBACK_WARN);
	EXPECT_EQ(nr_node_ids, 1);
	EXPECT_EQ(nr_cpu_ids, cpus);
	EXPECT_EQ(numa_nodes[0].cpus, (1ULL << cpus) - 1);
	EXPECT_EQ(numa_nodes[0].present_bytes, avail_sum());
	EXPECT_EQ(numa_nodes[0].tier, MEM_TIER_DRAM);
	EXPECT_EQ(numa_nodes[0].pxm, -1);
	expect_fallback(0, 1, fb);
	EXPECT_EQ(node_distance(0, 0), LOCAL_DISTANCE);
	EXPECT_FALSE(node_online(1));
	check_invariants();
}

static __unused void rsdp_fix(void)
{
	struct acpi_rsdp *r = (struct acpi_rsdp *)boot_info.rsdp;

	r->checksum = 0;
	r->checksum = (u8)-sum8(boot_info.rsdp, 20);
	r->extended_checksum = 0;
	r->extended_checksum = (u8)-sum8(boot_info.rsdp, 36);
}

/* Run on numa3 after `corrupt`; the log must show `warning`. */
#define MALFORMED(corrupt, warning)					\
	({								\
		u64 __pos;						\
		numa3();						\
		install();						\
		corrupt;						\
		__pos = run();						\
		EXPECT_LOG(__pos, warning);				\
		check_invariants();					\
		__pos;							\
	})

#endif
