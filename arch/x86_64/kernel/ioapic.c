/*
 * I/O APICs. Each has two 32-bit registers in its MMIO page (mapped with
 * ioremap, uncached): IOREGSEL at 0x00 selects a register and IOWIN at 0x10
 * reads or writes it. Register 1 is the version, with the number of inputs
 * less one in bits 16-23; registers 0x10 + 2n (low) and 0x11 + 2n (high)
 * are input n's redirection entry. Input n of an I/O APIC whose MADT entry
 * says gsi_base b is GSI b + n.
 *
 * At boot every input is masked; a driver then routes its ISA IRQ to a CPU
 * and vector with ioapic_route_isa_irq(), which applies the MADT's interrupt
 * source overrides first (QEMU wires the PIT's IRQ 0 to GSI 2, for one).
 * The select/window pair is shared state, so every access is under one lock.
 */
#define pr_fmt(fmt) "ioapic: " fmt
#include <asm/ioapic.h>
#include <asm/io_map.h>
#include <quire/acpi.h>
#include <quire/spinlock.h>
#include <quire/printk.h>
#include <quire/errno.h>

#define IO_REGSEL	0x00
#define IO_WIN		0x10
#define IO_REG_ID	0x00
#define IO_REG_VERSION	0x01
#define IO_REG_TABLE	0x10

#define IOAPIC_DEFAULT_ADDRESS	0xfec00000u
#define IOAPIC_MAX_GSI		256	/* what routed_gsis can remember */

struct ioapic {
	volatile u32 *base;
	u32 id;			/* from the MADT */
	u32 gsi_base;
	u32 nr_pins;
	u8 version;
};

static struct ioapic ioapics[ACPI_MAX_IOAPICS];
static int nr_ioapics;
static DEFINE_SPINLOCK(ioapic_lock);
static u64 routed_gsis[IOAPIC_MAX_GSI / 64];

static u32 io_read(struct ioapic *a, u32 reg)
{
	a->base[IO_REGSEL / 4] = reg;
	return a->base[IO_WIN / 4];
}

static void io_write(struct ioapic *a, u32 reg, u32 v)
{
	a->base[IO_REGSEL / 4] = reg;
	a->base[IO_WIN / 4] = v;
}

static u64 read_entry_locked(struct ioapic *a, u32 pin)
{
	u32 lo = io_read(a, IO_REG_TABLE + 2 * pin);
	u32 hi = io_read(a, IO_REG_TABLE + 2 * pin + 1);

	return (u64)hi << 32 | lo;
}

/*
 * Mask first, then the destination, then the low half with the vector and
 * the final mask bit: the input never fires half-programmed.
 */
static void write_entry_locked(struct ioapic *a, u32 pin, u64 e)
{
	io_write(a, IO_REG_TABLE + 2 * pin, IOAPIC_MASKED);
	io_write(a, IO_REG_TABLE + 2 * pin + 1, (u32)(e >> 32));
	io_write(a, IO_REG_TABLE + 2 * pin, (u32)e);
}

static struct ioapic *gsi_to_ioapic(u32 gsi, u32 *pin)
{
	for (int i = 0; i < nr_ioapics; i++) {
		struct ioapic *a = &ioapics[i];

		if (gsi >= a->gsi_base && gsi - a->gsi_base < a->nr_pins) {
			*pin = gsi - a->gsi_base;
			return a;
		}
	}
	return NULL;
}

static void add_ioapic(u32 id, u32 address, u32 gsi_base)
{
	struct ioapic *a = &ioapics[nr_ioapics];
	u32 ver;

	a->base = ioremap(address, 4096);
	if (!a->base) {
		pr_err("cannot map I/O APIC %u at %#x; its inputs are lost\n", id, address);
		return;
	}
	ver = io_read(a, IO_REG_VERSION);
	if (ver == 0xffffffffu) {
		pr_err("nothing answers at %#x (I/O APIC %u); ignored\n", address, id);
		return;
	}
	a->id = id;
	a->gsi_base = gsi_base;
	a->version = (u8)ver;
	a->nr_pins = ((ver >> 16) & 0xff) + 1;
	if ((io_read(a, IO_REG_ID) >> 24 & 0xf) != (id & 0xf))
		pr_warn("I/O APIC at %#x says id %u, the MADT %u\n", address,
			io_read(a, IO_REG_ID) >> 24 & 0xf, id);
	/* Firmware may have left inputs routed; nothing is delivered until a driver asks. */
	for (u32 pin = 0; pin < a->nr_pins; pin++)
		write_entry_locked(a, pin, IOAPIC_MASKED);
	nr_ioapics++;
	pr_info("I/O APIC %u at %#x: version %#x, %u inputs, GSI %u-%u, all masked\n", id,
		address, a->version, a->nr_pins, gsi_base, gsi_base + a->nr_pins - 1);
}

