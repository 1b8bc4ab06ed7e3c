/*
 * Local APIC in xAPIC mode. Registers are 32-bit, 16-byte aligned, in the
 * 4 KiB page at the address MADT gives (0xfee00000 on QEMU), mapped with
 * ioremap (uncached). The legacy 8259 PICs are remapped and masked: every
 * interrupt comes through the APICs.
 */
#define pr_fmt(fmt) "apic: " fmt
#include <asm/apic.h>
#include <asm/io.h>
#include <asm/io_map.h>
#include <asm/cpu.h>
#include <quire/acpi.h>
#include <quire/printk.h>
#include <quire/panic.h>
#include <quire/time.h>

#define APIC_ID		0x20
#define APIC_EOI	0xb0
#define APIC_SVR	0xf0
#define APIC_ESR	0x280
#define APIC_ICR_LOW	0x300
#define APIC_ICR_HIGH	0x310
#define APIC_LVT_TIMER	0x320
#define APIC_LVT_LINT0	0x350
#define APIC_LVT_LINT1	0x360
#define APIC_LVT_ERROR	0x370
#define APIC_TIMER_INIT	0x380
#define APIC_TIMER_CUR	0x390
#define APIC_TIMER_DIV	0x3e0

#define ICR_DELIVERY_NMI	(4 << 8)
#define ICR_DELIVERY_INIT	(5 << 8)
#define ICR_DELIVERY_STARTUP	(6 << 8)
#define ICR_SEND_PENDING	(1 << 12)
#define ICR_LEVEL_ASSERT	(1 << 14)
#define ICR_ALL_BUT_SELF	(3 << 18)
#define LVT_MASKED		(1 << 16)
#define LVT_TIMER_PERIODIC	(1 << 17)

static volatile u32 *lapic;
u64 lapic_timer_hz;

static u32 apic_read(u32 reg)
{
	return lapic[reg / 4];
}

static void apic_write(u32 reg, u32 v)
{
	lapic[reg / 4] = v;
}

u32 lapic_id(void)
{
	return apic_read(APIC_ID) >> 24;
}

void lapic_eoi(void)
{
	apic_write(APIC_EOI, 0);
}

static void wait_icr_idle(void)
{
	for (int spins = 0; apic_read(APIC_ICR_LOW) & ICR_SEND_PENDING; spins++) {
		if (spins > 10000000) {
			pr_err("IPI stuck pending\n");
			return;
		}
		cpu_relax();
	}
}

static void send_icr(u32 apic_id, u32 low)
{
	unsigned long flags = read_flags();

	local_irq_disable();
	wait_icr_idle();
	apic_write(APIC_ICR_HIGH, apic_id << 24);
	apic_write(APIC_ICR_LOW, low);
	wait_icr_idle();
	if (flags & X86_EFLAGS_IF)
		local_irq_enable();
}

void lapic_send_ipi(u32 apic_id, u8 vector)
{
	send_icr(apic_id, vector | ICR_LEVEL_ASSERT);
}

void lapic_send_ipi_all_but_self(u8 vector)
{
	send_icr(0, vector | ICR_LEVEL_ASSERT | ICR_ALL_BUT_SELF);
}

void lapic_send_nmi_all_but_self(void)
{
	send_icr(0, ICR_DELIVERY_NMI | ICR_LEVEL_ASSERT | ICR_ALL_BUT_SELF);
}

void lapic_send_init(u32 apic_id)
{
	send_icr(apic_id, ICR_DELIVERY_INIT | ICR_LEVEL_ASSERT);
}

void lapic_send_sipi(u32 apic_id, u8 vector)
{
	send_icr(apic_id, ICR_DELIVERY_STARTUP | vector);
}

/* Remap the 8259s away from the exception vectors, then mask every line. */
static void disable_legacy_pic(void)
{
	outb(0x20, 0x11);	/* ICW1: init, expect ICW4 */
	outb(0xa0, 0x11);
	outb(0x21, 0x20);	/* ICW2: vectors 0x20.. and 0x28.. */
	outb(0xa1, 0x28);
	outb(0x21, 0x04);	/* ICW3: slave on line 2 */
	outb(0xa1, 0x02);
	outb(0x21, 0x01);	/* ICW4: 8086 mode */
	outb(0xa1, 0x01);
	outb(0x21, 0xff);	/* mask all */
	outb(0xa1, 0xff);
}

/*
 * Count LAPIC timer ticks (divide by 16) against the TSC. The rate is ticks
 * over the TSC time that really passed between the two register reads, and
 * the lowest of three runs is kept: a host that deschedules the vCPU in the
 * middle only makes a run look faster.
 */
static void calibrate_timer(void)
{
	u64 best = ~0ULL;

	apic_write(APIC_TIMER_DIV, 0x3);		/* divide by 16 */
	apic_write(APIC_LVT_TIMER, LVT_MASKED);
	for (int run = 0; run < 3; run++) {
		u64 start, elapsed, hz;
		u32 first, last;

		apic_write(APIC_TIMER_INIT, 0xffffffff);
		first = apic_read(APIC_TIMER_CUR);
		start = ktime_get_ns();
		while (ktime_get_ns() - start < 10 * NSEC_PER_MSEC)
			cpu_relax();
		last = apic_read(APIC_TIMER_CUR);
		elapsed = ktime_get_ns() - start;
		hz = (u64)(first - last) * NSEC_PER_SEC / elapsed;
		if (hz < best)
			best = hz;
	}
	lapic_timer_hz = best;
	apic_write(APIC_TIMER_INIT, 0);
	pr_info("timer: %llu.%03llu MHz (divide by 16), %d Hz tick\n",
		(unsigned long long)(lapic_timer_hz / 1000000),
		(unsigned long long)(lapic_timer_hz / 1000 % 1000), TIMER_HZ);
}

void lapic_init_bsp(void)
{
	u64 phys = acpi_madt.present && acpi_madt.lapic_address ? acpi_madt.lapic_address
								  : 0xfee00000;

	disable_legacy_pic();
	lapic = ioremap(phys, 4096);
	if (!lapic)
		panic("cannot map the local APIC at %#llx", (unsigned long long)phys);
	/* The APIC must be on (MSR 0x1b bit 11) for the MMIO page to answer. */
	wrmsr(0x1b, rdmsr(0x1b) | (1UL << 11));
	apic_write(APIC_SVR, (1 << 8) | SPURIOUS_APIC_VECTOR);
	calibrate_timer();
}

void lapic_setup_cpu(void)
{
	wrmsr(0x1b, rdmsr(0x1b) | (1UL << 11));
	apic_write(APIC_SVR, (1 << 8) | SPURIOUS_APIC_VECTOR);	/* software enable */
	apic_write(APIC_LVT_LINT0, LVT_MASKED);
	apic_write(APIC_LVT_LINT1, LVT_MASKED);
	apic_write(APIC_LVT_ERROR, LVT_MASKED);
	apic_write(APIC_ESR, 0);
	apic_write(APIC_ESR, 0);
	lapic_eoi();
	apic_write(APIC_TIMER_DIV, 0x3);
	apic_write(APIC_LVT_TIMER, LVT_TIMER_PERIODIC | LOCAL_TIMER_VECTOR);
	apic_write(APIC_TIMER_INIT, (u32)(lapic_timer_hz / TIMER_HZ));
}
