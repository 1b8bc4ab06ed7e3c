/*
 * The machine as the firmware describes it, handed to mm/numa.c by the code
 * that discovered it: drivers/acpi (CPUs, affinity, distances, HMAT) and
 * the architecture's boot code (the firmware memory map) in the kernel,
 * arch/host in the host tests. Plain data: numa_init() learns the machine
 * from this and from nothing else. See docs/numa.md.
 *
 * Domains are indexes 0, 1, 2, ... in the order the affinity table first
 * names each proximity domain; numa_init() makes the index the node id.
 * Every domain below is such an index, less than nr_domains.
 */
#ifndef QUIRE_NUMA_DESC_H
#define QUIRE_NUMA_DESC_H

#include <quire/types.h>
#include <quire/numa.h>
#include <quire/printk.h>

#define NUMA_DESC_MAX_MEM	32	/* memory affinity ranges */
#define NUMA_DESC_MAX_RAM	128	/* usable RAM ranges of the firmware map */

struct numa_desc_cpu {
	u32 apic_id;			/* the hardware id, for messages */
	int domain;			/* -1: the affinity table does not place it */
};

/* A range of physical memory: RAM the firmware map offers, or an affinity range. */
struct numa_desc_mem {
	u64 base;
	u64 length;
	int domain;			/* affinity ranges only */
};

/* HMAT's kinds of figure; "access" stands for read and write when those are missing. */
enum numa_perf_kind {
	NUMA_PERF_ACCESS_LATENCY,
	NUMA_PERF_READ_LATENCY,
	NUMA_PERF_WRITE_LATENCY,
	NUMA_PERF_ACCESS_BANDWIDTH,
	NUMA_PERF_READ_BANDWIDTH,
	NUMA_PERF_WRITE_BANDWIDTH,
	NUMA_PERF_NR_KINDS,
};

struct numa_desc {
	/* Logical CPUs 0..nr_cpus-1, the boot CPU first; 0 when nothing lists them. */
	int nr_cpus;
	struct numa_desc_cpu cpu[MAX_CPUS];

	/* The firmware map's usable RAM: any order, may overlap or be empty. */
	int nr_ram;
	struct numa_desc_mem ram[NUMA_DESC_MAX_RAM];

	/* Affinity (SRAT): the domains, their ACPI numbers, their memory. */
	bool affinity_present;		/* parsed and usable */
	int nr_domains;
	u32 pxm[MAX_NUMNODES];
	int nr_mem;
	struct numa_desc_mem mem[NUMA_DESC_MAX_MEM];

	/* Distances (SLIT) between domains; LOCAL_DISTANCE means local. */
	bool distance_present;		/* usable: matches the affinity table */
	u8 distance[MAX_NUMNODES][MAX_NUMNODES];

	/* Performance (HMAT). */
	bool perf_present;
	int initiator[MAX_NUMNODES];	/* attached initiator of each memory domain, or -1 */
	/*
	 * perf[kind][initiator][target]: ns for latencies, MB/s for
	 * bandwidths; 0 when nothing is known, NUMA_HMAT_UNREACHABLE.
	 */
	u32 perf[NUMA_PERF_NR_KINDS][MAX_NUMNODES][MAX_NUMNODES];
};

/*
 * Append a usable RAM range. The array holds as many as the boot memory
 * map (BOOT_MMAP_MAX); one beyond that is dropped, and said so.
 */
static inline void numa_desc_add_ram(struct numa_desc *desc, u64 base, u64 length)
{
	if (desc->nr_ram < NUMA_DESC_MAX_RAM)
		desc->ram[desc->nr_ram++] = (struct numa_desc_mem){ base, length, -1 };
	else
		pr_warn("numa: more than %d RAM ranges; [%#llx, %#llx) is not used\n",
			NUMA_DESC_MAX_RAM, (unsigned long long)base,
			(unsigned long long)(base + length));
}

#endif
