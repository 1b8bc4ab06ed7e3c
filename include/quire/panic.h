/* panic() and BUG_ON(): a kernel bug stops the machine loudly. */
#ifndef QUIRE_PANIC_H
#define QUIRE_PANIC_H

#include <quire/compiler.h>

/*
 * Print why (the message), where (file:line and function) and a backtrace,
 * stop everything, and power off with QUIRE_EXIT_PANIC (never a hang).
 *
 * The message starts with the name of the function that found the broken
 * invariant, then ": " (xv6's panic("walk: ...")), so the first line of a
 * crash report says where to look:
 *	panic("folio_add_pmd: PMD mapping of an order-%u folio", order);
 * The function is the one that calls panic(), a static helper included;
 * the backtrace shows who called it. mm/ follows the rule throughout;
 * new code elsewhere follows it too. BUG() and BUG_ON() follow it by
 * themselves.
 */
__noreturn void panic_at(const char *file, int line, const char *func,
			 const char *fmt, ...) __printf(4, 5);
#define panic(fmt, ...) panic_at(__FILE__, __LINE__, __func__, fmt, ##__VA_ARGS__)

#define BUG() panic("%s: BUG", __func__)
#define BUG_ON(cond)							\
	do {								\
		if (unlikely(cond))					\
			panic("%s: BUG_ON(%s)", __func__, #cond);	\
	} while (0)

/* True once a panic has started (so nested failures do not recurse). */
extern int panic_in_progress;

#endif
