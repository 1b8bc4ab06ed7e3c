/*
 * NUMA memory policy (include/quire/mempolicy.h, docs/mm/mempolicy.md):
 * set_mempolicy, get_mempolicy, mbind and set_mempolicy_home_node with
 * Linux 6.12's modes, flags and errno values, and the allocation of user
 * folios under the VMA's policy, else the current task's. Node masks from user space follow Linux's rules for a kernel
 * built with 1024 possible nodes (Debian's): bits up to 1023 are node
 * numbers (those that are not nodes with memory drop out), bits beyond
 * must be zero.
 */
#include <quire/mempolicy.h>
#include <quire/migrate.h>
#include <quire/rmap.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/numa.h>
#include <quire/sched.h>
#include <quire/uaccess.h>
#include <quire/errno.h>
#include <quire/pte.h>
#include <quire/mmzone.h>
#include <quire/printk.h>
#include <quire/string.h>
#include <quire/kernel.h>
#include <quire/rmap.h>
#include <quire/mm_internal.h>

#define LINUX_MAX_NUMNODES	1024	/* what user masks are measured against */
#define BITS_PER_U64		64

static const struct mempolicy default_policy;

/* The current task's policy; the default one for kernel work. */
static struct mempolicy *current_policy(void)
{
	struct task *t = current;

	return t ? &t->mempolicy : (struct mempolicy *)&default_policy;
}

/* How many bits mask has (no popcount instruction assumed: no libgcc in the kernel). */
static unsigned long weight(u64 mask)
{
	unsigned long n = 0;

	for (; mask; mask &= mask - 1)
		n++;
	return n;
}

/* The n-th (from 0) set bit of mask, n taken modulo the weight. */
static int nth_node(u64 mask, unsigned long n)
{
	n %= weight(mask);
	while (n--)
		mask &= mask - 1;
	return __builtin_ctzll(mask);
}

/*
 * MPOL_WEIGHTED_INTERLEAVE's weights, Linux's iw_table: one per node, set
 * through /sys/kernel/mm/mempolicy/weighted_interleave/nodeN; 0 (never
 * written, or written 0) means the default weight, 1.
 */
static u8 il_weights[MAX_NUMNODES];

static unsigned int il_weight(int nid)
{
	unsigned int w = READ_ONCE(il_weights[nid]);

	return w ? w : 1;
}

/*
 * Weighted interleave by index: the nodes of mask in order, each taking
 * as many consecutive indexes as its weight. The weights are read once,
 * so that a concurrent store cannot make the two passes disagree.
 */
static int weighted_nth_node(u64 mask, unsigned long ilx)
{
	unsigned int w[MAX_NUMNODES];
	unsigned long total = 0;

	for (int nid = 0; nid < MAX_NUMNODES; nid++)
		if (mask & (1ULL << nid))
			total += w[nid] = il_weight(nid);
	ilx %= total;
	for (int nid = 0;; nid++) {
		if (!(mask & (1ULL << nid)))
			continue;
		if (ilx < w[nid])
			return nid;
		ilx -= w[nid];
	}
}

int mpol_il_weight_show(int nid, char *buf, size_t size)
{
	return scnprintf(buf, size, "%u\n", il_weight(nid));
}

/* Linux's node_store: a number 0..255 (base 0, one trailing newline), anything else EINVAL. */
int mpol_il_weight_store(int nid, const char *buf, size_t len)
{
	char text[16];
	unsigned long long v;

	if (len && buf[len - 1] == '\n')
		len--;
	if (len >= sizeof(text))
		return -EINVAL;
	memcpy(text, buf, len);
	text[len] = '\0';
	if (len == 0)
		v = 0;
	else if (kstrtoull(text, 0, &v) || v > 255)
		return -EINVAL;
	WRITE_ONCE(il_weights[nid], (u8)v);
	return 0;
}

/* Try the nodes of mask nearest to node `from` first, each strictly. */
static struct folio *alloc_in_nodes(gfp_t gfp, unsigned int order, u64 mask, int from)
{
	const struct numa_node *near = &numa_nodes[numa_mem_id_of(from)];
	struct folio *folio = NULL;

