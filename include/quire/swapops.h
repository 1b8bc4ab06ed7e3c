/*
 * Swap entries (Linux's include/linux/swapops.h, cut to what Quire has):
 * a page-table entry that is not present and not none says where its page
 * went. Quire has no swap devices; its kinds are Linux's "non-swap"
 * entries, each carrying a page frame:
 *
 *   SWP_HWPOISON   the page had a memory error (mm/memory-failure.c): an
 *                  access is SIGBUS BUS_MCEERR_AR, fork copies the entry,
 *                  munmap and MADV_DONTNEED drop it.
 *
 * (Migration and device-private entries will be kinds of their own.) The
 * bits are the architecture's (asm/pte_format.h); mm/ uses these names.
 */
#ifndef QUIRE_SWAPOPS_H
#define QUIRE_SWAPOPS_H

#include <quire/types.h>
#include <asm/pte_format.h>

typedef struct {
	unsigned long type, offset;
} swp_entry_t;

#define SWP_HWPOISON	31	/* Linux's last type numbers are the non-swap kinds */

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

/* A kind whose offset is a page frame (every kind Quire has). */
static inline unsigned long swp_offset_pfn(swp_entry_t e)
{
	return e.offset;
}

#endif
