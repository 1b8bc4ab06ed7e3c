/* This CPU's struct percpu through the GS base (MSR_GS_BASE). */
#ifndef ASM_PERCPU_H
#define ASM_PERCPU_H

#include <stddef.h>

static inline struct percpu *this_cpu(void)
{
	struct percpu *p;

	__asm__ __volatile__("movq %%gs:0, %0" : "=r"(p));
	return p;
}

/* A pointer-sized field of this CPU's area in one instruction. */
#define this_cpu_read(field)						\
	({								\
		__typeof__(((struct percpu *)0)->field) __v;		\
		_Static_assert(sizeof(__v) == 8, "this_cpu_read: 8-byte fields only"); \
		__asm__ __volatile__("movq %%gs:%c1, %0" : "=r"(__v)	\
				     : "i"(offsetof(struct percpu, field))); \
		__v;							\
	})

/* Add to an int field of this CPU's area in one instruction (safe against preemption). */
#define this_cpu_add_int(field, val)					\
	do {								\
		_Static_assert(sizeof(((struct percpu *)0)->field) == 4, "int fields only"); \
		__asm__ __volatile__("addl %1, %%gs:%c0"		\
				     : : "i"(offsetof(struct percpu, field)), "ri"((int)(val)) \
				     : "memory", "cc");			\
	} while (0)

#endif