	for (int i = 0; i < near->nr_fallback && !folio; i++)
		if (mask & (1ULL << near->fallback[i]))
			folio = folio_alloc(gfp | __GFP_THISNODE | __GFP_NOWARN, order,
					    near->fallback[i]);
	return folio;
}

const struct mempolicy *vma_effective_policy(const struct vm_area_struct *vma)
{
	if (vma && vma->vm_policy.mode != MPOL_DEFAULT)
		return &vma->vm_policy;
	return current_policy();
}

/*
 * Linux's interleave index: the folio's number among the VMA's page
 * offsets (for an anonymous VMA, vm_pgoff is its start's page number, so
 * this is the folio's number in the address space).
 */
static unsigned long interleave_index(const struct vm_area_struct *vma, unsigned long addr,
				      unsigned int order)
{
	if (!vma)
		return addr >> (PAGE_SHIFT + order);
	return (vma->vm_pgoff >> order) + ((addr - vma->vm_start) >> (PAGE_SHIFT + order));
}

struct folio *mpol_folio_alloc(gfp_t gfp, unsigned int order, struct vm_area_struct *vma,
			       unsigned long addr)
{
	const struct mempolicy *pol = vma_effective_policy(vma);
	int nid = numa_mem_id_of(numa_node_id());
	struct folio *folio;

	/* BIND and PREFERRED_MANY start from the home node when there is one. */
	if (pol->home_node != NUMA_NO_NODE &&
	    (pol->mode == MPOL_BIND || pol->mode == MPOL_PREFERRED_MANY))
		nid = pol->home_node;
	switch (pol->mode) {
	case MPOL_BIND:
		return alloc_in_nodes(gfp, order, pol->nodes, nid);
	case MPOL_PREFERRED_MANY:
		folio = alloc_in_nodes(gfp, order, pol->nodes, nid);
		if (folio || (gfp & __GFP_THISNODE))
			return folio;
		break;
	case MPOL_PREFERRED:
		nid = __builtin_ctzll(pol->nodes);
		break;
	case MPOL_INTERLEAVE:
		nid = nth_node(pol->nodes, interleave_index(vma, addr, order));
		folio = folio_alloc(gfp, order, nid);
		if (folio && folio_nid(folio) == nid)
			count_node_event_nid(nid, NUMA_INTERLEAVE_HIT);
		return folio;
	case MPOL_WEIGHTED_INTERLEAVE:
		nid = weighted_nth_node(pol->nodes, interleave_index(vma, addr, order));
		break;
	}
	return folio_alloc(gfp, order, nid);
}

/* Linux's policy_modes names, as numa_maps prints them. */
static const char *const mode_names[MPOL_MAX] = {
	[MPOL_DEFAULT] = "default", [MPOL_PREFERRED] = "prefer", [MPOL_BIND] = "bind",
	[MPOL_INTERLEAVE] = "interleave", [MPOL_WEIGHTED_INTERLEAVE] = "weighted interleave",
	[MPOL_LOCAL] = "local", [MPOL_PREFERRED_MANY] = "prefer (many)",
};

int mpol_to_str(char *buf, size_t size, const struct mempolicy *pol)
{
	unsigned int flags = pol->flags & MPOL_MODE_FLAGS;
	bool no_nodes = pol->mode == MPOL_DEFAULT || pol->mode == MPOL_LOCAL;
	int len = scnprintf(buf, size, "%s", mode_names[pol->mode]);

	if (pol->mode != MPOL_DEFAULT && flags)
		len += scnprintf(buf + len, size - len, "=%s%s%s",
				 flags & MPOL_F_STATIC_NODES ? "static" :
				 flags & MPOL_F_RELATIVE_NODES ? "relative" : "",
				 (flags & MPOL_F_NUMA_BALANCING) && flags != MPOL_F_NUMA_BALANCING ?
				 "|" : "", flags & MPOL_F_NUMA_BALANCING ? "balancing" : "");
	if (!no_nodes && pol->nodes) {
		len += scnprintf(buf + len, size - len, ":");
		len += scnprint_id_list(buf + len, size - len, pol->nodes);
	}
	return len;
}

/* ---- system calls ---- */

/*
 * A node mask from user space: maxnode bits at umask (Linux counts one
 * bit less). Bits below 1024 go to *nodes (those above Quire's nodes are
 * kept apart in *other, to tell an empty mask from one of absent nodes).
 */
