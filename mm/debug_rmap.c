/*
 * mm_verify, user mappings: docs/design.md's invariants 3, 4, 6 and 7.
 *   3. a folio's mapcounts equal the entries that map it (per page, whole
 *      (PMD), in total, pages mapped); refcount >= mapcount + pins;
 *   4. every present user PTE/PMD maps a folio whose rmap reaches that VMA,
 *      and rmap_walk of a mapped folio finds exactly its mappings;
 *   6. a pinned anonymous page is anon-exclusive (mapped or not: a folio
 *      pinned after its munmap is checked too); an anon-exclusive page
 *      is mapped once (by one process), and only it may be writable;
 *   7. no user entry maps a free frame, a kernel page or a hwpoisoned page.
 * And a writable entry is soft-dirty, or its VMA is (mm/clear_refs.c relies on it).
 * The page-table side (verify_mm_entries) walks each mm's entries; the folio
 * side (mm_verify_folio_rmap) walks a folio's rmap and counts what it finds.
 * Together: every entry is found by its folio's walk, and the walk finds
 * as many as the mapcounts say. Like mm_verify, this wants a quiet system.
 */
#define pr_fmt(fmt) "mm_verify: " fmt
#include <quire/memory-failure.h>
#include <quire/mm.h>
#include <quire/memremap.h>
#include <quire/mm_internal.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/swapops.h>
#include <quire/huge_mm.h>
#include <quire/fs.h>
#include <quire/slab.h>
#include <quire/printk.h>
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/panic.h>

#define MAX_REPORTS 20

static int reports;

/* A violation: the folio, its counters, then (by the caller) its mappings. */
static __printf(2, 3) void folio_problem(const struct folio *folio, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	if (reports++ >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!folio) {
		pr_err("%s\n", msg);
		return;
	}
	dump_folio(folio, msg);
}

void dump_folio(const struct folio *folio, const char *reason)
{
	pr_err("folio pfn %#lx order %u: %s\n", folio_pfn(folio), folio_order(folio), reason);
	pr_err("  flags %#lx refcount %d mapcount %d entire %d pages_mapped %d pins %d "
	       "mapping %p index %#lx %s\n", folio->flags, folio_ref_count(folio),
	       folio_mapcount(folio), folio_entire_mapcount(folio), folio_nr_pages_mapped(folio),
	       folio_test_large(folio) ? atomic_read(&folio->_pincount) : 0, folio->mapping,
	       folio->index, folio_test_anon(folio) ? "anon" : "file");
}

bool vm_bug_returns;
unsigned long vm_bug_reports;

void vm_bug_folio(const struct folio *folio, const char *cond, const char *file, int line)
{
	char msg[160];

	vm_bug_reports++;
	snprintf(msg, sizeof(msg), "VM_BUG_ON_FOLIO(%s) at %s:%d", cond, file, line);
	dump_folio(folio, msg);
	if (vm_bug_returns) {
		vm_bug_returns = false;
		return;
	}
	panic("%s", msg);
}

/* ---- the folio side ---- */

struct rmap_count {
	int *ptes;		/* per page */
	int pmds;
	bool print;
};

static bool count_one(struct folio *folio, struct vm_area_struct *vma, unsigned long address,
		      void *arg)
{
	struct rmap_count *c = arg;
	struct page_vma_mapped_walk pvmw = { .folio = folio, .vma = vma, .address = address };

	while (page_vma_mapped_walk(&pvmw)) {
		if (pvmw.pmd) {
			c->pmds++;
		} else {
			pte_t e = *pvmw.pte;
			unsigned long i = (is_device_mapping_pte(e) ?
					   swp_offset_pfn(pte_to_swp_entry(e)) : pte_pfn(e)) -
					  folio_pfn(folio);

			c->ptes[i]++;
		}
		if (c->print)
			pr_err("  mapped by mm %p vma [%#lx, %#lx) at %#lx (%s)\n", vma->vm_mm,
			       vma->vm_start, vma->vm_end, pvmw.address, pvmw.pmd ? "PMD" : "PTE");
	}
	return true;
}

static void rmap_count(struct folio *folio, struct rmap_count *c)
{
	struct rmap_walk_control rwc = { .arg = c, .rmap_one = count_one };

	rmap_walk(folio, &rwc);
}

