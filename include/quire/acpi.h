/*
 * ACPI: the firmware tables Quire reads to learn the machine (RSDP, RSDT or
 * XSDT, MADT, SRAT, SLIT, HMAT), with the field layouts of ACPI 6.5, and
 * what drivers/acpi records from them (handed to mm/numa.c as a struct
 * numa_desc, and read by SMP and interrupt setup).
 * Everything on the firmware side is little-endian and unaligned, hence the
 * packed structures. See docs/numa.md.
 */
#ifndef QUIRE_ACPI_H
#define QUIRE_ACPI_H

#include <quire/types.h>
#include <quire/numa.h>

/* ---- Root System Description Pointer (ACPI 6.5, 5.2.5.3) ---- */

#define ACPI_RSDP_SIG		"RSD PTR "
#define ACPI_RSDP_V1_LEN	20	/* what the first checksum covers */
#define ACPI_RSDP_V2_LEN	36

struct acpi_rsdp {
	char signature[8];
	u8 checksum;			/* bytes 0-19 sum to 0 */
	char oem_id[6];
	u8 revision;			/* 0: ACPI 1.0; 2: ACPI 2.0 and later */
	u32 rsdt_address;
	/* revision >= 2 */
	u32 length;			/* of this structure: 36 */
	u64 xsdt_address;
	u8 extended_checksum;		/* all 36 bytes sum to 0 */
	u8 reserved[3];
} __packed;

/* ---- System Description Table header (5.2.6), shared by every table ---- */

struct acpi_table_header {
	char signature[4];
	u32 length;			/* of the whole table, header included */
	u8 revision;
	u8 checksum;			/* the whole table sums to 0 */
	char oem_id[6];
	char oem_table_id[8];
	u32 oem_revision;
	u32 asl_compiler_id;
	u32 asl_compiler_revision;
} __packed;

/* RSDT: header then u32 table addresses; XSDT: header then u64 addresses. */

/* ---- MADT, signature "APIC" (5.2.12) ---- */

struct acpi_table_madt {
	struct acpi_table_header header;
	u32 lapic_address;
	u32 flags;
} __packed;

struct acpi_subtable_header {		/* MADT and SRAT entries */
	u8 type;
	u8 length;
} __packed;

enum acpi_madt_type {
	ACPI_MADT_TYPE_LOCAL_APIC = 0,
	ACPI_MADT_TYPE_IO_APIC = 1,
	ACPI_MADT_TYPE_INTERRUPT_OVERRIDE = 2,
	ACPI_MADT_TYPE_LOCAL_APIC_OVERRIDE = 5,
	ACPI_MADT_TYPE_LOCAL_X2APIC = 9,
};

#define ACPI_MADT_ENABLED		(1u << 0)
#define ACPI_MADT_ONLINE_CAPABLE	(1u << 1)

struct acpi_madt_local_apic {		/* type 0, 8 bytes */
	struct acpi_subtable_header header;
	u8 processor_id;
	u8 id;
	u32 lapic_flags;
} __packed;

struct acpi_madt_io_apic {		/* type 1, 12 bytes */
	struct acpi_subtable_header header;
	u8 id;
	u8 reserved;
	u32 address;
	u32 global_irq_base;
} __packed;

/*
 * An ISA IRQ that does not reach the I/O APIC input of the same number, or
 * not with ISA's edge/active-high signalling. QEMU's q35: IRQ 0 (the PIT)
 * -> GSI 2, and the PCI/SCI lines level/active-high.
 */
struct acpi_madt_interrupt_override {	/* type 2, 10 bytes */
	struct acpi_subtable_header header;
	u8 bus;				/* 0: ISA */
	u8 source_irq;
	u32 global_irq;			/* the GSI it arrives on */
	u16 inti_flags;			/* ACPI_MADT_POLARITY_* | ACPI_MADT_TRIGGER_* */
} __packed;

/* MPS INTI flags (Table 5.26): 0 means "as the bus says" (ISA: edge, active high). */
#define ACPI_MADT_POLARITY_MASK		0x3
#define ACPI_MADT_POLARITY_CONFORMS	0x0
#define ACPI_MADT_POLARITY_ACTIVE_HIGH	0x1
#define ACPI_MADT_POLARITY_ACTIVE_LOW	0x3
#define ACPI_MADT_TRIGGER_MASK		0xc
#define ACPI_MADT_TRIGGER_CONFORMS	0x0
#define ACPI_MADT_TRIGGER_EDGE		0x4
#define ACPI_MADT_TRIGGER_LEVEL		0xc

struct acpi_madt_local_apic_override {	/* type 5, 12 bytes */
	struct acpi_subtable_header header;
	u16 reserved;
	u64 address;
} __packed;

struct acpi_madt_local_x2apic {		/* type 9, 16 bytes */
	struct acpi_subtable_header header;
	u16 reserved;
	u32 local_apic_id;
	u32 lapic_flags;
	u32 uid;
} __packed;

/* ---- SRAT (5.2.16) ---- */

