/*
 * futex(2) for the ring-3 programs that test it (user/tests/futex_ktap.c,
 * tests/diff/futex.c): Linux's numbers (uapi/linux/futex.h: musl ships no
 * kernel headers), the raw call, and the helpers both use.
 *
 * A waker must not act before its waiters sleep. count_waiters() learns
 * how many sleep on a word without waking them: FUTEX_REQUEUE of the word
 * onto itself (wake 0, requeue all) returns how many it moved, and moving
 * a waiter to its own word changes nothing.
 */
#ifndef QUIRE_USER_FUTEX_H
#define QUIRE_USER_FUTEX_H

#include <limits.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

/* Linux's uapi/linux/futex.h (musl has no kernel headers). */
#define FUTEX_WAIT		0
#define FUTEX_WAKE		1
#define FUTEX_FD		2
#define FUTEX_REQUEUE		3
#define FUTEX_CMP_REQUEUE	4
#define FUTEX_WAKE_OP		5
#define FUTEX_LOCK_PI		6
#define FUTEX_UNLOCK_PI		7
#define FUTEX_TRYLOCK_PI	8
#define FUTEX_WAIT_BITSET	9
#define FUTEX_WAKE_BITSET	10
#define FUTEX_WAIT_REQUEUE_PI	11
#define FUTEX_CMP_REQUEUE_PI	12
#define FUTEX_LOCK_PI2		13
#define FUTEX_PRIVATE_FLAG	128
#define FUTEX_CLOCK_REALTIME	256
#define FUTEX_BITSET_MATCH_ANY	0xffffffffu
#define FUTEX_OP_SET		0
#define FUTEX_OP_ADD		1
#define FUTEX_OP_OR		2
#define FUTEX_OP_ANDN		3
#define FUTEX_OP_XOR		4
#define FUTEX_OP_OPARG_SHIFT	8
#define FUTEX_OP_CMP_EQ		0
#define FUTEX_OP_CMP_NE		1
#define FUTEX_OP_CMP_LT		2
#define FUTEX_OP_CMP_LE		3
#define FUTEX_OP_CMP_GT		4
#define FUTEX_OP_CMP_GE		5
#define FUTEX_OP(op, oparg, cmp, cmparg)				\
	((((op) & 0xf) << 28) | (((cmp) & 0xf) << 24) |		\
	 (((oparg) & 0xfff) << 12) | ((cmparg) & 0xfff))
#define FUTEX_WAITERS		0x80000000u
#define FUTEX_OWNER_DIED	0x40000000u
#define FUTEX_TID_MASK		0x3fffffffu

#define PRIV			FUTEX_PRIVATE_FLAG
/* FUTEX_REQUEUE's and FUTEX_CMP_REQUEUE's count, which travels in the timeout argument. */
#define VAL2(n)			((const struct timespec *)(uintptr_t)(uint32_t)(n))
#define MS			1000000LL

typedef volatile uint32_t fword;

static inline long futex(fword *uaddr, int op, uint32_t val, const struct timespec *ts,
			 fword *uaddr2, uint32_t val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

static inline long long now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline struct timespec ts_of(long long ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000LL, .tv_nsec = ns % 1000000000LL };
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = ts_of(ms * MS);

	nanosleep(&ts, NULL);
}

/* Tasks asleep on a shared word, none woken (above). */
static inline long count_waiters(fword *w)
{
	return futex(w, FUTEX_REQUEUE, 0, VAL2(INT_MAX), w, 0);
}

#endif
