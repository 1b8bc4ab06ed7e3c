/*
 * Host tests of drivers/acpi and mm/numa.c on well-formed machines: the
 * exact node model of numa3 (as QEMU 7.2 describes it) through the RSDT and
 * the XSDT, a memoryless CPU node, no SRAT, no ACPI, no MADT, no SLIT,
 * tiers by HMAT latency and by distance, x2APIC entries and entry flags,
 * ISA interrupt source overrides.
 * Malformed tables and the fuzz are in test_acpi_malformed.c.
 */
#include "numa_checks.h"

HOST_TEST(numa3_rsdp_v0_rsdt)
{
	numa3();
	install();
	check_numa3(run());
	EXPECT_FALSE(acpi_tables.xsdt);
	EXPECT_EQ(acpi_tables.count, 4);
	EXPECT_TRUE(acpi_find_table("SRAT") != NULL);
	EXPECT_TRUE(acpi_find_table("DSDT") == NULL);
	blobs_free();
}

HOST_TEST(numa3_rsdp_v2_xsdt)
{
	numa3();
	mach.xsdt = true;
	install();
	check_numa3(run());
	EXPECT_TRUE(acpi_tables.xsdt);
	blobs_free();
}

/* Give a v2 RSDP an RSDT too (a copy of the XSDT's list), as firmware does. */
static void add_rsdt_copy(void)
{
	static struct tb t;
	struct blob *x = blob("XSDT");
	u32 n = (x->len - 36) / 8;
	struct acpi_rsdp *r = (struct acpi_rsdp *)boot_info.rsdp;

	tb_header(&t, "RSDT", 1);
	for (u32 i = 0; i < n; i++) {
		u64 a;

		__builtin_memcpy(&a, x->buf + 36 + 8 * i, 8);
		tb_put(&t, a, 4);
	}
	tb_finish(&t);
	blob_add("RSDT", TABLE_BASE - TABLE_STRIDE, t.data, t.len);
	blobs_map();
	r->rsdt_address = TABLE_BASE - TABLE_STRIDE;
	r->checksum = 0;
	r->checksum = (u8)-sum8(boot_info.rsdp, 20);
	r->extended_checksum = 0;
	r->extended_checksum = (u8)-sum8(boot_info.rsdp, 36);
}

HOST_TEST(bad_xsdt_falls_back_to_rsdt)
{
	u64 pos;

	numa3();
	mach.xsdt = true;
	install();
	add_rsdt_copy();
	blob("XSDT")->buf[40] ^= 0x55;
	pos = run();
	EXPECT_LOG(pos, "table 'XSDT' at 0x7ffe0000 has a bad checksum");
	EXPECT_LOG(pos, "XSDT unusable; falling back to the RSDT");
	EXPECT_FALSE(acpi_tables.xsdt);
	check_numa3(pos);
	blobs_free();
}

HOST_TEST(bad_extended_checksum_uses_rsdt)
{
	u64 pos;

	numa3();
	mach.xsdt = true;
	install();
	add_rsdt_copy();
	boot_info.rsdp[32] ^= 1;
	pos = run();
	EXPECT_LOG(pos, "RSDP has a bad extended checksum; using the RSDT");
	EXPECT_FALSE(acpi_tables.xsdt);
	check_numa3(pos);
	/* A v2 RSDP copy cut to 20 bytes: only the RSDT can be trusted. */
	boot_info.rsdp[32] ^= 1;
	boot_info.rsdp_len = 20;
	pos = run();
	EXPECT_LOG(pos, "using the RSDT");
	check_numa3(pos);
	blobs_free();
}

