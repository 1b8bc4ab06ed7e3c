/*
 * Finding the ACPI tables: validate the RSDP copy the loader handed over,
 * walk the XSDT (ACPI 2.0+) or the RSDT, and keep every table whose header
 * is sane and whose checksum is right. Then acpi_init() runs the parsers.
 *
 * Firmware data is never trusted: every length is checked against what was
 * mapped before anything behind it is read.
 */
#define pr_fmt(fmt) "acpi: " fmt
#include <quire/acpi.h>
#include <quire/bootinfo.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include <quire/printk.h>
#include <quire/string.h>
#include "internal.h"

/* No table Quire reads comes close; a larger length is garbage. */
#define ACPI_MAX_TABLE_LEN	(4u << 20)

struct acpi_tables acpi_tables;

static u8 acpi_checksum(const void *p, size_t len)
{
	const u8 *b = p;
	u8 sum = 0;

	while (len--)
		sum += *b++;
	return sum;
}

void acpi_sig_str(char out[5], const char *sig)
{
	for (int i = 0; i < 4; i++)
		out[i] = (sig[i] >= 0x20 && sig[i] < 0x7f) ? sig[i] : '?';
	out[4] = '\0';
}

/*
 * Map a whole table: its header first, to learn the length, then all of
 * it. Returns NULL (with a warning) when it cannot be reached, its length
 * is not sane, or its checksum is wrong.
 */
static const struct acpi_table_header *map_table(phys_addr_t phys, const char *what)
{
	const struct acpi_table_header *h;
	char sig[5];
	u32 len;

	if (!phys) {
		pr_warn("%s: null table address, skipped\n", what);
		return NULL;
	}
	h = acpi_os_map(phys, sizeof(*h));
	if (!h)
		return NULL;
	acpi_sig_str(sig, h->signature);
	len = h->length;
	if (len < sizeof(*h) || len > ACPI_MAX_TABLE_LEN) {
		pr_warn("%s: table '%s' at %#llx has a bad length %u, skipped\n", what, sig,
			(unsigned long long)phys, len);
		return NULL;
	}
	h = acpi_os_map(phys, len);
	if (!h)
		return NULL;
	if (acpi_checksum(h, len)) {
		pr_warn("%s: table '%s' at %#llx has a bad checksum, skipped\n", what, sig,
			(unsigned long long)phys);
		return NULL;
	}
	return h;
}

static void add_table(phys_addr_t phys, const char *root)
{
	const struct acpi_table_header *h = map_table(phys, root);
	struct acpi_table_desc *d;

	if (!h)
		return;
	if (acpi_tables.count == ACPI_MAX_TABLES) {
		char sig[5];

		acpi_sig_str(sig, h->signature);
		pr_warn("%s: more than %d tables; '%s' at %#llx ignored\n", root,
			ACPI_MAX_TABLES, sig, (unsigned long long)phys);
		return;
	}
	d = &acpi_tables.table[acpi_tables.count++];
	memcpy(d->signature, h->signature, 4);
	d->signature[4] = '\0';
	d->address = phys;
	d->length = h->length;
}

/* Walk the RSDT (4-byte entries) or XSDT (8-byte entries). */
static int walk_root(phys_addr_t phys, bool xsdt)
{
	const char *name = xsdt ? "XSDT" : "RSDT";
	size_t esize = xsdt ? 8 : 4;
	const struct acpi_table_header *root = map_table(phys, name);
	const u8 *entries;
	u32 n;

	if (!root)
		return -EINVAL;
	if (memcmp(root->signature, name, 4)) {
		char sig[5];

		acpi_sig_str(sig, root->signature);
		pr_warn("%s at %#llx has signature '%s', not used\n", name,
			(unsigned long long)phys, sig);
		return -EINVAL;
	}
	n = (root->length - sizeof(*root)) / esize;
	if ((root->length - sizeof(*root)) % esize)
		pr_warn("%s: length %u is not a whole number of entries; the rest ignored\n",
			name, root->length);
	entries = (const u8 *)(root + 1);
	acpi_tables.xsdt = xsdt;
	for (u32 i = 0; i < n; i++) {
		const u8 *e = entries + i * esize;

		add_table(xsdt ? acpi_get_u64(e) : acpi_get_u32(e), name);
	}
	pr_info("%s at %#llx lists %u tables, %d usable\n", name,
		(unsigned long long)phys, n, acpi_tables.count);
	return 0;
}

/*
 * The RSDP copy in boot_info: the ACPI 1.0 checksum always; for revision 2
 * and later the length and extended checksum too, or only the RSDT is
 * trusted. Returns the revision to use (0 or 2), or -EINVAL.
 */
