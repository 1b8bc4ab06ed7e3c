/*
 * memblock: the boot-time physical memory manager, before the buddy
 * allocator exists. It keeps two sorted lists of ranges, "memory" (RAM, each
 * with its node) and "reserved" (taken: the kernel image, boot modules, the
 * low 1 MiB, and everything memblock_alloc handed out). mm_core_init() turns
 * memory minus reserved into free buddy blocks; memblock is not used after.
 */
#ifndef QUIRE_MEMBLOCK_H
#define QUIRE_MEMBLOCK_H

#include <quire/types.h>

#define MEMBLOCK_MAX_REGIONS 128

struct memblock_region {
	phys_addr_t base;
	phys_addr_t size;
	int nid;
};

struct memblock_type {
	unsigned long cnt;
	struct memblock_region regions[MEMBLOCK_MAX_REGIONS];
	const char *name;
};

struct memblock {
	struct memblock_type memory;
	struct memblock_type reserved;
	phys_addr_t alloc_limit;	/* memblock_alloc stays below this (the early map) */
};

extern struct memblock memblock;

void memblock_reset(void);
/* Add RAM; overlapping or adjacent ranges are merged. Returns 0 or -ENOMEM. */
int memblock_add(phys_addr_t base, phys_addr_t size);
int memblock_add_node(phys_addr_t base, phys_addr_t size, int nid);
/* Mark a range taken (it need not be inside memory). */
int memblock_reserve(phys_addr_t base, phys_addr_t size);
/* Give back part of a reservation. */
int memblock_phys_free(phys_addr_t base, phys_addr_t size);
/* Set the node of the memory in [base, base+size), splitting regions as needed. */
int memblock_set_node(phys_addr_t base, phys_addr_t size, int nid);
/*
 * Take size bytes, aligned, from memory not yet reserved: on node nid, or any
 * node for NUMA_NO_NODE. Returns the physical address, or 0 when nothing
 * fits. The memory is not zeroed.
 */
phys_addr_t memblock_phys_alloc_node(phys_addr_t size, phys_addr_t align, int nid);
phys_addr_t memblock_phys_alloc(phys_addr_t size, phys_addr_t align);
bool memblock_is_reserved(phys_addr_t addr);
bool memblock_is_memory(phys_addr_t addr);
phys_addr_t memblock_phys_mem_size(void);
/* After boot: free the whole reserved pages of a range to the buddy allocator; pages freed. */
unsigned long memblock_free_late(phys_addr_t base, phys_addr_t size);
phys_addr_t memblock_end_of_DRAM(void);
void memblock_dump(void);

#define for_each_memblock(type, r) \
	for (r = memblock.type.regions; r < memblock.type.regions + memblock.type.cnt; r++)

#endif
