/*
 * /proc/cpuinfo (include/quire/cpuinfo.h): for each CPU the lines of
 * Linux's x86 show_cpuinfo that Quire can fill from CPUID and what it
 * knows of the CPU: processor, vendor_id, cpu family, model, model name,
 * stepping, cpu MHz (the TSC's), physical id (Quire does not read the
 * package topology: the CPU's node, which numa3's sockets match), core id
 * (the logical CPU), apicid, fpu,
 * cpuid level, wp, flags (the CPUID leaf 1 EDX/ECX bits Linux names, in
 * its order), bogomips, clflush size, cache_alignment, address sizes.
 * Left out: microcode, cache size, siblings/cpu cores, bugs, power
 * management, and the flags of other leaves.
 */
#include <quire/cpuinfo.h>
#include <quire/percpu.h>
#include <quire/kernel.h>
#include <quire/string.h>
#include <quire/time.h>
#include <asm/cpu.h>

/* Leaf 1 EDX, bits 0-31, then ECX, bits 0-31: Linux's names ("" unnamed). */
static const char *const edx_flags[32] = {
	"fpu", "vme", "de", "pse", "tsc", "msr", "pae", "mce", "cx8", "apic", "", "sep",
	"mtrr", "pge", "mca", "cmov", "pat", "pse36", "pn", "clflush", "", "dts", "acpi",
	"mmx", "fxsr", "sse", "sse2", "ss", "ht", "tm", "ia64", "pbe",
};
static const char *const ecx_flags[32] = {
	"pni", "pclmulqdq", "dtes64", "monitor", "ds_cpl", "vmx", "smx", "est", "tm2",
	"ssse3", "cid", "sdbg", "fma", "cx16", "xtpr", "pdcm", "", "pcid", "dca", "sse4_1",
	"sse4_2", "x2apic", "movbe", "popcnt", "tsc_deadline_timer", "aes", "xsave", "",
	"avx", "f16c", "rdrand", "hypervisor",
};

int arch_cpuinfo_show(int cpu, char *buf, size_t size)
{
	u32 a, b, c, d, max, fam, model, ext_a = 0, e1a, e1b, e1c, e1d;
	u32 v[3], brand[13] = { 0 };
	u64 khz = tsc_khz();
	int len;

	cpuid(0, 0, &max, &v[0], &v[2], &v[1]);
	cpuid(1, 0, &a, &b, &c, &d);
	fam = (a >> 8) & 0xf;
	model = (a >> 4) & 0xf;
	if (fam == 0xf)
		fam += (a >> 20) & 0xff;
	if (fam >= 6)
		model += ((a >> 16) & 0xf) << 4;
	cpuid(0x80000000, 0, &e1a, &e1b, &e1c, &e1d);
	if (e1a >= 0x80000004)
		for (u32 i = 0; i < 3; i++)
			cpuid(0x80000002 + i, 0, &brand[4 * i], &brand[4 * i + 1],
			      &brand[4 * i + 2], &brand[4 * i + 3]);
	if (e1a >= 0x80000008)
		cpuid(0x80000008, 0, &ext_a, &e1b, &e1c, &e1d);
	len = scnprintf(buf, size,
			"processor\t: %d\nvendor_id\t: %.12s\ncpu family\t: %u\nmodel\t\t: %u\n"
			"model name\t: %s\nstepping\t: %u\ncpu MHz\t\t: %llu.%03llu\n"
			"physical id\t: %d\ncore id\t\t: %d\napicid\t\t: %u\ninitial apicid\t: %u\n"
			"fpu\t\t: %s\nfpu_exception\t: %s\ncpuid level\t: %u\nwp\t\t: yes\nflags\t\t:",
			cpu, (const char *)v, fam, model, brand[0] ? (const char *)brand : "unknown",
			a & 0xf, (unsigned long long)(khz / 1000), (unsigned long long)(khz % 1000),
			per_cpu_ptr(cpu)->node, cpu, per_cpu_ptr(cpu)->apic_id,
			per_cpu_ptr(cpu)->apic_id, (d & 1) ? "yes" : "no", (d & 1) ? "yes" : "no", max);
	for (int i = 0; i < 32; i++)
		if ((d & (1u << i)) && edx_flags[i][0])
			len += scnprintf(buf + len, size - len, " %s", edx_flags[i]);
	for (int i = 0; i < 32; i++)
		if ((c & (1u << i)) && ecx_flags[i][0])
			len += scnprintf(buf + len, size - len, " %s", ecx_flags[i]);
	len += scnprintf(buf + len, size - len,
			 "\nbogomips\t: %llu.%02llu\nclflush size\t: %u\ncache_alignment\t: %u\n"
			 "address sizes\t: %u bits physical, %u bits virtual\n\n",
			 (unsigned long long)(khz * 2 / 1000), (unsigned long long)(khz * 2 / 10 % 100),
			 ((b >> 8) & 0xff) * 8, ((b >> 8) & 0xff) * 8, ext_a & 0xff, (ext_a >> 8) & 0xff);
	return len;
}
