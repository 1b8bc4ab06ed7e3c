/*
 * NUMA memory policy (Linux's mempolicy): where a task's new user memory
 * comes from. The task policy (set_mempolicy) and per-VMA policies (mbind,
 * set_mempolicy_home_node), read back by get_mempolicy and
 * /proc/self/numa_maps; every anonymous fault of every folio size obeys
 * the VMA's policy, else the task's. Modes, flags and errno values are
 * Linux 6.12's (docs/mm/mempolicy.md).
 */
#ifndef QUIRE_MEMPOLICY_H
#define QUIRE_MEMPOLICY_H

#include <quire/types.h>
#include <quire/gfp.h>

/* Modes (the uapi values). */
enum {
	MPOL_DEFAULT,
	MPOL_PREFERRED,
	MPOL_BIND,
	MPOL_INTERLEAVE,
	MPOL_LOCAL,
	MPOL_PREFERRED_MANY,
	MPOL_WEIGHTED_INTERLEAVE,
	MPOL_MAX,
};

/* Mode flags, or-ed into the mode. */
#define MPOL_F_NUMA_BALANCING	(1 << 13)
#define MPOL_F_RELATIVE_NODES	(1 << 14)
#define MPOL_F_STATIC_NODES	(1 << 15)
#define MPOL_MODE_FLAGS		(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES | MPOL_F_NUMA_BALANCING)

/* get_mempolicy flags. */
#define MPOL_F_NODE		(1 << 0)
#define MPOL_F_ADDR		(1 << 1)
#define MPOL_F_MEMS_ALLOWED	(1 << 2)

/* mbind flags. */
#define MPOL_MF_STRICT		(1 << 0)	/* pages already there must follow the policy */
#define MPOL_MF_MOVE		(1 << 1)	/* move the pages mapped only here */
#define MPOL_MF_MOVE_ALL	(1 << 2)	/* move every page (CAP_SYS_NICE: everyone here) */
#define MPOL_MF_VALID		(MPOL_MF_STRICT | MPOL_MF_MOVE | MPOL_MF_MOVE_ALL)

/*
 * A policy; all zero is MPOL_DEFAULT. Kept by value in each task and in
 * each VMA (vm_policy: MPOL_DEFAULT there means "the task's"); fork and
 * VMA splits copy it.
 */
struct mempolicy {
	u16 mode;
	u16 flags;		/* MPOL_F_STATIC_NODES / RELATIVE_NODES / NUMA_BALANCING */
	s16 home_node;		/* set_mempolicy_home_node, NUMA_NO_NODE when none */
	u64 nodes;		/* the nodes it uses (bit n: node n) */
	u64 user_nodes;		/* as the caller gave them (STATIC/RELATIVE report these) */
	int il_prev;		/* MPOL_F_NODE: the last interleave node handed out */
};

/*
 * Linux's mpol_equal: the same placement (il_prev, a cursor, aside). Two
 * default policies are equal whatever else they hold. VMAs merge only
 * when their policies are equal.
 */
static inline bool mpol_equal(const struct mempolicy *a, const struct mempolicy *b)
{
	if (a->mode == MPOL_DEFAULT || b->mode == MPOL_DEFAULT)
		return a->mode == b->mode;
	return a->mode == b->mode && a->flags == b->flags && a->home_node == b->home_node &&
	       a->nodes == b->nodes &&
	       (!(a->flags & (MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES)) ||
		a->user_nodes == b->user_nodes);
}

struct vm_area_struct;

/*
 * A user folio of `order` for the address addr of vma, under vma's policy
 * when it has one, else the current task's: gfp as the caller wants it
 * (with __GFP_THISNODE, only the policy's node is tried). MPOL_BIND never
 * leaves its nodes.
 */
struct folio *mpol_folio_alloc(gfp_t gfp, unsigned int order, struct vm_area_struct *vma,
			       unsigned long addr);
/* The policy that places vma's pages: its own, else the current task's. */
const struct mempolicy *vma_effective_policy(const struct vm_area_struct *vma);
/* Linux's mpol_to_str ("bind=static:0-1", "default", ...) into buf; the length. */
int mpol_to_str(char *buf, size_t size, const struct mempolicy *pol);
/* /sys/kernel/mm/mempolicy/weighted_interleave/nodeN: a node's weight (1..255; 0 = the default, 1). */
int mpol_il_weight_show(int nid, char *buf, size_t size);
int mpol_il_weight_store(int nid, const char *buf, size_t len);

/*
 * A node mask from user space (maxnode bits at umask, Linux's counting):
 * Quire's nodes in *nodes, *other set when bits name nodes Quire does not
 * have. 0, -EINVAL (maxnode too large, bits beyond 1024 set), -EFAULT.
 */
int get_nodes(u64 *nodes, bool *other, u64 umask, u64 maxnode);

long sys_set_mempolicy(u64 mode, u64 nmask, u64 maxnode, u64 a3, u64 a4, u64 a5);
long sys_get_mempolicy(u64 policy, u64 nmask, u64 maxnode, u64 addr, u64 flags, u64 a5);
long sys_mbind(u64 start, u64 len, u64 mode, u64 nmask, u64 maxnode, u64 flags);
long sys_set_mempolicy_home_node(u64 start, u64 len, u64 home_node, u64 flags, u64 a4, u64 a5);

#endif
