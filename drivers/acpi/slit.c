/*
 * SLIT: the relative distance between proximity domains, a matrix indexed
 * by domain number (10 = local). Only the rows and columns of the domains
 * SRAT names are kept, re-indexed by domain index. A SLIT that does not
 * cover every SRAT domain, or whose numbers are impossible (local not 10,
 * remote not above 10), is not used: numa_init then uses 10/20.
 */
#define pr_fmt(fmt) "acpi: " fmt
#include <quire/acpi.h>
#include <quire/printk.h>
#include "internal.h"

struct acpi_slit_info acpi_slit;

void acpi_parse_slit(const struct acpi_table_header *t)
{
	const struct acpi_table_slit *slit = (const void *)t;
	u64 count, need;
	u32 max_pxm = 0;

	if (!t)
		return;		/* numa_init reports the default distances */
	if (!acpi_srat.present) {
		pr_info("SLIT ignored: no usable SRAT\n");
		return;
	}
	if (t->length < sizeof(*slit)) {
		pr_warn("SLIT is truncated (%u bytes); not used\n", t->length);
		return;
	}
	count = slit->locality_count;
	/* count <= length < 2^32 first, so that count * count cannot overflow. */
	need = sizeof(*slit) + (count <= t->length ? count * count : (u64)-1 / 2);
	if (!count || need > t->length) {
		pr_warn("SLIT: %llu localities do not fit in its %u bytes; not used\n",
			(unsigned long long)count, t->length);
		return;
	}
	for (int i = 0; i < acpi_srat.nr_domains; i++)
		max_pxm = max(max_pxm, acpi_srat.pxm[i]);
	if (count != (u64)max_pxm + 1) {
		pr_warn("SLIT has %llu localities but SRAT has domains 0-%u\n",
			(unsigned long long)count, max_pxm);
		if (count <= max_pxm) {
			pr_warn("SLIT does not cover every SRAT domain; not used\n");
			return;
		}
	}
	for (int i = 0; i < acpi_srat.nr_domains; i++) {
		for (int j = 0; j < acpi_srat.nr_domains; j++) {
			u8 d = slit->entry[acpi_srat.pxm[i] * count + acpi_srat.pxm[j]];

			if ((i == j && d != LOCAL_DISTANCE) || (i != j && d <= LOCAL_DISTANCE)) {
				pr_warn("SLIT: distance %u from domain %u to %u is impossible; "
					"not used\n", d, acpi_srat.pxm[i], acpi_srat.pxm[j]);
				return;
			}
			acpi_slit.distance[i][j] = d;
		}
	}
	acpi_slit.present = true;
}
