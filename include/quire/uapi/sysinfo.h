/*
 * struct sysinfo, as Linux's sysinfo(2) fills it on x86-64 (112 bytes):
 * sizes in units of mem_unit bytes, uptime in seconds, loads scaled by
 * 1 << SI_LOAD_SHIFT.
 */
#ifndef QUIRE_UAPI_SYSINFO_H
#define QUIRE_UAPI_SYSINFO_H

#include <quire/types.h>

#define SI_LOAD_SHIFT	16

struct sysinfo {
	long uptime;
	unsigned long loads[3];
	unsigned long totalram;
	unsigned long freeram;
	unsigned long sharedram;
	unsigned long bufferram;
	unsigned long totalswap;
	unsigned long freeswap;
	u16 procs;
	u16 pad;
	unsigned long totalhigh;
	unsigned long freehigh;
	u32 mem_unit;
	char _f[20 - 2 * sizeof(unsigned long) - sizeof(u32)];
};

#endif
