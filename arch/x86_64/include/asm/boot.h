/* Constants shared by the boot assembly and C. */
#ifndef ASM_BOOT_H
#define ASM_BOOT_H

#define KERNEL_VMA		0xffffffff80000000
#define MULTIBOOT2_HEADER_MAGIC	0xe85250d6
#define MULTIBOOT2_BOOT_MAGIC	0x36d76289	/* in eax from a multiboot2 loader */
#define PVH_BOOT_MAGIC		0x336ec578	/* hvm_start_info.magic; we pass it in eax */
#define XEN_ELFNOTE_PHYS32_ENTRY 18

#define BOOT_STACK_SIZE		16384

#ifndef __ASSEMBLER__
#define __pa_symbol(x)	((unsigned long)(x) - KERNEL_VMA)
#endif

#endif
