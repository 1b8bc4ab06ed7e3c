/*
 * The NUMA node model: nodes, their CPUs and memory ranges, distances,
 * HMAT numbers, tiers and allocation fallback order, assembled from the
 * machine description the discovering code hands to numa_init() (struct
 * numa_desc: what drivers/acpi learned and the firmware memory map).
 * Without usable affinity (SRAT) there is one node with all memory and
 * every CPU, as in Linux. Generic code: it builds unchanged into the host
 * tests. See docs/numa.md.
 */
#define pr_fmt(fmt) "numa: " fmt
#include <quire/numa.h>
#include <quire/numa_desc.h>
#include <quire/percpu.h>
#include <quire/gfp.h>
#include <quire/kernel.h>
#include <quire/printk.h>
#include <quire/string.h>

struct numa_node numa_nodes[MAX_NUMNODES];
int nr_node_ids;
int nr_cpu_ids;
static int cpu_node_map[MAX_CPUS];

/* Scratch range lists. Static: the boot stack is only 16 KiB. */
struct nid_range {
	u64 start;
	u64 end;
	int nid;
};

#define NUMA_MAX_PIECES		256

static struct nid_range avail[NUMA_DESC_MAX_RAM];	/* firmware RAM, sorted, merged */
static int nr_avail;
static struct nid_range pieces[NUMA_MAX_PIECES];	/* SRAT memory ∩ avail */
static int nr_pieces;

int cpu_to_node(int cpu)
{
	if (cpu < 0 || cpu >= MAX_CPUS)
		return 0;
	return cpu_node_map[cpu];
}

int numa_node_id(void)
{
	return cpu_to_node(smp_processor_id());
}

int phys_to_nid(phys_addr_t phys)
{
	int nid;

	for_each_online_node(nid) {
		const struct numa_node *n = &numa_nodes[nid];

		for (int i = 0; i < n->nr_ranges; i++)
			if (phys >= n->ranges[i].start && phys < n->ranges[i].end)
				return nid;
	}
	return NUMA_NO_NODE;
}

int numa_mem_id_of(int nid)
{
	if (nid < 0 || nid >= MAX_NUMNODES)
		nid = numa_node_id();
	return numa_nodes[nid].nr_fallback ? numa_nodes[nid].fallback[0] : nid;
}

/* Insertion sort by start address: the lists hold a few dozen entries. */
static void sort_ranges(struct nid_range *r, int n)
{
	for (int i = 1; i < n; i++) {
		struct nid_range x = r[i];
		int j = i;

		for (; j > 0 && r[j - 1].start > x.start; j--)
			r[j] = r[j - 1];
		r[j] = x;
	}
}

/* The available RAM of the firmware map, sorted, overlaps and neighbours merged. */
static u64 collect_available(const struct numa_desc *desc)
{
	int n = min(desc->nr_ram, NUMA_DESC_MAX_RAM);
	u64 total = 0;
	int out = 0;

	nr_avail = 0;
	for (int i = 0; i < n; i++) {
		const struct numa_desc_mem *r = &desc->ram[i];

		if (!r->length || r->base + r->length < r->base)
			continue;
		avail[nr_avail++] = (struct nid_range){ r->base, r->base + r->length, NUMA_NO_NODE };
	}
	sort_ranges(avail, nr_avail);
	for (int i = 0; i < nr_avail; i++) {
		if (out && avail[i].start <= avail[out - 1].end)
			avail[out - 1].end = max(avail[out - 1].end, avail[i].end);
		else
			avail[out++] = avail[i];
	}
	nr_avail = out;
	for (int i = 0; i < nr_avail; i++)
		total += avail[i].end - avail[i].start;
	return total;
}

