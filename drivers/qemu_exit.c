/*
 * Power off through QEMU's isa-debug-exit device, after writing the full
 * status to the isa-debugcon port (quire/power.h says why both). When the
 * devices are not there (another machine, or QEMU without them) the writes
 * do nothing and we stop the CPU instead, so the caller still never returns.
 */
#include <quire/power.h>
#include <quire/printk.h>
#include <asm/io.h>
#include <asm/cpu.h>

#define DEBUG_EXIT_PORT 0xf4
#define STATUS_PORT 0xe9

static void status_port_write(const char *s)
{
	while (*s)
		outb(STATUS_PORT, (u8)*s++);
}

/* "exit-status N\n" on the status port. */
static void report_status(int status)
{
	char digits[4];
	int i = sizeof(digits) - 1;

	digits[i] = '\0';
	do {
		digits[--i] = (char)('0' + status % 10);
		status /= 10;
	} while (status && i > 0);
	status_port_write("exit-status ");
	status_port_write(&digits[i]);
	status_port_write("\n");
}

void machine_power_off(int status)
{
	if (status < 0 || status > QUIRE_EXIT_STATUS_MAX)
		status = QUIRE_EXIT_STATUS_MAX;
	local_irq_disable();
	report_status(status);
	outb(DEBUG_EXIT_PORT, (u8)(status < 128 ? status : QUIRE_EXIT_SEE_STATUS_PORT));
	pr_emerg("power off: no isa-debug-exit device; halting (status %d)\n", status);
	for (;;)
		halt();
}