int get_nodes(u64 *nodes, bool *other, u64 umask, u64 maxnode)
{
	u64 words[LINUX_MAX_NUMNODES / BITS_PER_U64] = { 0 }, w;

	*nodes = 0;
	*other = false;
	if (maxnode-- == 0 || maxnode == 0 || !umask)
		return 0;
	if (maxnode > PAGE_SIZE * 8)
		return -EINVAL;
	/* Beyond 1024 bits every word must be zero. */
	for (u64 bit = LINUX_MAX_NUMNODES; bit < maxnode; bit += BITS_PER_U64) {
		if (copy_from_user(&w, (void *)(umask + bit / 8), sizeof(w)))
			return -EFAULT;
		if (maxnode - bit < BITS_PER_U64)
			w &= (1ULL << (maxnode - bit)) - 1;
		if (w)
			return -EINVAL;
	}
	if (maxnode > LINUX_MAX_NUMNODES)
		maxnode = LINUX_MAX_NUMNODES;
	if (copy_from_user(words, (void *)umask, (maxnode + 63) / 64 * 8))
		return -EFAULT;
	if (maxnode % BITS_PER_U64)
		words[maxnode / BITS_PER_U64] &= (1ULL << (maxnode % BITS_PER_U64)) - 1;
	*nodes = words[0] & ((1ULL << MAX_NUMNODES) - 1);
	*other = (words[0] >> MAX_NUMNODES) != 0;
	for (unsigned int i = 1; i < LINUX_MAX_NUMNODES / BITS_PER_U64; i++)
		*other |= words[i] != 0;
	return 0;
}

/* MPOL_F_RELATIVE_NODES: bit i means the i-th allowed node (wrapping). */
static u64 relative_nodes(u64 user, u64 allowed)
{
	u64 out = 0;

	for (int i = 0; i < MAX_NUMNODES; i++)
		if (user & (1ULL << i))
			out |= 1ULL << nth_node(allowed, (unsigned long)i);
	return out;
}

/* Linux's mpol_new and mpol_set_nodemask: the new policy in *pol, or -EINVAL. */
static int make_policy(struct mempolicy *pol, unsigned int mode, unsigned int flags,
		       u64 nodes, bool other)
{
	bool empty = !nodes && !other;
	u64 allowed = nodes_with_memory_mask(), eff;

	*pol = (struct mempolicy){ .mode = (u16)mode, .flags = (u16)flags, .user_nodes = nodes,
				   .home_node = NUMA_NO_NODE, .il_prev = MAX_NUMNODES - 1 };
	if (mode == MPOL_DEFAULT) {
		*pol = default_policy;	/* Linux's NULL policy: no flags are kept */
		return empty ? 0 : -EINVAL;
	}
	if (mode == MPOL_PREFERRED && empty) {
		if (flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES))
			return -EINVAL;
		pol->mode = MPOL_LOCAL;
		return 0;
	}
	if (mode == MPOL_LOCAL)
		return empty && !(flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES)) ? 0 : -EINVAL;
	if (empty)
		return -EINVAL;
	eff = flags & MPOL_F_RELATIVE_NODES ? relative_nodes(nodes, allowed) : nodes & allowed;
	if (!eff)
		return -EINVAL;
	pol->nodes = mode == MPOL_PREFERRED ? eff & -eff : eff;	/* preferred: its first node */
	return 0;
}

/* Linux's sanitize_mpol_flags: the mode and its flags apart, checked. */
static int split_mode(u64 arg, unsigned int *mode, unsigned int *flags)
{
	*flags = (unsigned int)arg & MPOL_MODE_FLAGS;
	*mode = (unsigned int)arg & ~MPOL_MODE_FLAGS;
	if ((int)arg < 0 || *mode >= MPOL_MAX || arg > 0xffffffffULL)
		return -EINVAL;
	if ((*flags & MPOL_F_STATIC_NODES) && (*flags & MPOL_F_RELATIVE_NODES))
		return -EINVAL;
	if ((*flags & MPOL_F_NUMA_BALANCING) && *mode != MPOL_BIND)
		return -EINVAL;
	return 0;
}

