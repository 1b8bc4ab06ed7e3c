/*
 * 16550 UART on COM1 (I/O port 0x3f8), 115200 8N1, polled output. This is
 * the console: printk writes here, and QEMU's -serial stdio shows it.
 */
#include <quire/serial.h>
#include <quire/printk.h>
#include <asm/io.h>

#define COM1		0x3f8
#define UART_DATA	0	/* data (DLAB=0), divisor low (DLAB=1) */
#define UART_IER	1	/* interrupt enable; divisor high (DLAB=1) */
#define UART_FCR	2	/* FIFO control */
#define UART_LCR	3	/* line control */
#define UART_MCR	4	/* modem control */
#define UART_LSR	5	/* line status */
#define UART_SCR	7	/* scratch */
#define LSR_THRE	0x20	/* transmit holding register empty */

static bool present;

bool serial_present(void)
{
	return present;
}

void serial_init(void)
{
	/* The scratch register holds what we write if a UART is there. */
	outb(COM1 + UART_SCR, 0x5a);
	if (inb(COM1 + UART_SCR) != 0x5a)
		return;
	outb(COM1 + UART_IER, 0x00);	/* no interrupts (yet) */
	outb(COM1 + UART_LCR, 0x80);	/* DLAB on to set the divisor */
	outb(COM1 + UART_DATA, 1);	/* 115200 baud */
	outb(COM1 + UART_IER, 0);
	outb(COM1 + UART_LCR, 0x03);	/* 8 bits, no parity, one stop bit */
	outb(COM1 + UART_FCR, 0xc7);	/* FIFOs on and cleared */
	outb(COM1 + UART_MCR, 0x03);	/* DTR, RTS */
	present = true;
}

void serial_putc(char c)
{
	int spins = 100000;	/* never hang on a wedged UART */

	if (!present)
		return;
	while (!(inb(COM1 + UART_LSR) & LSR_THRE) && --spins)
		;
	outb(COM1 + UART_DATA, (u8)c);
}

void console_write(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '\n')
			serial_putc('\r');
		serial_putc(s[i]);
	}
}
