/*
 * Swap entries (Linux's include/linux/swapops.h, cut to what Quire has):
 * a page-table entry that is not present and not none says where its page
 * went. Quire has no swap devices; its kinds are Linux's "non-swap"
 * entries, each carrying a page frame:
 *
 *   SWP_HWPOISON   the page had a memory error (mm/memory-failure.c): an
 *                  access is SIGBUS BUS_MCEERR_AR, fork copies the entry,
 *                  munmap and MADV_DONTNEED drop it.
 *   SWP_MIGRATION_READ, _READ_EXCLUSIVE, _WRITE
 *                  the page is being migrated (mm/migrate.c) and its folio
 *                  is locked: an access waits for the lock and faults again.
 *                  The kind keeps what the PTE allowed (read only; read
 *                  and PageAnonExclusive; write), and two offset bits above
 *                  the frame keep its young and dirty bits.
 *
 *   SWP_DEVICE_READ, _WRITE
 *                  the page lives in a device's private memory
 *                  (include/quire/memremap.h): the CPU cannot map it, and an
 *                  access asks the owner to move it back (migrate_to_ram).
 *                  The entry maps the device page as a PTE would: it holds a
 *                  reference and counts in the page's mapcount.
 *   SWP_DEVICE_EXCLUSIVE_READ, _WRITE
 *                  a normal page that a device holds for exclusive (atomic)
 *                  access (make_device_exclusive): a CPU access puts the
 *                  present PTE back first. Mapped and referenced the same way.
 *
 * The bits are the architecture's (asm/pte_format.h); mm/ uses these names.
 */
#ifndef QUIRE_SWAPOPS_H
#define QUIRE_SWAPOPS_H

#include <quire/types.h>
#include <asm/pte_format.h>

typedef struct {
	unsigned long type, offset;
} swp_entry_t;

/* Linux's last type numbers are the non-swap kinds. */
#define SWP_DEVICE_WRITE		24
#define SWP_DEVICE_READ			25
#define SWP_DEVICE_EXCLUSIVE_WRITE	26
#define SWP_DEVICE_EXCLUSIVE_READ	27
#define SWP_MIGRATION_READ		28
#define SWP_MIGRATION_READ_EXCLUSIVE	29
#define SWP_MIGRATION_WRITE		30
#define SWP_HWPOISON			31

/* Offset bits of a migration entry above the frame number (Linux's SWP_MIG_*_BIT). */
#define SWP_PFN_BITS		46
#define SWP_PFN_MASK		((1UL << SWP_PFN_BITS) - 1)
#define SWP_MIG_YOUNG		(1UL << SWP_PFN_BITS)
#define SWP_MIG_DIRTY		(1UL << (SWP_PFN_BITS + 1))

static inline swp_entry_t swp_entry(unsigned long type, unsigned long offset)
{
	return (swp_entry_t){ type, offset };
}

/* Not present, not none, not a page kept under PROT_NONE. */
static inline bool is_swap_pte(pte_t pte)
{
	return pte_is_swap(pte);
}

static inline pte_t swp_entry_to_pte(swp_entry_t e)
{
	return __swp_entry_pte(e.type, e.offset);
}

static inline swp_entry_t pte_to_swp_entry(pte_t pte)
{
	return swp_entry(__pte_swp_type(pte), __pte_swp_offset(pte));
}

static inline swp_entry_t make_hwpoison_entry(unsigned long pfn)
{
	return swp_entry(SWP_HWPOISON, pfn);
}

static inline bool is_hwpoison_entry(swp_entry_t e)
{
	return e.type == SWP_HWPOISON;
}

static inline bool is_migration_entry(swp_entry_t e)
{
	return e.type >= SWP_MIGRATION_READ && e.type <= SWP_MIGRATION_WRITE;
}

static inline bool is_writable_migration_entry(swp_entry_t e)
{
	return e.type == SWP_MIGRATION_WRITE;
}

static inline bool is_readable_exclusive_migration_entry(swp_entry_t e)
{
	return e.type == SWP_MIGRATION_READ_EXCLUSIVE;
}

static inline swp_entry_t make_readable_migration_entry(unsigned long pfn)
{
	return swp_entry(SWP_MIGRATION_READ, pfn);
}

static inline swp_entry_t make_readable_exclusive_migration_entry(unsigned long pfn)
{
	return swp_entry(SWP_MIGRATION_READ_EXCLUSIVE, pfn);
}

static inline swp_entry_t make_writable_migration_entry(unsigned long pfn)
{
	return swp_entry(SWP_MIGRATION_WRITE, pfn);
}

static inline bool is_migration_entry_young(swp_entry_t e)
{
	return e.offset & SWP_MIG_YOUNG;
}

static inline bool is_migration_entry_dirty(swp_entry_t e)
{
	return e.offset & SWP_MIG_DIRTY;
}

static inline swp_entry_t make_migration_entry_young(swp_entry_t e)
{
	return swp_entry(e.type, e.offset | SWP_MIG_YOUNG);
}

static inline swp_entry_t make_migration_entry_dirty(swp_entry_t e)
{
	return swp_entry(e.type, e.offset | SWP_MIG_DIRTY);
}

/*
 * The migration entry for frame pfn replacing a present entry old (a PTE,
 * or a PMD leaf's bits as a PTE's): what it allowed (write; read and
 * anon-exclusive; read), its young, dirty and soft-dirty bits.
 */
