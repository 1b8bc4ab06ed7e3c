/*
 * The host's stand-in for a machine: "physical memory" is one anonymous
 * mapping, laid out as nodes of the sizes a test asks for, described to
 * mm/numa.c in a struct numa_desc exactly as drivers/acpi and the firmware
 * map would (SRAT domains, SLIT distances, CPUs per node, the RAM), and
 * then set up by the same mm_core_init() the kernel runs.
 */
#ifndef ASM_HOST_MM_H
#define ASM_HOST_MM_H

#include <quire/types.h>
#include <quire/mmzone.h>

struct host_topology {
	int nr_nodes;
	unsigned long mib[MAX_NUMNODES];	/* memory per node; 0: memoryless */
	int cpus[MAX_NUMNODES];			/* CPUs per node */
	u8 distance[MAX_NUMNODES][MAX_NUMNODES];	/* 0: the default (10 local, 20 remote) */
	unsigned long devmem_mib;		/* kept for device memory at boot (memremap.h) */
};

/* Build the machine and run mm_core_init(). Returns 0, or -ENOMEM. */
int host_mm_init(const struct host_topology *topo);
/* Tear it down (unmap the arena, forget every node). */
void host_mm_exit(void);
/* The three-node machine of docs/design.md, scaled down: 0 and 1 DRAM, 2 slow. */
void host_topology_numa3(struct host_topology *topo, unsigned long mib_per_node);

/* What mm/ last sent as SIGBUS, and how many times (arch/host/signal.c). */
struct host_sigbus {
	int count, code;
	unsigned long addr;
	short lsb;
};
extern struct host_sigbus host_last_sigbus;

/* The C library's memcpy (arch/host/copy_mc.c): the host's own copy bandwidth. */
void *host_memcpy(void *dst, const void *src, size_t len);

#endif
