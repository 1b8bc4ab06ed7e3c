/*
 * move_pages and migrate_pages, the system calls that move a process's
 * pages between nodes (include/quire/migrate.h, docs/mm/migrate.md), with
 * Linux 6.12's rules:
 *
 * move_pages(pid, count, pages, nodes, status, flags): with nodes NULL, the
 * node of each page (or -EFAULT: no VMA there, or the zero page; -ENOENT:
 * nothing mapped). With nodes, consecutive entries for the same node are
 * collected and moved together; each status is the page's node, or
 * -EFAULT, -ENOENT, -EACCES (shared by several processes, without
 * MPOL_MF_MOVE_ALL), -EBUSY (taken already: another page of the same large
 * folio, or another migration). A bad node stops the call: -ENODEV (no
 * such node, or no memory), -EACCES (not allowed). When a batch fails to
 * move, the call returns the number of pages not moved, those not tried
 * included, and the statuses after it are left unwritten.
 *
 * migrate_pages(pid, maxnode, old_nodes, new_nodes): every page on a node
 * of old_nodes moves to the node at the same position in new_nodes (the
 * i-th node of old to the i-th of new, wrapping). Returns the number of
 * folios that could not be moved.
 *
 * Quire has one user, root, with every capability: MPOL_MF_MOVE_ALL is
 * allowed, as is acting on another process.
 */
#include <quire/migrate.h>
#include <quire/mempolicy.h>
#include <quire/mm.h>
#include <quire/mm_internal.h>
#include <quire/mmap.h>
#include <quire/rmap.h>
#include <quire/huge_mm.h>
#include <quire/slab.h>
#include <quire/numa.h>
#include <quire/uaccess.h>
#include <quire/errno.h>
#include <quire/kernel.h>
#include <asm/pgtable.h>

#define MPOL_MF_STRICT		(1 << 0)
#define MPOL_MF_MOVE		(1 << 1)
#define MPOL_MF_MOVE_ALL	(1 << 2)

/* ---- finding the folio at an address ---- */

/*
 * The folio mapped at addr (by a PTE, or a PMD leaf), with the lock of the
 * table holding the entry in *ptl; NULL when nothing is (*zero: the zero
 * page is). mmap_lock held.
 */
static struct folio *folio_walk_start(struct mm_struct *mm, unsigned long addr, spinlock_t **ptl,
				      bool *zero)
{
	pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte, entry;

	*zero = false;
	if (!pmd || !READ_ONCE(*pmd))
		return NULL;
	if (pmd_leaf(READ_ONCE(*pmd))) {
		*ptl = pmd_lock(mm, pmd);
		if (is_huge_zero_pmd(*pmd)) {
			*zero = true;	/* -EFAULT, as the 4 KiB zero page (Linux 6.12) */
			spin_unlock(*ptl);
			return NULL;
		}
		if (pmd_leaf(*pmd))
			return page_folio(pfn_to_page(pmd_pfn(*pmd)));
		spin_unlock(*ptl);	/* split meanwhile: by PTE */
	}
	pte = pte_offset_map_lock(mm, pmd, addr, ptl);
	if (!pte)
		return NULL;
	entry = ptep_get(pte);
	if (pte_has_page(entry) && !is_zero_pfn(pte_pfn(entry)))
		return page_folio(pfn_to_page(pte_pfn(entry)));
	*zero = pte_has_page(entry);
	pte_unmap_unlock(pte, *ptl);
	return NULL;
}

/* ---- move_pages ---- */

/*
 * Isolate the folio at addr onto list for node: 1 (queued), 0 (on node
 * already), or the page's status (-EFAULT, -ENOENT, -EACCES, -EBUSY).
 */
static int add_folio_for_migration(struct mm_struct *mm, unsigned long addr, int node,
				   struct list_head *list, bool migrate_all)
{
	struct vm_area_struct *vma;
	struct folio *folio;
	spinlock_t *ptl;
	bool zero;
	int err = -EFAULT;

	down_read(&mm->mmap_lock);
	vma = find_vma(mm, addr);
	if (!vma || addr < vma->vm_start)
		goto out;
	folio = folio_walk_start(mm, addr, &ptl, &zero);
	if (!folio) {
		err = zero ? -EFAULT : -ENOENT;
		goto out;
	}
	if (folio_nid(folio) == node)
		err = 0;
	else if (!migrate_all && folio_maybe_mapped_shared(folio))
		err = -EACCES;
	else
		err = isolate_folio_to_list(folio, list) ? 1 : -EBUSY;
	spin_unlock(ptl);
out:
	up_read(&mm->mmap_lock);
	return err;
}

static int do_move_pages_to_node(struct list_head *list, int node)
{
	struct migration_target_control mtc = { .nid = node, .gfp_mask = __GFP_THISNODE };
	int err = migrate_pages(list, alloc_migration_target, NULL, (unsigned long)&mtc,
				MIGRATE_SYNC, MR_SYSCALL, NULL);

	if (err)
		putback_movable_pages(list);
	return err;
}

