/*
 * 16550 UART on COM1 (I/O port 0x3f8), 115200 8N1. This is the console:
 * printk writes here, and QEMU's -serial stdio shows it.
 *
 * Output is polled (wait for the transmit holding register, write the byte)
 * so that printk works with interrupts off, from any CPU, and in a panic.
 *
 * Input comes by interrupt: the "received data available" interrupt (IER
 * bit 0) raises ISA IRQ 4, which the I/O APIC delivers to the boot CPU. The
 * handler drains the UART's 16-byte FIFO into a ring buffer and wakes the
 * readers sleeping in console_getc/console_read. MCR's OUT2 must be set
 * too: on PC boards that output gates the UART's IRQ line. The IRQ is edge
 * triggered, so the handler keeps reading until the UART has nothing
 * pending; an interrupt condition left standing would never give another
 * edge. Without an I/O APIC route, readers poll the UART instead.
 */
#define pr_fmt(fmt) "serial: " fmt
#include <quire/serial.h>
#include <quire/time.h>
#include <quire/console.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/spinlock.h>
#include <quire/wait.h>
#include <quire/errno.h>
#include <asm/io.h>
#include <asm/apic.h>
#include <asm/ioapic.h>
#include <asm/irq.h>

#define COM1		0x3f8
#define UART_DATA	0	/* receive/transmit (DLAB=0), divisor low (DLAB=1) */
#define UART_IER	1	/* interrupt enable; divisor high (DLAB=1) */
#define UART_IIR	2	/* interrupt identification (read) */
#define UART_FCR	2	/* FIFO control (write) */
#define UART_LCR	3	/* line control */
#define UART_MCR	4	/* modem control */
#define UART_LSR	5	/* line status */
#define UART_SCR	7	/* scratch */

#define IER_RDI		0x01	/* received data available (and FIFO timeout) */
#define IIR_NO_INT	0x01	/* no interrupt pending */
#define MCR_DTR		0x01
#define MCR_RTS		0x02
#define MCR_OUT2	0x08	/* gates the IRQ line on PCs */
#define MCR_LOOP	0x10	/* loopback: transmitter wired to receiver */
#define LSR_DR		0x01	/* data ready */
#define LSR_OE		0x02	/* overrun: the FIFO was full, a byte was lost */
#define LSR_THRE	0x20	/* transmit holding register empty */
#define LSR_TEMT	0x40	/* transmitter completely empty */

/* Bytes one interrupt takes at most: a UART that never runs dry cannot hold the CPU. */
#define RX_DRAIN_MAX	(4 * SERIAL_RX_BUF_SIZE)

static bool present;
static u8 mcr = MCR_DTR | MCR_RTS;
static u8 irq_vector;			/* 0: input is polled */
static u32 irq_apic_id;

/* The ring: rx_head - rx_tail bytes, indexes free-running (mod 2^32). */
static DEFINE_SPINLOCK(rx_lock);
static char rx_buf[SERIAL_RX_BUF_SIZE];
static u32 rx_head, rx_tail;
static struct serial_stats stats;	/* under rx_lock, but reader_sleeps (atomic) */
static DECLARE_WAIT_QUEUE_HEAD(rx_wait);

/* Console output paused for loopback, and the console_write calls in flight. */
static int output_paused;
static int output_writers;

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
	outb(COM1 + UART_IER, 0x00);	/* no interrupts until serial_init_irq */
	outb(COM1 + UART_LCR, 0x80);	/* DLAB on to set the divisor */
	outb(COM1 + UART_DATA, 1);	/* 115200 baud */
	outb(COM1 + UART_IER, 0);
	outb(COM1 + UART_LCR, 0x03);	/* 8 bits, no parity, one stop bit */
	/*
	 * FIFOs stay off until serial_init_irq: switching them on clears the
	 * receive side, and input typed (or piped) before boot would be lost.
	 */
	outb(COM1 + UART_FCR, 0x00);
	outb(COM1 + UART_MCR, mcr);	/* DTR, RTS */
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

/* A panic must be seen: leave loopback and print, whatever a test was doing. */
static void unpause_for_panic(void)
{
	outb(COM1 + UART_MCR, mcr);
	__atomic_store_n(&output_paused, 0, __ATOMIC_SEQ_CST);
}

/*
 * Called by printk (under its own lock, interrupts off). The paused check
 * and the writer count pair up with pause_output(): either the writer sees
 * the pause, or the pauser sees the writer and waits for it.
 */
void console_write(const char *s, size_t len)
{
	if (__atomic_load_n(&output_paused, __ATOMIC_SEQ_CST)) {
		if (!panic_in_progress)
			return;
		unpause_for_panic();
	}
	__atomic_add_fetch(&output_writers, 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&output_paused, __ATOMIC_SEQ_CST)) {
		for (size_t i = 0; i < len; i++) {
			if (s[i] == '\n')
				serial_putc('\r');
			serial_putc(s[i]);
		}
	}
	__atomic_sub_fetch(&output_writers, 1, __ATOMIC_RELEASE);
}

/* ---- receive ---- */

