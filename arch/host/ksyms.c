/*
 * The kernel symbol table on the host: there is none (host code is named by
 * the host's own tools, ASan and gdb), so an address prints bare, as the
 * kernel prints an address outside its text.
 */
#include <quire/ksyms.h>
#include <quire/kernel.h>

const char *ksym_lookup(u64 addr, u64 *offset, u64 *size)
{
	return NULL;
}

int ksym_format(char *buf, size_t len, u64 addr)
{
	return scnprintf(buf, len, "0x%llx", (unsigned long long)addr);
}
