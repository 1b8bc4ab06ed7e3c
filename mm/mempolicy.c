/*
 * NUMA memory policy (include/quire/mempolicy.h, docs/mm/mempolicy.md):
 * set_mempolicy and get_mempolicy with Linux 6.12's modes, flags and errno
 * values, and the allocation of user folios under the current task's
 * policy. Node masks from user space follow Linux's rules for a kernel
 * built with 1024 possible nodes (Debian's): bits up to 1023 are node
 * numbers (those that are not nodes with memory drop out), bits beyond
 * must be zero.
 */
#include <quire/mempolicy.h>
#include <quire/mm.h>
#include <quire/mmap.h>
#include <quire/numa.h>
#include <quire/sched.h>
#include <quire/uaccess.h>
#include <quire/errno.h>
#include <quire/pte.h>

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

/* Try the nodes of mask nearest to the local node first, each strictly. */
static struct folio *alloc_in_nodes(gfp_t gfp, unsigned int order, u64 mask)
{
	const struct numa_node *local = &numa_nodes[numa_mem_id_of(numa_node_id())];
	struct folio *folio = NULL;

	for (int i = 0; i < local->nr_fallback && !folio; i++)
		if (mask & (1ULL << local->fallback[i]))
			folio = folio_alloc(gfp | __GFP_THISNODE | __GFP_NOWARN, order,
					    local->fallback[i]);
	return folio;
}

struct folio *mpol_folio_alloc(gfp_t gfp, unsigned int order, unsigned long addr)
{
	const struct mempolicy *pol = current_policy();
	int nid = numa_mem_id_of(numa_node_id());
	struct folio *folio;

	switch (pol->mode) {
	case MPOL_BIND:
		return alloc_in_nodes(gfp, order, pol->nodes);
	case MPOL_PREFERRED_MANY:
		folio = alloc_in_nodes(gfp, order, pol->nodes);
		if (folio || (gfp & __GFP_THISNODE))
			return folio;
		break;
	case MPOL_PREFERRED:
		nid = __builtin_ctzll(pol->nodes);
		break;
	case MPOL_INTERLEAVE:
	case MPOL_WEIGHTED_INTERLEAVE:	/* every weight 1: no sysfs weights yet */
		/* Linux's index for an anonymous VMA: the folio's number in the address space. */
		nid = nth_node(pol->nodes, addr >> (PAGE_SHIFT + order));
		break;
	}
	return folio_alloc(gfp, order, nid);
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
				   .il_prev = MAX_NUMNODES - 1 };
	if (mode == MPOL_DEFAULT)
		return empty ? 0 : -EINVAL;
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

long sys_set_mempolicy(u64 mode_arg, u64 nmask, u64 maxnode, u64 a3, u64 a4, u64 a5)
{
	unsigned int mode, flags;
	struct mempolicy pol;
	bool other;
	u64 nodes;
	int err = split_mode(mode_arg, &mode, &flags);

	if (!err)
		err = get_nodes(&nodes, &other, nmask, maxnode);
	if (!err)
		err = make_policy(&pol, mode, flags, nodes, other);
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
	struct mempolicy *task = current_policy();
	const struct mempolicy *pol = task;
	struct mm_struct *mm = current->mm;

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
		up_read(&mm->mmap_lock);
		if (!mapped)
			return -EFAULT;
		pol = &default_policy;		/* no VMA policies yet: the VMA's is the default */
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
