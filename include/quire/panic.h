/* panic() and BUG_ON(): a kernel bug stops the machine loudly. */
#ifndef QUIRE_PANIC_H
#define QUIRE_PANIC_H

#include <quire/compiler.h>

/*
 * Print why (the message), where (file:line and function) and a backtrace,
 * stop everything, and power off with QUIRE_EXIT_PANIC (never a hang).
 */
__noreturn void panic_at(const char *file, int line, const char *func,
			 const char *fmt, ...) __printf(4, 5);
#define panic(fmt, ...) panic_at(__FILE__, __LINE__, __func__, fmt, ##__VA_ARGS__)

#define BUG() panic("BUG")
#define BUG_ON(cond)							\
	do {								\
		if (unlikely(cond))					\
			panic("BUG_ON(%s)", #cond);			\
	} while (0)

/* True once a panic has started (so nested failures do not recurse). */
extern int panic_in_progress;

#endif