HOST_TEST(memoryless_cpu_node)
{
	static const int fb1[] = { 0, 2 }, fb0[] = { 0, 2 }, fb2[] = { 2, 0 };
	u64 pos;

	memoryless();
	install();
	pos = run();
	EXPECT_EQ(nr_node_ids, 3);
	EXPECT_EQ(numa_nodes[1].cpus, 0xc);
	EXPECT_EQ(numa_nodes[1].present_bytes, 0);
	EXPECT_TRUE(node_online(1));
	EXPECT_FALSE(node_has_memory(1));
	EXPECT_EQ(numa_mem_id_of(1), 0);
	EXPECT_EQ(numa_mem_id_of(0), 0);
	expect_fallback(1, 2, fb1);
	expect_fallback(0, 2, fb0);
	expect_fallback(2, 2, fb2);
	EXPECT_EQ(numa_nodes[1].tier, MEM_TIER_DRAM);
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_SLOW);
	EXPECT_EQ(numa_nodes[1].initiator, NUMA_NO_NODE);
	EXPECT_EQ(numa_nodes[2].read_latency_ns[1], 300);
	EXPECT_EQ(numa_nodes[1].read_latency_ns[0], 0);	/* no numbers for target 1 */
	EXPECT_LOG(pos, "numa: node 0 cpus 0-1 mem 1023 MiB tier dram\n");
	EXPECT_LOG(pos, "numa: node 1 cpus 2-3 mem 0 MiB tier dram\n");
	EXPECT_LOG(pos, "numa: node 1 distance 21 10 40\n");
	EXPECT_LOG(pos, "numa: node 1 fallback 0 2\n");
	EXPECT_LOG(pos, "numa: node 2 cpus none mem 511 MiB tier slow\n");
	check_invariants();
	blobs_free();
}


HOST_TEST(no_srat_one_node)
{
	u64 pos;

	numa3();
	mach.no_srat = true;
	install();
	pos = run();
	check_one_node(pos, 4);
	EXPECT_LOG(pos, "acpi: SLIT ignored: no usable SRAT");
	EXPECT_LOG(pos, "acpi: HMAT ignored: no usable SRAT");
	EXPECT_LOG(pos, "numa: node 0 cpus 0-3 mem 2047 MiB tier dram\n");
	EXPECT_LOG(pos, "numa: node 0 distance 10\n");
	EXPECT_LOG(pos, "numa: node 0 fallback 0\n");
	blobs_free();
}

HOST_TEST(no_acpi_at_all)
{
	u64 pos;

	numa3();
	install();
	boot_info.rsdp_len = 0;
	pos = run();
	EXPECT_LOG(pos, "acpi: no usable RSDP");
	EXPECT_LOG(pos, "acpi: no MADT: only the boot CPU is known");
	check_one_node(pos, 1);
	blobs_free();
}

HOST_TEST(no_madt_boot_cpu_only)
{
	u64 pos;

	numa3();
	mach.no_madt = true;
	install();
	pos = run();
	EXPECT_LOG(pos, "no MADT: only the boot CPU is known");
	EXPECT_EQ(nr_cpu_ids, 1);
	EXPECT_EQ(nr_node_ids, 3);
	EXPECT_EQ(numa_nodes[0].cpus, 1);
	EXPECT_EQ(numa_nodes[1].cpus, 0);
	EXPECT_EQ(numa_nodes[1].tier, MEM_TIER_SLOW);	/* now a CPU-less, farther node */
	EXPECT_NO_LOG(pos, "is in no SRAT domain");
	check_invariants();
	blobs_free();
}

HOST_TEST(no_slit_default_distances)
{
	static const u8 want[3][3] = { { 10, 20, 20 }, { 20, 10, 20 }, { 20, 20, 10 } };
	static const int fb1[] = { 1, 0, 2 };
	u64 pos;

	numa3();
	mach.slit_n = 0;
	install();
	pos = run();
	EXPECT_LOG(pos, "numa: no usable SLIT; distances are 10 local, 20 remote");
	expect_distances(want);
	expect_fallback(1, 3, fb1);			/* ties: lower id first */
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_SLOW);	/* by HMAT latency */
	EXPECT_LOG(pos, "numa: node 2 distance 20 20 10\n");
	check_invariants();
	blobs_free();
}

