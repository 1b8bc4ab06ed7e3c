/*
 * Host tests of drivers/acpi and mm/numa.c on malformed input: bad RSDP,
 * bad checksums, truncated tables and entries, entries of length 0, SLIT
 * and HMAT that disagree with SRAT, too many CPUs, ranges and nodes. Each
 * must warn and fall back sanely, never crash or read out of bounds (ASan,
 * UBSan). Last, a seeded fuzz of byte flips and truncations over valid
 * tables (QUIRE_FUZZ_SEED, QUIRE_FUZZ_ITERS to change it).
 */
#include "numa_checks.h"
#include "../lib/random.h"



HOST_TEST(bad_rsdp)
{
	u64 pos;

	pos = MALFORMED(boot_info.rsdp[0] = 'X', "acpi: RSDP has a bad signature");
	check_one_node(pos, 1);
	pos = MALFORMED(boot_info.rsdp[8] ^= 1, "acpi: RSDP has a bad checksum");
	check_one_node(pos, 1);
	pos = MALFORMED(boot_info.rsdp_len = 12, "acpi: no usable RSDP");
	check_one_node(pos, 1);
	pos = MALFORMED((((struct acpi_rsdp *)boot_info.rsdp)->rsdt_address = 0, rsdp_fix()),
			"RSDT: null table address");
	check_one_node(pos, 1);
	blobs_free();
}

HOST_TEST(table_bad_checksum)
{
	u64 pos = MALFORMED(blob("SRAT")->buf[60] ^= 0x10,
			    "acpi: RSDT: table 'SRAT' at 0x7ffe8000 has a bad checksum, skipped");

	check_one_node(pos, 4);
	pos = MALFORMED(blob("RSDT")->buf[36] ^= 0x10,
			"table 'RSDT' at 0x7ffe0000 has a bad checksum");
	check_one_node(pos, 1);
	blobs_free();
}

HOST_TEST(table_truncated)
{
	struct blob *b;
	u64 pos;

	/* The header claims more than the memory holds. */
	pos = MALFORMED(blob_truncate(blob("SRAT"), 100), "is not mapped (host)");
	check_one_node(pos, 4);
	pos = MALFORMED(blob_truncate(blob("SLIT"), 20), "is not mapped (host)");
	EXPECT_LOG(pos, "no usable SLIT");
	/* A length too small to hold the header, or absurdly large. */
	pos = MALFORMED((b = blob("HMAT"), put_le(b->buf + 4, 10, 4), blob_fix(b)),
			"table 'HMAT' at 0x7fff0000 has a bad length 10");
	pos = MALFORMED((b = blob("APIC"), b->buf[7] = 0x40, blob_fix(b)), "bad length");
	EXPECT_LOG(pos, "no MADT");
	/* Fixed parts cut short, with a consistent length and checksum. */
	pos = MALFORMED((b = blob("SRAT"), b->buf[4] = 40, b->buf[5] = 0,
			 blob_truncate(b, 40), blob_fix(b)), "SRAT is truncated (40 bytes)");
	check_one_node(pos, 4);
	pos = MALFORMED((b = blob("APIC"), b->buf[4] = 40, b->buf[5] = 0,
			 blob_truncate(b, 40), blob_fix(b)), "MADT is truncated (40 bytes)");
	pos = MALFORMED((b = blob("SLIT"), b->buf[4] = 40, b->buf[5] = 0,
			 blob_truncate(b, 40), blob_fix(b)), "SLIT is truncated (40 bytes)");
	pos = MALFORMED((b = blob("HMAT"), b->buf[4] = 38, b->buf[5] = 0,
			 blob_truncate(b, 38), blob_fix(b)), "HMAT is truncated (38 bytes)");
	blobs_free();
}

HOST_TEST(table_unreachable)
{
	/* The RSDT's HMAT pointer now leads nowhere: numa3 without HMAT numbers. */
	(void)MALFORMED((put_le(blob("RSDT")->buf + 36 + 12, 0xdead0000, 4),
			 blob_fix(blob("RSDT"))),
			"[mem 0xdead0000+36] is not mapped");

	EXPECT_EQ(acpi_tables.count, 3);
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_SLOW);
	EXPECT_EQ(numa_nodes[2].read_latency_ns[0], 0);
	blobs_free();
}

