/*
 * x86-64 user page tables: the entry format is asm/pte_format.h, the
 * walker generic (quire/pte.h, mm/pgtable.c); here are the hooks and the
 * accessors that read and write an entry. Each address space has its own
 * PML4 whose kernel half (entries 256-511) is copied from the kernel's, so
 * kernel mappings are shared. User leaves are 4 KiB PTEs and 2 MiB PMDs
 * (PMD-mapped THP, mm/huge_memory.c); there are no 1 GiB user leaves
 * (hugetlb is not implemented yet).
 *
 * Stores to entries (docs/locking.md, "Stores to live entries"). An entry
 * may be live: other CPUs read it without its lock (the fault path's
 * peeks, rmap walkers' PMD peeks, mm_verify, later GUP-fast) and every
 * CPU's MMU walks it, setting the accessed bit on the entries it passes
 * and the dirty bit on a leaf it writes through, at any time, with a
 * locked read-modify-write of its own. So mm/ changes an entry only
 * through these accessors, never by a plain `*ptep = x`:
 *   - a store is one WRITE_ONCE (set_pte, set_pmd, pte_clear, ...): the
 *     compiler may neither tear it, nor merge or repeat it, nor invent
 *     stores through the pointer (as Linux's x86 set_pte);
 *   - a read-modify-write of an entry the MMU may change meanwhile is one
 *     locked instruction (ptep_get_and_clear is xchg, ptep_set_wrprotect
 *     a locked and, pmdp_cmpxchg a cmpxchg), or the dirty bit the MMU
 *     sets between the read and the write would be lost (and with it the
 *     only record that the page was written);
 *   - an entry that publishes memory another CPU will then read through it
 *     (a new table's zeroes and lock, a new folio's zeroes or copied bytes)
 *     is a release store (pmd_populate, set_pte_release, ...), so that a
 *     walker that loads the entry sees what it points to (Linux: the
 *     smp_wmb in pmd_install and __folio_mark_uptodate). On x86 that is
 *     an ordinary mov the compiler may not hoist stores above.
 * The writer holds the entry's page-table lock in every case; the
 * accessors make the store itself safe against the lockless readers.
 */
#ifndef ASM_PGTABLE_H
#define ASM_PGTABLE_H

#include <quire/types.h>
#include <quire/compiler.h>
#include <asm/page.h>
#include <asm/pte_format.h>

struct mm_struct;
struct vm_area_struct;

/* Copy the kernel half of the kernel's PML4 into a new top-level table. */
void arch_pgd_init(u64 *pgd);
/* Load an address space on this CPU. */
void load_pgd(phys_addr_t pgd);

/* ---- reading ---- */

/* One untorn load of an entry (any level), as Linux's ptep_get/pmdp_get. */
static inline pte_t ptep_get(pte_t *ptep)
{
	return READ_ONCE(*ptep);
}

static inline pte_t pmdp_get(pte_t *pmdp)
{
	return READ_ONCE(*pmdp);
}

/* ---- plain stores: one WRITE_ONCE each ---- */

static inline void set_pte(pte_t *ptep, pte_t pte)
{
	WRITE_ONCE(*ptep, pte);
}

static inline void set_pmd(pte_t *pmdp, pte_t pmd)
{
	WRITE_ONCE(*pmdp, pmd);
}

/* nr PTEs from ptep mapping nr consecutive pages, the first one pte. */
static inline void set_ptes(struct mm_struct *mm, unsigned long addr, pte_t *ptep, pte_t pte,
			    unsigned int nr)
{
	(void)mm;
	(void)addr;
	for (;;) {
		set_pte(ptep, pte);
		if (--nr == 0)
			break;
		ptep++;
		pte = pte_next_pfn(pte);
	}
}

static inline void pte_clear(struct mm_struct *mm, unsigned long addr, pte_t *ptep)
{
	(void)mm;
	(void)addr;
	WRITE_ONCE(*ptep, 0);
}

static inline void pmd_clear(pte_t *pmdp)
{
	WRITE_ONCE(*pmdp, 0);
}

/* ---- publishing stores: release ---- */

/* A new folio's first mapping: its bytes (zeroes, a copy) before the entry. */
static inline void set_pte_release(pte_t *ptep, pte_t pte)
{
	__atomic_store_n(ptep, pte, __ATOMIC_RELEASE);
}

static inline void set_ptes_release(struct mm_struct *mm, unsigned long addr, pte_t *ptep,
				    pte_t pte, unsigned int nr)
{
	(void)mm;
	(void)addr;
	for (;;) {
		set_pte_release(ptep, pte);
		if (--nr == 0)
			break;
		ptep++;
		pte = pte_next_pfn(pte);
	}
}

