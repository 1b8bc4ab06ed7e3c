/*
 * NUMA memory policy (Linux's mempolicy): where a task's new user memory
 * comes from. Today: the task policy (set_mempolicy, get_mempolicy), used
 * by every anonymous fault of every folio size; per-VMA policies (mbind)
 * are not implemented yet. Modes, flags and errno values are Linux 6.12's
 * (docs/mm/mempolicy.md).
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

/* A policy; all zero is MPOL_DEFAULT. Kept by value in each task; fork copies it. */
struct mempolicy {
	u16 mode;
	u16 flags;		/* MPOL_F_STATIC_NODES / RELATIVE_NODES / NUMA_BALANCING */
	u64 nodes;		/* the nodes it uses (bit n: node n) */
	u64 user_nodes;		/* as the caller gave them (STATIC/RELATIVE report these) */
	int il_prev;		/* MPOL_F_NODE: the last interleave node handed out */
};

/*
 * A user folio of `order` for the address addr, under the current task's
 * policy: gfp as the caller wants it (with __GFP_THISNODE, only the
 * policy's node is tried). MPOL_BIND never leaves its nodes.
 */
struct folio *mpol_folio_alloc(gfp_t gfp, unsigned int order, unsigned long addr);

/*
 * A node mask from user space (maxnode bits at umask, Linux's counting):
 * Quire's nodes in *nodes, *other set when bits name nodes Quire does not
 * have. 0, -EINVAL (maxnode too large, bits beyond 1024 set), -EFAULT.
 */
int get_nodes(u64 *nodes, bool *other, u64 umask, u64 maxnode);

long sys_set_mempolicy(u64 mode, u64 nmask, u64 maxnode, u64 a3, u64 a4, u64 a5);
long sys_get_mempolicy(u64 policy, u64 nmask, u64 maxnode, u64 addr, u64 flags, u64 a5);

#endif