static void add_range(int nid, u64 start, u64 end)
{
	struct numa_node *n = &numa_nodes[nid];

	if (n->nr_ranges == NUMA_MAX_RANGES) {
		pr_warn("node %d has more than %d memory ranges; [mem %#llx-%#llx] ignored\n",
			nid, NUMA_MAX_RANGES, (unsigned long long)start,
			(unsigned long long)(end - 1));
		return;
	}
	n->ranges[n->nr_ranges++] = (struct numa_range){ start, end };
	n->present_bytes += end - start;
}

/*
 * Intersect SRAT's memory ranges with the firmware's available RAM. Fails
 * (and SRAT is not used) when two nodes claim the same memory or when SRAT
 * leaves more than NUMA_UNCOVERED_MAX of RAM without a node, as Linux does.
 */
static bool srat_memory(const struct numa_desc *desc, u64 avail_bytes)
{
	u64 covered = 0;
	int out = 0;

	nr_pieces = 0;
	for (int m = 0; m < min(desc->nr_mem, NUMA_DESC_MAX_MEM); m++) {
		const struct numa_desc_mem *a = &desc->mem[m];
		u64 mend = a->base + a->length;

		for (int i = 0; i < nr_avail; i++) {
			u64 s = max(a->base, avail[i].start), e = min(mend, avail[i].end);

			if (s >= e)
				continue;
			if (nr_pieces == NUMA_MAX_PIECES) {
				pr_warn("SRAT and the memory map make more than %d ranges\n",
					NUMA_MAX_PIECES);
				return false;
			}
			pieces[nr_pieces++] = (struct nid_range){ s, e, a->domain };
		}
	}
	sort_ranges(pieces, nr_pieces);
	for (int i = 0; i < nr_pieces; i++) {
		struct nid_range *prev = out ? &pieces[out - 1] : NULL;

		if (prev && pieces[i].start < prev->end && pieces[i].nid != prev->nid) {
			pr_warn("SRAT puts [mem %#llx-%#llx] on both node %d and node %d\n",
				(unsigned long long)pieces[i].start,
				(unsigned long long)(min(prev->end, pieces[i].end) - 1),
				prev->nid, pieces[i].nid);
			return false;
		}
		if (prev && pieces[i].start <= prev->end && pieces[i].nid == prev->nid)
			prev->end = max(prev->end, pieces[i].end);
		else
			pieces[out++] = pieces[i];
	}
	nr_pieces = out;
	for (int i = 0; i < nr_pieces; i++)
		covered += pieces[i].end - pieces[i].start;
	if (avail_bytes - covered > NUMA_UNCOVERED_MAX) {
		pr_warn("SRAT covers %llu MiB of the %llu MiB of RAM; not used\n",
			(unsigned long long)(covered >> 20),
			(unsigned long long)(avail_bytes >> 20));
		return false;
	}
	if (covered < avail_bytes)
		pr_info("%llu KiB of RAM is in no SRAT range; not used\n",
			(unsigned long long)((avail_bytes - covered) >> 10));
	for (int i = 0; i < nr_pieces; i++)
		add_range(pieces[i].nid, pieces[i].start, pieces[i].end);
	return true;
}

static void set_cpu_node(int cpu, int nid)
{
	cpu_node_map[cpu] = nid;
	numa_nodes[nid].cpus |= 1ULL << cpu;
}

static void srat_cpus(const struct numa_desc *desc)
{
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++) {
		int d = desc->nr_cpus ? desc->cpu[cpu].domain : -1;

		if (d < 0) {
			if (desc->nr_cpus)	/* else the missing CPU list was reported */
				pr_warn("CPU %d (APIC id %u) is in no SRAT domain; put on node 0\n",
					cpu, desc->cpu[cpu].apic_id);
			d = 0;
		}
		set_cpu_node(cpu, d);
	}
}

static void numa_reset(void)
{
	memset(numa_nodes, 0, sizeof(numa_nodes));
	memset(cpu_node_map, 0, sizeof(cpu_node_map));
	for (int i = 0; i < MAX_NUMNODES; i++) {
		numa_nodes[i].pxm = -1;
		numa_nodes[i].initiator = NUMA_NO_NODE;
		for (int j = 0; j < MAX_NUMNODES; j++)
			numa_nodes[i].distance[j] = i == j ? LOCAL_DISTANCE : REMOTE_DISTANCE;
	}
}