/*
 * move_pages for a kernel caller (the random mm sequence): every folio
 * mapped in [start, end) of mm, shared ones too (MPOL_MF_MOVE_ALL), to
 * node. Returns the pages not moved (0: each one mapped there is on node
 * now), or an error.
 */
long migrate_range_to_node(struct mm_struct *mm, unsigned long start, unsigned long end, int node)
{
	LIST_HEAD(list);

	if (!node_has_memory(node))
		return -ENODEV;
	for (unsigned long addr = start & PAGE_MASK; addr < end; addr += PAGE_SIZE)
		add_folio_for_migration(mm, addr, node, &list, true);
	return list_empty(&list) ? 0 : do_move_pages_to_node(&list, node);
}

static int store_status(u64 status, unsigned long start, int value, unsigned long nr)
{
	for (unsigned long i = start; i < start + nr; i++)
		if (copy_to_user((void *)(status + i * sizeof(int)), &value, sizeof(value)))
			return -EFAULT;
	return 0;
}

/*
 * Move the collected batch [start, i) to node; its statuses become node.
 * >0: pages not moved, counting those after it (the call ends).
 */
static int move_pages_and_store_status(int node, struct list_head *list, u64 status,
				       unsigned long start, unsigned long i, unsigned long nr_pages)
{
	int err;

	if (list_empty(list))
		return 0;
	err = do_move_pages_to_node(list, node);
	if (err)
		return err > 0 ? err + (int)(nr_pages - i) : err;
	return store_status(status, start, node, i - start);
}

static int do_pages_move(struct mm_struct *mm, unsigned long nr_pages, u64 pages, u64 nodes,
			 u64 status, int flags)
{
	int current_node = NUMA_NO_NODE, err = 0, err1;
	unsigned long start = 0, i;
	LIST_HEAD(list);

	for (i = 0; i < nr_pages; i++) {
		u64 addr;
		int node;

		err = -EFAULT;
		if (copy_from_user(&addr, (void *)(pages + i * sizeof(u64)), sizeof(addr)) ||
		    copy_from_user(&node, (void *)(nodes + i * sizeof(int)), sizeof(node)))
			goto out_flush;
		err = -ENODEV;
		if (node < 0 || node >= MAX_NUMNODES || !node_has_memory(node))
			goto out_flush;
		/* (-EACCES for a node outside the task's cpuset: Quire has none, all are allowed) */
		if (current_node == NUMA_NO_NODE) {
			current_node = node;
			start = i;
		} else if (node != current_node) {
			err = move_pages_and_store_status(current_node, &list, status, start, i,
							  nr_pages);
			if (err)
				return err;
			start = i;
			current_node = node;
		}
		err = add_folio_for_migration(mm, addr, current_node, &list,
					      flags & MPOL_MF_MOVE_ALL);
		if (err > 0)
			continue;	/* queued */
		/* On the node already (0: its node), or an error: this page's status. */
		err = store_status(status, i, err ? err : current_node, 1);
		if (err)
			goto out_flush;
		err = move_pages_and_store_status(current_node, &list, status, start, i, nr_pages);
		if (err)
			return err > 0 ? err - 1 : err;	/* page i is accounted for */
		current_node = NUMA_NO_NODE;
	}
out_flush:
	err1 = move_pages_and_store_status(current_node, &list, status, start, i, nr_pages);
	return err >= 0 ? err1 : err;
}

/* Query mode: the node (or -EFAULT, -ENOENT) of each page. */
static int do_pages_stat(struct mm_struct *mm, unsigned long nr_pages, u64 pages, u64 status)
{
	for (unsigned long i = 0; i < nr_pages; i++) {
		struct vm_area_struct *vma;
		struct folio *folio;
		spinlock_t *ptl;
		int value = -EFAULT;
		bool zero;
		u64 addr;

		if (copy_from_user(&addr, (void *)(pages + i * sizeof(u64)), sizeof(addr)))
			return -EFAULT;
		down_read(&mm->mmap_lock);
		vma = find_vma(mm, addr);
		if (vma && addr >= vma->vm_start) {
			folio = folio_walk_start(mm, addr, &ptl, &zero);
			value = folio ? folio_nid(folio) : zero ? -EFAULT : -ENOENT;
			if (folio)
				spin_unlock(ptl);
		}
		up_read(&mm->mmap_lock);
		if (copy_to_user((void *)(status + i * sizeof(int)), &value, sizeof(value)))
			return -EFAULT;
	}
	return 0;
}

long sys_move_pages(u64 pid, u64 nr_pages, u64 pages, u64 nodes, u64 status, u64 flags)
{
	struct mm_struct *mm;
	long err;

	if (flags & ~(u64)(MPOL_MF_MOVE | MPOL_MF_MOVE_ALL))
		return -EINVAL;
	err = get_process_mm((int)pid, &mm);
	if (err)
		return err;
	if (nodes)
		err = do_pages_move(mm, nr_pages, pages, nodes, status, (int)flags);
	else
		err = do_pages_stat(mm, nr_pages, pages, status);
	mmput(mm);
	return err;
}

