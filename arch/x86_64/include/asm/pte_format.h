/*
 * x86-64's page-table entry format, behind the accessors mm/ uses (Linux's
 * names: pte_mkwrite, pte_wrprotect, pte_mkdirty, pmd_pte, pte_modify,
 * ...). mm/ names no bit of it (scripts/check-layering.sh checks); a port
 * to another format replaces this file. The host build keeps this format
 * too, in simulated memory (arch/host/include/asm/pte_format.h).
 */
#ifndef ASM_PTE_FORMAT_H
#define ASM_PTE_FORMAT_H

#include <quire/types.h>
#include <asm/page.h>

typedef u64 pte_t;		/* an entry at any level (PTE, PMD, PUD, P4D, PGD) */

#define _PAGE_PRESENT	(1UL << 0)
#define _PAGE_RW	(1UL << 1)
#define _PAGE_USER	(1UL << 2)
#define _PAGE_ACCESSED	(1UL << 5)
#define _PAGE_DIRTY	(1UL << 6)
#define _PAGE_PSE	(1UL << 7)	/* a PMD leaf (2 MiB); in a PTE, PAT */
/* Software bit (the global bit, unused in user PTEs): a page kept under PROT_NONE, not present. */
#define _PAGE_PROTNONE	(1UL << 8)
/*
 * Software bit: soft-dirty (Linux's _PAGE_SOFT_DIRTY, bit 11): the page was
 * written since /proc/<pid>/clear_refs last cleared it (mm/task_mmu.c).
 * Set with the D bit by the kernel (pte_mkdirty); the MMU never sets it,
 * which is why clear_refs write-protects what it clears.
 */
#define _PAGE_SOFT_DIRTY (1UL << 11)
#define _PAGE_NX	(1UL << 63)
#define PTE_PFN_MASK	0x000ffffffffff000UL

#define USER_TOP	0x00007ffffffff000UL	/* highest user address + 1, page aligned */
#define KERNEL_PGD_FIRST 256			/* PML4 entries 256-511 map the kernel */

/* ---- reading an entry ---- */

static inline bool pte_present(pte_t pte)
{
	return pte & _PAGE_PRESENT;
}

static inline bool pte_write(pte_t pte)
{
	return pte & _PAGE_RW;
}

static inline bool pte_exec(pte_t pte)
{
	return !(pte & _PAGE_NX);
}

static inline bool pte_dirty(pte_t pte)
{
	return pte & _PAGE_DIRTY;
}

static inline bool pte_soft_dirty(pte_t pte)
{
	return pte & _PAGE_SOFT_DIRTY;
}

static inline bool pte_young(pte_t pte)
{
	return pte & _PAGE_ACCESSED;
}

/* Kept under PROT_NONE: holds a page, but not present to the MMU. */
static inline bool pte_protnone(pte_t pte)
{
	return pte & _PAGE_PROTNONE;
}

/* The PTE holds a page: present, or kept under PROT_NONE. */
static inline bool pte_has_page(pte_t pte)
{
	return pte & (_PAGE_PRESENT | _PAGE_PROTNONE);
}

static inline unsigned long pte_pfn(pte_t pte)
{
	return (pte & PTE_PFN_MASK) >> PAGE_SHIFT;
}

/* ---- making and changing an entry ---- */

static inline pte_t pfn_pte(unsigned long pfn, bool write, bool exec)
{
	return (pfn << PAGE_SHIFT) | _PAGE_PRESENT | _PAGE_USER | _PAGE_ACCESSED |
	       (write ? _PAGE_RW | _PAGE_DIRTY | _PAGE_SOFT_DIRTY : 0) | (exec ? 0 : _PAGE_NX);
}

static inline pte_t pte_mkwrite(pte_t pte)
{
	return pte | _PAGE_RW;
}

static inline pte_t pte_wrprotect(pte_t pte)
{
	return pte & ~(pte_t)_PAGE_RW;
}

/* Dirty, and soft-dirty with it (Linux's x86 rule: every dirtying is a write since clear_refs). */
static inline pte_t pte_mkdirty(pte_t pte)
{
	return pte | _PAGE_DIRTY | _PAGE_SOFT_DIRTY;
}

static inline pte_t pte_mksoft_dirty(pte_t pte)
{
	return pte | _PAGE_SOFT_DIRTY;
}

static inline pte_t pte_clear_soft_dirty(pte_t pte)
{
	return pte & ~(pte_t)_PAGE_SOFT_DIRTY;
}

static inline pte_t pte_mkclean(pte_t pte)
{
	return pte & ~(pte_t)_PAGE_DIRTY;
}

static inline pte_t pte_mkold(pte_t pte)
{
	return pte & ~(pte_t)_PAGE_ACCESSED;
}

static inline pte_t pte_mkyoung(pte_t pte)
{
	return pte | _PAGE_ACCESSED;
}

/* The same entry for the next page frame (set_ptes, folio_pte_batch). */
static inline pte_t pte_next_pfn(pte_t pte)
{
	return pte + (1UL << PAGE_SHIFT);
}

/* The same page kept under PROT_NONE: not present, not writable. */
static inline pte_t pte_mkprotnone(pte_t pte)
{
	return (pte & ~(pte_t)(_PAGE_PRESENT | _PAGE_RW)) | _PAGE_PROTNONE;
}

/*
 * The entry with a new protection (a PTE or a PMD leaf: the frame, the
 * leaf bit, accessed, dirty and soft-dirty kept); none: kept under PROT_NONE.
 */