/*
 * The pins of a folio, mapped or not (invariants 3 and 6 as far as the
 * counts tell), of whose references the caller holds `held`: a large
 * folio's _pincount is never negative and refcount >= mapcount + pins; a
 * pinned anonymous page is anon-exclusive: a small folio that may be
 * pinned is, and a large one with pins has at least one such page (its
 * pins are counted per folio, not per page: which pages are pinned is
 * not recorded, and its other pages may be shared).
 */
static void verify_pins(struct folio *folio, int held)
{
	bool large = folio_test_large(folio), exclusive = false;
	int pins = large ? atomic_read(&folio->_pincount) : 0;

	if (pins < 0)
		folio_problem(folio, "pincount %d: more unpins than pins", pins);
	if (folio_ref_count(folio) - held < folio_mapcount(folio) + pins)
		folio_problem(folio, "refcount %d (%d of them the check's) below mapcount %d + pins %d",
			      folio_ref_count(folio), held, folio_mapcount(folio), pins);
	if (!folio_test_anon(folio) || !folio_maybe_dma_pinned(folio))
		return;
	for (unsigned long i = 0; i < folio_nr_pages(folio) && !exclusive; i++)
		exclusive = PageAnonExclusive(folio_page(folio, i));
	if (!exclusive)
		folio_problem(folio, "pinned (pincount %d, refcount %d) but %s anon-exclusive "
			      "(invariant 6)", pins, folio_ref_count(folio),
			      large ? "none of its pages is" : "not");
}

/*
 * Invariants 3 and 4 (the walk) and 6 for one mapped folio, of whose
 * references the caller holds `held` for the check. Returns the problems found.
 */
static int verify_folio_rmap(struct folio *folio, int held)
{
	unsigned long nr = folio_nr_pages(folio);
	int before = reports, total = 0, pages_mapped = 0;
	struct rmap_count c = { 0 };

	c.ptes = kzalloc(nr * sizeof(int), GFP_KERNEL);
	if (!c.ptes)
		return 0;	/* no memory to check with: not a finding */
	if (!folio_test_anon(folio) && !folio->mapping)
		folio_problem(folio, "mapped, but neither anonymous nor in a file: unreachable");
	rmap_count(folio, &c);
	for (unsigned long i = 0; i < nr; i++) {
		struct page *page = folio_page(folio, i);
		int want = atomic_read(&page->_mapcount) + 1;

		if (want != c.ptes[i])
			folio_problem(folio, "page %lu: mapcount %d but the rmap finds %d PTEs",
				      i, want, c.ptes[i]);
		if (PageAnonExclusive(page) && c.ptes[i] + c.pmds > 1)
			folio_problem(folio, "page %lu is anon-exclusive but mapped %d times",
				      i, c.ptes[i] + c.pmds);
		total += c.ptes[i];
		pages_mapped += c.ptes[i] > 0;
	}
	if (folio_entire_mapcount(folio) != c.pmds)
		folio_problem(folio, "entire mapcount %d but the rmap finds %d PMDs",
			      folio_entire_mapcount(folio), c.pmds);
	total += c.pmds;
	if (folio_mapcount(folio) != total)
		folio_problem(folio, "mapcount %d but the rmap finds %d mappings",
			      folio_mapcount(folio), total);
	if (folio_test_large(folio) && folio_nr_pages_mapped(folio) != pages_mapped)
		folio_problem(folio, "%d pages mapped by PTEs, the counter says %d",
			      pages_mapped, folio_nr_pages_mapped(folio));
	verify_pins(folio, held);
	if (reports != before && reports <= MAX_REPORTS) {
		c.print = true;
		c.pmds = 0;
		memset(c.ptes, 0, nr * sizeof(int));
		rmap_count(folio, &c);
	}
	kfree(c.ptes);
	return reports - before;
}

int mm_verify_folio_rmap(struct folio *folio)
{
	return verify_folio_rmap(folio, 0);
}

/* ---- the page-table side ---- */

static bool vma_linked_to(struct vm_area_struct *vma, struct anon_vma *av)
{
	struct anon_vma_chain *avc;

	list_for_each_entry(avc, &vma->anon_vma_chain, same_vma)
		if (avc->anon_vma == av)
			return true;
	return false;
}