HOST_TEST(tier_by_distance_without_hmat)
{
	numa3();
	mach.hmat = false;
	install();
	(void)run();
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_SLOW);
	EXPECT_EQ(numa_nodes[2].read_latency_ns[0], 0);
	EXPECT_EQ(numa_nodes[2].initiator, NUMA_NO_NODE);
	check_invariants();
	blobs_free();
}

/* HMAT latency, when given, decides over distance: as fast as local is dram. */
HOST_TEST(tier_fast_cpuless_node_is_dram)
{
	numa3();
	mach.lat[0][2] = 8;
	mach.lat[1][2] = 8;
	install();
	(void)run();
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_DRAM);
	EXPECT_EQ(node_distance(0, 2), 30);
	/* Slow only if farther from every CPU node: here node 1 sees it as local. */
	mach.lat[0][2] = 25;
	mach.lat[1][2] = 7;
	install();
	(void)run();
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_DRAM);
	blobs_free();
}

/*
 * x2APIC entries, disabled and online-capable CPUs, disabled SRAT entries,
 * node ids in order of first appearance (domain 5 before domain 3), sparse
 * domain numbers in SLIT, hot-pluggable memory outside the firmware map.
 */
HOST_TEST(x2apic_flags_and_domain_order)
{
	u64 pos;

	memset(&mach, 0, sizeof(mach));
	add_cpu(0, 5);
	add_cpu(1, 5);
	mach.cpu[1].madt_flags = 0;			/* disabled: no logical id */
	add_cpu(2, 5);
	mach.cpu[2].madt_flags = ACPI_MADT_ONLINE_CAPABLE;
	add_cpu(300, 3);
	mach.cpu[3].x2apic = true;
	add_cpu(301, 3);
	mach.cpu[4].x2apic = true;
	mach.cpu[4].srat_flags = 0;			/* disabled: SRAT is silent */
	add_mem(0, 0x20000000, 5);
	add_mem(0x20000000, 0x20000000, 3);
	add_mem(0x40000000, 0x40000000, 4);
	mach.mem[2].flags = 0;				/* disabled */
	add_mem(0x100000000ULL, 0x40000000, 3);
	mach.mem[3].flags = ACPI_SRAT_MEM_ENABLED | ACPI_SRAT_MEM_HOT_PLUGGABLE;
	mach.slit_n = 6;
	for (int i = 0; i < 6; i++)
		for (int j = 0; j < 6; j++)
			mach.slit[i][j] = i == j ? 10 : 20;
	mach.slit[3][5] = mach.slit[5][3] = 17;
	add_mmap(0x100000, 0x40000000 - 0x100000, BOOT_MEM_AVAILABLE);
	install();
	pos = run();
	EXPECT_EQ(nr_cpu_ids, 4);
	EXPECT_EQ(acpi_madt.apic_id[1], 2);
	EXPECT_EQ(acpi_madt.apic_id[2], 300);
	EXPECT_TRUE(acpi_madt.x2apic[2]);
	EXPECT_EQ(acpi_srat.nr_domains, 2);
	EXPECT_EQ(numa_nodes[0].pxm, 5);
	EXPECT_EQ(numa_nodes[1].pxm, 3);
	EXPECT_EQ(cpu_to_node(0), 0);
	EXPECT_EQ(cpu_to_node(1), 0);
	EXPECT_EQ(cpu_to_node(2), 1);
	EXPECT_EQ(cpu_to_node(3), 0);
	EXPECT_LOG(pos, "numa: CPU 3 (APIC id 301) is in no SRAT domain; put on node 0");
	EXPECT_LOG(pos, "hotplug");
	EXPECT_EQ(node_distance(0, 1), 17);
	EXPECT_EQ(numa_nodes[0].present_bytes, 0x20000000 - 0x100000);
	EXPECT_EQ(numa_nodes[1].present_bytes, 0x20000000);
	EXPECT_NO_LOG(pos, "SLIT has");
	EXPECT_LOG(pos, "numa: node 0 cpus 0-1,3 mem 511 MiB tier dram\n");
	EXPECT_LOG(pos, "numa: node 1 cpus 2 mem 512 MiB tier dram\n");
	check_invariants();
	blobs_free();
}

