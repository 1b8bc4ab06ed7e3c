/*
 * memblock: sorted, non-overlapping region arrays for RAM ("memory") and for
 * what is taken ("reserved"). Small and simple: boot needs a few dozen
 * regions at most. Allocation is bottom-up, first fit, below alloc_limit.
 */
#define pr_fmt(fmt) "memblock: " fmt
#include <quire/memblock.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/errno.h>
#include <quire/gfp.h>
#include <quire/mm.h>

struct memblock memblock;

void memblock_reset(void)
{
	memset(&memblock, 0, sizeof(memblock));
	memblock.memory.name = "memory";
	memblock.reserved.name = "reserved";
	memblock.alloc_limit = ~(phys_addr_t)0;
}

static void remove_region(struct memblock_type *t, unsigned long i)
{
	memmove(&t->regions[i], &t->regions[i + 1],
		(t->cnt - i - 1) * sizeof(t->regions[0]));
	t->cnt--;
}

static int insert_region(struct memblock_type *t, unsigned long i,
			 phys_addr_t base, phys_addr_t size, int nid)
{
	if (t->cnt == MEMBLOCK_MAX_REGIONS) {
		pr_err("too many %s regions; dropping [%#llx-%#llx)\n", t->name,
		       (unsigned long long)base, (unsigned long long)(base + size));
		return -ENOMEM;
	}
	memmove(&t->regions[i + 1], &t->regions[i], (t->cnt - i) * sizeof(t->regions[0]));
	t->regions[i].base = base;
	t->regions[i].size = size;
	t->regions[i].nid = nid;
	t->cnt++;
	return 0;
}

/* Merge neighbours that touch or overlap and have the same node. */
static void merge_regions(struct memblock_type *t)
{
	unsigned long i = 0;

	while (i + 1 < t->cnt) {
		struct memblock_region *a = &t->regions[i], *b = &t->regions[i + 1];

		if (a->base + a->size >= b->base && a->nid == b->nid) {
			phys_addr_t end = max(a->base + a->size, b->base + b->size);

			a->size = end - a->base;
			remove_region(t, i + 1);
		} else {
			i++;
		}
	}
}

static int add_range(struct memblock_type *t, phys_addr_t base, phys_addr_t size, int nid)
{
	unsigned long i;
	int err;

	if (size == 0)
		return 0;
	if (base + size < base)
		size = ~(phys_addr_t)0 - base;	/* clamp a wrapping range */
	for (i = 0; i < t->cnt && t->regions[i].base < base; i++)
		;
	err = insert_region(t, i, base, size, nid);
	merge_regions(t);
	return err;
}

/* Cut [base, base+size) out of every region of t. */
static int remove_range(struct memblock_type *t, phys_addr_t base, phys_addr_t size)
{
	phys_addr_t end = base + size;
	unsigned long i = 0;

	while (i < t->cnt) {
		struct memblock_region *r = &t->regions[i];
		phys_addr_t rend = r->base + r->size;

		if (rend <= base || r->base >= end) {
			i++;
			continue;
		}
		if (r->base < base && rend > end) {	/* split in two */
			int err = insert_region(t, i + 1, end, rend - end, r->nid);

			if (err)
				return err;
			r = &t->regions[i];
			r->size = base - r->base;
			i += 2;
		} else if (r->base < base) {		/* cut the tail */
			r->size = base - r->base;
			i++;
		} else if (rend > end) {		/* cut the head */
			r->size = rend - end;
			r->base = end;
			i++;
		} else {				/* all of it */
			remove_region(t, i);
		}
	}
	return 0;
}

int memblock_add_node(phys_addr_t base, phys_addr_t size, int nid)
{
	return add_range(&memblock.memory, base, size, nid);
}

int memblock_add(phys_addr_t base, phys_addr_t size)
{
	return memblock_add_node(base, size, 0);
}

int memblock_reserve(phys_addr_t base, phys_addr_t size)
{
	return add_range(&memblock.reserved, base, size, 0);
}

int memblock_phys_free(phys_addr_t base, phys_addr_t size)
{
	return remove_range(&memblock.reserved, base, size);
}

