/*
 * SRAT: which proximity domain each processor (by APIC id) and each memory
 * range belongs to. Disabled entries are ignored. Domains get indexes in
 * the order the table first names them (numa_init makes them node ids).
 *
 * An SRAT that names more domains or memory ranges than Quire has room for
 * is not used at all: dropping part of it would lose memory, while the
 * one-node fallback keeps every byte.
 */
#define pr_fmt(fmt) "acpi: " fmt
#include <quire/acpi.h>
#include <quire/printk.h>
#include "internal.h"

struct acpi_srat_info acpi_srat;

static bool srat_overflow;

int acpi_pxm_to_domain(u32 pxm)
{
	for (int i = 0; i < acpi_srat.nr_domains; i++)
		if (acpi_srat.pxm[i] == pxm)
			return i;
	return -1;
}

/* The index of pxm, given a new one on first sight; -1 when there is no room. */
static int domain_of(u32 pxm)
{
	int d = acpi_pxm_to_domain(pxm);

	if (d >= 0)
		return d;
	if (acpi_srat.nr_domains == ACPI_MAX_DOMAINS) {
		pr_warn("SRAT: more than %d proximity domains (domain %u)\n",
			ACPI_MAX_DOMAINS, pxm);
		srat_overflow = true;
		return -1;
	}
	acpi_srat.pxm[acpi_srat.nr_domains] = pxm;
	return acpi_srat.nr_domains++;
}

static void cpu_affinity(u32 apic_id, u32 pxm)
{
	int d = domain_of(pxm);

	if (d < 0)
		return;
	/* SRAT lists every possible APIC id; only those MADT has are CPUs. */
	for (int cpu = 0; cpu < acpi_madt.nr_cpus; cpu++) {
		if (acpi_madt.apic_id[cpu] != apic_id)
			continue;
		if (acpi_srat.cpu_domain[cpu] >= 0 && acpi_srat.cpu_domain[cpu] != d)
			pr_warn("SRAT: APIC id %u is in domains %u and %u; the first wins\n",
				apic_id, acpi_srat.pxm[acpi_srat.cpu_domain[cpu]], pxm);
		else
			acpi_srat.cpu_domain[cpu] = d;
		return;
	}
}

static void mem_affinity(const struct acpi_srat_mem_affinity *m, u32 pxm)
{
	struct acpi_mem_affinity *a;
	u64 base = m->base_address, len = m->length;
	int d;

	if (!len)
		return;
	if (base + len < base) {
		pr_warn("SRAT: memory range %#llx+%#llx wraps around; ignored\n",
			(unsigned long long)base, (unsigned long long)len);
		return;
	}
	d = domain_of(pxm);
	if (d < 0)
		return;
	if (acpi_srat.nr_mem == ACPI_MAX_MEM_AFFINITY) {
		pr_warn("SRAT: more than %d memory ranges ([mem %#llx-%#llx])\n",
			ACPI_MAX_MEM_AFFINITY, (unsigned long long)base,
			(unsigned long long)(base + len - 1));
		srat_overflow = true;
		return;
	}
	a = &acpi_srat.mem[acpi_srat.nr_mem++];
	a->base = base;
	a->length = len;
	a->domain = d;
	a->flags = m->flags;
	pr_info("SRAT: domain %u [mem %#llx-%#llx]%s%s\n", pxm,
		(unsigned long long)base, (unsigned long long)(base + len - 1),
		(m->flags & ACPI_SRAT_MEM_HOT_PLUGGABLE) ? " hotplug" : "",
		(m->flags & ACPI_SRAT_MEM_NON_VOLATILE) ? " non-volatile" : "");
}

static bool entry_fits(const struct acpi_subtable_header *e, size_t need)
{
	if (e->length >= need)
		return true;
	pr_warn("SRAT: entry of type %u is %u bytes, under the %zu it needs; skipped\n",
		e->type, e->length, need);
	return false;
}

void acpi_parse_srat(const struct acpi_table_header *t)
{
	const struct acpi_subtable_header *e;
	u32 off = sizeof(struct acpi_table_srat);
	/* Up to revision 1, processor and memory domains are 8 bits wide. */
	bool wide = t && t->revision >= 2;

	if (!t)
		return;		/* numa_init reports the fallback */
	if (t->length < sizeof(struct acpi_table_srat)) {
		pr_warn("SRAT is truncated (%u bytes); not used\n", t->length);
		return;
	}
	srat_overflow = false;
	while ((e = acpi_next_subtable(t, &off))) {
		switch (e->type) {
		case ACPI_SRAT_TYPE_CPU_AFFINITY: {
			const struct acpi_srat_cpu_affinity *p = (const void *)e;
			u32 pxm;

			if (!entry_fits(e, sizeof(*p)) || !(p->flags & ACPI_SRAT_CPU_ENABLED))
				break;
			pxm = p->proximity_domain_lo;
			if (wide)
				pxm |= (u32)p->proximity_domain_hi[0] << 8 |
				       (u32)p->proximity_domain_hi[1] << 16 |
				       (u32)p->proximity_domain_hi[2] << 24;
			cpu_affinity(p->apic_id, pxm);
			break;
		}
		case ACPI_SRAT_TYPE_X2APIC_CPU_AFFINITY: {
			const struct acpi_srat_x2apic_cpu_affinity *p = (const void *)e;

			if (entry_fits(e, sizeof(*p)) && (p->flags & ACPI_SRAT_CPU_ENABLED))
				cpu_affinity(p->apic_id, p->proximity_domain);
			break;
		}
		case ACPI_SRAT_TYPE_MEMORY_AFFINITY: {
			const struct acpi_srat_mem_affinity *p = (const void *)e;

			if (entry_fits(e, sizeof(*p)) && (p->flags & ACPI_SRAT_MEM_ENABLED))
				mem_affinity(p, wide ? p->proximity_domain
						     : p->proximity_domain & 0xff);
			break;
		}
		default:
			break;	/* GICC, generic initiators, ...: not on this machine */
		}
	}
	if (srat_overflow) {
		pr_warn("SRAT describes more than Quire can hold; not used\n");
		return;
	}
	if (!acpi_srat.nr_domains) {
		pr_warn("SRAT has no enabled entries; not used\n");
		return;
	}
	acpi_srat.present = true;
	pr_info("SRAT: %d proximity domains, %d memory ranges\n", acpi_srat.nr_domains,
		acpi_srat.nr_mem);
}