/* What set_mempolicy and mbind are asked for: the mode, its flags, the user's nodes. */
struct policy_args {
	unsigned int mode, flags;
	u64 nodes;		/* the bits below MAX_NUMNODES */
	bool other;		/* bits set above them (absent nodes) */
};

/* Linux's sanitize_mpol_flags, then get_nodes: 0 or -EINVAL / -EFAULT. */
static int get_policy_args(struct policy_args *a, u64 mode_arg, u64 nmask, u64 maxnode)
{
	int err = split_mode(mode_arg, &a->mode, &a->flags);

	return err ? err : get_nodes(&a->nodes, &a->other, nmask, maxnode);
}

long sys_set_mempolicy(u64 mode_arg, u64 nmask, u64 maxnode, u64 a3, u64 a4, u64 a5)
{
	struct policy_args a;
	struct mempolicy pol;
	int err = get_policy_args(&a, mode_arg, nmask, maxnode);

	if (!err)
		err = make_policy(&pol, a.mode, a.flags, a.nodes, a.other);
	if (!err)
		current->mempolicy = pol;
	return err;
}

/*
 * The node of the page mapped at addr, faulting it in first (a read, as GUP
 * would). handle_mm_fault takes mmap_lock itself: called without it.
 */
static int node_of_address(struct mm_struct *mm, unsigned long addr)
{
	pte_t *pmd, *pte;
	unsigned long pfn = 0;
	int nid;

	if (handle_mm_fault(mm, addr, 0))
		return -EFAULT;
	down_read(&mm->mmap_lock);
	pmd = pmd_lookup(mm->pgd, addr, false);
	if (pmd && pmd_leaf(*pmd))
		pfn = pmd_pfn(*pmd) + ((addr & (PMD_SIZE - 1)) >> PAGE_SHIFT);
	else if ((pte = pte_lookup(mm->pgd, addr, false)) && pte_present(*pte))
		pfn = pte_pfn(*pte);
	nid = pfn ? page_to_nid(pfn_to_page(pfn)) : -EFAULT;
	up_read(&mm->mmap_lock);
	return nid;
}

/* Linux's do_get_mempolicy: the mode (or a node) in *mode, the mask in *nodes. */
static int get_policy(int *mode, u64 *nodes, u64 addr, u64 flags)
{
	const struct mempolicy *pol = current_policy();
	struct mm_struct *mm = current->mm;
	struct mempolicy vma_pol;

	*nodes = 0;
	if (flags & ~(u64)(MPOL_F_NODE | MPOL_F_ADDR | MPOL_F_MEMS_ALLOWED))
		return -EINVAL;
	if (flags & MPOL_F_MEMS_ALLOWED) {
		if (flags & (MPOL_F_NODE | MPOL_F_ADDR))
			return -EINVAL;
		*mode = 0;
		*nodes = nodes_with_memory_mask();
		return 0;
	}
	if (flags & MPOL_F_ADDR) {
		struct vm_area_struct *vma;
		bool mapped;

		down_read(&mm->mmap_lock);
		vma = find_vma(mm, addr);
		mapped = vma && vma->vm_start <= addr;
		if (mapped)
			vma_pol = vma->vm_policy;	/* a copy: the lock goes */
		up_read(&mm->mmap_lock);
		if (!mapped)
			return -EFAULT;
		pol = &vma_pol;			/* the VMA's own: the default when it has none */
	} else if (addr) {
		return -EINVAL;
	}
	if (flags & MPOL_F_NODE) {
		if (flags & MPOL_F_ADDR) {
			*mode = node_of_address(mm, addr);
			if (*mode < 0)
				return *mode;
		} else if (pol->mode == MPOL_INTERLEAVE || pol->mode == MPOL_WEIGHTED_INTERLEAVE) {
			int next = pol->il_prev + 1;

			while (!(pol->nodes & (1ULL << (next % MAX_NUMNODES))))
				next++;
			*mode = next % MAX_NUMNODES;
		} else {
			return -EINVAL;
		}
	} else {
		*mode = pol->mode | (pol->flags & MPOL_MODE_FLAGS);
	}
	if (pol->flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES))
		*nodes = pol->user_nodes;
	else if (pol->mode != MPOL_LOCAL)
		*nodes = pol->nodes;
	return 0;
}

