/*
 * The local APIC (xAPIC, memory-mapped): interrupts between CPUs, the
 * per-CPU timer, end-of-interrupt. Vectors Quire uses are listed here.
 */
#ifndef ASM_APIC_H
#define ASM_APIC_H

#include <quire/types.h>

#define IRQ_VECTOR_BASE		0x20	/* IOAPIC inputs start here */
#define LOCAL_TIMER_VECTOR	0xec
#define CALL_FUNCTION_VECTOR	0xfb
#define RESCHEDULE_VECTOR	0xfd
#define SPURIOUS_APIC_VECTOR	0xff

#define TIMER_HZ		100

/* Map the LAPIC (from MADT's address) and set up this CPU's (BSP) APIC. */
void lapic_init_bsp(void);
/* Enable this CPU's APIC and start its timer (every CPU, the BSP included). */
void lapic_setup_cpu(void);
u32 lapic_id(void);
void lapic_eoi(void);

/* Send an interrupt with this vector to one CPU (by APIC id). */
void lapic_send_ipi(u32 apic_id, u8 vector);
/* Send to every CPU but this one. */
void lapic_send_ipi_all_but_self(u8 vector);
/* NMI to every CPU but this one (panic). */
void lapic_send_nmi_all_but_self(void);
/* INIT and STARTUP (SIPI) for AP bring-up; vector = trampoline page number. */
void lapic_send_init(u32 apic_id);
void lapic_send_sipi(u32 apic_id, u8 vector);

/* LAPIC timer ticks per second, measured at boot. */
extern u64 lapic_timer_hz;

#endif
