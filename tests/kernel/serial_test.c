/*
 * Serial input by interrupt, and the I/O APIC route it takes.
 *
 * The UART's loopback mode (MCR bit 4) wires its transmitter to its
 * receiver: each byte sent comes back as received and raises the receive
 * interrupt, which QEMU delivers through the I/O APIC like typed input.
 * While loopback is on, console output is dropped (it would loop back into
 * the data), so no check may fail inside that window: the checks come after
 * serial_loopback_end(). Bytes are sent 14 at a time, and each group waits
 * until the interrupt has taken it, so the UART's 16-byte FIFO never
 * overflows whichever CPU runs the test. 14 is the FIFO's interrupt level:
 * a full group interrupts at once, a shorter last one after the FIFO's
 * timeout (4 character times), so both kinds of receive interrupt are used.
 */
#include <quire/ktest.h>
#include <quire/serial.h>
#include <quire/console.h>
#include <quire/completion.h>
#include <quire/sched.h>
#include <quire/acpi.h>
#include <quire/errno.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/time.h>
#include <asm/ioapic.h>

#define MCR_OUT2	0x08
#define MCR_LOOP	0x10
#define IER_RDI		0x01
#define SEND_CHUNK	14

static void need_irq(struct ktest *t)
{
	if (!serial_present())
		ktest_skip(t, "no UART at COM1");
	if (!serial_irq_vector())
		ktest_skip(t, "serial input is polled (no I/O APIC route)");
}

static u64 rx_bytes_now(void)
{
	struct serial_stats st;

	serial_get_stats(&st);
	return st.rx_bytes;
}

/* Wait until the interrupt has taken `target` bytes in all; false after timeout_ms. */
static bool wait_rx_bytes(u64 target, u64 timeout_ms)
{
	u64 deadline = ktime_get_ns() + timeout_ms * NSEC_PER_MSEC;
	u64 spin_until = ktime_get_ns() + 2 * NSEC_PER_MSEC;

	/* Spin first: the bytes come back in well under a tick (a sleep is at least one). */
	while (rx_bytes_now() < target) {
		u64 now = ktime_get_ns();

		if (now > deadline)
			return false;
		if (now > spin_until)
			msleep(1);
		else
			cpu_relax();
	}
	return true;
}

/* Send through the loop, SEND_CHUNK bytes at a time. Returns false if bytes went missing. */
static bool loop_send(const char *buf, size_t len)
{
	u64 target = rx_bytes_now();

	for (size_t off = 0; off < len; off += SEND_CHUNK) {
		size_t n = len - off < SEND_CHUNK ? len - off : SEND_CHUNK;

		serial_loopback_send(buf + off, n);
		target += n;
		if (!wait_rx_bytes(target, 5000))
			return false;
	}
	return true;
}

/* ---- the I/O APIC ---- */

static void ioapic_entry_for_serial(struct ktest *t)
{
	struct isa_irq_cfg cfg;
	u32 nr, unmasked = 0, first_unmasked = 0;
	u64 e;

	KASSERT_GT(t, ioapic_count(), 0);
	need_irq(t);
	isa_irq_config(SERIAL_IRQ, &cfg);
	/* QEMU's MADT leaves COM1 alone: GSI 4, ISA's edge and active high. */
	KEXPECT_EQ(t, cfg.gsi, 4);
	KEXPECT_FALSE(t, cfg.level);
	KEXPECT_FALSE(t, cfg.active_low);
	KEXPECT_TRUE(t, ioapic_gsi_routed(cfg.gsi));

	e = ioapic_read_entry(cfg.gsi);
	KEXPECT_EQ(t, e & IOAPIC_VECTOR_MASK, serial_irq_vector());
	KEXPECT_EQ(t, e >> IOAPIC_DEST_SHIFT, serial_irq_apic_id());
	KEXPECT_EQ(t, serial_irq_apic_id(), per_cpu_ptr(0)->apic_id);	/* the boot CPU */
	KEXPECT_EQ(t, e & IOAPIC_MASKED, 0);
	KEXPECT_EQ(t, (e >> 8) & 7, 0);				/* fixed delivery */
	KEXPECT_EQ(t, e & IOAPIC_DEST_LOGICAL, 0);		/* physical destination */
	KEXPECT_EQ(t, e & IOAPIC_LEVEL, 0);
	KEXPECT_EQ(t, e & IOAPIC_ACTIVE_LOW, 0);

	/* Every input nobody routed stays masked. */
	nr = ioapic_nr_gsis();
	KEXPECT_GE(t, nr, 16);
	for (u32 gsi = 0; gsi < nr; gsi++) {
		if (!ioapic_gsi_valid(gsi) || ioapic_gsi_routed(gsi))
			continue;
		if (!(ioapic_read_entry(gsi) & IOAPIC_MASKED) && !unmasked++)
			first_unmasked = gsi;
	}
	KEXPECT_EQ(t, unmasked, 0);
	KEXPECT_EQ(t, first_unmasked, 0);
}

