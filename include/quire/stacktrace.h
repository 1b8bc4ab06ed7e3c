#ifndef QUIRE_STACKTRACE_H
#define QUIRE_STACKTRACE_H

#include <quire/types.h>
#include <quire/compiler.h>

/*
 * Print (at KERN_EMERG) "Call Trace:" and one line per frame, symbolized, starting at rip
 * and walking frame pointers from rbp (the kernel is built with frame
 * pointers). Stops at a zero or implausible frame pointer.
 */
void show_stack_trace(u64 rip, u64 rbp);
/* The trace of the caller. */
__noinline void dump_stack(void);
/* Fill up to max return addresses starting from rbp; returns how many. */
int stack_trace_save(u64 rbp, u64 *out, int max);

#endif
