/*
 * The machine's topology under /sys/devices/system, with Linux's paths and
 * formats, as libnuma and numactl read them (docs/procfs.md):
 *
 *   node/{possible,online,has_memory,has_normal_memory,has_cpu}   node lists: "0-2"
 *   node/nodeN/cpulist      the node's CPUs as a list: "0-1"
 *   node/nodeN/cpumap       the same as a hex mask over every CPU: "3"
 *   node/nodeN/distance     the SLIT row over the online nodes: "10 21 30"
 *   node/nodeN/meminfo      "Node N MemTotal:  ... kB", MemFree, MemUsed, Slab
 *   node/nodeN/numastat     "numa_hit N": Linux's six NUMA allocation events
 *   node/nodeN/vmstat       "nr_free_pages N", the same events as numa_*, nr_file_pages
 *   node/nodeN/memory_failure/{total,ignored,failed,delayed,recovered}
 *                           memory_failure()'s results for the node's frames: "N"
 *   cpu/{possible,present,online}                                 CPU lists: "0-3"
 *
 * Lists are Linux's: ascending ranges joined by commas. Quire has no
 * hotplug, so possible = present = online for nodes (those the firmware
 * described) and CPUs (those the MADT listed and that came up).
 */
#include <quire/pseudofs.h>
#include <quire/numa.h>
#include <quire/mmzone.h>
#include <quire/percpu.h>
#include <asm/page.h>
#include <quire/kernel.h>
#include <quire/errno.h>
#include <quire/memory-failure.h>
#include "internal.h"

/* What a list file shows: the ids below max for which has() is true. */
struct id_set {
	bool (*has)(int id);
	int max;
};

ssize_t show_id_list(char *buf, size_t size, u64 mask)
{
	size_t len = scnprint_id_list(buf, size, mask);

	return len + scnprintf(buf + len, size - len, "\n");
}

ssize_t show_id_mask(char *buf, size_t size, u64 mask, int bits)
{
	size_t len = 0;

	bits = bits > 0 ? bits : 1;
	if (bits > 32)
		len = scnprintf(buf, size, "%0*llx,", (bits - 32 + 3) / 4,
				(unsigned long long)(mask >> 32));
	return len + scnprintf(buf + len, size - len, "%0*llx\n", bits > 32 ? 8 : (bits + 3) / 4,
			       (unsigned long long)(mask & 0xffffffffULL));
}

static ssize_t list_show(struct pseudo_file *pf, char *buf, size_t size)
{
	const struct id_set *set = pf->data;
	u64 mask = 0;

	for (int id = 0; id < set->max; id++)
		if (set->has(id))
			mask |= 1ULL << id;
	return show_id_list(buf, size, mask);
}

#define NODE_OF(pf)	((int)(unsigned long)(pf)->data)

static ssize_t cpulist_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return show_id_list(buf, size, numa_nodes[NODE_OF(pf)].cpus);
}

static ssize_t cpumap_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return show_id_mask(buf, size, numa_nodes[NODE_OF(pf)].cpus, nr_cpu_ids);
}

static ssize_t distance_show(struct pseudo_file *pf, char *buf, size_t size)
{
	size_t len = 0;

	for (int n = 0; n < MAX_NUMNODES; n++)
		if (node_online(n))
			len += scnprintf(buf + len, size - len, "%s%d", len ? " " : "",
					 node_distance(NODE_OF(pf), n));
	return len + scnprintf(buf + len, size - len, "\n");
}

/* Linux's layout: "Node 0 MemTotal:       786432 kB". Total: RAM the allocator manages. */
static ssize_t meminfo_show(struct pseudo_file *pf, char *buf, size_t size)
{
	int nid = NODE_OF(pf);
	unsigned long kb = PAGE_SIZE / 1024;
	unsigned long total = node_page_state(nid, NR_PRESENT_PAGES) -
			      node_page_state(nid, NR_RESERVED_PAGES);
	unsigned long free = node_page_state(nid, NR_FREE_PAGES);

	return scnprintf(buf, size,
			 "Node %d MemTotal:       %8lu kB\n"
			 "Node %d MemFree:        %8lu kB\n"
			 "Node %d MemUsed:        %8lu kB\n"
			 "Node %d Slab:           %8lu kB\n",
			 nid, total * kb, nid, free * kb, nid, (total - free) * kb,
			 nid, node_page_state(nid, NR_SLAB_PAGES) * kb);
}

/* Linux's NUMA events: numastat's names, and vmstat's for the same counters. */
static const struct {
	const char *numastat, *vmstat;
	enum node_event_item item;
} numa_events[] = {
	{ "numa_hit", "numa_hit", NUMA_HIT }, { "numa_miss", "numa_miss", NUMA_MISS },
	{ "numa_foreign", "numa_foreign", NUMA_FOREIGN },
	{ "interleave_hit", "numa_interleave", NUMA_INTERLEAVE_HIT },
	{ "local_node", "numa_local", NUMA_LOCAL }, { "other_node", "numa_other", NUMA_OTHER },
};

static ssize_t numa_events_show(int nid, char *buf, size_t size, bool vmstat_names)
{
	size_t len = 0;

	for (size_t i = 0; i < ARRAY_SIZE(numa_events); i++)
		len += scnprintf(buf + len, size - len, "%s %lu\n",
				 vmstat_names ? numa_events[i].vmstat : numa_events[i].numastat,
				 node_event_count(nid, numa_events[i].item));
	return len;
}

