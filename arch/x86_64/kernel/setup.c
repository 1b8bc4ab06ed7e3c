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
#include <quire/memremap.h>
#include <quire/panic.h>
#include <quire/printk.h>
#include <quire/serial.h>
#include <quire/time.h>
#include <asm/boot.h>
#include <asm/cpu.h>
#include <quire/debug_locks.h>
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

/*
 * QEMU's TCG says so in the hypervisor CPUID leaves (its "tcg-cpuid"
 * property, on by default): the hypervisor bit, then "TCGTCGTCGTCG" at
 * 0x40000000. KVM says "KVMKVMKVM".
 */
static bool cpu_emulated_by_tcg(void)
{
	u32 a, b, c, d;

	cpuid(1, 0, &a, &b, &c, &d);
	if (!(c & (1u << 31)))
		return false;
	cpuid(0x40000000, 0, &a, &b, &c, &d);
	return b == 0x54474354 && c == 0x43544743 && d == 0x47435447;	/* "TCGT" "CGTC" "GTCG" */
}

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
	if (cpu_emulated_by_tcg())
		lock_debug_cpu_emulated();
	cmdline_parse_boot(boot_info.cmdline);
	tsc_init();
	/* The machine, from ACPI, while the early identity map still reaches it. */
	acpi_init();
	acpi_numa_describe(&boot_numa_desc);
	bootinfo_describe_ram(&boot_numa_desc);
	numa_init(&boot_numa_desc);
	/* Physical memory: memblock, the direct map (the identity map goes), the buddy. */
	x86_memblock_init();
	memremap_boot_reserve();	/* RAM kept for device memory (devmem=) */
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
