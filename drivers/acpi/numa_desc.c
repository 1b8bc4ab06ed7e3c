/*
 * What the parsers recorded, as the machine description mm/numa.c takes
 * (quire/numa_desc.h): MADT's CPUs with their SRAT domains, SRAT's memory
 * ranges and domains, SLIT's distances, HMAT's initiators and figures.
 * The firmware memory map is the architecture's to add.
 */
#include <quire/acpi.h>
#include <quire/numa_desc.h>
#include <quire/kernel.h>
#include <quire/string.h>

/* The records and the description index domains and HMAT figures alike. */
_Static_assert(ACPI_MAX_DOMAINS == MAX_NUMNODES, "domain limits differ");
_Static_assert(ACPI_MAX_MEM_AFFINITY <= NUMA_DESC_MAX_MEM, "too many memory ranges");
_Static_assert((int)NUMA_PERF_NR_KINDS == (int)ACPI_HMAT_NR_DATA_TYPES, "HMAT kinds differ");
_Static_assert((int)NUMA_PERF_READ_LATENCY == (int)ACPI_HMAT_READ_LATENCY &&
	       (int)NUMA_PERF_WRITE_BANDWIDTH == (int)ACPI_HMAT_WRITE_BANDWIDTH,
	       "HMAT kinds are numbered differently");
_Static_assert(NUMA_HMAT_UNREACHABLE == ACPI_HMAT_UNREACHABLE, "unreachable differs");

static void describe_cpus(struct numa_desc *desc)
{
	desc->nr_cpus = acpi_madt.nr_cpus;
	for (int cpu = 0; cpu < acpi_madt.nr_cpus; cpu++) {
		desc->cpu[cpu].apic_id = acpi_madt.apic_id[cpu];
		desc->cpu[cpu].domain = acpi_srat.cpu_domain[cpu];
	}
}

static void describe_affinity(struct numa_desc *desc)
{
	desc->affinity_present = acpi_srat.present;
	desc->nr_domains = acpi_srat.nr_domains;
	memcpy(desc->pxm, acpi_srat.pxm, sizeof(desc->pxm));
	desc->nr_mem = acpi_srat.nr_mem;
	for (int m = 0; m < acpi_srat.nr_mem; m++) {
		const struct acpi_mem_affinity *a = &acpi_srat.mem[m];

		desc->mem[m] = (struct numa_desc_mem){ a->base, a->length, a->domain };
	}
}

void acpi_numa_describe(struct numa_desc *desc)
{
	describe_cpus(desc);
	describe_affinity(desc);
	desc->distance_present = acpi_slit.present;
	memcpy(desc->distance, acpi_slit.distance, sizeof(desc->distance));
	desc->perf_present = acpi_hmat.present;
	memcpy(desc->initiator, acpi_hmat.initiator, sizeof(desc->initiator));
	memcpy(desc->perf, acpi_hmat.value, sizeof(desc->perf));
}