static void set_u8_and_fix(const char *sig, size_t off, u8 v)
{
	struct blob *b = blob(sig);

	b->buf[off] = v;
	blob_fix(b);
}

HOST_TEST(entry_length_zero)
{
	u64 pos;

	/* The first SRAT entry has length 0: the walk must stop, not spin. */
	pos = MALFORMED(set_u8_and_fix("SRAT", 48 + 1, 0),
			"has length 0; rest of the table ignored");
	EXPECT_LOG(pos, "SRAT has no enabled entries; not used");
	check_one_node(pos, 4);
	pos = MALFORMED(set_u8_and_fix("APIC", 44 + 1, 0),
			"has length 0; rest of the table ignored");
	EXPECT_LOG(pos, "MADT lists no usable CPU");
	pos = MALFORMED(set_u8_and_fix("SRAT", 48 + 1, 1),
			"has length 1; rest of the table ignored");
	/* HMAT structures have 32-bit lengths. */
	pos = MALFORMED((set_u8_and_fix("HMAT", 40 + 4, 0)),
			"HMAT: structure of type 0 at offset 40 has length 0; rest ignored");
	EXPECT_EQ(numa_nodes[2].read_latency_ns[0], 0);
	blobs_free();
}

HOST_TEST(entry_past_end)
{
	struct blob *b;
	u64 pos;

	/* The last SRAT entry (node 2's memory) claims 200 bytes. */
	pos = MALFORMED((b = blob("SRAT"), set_u8_and_fix("SRAT", b->len - 40 + 1, 200)),
			"SRAT: entry of type 1 at offset");
	EXPECT_LOG(pos, "runs past the table; ignored");
	/* Node 2's RAM is now in no SRAT range: SRAT is not used. */
	EXPECT_LOG(pos, "numa: SRAT covers 1535 MiB of the 2047 MiB of RAM; not used");
	check_one_node(pos, 4);
	/* A table whose length leaves a one-byte stub of an entry. */
	pos = MALFORMED((numa3(), mach.madt_extra_len = 1, install()),
			"APIC: truncated entry at offset");
	check_numa3(pos);
	blobs_free();
}

HOST_TEST(entry_too_short)
{
	static const u8 short_mem[] = { ACPI_SRAT_TYPE_MEMORY_AFFINITY, 8, 2, 0, 0, 0, 0, 0 };
	static const u8 short_lapic[] = { ACPI_MADT_TYPE_LOCAL_APIC, 4, 9, 9 };
	static const u8 short_x2apic[] = { ACPI_MADT_TYPE_LOCAL_X2APIC, 12, 0, 0, 9, 9, 0, 0,
					   1, 0, 0, 0 };
	u64 pos;

	pos = MALFORMED((numa3(), __builtin_memcpy(mach.srat_extra, short_mem, 8),
			 mach.srat_extra_len = 8, install()),
			"SRAT: entry of type 1 is 8 bytes, under the 40 it needs; skipped");
	check_numa3(pos);
	pos = MALFORMED((numa3(), __builtin_memcpy(mach.madt_extra, short_lapic, 4),
			 __builtin_memcpy(mach.madt_extra + 4, short_x2apic, 12),
			 mach.madt_extra_len = 16, install()),
			"MADT: entry of type 0 is 4 bytes, under the 8 it needs; skipped");
	EXPECT_LOG(pos, "MADT: entry of type 9 is 12 bytes, under the 16 it needs; skipped");
	check_numa3(pos);
	blobs_free();
}

