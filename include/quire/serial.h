/*
 * The 16550 UART on COM1: the kernel console (drivers/serial.c). Output is
 * polled, so printk works with interrupts off and in a panic; input comes
 * by interrupt (ISA IRQ 4 through the I/O APIC) into a ring buffer that
 * console_getc/console_read (quire/console.h) drain. See docs/interrupts.md.
 */
#ifndef QUIRE_SERIAL_H
#define QUIRE_SERIAL_H

#include <quire/types.h>

#define SERIAL_IRQ		4	/* COM1's ISA IRQ */
#define SERIAL_RX_BUF_SIZE	1024	/* bytes the ring keeps (a power of two) */

void serial_init(void);
/* Route IRQ 4 to this (the boot) CPU and turn on the receive interrupt. Boot, after ioapic_init. */
int serial_init_irq(void);
void serial_putc(char c);
/* Whether a UART answered at COM1 (false on a machine without one). */
bool serial_present(void);

struct serial_stats {
	u64 interrupts;		/* serial interrupts handled */
	u64 rx_bytes;		/* bytes taken from the UART (kept or dropped) */
	u64 overruns;		/* bytes dropped because the ring was full */
	u64 hw_overruns;	/* times the UART lost bytes itself (LSR overrun) */
	u64 reader_sleeps;	/* times a reader slept waiting for input */
};

/* A snapshot of the counters. */
void serial_get_stats(struct serial_stats *s);
/* The vector and APIC id IRQ 4 was routed to; vector 0 when input is polled. */
u8 serial_irq_vector(void);
u32 serial_irq_apic_id(void);
/* Bytes waiting in the ring. */
size_t serial_rx_available(void);
/* Drop whatever the ring holds; returns how many bytes. */
size_t serial_rx_flush(void);
/* Put bytes in the ring as if the UART had received them (tests, e.g. a shell's). */
void serial_rx_inject(const char *buf, size_t len);

/*
 * Loopback for tests (MCR bit 4): transmitted bytes come back as received,
 * through the receive interrupt. While it is on, console output is dropped
 * (printk still logs), because it would loop back too; a panic turns
 * loopback off and prints. serial_loopback_send writes raw bytes.
 */
void serial_loopback_begin(void);
void serial_loopback_send(const char *buf, size_t len);
void serial_loopback_end(void);
/* The modem and interrupt enable registers, for tests. */
u8 serial_read_mcr(void);
u8 serial_read_ier(void);

#endif
