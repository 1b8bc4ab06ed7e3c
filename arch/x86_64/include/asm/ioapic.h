/*
 * I/O APICs (arch/x86_64/kernel/ioapic.c): they turn device interrupt lines
 * (global system interrupts, GSIs) into messages to a local APIC. Each
 * input has a 64-bit redirection entry: vector, delivery mode, destination,
 * polarity, trigger mode and a mask bit. See docs/interrupts.md.
 */
#ifndef ASM_IOAPIC_H
#define ASM_IOAPIC_H

#include <quire/types.h>

/* Redirection entry bits (82093AA datasheet, 3.2.4). */
#define IOAPIC_VECTOR_MASK	0xffULL
#define IOAPIC_DM_FIXED		(0ULL << 8)	/* delivery mode */
#define IOAPIC_DEST_LOGICAL	(1ULL << 11)	/* 0: physical (an APIC id) */
#define IOAPIC_DELIVERY_PENDING	(1ULL << 12)	/* read only */
#define IOAPIC_ACTIVE_LOW	(1ULL << 13)
#define IOAPIC_REMOTE_IRR	(1ULL << 14)	/* read only; level mode */
#define IOAPIC_LEVEL		(1ULL << 15)
#define IOAPIC_MASKED		(1ULL << 16)
#define IOAPIC_DEST_SHIFT	56

#define NR_ISA_IRQS		16

/* How an ISA IRQ reaches the I/O APICs, after the MADT's overrides. */
struct isa_irq_cfg {
	u32 gsi;
	bool level;		/* level-triggered (ISA's default: edge) */
	bool active_low;	/* ISA's default: active high */
};

/*
 * Map every I/O APIC the MADT lists and mask all their inputs. Once at boot,
 * after lapic_init_bsp(). Without an MADT, the standard one at 0xfec00000.
 */
void ioapic_init(void);

/* The GSI, trigger and polarity of ISA IRQ irq (0-15), overrides applied. */
void isa_irq_config(unsigned int irq, struct isa_irq_cfg *cfg);

/*
 * Deliver ISA IRQ irq as vector to the CPU with APIC id cpu_apic_id (fixed
 * delivery, physical destination), unmasked. -EINVAL for a bad IRQ or
 * vector, -ENODEV when no I/O APIC has the IRQ's GSI.
 */
int ioapic_route_isa_irq(unsigned int irq, u8 vector, u32 cpu_apic_id);
/* Mask or unmask a GSI's input. -ENODEV when no I/O APIC has it. */
int ioapic_set_masked(u32 gsi, bool masked);

/* For tests and reports. */
int ioapic_count(void);
/* One past the highest GSI any I/O APIC serves. */
u32 ioapic_nr_gsis(void);
/* Whether some I/O APIC has an input for gsi. */
bool ioapic_gsi_valid(u32 gsi);
/* The redirection entry of gsi as the I/O APIC reads it back (0 if none). */
u64 ioapic_read_entry(u32 gsi);
/* Whether gsi was programmed by ioapic_route_isa_irq (and so may be unmasked). */
bool ioapic_gsi_routed(u32 gsi);

#endif
