/*
 * HMAT (ACPI 6.3 and later, table revision 2): for each memory domain the
 * initiator (CPU domain) attached to it, and matrices of latency and
 * bandwidth from initiator domains to target (memory) domains. Entries are
 * multiples of the structure's base unit: picoseconds for latencies, MB/s
 * for bandwidths; they are kept as ns and MB/s, by domain index. Only the
 * memory level of the hierarchy is read (not the memory-side caches).
 * Structures that name domains SRAT does not know are skipped with a warning.
 */
#define pr_fmt(fmt) "acpi: " fmt
#include <quire/acpi.h>
#include <quire/printk.h>
#include "internal.h"

struct acpi_hmat_info acpi_hmat;

static const char *const data_type_name[ACPI_HMAT_NR_DATA_TYPES] = {
	"access latency", "read latency", "write latency",
	"access bandwidth", "read bandwidth", "write bandwidth",
};

static u32 hmat_normalize(u16 entry, u64 base, u8 type)
{
	u64 v;

	if (!entry)
		return 0;				/* no information */
	if (entry == 0xffff || base > ~0ull / entry)
		return ACPI_HMAT_UNREACHABLE;
	v = entry * base;
	if (type <= ACPI_HMAT_WRITE_LATENCY)
		v = (v + 999) / 1000;			/* ps to ns, rounded up */
	return v >= ACPI_HMAT_UNREACHABLE ? ACPI_HMAT_UNREACHABLE - 1 : (u32)v;
}

static void parse_proximity(const struct acpi_hmat_proximity_domain *p)
{
	int mem, init;

	if (p->header.length < sizeof(*p)) {
		pr_warn("HMAT: proximity structure of %u bytes is truncated; skipped\n",
			p->header.length);
		return;
	}
	if (!(p->flags & ACPI_HMAT_INITIATOR_PD_VALID))
		return;
	mem = acpi_pxm_to_domain(p->memory_pd);
	init = acpi_pxm_to_domain(p->processor_pd);
	if (mem < 0 || init < 0) {
		pr_warn("HMAT: memory domain %u / initiator %u not in SRAT; skipped\n",
			p->memory_pd, p->processor_pd);
		return;
	}
	acpi_hmat.initiator[mem] = init;
}

static void parse_locality(const struct acpi_hmat_locality *l)
{
	const u8 *lists = (const u8 *)(l + 1);
	u32 ni, nt, len = l->header.length;
	u64 need;
	bool warned = false;

	if (len < sizeof(*l)) {
		pr_warn("HMAT: locality structure of %u bytes is truncated; skipped\n", len);
		return;
	}
	if ((l->flags & ACPI_HMAT_MEMORY_HIERARCHY) != ACPI_HMAT_MEMORY)
		return;		/* a memory-side cache level */
	if (l->data_type >= ACPI_HMAT_NR_DATA_TYPES) {
		pr_warn("HMAT: unknown data type %u; skipped\n", l->data_type);
		return;
	}
	ni = l->number_of_initiator_pds;
	nt = l->number_of_target_pds;
	/* Each count below len first, so that the product cannot overflow. */
	need = ni > len || nt > len ? ~0ull :
	       sizeof(*l) + 4ull * ni + 4ull * nt + 2ull * ni * nt;
	if (need > len) {
		pr_warn("HMAT: %s for %u x %u domains does not fit in %u bytes; skipped\n",
			data_type_name[l->data_type], ni, nt, len);
		return;
	}
	if (!l->entry_base_unit) {
		pr_warn("HMAT: %s has base unit 0; skipped\n", data_type_name[l->data_type]);
		return;
	}
	for (u32 i = 0; i < ni; i++) {
		int id = acpi_pxm_to_domain(acpi_get_u32(lists + 4 * i));

		for (u32 j = 0; j < nt; j++) {
			int td = acpi_pxm_to_domain(acpi_get_u32(lists + 4 * (ni + j)));
			u16 entry = acpi_get_u16(lists + 4 * (ni + nt) + 2 * ((u64)i * nt + j));

			if (id < 0 || td < 0) {
				if (!warned && entry)
					pr_warn("HMAT: %s names domain %u, not in SRAT; ignored\n",
						data_type_name[l->data_type],
						acpi_get_u32(lists + 4 * (id < 0 ? i : ni + j)));
				warned |= entry != 0;
				continue;
			}
			acpi_hmat.value[l->data_type][id][td] =
				hmat_normalize(entry, l->entry_base_unit, l->data_type);
		}
	}
}

void acpi_parse_hmat(const struct acpi_table_header *t)
{
	u32 off = sizeof(struct acpi_table_hmat);

	if (!t)
		return;
	if (!acpi_srat.present) {
		pr_info("HMAT ignored: no usable SRAT\n");
		return;
	}
	if (t->revision < 2) {
		pr_warn("HMAT revision %u (before ACPI 6.3) is not supported; not used\n",
			t->revision);
		return;
	}
	if (t->length < off) {
		pr_warn("HMAT is truncated (%u bytes); not used\n", t->length);
		return;
	}
	while (off < t->length) {
		const struct acpi_hmat_structure *s = (const void *)((const u8 *)t + off);

		if (t->length - off < sizeof(*s)) {
			pr_warn("HMAT: truncated structure at offset %u\n", off);
			break;
		}
		if (s->length < sizeof(*s) || s->length > t->length - off) {
			pr_warn("HMAT: structure of type %u at offset %u has length %u; "
				"rest ignored\n", s->type, off, s->length);
			break;
		}
		if (s->type == ACPI_HMAT_TYPE_PROXIMITY)
			parse_proximity((const void *)s);
		else if (s->type == ACPI_HMAT_TYPE_LOCALITY)
			parse_locality((const void *)s);
		off += s->length;
	}
	acpi_hmat.present = true;
}