int memblock_set_node(phys_addr_t base, phys_addr_t size, int nid)
{
	struct memblock_type *t = &memblock.memory;
	phys_addr_t end = base + size;

	/* Split regions at base and end, then label the ones inside. */
	for (unsigned long i = 0; i < t->cnt; i++) {
		struct memblock_region *r = &t->regions[i];
		phys_addr_t rend = r->base + r->size;
		phys_addr_t cut = r->base < base && rend > base ? base :
				  r->base < end && rend > end ? end : 0;

		if (cut) {
			int err = insert_region(t, i + 1, cut, rend - cut, r->nid);

			if (err)
				return err;
			t->regions[i].size = cut - t->regions[i].base;
		}
	}
	for (unsigned long i = 0; i < t->cnt; i++) {
		struct memblock_region *r = &t->regions[i];

		if (r->base >= base && r->base + r->size <= end)
			r->nid = nid;
	}
	merge_regions(t);
	return 0;
}

static bool type_contains(const struct memblock_type *t, phys_addr_t addr)
{
	for (unsigned long i = 0; i < t->cnt; i++)
		if (addr >= t->regions[i].base && addr - t->regions[i].base < t->regions[i].size)
			return true;
	return false;
}

bool memblock_is_reserved(phys_addr_t addr)
{
	return type_contains(&memblock.reserved, addr);
}

bool memblock_is_memory(phys_addr_t addr)
{
	return type_contains(&memblock.memory, addr);
}

/* The first reserved region ending after addr, or NULL. */
static const struct memblock_region *next_reserved(phys_addr_t addr)
{
	for (unsigned long i = 0; i < memblock.reserved.cnt; i++) {
		const struct memblock_region *r = &memblock.reserved.regions[i];

		if (r->base + r->size > addr)
			return r;
	}
	return NULL;
}

phys_addr_t memblock_phys_alloc_node(phys_addr_t size, phys_addr_t align, int nid)
{
	const struct memblock_region *m;

	if (size == 0 || align == 0 || (align & (align - 1)))
		return 0;
	for_each_memblock(memory, m) {
		phys_addr_t start, mend = min(m->base + m->size, memblock.alloc_limit);

		if (nid != NUMA_NO_NODE && m->nid != nid)
			continue;
		start = ALIGN_UP(max(m->base, (phys_addr_t)4096), align);
		/* Step past reserved regions until a gap fits. */
		while (start + size <= mend) {
			const struct memblock_region *r = next_reserved(start);

			if (!r || r->base >= start + size) {
				if (memblock_reserve(start, size))
					return 0;	/* table full: never hand it out unrecorded */
				return start;
			}
			start = ALIGN_UP(r->base + r->size, align);
		}
	}
	return 0;
}

phys_addr_t memblock_phys_alloc(phys_addr_t size, phys_addr_t align)
{
	return memblock_phys_alloc_node(size, align, NUMA_NO_NODE);
}

/*
 * After boot: hand the whole pages of [base, base + size) that are still
 * reserved to the page allocator (Linux's memblock_free_late). A partial
 * page at either end is kept. Returns the number of pages freed.
 */
unsigned long memblock_free_late(phys_addr_t base, phys_addr_t size)
{
	unsigned long pfn = PHYS_PFN(ALIGN_UP(base, PAGE_SIZE));
	unsigned long end = PHYS_PFN(base + size);
	unsigned long freed = 0;

	for (; pfn < end; pfn++) {
		struct page *page = pfn_to_page(pfn);

		if (page && PageReserved(page)) {
			free_reserved_page(page);
			freed++;
		}
	}
	return freed;
}

phys_addr_t memblock_phys_mem_size(void)
{
	phys_addr_t total = 0;
	const struct memblock_region *r;

	for_each_memblock(memory, r)
		total += r->size;
	return total;
}

phys_addr_t memblock_end_of_DRAM(void)
{
	unsigned long n = memblock.memory.cnt;

	return n ? memblock.memory.regions[n - 1].base + memblock.memory.regions[n - 1].size : 0;
}

void memblock_dump(void)
{
	const struct memblock_region *r;

	for_each_memblock(memory, r)
		pr_info("memory   [%#014llx-%#014llx] node %d\n", (unsigned long long)r->base,
			(unsigned long long)(r->base + r->size - 1), r->nid);
	for_each_memblock(reserved, r)
		pr_info("reserved [%#014llx-%#014llx]\n", (unsigned long long)r->base,
			(unsigned long long)(r->base + r->size - 1));
}
