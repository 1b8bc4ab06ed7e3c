/* String and memory functions (lib/string.c). */
#ifndef QUIRE_STRING_H
#define QUIRE_STRING_H

#include <quire/types.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
void *memchr(const void *s, int c, size_t n);
char *strrchr(const char *s, int c);
/*
 * Copy at most size-1 bytes and always terminate (when size > 0).
 * Returns the length copied, or -E2BIG when src did not fit.
 */
long strscpy(char *dst, const char *src, size_t size);
char *strstr(const char *haystack, const char *needle);

/*
 * Parse an unsigned number: decimal, or hex with 0x, or octal with a
 * leading 0 when base is 0. The whole string must be consumed.
 * Returns 0, -EINVAL (not a number) or -ERANGE (too large).
 */
int kstrtoull(const char *s, unsigned int base, unsigned long long *res);
int kstrtoll(const char *s, unsigned int base, long long *res);
/* Parse a boolean: 1/0, y/n, yes/no, on/off, true/false. */
int kstrtobool(const char *s, bool *res);

#endif