static size_t rx_count_locked(void)
{
	return rx_head - rx_tail;
}

size_t serial_rx_available(void)
{
	return __atomic_load_n(&rx_head, __ATOMIC_ACQUIRE) -
	       __atomic_load_n(&rx_tail, __ATOMIC_RELAXED);
}

/* The newest byte is the one dropped when the ring is full: what was typed first is kept. */
static bool rx_put_locked(char c)
{
	if (rx_count_locked() == SERIAL_RX_BUF_SIZE) {
		stats.overruns++;
		return false;
	}
	rx_buf[rx_head % SERIAL_RX_BUF_SIZE] = c;
	__atomic_store_n(&rx_head, rx_head + 1, __ATOMIC_RELEASE);
	return true;
}

static int rx_get_locked(void)
{
	u8 c;

	if (!rx_count_locked())
		return -EAGAIN;
	c = (u8)rx_buf[rx_tail % SERIAL_RX_BUF_SIZE];
	__atomic_store_n(&rx_tail, rx_tail + 1, __ATOMIC_RELAXED);
	return c;
}

/* Move what the UART holds into the ring. Returns the bytes read. */
static size_t drain_uart_locked(void)
{
	size_t n;
	char c;

	for (n = 0; n < RX_DRAIN_MAX; n++) {
		u8 lsr = inb(COM1 + UART_LSR);

		if (lsr & LSR_OE)
			stats.hw_overruns++;
		if (!(lsr & LSR_DR))
			break;
		stats.rx_bytes++;
		c = (char)inb(COM1 + UART_DATA);
		if (tty_receive_signal_char(c))	/* ^C and its kind: the input before it goes */
			__atomic_store_n(&rx_tail, rx_head, __ATOMIC_RELAXED);
		else
			rx_put_locked(c);
	}
	return n;
}

/*
 * Interrupts are off here; readers take rx_lock with irqsave, so this CPU
 * cannot already hold it.
 */
static void serial_interrupt(struct pt_regs *regs, void *unused)
{
	size_t got = 0;
	int rounds = 0;

	spin_lock(&rx_lock);
	stats.interrupts++;
	do {
		got += drain_uart_locked();
	} while (!(inb(COM1 + UART_IIR) & IIR_NO_INT) && ++rounds < 4);
	spin_unlock(&rx_lock);
	if (got)
		wake_up(&rx_wait);
}

int serial_init_irq(void)
{
	unsigned long flags;
	u8 vector;
	int err = -EBUSY;

	if (!present)
		return -ENODEV;
	/* IRQ 4's own vector if it is free, else the next free one among the IOAPIC's. */
	for (vector = IRQ_VECTOR_BASE + SERIAL_IRQ; vector < IRQ_VECTOR_BASE + 32; vector++) {
		err = request_vector(vector, serial_interrupt, NULL, "serial");
		if (err != -EBUSY)
			break;
	}
	if (err) {
		pr_warn("no free vector for IRQ %d (%d); input is polled\n", SERIAL_IRQ, err);
		return err;
	}
	err = ioapic_route_isa_irq(SERIAL_IRQ, vector, lapic_id());
	if (err) {
		pr_warn("cannot route IRQ %d (%d); input is polled\n", SERIAL_IRQ, err);
		return err;
	}
	spin_lock_irqsave(&rx_lock, flags);
	irq_apic_id = lapic_id();
	mcr |= MCR_OUT2;
	outb(COM1 + UART_MCR, mcr);
	outb(COM1 + UART_IER, IER_RDI);
	/*
	 * Input that arrived before now sits in the one-byte receive register,
	 * refilled from the host as it is read: take it until the line has
	 * been quiet for 2 ms, then switch the FIFOs on (which clears them)
	 * and let the interrupt cover what follows.
	 */
	for (u64 quiet = ktime_get_ns(); ktime_get_ns() - quiet < 2 * NSEC_PER_MSEC;) {
		if (inb(COM1 + UART_LSR) & 0x01) {
			rx_put_locked((char)inb(COM1 + UART_DATA));
			quiet = ktime_get_ns();
		}
	}
	outb(COM1 + UART_FCR, 0xc7);	/* FIFOs on, interrupt at 14 bytes */
	drain_uart_locked();
	__atomic_store_n(&irq_vector, vector, __ATOMIC_RELEASE);
	spin_unlock_irqrestore(&rx_lock, flags);
	pr_info("COM1 input by interrupt: IRQ %d, vector %#x, APIC id %u, %d-byte buffer\n",
		SERIAL_IRQ, vector, irq_apic_id, SERIAL_RX_BUF_SIZE);
	return 0;
}

u8 serial_irq_vector(void)
{
	return __atomic_load_n(&irq_vector, __ATOMIC_ACQUIRE);
}

u32 serial_irq_apic_id(void)
{
	return irq_apic_id;
}

void serial_get_stats(struct serial_stats *s)
{
	unsigned long flags;

	spin_lock_irqsave(&rx_lock, flags);
	*s = stats;
	s->reader_sleeps = __atomic_load_n(&stats.reader_sleeps, __ATOMIC_RELAXED);
	spin_unlock_irqrestore(&rx_lock, flags);
}