HOST_TEST(madt_duplicates_and_too_many_cpus)
{
	u64 pos;

	pos = MALFORMED((numa3(), add_cpu(1, 0), install()), "MADT: APIC id 1 listed twice");
	check_numa3(pos);
	numa3();
	mach.nr_cpus = 0;
	for (u32 i = 0; i < 70; i++)
		add_cpu(i, i < 35 ? 0 : 1);
	install();
	pos = run();
	EXPECT_LOG(pos, "MADT: more than 64 CPUs; APIC id 64 ignored");
	EXPECT_EQ(nr_cpu_ids, MAX_CPUS);
	EXPECT_EQ(cpu_to_node(63), 1);
	EXPECT_LOG(pos, "numa: node 0 cpus 0-34 mem 767 MiB tier dram\n");
	EXPECT_LOG(pos, "numa: node 1 cpus 35-63 mem 768 MiB tier dram\n");
	check_invariants();
	blobs_free();
}

HOST_TEST(srat_too_many_ranges_or_domains)
{
	u64 pos;

	numa3();
	mach.nr_mem = 0;
	for (int i = 0; i < 40; i++)
		add_mem((u64)i << 24, 1 << 24, i & 1);
	add_mem(40ULL << 24, 0x80000000 - (40ULL << 24), 2);
	install();
	pos = run();
	EXPECT_LOG(pos, "SRAT: more than 32 memory ranges");
	EXPECT_LOG(pos, "SRAT describes more than Quire can hold; not used");
	check_one_node(pos, 4);

	numa3();
	mach.nr_mem = 0;
	mach.slit_n = 0;
	mach.hmat = false;
	for (u32 i = 0; i < 10; i++)
		add_mem((u64)i << 27, 1 << 27, i);
	install();
	pos = run();
	EXPECT_LOG(pos, "SRAT: more than 8 proximity domains (domain 8)");
	check_one_node(pos, 4);
	blobs_free();
}

HOST_TEST(too_many_ranges_per_node)
{
	u64 pos;

	numa3();
	mach.nr_mmap = 0;
	for (int i = 0; i < 20; i++)
		add_mmap(0x1000000ULL * (i + 1), 0x800000, BOOT_MEM_AVAILABLE);
	install();
	pos = run();
	EXPECT_LOG(pos, "numa: node 0 has more than 16 memory ranges; "
		   "[mem 0x11000000-0x117fffff] ignored");
	EXPECT_EQ(numa_nodes[0].nr_ranges, NUMA_MAX_RANGES);
	EXPECT_EQ(numa_nodes[0].present_bytes, 16ULL * 0x800000);
	check_invariants();
	blobs_free();
}

HOST_TEST(srat_overlap_and_coverage)
{
	u64 pos;

	numa3();
	mach.mem[2].base = 0x28000000;		/* node 1 reaches into node 0 */
	mach.mem[2].len = 0x38000000;
	install();
	pos = run();
	EXPECT_LOG(pos, "numa: SRAT puts [mem 0x28000000-0x2fffffff] on both node 0 and node 1");
	check_one_node(pos, 4);

	numa3();
	mach.nr_mem = 2;			/* only node 0's memory */
	install();
	pos = run();
	EXPECT_LOG(pos, "numa: SRAT covers 767 MiB of the 2047 MiB of RAM; not used");
	check_one_node(pos, 4);

	/* Under 1 MiB left out is tolerated (and reported). */
	numa3();
	mach.mem[0].len = 0x9f000;
	install();
	pos = run();
	EXPECT_LOG(pos, "numa: 3 KiB of RAM is in no SRAT range; not used");
	EXPECT_EQ(nr_node_ids, 3);

	numa3();
	add_mem(~0ULL - 0x1000, 0x10000, 2);
	install();
	pos = run();
	EXPECT_LOG(pos, "wraps around; ignored");
	check_numa3(pos);
	blobs_free();
}

