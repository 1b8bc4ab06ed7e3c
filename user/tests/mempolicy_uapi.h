/*
 * Linux's NUMA memory-policy ABI (include/uapi/linux/mempolicy.h, the
 * values only), for the ring-3 tests and tests/diff programs: musl has no
 * <numaif.h>. The system call numbers are x86-64's.
 */
#ifndef QUIRE_USER_MEMPOLICY_UAPI_H
#define QUIRE_USER_MEMPOLICY_UAPI_H

#include <sys/syscall.h>

enum { MPOL_DEFAULT, MPOL_PREFERRED, MPOL_BIND, MPOL_INTERLEAVE, MPOL_LOCAL,
       MPOL_PREFERRED_MANY, MPOL_WEIGHTED_INTERLEAVE, MPOL_MAX };
/* Mode flags. */
#define MPOL_F_NUMA_BALANCING	(1 << 13)
#define MPOL_F_RELATIVE_NODES	(1 << 14)
#define MPOL_F_STATIC_NODES	(1 << 15)
/* get_mempolicy flags. */
#define MPOL_F_NODE		(1 << 0)
#define MPOL_F_ADDR		(1 << 1)
#define MPOL_F_MEMS_ALLOWED	(1 << 2)
/* mbind flags. */
#define MPOL_MF_STRICT		(1 << 0)
#define MPOL_MF_MOVE		(1 << 1)
#define MPOL_MF_MOVE_ALL	(1 << 2)
#define MPOL_MF_LAZY		(1 << 3)

#ifndef SYS_set_mempolicy_home_node
#define SYS_set_mempolicy_home_node 450
#endif

#endif