struct acpi_table_srat {
	struct acpi_table_header header;
	u32 table_revision;		/* must be 1 */
	u64 reserved;
} __packed;

enum acpi_srat_type {
	ACPI_SRAT_TYPE_CPU_AFFINITY = 0,
	ACPI_SRAT_TYPE_MEMORY_AFFINITY = 1,
	ACPI_SRAT_TYPE_X2APIC_CPU_AFFINITY = 2,
};

#define ACPI_SRAT_CPU_ENABLED		(1u << 0)
#define ACPI_SRAT_MEM_ENABLED		(1u << 0)
#define ACPI_SRAT_MEM_HOT_PLUGGABLE	(1u << 1)
#define ACPI_SRAT_MEM_NON_VOLATILE	(1u << 2)

struct acpi_srat_cpu_affinity {		/* type 0, 16 bytes */
	struct acpi_subtable_header header;
	u8 proximity_domain_lo;
	u8 apic_id;
	u32 flags;
	u8 local_sapic_eid;
	u8 proximity_domain_hi[3];	/* used from SRAT revision 2 */
	u32 clock_domain;
} __packed;

struct acpi_srat_mem_affinity {		/* type 1, 40 bytes */
	struct acpi_subtable_header header;
	u32 proximity_domain;		/* 8 bits only up to SRAT revision 1 */
	u16 reserved;
	u64 base_address;
	u64 length;
	u32 reserved1;
	u32 flags;
	u64 reserved2;
} __packed;

struct acpi_srat_x2apic_cpu_affinity {	/* type 2, 24 bytes */
	struct acpi_subtable_header header;
	u16 reserved;
	u32 proximity_domain;
	u32 apic_id;
	u32 flags;
	u32 clock_domain;
	u32 reserved2;
} __packed;

/* ---- SLIT (5.2.17) ---- */

struct acpi_table_slit {
	struct acpi_table_header header;
	u64 locality_count;
	u8 entry[];			/* locality_count x locality_count */
} __packed;

#define ACPI_SLIT_UNREACHABLE	0xff

/* ---- HMAT (5.2.28) ---- */

struct acpi_table_hmat {
	struct acpi_table_header header;
	u32 reserved;
} __packed;

struct acpi_hmat_structure {		/* HMAT entries: 16-bit type, 32-bit length */
	u16 type;
	u16 reserved;
	u32 length;
} __packed;

enum acpi_hmat_type {
	ACPI_HMAT_TYPE_PROXIMITY = 0,	/* memory proximity domain attributes */
	ACPI_HMAT_TYPE_LOCALITY = 1,	/* system locality latency and bandwidth */
	ACPI_HMAT_TYPE_CACHE = 2,	/* memory side cache (not used) */
};

#define ACPI_HMAT_INITIATOR_PD_VALID	(1u << 0)

struct acpi_hmat_proximity_domain {	/* type 0, 40 bytes */
	struct acpi_hmat_structure header;
	u16 flags;
	u16 reserved1;
	u32 processor_pd;		/* the attached initiator */
	u32 memory_pd;
	u32 reserved2;
	u64 reserved3;			/* ACPI 6.2: range start; unused since 6.3 */
	u64 reserved4;			/* ACPI 6.2: range length */
} __packed;

#define ACPI_HMAT_MEMORY_HIERARCHY	0x0f	/* flags: 0 memory, 1-3 cache level */
#define ACPI_HMAT_MEMORY		0

enum acpi_hmat_data_type {
	ACPI_HMAT_ACCESS_LATENCY = 0,
	ACPI_HMAT_READ_LATENCY = 1,
	ACPI_HMAT_WRITE_LATENCY = 2,
	ACPI_HMAT_ACCESS_BANDWIDTH = 3,
	ACPI_HMAT_READ_BANDWIDTH = 4,
	ACPI_HMAT_WRITE_BANDWIDTH = 5,
	ACPI_HMAT_NR_DATA_TYPES,
};

/*
 * Type 1, 32 bytes, then u32 initiator_pd[n_init], u32 target_pd[n_target]
 * and u16 entry[n_init][n_target]. An entry times entry_base_unit is in
 * picoseconds (latencies) or MB/s (bandwidths); 0 means no information and
 * 0xffff unreachable.
 */
struct acpi_hmat_locality {
	struct acpi_hmat_structure header;
	u8 flags;
	u8 data_type;
	u8 min_transfer_size;
	u8 reserved1;
	u32 number_of_initiator_pds;
	u32 number_of_target_pds;
	u32 reserved2;
	u64 entry_base_unit;
} __packed;

/* ---- what acpi_init() records ---- */

/*
 * Proximity domains are kept as "domain indexes": 0, 1, 2, ... in the order
 * SRAT first names each domain. numa_init() makes the index the node id.
 */
#define ACPI_MAX_DOMAINS	MAX_NUMNODES
#define ACPI_MAX_MEM_AFFINITY	32
#define ACPI_MAX_IOAPICS	8
#define ACPI_MAX_IRQ_OVERRIDES	16	/* ISA has 16 IRQs */
#define ACPI_MAX_TABLES		32