static bool vma_in_i_mmap(struct vm_area_struct *vma, struct address_space *mapping)
{
	struct vm_area_struct *v;
	bool found = false;

	down_read(&mapping->i_mmap_rwsem);
	list_for_each_entry(v, &mapping->i_mmap, shared)
		found |= v == vma;
	up_read(&mapping->i_mmap_rwsem);
	return found;
}

/* One entry that maps page (of a PMD: the folio's first page) at addr. */
static void check_entry(struct vm_area_struct *vma, unsigned long addr, pte_t entry,
			bool pmd)
{
	unsigned long pfn = pmd ? pmd_pfn(entry) : pte_pfn(entry);
	struct page *page = pfn_to_page(pfn);
	struct folio *folio;
	unsigned long want_index;

	if (!pmd && is_zero_pfn(pfn)) {
		if (pte_write(entry))
			folio_problem(NULL, "mm %p: the zero page is writable at %#lx", vma->vm_mm, addr);
		return;
	}
	if (is_huge_zero_pfn(pfn)) {
		if (!pmd || pfn != folio_pfn(page_folio(page)))
			folio_problem(NULL, "mm %p: a page of the huge zero page mapped at %#lx by "
				      "a PTE or off its first page", vma->vm_mm, addr);
		if (pte_write(entry) || (vma->vm_flags & VM_SHARED))
			folio_problem(NULL, "mm %p: the huge zero page is writable or shared at %#lx",
				      vma->vm_mm, addr);
		return;
	}
	if (!page || PageReserved(page) || PageBuddy(page) || PageSlab(page) ||
	    page_count(page) <= 0 || is_device_private_page(page) ||
	    (!test_page_flag(compound_head(page), PG_user_alloc) &&
	     !is_device_coherent_page(page))) {
		folio_problem(NULL, "mm %p %#lx: the entry %#llx maps pfn %#lx, which is %s",
			      vma->vm_mm, addr, (unsigned long long)entry, pfn,
			      !page ? "not memory" : PageReserved(page) ? "reserved" :
			      is_device_private_page(page) ? "device-private memory" :
			      PageBuddy(page) ? "free" : page_count(page) <= 0 ? "unreferenced" :
			      "a kernel page");
		return;
	}
	folio = page_folio(page);
	/* (Marked and still mapped is fine while memory_failure() is unmapping it.) */
	if (PageHWPoison(page) && !memory_failure_busy(pfn))
		folio_problem(folio, "hwpoisoned page mapped at %#lx", addr);
	/*
	 * Soft-dirty tracking rests on it: every way to write access marks the
	 * entry, unless the whole VMA counts as soft-dirty (an mprotect there
	 * may make a cleared entry writable, as on Linux).
	 */
	if (pte_write(entry) && !pte_soft_dirty(entry) && !(vma->vm_flags & VM_SOFTDIRTY))
		folio_problem(folio, "writable at %#lx but neither it nor its VMA soft-dirty", addr);
	if (pmd && (folio_order(folio) != HPAGE_PMD_ORDER || (struct page *)folio != page))
		folio_problem(folio, "a PMD at %#lx maps something other than a whole 2 MiB folio",
			      addr);
	if (!folio_mapped(folio))
		folio_problem(folio, "mapped at %#lx but its mapcount is 0", addr);
	want_index = folio->index + (unsigned long)(page - folio_page(folio, 0));
	if (addr >= vma->vm_start &&	/* (a PMD crossing the VMA's start is reported already) */
	    vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT) != want_index)
		folio_problem(folio, "at %#lx in mm %p, where page %#lx belongs, not %#lx", addr,
			      vma->vm_mm, vma->vm_pgoff + ((addr - vma->vm_start) >> PAGE_SHIFT),
			      want_index);
	if (folio_test_anon(folio)) {
		if (!vma_linked_to(vma, folio_anon_vma(folio)))
			folio_problem(folio, "at %#lx: its anon_vma does not reach VMA [%#lx, %#lx)",
				      addr, vma->vm_start, vma->vm_end);
		if (pte_write(entry) && !PageAnonExclusive(page) && !(vma->vm_flags & VM_SHARED))
			folio_problem(folio, "writable at %#lx but not anon-exclusive", addr);
	} else if (!folio->mapping || !vma->vm_file || folio->mapping != vma->vm_file->f_mapping ||
		   !vma_in_i_mmap(vma, folio->mapping)) {
		folio_problem(folio, "file page at %#lx not reachable from its mapping's i_mmap", addr);
	} else if (pte_write(entry) && !(vma->vm_flags & VM_SHARED)) {
		folio_problem(folio, "page-cache page writable in a private mapping at %#lx", addr);
	}
}

