/*
 * Futexes (kernel/futex.c, docs/futex.md): the kernel side of user-space
 * locks. A task sleeps on a 32-bit word of user memory while the word
 * holds the value it expects; another wakes it by the word's address.
 * What the rest of the kernel calls: the hash table's set-up, a wake for
 * exit paths (CLONE_CHILD_CLEARTID when threads come), and the walk of the
 * exiting task's robust list.
 */
#ifndef QUIRE_FUTEX_H
#define QUIRE_FUTEX_H

#include <quire/types.h>
#include <quire/uapi/futex.h>

/* Boot: the hash table of waiters. Before the first process starts. */
void futex_init(void);

/*
 * Wake up to nr tasks waiting on uaddr whose bitset shares a bit with
 * bitset (FUTEX_BITSET_MATCH_ANY: any), in the current task's address
 * space; private: keyed by (mm, address) alone, as FUTEX_PRIVATE_FLAG.
 * Returns how many woke, or -EINVAL (misaligned, bitset 0), -EFAULT (a
 * shared key for an address nothing maps). Process context; may sleep.
 */
int futex_wake(u32 *uaddr, bool private, int nr, u32 bitset);

/*
 * do_exit, before the address space goes: every lock on the current
 * task's robust list (set_robust_list) that it still owns gets
 * FUTEX_OWNER_DIED, and one waiter is woken where FUTEX_WAITERS says
 * there are some. A bad list just ends the walk.
 */
void futex_exit_robust_list(void);

#endif
