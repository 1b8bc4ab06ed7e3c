/*
 * Lookups in the link-time symbol table. The table is sorted by address;
 * each function extends to the next symbol (or the end of .text).
 */
#include <quire/ksyms.h>
#include <quire/kernel.h>
#include <quire/string.h>

/* Emitted by scripts/gen-ksyms.sh into the .ksyms section. */
extern const u64 ksyms_count;
extern const u64 ksyms_addrs[];
extern const u32 ksyms_name_offsets[];
extern const char ksyms_names[];
extern const char _etext[];

u64 ksym_count(void)
{
	return ksyms_count;
}

const char *ksym_lookup(u64 addr, u64 *offset, u64 *size)
{
	u64 lo = 0, hi = ksyms_count, end;

	if (ksyms_count == 0 || addr < ksyms_addrs[0] || addr >= (u64)(uintptr_t)_etext)
		return NULL;
	/* Find the last symbol whose address is <= addr. */
	while (hi - lo > 1) {
		u64 mid = lo + (hi - lo) / 2;

		if (ksyms_addrs[mid] <= addr)
			lo = mid;
		else
			hi = mid;
	}
	end = lo + 1 < ksyms_count ? ksyms_addrs[lo + 1] : (u64)(uintptr_t)_etext;
	if (offset)
		*offset = addr - ksyms_addrs[lo];
	if (size)
		*size = end - ksyms_addrs[lo];
	return &ksyms_names[ksyms_name_offsets[lo]];
}

int ksym_format(char *buf, size_t len, u64 addr)
{
	u64 off, size;
	const char *name = ksym_lookup(addr, &off, &size);

	if (!name)
		return scnprintf(buf, len, "0x%llx", (unsigned long long)addr);
	return scnprintf(buf, len, "%s+0x%llx/0x%llx", name,
			 (unsigned long long)off, (unsigned long long)size);
}

u64 ksym_address(const char *name)
{
	for (u64 i = 0; i < ksyms_count; i++)
		if (!strcmp(&ksyms_names[ksyms_name_offsets[i]], name))
			return ksyms_addrs[i];
	return 0;
}