/* Linux's copy_nodes_to_user: maxnode bits, those past the node ids zeroed. */
static int put_nodes(u64 umask, u64 maxnode, u64 nodes)
{
	u64 copy = (maxnode + 63) / 64 * 8, zero = 0;

	if (copy > PAGE_SIZE)
		return -EINVAL;
	for (u64 off = 8; off < copy; off += 8)
		if (copy_to_user((void *)(umask + off), &zero, 8))
			return -EFAULT;
	return copy && copy_to_user((void *)umask, &nodes, 8) ? -EFAULT : 0;
}

long sys_get_mempolicy(u64 upolicy, u64 nmask, u64 maxnode, u64 addr, u64 flags, u64 a5)
{
	int mode = 0, err;
	u64 nodes;

	if (nmask && maxnode < (u64)nr_node_ids)
		return -EINVAL;
	err = get_policy(&mode, &nodes, addr, flags);
	if (!err && upolicy && copy_to_user((void *)upolicy, &mode, sizeof(mode)))
		err = -EFAULT;
	if (!err && nmask)
		err = put_nodes(nmask, maxnode, nodes);
	return err;
}

/* ---- mbind: per-VMA policies ---- */

/*
 * What mbind found among the pages already in its range (Linux's
 * queue_pages): a folio is misplaced when its node is not in the caller's
 * mask (as given, not as the policy made it: Linux's rule, so that
 * MPOL_DEFAULT and MPOL_LOCAL find every page misplaced). A large folio
 * counts once.
 */
struct queue_pages {
	struct mmu_walk w;
	u64 nodes;
	unsigned int flags;	/* MPOL_MF_* */
	struct folio *large;	/* the large folio counted last */
	long nr_failed;		/* misplaced, not to be moved: -EIO under MPOL_MF_STRICT */
	long nr_to_move;	/* misplaced, isolated on folios for MPOL_MF_MOVE(_ALL) to move */
	struct list_head folios;
};

static void queue_folio(struct queue_pages *qp, struct folio *folio)
{
	if (!folio || (qp->nodes & (1ULL << folio_nid(folio))))
		return;
	if (folio_test_large(folio)) {
		if (folio == qp->large)
			return;
		qp->large = folio;
	}
	if (!(qp->flags & (MPOL_MF_MOVE | MPOL_MF_MOVE_ALL)))
		qp->nr_failed++;
	else if (!(qp->flags & MPOL_MF_MOVE_ALL) && folio_maybe_mapped_shared(folio))
		return;		/* MOVE leaves shared folios, and that is no failure */
	else if (isolate_folio_to_list(folio, &qp->folios))	/* (the walk holds its table's lock) */
		qp->nr_to_move++;
	else
		qp->nr_failed++;	/* taken by another migration: not moved */
}

/* A page being migrated meanwhile: not moved by this call (Linux counts it failed too). */
static void queue_swap_pmd(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd)
{
	struct queue_pages *qp = container_of(w, struct queue_pages, w);

	if (is_pmd_migration_entry(pmd))
		qp->nr_failed++;
}

static void queue_pte(struct mmu_walk *w, unsigned long addr, pte_t pte)
{
	struct queue_pages *qp = container_of(w, struct queue_pages, w);

	if (is_migration_pte(pte)) {
		qp->nr_failed++;
		return;
	}
	struct page *page;

	queue_folio(qp, pte_normal_folio(pte, &page));
}

static void queue_pmd(struct mmu_walk *w, unsigned long addr, unsigned long end, pte_t pmd)
{
	struct queue_pages *qp = container_of(w, struct queue_pages, w);
	struct page *page;

	queue_folio(qp, normal_folio(pmd_pfn(pmd), &page));
}

/* Linux's strictly_unmovable: STRICT without a MOVE flag fails at the first misplaced page. */
static bool strictly_unmovable(unsigned int flags)
{
	return (flags & MPOL_MF_VALID) == MPOL_MF_STRICT;
}

/*
 * Linux's queue_pages_range, VMA by VMA in address order: -EFAULT when the
 * range holds no VMA, or (unless discontig_ok) for a hole at its head or
 * one just after the VMA at hand, before that VMA's pages are looked at;
 * with flags asking for it, the VMA's present pages are queued, and under
 * STRICT alone the first misplaced one ends the walk with -EIO.
 * mmap_lock held.
 */