/* Each ISA IRQ maps to its own GSI unless the MADT overrides it; then as the override says. */
static void isa_overrides_applied(struct ktest *t)
{
	bool saw_irq0 = false;

	for (unsigned int irq = 0; irq < NR_ISA_IRQS; irq++) {
		const struct acpi_irq_override *o = NULL;
		struct isa_irq_cfg cfg;

		for (int i = 0; i < acpi_madt.nr_overrides; i++)
			if (acpi_madt.override[i].source_irq == irq)
				o = &acpi_madt.override[i];
		isa_irq_config(irq, &cfg);
		if (!o) {
			KEXPECT_EQ(t, cfg.gsi, irq);
			KEXPECT_FALSE(t, cfg.level);
			KEXPECT_FALSE(t, cfg.active_low);
			continue;
		}
		KEXPECT_EQ(t, cfg.gsi, o->gsi);
		KEXPECT_EQ(t, cfg.level,
			   (o->flags & ACPI_MADT_TRIGGER_MASK) == ACPI_MADT_TRIGGER_LEVEL);
		KEXPECT_EQ(t, cfg.active_low,
			   (o->flags & ACPI_MADT_POLARITY_MASK) == ACPI_MADT_POLARITY_ACTIVE_LOW);
		if (irq == 0)
			saw_irq0 = o->gsi == 2;
	}
	/* Every QEMU PC machine wires the PIT (IRQ 0) to GSI 2. */
	if (acpi_madt.nr_ioapics)
		KEXPECT_TRUE(t, saw_irq0);
	KEXPECT_EQ(t, ioapic_route_isa_irq(NR_ISA_IRQS, 0x40, 0), -EINVAL);
	KEXPECT_EQ(t, ioapic_route_isa_irq(3, 0x10, 0), -EINVAL);	/* an exception vector */
}

/* ---- input through the interrupt ---- */

struct reader {
	char buf[64];
	size_t want, got;
	struct completion done;
};

static int reader_fn(void *arg)
{
	struct reader *r = arg;

	while (r->got < r->want)
		r->got += console_read(r->buf + r->got, r->want - r->got);
	complete(&r->done);
	return 0;
}

static const char message[] = "Quire loopback: 0123456789 abcdefghij\r\n";

