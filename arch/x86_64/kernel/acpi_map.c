/*
 * acpi_os_map for x86-64. ACPI tables live in firmware-reserved memory,
 * which the direct map (RAM only) does not cover, so they are read through
 * one of the boot page tables' windows:
 *   - below 2 GiB, the kernel's higher-half window (KERNEL_VMA maps 0-2 GiB;
 *     it stays after the direct map replaces the identity map, so tables
 *     can still be found later, e.g. by SMP bring-up);
 *   - below 4 GiB, the early identity map, until init_direct_map() drops it
 *     (acpi_init() runs before that).
 * QEMU and OVMF put their tables just below the top of low RAM, under 2 GiB
 * on every topology in tests/qemu/topologies.
 */
#define pr_fmt(fmt) "acpi: " fmt
#include <quire/acpi.h>
#include <quire/printk.h>
#include <asm/boot.h>
#include <asm/direct_map.h>

#define KERNEL_WINDOW_LIMIT	(2ULL << 30)
#define EARLY_IDENTITY_LIMIT	(4ULL << 30)

const void *acpi_os_map(phys_addr_t phys, size_t len)
{
	phys_addr_t end = phys + len;

	if (end >= phys && end <= KERNEL_WINDOW_LIMIT)
		return (const void *)(uintptr_t)(KERNEL_VMA + phys);
	if (end >= phys && end <= EARLY_IDENTITY_LIMIT && !direct_map_ready)
		return (const void *)(uintptr_t)phys;
	pr_warn("[mem %#llx+%zu] is out of reach of the boot page tables\n",
		(unsigned long long)phys, len);
	return NULL;
}