/* Linux's dummy_numa_init: one node, all memory, every CPU. */
static void numa_dummy_init(void)
{
	numa_reset();
	pr_warn("No NUMA configuration found; one node with all memory and CPUs\n");
	for (int i = 0; i < nr_avail; i++)
		add_range(0, avail[i].start, avail[i].end);
	for (int cpu = 0; cpu < nr_cpu_ids; cpu++)
		set_cpu_node(cpu, 0);
}

/* The figure of this kind, else the "access" one standing for it. */
static u32 hmat_pick(const struct numa_desc *desc, enum numa_perf_kind kind,
		     enum numa_perf_kind fallback, int init, int target)
{
	u32 v = desc->perf[kind][init][target];

	return v ? v : desc->perf[fallback][init][target];
}

/* HMAT's figures for node n (domain i) as a target, from each initiator j. */
static void srat_hmat(const struct numa_desc *desc, struct numa_node *n, int i, int nd)
{
	n->initiator = desc->initiator[i];
	for (int j = 0; j < nd; j++) {
		n->read_latency_ns[j] = hmat_pick(desc, NUMA_PERF_READ_LATENCY,
						  NUMA_PERF_ACCESS_LATENCY, j, i);
		n->write_latency_ns[j] = hmat_pick(desc, NUMA_PERF_WRITE_LATENCY,
						   NUMA_PERF_ACCESS_LATENCY, j, i);
		n->read_bandwidth_mbs[j] = hmat_pick(desc, NUMA_PERF_READ_BANDWIDTH,
						     NUMA_PERF_ACCESS_BANDWIDTH, j, i);
		n->write_bandwidth_mbs[j] = hmat_pick(desc, NUMA_PERF_WRITE_BANDWIDTH,
						      NUMA_PERF_ACCESS_BANDWIDTH, j, i);
	}
}

static void srat_distances_and_hmat(const struct numa_desc *desc)
{
	int nd = min(desc->nr_domains, MAX_NUMNODES);

	if (!desc->distance_present && nd > 1)
		pr_warn("no usable SLIT; distances are %d local, %d remote\n",
			LOCAL_DISTANCE, REMOTE_DISTANCE);
	for (int i = 0; i < nd; i++) {
		struct numa_node *n = &numa_nodes[i];

		n->pxm = (int)desc->pxm[i];
		for (int j = 0; j < nd && desc->distance_present; j++)
			n->distance[j] = desc->distance[i][j];
		if (desc->perf_present)
			srat_hmat(desc, n, i, nd);
	}
}

/* Itself first when it has memory, then the other nodes with memory by distance. */
static void build_fallback(int nid)
{
	struct numa_node *n = &numa_nodes[nid];
	int j;

	n->nr_fallback = 0;
	if (node_has_memory(nid))
		n->fallback[n->nr_fallback++] = nid;
	for (;;) {
		int best = -1;

		for_each_online_node(j) {
			bool listed = false;

			if (!node_has_memory(j))
				continue;
			for (int k = 0; k < n->nr_fallback; k++)
				listed |= n->fallback[k] == j;
			if (listed)
				continue;
			/* Strictly nearer wins, so ties go to the lower id. */
			if (best < 0 || node_distance(nid, j) < node_distance(nid, best))
				best = j;
		}
		if (best < 0)
			break;
		n->fallback[n->nr_fallback++] = best;
	}
}

/*
 * Is CPU node c's access to m worse than to c's own memory (its nearest
 * node with memory)? By HMAT read latency when HMAT gives both numbers,
 * else by SLIT distance.
 */
static bool farther_than_own_memory(int c, int m)
{
	int own = numa_mem_id_of(c);
	u32 lm = numa_nodes[m].read_latency_ns[c];
	u32 lo = numa_nodes[own].read_latency_ns[c];

	if (lm && lo)
		return lm > lo;
	return node_distance(c, m) > node_distance(c, own);
}

