/*
 * What the loader told us, copied into the kernel at the very start so that
 * later code never reads loader memory: the memory map, the command line,
 * the modules and the ACPI RSDP. Both boot protocols (multiboot2 from GRUB,
 * PVH from QEMU -kernel) fill the same structure.
 */
#ifndef QUIRE_BOOTINFO_H
#define QUIRE_BOOTINFO_H

#include <quire/numa_desc.h>
#include <quire/types.h>
#include <quire/cmdline.h>

enum boot_protocol {
	BOOT_MULTIBOOT2,
	BOOT_PVH,
};

/* Memory map types: the E820 values, used by both protocols. */
enum boot_mem_type {
	BOOT_MEM_AVAILABLE = 1,
	BOOT_MEM_RESERVED = 2,
	BOOT_MEM_ACPI_RECLAIMABLE = 3,
	BOOT_MEM_ACPI_NVS = 4,
	BOOT_MEM_BAD = 5,
};

struct boot_mem_region {
	u64 base;
	u64 len;
	u32 type;
};

struct boot_module {
	u64 start;		/* physical, first byte */
	u64 end;		/* physical, one past the last byte */
	char cmdline[64];
};

#define BOOT_MMAP_MAX		128
#define BOOT_MODULES_MAX	16

struct boot_info {
	enum boot_protocol protocol;
	char loader[64];		/* loader's name, when it gives one */
	bool efi;			/* the firmware was UEFI */
	char cmdline[CMDLINE_MAX];
	struct boot_mem_region mmap[BOOT_MMAP_MAX];
	u32 nr_mmap;
	struct boot_module modules[BOOT_MODULES_MAX];
	u32 nr_modules;
	/*
	 * A copy of the RSDP (20 bytes for ACPI 1.0, 36 for 2.0+): multiboot2
	 * hands over a copy, not an address. rsdp_len is 0 when there is none.
	 */
	u8 rsdp[36];
	u32 rsdp_len;
	u64 rsdp_phys;		/* where the RSDP lives, when known (PVH); else 0 */
	/* Problems found while reading the loader's data (each was logged). */
	u32 warnings;
};

extern struct boot_info boot_info;

/*
 * Fill boot_info from the loader's data. magic is what the entry code
 * received: MULTIBOOT2_BOOT_MAGIC or PVH_BOOT_MAGIC. Returns 0, or -EINVAL
 * when the magic is unknown (the caller panics with a clear message).
 */
int bootinfo_parse(u32 magic, u64 info_phys);
const char *boot_protocol_name(enum boot_protocol p);
/* Total bytes of BOOT_MEM_AVAILABLE memory in the map. */
u64 bootinfo_available_bytes(void);


/*
 * Put the map's BOOT_MEM_AVAILABLE ranges into desc as its usable RAM (for
 * numa_init()): arch/x86_64 fills boot_info from the loader's map, a host
 * test writes the map of the machine it builds.
 */
static inline void bootinfo_describe_ram(struct numa_desc *desc)
{
	u32 n = boot_info.nr_mmap < BOOT_MMAP_MAX ? boot_info.nr_mmap : BOOT_MMAP_MAX;

	desc->nr_ram = 0;
	for (u32 i = 0; i < n; i++)
		if (boot_info.mmap[i].type == BOOT_MEM_AVAILABLE)
			numa_desc_add_ram(desc, boot_info.mmap[i].base, boot_info.mmap[i].len);
}

#endif
