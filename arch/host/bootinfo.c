/*
 * boot_info for host tests: the kernel's is filled by arch/x86_64 from the
 * loader; host tests write this one (the RSDP copy and the memory map of
 * the machine they build).
 */
#include <quire/bootinfo.h>
#include <quire/kernel.h>
#include <quire/numa_desc.h>

__weak struct boot_info boot_info;
