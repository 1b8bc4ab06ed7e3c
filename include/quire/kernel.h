/* Formatting helpers (lib/vsprintf.c). */
#ifndef QUIRE_KERNEL_H
#define QUIRE_KERNEL_H

#include <stdarg.h>
#include <quire/types.h>
#include <quire/compiler.h>

/*
 * Kernel vsnprintf: %d %i %u %x %X %o %c %s %p %%, flags '-' '0' '+' ' ' '#',
 * width and precision (also '*'), length modifiers hh h l ll z t j.
 * Returns the length the full output would have, like C's vsnprintf.
 */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
/* Like snprintf, but returns the number of characters actually written. */
int scnprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
/* The set bits of mask as Linux's "%*pbl" prints them ("0-2,5"), no newline; the length. */
int scnprint_id_list(char *buf, size_t size, u64 mask);

#endif
