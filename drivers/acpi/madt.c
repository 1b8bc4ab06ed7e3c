/*
 * MADT ("APIC"): the processors, the I/O APICs and the ISA interrupt source
 * overrides (which GSI each ISA IRQ arrives on, and how). Each Local APIC
 * or x2APIC entry that is enabled, or online-capable (can be brought up
 * later), gets the next logical CPU id, in table order, as Linux numbers
 * them; the first is the boot CPU on every firmware Quire boots on.
 */
#define pr_fmt(fmt) "acpi: " fmt
#include <quire/acpi.h>
#include <quire/printk.h>
#include "internal.h"

struct acpi_madt_info acpi_madt;

static void add_cpu(u32 apic_id, u32 uid, u32 flags, bool x2apic)
{
	static const char *const kind[] = { "APIC", "x2APIC" };

	if (!(flags & (ACPI_MADT_ENABLED | ACPI_MADT_ONLINE_CAPABLE)))
		return;		/* disabled for good */
	for (int i = 0; i < acpi_madt.nr_cpus; i++) {
		if (acpi_madt.apic_id[i] == apic_id) {
			pr_warn("MADT: %s id %u listed twice; the second entry ignored\n",
				kind[x2apic], apic_id);
			return;
		}
	}
	if (acpi_madt.nr_cpus == MAX_CPUS) {
		pr_warn("MADT: more than %d CPUs; %s id %u ignored\n", MAX_CPUS,
			kind[x2apic], apic_id);
		return;
	}
	acpi_madt.apic_id[acpi_madt.nr_cpus] = apic_id;
	acpi_madt.acpi_uid[acpi_madt.nr_cpus] = uid;
	acpi_madt.x2apic[acpi_madt.nr_cpus] = x2apic;
	acpi_madt.nr_cpus++;
}

static void add_ioapic(const struct acpi_madt_io_apic *e)
{
	struct acpi_ioapic *io;

	if (acpi_madt.nr_ioapics == ACPI_MAX_IOAPICS) {
		pr_warn("MADT: more than %d I/O APICs; id %u ignored\n", ACPI_MAX_IOAPICS, e->id);
		return;
	}
	io = &acpi_madt.ioapic[acpi_madt.nr_ioapics++];
	io->id = e->id;
	io->address = e->address;
	io->gsi_base = e->global_irq_base;
}

/* The signalling an override gives, "conforms to the bus" resolved to ISA's edge/high. */
static const char *polarity_name(u16 flags)
{
	switch (flags & ACPI_MADT_POLARITY_MASK) {
	case ACPI_MADT_POLARITY_CONFORMS:
	case ACPI_MADT_POLARITY_ACTIVE_HIGH: return "active high";
	case ACPI_MADT_POLARITY_ACTIVE_LOW: return "active low";
	default: return "reserved polarity";
	}
}

static const char *trigger_name(u16 flags)
{
	switch (flags & ACPI_MADT_TRIGGER_MASK) {
	case ACPI_MADT_TRIGGER_CONFORMS:
	case ACPI_MADT_TRIGGER_EDGE: return "edge";
	case ACPI_MADT_TRIGGER_LEVEL: return "level";
	default: return "reserved trigger";
	}
}

/*
 * Only the ISA bus exists for overrides (ACPI 6.5, 5.2.12.5). A later entry
 * for the same IRQ replaces an earlier one, as in Linux.
 */
static void add_override(const struct acpi_madt_interrupt_override *e)
{
	struct acpi_irq_override *o = NULL;

	if (e->bus != 0 || e->source_irq >= 16) {
		pr_warn("MADT: override of bus %u IRQ %u is not an ISA IRQ; ignored\n",
			e->bus, e->source_irq);
		return;
	}
	for (int i = 0; i < acpi_madt.nr_overrides; i++)
		if (acpi_madt.override[i].source_irq == e->source_irq)
			o = &acpi_madt.override[i];
	if (!o)
		o = &acpi_madt.override[acpi_madt.nr_overrides++];	/* at most 16 ISA IRQs */
	o->source_irq = e->source_irq;
	o->gsi = e->global_irq;
	o->flags = e->inti_flags;
	pr_info("MADT: ISA IRQ %u -> GSI %u (%s, %s)\n", e->source_irq, e->global_irq,
		trigger_name(e->inti_flags), polarity_name(e->inti_flags));
}

/* An entry shorter than its type's layout is skipped; a longer one is a newer revision. */
static bool entry_fits(const struct acpi_subtable_header *e, size_t need)
{
	if (e->length >= need)
		return true;
	pr_warn("MADT: entry of type %u is %u bytes, under the %zu it needs; skipped\n",
		e->type, e->length, need);
	return false;
}

void acpi_parse_madt(const struct acpi_table_header *t)
{
	const struct acpi_table_madt *madt = (const void *)t;
	const struct acpi_subtable_header *e;
	u32 off = sizeof(*madt);

	if (!t) {
		pr_warn("no MADT: only the boot CPU is known\n");
		return;
	}
	if (t->length < sizeof(*madt)) {
		pr_warn("MADT is truncated (%u bytes); only the boot CPU is known\n", t->length);
		return;
	}
	acpi_madt.present = true;
	acpi_madt.lapic_address = madt->lapic_address;
	while ((e = acpi_next_subtable(t, &off))) {
		switch (e->type) {
		case ACPI_MADT_TYPE_LOCAL_APIC: {
			const struct acpi_madt_local_apic *p = (const void *)e;

			if (entry_fits(e, sizeof(*p)))
				add_cpu(p->id, p->processor_id, p->lapic_flags, false);
			break;
		}
		case ACPI_MADT_TYPE_LOCAL_X2APIC: {
			const struct acpi_madt_local_x2apic *p = (const void *)e;

			if (entry_fits(e, sizeof(*p)))
				add_cpu(p->local_apic_id, p->uid, p->lapic_flags, true);
			break;
		}
		case ACPI_MADT_TYPE_IO_APIC:
			if (entry_fits(e, sizeof(struct acpi_madt_io_apic)))
				add_ioapic((const void *)e);
			break;
		case ACPI_MADT_TYPE_INTERRUPT_OVERRIDE:
			if (entry_fits(e, sizeof(struct acpi_madt_interrupt_override)))
				add_override((const void *)e);
			break;
		case ACPI_MADT_TYPE_LOCAL_APIC_OVERRIDE: {
			const struct acpi_madt_local_apic_override *p = (const void *)e;

			if (entry_fits(e, sizeof(*p)))
				acpi_madt.lapic_address = p->address;
			break;
		}
		default:
			break;	/* NMI sources, ...: later */
		}
	}
	if (!acpi_madt.nr_cpus)
		pr_warn("MADT lists no usable CPU; only the boot CPU is known\n");
	pr_info("MADT: %d CPUs, %d I/O APICs, local APIC at %#llx\n", acpi_madt.nr_cpus,
		acpi_madt.nr_ioapics, (unsigned long long)acpi_madt.lapic_address);
}