HOST_TEST(slit_malformed)
{
	u64 pos;

	/* Two localities for three SRAT domains. */
	numa3();
	mach.slit_n = 2;
	install();
	pos = run();
	EXPECT_LOG(pos, "SLIT has 2 localities but SRAT has domains 0-2");
	EXPECT_LOG(pos, "SLIT does not cover every SRAT domain; not used");
	EXPECT_LOG(pos, "numa: no usable SLIT; distances are 10 local, 20 remote");
	EXPECT_EQ(node_distance(0, 2), REMOTE_DISTANCE);
	check_invariants();

	/* Four localities: it warns, and the three SRAT names are used. */
	numa3();
	mach.slit_n = 4;
	for (int i = 0; i < 4; i++)
		mach.slit[3][i] = mach.slit[i][3] = i == 3 ? 10 : 50;
	install();
	pos = run();
	EXPECT_LOG(pos, "SLIT has 4 localities but SRAT has domains 0-2");
	check_numa3(pos);

	pos = MALFORMED((mach.slit[1][1] = 0, install()),
			"SLIT: distance 0 from domain 1 to 1 is impossible; not used");
	EXPECT_EQ(node_distance(1, 1), LOCAL_DISTANCE);
	pos = MALFORMED((mach.slit[2][0] = 9, install()),
			"SLIT: distance 9 from domain 2 to 0 is impossible; not used");
	pos = MALFORMED((put_le(blob("SLIT")->buf + 36 + 5, 1, 1),
			 blob_fix(blob("SLIT"))),
			"SLIT: 1099511627779 localities do not fit in its 53 bytes; not used");
	pos = MALFORMED((put_le(blob("SLIT")->buf + 36, 0, 8),
			 blob_fix(blob("SLIT"))), "SLIT: 0 localities do not fit");
	blobs_free();
}

HOST_TEST(hmat_malformed)
{
	u64 pos;

	/* Initiator list names domain 7, which SRAT does not know. */
	pos = MALFORMED((mach.init_pxm[1] = 7, install()),
			"HMAT: access latency names domain 7, not in SRAT; ignored");
	EXPECT_EQ(numa_nodes[2].read_latency_ns[0], 250);
	EXPECT_EQ(numa_nodes[2].read_latency_ns[1], 0);
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_SLOW);
	pos = MALFORMED((mach.targ_pxm[2] = 9, install()), "names domain 9, not in SRAT");
	EXPECT_EQ(numa_nodes[2].read_latency_ns[0], 0);
	pos = MALFORMED((mach.mpda_init[2] = 6, install()),
			"HMAT: memory domain 2 / initiator 6 not in SRAT; skipped");
	EXPECT_EQ(numa_nodes[2].initiator, NUMA_NO_NODE);
	/* Counts far beyond the structure (first locality structure at 40 + 3 * 40). */
	pos = MALFORMED((put_le(blob("HMAT")->buf + 160 + 12, 0xffffffff, 4),
			 blob_fix(blob("HMAT"))),
			"HMAT: access latency for 4294967295 x 3 domains does not fit in 64 bytes");
	EXPECT_EQ(numa_nodes[2].read_latency_ns[0], 0);
	EXPECT_EQ(numa_nodes[2].read_bandwidth_mbs[0], 6144);
	pos = MALFORMED((put_le(blob("HMAT")->buf + 160 + 24, 0, 8),
			 blob_fix(blob("HMAT"))), "HMAT: access latency has base unit 0; skipped");
	pos = MALFORMED(set_u8_and_fix("HMAT", 160 + 9, 17), "HMAT: unknown data type 17; skipped");
	pos = MALFORMED(set_u8_and_fix("HMAT", 160 + 4, 20),
			"HMAT: locality structure of 20 bytes is truncated; skipped");
	pos = MALFORMED(set_u8_and_fix("HMAT", 40 + 4, 24),
			"HMAT: proximity structure of 24 bytes is truncated; skipped");
	pos = MALFORMED(set_u8_and_fix("HMAT", 8, 1),
			"HMAT revision 1 (before ACPI 6.3) is not supported");
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_SLOW);	/* by distance */
	/* Entries of 0xffff mean unreachable; a huge base unit saturates. */
	pos = MALFORMED((mach.lat[0][2] = 0xffff, mach.bw_base = 1ULL << 62, install()),
			"numa: HMAT");
	EXPECT_EQ(numa_nodes[2].read_latency_ns[0], NUMA_HMAT_UNREACHABLE);
	EXPECT_EQ(numa_nodes[0].read_bandwidth_mbs[0], NUMA_HMAT_UNREACHABLE);
	EXPECT_EQ(numa_nodes[2].tier, MEM_TIER_SLOW);
	(void)pos;
	blobs_free();
}