static inline pte_t make_migration_entry_from(pte_t old, unsigned long pfn, bool anon_exclusive)
{
	swp_entry_t e;

	if (pte_write(old))
		e = make_writable_migration_entry(pfn);
	else if (anon_exclusive)
		e = make_readable_exclusive_migration_entry(pfn);
	else
		e = make_readable_migration_entry(pfn);
	if (pte_young(old))
		e = make_migration_entry_young(e);
	if (pte_dirty(old))
		e = make_migration_entry_dirty(e);
	return pte_soft_dirty(old) ? pte_swp_mksoft_dirty(swp_entry_to_pte(e)) : swp_entry_to_pte(e);
}

/*
 * A present entry new (made young by pfn_pte, dirty when writable) given
 * back what the migration entry it replaces kept: soft-dirty, old, dirty.
 * A PTE's or a PMD leaf's (the bits are the same).
 */
static inline pte_t restore_migration_entry_bits(pte_t new, pte_t entry)
{
	swp_entry_t e = pte_to_swp_entry(entry);

	if (pte_swp_soft_dirty(entry))
		new = pte_mksoft_dirty(new);
	if (!is_migration_entry_young(e))
		new = pte_mkold(new);
	if (is_migration_entry_dirty(e))
		new = pte_mkdirty(new);
	return new;
}

/* The PTE is a migration entry. */
static inline bool is_migration_pte(pte_t pte)
{
	return is_swap_pte(pte) && is_migration_entry(pte_to_swp_entry(pte));
}

/*
 * ---- PMD migration entries ----
 * A PMD-mapped THP being migrated: its PMD becomes one migration entry
 * for the whole folio (the frame of its first page), as a PTE's would,
 * and its deposited page table stays deposited. It holds no reference
 * and no mapcount, and counts HPAGE_PMD_NR pages in rss.
 */
static inline bool is_swap_pmd(pte_t pmd)
{
	return pmd_is_swap(pmd);
}

/* (A PMD's swap entry has the PTE's format.) */
static inline pte_t swp_entry_to_pmd(swp_entry_t e)
{
	return swp_entry_to_pte(e);
}

static inline swp_entry_t pmd_to_swp_entry(pte_t pmd)
{
	return pte_to_swp_entry(pmd);
}

static inline bool is_pmd_migration_entry(pte_t pmd)
{
	return is_swap_pmd(pmd) && is_migration_entry(pmd_to_swp_entry(pmd));
}

/* The PTE migration entry for page i of the THP a PMD migration entry names (the split's). */
static inline pte_t pmd_migration_entry_pte(pte_t pmd, unsigned long i)
{
	swp_entry_t e = pmd_to_swp_entry(pmd);
	/* (the frame is the offset's low bits; young and dirty stay above) */
	pte_t pte = swp_entry_to_pte(swp_entry(e.type, e.offset + i));

	return pmd_swp_soft_dirty(pmd) ? pte_swp_mksoft_dirty(pte) : pte;
}

/* A 2 MiB mapping, present, under PROT_NONE, or being migrated (not a table, not none). */
static inline bool pmd_leaf_or_migration(pte_t pmd)
{
	return pmd_leaf(pmd) || is_pmd_migration_entry(pmd);
}

/* ---- device-private and device-exclusive entries ---- */

static inline swp_entry_t make_readable_device_private_entry(unsigned long pfn)
{
	return swp_entry(SWP_DEVICE_READ, pfn);
}

static inline swp_entry_t make_writable_device_private_entry(unsigned long pfn)
{
	return swp_entry(SWP_DEVICE_WRITE, pfn);
}

static inline bool is_device_private_entry(swp_entry_t e)
{
	return e.type == SWP_DEVICE_READ || e.type == SWP_DEVICE_WRITE;
}

static inline bool is_writable_device_private_entry(swp_entry_t e)
{
	return e.type == SWP_DEVICE_WRITE;
}

static inline swp_entry_t make_readable_device_exclusive_entry(unsigned long pfn)
{
	return swp_entry(SWP_DEVICE_EXCLUSIVE_READ, pfn);
}

static inline swp_entry_t make_writable_device_exclusive_entry(unsigned long pfn)
{
	return swp_entry(SWP_DEVICE_EXCLUSIVE_WRITE, pfn);
}

static inline bool is_device_exclusive_entry(swp_entry_t e)
{
	return e.type == SWP_DEVICE_EXCLUSIVE_READ || e.type == SWP_DEVICE_EXCLUSIVE_WRITE;
}

static inline bool is_writable_device_exclusive_entry(swp_entry_t e)
{
	return e.type == SWP_DEVICE_EXCLUSIVE_WRITE;
}

/* An entry that maps its page (holds a reference, counts in the mapcount). */
static inline bool is_pfn_mapping_entry(swp_entry_t e)
{
	return is_device_private_entry(e) || is_device_exclusive_entry(e);
}

static inline bool is_device_private_pte(pte_t pte)
{
	return is_swap_pte(pte) && is_device_private_entry(pte_to_swp_entry(pte));
}

/* The PTE is a device-private or device-exclusive entry. */
static inline bool is_device_mapping_pte(pte_t pte)
{
	return is_swap_pte(pte) && is_pfn_mapping_entry(pte_to_swp_entry(pte));
}

/* A kind whose offset is a page frame (every kind Quire has). */
static inline unsigned long swp_offset_pfn(swp_entry_t e)
{
	return e.offset & SWP_PFN_MASK;
}

#endif