static int check_rsdp(const struct acpi_rsdp *r, u32 len)
{
	if (len < ACPI_RSDP_V1_LEN) {
		pr_warn("no usable RSDP (the loader gave %u bytes)\n", len);
		return -EINVAL;
	}
	if (memcmp(r->signature, ACPI_RSDP_SIG, 8)) {
		pr_warn("RSDP has a bad signature\n");
		return -EINVAL;
	}
	if (acpi_checksum(r, ACPI_RSDP_V1_LEN)) {
		pr_warn("RSDP has a bad checksum\n");
		return -EINVAL;
	}
	if (r->revision < 2)
		return 0;
	if (len < ACPI_RSDP_V2_LEN) {
		pr_warn("RSDP revision %u but only %u bytes handed over; using the RSDT\n",
			r->revision, len);
		return 0;
	}
	if (r->length != ACPI_RSDP_V2_LEN) {
		pr_warn("RSDP revision %u has length %u; using the RSDT\n", r->revision, r->length);
		return 0;
	}
	if (acpi_checksum(r, ACPI_RSDP_V2_LEN)) {
		pr_warn("RSDP has a bad extended checksum; using the RSDT\n");
		return 0;
	}
	return 2;
}

static int acpi_tables_init(void)
{
	const struct acpi_rsdp *r = (const struct acpi_rsdp *)boot_info.rsdp;
	u32 len = min(boot_info.rsdp_len, (u32)sizeof(boot_info.rsdp));
	int rev = check_rsdp(r, len);

	if (rev < 0)
		return rev;
	acpi_tables.revision = r->revision;
	if (rev >= 2 && r->xsdt_address) {
		if (!walk_root(r->xsdt_address, true))
			return 0;
		pr_warn("XSDT unusable; falling back to the RSDT\n");
	}
	return walk_root(r->rsdt_address, false);
}

const struct acpi_table_header *acpi_find_table(const char *signature)
{
	for (int i = 0; i < acpi_tables.count; i++) {
		const struct acpi_table_desc *d = &acpi_tables.table[i];

		if (!memcmp(d->signature, signature, 4))
			return acpi_os_map(d->address, d->length);
	}
	return NULL;
}

const struct acpi_subtable_header *acpi_next_subtable(const struct acpi_table_header *t,
						       u32 *off)
{
	const struct acpi_subtable_header *e;
	char sig[5];

	if (*off >= t->length)
		return NULL;
	acpi_sig_str(sig, t->signature);
	if (t->length - *off < sizeof(*e)) {
		pr_warn("%s: truncated entry at offset %u\n", sig, *off);
		return NULL;
	}
	e = (const void *)((const u8 *)t + *off);
	if (e->length < sizeof(*e)) {
		pr_warn("%s: entry of type %u at offset %u has length %u; "
			"rest of the table ignored\n", sig, e->type, *off, e->length);
		return NULL;
	}
	if (e->length > t->length - *off) {
		pr_warn("%s: entry of type %u at offset %u runs past the table; ignored\n",
			sig, e->type, *off);
		return NULL;
	}
	*off += e->length;
	return e;
}

void acpi_reset(void)
{
	memset(&acpi_tables, 0, sizeof(acpi_tables));
	memset(&acpi_madt, 0, sizeof(acpi_madt));
	memset(&acpi_srat, 0, sizeof(acpi_srat));
	memset(&acpi_slit, 0, sizeof(acpi_slit));
	memset(&acpi_hmat, 0, sizeof(acpi_hmat));
	for (int i = 0; i < MAX_CPUS; i++)
		acpi_srat.cpu_domain[i] = -1;
	for (int i = 0; i < ACPI_MAX_DOMAINS; i++)
		acpi_hmat.initiator[i] = -1;
}

int acpi_init(void)
{
	char list[ACPI_MAX_TABLES * 5 + 1];
	int pos = 0;

	acpi_reset();
	if (acpi_tables_init() < 0 || !acpi_tables.count) {
		pr_warn("no usable ACPI tables\n");
		acpi_parse_madt(NULL);
		return -ENODEV;
	}
	for (int i = 0; i < acpi_tables.count; i++) {
		char sig[5];

		acpi_sig_str(sig, acpi_tables.table[i].signature);
		pos += scnprintf(list + pos, sizeof(list) - pos, " %s", sig);
	}
	pr_info("ACPI %s tables:%s\n", acpi_tables.revision >= 2 ? "2.0+" : "1.0", list);

	/* MADT first: SRAT maps APIC ids to the logical CPUs MADT numbered. */
	acpi_parse_madt(acpi_find_table("APIC"));
	acpi_parse_srat(acpi_find_table("SRAT"));
	acpi_parse_slit(acpi_find_table("SLIT"));
	acpi_parse_hmat(acpi_find_table("HMAT"));
	return 0;
}
