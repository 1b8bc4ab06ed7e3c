/* Compiler attributes and helpers, with Linux's names. */
#ifndef QUIRE_COMPILER_H
#define QUIRE_COMPILER_H

#define __section(s)	__attribute__((section(s)))
#define __used		__attribute__((used))
#define __unused	__attribute__((unused))
#define __aligned(x)	__attribute__((aligned(x)))
#define __packed	__attribute__((packed))
#define __noreturn	__attribute__((noreturn))
#define __noinline	__attribute__((noinline))
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define __weak		__attribute__((weak))

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define barrier()	__asm__ __volatile__("" ::: "memory")
#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#define ALIGN_UP(x, a)	 (((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a) - 1))
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a) - 1)) == 0)

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

#define __stringify_1(x) #x
#define __stringify(x) __stringify_1(x)

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#endif
