/*
 * The two headers a loader looks for:
 *  - the multiboot2 header (GRUB, BIOS and UEFI): must sit 8-byte aligned in
 *    the first 32 KiB of the file, which linker.ld ensures by putting
 *    .multiboot2 first;
 *  - the PVH ELF note (QEMU -kernel, the "direct" boot): note type 18 with the
 *    32-bit physical entry point.
 */
#include <asm/boot.h>

	.section .multiboot2, "a"
	.align 8
mb2_header:
	.long MULTIBOOT2_HEADER_MAGIC
	.long 0					/* architecture: i386 protected mode */
	.long mb2_header_end - mb2_header
	.long -(MULTIBOOT2_HEADER_MAGIC + (mb2_header_end - mb2_header))
	/* end tag */
	.align 8
	.word 0, 0
	.long 8
mb2_header_end:

	.section .note.Xen, "a", @note
	.align 4
	.long 4					/* name size: "Xen\0" */
	.long 4					/* descriptor size */
	.long XEN_ELFNOTE_PHYS32_ENTRY
	.asciz "Xen"
	.align 4
	.long pvh_start32
	.align 4