size_t serial_rx_flush(void)
{
	unsigned long flags;
	size_t n;

	spin_lock_irqsave(&rx_lock, flags);
	n = rx_count_locked();
	__atomic_store_n(&rx_tail, rx_head, __ATOMIC_RELAXED);
	spin_unlock_irqrestore(&rx_lock, flags);
	return n;
}

void serial_rx_inject(const char *buf, size_t len)
{
	unsigned long flags;

	spin_lock_irqsave(&rx_lock, flags);
	for (size_t i = 0; i < len; i++)
		rx_put_locked(buf[i]);
	spin_unlock_irqrestore(&rx_lock, flags);
	wake_up(&rx_wait);
}

/* ---- console input ---- */

struct wait_queue_head *console_input_wait_queue(void)
{
	return serial_irq_vector() ? &rx_wait : NULL;
}

/*
 * Sleep until the ring may hold something (or, without the interrupt, for
 * a poll period); interruptible: until then, or a signal.
 */
static void wait_for_input(bool interruptible)
{
	int state = interruptible ? TASK_INTERRUPTIBLE : TASK_UNINTERRUPTIBLE;
	DEFINE_WAIT(w);

	if (!serial_irq_vector()) {
		set_current_state(state);
		if (!interruptible || !signal_pending(current))
			schedule_timeout_ns(10 * NSEC_PER_MSEC);
		__set_current_state(TASK_RUNNING);
		return;
	}
	prepare_to_wait(&rx_wait, &w, state);
	if (!serial_rx_available() && !(interruptible && signal_pending(current))) {
		__atomic_add_fetch(&stats.reader_sleeps, 1, __ATOMIC_RELAXED);
		schedule();
	}
	finish_wait(&rx_wait, &w);
}

/* The next byte; block: wait for one (interruptible: -ERESTARTSYS for a signal). */
static int getc_wait(bool block, bool interruptible)
{
	unsigned long flags;
	int c;

	if (block)
		might_sleep();
	for (;;) {
		spin_lock_irqsave(&rx_lock, flags);
		if (present && !irq_vector)
			drain_uart_locked();
		c = rx_get_locked();
		spin_unlock_irqrestore(&rx_lock, flags);
		if (c >= 0 || !block)
			return c;
		if (interruptible && signal_pending(current))
			return -ERESTARTSYS;
		wait_for_input(interruptible);
	}
}

size_t console_input_available(void)
{
	unsigned long flags;

	if (present && !serial_irq_vector()) {
		spin_lock_irqsave(&rx_lock, flags);
		drain_uart_locked();
		spin_unlock_irqrestore(&rx_lock, flags);
	}
	return serial_rx_available();
}

int console_getc(bool block)
{
	return getc_wait(block, false);
}

static long read_wait(char *buf, size_t len, bool interruptible)
{
	unsigned long flags;
	size_t n = 0;
	int c;

	if (!len)
		return 0;
	c = getc_wait(true, interruptible);
	if (c < 0)
		return c;
	buf[n++] = (char)c;
	spin_lock_irqsave(&rx_lock, flags);
	while (n < len && (c = rx_get_locked()) >= 0)
		buf[n++] = (char)c;
	spin_unlock_irqrestore(&rx_lock, flags);
	return (long)n;
}

size_t console_read(char *buf, size_t len)
{
	return (size_t)read_wait(buf, len, false);
}

long console_read_interruptible(char *buf, size_t len)
{
	return read_wait(buf, len, true);
}

/* ---- loopback, for tests ---- */

static void wait_tx_empty(void)
{
	for (int spins = 0; spins < 1000000; spins++)
		if (inb(COM1 + UART_LSR) & LSR_TEMT)
			return;
}

static void pause_output(void)
{
	__atomic_store_n(&output_paused, 1, __ATOMIC_SEQ_CST);
	/* Bounded: a CPU stopped inside console_write must not hang the test. */
	for (long spins = 0; spins < 100000000; spins++) {
		if (!__atomic_load_n(&output_writers, __ATOMIC_SEQ_CST))
			return;
		cpu_relax();
	}
}

void serial_loopback_begin(void)
{
	unsigned long flags;

	pause_output();
	wait_tx_empty();	/* what was printed before goes out, not back in */
	spin_lock_irqsave(&rx_lock, flags);
	outb(COM1 + UART_MCR, mcr | MCR_LOOP);
	spin_unlock_irqrestore(&rx_lock, flags);
}

void serial_loopback_send(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		serial_putc(buf[i]);
}

void serial_loopback_end(void)
{
	unsigned long flags;

	wait_tx_empty();	/* the last byte sent comes back before the loop opens */
	spin_lock_irqsave(&rx_lock, flags);
	outb(COM1 + UART_MCR, mcr);
	spin_unlock_irqrestore(&rx_lock, flags);
	__atomic_store_n(&output_paused, 0, __ATOMIC_SEQ_CST);
}

u8 serial_read_mcr(void)
{
	return inb(COM1 + UART_MCR);
}

u8 serial_read_ier(void)
{
	return inb(COM1 + UART_IER);
}