/*
 * Quire's swap entries: hwpoison, naming a poisoned frame; migration
 * (invariant 5), naming a page of a folio locked by the migration.
 */
static void check_swap_entry(struct mm_struct *mm, unsigned long addr, pte_t entry, swp_entry_t e)
{
	unsigned long pfn = swp_offset_pfn(e);

	if (is_hwpoison_entry(e) && pfn_valid(pfn) && PageHWPoison(pfn_to_page(pfn)))
		return;
	if (is_migration_entry(e) && pfn_valid(pfn)) {
		if (!folio_test_locked(page_folio(pfn_to_page(pfn))))
			folio_problem(page_folio(pfn_to_page(pfn)), "mm %p: at %#lx a migration "
				      "entry for pfn %#lx whose folio is not locked (invariant 5)",
				      mm, addr, pfn);
		return;
	}
	if (is_pfn_mapping_entry(e) && pfn_valid(pfn)) {
		struct page *page = pfn_to_page(pfn);
		struct folio *folio = page_folio(page);

		/* Maps its page as a PTE does: a referenced, mapped folio of the right kind. */
		if (page_count(page) <= 0 || !folio_mapped(folio) ||
		    is_device_private_entry(e) != is_device_private_page(page))
			folio_problem(folio, "mm %p: at %#lx a device %s entry for pfn %#lx, which is "
				      "%s", mm, addr, is_device_private_entry(e) ? "private" :
				      "exclusive", pfn, page_count(page) <= 0 ? "unreferenced" :
				      !folio_mapped(folio) ? "not counted as mapped" :
				      is_device_private_page(page) ? "device memory" :
				      "not device memory");
		return;
	}
	folio_problem(NULL, "mm %p: at %#lx a swap entry %#llx that names no poisoned frame, "
		      "no page under migration and no device page", mm, addr,
		      (unsigned long long)entry);
}

/*
 * A PMD migration entry: names the first page of a THP (an anonymous
 * PMD-order folio), locked by its migration (invariant 5).
 */
static void check_pmd_migration_entry(struct mm_struct *mm, unsigned long addr, pte_t pmd)
{
	swp_entry_t e = pmd_to_swp_entry(pmd);
	unsigned long pfn = swp_offset_pfn(e);
	struct folio *folio;

	check_swap_entry(mm, addr, pmd, e);
	if (!is_migration_entry(e) || !pfn_valid(pfn))
		return;
	folio = page_folio(pfn_to_page(pfn));
	if (folio_pfn(folio) != pfn || folio_order(folio) != HPAGE_PMD_ORDER ||
	    !folio_test_anon(folio))
		folio_problem(folio, "mm %p: at %#lx a PMD migration entry for pfn %#lx, which is "
			      "not the first page of an anonymous THP", mm, addr, pfn);
}

/*
 * Every entry of mm (invariants 4, 6 and 7 from the page-table side);
 * with_folios: also the folio side of each folio met, once per run.
 */