static int queue_pages_range(struct mm_struct *mm, unsigned long start, unsigned long end,
			     struct queue_pages *qp, bool discontig_ok)
{
	struct vm_area_struct *v = find_vma(mm, start), *next;

	if (!v || v->vm_start >= end)
		return -EFAULT;
	if (!discontig_ok && v->vm_start > start)
		return -EFAULT;
	qp->w = (struct mmu_walk){ .pte = queue_pte, .pmd = queue_pmd, .swap_pmd = queue_swap_pmd };
	for (; v && v->vm_start < end; v = next) {
		next = find_vma(mm, v->vm_end);
		if (!discontig_ok && v->vm_end < end && (!next || next->vm_start > v->vm_end))
			return -EFAULT;
		if (qp->flags & MPOL_MF_VALID)
			walk_range(mm, max(start, v->vm_start), min(end, v->vm_end), &qp->w);
		if (strictly_unmovable(qp->flags) && qp->nr_failed)
			return -EIO;
	}
	return 0;
}

/* Where mbind's moves go: the range's new policy, at the folio's place in it. */
struct mbind_target {
	struct mm_struct *mm;
	unsigned long start, end;
};

/*
 * Linux's alloc_migration_target_by_mpol: a folio of src's order under the
 * policy of the VMA of the range that maps it (interleave by its index
 * there). A large folio stays on the nodes the policy picks or is split.
 */
static struct folio *alloc_migration_target_by_mpol(struct folio *src, unsigned long private)
{
	const struct mbind_target *t = (const struct mbind_target *)private;
	unsigned long nr = folio_nr_pages(src);
	gfp_t gfp = __GFP_MOVABLE | __GFP_NOWARN | (nr > 1 ? __GFP_THISNODE : 0);
	struct vm_area_struct *v;

	for (v = find_vma(t->mm, t->start); v && v->vm_start < t->end; v = find_vma(t->mm, v->vm_end)) {
		unsigned long addr = vma_address(v, src->index, nr);

		if (addr != (unsigned long)-EFAULT && !v->vm_file == folio_test_anon(src))
			return mpol_folio_alloc(gfp, folio_order(src), v, addr);
	}
	return NULL;
}

/*
 * MPOL_MF_MOVE / MPOL_MF_MOVE_ALL: move the misplaced folios of [start,
 * end) that queue_pages_range isolated onto qp->folios to the nodes of the
 * range's new policy (Linux 6.12's do_mbind, mmap_lock still held for
 * writing); returns how many could not move.
 */
static long mbind_move_folios(struct mm_struct *mm, unsigned long start, unsigned long end,
			      struct queue_pages *qp)
{
	struct mbind_target t = { .mm = mm, .start = start, .end = end };
	int failed;

	mmap_assert_write_locked(mm);
	failed = migrate_pages(&qp->folios, alloc_migration_target_by_mpol, NULL, (unsigned long)&t,
			       MIGRATE_SYNC, MR_MEMPOLICY_MBIND, NULL);
	putback_movable_pages(&qp->folios);
	return failed < 0 ? 1 : failed;		/* -ENOMEM: some folio stayed */
}

static bool policy_differs(struct vm_area_struct *v, void *arg)
{
	return !mpol_equal(&v->vm_policy, arg);
}

static void policy_apply(struct vm_area_struct *v, void *arg)
{
	v->vm_policy = *(const struct mempolicy *)arg;
}

/* Linux's mbind_range: pol on [start, end), VMAs split and merged; holes skipped. */
static int mbind_range(struct mm_struct *mm, unsigned long start, unsigned long end,
		       const struct mempolicy *pol)
{
	const struct vma_modify m = { .differs = policy_differs, .apply = policy_apply,
				      .arg = (void *)pol, .skip_holes = true };

	return modify_vma_range(mm, start, end, &m);
}

/*
 * Linux's do_mbind once the arguments are checked: a hole is -EFAULT
 * (with MPOL_DEFAULT only a range without any VMA) and misplaced pages
 * under MPOL_MF_STRICT alone are -EIO, both before anything changes; else
 * the policy is set, then pages are moved, and under STRICT any misplaced
 * page that stayed is -EIO.
 */