static enum mem_tier node_tier(int m)
{
	int c, cpu_nodes = 0;

	if (node_has_cpus(m) || !node_has_memory(m))
		return MEM_TIER_DRAM;
	for_each_online_node(c) {
		if (!node_has_cpus(c))
			continue;
		cpu_nodes++;
		if (!farther_than_own_memory(c, m))
			return MEM_TIER_DRAM;
	}
	return cpu_nodes ? MEM_TIER_SLOW : MEM_TIER_DRAM;
}

static void print_hmat(void)
{
	int t, i;

	for_each_online_node(i) {
		for_each_online_node(t) {
			const struct numa_node *n = &numa_nodes[t];

			if (!n->read_latency_ns[i] && !n->read_bandwidth_mbs[i])
				continue;
			pr_info("HMAT: node %d -> node %d: read latency %u ns, "
				"read bandwidth %u MB/s\n",
				i, t, n->read_latency_ns[i], n->read_bandwidth_mbs[i]);
		}
	}
}

void numa_init(const struct numa_desc *desc)
{
	u64 avail_bytes;
	bool from_srat = false;
	int nid;

	numa_reset();
	nr_cpu_ids = desc->nr_cpus > 0 ? min(desc->nr_cpus, MAX_CPUS) : 1;
	avail_bytes = collect_available(desc);
	if (desc->affinity_present && srat_memory(desc, avail_bytes)) {
		srat_cpus(desc);
		srat_distances_and_hmat(desc);
		from_srat = true;
	} else {
		numa_dummy_init();
	}
	nr_node_ids = 0;
	for (int i = 0; i < MAX_NUMNODES; i++) {
		numa_nodes[i].online = numa_nodes[i].cpus || numa_nodes[i].present_bytes;
		if (numa_nodes[i].online)
			nr_node_ids = i + 1;
	}
	for_each_online_node(nid)
		build_fallback(nid);
	for_each_online_node(nid)
		numa_nodes[nid].tier = node_tier(nid);
	if (from_srat && desc->perf_present)
		print_hmat();
}

/* "0-1,4": the CPUs of a bitmap as ranges, or "none". */
static void format_cpus(char *buf, size_t size, u64 cpus)
{
	int pos = 0;

	if (!cpus) {
		scnprintf(buf, size, "none");
		return;
	}
	buf[0] = '\0';
	for (int c = 0; c < MAX_CPUS; c++) {
		int last = c;

		if (!((cpus >> c) & 1))
			continue;
		while (last + 1 < MAX_CPUS && ((cpus >> (last + 1)) & 1))
			last++;
		pos += scnprintf(buf + pos, size - pos, pos ? ",%d" : "%d", c);
		if (last > c)
			pos += scnprintf(buf + pos, size - pos, "-%d", last);
		c = last;
	}
}

void numa_print_summary(void)
{
	char buf[256];
	int nid;

	for_each_online_node(nid) {
		const struct numa_node *n = &numa_nodes[nid];
		int pos = 0;

		format_cpus(buf, sizeof(buf), n->cpus);
		pr_info("node %d cpus %s mem %llu MiB tier %s\n", nid, buf,
			(unsigned long long)(n->present_bytes >> 20),
			n->tier == MEM_TIER_SLOW ? "slow" : "dram");
		for (int j = 0; j < nr_node_ids; j++)
			pos += scnprintf(buf + pos, sizeof(buf) - pos, " %d",
					 node_distance(nid, j));
		pr_info("node %d distance%s\n", nid, buf);
		pos = 0;
		buf[0] = '\0';
		for (int k = 0; k < n->nr_fallback; k++)
			pos += scnprintf(buf + pos, sizeof(buf) - pos, " %d", n->fallback[k]);
		pr_info("node %d fallback%s\n", nid, n->nr_fallback ? buf : " none");
	}
}
