/*
 * Reading one "Name:   N kB" line of an smaps text (smaps_show), for the
 * kernel tests that check what /proc/<pid>/smaps says (procfs_test.c,
 * migrate_pmd_test.c).
 */
#ifndef TESTS_SMAPS_TEXT_H
#define TESTS_SMAPS_TEXT_H

#include <quire/string.h>

/* N of the first "name   N kB" in text, or -1. */
static inline long smaps_kb(const char *text, const char *name)
{
	const char *l = strstr(text, name);
	long v = 0;

	if (!l)
		return -1;
	for (l += strlen(name); *l == ' '; l++)
		;
	if (*l < '0' || *l > '9')
		return -1;
	for (; *l >= '0' && *l <= '9'; l++)
		v = v * 10 + (*l - '0');
	return v;
}

#endif