static long do_mbind(struct mm_struct *mm, unsigned long start, unsigned long end,
		     const struct mempolicy *pol, u64 user_nodes, unsigned int flags)
{
	struct queue_pages qp = { .nodes = user_nodes, .flags = flags };
	long err;

	mmap_assert_write_locked(mm);
	INIT_LIST_HEAD(&qp.folios);
	err = queue_pages_range(mm, start, end, &qp, pol->mode == MPOL_DEFAULT);
	if (!err)
		err = mbind_range(mm, start, end, pol);
	if (!err && qp.nr_to_move)
		err = mbind_move_folios(mm, start, end, &qp);
	putback_movable_pages(&qp.folios);	/* isolated before an error: given back */
	if (err > 0)
		qp.nr_failed += err;
	if (err >= 0)
		err = qp.nr_failed && (flags & MPOL_MF_STRICT) ? -EIO : 0;
	return err;
}

/* A page-aligned start and a length rounded up as Linux's: 0 and [*end] or -EINVAL. */
static int mbind_range_args(u64 start, u64 len, unsigned long *end)
{
	if (start & (PAGE_SIZE - 1))
		return -EINVAL;
	*end = start + ALIGN_UP(len, PAGE_SIZE);	/* ~0 rounds to 0: an empty range */
	return *end < start ? -EINVAL : 0;
}

long sys_mbind(u64 start, u64 len, u64 mode_arg, u64 nmask, u64 maxnode, u64 flags_arg)
{
	unsigned int flags = (unsigned int)flags_arg;
	struct mm_struct *mm = current->mm;
	struct policy_args a;
	struct mempolicy pol;
	unsigned long end;
	long err = get_policy_args(&a, mode_arg, nmask, maxnode);

	if (err)
		return err;
	if (flags & ~MPOL_MF_VALID)
		return -EINVAL;
	/* MPOL_MF_MOVE_ALL needs CAP_SYS_NICE: every process is root here, never -EPERM. */
	err = mbind_range_args(start, len, &end);
	if (err || end == start)
		return err;
	if (a.mode == MPOL_DEFAULT)
		flags &= ~MPOL_MF_STRICT;
	err = make_policy(&pol, a.mode, a.flags, a.nodes, a.other);
	if (err)
		return err;
	down_write(&mm->mmap_lock);
	err = do_mbind(mm, start, end, &pol, a.nodes, flags);
	up_write(&mm->mmap_lock);
	return err;
}

/*
 * Linux's set_mempolicy_home_node: each VMA of the range with a BIND or
 * PREFERRED_MANY policy gets home_node (VMAs without a policy are passed
 * over, holes too); any other policy stops the walk with -EOPNOTSUPP (the
 * VMAs before it keep their new home). -ENOENT when no VMA had a policy.
 */
long sys_set_mempolicy_home_node(u64 start, u64 len, u64 home_node, u64 flags, u64 a4, u64 a5)
{
	struct mm_struct *mm = current->mm;
	unsigned long end, next;
	long err;

	if (start & (PAGE_SIZE - 1) || flags)
		return -EINVAL;
	if (home_node >= MAX_NUMNODES || !node_online((int)home_node))
		return -EINVAL;
	err = mbind_range_args(start, len, &end);
	if (err || end == start)
		return err;
	err = -ENOENT;
	down_write(&mm->mmap_lock);
	for (unsigned long addr = start; addr < end; addr = next) {
		struct vm_area_struct *v = find_vma(mm, addr);
		struct mempolicy pol;

		if (!v || v->vm_start >= end)
			break;
		next = min((unsigned long)end, v->vm_end);
		if (v->vm_policy.mode == MPOL_DEFAULT)
			continue;
		if (v->vm_policy.mode != MPOL_BIND && v->vm_policy.mode != MPOL_PREFERRED_MANY) {
			err = -EOPNOTSUPP;
			break;
		}
		pol = v->vm_policy;
		pol.home_node = (s16)home_node;
		err = mbind_range(mm, max(addr, v->vm_start), next, &pol);
		if (err)
			break;
	}
	up_write(&mm->mmap_lock);
	return err;
}
