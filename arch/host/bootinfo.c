/*
 * boot_info for host tests: the kernel's is filled by arch/x86_64 from the
 * loader; host tests write this one (the RSDP copy and the memory map of
 * the machine they build).
 */
#include <quire/bootinfo.h>
#include <quire/kernel.h>
#include <quire/numa_desc.h>

__weak struct boot_info boot_info;

void bootinfo_describe_ram(struct numa_desc *desc)
{
	u32 n = min(boot_info.nr_mmap, (u32)BOOT_MMAP_MAX);

	desc->nr_ram = 0;
	for (u32 i = 0; i < n; i++)
		if (boot_info.mmap[i].type == BOOT_MEM_AVAILABLE)
			numa_desc_add_ram(desc, boot_info.mmap[i].base, boot_info.mmap[i].len);
}
