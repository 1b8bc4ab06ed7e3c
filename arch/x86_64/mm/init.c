/*
 * x86-64 memory setup at boot:
 *   x86_memblock_init(): memblock from the node model (SRAT ∩ firmware map),
 *     with the low 1 MiB, the kernel image and the boot modules reserved;
 *   init_direct_map(): page tables mapping all RAM at PAGE_OFFSET (1 GiB
 *     pages when the CPU has them and alignment allows, else 2 MiB, else
 *     4 KiB), non-executable, plus the kernel image at KERNEL_VMA; then the
 *     switch to them, which also drops the early identity map.
 * Page-table pages come from memblock below 4 GiB, which the early identity
 * map still covers while they are written.
 */
#define pr_fmt(fmt) "x86/mm: " fmt
#include <quire/memblock.h>
#include <quire/bootinfo.h>
#include <quire/numa.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/panic.h>
#include <asm/page.h>
#include <asm/cpu.h>
#include <asm/direct_map.h>

#define PTE_PRESENT	(1UL << 0)
#define PTE_WRITE	(1UL << 1)
#define PTE_HUGE	(1UL << 7)
#define PTE_NX		(1UL << 63)
#define PTE_ADDR_MASK	0x000ffffffffff000UL
#define EARLY_MAP_LIMIT	(4UL << 30)

extern u64 early_pml4[];			/* arch/x86_64/boot/entry.S */
extern const char _kernel_phys_start[], _kernel_phys_end[];

unsigned long direct_map_pages[DIRECT_MAP_LEVELS];	/* mappings made, per size */
bool direct_map_ready;
phys_addr_t kernel_pml4_phys;		/* the kernel's page tables, loaded on every CPU */

void x86_memblock_init(void)
{
	int nid;

	memblock_reset();
	for_each_online_node(nid)
		for (int i = 0; i < numa_nodes[nid].nr_ranges; i++) {
			const struct numa_range *r = &numa_nodes[nid].ranges[i];

			memblock_add_node(r->start, r->end - r->start, nid);
		}
	/* Page 0, the BIOS data area, EBDA, option ROMs: the whole low 1 MiB. */
	memblock_reserve(0, 1UL << 20);
	memblock_reserve((phys_addr_t)(uintptr_t)_kernel_phys_start,
			 (phys_addr_t)(uintptr_t)(_kernel_phys_end - _kernel_phys_start));
	for (u32 i = 0; i < boot_info.nr_modules; i++)
		memblock_reserve(boot_info.modules[i].start,
				 boot_info.modules[i].end - boot_info.modules[i].start);
	/* Until the direct map exists, memblock memory is reached one to one. */
	memblock.alloc_limit = EARLY_MAP_LIMIT;
}

static bool cpu_has_gbpages(void)
{
	u32 a, b, c, d;

	cpuid(0x80000000, 0, &a, &b, &c, &d);
	if (a < 0x80000001)
		return false;
	cpuid(0x80000001, 0, &a, &b, &c, &d);
	return d & (1u << 26);
}

/* A zeroed page-table page, addressed through the early identity map. */
static u64 *alloc_table(void)
{
	phys_addr_t pa = memblock_phys_alloc(PAGE_SIZE, PAGE_SIZE);
	u64 *t;

	if (!pa)
		panic("out of memory for the direct map's page tables");
	t = (u64 *)(uintptr_t)pa;
	memset(t, 0, PAGE_SIZE);
	return t;
}

/* The table an entry points to, allocating it when the entry is empty. */
static u64 *next_table(u64 *entry)
{
	if (!(*entry & PTE_PRESENT)) {
		u64 *t = alloc_table();

		*entry = (u64)(uintptr_t)t | PTE_PRESENT | PTE_WRITE;
	}
	return (u64 *)(uintptr_t)(*entry & PTE_ADDR_MASK);
}

static unsigned int index_at(unsigned long va, int shift)
{
	return (va >> shift) & 511;
}

static void map_range(u64 *pml4, phys_addr_t start, phys_addr_t end, bool gbpages)
{
	phys_addr_t pa = start;

	while (pa < end) {
		unsigned long va = PAGE_OFFSET + pa;
		u64 *pud = next_table(&pml4[index_at(va, 39)]);
		u64 *pmd, *pte;

		if (gbpages && IS_ALIGNED(pa, PUD_SIZE) && pa + PUD_SIZE <= end) {
			pud[index_at(va, 30)] = pa | PTE_PRESENT | PTE_WRITE | PTE_HUGE | PTE_NX;
			direct_map_pages[DIRECT_MAP_1G]++;
			pa += PUD_SIZE;
			continue;
		}
		pmd = next_table(&pud[index_at(va, 30)]);
		if (IS_ALIGNED(pa, PMD_SIZE) && pa + PMD_SIZE <= end) {
			pmd[index_at(va, 21)] = pa | PTE_PRESENT | PTE_WRITE | PTE_HUGE | PTE_NX;
			direct_map_pages[DIRECT_MAP_2M]++;
			pa += PMD_SIZE;
			continue;
		}
		pte = next_table(&pmd[index_at(va, 21)]);
		pte[index_at(va, 12)] = pa | PTE_PRESENT | PTE_WRITE | PTE_NX;
		direct_map_pages[DIRECT_MAP_4K]++;
		pa += PAGE_SIZE;
	}
}

void init_direct_map(void)
{
	bool gbpages = cpu_has_gbpages();
	const struct memblock_region *r;
	u64 *pml4 = alloc_table();

	if (memblock_end_of_DRAM() > DIRECT_MAP_SIZE)
		pr_warn("RAM above %lu TiB is not mapped\n", DIRECT_MAP_SIZE >> 40);
	for_each_memblock(memory, r) {
		phys_addr_t start = ALIGN_UP(r->base, PAGE_SIZE);
		phys_addr_t end = min(ALIGN_DOWN(r->base + r->size, PAGE_SIZE),
				      (phys_addr_t)DIRECT_MAP_SIZE);

		if (start < end)
			map_range(pml4, start, end, gbpages);
	}
	/* The kernel image keeps its early mapping (the top 2 GiB). */
	pml4[511] = early_pml4[511];
	kernel_pml4_phys = (phys_addr_t)(uintptr_t)pml4;
	write_cr3(kernel_pml4_phys);
	direct_map_ready = true;
	memblock.alloc_limit = ~(phys_addr_t)0;
	pr_info("direct map at %#lx: %lu x 1 GiB, %lu x 2 MiB, %lu x 4 KiB pages%s\n",
		PAGE_OFFSET, direct_map_pages[DIRECT_MAP_1G], direct_map_pages[DIRECT_MAP_2M],
		direct_map_pages[DIRECT_MAP_4K], gbpages ? "" : " (no 1 GiB pages on this CPU)");
}