static void loopback_wakes_reader(struct ktest *t)
{
	static struct reader r;
	struct serial_stats before, after;
	struct task *task;
	u64 deadline;
	bool asleep = false, sent, woke;
	size_t len = sizeof(message) - 1;

	need_irq(t);
	memset(&r, 0, sizeof(r));
	r.want = len;
	init_completion(&r.done);
	serial_rx_flush();
	serial_get_stats(&before);
	task = kthread_run(reader_fn, &r, "serial_reader");
	KASSERT_TRUE(t, task != NULL);

	/* The reader must be asleep in console_read before a byte is sent. */
	deadline = ktime_get_ns() + 5 * NSEC_PER_SEC;
	while (ktime_get_ns() < deadline) {
		struct serial_stats now;

		serial_get_stats(&now);
		if (now.reader_sleeps > before.reader_sleeps &&
		    READ_ONCE(task->state) == TASK_UNINTERRUPTIBLE) {
			asleep = true;
			break;
		}
		msleep(1);
	}

	serial_loopback_begin();
	sent = loop_send(message, len);
	serial_loopback_end();

	woke = wait_for_completion_timeout(&r.done, 5 * NSEC_PER_SEC) != 0;
	if (!woke) {
		/* Let the reader finish so it can be joined; the case fails below. */
		serial_rx_inject("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", len);
		wait_for_completion(&r.done);
	}
	kthread_join(task);
	serial_get_stats(&after);

	KEXPECT_TRUE(t, asleep);
	KEXPECT_TRUE(t, sent);
	KEXPECT_TRUE(t, woke);
	KEXPECT_EQ(t, r.got, len);
	r.buf[r.got < sizeof(r.buf) ? r.got : sizeof(r.buf) - 1] = '\0';
	KEXPECT_STREQ(t, r.buf, message);
	KEXPECT_GT(t, after.interrupts, before.interrupts);
	KEXPECT_EQ(t, after.rx_bytes - before.rx_bytes, len);
	KEXPECT_GT(t, after.reader_sleeps, before.reader_sleeps);
	KEXPECT_EQ(t, after.overruns, before.overruns);
	KEXPECT_EQ(t, after.hw_overruns, before.hw_overruns);
	KEXPECT_EQ(t, serial_rx_available(), 0);
}

static char pattern(size_t i)
{
	return (char)('A' + i * 7 % 53);
}

/* More than the ring holds, nobody reading: the first 1024 bytes kept intact, the rest counted. */
static void ring_overrun_counted(struct ktest *t)
{
	enum { EXTRA = 100, TOTAL = SERIAL_RX_BUF_SIZE + EXTRA };
	static char out[TOTAL], in[SERIAL_RX_BUF_SIZE];
	struct serial_stats before, after;
	size_t got = 0, mismatch = 0, first_bad = 0;
	bool sent;

	need_irq(t);
	for (size_t i = 0; i < TOTAL; i++)
		out[i] = pattern(i);
	serial_rx_flush();
	serial_get_stats(&before);

	serial_loopback_begin();
	sent = loop_send(out, TOTAL);
	serial_loopback_end();

	serial_get_stats(&after);
	KEXPECT_TRUE(t, sent);
	KEXPECT_EQ(t, after.rx_bytes - before.rx_bytes, TOTAL);
	KEXPECT_EQ(t, after.overruns - before.overruns, EXTRA);
	KEXPECT_EQ(t, after.hw_overruns, before.hw_overruns);
	KEXPECT_EQ(t, serial_rx_available(), SERIAL_RX_BUF_SIZE);
	/* A full ring reads back without blocking. */
	while (got < sizeof(in) && serial_rx_available())
		got += console_read(in + got, sizeof(in) - got);
	KEXPECT_EQ(t, got, SERIAL_RX_BUF_SIZE);
	for (size_t i = 0; i < got; i++)
		if (in[i] != out[i] && !mismatch++)
			first_bad = i;
	KEXPECT_EQ(t, mismatch, 0);
	KEXPECT_EQ(t, first_bad, 0);
	KEXPECT_EQ(t, console_getc(false), -EAGAIN);
}

/* After the tests the UART is back to normal: output goes out, not back in. */
static void console_restored(struct ktest *t)
{
	u64 before;

	if (!serial_present())
		ktest_skip(t, "no UART at COM1");
	KEXPECT_EQ(t, serial_read_mcr() & MCR_LOOP, 0);
	if (serial_irq_vector()) {
		KEXPECT_EQ(t, serial_read_mcr() & MCR_OUT2, MCR_OUT2);
		KEXPECT_EQ(t, serial_read_ier() & IER_RDI, IER_RDI);
	}
	serial_rx_flush();
	before = rx_bytes_now();
	pr_info("serial_test: this line goes to the terminal, not back into the UART\n");
	msleep(5);
	KEXPECT_EQ(t, rx_bytes_now(), before);
}

KTEST_SUITE(serial,
	    KTEST_CASE(ioapic_entry_for_serial),
	    KTEST_CASE(isa_overrides_applied),
	    KTEST_CASE(loopback_wakes_reader),
	    KTEST_CASE(ring_overrun_counted),
	    KTEST_CASE(console_restored));
