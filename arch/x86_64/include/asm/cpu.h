/* Control registers, MSRs, the TSC and other single instructions. */
#ifndef ASM_CPU_H
#define ASM_CPU_H

#include <quire/types.h>

#define X86_CR0_WP	(1UL << 16)
#define X86_CR4_PAE	(1UL << 5)
#define X86_CR4_MCE	(1UL << 6)
#define X86_CR4_PGE	(1UL << 7)

#define MSR_EFER	0xc0000080
#define MSR_FS_BASE	0xc0000100
#define MSR_GS_BASE	0xc0000101
#define MSR_KERNEL_GS_BASE 0xc0000102
#define EFER_SCE	(1UL << 0)
#define EFER_LME	(1UL << 8)
#define EFER_NXE	(1UL << 11)

#define X86_EFLAGS_IF	(1UL << 9)

#define DEFINE_READ_CR(n)						\
	static inline u64 read_cr##n(void)				\
	{								\
		u64 v;							\
		__asm__ __volatile__("mov %%cr" #n ", %0" : "=r"(v));	\
		return v;						\
	}
DEFINE_READ_CR(0)
DEFINE_READ_CR(2)
DEFINE_READ_CR(3)
DEFINE_READ_CR(4)
#undef DEFINE_READ_CR

static inline void write_cr3(u64 v)
{
	__asm__ __volatile__("mov %0, %%cr3" : : "r"(v) : "memory");
}

static inline void write_cr4(u64 v)
{
	__asm__ __volatile__("mov %0, %%cr4" : : "r"(v) : "memory");
}

static inline u64 rdmsr(u32 msr)
{
	u32 lo, hi;

	__asm__ __volatile__("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((u64)hi << 32) | lo;
}

static inline void wrmsr(u32 msr, u64 v)
{
	__asm__ __volatile__("wrmsr" : : "c"(msr), "a"((u32)v), "d"((u32)(v >> 32)));
}

static inline u64 rdtsc(void)
{
	u32 lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((u64)hi << 32) | lo;
}

static inline void cpuid(u32 leaf, u32 sub, u32 *a, u32 *b, u32 *c, u32 *d)
{
	__asm__ __volatile__("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d)
			     : "a"(leaf), "c"(sub));
}

static inline u64 read_flags(void)
{
	u64 f;

	__asm__ __volatile__("pushfq; popq %0" : "=r"(f));
	return f;
}

static inline void local_irq_disable(void)
{
	__asm__ __volatile__("cli" ::: "memory");
}

static inline void local_irq_enable(void)
{
	__asm__ __volatile__("sti" ::: "memory");
}

static inline void cpu_relax(void)
{
	__asm__ __volatile__("pause" ::: "memory");
}

static inline void halt(void)
{
	__asm__ __volatile__("hlt" ::: "memory");
}

#endif
