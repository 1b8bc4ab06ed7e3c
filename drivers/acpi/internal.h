/* Shared by the drivers/acpi parsers; not for the rest of the kernel. */
#ifndef DRIVERS_ACPI_INTERNAL_H
#define DRIVERS_ACPI_INTERNAL_H

#include <quire/acpi.h>

/* Firmware data is unaligned: read it through packed wrappers. */
struct acpi_unaligned16 { u16 v; } __packed;
struct acpi_unaligned32 { u32 v; } __packed;
struct acpi_unaligned64 { u64 v; } __packed;

static inline u16 acpi_get_u16(const void *p)
{
	return ((const struct acpi_unaligned16 *)p)->v;
}

static inline u32 acpi_get_u32(const void *p)
{
	return ((const struct acpi_unaligned32 *)p)->v;
}

static inline u64 acpi_get_u64(const void *p)
{
	return ((const struct acpi_unaligned64 *)p)->v;
}

/* The table's signature as a printable, terminated string. */
void acpi_sig_str(char out[5], const char *sig);

/*
 * Iterate over the entries (one-byte type, one-byte length) of a MADT or
 * SRAT that follow its fixed part of `fixed` bytes: *off starts at fixed.
 * Returns the next entry that lies wholly inside the table, or NULL at the
 * end. A malformed entry (length under 2, or running past the table) ends
 * the walk with a warning, since nothing after it can be located.
 */
const struct acpi_subtable_header *acpi_next_subtable(const struct acpi_table_header *t,
						       u32 *off);

#endif