static inline pte_t pte_modify(pte_t old, bool write, bool exec, bool none)
{
	pte_t new = (old & (PTE_PFN_MASK | _PAGE_PSE | _PAGE_ACCESSED | _PAGE_DIRTY |
			    _PAGE_SOFT_DIRTY)) |
		    _PAGE_PRESENT | _PAGE_USER;

	if (write)
		new |= _PAGE_RW;
	if (!exec)
		new |= _PAGE_NX;
	return none ? pte_mkprotnone(new) : new;
}

/* An upper-level entry (PGD .. PMD) pointing to the table at phys. */
static inline pte_t mk_table_entry(phys_addr_t table)
{
	return table | _PAGE_PRESENT | _PAGE_RW | _PAGE_USER;
}

/* The physical address of the table an upper-level entry points to. */
static inline phys_addr_t pgtable_phys(pte_t entry)
{
	return entry & PTE_PFN_MASK;
}

/* ---- swap entries: not present, not none, no page the MMU sees ---- */

/*
 * Linux's non-present entries that say where a page went (swap, and the
 * "non-swap" kinds: hwpoison, migration, device-private), in this format:
 * present and PROT_NONE clear, the kind (type) in bits 58-62, its
 * argument (offset: a page frame for the non-swap kinds) in bits 9-57,
 * and bit 1 the soft-dirty bit of the PTE it replaced (Linux's
 * _PAGE_SWP_SOFT_DIRTY; kept by the entry's users that rewrite it).
 * Generic code uses include/quire/swapops.h.
 */
#define __SWP_TYPE_SHIFT	58
#define __SWP_TYPE_MASK		0x1fUL
#define __SWP_OFFSET_SHIFT	9
#define __SWP_OFFSET_MASK	((1UL << (__SWP_TYPE_SHIFT - __SWP_OFFSET_SHIFT)) - 1)

static inline bool pte_is_swap(pte_t pte)
{
	return pte && !(pte & (_PAGE_PRESENT | _PAGE_PROTNONE));
}

static inline pte_t __swp_entry_pte(unsigned long type, unsigned long offset)
{
	return (type & __SWP_TYPE_MASK) << __SWP_TYPE_SHIFT |
	       (offset & __SWP_OFFSET_MASK) << __SWP_OFFSET_SHIFT;
}

static inline unsigned long __pte_swp_type(pte_t pte)
{
	return (pte >> __SWP_TYPE_SHIFT) & __SWP_TYPE_MASK;
}

static inline unsigned long __pte_swp_offset(pte_t pte)
{
	return (pte >> __SWP_OFFSET_SHIFT) & __SWP_OFFSET_MASK;
}

#define _PAGE_SWP_SOFT_DIRTY	(1UL << 1)

static inline bool pte_swp_soft_dirty(pte_t pte)
{
	return pte & _PAGE_SWP_SOFT_DIRTY;
}

static inline pte_t pte_swp_mksoft_dirty(pte_t pte)
{
	return pte | _PAGE_SWP_SOFT_DIRTY;
}

static inline pte_t pte_swp_clear_soft_dirty(pte_t pte)
{
	return pte & ~(pte_t)_PAGE_SWP_SOFT_DIRTY;
}

/* ---- PMD leaves (2 MiB) ---- */

static inline bool pmd_present(pte_t pmd)
{
	return pmd & _PAGE_PRESENT;
}

/*
 * A PMD entry (level 2) either points to a page table or, with _PAGE_PSE,
 * maps a 2 MiB folio itself (a "leaf", present or kept under PROT_NONE).
 */
static inline bool pmd_leaf(pte_t pmd)
{
	return (pmd & _PAGE_PSE) && (pmd & (_PAGE_PRESENT | _PAGE_PROTNONE));
}

static inline unsigned long pmd_pfn(pte_t pmd)
{
	return (pmd & PTE_PFN_MASK & ~(PMD_SIZE - 1)) >> PAGE_SHIFT;
}

static inline pte_t pfn_pmd(unsigned long pfn, bool write, bool exec)
{
	return pfn_pte(pfn, write, exec) | _PAGE_PSE;
}

#define pmd_mkwrite(pmd)	pte_mkwrite(pmd)
#define pmd_wrprotect(pmd)	pte_wrprotect(pmd)
#define pmd_mkdirty(pmd)	pte_mkdirty(pmd)
#define pmd_mkyoung(pmd)	pte_mkyoung(pmd)
#define pmd_mkold(pmd)		pte_mkold(pmd)
#define pmd_soft_dirty(pmd)	pte_soft_dirty(pmd)
#define pmd_mksoft_dirty(pmd)	pte_mksoft_dirty(pmd)
#define pmd_clear_soft_dirty(pmd) pte_clear_soft_dirty(pmd)

/* A present PMD entry that points to a page table (not a 2 MiB leaf, not a swap entry). */
static inline bool pmd_is_table(pte_t pmd)
{
	return pmd_present(pmd) && !pmd_leaf(pmd);
}

/*
 * A swap entry in a PMD (a PMD-mapped THP under migration): the PTE
 * format above, never present, never a leaf, never a table.
 */
#define pmd_is_swap(pmd)		pte_is_swap(pmd)
#define pmd_swp_soft_dirty(pmd)		pte_swp_soft_dirty(pmd)
#define pmd_swp_clear_soft_dirty(pmd)	pte_swp_clear_soft_dirty(pmd)

/* A PMD leaf's bits as a PTE's (the frame is the caller's to adjust): the leaf bit goes. */
static inline pte_t pmd_pte(pte_t pmd)
{
	return pmd & ~(pte_t)_PAGE_PSE;
}

#endif