/* ---- fuzz: corrupted tables never crash the parsers or break the model ---- */

static void corrupt(struct blob *b)
{
	int n = 1 + (int)(rng() % 8);

	switch (rng() % 4) {
	case 0:		/* flip bytes, keep the checksum right so parsing goes on */
	case 1:
		for (int i = 0; i < n && b->len; i++)
			b->buf[rng() % b->len] ^= (u8)(1 + rng() % 255);
		if (b->len >= 10 && rng() % 4)
			blob_fix(b);
		break;
	case 2:		/* truncate the memory, and sometimes the length to match */
		blob_truncate(b, rng() % (b->len + 1));
		if (b->len >= 10 && rng() % 2) {
			put_le(b->buf + 4, b->len, 4);
			blob_fix(b);
		}
		break;
	default:	/* a random entry length or count field */
		if (b->len > 36) {
			size_t off = 36 + rng() % (b->len - 36);

			b->buf[off] = (u8)(rng() % 3 == 0 ? 0 : rng());
			blob_fix(b);
		}
		break;
	}
}

HOST_TEST(fuzz_tables)
{
	const char *e = getenv("QUIRE_FUZZ_SEED");
	const char *it = getenv("QUIRE_FUZZ_ITERS");
	u64 seed = e ? strtoull(e, NULL, 0) : 0x5eed0acb1ULL;
	long iters = it ? strtol(it, NULL, 0) : 5000;
	long numa_runs = 0, one_node = 0;

	printf("    # fuzz_tables: seed %#llx, %ld iterations "
	       "(QUIRE_FUZZ_SEED, QUIRE_FUZZ_ITERS)\n", (unsigned long long)seed, iters);
	rng_state = seed ? seed : 1;
	for (long i = 0; i < iters && !host_case_state.failures; i++) {
		if (rng() % 2)
			numa3();
		else
			memoryless();
		mach.xsdt = rng() % 2;
		install();
		for (int k = 0, n = 1 + (int)(rng() % 3); k < n; k++) {
			int which = (int)(rng() % (nr_blobs + 1));

			if (which == nr_blobs) {	/* the RSDP copy */
				boot_info.rsdp[rng() % 36] ^= (u8)(1 + rng() % 255);
				if (rng() % 2)
					boot_info.rsdp_len = (u32)(rng() % 40);
			} else {
				corrupt(&blobs[which]);
			}
		}
		(void)run();
		check_invariants();
		if (host_case_state.failures)
			printf("    # fuzz_tables: failed at iteration %ld\n", i);
		numa_runs += numa_nodes[0].pxm >= 0;
		one_node += nr_node_ids == 1;
	}
	/* Evidence that the corruption reaches past the checksums into the parsers. */
	printf("    # fuzz_tables: %ld runs built nodes from SRAT, %ld ended with one node\n",
	       numa_runs, one_node);
	blobs_free();
}

HOST_TEST_MAIN(host_acpi_malformed,
	       HOST_CASE(bad_rsdp),
	       HOST_CASE(table_bad_checksum),
	       HOST_CASE(table_truncated),
	       HOST_CASE(table_unreachable),
	       HOST_CASE(entry_length_zero),
	       HOST_CASE(entry_past_end),
	       HOST_CASE(entry_too_short),
	       HOST_CASE(madt_duplicates_and_too_many_cpus),
	       HOST_CASE(srat_too_many_ranges_or_domains),
	       HOST_CASE(too_many_ranges_per_node),
	       HOST_CASE(srat_overlap_and_coverage),
	       HOST_CASE(slit_malformed),
	       HOST_CASE(hmat_malformed),
	       HOST_CASE(fuzz_tables));