/* Append a type 2 entry (10 bytes) to the MADT. */
static void add_override(u8 bus, u8 irq, u32 gsi, u16 flags)
{
	u8 *e = mach.madt_extra + mach.madt_extra_len;

	e[0] = ACPI_MADT_TYPE_INTERRUPT_OVERRIDE;
	e[1] = 10;
	e[2] = bus;
	e[3] = irq;
	__builtin_memcpy(e + 4, &gsi, 4);
	__builtin_memcpy(e + 8, &flags, 2);
	mach.madt_extra_len += 10;
}

/*
 * QEMU q35's overrides (IRQ 0 -> GSI 2; SCI and PCI lines level, active
 * high), then a second entry for IRQ 9 (replaces the first), one for a
 * bus that is not ISA and one for a non-ISA IRQ (both ignored).
 */
HOST_TEST(isa_interrupt_overrides)
{
	const u16 level_high = ACPI_MADT_TRIGGER_LEVEL | ACPI_MADT_POLARITY_ACTIVE_HIGH;
	u64 pos;

	numa3();
	add_override(0, 0, 2, 0);
	add_override(0, 5, 5, level_high);
	add_override(0, 9, 9, level_high);
	add_override(0, 9, 20, ACPI_MADT_TRIGGER_LEVEL | ACPI_MADT_POLARITY_ACTIVE_LOW);
	add_override(1, 4, 4, 0);
	add_override(0, 16, 16, 0);
	install();
	pos = run();
	check_numa3(pos);
	EXPECT_EQ(acpi_madt.nr_overrides, 3);
	EXPECT_EQ(acpi_madt.override[0].source_irq, 0);
	EXPECT_EQ(acpi_madt.override[0].gsi, 2);
	EXPECT_EQ(acpi_madt.override[0].flags, 0);
	EXPECT_EQ(acpi_madt.override[1].source_irq, 5);
	EXPECT_EQ(acpi_madt.override[1].flags, level_high);
	EXPECT_EQ(acpi_madt.override[2].source_irq, 9);
	EXPECT_EQ(acpi_madt.override[2].gsi, 20);
	EXPECT_EQ(acpi_madt.override[2].flags & ACPI_MADT_POLARITY_MASK,
		  ACPI_MADT_POLARITY_ACTIVE_LOW);
	EXPECT_LOG(pos, "acpi: MADT: ISA IRQ 0 -> GSI 2 (edge, active high)");
	EXPECT_LOG(pos, "acpi: MADT: ISA IRQ 5 -> GSI 5 (level, active high)");
	EXPECT_LOG(pos, "acpi: MADT: ISA IRQ 9 -> GSI 20 (level, active low)");
	EXPECT_LOG(pos, "override of bus 1 IRQ 4 is not an ISA IRQ; ignored");
	EXPECT_LOG(pos, "override of bus 0 IRQ 16 is not an ISA IRQ; ignored");
	blobs_free();
}

HOST_TEST_MAIN(host_acpi,
	       HOST_CASE(numa3_rsdp_v0_rsdt),
	       HOST_CASE(numa3_rsdp_v2_xsdt),
	       HOST_CASE(bad_xsdt_falls_back_to_rsdt),
	       HOST_CASE(bad_extended_checksum_uses_rsdt),
	       HOST_CASE(memoryless_cpu_node),
	       HOST_CASE(no_srat_one_node),
	       HOST_CASE(no_acpi_at_all),
	       HOST_CASE(no_madt_boot_cpu_only),
	       HOST_CASE(no_slit_default_distances),
	       HOST_CASE(tier_by_distance_without_hmat),
	       HOST_CASE(tier_fast_cpuless_node_is_dram),
	       HOST_CASE(x2apic_flags_and_domain_order),
	       HOST_CASE(isa_interrupt_overrides));