static int verify_mm_entries(struct mm_struct *mm, bool with_folios)
{
	int before = reports;
	struct vm_area_struct *vma;
	struct folio *last = NULL;

	list_for_each_entry(vma, &mm->vmas, vm_list) {
		for (unsigned long addr = vma->vm_start; addr < vma->vm_end;) {
			unsigned long next = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, vma->vm_end);
			pte_t *pmd = pmd_lookup(mm->pgd, addr, false);

			if (!pmd || !*pmd) {
				addr = next;
				continue;
			}
			if (pmd_leaf_or_migration(*pmd)) {
				if (!IS_ALIGNED(addr, PMD_SIZE) || next != addr + PMD_SIZE)
					folio_problem(NULL, "mm %p: a PMD mapping at %#lx crosses VMA "
						      "[%#lx, %#lx)", mm, addr, vma->vm_start, vma->vm_end);
				if (is_swap_pmd(*pmd))
					check_pmd_migration_entry(mm, ALIGN_DOWN(addr, PMD_SIZE), *pmd);
				else
					check_entry(vma, ALIGN_DOWN(addr, PMD_SIZE), *pmd, true);
				addr = next;
				continue;
			}
			if (!pmd_is_table(*pmd)) {
				folio_problem(NULL, "mm %p: at %#lx a PMD entry %#llx that is no table, no "
					      "2 MiB mapping and no migration entry", mm, addr,
					      (unsigned long long)*pmd);
				addr = next;
				continue;
			}
			for (; addr < next; addr += PAGE_SIZE) {
				pte_t entry = *pte_offset(pmd, addr);
				struct page *page;

				if (!pte_has_page(entry)) {
					swp_entry_t e = pte_to_swp_entry(entry);

					if (is_swap_pte(entry))
						check_swap_entry(mm, addr, entry, e);
					page = is_device_mapping_pte(entry) ?
					       pfn_to_page(swp_offset_pfn(e)) : NULL;
					if (with_folios && page && page_folio(page) != last) {
						last = page_folio(page);
						mm_verify_folio_rmap(last);
					}
					continue;
				}
				check_entry(vma, addr, entry, false);
				page = is_zero_pfn(pte_pfn(entry)) ? NULL : pfn_to_page(pte_pfn(entry));
				if (with_folios && page && page_folio(page) != last) {
					last = page_folio(page);
					mm_verify_folio_rmap(last);
				}
			}
		}
	}
	return reports - before;
}

int mm_verify_mm(struct mm_struct *mm)
{
	return verify_mm_entries(mm, false);
}

/* Every mapped user folio of every node (the folio side). */
static void verify_mapped_folios(void)
{
	for (int nid = 0; nid < MAX_NUMNODES; nid++) {
		pg_data_t *pgdat = NODE_DATA(nid);

		if (!pgdat->node_mem_map)
			continue;
		for (unsigned long i = 0; i < pgdat->node_spanned_pages;) {
			struct page *p = &pgdat->node_mem_map[i];
			struct folio *folio = (struct folio *)p;
			unsigned long nr = 1;

			if (page_to_nid(p) != NODE_HOLE && !PageBuddy(p) && !PageReserved(p) &&
			    !PageTail(p) && page_count(p) > 0) {
				nr = folio_nr_pages(folio);
				/*
				 * Held by a reference for the walk, as Linux's rmap
				 * walkers hold theirs: a folio that truncate unmaps and
				 * frees meanwhile cannot go away under it.
				 */
				if ((folio_mapped(folio) || folio_nr_pages_mapped(folio)) &&
				    folio_try_get(folio)) {
					verify_folio_rmap(folio, 1);
					folio_put(folio);
				} else if (test_page_flag(p, PG_user_alloc) &&
					   (folio_maybe_dma_pinned(folio) ||
					    (folio_test_large(folio) &&
					     atomic_read(&folio->_pincount))) &&
					   folio_try_get(folio)) {
					/* Pinned but mapped nowhere (munmap after the pin). */
					verify_pins(folio, 1);
					folio_put(folio);
				}
			} else if (PageBuddy(p)) {
				nr = 1UL << min(p->private, (unsigned long)MAX_PAGE_ORDER);
			}
			i += nr;
		}
	}
}

int mm_verify_mappings_locked(void)
{
	struct mm_struct *mm;
	int before = reports;

	mutex_assert_held(&mm_list_lock);
	verify_mapped_folios();
	list_for_each_entry(mm, &mm_list, mm_list)
		verify_mm_entries(mm, false);
	return reports - before;
}

int mm_verify_mappings(void)
{
	int problems;

	mutex_lock(&mm_list_lock);
	problems = mm_verify_mappings_locked();
	mutex_unlock(&mm_list_lock);
	return problems;
}

void mm_verify_reset_reports(void)
{
	reports = 0;
}
