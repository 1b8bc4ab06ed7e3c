/*
 * Atomic integers with Linux's names, on the compiler's __atomic builtins
 * (sequentially consistent where Linux's are fully ordered). The same code
 * serves the kernel and the host build.
 */
#ifndef QUIRE_ATOMIC_H
#define QUIRE_ATOMIC_H

#include <quire/types.h>

typedef struct {
	int counter;
} atomic_t;

typedef struct {
	long counter;
} atomic_long_t;

#define ATOMIC_INIT(v) { (v) }

static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic_set(atomic_t *v, int i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline int atomic_add_return(int i, atomic_t *v)
{
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline int atomic_sub_return(int i, atomic_t *v)
{
	return __atomic_sub_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline void atomic_add(int i, atomic_t *v) { (void)atomic_add_return(i, v); }
static inline void atomic_sub(int i, atomic_t *v) { (void)atomic_sub_return(i, v); }
static inline void atomic_inc(atomic_t *v) { atomic_add(1, v); }
static inline void atomic_dec(atomic_t *v) { atomic_sub(1, v); }
static inline int atomic_inc_return(atomic_t *v) { return atomic_add_return(1, v); }
static inline int atomic_dec_return(atomic_t *v) { return atomic_sub_return(1, v); }
static inline bool atomic_dec_and_test(atomic_t *v) { return atomic_dec_return(v) == 0; }
static inline bool atomic_inc_and_test(atomic_t *v) { return atomic_inc_return(v) == 0; }

/* Add i unless the value is u; returns whether it added. */
static inline bool atomic_add_unless(atomic_t *v, int i, int u)
{
	int c = atomic_read(v);

	do {
		if (c == u)
			return false;
	} while (!__atomic_compare_exchange_n(&v->counter, &c, c + i, false,
					      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	return true;
}

static inline long atomic_long_read(const atomic_long_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic_long_set(atomic_long_t *v, long i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline long atomic_long_add_return(long i, atomic_long_t *v)
{
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline void atomic_long_add(long i, atomic_long_t *v) { (void)atomic_long_add_return(i, v); }
static inline void atomic_long_sub(long i, atomic_long_t *v) { (void)atomic_long_add_return(-i, v); }
static inline void atomic_long_inc(atomic_long_t *v) { atomic_long_add(1, v); }
static inline void atomic_long_dec(atomic_long_t *v) { atomic_long_add(-1, v); }

#endif