/* ---- migrate_pages ---- */

/* The n-th (from 0) node of mask, counting round it (weight > 0). */
static int nth_set_node(u64 mask, unsigned int n)
{
	n %= (unsigned int)nodes_weight(mask);
	for (int nid = 0;; nid++)
		if ((mask & (1ULL << nid)) && n-- == 0)
			return nid;
}

/* Where a page on nid goes: the node of new at old's position of nid. */
static int remap_node(int nid, u64 old, u64 new)
{
	return nth_set_node(new, (unsigned int)nodes_weight(old & ((1ULL << nid) - 1)));
}

struct remap_walk {
	u64 old, new;
	bool migrate_all;
	struct list_head lists[MAX_NUMNODES];	/* by target node */
};

/* One folio met in the walk (its table's lock held). */
static void queue_folio(struct remap_walk *w, struct folio *folio)
{
	int nid = folio_nid(folio), target;

	if (!(w->old & (1ULL << nid)))
		return;
	/* Masks of different sizes: a page on a node of new is where it may be (Linux). */
	if (nodes_weight(w->old) != nodes_weight(w->new) && (w->new & (1ULL << nid)))
		return;
	target = remap_node(nid, w->old, w->new);
	if (target == nid || (!w->migrate_all && folio_maybe_mapped_shared(folio)))
		return;
	isolate_folio_to_list(folio, &w->lists[target]);	/* taken already: skipped, as Linux */
}

/* Every folio mapped in vma (mmap_lock held). */
static void queue_vma(struct remap_walk *w, struct vm_area_struct *vma)
{
	struct mm_struct *mm = vma->vm_mm;

	for (unsigned long addr = vma->vm_start; addr < vma->vm_end;) {
		unsigned long next = min(ALIGN_DOWN(addr, PMD_SIZE) + PMD_SIZE, vma->vm_end);
		pte_t *pmd = pmd_lookup(mm->pgd, addr, false), *pte;
		spinlock_t *ptl;

		if (pmd && pmd_leaf(READ_ONCE(*pmd))) {
			ptl = pmd_lock(mm, pmd);
			if (pmd_leaf(*pmd)) {
				if (!is_huge_zero_pmd(*pmd))	/* (never migrated) */
					queue_folio(w, page_folio(pfn_to_page(pmd_pfn(*pmd))));
				spin_unlock(ptl);
				addr = next;
				continue;
			}
			spin_unlock(ptl);
		}
		pte = pmd ? pte_offset_map_lock(mm, pmd, addr, &ptl) : NULL;
		if (pte) {
			for (; addr < next; addr += PAGE_SIZE) {
				pte_t entry = ptep_get(pte_offset(pmd, addr));

				if (pte_has_page(entry) && !is_zero_pfn(pte_pfn(entry)))
					queue_folio(w, page_folio(pfn_to_page(pte_pfn(entry))));
			}
			pte_unmap_unlock(pte, ptl);
		}
		addr = next;
	}
}

static long do_migrate_pages(struct mm_struct *mm, u64 old, u64 new, bool migrate_all)
{
	struct remap_walk *w = kzalloc(sizeof(*w), GFP_KERNEL);
	struct vm_area_struct *vma;
	long failed = 0;

	if (!w)
		return -ENOMEM;
	w->old = old;
	w->new = new;
	w->migrate_all = migrate_all;
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		INIT_LIST_HEAD(&w->lists[nid]);
	down_read(&mm->mmap_lock);
	list_for_each_entry(vma, &mm->vmas, vm_list)
		queue_vma(w, vma);
	up_read(&mm->mmap_lock);
	/* Each folio was queued once, for its final node: no page moves twice. */
	for (int nid = 0; nid < MAX_NUMNODES; nid++) {
		int err;

		if (list_empty(&w->lists[nid]))
			continue;
		err = do_move_pages_to_node(&w->lists[nid], nid);
		if (err < 0 && !failed)
			failed = err;
		else if (err > 0 && failed >= 0)
			failed += err;
	}
	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		putback_movable_pages(&w->lists[nid]);
	kfree(w);
	return failed;
}

long sys_migrate_pages(u64 pid, u64 maxnode, u64 old_nodes, u64 new_nodes, u64 a4, u64 a5)
{
	struct mm_struct *mm;
	u64 old, new;
	bool other;
	long err;

	(void)a4, (void)a5;
	err = get_nodes(&old, &other, old_nodes, maxnode);
	if (!err)
		err = get_nodes(&new, &other, new_nodes, maxnode);
	if (err)
		return err;
	err = get_process_mm((int)pid, &mm);
	if (err)
		return err;
	/* Only nodes with memory are targets (Linux: the cpuset's mems); none: EINVAL. */
	new &= nodes_with_memory_mask();
	err = new ? do_migrate_pages(mm, old, new, true) : -EINVAL;
	mmput(mm);
	return err;
}
