/*
 * The exception table: for an instruction that may fault on purpose, where
 * to resume and which faults it may take. A user copy takes page faults
 * (and #GP, for a non-canonical pointer) on user memory; a machine-check-
 * safe copy takes machine checks on poisoned memory. Anything else at such
 * an instruction is a kernel bug and is reported as one.
 *
 * Used from C and from assembly (EX_ENTRY in a .S file).
 */
#ifndef QUIRE_EXTABLE_H
#define QUIRE_EXTABLE_H

#define EX_TYPE_UACCESS		1	/* #PF and #GP on a user pointer */
#define EX_TYPE_MCE_SAFE	2	/* #MC on the memory read */
#define EX_TYPE_UACCESS_MCE_SAFE (EX_TYPE_UACCESS | EX_TYPE_MCE_SAFE)

#ifdef __ASSEMBLER__
/* EX_ENTRY insn_label, fixup_label, type */
.macro EX_ENTRY insn, fixup, type
	.pushsection __ex_table, "a"
	.balign 8
	.quad \insn, \fixup, \type
	.popsection
.endm
#else
#include <quire/types.h>

struct exception_table_entry {
	unsigned long insn;	/* the instruction that may fault */
	unsigned long fixup;	/* where to resume */
	unsigned long type;	/* EX_TYPE_*: which faults it may take */
};

/* The entry for a faulting rip, or NULL. */
const struct exception_table_entry *search_exception_tables(unsigned long rip);
#endif

#endif