static ssize_t numastat_show(struct pseudo_file *pf, char *buf, size_t size)
{
	return numa_events_show(NODE_OF(pf), buf, size, false);
}

/* Linux's order: the zone counters, the NUMA events, the node counters (those Quire keeps). */
static ssize_t vmstat_show(struct pseudo_file *pf, char *buf, size_t size)
{
	int nid = NODE_OF(pf);
	size_t len = scnprintf(buf, size, "nr_free_pages %lu\n", node_page_state(nid, NR_FREE_PAGES));

	len += numa_events_show(nid, buf + len, size - len, true);
	return len + scnprintf(buf + len, size - len, "nr_file_pages %lu\n",
			       node_page_state(nid, NR_FILE_PAGES));
}

/* memory_failure/<result>: data is nid | result << 8; NR_MF_RESULTS is "total". */
static ssize_t mf_stat_show(struct pseudo_file *pf, char *buf, size_t size)
{
	int nid = (int)((unsigned long)pf->data & 0xff);
	unsigned int r = (unsigned int)((unsigned long)pf->data >> 8);
	unsigned long n = 0;

	for (unsigned int i = 0; i < NR_MF_RESULTS; i++)
		if (r == NR_MF_RESULTS || r == i)
			n += memory_failure_stat(nid, (enum mf_result)i);
	return scnprintf(buf, size, "%lu\n", n);
}

static const struct pseudo_ops mf_stat_ops = { .show = mf_stat_show };

/* nodeN/memory_failure: Linux's five counters. */
static int add_memory_failure_dir(struct pseudo_node *node_dir, int nid)
{
	static const struct { const char *name; unsigned int result; } stats[] = {
		{ "total", NR_MF_RESULTS }, { "ignored", MF_IGNORED }, { "failed", MF_FAILED },
		{ "delayed", MF_DELAYED }, { "recovered", MF_RECOVERED },
	};
	struct pseudo_node *dir = pseudo_mkdir(node_dir, "memory_failure");
	int err = dir ? 0 : -ENOMEM;

	for (size_t i = 0; i < ARRAY_SIZE(stats) && !err; i++)
		err = pseudo_create(dir, stats[i].name, 0444, &mf_stat_ops,
				    (void *)(unsigned long)(nid | stats[i].result << 8));
	return err;
}

static const struct pseudo_ops list_ops = { .show = list_show };
static const struct pseudo_ops cpulist_ops = { .show = cpulist_show };
static const struct pseudo_ops cpumap_ops = { .show = cpumap_show };
static const struct pseudo_ops distance_ops = { .show = distance_show };
static const struct pseudo_ops meminfo_ops = { .show = meminfo_show };
static const struct pseudo_ops numastat_ops = { .show = numastat_show };
static const struct pseudo_ops vmstat_ops = { .show = vmstat_show };

static int add_node_dir(struct pseudo_node *node, int nid)
{
	static const struct { const char *name; const struct pseudo_ops *ops; } files[] = {
		{ "cpulist", &cpulist_ops }, { "cpumap", &cpumap_ops },
		{ "distance", &distance_ops }, { "meminfo", &meminfo_ops },
		{ "numastat", &numastat_ops }, { "vmstat", &vmstat_ops },
	};
	struct pseudo_node *dir;
	char name[16];
	void *data = (void *)(unsigned long)nid;
	int err = 0;

	snprintf(name, sizeof(name), "node%d", nid);
	dir = pseudo_mkdir(node, name);
	if (!dir)
		return -ENOMEM;
	for (size_t i = 0; i < ARRAY_SIZE(files) && !err; i++)
		err = pseudo_create(dir, files[i].name, 0444, files[i].ops, data);
	return err ? err : add_memory_failure_dir(dir, nid);
}

/* /sys/devices/system/{node,cpu}: 0 or -errno. */
int sysfs_node_init(struct pseudo_node *root)
{
	static const struct id_set online = { node_online, MAX_NUMNODES },
		memory = { node_has_memory, MAX_NUMNODES }, cpus = { node_has_cpus, MAX_NUMNODES },
		cpus_up = { cpu_online, MAX_CPUS };
	static const struct { const char *name; const struct id_set *set; } node_lists[] = {
		{ "possible", &online }, { "online", &online }, { "has_memory", &memory },
		{ "has_normal_memory", &memory }, { "has_cpu", &cpus },
	}, cpu_lists[] = {
		{ "possible", &cpus_up }, { "present", &cpus_up }, { "online", &cpus_up },
	};
	struct pseudo_node *devices = pseudo_mkdir(root, "devices");
	struct pseudo_node *system = devices ? pseudo_mkdir(devices, "system") : NULL;
	struct pseudo_node *node = system ? pseudo_mkdir(system, "node") : NULL;
	struct pseudo_node *cpu = node ? pseudo_mkdir(system, "cpu") : NULL;
	int err = cpu ? 0 : -ENOMEM;

	for (unsigned int i = 0; i < ARRAY_SIZE(node_lists) && !err; i++)
		err = pseudo_create(node, node_lists[i].name, 0444, &list_ops, (void *)node_lists[i].set);
	for (unsigned int i = 0; i < ARRAY_SIZE(cpu_lists) && !err; i++)
		err = pseudo_create(cpu, cpu_lists[i].name, 0444, &list_ops, (void *)cpu_lists[i].set);
	for (int nid = 0; nid < MAX_NUMNODES && !err; nid++)
		if (node_online(nid))
			err = add_node_dir(node, nid);
	return err;
}
