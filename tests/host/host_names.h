/*
 * Force-included first in every host build (HOST_CFLAGS: -include).
 *
 * The kernel's library has the C library's names (memcpy, strlen,
 * snprintf, ...). A host test binary links both, and ASan intercepts the
 * libc ones, so each kernel name is renamed here to quire_<name>: the
 * kernel sources define quire_memcpy, the tests call it, and libc keeps its
 * own memcpy.
 *
 * The C library headers come first, before the #defines, so that their
 * declarations keep the real names; a later #include of one of them is a
 * no-op (include guards). A host file that needs another libc header which
 * declares one of these names must include it here, not after.
 *
 * The renaming also keeps gcc's builtins away: quire_strlen is not a
 * builtin, so gcc never folds a call to it or swaps in libc's. Tests that
 * want the C library's version as a reference call __builtin_<name>
 * (__builtin_strcmp, __builtin_vsnprintf), which is libc's.
 */
#ifndef QUIRE_HOST_NAMES_H
#define QUIRE_HOST_NAMES_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* include/quire/string.h */
#define memcpy		quire_memcpy
#define memmove		quire_memmove
#define memset		quire_memset
#define memcmp		quire_memcmp
#define strlen		quire_strlen
#define strnlen		quire_strnlen
#define strcmp		quire_strcmp
#define strncmp		quire_strncmp
#define strchr		quire_strchr
#define memchr		quire_memchr
#define strrchr		quire_strrchr
#define strscpy		quire_strscpy
#define strstr		quire_strstr
#define kstrtoull	quire_kstrtoull
#define kstrtoll	quire_kstrtoll
#define kstrtobool	quire_kstrtobool

/* include/quire/fs.h: types the C library also defines, differently */
#define dev_t		quire_dev_t
#define loff_t		quire_loff_t

/* include/quire/kernel.h */
#define vsnprintf	quire_vsnprintf
#define snprintf	quire_snprintf
#define scnprintf	quire_scnprintf

#endif
