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
#ifndef __SANITIZE_THREAD__
#define READ_ONCE(x)	(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#else
/*
 * The host's ThreadSanitizer build (make test-host, the *-tsan jobs): a
 * marked access is what the kernel's race rules (and KCSAN) take it for,
 * an access that may race by design, so TSan sees an atomic one (it
 * ignores volatile). A READ_ONCE of a pointer or a page-table entry is
 * followed by accesses through it, which every CPU orders after it (an
 * address dependency) when the writer published with a release store
 * (a table installed, a VMA's first anon_vma); TSan knows acquire, not
 * dependencies, so here READ_ONCE is an acquire. It pairs only with
 * release stores, so it hides no race between plain accesses.
 */
#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#endif

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
