/*
 * /proc/cpuinfo's block for one CPU, made by the architecture
 * (arch/x86_64/kernel/cpuinfo.c; arch/host: the processor line only):
 * Linux's "name\t: value" lines and the blank line that ends a block.
 * Returns its length (scnprintf's).
 */
#ifndef QUIRE_CPUINFO_H
#define QUIRE_CPUINFO_H

#include <quire/types.h>

int arch_cpuinfo_show(int cpu, char *buf, size_t size);

#endif
