/* The x86-64 side of user page tables: the shared kernel half and CR3. */
#include <asm/pgtable.h>
#include <asm/direct_map.h>
#include <asm/cpu.h>

void arch_pgd_init(u64 *pgd)
{
	const u64 *kernel = __va(kernel_pml4_phys);

	for (int i = KERNEL_PGD_FIRST; i < 512; i++)
		pgd[i] = kernel[i];
}

void load_pgd(phys_addr_t pgd)
{
	if (read_cr3() != pgd)
		write_cr3(pgd);
}