/* A new 2 MiB folio's PMD leaf: its zeroes before the entry. */
static inline void set_pmd_release(pte_t *pmdp, pte_t pmd)
{
	__atomic_store_n(pmdp, pmd, __ATOMIC_RELEASE);
}

/*
 * Point an upper-level entry at the table at phys: the table's contents
 * (zeroes, or the entries filled in before) and its lock before the entry.
 * Any level above the PTEs (Linux's pud/p4d/pgd_populate too: one entry
 * type here).
 */
static inline void pmd_populate(pte_t *pmdp, phys_addr_t table)
{
	__atomic_store_n(pmdp, mk_table_entry(table), __ATOMIC_RELEASE);
}

/* The same, only if the entry is still empty (a cmpxchg): false when it was not. */
static inline bool pmd_populate_none(pte_t *pmdp, phys_addr_t table)
{
	pte_t none = 0;

	return __atomic_compare_exchange_n(pmdp, &none, mk_table_entry(table), false,
					   __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* ---- atomic read-modify-writes (the MMU may set A or D meanwhile) ---- */

/* Clear a PTE and return what it held last, dirty bit included: xchg. */
static inline pte_t ptep_get_and_clear(struct mm_struct *mm, unsigned long addr, pte_t *ptep)
{
	(void)mm;
	(void)addr;
	return __atomic_exchange_n(ptep, 0, __ATOMIC_RELAXED);
}

/* The same for a PMD entry: a 2 MiB leaf, or a table entry (the MMU sets A on those). */
static inline pte_t pmdp_huge_get_and_clear(struct mm_struct *mm, unsigned long addr,
					    pte_t *pmdp)
{
	(void)mm;
	(void)addr;
	return __atomic_exchange_n(pmdp, 0, __ATOMIC_RELAXED);
}

/* Take write access away: an atomic clear of the RW bit (lock and), D kept. */
static inline void ptep_set_wrprotect(struct mm_struct *mm, unsigned long addr, pte_t *ptep)
{
	(void)mm;
	(void)addr;
	__atomic_fetch_and(ptep, ~(pte_t)_PAGE_RW, __ATOMIC_RELAXED);
}

static inline void pmdp_set_wrprotect(struct mm_struct *mm, unsigned long addr, pte_t *pmdp)
{
	ptep_set_wrprotect(mm, addr, pmdp);
}

static inline void wrprotect_ptes(struct mm_struct *mm, unsigned long addr, pte_t *ptep,
				  unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++, addr += PAGE_SIZE)
		ptep_set_wrprotect(mm, addr, ptep + i);
}

/*
 * Change a PTE's protection (mprotect), as Linux: start clears it with
 * xchg and returns the last value (the MMU cannot set D on it after that),
 * commit stores the new entry; the PTE lock is held across both, and
 * every walker of PTEs takes that lock before it looks.
 */
static inline pte_t ptep_modify_prot_start(struct vm_area_struct *vma, unsigned long addr,
					   pte_t *ptep)
{
	(void)vma;
	return ptep_get_and_clear(NULL, addr, ptep);
}

static inline void ptep_modify_prot_commit(struct vm_area_struct *vma, unsigned long addr,
					   pte_t *ptep, pte_t old, pte_t pte)
{
	(void)vma;
	(void)addr;
	(void)old;
	set_pte(ptep, pte);
}

/*
 * Replace a PMD entry that holds old by new in one cmpxchg; returns the
 * entry found (old when it was replaced). A PMD is never cleared on the
 * way (mm/'s lockless PMD peeks take a none PMD for an empty block).
 */
static inline pte_t pmdp_cmpxchg(pte_t *pmdp, pte_t old, pte_t new)
{
	__atomic_compare_exchange_n(pmdp, &old, new, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	return old;
}

/*
 * Make a present entry more permissive (the write fault: writable, dirty,
 * young), as Linux's ptep_set_access_flags: entry is the current one with
 * bits added, A and D among them, the only bits the MMU sets; so whatever
 * it sets between the caller's read and this store is in entry too, and a
 * plain store loses nothing. One store, and only if something changed;
 * true when it did.
 */
static inline bool ptep_set_access_flags(struct vm_area_struct *vma, unsigned long addr,
					 pte_t *ptep, pte_t entry, bool dirty)
{
	(void)vma;
	(void)addr;
	(void)dirty;
	if (ptep_get(ptep) == entry)
		return false;
	set_pte(ptep, entry);
	return true;
}

static inline bool pmdp_set_access_flags(struct vm_area_struct *vma, unsigned long addr,
					 pte_t *pmdp, pte_t entry, bool dirty)
{
	return ptep_set_access_flags(vma, addr, pmdp, entry, dirty);
}

#include <quire/pte.h>

#endif
