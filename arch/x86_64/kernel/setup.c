/*
 * x86_64_start: the first C code, called by the boot assembly on the early
 * page tables and the boot stack. Sets up the console, reads the loader's
 * information, the clock, the GDT/TSS and the IDT, then hands over to
 * start_kernel().
 */
#include <quire/init.h>
#include <quire/bootinfo.h>
#include <quire/cmdline.h>
#include <quire/panic.h>
#include <quire/printk.h>
#include <quire/serial.h>
#include <quire/time.h>
#include <asm/boot.h>
#include <asm/desc.h>

void x86_64_start(u32 magic, u64 info_phys);

extern u64 early_pd[];		/* arch/x86_64/boot/entry.S */

/*
 * Unmap the first 2 MiB of the identity map so that a NULL pointer (or a
 * small offset from one) faults instead of reading low memory. Done once
 * the loader's information has been copied, since it may live there.
 */
static void unmap_null_region(void)
{
	early_pd[0] = 0;
	__asm__ __volatile__("invlpg (%0)" : : "r"(0UL) : "memory");
}

void x86_64_start(u32 magic, u64 info_phys)
{
	int err;

	serial_init();
	pr_notice("Quire %s (x86_64) booting\n", QUIRE_VERSION);
	gdt_init();
	idt_init();
	err = bootinfo_parse(magic, info_phys);
	if (err)
		panic("cannot read the boot information (magic 0x%x)", magic);
	unmap_null_region();
	cmdline_parse_boot(boot_info.cmdline);
	tsc_init();
	start_kernel();
}
