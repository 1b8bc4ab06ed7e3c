/*
 * The kernel's symbol table: every function's address and name, generated at
 * link time (scripts/gen-ksyms.sh, second link pass) so that backtraces and
 * exception reports can name code.
 */
#ifndef QUIRE_KSYMS_H
#define QUIRE_KSYMS_H

#include <quire/types.h>

/*
 * The function containing addr: its name, and the offset of addr in it and
 * the function's size. NULL when addr is not in kernel text.
 */
const char *ksym_lookup(u64 addr, u64 *offset, u64 *size);
/* "name+0x12/0x80", or the bare address when unknown. Returns the length. */
int ksym_format(char *buf, size_t len, u64 addr);
/* The address of a function by name, or 0. */
u64 ksym_address(const char *name);
/* How many symbols the table holds (0 means it is missing: a build bug). */
u64 ksym_count(void);

#endif
