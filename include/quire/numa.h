/*
 * The NUMA node model, assembled by mm/numa.c from the machine description
 * (quire/numa_desc.h) that the discovering code hands over: on x86-64,
 * what drivers/acpi learned from SRAT, SLIT, HMAT and MADT, and the
 * firmware memory map. Node ids are Quire's, dense from 0, assigned in the
 * order SRAT first names each proximity domain (as Linux does); pxm keeps
 * the ACPI number. See docs/numa.md.
 */
#ifndef QUIRE_NUMA_H
#define QUIRE_NUMA_H

#include <quire/types.h>
#include <quire/mmzone.h>

#define MAX_CPUS		64
#define NUMA_MAX_RANGES		16
#define LOCAL_DISTANCE		10
#define REMOTE_DISTANCE		20

enum mem_tier {
	MEM_TIER_DRAM,		/* a node with CPUs, or as fast as one */
	MEM_TIER_SLOW,		/* CPU-less and farther/slower than every CPU node's own memory */
};

struct numa_range {
	phys_addr_t start;
	phys_addr_t end;	/* one past the last byte */
};

struct numa_node {
	bool online;			/* the node has CPUs or memory */
	int pxm;			/* ACPI proximity domain */
	u64 cpus;			/* bitmap of logical CPU ids */
	int nr_ranges;
	struct numa_range ranges[NUMA_MAX_RANGES];	/* SRAT memory ∩ firmware RAM, sorted */
	u64 present_bytes;		/* sum of ranges */
	u8 distance[MAX_NUMNODES];	/* SLIT row (LOCAL_DISTANCE to itself) */
	/* HMAT, from each initiator node; 0 when HMAT says nothing. */
	u32 read_latency_ns[MAX_NUMNODES];
	u32 read_bandwidth_mbs[MAX_NUMNODES];
	u32 write_latency_ns[MAX_NUMNODES];
	u32 write_bandwidth_mbs[MAX_NUMNODES];
	int initiator;			/* HMAT: the attached initiator node, or NUMA_NO_NODE */
	enum mem_tier tier;
	int nr_fallback;
	int fallback[MAX_NUMNODES];	/* allocation order: itself (if it has memory), then by distance */
};

extern struct numa_node numa_nodes[MAX_NUMNODES];
extern int nr_node_ids;			/* highest online node id + 1 */
extern int nr_cpu_ids;			/* logical CPUs known (MADT), enabled ones */

static inline bool node_online(int nid)
{
	return nid >= 0 && nid < MAX_NUMNODES && numa_nodes[nid].online;
}

static inline bool node_has_memory(int nid)
{
	return node_online(nid) && numa_nodes[nid].present_bytes > 0;
}

/* How many nodes a mask names (no popcount instruction or libgcc in the kernel). */
static inline int nodes_weight(u64 mask)
{
	int n = 0;

	for (; mask; mask &= mask - 1)
		n++;
	return n;
}

/* The nodes with memory, as a mask (bit n: node n). */
static inline u64 nodes_with_memory_mask(void)
{
	u64 m = 0;

	for (int n = 0; n < MAX_NUMNODES; n++)
		if (node_has_memory(n))
			m |= 1ULL << n;
	return m;
}

static inline bool node_has_cpus(int nid)
{
	return node_online(nid) && numa_nodes[nid].cpus != 0;
}

static inline int node_distance(int a, int b)
{
	return numa_nodes[a].distance[b];
}

#define for_each_online_node(nid) \
	for (nid = 0; nid < nr_node_ids; nid++) if (!node_online(nid)) {} else

/* The node of a logical CPU, or 0 when unknown. */
int cpu_to_node(int cpu);
/* The node whose memory contains phys, or NUMA_NO_NODE. */
int phys_to_nid(phys_addr_t phys);
/* The node the running CPU belongs to (CPU 0 until SMP). */
int numa_node_id(void);
/* The nearest node with memory to nid (itself if it has memory). */
int numa_mem_id_of(int nid);

struct numa_desc;
/*
 * Build the model from desc (without usable affinity, one node with all
 * of desc's RAM and every CPU). desc is only read, and not kept. Logs
 * problems; never fails.
 */
void numa_init(const struct numa_desc *desc);
/* The "numa: node ..." summary lines (docs/numa.md). */
void numa_print_summary(void);

/* HMAT numbers: 0 means HMAT gave none; this means "unreachable". */
#define NUMA_HMAT_UNREACHABLE	0xffffffffu
/* Memory the firmware map has but SRAT does not place, beyond which SRAT is not used. */
#define NUMA_UNCOVERED_MAX	(1ULL << 20)

#endif