/* Boot, one CPU, before any input is routed: no lock needed (ioremap may allocate). */
void ioapic_init(void)
{
	if (!acpi_madt.nr_ioapics) {
		pr_warn("the MADT lists no I/O APIC; trying the standard one at %#x\n",
			IOAPIC_DEFAULT_ADDRESS);
		add_ioapic(0, IOAPIC_DEFAULT_ADDRESS, 0);
	}
	for (int i = 0; i < acpi_madt.nr_ioapics; i++) {
		const struct acpi_ioapic *m = &acpi_madt.ioapic[i];

		add_ioapic(m->id, m->address, m->gsi_base);
	}
}

void isa_irq_config(unsigned int irq, struct isa_irq_cfg *cfg)
{
	/* ISA's own signalling: the same-numbered input, edge, active high. */
	cfg->gsi = irq;
	cfg->level = false;
	cfg->active_low = false;
	for (int i = 0; i < acpi_madt.nr_overrides; i++) {
		const struct acpi_irq_override *o = &acpi_madt.override[i];

		if (o->source_irq != irq)
			continue;
		cfg->gsi = o->gsi;
		/* "Conforms" (0) and the reserved value 2 keep ISA's defaults. */
		cfg->level = (o->flags & ACPI_MADT_TRIGGER_MASK) == ACPI_MADT_TRIGGER_LEVEL;
		cfg->active_low = (o->flags & ACPI_MADT_POLARITY_MASK) ==
				  ACPI_MADT_POLARITY_ACTIVE_LOW;
	}
}

int ioapic_route_isa_irq(unsigned int irq, u8 vector, u32 cpu_apic_id)
{
	struct isa_irq_cfg cfg;
	struct ioapic *a;
	unsigned long flags;
	u32 pin;
	u64 e;

	/* Vectors below 32 are exceptions; the APIC cannot deliver 0-15 at all. */
	if (irq >= NR_ISA_IRQS || vector < 32 || cpu_apic_id > 0xff)
		return -EINVAL;
	isa_irq_config(irq, &cfg);
	spin_lock_irqsave(&ioapic_lock, flags);
	a = gsi_to_ioapic(cfg.gsi, &pin);
	if (!a) {
		spin_unlock_irqrestore(&ioapic_lock, flags);
		pr_err("ISA IRQ %u: no I/O APIC has GSI %u\n", irq, cfg.gsi);
		return -ENODEV;
	}
	e = vector | IOAPIC_DM_FIXED | (u64)cpu_apic_id << IOAPIC_DEST_SHIFT;
	if (cfg.level)
		e |= IOAPIC_LEVEL;
	if (cfg.active_low)
		e |= IOAPIC_ACTIVE_LOW;
	write_entry_locked(a, pin, e);
	if (cfg.gsi < IOAPIC_MAX_GSI)
		routed_gsis[cfg.gsi / 64] |= 1ULL << (cfg.gsi % 64);
	spin_unlock_irqrestore(&ioapic_lock, flags);
	pr_info("ISA IRQ %u -> GSI %u (I/O APIC %u input %u, %s, active %s) -> vector %#x on APIC id %u\n",
		irq, cfg.gsi, a->id, pin, cfg.level ? "level" : "edge",
		cfg.active_low ? "low" : "high", vector, cpu_apic_id);
	return 0;
}

int ioapic_set_masked(u32 gsi, bool masked)
{
	unsigned long flags;
	struct ioapic *a;
	u32 pin;
	u64 e;

	spin_lock_irqsave(&ioapic_lock, flags);
	a = gsi_to_ioapic(gsi, &pin);
	if (a) {
		e = read_entry_locked(a, pin) & ~(IOAPIC_MASKED | IOAPIC_DELIVERY_PENDING |
						  IOAPIC_REMOTE_IRR);
		if (masked)
			e |= IOAPIC_MASKED;
		write_entry_locked(a, pin, e);
	}
	spin_unlock_irqrestore(&ioapic_lock, flags);
	return a ? 0 : -ENODEV;
}

int ioapic_count(void)
{
	return nr_ioapics;
}

u32 ioapic_nr_gsis(void)
{
	u32 end = 0;

	for (int i = 0; i < nr_ioapics; i++)
		if (ioapics[i].gsi_base + ioapics[i].nr_pins > end)
			end = ioapics[i].gsi_base + ioapics[i].nr_pins;
	return end;
}

bool ioapic_gsi_valid(u32 gsi)
{
	u32 pin;

	return gsi_to_ioapic(gsi, &pin) != NULL;
}

u64 ioapic_read_entry(u32 gsi)
{
	unsigned long flags;
	struct ioapic *a;
	u32 pin;
	u64 e = 0;

	spin_lock_irqsave(&ioapic_lock, flags);
	a = gsi_to_ioapic(gsi, &pin);
	if (a)
		e = read_entry_locked(a, pin);
	spin_unlock_irqrestore(&ioapic_lock, flags);
	return e;
}

bool ioapic_gsi_routed(u32 gsi)
{
	return gsi < IOAPIC_MAX_GSI &&
	       (__atomic_load_n(&routed_gsis[gsi / 64], __ATOMIC_RELAXED) >> (gsi % 64) & 1);
}
