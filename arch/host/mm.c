/* The host machine for mm tests: see asm/host_mm.h. */
#include <sys/mman.h>
#include <quire/mm.h>
#include <quire/huge_mm.h>
#include <quire/memblock.h>
#include <quire/memremap.h>
#include <quire/numa.h>
#include <quire/numa_desc.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <asm/host_mm.h>

u8 *host_phys_base;
static size_t arena_size;

void host_topology_numa3(struct host_topology *topo, unsigned long mib_per_node)
{
	memset(topo, 0, sizeof(*topo));
	topo->nr_nodes = 3;
	for (int i = 0; i < 3; i++)
		topo->mib[i] = mib_per_node;
	topo->cpus[0] = topo->cpus[1] = 2;
	topo->distance[0][1] = topo->distance[1][0] = 21;
	topo->distance[0][2] = topo->distance[2][0] = 30;
	topo->distance[1][2] = topo->distance[2][1] = 40;
}

/* The machine as drivers/acpi and the firmware map would describe it. */
static void describe_machine(const struct host_topology *topo, struct numa_desc *desc)
{
	phys_addr_t base = 0;
	int cpu = 0;

	memset(desc, 0, sizeof(*desc));
	desc->affinity_present = true;
	desc->nr_domains = topo->nr_nodes;
	desc->distance_present = true;
	for (int n = 0; n < topo->nr_nodes; n++) {
		unsigned long bytes = topo->mib[n] << 20;

		desc->pxm[n] = (u32)n;
		for (int c = 0; c < topo->cpus[n] && cpu < MAX_CPUS; c++, cpu++)
			desc->cpu[cpu] = (struct numa_desc_cpu){ .apic_id = (u32)cpu, .domain = n };
		if (bytes) {
			desc->mem[desc->nr_mem++] = (struct numa_desc_mem){ base, bytes, n };
			numa_desc_add_ram(desc, base, bytes);
			base += bytes;
		}
		for (int o = 0; o < topo->nr_nodes; o++) {
			u8 d = topo->distance[n][o];

			desc->distance[n][o] = d ? d : (n == o ? LOCAL_DISTANCE : REMOTE_DISTANCE);
		}
	}
	desc->nr_cpus = cpu;
	arena_size = base;
}

int host_mm_init(const struct host_topology *topo)
{
	static struct numa_desc desc;
	void *arena;
	int nid;

	describe_machine(topo, &desc);
	arena = mmap(NULL, arena_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED)
		return -ENOMEM;
	host_phys_base = arena;
	numa_init(&desc);

	memblock_reset();
	for_each_online_node(nid)
		for (int i = 0; i < numa_nodes[nid].nr_ranges; i++)
			memblock_add_node(numa_nodes[nid].ranges[i].start,
					  numa_nodes[nid].ranges[i].end - numa_nodes[nid].ranges[i].start,
					  nid);
	/* As on x86: page 0 and the low 1 MiB are never handed out. */
	memblock_reserve(0, 1UL << 20);
	memremap_reset();
	if (topo->devmem_mib)
		memremap_carve_boot(topo->devmem_mib << 20, 0);
	mm_core_init();
	return 0;
}

void host_mm_exit(void)
{
	if (host_phys_base)
		munmap(host_phys_base, arena_size);
	host_phys_base = NULL;
	memset(node_data, 0, sizeof(node_data));
	huge_zero_page_forget();	/* (its memory went with the arena) */
}

/* No processes on the host build: the syscalls that look one up are the kernel's. */
int get_process_mm(int pid, struct mm_struct **mmp)
{
	(void)pid;
	*mmp = NULL;
	return -ESRCH;
}
