/*
 * The tests' random numbers, one copy for the in-kernel tests
 * (tests/kernel) and the host tests (tests/host): xorshift64* (Vigna),
 * small, fast and the same on every build, so that a printed seed replays
 * the same sequence in QEMU, on the host and in `make fuzz`.
 *
 * Neither build has tests/ on its include path: include it by its relative
 * name, #include "../lib/random.h", from tests/kernel or tests/host.
 *
 * Each file that includes it gets a generator of its own: rng() steps
 * rng_state, which the file seeds by assignment (never with 0, which
 * xorshift never leaves). Code with a state of its own (one per thread)
 * calls xorshift64star() or xorshift64() on it.
 */
#ifndef QUIRE_TESTS_RANDOM_H
#define QUIRE_TESTS_RANDOM_H

#include <quire/types.h>

/* One step of xorshift64* on *state (not 0): the next number. */
static inline u64 xorshift64star(u64 *state)
{
	u64 x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* One step of plain xorshift64 (shifts 13, 7, 17) on *state (not 0): the new state. */
static inline u64 xorshift64(u64 *state)
{
	u64 x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* This file's generator, and its next number. */
static u64 rng_state __attribute__((unused));

static inline u64 rng(void)
{
	return xorshift64star(&rng_state);
}

#endif