struct acpi_table_desc {
	char signature[5];
	phys_addr_t address;
	u32 length;
};

/* The tables the root table lists, each with a valid checksum. */
struct acpi_tables {
	int revision;			/* RSDP revision */
	bool xsdt;			/* walked the XSDT, else the RSDT */
	int count;
	struct acpi_table_desc table[ACPI_MAX_TABLES];
};

struct acpi_ioapic {
	u32 id;
	u32 address;
	u32 gsi_base;
};

/* An ISA interrupt source override from the MADT. */
struct acpi_irq_override {
	u8 source_irq;			/* ISA IRQ */
	u32 gsi;
	u16 flags;			/* inti_flags as the MADT gives them */
};

struct acpi_madt_info {
	bool present;
	u64 lapic_address;
	int nr_cpus;				/* logical CPUs 0..nr_cpus-1, MADT order */
	u32 apic_id[MAX_CPUS];			/* of each logical CPU */
	u32 acpi_uid[MAX_CPUS];
	bool x2apic[MAX_CPUS];			/* listed by an x2APIC entry */
	int nr_ioapics;
	struct acpi_ioapic ioapic[ACPI_MAX_IOAPICS];
	int nr_overrides;			/* ISA bus only; one per source IRQ */
	struct acpi_irq_override override[ACPI_MAX_IRQ_OVERRIDES];
};

struct acpi_mem_affinity {
	u64 base;
	u64 length;
	int domain;				/* domain index */
	u32 flags;				/* ACPI_SRAT_MEM_* */
};

struct acpi_srat_info {
	bool present;				/* parsed and usable */
	int nr_domains;
	u32 pxm[ACPI_MAX_DOMAINS];		/* proximity domain of each index */
	int cpu_domain[MAX_CPUS];		/* per logical CPU; -1: SRAT is silent */
	int nr_mem;
	struct acpi_mem_affinity mem[ACPI_MAX_MEM_AFFINITY];
};

struct acpi_slit_info {
	bool present;				/* usable: matches SRAT */
	u8 distance[ACPI_MAX_DOMAINS][ACPI_MAX_DOMAINS];	/* by domain index */
};

struct acpi_hmat_info {
	bool present;
	/* The attached initiator of each memory domain, or -1. */
	int initiator[ACPI_MAX_DOMAINS];
	/*
	 * value[type][initiator][target] by domain index: ns for latencies,
	 * MB/s for bandwidths; 0 when HMAT gives nothing, U32_MAX unreachable.
	 */
	u32 value[ACPI_HMAT_NR_DATA_TYPES][ACPI_MAX_DOMAINS][ACPI_MAX_DOMAINS];
};

#define ACPI_HMAT_UNREACHABLE	0xffffffffu

extern struct acpi_tables acpi_tables;
extern struct acpi_madt_info acpi_madt;
extern struct acpi_srat_info acpi_srat;
extern struct acpi_slit_info acpi_slit;
extern struct acpi_hmat_info acpi_hmat;

/*
 * Find the tables from boot_info's RSDP copy and parse MADT, SRAT, SLIT and
 * HMAT into the records above. Every problem is logged and leaves a sane
 * record (a table that cannot be trusted counts as absent). Returns 0, or
 * -ENODEV when there are no usable ACPI tables at all.
 */
int acpi_init(void);
/* Forget everything acpi_init() recorded (host tests run it repeatedly). */
void acpi_reset(void);

/* A mapped, checksummed table by signature ("SRAT"), or NULL. */
const struct acpi_table_header *acpi_find_table(const char *signature);

/* Parsers, called by acpi_init() in this order (MADT first: SRAT needs its CPUs). */
void acpi_parse_madt(const struct acpi_table_header *table);
void acpi_parse_srat(const struct acpi_table_header *table);
void acpi_parse_slit(const struct acpi_table_header *table);
void acpi_parse_hmat(const struct acpi_table_header *table);

/* The domain index of proximity domain pxm, or -1 when SRAT does not name it. */
int acpi_pxm_to_domain(u32 pxm);

struct numa_desc;
/*
 * Copy what acpi_init() recorded into desc for numa_init(): CPUs, affinity,
 * distances and HMAT (everything but the firmware memory map).
 */
void acpi_numa_describe(struct numa_desc *desc);

/*
 * Provided by the architecture: a pointer through which len bytes of
 * physical memory at phys can be read, or NULL when they cannot be reached
 * (a warning is logged). Tables are only read, never written.
 */
const void *acpi_os_map(phys_addr_t phys, size_t len);

#ifdef QUIRE_HOST
/*
 * arch/host/acpi_map.c: host tests place "physical" memory. Each region is
 * a test-owned buffer that acpi_os_map() serves only whole (a mapping that
 * runs past a region's end gets NULL, so ASan sees any read past a table).
 */
void host_acpi_map_reset(void);
int host_acpi_map_add(phys_addr_t phys, const void *buf, size_t len);
#endif

#endif
