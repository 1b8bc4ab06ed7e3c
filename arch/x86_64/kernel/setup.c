/*
 * x86_64_start: the first C code, called by the boot assembly on the early
 * page tables and the boot stack. Sets up the console, the GDT/TSS and the
 * IDT, reads the loader's information, the command line and the clock,
 * learns the machine from ACPI, sets up physical memory, then hands over to
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
#include <asm/direct_map.h>
#include <asm/apic.h>
#include <asm/ioapic.h>
#include <asm/irq.h>
#include <quire/sched.h>
#include <quire/smp.h>
#include <quire/acpi.h>
#include <quire/numa.h>
#include <quire/numa_desc.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/process.h>

void x86_64_start(u32 magic, u64 info_phys);

/* The machine as ACPI and the loader describe it, for numa_init(). Static: it is ~5 KiB. */
static struct numa_desc boot_numa_desc;

void x86_64_start(u32 magic, u64 info_phys)
{
	int err;

	serial_init();
	percpu_early_init();
	pr_notice("Quire %s (x86_64) booting\n", QUIRE_VERSION);
	gdt_init(&boot_cpu_arch);
	idt_init();
	err = bootinfo_parse(magic, info_phys);
	if (err)
		panic("cannot read the boot information (magic 0x%x)", magic);
	cmdline_parse_boot(boot_info.cmdline);
	tsc_init();
	/* The machine, from ACPI, while the early identity map still reaches it. */
	acpi_init();
	acpi_numa_describe(&boot_numa_desc);
	bootinfo_describe_ram(&boot_numa_desc);
	numa_init(&boot_numa_desc);
	/* Physical memory: memblock, the direct map (the identity map goes), the buddy. */
	x86_memblock_init();
	init_direct_map();
	mm_core_init();
	zero_page_init();
	syscall_init();
	/* Interrupts, the scheduler, then the other CPUs. */
	irq_init();
	lapic_init_bsp();
	ioapic_init();
	serial_init_irq();
	sched_init();
	lapic_setup_cpu();
	local_irq_enable();
	smp_boot_cpus();
	start_kernel();
}
