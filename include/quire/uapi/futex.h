/*
 * futex(2) as user space sees it on Linux x86-64: the operation numbers
 * and flags, the FUTEX_WAKE_OP encoding, the bits of a robust lock word,
 * and struct robust_list_head (set_robust_list, get_robust_list).
 * docs/futex.md says what each does in Quire.
 */
#ifndef QUIRE_UAPI_FUTEX_H
#define QUIRE_UAPI_FUTEX_H

#include <quire/types.h>

/* The operation: the low bits of futex(2)'s op argument. */
#define FUTEX_WAIT		0
#define FUTEX_WAKE		1
#define FUTEX_FD		2	/* removed from Linux long ago: -ENOSYS */
#define FUTEX_REQUEUE		3
#define FUTEX_CMP_REQUEUE	4
#define FUTEX_WAKE_OP		5
#define FUTEX_LOCK_PI		6
#define FUTEX_UNLOCK_PI		7
#define FUTEX_TRYLOCK_PI	8
#define FUTEX_WAIT_BITSET	9
#define FUTEX_WAKE_BITSET	10
#define FUTEX_WAIT_REQUEUE_PI	11
#define FUTEX_CMP_REQUEUE_PI	12
#define FUTEX_LOCK_PI2		13

/* Flags or'ed into op. */
#define FUTEX_PRIVATE_FLAG	128	/* the word is not shared with another address space */
#define FUTEX_CLOCK_REALTIME	256	/* WAIT_BITSET's deadline is on CLOCK_REALTIME */
#define FUTEX_CMD_MASK		(~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))

/* A waiter's or waker's bitset that matches every other. */
#define FUTEX_BITSET_MATCH_ANY	0xffffffffu

/*
 * FUTEX_WAKE_OP's val3: op (bits 28-30, bit 31 = the argument is a shift
 * count), cmp (bits 24-27), oparg (bits 12-23), cmparg (bits 0-11), both
 * signed 12-bit numbers.
 */
#define FUTEX_OP_SET		0	/* word = oparg */
#define FUTEX_OP_ADD		1	/* word += oparg */
#define FUTEX_OP_OR		2	/* word |= oparg */
#define FUTEX_OP_ANDN		3	/* word &= ~oparg */
#define FUTEX_OP_XOR		4	/* word ^= oparg */
#define FUTEX_OP_OPARG_SHIFT	8	/* oparg is 1 << oparg */

#define FUTEX_OP_CMP_EQ		0	/* wake on uaddr2 if old == cmparg */
#define FUTEX_OP_CMP_NE		1
#define FUTEX_OP_CMP_LT		2
#define FUTEX_OP_CMP_LE		3
#define FUTEX_OP_CMP_GT		4
#define FUTEX_OP_CMP_GE		5

#define FUTEX_OP(op, oparg, cmp, cmparg)				\
	((((op) & 0xf) << 28) | (((cmp) & 0xf) << 24) |		\
	 (((oparg) & 0xfff) << 12) | ((cmparg) & 0xfff))

/* A robust lock word: the owner's tid and two flags. */
#define FUTEX_WAITERS		0x80000000u
#define FUTEX_OWNER_DIED	0x40000000u
#define FUTEX_TID_MASK		0x3fffffffu

/* The most entries of a robust list the kernel walks at exit. */
#define ROBUST_LIST_LIMIT	2048

/*
 * The head of a thread's list of held robust locks (user memory). Each
 * entry is a struct robust_list inside the user's lock object; the lock
 * word is at entry + futex_offset. Bit 0 of a pointer marks a PI lock.
 */
struct robust_list_head {
	u64 next;		/* struct robust_list *: the first entry, or &head */
	s64 futex_offset;	/* from an entry to its lock word */
	u64 list_op_pending;	/* the entry being locked or unlocked, or 0 */
};

_Static_assert(sizeof(struct robust_list_head) == 24, "Linux's x86-64 struct robust_list_head");

#endif
