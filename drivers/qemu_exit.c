/*
 * Power off through QEMU's isa-debug-exit device. When the device is not
 * there (another machine, or QEMU without it) the write does nothing and we
 * stop the CPU instead, so the caller still never returns.
 */
#include <quire/power.h>
#include <quire/printk.h>
#include <asm/io.h>
#include <asm/cpu.h>

#define DEBUG_EXIT_PORT 0xf4

void machine_power_off(enum quire_exit_status status)
{
	local_irq_disable();
	outb(DEBUG_EXIT_PORT, (u8)status);
	pr_emerg("power off: no isa-debug-exit device; halting (status %d)\n", status);
	for (;;)
		halt();
}
