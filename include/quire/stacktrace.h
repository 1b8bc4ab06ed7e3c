#ifndef QUIRE_STACKTRACE_H
#define QUIRE_STACKTRACE_H

#include <quire/types.h>
#include <quire/compiler.h>

struct pt_regs;

/*
 * Print (at KERN_EMERG) "Call Trace:" and one line per frame, symbolized, starting at rip
 * and walking frame pointers from rbp (the kernel is built with frame
 * pointers). Stops at a zero or implausible frame pointer, or at the entry
 * from user mode, printed last as "<user space: RIP ...>"; an entry from
 * kernel mode goes on with the interrupted code.
 */
void show_stack_trace(u64 rip, u64 rbp);
/* The trace of the code regs were saved from: only the user line for user mode. */
void show_regs_stack_trace(const struct pt_regs *regs);
/* The trace of the caller. */
__noinline void dump_stack(void);
/* Fill up to max return addresses starting from rbp, as show_stack_trace walks; returns how many. */
int stack_trace_save(u64 rbp, u64 *out, int max);

#endif
